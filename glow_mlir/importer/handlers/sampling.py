"""AffineGrid, GridSample, RoiAlign and DeformConv: sampling an image at positions a tensor gives (spatial
transformers, the region features of detectors, deformable convolutions).

AffineGrid (theta [N, r, r+1], the constant ``size`` [N, C, *spatial]) is a batched matmul of theta with the
constant homogeneous grid of the output positions ([S, r+1]: x first, then y, z, then 1).

GridSample (X [N, C, *spatial], grid [N, *out, r] of normalized coordinates, x first) has no node of its own: the
positions are known only at run time, so each output element is a weighted sum of a few elements of X, each read by
one ``gather`` of X viewed flat. Per spatial dim the importer computes, in the graph, the unnormalized coordinate
(``align_corners``), rounds it to even for ``nearest``, moves it back inside for the ``border`` (clamped) and
``reflection`` (reflected about the borders until inside) padding modes, then the taps along that dim: 1 for
nearest, 2 for linear, 4 for cubic (Keys, alpha -0.75) with their weights. Every combination of one tap per dim is
one gather of X at the tap's flat index, times the product of the taps' weights; a tap outside X reads 0 (``zeros``:
its weight masked), the edge (``border``) or its reflection (``reflection``), as onnx.reference does. 2-D and 3-D
(volumetric) inputs, float32.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ..builder import NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import fmt_shape
from .core import FLOAT, INT, INTS, STRING, _concat_all, _expand, _reshape, _splat, _transpose, matmul_of
from .datamove import _box

F32, I64 = np.dtype(np.float32), np.dtype(np.int64)
#: Keys' cubic convolution constant, as onnxruntime and PyTorch use
CUBIC_ALPHA = -0.75


# --------------------------------------------------------------------------- AffineGrid


def _base_grid(spatial: list[int], align_corners: bool) -> np.ndarray:
    """The homogeneous normalized coordinates of every output position, [prod(spatial), r + 1]: x (the last dim)
    first, then y (and z), then 1; the positions the centres of the cells, or the corners with ``align_corners``."""
    axes = []
    for n in spatial:
        if align_corners:
            axes.append(np.arange(-1, 1 + 0.0001, 2.0 / (n - 1)) if n > 1 else np.array([-1.0]))
        else:
            step = 2.0 / n
            axes.append(np.arange(-1 + step / 2, 1, step))
    mesh = np.meshgrid(*axes, indexing="ij")
    columns = [m.reshape(-1) for m in reversed(mesh)] + [np.ones(math.prod(spatial))]
    return np.stack(columns, axis=1).astype(np.float32)


@onnx_op("AffineGrid", since=20, inputs=(2, 2), attrs=("align_corners",))
def affine_grid(ctx: NodeContext) -> Tensor:
    """grid[n, *p, :] = theta[n] @ (x, y[, z], 1) of output position p, for 2-D (theta [N, 2, 3]) and 3-D
    (theta [N, 3, 4]) sizes; ``size`` a constant input."""
    theta = ctx.input(0)
    ctx.check_element_type(theta, "theta", (F32,))
    size = [int(v) for v in ctx.constant_input(1, "size").reshape(-1)]
    if len(size) not in (4, 5) or any(v < 1 for v in size):
        raise ctx.error(f"size must be [N, C, H, W] or [N, C, D, H, W] of positive sizes, got {size}")
    n, r = size[0], len(size) - 2
    if shape_of(theta) != [n, r, r + 1]:
        raise ctx.error(f"theta {fmt_shape(shape_of(theta))} must be [N, {r}, {r + 1}] for a size of {size}")
    spatial = size[2:]
    base = ctx.const(_base_grid(spatial, bool(ctx.attr("align_corners", INT, 0))), name=f"{ctx.label}.base")
    grid = matmul_of(ctx, base, _transpose(ctx, theta, [0, 2, 1]))  # [N, S, r]
    return _reshape(ctx, grid, [n, *spatial, r])


# --------------------------------------------------------------------------- GridSample

_MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic", "nearest": "nearest"}


def _f(x: ir.Value, value: float) -> ir.Value:
    return _splat(x, float(value))


def _reflect(x: ir.Value, low: float, high: float) -> ir.Value:
    """``x`` reflected about ``low`` and ``high`` until inside (onnx.reference's ``_gs_reflect``): the distance
    past the near border, folded by the range's length, measured from that border or the other by its parity."""
    span = high - low
    if span <= 0:
        return _f(x, low)
    below = gg.cmp_lt(x, _f(x, low))
    past = gg.select(below, gg.sub(_f(x, low), x), gg.sub(x, _f(x, high)))
    folds = gg.floor(gg.div(past, _f(x, span)))
    rest = gg.sub(past, gg.mul(folds, _f(x, span)))
    even = gg.cmp_eq(gg.sub(folds, gg.mul(gg.floor(gg.div(folds, _f(x, 2))), _f(x, 2))), _f(x, 0))
    from_low, from_high = gg.add(_f(x, low), rest), gg.sub(_f(x, high), rest)
    return gg.select(below, gg.select(even, from_low, from_high), gg.select(even, from_high, from_low))


def _outside(x: ir.Value, low: float, high: float) -> ir.Value:
    return gg.or_(gg.cmp_lt(x, _f(x, low)), gg.cmp_lt(_f(x, high), x))


def _cubic_weights(t: ir.Value) -> list[ir.Value]:
    """Keys' weights of the taps at -1, 0, 1 and 2 from a fractional position ``t`` in [0, 1)."""
    a = CUBIC_ALPHA

    def far(u: ir.Value) -> ir.Value:  # 1 < u < 2: ((a u - 5a) u + 8a) u - 4a
        return gg.sub(gg.mul(gg.add(gg.mul(gg.sub(gg.mul(_f(u, a), u), _f(u, 5 * a)), u), _f(u, 8 * a)), u),
                      _f(u, 4 * a))

    def near(u: ir.Value) -> ir.Value:  # u <= 1: ((a + 2) u - (a + 3)) u u + 1
        return gg.add(gg.mul(gg.mul(gg.sub(gg.mul(_f(u, a + 2), u), _f(u, a + 3)), u), u), _f(u, 1))

    one_minus = gg.sub(_f(t, 1), t)
    return [far(gg.add(t, _f(t, 1))), near(t), near(one_minus), far(gg.add(one_minus, _f(t, 1)))]


def _axis_taps(ctx: NodeContext, coordinate: ir.Value, n: int, mode: str, padding: str,
               align: bool) -> list[tuple[ir.Value, ir.Value | None]]:
    """(index as int64, weight or None for 1) of each tap along one spatial dim of size ``n``, from the normalized
    ``coordinate`` [N, *out]."""
    x = coordinate
    if align:
        x = gg.mul(gg.add(x, _f(x, 1)), _f(x, (n - 1) / 2))
    else:
        x = gg.div(gg.sub(gg.mul(gg.add(x, _f(x, 1)), _f(x, n)), _f(x, 1)), _f(x, 2))
    if mode == "nearest":
        x = gg.round(x)
    low, high = (0.0, n - 1.0) if align else (-0.5, n - 0.5)
    if padding == "border":
        x = gg.select(_outside(x, low, high), gg.clip(x, min=0.0, max=float(n - 1)), x)
    elif padding == "reflection":
        x = gg.select(_outside(x, low, high), _reflect(x, low, high), x)
    return _pixel_taps(x, n, mode, padding, low, high)


def _pixel_taps(x: ir.Value, n: int, mode: str, padding: str, low: float,
                high: float) -> list[tuple[ir.Value, ir.Value | None]]:
    """(index as int64, weight or None for 1) of each tap of a sample at pixel position ``x`` along a dim of ``n``
    entries; a tap outside reads 0 (``zeros``: its weight masked), the edge (``border``) or its reflection about
    ``low`` and ``high`` (``reflection``)."""
    if mode == "nearest":
        positions: list[tuple[ir.Value, ir.Value | None]] = [(x, None)]
    else:
        first = gg.floor(x)
        t = gg.sub(x, first)
        if mode == "linear":
            positions = [(first, gg.sub(_f(t, 1), t)), (gg.add(first, _f(x, 1)), t)]
        else:
            weights = _cubic_weights(t)
            positions = [(gg.add(first, _f(x, k - 1)), weights[k]) for k in range(4)]
    taps = []
    for position, weight in positions:
        # a tap outside X: 0 (its weight masked), the edge, or its reflection; then toward zero, as int() does
        if padding == "zeros":
            inside = gg.cast(gg.not_(_outside(position, 0.0, n - 1.0)), to=mlir_type(F32))
            weight = inside if weight is None else gg.mul(weight, inside)
        elif padding == "reflection":
            position = gg.select(_outside(position, low, high), _reflect(position, low, high), position)
        index = gg.cast(gg.clip(position, min=0.0, max=float(n - 1)), to=mlir_type(I64))
        taps.append((index, weight))
    return taps


def _product(values: list[ir.Value | None]) -> ir.Value | None:
    present = [v for v in values if v is not None]
    result = present[0] if present else None
    for v in present[1:]:
        result = gg.mul(result, v)
    return result


@onnx_op("GridSample", since=16, inputs=(2, 2), attrs=("align_corners", "mode", "padding_mode"))
@onnx_op("GridSample", since=20, inputs=(2, 2), attrs=("align_corners", "mode", "padding_mode"))
def grid_sample(ctx: NodeContext) -> Tensor:
    """Y[n, c, *p] = X[n, c] sampled at grid[n, *p] (see the module docstring)."""
    x, grid = ctx.input(0), ctx.input(1)
    for value, what in ((x, "X"), (grid, "grid")):
        ctx.check_element_type(value, what, (F32,))
    shape, gshape = shape_of(x), shape_of(grid)
    r = len(shape) - 2
    if r not in (2, 3) or gshape != [shape[0], *gshape[1:-1], r] or len(gshape) != r + 2:
        raise ctx.error(f"X {fmt_shape(shape)} and grid {fmt_shape(gshape)} must be [N, C, *spatial] and "
                        f"[N, *out, {max(r, 0)}] with 2 or 3 spatial dims")
    names = ("bilinear", "nearest", "bicubic") if ctx.opset < 20 else ("linear", "nearest", "cubic")
    mode = ctx.attr("mode", STRING, names[0].encode()).decode(errors="replace")
    padding = ctx.attr("padding_mode", STRING, b"zeros").decode(errors="replace")
    if mode not in names:
        raise ctx.error(f"attribute 'mode' must be one of {', '.join(names)}, got '{mode}'")
    if padding not in ("zeros", "border", "reflection"):
        raise ctx.error(f"attribute 'padding_mode' must be zeros, border or reflection, got '{padding}'")
    if mode in ("cubic", "bicubic") and r != 2:
        raise ctx.unsupported("cubic sampling of a 3-D input is not supported (ONNX defines it for 2-D only)")
    align = bool(ctx.attr("align_corners", INT, 0))
    n, c, spatial, out = shape[0], shape[1], shape[2:], gshape[1:-1]
    g = ctx.value(grid)
    per_axis: list[list[tuple[ir.Value, ir.Value | None]]] = []
    for d in range(r):  # grid's last dim holds x first: spatial dim d is its entry r - 1 - d
        component = _reshape(ctx, _box(ctx, g, [0] * (r + 1) + [r - 1 - d], [n, *out, 1]), [n, *out])
        per_axis.append(_axis_taps(ctx, ctx.value(component), spatial[d], _MODES[mode], padding, align))
    strides = [math.prod(spatial[d + 1:]) for d in range(r)]
    size = math.prod(spatial)
    # flat index of X[n, c, 0...]: (n C + c) S, broadcast over the output positions
    origin = ctx.const((np.arange(n * c, dtype=np.int64) * size).reshape([n, c] + [1] * r), name=f"{ctx.label}.origin")
    flat = ctx.value(_reshape(ctx, x, [n * c * size]))
    full = [n, c, *out]
    total = None
    for combination in itertools.product(*per_axis):
        index = None
        for (tap, _), stride in zip(combination, strides):
            term = tap if stride == 1 else gg.mul(tap, gg.splat(value=stride, result_types=[tap.type]))
            index = term if index is None else gg.add(index, term)
        at = gg.add(_expand(ctx, _reshape(ctx, index, [n, 1, *out]), full), _expand(ctx, origin, full))
        value = gg.gather(flat, at, axis=0)
        weight = _product([w for _, w in combination])
        if weight is not None:
            value = gg.mul(value, _expand(ctx, _reshape(ctx, weight, [n, 1, *out]), full))
        total = value if total is None else gg.add(total, value)
    return total


# --------------------------------------------------------------------------- RoiAlign


def _roi_axis(ctx: NodeContext, start: ir.Value, size: ir.Value, bins: int, grid: ir.Value, samples: int,
              n: int) -> tuple[list[tuple[ir.Value, ir.Value]], ir.Value]:
    """Along one axis of the feature map (``n`` entries): for each roi, bin and sample ([R, bins, samples]) the two
    taps (int64 index, weight) of the bilinear interpolation, as onnx.reference's pre-calculation gives them, and
    whether the sample lies on the map (from -1 to n)."""
    r = shape_of(start)[0]
    shape = [r, bins, samples]

    def spread(v: ir.Value) -> ir.Value:
        return _expand(ctx, _reshape(ctx, v, [r, 1, 1]), shape)

    step = gg.div(size, _f(size, bins))  # the bin's size
    at_bin = ctx.value(_expand(ctx, ctx.const(np.arange(bins, dtype=np.float32).reshape(1, -1, 1),
                                              name=f"{ctx.label}.bins"), shape))
    at_sample = ctx.value(_expand(ctx, ctx.const((np.arange(samples, dtype=np.float32) + 0.5).reshape(1, 1, -1),
                                                 name=f"{ctx.label}.samples"), shape))
    position = gg.add(gg.add(spread(start), gg.mul(at_bin, spread(step))),
                      gg.div(gg.mul(at_sample, spread(step)), spread(grid)))
    on_map = gg.not_(_outside(position, -1.0, float(n)))
    position = gg.max_(position, _f(position, 0.0))
    low = gg.floor(position)
    last = gg.cmp_lt(low, _f(low, n - 1.0))  # below the last entry: a second tap above
    low = gg.select(last, low, _f(low, n - 1.0))
    position = gg.select(last, position, low)
    high = gg.select(last, gg.add(low, _f(low, 1.0)), low)
    frac = gg.sub(position, low)
    weights = [gg.sub(_f(frac, 1.0), frac), frac]
    taps = [(gg.cast(p, to=mlir_type(I64)), w) for p, w in zip((low, high), weights)]
    return taps, on_map


@onnx_op("RoiAlign", since=10, inputs=(3, 3),
         attrs=("mode", "output_height", "output_width", "sampling_ratio", "spatial_scale"))
@onnx_op("RoiAlign", since=16, inputs=(3, 3), attrs=("coordinate_transformation_mode", "mode", "output_height",
                                                     "output_width", "sampling_ratio", "spatial_scale"))
def roi_align(ctx: NodeContext) -> Tensor:
    """Y[r, c] = the [output_height, output_width] bins of roi r (rois [R, 4] x1 y1 x2 y2 in the input's scale, of
    image batch_indices[r]), each the average (``mode`` avg) or the maximum (max: the largest of each sample's four
    weighted corners, as onnx.reference and onnxruntime have it) of a grid of bilinear samples: sampling_ratio^2 of
    them, or ceil(roi size / bins) per axis with sampling_ratio 0, which needs known rois (every roi's grid is then
    padded to the largest, the padding masked). Samples off the map count as 0. Gathers of X viewed flat."""
    x, rois, batch = ctx.input(0), ctx.input(1), ctx.input(2)
    ctx.check_element_type(x, "X", (F32,))
    ctx.check_element_type(rois, "rois", (F32,))
    ctx.check_element_type(batch, "batch_indices", (I64, np.dtype(np.int32)))
    shape = shape_of(x)
    r = shape_of(rois)[0] if len(shape_of(rois)) == 2 else -1
    if len(shape) != 4 or shape_of(rois) != [r, 4] or shape_of(batch) != [r]:
        raise ctx.error(f"X {fmt_shape(shape)}, rois {fmt_shape(shape_of(rois))} and batch_indices "
                        f"{fmt_shape(shape_of(batch))} must be [N, C, H, W], [R, 4] and [R]")
    mode = ctx.attr("mode", STRING, b"avg").decode(errors="replace")
    transform = ctx.attr("coordinate_transformation_mode", STRING,
                         b"half_pixel" if ctx.opset >= 16 else b"output_half_pixel").decode(errors="replace")
    if mode not in ("avg", "max") or transform not in ("half_pixel", "output_half_pixel"):
        raise ctx.error(f"mode '{mode}' must be avg or max and coordinate_transformation_mode '{transform}' "
                        "half_pixel or output_half_pixel")
    ph, pw = ctx.attr("output_height", INT, 1), ctx.attr("output_width", INT, 1)
    ratio = ctx.attr("sampling_ratio", INT, 0)
    scale = ctx.attr("spatial_scale", FLOAT, 1.0)
    if ph < 1 or pw < 1 or ratio < 0:
        raise ctx.error(f"output_height {ph} and output_width {pw} must be positive, sampling_ratio {ratio} not "
                        "negative")
    n, c, height, width = shape
    half = transform == "half_pixel"
    box = ctx.value(rois)
    corners = [_reshape(ctx, _box(ctx, box, [0, j], [r, 1]), [r]) for j in range(4)]
    x1, y1, x2, y2 = (gg.sub(gg.mul(ctx.value(v), _f(ctx.value(v), scale)), _f(ctx.value(v), 0.5 if half else 0.0))
                      for v in corners)
    sizes = [gg.sub(y2, y1), gg.sub(x2, x1)]
    if not half:  # malformed rois forced to 1 x 1
        sizes = [gg.max_(s, _f(s, 1.0)) for s in sizes]
    if ratio > 0:
        grids = [np.full(r, ratio, np.float32)] * 2
    else:  # adaptive: ceil(roi size / bins) samples per axis, from known rois
        known = ctx.constant_input(1, "rois").astype(np.float32) * np.float32(scale) - np.float32(0.5 if half else 0)
        extent = [known[:, 3] - known[:, 1], known[:, 2] - known[:, 0]]
        if not half:
            extent = [np.maximum(e, 1.0) for e in extent]
        grids = [np.ceil(e / bins).astype(np.int64).clip(min=1).astype(np.float32) for e, bins in zip(extent, (ph, pw))]
    counts = [int(g.max()) for g in grids]
    grid_values = [ctx.value(ctx.const(g, name=f"{ctx.label}.grid{k}")) for k, g in enumerate(grids)]
    (ytaps, yon), (xtaps, xon) = (_roi_axis(ctx, start, size, bins, grid, samples, extent)
                                  for start, size, bins, grid, samples, extent in
                                  ((y1, sizes[0], ph, grid_values[0], counts[0], height),
                                   (x1, sizes[1], pw, grid_values[1], counts[1], width)))
    # a sample: [R, PH, Gh] x [R, PW, Gw] -> [R, PH, Gh, PW, Gw]; used where on the map and within its roi's grid
    full = [r, ph, counts[0], pw, counts[1]]

    def rows(v: ir.Value) -> ir.Value:
        return _expand(ctx, _reshape(ctx, v, [r, ph, counts[0], 1, 1]), full)

    def cols(v: ir.Value) -> ir.Value:
        return _expand(ctx, _reshape(ctx, v, [r, 1, 1, pw, counts[1]]), full)

    used = gg.and_(rows(yon), cols(xon))
    if ratio == 0:
        within = [(np.arange(m)[None] < g[:, None]) for g, m in zip(grids, counts)]
        mask = within[0][:, None, :, None, None] & within[1][:, None, None, None, :]
        used = gg.and_(used, _expand(ctx, ctx.const(np.broadcast_to(mask, full).copy(), name=f"{ctx.label}.within"),
                                     full))
    weight_mask = gg.cast(used, to=mlir_type(F32))
    index64 = ctx.value(batch) if dtype_of(batch) == I64 else gg.cast(ctx.value(batch), to=mlir_type(I64))
    image = _expand(ctx, _reshape(ctx, index64, [r, 1, 1, 1, 1, 1]), [r, c, *full[1:]])
    base = gg.mul(image, gg.splat(value=c * height * width, result_types=[image.type]))
    base = gg.add(base, ctx.value(_expand(ctx, ctx.const((np.arange(c, dtype=np.int64) * height * width)
                                                                .reshape(1, -1, 1, 1, 1, 1), name=f"{ctx.label}.c"),
                                          [r, c, *full[1:]])))
    flat = ctx.value(_reshape(ctx, x, [n * c * height * width]))
    out = [r, c, *full[1:]]
    values = []
    for (yi, yw), (xi, xw) in itertools.product(ytaps, xtaps):
        spatial = gg.add(gg.mul(rows(yi), gg.splat(value=width, result_types=[rows(yi).type])), cols(xi))
        index = gg.add(base, _expand(ctx, _reshape(ctx, spatial, [r, 1, *full[1:]]), out))
        weight = _expand(ctx, _reshape(ctx, gg.mul(gg.mul(rows(yw), cols(xw)), weight_mask), [r, 1, *full[1:]]), out)
        values.append(gg.mul(gg.gather(flat, index, axis=0), weight))
    if mode == "avg":
        total = values[0]
        for v in values[1:]:
            total = gg.add(total, v)
        summed = gg.reduce_sum(total, axes=[3, 5])
        count = (grids[0] * grids[1]).reshape(-1, 1, 1, 1).astype(np.float32)
        return gg.div(summed, _expand(ctx, ctx.const(count, name=f"{ctx.label}.count"), [r, c, ph, pw]))
    best = values[0]
    for v in values[1:]:
        best = gg.max_(best, v)
    if ratio == 0:  # the padding of a smaller grid never wins
        lowest = _expand(ctx, ctx.const(np.where(np.broadcast_to(mask, full), 0.0, -np.inf).astype(np.float32)
                                        .reshape(r, 1, *full[1:]), name=f"{ctx.label}.pad"), out)
        best = gg.add(best, lowest)
    return gg.reduce_max(best, axes=[3, 5])


# --------------------------------------------------------------------------- DeformConv


@onnx_op("DeformConv", since=19, inputs=(3, 5),
         attrs=("dilations", "group", "kernel_shape", "offset_group", "pads", "strides"))
def deform_conv(ctx: NodeContext) -> Tensor:
    """A 2-D convolution whose every tap reads X at its place plus a learned offset (offset [N, offset_group kH kW
    2, oH, oW], y then x per tap), bilinearly (outside X: 0), times the optional mask: the sampled columns
    [N, C kH kW, oH oW] (gathers of X viewed flat, each offset group's channels at its own positions) times the
    filter per group (matmuls), plus the bias."""
    x, w, offset = ctx.input(0), ctx.input(1), ctx.input(2)
    for value, what in ((x, "X"), (w, "W"), (offset, "offset")):
        ctx.check_element_type(value, what, (F32,))
    shape, wshape, oshape = shape_of(x), shape_of(w), shape_of(offset)
    if len(shape) != 4 or len(wshape) != 4 or len(oshape) != 4:
        raise ctx.unsupported(f"only 2-D deformable convolutions are supported (X {fmt_shape(shape)})")
    n, c, height, width = shape
    oc, cg, kh, kw = wshape
    group, offset_group = ctx.attr("group", INT, 1), ctx.attr("offset_group", INT, 1)
    kernel = [int(v) for v in ctx.attr("kernel_shape", INTS, [kh, kw])]
    strides = [int(v) for v in ctx.attr("strides", INTS, [1, 1])]
    dilations = [int(v) for v in ctx.attr("dilations", INTS, [1, 1])]
    pads = [int(v) for v in ctx.attr("pads", INTS, [0, 0, 0, 0])]
    oh, ow = oshape[2:]
    if (group < 1 or offset_group < 1 or c != cg * group or oc % group or c % offset_group or kernel != [kh, kw]
            or oshape[:2] != [n, offset_group * kh * kw * 2]
            or oh != (height + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
            or ow != (width + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1):
        raise ctx.error(f"X {fmt_shape(shape)}, W {fmt_shape(wshape)}, offset {fmt_shape(oshape)}, group {group} "
                        f"and offset_group {offset_group} do not agree with the kernel, strides, pads and dilations")
    taps = [offset_group, kh, kw]
    full = [n, *taps, oh, ow]
    parts = _reshape(ctx, offset, [n, *taps, 2, oh, ow])

    def component(k: int) -> ir.Value:
        return ctx.value(_reshape(ctx, _box(ctx, parts, [0, 0, 0, 0, k, 0, 0], [n, *taps, 1, oh, ow]), full))

    def base(axis: int) -> ir.Value:  # where each tap of each output position reads without an offset
        out, k = (oh, kh) if axis == 0 else (ow, kw)
        at = (np.arange(out) * strides[axis] - pads[axis])[None, :] + (np.arange(k) * dilations[axis])[:, None]
        shaped = at.reshape([1, 1, k, 1, out, 1] if axis == 0 else [1, 1, 1, k, 1, out]).astype(np.float32)
        return ctx.value(_expand(ctx, ctx.const(shaped, name=f"{ctx.label}.base{axis}"), full))

    # bilinear, a tap off X reading 0 (GridSample's linear mode, zeros padding, align_corners 1)
    ys = _pixel_taps(gg.add(base(0), component(0)), height, "linear", "zeros", 0.0, height - 1.0)
    xs = _pixel_taps(gg.add(base(1), component(1)), width, "linear", "zeros", 0.0, width - 1.0)
    mask = ctx.optional_input(4)
    if mask is not None:
        if shape_of(mask) != [n, offset_group * kh * kw, oh, ow]:
            raise ctx.error(f"mask {fmt_shape(shape_of(mask))} must be "
                            f"{fmt_shape([n, offset_group * kh * kw, oh, ow])}")
        mask = ctx.value(_reshape(ctx, mask, full))
    per_group = c // offset_group
    spread = [n, offset_group, per_group, kh, kw, oh, ow]

    def channels(v: ir.Value) -> ir.Value:  # [N, G, kH, kW, oH, oW] for every channel of its offset group
        return _reshape(ctx, _expand(ctx, _reshape(ctx, v, [n, offset_group, 1, kh, kw, oh, ow]), spread),
                        [n, c, kh, kw, oh, ow])

    origin = ctx.const((np.arange(n * c, dtype=np.int64) * height * width).reshape(n, c, 1, 1, 1, 1),
                       name=f"{ctx.label}.origin")
    flat = ctx.value(_reshape(ctx, x, [n * c * height * width]))
    sampled = None
    for (yi, yw), (xi, xw) in itertools.product(ys, xs):
        index = gg.add(gg.mul(yi, gg.splat(value=width, result_types=[yi.type])), xi)
        weight = gg.mul(yw, xw) if mask is None else gg.mul(gg.mul(yw, xw), mask)
        at = gg.add(ctx.value(channels(index)), ctx.value(_expand(ctx, origin, [n, c, kh, kw, oh, ow])))
        value = gg.mul(gg.gather(flat, at, axis=0), ctx.value(channels(weight)))
        sampled = value if sampled is None else gg.add(sampled, value)
    columns = _reshape(ctx, sampled, [n, c * kh * kw, oh * ow])
    filters = _reshape(ctx, w, [oc, cg * kh * kw])
    outputs = []
    for g in range(group):  # each group's filters times its channels' columns
        rows = _box(ctx, filters, [g * (oc // group), 0], [oc // group, cg * kh * kw])
        block = _box(ctx, columns, [0, g * cg * kh * kw, 0], [n, cg * kh * kw, oh * ow])
        outputs.append(matmul_of(ctx, rows, block))
    y = _reshape(ctx, _concat_all(ctx, outputs, axis=1), [n, oc, oh, ow])
    bias = ctx.optional_input(3)
    if bias is not None:
        if shape_of(bias) != [oc]:
            raise ctx.error(f"B {fmt_shape(shape_of(bias))} must hold one value per output channel ({oc})")
        y = gg.add(ctx.value(y), ctx.value(_expand(ctx, _reshape(ctx, bias, [1, oc, 1, 1]), [n, oc, oh, ow])))
    return y
