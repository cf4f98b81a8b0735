"""glowgraph-cse: merge identical glowgraph nodes (upstream cse cannot see IRDL ops)."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from ..utils import body_ops, functions, has_trait, replace_op


def _key(op: ir.Operation) -> tuple:
    # Attributes and types are uniqued in the context, so hashing them is cheap and exact.
    attrs = tuple(sorted(op.attributes.items(), key=lambda kv: kv[0]))
    return (op.name, tuple(op.operands), attrs, tuple(r.type for r in op.results))


def eliminate_common_subexpressions(func: ir.Operation) -> int:
    """Replace each pure node by an earlier identical one; returns how many were merged."""
    seen: dict[tuple, ir.Operation] = {}
    merged = 0
    for op in body_ops(func):
        if not has_trait(op, "pure"):
            continue
        key = _key(op)
        first = seen.get(key)
        if first is None:
            seen[key] = op
            continue
        replace_op(op, list(first.results))
        merged += 1
    return merged


@dataclass(frozen=True)
class CommonSubexpressionElimination(Pass):
    """Node(a, b) ... Node(a, b) -> one Node(a, b) used by both."""

    name = "glowgraph-cse"
    summary = "Merge identical glowgraph nodes (same op, operands, attributes and types)"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            eliminate_common_subexpressions(func)
