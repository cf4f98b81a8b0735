"""Convolution (dense, depthwise, grouped, and blocked on packed filters), pooling, local response normalization and
padding, on NHWC buffers."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math, memref, scf

from ....dialects.cnn_numpy import lrn_window, pool_counts
from ....dialects.optable import numpy_dtype
from ....dialects.shapes import window_extent
from .basic import fused_activation
from .common import (
    BLOCKED_CONV_ATTR,
    INF,
    SPREAD_ATTR,
    Lowering,
    Operands,
    _constant,
    _dims,
    _expand,
    _memref,
    _update,
    elementwise,
    index_constant,
    module_global,
    row_major_strides,
)
from .datamove import _subview
from .reductions import _reduce_into


def _collapse(value: ir.Value, shape: Sequence[int], reassociation: Sequence[Sequence[int]]) -> ir.Value:
    """``value`` (a contiguous row-major buffer) viewed under a shape that merges some of its dims."""
    src = _memref(value)
    _, offset = src.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(offset, row_major_strides(shape)) if offset else None
    return memref.collapse_shape(ir.MemRefType.get(list(shape), src.element_type, layout=layout), value,
                                 [list(r) for r in reassociation])


def _padded_type(src: ir.MemRefType, pads: Sequence[int], overhang: Sequence[int] = (0, 0),
                 spread: int = 0) -> list[ir.MemRefType]:
    """The scratch buffer holding the NHWC ``src`` inside a border: pads [top, left, bottom, right], the bottom and
    right grown by ``overhang``, each pixel ``spread`` channels longer (:data:`SPREAD_ATTR`); none when there is no
    border and no spread (the kernel reads ``src`` itself)."""
    if not any(pads) and not any(overhang) and not spread:
        return []
    top, left, bottom, right = pads
    n, h, w, c = src.shape
    return [ir.MemRefType.get([n, top + h + bottom + overhang[0], left + w + right + overhang[1], c + spread],
                              src.element_type)]


def _conv_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """A conv2d's bordered input, its pixels spread where cpu-spread-conv-inputs says (:data:`SPREAD_ATTR`)."""
    spread = ir.IntegerAttr(op.attributes[SPREAD_ATTR]).value if SPREAD_ATTR in op.attributes else 0
    return _padded_type(_memref(op.src), op.pads, spread=spread)


def _padded(new: Operands, src: ir.Value, pads: Sequence[int], value: float) -> ir.Value:
    """``src`` inside a border of ``value`` in the op's scratch buffer (:func:`_padded_type`), or ``src`` itself
    when there is none; of a scratch buffer with spread pixels, the view of its first C channels."""
    if not new.scratch:
        return src
    temp = new.scratch[0]
    top, left = pads[0], pads[1]
    m = _memref(src)
    n, h, w, c = m.shape
    _, height, width, wide = _memref(temp).shape
    if wide > c:
        temp = memref.subview(temp, [0, 0, 0, 0], [n, height, width, c], [1, 1, 1, 1])
    fill = _constant(m.element_type, value)
    # the interior first, as an elementwise copy right after whatever wrote src: linalg-outline-kernels may then make
    # it the last update of that kernel, which writes the interior directly (src is never written)
    interior = memref.subview(temp, [0, top, left, 0], [n, h, w, c], [1, 1, 1, 1])
    _update(interior, [src], [ir.AffineMap.get_identity(4)], lambda value, _: value)
    # only the border is filled: the rows above and below, then the columns left and right of the interior rows
    for offsets, sizes in (([0, 0, 0, 0], [n, top, width, c]), ([0, top + h, 0, 0], [n, height - top - h, width, c]),
                           ([0, top, 0, 0], [n, h, left, c]), ([0, top, left + w, 0], [n, h, width - left - w, c])):
        if all(sizes):
            linalg.fill(fill, outs=[memref.subview(temp, offsets, sizes, [1, 1, 1, 1])])
    return temp


