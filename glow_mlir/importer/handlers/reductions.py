"""Reductions, softmax, normalization, ArgMax and ArgMin (MatMul, batched included, is with Gemm in core.py).

Axes are normalized here (negative axes counted from the end, checked for range and duplicates) so the glowgraph
nodes see sorted non-negative axes; ``keepdims`` is a reshape of the reduced result, which bufferization turns into a
view. Element types: float32, and int64 where the op is exact on integers (sum, max, min, prod, ArgMax, ArgMin).

Composed from nodes that exist:
  ReduceSumSquare(x)   -> ReduceSum(Mul(x, x));  ReduceLogSum(x) -> Log(ReduceSum(x))
  ReduceLogSumExp(x)   -> m + Log(ReduceSum(Exp(x - m))), m = ReduceMax(x) (the plain formula where m is infinite)
  ArgMin(x)            -> ArgMax(-x) for floats, ArgMax(-1 - x) for integers (no overflow at the minimum)
  TopK(x, k)           -> k rounds of ArgMax and ReduceMax, the chosen element masked to the lowest value
  Hardmax(x)           -> Select(CmpEQ(ArgMax(x), the index along the axis), 1, 0)
  InstanceNorm(x, s, b)-> LayerNorm over the dims from 2 on, then x * s[c] + b[c]
  GroupNorm(x, s, b)   -> LayerNorm of x viewed as [N, groups, rest], then the per-channel (or per-group) affine
  MVN(x)               -> (x - mean) / sqrt(variance + 1e-9) from ReduceMean
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ..builder import NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import fmt_shape
from .core import FLOAT, INT, INTS, _broadcast_shape, _concat_all, _expand, _reshape, _splat, sign_flipped

_FLOAT = (np.dtype(np.float32),)
_NUMERIC = (np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.int32))

#: attributes of a reduction that takes its axes as an attribute, and of one that takes them as an input
_AXES_ATTR = ("axes", "keepdims")
_AXES_INPUT = ("keepdims", "noop_with_empty_axes")


# --------------------------------------------------------------------------- helpers


def _flag(ctx: NodeContext, name: str, default: int) -> bool:
    """A 0/1 integer attribute."""
    value = ctx.attr(name, INT, default)
    if value not in (0, 1):
        raise ctx.error(f"attribute '{name}' must be 0 or 1, got {value}")
    return bool(value)


def _axis(ctx: NodeContext, axis: int, rank: int) -> int:
    """``axis`` in [-rank, rank) as a dim index."""
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for a rank-{rank} input")
    return axis % rank


def _axes(ctx: NodeContext, axes: Sequence[int], rank: int) -> list[int]:
    """Distinct axes in [-rank, rank), as sorted dim indices."""
    dims = [_axis(ctx, int(a), rank) for a in axes]
    if len(set(dims)) != len(dims):
        raise ctx.error(f"axes {list(axes)} name a dim more than once")
    return sorted(dims)


def _kept(ctx: NodeContext, y: Tensor, shape: Sequence[int], axes: Sequence[int]) -> Tensor:
    """With keepdims, the reduced ``y`` reshaped to ``shape`` with the reduced dims as 1."""
    if not _flag(ctx, "keepdims", 1):
        return y
    return _reshape(ctx, y, [1 if i in axes else d for i, d in enumerate(shape)])


# --------------------------------------------------------------------------- reductions


def _reduce(ctx: NodeContext, build: Callable[..., ir.Value], allowed: Sequence[np.dtype]) -> Tensor:
    """A Reduce* node: its axes from the attribute (older opsets) or the constant second input (newer ones);
    no axes means all of them, or none with noop_with_empty_axes."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", allowed)
    shape = shape_of(x)
    if ctx.optional_input(1) is not None:
        spec = ctx.constant_input(1, "axes")
        if spec.ndim != 1 or spec.dtype.kind not in "iu":
            raise ctx.error(f"the axes input must be a 1-D integer tensor, got {fmt_shape(spec.shape)} {spec.dtype}")
        requested = [int(a) for a in spec]
    else:
        requested = list(ctx.attr("axes", INTS, []))
    noop = _flag(ctx, "noop_with_empty_axes", 0)
    if not requested and noop:
        return x
    axes = _axes(ctx, requested, len(shape)) if requested else list(range(len(shape)))
    if not axes:  # every axis of a scalar: nothing to reduce
        return x
    return _kept(ctx, build(ctx.value(x), axes=axes), shape, axes)


