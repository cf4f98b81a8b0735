"""glowgraph-fold-concat-slices: slices of concats and concats of slices that undo each other.

Split followed by Concat (channel shuffles, grouped layers written out) imports as slices of one tensor joined
again, and a Slice of a Concat as a box of the joined tensor: each costs a copy of its data. A slice that takes
exactly one input of a concat is that input; one that lies inside an input is a slice of that input; two slices
of one tensor that sit side by side along the concat's axis are one slice (the tensor itself when they cover it).

Nested concats need no rewrite: concat is binary, a chain is its nested form, and bufferization already writes a
chain along one axis into one buffer (one insert per input).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects import glowgraph as gg
from .patterns import PatternPass, attr, defined_by, replace, shape


def concat_inputs(value: ir.Value, axis: int, offset: int = 0) -> list[tuple[ir.Value, int]]:
    """The inputs of the concat chain along ``axis`` that defines ``value``, with their offsets along it; just
    ``value`` when no such concat defines it."""
    op = defined_by(value, "concat")
    if op is None or attr(op, "axis", "i64") != axis:
        return [(value, offset)]
    lhs, rhs = op.operands
    return concat_inputs(lhs, axis, offset) + concat_inputs(rhs, axis, offset + shape(lhs)[axis])


def _box(op: ir.Operation) -> tuple[list[int], list[int], list[int]]:
    starts, sizes = attr(op, "starts", "i64s"), attr(op, "sizes", "i64s")
    return starts, sizes, attr(op, "steps", "i64s") or [1] * len(starts)


def slice_of_concat(op: ir.Operation) -> bool:
    """Slice(Concat(.., y, ..)) -> y when the box is all of y; -> Slice(y) with the starts moved when the box lies
    inside y (steps kept)."""
    if op.name != "glowgraph.slice":
        return False
    concat = defined_by(op.operands[0], "concat")
    if concat is None:
        return False
    axis = attr(concat, "axis", "i64")
    starts, sizes, steps = _box(op)
    ends = (starts[axis], starts[axis] + (sizes[axis] - 1) * steps[axis])  # the last below the first for a step < 0
    low, high = min(ends), max(ends)
    for y, offset in concat_inputs(op.operands[0], axis):
        if offset <= low and high < offset + shape(y)[axis]:
            moved = [s - offset if d == axis else s for d, s in enumerate(starts)]
            if y.type == op.results[0].type and not any(moved) and all(
                    k == 1 or n == 1 for k, n in zip(steps, sizes)):
                replace(op, [y])
            else:
                strided = any(k != 1 for k in steps)
                replace(op, [gg.slice_(y, starts=moved, sizes=sizes, steps=steps if strided else None)])
            return True
    return False


def concat_of_slices(op: ir.Operation) -> bool:
    """Concat(Slice(x, a), Slice(x, b)) -> Slice(x, a + b) when box b starts where box a ends along the axis and
    they agree elsewhere (unit steps); -> x when a + b is all of x."""
    if op.name != "glowgraph.concat":
        return False
    left, right = (defined_by(v, "slice") for v in op.operands)
    if left is None or right is None or left.operands[0] != right.operands[0]:
        return False
    axis = attr(op, "axis", "i64")
    (s1, n1, k1), (s2, n2, k2) = _box(left), _box(right)
    if any(k != 1 for k in k1 + k2) or s2[axis] != s1[axis] + n1[axis]:
        return False
    if any(s1[d] != s2[d] or n1[d] != n2[d] for d in range(len(s1)) if d != axis):
        return False
    x = left.operands[0]
    if x.type == op.results[0].type:
        replace(op, [x])
    else:
        replace(op, [gg.slice_(x, starts=s1, sizes=shape(op.results[0]))])
    return True


PATTERNS = (slice_of_concat, concat_of_slices)


@dataclass(frozen=True)
class FoldConcatSlices(PatternPass):
    """Slice(Concat(a, b)) -> a (or a slice of a); Concat(Slice(x), Slice(x)) -> Slice(x) (or x)."""

    name = "glowgraph-fold-concat-slices"
    summary = "Fold slices of concats and concats of adjacent slices"

    patterns = PATTERNS