def blocked_conv(src: ir.Value, filt: ir.Value, dest: ir.Value, strides: Sequence[int]) -> None:
    """A convolution on a filter packed in blocks of B output channels, ``[F / B, KH, KW, C, B]`` (each block
    contiguous: see cpu-pack-conv-filters) or also in chunks of Cc input channels, ``[F / B, C / Cc, KH, KW, Cc, B]``,
    as one linalg.generic over (n, oh, ow, j, b, kh, kw, c), or (..., kw, q, c) reading input channel q x Cc + c, on
    dest viewed as [N, OH, OW, F / B, B], tagged with its strides: the CPU kernels (backend/kernels/conv.py,
    pixel_tiles.py) run it block by block, and without them it still computes the convolution."""
    n, _, _, _ = _memref(src).shape
    shape = _memref(filt).shape
    blocks, b = shape[0], shape[-1]
    _, oh, ow, _ = _memref(dest).shape
    dest5 = _expand(dest, [n, oh, ow, blocks, b], [[0], [1], [2], [3, 4]])
    if len(shape) == 5:
        d = [ir.AffineDimExpr.get(i) for i in range(8)]  # n, oh, ow, j, b, kh, kw, c
        src_map = ir.AffineMap.get(8, 0, [d[0], d[1] * strides[0] + d[5], d[2] * strides[1] + d[6], d[7]])
        maps = [src_map, _dims(3, 5, 6, 7, 4, rank=8), _dims(0, 1, 2, 3, 4, rank=8)]
    else:  # in chunks of input channels, [F / B, C / Cc, KH, KW, Cc, B]: input channel q x Cc + c
        d = [ir.AffineDimExpr.get(i) for i in range(9)]  # n, oh, ow, j, b, kh, kw, q, c
        src_map = ir.AffineMap.get(9, 0, [d[0], d[1] * strides[0] + d[5], d[2] * strides[1] + d[6],
                                          d[7] * shape[4] + d[8]])
        maps = [src_map, _dims(3, 7, 5, 6, 8, 4, rank=9), _dims(0, 1, 2, 3, 4, rank=9)]
    op = linalg.GenericOp([], [src, filt], [dest5], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          [linalg.IteratorType.parallel] * 5 + [linalg.IteratorType.reduction] * (len(shape) - 2))
    op.attributes[BLOCKED_CONV_ATTR] = ir.DenseI64ArrayAttr.get(list(strides))
    et = _memref(dest).element_type
    block = op.regions[0].blocks.append(et, et, et)
    with ir.InsertionPoint(block):
        x, w, acc = block.arguments
        linalg.YieldOp([arith.addf(acc, arith.mulf(x, w))])


def lower_conv2d(op: ir.OpView, new: Operands) -> None:
    """conv2d(dest, src, filter, bias): the bias broadcast into dest as the initial value, then the convolution
    accumulating onto it, reading src through a zero-padded temporary when there are pads:
      group 1                      -> linalg.conv_2d_nhwc_hwcf
      depthwise (group = C = F)    -> linalg.depthwise_conv_2d_nhwc_hwc on the filter viewed as [KH, KW, C]
      depthwise with a multiplier  -> linalg.depthwise_conv_2d_nhwc_hwcm ([KH, KW, C, F/C] and dest [.., C, F/C])
      any other group count        -> an scf.for over the groups: each group's bias slice, conv_2d_nhwc_hwcf on
                                      its channel slices and its activation (:func:`_group_loop`)
      a packed filter (rank 5, 6)  -> one linalg.generic over the filter's blocks (:func:`blocked_conv`)
    The one place convolutions are lowered: a fast kernel (tiled and vectorized) replaces this function."""
    dest, filt = new.dest, new.filter
    strides, dilations, group = op.strides, op.dilations, op.group
    # the padding first: the bias broadcast then sits right before the convolution, which the kernel takes as its init
    src = _padded(new, new.src, op.pads, 0.0)
    depthwise = group == _memref(src).shape[3] and _memref(filt).shape[-2] == 1
    if _memref(filt).rank == 4 and group > 1 and not depthwise:
        # grouped: each group's bias, convolution and activation together in the loop, which the kernel fuses
        _group_loop(src, filt, dest, group, strides, dilations, new.bias, lambda view: fused_activation(op, view))
        return
    linalg.broadcast(new.bias, outs=[dest], dimensions=[0, 1, 2])
    if _memref(filt).rank in (5, 6):
        blocked_conv(src, filt, dest, strides)
        fused_activation(op, dest)
        return
    conv_into(src, filt, dest, group, strides, dilations)
    fused_activation(op, dest)


