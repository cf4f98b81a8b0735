"""QuantizeLinear and DequantizeLinear, the Q and DQ nodes of ONNX's quantized (QDQ) models, computed in float32.

An int8 or uint8 value is held as the float32 of its integers (exact: model.QUANTIZED_TYPES), so that a
QuantizeLinear -> DequantizeLinear pair gives exactly the values onnxruntime's QDQ model has around each quantized
operation, and the operations between the pairs run in float32. Per-tensor and per-axis scales and zero points;
QuantizeLinear rounds halves to even and saturates to its output type's range, as the spec says. The int8 values
are not yet computed on as integers (no int8 kernels): such a model runs at float speed with int8 numerics.
"""

from __future__ import annotations

import numpy as np
from onnx import AttributeProto, TensorProto, helper

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from .core import _expand, _reshape

INT = AttributeProto.INT
#: the integer range of each output type QuantizeLinear may have here
RANGES = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127)}


def _float(ctx: NodeContext, x: Tensor) -> Tensor:
    """``x`` as float32 (an int32 bias of a quantized model, or already float32)."""
    if dtype_of(x) == np.float32:
        return x
    if isinstance(x, Const):
        return ctx.const(x.array.astype(np.float32))
    return gg.cast(ctx.value(x), to=mlir_type(np.dtype(np.float32)))


def _per_axis(ctx: NodeContext, param: Tensor, x: Tensor, what: str) -> Tensor:
    """A scale or zero point broadcast to ``x``'s shape: one value, or one per entry of dim ``axis`` (default 1)."""
    shape = shape_of(x)
    size = int(np.prod(shape_of(param)))
    if size == 1:
        return _expand(ctx, _reshape(ctx, _float(ctx, param), [1] * len(shape)), shape)
    if ctx.attr("block_size", INT, 0):
        raise ctx.unsupported("blocked quantization (block_size) is not supported")
    axis = ctx.attr("axis", INT, 1)
    if not -len(shape) <= axis < len(shape):
        raise ctx.error(f"axis {axis} is out of range for an input of rank {len(shape)}")
    axis %= len(shape)
    if len(shape_of(param)) != 1 or size != shape[axis]:
        raise ctx.error(f"{what} {shape_of(param)} must hold one value or one per entry of axis {axis} "
                        f"({shape[axis]})")
    return _expand(ctx, _reshape(ctx, _float(ctx, param), [size if d == axis else 1 for d in range(len(shape))]),
                   shape)


def _output_type(ctx: NodeContext) -> np.dtype:
    """The element type QuantizeLinear produces: as the model stores its output, else its zero point's, else
    output_dtype, else uint8."""
    zero = ctx.node.input[2] if len(ctx.node.input) > 2 else ""
    for name in (ctx.node.output[0], zero):
        if name and name in ctx.stored:
            return ctx.stored[name]
    declared = ctx.attr("output_dtype", INT, 0)
    if declared:
        return np.dtype(helper.tensor_dtype_to_np_dtype(declared)) if declared in (TensorProto.INT8, TensorProto.UINT8) \
            else np.dtype(np.int16 if declared == TensorProto.INT16 else np.float16)
    return np.dtype(np.uint8)


@onnx_op("QuantizeLinear", since=10, inputs=(2, 3))
@onnx_op("QuantizeLinear", since=13, inputs=(2, 3), attrs=("axis",))
@onnx_op("QuantizeLinear", since=19, inputs=(2, 3), attrs=("axis", "saturate"))
@onnx_op("QuantizeLinear", since=21, inputs=(2, 3), attrs=("axis", "saturate", "block_size", "output_dtype"))
def quantize_linear(ctx: NodeContext) -> Tensor:
    """y = saturate(round_half_to_even(x / scale) + zero_point) in the range of y's type (uint8 without a zero
    point)."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", (np.dtype(np.float32),))
    dtype = _output_type(ctx)
    if dtype not in RANGES:
        raise ctx.unsupported(f"quantizing to {dtype} is not supported (int8 and uint8 are)")
    lo, hi = RANGES[dtype]
    scale = _per_axis(ctx, ctx.input(1), x, "y_scale")
    q = gg.round(gg.div(ctx.value(x), ctx.value(scale)))
    zero = ctx.optional_input(2)
    if zero is not None:
        q = gg.add(q, ctx.value(_per_axis(ctx, zero, x, "y_zero_point")))
    return gg.clip(q, min=float(lo), max=float(hi))


@onnx_op("DequantizeLinear", since=10, inputs=(2, 3))
@onnx_op("DequantizeLinear", since=13, inputs=(2, 3), attrs=("axis",))
@onnx_op("DequantizeLinear", since=21, inputs=(2, 3), attrs=("axis", "block_size"))
def dequantize_linear(ctx: NodeContext) -> Tensor:
    """y = (x - zero_point) * scale."""
    x = _float(ctx, ctx.input(0))
    value = ctx.value(x)
    zero = ctx.optional_input(2)
    if zero is not None:
        value = gg.sub(value, ctx.value(_per_axis(ctx, zero, x, "x_zero_point")))
    return gg.mul(value, ctx.value(_per_axis(ctx, ctx.input(1), x, "x_scale")))
