"""Elementwise math, activations, comparisons and casts.

Most ops map to one glowgraph node, with ONNX (numpy) broadcasting made explicit on the operands. Some have no
node of their own because their ONNX definition is a short composition of nodes that exist, and a backend gains
nothing from seeing them whole:
  Reciprocal(x)        -> Div(1, x)
  Greater(a, b)        -> CmpLT(b, a);  GreaterOrEqual(a, b) -> CmpLTE(b, a)   (Glow has no CmpGT either)
  Selu(x)              -> Mul(Elu(x, alpha), gamma)          (Selu is a scaled Elu, by definition)
  HardSwish(x)         -> Mul(x, HardSigmoid(x, 1/6, 1/2))  (its ONNX definition)
  Sign(x)              -> Select(0 < x, 1, Select(x < 0, -1, x * 0))  (NaN stays NaN)
  IsNaN(x)             -> Not(CmpEQ(x, x));  IsInf(x) -> CmpEQ(x, +inf) or CmpEQ(x, -inf), as its flags ask
  Softsign(x)          -> Div(x, Add(1, Abs(x)))
  Sum/Max/Min(a, b..)  -> pairwise Add/Max/Min, left to right; Mean -> Div(Sum, n)
  Xor(a, b)            -> Not(CmpEQ(a, b))                    (on bools, unequal is exclusive or)
  Mish(x)              -> Mul(x, Tanh(Softplus(x)))           (its ONNX definition)
The activations that do get a node (leaky_relu, prelu, elu, hard_sigmoid, softplus, gelu) are named functions a
backend may have a kernel for; node lowering expands them otherwise.

A Cast of a known tensor is done here in numpy, as the spine's handlers do data movement of known tensors: a
conversion of shape data must stay known for the handlers that need constant inputs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import ml_dtypes
import numpy as np
from mlir import ir
from onnx import AttributeProto, TensorProto, numpy_helper

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import (
    COMPUTE_DTYPE,
    ELEMENT_TYPES,
    FLOAT8_TYPES,
    INTEGER_STORAGE_TYPES,
    STORAGE_TYPES,
    compute_dtype,
    fmt_shape,
    type_name,
)
from .core import (
    _binary,
    _broadcast_shape,
    _expand,
    _legacy_binary,
    _scale,
    _splat,
    sign_flipped,
    unsigned_divide,
    unsigned_half,
)

FLOAT, INT, STRING = AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING

#: no upper bound on the inputs of a variadic op
_ANY = 1 << 31


def _float_input(ctx: NodeContext, i: int) -> ir.Value:
    """Input ``i``, which must be a float tensor (for compositions that would be wrong on integers)."""
    x = ctx.operand(i)
    if dtype_of(x).kind != "f":
        raise ctx.error(f"input #{i} must be a float tensor, got {dtype_of(x)}")
    return x


# --------------------------------------------------------------------------- unary math


def _unary(op_type: str, since: int, build: Callable[[ir.Value], ir.Value], doc: str) -> None:
    """Register ``op_type`` as ``build`` of its one input (the node's shape rule checks the element type)."""

    def handler(ctx: NodeContext) -> Tensor:
        return build(ctx.operand(0))

    handler.__name__ = op_type.lower()
    handler.__doc__ = doc
    onnx_op(op_type, since=since, inputs=(1, 1))(handler)
    if since == 6:  # opsets 1-5: the same op with consumed_inputs, a memory hint that changes nothing
        onnx_op(op_type, since=1, inputs=(1, 1), attrs=("consumed_inputs",))(handler)


_unary("Exp", 6, gg.exp, "e ** X.")
_unary("Log", 6, gg.log, "ln(X).")
_unary("Sqrt", 6, gg.sqrt, "sqrt(X).")
_unary("Erf", 9, gg.erf, "erf(X).")
_unary("Floor", 6, gg.floor, "floor(X).")
_unary("Ceil", 6, gg.ceil, "ceil(X).")
_unary("Sin", 7, gg.sin, "Sine (radians).")
_unary("Cos", 7, gg.cos, "Cosine (radians).")
_unary("Tan", 7, gg.tan, "Tangent (radians).")
_unary("Asin", 7, gg.asin, "Arcsine.")
_unary("Acos", 7, gg.acos, "Arccosine.")
_unary("Atan", 7, gg.atan, "Arctangent.")
_unary("Sinh", 9, gg.sinh, "Hyperbolic sine.")
_unary("Cosh", 9, gg.cosh, "Hyperbolic cosine.")
_unary("Asinh", 9, gg.asinh, "Inverse hyperbolic sine.")
_unary("Acosh", 9, gg.acosh, "Inverse hyperbolic cosine.")
_unary("Atanh", 9, gg.atanh, "Inverse hyperbolic tangent.")
_unary("Round", 11, gg.round, "The nearest integer, halves to even.")
_unary("Neg", 6, gg.neg, "-X, floats or integers.")
_unary("Abs", 6, gg.abs_, "|X|, floats or integers.")
_unary("Not", 1, gg.not_, "Logical not of a bool tensor.")
_unary("Softplus", 1, gg.softplus, "log(1 + exp(X)).")


@onnx_op("Sign", since=9, inputs=(1, 1))
def sign(ctx: NodeContext) -> Tensor:
    """-1, 0 or 1 by the sign of X, floats or integers (NaN stays NaN): Select(0 < X, 1, Select(X < 0, -1, X * 0))."""
    x = ctx.operand(0)
    if dtype_of(x) == np.bool_:
        raise ctx.error("the input must be a number, got bool")
    negative = gg.select(gg.cmp_lt(x, _splat(x, 0)), _splat(x, -1), gg.mul(x, _splat(x, 0)))
    return gg.select(gg.cmp_lt(_splat(x, 0), x), _splat(x, 1), negative)


@onnx_op("IsNaN", since=9, inputs=(1, 1))
def is_nan(ctx: NodeContext) -> Tensor:
    """X != X, a bool tensor, as Not(CmpEQ(X, X)) (an ordered comparison is false on NaN)."""
    x = _float_input(ctx, 0)
    return gg.not_(gg.cmp_eq(x, x))


@onnx_op("IsInf", since=10, inputs=(1, 1), attrs=("detect_negative", "detect_positive"))
def is_inf(ctx: NodeContext) -> Tensor:
    """X == +inf (detect_positive) or X == -inf (detect_negative), a bool tensor."""
    x = _float_input(ctx, 0)
    flags = {}
    for name in ("detect_positive", "detect_negative"):
        flags[name] = ctx.attr(name, INT, 1)
        if flags[name] not in (0, 1):
            raise ctx.error(f"attribute '{name}' must be 0 or 1, got {flags[name]}")
    found = [gg.cmp_eq(x, _splat(x, value)) for name, value in (("detect_positive", float("inf")),
                                                               ("detect_negative", float("-inf"))) if flags[name]]
    if not found:  # neither: false everywhere (X < X is)
        return gg.cmp_lt(x, x)
    return found[0] if len(found) == 1 else gg.or_(*found)


@onnx_op("Celu", since=12, inputs=(1, 1), attrs=("alpha",))
def celu(ctx: NodeContext) -> Tensor:
    """max(0, X) + min(0, alpha (exp(X / alpha) - 1))."""
    x = _float_input(ctx, 0)
    alpha = ctx.attr("alpha", FLOAT, 1.0)
    if alpha == 0:
        raise ctx.error("attribute 'alpha' must not be 0")
    negative = gg.mul(gg.sub(gg.exp(gg.div(x, _splat(x, alpha))), _splat(x, 1.0)), _splat(x, alpha))
    return gg.add(gg.max_(x, _splat(x, 0.0)), gg.min_(negative, _splat(x, 0.0)))


@onnx_op("ThresholdedRelu", since=10, inputs=(1, 1), attrs=("alpha",))
def thresholded_relu(ctx: NodeContext) -> Tensor:
    """X where X > alpha, else 0."""
    x = _float_input(ctx, 0)
    return gg.select(gg.cmp_lt(_splat(x, ctx.attr("alpha", FLOAT, 1.0)), x), x, _splat(x, 0.0))


@onnx_op("Softsign", since=1, inputs=(1, 1))
def softsign(ctx: NodeContext) -> Tensor:
    """X / (1 + |X|)."""
    x = _float_input(ctx, 0)
    return gg.div(x, gg.add(_splat(x, 1.0), gg.abs_(x)))


@onnx_op("Reciprocal", since=1, inputs=(1, 1), attrs=("consumed_inputs",))
@onnx_op("Reciprocal", since=6, inputs=(1, 1))
def reciprocal(ctx: NodeContext) -> Tensor:
    """1 / X, as Div(1, X)."""
    x = _float_input(ctx, 0)
    return gg.div(_splat(x, 1.0), x)


# --------------------------------------------------------------------------- binary math


@onnx_op("Pow", since=7, inputs=(2, 2))
def pow_(ctx: NodeContext) -> Tensor:
    """X ** Y, numpy broadcasting. A float X: an integer Y is converted to X's type first. An integer X: to an
    integer Y, exact products by squaring (wrapping as the type does; a negative Y, an error in numpy, gives 1), one
    round per bit of the largest known exponent or of the type; to a float Y, X ** Y in float32 truncated toward
    zero (numpy computes it in float64: equal while the result fits float32's 24 bits)."""
    x, y = ctx.input(0), ctx.input(1)
    uint64 = np.dtype(np.uint64)
    if uint64 in (ctx.stored.get(ctx.node.input[0]), ctx.stored.get(ctx.node.input[1])) and dtype_of(x).kind != "f":
        raise ctx.unsupported("Pow of an integer base with uint64 operands is not supported (uint64 is held in "
                              "int64)")
    if ctx.stored.get(ctx.node.input[1]) == uint64 and dtype_of(x).kind == "f":
        # a uint64 exponent of 2^63 or more is negative as int64: 2^64 more as a float
        wide = _convert(ctx, y, dtype_of(x))
        y = gg.select(gg.cmp_lt(ctx.value(y), _splat(ctx.value(y), 0)),
                      gg.add(ctx.value(wide), _splat(ctx.value(wide), 2.0 ** 64)), ctx.value(wide))
    if dtype_of(x).kind != "f":
        if dtype_of(x) == np.bool_ or dtype_of(y) == np.bool_:
            raise ctx.error("the base and the exponent must be numbers, got bool")
        shape = _broadcast_shape(ctx, shape_of(x), shape_of(y))
        if dtype_of(y).kind == "f":
            base = _convert(ctx, x, dtype_of(y))
            return _convert(ctx, gg.pow_(_expand(ctx, base, shape), _expand(ctx, y, shape)), dtype_of(x))
        return _integer_power(ctx, x, _convert(ctx, y, dtype_of(x)), shape)
    if dtype_of(y) != dtype_of(x):
        if dtype_of(y) == np.bool_:
            raise ctx.error("the exponent must be a number, got bool")
        y = _convert(ctx, y, dtype_of(x))
    shape = _broadcast_shape(ctx, shape_of(x), shape_of(y))
    return gg.pow_(_expand(ctx, x, shape), _expand(ctx, y, shape))


def _integer_power(ctx: NodeContext, x: Tensor, y: Tensor, shape: list[int]) -> Tensor:
    """x ** y of integers by squaring: for each bit of y, the product so far times x ** (2 ** bit) where the bit is
    set; y below 0 counts as 0."""
    rounds = 8 * dtype_of(x).itemsize - 1
    if isinstance(y, Const):
        rounds = max(int(np.max(y.array, initial=0)).bit_length(), 1) if y.array.size else 1
    base = _expand(ctx, x, shape)
    exponent = gg.max_(_expand(ctx, y, shape), _splat(_expand(ctx, y, shape), 0))
    result = _splat(base, 1)
    square = base
    for bit in range(rounds):
        set_ = gg.cmp_eq(gg.and_(gg.shift_right(exponent, _splat(exponent, bit)), _splat(exponent, 1)),
                         _splat(exponent, 1))
        result = gg.select(set_, gg.mul(result, square), result)
        if bit + 1 < rounds:
            square = gg.mul(square, square)
    return result


@onnx_op("Mod", since=10, inputs=(2, 2), attrs=("fmod",))
def mod(ctx: NodeContext) -> Tensor:
    """A mod B, numpy broadcasting: fmod=0 takes B's sign like numpy's mod, fmod=1 A's like C's fmod. fmod=0 on floats
    (from opset 28) is C's fmod moved by B where a nonzero remainder has the other sign: numpy's values, its special
    cases included (-1 mod inf is inf, x mod 0 and inf mod y NaN)."""
    fmod = ctx.attr("fmod", INT, 0)
    if fmod not in (0, 1):
        raise ctx.error(f"attribute 'fmod' must be 0 or 1, got {fmod}")
    if ctx.stored.get(ctx.node.input[0]) == np.dtype(np.uint64):  # no sign: both fmods are the unsigned remainder
        return _binary(ctx, lambda a, b: unsigned_divide(a, b)[1])
    if fmod == 0 and dtype_of(ctx.input(0)).kind == "f":
        if ctx.opset < 28:
            raise ctx.error(f"fmod=0 is defined for integer inputs only; {dtype_of(ctx.input(0))} inputs need fmod=1")
        return _binary(ctx, _floored_float_mod)
    return _binary(ctx, lambda a, b: gg.mod(a, b, fmod=fmod))


def _floored_float_mod(a: ir.Value, b: ir.Value) -> ir.Value:
    r = gg.mod(a, b, fmod=1)
    zero = _splat(r, 0.0)
    other_sign = gg.and_(gg.not_(gg.cmp_eq(r, zero)), gg.xor(gg.cmp_lt(r, zero), gg.cmp_lt(b, zero)))
    return gg.select(other_sign, gg.add(r, b), r)


# --------------------------------------------------------------------------- comparisons and logic


@onnx_op("Equal", since=7, inputs=(2, 2))
def equal(ctx: NodeContext) -> Tensor:
    """A == B, numpy broadcasting; a bool tensor."""
    return _binary(ctx, gg.cmp_eq)


def _ordered(ctx: NodeContext, build: Callable[[ir.Value, ir.Value], ir.Value],
             back: bool = False) -> Callable[[ir.Value, ir.Value], ir.Value]:
    """``build`` as is, or on uint64 inputs (held in int64) with their sign bits flipped, so that the signed
    comparison orders them as unsigned; ``back`` flips the result's again (Max, Min)."""
    if ctx.stored.get(ctx.node.input[0]) != np.dtype(np.uint64):
        return build
    if back:
        return lambda a, b: sign_flipped(build(sign_flipped(a), sign_flipped(b)))
    return lambda a, b: build(sign_flipped(a), sign_flipped(b))


@onnx_op("Less", since=7, inputs=(2, 2))
def less(ctx: NodeContext) -> Tensor:
    """A < B."""
    return _binary(ctx, _ordered(ctx, gg.cmp_lt))


@onnx_op("LessOrEqual", since=12, inputs=(2, 2))
def less_or_equal(ctx: NodeContext) -> Tensor:
    """A <= B."""
    return _binary(ctx, _ordered(ctx, gg.cmp_lte))


@onnx_op("Greater", since=7, inputs=(2, 2))
def greater(ctx: NodeContext) -> Tensor:
    """A > B, as B < A."""
    return _binary(ctx, _ordered(ctx, lambda a, b: gg.cmp_lt(b, a)))


@onnx_op("GreaterOrEqual", since=12, inputs=(2, 2))
def greater_or_equal(ctx: NodeContext) -> Tensor:
    """A >= B, as B <= A."""
    return _binary(ctx, _ordered(ctx, lambda a, b: gg.cmp_lte(b, a)))


@onnx_op("And", since=7, inputs=(2, 2))
def and_(ctx: NodeContext) -> Tensor:
    """A and B on bool tensors."""
    return _binary(ctx, gg.and_)


@onnx_op("Or", since=7, inputs=(2, 2))
def or_(ctx: NodeContext) -> Tensor:
    """A or B on bool tensors."""
    return _binary(ctx, gg.or_)


@onnx_op("Xor", since=1, inputs=(2, 2), attrs=("axis", "broadcast"))
@onnx_op("Xor", since=7, inputs=(2, 2))
def xor(ctx: NodeContext) -> Tensor:
    """A xor B on bool tensors (numpy broadcasting; before opset 7, the legacy broadcast)."""
    for i in (0, 1):
        if dtype_of(ctx.input(i)) != np.bool_:
            raise ctx.error(f"input #{i} must be a bool tensor, got {dtype_of(ctx.input(i))}")
    return (_legacy_binary if ctx.opset < 7 else _binary)(ctx, gg.xor)


def _bitwise(op_type: str, build: Callable[[ir.Value, ir.Value], ir.Value], doc: str) -> None:
    """Register BitwiseAnd/Or/Xor (opset 18): integers of any width, numpy broadcasting."""
    def handler(ctx: NodeContext) -> Tensor:
        for i in (0, 1):
            if not np.issubdtype(dtype_of(ctx.input(i)), np.integer):
                raise ctx.error(f"input #{i} must be an integer tensor, got {dtype_of(ctx.input(i))}")
        return _binary(ctx, build)

    handler.__name__, handler.__doc__ = op_type.lower(), doc
    onnx_op(op_type, since=18, inputs=(2, 2))(handler)


_bitwise("BitwiseAnd", gg.and_, "A & B on integers.")
_bitwise("BitwiseOr", gg.or_, "A | B on integers.")
_bitwise("BitwiseXor", gg.xor, "A ^ B on integers.")


@onnx_op("BitwiseNot", since=18, inputs=(1, 1))
def bitwise_not(ctx: NodeContext) -> Tensor:
    """~X on integers (an unsigned value is wrapped back into its range where the model stores it)."""
    if not np.issubdtype(dtype_of(ctx.input(0)), np.integer):
        raise ctx.error(f"the input must be an integer tensor, got {dtype_of(ctx.input(0))}")
    return gg.not_(ctx.operand(0))


@onnx_op("BitShift", since=11, inputs=(2, 2), attrs=("direction",))
def bit_shift(ctx: NodeContext) -> Tensor:
    """X shifted left or right (``direction``) by Y bits, numpy broadcasting, on int32 and int64 (the signed types
    of opset 28) and the unsigned types (computed in a wider signed integer, model.INTEGER_STORAGE_TYPES: their
    values are never negative there, and a left shift is wrapped back into the type's range; uint64, held in int64,
    shifts right logically): the right shift is arithmetic, the left one wraps, and a shift by a negative amount or
    by the width or more leaves the sign extension alone (-1 for a right shift of a negative X, else 0)."""
    direction = ctx.attr("direction", STRING, None)
    if direction not in (b"LEFT", b"RIGHT"):
        raise ctx.error(f"attribute 'direction' must be 'LEFT' or 'RIGHT', got {direction!r}")
    for i in (0, 1):
        ctx.check_element_type(ctx.input(i), f"input #{i}", (np.int32, np.int64))
    if direction == b"RIGHT" and ctx.stored.get(ctx.node.input[0]) == np.dtype(np.uint64):
        return _binary(ctx, _logical_shift_right)
    return _binary(ctx, gg.shift_left if direction == b"LEFT" else gg.shift_right)


def _logical_shift_right(x: ir.Value, s: ir.Value) -> ir.Value:
    """x >> s on the bits of a uint64 held in int64: one logical step (the top bit cleared), then an arithmetic
    shift by s - 1 of the non-negative result; by 0 it is x."""
    rest = gg.shift_right(unsigned_half(x), gg.sub(s, _splat(s, 1)))
    return gg.select(gg.cmp_eq(s, _splat(s, 0)), x, rest)


@onnx_op("Where", since=9, inputs=(3, 3))
def where(ctx: NodeContext) -> Tensor:
    """condition ? X : Y, all three broadcast to one shape."""
    cond, x, y = ctx.input(0), ctx.input(1), ctx.input(2)
    shape = _broadcast_shape(ctx, shape_of(cond), shape_of(x), shape_of(y))
    return gg.select(_expand(ctx, cond, shape), _expand(ctx, x, shape), _expand(ctx, y, shape))


# --------------------------------------------------------------------------- casts


def _convert(ctx: NodeContext, x: Tensor, dtype: np.dtype) -> Tensor:
    """``x`` as element type ``dtype``: a Cast node, or a numpy conversion for a known tensor."""
    if dtype_of(x) == dtype:
        return x
    if isinstance(x, Const):
        with np.errstate(invalid="ignore"):  # NaN or out-of-range floats to integers: undefined in ONNX too
            return ctx.const(x.array.astype(dtype))
    return gg.cast(x, to=mlir_type(dtype))


def saturated_float8(ctx: NodeContext, x: Tensor, stored: np.dtype) -> Tensor:
    """Float32 ``x`` clipped to the largest finite magnitude of 8-bit float type ``stored`` (infinities included, NaN
    kept), as ONNX's ``saturate`` has it; unchanged for any other type."""
    if stored not in FLOAT8_TYPES:
        return x
    largest = float(ml_dtypes.finfo(stored).max)
    if isinstance(x, Const):
        return ctx.const(np.clip(x.array, -largest, largest))
    return gg.clip(ctx.value(x), min=-largest, max=largest)


E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
_ROUND_MODES = ("up", "down", "nearest")


def e8m0_rounded(ctx: NodeContext, x: Tensor, saturate: bool) -> Tensor:
    """Float32 ``x`` rounded to a power of two, float8 e8m0's values, by the node's ``round_mode`` (default up: any
    fraction goes to the next power; down drops it; nearest as onnx.reference has it) on its exponent field (the sign
    is not read); NaN and the infinities NaN; with ``saturate`` the largest exponent is never rounded past, without
    it to NaN. In the graph on the float's bits (bitcast to int32)."""
    mode = ctx.attr("round_mode", STRING, b"up").decode("utf-8", "replace")
    if mode not in _ROUND_MODES:
        raise ctx.error(f"attribute 'round_mode' must be one of {', '.join(_ROUND_MODES)}, got '{mode}'")
    if isinstance(x, Const):
        return ctx.const(numpy_helper.to_float8e8m0(x.array, saturate, mode).astype(np.float32))
    i32 = mlir_type(np.dtype(np.int32))
    bits = gg.bitcast(ctx.value(x), to=i32)

    def k(value: int) -> ir.Value:
        return gg.splat(value=value, result_types=[bits.type])

    def nonzero(mask: int) -> ir.Value:
        return gg.not_(gg.cmp_eq(gg.and_(bits, k(mask)), k(0)))

    exponent = gg.shift_right(gg.and_(bits, k(0x7FFFFFFF)), k(23))
    special = gg.cmp_eq(exponent, k(255))
    if mode == "up":
        rounds = nonzero(0x7FFFFF)
    elif mode == "nearest":
        rounds = gg.and_(nonzero(0x400000), gg.or_(gg.or_(nonzero(0x200000), nonzero(0x1FFFFF)),
                                                   gg.cmp_lt(k(0), exponent)))
    else:
        rounds = None
    if rounds is not None:
        rounds = gg.and_(rounds, gg.not_(special))
        if saturate:
            rounds = gg.and_(rounds, gg.not_(gg.cmp_eq(exponent, k(254))))
        exponent = gg.add(exponent, gg.cast(rounds, to=i32))
    value = gg.select(gg.cmp_eq(exponent, k(0)), k(0x00400000), gg.shift_left(exponent, k(23)))
    value = gg.select(gg.cmp_eq(exponent, k(255)), k(0x7FC00000), value)
    return gg.bitcast(value, to=mlir_type(np.dtype(np.float32)))


def _saturated_or_rounded(ctx: NodeContext, x: Tensor, stored: np.dtype | None) -> Tensor:
    """What a cast to ``stored`` gives before the importer stores it: clipped to an 8-bit float's range (saturate,
    default 1), rounded to a power of two for float8 e8m0, else ``x``."""
    saturate = bool(ctx.attr("saturate", INT, 1))
    if stored == E8M0:
        return e8m0_rounded(ctx, x, saturate)
    return saturated_float8(ctx, x, stored) if saturate else x


@onnx_op("Cast", since=6, inputs=(1, 1), attrs=("to",))
@onnx_op("Cast", since=19, inputs=(1, 1), attrs=("to", "saturate"))
@onnx_op("Cast", since=24, inputs=(1, 1), attrs=("to", "saturate", "round_mode"))
def cast(ctx: NodeContext) -> Tensor:
    """Convert to element type ``to`` among FLOAT, INT64, INT32 and BOOL, and the storage types DOUBLE and FLOAT16
    (computed in float32: to FLOAT16 the importer rounds the value as it does every float16 the model stores), BFLOAT16
    and the 8-bit floats likewise (to these, ``saturate`` 1, the default, first clips to the type's largest finite
    magnitude; 0 lets a magnitude beyond it become infinity or NaN; to FLOAT8E8M0 ``round_mode`` rounds to a power
    of two first, :func:`e8m0_rounded`), and the integer storage types (model.INTEGER_STORAGE_TYPES: computed in a
    wider integer, wrapped into the type's range by the importer as every such value the model stores; UINT64 not
    from a float): float to integer truncates toward zero, to BOOL is != 0."""
    to = ctx.attr("to", INT, None)
    if to is None:
        raise ctx.error("attribute 'to' is required")
    dtype = compute_dtype(to)
    if to == TensorProto.UINT64 and dtype_of(ctx.input(0)).kind == "f":
        raise ctx.unsupported("a float cast to uint64 is not supported (uint64 is held in int64: values of 2^63 and "
                              "above would not convert)")
    if dtype is None:
        supported = ", ".join(type_name(t) for t in (*ELEMENT_TYPES, *STORAGE_TYPES, *INTEGER_STORAGE_TYPES))
        raise ctx.unsupported(f"unsupported element type {type_name(to)} for attribute 'to' (supported: {supported})")
    return _saturated_or_rounded(ctx, _convert(ctx, ctx.input(0), dtype), STORAGE_TYPES.get(to))


@onnx_op("BitCast", since=26, inputs=(1, 1), attrs=("to",))
def bit_cast(ctx: NodeContext) -> Tensor:
    """Each element's bits read as element type ``to`` of the same width. Integers of one width hold the same
    value whatever their sign here (the importer wraps it into the declared type's range as it stores it); a float
    is put into its declared type (float32 as it is, float16 / bfloat16 / an 8-bit float by a cast, exact: the
    value the model stores is already of that type), reinterpreted by a ``bitcast`` node, and the result widened to
    the type it is computed in. float64 is computed in float32: see :func:`_float64_bits`."""
    x = ctx.input(0)
    name = ctx.node.input[0]
    to = ctx.attr("to", INT, None)
    if to is None:
        raise ctx.error("attribute 'to' is required")
    source = ctx.stored.get(name, dtype_of(x))
    target = STORAGE_TYPES.get(to, INTEGER_STORAGE_TYPES.get(to, ELEMENT_TYPES.get(to)))
    if target is None:
        raise ctx.unsupported(f"unsupported element type {type_name(to)} for attribute 'to'")
    widths = {source: _bits(source), target: _bits(target)}
    if widths[source] != widths[target]:
        raise ctx.error(f"input type {source} ({widths[source]} bits) and 'to' {target} ({widths[target]} bits) "
                        "must have one width")
    if np.dtype(np.float64) in (source, target):
        return _float64_bits(ctx, x, source, target)
    floats = _is_float(source), _is_float(target)
    if widths[source] < 8 and any(floats):
        raise ctx.unsupported(f"a bitcast from {source} to {target} is not supported (only among integers below 8 "
                              "bits)")
    compute = compute_dtype(to)
    if not any(floats):  # integers (bool included): the same value
        return _convert(ctx, x, compute)
    bits = np.dtype(f"int{widths[source]}")
    value = ctx.value(x)  # (a NaN made from an integer's bits is computed as float32's NaN: its payload is not kept)
    if floats[0]:
        if source != dtype_of(x):
            value = gg.cast(value, to=mlir_type(source))
    else:
        value = gg.cast(value, to=mlir_type(bits)) if dtype_of(x) != bits else value
    narrow = target if floats[1] else bits
    result = gg.bitcast(value, to=mlir_type(narrow))
    return result if narrow == compute else gg.cast(result, to=mlir_type(compute))


def _float64_bits(ctx: NodeContext, x: Tensor, source: np.dtype, target: np.dtype) -> Tensor:
    """A bitcast from or to float64, which is computed in float32. From: the bits are at hand only in a graph
    input, read before its conversion to float32; a float64 computed in the graph is not supported. To: the float64
    is made, then computed in float32 like every float64, but a graph output keeps all its bits (the importer
    stores a float64 that was narrowed to float32 as the float64 itself)."""
    if source == np.dtype(np.float64):
        owner = x.owner.opview if isinstance(x, ir.OpResult) else None
        wide = owner.operands[0] if owner is not None and owner.operation.name == "glowgraph.cast" else None
        if wide is None or not isinstance(wide, ir.BlockArgument) or \
                ir.RankedTensorType(wide.type).element_type != ir.F64Type.get():
            raise ctx.unsupported(f"a bitcast from float64 to {target} of a value computed in the graph is not "
                                  "supported (float64 is computed in float32: only a graph input's bits are at hand)")
        return gg.bitcast(wide, to=mlir_type(np.dtype(np.int64)))
    value = ctx.value(x)  # int64, or uint64 held in int64 bit for bit
    return gg.cast(gg.bitcast(value, to=mlir_type(target)), to=mlir_type(COMPUTE_DTYPE))


def _is_float(dtype: np.dtype) -> bool:
    """A float type, numpy's or a storage type of ml_dtypes' (whose numpy kind is 'V')."""
    return dtype.kind == "f" or dtype in STORAGE_TYPES.values()


def _bits(dtype: np.dtype) -> int:
    """The width of a stored element of ``dtype`` (a bool's byte; the 4- and 2-bit types' own width)."""
    narrow = {np.dtype(t): bits for t, bits in ((ml_dtypes.int4, 4), (ml_dtypes.uint4, 4), (ml_dtypes.int2, 2),
                                                 (ml_dtypes.uint2, 2), (ml_dtypes.float4_e2m1fn, 4))}
    return narrow.get(np.dtype(dtype), 8 * np.dtype(dtype).itemsize)


@onnx_op("CastLike", since=15, inputs=(2, 2))
@onnx_op("CastLike", since=19, inputs=(2, 2), attrs=("saturate",))
@onnx_op("CastLike", since=24, inputs=(2, 2), attrs=("saturate", "round_mode"))
def cast_like(ctx: NodeContext) -> Tensor:
    """Cast to the element type of ``target_type`` (its values are not read), as :func:`cast` does; a target of a
    storage type makes the result one, which the importer rounds or wraps as it does every such value the model
    stores; to an 8-bit float ``saturate`` as :func:`cast` has it."""
    converted = _convert(ctx, ctx.input(0), dtype_of(ctx.input(1)))
    return _saturated_or_rounded(ctx, converted, ctx.stored.get(ctx.node.output[0]))


# --------------------------------------------------------------------------- activations


@onnx_op("LeakyRelu", since=1, inputs=(1, 1), attrs=("alpha", "consumed_inputs"))
@onnx_op("LeakyRelu", since=6, inputs=(1, 1), attrs=("alpha",))
def leaky_relu(ctx: NodeContext) -> Tensor:
    """X < 0 ? alpha * X : X."""
    return gg.leaky_relu(ctx.operand(0), alpha=ctx.attr("alpha", FLOAT, 0.01))


@onnx_op("PRelu", since=7, inputs=(2, 2))
def prelu(ctx: NodeContext) -> Tensor:
    """X < 0 ? slope * X : X, the slope broadcast to X's shape (unidirectional broadcasting)."""
    x, slope = ctx.input(0), ctx.input(1)
    shape, s = shape_of(x), shape_of(slope)
    if len(s) > len(shape) or any(d not in (1, n) for d, n in zip(s[::-1], shape[::-1])):
        raise ctx.error(f"slope of shape {fmt_shape(shape_of(slope))} does not broadcast to X's {fmt_shape(shape)}")
    return gg.prelu(ctx.value(x), _expand(ctx, slope, shape))


@onnx_op("Elu", since=1, inputs=(1, 1), attrs=("alpha", "consumed_inputs"))
@onnx_op("Elu", since=6, inputs=(1, 1), attrs=("alpha",))
def elu(ctx: NodeContext) -> Tensor:
    """X < 0 ? alpha * (exp(X) - 1) : X."""
    return gg.elu(ctx.operand(0), alpha=ctx.attr("alpha", FLOAT, 1.0))


@onnx_op("Selu", since=1, inputs=(1, 1), attrs=("alpha", "gamma", "consumed_inputs"))
@onnx_op("Selu", since=6, inputs=(1, 1), attrs=("alpha", "gamma"))
def selu(ctx: NodeContext) -> Tensor:
    """gamma * (X < 0 ? alpha * (exp(X) - 1) : X), as Mul(Elu(X, alpha), gamma)."""
    alpha = ctx.attr("alpha", FLOAT, 1.67326319217681884765625)
    gamma = ctx.attr("gamma", FLOAT, 1.05070102214813232421875)
    return _scale(ctx, gg.elu(ctx.operand(0), alpha=alpha), gamma)


@onnx_op("HardSigmoid", since=1, inputs=(1, 1), attrs=("alpha", "beta", "consumed_inputs"))
@onnx_op("HardSigmoid", since=6, inputs=(1, 1), attrs=("alpha", "beta"))
def hard_sigmoid(ctx: NodeContext) -> Tensor:
    """max(0, min(1, alpha * X + beta))."""
    return gg.hard_sigmoid(ctx.operand(0), alpha=ctx.attr("alpha", FLOAT, 0.2), beta=ctx.attr("beta", FLOAT, 0.5))


@onnx_op("HardSwish", since=14, inputs=(1, 1))
def hard_swish(ctx: NodeContext) -> Tensor:
    """X * HardSigmoid(X) with alpha 1/6 and beta 1/2."""
    x = ctx.operand(0)
    return gg.mul(x, gg.hard_sigmoid(x, alpha=1 / 6, beta=0.5))


@onnx_op("Mish", since=18, inputs=(1, 1))
def mish(ctx: NodeContext) -> Tensor:
    """X * tanh(softplus(X)), floats."""
    x = _float_input(ctx, 0)
    return gg.mul(x, gg.tanh(gg.softplus(x)))


@onnx_op("Shrink", since=9, inputs=(1, 1), attrs=("bias", "lambd"))
def shrink(ctx: NodeContext) -> Tensor:
    """X < -lambd ? X + bias : (X > lambd ? X - bias : 0), floats."""
    x = _float_input(ctx, 0)
    lambd, bias = ctx.attr("lambd", FLOAT, 0.5), ctx.attr("bias", FLOAT, 0.0)
    above = gg.select(gg.cmp_lt(_splat(x, lambd), x), gg.sub(x, _splat(x, bias)), _splat(x, 0.0))
    return gg.select(gg.cmp_lt(x, _splat(x, -lambd)), gg.add(x, _splat(x, bias)), above)


def _swish(x: ir.Value, alpha: float) -> ir.Value:
    return gg.mul(x, gg.sigmoid(x if alpha == 1.0 else gg.mul(x, _splat(x, alpha))))


@onnx_op("Swish", since=24, inputs=(1, 1), attrs=("alpha",))
def swish(ctx: NodeContext) -> Tensor:
    """X * Sigmoid(alpha * X), floats."""
    return _swish(_float_input(ctx, 0), ctx.attr("alpha", FLOAT, 1.0))


@onnx_op("SwiGLU", since=28, inputs=(2, 2), attrs=("alpha",))
def swiglu(ctx: NodeContext) -> Tensor:
    """Swish(A, alpha) * B, the gate A and the value B of one shape (no broadcasting), floats."""
    a, b = _float_input(ctx, 0), _float_input(ctx, 1)
    if shape_of(a) != shape_of(b):
        raise ctx.error(f"the gate {fmt_shape(shape_of(a))} and the value {fmt_shape(shape_of(b))} must have one "
                        "shape")
    return gg.mul(_swish(a, ctx.attr("alpha", FLOAT, 1.0)), b)


@onnx_op("Gelu", since=20, inputs=(1, 1), attrs=("approximate",))
def gelu(ctx: NodeContext) -> Tensor:
    """X * Phi(X), with erf (approximate "none") or the tanh approximation ("tanh")."""
    approximate = ctx.attr("approximate", STRING, b"none").decode("utf-8", "replace")
    if approximate not in ("none", "tanh"):
        raise ctx.error(f"attribute 'approximate' must be 'none' or 'tanh', got '{approximate}'")
    return gg.gelu(ctx.operand(0), approximate=approximate)


# --------------------------------------------------------------------------- variadic


def _pairwise(ctx: NodeContext, build: Callable[[ir.Value, ir.Value], ir.Value]) -> Tensor:
    """``build`` folded over the inputs left to right, each step broadcasting its two operands explicitly."""
    inputs = [ctx.input(i) for i in range(len(ctx.node.input))]

    def step(acc: Tensor, x: Tensor) -> ir.Value:
        shape = _broadcast_shape(ctx, shape_of(acc), shape_of(x))
        return build(_expand(ctx, acc, shape), _expand(ctx, x, shape))

    return functools.reduce(step, inputs)


@onnx_op("Sum", since=1, inputs=(1, _ANY), attrs=("consumed_inputs",))
@onnx_op("Sum", since=6, inputs=(1, _ANY))
def sum_(ctx: NodeContext) -> Tensor:
    """Elementwise sum of the inputs, numpy broadcasting."""
    return _pairwise(ctx, gg.add)


@onnx_op("Max", since=1, inputs=(1, _ANY), attrs=("consumed_inputs",))
@onnx_op("Max", since=6, inputs=(1, _ANY))
def max_(ctx: NodeContext) -> Tensor:
    """Elementwise maximum of the inputs."""
    return _pairwise(ctx, _ordered(ctx, gg.max_, back=True))


@onnx_op("Min", since=1, inputs=(1, _ANY), attrs=("consumed_inputs",))
@onnx_op("Min", since=6, inputs=(1, _ANY))
def min_(ctx: NodeContext) -> Tensor:
    """Elementwise minimum of the inputs."""
    return _pairwise(ctx, _ordered(ctx, gg.min_, back=True))


@onnx_op("Mean", since=6, inputs=(1, _ANY))
def mean(ctx: NodeContext) -> Tensor:
    """Sum of the inputs divided by their number."""
    for i in range(len(ctx.node.input)):
        if dtype_of(ctx.input(i)).kind != "f":
            raise ctx.error(f"input #{i} must be a float tensor, got {dtype_of(ctx.input(i))}")
    total = _pairwise(ctx, gg.add)
    if len(ctx.node.input) == 1:
        return total
    total = ctx.value(total)
    return gg.div(total, _splat(total, len(ctx.node.input)))