def conv_into(src: ir.Value, filt: ir.Value, dest: ir.Value, group: int, strides: Sequence[int],
              dilations: Sequence[int]) -> None:
    """dest += the convolution of the (already bordered) src by the HWCF filt: the named convolution for the
    group, or a loop of them over the groups; float, or int8 operands into an int32 dest."""
    n, oh, ow, f = _memref(dest).shape
    kh, kw, cg, _ = _memref(filt).shape
    c = _memref(src).shape[3]
    if group == 1:
        linalg.conv_2d_nhwc_hwcf(src, filt, outs=[dest], strides=strides, dilations=dilations)
    elif group == c and cg == 1:
        hwc = _collapse(filt, [kh, kw, f], [[0], [1], [2, 3]])
        if f == c:
            linalg.depthwise_conv_2d_nhwc_hwc(src, hwc, outs=[dest], strides=strides, dilations=dilations)
        else:
            hwcm = _expand(hwc, [kh, kw, c, f // c], [[0], [1], [2, 3]])
            dest5 = _expand(dest, [n, oh, ow, c, f // c], [[0], [1], [2], [3, 4]])
            linalg.depthwise_conv_2d_nhwc_hwcm(src, hwcm, outs=[dest5], strides=strides, dilations=dilations)
    else:
        _group_loop(src, filt, dest, group, strides, dilations)


def _group_loop(src: ir.Value, filt: ir.Value, dest: ir.Value, group: int, strides: Sequence[int],
                dilations: Sequence[int], bias: ir.Value | None = None,
                epilogue: Callable[[ir.Value], None] | None = None) -> None:
    """A grouped convolution as an scf.for over the groups, each step the named convolution of group ``g``'s channel
    slices of src, filt and dest (views at offsets ``g x C/G`` and ``g x F/G``): the convolution kernels take each
    as they take any convolution, where one linalg.generic over (n, oh, ow, g, f, kh, kw, c) ran unvectorized
    (alexnet's convolutions of 2 groups: the network at 13x onnxruntime's time). One loop, not one convolution per
    group: the compile stays the same size whatever the group count. With ``bias`` (float convolutions), each step
    first writes its group's slice of the bias into its slice of dest and ends with ``epilogue`` (the activation) on
    that slice: the kernel takes the three as one island, as it does for an ungrouped convolution."""
    _, _, cg, f = _memref(filt).shape
    fg = f // group
    loop = scf.ForOp(index_constant(0), index_constant(group), index_constant(1))
    with ir.InsertionPoint(loop.body):
        g = loop.induction_variable
        start = arith.muli(g, index_constant(fg))
        views = [channel_slice(src, arith.muli(g, index_constant(cg)), cg), channel_slice(filt, start, fg),
                 channel_slice(dest, start, fg)]
        if bias is not None:
            linalg.broadcast(channel_slice(bias, start, fg), outs=[views[2]], dimensions=[0, 1, 2])
        linalg.conv_2d_nhwc_hwcf(views[0], views[1], outs=[views[2]], strides=strides, dilations=dilations)
        if epilogue is not None:
            epilogue(views[2])
        scf.YieldOp([])


def channel_slice(v: ir.Value, start: ir.Value, size: int) -> ir.Value:
    """Channels ``[start, start + size)`` (the last dim, ``start`` known at run time) of buffer ``v``."""
    t = _memref(v)
    strides, _ = t.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), strides)
    result = ir.MemRefType.get([*t.shape[:-1], size], t.element_type, layout=layout)
    return memref.subview(v, [0] * (t.rank - 1) + [start], [*t.shape[:-1], size], [1] * t.rank, result_type=result)


def _overhang(op: ir.OpView, hw: Sequence[int], out: Sequence[int]) -> list[int]:
    """How far the last windows of a pool reach past the bottom and right pads (ceil_mode)."""
    pads = op.pads
    return [max(0, (out[i] - 1) * op.strides[i] + window_extent(op.kernels[i], op.dilations[i])
                - hw[i] - pads[i] - pads[i + 2]) for i in range(2)]


def _pool_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """A pooling's bordered input (pads and ceil_mode overhang), if it has a border."""
    src, dest = _memref(op.src), _memref(op.dest)
    return _padded_type(src, op.pads, _overhang(op, src.shape[1:3], dest.shape[1:3]))


#: pooling windows of at most this many positions are lowered as one elementwise op over a view per position; larger
#: ones (a global average pool over 28x28 is 784 positions) as one reduction over a window view, whose size does not
#: grow with the window (784 operands made every later pass slow)
SHIFTED_POSITIONS = 9


def _pool(op: ir.OpView, new: Operands, pad_value: float, combine: Callable[[ir.Value, ir.Value], ir.Value],
          finish: Callable[[ir.Value], ir.Value] | None = None) -> None:
    """dest = ``finish`` (default: none) of the window positions of src (in a border of ``pad_value``: pads and
    overhang) combined by ``combine``, as one elementwise op whose operands are the positions' views, each the
    strided box of src that the position reads for every output element; windows of more than
    :data:`SHIFTED_POSITIONS` positions are one reduction (:func:`_window_reduce`, then ``finish`` as an update).

    Why not linalg.pooling_nhwc_max/sum: their window dims are reductions inside each output element, which the
    vectorizer of the remaining ops (cpu-vectorize-rest) leaves scalar; the shifted views are operands of one
    elementwise op whose innermost dim is the contiguous channels, a vector loop that writes dest once (one update
    per position read and wrote dest nine times for a 3x3 window: resnet18's stem, a 3x3 stride-2 max pool at
    112x112x64, took 0.95 ms on one Xeon core; the stem and pool alone 2.23 -> 1.90 ms)."""
    dest = new.dest
    n, oh, ow, c = _memref(dest).shape
    src = _padded(new, new.src, op.pads, pad_value)
    (sh, sw), (dh, dw) = op.strides, op.dilations
    if op.kernels[0] * op.kernels[1] > SHIFTED_POSITIONS:
        _window_reduce(src, dest, op.kernels, (sh, sw), (dh, dw), pad_value, combine)
        if finish is not None:
            _update(dest, [], [], finish)
        return
    views = [_subview(src, [0, i * dh, j * dw, 0], [n, oh, ow, c], [1, sh, sw, 1])
             for i in range(op.kernels[0]) for j in range(op.kernels[1])]

    def body(*values: ir.Value) -> ir.Value:
        total = functools.reduce(lambda acc, v: combine(v, acc), values[1:], values[0])
        return finish(total) if finish is not None else total

    elementwise(dest, views, body)


def _window_reduce(src: ir.Value, dest: ir.Value, kernels: Sequence[int], strides: Sequence[int],
                   dilations: Sequence[int], neutral: float, combine: Callable[[ir.Value, ir.Value], ir.Value]) -> None:
    """dest = neutral; dest[n, y, x, c] = combine over (i, j) of src[n, y * sh + i * dh, x * sw + j * dw, c], as one
    reduction generic over the window view ``[N, OH, OW, KH, KW, C]`` of src (a reinterpret_cast whose strides
    repeat src's rows and columns): every operand is then read at a projection of the loop dims, which the vectorizer
    takes, with the channels innermost."""
    n, oh, ow, c = _memref(dest).shape
    m = _memref(src)
    (sn, sy, sx, sc), offset = m.get_strides_and_offset()
    shape = [n, oh, ow, kernels[0], kernels[1], c]
    view_strides = [sn, sy * strides[0], sx * strides[1], sy * dilations[0], sx * dilations[1], sc]
    layout = ir.StridedLayoutAttr.get(offset, view_strides)
    window = memref.reinterpret_cast(ir.MemRefType.get(shape, m.element_type, layout=layout), src, [], [], [],
                                     [offset], shape, view_strides)
    linalg.fill(_constant(m.element_type, neutral), outs=[dest])
    _reduce_into(dest, window, [3, 4], combine)


def lower_max_pool(op: ir.OpView, new: Operands) -> None:
    """max_pool(dest, src) -> dest = max over the window positions' strided views of src bordered by -inf (an
    integer type's least value for int8)."""
    et = _memref(new.src).element_type
    if isinstance(et, ir.FloatType):
        _pool(op, new, -INF, arith.maximumf)
    else:
        _pool(op, new, -(1 << (ir.IntegerType(et).width - 1)), arith.maxsi)


def lower_avg_pool(op: ir.OpView, new: Operands) -> None:
    """avg_pool(dest, src) -> dest = sum over the window positions' strided views of src bordered by zeros; then dest
    divided by each window's count: one constant when all windows count alike, else a constant [OH, OW] map
    (a private memref.global) of the counts, known at compile time."""
    src_type, dest_type = _memref(new.src), _memref(new.dest)
    et = dest_type.element_type
    counts = pool_counts(src_type.shape[1:3], op.kernels, op.strides, op.pads, op.dilations, dest_type.shape[1:3],
                         bool(op.count_include_pad))
    if np.all(counts == counts.flat[0]):
        count = _constant(et, float(counts.flat[0]))
        _pool(op, new, 0.0, arith.addf, lambda total: arith.divf(total, count))
        return
    _pool(op, new, 0.0, arith.addf)
    table = module_global(op.operation, "__glow_pool_counts", counts.astype(numpy_dtype(et)))
    _update(new.dest, [table], [_dims(1, 2, rank=4)], lambda n, total: arith.divf(total, n))


def _lrn_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """The squares, bordered along the channels, and their window sums."""
    src = _memref(op.src)
    n, h, w, c = src.shape
    before, after = lrn_window(op.size)
    return [ir.MemRefType.get([n, h, w, before + c + after], src.element_type),
            ir.MemRefType.get(src.shape, src.element_type)]


def lower_local_response_norm(op: ir.OpView, new: Operands) -> None:
    """local_response_norm(dest, src): squares into a zero-bordered channel scratch buffer, their window sums into a
    second one (a reduction generic), then dest = src / (bias + alpha / size * sums) ^ beta. dest is written last,
    from src and scratch buffers only, so it may share src's buffer."""
    src_type = _memref(new.src)
    et = src_type.element_type
    n, h, w, c = src_type.shape
    before, _ = lrn_window(op.size)
    squares, sums = new.scratch
    linalg.fill(_constant(et, 0.0), outs=[squares])
    elementwise(memref.subview(squares, [0, 0, 0, before], [n, h, w, c], [1, 1, 1, 1]), [new.src],
                lambda x: arith.mulf(x, x))
    linalg.fill(_constant(et, 0.0), outs=[sums])
    # over (n, h, w, c, j): channel c sums the squares at c + j of the bordered temporary, j < size; as in the
    # pooling ops, an operand of the window's shape (never read) gives j its bounds
    window = memref.alloca(ir.MemRefType.get([op.size], et), [], [])
    d = [ir.AffineDimExpr.get(i) for i in range(5)]
    maps = [ir.AffineMap.get(5, 0, [d[0], d[1], d[2], d[3] + d[4]]), _dims(4, rank=5), _dims(0, 1, 2, 3, rank=5)]
    window_sum = linalg.GenericOp([], [squares, window], [sums],
                                  ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                                  [linalg.IteratorType.parallel] * 4 + [linalg.IteratorType.reduction])
    block = window_sum.regions[0].blocks.append(et, et, et)
    with ir.InsertionPoint(block):
        square, _, total = block.arguments
        linalg.YieldOp([arith.addf(total, square)])
    bias, scale, beta = (_constant(et, v) for v in (op.bias, op.alpha / op.size, op.beta))
    elementwise(new.dest, [new.src, sums],
                lambda x, s: arith.divf(x, math.powf(arith.addf(bias, arith.mulf(scale, s)), beta)))


def lower_pad(op: ir.OpView, new: Operands) -> None:
    """pad(dest, src){pads, value} -> linalg.fill(value -> dest); linalg.copy of src (cropped by negative pads) into
    the interior of dest."""
    src_shape = _memref(new.src).shape
    rank = len(src_shape)
    linalg.fill(_constant(_memref(new.dest).element_type, op.value), outs=[new.dest])
    begins, ends = op.pads[:rank], op.pads[rank:]
    sizes = [d - max(0, -b) - max(0, -e) for d, b, e in zip(src_shape, begins, ends)]
    ones = [1] * rank
    src = new.src
    if any(b < 0 or e < 0 for b, e in zip(begins, ends)):
        src = memref.subview(src, [max(0, -b) for b in begins], sizes, ones)
    linalg.copy(src, outs=[memref.subview(new.dest, [max(0, b) for b in begins], sizes, ones)])


#: this family's rows of the lowering table (:data:`.program.LOWERINGS`)
LOWERINGS: dict[str, Lowering] = {
    "conv2d": lower_conv2d,
    "max_pool": lower_max_pool,
    "avg_pool": lower_avg_pool,
    "local_response_norm": lower_local_response_norm,
    "pad": lower_pad,
}


#: the scratch buffers of this family's kernels (:data:`.program.SCRATCH`)
SCRATCH: dict[str, Callable[[ir.OpView], list[ir.MemRefType]]] = {
    "conv2d": _conv_scratch,
    "max_pool": _pool_scratch,
    "avg_pool": _pool_scratch,
    "local_response_norm": _lrn_scratch,
}
