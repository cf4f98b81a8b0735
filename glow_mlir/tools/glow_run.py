"""glow-run: compile an ONNX model, run it on the CPU and print its outputs (Glow's model-runner); with
--dump-profile, profile it on a calibration set for quantization instead; with --load-profile, run it quantized to
int8 by that profile."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from ..api import compile
from ..errors import GlowError, InputError
from ..importer import TensorSpec
from .common import (
    _positive,
    add_model_arguments,
    add_quantization_arguments,
    exit_with,
    model_options,
    progress_line,
    quantization_options,
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="glow-run", description=__doc__)
    add_model_arguments(p)
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input (repeatable)")
    p.add_argument("--reference", metavar="FILE.npz",
                   help="an .npz with in_<name> inputs (used unless --input gives them) and out_<name> expected outputs")
    p.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance against --reference")
    p.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance against --reference")
    p.add_argument("--save", metavar="DIR", help="write each output as DIR/NAME.npy")
    p.add_argument("--print-limit", type=int, default=20, help="print at most this many values per output")
    q = p.add_argument_group("profiling for quantization")
    q.add_argument("--dump-profile", "-dump-profile", metavar="P.yaml",
                   help="run the calibration inputs (--dataset, else the one set of --input/--reference) and write the "
                        "range and histogram of every float value of the graph to P.yaml")
    q.add_argument("--dataset", metavar="D.npz",
                   help="calibration inputs: an .npz whose arrays are named after the model's inputs (or holds one "
                        "array, for a one-input model), the first dimension the sample; fed in batches of the "
                        "model's batch size (its inputs' first dimension); a last partial batch is dropped (padding it "
                        "would add made-up values to the ranges)")
    q.add_argument("--dataset-array", action="append", default=[], metavar="[INPUT=]KEY",
                   help="take INPUT from the array KEY of --dataset (repeatable; INPUT may be left out for a "
                        "one-input model)")
    q.add_argument("--bins", type=_positive, default=2048, help="histogram bins per value in the profile")
    q.add_argument("--quantization-report", action="store_true",
                   help="with --load-profile: print each value's int8 scale and offset, the range kept, the share "
                        "clipped and the SQNR of its quantization (estimated from the profile; with --dataset, "
                        "measured: the int8 model's value against the float model's on the dataset)")
    add_quantization_arguments(q)
    return p


def quantization_report(args: argparse.Namespace) -> int:
    """--load-profile P --quantization-report: the per-value report of the profile, checked against the model."""
    from ..quantization.profile import Profile
    from ..quantization.report import format_report, report

    if not args.load_profile:
        raise InputError("--quantization-report needs --load-profile P.yaml")
    profile = Profile.load(args.load_profile)
    profile.check(args.model)
    if not args.dataset:
        rows = report(profile, args.quantization_schema, args.quantization_calibration)
        print(format_report(rows, args.quantization_schema, args.quantization_calibration))
        return 0
    # measured: the int8 model against the float one on the dataset, every profiled value probed
    from ..quantization.report import measured_report

    with progress_line(args):
        specs = compile(args.model, **vars(model_options(args)), cache=not args.no_cache).inputs
        feeds, _, _ = dataset_batches(args.dataset, args.dataset_array, specs, args.model)
        rows = measured_report(args.model, profile, feeds, args.quantization_schema, args.quantization_calibration,
                               args.enable_channelwise, threads=args.threads)
    print(format_report(rows, args.quantization_schema, args.quantization_calibration, measured=True))
    return 0


def _load(path: str, what: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read {what} '{path}': {e}") from None


def format_output(name: str, value: np.ndarray, limit: int) -> str:
    """One output as Glow prints tensors: name, shape, max, min, values."""
    shape = " x ".join(str(d) for d in value.shape) or "scalar"
    lines = [f"{name}: shape ( {shape} ) {value.dtype}"]
    if value.size:
        lines.append(f"max: {value.max():.6g}  min: {value.min():.6g}")
    flat = value.reshape(-1)
    shown = ", ".join(f"{v:.6g}" if value.dtype.kind == "f" else str(v) for v in flat[:limit])
    lines.append(f"[{shown}{', ...' if flat.size > limit else ''}]")
    return "\n".join(lines)


def dataset_batches(path: str, arrays: list[str], inputs: list[TensorSpec],
                    model: str) -> tuple[list[dict[str, np.ndarray]], int, int]:
    """The feeds of an .npz dataset for a model with ``inputs``: batches of the inputs' first dimension (a last
    partial batch dropped). Returns the feeds, the samples they hold and the samples dropped."""
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {k: f[k] for k in f.files}
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read dataset '{path}': {e}") from None
    names = [spec.name for spec in inputs]
    keys: dict[str, str] = {}
    for item in arrays:
        name, sep, key = item.rpartition("=")
        if not sep:
            if len(names) != 1:
                raise InputError(f"{model}: --dataset-array '{item}' names no input, and the model has "
                                 f"{len(names)} inputs ({', '.join(names)}): write INPUT=KEY")
            name = names[0]
        if name not in names:
            raise InputError(f"{model}: --dataset-array '{item}': no input '{name}' (inputs: {', '.join(names)})")
        keys[name] = key
    for name in names:
        if name not in keys:
            keys[name] = name if name in data or len(names) != 1 or len(data) != 1 else next(iter(data))
    columns: dict[str, np.ndarray] = {}
    for spec in inputs:
        key = keys[spec.name]
        if key not in data:
            raise InputError(f"{model}: dataset '{path}' has no array '{key}' for input '{spec.name}' (its arrays: "
                             f"{', '.join(data) or 'none'}; choose one with --dataset-array {spec.name}=KEY)")
        array = data[key]
        if not spec.shape or array.ndim != len(spec.shape) or array.shape[1:] != tuple(spec.shape[1:]):
            want = "x".join(["N", *map(str, spec.shape[1:])]) if spec.shape else "a batch dimension"
            raise InputError(f"{model}: input '{spec.name}': dataset array '{key}' has shape "
                             f"{'x'.join(map(str, array.shape)) or 'scalar'}, expected {want} "
                             f"(samples, then the input's shape {list(spec.shape)} without its batch)")
        if array.dtype != spec.dtype:
            if array.dtype.kind != spec.dtype.kind:
                raise InputError(f"{model}: input '{spec.name}': dataset array '{key}' is {array.dtype}, "
                                 f"expected {spec.dtype}")
            array = array.astype(spec.dtype)
        columns[spec.name] = array
    samples = {len(a) for a in columns.values()}
    if len(samples) > 1:
        raise InputError(f"{model}: the dataset's arrays hold different numbers of samples: "
                         + ", ".join(f"{keys[n]} {len(a)}" for n, a in columns.items()))
    batch = {spec.shape[0] for spec in inputs}
    if len(batch) > 1:
        firsts = ", ".join(f"{spec.name} {spec.shape[0]}" for spec in inputs)
        raise InputError(f"{model}: the inputs' first dimensions differ ({firsts}): no one batch size to feed the "
                         f"dataset in")
    n, size = (samples.pop() if samples else 0), (batch.pop() if batch else 1)
    if n < size:
        raise InputError(f"{model}: dataset '{path}' holds {n} samples, fewer than one batch of {size}")
    full = n - n % size
    feeds = [{name: a[i:i + size] for name, a in columns.items()} for i in range(0, full, size)]
    return feeds, full, n - full


def dump_profile(args: argparse.Namespace) -> int:
    """--dump-profile: profile the model on the dataset (or the one set of inputs) and write the profile."""
    from ..quantization.profile import Profiler

    with progress_line(args):
        profiler = Profiler(args.model, bins=args.bins, **vars(model_options(args)), cache=not args.no_cache)
    if args.dataset:
        feeds, samples, dropped = dataset_batches(args.dataset, args.dataset_array, profiler.inputs, args.model)
    else:
        inputs, _ = _given_inputs(args)
        if not inputs and profiler.inputs:
            raise InputError(f"{args.model}: --dump-profile needs calibration inputs: --dataset D.npz "
                             f"(or --input / --reference for one set)")
        feeds, dropped = [inputs], 0
        samples = profiler.inputs[0].shape[0] if profiler.inputs and profiler.inputs[0].shape else 1
    start = time.perf_counter()
    for feed in feeds:
        profiler.add(feed)
    result = profiler.result()
    seconds = time.perf_counter() - start
    result.save(args.dump_profile)
    left = f", {_count(dropped, 'sample')} left over dropped" if dropped else ""
    print(f"{profiler.name}: profiled {_count(samples, 'sample')} in {_count(len(feeds), 'batch')}{left}: "
          f"{_count(len(result.values), 'value')} ({_count(len(profiler.input_names), 'input')}, "
          f"{_count(len(profiler.value_names), 'node output')}) in {seconds:.2f} s -> {args.dump_profile}")
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "es" if noun.endswith("ch") else "s")


def _given_inputs(args: argparse.Namespace) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """The inputs --reference (its in_<name> arrays) and --input give, and the --reference arrays (None without)."""
    inputs: dict[str, np.ndarray] = {}
    reference = None
    if args.reference:
        try:
            reference = dict(np.load(args.reference, allow_pickle=False))
        except (OSError, ValueError) as e:
            raise InputError(f"cannot read reference '{args.reference}': {e}") from None
        inputs.update({k[3:]: v for k, v in reference.items() if k.startswith("in_")})
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InputError(f"--input expects NAME=FILE.npy, got '{item}'")
        inputs[name] = _load(path, f"input '{name}'")
    return inputs, reference


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.dump_profile:
        return dump_profile(args)
    if args.quantization_report:
        return quantization_report(args)
    if args.dataset or args.dataset_array:
        raise InputError("--dataset and --dataset-array are calibration inputs for --dump-profile, which is not given")
    options = model_options(args)
    options.quantization = quantization_options(args)
    with progress_line(args):
        model = compile(args.model, **vars(options), cache=not args.no_cache)
    inputs, reference = _given_inputs(args)
    outputs = model.run_tensors(inputs)  # a sequence output's elements each under its own name, x[0], ...
    print(f"Model: {model.name}")
    for spec in model.outputs:
        print(format_output(spec.name, outputs[spec.name], args.print_limit))
    if args.save:
        Path(args.save).mkdir(parents=True, exist_ok=True)
        for name, value in outputs.items():
            np.save(Path(args.save) / f"{name}.npy", value)
    if reference is not None:
        failures = []
        for spec in model.outputs:
            key = f"out_{spec.name}"
            if key not in reference:
                raise InputError(f"reference '{args.reference}' has no '{key}'")
            want, got = reference[key], outputs[spec.name]
            err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
            ok = got.shape == want.shape and np.allclose(got, want, rtol=args.rtol, atol=args.atol)
            print(f"reference {spec.name}: {'match' if ok else 'MISMATCH'} (max abs error {err:.3g}, "
                  f"rtol {args.rtol:g}, atol {args.atol:g})")
            if not ok:
                failures.append(spec.name)
        if failures:
            raise GlowError(f"{model.name}: outputs differ from the reference: {', '.join(failures)}")
    return 0


def entry() -> None:
    exit_with("glow-run", main)


if __name__ == "__main__":
    entry()
