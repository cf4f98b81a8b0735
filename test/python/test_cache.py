"""The compile cache (glow_mlir/cache.py): a second compile loads the entry and skips every stage; the key follows
the model, the options and the compiler; concurrent compiles leave one whole entry; bad entries are misses; the
tools' --no-cache. Each test has a cache folder of its own (GLOW_CACHE_DIR)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import ROOT, run_tool
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir import cache
from glow_mlir.api import CompileOptions

RNG = np.random.default_rng(5)
W = RNG.standard_normal((16, 8)).astype(np.float32)


def _model(scale: float = 1.0) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w"], ["h"], alpha=scale), helper.make_node("Relu", ["h"], ["y"])], "cached",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], [numpy_helper.from_array(W, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_second_compile_is_a_hit_that_runs_no_stage(own_cache: Path) -> None:
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    first = glow_mlir.compile(_model(), threads=1)
    second = glow_mlir.compile(_model(), threads=1)
    assert (first.cache, second.cache) == ("miss", "hit")
    assert [s.name for s in second.stages] == [s.name for s in first.stages][:-1] + ["cache", "jit"]
    assert second.stage("irgen").text == first.stage("irgen").text  # recorded by the compile that stored it
    assert len(list(own_cache.glob("*.npz"))) == 1
    assert (second.name, second.inputs, second.outputs) == (first.name, first.inputs, first.outputs)
    np.testing.assert_array_equal(second(x), first(x))
    np.testing.assert_allclose(second(x), np.maximum(x @ W, 0), rtol=1e-5, atol=1e-5)


def test_a_hit_loads_machine_code_and_compiles_nothing(own_cache: Path) -> None:
    from glow_mlir.backend import orc

    if not orc.available():
        pytest.skip("this host cannot load object files (no ORC C API or native target): hits JIT the bytecode")
    glow_mlir.compile(_model(), threads=1)
    hit = glow_mlir.compile(_model(), threads=1)
    assert hit.cache == "hit" and hit._ctx is None and hit._jit.module is None  # no MLIR parsed, nothing compiled
    assert not hasattr(hit._jit, "engine")
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    np.testing.assert_allclose(hit(x), np.maximum(x @ W, 0), rtol=1e-5, atol=1e-5)


def test_a_hit_without_machine_code_jits_the_bytecode(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from glow_mlir.backend import orc

    glow_mlir.compile(_model(), threads=1)
    monkeypatch.setattr(orc, "available", lambda: False)  # a host whose LLVM cannot load objects
    hit = glow_mlir.compile(_model(), threads=1)
    assert hit.cache == "hit" and hit._jit.module is not None
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    np.testing.assert_allclose(hit(x), np.maximum(x @ W, 0), rtol=1e-5, atol=1e-5)


def test_machine_code_stored_by_another_process_runs_here_with_threads(own_cache: Path, tmp_path: Path) -> None:
    big = RNG.standard_normal((256, 512)).astype(np.float32)  # 134 MFLOP: above cpu.PARALLEL_FLOPS, on the threads
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "threaded",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [512, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [512, 512])],
                              [numpy_helper.from_array(big, "w")])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    script = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import glow_mlir; "
              f"print(glow_mlir.compile({str(path)!r}, threads=2).cache)")
    stored = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert stored.returncode == 0 and stored.stdout.strip() == "miss", stored.stderr
    hit = glow_mlir.compile(str(path), threads=2)
    assert hit.cache == "hit"
    assert "llvm.call @glow_pool_run" in hit.stage("codegen").text  # the code has parallel loops
    x = RNG.standard_normal((512, 256)).astype(np.float32)
    for _ in range(3):  # the pool's workers run the loaded code too
        np.testing.assert_allclose(hit(x), x @ big, rtol=1e-4, atol=1e-3)


def test_the_key_follows_the_model_the_options_and_the_compiler() -> None:
    data = _model().SerializeToString()
    base = cache.cache_key(data, CompileOptions(threads=1).cache_options())
    assert base == cache.cache_key(data, CompileOptions(threads=1).cache_options())
    assert base != cache.cache_key(_model(2.0).SerializeToString(), CompileOptions(threads=1).cache_options())
    assert base != cache.cache_key(data, CompileOptions(threads=2).cache_options())
    assert base != cache.cache_key(data, CompileOptions(threads=1, optimize=False).cache_options())
    assert base != cache.cache_key(data, CompileOptions(threads=1, input_shapes={"x": [4, 16]}).cache_options())
    assert cache.compiler_version().startswith(glow_mlir.__version__ + "+")
    assert set(cache.target()) == {"triple", "cpu", "features", "caches"}


def test_the_key_follows_the_pipelines(monkeypatch: pytest.MonkeyPatch) -> None:
    from glow_mlir.backend import cpu
    from glow_mlir.passes import pipelines

    data = _model().SerializeToString()
    before = cache.cache_key(data, CompileOptions(threads=1).cache_options())
    monkeypatch.setattr(cpu, "NODE_LOWERING", pipelines.NODE_LOWERING)  # no keep list: fully_connected lowered
    assert cache.cache_key(data, CompileOptions(threads=1).cache_options()) != before


def test_cache_off_writes_nothing(own_cache: Path) -> None:
    assert glow_mlir.compile(_model(), threads=1, cache=False).cache == "off"
    assert glow_mlir.compile(_model(), threads=1, emit_mlir_dir=own_cache.parent / "stages").cache == "off"
    assert not own_cache.exists() or not list(own_cache.iterdir())


def test_an_unreadable_entry_is_a_miss_and_is_rewritten(own_cache: Path) -> None:
    glow_mlir.compile(_model(), threads=1)
    (entry,) = own_cache.glob("*.npz")
    entry.write_bytes(b"not an npz")
    again = glow_mlir.compile(_model(), threads=1)
    assert again.cache == "miss"
    assert glow_mlir.compile(_model(), threads=1).cache == "hit"


def test_concurrent_compiles_leave_one_whole_entry(own_cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(_model(), str(path))
    script = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import glow_mlir; "
              f"print(glow_mlir.compile({str(path)!r}, threads=1).cache)")
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs) and set(results) <= {"hit", "miss"}
    assert [p.suffix for p in own_cache.iterdir()] == [".npz"]  # no temporary file left behind
    assert glow_mlir.compile(str(path), threads=1).cache == "hit"


def test_tools_use_the_cache_unless_told_not_to(own_cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(_model(), str(path))
    first = run_tool("glow-compile", "-model", str(path), "--threads", "1")
    assert first.returncode == 0 and "stored in the compile cache" in first.stdout, first.stderr
    second = run_tool("glow-compile", "-model", str(path), "--threads", "1")
    assert "loaded from the compile cache" in second.stdout
    off = run_tool("glow-compile", "-model", str(path), "--threads", "1", "--no-cache")
    assert "not cached" in off.stdout
    np.save(tmp_path / "x.npy", np.ones((4, 16), np.float32))
    ran = run_tool("glow-run", "-model", str(path), "--threads", "1", "--no-cache", "--input", f"x={tmp_path / 'x.npy'}")
    assert ran.returncode == 0 and "y: shape ( 4 x 8 )" in ran.stdout, ran.stderr
    bad = run_tool("glow-run", "-model", str(path), "--threads", "0")
    assert bad.returncode != 0 and "must be at least 1" in bad.stderr
