"""``python -m glow_mlir.bench_cachesim``: glow_mlir's code against onnxruntime and OpenBLAS on simulated caches.

The AVX2 cores most users have (Zen 2/3, Intel client cores to Comet Lake) have a 32 KiB 8-way L1D and a 256-512 KiB
L2; the machines these kernels are measured on have larger ones (48 KiB 12-way and 1-2 MiB), where a working set that
overflows the smaller caches costs nothing. Valgrind's cachegrind runs x86 code up to AVX2 (not AVX-512) on a cache
geometry one names, so this bench counts what each engine misses on the user's caches, on this machine:

- glow_mlir: each model as a bundle for ``--target-cpu`` (an AVX2 CPU, default ``znver3``; one thread) and the
  example runner (``examples/bundle``) on the model's reference inputs, its output checked against the reference;
- onnxruntime (one thread): under cachegrind its kernels are its AVX2 ones, since valgrind's CPUID has no AVX-512;
- SGEMM ``n^3`` (``--sgemm N``): glow_mlir's bundle against numpy's OpenBLAS held to its Haswell kernel.

Each engine runs in two processes, one run and ``1 + k`` runs; their difference over ``k`` is one warm run, without
what a process does once (start-up, the weights, the session), ``k`` from 2 up to 50 so that the extra runs reach
:data:`EXTRA_FLOPS`. The table gives instructions, L1D misses and last-level (``--l2``) misses of one run for each
engine, in thousands, and glow / other. cachegrind models no hardware prefetcher: a miss it counts may be one a core
hides by streaming, so the counts bound what those cores pay rather than measure it; compare engines, not absolute
figures. resnet18 (3.6 GFLOP) takes about fifteen minutes, both engines.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from .bench import _resolve, count_flops, models_dir

#: cache geometry of a Zen 3 core: L1D 32 KiB 8-way, L2 512 KiB 8-way (64-byte lines)
ZEN3_L1 = "32768,8"
ZEN3_L2 = "524288,8"
#: the example runner's build script, beside the package in a checkout
BUILD = Path(__file__).resolve().parents[1] / "examples" / "bundle" / "build.sh"
#: a child process that runs a model ``argv[2]`` times on the timing bench's onnxruntime session, one thread
_ORT_RUN = """
import sys, numpy as np
from glow_mlir.bench import _ort_session
session = _ort_session(sys.argv[1], 1)
feeds = dict(np.load(sys.argv[3]))
for _ in range(int(sys.argv[2])):
    session.run(None, feeds)
"""
#: a child process that calls numpy's SGEMM ``n^3`` ``argv[2]`` times (OPENBLAS_CORETYPE from the environment): the
#: timing bench's child (``bench._NUMPY_SGEMM``) makes three warm-up calls first, 50 s each under valgrind at 1024
_NUMPY_SGEMM = """
import sys, numpy as np
n, calls = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n)).astype(np.float32)
b = rng.standard_normal((n, n)).astype(np.float32)
for _ in range(calls):
    c = a @ b
