"""Resize and Upsample: separable resampling, one axis at a time.

Resizing is separable: each output element along an axis is a weighted sum of a few input elements along that axis
(1 for nearest, 2 for linear, 4 for cubic, more for antialiased downsampling), whose positions and weights depend
only on the output coordinate. Both are computed here, in numpy, from the constant scales or sizes (ONNX's
coordinate transformations and rounding rules, :func:`source_coordinates` and :func:`taps`), and each axis becomes
at most one gather per tap of a constant index vector and a multiply-add with a constant weight vector:

- a tap that takes every input once in order is the input itself; one that repeats each input ``s`` times (nearest
  upsampling by an integer factor, the common case) is a reshape, a broadcast and a reshape; one in arithmetic
  progression (integer downsampling) a strided slice; any other a gather;
- positions outside the input are clamped to its edge (the spec's edge padding), ``exclude_outside`` gives them weight
  0 and renormalizes, and ``tf_crop_and_resize`` writes ``extrapolation_value`` where the source lies outside.

Scales and sizes, and roi, must be constant inputs (an exporter's usual form); element types: float32 for every mode,
and int64, int32 and bool for nearest (a gather only).
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ..builder import NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import fmt_shape
from .core import _expand
from .datamove import MOVABLE, _axis, _take

FLOAT, INT, STRING, INTS, FLOATS = (AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING,
                                    AttributeProto.INTS, AttributeProto.FLOATS)

COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_half_pixel_for_nn", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
MODES = ("nearest", "linear", "cubic")


# --------------------------------------------------------------------------- where each output comes from


def source_coordinates(mode: str, out: int, size: int, scale: float,
                       roi: tuple[float, float] = (0.0, 1.0)) -> tuple[np.ndarray, np.ndarray | None]:
    """The input coordinate of each of ``out`` outputs along an axis of ``size`` inputs resized by ``scale`` (out /
    size when sizes were given), and for tf_crop_and_resize which of them fall outside the input."""
    y = np.arange(out, dtype=np.float64)
    resized = scale * size  # the real-valued output length
    if mode == "align_corners":
        return (np.zeros(out) if resized == 1 else y * (size - 1) / (resized - 1)), None
    if mode == "asymmetric":
        return y / scale, None
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale, None
    if mode == "pytorch_half_pixel":
        return (np.full(out, -0.5) if resized == 1 else (y + 0.5) / scale - 0.5), None
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if mode == "half_pixel_symmetric":
        offset = size / 2 * (1 - out / resized)
        return offset + (y + 0.5) / scale - 0.5, None
    if mode == "tf_crop_and_resize":
        start, end = roi
        x = (np.full(out, (end - start) * (size - 1) / 2) if resized == 1
             else y * (end - start) * (size - 1) / (resized - 1))
        x = x + start * (size - 1)
        return x, (x < 0) | (x > size - 1)
    raise ValueError(mode)


def _cubic(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with coefficient ``a`` at distances ``t``."""
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def taps(kind: str, x: np.ndarray, scale: float, size: int, nearest_mode: str = "round_prefer_floor",
         cubic_a: float = -0.75, antialias: bool = False, exclude_outside: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(indices, weights), both [outputs, taps]: the input elements each output sums and their weights, indices
    clamped into the input (edge padding). Neighbors are the ``n`` inputs nearest the source coordinate, the lower
    ones preferred (an exact integer coordinate takes the window that ends on it)."""
    floor = np.floor(x)
    exact = x == floor
    frac = np.where(exact, 1.0, x - floor)  # in (0, 1]: distance from the neighbor on the left
    if kind == "nearest":
        upper = {"round_prefer_floor": frac > 0.5, "round_prefer_ceil": frac >= 0.5, "floor": exact,
                 "ceil": np.ones_like(exact)}[nearest_mode]
        index = np.where(exact, floor, floor + upper)
        return np.clip(index, 0, size - 1).astype(np.int64)[:, None], np.ones((len(x), 1))
    if kind == "linear":
        support, kernel = 1.0, lambda t: np.clip(1 - np.abs(t), 0, 1)
    else:
        support, kernel = 2.0, lambda t: _cubic(t, cubic_a)
    stretch = min(scale, 1.0) if antialias else 1.0  # antialiased downsampling widens the kernel by 1 / scale
    half = int(math.floor(-support / stretch) + 1)  # first tap's offset from the left neighbor, <= 0
    n = 2 - 2 * half
    offsets = np.arange(half, half + n)  # relative to the left neighbor floor(x) (x - 1 when x is exact)
    left = np.where(exact, x - 1, floor)
    index = left[:, None] + offsets[None, :]
    weights = kernel((offsets[None, :] - frac[:, None]) * stretch)
    if antialias:
        weights = weights / weights.sum(axis=1, keepdims=True)
    if exclude_outside:
        weights = np.where((index < 0) | (index > size - 1), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(index, 0, size - 1).astype(np.int64), weights


# --------------------------------------------------------------------------- the graph




def _along(ctx: NodeContext, v: Tensor, axis: int, index: np.ndarray, weights: np.ndarray,
           outside: np.ndarray | None, extrapolation: float) -> Tensor:
    """One axis resampled: the sum over taps of the gathered input times its weights."""
    shape = list(shape_of(v))
    out = [*shape[:axis], index.shape[0], *shape[axis + 1:]]
    along = [-1 if d == axis else 1 for d in range(len(shape))]
    total: ir.Value | None = None
    for k in range(index.shape[1]):
        w = weights[:, k]
        if not w.any():
            continue
        term = _take(ctx, v, axis, index[:, k])
        if not np.all(w == 1.0):
            scale = ctx.const(w.astype(np.float32).reshape(along), name=f"{ctx.label}.weight{axis}_{k}")
            term = gg.mul(ctx.value(term), _expand(ctx, scale, out))
        total = ctx.value(term) if total is None else gg.add(total, ctx.value(term))
    if total is None:  # every weight 0 (exclude_outside with nothing inside): zeros
        total = ctx.value(ctx.const(np.zeros(out, dtype_of(v)), name=f"{ctx.label}.zeros{axis}"))
    if outside is not None and outside.any():
        fill = ctx.const(np.full(out, extrapolation, dtype_of(v)), name=f"{ctx.label}.extrapolation{axis}")
        mask = _expand(ctx, ctx.const(outside.reshape(along), name=f"{ctx.label}.outside{axis}"), out)
        total = gg.select(mask, ctx.value(fill), total)
    return total


def _string(ctx: NodeContext, name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = ctx.attr(name, STRING, default.encode()).decode(errors="replace")
    if value not in allowed:
        raise ctx.error(f"attribute '{name}' must be one of {', '.join(allowed)}, got '{value}'")
    return value


def _floats(ctx: NodeContext, i: int, what: str) -> list[float] | None:
    """A constant float input, or None when absent or empty."""
    if ctx.optional_input(i) is None:
        return None
    a = ctx.constant_input(i, what)
    return None if a.size == 0 else [float(v) for v in a.reshape(-1)]


def resample(ctx: NodeContext, x: Tensor, kind: str, coordinates: str, scales: list[float] | None,
             sizes: list[int] | None, axes: list[int] | None = None, roi: list[float] | None = None,
             nearest_mode: str = "round_prefer_floor", cubic_a: float = -0.75, antialias: bool = False,
             exclude_outside: bool = False, extrapolation: float = 0.0, policy: str = "stretch") -> Tensor:
    """``x`` resized over ``axes`` (default all) to ``sizes`` or by ``scales``: one :func:`_along` per axis that
    changes."""
    allowed = MOVABLE if kind == "nearest" else (np.dtype(np.float32),)
    ctx.check_element_type(x, "input", allowed)
    shape = shape_of(x)
    rank = len(shape)
    axes = list(range(rank)) if axes is None else [_axis(ctx, a, rank) for a in axes]
    if len(set(axes)) != len(axes):
        raise ctx.error(f"axes {axes} repeat an axis")
    given = sizes if sizes is not None else scales
    if given is None:
        raise ctx.error("one of scales and sizes is required")
    if sizes is not None and scales is not None:
        raise ctx.error("give scales or sizes, not both")
    if len(given) != len(axes):
        raise ctx.error(f"{'sizes' if sizes is not None else 'scales'} {given} must hold one value per axis "
                        f"({len(axes)} for an input of shape {fmt_shape(shape)})")
    if sizes is not None:
        if any(s < 1 for s in sizes):
            raise ctx.error(f"sizes {sizes} must be positive")
        factors = [s / shape[a] for s, a in zip(sizes, axes)]
        if policy != "stretch":
            common = min(factors) if policy == "not_larger" else max(factors)
            factors = [common] * len(axes)
            sizes = [int(common * shape[a] + 0.5) for a in axes]
        out = dict(zip(axes, sizes))
    else:
        if any(s <= 0 for s in scales):
            raise ctx.error(f"scales {scales} must be positive")
        factors = list(scales)
        out = {a: int(s * shape[a]) for s, a in zip(scales, axes)}
        if any(n < 1 for n in out.values()):
            raise ctx.error(f"scales {scales} leave no element of the input {fmt_shape(shape)}")
    bounds = {}
    if roi is not None:
        if len(roi) != 2 * len(axes) and len(roi) != 2 * rank:
            raise ctx.error(f"roi {roi} must hold a start and an end per axis")
        half = len(roi) // 2
        for i, a in enumerate(axes):
            j = a if half == rank else i
            bounds[a] = (roi[j], roi[half + j])
    y = x
    for a, factor in zip(axes, factors):
        window = bounds.get(a, (0.0, 1.0))
        if out[a] == shape[a] and math.isclose(factor, 1.0) and window == (0.0, 1.0):
            continue
        source, outside = source_coordinates(coordinates, out[a], shape[a], factor, window)
        index, weights = taps(kind, source, factor, shape[a], nearest_mode, cubic_a, antialias, exclude_outside)
        y = _along(ctx, y, a, index, weights, outside, extrapolation)
    return y


# --------------------------------------------------------------------------- the handlers


@onnx_op("Resize", since=11, inputs=(1, 4), attrs=("coordinate_transformation_mode", "cubic_coeff_a",
                                                    "exclude_outside", "extrapolation_value", "mode", "nearest_mode"))
@onnx_op("Resize", since=18, inputs=(1, 4), attrs=("antialias", "axes", "coordinate_transformation_mode",
                                                    "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                                                    "keep_aspect_ratio_policy", "mode", "nearest_mode"))
def resize(ctx: NodeContext) -> Tensor:
    """X resized by the constant scales or to the constant sizes (inputs 2 and 3), roi (input 1) for
    tf_crop_and_resize; every mode, coordinate transformation and rounding rule of the spec."""
    kind = _string(ctx, "mode", "nearest", MODES)
    coordinates = _string(ctx, "coordinate_transformation_mode", "half_pixel", COORDINATE_MODES)
    if coordinates == "half_pixel_symmetric" and ctx.opset < 19:
        raise ctx.error("coordinate_transformation_mode 'half_pixel_symmetric' needs opset 19")
    if coordinates == "tf_half_pixel_for_nn" and ctx.opset >= 18:
        raise ctx.error("coordinate_transformation_mode 'tf_half_pixel_for_nn' was removed at opset 18")
    nearest_mode = _string(ctx, "nearest_mode", "round_prefer_floor", NEAREST_MODES)
    antialias = ctx.attr("antialias", INT, 0)
    exclude = ctx.attr("exclude_outside", INT, 0)
    for name, value in (("antialias", antialias), ("exclude_outside", exclude)):
        if value not in (0, 1):
            raise ctx.error(f"attribute '{name}' must be 0 or 1, got {value}")
    policy = _string(ctx, "keep_aspect_ratio_policy", "stretch", ("stretch", "not_larger", "not_smaller"))
    axes = ctx.attr("axes", INTS, None)
    roi = _floats(ctx, 1, "roi")
    if coordinates == "tf_crop_and_resize" and roi is None:
        raise ctx.error("coordinate_transformation_mode 'tf_crop_and_resize' needs the roi input")
    scales = _floats(ctx, 2, "scales")
    sizes = None
    if ctx.optional_input(3) is not None:
        spec = ctx.constant_input(3, "sizes")
        if spec.size:
            sizes = [int(v) for v in spec.reshape(-1)]
    if policy != "stretch" and sizes is None:
        raise ctx.error(f"keep_aspect_ratio_policy '{policy}' needs sizes")
    return resample(ctx, ctx.input(0), kind, coordinates, scales, sizes, None if axes is None else list(axes),
                    None if coordinates != "tf_crop_and_resize" else roi, nearest_mode,
                    ctx.attr("cubic_coeff_a", FLOAT, -0.75), bool(antialias and kind != "nearest"), bool(exclude),
                    ctx.attr("extrapolation_value", FLOAT, 0.0), policy)


def _upsample(ctx: NodeContext, scales: list[float]) -> Tensor:
    """Upsample and Resize-10: asymmetric coordinates, nearest (rounding down) or linear."""
    mode = ctx.attr("mode", STRING, b"nearest").decode(errors="replace")
    kind = {"nearest": "nearest", "linear": "linear", "bilinear": "linear"}.get(mode)
    if kind is None:
        raise ctx.error(f"attribute 'mode' must be nearest or linear, got '{mode}'")
    return resample(ctx, ctx.input(0), kind, "asymmetric", scales, None, nearest_mode="floor")


@onnx_op("Resize", since=10, inputs=(2, 2), attrs=("mode",))
@onnx_op("Upsample", since=9, inputs=(2, 2), attrs=("mode",))
def resize_10(ctx: NodeContext) -> Tensor:
    """X resized by the constant scales input: asymmetric coordinates, nearest rounding down, or linear."""
    scales = _floats(ctx, 1, "scales")
    if scales is None:
        raise ctx.error("the scales input is empty")
    return _upsample(ctx, scales)


@onnx_op("Upsample", since=7, inputs=(1, 1), attrs=("mode", "scales"))
def upsample_7(ctx: NodeContext) -> Tensor:
    """X resized by the scales attribute: asymmetric coordinates, nearest rounding down, or linear."""
    scales = ctx.attr("scales", FLOATS, None)
    if scales is None:
        raise ctx.error("attribute 'scales' is required")
    return _upsample(ctx, [float(s) for s in scales])


__all__ = ["COORDINATE_MODES", "resample", "source_coordinates", "taps"]
