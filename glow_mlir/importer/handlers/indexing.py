"""Indexed data movement: GatherElements, GatherND, ReverseSequence, ScatterND, ScatterElements, Scatter and
TensorScatter; NonZero, Unique and NonMaxSuppression of a known input; TfIdfVectorizer's n-gram counts.

The gathers have no node of their own: each element they read is one element of the data, so they become one
``gather`` (axis 0) on the data viewed flat, at a flat index computed from the indices:

- GatherElements(data, idx, axis): flat[p] = sum over d != axis of p[d] * stride[d], plus idx[p] * stride[axis];
- GatherND(data, idx[..., k], batch_dims b): data viewed as [prod(dims 0 .. b+k-1), dims from b+k on] and
  flat[j] = sum over d < b of j[d] * stride[d] (the batch) plus sum over c < k of idx[j, c] * stride[b + c];

strides are those of the data's leading dims. Known indices give a known flat index (checked in range at import);
run-time ones are computed in the graph in int64 (casts, selects, multiplies, a sum over the last axis), each index
made non-negative (i < 0: i + n) and clamped into its dim, as ``gather`` does with what it gets.

The scatters are one ``scatter_nd`` node: ScatterND is that node (from opset 16 with a reduction), and
ScatterElements (and Scatter, its name at opsets 9 and 10) is a scatter_nd whose indices are the full coordinates of
each update: the update's own position on every dim but ``axis``, the given index on it ([*updates' shape, rank],
known coordinates a constant, run-time ones a concat of constant blocks and the indices). scatter_nd counts a negative
index from the end and writes nothing for one outside its dim; known indices out of range are an error at import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from mlir import ir
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ...errors import NonConstantInputError
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..folding import evaluate
from ..model import fmt_shape
from .core import FLOATS, INT, INTS, STRING, _concat_all, _expand, _reshape, _splat
from .datamove import INDEX, _axis, _box, _data, _empty

I64 = np.dtype(np.int64)
STRINGS = AttributeProto.STRINGS

# --------------------------------------------------------------------------- helpers


def _indices(ctx: NodeContext, i: int = 1) -> Tensor:
    x = ctx.input(i)
    ctx.check_element_type(x, "indices input", INDEX)
    return x


def _strides(shape: Sequence[int]) -> list[int]:
    """Row-major element strides of ``shape``."""
    return [math.prod(shape[d + 1:]) for d in range(len(shape))]


def _known(ctx: NodeContext, indices: np.ndarray, dims: Sequence[int] | int) -> np.ndarray:
    """Known ``indices`` (int64) made non-negative against ``dims`` (one per entry of the last axis, or one for
    all); an index outside [-n, n) is an error."""
    n = np.asarray(dims, dtype=np.int64)
    idx = indices.astype(np.int64)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        where = np.argwhere(bad)[0]
        size = int(n if n.ndim == 0 else n[where[-1]])
        raise ctx.error(f"index {int(idx[tuple(where)])} is out of range for a dim of size {size}")
    return np.where(idx < 0, idx + n, idx)


def _i64(v: ir.Value) -> ir.Value:
    return v if dtype_of(v) == I64 else gg.cast(v, to=mlir_type(I64))


def _fixed(ctx: NodeContext, idx: ir.Value, dims: np.ndarray) -> ir.Value:
    """Run-time int64 ``idx`` made non-negative (i < 0: i + n) and clamped into [0, n - 1]; ``dims`` (n) is one value
    for all, or one per entry of idx's last axis."""
    shape = shape_of(idx)

    def full(values: np.ndarray, what: str) -> ir.Value:
        if values.ndim == 0:
            return gg.splat(value=int(values), result_types=[idx.type])
        return _expand(ctx, ctx.const(values.astype(np.int64), name=f"{ctx.label}.{what}"), shape)

    n, zero = full(dims, "dims"), full(np.array(0), "zero")
    idx = gg.select(gg.cmp_lt(idx, zero), gg.add(idx, n), idx)
    return gg.min_(gg.max_(idx, zero), full(dims - 1, "last"))


