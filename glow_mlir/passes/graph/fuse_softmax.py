"""glowgraph-fuse-softmax: exp, a sum along one axis and a division are a softmax.

Models that spell softmax out (exported from frameworks whose softmax has no ONNX counterpart, or written by
hand) import as Exp, ReduceSum with keepdims (a reshape) and Div with its broadcast. The softmax kernel reads the
input twice instead of five passes over full-size temporaries, and subtracts the row maximum first, so it cannot
overflow where the spelled-out form gives inf / inf. A max already subtracted (Exp(x - max)) is part of it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects import glowgraph as gg
from .patterns import PatternPass, attr, defined_by, producer, replace, shape, users


def _through_keepdims(value: ir.Value, like: ir.Value) -> ir.Operation | None:
    """The reduction behind ``value`` when ``value`` is it given back ``like``'s shape: Broadcast(Reshape(r)),
    Reshape(r) or Broadcast(r) with the reduced axis kept as a dim of 1; None otherwise."""
    op = producer(value)
    for kind in ("broadcast", "reshape"):
        if op is not None and op.name == "glowgraph." + kind:
            value, op = op.operands[0], producer(op.operands[0])
    if op is None or not op.name.startswith("glowgraph.reduce_"):
        return None
    axes = attr(op, "axes", "i64s")
    full = shape(like)
    if len(axes) != 1 or shape(value) not in ([d for i, d in enumerate(full) if i != axes[0]],
                                              [1 if i == axes[0] else d for i, d in enumerate(full)]):
        return None
    return op


def _max_subtracted(value: ir.Value) -> ir.Value:
    """x when ``value`` is Sub(x, keepdims(ReduceMax(x))) along one axis, else ``value`` itself (softmax subtracts
    the maximum anyway)."""
    sub = defined_by(value, "sub")
    if sub is None:
        return value
    x, m = sub.operands
    reduce = _through_keepdims(m, x)
    return x if reduce is not None and reduce.name == "glowgraph.reduce_max" and reduce.operands[0] == x else value


def exp_sum_div(op: ir.Operation) -> bool:
    """Div(Exp(x), keepdims(ReduceSum(Exp(x)){axis})) -> Softmax(x){axis}, and Exp(x - keepdims(ReduceMax(x))) in
    place of Exp(x) too; the exp feeds only the sum and the division."""
    if op.name != "glowgraph.div":
        return False
    e, denominator = op.operands
    exp = defined_by(e, "exp")
    reduce = _through_keepdims(denominator, e)
    if exp is None or reduce is None or reduce.name != "glowgraph.reduce_sum" or reduce.operands[0] != e:
        return False
    if any(u not in (op, reduce) for u in users(e)):
        return False
    axis = attr(reduce, "axes", "i64s")[0]
    replace(op, [gg.softmax(_max_subtracted(exp.operands[0]), axis=axis)])
    return True


PATTERNS = (exp_sum_div,)


@dataclass(frozen=True)
class FuseSoftmax(PatternPass):
    """Div(Exp(x), Broadcast(ReduceSum(Exp(x)))) -> Softmax(x)."""

    name = "glowgraph-fuse-softmax"
    summary = "Turn exp, a sum along one axis and a division into a softmax"

    patterns = PATTERNS
