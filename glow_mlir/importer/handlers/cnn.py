"""Convolution, pooling and normalization: Conv, ConvTranspose, MaxPool, AveragePool, GlobalMaxPool,
GlobalAveragePool, BatchNormalization, LRN, Pad and Clip.

Layout: ONNX is NCHW, glowgraph's windowed nodes are NHWC with HWCF filters (output channels innermost, what fast
CPU kernels want). Each handler converts at its boundary: NCHW -> ``transpose`` -> node -> ``transpose`` -> NCHW;
``glowgraph-sink-transposes`` then cancels the pairs between consecutive nodes. Filters are constants, so they are
transposed here in numpy. 1-D ops ([N, C, L]) run as 2-D ones on [N, C, L, 1]. 3-D convolution and pooling on
[N, C, D, H, W] are built from the 2-D nodes, so their kernels are reused: the depth taps of a convolution become
input channels of one 2-D convolution, and a pool is separable into one over (H, W) and one over D.

These ops take float32 only (Pad's edge, reflect and wrap modes excepted: they are gathers along each padded axis of
the constant source indices numpy's pad gives, and carry any element type data movement does): any other element type
is an UnsupportedError naming the node.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from mlir import ir
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ..builder import NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import fmt_shape, is_integer_storage, too_large
from .core import _reshape, _splat, _transpose
from .datamove import MOVABLE, _box, _take

FLOAT, INT, INTS, STRING = AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.INTS, AttributeProto.STRING

#: NCHW -> NHWC and back
TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)
AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")

# --------------------------------------------------------------------------- helpers


def _float32(ctx: NodeContext, *tensors: Tensor) -> None:
    """These ops compute in float32 only."""
    for x in tensors:
        if dtype_of(x) != np.float32:
            raise ctx.unsupported(f"unsupported element type {dtype_of(x)}: {ctx.node.op_type} takes float32 only")


def _spatial_rank(ctx: NodeContext, x: Tensor, most: int = 2) -> int:
    """The number of spatial dims of an [N, C, spatial...] input: 1 to ``most`` (2 or 3)."""
    shape = shape_of(x)
    if len(shape) < 3:
        raise ctx.error(f"the input must be N x C x spatial dims, got {fmt_shape(shape)}")
    if len(shape) - 2 > most:
        ranks = "1-D and 2-D" if most == 2 else "1-D, 2-D and 3-D"
        raise ctx.unsupported(f"{len(shape) - 2}-D {ctx.node.op_type} is not supported ({ranks} are)")
    return len(shape) - 2


def _ints(ctx: NodeContext, name: str, count: int, default: int, low: int) -> list[int]:
    """INTS attribute ``name``: ``count`` values, each at least ``low``; ``default`` repeated when absent."""
    values = [int(v) for v in ctx.attr(name, INTS, [default] * count)]
    if len(values) != count or any(v < low for v in values):
        raise ctx.error(f"attribute '{name}' {values} must hold {count} integers >= {low}")
    return values


def _flag(ctx: NodeContext, name: str, default: int) -> int:
    value = ctx.attr(name, INT, default)
    if value not in (0, 1):
        raise ctx.error(f"attribute '{name}' must be 0 or 1, got {value}")
    return value


@dataclass
class Window:
    """Where a window moves over the spatial dims, in ONNX terms: pads are begins, then ends."""

    strides: list[int]
    pads: list[int]
    dilations: list[int]

    def as_2d(self) -> dict[str, list[int]]:
        """The glowgraph attributes of a 2-D window (a 1-D one gets a unit second dim); ONNX's 2-D pads
        [top, left, bottom, right] are glowgraph's order already."""
        if len(self.strides) == 2:
            return {"strides": self.strides, "pads": self.pads, "dilations": self.dilations}
        return {"strides": self.strides + [1], "pads": [self.pads[0], 0, self.pads[1], 0],
                "dilations": self.dilations + [1]}

    def plane(self) -> dict[str, list[int]]:
        """The (H, W) part of a 3-D window as glowgraph attributes."""
        return {"strides": self.strides[1:], "pads": [self.pads[1], self.pads[2], self.pads[4], self.pads[5]],
                "dilations": self.dilations[1:]}

    def depth(self) -> dict[str, list[int]]:
        """The D part of a 3-D window as glowgraph attributes of a window over [D, 1]."""
        return {"strides": [self.strides[0], 1], "pads": [self.pads[0], 0, self.pads[3], 0],
                "dilations": [self.dilations[0], 1]}


def _window(ctx: NodeContext, spatial: Sequence[int], kernel: Sequence[int]) -> Window:
    """strides, dilations and the explicit pads of a windowed op, auto_pad resolved (ONNX's formulas)."""
    nd = len(spatial)
    strides = _ints(ctx, "strides", nd, 1, 1)
    dilations = _ints(ctx, "dilations", nd, 1, 1)
    auto_pad = ctx.attr("auto_pad", STRING, b"NOTSET").decode(errors="replace")
    if auto_pad not in AUTO_PADS:
        raise ctx.error(f"attribute 'auto_pad' must be one of {', '.join(AUTO_PADS)}, got '{auto_pad}'")
    if auto_pad == "NOTSET":
        return Window(strides, _ints(ctx, "pads", 2 * nd, 0, 0), dilations)
    if any(_ints(ctx, "pads", 2 * nd, 0, 0)):
        raise ctx.error(f"attribute 'pads' cannot be given with auto_pad {auto_pad}")
    pads = [0] * (2 * nd)
    if auto_pad != "VALID":
        for i in range(nd):
            out = -(-spatial[i] // strides[i])
            total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - spatial[i])
            # SAME_UPPER puts the odd pad at the end, SAME_LOWER at the beginning
            pads[i] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pads[nd + i] = total - pads[i]
    return Window(strides, pads, dilations)


