"""The int8 instructions (dialects/quantized.py): quantize, dequantize, rescale and add as elementwise generics in
float32 (each bit for bit the numpy semantics of the op table), and the int8 convolution and fully connected
product as an int32 accumulation (linalg's named convolutions and matmul on i8 inputs and an i32 output, which
sign-extend) followed by the fixed-point requantization of each accumulator, in 64-bit integers. A convolution on a
filter packed for a dot-product kernel (group 1, or depthwise in tap quads) becomes the same three steps on an int32
buffer of its own, the sums a generic tagged for the CPU's int8 kernel, which replaces all three."""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math, memref, scf

from ....dialects.quantized import UNSIGNED_SHIFT, fixed_point, ratio
from .cnn import _padded_type, conv_into
from .common import (
    ALIGNMENT,
    INT8_CONV_ATTR,
    INT8_DEPTHWISE_ATTR,
    INT8_REQUANT_ATTR,
    Lowering,
    Operands,
    _constant,
    _dims,
    _expand,
    _memref,
    elementwise,
    module_global,
)
from .common import index_constant as _index

_I8, _I16, _I32, _I64 = (lambda: ir.IntegerType.get_signless(8), lambda: ir.IntegerType.get_signless(16),
                         lambda: ir.IntegerType.get_signless(32), lambda: ir.IntegerType.get_signless(64))
_F32 = ir.F32Type.get


def _real(q: ir.Value, offset: int) -> ir.Value:
    """``q - offset`` (an i8) as float32, exactly."""
    centered = arith.subi(arith.extsi(_I32(), q), _constant(_I32(), offset))
    return arith.sitofp(_F32(), centered)


def _to_int8(real: ir.Value, offset: int, lo: int = -128, hi: int = 127) -> ir.Value:
    """float32 ``real`` rounded half to even, plus ``offset``, clamped to [lo, hi], as i8 (a NaN gives ``lo``)."""
    shifted = arith.addf(math.roundeven(real), _constant(_F32(), float(offset)))
    clamped = arith.maxnumf(arith.minnumf(shifted, _constant(_F32(), float(hi))), _constant(_F32(), float(lo)))
    return arith.fptosi(_I8(), clamped)


def lower_quantize(op: ir.OpView, new: Operands) -> None:
    scale = _constant(_F32(), float(np.float32(op.scale)))
    elementwise(new.dest, [new.src], lambda x: _to_int8(arith.divf(x, scale), op.offset))


def lower_dequantize(op: ir.OpView, new: Operands) -> None:
    scale = _constant(_F32(), float(np.float32(op.scale)))
    elementwise(new.dest, [new.src], lambda q: arith.mulf(_real(q, op.offset), scale))


def lower_rescale(op: ir.OpView, new: Operands) -> None:
    m = _constant(_F32(), float(ratio(op.input_scale, op.scale)))
    elementwise(new.dest, [new.src], lambda q: _to_int8(arith.mulf(_real(q, op.input_offset), m), op.offset,
                                                        op.output_min, op.output_max))


def lower_qadd(op: ir.OpView, new: Operands) -> None:
    ml = _constant(_F32(), float(ratio(op.lhs_scale, op.scale)))
    mr = _constant(_F32(), float(ratio(op.rhs_scale, op.scale)))

    def body(a: ir.Value, b: ir.Value) -> ir.Value:
        total = arith.addf(arith.mulf(_real(a, op.lhs_offset), ml), arith.mulf(_real(b, op.rhs_offset), mr))
        return _to_int8(total, op.offset, op.output_min, op.output_max)

    elementwise(new.dest, [new.lhs, new.rhs], body)


def requantized(acc: ir.Value, multiplier: ir.Value, right: ir.Value, offset: int, lo: int, hi: int) -> ir.Value:
    """i8 ``clamp(((acc * M + 2^(right-1)) >> right) + offset, lo, hi)`` of an i32 accumulator and its i32 ``M`` and
    ``right``: one 32 x 32 -> 64-bit product and one arithmetic shift, rounding to nearest with ties up
    (params.requantize). The fallback generic's body; the int8 kernel's epilogue computes the same on vectors."""
    i64 = _I64()
    product = arith.muli(arith.extsi(i64, acc), arith.extsi(i64, multiplier))
    shift = arith.extsi(i64, right)
    one = _constant(i64, 1)
    rounded = arith.shrsi(arith.addi(product, arith.shli(one, arith.subi(shift, one))), shift)
    clamped = arith.maxsi(arith.minsi(arith.addi(rounded, _constant(i64, offset)), _constant(i64, hi)),
                          _constant(i64, lo))
    return arith.trunci(_I8(), clamped)


