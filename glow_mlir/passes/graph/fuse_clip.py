"""glowgraph-fuse-clip: a maximum with a constant after a minimum with a constant (or the other way) is a clip.

Exporters spell ReLU6 and hard limits as Min and Max with constants. One clip node is one pass over the data instead
of two, and a convolution or fully connected node can take it as its fused activation.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects import glowgraph as gg
from .patterns import PatternPass, only_user, producer, replace, uniform

#: outer node -> the inner node kind it pairs with
_PAIRS = {"glowgraph.max": "glowgraph.min", "glowgraph.min": "glowgraph.max"}


def _bounded(op: ir.Operation) -> tuple[ir.Value, float] | None:
    """(x, c) for a binary ``op`` of x and a known uniform c (either operand order), else None."""
    lhs, rhs = op.operands
    for x, other in ((lhs, rhs), (rhs, lhs)):
        c = uniform(other)
        if c is not None:
            return x, c
    return None


def min_max_to_clip(op: ir.Operation) -> bool:
    """Max(Min(x, hi), lo) -> Clip(x){lo, hi} and Min(Max(x, lo), hi) -> Clip(x){lo, hi}, for uniform constants
    lo <= hi (splats or constants, either operand order), float32 x; the inner node feeds only the outer."""
    inner_kind = _PAIRS.get(op.name)
    if inner_kind is None or str(ir.ShapedType(op.results[0].type).element_type) != "f32":
        return False
    outer = _bounded(op)
    if outer is None:
        return False
    y, c_outer = outer
    inner = producer(y)
    if inner is None or inner.name != inner_kind or not only_user(y, op):
        return False
    found = _bounded(inner)
    if found is None:
        return False
    x, c_inner = found
    low, high = (c_outer, c_inner) if op.name == "glowgraph.max" else (c_inner, c_outer)
    if low > high:
        return False
    replace(op, [gg.clip(x, min=low, max=high)])
    return True


PATTERNS = (min_max_to_clip,)


@dataclass(frozen=True)
class FuseClip(PatternPass):
    """Max(Min(x, hi), lo) -> Clip(x){lo, hi}; Min(Max(x, lo), hi) -> Clip(x){lo, hi}."""

    name = "glowgraph-fuse-clip"
    summary = "Turn a min and a max with constant bounds into a clip"

    patterns = PATTERNS
