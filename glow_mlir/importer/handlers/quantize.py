"""QuantizeLinear and DequantizeLinear, the Q and DQ nodes of ONNX's quantized (QDQ) models, QLinearConv (as its
input and weights dequantized, the float convolution and its output quantized), ConvInteger, and the integer matmuls
QLinearMatMul and MatMulInteger, computed in float32 (ConvInteger's and MatMulInteger's int32 sums exactly, by chunks
of the reduction).

An int8, uint8, int16 or uint16 value is computed in int32 (model.INTEGER_STORAGE_TYPES), so that a
QuantizeLinear -> DequantizeLinear pair gives exactly the values onnxruntime's QDQ model has around each quantized
operation, and the operations between the pairs run in float32. Per-tensor and per-axis scales and zero points;
QuantizeLinear rounds halves to even and saturates to its output type's range, as the spec says. A QuantizeLinear
-> DequantizeLinear pair with one scale and zero point for its tensor (onnxruntime's QDQ models) is then recognised
on the graph (glowgraph-qdq-to-params) and the nodes between such pairs run on int8 kernels; the rest runs in float32
with int8 numerics.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from mlir import ir
from onnx import AttributeProto, helper

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import FLOAT8_TYPES, integer_compute_dtype
from .cnn import conv
from .core import _expand, _reshape, matmul_of
from .datamove import _box
from .elementwise import saturated_float8

INT = AttributeProto.INT
FLOAT4 = np.dtype(ml_dtypes.float4_e2m1fn)
#: the integer range of each output type QuantizeLinear may have here
RANGES = {np.dtype(t): (int(ml_dtypes.iinfo(t).min), int(ml_dtypes.iinfo(t).max))
          for t in (np.uint8, np.int8, np.uint16, np.int16, ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2,
                    ml_dtypes.uint2)}


_RANGE_NAMES = ", ".join(str(t) for t in RANGES)


def _saturated(q: ir.Value, dtype: np.dtype) -> ir.Value:
    """Float32 integers ``q`` clipped to ``dtype``'s range, as the integer type that one is computed in."""
    lo, hi = RANGES[dtype]
    return gg.cast(gg.clip(q, min=float(lo), max=float(hi)), to=mlir_type(integer_compute_dtype(dtype)))


def _float(ctx: NodeContext, x: Tensor) -> Tensor:
    """``x`` as float32 (an int32 bias of a quantized model, or already float32)."""
    if dtype_of(x) == np.float32:
        return x
    if isinstance(x, Const):
        return ctx.const(x.array.astype(np.float32))
    return gg.cast(ctx.value(x), to=mlir_type(np.dtype(np.float32)))


def _per_axis(ctx: NodeContext, param: Tensor, x: Tensor, what: str) -> Tensor:
    """A scale or zero point broadcast to ``x``'s shape: one value, one per entry of dim ``axis`` (default 1), or
    with ``block_size`` one per block of that many entries along ``axis``."""
    shape = shape_of(x)
    size = int(np.prod(shape_of(param)))
    if size == 1:
        return _expand(ctx, _reshape(ctx, _float(ctx, param), [1] * len(shape)), shape)
    axis = ctx.attr("axis", INT, 1)
    if not -len(shape) <= axis < len(shape):
        raise ctx.error(f"axis {axis} is out of range for an input of rank {len(shape)}")
    axis %= len(shape)
    block = ctx.attr("block_size", INT, 0)
    if block:
        return _per_block(ctx, param, shape, axis, block, what)
    if len(shape_of(param)) != 1 or size != shape[axis]:
        raise ctx.error(f"{what} {shape_of(param)} must hold one value or one per entry of axis {axis} "
                        f"({shape[axis]})")
    return _expand(ctx, _reshape(ctx, _float(ctx, param), [size if d == axis else 1 for d in range(len(shape))]),
                   shape)


