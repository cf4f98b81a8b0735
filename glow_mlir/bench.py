"""``python -m glow_mlir.bench``: glow_mlir against onnxruntime on the shared models, and SGEMM against numpy.

Both run in this one process, on the same inputs: on a shared, noisy machine only numbers from the same run
compare, so the table's last columns are ratios. For each model and each thread count: a few warm-up runs, then
``--runs`` timed runs of each engine in blocks that alternate between the engines (:func:`time_blocks`); the table
gives the median and min latency, GFLOP/s (2 x the MACs
of Conv, Gemm and MatMul, counted from the ONNX graph with inferred shapes, over the median), glow_mlir / onnxruntime
(medians), glow_mlir's compile time, and the time of compiling it again from the compile cache (a cache of the
benchmark's own, in a temporary folder, so the first compile is always a full one). Models glow_mlir cannot compile
yet are listed with the reason.

The target: glow_mlir compiles for this machine's CPU, or with ``--target-cpu`` for another that it can run (code
for ``haswell`` or ``znver3``, AVX2, runs on any AVX-512 machine: how an AVX2 user's speed is measured on an AVX-512
host). The report names the target and its ISA, and gives each network's GFLOP/s as a share of that ISA's peak on the
cores used (2 FMA pipes x f32 lanes x 2 FLOPs per cycle, at the clock read from the machine). onnxruntime runs the
kernels of the same ISA: for AVX2 code on an AVX-512 host it is held to its AVX2 kernels (``--ort-isa``, default
``auto``; :mod:`.bench_ort_isa`: its CPUID queries answered without AVX-512), else it runs its kernels for the host.

SGEMM 1024^3 compares a one-node MatMul model with numpy's OpenBLAS on one thread, running the OpenBLAS kernel of the
target's ISA (OPENBLAS_CORETYPE Haswell for AVX2, SkylakeX for AVX-512, set in a child process of its own, since
OpenBLAS reads it once when it loads).

Needs the ``bench`` extra (onnxruntime, threadpoolctl).
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, shape_inference

from .backend.cpu import default_threads
from .cache import CACHE_ENV
from .errors import GlowError

#: warm-up runs before timing (the first call of either engine pays for page faults and lazy setup)
WARMUP = 3
SGEMM_SIZE = 1024
#: a reason longer than this is cut (the unsupported-op report names every node)
REASON_WIDTH = 160


def models_dir() -> Path:
    """The shared models: GLOW_MODELS_DIR, else ``shared/models`` beside the checkout, else /work/shared/models."""
    if os.environ.get("GLOW_MODELS_DIR"):
        return Path(os.environ["GLOW_MODELS_DIR"])
    beside = Path(__file__).resolve().parents[1].parent / "shared" / "models"
    return beside if beside.is_dir() else Path("/work/shared/models")


def default_models(directory: Path) -> list[Path]:
    """Every model in ``directory``, and the light resnet50."""
    found = sorted(directory.glob("*.onnx"))
    light = directory / "light" / "light_resnet50.onnx"
    return found + ([light] if light.exists() else [])


# --------------------------------------------------------------------------- FLOPs from the graph


def _shapes(model: onnx.ModelProto) -> dict[str, list[int]]:
    """Static shapes of every value the shape inference could fix."""
    inferred = shape_inference.infer_shapes(model)
    shapes: dict[str, list[int]] = {}
    graph = inferred.graph
    for info in [*graph.input, *graph.value_info, *graph.output]:
        dims = info.type.tensor_type.shape.dim
        if info.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            shapes[info.name] = [d.dim_value for d in dims]
    for init in graph.initializer:
        shapes[init.name] = list(init.dims)
    return shapes


def count_flops(model: onnx.ModelProto) -> float:
    """2 x the multiply-accumulates of the Conv, Gemm and MatMul nodes (0 for a node whose shapes are unknown)."""
    shapes = _shapes(model)
    macs = 0
    for node in model.graph.node:
        if node.op_type == "Conv" and node.output[0] in shapes and node.input[1] in shapes:
            weight = shapes[node.input[1]]  # [F, C/group, kH, kW]
            macs += int(np.prod(shapes[node.output[0]])) * int(np.prod(weight[1:]))
        elif node.op_type in ("Gemm", "MatMul") and node.input[0] in shapes and node.output[0] in shapes:
            a = shapes[node.input[0]]
            trans_a = any(at.name == "transA" and at.i for at in node.attribute)
            k = a[-2] if trans_a and len(a) >= 2 else a[-1]
            macs += int(np.prod(shapes[node.output[0]])) * k
    return 2.0 * macs


# --------------------------------------------------------------------------- timing


@dataclass
class Timing:
    median_ms: float
    min_ms: float


#: seconds to wait before each engine's runs: the thread pools that ran last (numpy's OpenBLAS after a compile folded
#: constants with it, onnxruntime's, glow_mlir's) spin for a while before they sleep, and on a 2-core machine a
#: spinning thread takes the core that the timed engine's second thread needs (bert_tiny_encoder on 2 threads measured
#: 0.60 ms right after its compile, 0.40-0.45 ms with the pools settled)
SETTLE_S = 0.3
#: seconds of untimed calls after each settling pause: the cores that slept through it come back at a low clock (on
#: a 2-core Zen 5 VM mlp_mnist on two threads took 0.69 ms on the first call after a 0.3 s pause, 0.34-0.40 on the
#: next four and 0.20 from about 5 ms of calls on, onnxruntime alike), so that a block of a few runs timed the clock
#: ramp, not the engine
RAMP_S = 0.02


def time_runs(fn: Callable[[], object], runs: int) -> Timing:
    """Warm up, then time ``runs`` calls of ``fn``."""
    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return Timing(1e3 * statistics.median(times), 1e3 * min(times))


#: the engines' runs alternate in this many blocks (:func:`time_blocks`)
BLOCKS = 5


def time_blocks(fns: dict[str, Callable[[], object]], runs: int, threads: int = 1) -> dict[str, Timing]:
    """``runs`` calls of each of ``fns``, in :data:`BLOCKS` blocks that alternate between them, each block after a
    :data:`SETTLE_S` pause when ``threads`` > 1 (the pool that ran the block before settles) and :data:`RAMP_S` of
    untimed calls; the median and the
    fastest over all of an engine's blocks. A shared machine's speed moves within seconds (a Xeon VM ran six copies
    of one compiled mlp_mnist at 0.58-0.61 ms a call in one round and 0.82-0.88 ms in the next): one block per engine
    could time each in a different state, alternating blocks time both across the same states."""
    for fn in fns.values():
        for _ in range(WARMUP):
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    per_block = max(1, -(-runs // BLOCKS))
    for block in range(BLOCKS):
        for name, fn in fns.items():
            if threads > 1 or block == 0:
                time.sleep(SETTLE_S)
                _ramp(fn)
            for _ in range(per_block):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return {name: Timing(1e3 * statistics.median(t), 1e3 * min(t)) for name, t in times.items()}


def _ramp(fn: Callable[[], object]) -> None:
    """Untimed calls of ``fn`` for :data:`RAMP_S` seconds."""
    end = time.perf_counter() + RAMP_S
    while time.perf_counter() < end:
        fn()


def time_interleaved(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, Timing]:
    """Warm each up, then time ``runs`` rounds of one call of each in turn: a machine that slows down or speeds up
    during the measurement affects every engine alike (on one thread: with several, one engine's spinning pool
    would take the cores the next one needs, and :func:`time_blocks` with its settling pauses is the fairer)."""
    for fn in fns.values():
        for _ in range(WARMUP):
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: Timing(1e3 * statistics.median(t), 1e3 * min(t)) for name, t in times.items()}


def model_inputs(path: Path, model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """The inputs of ``NAME.io.npz`` beside the model, else seeded random ones of the graph's input shapes."""
    reference = path.with_suffix(".io.npz")
    if reference.exists():
        with np.load(reference) as data:
            return {k[3:]: data[k] for k in data.files if k.startswith("in_")}
    rng = np.random.default_rng(0)
    initializers = {i.name for i in model.graph.initializer}
    inputs = {}
    for info in model.graph.input:
        if info.name in initializers:
            continue
        tensor = info.type.tensor_type
        shape = [d.dim_value for d in tensor.shape.dim]
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        inputs[info.name] = rng.standard_normal(shape).astype(dtype)
    return inputs


