"""glowgraph-reduce-mean-to-avg-pool: a mean over the spatial dims is a global average pool.

Keras and TensorFlow export global average pooling as ReduceMean over H and W. The pool is one node with a kernel
of its own where the mean is a sum and a division in node lowering; it also stays in the NHWC chain of the
convolutions around it. In NHWC the spatial dims are 1 and 2; a mean over dims 2 and 3 of an NCHW tensor that the
layout transpose made from an NHWC one is the same pool of the NHWC tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects import glowgraph as gg
from .patterns import PatternPass, attr, defined_by, replace, shape

#: NHWC -> NCHW, the shuffle of the transpose the importer puts after an NHWC node
TO_NCHW = [0, 3, 1, 2]


def global_avg_pool(x: ir.Value) -> ir.Value:
    """AvgPool of NHWC ``x`` with one window covering H and W: [N, 1, 1, C]."""
    _, h, w, _ = shape(x)
    return gg.avg_pool(x, kernels=[h, w], strides=[1, 1], pads=[0, 0, 0, 0], dilations=[1, 1], ceil_mode=0,
                       count_include_pad=0)


def spatial_mean(op: ir.Operation) -> bool:
    """ReduceMean(x){1, 2} -> Reshape(AvgPool(x)) for NHWC x; ReduceMean(Transpose(y){0, 3, 1, 2}){2, 3} ->
    Reshape(AvgPool(y)): the [N, 1, 1, C] pool viewed as the mean's [N, C] (or kept [N, C, 1, 1])."""
    if op.name != "glowgraph.reduce_mean" or len(shape(op.operands[0])) != 4:
        return False
    axes = sorted(attr(op, "axes", "i64s"))
    x = op.operands[0]
    if axes == [2, 3]:
        transpose = defined_by(x, "transpose")
        if transpose is None or attr(transpose, "shuffle", "i64s") != TO_NCHW:
            return False
        x = transpose.operands[0]
    elif axes != [1, 2]:
        return False
    replace(op, [gg.reshape(global_avg_pool(x), shape=shape(op.results[0]))])
    return True


PATTERNS = (spatial_mean,)


@dataclass(frozen=True)
class ReduceMeanToAvgPool(PatternPass):
    """ReduceMean(x){H, W} -> Reshape(AvgPool(x)) in NHWC, and through the NCHW layout transpose."""

    name = "glowgraph-reduce-mean-to-avg-pool"
    summary = "Turn a mean over the spatial dims into a global average pool"

    patterns = PATTERNS
