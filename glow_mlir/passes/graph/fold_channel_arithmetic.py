"""glowgraph-fold-channel-arithmetic: constant per-channel multiplies and adds after a convolution or a batch
normalization join its parameters.

Caffe2-born models (densenet, inception) follow batch normalization with a separate per-channel scale and shift
(Mul and Add of unsqueezed constants), and some exporters write a folded batch norm out that way after the
convolution. Each is a full pass over the activations; folded into the producer's weights or statistics, it costs
nothing at run time. The constants must vary along the channel only (broadcast over N, H and W); the producer must
feed nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from .fold_batch_norm import rescaled_conv
from .patterns import PatternPass, along, attr, constant, known, only_user, producer, replace

#: node -> whether the producer may be either operand
_ARITHMETIC = {"glowgraph.mul": True, "glowgraph.add": True, "glowgraph.sub": False}


def _channel_factor(op: ir.Operation, other: ir.Value, axis: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(mul, add) that ``op`` applies per channel along ``axis`` with its known operand ``other``; (None, None)
    when ``other`` is not known or varies along another dim."""
    array = known(other)
    c = None if array is None else along(array, [axis])
    if c is None:
        return None, None
    if op.name == "glowgraph.mul":
        return c, None
    return None, (c if op.name == "glowgraph.add" else -c)


def _rescaled_batch_norm(norm: ir.Operation, mul: np.ndarray | None, add: np.ndarray | None) -> ir.Value | None:
    """``norm`` with its scale and bias multiplied by ``mul`` and then ``add`` added to its bias (either may be
    None); None when its scale or bias is not known."""
    scale, bias = known(norm.operands[1]), known(norm.operands[2])
    if scale is None or bias is None:
        return None
    if mul is not None:
        scale, bias = scale * mul, bias * mul
    if add is not None:
        bias = bias + add
    x, _, _, mean, var = norm.operands
    return gg.batch_norm(x, constant(scale), constant(bias), mean, var, **dict(norm.attributes.items()))


def arithmetic_into_producer(op: ir.Operation) -> bool:
    """Mul(Conv2d(x, w, b), C) -> Conv2d(x, w * c, b * c); Add(Conv2d(x, w, b), C) -> Conv2d(x, w, b + c);
    Sub(Conv2d, C) -> Conv2d(x, w, b - c); the same into BatchNorm's scale and bias. C known and constant but
    along the channel (c); Mul and Add in either operand order."""
    either = _ARITHMETIC.get(op.name)
    if either is None:
        return False
    lhs, rhs = op.operands
    for y, other in ((lhs, rhs), (rhs, lhs)) if either else ((lhs, rhs),):
        node = producer(y)
        if node is None or node.name not in ("glowgraph.conv2d", "glowgraph.batch_norm") or not only_user(y, op):
            continue
        if y.type != op.results[0].type or "activation" in node.attributes:
            continue
        axis = 3 if node.name == "glowgraph.conv2d" else attr(node, "channel_axis", "i64")
        mul, add = _channel_factor(op, other, axis)
        if mul is None and add is None:
            continue
        rebuild = rescaled_conv if node.name == "glowgraph.conv2d" else _rescaled_batch_norm
        folded = rebuild(node, mul, add)
        if folded is None:
            continue
        replace(op, [folded])
        return True
    return False


PATTERNS = (arithmetic_into_producer,)


@dataclass(frozen=True)
class FoldChannelArithmetic(PatternPass):
    """Add(Mul(Conv2d(x, w, b), c), d) -> Conv2d(x, w * c, b * c + d), and the same into a BatchNorm, for
    per-channel constants c and d."""

    name = "glowgraph-fold-channel-arithmetic"
    summary = "Fold per-channel constant multiplies and adds into the preceding convolution or batch norm"

    patterns = PATTERNS
