"""Copies that interleave a few rows into pixels: ``out[..., x, c] = in[..., c, ..., x]`` with ``C`` channels, fewer
than a vector's lanes (NCHW -> NHWC of an RGB image: a network's input), as vectors of whole runs of pixels.

cpu-vectorize-rest's plan for a transpose onto a short innermost dim reads each channel's row a vector at a time
(:func:`.vectorize._contiguous_input_dim`) but writes every lane by itself, ``C`` elements apart: 48 scalar stores
for 16 pixels of 3 channels. Here a step takes ``lanes`` pixels: one vector load per channel row, the ``C`` vectors
concatenated and permuted into pixel order by ``vector.shuffle`` (LLVM: two-source permutes, ``vpermt2ps`` on
AVX-512), and one store of ``lanes x C`` contiguous elements. A row's last pixels, fewer than the lanes, take the same
step on vectors of their count. (Zen 5, one core, same process: a 3 x 224 x 224 image alone 0.027 -> 0.023 ms
through the API, haswell code 0.028 -> 0.022; with the copy into the first convolution's bordered input joined to
it, a stem of conv 7x7/2, relu and max pool 1.04 -> 1.02 ms, mobilenet_v2 0.986x, resnet18 0.991x.)

Which copies: a ``linalg.generic`` (a generalized ``linalg.transpose`` or copy) that yields its one input, all dims
parallel, the output read in order and the input a permutation of them; the output's innermost dim (``C`` of them,
2 up to the lanes) contiguous and the one before it ``C`` apart, so that a run of pixels is one run of memory; the
input contiguous along that dim of pixels (:func:`interleaved`).

The other way, pixels into channel rows, ``out[..., c, x] = in[..., x, c]`` (NHWC -> NCHW of a network's output with
few channels: a 1x1 convolution to 8 classes at 112x112): the plan read every lane by itself and assembled each
vector through the stack, a store and four 64-byte reloads per element. Here a step loads ``lanes x C`` contiguous
elements once and takes each channel's lanes out by ``vector.shuffle``, one store per channel row
(:func:`deinterleaved`). Zen 5, one core, 1x1 64 -> 8 at 112x112 with its two transposes through the API: 0.62 ->
0.19 ms (onnxruntime 0.21; 64 -> 16, whose transpose runs in 16 x 16 blocks, 0.20).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, memref, vector

from ...passes.conversion.ir_to_linalg import index_constant as _index
from .conv import for_range, for_tasks


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def interleaved(op: ir.Operation, lanes: int) -> int | None:
    """For a copy that interleaves channel rows into pixels (see the module), its number of channels ``C``; else
    None."""
    return _channels(op, lanes, into_pixels=True)


def deinterleaved(op: ir.Operation, lanes: int) -> int | None:
    """For a copy that takes pixels apart into channel rows (see the module), its number of channels ``C``; else
    None."""
    return _channels(op, lanes, into_pixels=False)


def _channels(op: ir.Operation, lanes: int, into_pixels: bool) -> int | None:
    """``C`` of a copy between channel rows and pixels of ``C`` channels, rows into pixels or ``into_pixels`` False
    the other way; else None."""
    if op.name != "linalg.generic" or list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])) != [1, 1]:
        return None
    if any("parallel" not in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])):
        return None
    block = op.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    if len(body) != 1 or body[0].name != "linalg.yield" or len(body[0].operands) != 1 \
            or body[0].operands[0] != block.arguments[0]:
        return None
    src, dest = op.operands
    if not all(isinstance(v.type, ir.MemRefType) and ir.MemRefType(v.type).has_static_shape for v in (src, dest)):
        return None
    src_map, dest_map = _maps(op)
    rank = dest_map.n_dims
    if rank < 2 or dest_map != ir.AffineMap.get_identity(rank) or len(src_map.results) != rank:
        return None
    dims = [e.position if isinstance(e, ir.AffineDimExpr) else -1 for e in src_map.results]
    if sorted(dims) != list(range(rank)):
        return None
    shape = ir.MemRefType(dest.type).shape
    if 0 in shape:
        return None
    dest_strides, _ = ir.MemRefType(dest.type).get_strides_and_offset()
    src_strides, _ = ir.MemRefType(src.type).get_strides_and_offset()
    if into_pixels:  # the input's innermost dim must be the output's pixels, the dim before them its channels
        channels = shape[-1]
        fits = dims[-1] == rank - 2 and dest_strides[-2:] == [channels, 1] and src_strides[-1] == 1
    else:  # the input's innermost dim the output's channels (any dim but its last), the one before it its pixels
        channels = shape[dims[-1]]
        fits = dims[-2] == rank - 1 and src_strides[-2:] == [channels, 1] and dest_strides[-1] == 1
    return channels if fits and 2 <= channels < lanes else None


def _rows_into_pixels(src: ir.Value, flat: ir.Value, dims: list[int], outer: list[ir.Value], x: ir.Value,
                      width: int, channels: int) -> None:
    """Pixels ``[x, x + width)`` of the output row at ``outer`` (the output's dims but the last two): a load from
    each channel's row of ``src``, shuffled into pixel order, one store into ``flat`` (the output with its pixels and
    channels as one dim)."""
    row_type = ir.VectorType.get([width], ir.MemRefType(flat.type).element_type)
    rows = []
    for c in range(channels):
        at = {**dict(enumerate(outer)), len(outer): x, len(outer) + 1: _index(c)}
        rows.append(vector.load(row_type, src, [at[d] for d in dims]))
    joined = rows[0]
    for c in range(1, channels - 1):
        joined = vector.shuffle(joined, rows[c], list(range((c + 1) * width)))
    # lane j of the result: pixel j // C, channel j % C, which sits at (j % C) * width + j // C of the rows in order
    order = [(j % channels) * width + j // channels for j in range(width * channels)]
    pixels = vector.shuffle(joined, rows[-1], order)
    vector.store(pixels, flat, [*outer, arith.muli(x, _index(channels))])


def _pixel_step(flat: ir.Value, dest: ir.Value, dims: list[int], at: dict[int, ir.Value], x: ir.Value, width: int,
                channels: int) -> None:
    """Pixels ``[x, x + width)`` of the output's last dim at the other indices ``at`` (all but the channel dim and
    the last): one load of their ``width x C`` elements from ``flat`` (the input with its pixels and channels as one
    dim), each channel's lanes shuffled out and stored into its row of ``dest``."""
    run_type = ir.VectorType.get([width * channels], ir.MemRefType(flat.type).element_type)
    rank, channel_dim = len(dims), dims[-1]
    pixels = vector.load(run_type, flat, [at[d] for d in dims[:-2]] + [arith.muli(x, _index(channels))])
    for c in range(channels):
        row = vector.shuffle(pixels, pixels, [j * channels + c for j in range(width)])
        where = {**at, channel_dim: _index(c), rank - 1: x}
        vector.store(row, dest, [where[d] for d in range(rank)])


