"""Random draws: RandomUniform(Like), RandomNormal(Like), Bernoulli, Multinomial, and Dropout in training mode.

All of them are built on one node, ``glowgraph.random_uniform``: float32 draws in [0, 1), each a counter-based hash of
(seed, element, draw), the draw counted per seed through the runs of the compiled model. A node's ``seed`` attribute
fixes its sequence of draws (each compile of the model draws the same numbers, run after run, as onnxruntime does
for a seeded node); without one, the seed is a hash of the node's output name, so that unseeded nodes draw apart.
The nodes of one seed draw in turn from its stream: the copies of a node in an unrolled loop draw apart, as its
iterations do in a loop that runs. The numbers are not numpy's: no ONNX runtime reproduces another's draws, and
onnx.reference itself draws from numpy's global state.

- RandomUniform: low + (high - low) u.
- RandomNormal: mean + scale sqrt(-2 log(1 - u1)) cos(2 pi u2) (Box-Muller on two draws).
- Bernoulli: u < p, as the element type asked (the input's by default).
- Multinomial: per row of unnormalized log-probabilities, sample_size class indices: the number of classes whose
  running probability total is at most u times the row's total (the inverse of the cumulative distribution).
- Dropout (training_mode true, ratio r > 0): mask = u >= r, output = mask ? x / (1 - r) : 0.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
from mlir import ir
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ..builder import NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import compute_dtype, fmt_shape, type_name
from .core import _expand, _reshape, _splat
from .datamove import _box, scan
from .elementwise import _convert

INT, INTS, FLOAT = AttributeProto.INT, AttributeProto.INTS, AttributeProto.FLOAT
_F32 = np.dtype(np.float32)
#: the element types a float draw may have (ONNX's T for the Random* ops; float64 and the narrow floats are computed
#: in float32 and stored as declared)
_FLOAT_TYPES = (1, 10, 11, 16)  # FLOAT, FLOAT16, DOUBLE, BFLOAT16
#: what the second draw of a normal (Box-Muller's angle) adds to the node's seed
_SECOND_DRAW = 0x5DEECE66D


def _seed(ctx: NodeContext) -> int:
    """The node's stream: its ``seed`` attribute (Dropout's an int, the others' a float, taken by its float32 bits),
    else a hash of its first output's name."""
    if ctx.node.op_type == "Dropout":
        seed = ctx.attr("seed", INT, None)
        if seed is not None:
            return int(seed)
    else:
        seed = ctx.attr("seed", FLOAT, None)
        if seed is not None:
            return int(np.float32(seed).view(np.uint32))
    return zlib.crc32(ctx.node.output[0].encode()) | (1 << 32)


def draw(ctx: NodeContext, shape: list[int], seed: int | None = None) -> ir.Value:
    """A float32 tensor of ``shape`` of draws in [0, 1), anew each run."""
    f32 = mlir_type(_F32)
    return gg.random_uniform(seed=_seed(ctx) if seed is None else seed, result_types=[ir.RankedTensorType.get(shape, f32)])


def _float_dtype(ctx: NodeContext, like: Tensor | None) -> np.dtype:
    """The compute type of the node's float output: attribute ``dtype``, else ``like``'s type, else float32."""
    to = ctx.attr("dtype", INT, None)
    if to is None:
        return dtype_of(like) if like is not None else _F32
    if to not in _FLOAT_TYPES:
        raise ctx.error(f"attribute 'dtype' must be a float type, got {type_name(to)}")
    return compute_dtype(to)


def _shape_attr(ctx: NodeContext) -> list[int]:
    shape = ctx.attr("shape", INTS, None)
    if shape is None:
        raise ctx.error("attribute 'shape' is required")
    if any(d < 0 for d in shape):
        raise ctx.error(f"attribute 'shape' must not have negative dims, got {list(shape)}")
    return [int(d) for d in shape]