def requantization_tables(op: ir.OpView) -> tuple[ir.Value, ir.Value]:
    """The i32 multiplier and right shift of each output channel, as two constant tables (memref.global)."""
    pairs = [fixed_point(float(np.float32(m))) for m in op.multipliers]
    channels = _memref(op.dest).shape[-1]
    pairs = pairs * channels if len(pairs) == 1 else pairs
    return tuple(module_global(op.operation, name, np.array([p[i] for p in pairs], np.int32))
                 for i, name in ((0, "__glow_requant_multipliers"), (1, "__glow_requant_shifts")))


def _one_pair(op: ir.OpView) -> tuple[int, int] | None:
    """The ``M, right`` pair of every output channel when they all have the same, else None."""
    pairs = {fixed_point(float(np.float32(m))) for m in op.multipliers}
    return next(iter(pairs)) if len(pairs) == 1 else None


def _requantize_into(op: ir.OpView, dest: ir.Value, acc: ir.Value,
                     tables: tuple[ir.Value, ir.Value] | None = None) -> linalg.GenericOp:
    """dest (i8) = :func:`requantized` acc: one ``M, right`` pair for all channels (constants), or (``tables`` given,
    or the multipliers differ) one per channel (the last dim) read from the two tables."""
    rank = _memref(dest).rank
    clamp = (op.offset, op.output_min, op.output_max)
    pair = _one_pair(op)
    if pair is not None and tables is None:
        m, right = (_constant(_I32(), v) for v in pair)
        return elementwise(dest, [acc], lambda a: requantized(a, m, right, *clamp))
    channel = _dims(rank - 1, rank=rank)
    return elementwise(dest, [acc, *(tables or requantization_tables(op))],
                       lambda a, m, right: requantized(a, m, right, *clamp),
                       [ir.AffineMap.get_identity(rank), channel, channel])


def _packed_border(op: ir.OpView) -> list[ir.MemRefType]:
    """For a packed filter: the input bordered by its zero point and its channels grown to the filter's Cp (a
    multiple of 4: the kernel reads four channels at a time), when either is needed."""
    src = _memref(op.src)
    n, h, w, c = src.shape
    cp = _memref(op.filter).shape[3] * _memref(op.filter).shape[5]
    top, left, bottom, right = op.pads
    pairs = _memref(op.filter).shape[5] == 2  # int16 pairs: the input widened to int16 once, not at every read
    if not any(op.pads) and cp == c and not pairs:
        return []
    return [ir.MemRefType.get([n, top + h + bottom, left + w + right, cp], _I16() if pairs else src.element_type)]


def _depthwise_border(op: ir.OpView) -> ir.MemRefType:
    """For a depthwise filter packed in tap quads: the input bordered by its zero point, read as unsigned."""
    n, h, w, c = _memref(op.src).shape
    top, left, bottom, right = op.pads
    return ir.MemRefType.get([n, top + h + bottom, left + w + right, c], _I8())


def _qconv_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """The input rows one output row's windows cover, bordered by the zero point (when there are pads), then the
    int32 accumulators of one output row (:func:`_row_by_row`); on a packed filter the bordered input only
    (:func:`packed_conv` holds its accumulators in registers)."""
    if _memref(op.filter).rank == 6:
        return _packed_border(op)
    if _memref(op.filter).rank == 5:
        return [_depthwise_border(op)]
    _, _, ow, f = _memref(op.dest).shape
    window = [ir.MemRefType.get([1, _window_rows(op), *t.shape[2:]], t.element_type)
              for t in _padded_type(_memref(op.src), op.pads)]
    return [*window, ir.MemRefType.get([1, 1, ow, f], _I32())]


def _window_rows(op: ir.OpView) -> int:
    """How many consecutive input rows one output row's windows read."""
    return (_memref(op.filter).shape[0] - 1) * op.dilations[0] + 1


