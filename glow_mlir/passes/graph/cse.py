"""glowgraph-cse: merge identical glowgraph nodes (upstream cse cannot see IRDL ops)."""

from __future__ import annotations

import collections
from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from ..utils import functions, has_trait, nested_blocks, replace_op


def _key(op: ir.Operation) -> tuple:
    # Attributes and types are uniqued in the context, so hashing them is cheap and exact.
    attrs = tuple(sorted(op.attributes.items(), key=lambda kv: kv[0]))
    return (op.name, tuple(op.operands), attrs, tuple(r.type for r in op.results))


def eliminate_common_subexpressions(func: ir.Operation) -> int:
    """Replace each pure node by an earlier identical one; returns how many were merged. Inside a loop's body a node
    may be replaced by one of the enclosing blocks, never the other way round (the body's nodes are scoped to it)."""
    if not func.regions[0].blocks:
        return 0
    return _cse_block(func.regions[0].blocks[0], collections.ChainMap())


def _cse_block(block: ir.Block, seen: collections.ChainMap) -> int:
    merged = 0
    for op in [o.operation for o in block.operations]:
        for inner in nested_blocks(op):
            merged += _cse_block(inner, seen.new_child())
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