def _indices(r: ir.Value, extents: list[int]) -> list[ir.Value]:
    """Row-major index ``r`` of a space of ``extents`` as one index per dim."""
    indices = []
    for d, extent in enumerate(extents):
        inner = math.prod(extents[d + 1:])
        indices.append(arith.remui(arith.divui(r, _index(inner)), _index(extent)) if inner > 1
                       else arith.remui(r, _index(extent)))
    return indices


def _each_run(rows: int, pixels: int, lanes: int, threads: int,
              step: Callable[[ir.Value, ir.Value, int], None]) -> None:
    """``step(row, x, width)`` for the runs of ``lanes`` pixels of each of ``rows`` rows of ``pixels`` as one loop
    (with ``threads`` above 1, as many tasks of consecutive runs), then for each row's pixels left over."""
    runs, rest = divmod(pixels, lanes)
    items = rows * runs

    def run(i: ir.Value) -> None:  # run i % runs of row i / runs
        step(arith.divui(i, _index(runs)), arith.muli(arith.remui(i, _index(runs)), _index(lanes)), lanes)

    if threads > 1 and items >= threads:
        share = -(-items // threads)

        def task(t: ir.Value) -> None:
            first = arith.muli(t, _index(share))
            for_range(first, arith.minui(arith.addi(first, _index(share)), _index(items)), run)

        for_tasks(threads, task)
    elif items:
        for_range(0, items, run)
    if rest:
        for_range(0, rows, lambda r: step(r, _index(runs * lanes), rest))


def _take_apart(op: ir.Operation, lanes: int, threads: int, channels: int) -> None:
    """The loops of a copy that :func:`deinterleaved` takes: the runs of ``lanes`` pixels of every output row (the
    output's dims but its channel dim and its last), then each row's pixels left over."""
    src, dest = op.operands
    dims = [ir.AffineDimExpr(e).position for e in _maps(op)[0].results]
    shape = ir.MemRefType(dest.type).shape
    outer = [d for d in range(len(shape) - 1) if d != dims[-1]]
    extents = [shape[d] for d in outer]
    with ir.InsertionPoint(op), op.location:
        flat = _flat(src)
        _each_run(math.prod(extents), shape[-1], lanes, threads, lambda r, x, width: _pixel_step(
            flat, dest, dims, dict(zip(outer, _indices(r, extents))), x, width, channels))
    op.erase()


def _put_together(op: ir.Operation, lanes: int, threads: int, channels: int) -> None:
    """The loops of a copy that :func:`interleaved` takes: the runs of ``lanes`` pixels of every output row (all its
    dims but the last two), then each row's pixels left over."""
    src, dest = op.operands
    dims = [ir.AffineDimExpr(e).position for e in _maps(op)[0].results]
    shape = ir.MemRefType(dest.type).shape
    outer = shape[:-2]
    with ir.InsertionPoint(op), op.location:
        flat = _flat(dest)
        _each_run(math.prod(outer), shape[-2], lanes, threads, lambda r, x, width: _rows_into_pixels(
            src, flat, dims, _indices(r, outer), x, width, channels))
    op.erase()


def _flat(value: ir.Value) -> ir.Value:
    """``value`` with its last two dims (contiguous together) as one."""
    t = ir.MemRefType(value.type)
    strides, offset = t.get_strides_and_offset()
    identity = t == ir.MemRefType.get(t.shape, t.element_type)
    layout = None if identity else ir.StridedLayoutAttr.get(offset, [*strides[:-2], 1])
    flat_type = ir.MemRefType.get([*t.shape[:-2], t.shape[-2] * t.shape[-1]], t.element_type, layout)
    outer = t.rank - 2
    return memref.collapse_shape(flat_type, value, [[d] for d in range(outer)] + [[outer, outer + 1]])


def make_kernel(op: ir.Operation, lanes: int, threads: int = 1) -> None:
    """Replace ``op``, a copy that :func:`interleaved` or :func:`deinterleaved` takes, by its loops: the runs of
    ``lanes`` pixels of every output row as one loop (with ``threads`` above 1, cut into as many tasks of consecutive
    runs), then each row's pixels left over."""
    channels = interleaved(op, lanes)
    if channels is not None:
        _put_together(op, lanes, threads, channels)
        return
    apart = deinterleaved(op, lanes)
    assert apart is not None, "interleave.make_kernel: not a copy between channel rows and pixels"
    _take_apart(op, lanes, threads, apart)


__all__ = ["deinterleaved", "interleaved", "make_kernel"]
