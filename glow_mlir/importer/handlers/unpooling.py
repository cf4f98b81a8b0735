"""MaxUnpool and Col2Im: values scattered back into an image, at the positions a pooling or the blocks of an im2col
took them from (one scatter_nd each: MaxUnpool writes, Col2Im adds up overlapping blocks)."""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ..builder import Const, NodeContext, Tensor, onnx_op, shape_of
from ..model import fmt_shape
from .cnn import INTS, _float32, _ints, _padded
from .core import _reshape, _transpose
from .datamove import _box


@onnx_op("MaxUnpool", since=9, inputs=(2, 3), attrs=("kernel_shape", "pads", "strides"))
@onnx_op("MaxUnpool", since=11, inputs=(2, 3), attrs=("kernel_shape", "pads", "strides"))
def max_unpool(ctx: NodeContext) -> Tensor:
    """X's values written at the flat positions ``I`` gives (MaxPool's Indices: ((n C + c) H + h) W + w) of a
    zero tensor of the pooling's input shape ((in - 1) stride - pads + kernel per dim), one scatter_nd; with a
    constant ``output_shape`` that tensor is then padded with zeros at the end of each dim to it, as onnx.reference
    does."""
    x, indices = ctx.input(0), ctx.input(1)
    _float32(ctx, x)
    ctx.check_element_type(indices, "indices input", (np.dtype(np.int64),))
    shape = shape_of(x)
    if len(shape) < 3 or shape_of(indices) != shape:
        raise ctx.error(f"X {fmt_shape(shape)} and I {fmt_shape(shape_of(indices))} must have one shape of rank 3 "
                        "or more")
    r = len(shape) - 2
    kernel = ctx.attr("kernel_shape", INTS, None)
    if kernel is None or len(kernel) != r:
        raise ctx.error(f"attribute 'kernel_shape' must hold {r} sizes")
    strides = _ints(ctx, "strides", r, 1, 1)
    pads = _ints(ctx, "pads", 2 * r, 0, 0)
    inferred = [*shape[:2], *((shape[2 + d] - 1) * strides[d] - pads[d] - pads[r + d] + kernel[d] for d in range(r))]
    total = math.prod(inferred)
    zeros = gg.splat(value=0.0, result_types=[ir.RankedTensorType.get([total], mlir_type(np.dtype(np.float32)))])
    coordinates = _reshape(ctx, indices, [math.prod(shape), 1])
    if isinstance(coordinates, Const):
        bad = (coordinates.array < 0) | (coordinates.array >= total)
        if bad.any():
            raise ctx.error(f"index {int(coordinates.array[bad][0])} lies outside the output's {total} elements")
    y = _reshape(ctx, gg.scatter_nd(zeros, ctx.value(coordinates), ctx.value(_reshape(ctx, x, [math.prod(shape)])),
                                    reduction="none"), inferred)
    if ctx.optional_input(2) is None:
        return y
    wanted = [int(v) for v in ctx.constant_input(2, "output_shape").reshape(-1)]
    if len(wanted) != len(shape) or any(w < i for w, i in zip(wanted, inferred)):
        raise ctx.error(f"output_shape {wanted} must have rank {len(shape)} and hold the unpooled {inferred}")
    return _padded(ctx, y, [0] * len(shape) + [w - i for w, i in zip(wanted, inferred)], 0.0)


def _col2im_targets(image: list[int], block: list[int], strides: list[int], pads: list[int],
                    dilations: list[int]) -> tuple[np.ndarray, int]:
    """For each (block offset, block position) of one channel, row-major over [prod(block), L], the flat pixel of
    the image it adds to, or prod(image) (a spare slot) where it falls in the padding; and L."""
    r = len(image)
    counts = [(image[d] + pads[d] + pads[r + d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1
              for d in range(r)]
    offsets = np.stack(np.meshgrid(*[np.arange(b) for b in block], indexing="ij"), -1).reshape(-1, 1, r)
    positions = np.stack(np.meshgrid(*[np.arange(c) for c in counts], indexing="ij"), -1).reshape(1, -1, r)
    pixel = positions * np.array(strides) - np.array(pads[:r]) + offsets * np.array(dilations)
    inside = np.all((pixel >= 0) & (pixel < np.array(image)), axis=-1)
    flat = np.ravel_multi_index(tuple(np.clip(pixel, 0, np.array(image) - 1)[..., d] for d in range(r)), image)
    return np.where(inside, flat, math.prod(image)).astype(np.int64), math.prod(counts)


@onnx_op("Col2Im", since=18, inputs=(3, 3), attrs=("dilations", "pads", "strides"))
def col2im(ctx: NodeContext) -> Tensor:
    """The image [N, C, *image_shape] whose sliding blocks of ``block_shape`` are the columns of the input
    [N, C prod(block), L] (the inverse of im2col), overlapping blocks summed: one scatter_nd adding every column
    entry to its constant pixel (entries in the padding go to a spare row, dropped after)."""
    x = ctx.input(0)
    _float32(ctx, x)
    image = [int(v) for v in ctx.constant_input(1, "image_shape").reshape(-1)]
    block = [int(v) for v in ctx.constant_input(2, "block_shape").reshape(-1)]
    r = len(image)
    shape = shape_of(x)
    if r < 1 or len(block) != r or any(v < 1 for v in image + block) or len(shape) != 3 or \
            shape[1] % math.prod(block):
        raise ctx.error(f"input {fmt_shape(shape)}, image_shape {image} and block_shape {block} must be [N, C "
                        "prod(block), L] and positive sizes of one rank")
    strides, dilations = _ints(ctx, "strides", r, 1, 1), _ints(ctx, "dilations", r, 1, 1)
    pads = _ints(ctx, "pads", 2 * r, 0, 0)
    targets, count = _col2im_targets(image, block, strides, pads, dilations)
    if count != shape[2]:
        raise ctx.error(f"the input holds {shape[2]} blocks, the image {image} has {count} of {block}")
    n, channels, pixels = shape[0], shape[1] // math.prod(block), math.prod(image)
    # every channel's targets shifted to its own pixels; rows of [C prod(block) L, N], the spare row last
    per_channel = targets[None] + (np.arange(channels) * pixels).reshape(-1, 1, 1)
    rows = np.where(targets[None] < pixels, per_channel, channels * pixels).reshape(-1, 1).astype(np.int64)
    updates = _reshape(ctx, _transpose(ctx, x, [1, 2, 0]), [shape[1] * shape[2], n])
    zeros = gg.splat(value=0.0, result_types=[ir.RankedTensorType.get([channels * pixels + 1, n],
                                                                      mlir_type(np.dtype(np.float32)))])
    summed = gg.scatter_nd(zeros, ctx.value(ctx.const(rows, name=f"{ctx.label}.pixels")), ctx.value(updates),
                           reduction="add")
    image_rows = _box(ctx, summed, [0, 0], [channels * pixels, n])
    return _reshape(ctx, _transpose(ctx, image_rows, [1, 0]), [n, channels, *image])
