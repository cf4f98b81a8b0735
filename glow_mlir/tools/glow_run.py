"""glow-run: compile an ONNX model, run it on the CPU and print its outputs (Glow's model-runner)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ..api import compile
from ..errors import GlowError, InputError
from .common import add_model_arguments, exit_with, model_options, progress_line


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
    return p


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


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    with progress_line(args):
        model = compile(args.model, **vars(model_options(args)), cache=not args.no_cache)
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
    outputs = model.run(inputs)
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
