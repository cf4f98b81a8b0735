"""Compile time grows linearly with the network: the scaling network of python -m glow_mlir.bench_compile (MBConv
blocks with squeeze-excitation and SiLU) compiled at 2 and 8 blocks in one process, and the compiled network
checked against onnx.reference. The bound is on a ratio of two compiles in the same run, never on a time: a linear
compiler gives at most 4 (the fixed costs make it less), a quadratic pass gives up to 16; 6 leaves room for a noisy
machine. Also the pieces that made it quadratic once: windows of many positions and long elementwise chains."""

from __future__ import annotations

import time

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

import glow_mlir
from glow_mlir.backend import machine_code
from glow_mlir.bench_compile import compile_once, format_scaling, scaling_model

#: the largest N=8 / N=2 compile-time ratio accepted (linear: below 4)
MAX_RATIO = 6.0


def _cold_seconds(blocks: int) -> float:
    model = scaling_model(blocks)
    start = time.perf_counter()
    glow_mlir.compile(model, cache=False, threads=1)
    return time.perf_counter() - start


def test_compile_time_is_linear_in_the_blocks() -> None:
    _cold_seconds(1)  # the process's one-time costs (dialects, the JIT's libraries) out of the ratio
    two = min(_cold_seconds(2) for _ in range(2))
    eight = _cold_seconds(8)
    assert eight / two < MAX_RATIO, f"8 blocks took {eight:.2f} s, 2 blocks {two:.2f} s: {eight / two:.1f}x"


def test_scaling_network_matches_reference() -> None:
    model = scaling_model(2)
    x = np.random.default_rng(3).standard_normal((1, 32, 28, 28)).astype(np.float32)
    compiled = glow_mlir.compile(model, cache=False)
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(compiled(x), expected, rtol=1e-4, atol=1e-5)


def test_compile_once_reports_stages_and_the_scaling_table() -> None:
    row = compile_once(scaling_model(1), "scaling_1", cached_too=True)
    assert row.error is None and row.seconds > 0
    assert {"import", "codegen", "jit"} <= set(row.stages)
    assert row.passes and row.cached is not None
    table = format_scaling([(1, row)])
    assert table.splitlines()[2].startswith("| 1 | 19 |")


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_machine_code_parts_cover_every_function(parts: int) -> None:
    weights = {f"k{i}": w for i, w in enumerate([500, 40, 40, 30, 300, 16, 16])}
    sets = machine_code.partition(weights, parts)
    assert len(sets) == min(parts, len(weights))
    assert set().union(*sets) == set(weights) and sum(len(s) for s in sets) == len(weights)
    loads = [sum(weights[n] for n in s) for s in sets]
    assert max(loads) <= max(weights.values()) + sum(weights.values()) / parts
