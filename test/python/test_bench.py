"""python -m glow_mlir.bench: the FLOP count from the ONNX graph, and one small run end to end."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from conftest import MODELS_DIR
from onnx import TensorProto, helper, numpy_helper

from glow_mlir import bench


def test_flops_count_conv_gemm_and_matmul() -> None:
    w = numpy_helper.from_array(np.zeros((8, 3, 3, 3), np.float32), "w")
    g = numpy_helper.from_array(np.zeros((10, 8 * 6 * 6), np.float32), "g")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[0, 0, 0, 0]),  # [1,3,8,8] -> [1,8,6,6]
             helper.make_node("Flatten", ["c"], ["f"]),
             helper.make_node("Gemm", ["f", "g"], ["y"], transB=1),
             helper.make_node("MatMul", ["y", "m"], ["z"])]
    graph = helper.make_graph(nodes, "f", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
                                           helper.make_tensor_value_info("m", TensorProto.FLOAT, [10, 4])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])], [w, g])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    conv, gemm, mm = 8 * 6 * 6 * 3 * 3 * 3, 10 * 288, 4 * 10
    assert bench.count_flops(model) == 2 * (conv + gemm + mm)


def test_bench_runs_a_model_and_reports_what_does_not_compile(capsys, monkeypatch) -> None:
    pytest.importorskip("onnxruntime")
    if not (MODELS_DIR / "seed_linear_sigmoid.onnx").exists():
        pytest.skip(f"shared models absent from {MODELS_DIR}")
    monkeypatch.setenv("GLOW_MODELS_DIR", str(MODELS_DIR))
    monkeypatch.setenv("GLOW_CACHE_DIR", os.environ["GLOW_CACHE_DIR"])  # the bench points it at its own folder
    assert bench.main(["--models", "seed_linear_sigmoid", "--runs", "2", "--threads", "1", "--no-sgemm"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("target: ") and lines[1].startswith("peak of its ISA: ")
    assert lines[2].split()[:3] == ["model", "thr", "glow"]
    assert "peak" in lines[2]
    assert "seed_linear_sigmoid" in out and "glow/ort" in out
    assert "cached s" in out
    row = bench.Row("broken", 1, None, None, 0.0, None, error="m.onnx: 1 unsupported ONNX op: Foo")
    assert "broken: m.onnx: 1 unsupported ONNX op: Foo" in bench.format_table([row])


def test_engines_are_timed_in_alternating_blocks(monkeypatch) -> None:
    # a machine whose speed moves within seconds then slows or speeds both engines alike
    monkeypatch.setattr(bench, "SETTLE_S", 0.0)
    monkeypatch.setattr(bench, "RAMP_S", 0.0)
    calls: list[str] = []
    times = bench.time_blocks({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, 10)
    timed = calls[2 * bench.WARMUP:]
    per_block = 10 // bench.BLOCKS
    assert timed == (["a"] * per_block + ["b"] * per_block) * bench.BLOCKS
    assert set(times) == {"a", "b"} and all(0 <= t.min_ms <= t.median_ms for t in times.values())


def test_each_block_on_several_threads_starts_after_untimed_calls(monkeypatch) -> None:
    # cores that slept through the settling pause come back at a low clock: the timed calls come after the ramp
    monkeypatch.setattr(bench, "SETTLE_S", 0.0)
    monkeypatch.setattr(bench, "RAMP_S", 0.005)
    calls: list[str] = []
    bench.time_blocks({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, 10, threads=2)
    per_block = 10 // bench.BLOCKS
    runs = [len(list(group)) for _, group in itertools.groupby(calls[2 * bench.WARMUP:])]
    assert len(runs) == 2 * bench.BLOCKS and all(n > per_block for n in runs)


def test_sgemm_compares_with_openblas_kernel_of_the_target_isa() -> None:
    from glow_mlir.backend import target as targets

    if targets.host().isa not in ("avx2", "avx512"):
        pytest.skip("this host cannot run AVX2 code")
    line = bench.bench_sgemm(64, 2, "haswell")
    assert "avx2 (haswell)" in line and "OPENBLAS_CORETYPE=Haswell" in line and "% of peak" in line
    assert float(line.split("max rel. error ")[1]) < 1e-4


def test_recurrent_benchmark_prints_a_checked_row(capsys) -> None:
    pytest.importorskip("onnxruntime")
    from glow_mlir import bench_recurrent

    assert bench_recurrent.main(["--ops", "GRU", "--steps", "3", "--hidden", "8", "--batch", "2", "--runs", "1"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("| layer |") and rows[2].startswith("| GRU | 3 | 2 | 8 | 1 |")
