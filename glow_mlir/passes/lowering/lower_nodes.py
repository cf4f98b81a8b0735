"""glowgraph-lower: node lowering to the primitive set (Glow's Lower.cpp). The backend
decides per node kind what it keeps (Glow's shouldLower) through the ``keep`` option."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.cnn_numpy import batch_norm_scale_shift
from ...dialects.optable import numpy_to_elements
from ..registry import Pass, PassError
from ..utils import body_ops, constant_value, functions

Lowering = Callable[[ir.OpView], list[ir.Value]]


def lower_fully_connected(op: ir.OpView) -> list[ir.Value]:
    """FullyConnected(x, W, b) -> BatchedAdd(MatMul(x, W), b)."""
    return [gg.batched_add(gg.matmul(op.input, op.weights), op.bias)]


def lower_batch_norm(op: ir.OpView) -> list[ir.Value]:
    """BatchNorm(x, scale, bias, mean, var) -> Add(Mul(x, Broadcast(Constant mul)), Broadcast(Constant add)), with
    mul = scale / sqrt(var + epsilon) and add = bias - mean * mul per channel, computed here from the constants."""
    params = [constant_value(v) for v in (op.scale, op.bias, op.mean, op.var)]
    if any(p is None for p in params):
        raise PassError(f"'{op.operation.name}' needs constant scale, bias, mean and var to be lowered", op.location)
    mul, add = batch_norm_scale_shift(*params, op.epsilon)
    shape = list(ir.RankedTensorType(op.input.type).shape)
    # per-channel values on the channel axis, broadcast over the dims after it by size-1 dims
    per_channel = [shape[op.channel_axis]] + [1] * (len(shape) - 1 - op.channel_axis)

    def spread(values) -> ir.Value:
        return gg.broadcast(gg.constant(value=numpy_to_elements(values.reshape(per_channel))), shape=shape)

    return [gg.add(gg.mul(op.input, spread(mul)), spread(add))]


def lower_clip(op: ir.OpView) -> list[ir.Value]:
    """Clip(x){min, max} -> Min(Max(x, Splat(min)), Splat(max)); an infinite bound clips nothing and is left out."""
    x, t = op.input, op.input.type
    if op.min != -math.inf:
        x = gg.max_(x, gg.splat(value=op.min, result_types=[t]))
    if op.max != math.inf:
        x = gg.min_(x, gg.splat(value=op.max, result_types=[t]))
    return [x]


#: node name -> its lowering; a node kind missing here is already primitive.
LOWERINGS: dict[str, Lowering] = {
    "fully_connected": lower_fully_connected,

    # --- convolution, pooling and normalization (NHWC) ---
    "batch_norm": lower_batch_norm,
    "clip": lower_clip,

    # --- elementwise math, activations, comparisons and casts ---

    # --- data movement and shapes ---

    # --- reductions, softmax, normalization and batched matmul ---
}


def lower_node(op: ir.Operation, keep: frozenset[str]) -> bool:
    """Lower one node unless the backend keeps its kind; returns whether it changed."""
    dialect, _, kind = op.name.partition(".")
    if dialect != "glowgraph" or kind in keep or kind not in LOWERINGS:
        return False
    with ir.InsertionPoint(op), op.location:
        new = LOWERINGS[kind](op.opview)
    for old, value in zip(op.results, new):
        old.replace_all_uses_with(value)
    op.erase()
    return True


@dataclass(frozen=True)
class LowerNodes(Pass):
    """High-level node -> primitives, except the kinds in ``keep``."""

    name = "glowgraph-lower"
    summary = "Lower high-level glowgraph nodes to primitives, keeping the node kinds the backend lists"
    keep: tuple[str, ...] = ()

    def run(self, module: ir.Operation) -> None:
        keep = frozenset(self.keep)
        for func in functions(module):
            for op in body_ops(func):
                lower_node(op, keep)
