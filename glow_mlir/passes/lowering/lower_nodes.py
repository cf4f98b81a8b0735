"""glowgraph-lower: node lowering to the primitive set (Glow's Lower.cpp). The backend
decides per node kind what it keeps (Glow's shouldLower) through the ``keep`` option."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.cnn_numpy import batch_norm_scale_shift
from ...dialects.optable import numpy_to_elements
from ..registry import Pass
from ..utils import constant_value, functions, graph_ops, replace_op

Lowering = Callable[[ir.OpView], list[ir.Value]]


def lower_fully_connected(op: ir.OpView) -> list[ir.Value]:
    """FullyConnected(x, W, b) -> BatchedAdd(MatMul(x, W), b), then its fused activation: Relu, or
    Min(Max(.., Splat(min)), Splat(max)) for a clip."""
    y = gg.batched_add(gg.matmul(op.input, op.weights), op.bias)
    if op.activation == "relu":
        y = gg.relu(y)
    elif op.activation == "clip":
        y = gg.min_(gg.max_(y, _splat(y, op.activation_min)), _splat(y, op.activation_max))
    return [y]


# --- convolution, pooling and normalization (NHWC) ---


def lower_batch_norm(op: ir.OpView) -> list[ir.Value]:
    """BatchNorm(x, scale, bias, mean, var) -> Add(Mul(x, Broadcast(mul)), Broadcast(add)) with, per channel,
    mul = scale / sqrt(var + epsilon) and add = bias - mean * mul: constants computed here when the four parameters
    are (they are, from the importer), else Div(scale, Sqrt(Add(var, Splat(epsilon)))) and Sub(bias, Mul(mean, mul))."""
    shape = list(ir.RankedTensorType(op.input.type).shape)
    # per-channel values on the channel axis, broadcast over the dims after it by size-1 dims
    per_channel = [shape[op.channel_axis]] + [1] * (len(shape) - 1 - op.channel_axis)
    params = [constant_value(v) for v in (op.scale, op.bias, op.mean, op.var)]
    if all(p is not None for p in params):
        mul, add = (gg.constant(value=numpy_to_elements(v.reshape(per_channel)))
                    for v in batch_norm_scale_shift(*params, op.epsilon))
    else:
        epsilon = gg.splat(value=op.epsilon, result_types=[op.var.type])
        mul = gg.div(op.scale, gg.sqrt(gg.add(op.var, epsilon)))
        mul, add = (gg.reshape(v, shape=per_channel) if len(per_channel) > 1 else v
                    for v in (mul, gg.sub(op.bias, gg.mul(op.mean, mul))))
    return [gg.add(gg.mul(op.input, gg.broadcast(mul, shape=shape)), gg.broadcast(add, shape=shape))]


def lower_clip(op: ir.OpView) -> list[ir.Value]:
    """Clip(x){min, max} -> Min(Max(x, Splat(min)), Splat(max)); an infinite bound clips nothing and is left out."""
    x, t = op.input, op.input.type
    if op.min != -math.inf:
        x = gg.max_(x, gg.splat(value=op.min, result_types=[t]))
    if op.max != math.inf:
        x = gg.min_(x, gg.splat(value=op.max, result_types=[t]))
    return [x]


# --- elementwise math, activations, comparisons and casts ---


def _splat(like: ir.Value, value: float) -> ir.Value:
    """``value`` filling a tensor of ``like``'s type."""
    return gg.splat(value=value, result_types=[like.type])


def lower_leaky_relu(op: ir.OpView) -> list[ir.Value]:
    """LeakyRelu(x) -> Select(CmpLT(x, 0), Mul(x, alpha), x)."""
    x = op.input
    return [gg.select(gg.cmp_lt(x, _splat(x, 0)), gg.mul(x, _splat(x, op.alpha)), x)]


def lower_prelu(op: ir.OpView) -> list[ir.Value]:
    """PRelu(x, slope) -> Select(CmpLT(x, 0), Mul(x, slope), x)."""
    x = op.input
    return [gg.select(gg.cmp_lt(x, _splat(x, 0)), gg.mul(x, op.slope), x)]


def lower_elu(op: ir.OpView) -> list[ir.Value]:
    """Elu(x) -> Select(CmpLT(x, 0), Mul(Sub(Exp(x), 1), alpha), x)."""
    x = op.input
    negative = gg.mul(gg.sub(gg.exp(x), _splat(x, 1)), _splat(x, op.alpha))
    return [gg.select(gg.cmp_lt(x, _splat(x, 0)), negative, x)]


def lower_hard_sigmoid(op: ir.OpView) -> list[ir.Value]:
    """HardSigmoid(x) -> Max(Min(Add(Mul(x, alpha), beta), 1), 0)."""
    x = op.input
    linear = gg.add(gg.mul(x, _splat(x, op.alpha)), _splat(x, op.beta))
    return [gg.max_(gg.min_(linear, _splat(x, 1)), _splat(x, 0))]


def lower_softplus(op: ir.OpView) -> list[ir.Value]:
    """Softplus(x) -> Add(Max(x, 0), Log(Add(Exp(Neg(Abs(x))), 1))), which never overflows."""
    x = op.input
    tail = gg.log(gg.add(gg.exp(gg.neg(gg.abs_(x))), _splat(x, 1)))
    return [gg.add(gg.max_(x, _splat(x, 0)), tail)]


