"""``python -m glow_mlir.bench_compile``: how long a cold compile takes, where the time goes, and how it grows.

For each model: a cold compile (no compile cache), its seconds split by stage (import, optimize, lower, irgen, iropt,
codegen, jit: LLVM's optimizer and code generator; "setup" is the rest: the MLIR context and dialects, reading the
model, the JIT's symbol setup), the slowest passes, and a second compile from a fresh compile cache (a temporary
folder of the benchmark's own). Then the scaling table: the same network family at N = 1, 2, 4, ... blocks
(MBConv blocks with squeeze-excitation and SiLU, ``../shared/tools/scaling_model.py`` when present, else
:func:`scaling_model`, the same blocks), compile seconds and seconds per block; a compiler whose passes are linear
in the program keeps seconds per block flat.

``--cores 1`` pins this process to one core first (the generated code then runs on one thread too): the figure to
compare with other compilers' single-core compile times. Times are wall-clock seconds from this one run: the machine
is shared, so compare rows of the same run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .bench import models_dir
from .cache import CACHE_ENV

#: the stages a cold compile reports, in order (api.STAGES and the JIT)
STAGE_COLUMNS = ("import", "optimize", "lower", "irgen", "iropt", "codegen", "jit")
#: block counts of the scaling table
SCALING_BLOCKS = (1, 2, 4, 8, 16, 32)
#: the slowest passes listed per model
TOP_PASSES = 3


def scaling_model(n_blocks: int, channels: int = 32, expand: int = 96, reduce: int = 8, size: int = 28,
                  seed: int = 0) -> onnx.ModelProto:
    """A network of ``n_blocks`` MBConv blocks (EfficientNet's): a 1x1 expansion, batch norm and SiLU; a 3x3
    depthwise convolution, batch norm and SiLU; squeeze-excitation (global average pool, 1x1 reduce, SiLU, 1x1
    expand, sigmoid gate broadcast back over the channels); a 1x1 projection with batch norm and the residual add.
    Random weights: for compile time and numerics, not accuracy."""
    rng = np.random.default_rng(seed)
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []

    def weight(name: str, shape: list[int], scale: float = 0.1) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def silu(x: str, tag: str) -> str:
        nodes.append(helper.make_node("Sigmoid", [x], [f"{tag}_sigmoid"]))
        nodes.append(helper.make_node("Mul", [x, f"{tag}_sigmoid"], [f"{tag}_silu"]))
        return f"{tag}_silu"

    def batch_norm(x: str, c: int, tag: str) -> str:
        inits.append(numpy_helper.from_array((1 + rng.random(c)).astype(np.float32), f"{tag}_var"))
        nodes.append(helper.make_node("BatchNormalization", [x, weight(f"{tag}_scale", [c], 1.0),
                                                             weight(f"{tag}_bias", [c]), weight(f"{tag}_mean", [c]),
                                                             f"{tag}_var"], [f"{tag}_bn"]))
        return f"{tag}_bn"

    x = "x"
    for b in range(n_blocks):
        t = f"b{b}"
        nodes.append(helper.make_node("Conv", [x, weight(f"{t}_we", [expand, channels, 1, 1])], [f"{t}_expand"]))
        e = silu(batch_norm(f"{t}_expand", expand, f"{t}_bn1"), f"{t}_s1")
        nodes.append(helper.make_node("Conv", [e, weight(f"{t}_wd", [expand, 1, 3, 3])], [f"{t}_dw"], group=expand,
                                      pads=[1, 1, 1, 1]))
        d = silu(batch_norm(f"{t}_dw", expand, f"{t}_bn2"), f"{t}_s2")
        nodes.append(helper.make_node("GlobalAveragePool", [d], [f"{t}_pool"]))
        nodes.append(helper.make_node("Conv", [f"{t}_pool", weight(f"{t}_wr", [reduce, expand, 1, 1]),
                                               weight(f"{t}_br", [reduce])], [f"{t}_reduce"]))
        r = silu(f"{t}_reduce", f"{t}_s3")
        nodes.append(helper.make_node("Conv", [r, weight(f"{t}_wx", [expand, reduce, 1, 1]),
                                               weight(f"{t}_bx", [expand])], [f"{t}_excite"]))
        nodes.append(helper.make_node("Sigmoid", [f"{t}_excite"], [f"{t}_gate"]))
        nodes.append(helper.make_node("Mul", [d, f"{t}_gate"], [f"{t}_se"]))
        nodes.append(helper.make_node("Conv", [f"{t}_se", weight(f"{t}_wp", [channels, expand, 1, 1])], [f"{t}_proj"]))
        nodes.append(helper.make_node("Add", [x, batch_norm(f"{t}_proj", channels, f"{t}_bn3")], [f"{t}_out"]))
        x = f"{t}_out"
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    graph = helper.make_graph(nodes, f"mbconv_se_{n_blocks}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def shared_scaling_tool() -> Path | None:
    """The team's generator of the scaling network, beside the shared models."""
    path = models_dir().parent / "tools" / "scaling_model.py"
    return path if path.exists() else None


def scaling_network(n_blocks: int, directory: Path) -> Path:
    """The scaling network of ``n_blocks`` blocks as a file in ``directory``: from the shared tool when present."""
    path = directory / f"scaling_{n_blocks}.onnx"
    tool = shared_scaling_tool()
    if tool is not None:
        subprocess.run([sys.executable, str(tool), str(path), str(n_blocks)], check=True, capture_output=True)
    else:
        onnx.save(scaling_model(n_blocks), path)
    return path


@dataclass
class CompileRow:
    """One model's cold compile."""

    name: str
    nodes: int
    seconds: float
    stages: dict[str, float]
    passes: list[tuple[str, float]]
    cached: float | None = None
    error: str | None = None


def compile_once(model: Path | onnx.ModelProto, name: str, cached_too: bool = True) -> CompileRow:
    """A cold compile of ``model`` (and a second one from a fresh compile cache when ``cached_too``)."""
    from . import api  # after --cores pinned the process: the default thread count reads the affinity
    from .errors import GlowError

    proto = model if isinstance(model, onnx.ModelProto) else onnx.load(str(model))
    with tempfile.TemporaryDirectory(prefix="glow-bench-compile-") as cache_dir:
        old = os.environ.get(CACHE_ENV)
        os.environ[CACHE_ENV] = cache_dir
        try:
            start = time.perf_counter()
            try:
                compiled = api.compile(model if isinstance(model, onnx.ModelProto) else str(model), cache=cached_too)
            except GlowError as e:
                return CompileRow(name, len(proto.graph.node), 0.0, {}, [], error=str(e).splitlines()[0])
            seconds = time.perf_counter() - start
            cached = None
            if cached_too:
                start = time.perf_counter()
                api.compile(model if isinstance(model, onnx.ModelProto) else str(model))
                cached = time.perf_counter() - start
        finally:
            if old is None:
                os.environ.pop(CACHE_ENV, None)
            else:
                os.environ[CACHE_ENV] = old
    stages = {st.name: st.seconds for st in compiled.stages if st.name in STAGE_COLUMNS}
    passes = sorted((p for st in compiled.stages for p in st.pass_seconds), key=lambda p: -p[1])
    return CompileRow(name, len(proto.graph.node), seconds, stages, passes[:TOP_PASSES], cached)


def format_models(rows: list[CompileRow]) -> str:
    head = ["model", "nodes", "cold s", *STAGE_COLUMNS, "setup", "cached s", "slowest passes (s)"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 2) + "---|"]
    for r in rows:
        if r.error is not None:
            lines.append(f"| {r.name} | {r.nodes} | not compiled: {r.error[:140]} |")
            continue
        setup = r.seconds - sum(r.stages.values())
        stages = [f"{r.stages.get(s, 0.0):.2f}" for s in STAGE_COLUMNS]
        passes = ", ".join(f"{name} {s:.2f}" for name, s in r.passes)
        cached = "" if r.cached is None else f"{r.cached:.3f}"
        lines.append(f"| {r.name} | {r.nodes} | {r.seconds:.2f} | " + " | ".join(stages)
                     + f" | {setup:.2f} | {cached} | {passes} |")
    return "\n".join(lines)


