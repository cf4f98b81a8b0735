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
    assert lines[2].startswith("onnxruntime: its kernels for this machine")  # host code: no hold
    assert lines[3].split()[:3] == ["model", "thr", "glow"]
    assert "peak" in lines[3]
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


HELD_RUN = r"""
import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

from glow_mlir import bench_ort_isa
from glow_mlir.errors import GlowError

root = bench_ort_isa.hold_to_avx2(Path(sys.argv[1]))
import onnxruntime as ort

assert ort.__file__.startswith(root), ort.__file__
graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "mm",
                          [helper.make_tensor_value_info(v, TensorProto.FLOAT, [64, 64]) for v in "ab"],
                          [helper.make_tensor_value_info("c", TensorProto.FLOAT, [64, 64])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
a, b = (np.random.default_rng(0).standard_normal((2, 64, 64)).astype(np.float32))
np.testing.assert_allclose(session.run(None, {"a": a, "b": b})[0], a @ b, rtol=1e-4, atol=1e-4)
try:
    bench_ort_isa.hold_to_avx2(Path(sys.argv[1]))
except GlowError as e:
    print("again:", e)
print("masked", bench_ort_isa.masked_queries())
"""


def test_onnxruntime_held_to_avx2_answers_its_cpuid_without_avx512(tmp_path) -> None:
    # the bench's hold (--ort-isa avx2): onnxruntime's extension copied with its cpuid instructions trapped, the trap
    # answered without AVX-512; run in a process of its own (the hold must come before onnxruntime's first import)
    import subprocess
    import sys

    from glow_mlir import bench_ort_isa

    pytest.importorskip("onnxruntime")
    reason = bench_ort_isa.supported()
    if reason:
        pytest.skip(f"onnxruntime cannot be held to AVX2 here: {reason}")
    done = subprocess.run([sys.executable, "-c", HELD_RUN, str(tmp_path)], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert "again: onnxruntime is already loaded" in done.stdout
    assert int(done.stdout.split("masked ")[1]) > 0, done.stdout
    (copy,) = tmp_path.glob("onnxruntime-*/onnxruntime/capi/onnxruntime_pybind11_state*.so")
    import importlib.util
    from pathlib import Path

    installed = Path(next(iter(importlib.util.find_spec("onnxruntime").submodule_search_locations)))
    (original,) = (installed / "capi").glob(copy.name)
    offsets = bench_ort_isa.cpuid_offsets(original)
    data = copy.read_bytes()
    assert offsets and all(data[o:o + 2] == bench_ort_isa.TRAP for o in offsets)
    assert not bench_ort_isa.cpuid_offsets(copy)  # the disassembler finds no cpuid left in the copy


def test_the_bench_holds_onnxruntime_only_for_avx2_code_on_an_avx512_host() -> None:
    host = bench.named_target("skylake-avx512")
    assert "its kernels for this machine (avx512)" in bench.ort_kernels("host", bench.named_target("haswell"), host)
    assert "its kernels for this machine" in bench.ort_kernels("auto", host, host)
    assert "its kernels for this machine (avx2)" in bench.ort_kernels("auto", bench.named_target("haswell"),
                                                                       bench.named_target("haswell"))