def _nhwc(ctx: NodeContext, x: Tensor) -> ir.Value:
    """An NCHW (or NCL) tensor as NHWC (N, L, 1, C for 1-D)."""
    shape = shape_of(x)
    if len(shape) == 3:
        x = _reshape(ctx, x, [*shape, 1])
    return ctx.value(_transpose(ctx, x, TO_NHWC))


def _nchw(ctx: NodeContext, y: ir.Value, spatial_rank: int) -> Tensor:
    """An NHWC result back in the model's layout (N, C, L for 1-D)."""
    out = _transpose(ctx, y, TO_NCHW)
    return _reshape(ctx, out, shape_of(out)[:3]) if spatial_rank == 1 else out


def _kernel(ctx: NodeContext, nd: int) -> list[int]:
    """The kernel_shape attribute, which pooling requires."""
    if not any(a.name == "kernel_shape" for a in ctx.node.attribute):
        raise ctx.error("attribute 'kernel_shape' is required")
    return _ints(ctx, "kernel_shape", nd, 1, 1)


# --------------------------------------------------------------------------- convolution


@dataclass
class ConvOperands:
    """What Conv and ConvTranspose read alike: float32 X, W and optional B, the spatial rank, both shapes, group."""

    x: Tensor
    w: Tensor
    b: Tensor | None
    nd: int
    xs: list[int]
    ws: list[int]
    group: int

    def kernel(self, ctx: NodeContext) -> list[int]:
        """The weights' kernel, which the kernel_shape attribute may only repeat."""
        kernel = self.ws[2:]
        if ctx.attr("kernel_shape", INTS, kernel) != kernel:
            raise ctx.error(f"attribute 'kernel_shape' {ctx.attr('kernel_shape', INTS, kernel)} differs from the "
                            f"weights' kernel {kernel}")
        return kernel

    def bias(self, ctx: NodeContext, f: int) -> Tensor:
        """B, one entry per output channel, or zeros when absent."""
        if self.b is None:
            return ctx.const(np.zeros([f], np.float32))
        if shape_of(self.b) != [f]:
            raise ctx.error(f"the bias {fmt_shape(shape_of(self.b))} must have one entry per output channel ({f})")
        return self.b


def _conv_operands(ctx: NodeContext, most: int = 2) -> ConvOperands:
    x, w, b = ctx.input(0), ctx.input(1), ctx.optional_input(2)
    _float32(ctx, x, w, *([b] if b is not None else []))
    nd = _spatial_rank(ctx, x, most)
    xs, ws = shape_of(x), shape_of(w)
    if len(ws) != len(xs):
        raise ctx.error(f"the weights {fmt_shape(ws)} must have the rank of the input {fmt_shape(xs)}")
    return ConvOperands(x, w, b, nd, xs, ws, ctx.attr("group", INT, 1))


@onnx_op("Conv", since=1, inputs=(2, 3), attrs=("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"))
def conv(ctx: NodeContext) -> Tensor:
    """Y = conv(X, W) + B with groups (depthwise included), strides, pads or auto_pad, and dilations; the filter
    [F, C/group, KH, KW] becomes HWCF; a missing B is zeros. 1-D, 2-D and 3-D (:func:`_conv3d`)."""
    ops = _conv_operands(ctx, most=3)
    x, w, nd, xs, ws, group = ops.x, ops.w, ops.nd, ops.xs, ops.ws, ops.group
    f, c = ws[0], xs[1]
    if group < 1 or c % group or f % group or ws[1] != c // group:
        raise ctx.error(f"weights {fmt_shape(ws)} do not fit the input {fmt_shape(xs)} with group {group}: "
                        "expected F x C/group x kernel, with C and F divisible by group")
    window = _window(ctx, xs[2:], ops.kernel(ctx))
    b = ops.bias(ctx, f)
    if nd == 3:
        return _conv3d(ctx, ops, window, b)
    if nd == 1:
        w = _reshape(ctx, w, [*ws, 1])
    hwcf = _transpose(ctx, w, (2, 3, 1, 0))
    y = gg.conv2d(_nhwc(ctx, x), ctx.value(hwcf), ctx.value(b), group=group, **window.as_2d())
    return _nchw(ctx, y, nd)