def _uniform(ctx: NodeContext, shape: list[int], dtype: np.dtype) -> Tensor:
    low, high = ctx.attr("low", FLOAT, 0.0), ctx.attr("high", FLOAT, 1.0)
    if not low <= high:
        raise ctx.error(f"attribute 'low' ({low:g}) must not be above 'high' ({high:g})")
    u = draw(ctx, shape)
    if (low, high) != (0.0, 1.0):
        u = gg.add(gg.mul(u, _splat(u, high - low)), _splat(u, low))
    return _convert(ctx, u, dtype)


def _normal(ctx: NodeContext, shape: list[int], dtype: np.dtype) -> Tensor:
    mean, scale = ctx.attr("mean", FLOAT, 0.0), ctx.attr("scale", FLOAT, 1.0)
    u1 = draw(ctx, shape)
    u2 = draw(ctx, shape, _seed(ctx) + _SECOND_DRAW)
    # 1 - u1 is in (0, 1]: its log is finite
    radius = gg.sqrt(gg.mul(_splat(u1, -2.0), gg.log(gg.sub(_splat(u1, 1.0), u1))))
    z = gg.mul(radius, gg.cos(gg.mul(u2, _splat(u2, 2.0 * math.pi))))
    return _convert(ctx, gg.add(gg.mul(z, _splat(z, scale)), _splat(z, mean)), dtype)


@onnx_op("RandomUniform", since=1, inputs=(0, 0), attrs=("dtype", "high", "low", "seed", "shape"))
def random_uniform(ctx: NodeContext) -> Tensor:
    """Uniform draws in [low, high) of the attribute shape."""
    return _uniform(ctx, _shape_attr(ctx), _float_dtype(ctx, None))


@onnx_op("RandomUniformLike", since=1, inputs=(1, 1), attrs=("dtype", "high", "low", "seed"))
def random_uniform_like(ctx: NodeContext) -> Tensor:
    """Uniform draws in [low, high) of the input's shape (its values are not read)."""
    return _like(ctx, _uniform)


@onnx_op("RandomNormal", since=1, inputs=(0, 0), attrs=("dtype", "mean", "scale", "seed", "shape"))
def random_normal(ctx: NodeContext) -> Tensor:
    """Normal draws N(mean, scale^2) of the attribute shape."""
    return _normal(ctx, _shape_attr(ctx), _float_dtype(ctx, None))


@onnx_op("RandomNormalLike", since=1, inputs=(1, 1), attrs=("dtype", "mean", "scale", "seed"))
def random_normal_like(ctx: NodeContext) -> Tensor:
    """Normal draws N(mean, scale^2) of the input's shape (its values are not read)."""
    return _like(ctx, _normal)


def _like(ctx: NodeContext, draws) -> Tensor:
    """``draws(ctx, shape, dtype)`` of the input's shape, of attribute ``dtype``, else of the input's float type."""
    x = ctx.input(0)
    return draws(ctx, shape_of(x), _float_dtype(ctx, x if dtype_of(x).kind == "f" else None))


@onnx_op("Bernoulli", since=15, inputs=(1, 1), attrs=("dtype", "seed"))
def bernoulli(ctx: NodeContext) -> Tensor:
    """1 with probability p (the input, float), else 0, as attribute ``dtype`` (default the input's type)."""
    p = ctx.input(0)
    ctx.check_element_type(p, "input", (_F32,))
    to = ctx.attr("dtype", INT, None)
    dtype = dtype_of(p) if to is None else compute_dtype(to)
    if dtype is None:
        raise ctx.unsupported(f"unsupported element type {type_name(to)} for attribute 'dtype'")
    hit = gg.cmp_lt(draw(ctx, shape_of(p)), ctx.value(p))
    return _convert(ctx, hit, dtype)


