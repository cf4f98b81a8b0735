"""Exploring the graph optimizer: a model's glowgraph after import, graph passes applied one at a time with what
each changed, node counts per kind, and drawings of the graph. The notebooks and ``glow-compile --stats`` use it.

    g = GraphExplorer("model.onnx")
    print(g.text())
    for spec in graph_pipeline():
        step = g.apply(spec)
        print(step.summary())
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mlir import ir

from .api import CompileOptions, ModelLike, lower_model
from .backend import cpu
from .passes.pipeline import Pass, parse_pipeline, pipeline_text, run_pipeline
from .passes.utils import body_ops, functions
from .graph_dot import graph_to_dot

#: constants with more elements than this print elided in the texts shown
ELIDE_ELEMENTS = 16


def node_counts(module: ir.Module | ir.Operation) -> Counter[str]:
    """How many nodes of each kind the graphs (or programs) of ``module`` hold, by op name without its dialect
    (``conv2d``, ``transpose``); the function terminators are not counted."""
    op = module.operation if isinstance(module, ir.Module) else module
    counts: Counter[str] = Counter()
    for func in functions(op):
        for node in body_ops(func):
            if node.name != "func.return":
                counts[node.name.split(".", 1)[1]] += 1
    return counts


def counts_table(columns: Mapping[str, Mapping[str, int]]) -> str:
    """A Markdown table of node counts: one row per kind (sorted), one column per stage, and a total row."""
    names = list(columns)
    kinds = sorted(set().union(*(c.keys() for c in columns.values())))
    lines = ["| node | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for kind in kinds:
        lines.append(f"| {kind} | " + " | ".join(str(columns[n].get(kind, 0)) for n in names) + " |")
    lines.append("| **total** | " + " | ".join(str(sum(columns[n].values())) for n in names) + " |")
    return "\n".join(lines)


def stage_counts(model: ModelLike, input_shapes: dict[str, Sequence[int]] | None = None,
                 stages: Sequence[str] = ("import", "optimize", "lower")) -> dict[str, Counter[str]]:
    """Node counts per kind after each of ``stages`` of a full compile of ``model`` (optimizer on)."""
    found: dict[str, Counter[str]] = {}

    def on_stage(name: str, module: ir.Module) -> None:
        if name in stages:
            found[name] = node_counts(module)

    lower_model(model, CompileOptions(input_shapes=input_shapes), until=stages[-1], on_stage=on_stage)
    return found


def graph_pipeline() -> list[str]:
    """The passes of the CPU backend's graph optimization, in order, each as a pipeline element for
    :meth:`GraphExplorer.apply`."""
    return [e.spec() if isinstance(e, Pass) else e for e in cpu.graph_optimization()]


@dataclass
class Step:
    """What one pass did to the graph."""

    spec: str
    before: Counter[str]
    after: Counter[str]
    diff: list[str]

    @property
    def changed(self) -> bool:
        return bool(self.diff)

    def count_changes(self) -> dict[str, int]:
        """Node kinds whose count changed, with the change (negative: fewer)."""
        kinds = set(self.before) | set(self.after)
        return {k: self.after.get(k, 0) - self.before.get(k, 0) for k in sorted(kinds)
                if self.after.get(k, 0) != self.before.get(k, 0)}

    def summary(self) -> str:
        """One line: the pass, the node total before and after, and the kinds whose count changed."""
        if not self.changed:
            return f"{self.spec}: no change"
        delta = ", ".join(f"{k} {v:+d}" for k, v in self.count_changes().items()) or "same counts, nodes rewritten"
        return f"{self.spec}: {sum(self.before.values())} -> {sum(self.after.values())} nodes ({delta})"


class GraphExplorer:
    """A model's glowgraph right after import, which passes then rewrite in place, one call at a time."""

    def __init__(self, model: ModelLike, input_shapes: dict[str, Sequence[int]] | None = None):
        lowered = lower_model(model, CompileOptions(input_shapes=input_shapes), until="import")
        self._ctx = lowered.ctx
        self.module = lowered.module
        self.name = lowered.imported.name
        self.steps: list[Step] = []

    def text(self, full: bool = False) -> str:
        """The graph as MLIR text, large constants elided unless ``full``."""
        return self.module.operation.get_asm(large_elements_limit=None if full else ELIDE_ELEMENTS)

    def counts(self) -> Counter[str]:
        """Node counts per kind now."""
        return node_counts(self.module)

    def apply(self, spec: str) -> Step:
        """Run one pass (or a textual pipeline) on the graph; returns what it changed, the IR verified after it."""
        with self._ctx, ir.Location.unknown(self._ctx):
            before_text, before = self.text(), self.counts()
            run_pipeline(self.module.operation, parse_pipeline(spec))
            after_text = self.text()
        diff = list(difflib.unified_diff(before_text.splitlines(), after_text.splitlines(), "before", "after",
                                         lineterm="", n=0))
        step = Step(pipeline_text(parse_pipeline(spec))[len("builtin.module("):-1], before, self.counts(), diff)
        self.steps.append(step)
        return step

    def dot(self) -> str:
        """The graph as Graphviz DOT: one record per node, one edge per use."""
        return "".join(graph_to_dot(f) for f in functions(self.module.operation))

    def svg(self) -> str | None:
        """The graph drawn as SVG by Graphviz's ``dot``, or None when ``dot`` is not installed."""
        if shutil.which("dot") is None:
            return None
        return subprocess.run(["dot", "-Tsvg"], input=self.dot(), capture_output=True, text=True, check=True).stdout

    def outline(self) -> str:
        """The graph as text, one line per node: its result, kind, operands and result type (no attributes)."""
        lines = []
        names: dict[ir.Value, str] = {}
        for func in functions(self.module.operation):
            for i, arg in enumerate(func.regions[0].blocks[0].arguments):
                names[arg] = f"%in{i}"
            for k, op in enumerate(body_ops(func)):
                args = ", ".join(names.get(v, "?") for v in op.operands)
                if op.name == "func.return":
                    lines.append(f"return {args}")
                    continue
                names[op.results[0]] = f"%{k}"
                kind = op.name.split(".", 1)[1]
                lines.append(f"%{k} = {kind}({args}) : {op.results[0].type}")
        return "\n".join(lines)


__all__ = ["GraphExplorer", "Step", "counts_table", "graph_pipeline", "node_counts", "stage_counts"]