def _positions(shape: Sequence[int], dims: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """An int64 array of ``shape``: sum over the d in ``dims`` of the position along d times ``strides[d]``."""
    out = np.zeros(shape, np.int64)
    for d in dims:
        out += (np.arange(shape[d], dtype=np.int64) * strides[d]).reshape([-1 if e == d else 1
                                                                           for e in range(len(shape))])
    return out


def _along_axis(ctx: NodeContext) -> tuple[Tensor, Tensor, int]:
    """(data, indices, axis) of GatherElements and ScatterElements: indices of data's rank, no larger than data on
    the dims other than ``axis``."""
    data, indices = _data(ctx), _indices(ctx)
    shape, ishape = shape_of(data), shape_of(indices)
    axis = _axis(ctx, ctx.attr("axis", INT, 0), len(shape))
    if len(ishape) != len(shape) or any(i > s for d, (i, s) in enumerate(zip(ishape, shape)) if d != axis):
        raise ctx.error(f"indices {fmt_shape(ishape)} must have the rank of data {fmt_shape(shape)} and no larger dims "
                        f"but on axis {axis}")
    return data, indices, axis


# --------------------------------------------------------------------------- gathers


@onnx_op("GatherElements", since=11, inputs=(2, 2), attrs=("axis",))
def gather_elements(ctx: NodeContext) -> Tensor:
    """out[p] = data[p with p[axis] replaced by indices[p]], indices of data's rank, no larger than data on the
    other dims; a negative index counts from the end. A gather of the flat data at a flat index."""
    data, indices, axis = _along_axis(ctx)
    shape, ishape = shape_of(data), shape_of(indices)
    r = len(shape)
    if 0 in ishape:
        return _empty(ctx, ishape, dtype_of(data))
    strides = _strides(shape)
    base = _positions(ishape, [d for d in range(r) if d != axis], strides)
    if isinstance(indices, Const):
        flat = ctx.const(base + _known(ctx, indices.array, shape[axis]) * strides[axis], name=f"{ctx.label}.flat")
    else:
        idx = _fixed(ctx, _i64(ctx.value(indices)), np.array(shape[axis]))
        scaled = gg.mul(idx, gg.splat(value=strides[axis], result_types=[idx.type])) if strides[axis] != 1 else idx
        flat = gg.add(scaled, ctx.value(ctx.const(base, name=f"{ctx.label}.base")))
    return gg.gather(ctx.value(_reshape(ctx, data, [math.prod(shape)])), ctx.value(flat), axis=0)


@onnx_op("GatherND", since=11, inputs=(2, 2))
@onnx_op("GatherND", since=12, inputs=(2, 2), attrs=("batch_dims",))
def gather_nd(ctx: NodeContext) -> Tensor:
    """out[j..] = data[j[:b].., indices[j..]..]: the last dim of indices (k entries) addresses data's dims b to b+k-1
    after the b batch dims that data and indices share; out is indices' dims but the last, then data's dims from
    b+k on. A gather of data viewed as [prod(dims before b+k), the rest] at a flat index."""
    data, indices = _data(ctx), _indices(ctx)
    shape, ishape = shape_of(data), shape_of(indices)
    b = ctx.attr("batch_dims", INT, 0)
    if not ishape or b < 0 or b >= min(len(shape), len(ishape)) or shape[:b] != ishape[:b]:
        raise ctx.error(f"batch_dims {b} must be below the ranks of data {fmt_shape(shape)} and indices "
                        f"{fmt_shape(ishape)}, whose first {b} dims agree")
    k = ishape[-1]
    if k > len(shape) - b:
        raise ctx.error(f"indices address {k} dims, more than data {fmt_shape(shape)} has after {b} batch dims")
    out = ishape[:-1] + shape[b + k:]
    if 0 in out:
        return _empty(ctx, out, dtype_of(data))
    lead = shape[:b + k]
    strides = np.array(_strides(lead)[b:], np.int64)
    base = _positions(ishape[:-1], range(b), _strides(lead))
    if isinstance(indices, Const):
        flat = ctx.const(base + (_known(ctx, indices.array, shape[b:b + k]) * strides).sum(-1),
                         name=f"{ctx.label}.flat")
    elif k == 0:
        flat = ctx.const(base, name=f"{ctx.label}.flat")
    else:
        idx = _fixed(ctx, _i64(ctx.value(indices)), np.array(shape[b:b + k]))
        scaled = gg.mul(idx, _expand(ctx, ctx.const(strides, name=f"{ctx.label}.strides"), ishape))
        flat = gg.reduce_sum(scaled, axes=[len(ishape) - 1])
        if b:
            flat = gg.add(flat, ctx.value(ctx.const(base, name=f"{ctx.label}.base")))
    view = _reshape(ctx, data, [math.prod(lead), *shape[b + k:]])
    return gg.gather(ctx.value(view), ctx.value(flat), axis=0)


@onnx_op("ReverseSequence", since=10, inputs=(2, 2), attrs=("batch_axis", "time_axis"))
def reverse_sequence(ctx: NodeContext) -> Tensor:
    """out[.., b, .., t, ..] = data[.., b, .., L[b] - 1 - t, ..] for t < L[b] = sequence_lens[b], data's element
    elsewhere; ``batch_axis`` and ``time_axis`` are 0 and 1 in either order. A gather of the flat data at a flat
    index (known lengths: a known index; a run-time length is clamped into [0, time steps])."""
    data = _data(ctx)
    shape = shape_of(data)
    if len(shape) < 2:
        raise ctx.error(f"the input must have rank 2 or more, got {fmt_shape(shape)}")
    batch, time = ctx.attr("batch_axis", INT, 1), ctx.attr("time_axis", INT, 0)
    if {batch, time} != {0, 1}:
        raise ctx.error(f"batch_axis {batch} and time_axis {time} must be 0 and 1, in either order")
    lens = _indices(ctx)
    if shape_of(lens) != [shape[batch]]:
        raise ctx.error(f"sequence_lens {fmt_shape(shape_of(lens))} must hold one length per batch entry "
                        f"({shape[batch]})")
    strides = _strides(shape)
    base = _positions(shape, [d for d in range(len(shape)) if d != time], strides)
    along = [-1 if d == time else 1 for d in range(len(shape))]
    steps = np.arange(shape[time], dtype=np.int64).reshape(along)
    per_batch = [-1 if d == batch else 1 for d in range(len(shape))]
    if isinstance(lens, Const):
        n = lens.array.astype(np.int64).reshape(per_batch)
        if (n < 0).any() or (n > shape[time]).any():
            raise ctx.error(f"sequence_lens {lens.array.tolist()} must lie in [0, {shape[time]}]")
        index = np.where(steps < n, n - 1 - steps, steps) * strides[time] + base
        flat = ctx.const(np.ascontiguousarray(index), name=f"{ctx.label}.flat")
    else:
        n = _expand(ctx, _reshape(ctx, _i64(ctx.value(lens)), [shape[batch] if d == batch else 1
                                                               for d in range(len(shape))]), shape)
        n = gg.min_(gg.max_(n, gg.splat(value=0, result_types=[n.type])),
                    gg.splat(value=shape[time], result_types=[n.type]))
        t = _expand(ctx, ctx.const(steps, name=f"{ctx.label}.steps"), shape)
        reversed_ = gg.sub(gg.sub(n, gg.splat(value=1, result_types=[n.type])), t)
        index = gg.select(gg.cmp_lt(t, n), reversed_, t)
        if strides[time] != 1:
            index = gg.mul(index, gg.splat(value=strides[time], result_types=[n.type]))
        flat = gg.add(index, ctx.value(ctx.const(base, name=f"{ctx.label}.base")))
    return gg.gather(ctx.value(_reshape(ctx, data, [math.prod(shape)])), ctx.value(flat), axis=0)


# --------------------------------------------------------------------------- scatters

#: the reductions each opset of ScatterND and ScatterElements knows (none before 16)
_REDUCTIONS = {16: ("none", "add", "mul"), 18: ("none", "add", "mul", "max", "min")}


def _reduction(ctx: NodeContext, data: Tensor) -> str:
    allowed = _REDUCTIONS[18 if ctx.opset >= 18 else 16]
    reduction = ctx.attr("reduction", STRING, b"none").decode("utf-8", "replace")
    if reduction not in allowed:
        raise ctx.error(f"attribute 'reduction' must be one of {', '.join(allowed)} at opset {ctx.opset}, got "
                        f"'{reduction}'")
    if reduction != "none" and dtype_of(data) == np.bool_:
        raise ctx.unsupported(f"reduction '{reduction}' on bool data is not supported")
    return reduction


def _updates(ctx: NodeContext, data: Tensor, shape: Sequence[int]) -> Tensor:
    updates = ctx.input(2)
    if dtype_of(updates) != dtype_of(data) or shape_of(updates) != list(shape):
        raise ctx.error(f"updates {fmt_shape(shape_of(updates))} {dtype_of(updates)} must be {fmt_shape(shape)} "
                        f"{dtype_of(data)}")
    return updates


def _scatter(ctx: NodeContext, data: Tensor, coordinates: Tensor, updates: Tensor, reduction: str) -> Tensor:
    if 0 in shape_of(updates):  # nothing to write
        return data
    return gg.scatter_nd(ctx.value(data), ctx.value(coordinates), ctx.value(updates), reduction=reduction)


@onnx_op("ScatterND", since=11, inputs=(3, 3))
@onnx_op("ScatterND", since=16, inputs=(3, 3), attrs=("reduction",))
def scatter_nd(ctx: NodeContext) -> Tensor:
    """data with updates[j..] written at data[indices[j..]] (the last dim of indices, k entries, addresses data's
    first k dims), or combined with what is there by ``reduction`` (add, mul; max, min from opset 18)."""
    data, indices = _data(ctx), _indices(ctx)
    shape, ishape = shape_of(data), shape_of(indices)
    if not ishape or ishape[-1] > len(shape):
        raise ctx.error(f"indices {fmt_shape(ishape)} must have rank 1 or more and address at most the "
                        f"{len(shape)} dims of data")
    reduction = _reduction(ctx, data)
    k = ishape[-1]
    updates = _updates(ctx, data, ishape[:-1] + shape[k:])
    if isinstance(indices, Const):
        indices = ctx.const(_known(ctx, indices.array, shape[:k]), name=f"{ctx.label}.indices")
    return _scatter(ctx, data, indices, updates, reduction)


@onnx_op("TensorScatter", since=24, inputs=(2, 3), attrs=("axis", "mode"))
def tensor_scatter(ctx: NodeContext) -> Tensor:
    """A KV cache update: past_cache with ``update``'s entries along ``axis`` (not the batch dim 0) written from
    position write_indices[b] of each batch entry b (0 without them; modulo the cache's length with ``mode``
    circular): a scatter_nd at the coordinates of every dim up to ``axis``."""
    cache, update = _data(ctx), ctx.input(1)
    shape, ushape = shape_of(cache), shape_of(update)
    rank = len(shape)
    axis = _axis(ctx, ctx.attr("axis", INT, -2), rank)
    mode = ctx.attr("mode", STRING, b"linear").decode("utf-8", "replace")
    if mode not in ("linear", "circular"):
        raise ctx.error(f"attribute 'mode' must be linear or circular, got '{mode}'")
    if axis == 0 or dtype_of(update) != dtype_of(cache) or len(ushape) != rank or any(
            u != s for d, (u, s) in enumerate(zip(ushape, shape)) if d != axis) or ushape[axis] > shape[axis]:
        raise ctx.error(f"update {fmt_shape(ushape)} must be past_cache {fmt_shape(shape)} but on axis {axis} (not "
                        "0), no longer there")
    lead = ushape[:axis + 1]  # the coordinates: every dim up to the sequence dim
    grid = np.stack(np.meshgrid(*[np.arange(n) for n in lead], indexing="ij"), axis=-1).astype(np.int64)
    steps = grid[..., axis]
    writes = ctx.optional_input(2)
    if writes is None:
        position: Tensor = ctx.const(steps, name=f"{ctx.label}.steps")
    elif isinstance(writes, Const):
        position = ctx.const(writes.array.astype(np.int64).reshape([-1] + [1] * axis) + steps,
                             name=f"{ctx.label}.steps")
    else:
        if shape_of(writes) != [shape[0]]:
            raise ctx.error(f"write_indices {fmt_shape(shape_of(writes))} must hold one index per batch entry")
        start = _expand(ctx, _reshape(ctx, _i64(ctx.value(writes)), [shape[0]] + [1] * axis), lead)
        position = gg.add(start, ctx.value(ctx.const(steps, name=f"{ctx.label}.steps")))
    if mode == "circular":
        if isinstance(position, Const):
            position = ctx.const(position.array % shape[axis], name=f"{ctx.label}.positions")
        else:
            position = gg.mod(ctx.value(position), gg.splat(value=shape[axis], result_types=[position.type]),
                              fmod=0)
    fixed = ctx.const(grid[..., :axis], name=f"{ctx.label}.coordinates")
    coordinates = _concat_all(ctx, [fixed, _reshape(ctx, position, [*lead, 1])], axis=axis + 1)
    return _scatter(ctx, cache, coordinates, update, "none")


@onnx_op("Scatter", since=9, inputs=(3, 3), attrs=("axis",))
@onnx_op("ScatterElements", since=11, inputs=(3, 3), attrs=("axis",))
@onnx_op("ScatterElements", since=16, inputs=(3, 3), attrs=("axis", "reduction"))
def scatter_elements(ctx: NodeContext) -> Tensor:
    """data with updates[p] written at data[p with p[axis] replaced by indices[p]] (or combined by ``reduction``
    from opset 16), indices and updates of one shape and of data's rank: a scatter_nd at the full coordinates."""
    data, indices, axis = _along_axis(ctx)
    shape, ishape = shape_of(data), shape_of(indices)
    r = len(shape)
    reduction = _reduction(ctx, data)
    updates = _updates(ctx, data, ishape)
    if 0 in ishape:
        return data
    grid = np.stack(np.meshgrid(*(np.arange(n, dtype=np.int64) for n in ishape), indexing="ij"), axis=-1)
    if isinstance(indices, Const):
        grid[..., axis] = _known(ctx, indices.array, shape[axis])
        coordinates: Tensor = ctx.const(grid, name=f"{ctx.label}.coordinates")
    else:
        parts = [ctx.const(grid[..., :axis], name=f"{ctx.label}.before"),
                 _reshape(ctx, _i64(ctx.value(indices)), [*ishape, 1]),
                 ctx.const(grid[..., axis + 1:], name=f"{ctx.label}.after")]
        coordinates = _concat_all(ctx, [p for p in parts if shape_of(p)[-1]], axis=r)
    return _scatter(ctx, data, coordinates, updates, reduction)


# --------------------------------------------------------------------------- data-dependent shapes


def _data_dependent(ctx: NodeContext, what: str) -> Const:
    """The known input of a node whose output shape depends on its input's values (``what`` says which dim); when
    the input is computed at run time (every shape here is static), the UnsupportedError naming that dim is a
    NonConstantInputError: a caller that knows the input's value (the ONNX backend) may bind it and compile again."""
    x = ctx.input(0)
    if not isinstance(x, Const):
        raise _needed(ctx, ctx.node.input[0], f"{what} depends on the values of input '{ctx.node.input[0]}', which is "
                      "computed at run time (only a known input is supported: it is evaluated at import)")
    return x


def _needed(ctx: NodeContext, name: str, message: str) -> NonConstantInputError:
    return NonConstantInputError(f"{ctx.where}: {message}", name)


@onnx_op("NonMaxSuppression", since=10, inputs=(2, 5), attrs=("center_point_box",), folds=True)
def non_max_suppression(ctx: NodeContext) -> Tensor:
    """The [count, 3] int64 (batch, class, box) indices of the boxes kept, for known inputs (evaluated by onnx's
    reference implementation); count depends on the boxes' and scores' values."""
    inputs = [ctx.optional_input(i) for i in range(len(ctx.node.input))]
    live = [n for n, x in zip(ctx.node.input, inputs, strict=True) if x is not None and not isinstance(x, Const)]
    if live:
        raise _needed(ctx, live[0], f"the output's dim 0 (the number of boxes kept) depends on the values of input "
                      f"'{live[0]}', which is computed at run time (only known inputs are supported: they are "
                      "evaluated at import)")
    try:
        (kept,) = evaluate(ctx.node, [None if x is None else x.array for x in inputs], ctx.opset)
    except ValueError as e:
        raise ctx.error(str(e)) from None
    return ctx.const(np.asarray(kept, np.int64).reshape(-1, 3), name=ctx.output_name)


@onnx_op("NonZero", since=9, inputs=(1, 1), folds=True)
def non_zero(ctx: NodeContext) -> Tensor:
    """The int64 [rank, count] coordinates of the nonzero elements of a known input, row-major; count, the number
    of them, depends on the values."""
    a = _data_dependent(ctx, "the output's dim 1 (the number of nonzero elements)").array
    if a.ndim == 0:  # no coordinates, one column if the scalar is nonzero (numpy refuses nonzero of a scalar)
        return ctx.const(np.zeros([0, int(a != 0)], np.int64), name=ctx.output_name)
    return ctx.const(np.array(np.nonzero(a), np.int64).reshape(a.ndim, -1), name=ctx.output_name)


@onnx_op("Unique", since=11, inputs=(1, 1), outputs=(1, 4), attrs=("axis", "sorted"), folds=True)
def unique(ctx: NodeContext) -> list[Tensor | None]:
    """The distinct elements of a known input (flattened, or its slices along axis), ascending or (sorted=0) in
    order of first occurrence, with the int64 index of each one's first occurrence, the inverse indices (which
    distinct one each element is) and the counts; their length, the number of distinct ones, depends on the
    values."""
    x = _data_dependent(ctx, "the outputs' length (the number of distinct elements)").array
    axis = ctx.attr("axis", INT, None)
    if axis is not None:
        axis = _axis(ctx, axis, x.ndim)
    values, first, inverse, counts = np.unique(x if axis is not None else x.reshape(-1), axis=axis,
                                               return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if not ctx.attr("sorted", INT, 1):
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values = np.take(values, order, axis=axis or 0)
        first, inverse, counts = first[order], rank[inverse], counts[order]
    results = [values.astype(x.dtype), *(a.astype(np.int64) for a in (first, inverse, counts))]
    return [ctx.const(r, name=name) if name else None for r, name in zip(results, ctx.node.output)]


@onnx_op("TfIdfVectorizer", since=9, inputs=(1, 1),
         attrs=("max_gram_length", "max_skip_count", "min_gram_length", "mode", "ngram_counts", "ngram_indexes",
                "pool_int64s", "pool_strings", "weights"))
def tf_idf_vectorizer(ctx: NodeContext) -> Tensor:
    """The counts of the pool's n-grams (lengths min_gram_length to max_gram_length) in each row of an integer
    input [C] or [B, C], an n-gram's items ``d`` apart for d = 1 .. max_skip_count + 1 (unigrams once), as TF, IDF
    (weight where the count is not 0) or TFIDF (count times weight), float32 [B?, max(ngram_indexes) + 1]. Per n-gram
    length and skip: the input's n shifted views compared with every pool n-gram's items at once, the matches summed;
    the counts then go to their output columns by a matmul with a constant 0/1 matrix."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", INDEX)
    if ctx.attr("pool_strings", STRINGS, None):
        raise ctx.unsupported("string n-grams (pool_strings) are not supported (string tensors are not)")
    shape = shape_of(x)
    if len(shape) not in (1, 2) or 0 in shape:
        raise ctx.error(f"the input must be [C] or [B, C] with elements, got {fmt_shape(shape)}")
    rows, length = (1, shape[0]) if len(shape) == 1 else shape
    lo, hi = ctx.attr("min_gram_length", INT, 0), ctx.attr("max_gram_length", INT, 0)
    skips = ctx.attr("max_skip_count", INT, 0)
    mode = ctx.attr("mode", STRING, b"").decode("utf-8", "replace")
    starts = [int(v) for v in ctx.attr("ngram_counts", INTS, [])]
    indexes = [int(v) for v in ctx.attr("ngram_indexes", INTS, [])]
    pool = np.array(ctx.attr("pool_int64s", INTS, []), np.int64)
    weights = ctx.attr("weights", FLOATS, None)
    if not 1 <= lo <= hi or skips < 0 or mode not in ("TF", "IDF", "TFIDF") or len(starts) < hi or not indexes:
        raise ctx.error(f"min_gram_length {lo}, max_gram_length {hi}, max_skip_count {skips}, mode '{mode}' and "
                        "ngram_counts / ngram_indexes do not describe n-grams to count")
    width = max(indexes) + 1
    if weights is not None and len(weights) != width:
        raise ctx.error(f"weights hold {len(weights)} values for {width} outputs")
    data = _reshape(ctx, x, [rows, length])
    total = None
    first = 0  # the position, among the pool's n-grams, of the first one of this length
    for n in range(1, len(starts) + 1):
        end = starts[n] if n < len(starts) else len(pool)
        grams = pool[starts[n - 1]:end].reshape(-1, n)
        count = len(grams)
        if lo <= n <= hi and count:
            counts = None
            for d in range(1, (skips + 2) if n > 1 else 2):
                steps = length - (n - 1) * d
                if steps <= 0:
                    break
                match = None
                for i in range(n):
                    view = _expand(ctx, _reshape(ctx, _box(ctx, data, [0, i * d], [rows, steps]), [rows, 1, steps]),
                                   [rows, count, steps])
                    items = _expand(ctx, ctx.const(grams[:, i].reshape(1, count, 1).astype(dtype_of(x)),
                                                   name=f"{ctx.label}.gram{n}_{i}"), [rows, count, steps])
                    equal = gg.cmp_eq(view, items)
                    match = equal if match is None else gg.and_(match, equal)
                found = gg.reduce_sum(gg.cast(match, to=mlir_type(np.dtype(np.float32))), axes=[2])
                counts = found if counts is None else gg.add(counts, found)
            if counts is not None:
                columns = np.zeros((count, width), np.float32)
                columns[np.arange(count), indexes[first:first + count]] = 1.0
                placed = gg.matmul(counts, ctx.value(ctx.const(columns, name=f"{ctx.label}.columns{n}")))
                total = placed if total is None else gg.add(total, placed)
        first += count
    if total is None:
        total = ctx.value(ctx.const(np.zeros((rows, width), np.float32), name=f"{ctx.label}.zeros"))
    w = ctx.const(np.asarray(weights if weights is not None else np.ones(width), np.float32).reshape(1, width),
                  name=f"{ctx.label}.weights")
    if mode == "IDF":
        total = gg.mul(gg.cast(gg.cmp_lt(_splat(total, 0.0), total), to=mlir_type(np.dtype(np.float32))),
                       ctx.value(_expand(ctx, w, [rows, width])))
    elif mode == "TFIDF":
        total = gg.mul(total, ctx.value(_expand(ctx, w, [rows, width])))
    return _reshape(ctx, total, [width] if len(shape) == 1 else [rows, width])
