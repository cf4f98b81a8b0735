"""glowgraph-fold-batch-norm: an inference batch normalization after a convolution joins its weights.

Batch normalization with known statistics is y = x * m + a per channel (m = scale / sqrt(var + epsilon),
a = bias - mean * m). After a convolution, whose output channel f is sum(x * w[..., f]) + b[f], it folds into the
filter and bias: w'[..., f] = w[..., f] * m[f], b' = b * m + a. The node and its two full passes over the
activations disappear. Only when the convolution feeds nothing else: its unnormalized output would otherwise still
be needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.cnn_numpy import batch_norm_scale_shift
from .patterns import PatternPass, attr, constant, defined_by, known, only_user, replace


def rescaled_conv(conv: ir.Operation, mul: np.ndarray | None, add: np.ndarray | None) -> ir.Value | None:
    """``conv`` with its output channels scaled by ``mul`` and then shifted by ``add`` (either may be None), built
    at the current insertion point; None when its filter or bias is not known."""
    w, b = known(conv.operands[1]), known(conv.operands[2])
    if w is None or b is None or w.ndim != 4:  # a packed filter (cpu-pack-conv-filters) is the backend's own
        return None
    if mul is not None:
        w, b = w * mul, b * mul  # HWCF: the output channel is the last dim of the filter
    if add is not None:
        b = b + add
    dtype = b.dtype
    return gg.conv2d(conv.operands[0], constant(w.astype(dtype)), constant(b.astype(dtype)),
                     **dict(conv.attributes.items()))


def batch_norm_into_conv(op: ir.Operation) -> bool:
    """BatchNorm(Conv2d(x, w, b)){channel_axis 3} -> Conv2d(x, w * m, b * m + a), the batch norm's parameters
    known; the convolution feeds only the batch norm and has no fused activation."""
    if op.name != "glowgraph.batch_norm" or attr(op, "channel_axis", "i64") != 3:
        return False
    conv = defined_by(op.operands[0], "conv2d")
    if conv is None or not only_user(op.operands[0], op) or "activation" in conv.attributes:
        return False
    params = [known(v) for v in op.operands[1:]]
    if any(p is None for p in params):
        return False
    mul, add = batch_norm_scale_shift(*params, attr(op, "epsilon", "f32"))
    folded = rescaled_conv(conv, mul, add)
    if folded is None:
        return False
    replace(op, [folded])
    return True


PATTERNS = (batch_norm_into_conv,)


@dataclass(frozen=True)
class FoldBatchNorm(PatternPass):
    """BatchNorm(Conv2d(x, w, b)) -> Conv2d(x, w', b') with the normalization folded into the weights."""

    name = "glowgraph-fold-batch-norm"
    summary = "Fold inference batch normalization into the weights and bias of the preceding convolution"

    patterns = PATTERNS