def _per_block(ctx: NodeContext, param: Tensor, shape: list[int], axis: int, block: int, what: str) -> Tensor:
    """A blocked scale or zero point (``x``'s shape but ceil(n / block) entries along ``axis``) with each entry
    repeated ``block`` times along ``axis``, cut to ``x``'s length there."""
    blocks = -(-shape[axis] // block) if block > 0 else 0
    want = [blocks if d == axis else n for d, n in enumerate(shape)]
    if block < 0 or shape_of(param) != want:
        raise ctx.error(f"{what} {shape_of(param)} does not match blocks of {block} along axis {axis} of an input "
                        f"of shape {shape} ({want} expected)")
    value = _float(ctx, param)
    if isinstance(value, Const):
        return _expand(ctx, ctx.const(np.ascontiguousarray(np.repeat(value.array, block, axis)[
            tuple(slice(0, n) for n in shape)])), shape)
    split = [*want[:axis + 1], 1, *want[axis + 1:]]
    repeated = _expand(ctx, _reshape(ctx, value, split), [*want[:axis + 1], block, *want[axis + 1:]])
    whole = _reshape(ctx, repeated, [blocks * block if d == axis else n for d, n in enumerate(shape)])
    return ctx.value(_box(ctx, whole, [0] * len(shape), shape))


def _output_type(ctx: NodeContext) -> np.dtype:
    """The element type QuantizeLinear produces: as the model stores its output, else its zero point's, else
    output_dtype, else uint8."""
    zero = ctx.node.input[2] if len(ctx.node.input) > 2 else ""
    for name in (ctx.node.output[0], zero):
        if name and name in ctx.stored:
            return ctx.stored[name]
    declared = ctx.attr("output_dtype", INT, 0)
    if declared:
        return np.dtype(helper.tensor_dtype_to_np_dtype(declared))
    return np.dtype(np.uint8)


@onnx_op("QuantizeLinear", since=10, inputs=(2, 3))
@onnx_op("QuantizeLinear", since=13, inputs=(2, 3), attrs=("axis",))
@onnx_op("QuantizeLinear", since=19, inputs=(2, 3), attrs=("axis", "saturate"))
@onnx_op("QuantizeLinear", since=21, inputs=(2, 3), attrs=("axis", "saturate", "block_size", "output_dtype"))
def quantize_linear(ctx: NodeContext) -> Tensor:
    """y = saturate(round_half_to_even(x / scale) + zero_point) in the range of y's type (uint8 without a zero
    point); to an 8-bit float y = x / scale, clipped to the type's largest magnitude where ``saturate`` (default 1)
    says so (the zero point, zero by the spec, is not read); to float4 y = x / scale + zero_point (float4 saturates
    anyway); either rounded as the importer rounds every such value the model stores."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", (np.dtype(np.float32),))
    dtype = _output_type(ctx)
    if dtype in (*FLOAT8_TYPES, FLOAT4):
        q = gg.div(ctx.value(x), ctx.value(_per_axis(ctx, ctx.input(1), x, "y_scale")))
        zero = ctx.optional_input(2)
        if dtype == FLOAT4 and zero is not None:
            q = gg.add(q, ctx.value(_per_axis(ctx, zero, x, "y_zero_point")))
        return saturated_float8(ctx, q, dtype) if ctx.attr("saturate", INT, 1) else q
    if dtype not in RANGES:
        raise ctx.unsupported(f"quantizing to {dtype} is not supported ({_RANGE_NAMES} and the 8- and 4-bit floats "
                              "are)")
    scale = _per_axis(ctx, ctx.input(1), x, "y_scale")
    q = gg.round(gg.div(ctx.value(x), ctx.value(scale)))
    zero = ctx.optional_input(2)
    if zero is not None:
        q = gg.add(q, ctx.value(_per_axis(ctx, zero, x, "y_zero_point")))
    return _saturated(q, dtype)


@onnx_op("DequantizeLinear", since=10, inputs=(2, 3))
@onnx_op("DequantizeLinear", since=13, inputs=(2, 3), attrs=("axis",))
@onnx_op("DequantizeLinear", since=21, inputs=(2, 3), attrs=("axis", "block_size"))
def dequantize_linear(ctx: NodeContext) -> Tensor:
    """y = (x - zero_point) * scale; an 8- or 4-bit float x times the scale (its zero point, zero by the spec, is
    not read)."""
    x = _float(ctx, ctx.input(0))
    value = ctx.value(x)
    zero = ctx.optional_input(2) if ctx.stored.get(ctx.node.input[0]) not in (*FLOAT8_TYPES, FLOAT4) else None
    if zero is not None:
        value = gg.sub(value, ctx.value(_per_axis(ctx, zero, x, "x_zero_point")))
    return gg.mul(value, ctx.value(_per_axis(ctx, ctx.input(1), x, "x_scale")))


def _shifted(ctx: NodeContext, x: Tensor, zero: Tensor | None, axis: int, what: str) -> Tensor:
    """``x - zero`` in float32 (exact: small integers), the zero point one value or one per entry of ``axis``."""
    value = _float(ctx, x)
    if zero is None:
        return value
    shape = shape_of(value)
    size = int(np.prod(shape_of(zero)))
    if size == 1:
        z = _expand(ctx, _reshape(ctx, _float(ctx, zero), [1] * len(shape)), shape)
    else:
        axis %= len(shape)
        if size != shape[axis]:
            raise ctx.error(f"{what} {shape_of(zero)} must hold one value or one per entry of axis {axis} "
                            f"({shape[axis]})")
        z = _expand(ctx, _reshape(ctx, _float(ctx, zero), [size if d == axis else 1 for d in range(len(shape))]),
                    shape)
    return gg.sub(ctx.value(value), ctx.value(z))


def _integer_product(ctx: NodeContext, a: Tensor, a_zero: Tensor | None, b: Tensor, b_zero: Tensor | None) -> Tensor:
    """(a - a_zero) @ (b - b_zero) of quantized matrices, a's zero point per row, b's per column."""
    for x, what in ((a, "A"), (b, "B")):
        if len(shape_of(x)) < 2:
            raise ctx.unsupported(f"a {what} of rank {len(shape_of(x))} is not supported (rank 2 or more)")
    return matmul_of(ctx, _shifted(ctx, a, a_zero, -2, "a_zero_point"), _shifted(ctx, b, b_zero, -1, "b_zero_point"))


#: the longest reduction whose int32 sums of int8 products float32 holds exactly (255 x 255 x 258 < 2^24)
EXACT_K = 258


@onnx_op("MatMulInteger", since=10, inputs=(2, 4))
def matmul_integer(ctx: NodeContext) -> Tensor:
    """int32 (A - a_zero_point) @ (B - b_zero_point) of int8/uint8 A and B: float32 products over chunks of the
    reduction short enough that their sums are exact (:data:`EXACT_K`), each cast to int32, the chunks added as
    int32."""
    a, b = ctx.input(0), ctx.input(1)
    a_zero, b_zero = ctx.optional_input(2), ctx.optional_input(3)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) < 2 or len(sb) < 2:
        raise ctx.unsupported(f"operands of rank {len(sa)} and {len(sb)} are not supported (rank 2 or more)")
    k = sa[-1]
    total = None
    for start in range(0, k, EXACT_K):
        size = min(EXACT_K, k - start)
        a_part = _box(ctx, a, [0] * (len(sa) - 1) + [start], [*sa[:-1], size])
        b_part = _box(ctx, b, [0] * (len(sb) - 2) + [start, 0], [*sb[:-2], size, sb[-1]])
        part = gg.cast(ctx.value(_integer_product(ctx, a_part, a_zero, b_part, b_zero)),
                       to=mlir_type(np.dtype(np.int32)))
        total = part if total is None else gg.add(total, part)
    return total


@onnx_op("QLinearMatMul", since=10, inputs=(8, 8))
@onnx_op("QLinearMatMul", since=21, inputs=(8, 8))
def qlinear_matmul(ctx: NodeContext) -> Tensor:
    """y = saturate(round((a - a_zero_point) @ (b - b_zero_point) * a_scale * b_scale / y_scale) + y_zero_point),
    a's scale and zero point per tensor or per row, b's per tensor or per column; y's type is its zero point's."""
    a, b = ctx.input(0), ctx.input(3)
    product = _integer_product(ctx, a, ctx.input(2), b, ctx.input(5))
    shape = shape_of(product)
    scales = [ctx.constant_input(i, name).astype(np.float32) for i, name in ((1, "a_scale"), (4, "b_scale"),
                                                                               (6, "y_scale"))]
    a_scale = scales[0].reshape(-1, 1) if scales[0].size > 1 else scales[0].reshape(())
    b_scale = scales[1].reshape(1, -1) if scales[1].size > 1 else scales[1].reshape(())
    multiplier = np.broadcast_to((a_scale * b_scale / scales[2].reshape(())).astype(np.float32), shape[-2:])
    q = gg.round(gg.mul(ctx.value(product), ctx.value(_expand(ctx, ctx.const(np.ascontiguousarray(multiplier)),
                                                               shape))))
    zero = ctx.input(7)  # y_zero_point
    q = gg.add(q, ctx.value(_expand(ctx, _reshape(ctx, _float(ctx, zero), [1] * len(shape)), shape)))
    dtype = ctx.stored.get(ctx.node.input[7], ctx.stored.get(ctx.node.output[0], np.dtype(np.uint8)))
    if dtype not in RANGES:
        raise ctx.unsupported(f"a {dtype} output is not supported ({_RANGE_NAMES} are)")
    return _saturated(q, dtype)


@onnx_op("DynamicQuantizeLinear", since=11, inputs=(1, 1), outputs=(3, 3))
def dynamic_quantize_linear(ctx: NodeContext) -> list[Tensor]:
    """uint8 quantization of x by its own range: scale = (max(x, 0) - min(x, 0)) / 255, zero point =
    saturate(round(-min(x, 0) / scale)), y = saturate(round(x / scale) + zero point); y and the zero point uint8."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", (np.dtype(np.float32),))
    shape = shape_of(x)
    axes = list(range(len(shape)))
    value = ctx.value(x)
    zero = gg.splat(value=0.0, result_types=[ir.RankedTensorType.get([], ir.F32Type.get())])
    lo = gg.min_(gg.reduce_min(value, axes=axes), zero) if axes else gg.min_(value, zero)
    hi = gg.max_(gg.reduce_max(value, axes=axes), zero) if axes else gg.max_(value, zero)
    scale = gg.div(gg.sub(hi, lo), gg.splat(value=255.0, result_types=[lo.type]))
    point = gg.clip(gg.round(gg.neg(gg.div(lo, scale))), min=0.0, max=255.0)

    def full(v: ir.Value) -> ir.Value:
        return ctx.value(_expand(ctx, _reshape(ctx, v, [1] * len(shape)), shape)) if shape else v

    y = gg.add(gg.round(gg.div(value, full(scale))), full(point))
    u8 = np.dtype(np.uint8)
    return [_saturated(y, u8), scale, _saturated(point, u8)]


