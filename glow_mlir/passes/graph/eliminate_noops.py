"""glowgraph-eliminate-noops: remove nodes that compute their input unchanged.

Dropout never reaches the graph (the importer makes it its input, as inference does), and Tile by ones is its
input at import: the data movement left to remove is a reshape, transpose, slice or broadcast that keeps
everything where it is, and the arithmetic is a multiply or divide by one and an add or subtract of zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from .patterns import PatternPass, attr, replace, shape, uniform

_SAME_TYPE = ("glowgraph.reshape", "glowgraph.broadcast")


def identity_view(op: ir.Operation) -> bool:
    """Reshape(x) to x's shape -> x; Broadcast(x) to x's shape -> x."""
    if op.name not in _SAME_TYPE or op.results[0].type != op.operands[0].type:
        return False
    replace(op, [op.operands[0]])
    return True


def identity_transpose(op: ir.Operation) -> bool:
    """Transpose(x){0, 1, ..., n-1} -> x."""
    if op.name != "glowgraph.transpose":
        return False
    shuffle = attr(op, "shuffle", "i64s")
    if shuffle != list(range(len(shuffle))):
        return False
    replace(op, [op.operands[0]])
    return True


def full_slice(op: ir.Operation) -> bool:
    """Slice(x){starts 0, sizes = x's shape} -> x (steps do not matter where one element is taken)."""
    if op.name != "glowgraph.slice" or shape(op.results[0]) != shape(op.operands[0]) or any(attr(op, "starts", "i64s")):
        return False
    steps = attr(op, "steps", "i64s") or [1] * len(shape(op.operands[0]))
    if any(k != 1 and n > 1 for k, n in zip(steps, shape(op.operands[0]))):
        return False
    replace(op, [op.operands[0]])
    return True


#: binary node -> (its neutral element, whether it is neutral on the left too)
_NEUTRAL = {
    "glowgraph.add": (0, True),
    "glowgraph.sub": (0, False),
    "glowgraph.mul": (1, True),
    "glowgraph.div": (1, False),
}


def neutral_operand(op: ir.Operation) -> bool:
    """Add(x, 0) -> x, Add(0, x) -> x, Sub(x, 0) -> x, Mul(x, 1) -> x, Mul(1, x) -> x, Div(x, 1) -> x, for a
    splat or a constant (or a broadcast of one) holding only the neutral value."""
    entry = _NEUTRAL.get(op.name)
    if entry is None:
        return False
    neutral, commutes = entry
    lhs, rhs = op.operands
    for kept, other in ((lhs, rhs), (rhs, lhs)) if commutes else ((lhs, rhs),):
        if kept.type == op.results[0].type and uniform(other) == neutral:
            replace(op, [kept])
            return True
    return False


PATTERNS = (identity_view, identity_transpose, full_slice, neutral_operand)


@dataclass(frozen=True)
class EliminateNoops(PatternPass):
    """Reshape/Broadcast(x) to x's type -> x; Transpose(x){identity} -> x; Slice(x){all of x} -> x;
    x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 -> x."""

    name = "glowgraph-eliminate-noops"
    summary = "Remove identity reshapes, transposes, slices and broadcasts, and arithmetic with a neutral operand"

    patterns = PATTERNS