@dataclass
class Row:
    model: str
    threads: int
    glow: Timing | None
    ort: Timing | None
    gflop: float
    compile_s: float | None
    hit_s: float | None = None
    error: str | None = None


def _ort_session(model: onnx.ModelProto | str, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    source = model if isinstance(model, str) else model.SerializeToString()
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def bench_model(path: Path, threads: int, runs: int, target_cpu: str = "") -> Row:
    """One row of the table: ``path`` on ``threads`` threads with both engines (glow_mlir's code for
    ``target_cpu``, default the host's)."""
    from . import api

    model = onnx.load(str(path))
    gflop = count_flops(model) / 1e9
    inputs = model_inputs(path, model)
    start = time.perf_counter()
    try:
        compiled = api.compile(model, threads=threads, target_cpu=target_cpu)
    except Exception as e:  # noqa: BLE001 - any failure is a row of the table, not the end of the benchmark
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        reason = reason if len(reason) <= REASON_WIDTH else reason[:REASON_WIDTH - 3] + "..."
        return Row(path.stem, threads, None, None, gflop, None, error=reason)
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    again = api.compile(model, threads=threads, target_cpu=target_cpu)
    hit_s = time.perf_counter() - start
    if (compiled.cache, again.cache) != ("miss", "hit"):
        raise RuntimeError(f"{path.stem}: the compile cache did not serve the second compile "
                           f"({compiled.cache}, {again.cache})")
    del again
    session = _ort_session(str(path), threads)
    times = time_blocks({"glow": lambda: compiled.run(inputs), "ort": lambda: session.run(None, inputs)}, runs,
                        threads)
    return Row(path.stem, threads, times["glow"], times["ort"], gflop, compile_s, hit_s)


def format_table(rows: list[Row], peak: float | None = None) -> str:
    """The rows as a fixed-width table; the models that did not compile come after it, with their reasons.
    ``peak``: the target ISA's GFLOP/s on one core (the share of peak column)."""
    head = (f"{'model':<22} {'thr':>3} {'glow med':>9} {'glow min':>9} {'ort med':>9} {'ort min':>9} "
            f"{'GFLOP':>7} {'glow GF/s':>9} {'peak':>5} {'ort GF/s':>9} {'glow/ort':>8} {'compile s':>9} "
            f"{'cached s':>8}")
    lines = [head, "-" * len(head)]
    failed = []
    for r in rows:
        if r.glow is None or r.ort is None:
            failed.append(r)
            continue
        gf_glow = r.gflop / (r.glow.median_ms / 1e3) if r.gflop else 0.0
        gf_ort = r.gflop / (r.ort.median_ms / 1e3) if r.gflop else 0.0
        share = f"{100 * gf_glow / (peak * r.threads):>4.0f}%" if peak else f"{'-':>5}"
        lines.append(f"{r.model:<22} {r.threads:>3} {r.glow.median_ms:>9.3f} {r.glow.min_ms:>9.3f} "
                     f"{r.ort.median_ms:>9.3f} {r.ort.min_ms:>9.3f} {r.gflop:>7.3f} {gf_glow:>9.1f} {share} "
                     f"{gf_ort:>9.1f} "
                     f"{r.glow.median_ms / r.ort.median_ms:>8.2f} {r.compile_s:>9.2f} {r.hit_s:>8.2f}")
    if failed:
        lines.append("")
        lines.append("not compiled by glow_mlir yet:")
        seen = set()
        for r in failed:
            if r.model not in seen:
                seen.add(r.model)
                lines.append(f"  {r.model}: {r.error}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- SGEMM


def sgemm_model(n: int) -> onnx.ModelProto:
    """A one-node MatMul model: [n, n] x [n, n] -> [n, n], float32."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [n, n])
    c = helper.make_tensor_value_info("c", TensorProto.FLOAT, [n, n])
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], f"sgemm{n}", [a, b], [c])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


#: OpenBLAS's kernel for each ISA class (OPENBLAS_CORETYPE)
OPENBLAS_CORETYPES = {"avx512": "SkylakeX", "avx2": "Haswell", "sse": "Nehalem"}

#: numpy's SGEMM in a child process: OPENBLAS_CORETYPE is read once, when OpenBLAS loads
_NUMPY_SGEMM = """
import sys, time, numpy as np
n, runs = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n)).astype(np.float32)
b = rng.standard_normal((n, n)).astype(np.float32)
for _ in range(3):
    a @ b