def _on_bools(build: Callable[..., ir.Value]) -> Callable[..., ir.Value]:
    """``build`` that takes bools as int32 0 and 1 (ReduceMax and ReduceMin of bools: any and all), true where the
    result is above 0 (over no elements the int32 identity, the lowest or the highest int32: false for any, true
    for all)."""

    def reduce(x: ir.Value, axes: list[int]) -> ir.Value:
        if dtype_of(x) != np.bool_:
            return build(x, axes=axes)
        wide = build(gg.cast(x, to=mlir_type(np.dtype(np.int32))), axes=axes)
        return gg.cmp_lt(_splat(wide, 0), wide)

    return reduce


@onnx_op("ReduceSum", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceSum", since=13, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_sum(ctx: NodeContext) -> Tensor:
    """Sum over the axes."""
    return _reduce(ctx, gg.reduce_sum, _NUMERIC)


@onnx_op("ReduceMax", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceMax", since=18, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_max(ctx: NodeContext) -> Tensor:
    """Maximum over the axes (of bools: any)."""
    return _reduce(ctx, _on_bools(gg.reduce_max), (*_NUMERIC, np.dtype(np.bool_)))


@onnx_op("ReduceMin", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceMin", since=18, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_min(ctx: NodeContext) -> Tensor:
    """Minimum over the axes (of bools: all)."""
    return _reduce(ctx, _on_bools(gg.reduce_min), (*_NUMERIC, np.dtype(np.bool_)))


@onnx_op("ReduceProd", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceProd", since=18, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_prod(ctx: NodeContext) -> Tensor:
    """Product over the axes."""
    return _reduce(ctx, gg.reduce_prod, _NUMERIC)


@onnx_op("ReduceMean", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceMean", since=18, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_mean(ctx: NodeContext) -> Tensor:
    """Mean over the axes (float32)."""
    return _reduce(ctx, gg.reduce_mean, _FLOAT)


@onnx_op("ReduceL2", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceL2", since=18, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_l2(ctx: NodeContext) -> Tensor:
    """sqrt(sum(x * x)) over the axes (float32)."""
    return _reduce(ctx, gg.reduce_l2, _FLOAT)


@onnx_op("ReduceL1", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceL1", since=18, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_l1(ctx: NodeContext) -> Tensor:
    """Sum of |x| over the axes, as ReduceSum(Abs(x))."""
    return _reduce(ctx, lambda x, axes: gg.reduce_sum(gg.abs_(x), axes=axes), _NUMERIC)


@onnx_op("ReduceSumSquare", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceSumSquare", since=18, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_sum_square(ctx: NodeContext) -> Tensor:
    """Sum of x * x over the axes, as ReduceSum(Mul(x, x))."""
    return _reduce(ctx, lambda x, axes: gg.reduce_sum(gg.mul(x, x), axes=axes), _NUMERIC)


@onnx_op("ReduceLogSum", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceLogSum", since=18, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_log_sum(ctx: NodeContext) -> Tensor:
    """log of the sum over the axes (float32), as Log(ReduceSum(x))."""
    return _reduce(ctx, lambda x, axes: gg.log(gg.reduce_sum(x, axes=axes)), _FLOAT)


@onnx_op("ReduceLogSumExp", since=1, inputs=(1, 1), attrs=_AXES_ATTR)
@onnx_op("ReduceLogSumExp", since=18, inputs=(1, 2), attrs=_AXES_INPUT)
def reduce_log_sum_exp(ctx: NodeContext) -> Tensor:
    """log(sum(exp(x))) over the axes (float32), the maximum taken out first so that exp cannot overflow:
    m + log(sum(exp(x - m))), m = ReduceMax(x) (where m is infinite, x - m is NaN: log(sum(exp(x))) itself then)."""
    def build(x: ir.Value, axes: list[int]) -> ir.Value:
        shape = list(ir.RankedTensorType(x.type).shape)
        m = gg.reduce_max(x, axes=axes)
        kept = [1 if i in axes else d for i, d in enumerate(shape)]
        spread = gg.broadcast(gg.reshape(m, shape=kept), shape=shape) if kept != shape else m
        shifted = gg.sub(x, spread)
        finite = gg.add(m, gg.log(gg.reduce_sum(gg.exp(shifted), axes=axes)))
        # an all -inf or a +inf row: m is infinite and x - m NaN; the plain formula is right there
        plain = gg.log(gg.reduce_sum(gg.exp(x), axes=axes))
        return gg.select(gg.cmp_eq(gg.sub(m, m), gg.sub(m, m)), finite, plain)

    return _reduce(ctx, build, _FLOAT)


@onnx_op("ArgMax", since=1, inputs=(1, 1), attrs=("axis", "keepdims"))
@onnx_op("ArgMax", since=12, inputs=(1, 1), attrs=("axis", "keepdims", "select_last_index"))
def arg_max(ctx: NodeContext) -> Tensor:
    """int64 index of the maximum along one axis: the first one, or the last with select_last_index."""
    return _arg_max_of(ctx, lambda v: v)


def _arg_max_of(ctx: NodeContext, order: Callable[[ir.Value], ir.Value]) -> Tensor:
    """ArgMax of ``order(x)`` along the node's axis, keepdims and select_last_index as the node says."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _NUMERIC)
    shape = shape_of(x)
    if not shape:
        raise ctx.error("the input must have rank 1 or more")
    axis = _axis(ctx, ctx.attr("axis", INT, 0), len(shape))
    y = gg.arg_max(order(ctx.value(x)), axis=axis, select_last=int(_flag(ctx, "select_last_index", 0)))
    return _kept(ctx, y, shape, [axis])


def _order_reversed(v: ir.Value) -> ir.Value:
    """``v`` with its order reversed exactly (its own inverse): -v for floats, -1 - v for integers (where -v would
    overflow at the most negative value)."""
    return gg.neg(v) if dtype_of(v).kind == "f" else gg.sub(_splat(v, -1), v)


@onnx_op("ArgMin", since=1, inputs=(1, 1), attrs=("axis", "keepdims"))
@onnx_op("ArgMin", since=12, inputs=(1, 1), attrs=("axis", "keepdims", "select_last_index"))
def arg_min(ctx: NodeContext) -> Tensor:
    """int64 index of the minimum along one axis, as ArgMax of an order-reversed copy: -x for floats (exact), -1 - x
    for integers (exact for every value, where -x would overflow at the most negative one)."""
    return _arg_max_of(ctx, _order_reversed)


#: the most elements TopK selects (each costs a pass over the input)
MAX_TOP_K = 256


def _top_k(ctx: NodeContext, k: int) -> list[Tensor]:
    """The k largest (or smallest) elements along axis and their int64 indices, in order, ties to the lower index:
    k rounds of ArgMax, the maximum, and the chosen element masked out (to the type's lowest value)."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _NUMERIC)
    shape = shape_of(x)
    if not shape:
        raise ctx.error("the input must have rank 1 or more")
    axis = _axis(ctx, ctx.attr("axis", INT, -1), len(shape))
    n = shape[axis]
    if not 0 <= k <= n:
        raise ctx.error(f"K {k} must be between 0 and the axis' size {n}")
    if k > MAX_TOP_K:
        raise ctx.unsupported(f"K {k} above {MAX_TOP_K} is not supported (each selected element costs a pass)")
    if k == 0:
        raise ctx.unsupported("K 0 (empty outputs) is not supported")
    largest = _flag(ctx, "largest", 1)
    _flag(ctx, "sorted", 1)  # sorted or not, the elements come out in order
    v = ctx.value(x)
    unsigned = ctx.stored.get(ctx.node.input[0]) == np.dtype(np.uint64)
    if unsigned:  # uint64 held in int64: its sign bit flipped, the signed order is the unsigned one
        v = sign_flipped(v)
    work = v if largest else _order_reversed(v)
    lowest = float("-inf") if dtype_of(v).kind == "f" else int(np.iinfo(dtype_of(v)).min)
    kept = [1 if i == axis else d for i, d in enumerate(shape)]
    position = np.arange(n, dtype=np.int64).reshape([-1 if i == axis else 1 for i in range(len(shape))])
    positions = _expand(ctx, ctx.const(position, name=f"{ctx.label}.position"), shape)
    floor = _splat(v, lowest)
    values, indices = [], []
    for _ in range(k):
        index = _reshape(ctx, gg.arg_max(work, axis=axis, select_last=0), kept)
        best = _reshape(ctx, gg.reduce_max(work, axes=[axis]), kept)
        values.append(best)
        indices.append(index)
        work = gg.select(gg.cmp_eq(_expand(ctx, index, shape), positions), floor, work)

    top = ctx.value(_concat_all(ctx, values, axis))
    # smallest: the reversal undone (it is its own inverse); uint64's sign bit flipped back
    top = top if largest else _order_reversed(top)
    if unsigned:
        top = sign_flipped(top)
    return [top, _concat_all(ctx, indices, axis)]


@onnx_op("TopK", since=1, inputs=(1, 1), outputs=(2, 2), attrs=("axis", "k"))
def top_k_1(ctx: NodeContext) -> list[Tensor]:
    """The k (attribute) largest elements along axis and their indices."""
    k = ctx.attr("k", INT, None)
    if k is None:
        raise ctx.error("attribute 'k' is required")
    return _top_k(ctx, k)


@onnx_op("TopK", since=10, inputs=(2, 2), outputs=(2, 2), attrs=("axis",))
@onnx_op("TopK", since=11, inputs=(2, 2), outputs=(2, 2), attrs=("axis", "largest", "sorted"))
def top_k(ctx: NodeContext) -> list[Tensor]:
    """The K (a constant input) largest or smallest elements along axis and their indices."""
    spec = ctx.constant_input(1, "K").reshape(-1)
    if spec.size != 1 or spec.dtype.kind not in "iu":
        raise ctx.error(f"the K input must hold one integer, got {spec.size} of {spec.dtype}")
    return _top_k(ctx, int(spec[0]))


@onnx_op("Hardmax", since=1, inputs=(1, 1), attrs=("axis",))
def hardmax_2d(ctx: NodeContext) -> Tensor:
    """1 at the first maximum of each row over the trailing dims from axis on (default 1), 0 elsewhere."""
    return _coerced_2d(ctx, lambda x, axis: _hardmax(ctx, x, axis))


@onnx_op("Hardmax", since=13, inputs=(1, 1), attrs=("axis",))
def hardmax(ctx: NodeContext) -> Tensor:
    """1 at the first maximum along axis (default -1), 0 elsewhere: CmpEQ(ArgMax, the index along axis)."""
    return _along_axis(ctx, lambda x, axis: _hardmax(ctx, x, axis))


def _hardmax(ctx: NodeContext, x: ir.Value, axis: int) -> ir.Value:
    shape = list(ir.RankedTensorType(x.type).shape)
    first = gg.arg_max(x, axis=axis, select_last=0)
    kept = _reshape(ctx, first, [1 if i == axis else d for i, d in enumerate(shape)])
    index = np.arange(shape[axis], dtype=np.int64).reshape([-1 if i == axis else 1 for i in range(len(shape))])
    hit = gg.cmp_eq(_expand(ctx, kept, shape), _expand(ctx, ctx.const(index, name=f"{ctx.label}.index"), shape))
    return gg.select(hit, _splat(x, 1.0), _splat(x, 0.0))


# --------------------------------------------------------------------------- softmax


def _along_axis(ctx: NodeContext, build: Callable[..., ir.Value]) -> Tensor:
    """Opset 13 on: normalize along one axis (default -1)."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _FLOAT)
    shape = shape_of(x)
    if not shape:
        raise ctx.error("the input must have rank 1 or more")
    return build(ctx.value(x), axis=_axis(ctx, ctx.attr("axis", INT, -1), len(shape)))


def _coerced_2d(ctx: NodeContext, build: Callable[..., ir.Value]) -> Tensor:
    """Before opset 13: the input is seen as 2-D, [dims before axis, dims from axis on] (default axis 1), and each
    row normalized: a reshape, the node along its last axis, and a reshape back."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _FLOAT)
    shape = shape_of(x)
    if not shape:
        raise ctx.error("the input must have rank 1 or more")
    axis = _axis(ctx, ctx.attr("axis", INT, 1), len(shape))
    if axis == len(shape) - 1:
        return build(ctx.value(x), axis=axis)
    rows = _reshape(ctx, x, [math.prod(shape[:axis]), math.prod(shape[axis:])])
    return _reshape(ctx, build(ctx.value(rows), axis=1), shape)


@onnx_op("Softmax", since=1, inputs=(1, 1), attrs=("axis",))
def softmax_2d(ctx: NodeContext) -> Tensor:
    """exp(x) / sum(exp(x)) over the trailing dims from axis on."""
    return _coerced_2d(ctx, gg.softmax)


@onnx_op("Softmax", since=13, inputs=(1, 1), attrs=("axis",))
def softmax(ctx: NodeContext) -> Tensor:
    """exp(x) / sum(exp(x)) along axis."""
    return _along_axis(ctx, gg.softmax)


@onnx_op("LogSoftmax", since=1, inputs=(1, 1), attrs=("axis",))
def log_softmax_2d(ctx: NodeContext) -> Tensor:
    """log(softmax(x)) over the trailing dims from axis on."""
    return _coerced_2d(ctx, gg.log_softmax)


@onnx_op("LogSoftmax", since=13, inputs=(1, 1), attrs=("axis",))
def log_softmax(ctx: NodeContext) -> Tensor:
    """log(softmax(x)) along axis."""
    return _along_axis(ctx, gg.log_softmax)


# --------------------------------------------------------------------------- normalization


def _affine(ctx: NodeContext, i: int, what: str, normalized: list[int]) -> ir.Value:
    """Scale or bias broadcast (numpy rules) to the normalized dims."""
    t = ctx.input(i)
    ctx.check_element_type(t, what, _FLOAT)
    if len(shape_of(t)) > len(normalized) or _broadcast_shape(ctx, shape_of(t), normalized) != normalized:
        raise ctx.error(f"{what} of shape {fmt_shape(shape_of(t))} does not broadcast to the normalized shape "
                        f"{fmt_shape(normalized)}")
    return _expand(ctx, t, normalized)


@onnx_op("LayerNormalization", since=17, inputs=(2, 3), attrs=("axis", "epsilon", "stash_type"), outputs=(1, 3))
def layer_normalization(ctx: NodeContext) -> list[Tensor | None]:
    """(x - mean) / sqrt(variance + epsilon) * scale + bias over the dims from axis on (default -1), one kernel;
    the Mean and InvStdDev outputs, when used, are computed beside it from reductions (shape: x's up to axis, 1s
    after)."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _FLOAT)
    shape = shape_of(x)
    if not shape:
        raise ctx.error("the input must have rank 1 or more")
    axis = _axis(ctx, ctx.attr("axis", INT, -1), len(shape))
    stash_type = ctx.attr("stash_type", INT, 1)
    if stash_type != 1:
        raise ctx.unsupported(f"stash_type {stash_type}: only 1 (float32 statistics) is supported")
    normalized = shape[axis:]
    scale = _affine(ctx, 1, "scale", normalized)
    if ctx.optional_input(2) is None:
        bias = ctx.value(ctx.const(np.zeros(normalized, np.float32), name=f"{ctx.label}.bias"))
    else:
        bias = _affine(ctx, 2, "bias", normalized)
    epsilon = ctx.attr("epsilon", FLOAT, 1e-5)
    y = gg.layer_norm(ctx.value(x), scale, bias, axis=axis, epsilon=epsilon)
    results: list[Tensor | None] = [y, None, None][:len(ctx.node.output)]
    if ctx.has_output(1) or ctx.has_output(2):
        axes = list(range(axis, len(shape)))
        kept = [*shape[:axis], *([1] * len(axes))]
        mean = _reshape(ctx, gg.reduce_mean(ctx.value(x), axes=axes), kept)
        centered = gg.sub(ctx.value(x), ctx.value(_expand(ctx, mean, shape)))
        variance = gg.reduce_mean(gg.mul(centered, centered), axes=axes)
        std = gg.sqrt(gg.add(variance, _splat(variance, float(epsilon))))
        inv_std = _reshape(ctx, gg.div(_splat(variance, 1.0), std), kept)
        for i, value in ((1, mean), (2, inv_std)):
            if ctx.has_output(i):
                results[i] = value
    return results


@onnx_op("RMSNormalization", since=23, inputs=(2, 2), attrs=("axis", "epsilon", "stash_type"))
def rms_normalization(ctx: NodeContext) -> Tensor:
    """x / sqrt(mean(x^2) + epsilon) * scale, the mean over the dims from axis on (default -1)."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _FLOAT)
    shape = shape_of(x)
    if not shape:
        raise ctx.error("the input must have rank 1 or more")
    axis = _axis(ctx, ctx.attr("axis", INT, -1), len(shape))
    stash_type = ctx.attr("stash_type", INT, 1)
    if stash_type != 1:
        raise ctx.unsupported(f"stash_type {stash_type}: only 1 (float32 statistics) is supported")
    scale = _affine(ctx, 1, "scale", shape[axis:])
    axes = list(range(axis, len(shape)))
    squares = gg.reduce_mean(gg.mul(ctx.value(x), ctx.value(x)), axes=axes)
    rms = gg.sqrt(gg.add(squares, _splat(squares, float(ctx.attr("epsilon", FLOAT, 1e-5)))))
    rms = _expand(ctx, _reshape(ctx, rms, [*shape[:axis], *([1] * len(axes))]), shape)
    return gg.mul(gg.div(ctx.value(x), rms), _expand(ctx, scale, shape))


@onnx_op("LpNormalization", since=1, inputs=(1, 1), attrs=("axis", "p"))
def lp_normalization(ctx: NodeContext) -> Tensor:
    """x / ||x||_p along axis (default -1), p 1 (sum of |x|) or 2 (the square root of the sum of squares); a zero
    norm divides by 1 (the slice stays zero), as in onnx.reference."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _FLOAT)
    shape = shape_of(x)
    if not shape:
        raise ctx.error("the input must have rank 1 or more")
    axis = _axis(ctx, ctx.attr("axis", INT, -1), len(shape))
    p = ctx.attr("p", INT, 2)
    if p not in (1, 2):
        raise ctx.error(f"attribute 'p' must be 1 or 2, got {p}")
    v = ctx.value(x)
    norm = gg.reduce_sum(gg.abs_(v), axes=[axis]) if p == 1 else gg.reduce_l2(v, axes=[axis])
    norm = gg.select(gg.cmp_eq(norm, _splat(norm, 0.0)), _splat(norm, 1.0), norm)
    norm = _expand(ctx, _reshape(ctx, norm, [*shape[:axis], 1, *shape[axis + 1:]]), shape)
    return gg.div(v, norm)


@onnx_op("InstanceNormalization", since=6, inputs=(3, 3), attrs=("epsilon",))
def instance_normalization(ctx: NodeContext) -> Tensor:
    """(x - mean) / sqrt(variance + epsilon) * scale[c] + B[c] over the spatial dims of each sample and channel
    ([N, C, D1 ...]): a layer_norm over the dims from 2 on, then the per-channel scale and bias."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _FLOAT)
    shape = shape_of(x)
    if len(shape) < 3:
        raise ctx.error(f"the input must be [N, C, D1, ...] (rank 3 or more), got {fmt_shape(shape)}")
    channels = [1, shape[1], *([1] * (len(shape) - 2))]
    affine = []
    for i, what in ((1, "scale"), (2, "B")):
        t = ctx.input(i)
        ctx.check_element_type(t, what, _FLOAT)
        if shape_of(t) != [shape[1]]:
            raise ctx.error(f"{what} must have shape [{shape[1]}] (the channels), got {fmt_shape(shape_of(t))}")
        affine.append(_expand(ctx, _reshape(ctx, t, channels), shape))
    normalized = shape[2:]
    ones = ctx.value(ctx.const(np.ones(normalized, np.float32), name=f"{ctx.label}.ones"))
    zeros = ctx.value(ctx.const(np.zeros(normalized, np.float32), name=f"{ctx.label}.zeros"))
    y = gg.layer_norm(ctx.value(x), ones, zeros, axis=2, epsilon=ctx.attr("epsilon", FLOAT, 1e-5))
    return gg.add(gg.mul(y, affine[0]), affine[1])


@onnx_op("GroupNormalization", since=18, inputs=(3, 3), attrs=("epsilon", "num_groups"))
@onnx_op("GroupNormalization", since=21, inputs=(3, 3), attrs=("epsilon", "num_groups", "stash_type"))
def group_normalization(ctx: NodeContext) -> Tensor:
    """x [N, C, D...] normalized over each group of C / num_groups channels and the spatial dims: a layer_norm of
    x viewed as [N, groups, C / groups x D...], then scale and bias per channel (opset 21) or per group (opset 18)."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _FLOAT)
    shape = shape_of(x)
    if len(shape) < 3:
        raise ctx.error(f"the input must be [N, C, D1, ...] (rank 3 or more), got {fmt_shape(shape)}")
    groups = ctx.attr("num_groups", INT, None)
    n, c = shape[0], shape[1]
    if groups is None or groups < 1 or c % groups:
        raise ctx.error(f"attribute 'num_groups' must divide the {c} channels, got {groups}")
    if ctx.attr("stash_type", INT, 1) != 1:
        raise ctx.unsupported("stash_type other than 1 (float32 statistics) is not supported")
    per = c if ctx.opset >= 21 else groups  # the affine parameters: per channel from opset 21, per group before
    affine = []
    for i, what in ((1, "scale"), (2, "bias")):
        t = ctx.input(i)
        ctx.check_element_type(t, what, _FLOAT)
        if shape_of(t) != [per]:
            raise ctx.error(f"{what} must have shape [{per}], got {fmt_shape(shape_of(t))}")
        if per == groups and groups != c:  # one value per group: repeated over its channels
            t = _reshape(ctx, _expand(ctx, _reshape(ctx, t, [groups, 1]), [groups, c // groups]), [c])
        affine.append(_expand(ctx, _reshape(ctx, t, [1, c, *([1] * (len(shape) - 2))]), shape))
    inner = (c // groups) * math.prod(shape[2:])
    grouped = _reshape(ctx, x, [n, groups, inner])
    ones = ctx.value(ctx.const(np.ones([inner], np.float32), name=f"{ctx.label}.ones"))
    zeros = ctx.value(ctx.const(np.zeros([inner], np.float32), name=f"{ctx.label}.zeros"))
    y = gg.layer_norm(ctx.value(grouped), ones, zeros, axis=2, epsilon=ctx.attr("epsilon", FLOAT, 1e-5))
    y = _reshape(ctx, y, shape)
    return gg.add(gg.mul(ctx.value(y), ctx.value(affine[0])), ctx.value(affine[1]))


@onnx_op("MeanVarianceNormalization", since=9, inputs=(1, 1), attrs=("axes",))
def mean_variance_normalization(ctx: NodeContext) -> Tensor:
    """(x - mean) / sqrt(variance + 1e-9) over the axes (default [0, 2, 3]), from reductions."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _FLOAT)
    shape = shape_of(x)
    axes = _axes(ctx, ctx.attr("axes", INTS, [0, 2, 3]), len(shape))
    kept = [1 if i in axes else d for i, d in enumerate(shape)]
    v = ctx.value(x)
    mean = _expand(ctx, _reshape(ctx, gg.reduce_mean(v, axes=axes), kept), shape)
    centered = gg.sub(v, ctx.value(mean))
    variance = _reshape(ctx, gg.reduce_mean(gg.mul(centered, centered), axes=axes), kept)
    std = _expand(ctx, gg.sqrt(gg.add(ctx.value(variance), _splat(ctx.value(variance), 1e-9))), shape)
    return gg.div(centered, ctx.value(std))


# --------------------------------------------------------------------------- losses

_LOSS_ATTRS = ("ignore_index", "reduction")
_REDUCTIONS = ("none", "sum", "mean")


def _nll(ctx: NodeContext, log_prob: ir.Value, target: Tensor, weight: Tensor | None) -> ir.Value:
    """-log_prob[n, target[n, d..], d..] * weight[target], 0 where the target is ignore_index, reduced as the
    ``reduction`` attribute says (mean: divided by the sum of the weights that count)."""
    shape = shape_of(log_prob)
    if len(shape) < 2:
        raise ctx.error(f"the input must be [N, C, d1, ...], got {fmt_shape(shape)}")
    classes, rest = shape[1], [shape[0], *shape[2:]]
    ctx.check_element_type(target, "target", (np.dtype(np.int64), np.dtype(np.int32)))
    if shape_of(target) != rest:
        raise ctx.error(f"the target must be {fmt_shape(rest)} (the input's shape without C), got "
                        f"{fmt_shape(shape_of(target))}")
    reduction = ctx.attr("reduction", AttributeProto.STRING, b"mean").decode(errors="replace")
    if reduction not in _REDUCTIONS:
        raise ctx.error(f"attribute 'reduction' must be none, sum or mean, got '{reduction}'")
    t = ctx.value(target)
    if dtype_of(target) != np.int64:
        t = gg.cast(t, to=ir.IntegerType.get_signless(64))
    # one-hot of the target over C, [N, C, d..]: an ignored or out-of-range target picks nothing
    classes_at = np.arange(classes, dtype=np.int64).reshape([1, classes] + [1] * (len(shape) - 2))
    wide = _expand(ctx, _reshape(ctx, t, [shape[0], 1, *shape[2:]]), shape)
    picks = gg.cmp_eq(wide, _expand(ctx, ctx.const(classes_at), shape))
    zero = _splat(log_prob, 0.0)
    picked = gg.reduce_sum(gg.select(picks, log_prob, zero), axes=[1])
    if weight is None:
        w = gg.reduce_sum(gg.select(picks, _splat(log_prob, 1.0), zero), axes=[1])
    else:
        ctx.check_element_type(weight, "weight", _FLOAT)
        if shape_of(weight) != [classes]:
            raise ctx.error(f"the weight must be [{classes}], got {fmt_shape(shape_of(weight))}")
        per_class = _expand(ctx, _reshape(ctx, weight, [1, classes] + [1] * (len(shape) - 2)), shape)
        w = gg.reduce_sum(gg.select(picks, per_class, zero), axes=[1])
    ignore = ctx.attr("ignore_index", INT, None)
    if ignore is not None:
        keep = gg.not_(gg.cmp_eq(t, _splat(t, ignore)))
        w = gg.select(keep, w, _splat(w, 0.0))
    loss = gg.neg(gg.mul(picked, w))
    if reduction == "none":
        return loss
    axes = list(range(len(rest)))
    total = gg.reduce_sum(loss, axes=axes)
    return total if reduction == "sum" else gg.div(total, gg.reduce_sum(w, axes=axes))


@onnx_op("NegativeLogLikelihoodLoss", since=12, inputs=(2, 3), attrs=_LOSS_ATTRS)
def negative_log_likelihood_loss(ctx: NodeContext) -> Tensor:
    """The negative log likelihood of the target classes (:func:`_nll`)."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", _FLOAT)
    return _nll(ctx, ctx.value(x), ctx.input(1), ctx.optional_input(2))


@onnx_op("SoftmaxCrossEntropyLoss", since=12, inputs=(2, 3), outputs=(1, 2), attrs=_LOSS_ATTRS)
def softmax_cross_entropy_loss(ctx: NodeContext) -> list[Tensor | None]:
    """The negative log likelihood (:func:`_nll`) of log_softmax(scores) over the classes (axis 1); the log
    probabilities are the second output."""
    x = ctx.input(0)
    ctx.check_element_type(x, "scores", _FLOAT)
    if len(shape_of(x)) < 2:
        raise ctx.error(f"the scores must be [N, C, d1, ...], got {fmt_shape(shape_of(x))}")
    log_prob = gg.log_softmax(ctx.value(x), axis=1)
    loss = _nll(ctx, log_prob, ctx.input(1), ctx.optional_input(2))
    return [loss, log_prob if ctx.has_output(1) else None][:len(ctx.node.output)]