"""


@dataclass(frozen=True)
class Counts:
    """What cachegrind counted: instructions, L1D misses, last-level data misses."""

    instructions: int
    l1_misses: int
    ll_misses: int

    def __sub__(self, other: Counts) -> Counts:
        return Counts(self.instructions - other.instructions, self.l1_misses - other.l1_misses,
                      self.ll_misses - other.ll_misses)

    def per(self, runs: int) -> Counts:
        """Each count over ``runs``, none below 0 (a difference of two processes' counts may fall below it)."""
        return Counts(*(max(0, v // runs) for v in (self.instructions, self.l1_misses, self.ll_misses)))


_SUMMARY = {"instructions": r"I\s+refs:\s+([\d,]+)", "l1_misses": r"D1\s+misses:\s+([\d,]+)",
            "ll_misses": r"LLd misses:\s+([\d,]+)"}


def parse_summary(text: str) -> Counts:
    """The totals of cachegrind's summary (its stderr)."""
    found = {}
    for field, pattern in _SUMMARY.items():
        match = re.search(pattern, text)
        if match is None:
            raise RuntimeError(f"no '{pattern}' in cachegrind's summary:\n{text[-2000:]}")
        found[field] = int(match[1].replace(",", ""))
    return Counts(**found)


def cachegrind(command: list[str], l1: str, l2: str, env: dict[str, str] | None = None) -> Counts:
    """Run ``command`` under cachegrind with an L1D of ``l1`` and a last level of ``l2`` ("bytes,ways"); a Python
    child hashes as every other does (PYTHONHASHSEED=0), so that what it does once costs the same in two processes."""
    env = {**(env or os.environ), "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", f"--D1={l1},64", f"--LL={l2},64",
                               f"--cachegrind-out-file={tmp}/cachegrind.out", *command], capture_output=True,
                              text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed under valgrind:\n{done.stderr[-2000:]}")
    return parse_summary(done.stderr)


def model_inputs(path: Path) -> tuple[list[np.ndarray], dict[str, np.ndarray], list[np.ndarray]]:
    """The model's reference inputs in the graph's order, by name, and its reference outputs (``M.io.npz``)."""
    if not path.with_suffix(".io.npz").exists():
        raise SystemExit(f"glow_mlir.bench_cachesim: {path} has no reference inputs beside it "
                         f"({path.with_suffix('.io.npz').name})")
    data = np.load(path.with_suffix(".io.npz"))
    model = onnx.load(str(path), load_external_data=False)
    weights = {t.name for t in model.graph.initializer}
    names = [v.name for v in model.graph.input if v.name not in weights]
    feeds = {name: data[f"in_{name}"] for name in names}
    outputs = [data[f"out_{v.name}"] for v in model.graph.output]
    return [feeds[name] for name in names], feeds, outputs


def glow_counts(model: onnx.ModelProto | str, inputs: list[np.ndarray], work: Path, target_cpu: str, extra: int,
                l1: str, l2: str, reference: list[np.ndarray] | None = None) -> Counts:
    """One run of ``model``'s bundle for ``target_cpu`` under cachegrind (:func:`one_run`, the runner's
    ``--repeat``); its first output checked against ``reference`` when given."""
    from . import api

    api.emit_bundle(model, work, api.BundleOptions(name="net", target_cpu=target_cpu),
                    api.CompileOptions(threads=1))
    runner = work / "net_runner"
    built = subprocess.run(["sh", str(BUILD), str(work), "net", "-o", str(runner)], capture_output=True, text=True,
                           check=False)
    if built.returncode != 0:
        raise RuntimeError(f"building the runner failed:\n{built.stderr}")
    args = [str(work / "net.weights.bin")]
    for k, value in enumerate(inputs):
        np.ascontiguousarray(value).tofile(work / f"input{k}.bin")
        args.append(str(work / f"input{k}.bin"))
    out = work / "out"
    out.mkdir(exist_ok=True)
    # the runner runs once, then --repeat more times
    counts = one_run(lambda k: [str(runner), *args, "--out", str(out), "--repeat", str(k - 1)], extra, l1, l2)
    if reference is not None:
        got = np.fromfile(out / "output0.bin", dtype=reference[0].dtype).reshape(reference[0].shape)
        np.testing.assert_allclose(got, reference[0], rtol=1e-3, atol=1e-3, err_msg="the bundle's output")
    return counts


#: the float operations the runs beyond the first should reach: a Python process's start-up varies by a few million
#: instructions from one process to the next (onnxruntime's session of lenet5 once counted more in one run than in
#: three), so a small model takes more runs than a large one
EXTRA_FLOPS = 2e9
#: the fewest and the most runs beyond the first
EXTRA_RUNS = (2, 50)


def extra_runs(flops: int) -> int:
    """How many runs beyond the first a model of ``flops`` per run takes (:data:`EXTRA_FLOPS`)."""
    low, high = EXTRA_RUNS
    return min(high, max(low, math.ceil(EXTRA_FLOPS / max(flops, 1))))


def one_run(command: Callable[[int], list[str]], extra: int, l1: str, l2: str,
            env: dict[str, str] | None = None) -> Counts:
    """One run's counts of ``command(k)``, a process that runs ``k`` times: the difference of ``1 + extra`` runs and
    one, over ``extra``, without what the process does once (start-up, loading the weights, building a session)."""
    return (cachegrind(command(1 + extra), l1, l2, env) - cachegrind(command(1), l1, l2, env)).per(extra)


def ort_counts(path: Path, feeds: dict[str, np.ndarray], work: Path, extra: int, l1: str, l2: str) -> Counts:
    """One run of ``path`` on onnxruntime (one thread) under cachegrind (:func:`one_run`)."""
    np.savez(work / "feeds.npz", **feeds)
    return one_run(lambda k: [sys.executable, "-c", _ORT_RUN, str(path), str(k), str(work / "feeds.npz")], extra,
                   l1, l2)


def sgemm_counts(n: int, work: Path, target_cpu: str, l1: str, l2: str) -> tuple[Counts, Counts]:
    """One SGEMM ``n^3`` call: glow_mlir's bundle, numpy's OpenBLAS on its Haswell kernel."""
    from .bench import sgemm_model

    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    extra = extra_runs(2 * n ** 3)
    glow = glow_counts(sgemm_model(n), [a, b], work, target_cpu, extra, l1, l2, [a @ b])
    env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    blas = one_run(lambda k: [sys.executable, "-c", _NUMPY_SGEMM, str(n), str(k)], extra, l1, l2, env)
    return glow, blas


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b > 0 else "-"


def row(name: str, other: str, glow: Counts, them: Counts) -> str:
    """A line of the table: each count of both engines in thousands, and glow / other."""
    cells = []
    for field in ("instructions", "l1_misses", "ll_misses"):
        a, b = getattr(glow, field), getattr(them, field)
        cells.append(f"{a / 1e3:11,.0f} {b / 1e3:11,.0f} {_ratio(a, b):>6s}")
    return f"{name:22s} {other:11s} " + " ".join(cells)


HEADER = (f"{'model':22s} {'against':11s} " + " ".join(f"{'glow ' + what:>11s} {'other':>11s} {'ratio':>6s}"
                                                       for what in ("instr.", "L1 miss", "LL miss")))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m glow_mlir.bench_cachesim", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="lenet5,mlp_mnist",
                   help="comma-separated model names or .onnx paths with an .io.npz beside (default lenet5,mlp_mnist; "
                        "'' for none)")
    p.add_argument("--target-cpu", default="znver3", help="the CPU glow_mlir compiles for (AVX2 or below: valgrind "
                                                           "runs no AVX-512; default znver3)")
    p.add_argument("--l1", default=ZEN3_L1, help=f"the simulated L1D, bytes,ways (default {ZEN3_L1}: Zen 3)")
    p.add_argument("--l2", default=ZEN3_L2, help=f"the simulated last level, bytes,ways (default {ZEN3_L2}: Zen 3's "
                                                  "L2)")
    p.add_argument("--sgemm", type=int, default=0, metavar="N", help="also SGEMM N^3 against OpenBLAS-Haswell")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if shutil.which("valgrind") is None:
        print("glow_mlir.bench_cachesim: valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 2
    if not BUILD.exists():
        print(f"glow_mlir.bench_cachesim: the example runner's build script is not at {BUILD} (run from a checkout)",
              file=sys.stderr)
        return 2
    from .backend import target as targets

    target = targets.named(args.target_cpu or None)
    if target.isa == "avx512":
        print(f"glow_mlir.bench_cachesim: {target.cpu} code uses AVX-512, which valgrind cannot run; give an AVX2 "
              "CPU (haswell, znver3)", file=sys.stderr)
        return 2
    print(f"target: {target.describe()}")
    print(f"simulated caches: L1D {args.l1} (bytes,ways), last level {args.l2}; one run each, in thousands\n")
    print(HEADER)
    print("-" * len(HEADER))
    directory = models_dir()
    with tempfile.TemporaryDirectory() as tmp:
        for k, spec in enumerate(s for s in args.models.split(",") if s):
            path = _resolve(spec, directory)
            inputs, feeds, reference = model_inputs(path)
            work = Path(tmp) / f"m{k}"
            work.mkdir()
            extra = extra_runs(count_flops(onnx.load(str(path))))
            glow = glow_counts(str(path), inputs, work, args.target_cpu, extra, args.l1, args.l2, reference)
            ort = ort_counts(path, feeds, work, extra, args.l1, args.l2)
            print(row(path.stem, "onnxruntime", glow, ort), flush=True)
        if args.sgemm:
            work = Path(tmp) / "sgemm"
            work.mkdir()
            glow, blas = sgemm_counts(args.sgemm, work, args.target_cpu, args.l1, args.l2)
            print(row(f"sgemm {args.sgemm}^3", "openblas", glow, blas))
    return 0


if __name__ == "__main__":
    sys.exit(main())
