"""Elementwise math, comparisons, logic on stored bytes, select and casts."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

from .common import (
    BOOL_STORAGE_BITS,
    Body,
    Lowering,
    Operands,
    _arith_op,
    _constant,
    _is_bool,
    _memref,
    _unary,
    elementwise,
)
from .narrow_floats import is_narrow, narrowed, widened

_FloatPred, _IntPred = arith.CmpFPredicate, arith.CmpIPredicate


def _byte() -> ir.Type:
    return ir.IntegerType.get_signless(BOOL_STORAGE_BITS)


def _to_storage(flag: ir.Value) -> ir.Value:
    """An i1 result as the byte that stores it (0 or 1)."""
    return arith.extui(_byte(), flag)


def _from_storage(byte: ir.Value) -> ir.Value:
    """A stored boolean byte as an i1."""
    return arith.cmpi(_IntPred.ne, byte, _constant(byte.type, 0))


def _numeric_unary(float_op: Body, int_op: Body) -> Lowering:
    """Elementwise ``dest = fn(src)`` on floats or integers."""

    def lower(op: ir.OpView, new: Operands) -> None:
        elementwise(new.dest, [new.src], _arith_op(op, float_op, int_op))

    return lower


def _negi(x: ir.Value) -> ir.Value:
    return arith.subi(_constant(x.type, 0), x)


def _safe_divisor(b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(b with 0 and -1 replaced by 1, whether b was -1). Integer division by 0 and INT_MIN / -1 trap (SIGFPE)
    and would kill the process; ONNX leaves them undefined, so x / 0 gives x, x % 0 gives 0, and -1 divides
    by negation (wrapping, as two's complement does), never a crash."""
    one, minus_one = _constant(b.type, 1), _constant(b.type, -1)
    is_minus_one = arith.cmpi(_IntPred.eq, b, minus_one)
    trap = arith.ori(arith.cmpi(_IntPred.eq, b, _constant(b.type, 0)), is_minus_one)
    return arith.select(trap, one, b), is_minus_one


def _divsi(a: ir.Value, b: ir.Value) -> ir.Value:
    safe, is_minus_one = _safe_divisor(b)
    return arith.select(is_minus_one, _negi(a), arith.divsi(a, safe))


def _remsi(a: ir.Value, b: ir.Value) -> ir.Value:
    safe, is_minus_one = _safe_divisor(b)
    return arith.select(is_minus_one, _constant(a.type, 0), arith.remsi(a, safe))


def _floor_modi(a: ir.Value, b: ir.Value) -> ir.Value:
    # remsi has the sign of a; a non-zero remainder whose sign differs from b's moves by b to take b's sign
    r = _remsi(a, b)
    zero = _constant(r.type, 0)
    signs_differ = arith.xori(arith.cmpi(_IntPred.slt, r, zero), arith.cmpi(_IntPred.slt, b, zero))
    fix = arith.andi(signs_differ, arith.cmpi(_IntPred.ne, r, zero))
    return arith.select(fix, arith.addi(r, b), r)


def _pow(op: ir.OpView, new: Operands) -> None:
    elementwise(new.dest, [new.lhs, new.rhs], math.powf)  # the op table admits only floats


def _mod(op: ir.OpView, new: Operands) -> None:
    # the verifier allows fmod 0 (the divisor's sign) only on integers
    body = _arith_op(op, arith.remf, _remsi if op.fmod else _floor_modi)
    elementwise(new.dest, [new.lhs, new.rhs], body)


def _shift(left: bool) -> Lowering:
    """``dest = lhs << rhs`` or ``lhs >> rhs`` (arithmetic). LLVM's shifts are poison by the width or more; ONNX
    gives the sign extension alone there and for a negative amount (one unsigned compare finds both): 0, or lhs >>
    (width - 1) on the right (-1 for a negative lhs)."""

    def body(a: ir.Value, b: ir.Value) -> ir.Value:
        width = _constant(a.type, ir.IntegerType(a.type).width)
        inside = arith.cmpi(_IntPred.ult, b, width)
        if left:
            return arith.select(inside, arith.shli(a, b), _constant(a.type, 0))
        sign = arith.shrsi(a, arith.subi(width, _constant(a.type, 1)))
        return arith.select(inside, arith.shrsi(a, b), sign)

    def lower(op: ir.OpView, new: Operands) -> None:
        elementwise(new.dest, [new.lhs, new.rhs], body)  # the op table admits only i32 and i64

    return lower


def _compare(float_pred: arith.CmpFPredicate, int_pred: arith.CmpIPredicate) -> Lowering:
    """``dest = lhs pred rhs`` stored as a byte. Floats compare ordered (NaN is unequal and unordered, as in
    numpy); integers signed; i1 operands, stored as bytes 0 and 1, compare as those bytes."""

    def lower(op: ir.OpView, new: Operands) -> None:
        is_float = isinstance(_memref(new.lhs).element_type, ir.FloatType)

        def body(a: ir.Value, b: ir.Value) -> ir.Value:
            return _to_storage(arith.cmpf(float_pred, a, b) if is_float else arith.cmpi(int_pred, a, b))

        elementwise(new.dest, [new.lhs, new.rhs], body)

    return lower