def _box(buffer: ir.Value, at: list, sizes: list[int]) -> ir.Value:
    """The ``sizes`` box of a 4-D ``buffer`` at ``at`` (indices or ints; its offset dynamic if any is an index)."""
    strides, base = _memref(buffer).get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    static = all(isinstance(a, int) for a in at) and base != dynamic
    offset = base + sum(a * s for a, s in zip(at, strides)) if static else dynamic
    layout = ir.StridedLayoutAttr.get(offset, strides)
    result = ir.MemRefType.get(sizes, _memref(buffer).element_type, layout=layout)
    return memref.subview(buffer, at, sizes, [1, 1, 1, 1], result_type=result)


def _row_by_row(op: ir.OpView, src: ir.Value, filt: ir.Value, bias: ir.Value, dest: ir.Value, acc: ir.Value,
                window: ir.Value | None) -> None:
    """dest = requantize(bias + conv(src, filt)) one output row at a time, its int32 accumulators in ``acc``
    (``[1, 1, OW, F]``), the input rows it reads copied into ``window`` (``[1, rows, left + W + right, C]``, its
    border columns at the zero point) when the convolution has pads: an int8 layer needs a row of int32 and a few
    input rows beside its int8 input and output, not a whole int32 copy of its output and a bordered copy of its
    input (a microcontroller's RAM: the keyword spotter's activations were 60096 bytes, 32000 of them
    accumulators). Output rows whose windows reach into the top or bottom pads are written out one by one (their
    window rows partly the zero point); the rows between them are a loop whose window copies ``rows`` input rows."""
    n, oh, ow, f = _memref(dest).shape
    _, h, w, c = _memref(src).shape
    rows, stride = _window_rows(op), op.strides[0]
    top, left = op.pads[0], op.pads[1]
    tables = None if _one_pair(op) is not None else requantization_tables(op)  # once, outside the loop
    fill = _constant(_I8(), op.input_offset)
    if window is not None:
        linalg.fill(fill, outs=[window])  # the border columns, which no row overwrites

    def compute(i: ir.Value, y: ir.Value, reads: ir.Value) -> None:
        linalg.broadcast(bias, outs=[acc], dimensions=[0, 1, 2])
        conv_into(reads, filt, acc, op.group, op.strides, op.dilations)
        _requantize_into(op, _box(dest, [i, y, 0, 0], [1, 1, ow, f]), acc, tables)

    def border_row(i: ir.Value, y: int) -> None:  # a row whose window reaches into the top or bottom pads
        for k in range(rows):
            row = y * stride - top + k
            # positions as index values: every row's copy (and fill) has one type, so one kernel serves them all
            inside = _box(window, [_index(0), _index(k), _index(left), _index(0)], [1, 1, w, c])
            if 0 <= row < h:
                linalg.copy(_box(src, [i, _index(row), _index(0), _index(0)], [1, 1, w, c]), outs=[inside])
            else:
                linalg.fill(fill, outs=[inside])
        compute(i, _index(y), window)

    def rows_between(i: ir.Value, first: int, last: int) -> None:  # windows inside the input: copy rows whole
        if first >= last:
            return
        loop = scf.ForOp(_index(first), _index(last), _index(1))
        with ir.InsertionPoint(loop.body):
            y = loop.induction_variable
            start = y if stride == 1 else arith.muli(y, _index(stride))
            if top:
                start = arith.subi(start, _index(top))
            if window is None:
                compute(i, y, _box(src, [i, start, 0, 0], [1, rows, w, c]))
            else:
                linalg.copy(_box(src, [i, start, 0, 0], [1, rows, w, c]),
                            outs=[_box(window, [0, 0, left, 0], [1, rows, w, c])])
                compute(i, y, window)
            scf.YieldOp([])

    # the output rows whose windows lie inside the input rows: from the first below the top pad to the last
    # above the bottom one
    first = min(oh, -(-top // stride))
    last = max(first, min(oh, (h + top - rows) // stride + 1))

    def image(i: ir.Value) -> None:
        for y in range(first):
            border_row(i, y)
        rows_between(i, first, last)
        for y in range(last, oh):
            border_row(i, y)

    if n == 1:
        image(_index(0))
        return
    batch = scf.ForOp(_index(0), _index(n), _index(1))
    with ir.InsertionPoint(batch.body):
        image(batch.induction_variable)
        scf.YieldOp([])


def lower_qconv2d(op: ir.OpView, new: Operands) -> None:
    """acc = bias broadcast; acc += conv(src bordered by input_offset, filter) (i8 x i8 -> i32); dest =
    requantize(acc), one output row at a time (:func:`_row_by_row`). On a packed filter the three are
    :func:`packed_conv`."""
    if _memref(op.filter).rank == 6:
        src = new.src
        if new.scratch:  # the whole scratch at the zero point, then the input inside it (widened for int16 pairs)
            (border,) = new.scratch
            n, h, w, c = _memref(src).shape
            linalg.fill(_constant(_memref(border).element_type, op.input_offset), outs=[border])
            inside = memref.subview(border, [0, op.pads[0], op.pads[1], 0], [n, h, w, c], [1, 1, 1, 1])
            linalg.copy(src, outs=[inside])
            src = border
        packed_conv(op, src, new.filter, new.bias, new.dest)
        return
    if _memref(op.filter).rank == 5:
        _lower_packed_depthwise(op, new)
        return
    *window, acc = new.scratch
    _row_by_row(op, new.src, new.filter, new.bias, new.dest, acc, window[0] if window else None)


def _tag_requantization(op: ir.OpView, requant: linalg.GenericOp) -> None:
    """Mark the requantization after a packed convolution with (offset, min, max, the smallest right shift)."""
    smallest = min(fixed_point(float(np.float32(m)))[1] for m in op.multipliers)
    requant.attributes[INT8_REQUANT_ATTR] = ir.DenseI64ArrayAttr.get([op.offset, op.output_min, op.output_max,
                                                                        smallest])


def packed_conv(op: ir.OpView, src: ir.Value, filt: ir.Value, bias: ir.Value, dest: ir.Value) -> None:
    """dest = requantize(bias + sum over (kh, kw, c) of (src + 128) * w), the filter packed ``[F/L, KH, KW, Cp/4,
    L, 4]`` (int8 quads; int16 pairs ``[.., Cp/2, L, 2]``: src * w, src widened to int16) and src already holding Cp
    channels. Built as the bias broadcast into an int32 buffer of its own (memref.alloc), one linalg.generic over
    (n, oh, ow, fo, fi, kh, kw, co, ci) on it viewed as [N, OH, OW, F/L, L] tagged ``glow.int8_conv`` with the
    strides and dilations, and the requantization generic from per-channel tables tagged ``glow.int8_requant`` with
    (offset, min, max, the smallest right shift). The CPU's int8 kernel (backend/kernels/int8.py) replaces the
    three by register tiles whose epilogue requantizes (the buffer goes); without one they compute the same
    values."""
    strides, dilations = list(op.strides), list(op.dilations)
    tables = requantization_tables(op)  # before the buffer: the kernel that replaces the three reads them
    acc = memref.alloc(ir.MemRefType.get(_memref(dest).shape, _I32()), [], [], alignment=ALIGNMENT)
    linalg.broadcast(bias, outs=[acc], dimensions=[0, 1, 2])
    n, oh, ow, _ = _memref(acc).shape
    blocks, _, _, _, lanes, group = _memref(filt).shape
    acc5 = _expand(acc, [n, oh, ow, blocks, lanes], [[0], [1], [2], [3, 4]])
    d = [ir.AffineDimExpr.get(i) for i in range(9)]  # n, oh, ow, fo, fi, kh, kw, co, ci
    src_map = ir.AffineMap.get(9, 0, [d[0], d[1] * strides[0] + d[5] * dilations[0],
                                      d[2] * strides[1] + d[6] * dilations[1], d[7] * group + d[8]])
    maps = [src_map, _dims(3, 5, 6, 7, 4, 8, rank=9), _dims(0, 1, 2, 3, 4, rank=9)]
    shift = _constant(_I32(), UNSIGNED_SHIFT if group == 4 else 0)  # int8 quads read the input as unsigned
    generic = linalg.GenericOp([], [src, filt], [acc5], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                               [linalg.IteratorType.parallel] * 5 + [linalg.IteratorType.reduction] * 4)
    generic.attributes[INT8_CONV_ATTR] = ir.DenseI64ArrayAttr.get([*strides, *dilations])
    block = generic.regions[0].blocks.append(_memref(src).element_type, _memref(filt).element_type, _I32())
    with ir.InsertionPoint(block):
        x, w, total = block.arguments
        unsigned = arith.addi(arith.extsi(_I32(), x), shift)
        linalg.YieldOp([arith.addi(total, arith.muli(unsigned, arith.extsi(_I32(), w)))])
    _tag_requantization(op, _requantize_into(op, dest, acc, tables))
    memref.dealloc(acc)


def _lower_packed_depthwise(op: ir.OpView, new: Operands) -> None:
    """The input copied into its bordered scratch as unsigned (+128: the sign bit flipped; the border the zero
    point's code so read), then :func:`packed_depthwise`."""
    (border,) = new.scratch
    n, h, w, c = _memref(new.src).shape
    sign = _constant(_I8(), -128)
    linalg.fill(_constant(_I8(), op.input_offset ^ -UNSIGNED_SHIFT), outs=[border])  # x + 128 as a byte
    inside = memref.subview(border, [0, op.pads[0], op.pads[1], 0], [n, h, w, c], [1, 1, 1, 1])
    elementwise(inside, [new.src], lambda x: arith.xori(x, sign))
    packed_depthwise(op, border, new.filter, new.bias, new.dest)


def packed_depthwise(op: ir.OpView, src: ir.Value, filt: ir.Value, bias: ir.Value, dest: ir.Value) -> None:
    """dest = requantize(bias + sum over (kh, quad, tap) of src * w), src the bordered input read as unsigned (its
    bytes hold x + 128) and the filter ``[KH, KW/4, 1, C, 4]``: the bias broadcast into an int32 buffer of its own,
    one linalg.generic over (n, oh, ow, c, kh, q, t) tagged ``glow.int8_depthwise`` with the strides and
    dilations, and the requantization generic tagged ``glow.int8_requant``. The CPU's int8 kernel replaces them by
    vectors of 16 to 64 channels whose lanes take a filter row's four taps at once (vpdpbusd); without one they
    compute the same values."""
    strides, dilations = list(op.strides), list(op.dilations)
    tables = requantization_tables(op)
    acc = memref.alloc(ir.MemRefType.get(_memref(dest).shape, _I32()), [], [], alignment=ALIGNMENT)
    linalg.broadcast(bias, outs=[acc], dimensions=[0, 1, 2])
    d = [ir.AffineDimExpr.get(i) for i in range(7)]  # n, oh, ow, c, kh, q, t
    src_map = ir.AffineMap.get(7, 0, [d[0], d[1] * strides[0] + d[4] * dilations[0],
                                      d[2] * strides[1] + (d[5] * 4 + d[6]) * dilations[1], d[3]])
    filt_map = ir.AffineMap.get(7, 0, [d[4], d[5], ir.AffineConstantExpr.get(0), d[3], d[6]])
    maps = [src_map, filt_map, _dims(0, 1, 2, 3, rank=7)]
    generic = linalg.GenericOp([], [src, filt], [acc], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                               [linalg.IteratorType.parallel] * 4 + [linalg.IteratorType.reduction] * 3)
    generic.attributes[INT8_DEPTHWISE_ATTR] = ir.DenseI64ArrayAttr.get([*strides, *dilations])
    block = generic.regions[0].blocks.append(_I8(), _I8(), _I32())
    with ir.InsertionPoint(block):
        x, w, total = block.arguments
        linalg.YieldOp([arith.addi(total, arith.muli(arith.extui(_I32(), x), arith.extsi(_I32(), w)))])
    _tag_requantization(op, _requantize_into(op, dest, acc, tables))
    memref.dealloc(acc)


def lower_qfully_connected(op: ir.OpView, new: Operands) -> None:
    """acc = bias broadcast over the rows; acc += src * weights (i8 x i8 -> i32); dest = requantize(acc)."""
    (acc,) = new.scratch
    linalg.broadcast(new.bias, outs=[acc], dimensions=[0])
    linalg.matmul(new.src, new.weights, outs=[acc])
    _requantize_into(op, new.dest, acc)


#: this family's rows of the lowering table (:data:`.program.LOWERINGS`)
LOWERINGS: dict[str, Lowering] = {
    "quantize": lower_quantize,
    "dequantize": lower_dequantize,
    "rescale": lower_rescale,
    "qadd": lower_qadd,
    "qconv2d": lower_qconv2d,
    "qfully_connected": lower_qfully_connected,
}

#: the scratch buffers of this family's kernels (:data:`.program.SCRATCH`)
SCRATCH = {
    "qconv2d": _qconv_scratch,
    "qfully_connected": lambda op: [ir.MemRefType.get(_memref(op.dest).shape, _I32())],
}