def _as(ctx: NodeContext, op_type: str, inputs: list[Tensor | None], output: str, handler, attrs=(),
        **extra) -> Tensor:
    """``handler`` run on a node of ``op_type`` made of ``ctx``'s node: ``inputs`` as its inputs (None: left out),
    ``output`` its output's name, the attributes named ``attrs`` copied from ``ctx``'s node, and ``extra`` ones."""
    names = [f"{output}#in{i}" if x is not None else "" for i, x in enumerate(inputs)]
    node = helper.make_node(op_type, names, [output], name=ctx.node.name, **extra)
    node.attribute.extend(a for a in ctx.node.attribute if a.name in attrs)
    values = {name: x for name, x in zip(names, inputs) if name}
    inner = NodeContext(node, ctx.label, ctx.where.split(":")[0], values, ctx.opset)
    inner.where, inner.stored, inner.known_types = ctx.where, ctx.stored, ctx.known_types
    return handler(inner)


_CONV_ATTRS = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


@onnx_op("QLinearConv", since=10, inputs=(8, 9), attrs=_CONV_ATTRS)
def qlinear_conv(ctx: NodeContext) -> Tensor:
    """y = quantize(conv(dequantize(x), dequantize(w), B * x_scale * w_scale), y_scale, y_zero_point): the
    convolution of the dequantized values in float32, its result quantized as QuantizeLinear does (w's scale and zero
    point per output channel or one). The input's and output's pairs with the nodes around it are then int8 islands
    like any QDQ model's (glowgraph-qdq-to-params)."""
    out = ctx.node.output[0]
    x = _as(ctx, "DequantizeLinear", [ctx.input(0), ctx.input(1), ctx.input(2)], out + "#x", dequantize_linear)
    w = _as(ctx, "DequantizeLinear", [ctx.input(3), ctx.input(4), ctx.input(5)], out + "#w", dequantize_linear,
            axis=0)
    bias = ctx.optional_input(8)
    if bias is not None:  # int32 at scale x_scale * w_scale, offset 0
        scales = (ctx.constant_input(1, "x_scale").astype(np.float64).reshape(())
                  * ctx.constant_input(4, "w_scale").astype(np.float64).reshape(-1))
        if isinstance(bias, Const):
            bias = ctx.const((bias.array.astype(np.float64) * scales).astype(np.float32))
        else:
            bias = gg.mul(ctx.value(_float(ctx, bias)), ctx.value(ctx.const(
                np.broadcast_to(scales, shape_of(bias)).astype(np.float32))))
    y = _as(ctx, "Conv", [x, w, bias], out + "#y", conv, _CONV_ATTRS)
    return _as(ctx, "QuantizeLinear", [y, ctx.input(6), ctx.input(7)], out, quantize_linear)