best = float("inf")
for _ in range(runs):
    start = time.perf_counter()
    a @ b
    best = min(best, time.perf_counter() - start)
try:
    from threadpoolctl import threadpool_info
    info = [i for i in threadpool_info() if i.get("user_api") == "blas"][0]
    kernel = f"{info.get('internal_api')} {info.get('version')} kernel {info.get('architecture')}"
except Exception:
    kernel = "unknown BLAS"
print(best * 1e3)
print(kernel)
"""


def numpy_sgemm(n: int, runs: int, coretype: str | None) -> tuple[float, str]:
    """(best ms, BLAS kernel) of numpy's ``n^3`` SGEMM on one thread, in a child process whose OpenBLAS runs the
    kernel ``coretype`` (None: the one it picks, or the environment's OPENBLAS_CORETYPE)."""
    import subprocess

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
        env.pop("OPENBLAS_L2_SIZE", None)
    out = subprocess.run([sys.executable, "-c", _NUMPY_SGEMM, str(n), str(runs)], env=env, capture_output=True,
                         text=True, check=True, timeout=600).stdout.split("\n")
    return float(out[0]), out[1]


#: SGEMM alternates this many times between glow_mlir's runs and numpy's (a child process each time): on a shared
#: machine whose speed drifts, each side's best is then taken over the same stretch of time
SGEMM_ROUNDS = 3


def bench_sgemm(n: int, runs: int, target_cpu: str = "") -> str:
    """SGEMM n^3 on one thread: glow_mlir's code for ``target_cpu`` against OpenBLAS's kernel for the same ISA, in
    GFLOP/s (best of ``runs`` in each of :data:`SGEMM_ROUNDS` alternating rounds) and their ratio. glow_mlir's call
    through the API takes A and B where they are and returns C in a fresh array, as numpy's ``a @ b`` does; the code
    alone (``rerun``) writes into a C it keeps."""
    from . import api

    target = named_target(target_cpu)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    compiled = api.compile(sgemm_model(n), threads=1, cache=False, target_cpu=target_cpu)
    got = compiled(a, b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    error = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    coretype = OPENBLAS_CORETYPES.get(target.isa)
    glow_ms = code_ms = ref_ms = float("inf")
    for _ in range(SGEMM_ROUNDS):
        glow_ms = min(glow_ms, time_runs(lambda: compiled.run({"a": a, "b": b}), runs).min_ms)
        code_ms = min(code_ms, time_runs(compiled.rerun, runs).min_ms)
        ms, kernel = numpy_sgemm(n, runs, coretype)
        ref_ms = min(ref_ms, ms)
    flop = 2.0 * n ** 3
    gf_glow, gf_code, gf_numpy = flop / glow_ms / 1e6, flop / code_ms / 1e6, flop / ref_ms / 1e6
    peak = peak_gflops(target, 1)
    return (f"SGEMM {n}^3, 1 thread, {target.isa} ({target.cpu}): glow_mlir {gf_glow:.1f} GFLOP/s "
            f"({100 * gf_glow / peak:.0f}% of peak, min {glow_ms:.2f} ms; the code alone, C already allocated: "
            f"{gf_code:.1f}, {100 * gf_code / peak:.0f}%), "
            f"numpy {gf_numpy:.1f} GFLOP/s (min {ref_ms:.2f} ms; {kernel}, OPENBLAS_CORETYPE={coretype or 'unset'}): "
            f"glow_mlir/numpy = {gf_glow / gf_numpy:.2f} (the code alone {gf_code / gf_numpy:.2f}); max rel. error "
            f"{error:.1e}")


# --------------------------------------------------------------------------- the target and its peak

def named_target(cpu: str = ""):
    """The target description of ``cpu`` ("": the host)."""
    from .backend import target as targets

    return targets.named(cpu or None)


#: a chain of dependent 64-bit multiplies: 3 cycles each on every x86 core since Haswell and Zen (imul r64, r64)
_CLOCK_IR = """
define i64 @spin(i64 %n, i64 %x0) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %x = phi i64 [ %x0, %entry ], [ %x8, %loop ]
  %x1 = mul i64 %x, %x
  %x2 = mul i64 %x1, %x1
  %x3 = mul i64 %x2, %x2
  %x4 = mul i64 %x3, %x3
  %x5 = mul i64 %x4, %x4
  %x6 = mul i64 %x5, %x5
  %x7 = mul i64 %x6, %x6
  %x8 = mul i64 %x7, %x7
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %x8
}
"""
MUL_LATENCY = 3


@functools.cache
def clock_ghz() -> float:
    """This machine's clock under load, measured on x86 by a chain of dependent multiplies of known latency (a
    virtual machine's /proc/cpuinfo gives the nominal clock, not the boost the kernels run at); elsewhere, or where
    LLVM's C API is missing, the highest "cpu MHz" of ``/proc/cpuinfo``."""
    import ctypes

    from .backend import llvm_api, orc

    if platform.machine() in ("x86_64", "AMD64") and llvm_api.available() and orc.available():
        llvm = llvm_api.library()
        context = llvm.LLVMContextCreate()
        machine = llvm_api.target_machine(llvm_api.host_triple(), llvm_api.host_cpu(), llvm_api.host_features())
        try:
            module = llvm_api.parse_ir(_CLOCK_IR, context)
            llvm_api.set_target(module, machine, llvm_api.host_triple())
            code = llvm_api.emit(module, machine)
            llvm.LLVMDisposeModule(module)
        finally:
            llvm.LLVMContextDispose(context)
            llvm.LLVMDisposeTargetMachine(machine)
        loaded = orc.LoadedObject(code, "clock")
        spin = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(loaded.lookup("spin"))
        n = 2_000_000
        spin(n, 3)  # the clock ramps up
        best = min(_timed(lambda: spin(n, 3)) for _ in range(5))
        return 8 * MUL_LATENCY * n / best / 1e9
    try:
        mhz = [float(line.split(":")[1]) for line in Path("/proc/cpuinfo").read_text().splitlines()
               if line.startswith("cpu MHz")]
        return max(mhz) / 1e3 if mhz else 0.0
    except OSError:
        return 0.0


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def peak_gflops(target, threads: int = 1) -> float:
    """The target ISA's f32 peak on ``threads`` cores of this machine: FMA lanes per cycle (the target's FMA pipes
    x their width, :attr:`.backend.target.Target.fma_lanes`) x 2 x clock."""
    return target.fma_lanes * 2 * clock_ghz() * threads or float("nan")


def peak_text(target) -> str:
    """How :func:`peak_gflops` was reckoned."""
    how = "measured" if platform.machine() in ("x86_64", "AMD64") else "/proc/cpuinfo"
    if not target.fma:
        shape = f"{target.lanes} lanes (a multiply and an add, no FMA)"
    elif target.fma_lanes == 2 * target.lanes:
        shape = f"2 FMA pipes x {target.lanes} lanes"
    else:
        shape = f"{target.fma_lanes} FMA lanes per cycle ({target.cpu}'s FMA pipes are narrower than its vectors)"
    return f"{shape} x 2 x {clock_ghz():.2f} GHz ({how}) per core"


# --------------------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m glow_mlir.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", help="comma-separated model names or .onnx paths (default: every shared model)")
    p.add_argument("--runs", type=int, default=20, help="timed runs per engine and model (default 20)")
    p.add_argument("--threads", help=f"comma-separated thread counts (default: 1 and all cores, "
                                      f"here {default_threads()})")
    p.add_argument("--no-sgemm", action="store_true", help="skip SGEMM 1024^3 against numpy")
    p.add_argument("--target-cpu", default="",
                   help="compile glow_mlir's code for this CPU (LLVM's names: haswell or znver3 for AVX2, which runs "
                        "on any AVX-512 machine; default: this machine's)")
    p.add_argument("--ort-isa", choices=("auto", "host", "avx2"), default="auto",
                   help="onnxruntime's kernels: avx2 holds it to its AVX2 kernels on an AVX-512 host (x86-64 Linux, "
                        "a C compiler); host: the host's; auto (default): avx2 where the target is AVX2 and the "
                        "host has AVX-512")
    return p


def ort_kernels(choice: str, target, host) -> str:
    """Which kernels onnxruntime runs for ``--ort-isa choice`` and a line that says so: held to AVX2 where asked, or
    where ``auto`` and ``target`` is an AVX2 CPU on an AVX-512 ``host`` (falling back to the host's kernels, said
    so, where the hold cannot run here)."""
    from . import bench_ort_isa
    from .cache import cache_dir

    wanted = choice == "avx2" or (choice == "auto" and target.isa == "avx2" and host.isa == "avx512")
    if not wanted:
        return f"onnxruntime: its kernels for this machine ({host.isa})"
    reason = bench_ort_isa.supported()
    if reason and choice == "auto":
        return f"onnxruntime: its kernels for this machine ({host.isa}; not held to AVX2: {reason})"
    try:
        bench_ort_isa.hold_to_avx2(cache_dir() / "ort-isa")
    except GlowError as e:
        raise SystemExit(f"glow_mlir.bench: {e}") from None
    return "onnxruntime: held to its AVX2 kernels (its CPUID answered without AVX-512)"


def _resolve(spec: str, directory: Path) -> Path:
    path = Path(spec)
    if path.suffix == ".onnx":
        return path
    for candidate in (directory / f"{spec}.onnx", directory / "light" / f"{spec}.onnx"):
        if candidate.exists():
            return candidate
    raise SystemExit(f"glow_mlir.bench: no model '{spec}' in {directory}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.runs < 1:
        raise SystemExit("glow_mlir.bench: --runs must be at least 1")
    directory = models_dir()
    paths = [_resolve(s, directory) for s in args.models.split(",")] if args.models else default_models(directory)
    threads = ([int(t) for t in args.threads.split(",")] if args.threads
               else sorted({1, default_threads()}))
    target = named_target(args.target_cpu)
    print(f"target: {target.describe()}")
    print(f"peak of its ISA: {peak_gflops(target):.0f} GFLOP/s per core ({peak_text(target)})")
    print(ort_kernels(args.ort_isa, target, named_target()))
    rows = []
    with tempfile.TemporaryDirectory(prefix="glow-bench-cache-") as own_cache:
        os.environ[CACHE_ENV] = own_cache  # a cache of this run's own: full compiles, then measured hits
        for count in threads:
            for path in paths:
                rows.append(bench_model(path, count, args.runs, args.target_cpu))
                print(f"  {path.stem} ({count} thread{'s' if count > 1 else ''}) done", file=sys.stderr, flush=True)
    print(format_table(rows, peak_gflops(target)))
    from . import bench_ort_isa

    if bench_ort_isa.held() and not bench_ort_isa.masked_queries():
        raise SystemExit("glow_mlir.bench: onnxruntime never asked CPUID for its AVX-512 features: the hold to AVX2 "
                         "did not take, its figures are for its host kernels")
    if not args.no_sgemm:
        print()
        print(bench_sgemm(SGEMM_SIZE, max(args.runs // 2, 5), args.target_cpu))
    return 0


if __name__ == "__main__":
    sys.exit(main())