def lower_gelu(op: ir.OpView) -> list[ir.Value]:
    """Gelu(x) -> Mul(Mul(x, 0.5), Add(Erf(Mul(x, 1/sqrt(2))), 1));
    Gelu(x){tanh} -> Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Mul(Mul(x, x), x), 0.044715)), sqrt(2/pi))), 1))."""
    x = op.input
    if op.approximate == "tanh":
        cube = gg.mul(gg.mul(x, x), x)
        inner = gg.mul(gg.add(x, gg.mul(cube, _splat(x, 0.044715))), _splat(x, math.sqrt(2 / math.pi)))
        phi = gg.tanh(inner)
    else:
        phi = gg.erf(gg.mul(x, _splat(x, 1 / math.sqrt(2))))
    return [gg.mul(gg.mul(x, _splat(x, 0.5)), gg.add(phi, _splat(x, 1)))]


# --- reductions, softmax, normalization and batched matmul ---


def _mean(x: ir.Value, axes: Sequence[int]) -> ir.Value:
    """Div(ReduceSum(x){axes}, Splat(n)), n = the number of elements reduced into one."""
    total = gg.reduce_sum(x, axes=list(axes))
    shape = ir.RankedTensorType(x.type).shape
    return gg.div(total, _splat(total, math.prod(shape[a] for a in axes)))


def _along(stat: ir.Value, like: ir.Value, axes: Sequence[int]) -> ir.Value:
    """A statistic of ``like`` reduced over ``axes``, given back ``like``'s shape: Broadcast(Reshape(stat))."""
    shape = list(ir.RankedTensorType(like.type).shape)
    kept = gg.reshape(stat, shape=[1 if i in axes else d for i, d in enumerate(shape)])
    return kept if shape == list(ir.RankedTensorType(kept.type).shape) else gg.broadcast(kept, shape=shape)


def lower_reduce_mean(op: ir.OpView) -> list[ir.Value]:
    """ReduceMean(x){axes} -> Div(ReduceSum(x){axes}, Splat(n)), n = the number of elements reduced into one."""
    return [_mean(op.input, op.axes)]


def lower_reduce_l2(op: ir.OpView) -> list[ir.Value]:
    """ReduceL2(x){axes} -> Sqrt(ReduceSum(Mul(x, x)){axes})."""
    return [gg.sqrt(gg.reduce_sum(gg.mul(op.input, op.input), axes=op.axes))]


def lower_softmax(op: ir.OpView) -> list[ir.Value]:
    """Softmax(x){axis} -> Div(e, Broadcast(ReduceSum(e))), e = Exp(Sub(x, Broadcast(ReduceMax(x)))), along axis."""
    x, axes = op.input, [op.axis]
    e = gg.exp(gg.sub(x, _along(gg.reduce_max(x, axes=axes), x, axes)))
    return [gg.div(e, _along(gg.reduce_sum(e, axes=axes), x, axes))]


def lower_log_softmax(op: ir.OpView) -> list[ir.Value]:
    """LogSoftmax(x){axis} -> Sub(d, Broadcast(Log(ReduceSum(Exp(d))))), d = Sub(x, Broadcast(ReduceMax(x)))."""
    x, axes = op.input, [op.axis]
    d = gg.sub(x, _along(gg.reduce_max(x, axes=axes), x, axes))
    return [gg.sub(d, _along(gg.log(gg.reduce_sum(gg.exp(d), axes=axes)), x, axes))]


def lower_layer_norm(op: ir.OpView) -> list[ir.Value]:
    """LayerNorm(x, g, b){axis, epsilon} -> Add(Mul(Div(d, Broadcast(Sqrt(Add(Mean(Mul(d, d)), epsilon)))),
    Broadcast(g)), Broadcast(b)), d = Sub(x, Broadcast(Mean(x))), means over the dims from axis on."""
    x = op.input
    shape = list(ir.RankedTensorType(x.type).shape)
    axes = list(range(op.axis, len(shape)))
    d = gg.sub(x, _along(_mean(x, axes), x, axes))
    variance = _mean(gg.mul(d, d), axes)
    std = gg.sqrt(gg.add(variance, _splat(variance, op.epsilon)))
    normalized = gg.div(d, _along(std, x, axes))
    scale, bias = ((v if op.axis == 0 else gg.broadcast(v, shape=shape)) for v in (op.scale, op.bias))
    return [gg.add(gg.mul(normalized, scale), bias)]


#: node name -> its lowering; a node kind missing here is already primitive.
LOWERINGS: dict[str, Lowering] = {
    "fully_connected": lower_fully_connected,

    # --- convolution, pooling and normalization (NHWC) ---
    "batch_norm": lower_batch_norm,
    "clip": lower_clip,

    # --- elementwise math, activations, comparisons and casts ---
    "leaky_relu": lower_leaky_relu,
    "prelu": lower_prelu,
    "elu": lower_elu,
    "hard_sigmoid": lower_hard_sigmoid,
    "softplus": lower_softplus,
    "gelu": lower_gelu,

    # --- data movement and shapes ---

    # --- reductions, softmax, normalization and batched matmul ---
    "reduce_mean": lower_reduce_mean,
    "reduce_l2": lower_reduce_l2,
    "softmax": lower_softmax,
    "log_softmax": lower_log_softmax,
    "layer_norm": lower_layer_norm,
}


def lower_node(op: ir.Operation, keep: frozenset[str]) -> bool:
    """Lower one node unless the backend keeps its kind; returns whether it changed."""
    dialect, _, kind = op.name.partition(".")
    if dialect != "glowgraph" or kind in keep or kind not in LOWERINGS:
        return False
    with ir.InsertionPoint(op), op.location:
        new = LOWERINGS[kind](op.opview)
    replace_op(op, new)
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
            for op in graph_ops(func):
                lower_node(op, keep)