def format_scaling(rows: list[tuple[int, CompileRow]]) -> str:
    lines = ["| blocks | nodes | cold s | s per block | codegen s | jit s |", "|---:|---:|---:|---:|---:|---:|"]
    for n, r in rows:
        if r.error is not None:
            lines.append(f"| {n} | {r.nodes} | not compiled: {r.error[:140]} | | | |")
            continue
        lines.append(f"| {n} | {r.nodes} | {r.seconds:.2f} | {r.seconds / n:.3f} | {r.stages.get('codegen', 0):.2f} "
                     f"| {r.stages.get('jit', 0):.2f} |")
    return "\n".join(lines)


def default_models() -> list[Path]:
    """Every shared model and every light one."""
    directory = models_dir()
    return sorted(directory.glob("*.onnx")) + sorted((directory / "light").glob("*.onnx"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m glow_mlir.bench_compile", description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=None, help="comma-separated model names or paths (default: all shared)")
    parser.add_argument("--blocks", default=",".join(map(str, SCALING_BLOCKS)),
                        help="block counts of the scaling table ('' for none)")
    parser.add_argument("--cores", type=int, default=0, help="pin the process to this many cores first (0: as is)")
    parser.add_argument("--no-models", action="store_true", help="the scaling table only")
    return parser


def _resolve(spec: str) -> Path:
    path = Path(spec)
    if path.exists():
        return path
    for candidate in (models_dir() / f"{spec}.onnx", models_dir() / "light" / f"{spec}.onnx"):
        if candidate.exists():
            return candidate
    raise SystemExit(f"bench_compile: no model '{spec}' (looked in {models_dir()} and its light/)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.cores:
        available = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, available[: args.cores])
    cores = len(os.sched_getaffinity(0))
    print(f"cold compiles on {cores} core(s), {os.cpu_count()} on the machine")
    if not args.no_models:
        paths = [_resolve(s) for s in args.models.split(",")] if args.models else default_models()
        rows = []
        for path in paths:
            rows.append(compile_once(path, path.stem))
            print(f"  {path.stem}: {rows[-1].seconds:.2f} s", file=sys.stderr, flush=True)
        print(format_models(rows))
    blocks = [int(b) for b in args.blocks.split(",") if b]
    if blocks:
        tool = shared_scaling_tool()
        print(f"\nscaling: MBConv + squeeze-excitation blocks from {tool or 'glow_mlir.bench_compile.scaling_model'}")
        scaling = []
        with tempfile.TemporaryDirectory(prefix="glow-scaling-") as directory:
            for n in blocks:
                path = scaling_network(n, Path(directory))
                scaling.append((n, compile_once(path, f"scaling_{n}", cached_too=False)))
                print(f"  {n} blocks: {scaling[-1][1].seconds:.2f} s", file=sys.stderr, flush=True)
        print(format_scaling(scaling))
    return 0


if __name__ == "__main__":
    sys.exit(main())
