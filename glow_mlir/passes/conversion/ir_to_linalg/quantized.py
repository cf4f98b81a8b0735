"""The int8 instructions (dialects/quantized.py): quantize, dequantize, rescale and add as elementwise generics in
float32 (each bit for bit the numpy semantics of the op table), and the int8 convolution and fully connected
product as an int32 accumulation (linalg's named convolutions and matmul on i8 inputs and an i32 output, which
sign-extend) followed by the fixed-point requantization of each accumulator, in 64-bit integers."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math

from ....dialects.quantized import fixed_point, ratio
from .cnn import _global_constant, _padded, _padded_type, conv_into
from .common import Lowering, Operands, _constant, _dims, _memref, elementwise

_I8, _I32, _I64, _F32 = (lambda: ir.IntegerType.get_signless(8), lambda: ir.IntegerType.get_signless(32),
                         lambda: ir.IntegerType.get_signless(64), lambda: ir.F32Type.get())


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


def _qconv_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """The input bordered by its zero point (when there are pads), then the int32 accumulators."""
    dest = _memref(op.dest)
    return [*_padded_type(_memref(op.src), op.pads), ir.MemRefType.get(dest.shape, _I32())]


def lower_qconv2d(op: ir.OpView, new: Operands) -> None:
    """acc = bias broadcast; acc += conv(src bordered by input_offset, filter) (i8 x i8 -> i32); dest =
    requantize(acc)."""
    *border, acc = new.scratch
    src = _padded(SimpleNamespace(scratch=border), new.src, op.pads, op.input_offset)
    linalg.broadcast(new.bias, outs=[acc], dimensions=[0, 1, 2])
    conv_into(src, new.filter, acc, op.group, op.strides, op.dilations)
    _requantize_into(op, new.dest, acc)


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