def _select(op: ir.OpView, new: Operands) -> None:
    elementwise(new.dest, [new.cond, new.lhs, new.rhs], lambda c, a, b: arith.select(_from_storage(c), a, b))


def _not(op: ir.OpView, new: Operands) -> None:
    # a stored boolean is a byte 0 or 1: its not flips the low bit only; an integer's flips every bit
    flip = 1 if _is_bool(_memref(op.src).element_type) else -1
    elementwise(new.dest, [new.src], lambda x: arith.xori(x, _constant(x.type, flip)))


def _bitwise(fn: Body) -> Lowering:
    """``dest = lhs fn rhs``, bitwise on integers; on stored booleans (bytes 0 and 1) the logical op."""

    def lower(op: ir.OpView, new: Operands) -> None:
        elementwise(new.dest, [new.lhs, new.rhs], fn)

    return lower


def _cast_body(src: ir.Type, dest: ir.Type) -> Body:
    """Convert one element of glowir type ``src`` to ``dest`` (i1 arrives and leaves as a stored byte; bfloat16 and
    the 8-bit floats go through float32)."""
    src_float, dest_float = isinstance(src, ir.FloatType), isinstance(dest, ir.FloatType)
    if src == dest:
        return lambda x: x
    f32 = ir.F32Type.get()
    if is_narrow(src):
        then = _cast_body(f32, dest)
        return lambda x: then(widened(x, src))
    if is_narrow(dest):
        first = _cast_body(src, f32)
        return lambda x: narrowed(first(x), dest)
    if _is_bool(dest):  # != 0; a float NaN is true, as numpy's astype(bool) has it
        return lambda x: _to_storage(arith.cmpf(_FloatPred.UNE, x, _constant(x.type, 0)) if src_float
                                     else arith.cmpi(_IntPred.ne, x, _constant(x.type, 0)))
    if src_float and dest_float:  # f32 <-> f64 / f16: round to nearest even when narrowing
        wider = ir.FloatType(dest).width > ir.FloatType(src).width
        return lambda x: (arith.extf if wider else arith.truncf)(dest, x)
    if src_float:
        return lambda x: arith.fptosi(dest, x)  # truncates toward zero, like ONNX Cast
    # integers: i1 (a byte 0 or 1) widens unsigned, the others signed
    if dest_float:
        return lambda x: (arith.uitofp if _is_bool(src) else arith.sitofp)(dest, x)
    if ir.IntegerType(dest).width < ir.IntegerType(src).width:
        return lambda x: arith.trunci(dest, x)
    return lambda x: (arith.extui if _is_bool(src) else arith.extsi)(dest, x)


def _cast(op: ir.OpView, new: Operands) -> None:
    elementwise(new.dest, [new.src], _cast_body(_memref(op.src).element_type, _memref(op.dest).element_type))


def _bitcast(op: ir.OpView, new: Operands) -> None:
    to = _memref(op.dest).element_type
    elementwise(new.dest, [new.src], lambda x: arith.bitcast(to, x))


#: this family's rows of the lowering table (:data:`.program.LOWERINGS`)
LOWERINGS: dict[str, Lowering] = {
    "exp": _unary(math.exp),
    "log": _unary(math.log),
    "sqrt": _unary(math.sqrt),
    "erf": _unary(math.erf),
    "floor": _unary(math.floor),
    "ceil": _unary(math.ceil),
    "sin": _unary(math.sin),
    "cos": _unary(math.cos),
    "tan": _unary(math.tan),
    "asin": _unary(math.asin),
    "acos": _unary(math.acos),
    "atan": _unary(math.atan),
    "sinh": _unary(math.sinh),
    "cosh": _unary(math.cosh),
    "asinh": _unary(math.asinh),
    "acosh": _unary(math.acosh),
    "atanh": _unary(math.atanh),
    "round": _unary(math.roundeven),
    "neg": _numeric_unary(arith.negf, _negi),
    "abs": _numeric_unary(math.absf, math.absi),
    "element_pow": _pow,
    "element_mod": _mod,
    "element_shift_left": _shift(left=True),
    "element_shift_right": _shift(left=False),
    "element_cmp_eq": _compare(_FloatPred.OEQ, _IntPred.eq),
    "element_cmp_lt": _compare(_FloatPred.OLT, _IntPred.slt),
    "element_cmp_lte": _compare(_FloatPred.OLE, _IntPred.sle),
    "not": _not,
    "element_and": _bitwise(arith.andi),
    "element_or": _bitwise(arith.ori),
    "element_xor": _bitwise(arith.xori),
    "element_select": _select,
    "cast": _cast,
    "bitcast": _bitcast,
}