@onnx_op("Multinomial", since=7, inputs=(1, 1), attrs=("dtype", "sample_size", "seed"))
def multinomial(ctx: NodeContext) -> Tensor:
    """``sample_size`` class indices per row of x [batch, classes] (unnormalized log-probabilities): the number of
    classes whose running softmax total is at most u times the row's total, u a draw per sample."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", (_F32,))
    shape = shape_of(x)
    if len(shape) != 2 or shape[1] < 1:
        raise ctx.error(f"the input must be [batch, classes] with classes >= 1, got {fmt_shape(shape)}")
    to = ctx.attr("dtype", INT, 6)
    if to not in (6, 7):
        raise ctx.error(f"attribute 'dtype' must be int32 or int64, got {type_name(to)}")
    samples = ctx.attr("sample_size", INT, 1)
    if samples < 1:
        raise ctx.error(f"attribute 'sample_size' must be at least 1, got {samples}")
    batch, classes = shape
    totals = scan(ctx, gg.softmax(ctx.value(x), axis=1), 1, gg.add, 0)  # [batch, classes]
    last = _box(ctx, totals, [0, classes - 1], [batch, 1])  # the row totals, 1 up to rounding
    wanted = gg.mul(draw(ctx, [batch, samples]), _expand(ctx, last, [batch, samples]))
    cube = [batch, samples, classes]
    below = gg.cmp_lte(_expand(ctx, _reshape(ctx, totals, [batch, 1, classes]), cube),
                       _expand(ctx, _reshape(ctx, wanted, [batch, samples, 1]), cube))
    count = gg.reduce_sum(gg.cast(below, to=mlir_type(_F32)), axes=[2])
    index = gg.min_(count, _splat(count, classes - 1))  # a draw at the total itself (rounding) is the last class
    return _convert(ctx, index, compute_dtype(to))


def training_dropout(ctx: NodeContext, x: Tensor, ratio: float) -> tuple[ir.Value, ir.Value]:
    """Dropout in training mode with a known ``ratio`` in (0, 1): (x scaled by 1 / (1 - ratio) where kept, 0
    elsewhere; the keep mask, bool), the mask u >= ratio of a draw per element."""
    ctx.check_element_type(x, "input", (_F32,))
    v = ctx.value(x)
    keep = gg.cmp_lte(_splat(v, ratio), draw(ctx, shape_of(x)))
    kept = gg.mul(v, _splat(v, 1.0 / (1.0 - ratio)))
    return gg.select(keep, kept, _splat(v, 0.0)), keep


@onnx_op("Dropout", since=1, inputs=(1, 1), attrs=("ratio", "is_test", "consumed_inputs"), outputs=(1, 2),
         folds=True)
@onnx_op("Dropout", since=7, inputs=(1, 1), attrs=("ratio",), outputs=(1, 2), folds=True)
@onnx_op("Dropout", since=12, inputs=(1, 3), attrs=("seed",), outputs=(1, 2), folds=True)
def dropout(ctx: NodeContext) -> list[Tensor | None]:
    """Inference: the input itself, and a mask that keeps everything (bool from opset 10, the input's type
    before). As in onnxruntime and Glow, is_test before opset 7 changes nothing. From opset 12 training_mode
    (known, default false) and ratio (known, default 0.5) are inputs: training with a ratio of 0 drops nothing, so it
    is inference too; training with a ratio in (0, 1) draws the mask (:func:`training_dropout`)."""
    x = ctx.input(0)
    if ctx.optional_input(2) is not None:
        training = ctx.constant_input(2, "training_mode")
        if training.size != 1:
            raise ctx.error(f"training_mode must hold one value, got {fmt_shape(training.shape)}")
        if bool(training.reshape(-1)[0]):
            ratio = ctx.constant_input(1, "ratio") if ctx.optional_input(1) is not None else np.float32(0.5)
            if np.size(ratio) != 1:
                raise ctx.error(f"ratio must hold one value, got {fmt_shape(np.shape(ratio))}")
            r = float(np.reshape(ratio, -1)[0])
            if not 0.0 <= r < 1.0:
                raise ctx.error(f"ratio must be in [0, 1), got {r:g}")
            if r > 0.0:
                y, keep = training_dropout(ctx, x, r)
                return [y] if len(ctx.node.output) == 1 else [y, keep if ctx.has_output(1) else None]
    if len(ctx.node.output) == 1:
        return [x]
    if not ctx.has_output(1):
        return [x, None]
    keep = np.ones((), np.bool_ if ctx.opset >= 10 else dtype_of(x))
    return [x, ctx.const(np.broadcast_to(keep, shape_of(x)), name=ctx.node.output[1])]
