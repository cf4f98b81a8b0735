"""``python -m glow_mlir.bench_quantized``: int8 against float, glow_mlir against onnxruntime, in one run.

For each CNN (``--models``, default resnet18 and mobilenet_v2 from the shared models): glow_mlir profiles it on
calibration inputs (the ``.io.npz`` input and ``--calibration - 1`` noisy copies of it, seeded: these networks have
random weights and no dataset), compiles it in float and in int8 (per-tensor and channelwise weights, asymmetric,
minmax), and onnxruntime runs the float model and the QDQ model its own ``quantize_static`` makes from the same
calibration inputs (per-channel weights, uint8 activations), which glow_mlir also compiles (its QDQ pairs made
int8 islands: glowgraph-qdq-to-params). The table gives medians of ``--runs`` calls on ``--threads`` threads (on
one thread in rounds of one call of each engine, so that the machine's drift affects all alike), each
engine's int8 / float ratio, glow int8 / ort int8, and the SQNR (dB) of each int8 run's output against the float
reference output. Below it: how many int8 dot-product instructions (vpdpbusd)
glow_mlir's int8 code holds, read from its machine code, and the target.

``--digits``: the top-1 on the digits test images (../shared/data/digits.npz) of the trained digits_cnn, in float
and for each schema and calibration (per-tensor and channelwise), calibrated on the training images.

Needs the ``bench`` extra (onnxruntime).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

from .bench import _ort_session, model_inputs, models_dir, time_blocks, time_interleaved


def sqnr(got: np.ndarray, want: np.ndarray) -> float:
    """Signal to quantization noise of ``got`` against ``want``, in dB."""
    want = np.asarray(want, np.float64)
    noise = np.sum((np.asarray(got, np.float64) - want) ** 2)
    return float("inf") if noise == 0 else float(10 * np.log10(np.sum(want ** 2) / noise))


def calibration_feeds(inputs: dict[str, np.ndarray], count: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """The reference inputs and ``count - 1`` copies with 10% gaussian noise."""
    rng = np.random.default_rng(seed)
    feeds = [inputs]
    for _ in range(count - 1):
        feeds.append({k: (v + 0.1 * v.std() * rng.standard_normal(v.shape)).astype(v.dtype) for k, v in inputs.items()})
    return feeds


def ort_qdq(path: Path, feeds: list[dict[str, np.ndarray]], directory: Path) -> Path:
    """onnxruntime's static QDQ quantization of ``path`` on ``feeds`` (per-channel int8 weights, uint8 activations)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.items = iter(feeds)

        def get_next(self):
            return next(self.items, None)

    out = directory / f"{path.stem}.qdq.onnx"
    quantize_static(str(path), str(out), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return out


def dot_instructions(compiled) -> dict[str, int]:
    """The int8 multiply-add instructions (vpdpbusd, vpmaddwd) in the machine code of a compiled model
    (llvm-objdump of its object files)."""
    from .backend.tools_paths import llvm_tool

    counts = {"vpdpbusd": 0, "vpmaddwd": 0}
    with tempfile.TemporaryDirectory(prefix="glow-bench-") as directory:
        for k, blob in enumerate(compiled._jit.object_code()):
            obj = Path(directory) / f"part{k}.o"
            obj.write_bytes(blob)
            text = subprocess.run([llvm_tool("llvm-objdump"), "-d", "--no-show-raw-insn", str(obj)],
                                  capture_output=True, text=True, check=True).stdout
            for name in counts:
                counts[name] += len(re.findall(rf"\b{name}\b", text))
    return counts


def bench_model(path: Path, threads: int, runs: int, calibration: int, target_cpu: str = "") -> tuple[str, str]:
    """One row of the table, and its line of instructions."""
    from . import api
    from .quantization.profile import profile

    model = onnx.load(path)
    inputs = model_inputs(path, model)
    with np.load(path.with_suffix(".io.npz")) as data:
        reference = next(data[k] for k in data.files if k.startswith("out_"))
    feeds = calibration_feeds(inputs, calibration)
    prof = profile(path, feeds, threads=threads)
    glow_float = api.compile(path, threads=threads, target_cpu=target_cpu)
    glow_int8 = {cw: api.compile(path, threads=threads, profile=prof, channelwise=cw, target_cpu=target_cpu)
                 for cw in (False, True)}
    with tempfile.TemporaryDirectory(prefix="glow-bench-") as directory:
        qdq = ort_qdq(path, feeds, Path(directory))
        ort_float, ort_int8 = _ort_session(str(path), threads), _ort_session(str(qdq), threads)
        glow_qdq = api.compile(qdq, threads=threads, target_cpu=target_cpu)
    engines = {"glow float": lambda: glow_float.run(inputs), "glow int8": lambda: glow_int8[False].run(inputs),
               "glow int8 cw": lambda: glow_int8[True].run(inputs), "glow qdq": lambda: glow_qdq.run(inputs),
               "ort float": lambda: ort_float.run(None, inputs), "ort int8": lambda: ort_int8.run(None, inputs)}
    if threads == 1:  # rounds of one call each: a machine that speeds up or slows down affects all alike
        times = time_interleaved(engines, runs)
    else:  # blocks of calls, each after the pool that ran the block before has settled
        times = time_blocks(engines, runs, threads)
    ms = {k: t.median_ms for k, t in times.items()}
    out = {cw: next(iter(glow_int8[cw].run(inputs).values())) for cw in (False, True)}
    ort_out = ort_int8.run(None, inputs)[0]
    qdq_out = next(iter(glow_qdq.run(inputs).values()))
    best = min(ms["glow int8"], ms["glow int8 cw"])
    row = (f"| {path.stem} | {threads} | {ms['glow float']:.2f} | {ms['glow int8']:.2f} | {ms['glow int8 cw']:.2f} | "
           f"{ms['glow qdq']:.2f} | {ms['ort float']:.2f} | {ms['ort int8']:.2f} | {best / ms['glow float']:.2f} | "
           f"{ms['ort int8'] / ms['ort float']:.2f} | {best / ms['ort int8']:.2f} | "
           f"{ms['glow qdq'] / ms['ort int8']:.2f} | {sqnr(out[False], reference):.1f} | "
           f"{sqnr(out[True], reference):.1f} | {sqnr(qdq_out, reference):.1f} | {sqnr(ort_out, reference):.1f} |")
    ops = glow_int8[True].stage("quantize").text
    kinds = {k: len(re.findall(rf'"glowgraph\.{k}"', ops)) for k in ("qconv2d", "qadd", "conv2d", "quantize")}
    counts = ", ".join(f"{n} {name}" for name, n in dot_instructions(glow_int8[True]).items())
    line = (f"{path.stem}: {counts} in the int8 code; int8 graph: "
            f"{kinds['qconv2d']} qconv2d, {kinds['qadd']} qadd, {kinds['conv2d']} float conv2d, "
            f"{kinds['quantize']} quantize")
    return row, line


def digits_table() -> str:
    """Top-1 of digits_cnn on the test images, float and each schema x calibration x (per-tensor, channelwise)."""
    from . import api
    from .quantization.params import CALIBRATIONS, SCHEMAS
    from .quantization.profile import profile

    path = models_dir() / "digits_cnn.onnx"
    data = np.load(models_dir().parent / "data" / "digits.npz")
    train, test, labels = data["x_train"], data["x_test"], data["y_test"]
    prof = profile(path, ({"image": train[i:i + 1]} for i in range(len(train))), threads=1)

    def top1(model) -> float:
        return 100 * float(np.mean([np.argmax(model(test[i:i + 1])) == labels[i] for i in range(len(test))]))

    head = (f"digits_cnn top-1 on {len(test)} test images, calibrated on {len(train)} training images; float "
            f"{top1(api.compile(path, threads=1)):.1f}%")
    lines = [head, "",
             "| schema | " + " | ".join(f"{c} | {c} cw" for c in CALIBRATIONS) + " |",
             "|---|" + "---:|" * (2 * len(CALIBRATIONS))]
    for schema in SCHEMAS:
        cells = []
        for c in CALIBRATIONS:
            for cw in (False, True):
                model = api.compile(path, threads=1, profile=prof, quantization_schema=schema, calibration=c,
                                    channelwise=cw)
                cells.append(f"{top1(model):.1f}")
        lines.append(f"| {schema} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m glow_mlir.bench_quantized", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="resnet18,mobilenet_v2", help="comma-separated shared models")
    p.add_argument("--threads", type=int, default=1, help="threads for both engines (default 1)")
    p.add_argument("--runs", type=int, default=20, help="timed calls per engine (default 20)")
    p.add_argument("--calibration", type=int, default=8, help="calibration inputs (default 8)")
    p.add_argument("--target-cpu", default="", help="glow_mlir's target (haswell: AVX2 code, which any AVX-512 "
                   "machine runs; onnxruntime picks its own kernels for this machine)")
    p.add_argument("--digits", action="store_true", help="also the digits_cnn accuracy table")
    args = p.parse_args(argv)
    import onnxruntime

    from .backend.target import named

    onnxruntime.set_default_logger_severity(3)  # quantize_static's models draw warnings about unused initializers

    print(f"glow_mlir target: {named(args.target_cpu or None).describe()}")
    print("| model | threads | glow float ms | glow int8 ms | glow int8 cw ms | glow on QDQ ms | ort float ms | "
          "ort int8 (QDQ) ms | glow int8/float | ort int8/float | glow int8/ort int8 | glow QDQ/ort QDQ | "
          "SQNR glow int8 | SQNR glow cw | SQNR glow QDQ | SQNR ort QDQ |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = []
    for name in args.models.split(","):
        start = time.perf_counter()
        row, line = bench_model(models_dir() / f"{name}.onnx", args.threads, args.runs, args.calibration,
                                args.target_cpu)
        print(row, flush=True)
        lines.append(f"{line} ({time.perf_counter() - start:.0f} s for the row)")
    print("\n".join(lines))
    if args.digits:
        print()
        print(digits_table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