@onnx_op("ConvInteger", since=10, inputs=(2, 4), attrs=_CONV_ATTRS)
def conv_integer(ctx: NodeContext) -> Tensor:
    """int32 conv(x - x_zero_point, w - w_zero_point) of uint8/int8 x and w (w's zero point per output channel or
    one; padding reads x's zero point, i.e. 0 once shifted): float32 convolutions over chunks of the input channels
    short enough that their sums are exact (:data:`EXACT_K` products per output), each cast to int32, the chunks
    added as int32."""
    x, w = ctx.input(0), ctx.input(1)
    xs, ws = shape_of(x), shape_of(w)
    if len(xs) < 3 or len(ws) != len(xs):
        raise ctx.error(f"the input {xs} and the weights {ws} must have one rank, 3 or more")
    shifted_x = _shifted(ctx, x, ctx.optional_input(2), 1, "x_zero_point")
    shifted_w = _shifted(ctx, w, ctx.optional_input(3), 0, "w_zero_point")
    taps = int(np.prod(ws[2:]))
    channels, per = ws[1], max(1, EXACT_K // taps)
    if ctx.attr("group", INT, 1) != 1 and channels > per:
        raise ctx.unsupported(f"a grouped ConvInteger with {channels * taps} products per output is not supported "
                              f"(at most {EXACT_K}: its int32 sums would not be exact in float32)")
    out, total = ctx.node.output[0], None
    for start in range(0, channels, per):
        size = min(per, channels - start)
        rest = [0] * (len(xs) - 2)
        part_x = _box(ctx, shifted_x, [0, start, *rest], [xs[0], size, *xs[2:]]) if size < channels else shifted_x
        part_w = _box(ctx, shifted_w, [0, start, *rest], [ws[0], size, *ws[2:]]) if size < channels else shifted_w
        y = _as(ctx, "Conv", [part_x, part_w], f"{out}#c{start}", conv, _CONV_ATTRS)
        part = gg.cast(ctx.value(y), to=mlir_type(np.dtype(np.int32)))
        total = part if total is None else gg.add(total, part)
    return total