def _conv3d(ctx: NodeContext, ops: ConvOperands, window: Window, b: Tensor) -> Tensor:
    """A 3-D convolution as one 2-D convolution. Output depth d reads the input depths d * SD + k * DD for the KD
    taps k: in NDHWC, the depth-padded input gathered at those depths, [N, KD x OD, H, W, C], becomes
    [N x OD, H, W, KD x C] (the taps are extra input channels, KD of them per channel, group-major as groups
    want), and the filter [F, C/group, KD, KH, KW] becomes [KH, KW, KD x C/group, F]. The 2-D convolution then
    runs over (H, W) with the window's strides, pads and dilations there, the output depths folded into its batch.
    The gathered input is KD times the input's size (OD / D of it, for strides); with KD = 1 it is a strided view
    and no transpose."""
    x, w, xs, ws, group = ops.x, ops.w, ops.xs, ops.ws, ops.group
    n, c, depth, h, wd = xs
    f, kd = ws[0], ws[2]
    sd, dd, begin, end = window.strides[0], window.dilations[0], window.pads[0], window.pads[3]
    od = (depth + begin + end - dd * (kd - 1) - 1) // sd + 1
    if od < 1:
        raise ctx.error(f"the kernel depth {kd} (dilation {dd}) does not fit the padded input depth "
                        f"{depth + begin + end}")
    ndhwc = _transpose(ctx, x, (0, 2, 3, 4, 1))
    ndhwc = _padded(ctx, ndhwc, [0, begin, 0, 0, 0, 0, end, 0, 0, 0], 0.0)
    taps = _take(ctx, ndhwc, 1, (np.arange(kd)[:, None] * dd + np.arange(od)[None, :] * sd).reshape(-1))
    if kd > 1:
        taps = _reshape(ctx, taps, [n, kd, od, h, wd, group, c // group])
        taps = _transpose(ctx, taps, (0, 2, 3, 4, 5, 1, 6))
    stacked = _reshape(ctx, taps, [n * od, h, wd, kd * c])
    hwcf = _reshape(ctx, _transpose(ctx, w, (3, 4, 2, 1, 0)), [ws[3], ws[4], kd * ws[1], f])
    y = gg.conv2d(ctx.value(stacked), ctx.value(hwcf), ctx.value(b), group=group, **window.plane())
    oh, ow = shape_of(y)[1:3]
    return _transpose(ctx, _reshape(ctx, y, [n, od, oh, ow, f]), (0, 4, 1, 2, 3))


def _zeros_between(ctx: NodeContext, x: Tensor, strides: Sequence[int]) -> Tensor:
    """An NCHW ``x`` with ``stride - 1`` zeros after every element along each spatial dim (the trailing ones kept:
    the caller's pad crops them): [N, C, H, W] -> [N, C, H * sh, W * sw]."""
    y = x
    for d, s in enumerate(strides):
        if s == 1:
            continue
        axis = 2 + d
        cur = shape_of(y)
        spread = _reshape(ctx, y, [*cur[:axis + 1], 1, *cur[axis + 1:]])
        zeros = ctx.const(np.zeros([*cur[:axis + 1], s - 1, *cur[axis + 1:]], np.float32), name=f"{ctx.label}.zeros{d}")
        joined = gg.concat(ctx.value(spread), ctx.value(zeros), axis=axis + 1)
        y = _reshape(ctx, joined, [*cur[:axis], cur[axis] * s, *cur[axis + 1:]])
    return y


@onnx_op("ConvTranspose", since=1, inputs=(2, 3), attrs=("auto_pad", "dilations", "group", "kernel_shape",
                                                           "output_padding", "output_shape", "pads", "strides"))
def conv_transpose(ctx: NodeContext) -> Tensor:
    """The gradient of Conv with respect to its input: each input element scatters the filter into the output, at
    stride steps. As a direct convolution: zeros inserted between the input's elements (stride - 1 of them), the
    result padded by dilation x (kernel - 1) less the pads (output_padding more at the end; output_shape and auto_pad
    give the pads as the spec says), then a stride-1 convolution with the filter flipped in space and its in and out
    channels swapped per group ([C, F/group, KH, KW] -> [F, C/group, KH, KW]). Costs stride^nd times the
    transposed convolution's multiply-adds (the inserted zeros are multiplied too). 3-D: the same, with the
    3-D convolution of :func:`_conv3d`."""
    ops = _conv_operands(ctx, most=3)
    x, w, nd, xs, ws, group = ops.x, ops.w, ops.nd, ops.xs, ops.ws, ops.group
    c = xs[1]
    if group < 1 or c % group or ws[0] != c:
        raise ctx.error(f"weights {fmt_shape(ws)} do not fit the input {fmt_shape(xs)} with group {group}: "
                        "expected C x F/group x kernel, with C divisible by group")
    f = ws[1] * group
    kernel = ops.kernel(ctx)
    strides = _ints(ctx, "strides", nd, 1, 1)
    dilations = _ints(ctx, "dilations", nd, 1, 1)
    extra = _ints(ctx, "output_padding", nd, 0, 0)
    if any(e >= max(s, d) for e, s, d in zip(extra, strides, dilations)):
        raise ctx.error(f"output_padding {extra} must be smaller than the strides {strides} or the dilations "
                        f"{dilations}")
    auto_pad = ctx.attr("auto_pad", STRING, b"NOTSET").decode(errors="replace")
    if auto_pad not in AUTO_PADS:
        raise ctx.error(f"attribute 'auto_pad' must be one of {', '.join(AUTO_PADS)}, got '{auto_pad}'")
    spatial = xs[2:]
    full = [s * (n - 1) + e + (k - 1) * d + 1 for s, n, e, k, d in zip(strides, spatial, extra, kernel, dilations)]
    wanted = ctx.attr("output_shape", INTS, None)
    if wanted is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if wanted is None:
            wanted = [n * s for n, s in zip(spatial, strides)]
        wanted = [int(v) for v in wanted][-nd:]
        if len(wanted) != nd:
            raise ctx.error(f"output_shape {wanted} must give the {nd} spatial dims")
        totals = [t - o for t, o in zip(full, wanted)]  # negative: the output grows past the full result
        if auto_pad == "NOTSET":  # as onnx.reference: the output starts where the full result does
            begins = [0] * nd
        else:  # SAME_UPPER puts the odd pad at the end, SAME_LOWER at the beginning
            begins = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in totals]
        pads = begins + [t - p for t, p in zip(totals, begins)]
    elif auto_pad == "VALID":
        pads = [0] * (2 * nd)
    else:
        pads = _ints(ctx, "pads", 2 * nd, 0, 0)
    out = [t - pads[i] - pads[nd + i] for i, t in enumerate(full)]
    if any(o < 1 for o in out):
        raise ctx.error(f"pads {pads} leave no output (the full output is {full})")
    b = ops.bias(ctx, f)
    # the filter as a convolution's: per group [C/g, F/g, k...] -> [F/g, C/g, k...], flipped in space (graph ops:
    # a constant filter folds at import)
    rank = 3 + nd
    wt = _reshape(ctx, w, [group, c // group, ws[1], *kernel])
    wt = _reshape(ctx, _transpose(ctx, wt, (0, 2, 1, *range(3, rank))), [f, c // group, *kernel])
    for d in range(nd):
        axis = 2 + d
        wt = _box(ctx, wt, [kernel[d] - 1 if a == axis else 0 for a in range(2 + nd)], shape_of(wt),
                  [-1 if a == axis else 1 for a in range(2 + nd)])
    if nd == 1:
        x = _reshape(ctx, x, [*xs, 1])
        wt = _reshape(ctx, wt, [*shape_of(wt), 1])
    strides2, dilations2 = strides + [1] * (2 - nd), dilations + [1] * (2 - nd)
    kernel2 = shape_of(wt)[2:]
    z = _zeros_between(ctx, x, strides2)
    # pad by dilation x (kernel - 1) less the pads, the zeros after the last element cropped, output_padding added
    begin = [d * (k - 1) - (pads[i] if i < nd else 0) for i, (d, k) in enumerate(zip(dilations2, kernel2))]
    end = [d * (k - 1) - (pads[nd + i] if i < nd else 0) - (s - 1) + (extra[i] if i < nd else 0)
           for i, (d, k, s) in enumerate(zip(dilations2, kernel2, strides2))]
    z = _padded(ctx, z, [0, 0, *begin, 0, 0, *end], 0.0)
    if nd == 3:
        flipped = ConvOperands(z, wt, None, nd, shape_of(z), shape_of(wt), group)
        return _conv3d(ctx, flipped, Window([1] * nd, [0] * (2 * nd), dilations2), b)
    hwcf = _transpose(ctx, wt, (2, 3, 1, 0))
    y = gg.conv2d(_nhwc(ctx, z), ctx.value(hwcf), ctx.value(b), group=group, strides=[1, 1], pads=[0, 0, 0, 0],
                  dilations=dilations2)
    return _nchw(ctx, y, nd)


# --------------------------------------------------------------------------- pooling


def _pool(ctx: NodeContext, kind: str, x: Tensor | None = None) -> Tensor | list[Tensor | None]:
    """MaxPool or AveragePool (or the "sum" of each window, for LpPool: an average counting the pads, times the
    window's size) of ``x`` (default: the node's input) with kernel_shape, strides, pads or auto_pad, dilations and
    ceil_mode; 1-D and 2-D as one 2-D pool, 3-D as two (:func:`_pool3d`)."""
    x = ctx.input(0) if x is None else x
    _float32(ctx, x)
    nd = _spatial_rank(ctx, x, most=3)
    kernel = _kernel(ctx, nd)
    window = _window(ctx, shape_of(x)[2:], kernel)
    ceil_mode = _flag(ctx, "ceil_mode", 0)
    if ceil_mode and ctx.attr("auto_pad", STRING, b"NOTSET") != b"NOTSET":
        # the spec's auto_pad output sizes have no ceil variant, and the reference refuses the pair
        raise ctx.unsupported("ceil_mode=1 with an auto_pad other than NOTSET is not supported")
    if kind == "max":
        column_major = _flag(ctx, "storage_order", 0)  # the layout of Indices only

        def pool(v: ir.Value, **attrs) -> ir.Value:
            return gg.max_pool(v, ceil_mode=ceil_mode, **attrs)
    else:
        count_include_pad = 1 if kind == "sum" else _flag(ctx, "count_include_pad", 0)

        def pool(v: ir.Value, **attrs) -> ir.Value:
            return gg.avg_pool(v, ceil_mode=ceil_mode, count_include_pad=count_include_pad, **attrs)
    if nd == 3:
        y = _pool3d(ctx, x, pool, kernel, window)
    else:
        y = _nchw(ctx, pool(_nhwc(ctx, x), kernels=kernel + [1] * (2 - nd), **window.as_2d()), nd)
    if kind == "sum":
        return gg.mul(ctx.value(y), _splat(ctx.value(y), float(np.prod(kernel))))
    if kind != "max" or not ctx.has_output(1):
        return y if len(ctx.node.output) == 1 else [y, None]
    return [y, _max_indices(ctx, x, kernel, window, shape_of(y)[2:], column_major)]


def _max_indices(ctx: NodeContext, x: Tensor, kernel: list[int], window: Window, out: list[int],
                 column_major: int) -> Tensor:
    """MaxPool's Indices: where in ``x`` each window's maximum is, as a flat int64 index of [N, C, spatial...]
    (the spatial dims row-major, or column-major with storage_order=1; N and C always outermost), the first
    in window order on ties. Built as an ArgMax over the window elements: the input padded with -inf (the pads and
    the ceil_mode overhang), gathered along each spatial dim at the window taps (K x O positions), the taps moved
    last, ArgMax over them; the tap's input position comes from a constant table [O..., K] (a gather at
    o * K + tap), plus (n * C + c) x the spatial size. The gathered windows are K times the output's size."""
    shape = shape_of(x)
    n, c, spatial = shape[0], shape[1], shape[2:]
    nd = len(spatial)
    begins = window.pads[:nd]
    ends = [max(0, (o - 1) * s + (k - 1) * d + 1 - b - size)
            for o, s, k, d, b, size in zip(out, window.strides, kernel, window.dilations, begins, spatial)]
    v = gg.pad(ctx.value(x), pads=[0, 0, *begins, 0, 0, *ends], value=float("-inf"))
    taps = []
    for i in range(nd):  # padded position of tap k of window o: o * stride + k * dilation
        taps.append(np.arange(kernel[i])[:, None] * window.dilations[i] + np.arange(out[i])[None, :] * window.strides[i])
        v = _take(ctx, v, 2 + i, taps[i].reshape(-1))
    v = _reshape(ctx, v, [n, c, *(d for k, o in zip(kernel, out) for d in (k, o))])
    v = _transpose(ctx, v, (0, 1, *range(3, 3 + 2 * nd, 2), *range(2, 2 + 2 * nd, 2)))
    count = math.prod(kernel)
    best = gg.arg_max(ctx.value(_reshape(ctx, v, [n, c, *out, count])), axis=2 + nd, select_last=0)
    # the table: for every output position and tap (both row-major), the tap's flat position in the input
    strides = [math.prod(spatial[:i]) if column_major else math.prod(spatial[i + 1:]) for i in range(nd)]
    grids = np.meshgrid(*(np.arange(o) for o in out), *(np.arange(k) for k in kernel), indexing="ij")
    table = sum((grids[nd + i] * window.dilations[i] + grids[i] * window.strides[i] - begins[i]) * strides[i]
                for i in range(nd))
    table = ctx.const(np.asarray(table, np.int64).reshape(-1), name=f"{ctx.label}.positions")
    base = ctx.const(np.arange(math.prod(out), dtype=np.int64).reshape(out) * count, name=f"{ctx.label}.windows")
    at = gg.add(best, gg.broadcast(ctx.value(_reshape(ctx, base, [1, 1, *out])), shape=[n, c, *out]))
    position = gg.gather(ctx.value(table), at, axis=0)
    planes = ctx.const((np.arange(n * c, dtype=np.int64) * math.prod(spatial)).reshape(n, c, *[1] * nd),
                       name=f"{ctx.label}.planes")
    return gg.add(position, gg.broadcast(ctx.value(planes), shape=[n, c, *out]))


def _pool3d(ctx: NodeContext, x: Tensor, pool: Callable[..., ir.Value], kernel: list[int], window: Window) -> Tensor:
    """A 3-D pool as two 2-D ones: a box window is the product of its (H, W) window and its D window, and the max
    (or the sum, and the average's count: per dim, see ``cnn_numpy.pool_counts``) of a product is taken one factor
    at a time. In NDHWC, the (H, W) pool runs on [N x D, H, W, C], then a [KD, 1] pool on [N, D, OH x OW, C]."""
    n, c, depth, h, w = shape_of(x)
    planes = _reshape(ctx, _transpose(ctx, x, (0, 2, 3, 4, 1)), [n * depth, h, w, c])
    y = pool(ctx.value(planes), kernels=kernel[1:], **window.plane())
    oh, ow = shape_of(y)[1:3]
    y = _reshape(ctx, y, [n, depth, oh * ow, c])
    if kernel[0] > 1 or window.strides[0] > 1 or window.pads[0] or window.pads[3]:
        y = pool(ctx.value(y), kernels=[kernel[0], 1], **window.depth())
    return _transpose(ctx, _reshape(ctx, y, [n, shape_of(y)[1], oh, ow, c]), (0, 4, 1, 2, 3))


_POOL_ATTRS = ("auto_pad", "kernel_shape", "pads", "strides")


@onnx_op("MaxPool", since=1, inputs=(1, 1), attrs=_POOL_ATTRS)
@onnx_op("MaxPool", since=8, inputs=(1, 1), outputs=(1, 2), attrs=(*_POOL_ATTRS, "storage_order"))
@onnx_op("MaxPool", since=10, inputs=(1, 1), outputs=(1, 2),
         attrs=(*_POOL_ATTRS, "storage_order", "ceil_mode", "dilations"))
def max_pool(ctx: NodeContext) -> Tensor | list[Tensor | None]:
    """The maximum of each window, and from opset 8 its optional Indices (:func:`_max_indices`); on an integer
    type of 16 bits or fewer (:func:`_via_float32`) too."""
    x = ctx.input(0)
    if not _narrow_integer(ctx, x):
        return _pool(ctx, "max")
    out = _pool(ctx, "max", _via_float32(ctx, x))
    if isinstance(out, list):  # with Indices
        return [gg.cast(ctx.value(out[0]), to=mlir_type(dtype_of(x))), *out[1:]]
    return gg.cast(ctx.value(out), to=mlir_type(dtype_of(x)))


def _narrow_integer(ctx: NodeContext, x: Tensor) -> bool:
    """Whether ``x`` is a value the model stores as an integer of 16 bits or fewer (computed in int32): float32
    holds each of its values exactly, so that a maximum can be taken there."""
    stored = ctx.stored.get(ctx.node.input[0])
    return is_integer_storage(stored) and stored.itemsize <= 2 and dtype_of(x) == np.int32


def _via_float32(ctx: NodeContext, x: Tensor) -> ir.Value:
    return gg.cast(ctx.value(x), to=mlir_type(np.dtype(np.float32)))


@onnx_op("AveragePool", since=1, inputs=(1, 1), attrs=_POOL_ATTRS)
@onnx_op("AveragePool", since=7, inputs=(1, 1), attrs=(*_POOL_ATTRS, "count_include_pad"))
@onnx_op("AveragePool", since=10, inputs=(1, 1), attrs=(*_POOL_ATTRS, "count_include_pad", "ceil_mode"))
@onnx_op("AveragePool", since=19, inputs=(1, 1), attrs=(*_POOL_ATTRS, "count_include_pad", "ceil_mode", "dilations"))
def average_pool(ctx: NodeContext) -> Tensor:
    """The average of each window; pads count in it with count_include_pad=1."""
    return _pool(ctx, "avg")


@onnx_op("LpPool", since=2, inputs=(1, 1), attrs=(*_POOL_ATTRS, "p"))
@onnx_op("LpPool", since=18, inputs=(1, 1), attrs=(*_POOL_ATTRS, "p", "ceil_mode", "dilations"))
def lp_pool(ctx: NodeContext) -> Tensor:
    """(the sum of |x|^p over each window)^(1/p), the pads counting as zeros."""
    x, p = _lp_input(ctx)
    if _flag(ctx, "ceil_mode", 0):
        raise ctx.unsupported("ceil_mode=1 is not supported (a window past the padded input would sum fewer terms)")
    return _root(ctx.value(_pool(ctx, "sum", _powered(ctx.value(x), p))), p)


def _lp_input(ctx: NodeContext) -> tuple[Tensor, int]:
    """The float32 input of an Lp pool and its ``p`` (at least 1)."""
    x = ctx.input(0)
    _float32(ctx, x)
    p = ctx.attr("p", INT, 2)
    if p < 1:
        raise ctx.error(f"attribute 'p' must be 1 or more, got {p}")
    return x, p


def _powered(x: ir.Value, p: int) -> ir.Value:
    """|x|^p (a multiply for p = 2)."""
    v = gg.abs_(x)
    return v if p == 1 else gg.mul(v, v) if p == 2 else gg.pow_(v, _splat(v, float(p)))


def _root(sums: ir.Value, p: int) -> ir.Value:
    """sums^(1/p) (a square root for p = 2)."""
    if p == 1:
        return sums
    return gg.sqrt(sums) if p == 2 else gg.pow_(sums, _splat(sums, 1.0 / p))


def _global_pool(ctx: NodeContext, kind: str, x: Tensor | None = None) -> Tensor:
    """A pool whose window is the whole spatial extent (of ``x``, default the node's input)."""
    x = ctx.input(0) if x is None else x
    _float32(ctx, x)
    nd = _spatial_rank(ctx, x, most=3)
    if nd == 3:  # D and H as one dim: the window is all of them anyway
        n, c, depth, h, w = shape_of(x)
        y = _global_pool(ctx, kind, _reshape(ctx, x, [n, c, depth * h, w]))
        return _reshape(ctx, y, [n, c, 1, 1, 1])
    kernel = shape_of(x)[2:] + [1] * (2 - nd)
    attrs = {"kernels": kernel, "strides": [1, 1], "pads": [0] * 4, "dilations": [1, 1], "ceil_mode": 0}
    if kind == "max":
        y = gg.max_pool(_nhwc(ctx, x), **attrs)
    else:
        y = gg.avg_pool(_nhwc(ctx, x), count_include_pad=0, **attrs)
    return _nchw(ctx, y, nd)


@onnx_op("GlobalMaxPool", since=1, inputs=(1, 1))
def global_max_pool(ctx: NodeContext) -> Tensor:
    """The maximum over all spatial positions: N x C x 1 x 1 (x 1); on an integer type of 16 bits or fewer too."""
    x = ctx.input(0)
    if not _narrow_integer(ctx, x):
        return _global_pool(ctx, "max")
    return gg.cast(ctx.value(_global_pool(ctx, "max", _via_float32(ctx, x))), to=mlir_type(dtype_of(x)))


@onnx_op("GlobalLpPool", since=2, inputs=(1, 1), attrs=("p",))
def global_lp_pool(ctx: NodeContext) -> Tensor:
    """(the sum of |x|^p over all spatial positions)^(1/p): N x C x 1 x 1 (x 1), as the average pool of |x|^p
    times the positions' count."""
    x, p = _lp_input(ctx)
    mean = ctx.value(_global_pool(ctx, "avg", _powered(ctx.value(x), p)))
    return _root(gg.mul(mean, _splat(mean, float(math.prod(shape_of(x)[2:])))), p)


@onnx_op("GlobalAveragePool", since=1, inputs=(1, 1))
def global_average_pool(ctx: NodeContext) -> Tensor:
    """The average over all spatial positions: N x C x 1 x 1 (x 1)."""
    return _global_pool(ctx, "avg")


# --------------------------------------------------------------------------- normalization


@onnx_op("BatchNormalization", since=1, inputs=(5, 5), outputs=(1, 5),
         attrs=("consumed_inputs", "epsilon", "is_test", "momentum", "spatial"))
@onnx_op("BatchNormalization", since=6, inputs=(5, 5), outputs=(1, 5), attrs=("epsilon", "is_test", "momentum", "spatial"))
@onnx_op("BatchNormalization", since=7, inputs=(5, 5), attrs=("epsilon", "momentum", "spatial"))
@onnx_op("BatchNormalization", since=9, inputs=(5, 5), attrs=("epsilon", "momentum"))
@onnx_op("BatchNormalization", since=14, inputs=(5, 5), outputs=(1, 3),
         attrs=("epsilon", "momentum", "training_mode"))
def batch_normalization(ctx: NodeContext) -> Tensor | list[Tensor | None]:
    """Inference batch normalization over channel dim 1 with constant scale, B, mean and var. A 4-D input is
    normalized in NHWC (channel_axis 3) so that it sits in the NHWC chain of the convolution it follows. Opset 14's
    training_mode=1: :func:`_batch_norm_training`."""
    x = ctx.input(0)
    _float32(ctx, x)
    training = _flag(ctx, "training_mode", 0)
    if training:
        return _batch_norm_training(ctx, x)
    if ctx.opset < 7 and ctx.attr("is_test", INT, 0) != 1:
        raise ctx.unsupported("is_test=0 (training, before opset 7) is not supported (inference only)")
    if ctx.opset < 7 and any(ctx.node.output[1:]):
        raise ctx.unsupported("the running statistics outputs (training, before opset 7) are not supported")
    if ctx.attr("spatial", INT, 1) != 1:
        raise ctx.unsupported("spatial=0 (per-element statistics) is not supported")
    shape = shape_of(x)
    if len(shape) < 2:
        raise ctx.error(f"the input must be N x C x ..., got {fmt_shape(shape)}")
    params = []
    for i, what in enumerate(("scale", "B", "mean", "var"), 1):
        p = ctx.constant_input(i, what)
        if p.dtype != np.float32:
            raise ctx.unsupported(f"unsupported element type {p.dtype} for {what}: BatchNormalization takes "
                                  f"float32 only")
        if list(p.shape) != [shape[1]]:
            raise ctx.error(f"{what} {fmt_shape(p.shape)} must have one entry per channel ({shape[1]})")
        params.append(ctx.value(ctx.input(i)))
    epsilon = ctx.attr("epsilon", FLOAT, 1e-5)
    if epsilon < 0:
        raise ctx.error(f"attribute 'epsilon' {epsilon} must not be negative")
    if len(shape) != 4:
        y = gg.batch_norm(ctx.value(x), *params, epsilon=epsilon, channel_axis=1)
    else:
        y = _nchw(ctx, gg.batch_norm(_nhwc(ctx, x), *params, epsilon=epsilon, channel_axis=3), 2)
    # before opset 7 the node may list the (unused) running statistics outputs, from 14 only in training mode
    return y if len(ctx.node.output) == 1 else [y, *(None for _ in ctx.node.output[1:])]


def _batch_norm_training(ctx: NodeContext, x: Tensor) -> list[Tensor | None]:
    """Training-mode batch normalization (opset 14): Y normalized with the batch's own statistics, the mean and the
    population variance of each channel over the other dims, (x - mean) * (scale / sqrt(var + epsilon)) + B; the
    running statistics out are input_mean * momentum + batch_mean * (1 - momentum) (the variance's too). Every
    input may be computed at run time."""
    shape = shape_of(x)
    if len(shape) < 2:
        raise ctx.error(f"the input must be N x C x ..., got {fmt_shape(shape)}")
    c = shape[1]
    params = []
    for i, what in enumerate(("scale", "B", "input_mean", "input_var"), 1):
        p = ctx.input(i)
        if dtype_of(p) != np.float32:
            raise ctx.unsupported(f"unsupported element type {dtype_of(p)} for {what}: BatchNormalization takes "
                                  f"float32 only")
        if shape_of(p) != [c]:
            raise ctx.error(f"{what} {fmt_shape(shape_of(p))} must have one entry per channel ({c})")
        params.append(ctx.value(p))
    scale, bias, running_mean, running_var = params
    epsilon, momentum = ctx.attr("epsilon", FLOAT, 1e-5), ctx.attr("momentum", FLOAT, 0.9)
    if epsilon < 0:
        raise ctx.error(f"attribute 'epsilon' {epsilon} must not be negative")
    axes = [a for a in range(len(shape)) if a != 1]
    per_channel = [1, c] + [1] * (len(shape) - 2)

    def spread(v: ir.Value) -> ir.Value:
        return gg.broadcast(gg.reshape(v, shape=per_channel), shape=shape)

    xv = ctx.value(x)
    mean = gg.reduce_mean(xv, axes=axes)
    centered = gg.sub(xv, spread(mean))
    var = gg.reduce_mean(gg.mul(centered, centered), axes=axes)
    factor = gg.div(scale, gg.sqrt(gg.add(var, _splat(var, epsilon))))
    y = gg.add(gg.mul(centered, spread(factor)), spread(bias))

    def running(i: int, old: ir.Value, batch: ir.Value) -> ir.Value | None:
        if not ctx.has_output(i):
            return None
        return gg.add(gg.mul(old, _splat(old, momentum)), gg.mul(batch, _splat(batch, 1.0 - momentum)))

    return [y, running(1, running_mean, mean), running(2, running_var, var)][:len(ctx.node.output)]


@onnx_op("LRN", since=1, inputs=(1, 1), attrs=("alpha", "beta", "bias", "size"))
def lrn(ctx: NodeContext) -> Tensor:
    """Local response normalization across channels, in NHWC."""
    x = ctx.input(0)
    _float32(ctx, x)
    nd = _spatial_rank(ctx, x)
    size = ctx.attr("size", INT, None)
    if size is None or size < 1:
        raise ctx.error(f"attribute 'size' is required and must be at least 1, got {size}")
    y = gg.local_response_norm(_nhwc(ctx, x), size=size, alpha=ctx.attr("alpha", FLOAT, 1e-4),
                               beta=ctx.attr("beta", FLOAT, 0.75), bias=ctx.attr("bias", FLOAT, 1.0))
    return _nchw(ctx, y, nd)


# --------------------------------------------------------------------------- padding and clipping


def _pad_mode(ctx: NodeContext) -> str:
    mode = ctx.attr("mode", STRING, b"constant").decode(errors="replace")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise ctx.error(f"attribute 'mode' must be constant, reflect, edge or wrap, got '{mode}'")
    if mode == "wrap" and ctx.opset < 19:
        raise ctx.error("mode 'wrap' needs opset 19")
    return mode


def _padded(ctx: NodeContext, x: Tensor, pads: list[int], value: float, mode: str = "constant") -> Tensor:
    """``x`` padded (or cropped, for negative pads) by pads [begins..., ends...]: filled with ``value``, or with
    the edge element, the reflection about the edge (edge excluded) or the wrapped-around elements (numpy's edge,
    reflect and wrap)."""
    shape = shape_of(x)
    if mode == "constant":
        _float32(ctx, x)
    else:
        ctx.check_element_type(x, "input", MOVABLE)
    if len(pads) != 2 * len(shape):
        raise ctx.error(f"pads {pads} must hold 2 x {len(shape)} entries for an input of rank {len(shape)}")
    if not any(pads):
        return x
    out = [d + pads[i] + pads[len(shape) + i] for i, d in enumerate(shape)]
    if any(d < 1 for d in out) or any(-p > d for p, d in zip(pads, shape * 2)):
        raise ctx.error(f"pads {pads} crop the input {fmt_shape(shape)} to nothing ({fmt_shape(out)})")
    if size := too_large(out):
        raise ctx.error(f"pads {pads} make the input {fmt_shape(shape)} {size}")
    if mode == "constant":
        return gg.pad(ctx.value(x), pads=pads, value=float(value))
    rank = len(shape)
    y = x
    for axis in range(rank):
        before, after = pads[axis], pads[rank + axis]
        if not (before or after):
            continue
        n = shape_of(y)[axis]
        kept = np.arange(n)[max(-before, 0): n - max(-after, 0)]  # negative pads crop first
        if mode == "reflect" and max(before, after) > len(kept) - 1:
            raise ctx.error(f"reflect pads {pads} must be smaller than the dims they pad ({fmt_shape(shape)})")
        index = np.pad(kept, (max(before, 0), max(after, 0)), mode=mode)
        y = _take(ctx, y, axis, index)
    return y


@onnx_op("Pad", since=2, inputs=(1, 1), attrs=("mode", "pads", "value"))
def pad_v2(ctx: NodeContext) -> Tensor:
    """Padding with pads and value as attributes."""
    mode = _pad_mode(ctx)
    if not any(a.name == "pads" for a in ctx.node.attribute):
        raise ctx.error("attribute 'pads' is required")
    return _padded(ctx, ctx.input(0), [int(p) for p in ctx.attr("pads", INTS, [])], ctx.attr("value", FLOAT, 0.0),
                   mode)


@onnx_op("Pad", since=11, inputs=(2, 3), attrs=("mode",))
@onnx_op("Pad", since=18, inputs=(2, 4), attrs=("mode",))
def pad(ctx: NodeContext) -> Tensor:
    """Padding with pads, constant_value and (opset 18) axes as constant inputs."""
    mode = _pad_mode(ctx)
    x = ctx.input(0)
    rank = len(shape_of(x))
    spec = ctx.constant_input(1, "pads")
    if spec.ndim != 1 or spec.dtype.kind not in "iu":
        raise ctx.error(f"the pads input must be a 1-D integer tensor, got {fmt_shape(spec.shape)} {spec.dtype}")
    pads = [int(p) for p in spec]
    value = 0.0
    if ctx.optional_input(2) is not None:
        v = ctx.constant_input(2, "constant_value")
        if v.size != 1:
            raise ctx.error(f"constant_value must hold one value, got {fmt_shape(v.shape)}")
        value = float(v.reshape(-1)[0])
    if ctx.optional_input(3) is not None:
        axes = [int(a) for a in ctx.constant_input(3, "axes").reshape(-1)]
        if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
            raise ctx.error(f"axes {axes} must be distinct dims of a rank-{rank} input")
        if len(pads) != 2 * len(axes):
            raise ctx.error(f"pads {pads} must hold 2 x {len(axes)} entries, one begin and one end per axis")
        full = [0] * (2 * rank)
        for i, a in enumerate(axes):
            full[a % rank], full[rank + a % rank] = pads[i], pads[len(axes) + i]
        pads = full
    return _padded(ctx, x, pads, value, mode)


#: what an absent Clip bound is (ONNX: the type's lowest and largest values)
_F32 = np.finfo(np.float32)


def _clip(ctx: NodeContext, low: float, high: float) -> Tensor:
    x = ctx.input(0)
    _float32(ctx, x)
    if math.isnan(low) or math.isnan(high):
        raise ctx.error(f"the bounds must be numbers, got min {low} and max {high}")
    return gg.clip(ctx.value(x), min=low, max=high)


@onnx_op("Clip", since=6, inputs=(1, 1), attrs=("min", "max"))
def clip_v6(ctx: NodeContext) -> Tensor:
    """min(max(X, min), max) with the bounds as attributes."""
    return _clip(ctx, ctx.attr("min", FLOAT, float(_F32.min)), ctx.attr("max", FLOAT, float(_F32.max)))


@onnx_op("Clip", since=11, inputs=(1, 3))
def clip(ctx: NodeContext) -> Tensor:
    """min(max(X, min), max) with the bounds as optional constant scalar inputs (mobilenet's ReLU6); on integers
    (opset 12 on) as a max and a min with the bounds that are given."""
    x = ctx.input(0)
    if np.issubdtype(dtype_of(x), np.integer):
        y = ctx.value(x)
        for i, what, pick in ((1, "min", gg.max_), (2, "max", gg.min_)):
            if ctx.optional_input(i) is not None:
                v = ctx.constant_input(i, what)
                if v.size != 1 or v.ndim > 1:
                    raise ctx.error(f"{what} must be a scalar, got {fmt_shape(v.shape)}")
                y = pick(y, gg.splat(value=int(v.reshape(-1)[0]), result_types=[y.type]))
        return y
    bounds = []
    for i, what, default in ((1, "min", float(_F32.min)), (2, "max", float(_F32.max))):
        if ctx.optional_input(i) is None:
            bounds.append(default)
            continue
        v = ctx.constant_input(i, what)
        if v.size != 1 or v.ndim > 1:
            raise ctx.error(f"{what} must be a scalar, got {fmt_shape(v.shape)}")
        if v.dtype != np.float32:
            raise ctx.unsupported(f"unsupported element type {v.dtype} for {what}: Clip takes float32 only")
        bounds.append(float(v.reshape(-1)[0]))
    return _clip(ctx, *bounds)



@onnx_op("CenterCropPad", since=18, inputs=(2, 2), attrs=("axes",))
def center_crop_pad(ctx: NodeContext) -> Tensor:
    """Each dim of ``axes`` (default all) cropped or zero-padded to the constant ``shape`` input's entry, centred: a
    crop drops (n - s) // 2 entries in front, a pad puts (s - n) // 2 zeros in front (the odd one goes at the end)."""
    x = ctx.input(0)
    shape = shape_of(x)
    rank = len(shape)
    axes = [int(a) for a in ctx.attr("axes", INTS, list(range(rank)))]
    if any(not -rank <= a < rank for a in axes) or len({a % rank for a in axes}) != len(axes):
        raise ctx.error(f"axes {axes} must be distinct dims of a rank-{rank} input")
    spec = ctx.constant_input(1, "shape")
    if spec.ndim != 1 or spec.dtype.kind not in "iu" or spec.size != len(axes) or (spec < 1).any():
        raise ctx.error(f"the shape input must hold one positive size per axis ({len(axes)}), got {spec.tolist()}")
    pads = [0] * (2 * rank)
    for a, size in zip(axes, spec.tolist()):
        a %= rank
        grow = size - shape[a]
        front = grow // 2 if grow >= 0 else -((-grow) // 2)
        pads[a], pads[rank + a] = front, grow - front
    return _padded(ctx, x, pads, 0.0)
