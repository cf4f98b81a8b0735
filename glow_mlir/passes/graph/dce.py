"""glowgraph-dce: erase graph nodes whose results nothing uses."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from ..utils import functions, graph_ops, has_trait, has_uses


def eliminate_dead_nodes(func: ir.Operation) -> int:
    """Erase unused pure glowgraph nodes, last first so chains die in one sweep; returns the count."""
    erased = 0
    for op in reversed(graph_ops(func)):
        if has_trait(op, "pure") and not has_uses(op):
            op.erase()
            erased += 1
    return erased


@dataclass(frozen=True)
class DeadCodeElimination(Pass):
    """Node(x) with no users -> (nothing)."""

    name = "glowgraph-dce"
    summary = "Erase glowgraph nodes whose results are unused"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            eliminate_dead_nodes(func)
