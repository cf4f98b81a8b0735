"""python -m glow_mlir.bench_cachesim: cachegrind's summary read back, and one small model on both engines."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import MODELS_DIR

from glow_mlir import bench_cachesim

SUMMARY = """==12== I   refs:      29,676,153
==12== I1  misses:          5,034
==12== D   refs:      10,545,775  (10,191,968 rd   + 353,807 wr)
==12== D1  misses:     1,527,052  ( 1,450,336 rd   +  76,716 wr)
==12== LLd misses:       171,731  (   107,629 rd   +  64,102 wr)
"""


def test_the_summary_gives_instructions_l1_and_last_level_misses() -> None:
    counts = bench_cachesim.parse_summary(SUMMARY)
    assert counts == bench_cachesim.Counts(29_676_153, 1_527_052, 171_731)
    three, one = bench_cachesim.Counts(30, 12, 5), bench_cachesim.Counts(10, 4, 3)
    assert (three - one).per(2) == bench_cachesim.Counts(10, 4, 1)
    assert (one - three).per(2) == bench_cachesim.Counts(0, 0, 0)  # noise, not a negative count


def test_a_small_model_takes_more_runs_than_a_large_one() -> None:
    assert bench_cachesim.extra_runs(3_600_000_000) == 2  # resnet18
    assert bench_cachesim.extra_runs(86_000_000) == 24  # mlp_mnist
    assert bench_cachesim.extra_runs(5_000_000) == 50  # lenet5: at most 50
    with pytest.raises(RuntimeError, match="D1"):
        bench_cachesim.parse_summary(SUMMARY.replace("D1  misses", "D1 hits"))


def _need_valgrind() -> None:
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")


def test_avx512_code_is_refused_with_the_reason(capsys) -> None:
    _need_valgrind()
    assert bench_cachesim.main(["--models", "", "--target-cpu", "skylake-avx512"]) == 2
    assert "valgrind cannot run" in capsys.readouterr().err


def test_lenet5_on_both_engines(capsys, monkeypatch) -> None:
    _need_valgrind()
    pytest.importorskip("onnxruntime")
    if not (MODELS_DIR / "lenet5.onnx").exists():
        pytest.skip(f"shared models absent from {MODELS_DIR}")
    monkeypatch.setenv("GLOW_MODELS_DIR", str(MODELS_DIR))
    monkeypatch.setenv("GLOW_CACHE_DIR", os.environ["GLOW_CACHE_DIR"])
    # the bundle's output is checked against the model's reference inside, so its inputs went in as they should
    assert bench_cachesim.main(["--models", "lenet5", "--target-cpu", "haswell"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("target: haswell") and "L1D 32768,8" in lines[1]
    row = next(line for line in lines if line.startswith("lenet5"))
    glow_instructions, ort_instructions = (float(v.replace(",", "")) for v in row.split()[2:4])
    assert glow_instructions > 0 and ort_instructions > 0
