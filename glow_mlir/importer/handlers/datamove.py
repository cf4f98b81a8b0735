"""Data movement and shapes: Concat, Split, Slice, Gather, Squeeze, Unsqueeze, Expand, Tile, DepthToSpace,
SpaceToDepth, Shape, Size, ConstantOfShape, Range, CumSum, Trilu and OneHot (Reshape, Flatten, Transpose and
Identity are in ``core``; GatherElements, GatherND and the scatters in ``indexing``; Dropout in ``random``).

Shape chains of known tensors never reach these handlers: static evaluation computes them first (``folding``).
The handlers build the graph for tensors known only at run time; the ones registered with ``folds=True`` make
known tensors themselves, where that reads only a shape (Shape, Size), keeps a fill a splat (ConstantOfShape),
keeps a weight's name (Squeeze, Unsqueeze), or follows the ONNX spec where onnx.reference does not (Slice and
Split: onnx.reference slices like numpy, which differs for a start below -dim with a negative step). What
becomes what:

- Squeeze, Unsqueeze -> reshape; Expand -> broadcast; Tile -> reshape, broadcast, reshape (x[a, b] tiled by
  [r, s] is x viewed as [1, a, 1, b], broadcast to [r, a, s, b], viewed as [r*a, s*b]: no node of its own);
  DepthToSpace, SpaceToDepth -> reshape, transpose, reshape (the numpy definitions of the spec);
- Slice, Split -> slice (a strided box); Gather with constant indices in arithmetic progression -> slice and
  reshape, any other Gather -> gather; Concat -> a chain of binary concats;
- Shape, Size, ConstantOfShape, Range -> known tensors;
- CumSum -> log2(n) adds of the running sums shifted by 1, 2, 4 ... (a box and a concat with zeros each);
- Trilu -> select with a constant triangular mask; OneHot -> select(CmpEQ(the indices spread over the new axis,
  the positions along it), on, off).

A box, a gather or a concat with no elements is an empty known tensor.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ...passes.utils import constant_value
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import compute_dtype, fmt_shape, tensor_to_array, type_name
from .core import INT, INTS, STRING, TENSOR, _broadcast_shape, _concat_all, _expand, _reshape, _splat, _transpose

#: element types data movement carries
MOVABLE = tuple(np.dtype(t) for t in (np.float32, np.int64, np.int32, np.bool_))
#: element types of indices
INDEX = tuple(np.dtype(t) for t in (np.int64, np.int32))

# --------------------------------------------------------------------------- helpers


def _data(ctx: NodeContext, i: int = 0, what: str = "data") -> Tensor:
    """Input ``i``, whose element type data movement must carry."""
    x = ctx.input(i)
    ctx.check_element_type(x, f"{what} input", MOVABLE)
    return x


def _axis(ctx: NodeContext, axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in [-rank, rank) made non-negative."""
    if not -rank <= axis < rank:
        raise ctx.error(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _axes(ctx: NodeContext, axes: Sequence[int], rank: int) -> list[int]:
    """Distinct axes in [-rank, rank) made non-negative."""
    found = [_axis(ctx, a, rank) for a in axes]
    if len(set(found)) != len(found):
        raise ctx.error(f"axes {list(axes)} repeat an axis")
    return found


def _ints(ctx: NodeContext, i: int, what: str) -> list[int]:
    """The values of a known integer input of rank 0 or 1."""
    a = ctx.constant_input(i, what)
    if a.dtype.kind not in "iu" or a.ndim > 1:
        raise ctx.error(f"the {what} input must be a 1-D integer tensor, got {fmt_shape(a.shape)} {a.dtype}")
    return [int(v) for v in a.reshape(-1)]


def _empty(ctx: NodeContext, shape: Sequence[int], dtype: np.dtype) -> Const:
    return ctx.const(np.empty(list(shape), dtype), name=ctx.output_name)


def _box(ctx: NodeContext, x: Tensor, starts: Sequence[int], sizes: Sequence[int],
         steps: Sequence[int] | None = None, name: str | None = None) -> Tensor:
    """x[starts + i * steps] for 0 <= i < sizes: ``x`` itself when it is all of x, a view of a known ``x``."""
    shape = shape_of(x)
    steps = list(steps or [1] * len(shape))
    starts, sizes = list(starts), list(sizes)
    if sizes == shape and not any(starts) and all(k == 1 for k in steps):
        return x
    if 0 in sizes:
        return ctx.const(np.empty(sizes, dtype_of(x)), name=name or ctx.output_name)
    if isinstance(x, Const):
        index = tuple(slice(s, s + n * k if s + n * k >= 0 else None, k) for s, n, k in zip(starts, sizes, steps))
        return ctx.const(x.array[index], name=name or ctx.output_name)
    strided = any(k != 1 for k in steps)
    return gg.slice_(ctx.value(x), starts=starts, sizes=sizes, steps=steps if strided else None)


def _take(ctx: NodeContext, v: Tensor, axis: int, index: np.ndarray) -> Tensor:
    """``v`` gathered at the constant, in-range ``index`` along ``axis``, as cheaply as the pattern allows: itself,
    each element repeated (reshape, broadcast, reshape), a strided box, or a gather."""
    shape = shape_of(v)
    n, out = shape[axis], len(index)
    if out == n and np.array_equal(index, np.arange(n)):
        return v
    if out % n == 0 and np.array_equal(index, np.arange(out) // (out // n)):  # each input repeated
        times = out // n
        spread = _reshape(ctx, v, [*shape[:axis + 1], 1, *shape[axis + 1:]])
        wide = _expand(ctx, spread, [*shape[:axis + 1], times, *shape[axis + 1:]])
        return _reshape(ctx, wide, [*shape[:axis], out, *shape[axis + 1:]])
    step = int(index[1] - index[0]) if out > 1 else 1
    if step > 0 and np.array_equal(index, index[0] + step * np.arange(out)):  # a strided range
        starts = [int(index[0]) if d == axis else 0 for d in range(len(shape))]
        sizes = [out if d == axis else s for d, s in enumerate(shape)]
        return _box(ctx, v, starts, sizes, [step if d == axis else 1 for d in range(len(shape))])
    return gg.gather(ctx.value(v), ctx.value(ctx.const(index.astype(np.int64), name=f"{ctx.label}.index{axis}")),
                     axis=axis)


# --------------------------------------------------------------------------- joining and splitting


def _concat(ctx: NodeContext, default_axis: int | None) -> Tensor:
    xs = [_data(ctx, i, f"#{i}") for i in range(len(ctx.node.input))]
    shapes, dtypes = [shape_of(x) for x in xs], {dtype_of(x) for x in xs}
    if len(dtypes) > 1:
        raise ctx.error(f"inputs have different element types: {', '.join(sorted(map(str, dtypes)))}")
    axis = ctx.attr("axis", INT, default_axis)
    if axis is None:
        raise ctx.error("attribute 'axis' is required")
    axis = _axis(ctx, axis, len(shapes[0]))
    if any(len(s) != len(shapes[0]) or any(a != b for d, (a, b) in enumerate(zip(s, shapes[0])) if d != axis)
           for s in shapes):
        raise ctx.error(f"input shapes {', '.join(map(fmt_shape, shapes))} differ on another dimension than "
                        f"axis {axis}")
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    parts = [x for x in xs if shape_of(x)[axis] > 0]  # ONNX allows empty inputs; they add nothing
    if not parts or 0 in out:
        return _empty(ctx, out, dtype_of(xs[0]))
    return _concat_all(ctx, parts, axis)


@onnx_op("Concat", since=1, inputs=(1, None), attrs=("axis",))
def concat_1(ctx: NodeContext) -> Tensor:
    """Inputs joined along ``axis`` (default 1 before opset 4)."""
    return _concat(ctx, 1)


@onnx_op("Concat", since=4, inputs=(1, None), attrs=("axis",))
def concat(ctx: NodeContext) -> Tensor:
    """Inputs joined along ``axis`` (required; negative from opset 11)."""
    return _concat(ctx, None)


@onnx_op("Split", since=2, inputs=(1, 1), attrs=("axis", "split"), outputs=(1, None), folds=True)
@onnx_op("Split", since=13, inputs=(1, 2), attrs=("axis",), outputs=(1, None), folds=True)
@onnx_op("Split", since=18, inputs=(1, 2), attrs=("axis", "num_outputs"), outputs=(1, None), folds=True)
def split(ctx: NodeContext) -> list[Tensor | None]:
    """One slice per output along ``axis``, of the sizes ``split`` gives (an attribute before opset 13, an input
    from then on); without it, equal parts (from opset 18 the last may be smaller)."""
    x = _data(ctx)
    shape = shape_of(x)
    axis = _axis(ctx, ctx.attr("axis", INT, 0), len(shape))
    n, dim = len(ctx.node.output), shape[axis]
    sizes = ctx.attr("split", INTS, None)
    if ctx.optional_input(1) is not None:
        sizes = _ints(ctx, 1, "split")
    num_outputs = ctx.attr("num_outputs", INT, None)
    if num_outputs is not None and (sizes is not None or num_outputs != n):
        raise ctx.error(f"num_outputs {num_outputs} must match the {n} outputs and come without a split")
    if sizes is None:
        part = -(-dim // n) if ctx.opset >= 18 else dim // n
        if ctx.opset < 18 and dim % n:
            raise ctx.error(f"dimension {axis} of size {dim} does not split into {n} equal parts")
        sizes = [part] * (n - 1) + [dim - part * (n - 1)]
        if sizes[-1] < 0:
            raise ctx.error(f"dimension {axis} of size {dim} cannot split into {n} parts of {part}")
    if len(sizes) != n or any(k < 0 for k in sizes) or sum(sizes) != dim:
        raise ctx.error(f"split {list(sizes)} must give one size >= 0 per output ({n}) adding up to {dim}")
    outputs: list[Tensor | None] = []
    offset = 0
    for name, size in zip(ctx.node.output, sizes):
        starts = [offset if d == axis else 0 for d in range(len(shape))]
        box = [size if d == axis else s for d, s in enumerate(shape)]
        outputs.append(_box(ctx, x, starts, box, name=name) if name else None)
        offset += size
    return outputs


# --------------------------------------------------------------------------- selecting


def _slice_bounds(n: int, start: int, end: int, step: int) -> tuple[int, int]:
    """ONNX Slice on a dim of size n: the first index and the element count, after clamping."""
    start += n if start < 0 else 0
    end += n if end < 0 else 0
    if step > 0:
        start, end = min(max(start, 0), n), min(max(end, 0), n)
    else:
        start, end = min(max(start, 0), n - 1), min(max(end, -1), n - 1)
    count = max(0, -(-(end - start) // step))
    return start, count


@onnx_op("Slice", since=1, inputs=(1, 1), attrs=("starts", "ends", "axes"), folds=True)
@onnx_op("Slice", since=10, inputs=(3, 5), folds=True)
def slice_(ctx: NodeContext) -> Tensor:
    """x[starts:ends:steps] on ``axes`` (default: the first ones), ONNX clamping and negative indices; starts,
    ends, axes and steps must be known (attributes before opset 10, inputs from then on)."""
    x = _data(ctx)
    shape = shape_of(x)
    if ctx.opset < 10:
        starts, ends = ctx.attr("starts", INTS, None), ctx.attr("ends", INTS, None)
        if starts is None or ends is None:
            raise ctx.error("attributes 'starts' and 'ends' are required")
        axes, steps = ctx.attr("axes", INTS, None), None
    else:
        axes = _ints(ctx, 3, "axes") if ctx.optional_input(3) is not None else None
        steps = _ints(ctx, 4, "steps") if ctx.optional_input(4) is not None else None
        if not isinstance(ctx.input(1), Const) and not isinstance(ctx.input(2), Const) and \
                _known_offsets(ctx.operand(1), ctx.operand(2)) is not None:
            return _run_time_slice(ctx, x, axes, steps)
        starts, ends = _ints(ctx, 1, "starts"), _ints(ctx, 2, "ends")
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ctx.error(f"starts {starts}, ends {ends}, axes {axes} and steps {steps} must have one length")
    if 0 in steps:
        raise ctx.error(f"steps {steps} must not hold 0")
    box_starts, sizes, box_steps = [0] * len(shape), list(shape), [1] * len(shape)
    # an axis named twice: the spec forbids it and onnxruntime refuses it, onnx.reference takes the later entry; so
    # does this (the model runs as its reference does)
    for a, start, end, step in zip([_axis(ctx, a, len(shape)) for a in axes], starts, ends, steps):
        box_starts[a], sizes[a] = _slice_bounds(shape[a], start, end, step)
        box_steps[a] = step
    return _box(ctx, x, box_starts, sizes, box_steps)


def _run_time_slice(ctx: NodeContext, x: Tensor, axes: list[int] | None, steps: list[int] | None) -> Tensor:
    """Slice whose starts are computed at run time (a loop's iteration number, say) and whose ends are the starts
    plus known offsets (``Add(starts, k)``, through reshapes), so that the sizes are static: a gather per axis at
    start + step * arange(size). A negative start counts from the end; a start that would leave fewer than ``size``
    elements is moved back so that the slice stays within ``x`` (ONNX would give fewer: the size is dynamic)."""
    shape = shape_of(x)
    starts, ends = ctx.operand(1), ctx.operand(2)
    if len(shape_of(starts)) != 1 or shape_of(starts) != shape_of(ends):
        raise ctx.error(f"starts {fmt_shape(shape_of(starts))} and ends {fmt_shape(shape_of(ends))} must be 1-D "
                        "and of one length")
    m = shape_of(starts)[0]
    offsets = _known_offsets(starts, ends)
    assert offsets is not None, "slice_ checks that the ends are the starts plus known offsets"
    axes = list(range(m)) if axes is None else axes
    steps = [1] * m if steps is None else steps
    if not len(axes) == len(steps) == m or len(offsets) not in (1, m):
        raise ctx.error(f"starts, ends, axes {axes} and steps {steps} must have one length")
    offsets = np.broadcast_to(offsets, [m])
    starts = gg.cast(starts, to=mlir_type(np.dtype(np.int64))) if dtype_of(starts) != np.int64 else starts
    out = ctx.value(x)
    for j, (a, k, step) in enumerate(zip(_axes(ctx, axes, len(shape)), offsets, steps, strict=True)):
        if step == 0:
            raise ctx.error(f"steps {steps} must not hold 0")
        n, count = shape[a], -(-int(k) // step) if step > 0 else -(-int(-k) // -step)
        if count <= 0 or count > n:
            raise ctx.unsupported(f"a slice of {count} elements (ends = starts + {int(k)}, step {step}) of axis {a} "
                                  f"of size {n} at a start computed at run time")
        picks = ctx.value(ctx.const(np.full([count], j, np.int64), name=f"{ctx.label}.entry{j}"))
        start = gg.gather(starts, picks, axis=0)
        start = gg.select(gg.cmp_lt(start, _splat(start, 0)), gg.add(start, _splat(start, n)), start)
        # the first and last elements read must lie in [0, n)
        low, high = (0, n - count) if step > 0 else (count - 1, n - 1)
        start = gg.min_(gg.max_(start, _splat(start, low)), _splat(start, high))
        index = gg.add(start, ctx.value(ctx.const(step * np.arange(count, dtype=np.int64), name=f"{ctx.label}.steps")))
        out = gg.gather(out, index, axis=a)
    return out


def _known_offsets(starts: ir.Value, ends: ir.Value) -> np.ndarray | None:
    """k where ``ends`` is ``starts + k`` (k known; reshapes of either looked through), else None (the starts and
    ends must then be known: Slice's size is static)."""
    def peel(v: ir.Value) -> ir.Value:
        while isinstance(v.owner, (ir.OpView, ir.Operation)) and v.owner.operation.name == "glowgraph.reshape":
            v = v.owner.operation.operands[0]
        return v

    base, end = peel(starts), peel(ends)
    if not isinstance(end.owner, (ir.OpView, ir.Operation)) or end.owner.operation.name != "glowgraph.add":
        return None
    a, b = (peel(v) for v in end.owner.operation.operands)
    for same, other in ((a, b), (b, a)):
        k = constant_value(other)
        if same == base and k is not None and k.size in (1, shape_of(starts)[0]):
            return k.reshape(-1).astype(np.int64)
    return None


@onnx_op("Gather", since=1, inputs=(2, 2), attrs=("axis",))
def gather(ctx: NodeContext) -> Tensor:
    """data[..., indices, ...] on ``axis``; a negative index counts from the end. Known indices in arithmetic
    progression (a range, a reversal, one index) take a slice; any others a gather."""
    data, indices = _data(ctx), ctx.input(1)
    ctx.check_element_type(indices, "indices input", INDEX)
    shape = shape_of(data)
    axis = _axis(ctx, ctx.attr("axis", INT, 0), len(shape))
    n = shape[axis]
    out = shape[:axis] + shape_of(indices) + shape[axis + 1:]
    if not isinstance(indices, Const):
        return gg.gather(ctx.value(data), ctx.value(indices), axis=axis)
    flat = indices.array.reshape(-1).astype(np.int64)
    bad = flat[(flat < -n) | (flat >= n)]
    if bad.size:
        raise ctx.error(f"index {int(bad[0])} is out of range for axis {axis} of size {n}")
    flat = np.where(flat < 0, flat + n, flat)
    if 0 in out:
        return _empty(ctx, out, dtype_of(data))
    step = int(flat[1] - flat[0]) if flat.size > 1 else 1
    if step != 0 and np.array_equal(flat, flat[0] + step * np.arange(flat.size)):
        starts = [int(flat[0]) if d == axis else 0 for d in range(len(shape))]
        sizes = [flat.size if d == axis else s for d, s in enumerate(shape)]
        steps = [step if d == axis else 1 for d in range(len(shape))]
        return _reshape(ctx, _box(ctx, data, starts, sizes, steps), out)
    return gg.gather(ctx.value(data), ctx.value(indices), axis=axis)


# --------------------------------------------------------------------------- shapes


@onnx_op("Squeeze", since=1, inputs=(1, 1), attrs=("axes",), folds=True)
@onnx_op("Squeeze", since=13, inputs=(1, 2), folds=True)
def squeeze(ctx: NodeContext) -> Tensor:
    """Drop the given dims of size 1 (an attribute before opset 13, an input from then on), or all of them."""
    x = _data(ctx)
    shape = shape_of(x)
    axes = _ints(ctx, 1, "axes") if ctx.optional_input(1) is not None else ctx.attr("axes", INTS, None)
    if axes is None:
        axes = [d for d, s in enumerate(shape) if s == 1]
    axes = _axes(ctx, axes, len(shape))
    wide = [a for a in axes if shape[a] != 1]
    if wide:
        raise ctx.error(f"cannot squeeze axis {wide[0]} of size {shape[wide[0]]} (input {fmt_shape(shape)})")
    return _reshape(ctx, x, [s for d, s in enumerate(shape) if d not in axes])


@onnx_op("Unsqueeze", since=1, inputs=(1, 1), attrs=("axes",), folds=True)
@onnx_op("Unsqueeze", since=13, inputs=(2, 2), folds=True)
def unsqueeze(ctx: NodeContext) -> Tensor:
    """Insert dims of size 1 at ``axes`` of the result (an attribute before opset 13, an input from then on)."""
    x = _data(ctx)
    shape = shape_of(x)
    axes = _ints(ctx, 1, "axes") if ctx.opset >= 13 else ctx.attr("axes", INTS, None)
    if axes is None:
        raise ctx.error("attribute 'axes' is required")
    rank = len(shape) + len(axes)
    axes = _axes(ctx, axes, rank)
    rest = iter(shape)
    return _reshape(ctx, x, [1 if d in axes else next(rest) for d in range(rank)])


@onnx_op("Expand", since=8, inputs=(2, 2))
def expand(ctx: NodeContext) -> Tensor:
    """Broadcast to the numpy broadcast of the input's shape and the known ``shape``."""
    x = _data(ctx, 0, "input")
    dims = _ints(ctx, 1, "shape")
    if any(d < 0 for d in dims):
        raise ctx.error(f"shape {dims} has a negative dimension")
    out = _broadcast_shape(ctx, shape_of(x), dims)
    if 0 in out:
        return _empty(ctx, out, dtype_of(x))
    return _expand(ctx, x, out)


@onnx_op("Tile", since=6, inputs=(2, 2))
def tile(ctx: NodeContext) -> Tensor:
    """The input repeated ``repeats[d]`` times along each dim d: a reshape that puts a dim of 1 before every
    repeated dim, a broadcast of those to the repeats, and a reshape that merges each pair."""
    x = _data(ctx, 0, "input")
    shape = shape_of(x)
    repeats = _ints(ctx, 1, "repeats")
    if len(repeats) != len(shape) or any(r < 0 for r in repeats):
        raise ctx.error(f"repeats {repeats} must hold one count >= 0 per dimension of the {fmt_shape(shape)} input")
    out = [s * r for s, r in zip(shape, repeats)]
    if 0 in out:
        return _empty(ctx, out, dtype_of(x))
    if all(r == 1 for r in repeats):
        return x
    spread = [d for s, r in zip(shape, repeats) for d in ([s] if r == 1 else [1, s])]
    big = [d for s, r in zip(shape, repeats) for d in ([s] if r == 1 else [r, s])]
    return _reshape(ctx, _expand(ctx, _reshape(ctx, x, spread), big), out)


def _block_size(ctx: NodeContext, x: Tensor) -> tuple[list[int], int, str]:
    """The NCHW shape of ``x`` (rank 4), the ``blocksize`` attribute (positive) and ``mode`` (DCR or CRD)."""
    shape = shape_of(x)
    if len(shape) != 4:
        raise ctx.error(f"the input must have rank 4 (NCHW), got {fmt_shape(shape)}")
    block = ctx.attr("blocksize", INT, None)
    if block is None or block < 1:
        raise ctx.error(f"attribute 'blocksize' must be a positive integer, got {block}")
    mode = ctx.attr("mode", STRING, b"DCR").decode("utf-8", "replace")
    if mode not in ("DCR", "CRD"):
        raise ctx.error(f"attribute 'mode' must be 'DCR' or 'CRD', got '{mode}'")
    return shape, block, mode


@onnx_op("DepthToSpace", since=1, inputs=(1, 1), attrs=("blocksize",))
@onnx_op("DepthToSpace", since=11, inputs=(1, 1), attrs=("blocksize", "mode"))
def depth_to_space(ctx: NodeContext) -> Tensor:
    """Channels moved into blocksize x blocksize spatial blocks: [N, C, H, W] -> [N, C/b^2, H*b, W*b]. DCR (the
    default) reads the channel as (row, column, depth), CRD as (depth, row, column)."""
    x = _data(ctx, 0, "input")
    (n, c, h, w), b, mode = _block_size(ctx, x)
    if c % (b * b):
        raise ctx.error(f"the {c} channels do not divide into blocks of {b} x {b}")
    if mode == "DCR":
        split, perm = [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2]
    else:
        split, perm = [n, c // (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3]
    return _reshape(ctx, _transpose(ctx, _reshape(ctx, x, split), perm), [n, c // (b * b), h * b, w * b])


@onnx_op("SpaceToDepth", since=1, inputs=(1, 1), attrs=("blocksize",))
@onnx_op("SpaceToDepth", since=28, inputs=(1, 1), attrs=("blocksize", "mode"))
def space_to_depth(ctx: NodeContext) -> Tensor:
    """blocksize x blocksize spatial blocks moved into the channels: [N, C, H, W] -> [N, C*b^2, H/b, W/b], the inverse
    of DepthToSpace in the same mode (DCR, the default: the block position outside the depth; CRD: inside)."""
    x = _data(ctx, 0, "input")
    (n, c, h, w), b, mode = _block_size(ctx, x)
    if h % b or w % b:
        raise ctx.error(f"the spatial dims {h} x {w} do not divide into blocks of {b} x {b}")
    perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    blocks = _transpose(ctx, _reshape(ctx, x, [n, c, h // b, b, w // b, b]), perm)
    return _reshape(ctx, blocks, [n, c * b * b, h // b, w // b])


@onnx_op("Shape", since=1, inputs=(1, 1), folds=True)
@onnx_op("Shape", since=15, inputs=(1, 1), attrs=("start", "end"), folds=True)
def shape(ctx: NodeContext) -> Tensor:
    """The input's static shape (dims start to end, clamped, from opset 15): a known int64 tensor."""
    dims = shape_of(ctx.input(0))
    rank = len(dims)
    start, end = ctx.attr("start", INT, 0), ctx.attr("end", INT, rank)
    start, end = (min(max(i + rank if i < 0 else i, 0), rank) for i in (start, end))
    return ctx.const(np.array(dims[start:end], dtype=np.int64), name=ctx.output_name)


@onnx_op("Size", since=1, inputs=(1, 1), folds=True)
def size(ctx: NodeContext) -> Tensor:
    """The input's element count: a known int64 scalar."""
    return ctx.const(np.array(math.prod(shape_of(ctx.input(0))), dtype=np.int64), name=ctx.output_name)


@onnx_op("ConstantOfShape", since=9, inputs=(1, 1), attrs=("value",), folds=True)
def constant_of_shape(ctx: NodeContext) -> Tensor:
    """A tensor of the known ``shape`` filled with ``value`` (one element; default float 0): a broadcast view
    of that element, which the graph holds as a splat, however large."""
    dims = _ints(ctx, 0, "shape")
    if any(d < 0 for d in dims):
        raise ctx.error(f"shape {dims} has a negative dimension")
    value = ctx.attr("value", TENSOR, None)
    fill = np.zeros(1, np.float32) if value is None else tensor_to_array(value, f"{ctx.where}: attribute 'value'")
    if fill.size != 1:
        raise ctx.error(f"attribute 'value' must hold one element, got {fill.size}")
    return ctx.const(np.broadcast_to(fill.reshape(()), dims), name=ctx.output_name)


@onnx_op("Compress", since=9, inputs=(2, 2), attrs=("axis",))
@onnx_op("Compress", since=11, inputs=(2, 2), attrs=("axis",))
def compress(ctx: NodeContext) -> Tensor:
    """The slices of the input along ``axis`` (the flattened input without one) where the constant ``condition`` is
    true (a condition shorter than the axis leaves out the rest): the output's length depends on the condition's
    values, so it must be known at import."""
    data = _data(ctx)
    condition = ctx.constant_input(1, "condition")
    if condition.ndim != 1:
        raise ctx.error(f"condition must be 1-D, got {fmt_shape(condition.shape)}")
    axis = ctx.attr("axis", INT, None)
    if axis is None:
        data = _reshape(ctx, data, [math.prod(shape_of(data))])
        axis = 0
    axis = _axis(ctx, axis, len(shape_of(data)))
    n = shape_of(data)[axis]
    if condition.size > n:
        raise ctx.error(f"condition has {condition.size} entries, more than the {n} of axis {axis}")
    index = np.nonzero(condition.astype(bool))[0].astype(np.int64)
    if index.size == 0:
        return _empty(ctx, [0 if d == axis else s for d, s in enumerate(shape_of(data))], dtype_of(data))
    return _take(ctx, data, axis, index)


@onnx_op("EyeLike", since=9, inputs=(1, 1), attrs=("dtype", "k"))
def eye_like(ctx: NodeContext) -> Tensor:
    """Ones on diagonal ``k`` (0 the main one, > 0 above, < 0 below) of a 2-D tensor of the input's shape, zeros
    elsewhere: a known tensor (the input's values are not read), of element type ``dtype`` (default the input's)."""
    shape = shape_of(ctx.input(0))
    if len(shape) != 2:
        raise ctx.error(f"the input must be 2-D, got {fmt_shape(shape)}")
    to = ctx.attr("dtype", INT, None)
    dtype = dtype_of(ctx.input(0)) if to is None else compute_dtype(to)
    if dtype is None:
        raise ctx.unsupported(f"unsupported element type {type_name(to)} for attribute 'dtype'")
    return ctx.const(np.eye(*shape, k=ctx.attr("k", INT, 0), dtype=dtype), name=ctx.output_name)


@onnx_op("Range", since=11, inputs=(3, 3), folds=True)
def range_(ctx: NodeContext) -> Tensor:
    """start, start + delta, ... up to limit (excluded), from known scalars: a known tensor."""
    start, limit, delta = (ctx.constant_input(i, what) for i, what in enumerate(("start", "limit", "delta")))
    if any(a.size != 1 for a in (start, limit, delta)) or len({a.dtype for a in (start, limit, delta)}) != 1:
        raise ctx.error("start, limit and delta must be scalars of one element type")
    if delta.item() == 0:
        raise ctx.error("delta must not be 0")
    count = max(math.ceil((limit.item() - start.item()) / delta.item()), 0)
    values = (start.reshape(()) + delta.reshape(()) * np.arange(count)).astype(start.dtype)
    return ctx.const(values, name=ctx.output_name)


# --------------------------------------------------------------------------- masks and one-hot


@onnx_op("Trilu", since=14, inputs=(1, 2), attrs=("upper",))
def trilu(ctx: NodeContext) -> Tensor:
    """The upper (upper=1: j - i >= k) or lower (j - i <= k) triangle of the last two dims, zeros elsewhere, k the
    optional constant second input (default 0): Select(a constant mask, x, 0)."""
    x = _data(ctx)
    shape = shape_of(x)
    if len(shape) < 2:
        raise ctx.error(f"the input must have rank 2 or more, got {fmt_shape(shape)}")
    upper = ctx.attr("upper", INT, 1)
    if upper not in (0, 1):
        raise ctx.error(f"attribute 'upper' must be 0 or 1, got {upper}")
    k = 0
    if ctx.optional_input(1) is not None:
        values = _ints(ctx, 1, "k")
        if len(values) != 1:
            raise ctx.error(f"the k input must hold one value, got {len(values)}")
        k = values[0]
    rows, cols = shape[-2:]
    diagonal = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    mask = diagonal >= k if upper else diagonal <= k
    v = ctx.value(x)
    keep = _expand(ctx, ctx.const(mask, name=f"{ctx.label}.mask"), shape)
    return gg.select(keep, v, ctx.value(ctx.const(np.zeros(shape, dtype_of(x)), name=f"{ctx.label}.zeros")))


@onnx_op("OneHot", since=9, inputs=(3, 3), attrs=("axis",))
def one_hot(ctx: NodeContext) -> Tensor:
    """values[1] where the index equals the position along the new axis, values[0] elsewhere; negative indices
    count from depth, indices outside [-depth, depth) give values[0] everywhere; float indices truncate. depth and
    values are constant inputs."""
    indices = ctx.input(0)
    ctx.check_element_type(indices, "indices", (np.dtype(np.float32), *INDEX))
    depth_value = ctx.constant_input(1, "depth").reshape(-1)
    if depth_value.size != 1:
        raise ctx.error(f"the depth input must hold one value, got {depth_value.size}")
    depth = int(depth_value[0])
    if depth < 1:
        raise ctx.error(f"depth must be positive, got {depth}")
    values = ctx.constant_input(2, "values").reshape(-1)
    if values.size != 2:
        raise ctx.error(f"the values input must hold [off, on], got {values.size} values")
    if values.dtype not in MOVABLE:
        raise ctx.unsupported(f"values of element type {values.dtype} are not supported")
    shape = shape_of(indices)
    rank = len(shape) + 1
    axis = _axis(ctx, ctx.attr("axis", INT, -1), rank)
    out = [*shape[:axis], depth, *shape[axis:]]
    idx = ctx.value(indices)
    if dtype_of(indices) != np.int64:
        idx = gg.cast(idx, to=mlir_type(np.dtype(np.int64)))
    # negative indices count from depth: idx + depth where idx < 0
    idx = gg.select(gg.cmp_lt(idx, _splat(idx, 0)), gg.add(idx, _splat(idx, depth)), idx)
    spread = _expand(ctx, _reshape(ctx, idx, [*shape[:axis], 1, *shape[axis:]]), out)
    position = np.arange(depth, dtype=np.int64).reshape([-1 if i == axis else 1 for i in range(rank)])
    hit = gg.cmp_eq(spread, _expand(ctx, ctx.const(position, name=f"{ctx.label}.position"), out))
    off, on = (ctx.value(ctx.const(np.full(out, v, values.dtype), name=f"{ctx.label}.{n}"))
               for n, v in (("off", values[0]), ("on", values[1])))
    return gg.select(hit, on, off)


# --------------------------------------------------------------------------- scans


def _shifted(ctx: NodeContext, y: ir.Value, axis: int, by: int, backward: bool, fill: int = 0) -> ir.Value:
    """``y`` moved ``by`` places along ``axis`` (towards higher indices, or lower ones when ``backward``), ``fill``
    coming in: a box of y concatenated with a known block of it."""
    shape = shape_of(y)
    n = shape[axis]
    kept = [by if d == axis and backward else 0 for d in range(len(shape))]
    part = _box(ctx, y, kept, [n - by if d == axis else k for d, k in enumerate(shape)])
    zeros = ctx.value(ctx.const(np.full([by if d == axis else k for d, k in enumerate(shape)], fill, dtype_of(y)),
                                name=f"{ctx.label}.fill{by}"))
    return gg.concat(ctx.value(part), zeros, axis=axis) if backward else gg.concat(zeros, ctx.value(part), axis=axis)


@onnx_op("CumSum", since=11, inputs=(2, 2), attrs=("exclusive", "reverse"))
def cum_sum(ctx: NodeContext) -> Tensor:
    """Running sums along the constant axis input: inclusive or exclusive (the element itself left out), forward or
    reverse. A scan in log2(n) steps of whole-tensor adds (Hillis-Steele: y += y shifted by 1, 2, 4 ...), each shift a
    box and a concat with zeros; exact for integers, float sums in that tree order."""
    return _running(ctx, gg.add, 0)


@onnx_op("CumProd", since=26, inputs=(2, 2), attrs=("exclusive", "reverse"))
def cum_prod(ctx: NodeContext) -> Tensor:
    """Running products, as CumSum's running sums with multiplies and ones shifted in."""
    return _running(ctx, gg.mul, 1)


def _running(ctx: NodeContext, combine, identity: int) -> Tensor:
    """The Hillis-Steele scan of CumSum and CumProd: ``combine`` with ``identity`` shifted in."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", (np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.int32)))
    shape = shape_of(x)
    if not shape:
        raise ctx.error("the input must have rank 1 or more")
    axis_values = _ints(ctx, 1, "axis")
    if len(axis_values) != 1:
        raise ctx.error(f"the axis input must hold one value, got {len(axis_values)}")
    axis = _axis(ctx, axis_values[0], len(shape))
    flags = {}
    for name in ("exclusive", "reverse"):
        flags[name] = ctx.attr(name, INT, 0)
        if flags[name] not in (0, 1):
            raise ctx.error(f"attribute '{name}' must be 0 or 1, got {flags[name]}")
    backward, n = bool(flags["reverse"]), shape[axis]
    y = ctx.value(x)
    if flags["exclusive"]:
        if n == 1:
            return ctx.const(np.full(shape, identity, dtype_of(x)))
        y = _shifted(ctx, y, axis, 1, backward, identity)
    return scan(ctx, y, axis, combine, identity, backward)


def scan(ctx: NodeContext, y: ir.Value, axis: int, combine, identity: int, backward: bool = False) -> ir.Value:
    """The inclusive running ``combine`` of ``y`` along ``axis`` (from the end when ``backward``): Hillis-Steele,
    log2(n) whole-tensor steps, each combining y with itself shifted by 1, 2, 4 ... (``identity`` shifted in)."""
    step = 1
    while step < shape_of(y)[axis]:
        y = combine(y, _shifted(ctx, y, axis, step, backward, identity))
        step *= 2
    return y
