"""Floats narrower than float32 that no target need have instructions for: bfloat16 and the 8- and 4-bit floats of
ONNX (float8 e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0; float4 e2m1), converted to and from float32 one element at a
time in integer ops.

A value of one of these types is computed in float32; these conversions run at a program's boundary and where the
model stores a value in the narrow type (the importer casts it there and back, so the value is rounded). Narrowing
rounds to nearest, halves to even, as numpy's ml_dtypes does, and does not saturate: a magnitude above the type's
largest becomes infinity where the type has one (e5m2), else NaN (float4, which has neither, saturates, as ml_dtypes
does); the importer clips first where ONNX saturates (Cast, QuantizeLinear with ``saturate`` 1). A float4 is held
one per byte, in its low bits, as ml_dtypes holds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from .common import _constant

_FloatPred, _IntPred = arith.CmpFPredicate, arith.CmpIPredicate


@dataclass(frozen=True)
class MiniFloat:
    """A float of ``width`` bits (8 or 4): 1 sign bit, ``exponent`` and ``mantissa`` bits, ``bias``; ``kind`` says
    how it spends its top codes: "ieee" (the largest exponent holds infinity and NaNs), "fn" (all ones is NaN),
    "fnuz" (no negative zero: the sign bit alone is NaN) or "finite" (every code a number: a magnitude beyond the
    largest saturates to it)."""

    width: int
    exponent: int
    mantissa: int
    bias: int
    kind: str

    @property
    def largest(self) -> float:
        """The largest finite magnitude."""
        top = (1 << self.exponent) - 1 - (self.kind == "ieee")
        fraction = (1 << self.mantissa) - 1 - (self.kind == "fn")
        return (1 + fraction / (1 << self.mantissa)) * 2.0 ** (top - self.bias)

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)

    @property
    def nan(self) -> int:
        """The code of a positive NaN (ml_dtypes' choice; "finite" has none: ml_dtypes gives -0)."""
        magnitude = self.sign_bit - 1
        return {"ieee": magnitude - 1, "fn": magnitude, "fnuz": self.sign_bit, "finite": self.sign_bit}[self.kind]


def _formats() -> dict[type, MiniFloat]:
    return {ir.Float8E4M3FNType: MiniFloat(8, 4, 3, 7, "fn"), ir.Float8E4M3FNUZType: MiniFloat(8, 4, 3, 8, "fnuz"),
            ir.Float8E5M2Type: MiniFloat(8, 5, 2, 15, "ieee"), ir.Float8E5M2FNUZType: MiniFloat(8, 5, 2, 16, "fnuz"),
            ir.Float4E2M1FNType: MiniFloat(4, 2, 1, 1, "finite")}


def minifloat_format(t: ir.Type) -> MiniFloat | None:
    """The format of an 8- or 4-bit float type of ONNX's, None for any other type."""
    for cls, fmt in _formats().items():
        if isinstance(t, cls):
            return fmt
    return None


def is_narrow(t: ir.Type) -> bool:
    """Whether ``t`` is converted here (bfloat16, an 8- or a 4-bit float)."""
    return isinstance(t, (ir.BF16Type, ir.Float8E8M0FNUType)) or minifloat_format(t) is not None


def widened(x: ir.Value, t: ir.Type) -> ir.Value:
    """A value of type ``t`` (bfloat16, an 8- or a 4-bit float) as the float32 it is (exact)."""
    if isinstance(t, ir.BF16Type):
        return _from_bf16(x)
    if isinstance(t, ir.Float8E8M0FNUType):
        return _from_e8m0(x)
    return _from_minifloat(x, minifloat_format(t))


def narrowed(x: ir.Value, t: ir.Type) -> ir.Value:
    """A float32 as the nearest value of type ``t`` (bfloat16, an 8- or a 4-bit float; float8 e8m0 takes the
    exponent: the importer rounds to a power of two first, by the Cast's round_mode)."""
    if isinstance(t, ir.BF16Type):
        return _to_bf16(x)
    if isinstance(t, ir.Float8E8M0FNUType):
        return _to_e8m0(x)
    return _to_minifloat(x, t, minifloat_format(t))


def _i32(value: int) -> ir.Value:
    return _constant(ir.IntegerType.get_signless(32), value)


def _f32(value: float) -> ir.Value:
    return _constant(ir.F32Type.get(), value)


def _as_f32(bits: ir.Value) -> ir.Value:
    return arith.bitcast(ir.F32Type.get(), bits)


def _from_bf16(x: ir.Value) -> ir.Value:
    """A bfloat16's 16 bits on top of 16 zeros."""
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    return _as_f32(arith.shli(arith.extui(i32, arith.bitcast(i16, x)), _i32(16)))


def _to_bf16(x: ir.Value) -> ir.Value:
    """The top 16 bits of the float32 rounded to nearest even; a NaN kept quiet."""
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    bits = arith.bitcast(i32, x)
    odd = arith.andi(arith.shrui(bits, _i32(16)), _i32(1))
    high = arith.trunci(i16, arith.shrui(arith.addi(bits, arith.addi(_i32(0x7FFF), odd)), _i32(16)))
    high = arith.select(arith.cmpf(_FloatPred.UNO, x, x), _constant(i16, 0x7FC0), high)
    return arith.bitcast(ir.BF16Type.get(), high)


def _from_minifloat(x: ir.Value, fmt: MiniFloat) -> ir.Value:
    """Decode (a float4 arrives as its stored byte): a normal number's exponent and mantissa moved into float32's
    fields and rebiased, a subnormal as its mantissa times the smallest subnormal, then the sign and the special
    codes."""
    narrow, i32 = ir.IntegerType.get_signless(fmt.width), ir.IntegerType.get_signless(32)
    code = arith.extui(i32, x if isinstance(x.type, ir.IntegerType) else arith.bitcast(narrow, x))
    magnitude = arith.andi(code, _i32(fmt.sign_bit - 1))
    mantissa = arith.andi(magnitude, _i32((1 << fmt.mantissa) - 1))
    normal = _as_f32(arith.addi(arith.shli(magnitude, _i32(23 - fmt.mantissa)), _i32((127 - fmt.bias) << 23)))
    subnormal = arith.mulf(arith.uitofp(ir.F32Type.get(), mantissa), _f32(2.0 ** (1 - fmt.bias - fmt.mantissa)))
    is_subnormal = arith.cmpi(_IntPred.ult, magnitude, _i32(1 << fmt.mantissa))
    value = arith.select(is_subnormal, subnormal, normal)
    sign = arith.shli(arith.shrui(code, _i32(fmt.width - 1)), _i32(31))
    value = _as_f32(arith.ori(arith.bitcast(i32, value), sign))
    nan = _as_f32(arith.ori(_i32(0x7FC00000), sign))  # a NaN keeps its sign, as ml_dtypes does
    if fmt.kind == "finite":
        return value
    if fmt.kind == "fnuz":
        return arith.select(arith.cmpi(_IntPred.eq, code, _i32(fmt.sign_bit)), nan, value)
    if fmt.kind == "fn":
        return arith.select(arith.cmpi(_IntPred.eq, magnitude, _i32(fmt.sign_bit - 1)), nan, value)
    top = ((1 << fmt.exponent) - 1) << fmt.mantissa  # ieee: the largest exponent is infinity or NaN
    special = arith.cmpi(_IntPred.uge, magnitude, _i32(top))
    infinity = _as_f32(arith.ori(_i32(0x7F800000), sign))
    return arith.select(special, arith.select(arith.cmpi(_IntPred.eq, magnitude, _i32(top)), infinity, nan), value)


def _to_minifloat(x: ir.Value, t: ir.Type, fmt: MiniFloat) -> ir.Value:
    """Encode: the magnitude rounded to the format's spacing at its exponent (never below the smallest normal's) by
    adding and subtracting a power of two whose float32 spacing is that step (float32 addition rounds to nearest
    even and both steps are exact otherwise), then packed into the code; above the largest finite value infinity,
    NaN, or the largest ("finite"), NaN to NaN, the sign put back (never on zero for fnuz)."""
    narrow, i32 = ir.IntegerType.get_signless(fmt.width), ir.IntegerType.get_signless(32)
    bits = arith.bitcast(i32, x)
    sign = arith.andi(arith.shrui(bits, _i32(32 - fmt.width)), _i32(fmt.sign_bit))
    # at most a power of two above the largest finite value, so that the shifter stays finite
    beyond = _f32(2.0 ** ((1 << fmt.exponent) - fmt.bias))
    magnitude = arith.minimumf(_as_f32(arith.andi(bits, _i32(0x7FFFFFFF))), beyond)
    min_normal = 128 - fmt.bias  # float32's biased exponent of the format's smallest normal, 2^(1 - bias)
    exponent = arith.maxsi(arith.shrui(arith.bitcast(i32, magnitude), _i32(23)), _i32(min_normal))
    shifter = _as_f32(arith.shli(arith.addi(exponent, _i32(23 - fmt.mantissa)), _i32(23)))
    rounded = arith.subf(arith.addf(magnitude, shifter), shifter)
    normal = arith.subi(arith.shrui(arith.bitcast(i32, rounded), _i32(23 - fmt.mantissa)),
                        _i32((127 - fmt.bias) << fmt.mantissa))
    subnormal = arith.fptoui(i32, arith.mulf(rounded, _f32(2.0 ** (fmt.bias - 1 + fmt.mantissa))))
    code = arith.select(arith.cmpf(_FloatPred.OLT, rounded, _f32(2.0 ** (1 - fmt.bias))), subnormal, normal)
    overflow = arith.cmpf(_FloatPred.OGT, rounded, _f32(fmt.largest))
    if fmt.kind == "ieee":
        big = _i32(((1 << fmt.exponent) - 1) << fmt.mantissa)
    elif fmt.kind == "finite":
        big = _i32(fmt.sign_bit - 1)
    else:
        big = _i32(fmt.nan)
    code = arith.select(overflow, big, code)
    if fmt.kind == "fnuz":  # no negative zero; the NaN code is the sign bit alone
        code = arith.select(arith.cmpi(_IntPred.eq, code, _i32(0)), code, arith.ori(code, sign))
    else:
        code = arith.ori(code, sign)
    nan = _i32(fmt.nan) if fmt.kind == "fnuz" else arith.xori(_i32(fmt.nan), sign) if fmt.kind == "finite" else \
        arith.ori(_i32(fmt.nan), sign)
    code = arith.select(arith.cmpf(_FloatPred.UNO, x, x), nan, code)
    if fmt.width < 8:  # stored in a byte (common.storage_type)
        return arith.trunci(ir.IntegerType.get_signless(8), code)
    return arith.bitcast(t, arith.trunci(narrow, code))


def _from_e8m0(x: ir.Value) -> ir.Value:
    """float8 e8m0 (a biased exponent, no sign, no mantissa): 2^(code - 127), 0xFF NaN; code 0 is float32's
    subnormal 2^-127."""
    i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    code = arith.extui(i32, arith.bitcast(i8, x))
    bits = arith.select(arith.cmpi(_IntPred.eq, code, _i32(0)), _i32(0x00400000), arith.shli(code, _i32(23)))
    return arith.select(arith.cmpi(_IntPred.eq, code, _i32(0xFF)), _f32(float("nan")), _as_f32(bits))


def _to_e8m0(x: ir.Value) -> ir.Value:
    """float32's exponent field (the sign dropped) as the e8m0 code: exact for a power of two (and 2^-127); NaN and
    the infinities 0xFF."""
    i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    exponent = arith.shrui(arith.andi(arith.bitcast(i32, x), _i32(0x7FFFFFFF)), _i32(23))
    return arith.bitcast(ir.Float8E8M0FNUType.get(), arith.trunci(i8, exponent))
