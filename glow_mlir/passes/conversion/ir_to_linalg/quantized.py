"""The int8 instructions (dialects/quantized.py): quantize, dequantize, rescale and add as elementwise generics in
float32 (each bit for bit the numpy semantics of the op table), and the int8 convolution and fully connected
product as an int32 accumulation (linalg's named convolutions and matmul on i8 inputs and an i32 output, which
sign-extend) followed by the fixed-point requantization of each accumulator, in 64-bit integers."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math, memref

from ....dialects.quantized import UNSIGNED_SHIFT, fixed_point, ratio
from .cnn import _global_constant, _padded, _padded_type, conv_into
from .common import INT8_CONV_ATTR, Lowering, Operands, _constant, _dims, _expand, _memref, elementwise

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


def _requantize_into(op: ir.OpView, dest: ir.Value, acc: ir.Value) -> None:
    """dest (i8) = clamp(((acc * M) >> right, rounded half away from zero) + offset): one ``M, right`` pair for all
    channels (constants), or one per channel (the last dim) read from two constant tables."""
    pairs = [fixed_point(float(np.float32(m))) for m in op.multipliers]
    rank = _memref(dest).rank
    offset, lo, hi = (_constant(_I64(), v) for v in (op.offset, op.output_min, op.output_max))
    one, zero = _constant(_I64(), 1), _constant(_I64(), 0)

    def body(a: ir.Value, m: ir.Value, right: ir.Value) -> ir.Value:
        product = arith.muli(arith.extsi(_I64(), a), m)
        half = arith.shli(one, arith.subi(right, one))
        negative = arith.extui(_I64(), arith.cmpi(arith.CmpIPredicate.slt, product, zero))
        rounded = arith.shrsi(arith.subi(arith.addi(product, half), negative), right)
        clamped = arith.maxsi(arith.minsi(arith.addi(rounded, offset), hi), lo)
        return arith.trunci(_I8(), clamped)

    if len(set(pairs)) == 1:
        m, right = (_constant(_I64(), v) for v in pairs[0])
        elementwise(dest, [acc], lambda a: body(a, m, right))
        return
    tables = [_global_constant(op.operation, name, np.array([p[i] for p in pairs], np.int64))
              for i, name in ((0, "__glow_requant_multipliers"), (1, "__glow_requant_shifts"))]
    channel = _dims(rank - 1, rank=rank)
    elementwise(dest, [acc, *tables], body, [ir.AffineMap.get_identity(rank), channel, channel])


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


def _qconv_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """The input bordered by its zero point (when there are pads), then the int32 accumulators."""
    dest = _memref(op.dest)
    border = _packed_border(op) if _memref(op.filter).rank == 6 else _padded_type(_memref(op.src), op.pads)
    return [*border, ir.MemRefType.get(dest.shape, _I32())]


def lower_qconv2d(op: ir.OpView, new: Operands) -> None:
    """acc = bias broadcast; acc += conv(src bordered by input_offset, filter) (i8 x i8 -> i32); dest =
    requantize(acc). On a packed filter the convolution is :func:`packed_conv`."""
    *border, acc = new.scratch
    if _memref(op.filter).rank == 6:
        src = new.src
        if border:  # the whole scratch at the zero point, then the input inside it (widened for int16 pairs)
            n, h, w, c = _memref(src).shape
            linalg.fill(_constant(_memref(border[0]).element_type, op.input_offset), outs=[border[0]])
            inside = memref.subview(border[0], [0, op.pads[0], op.pads[1], 0], [n, h, w, c], [1, 1, 1, 1])
            linalg.copy(src, outs=[inside])
            src = border[0]
        linalg.broadcast(new.bias, outs=[acc], dimensions=[0, 1, 2])
        packed_conv(src, new.filter, acc, op.strides, op.dilations)
    else:
        src = _padded(SimpleNamespace(scratch=border), new.src, op.pads, op.input_offset)
        linalg.broadcast(new.bias, outs=[acc], dimensions=[0, 1, 2])
        conv_into(src, new.filter, acc, op.group, op.strides, op.dilations)
    _requantize_into(op, new.dest, acc)


def packed_conv(src: ir.Value, filt: ir.Value, acc: ir.Value, strides: list[int], dilations: list[int]) -> None:
    """acc += sum over (kh, kw, c) of (src + 128) * w, the filter packed ``[F/L, KH, KW, Cp/4, L, 4]`` (int8 quads;
    int16 pairs ``[.., Cp/2, L, 2]``: src * w, src widened to int16) and src already holding Cp channels: one linalg.generic over (n, oh, ow, fo, fi, kh, kw, co, ci) on acc viewed as
    [N, OH, OW, F/L, L], tagged with its strides and dilations. The CPU's int8 kernel (backend/kernels/int8.py)
    replaces it with dot-product instructions; without one it computes the same sums."""
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
