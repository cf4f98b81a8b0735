"""Polynomial approximations of ``math.exp``, ``math.erf`` and ``math.tanh`` in arith ops, for scalars and vectors;
and, for targets whose C library has no ``roundevenf`` (newlib, bare metal), ``math.roundeven`` exactly in arith.

Why: the LLVM lowering calls libm for these (``expf``, ``erff``, ``tanhf``), one scalar call per lane, so a vectorized
softmax or gelu spent its time in libm (bert_tiny_encoder: 14.5% in ``expf``). MLIR's own approximations
(``populatePolynomialApproximatePatterns``) are not reachable from these bindings (no pass, no transform op), so the
same classic single-precision recipes are written here with the arith builders; built on a vector type, every op is
a vector op (AVX-512: FMAs, ``vroundps``, shifts).

- exp (Cephes ``expf``): ``x = n ln2 + r`` with ``n = floor(x log2(e) + 1/2)``, ``|r| <= ln2/2``; ``e^r`` by a
  degree-7 polynomial; ``2^n`` built in the exponent bits. Above 88.7228 it is +inf; below -87 (where ``2^n`` would
  be subnormal) it is 0 (the true value is below 2.8e-38). About 2 ulp.
- erf: odd, computed on ``|x|``: its Taylor series to x^13 below 0.5 (truncation < 3e-8), Abramowitz & Stegun 7.1.26
  above (absolute error 1.5e-7, relative below 3e-7 there since erf(0.5) = 0.52).
- tanh: ``x P(x^2) / Q(x^2)`` (degrees 6 and 3) on x clamped to +-7.9053, +-1 itself from there up (the quotient
  there rounds to 1 - 2^-22);
  ``x`` itself below 4e-4 (there tanh(x) = x to within half an ulp). The rational approximation that Eigen and
  onnxruntime's MLAS use: one division and ten FMAs, no exp and no branch to blend; relative error below 4e-7
  (measured on 2.1 million points, numpy float32 arithmetic). The earlier Cephes recipe (a polynomial below 0.625,
  ``1 - 2 / (e^(2|x|) + 1)`` above, both computed and one selected) took 4x the time of onnxruntime's tanh.

- roundeven (exact, not an approximation): below 2^23 in magnitude ``(|x| + 2^23) - 2^23`` is |x| rounded to the
  nearest integer, ties to even (the sum's ulp is 1 and the FPU rounds to nearest even), its sign put back with
  copysign (-0.4 -> -0.0); from 2^23 up every float is an integer, kept, as are inf and NaN. Without it the LLVM
  lowering calls ``roundevenf`` wherever the CPU has no rounding instruction (Cortex-M4), which newlib lacks.

test/python/test_vectorize_rest.py checks them against numpy on many points (relative tolerance 1e-6 plus absolute
1e-7 for erf).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, math

LOG2E = 1.44269504088896341
#: ln 2 split in two: n * LN2_HI is exact for the n that occur
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4
#: e^r = 1 + r + r^2 (c0 + c1 r + ... ) on |r| <= ln2/2 (Cephes expf)
EXP_POLY = (5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3, 1.3981999507e-3, 1.9875691500e-4)
EXP_MAX, EXP_MIN = 88.72283905206835, -86.5
#: erf(x) = 2/sqrt(pi) sum (-1)^k x^(2k+1) / (k! (2k+1)) below ERF_SPLIT
ERF_SPLIT = 0.5
ERF_TAYLOR = tuple((-1) ** k / (pymath.factorial(k) * (2 * k + 1)) * 2 / pymath.sqrt(pymath.pi) for k in range(7))
#: Abramowitz & Stegun 7.1.26: erf(x) = 1 - t (a1 + a2 t + ... + a5 t^4) e^(-x^2), t = 1 / (1 + p x)
ERF_P = 0.3275911
ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
#: tanh(x) = x P(x^2) / Q(x^2) on |x| <= TANH_CLAMP (Eigen's and MLAS's float tanh), x below TANH_TINY
TANH_CLAMP, TANH_TINY = 7.90531110763549805, 4e-4
TANH_P = (4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05, 5.12229709037114e-08,
          -8.60467152213735e-11, 2.00018790482477e-13, -2.76076847742355e-16)
TANH_Q = (4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06)


def const(t: ir.Type, value: float) -> ir.Value:
    """A float or integer constant of scalar or vector type ``t`` (a splat for vectors)."""
    element = ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t
    attr = (ir.FloatAttr.get(element, float(value)) if isinstance(element, ir.FloatType)
            else ir.IntegerAttr.get(element, int(value)))
    if isinstance(t, ir.VectorType):
        attr = ir.DenseElementsAttr.get_splat(t, attr)
    return arith.constant(t, attr)


def _with_element(t: ir.Type, element: ir.Type) -> ir.Type:
    return ir.VectorType.get(ir.VectorType(t).shape, element) if isinstance(t, ir.VectorType) else element


def _horner(x: ir.Value, coefficients: Sequence[float]) -> ir.Value:
    """c0 + c1 x + c2 x^2 + ... as FMAs."""
    acc = const(x.type, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = math.fma(acc, x, const(x.type, c))
    return acc


def exp(x: ir.Value) -> ir.Value:
    """e^x (see the module docstring)."""
    t = x.type
    i32 = _with_element(t, ir.IntegerType.get_signless(32))
    clamped = arith.minimumf(arith.maximumf(x, const(t, EXP_MIN)), const(t, EXP_MAX))
    n = math.floor(math.fma(clamped, const(t, LOG2E), const(t, 0.5)))
    r = math.fma(n, const(t, -LN2_LO), math.fma(n, const(t, -LN2_HI), clamped))
    p = math.fma(arith.mulf(r, r), _horner(r, EXP_POLY), arith.addf(r, const(t, 1.0)))
    # 2^(n-1) in the exponent bits, times 2: n reaches 128, whose 2^n alone would be infinite
    bits = arith.shli(arith.addi(arith.fptosi(i32, n), const(i32, 126)), const(i32, 23))
    y = arith.mulf(arith.mulf(p, arith.bitcast(t, bits)), const(t, 2.0))
    y = arith.select(arith.cmpf(arith.CmpFPredicate.OGT, x, const(t, EXP_MAX)), const(t, float("inf")), y)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OLT, x, const(t, EXP_MIN)), const(t, 0.0), y)


def erf(x: ir.Value) -> ir.Value:
    """erf(x) (see the module docstring)."""
    t = x.type
    a = math.absf(x)
    small = arith.mulf(a, _horner(arith.mulf(a, a), ERF_TAYLOR))
    u = arith.divf(const(t, 1.0), math.fma(a, const(t, ERF_P), const(t, 1.0)))
    tail = arith.mulf(arith.mulf(u, _horner(u, ERF_A)), exp(arith.negf(arith.mulf(a, a))))
    large = arith.subf(const(t, 1.0), tail)
    y = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, a, const(t, ERF_SPLIT)), small, large)
    return math.copysign(y, x)


def tanh(x: ir.Value) -> ir.Value:
    """tanh(x) (see the module docstring)."""
    t = x.type
    c = arith.minimumf(arith.maximumf(x, const(t, -TANH_CLAMP)), const(t, TANH_CLAMP))
    z = arith.mulf(c, c)
    y = arith.divf(arith.mulf(c, _horner(z, TANH_P)), _horner(z, TANH_Q))
    # the quotient at the clamp rounds to 1 - 2^-22, not 1: from the clamp up +-1 itself, so that 1 + tanh(x) in
    # GELU's tail is 0 (it was 2.4e-7, and GELU(-1000) -1.2e-4)
    a = math.absf(x)
    y = arith.select(arith.cmpf(arith.CmpFPredicate.OGE, a, const(t, TANH_CLAMP)), math.copysign(const(t, 1.0), x), y)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OLT, a, const(t, TANH_TINY)), x, y)


#: 2^23: from here up every float32 is an integer
ROUND_LIMIT = float(1 << 23)


def roundeven(x: ir.Value) -> ir.Value:
    """x rounded to the nearest integer, ties to even, exactly (see the module docstring)."""
    t = x.type
    magnitude = math.absf(x)
    limit = const(t, ROUND_LIMIT)
    rounded = math.copysign(arith.subf(arith.addf(magnitude, limit), limit), x)
    return arith.select(arith.cmpf(arith.CmpFPredicate.OLT, magnitude, limit), rounded, x)


#: math op -> its approximation (f32 scalars and vectors only: the coefficients are single precision)
APPROXIMATIONS: dict[str, Callable[[ir.Value], ir.Value]] = {"math.exp": exp, "math.erf": erf, "math.tanh": tanh}
#: math op -> its exact expansion, for targets whose C library lacks the function
EXPANSIONS: dict[str, Callable[[ir.Value], ir.Value]] = {"math.roundeven": roundeven}


def is_f32(t: ir.Type) -> bool:
    element = ir.VectorType(t).element_type if isinstance(t, ir.VectorType) else t
    return isinstance(element, ir.F32Type)


def approximate(module: ir.Operation, expand: bool = False) -> int:
    """Replace every f32 math.exp / erf / tanh in ``module`` by its approximation, and with ``expand`` every f32
    math.roundeven by its expansion; returns how many."""
    found: list[ir.Operation] = []
    table = {**APPROXIMATIONS, **(EXPANSIONS if expand else {})}

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in table and is_f32(op.results[0].type):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for op in found:
        with ir.InsertionPoint(op), op.location:
            value = table[op.name](op.operands[0])
        op.results[0].replace_all_uses_with(value)
        op.erase()
    return len(found)
