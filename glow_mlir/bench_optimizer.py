"""What the graph optimizer buys, model by model: node counts and run time with ``optimize=False`` and with the
optimizer on, measured side by side in one process (runs interleaved: off, on, off, on, ... so that a machine that
slows down or speeds up affects both alike), each compiled model's outputs checked against its ``.io.npz``.

    python -m glow_mlir.bench_optimizer                       # every model in the shared models folder
    python -m glow_mlir.bench_optimizer a.onnx b.onnx --repeat 5

Prints one Markdown table: nodes after import, nodes after node lowering (optimizer off and on), compile seconds,
minimum latency in milliseconds over the repeats (a first, untimed run warms each model), and the speed-up.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .api import CompiledModel, compile
from .bench import time_interleaved

#: one glowgraph node in a stage's text
NODE = re.compile(r'"glowgraph\.\w+"\(')
#: the models folder's tolerance for float32 outputs (its README)
RTOL, ATOL = 1e-3, 1e-4


@dataclass
class Row:
    """One model's figures."""

    name: str
    nodes_import: int
    nodes_off: int
    nodes_on: int
    compile_off: float
    compile_on: float
    ms_off: float
    ms_on: float
    matches: str

    def markdown(self) -> str:
        speedup = self.ms_off / self.ms_on if self.ms_on > 0 else float("nan")
        return (f"| {self.name} | {self.nodes_import} | {self.nodes_off} | {self.nodes_on} | {self.compile_off:.1f} | "
                f"{self.compile_on:.1f} | {self.ms_off:.3f} | {self.ms_on:.3f} | {speedup:.2f}x | {self.matches} |")


HEADER = ("| model | nodes (import) | nodes after lower, off | nodes after lower, on | compile s, off | "
          "compile s, on | ms, off | ms, on | speed-up | matches reference |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")


def _io(path: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    ref = path.with_suffix(".io.npz")
    if not ref.exists():
        return {}, {}
    data = np.load(ref)
    return ({k[3:]: data[k] for k in data.files if k.startswith("in_")},
            {k[4:]: data[k] for k in data.files if k.startswith("out_")})


def _matches(model: CompiledModel, inputs: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> bool | None:
    got = model.run(inputs)
    if not expected:
        return None
    return all(np.allclose(got[k], v, rtol=RTOL, atol=ATOL) for k, v in expected.items())


def _compile(path: Path, optimize: bool) -> tuple[CompiledModel, float]:
    start = time.perf_counter()
    model = compile(path, optimize=optimize)
    return model, time.perf_counter() - start


def bench(path: Path, repeat: int) -> Row:
    """Compile ``path`` both ways and time both side by side; returns its row."""
    inputs, expected = _io(path)
    (off, compile_off), (on, compile_on) = _compile(path, False), _compile(path, True)
    if not inputs:  # a model without inputs, or without a reference: zeros of the declared inputs
        inputs = {s.name: np.zeros(s.shape, s.dtype) for s in off.inputs}
    checks = [_matches(m, inputs, expected) for m in (off, on)]  # also the untimed first run of each
    matches = "n/a" if None in checks else ("yes" if all(checks) else "NO (" + ", ".join(
        w for w, ok in zip(("off", "on"), checks) if not ok) + ")")
    times = time_interleaved({"off": lambda: off.run(inputs), "on": lambda: on.run(inputs)}, repeat)
    return Row(path.stem, nodes(on, "import"), nodes(off, "lower"), nodes(on, "lower"), compile_off, compile_on,
               times["off"].min_ms, times["on"].min_ms, matches)


def nodes(model: CompiledModel, stage: str) -> int:
    """The number of glowgraph nodes of ``model`` after ``stage`` (import, optimize or lower)."""
    return len(NODE.findall(model.stage(stage).text))


def default_models() -> list[Path]:
    """The shared models folder's top-level models (``GLOW_MODELS_DIR`` or /work/shared/models) and the light
    resnet50."""
    root = Path(os.environ.get("GLOW_MODELS_DIR") or "/work/shared/models")
    found = sorted(root.glob("*.onnx"))
    light = root / "light" / "light_resnet50.onnx"
    return found + ([light] if light.exists() else [])


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m glow_mlir.bench_optimizer", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", type=Path, help="ONNX models (default: the shared models folder)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs of each model and setting (default 3)")
    args = p.parse_args(argv)
    models = args.models or default_models()
    if not models:
        print("bench_optimizer: no models given and none found (set GLOW_MODELS_DIR)", file=sys.stderr)
        return 1
    print(HEADER, flush=True)
    for path in models:
        print(bench(path, args.repeat).markdown(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
