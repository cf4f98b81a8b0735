"""Elementwise math, activations, comparisons and casts, end to end: small ONNX models compiled with
``glow_mlir.api.compile`` and run on the CPU, compared with ``onnx.reference.ReferenceEvaluator``
(rtol 1e-5, atol 1e-6; integers and booleans exactly).

Each model holds one family of ops, every output named after the op and variant it checks, and is compiled once per
module. The same models also run through the op tables' numpy ``evaluate`` rows, on the graph as imported and as
node lowering leaves it: that checks what constant folding computes, and that each lowering keeps the semantics.
Bad element types and attributes give one-line errors naming the node."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
import pytest
from conftest import interpret
from mlir import ir
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from glow_mlir import api
from glow_mlir.errors import ModelError, UnsupportedError

RTOL, ATOL = 1e-5, 1e-6
RNG = np.random.default_rng(11)
_ONNX_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
               np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}


@dataclass
class Case:
    """One model: nodes whose outputs are all graph outputs, with the inputs to run it on."""

    name: str
    nodes: list[onnx.NodeProto]
    inputs: dict[str, np.ndarray]
    initializers: dict[str, np.ndarray] = field(default_factory=dict)
    opset: int = 17

    def model(self) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(k, _ONNX_TYPES[v.dtype], v.shape) for k, v in self.inputs.items()],
            [helper.make_empty_tensor_value_info(o) for n in self.nodes for o in n.output],
            initializer=[numpy_helper.from_array(v, k) for k, v in self.initializers.items()])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])

    def reference(self) -> dict[str, np.ndarray]:
        model = self.model()
        names = [o.name for o in model.graph.output]
        return dict(zip(names, ReferenceEvaluator(model).run(None, self.inputs), strict=True))


def node(op: str, inputs: Sequence[str], output: str, **attrs) -> onnx.NodeProto:
    return helper.make_node(op, list(inputs), [output], name=output, **attrs)


def floats(*shape: int, low: float = -3.0, high: float = 3.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(np.float32)


def compare(got: np.ndarray, want: np.ndarray, name: str, rtol: float = RTOL, atol: float = ATOL) -> None:
    got_type, want_type = f"{got.dtype}{list(got.shape)}", f"{want.dtype}{list(want.shape)}"
    assert got_type == want_type, f"{name}: {got_type}, expected {want_type}"
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


@dataclass
class Compiled:
    """A case compiled once: its JIT outputs, the reference, and what the evaluate rows give at two stages."""

    case: Case
    outputs: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]
    evaluated: dict[str, dict[str, np.ndarray]]


def compile_case(case: Case) -> Compiled:
    model = case.model()
    compiled = api.compile(model)
    outputs = compiled.run(case.inputs)
    evaluated: dict[str, dict[str, np.ndarray]] = {}

    def on_stage(stage: str, module: ir.Module) -> None:
        if stage in ("import", "lower"):
            values = interpret(module, [case.inputs[s.name] for s in compiled.inputs])
            evaluated[stage] = {s.name: v for s, v in zip(compiled.outputs, values, strict=True)}

    api.lower_model(model, until="lower", on_stage=on_stage)
    return Compiled(case, outputs, case.reference(), evaluated)


def check_case(c: Compiled, tolerances: dict[str, tuple[float, float]] | None = None) -> None:
    """Every output of the JIT and of both interpretations against the reference."""
    tolerances = tolerances or {}
    assert sorted(c.outputs) == sorted(c.reference)
    for name, want in c.reference.items():
        rtol, atol = tolerances.get(name, (RTOL, ATOL))
        compare(c.outputs[name], want, name, rtol, atol)
        for stage, values in c.evaluated.items():
            compare(np.asarray(values[name]), want, f"{name} (evaluate rows, {stage} stage)", rtol, atol)


# --------------------------------------------------------------------------- float math

_POSITIVE = floats(3, 4, low=0.1, high=4.0)
FLOAT_MATH = Case("float_math", [
    node("Exp", ["x"], "exp"),
    node("Log", ["p"], "log"),
    node("Sqrt", ["p"], "sqrt"),
    node("Erf", ["x"], "erf"),
    node("Floor", ["x"], "floor"),
    node("Ceil", ["x"], "ceil"),
    node("Neg", ["x"], "neg"),
    node("Abs", ["x"], "abs"),
    node("Reciprocal", ["x"], "reciprocal"),
    node("Pow", ["p", "e"], "pow_broadcast"),
    node("Pow", ["x", "two"], "pow_int_exponent"),
    node("Pow", ["x", "n"], "pow_int_tensor_exponent"),
    node("Mod", ["x", "e"], "fmod", fmod=1),
    # the form exporters emit for exact Gelu: 0.5 * x * (1 + erf(x / sqrt(2)))
    node("Div", ["x", "sqrt2"], "gelu_scaled"),
    node("Erf", ["gelu_scaled"], "gelu_erf"),
    node("Add", ["gelu_erf", "one"], "gelu_phi"),
    node("Mul", ["x", "gelu_phi"], "gelu_x_phi"),
    node("Mul", ["gelu_x_phi", "half"], "gelu_decomposed"),
], {"x": floats(3, 4), "p": _POSITIVE, "e": np.array([0.5, -1.5, 2.0, 1.25], np.float32),
    "n": np.array([0, 1, 2, 3], np.int64)},
    {"two": np.array(2, np.int64), "sqrt2": np.array(math.sqrt(2), np.float32), "one": np.array(1, np.float32),
     "half": np.array(0.5, np.float32)})


@pytest.fixture(scope="module")
def float_math() -> Compiled:
    return compile_case(FLOAT_MATH)


def test_float_math(float_math: Compiled) -> None:
    # erff and powf come from libm; measured within 2.4e-7 of the reference, so the default tolerances hold
    check_case(float_math)


_UNIT = floats(3, 4, low=-0.95, high=0.95)
_SPECIAL = np.array([[0.0, -0.0, 1.5, -2.5], [np.inf, -np.inf, np.nan, 3.0], [0.5, -0.5, 2.5, -1e-30]], np.float32)
TRIG_AND_TESTS = Case("trig_and_tests", [
    node("Sin", ["x"], "sin"),
    node("Cos", ["x"], "cos"),
    node("Tan", ["u"], "tan"),
    node("Asin", ["u"], "asin"),
    node("Acos", ["u"], "acos"),
    node("Atan", ["x"], "atan"),
    node("Sinh", ["x"], "sinh"),
    node("Cosh", ["x"], "cosh"),
    node("Asinh", ["x"], "asinh"),
    node("Acosh", ["big"], "acosh"),
    node("Atanh", ["u"], "atanh"),
    node("Round", ["halves"], "round"),  # halves to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2
    node("Sign", ["special"], "sign"),  # 0, -0, inf, NaN
    node("Sign", ["ints"], "sign_int"),
    node("IsNaN", ["special"], "is_nan"),
    node("IsInf", ["special"], "is_inf"),
    node("IsInf", ["special"], "is_pos_inf", detect_negative=0),
    node("IsInf", ["special"], "is_neg_inf", detect_positive=0),
    node("Softsign", ["x"], "softsign"),
], {"x": floats(3, 4), "u": _UNIT, "big": floats(3, 4, low=1.0, high=5.0),
    "halves": np.array([[0.5, 1.5, 2.5, -2.5], [-0.5, 3.49, -3.51, 0.0], [7.5, 8.5, -7.5, 1e6]], np.float32),
    "special": _SPECIAL, "ints": np.array([[-3, 0, 5, -1]], np.int64)}, opset=20)


@pytest.fixture(scope="module")
def trig_and_tests() -> Compiled:
    return compile_case(TRIG_AND_TESTS)


def test_trigonometry_rounding_and_tests(trig_and_tests: Compiled) -> None:
    # sinf, tanf, asinhf... come from libm (a call per element); within the default tolerances of the reference
    check_case(trig_and_tests)


def test_erf_is_a_polynomial_not_a_libm_call() -> None:
    # cpu-approximate-math writes f32 erf as vector arithmetic: no call of libm's erff per lane
    model = Case("erf", [node("Erf", ["x"], "y")], {"x": floats(4)}).model()
    lowered = api.lower_model(model)  # holds the context the module lives in
    asm = lowered.module.operation.get_asm()
    assert "@erff" not in asm and "llvm.intr.copysign" in asm


# --------------------------------------------------------------------------- activations

_X3 = floats(2, 3, 4, low=-4.0, high=4.0)
ACTIVATIONS = Case("activations", [
    node("LeakyRelu", ["x"], "leaky_relu_default"),
    node("LeakyRelu", ["x"], "leaky_relu_alpha", alpha=0.3),
    node("PRelu", ["x", "slope_c11"], "prelu_channel_slope"),
    node("PRelu", ["x", "slope_1"], "prelu_scalar_slope"),
    node("HardSigmoid", ["x"], "hard_sigmoid_default"),
    node("HardSigmoid", ["x"], "hard_sigmoid_attrs", alpha=0.3, beta=0.4),
    node("HardSwish", ["x"], "hard_swish"),
    node("Elu", ["x"], "elu_default"),
    node("Elu", ["x"], "elu_alpha", alpha=0.5),
    node("Selu", ["x"], "selu_default"),
    node("Selu", ["x"], "selu_attrs", alpha=2.0, gamma=0.5),
    node("Softplus", ["x"], "softplus"),
    node("Gelu", ["x"], "gelu_none"),
    node("Gelu", ["x"], "gelu_tanh", approximate="tanh"),
    node("Celu", ["x"], "celu_default"),
    node("Celu", ["x"], "celu_alpha", alpha=0.5),
    node("ThresholdedRelu", ["x"], "thresholded_relu_default"),
    node("ThresholdedRelu", ["x"], "thresholded_relu_alpha", alpha=-0.5),
], {"x": _X3}, {"slope_c11": floats(3, 1, low=0.0, high=1.0), "slope_1": np.array([0.2], np.float32)}, opset=20)


@pytest.fixture(scope="module")
def activations() -> Compiled:
    return compile_case(ACTIVATIONS)


def test_activations(activations: Compiled) -> None:
    check_case(activations)


GATED = Case("gated", [
    node("Shrink", ["x"], "shrink_default"),
    node("Shrink", ["x"], "shrink_attrs", lambd=1.5, bias=0.25),
    node("Swish", ["x"], "swish_default"),
    node("Swish", ["x"], "swish_alpha", alpha=1.702),
    node("SwiGLU", ["x", "v"], "swiglu_default"),
    node("SwiGLU", ["x", "v"], "swiglu_alpha", alpha=0.5),
], {"x": _X3, "v": floats(*_X3.shape)}, opset=28)


def test_shrink_swish_swiglu() -> None:
    check_case(compile_case(GATED))


@pytest.mark.parametrize(("base", "exponent"), [(np.int32, np.int32), (np.int64, np.int64), (np.int32, np.int64),
                                               (np.int64, np.float32)])
@pytest.mark.parametrize("known", [True, False], ids=["known-exponent", "run-time-exponent"])
def test_pow_of_an_integer_base(base: type, exponent: type, known: bool) -> None:
    # products that overflow wrap as numpy's integer power does; a float exponent truncates the float power
    x = np.array([[2, -3, 7, 0, 1], [5, -1, 3, 11, -2]], base)
    y = np.array([3, 4, 0, 25, 1], exponent) if np.dtype(exponent).kind == "i" else \
        np.array([0.5, 2.0, 1.5, 3.0, 0.0], exponent)
    case = Case("pow_int", [node("Pow", ["x", "y"], "p")], {"x": x} | ({} if known else {"y": y}),
                {"y": y} if known else {})
    got = api.compile(case.model()).run(case.inputs)["p"]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, ReferenceEvaluator(case.model()).run(None, case.inputs)[0])


def test_swiglu_gate_and_value_must_have_one_shape() -> None:
    case = Case("bad", [node("SwiGLU", ["a", "b"], "g")], {"a": floats(2, 4), "b": floats(1, 4)}, opset=28)
    with pytest.raises(ModelError, match=r"node 'g' \(SwiGLU\): the gate 2x4 and the value 1x4 must have one "
                                         r"shape$"):
        api.compile(case.model())


def test_softplus_does_not_overflow() -> None:
    # the reference computes log(exp(x) + 1), which is inf from x = 89 on; the lowering keeps exp's argument <= 0
    x = np.array([-100.0, -20.0, 0.0, 20.0, 100.0], np.float32)
    model = Case("softplus_wide", [node("Softplus", ["x"], "y")], {"x": x}).model()
    np.testing.assert_allclose(api.compile(model)(x), np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))),
                               rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------- comparisons, logic and select

_A = np.array([[0, 1, 2, 3], [-1, 2, 2, 5], [3, 3, 0, -2]], np.float32)
_B = np.array([1, 1, 0, 3], np.float32)
_I = _A.astype(np.int64)
_J = _B.astype(np.int32)
_P = RNG.random((3, 4)) < 0.5
_Q = np.array([True, False, True, False])
COMPARE = Case("compare", [
    node("Equal", ["a", "b"], "equal_float_broadcast"),
    node("Less", ["a", "b"], "less_float"),
    node("Greater", ["a", "b"], "greater_float"),
    node("LessOrEqual", ["b", "a"], "less_or_equal_float"),
    node("GreaterOrEqual", ["a", "b"], "greater_or_equal_float"),
    node("Equal", ["i", "i_row"], "equal_int64"),
    node("Less", ["i", "i_row"], "less_int64"),
    node("Greater", ["j", "j"], "greater_int32"),
    node("LessOrEqual", ["j", "j_rev"], "less_or_equal_int32"),
    node("Equal", ["p", "q"], "equal_bool"),
    node("Not", ["p"], "not"),
    node("And", ["p", "q"], "and_broadcast"),
    node("Or", ["p", "q"], "or_broadcast"),
    node("Where", ["p", "a", "b"], "where_float"),
    node("Where", ["q", "i", "i_row"], "where_int64"),
    node("Where", ["p", "q", "p"], "where_bool"),
    node("Where", ["mask", "a", "b"], "where_known_condition"),
    node("And", ["p", "all_true"], "and_known_splat"),
], {"a": _A, "b": _B, "i": _I, "i_row": _B.astype(np.int64), "j": _J, "j_rev": _J[::-1].copy(), "p": _P, "q": _Q},
    {"mask": np.array([True, False, True, True]), "all_true": np.ones((3, 4), np.bool_)})


@pytest.fixture(scope="module")
def compare_ops() -> Compiled:
    return compile_case(COMPARE)


def test_compare_logic_select(compare_ops: Compiled) -> None:
    check_case(compare_ops)


def test_greater_is_less_with_swapped_operands() -> None:
    model = Case("greater", [node("Greater", ["a", "b"], "y")], {"a": _A, "b": _B}).model()
    lowered = api.lower_model(model, until="import")  # holds the context the ops live in
    block = lowered.module.body.operations[0].regions[0].blocks[0]
    cmp = [op.operation for op in block.operations][-2]
    assert cmp.name == "glowgraph.cmp_lt"
    assert cmp.operands[0].owner.name == "glowgraph.broadcast" and cmp.operands[1] == block.arguments[0]


# --------------------------------------------------------------------------- casts

_F = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 3.0], np.float32)
_INTS = np.array([-3, 0, 1, 7, -(2**40), 2**40 + 5], np.int64)
_I32 = np.array([-3, 0, 1, 7, -100, 2**30], np.int32)
_BOOLS = np.array([True, False, True, True, False, False])
_CAST_TARGETS = {"f32": TensorProto.FLOAT, "i64": TensorProto.INT64, "i32": TensorProto.INT32, "bool": TensorProto.BOOL}
CASTS = Case("casts", [
    *(node("Cast", [src], f"{src}_to_{dst}", to=to)
      for src in ("f", "i", "k", "b") for dst, to in _CAST_TARGETS.items()),
    node("Cast", ["known"], "known_to_i64", to=TensorProto.INT64),
    # CastLike to the element type of its second input, whose values it does not read
    *(node("CastLike", [src, like], f"{src}_like_{like}") for src in ("f", "i", "b") for like in ("f", "k", "b")),
], {"f": _F, "i": _INTS, "k": _I32, "b": _BOOLS}, {"known": np.array([1.9, -1.9], np.float32)})


@pytest.fixture(scope="module")
def casts() -> Compiled:
    return compile_case(CASTS)


def test_casts(casts: Compiled) -> None:
    check_case(casts)


def test_cast_of_a_known_tensor_is_done_at_import() -> None:
    model = Case("cast_known", [node("Cast", ["known"], "c", to=TensorProto.INT64), node("Add", ["c", "i"], "y")],
                 {"i": np.array([1, 2], np.int64)}, {"known": np.array([1.9, -1.9], np.float32)}).model()
    lowered = api.lower_model(model, until="import")
    names = [op.operation.name for op in lowered.module.body.operations[0].regions[0].blocks[0].operations]
    assert names == ["glowgraph.constant", "glowgraph.add", "func.return"]


# --------------------------------------------------------------------------- integer arithmetic (shape math)

_L = np.array([[-7, 9, 4], [10, -10, 3]], np.int64)
_R = np.array([3, -4, 4], np.int64)
INT_ARITH = Case("int_arith", [
    node("Add", ["l", "r"], "add"),
    node("Sub", ["l", "r"], "sub"),
    node("Mul", ["l", "r"], "mul"),
    node("Div", ["l", "r"], "div_truncates"),
    node("Max", ["l", "r"], "max"),
    node("Min", ["l", "r", "c"], "min_variadic"),
    node("Mod", ["l", "r"], "mod_divisor_sign"),
    node("Mod", ["l", "r"], "fmod_dividend_sign", fmod=1),
    node("Neg", ["l"], "neg"),
    node("Abs", ["l"], "abs"),
    node("Mod", ["l32", "r32"], "mod_int32"),
    node("Div", ["l32", "r32"], "div_int32"),
    node("Abs", ["l32"], "abs_int32"),
    node("Max", ["l32", "r32"], "max_int32"),
    node("Neg", ["l32"], "neg_int32"),
    node("PRelu", ["l", "r"], "prelu_int64"),
], {"l": _L, "r": _R, "l32": _L.astype(np.int32), "r32": _R.astype(np.int32)}, {"c": np.array(2, np.int64)})


@pytest.fixture(scope="module")
def int_arith() -> Compiled:
    return compile_case(INT_ARITH)


def test_integer_arithmetic(int_arith: Compiled) -> None:
    check_case(int_arith)


# --------------------------------------------------------------------------- variadic


VARIADIC = Case("variadic", [
    node("Sum", ["a"], "sum_one"),
    node("Sum", ["a", "row"], "sum_two"),
    node("Sum", ["col", "a", "row"], "sum_three_broadcast"),
    node("Mean", ["a", "row", "col"], "mean"),
    node("Max", ["row", "a", "col"], "max_variadic"),
    node("Min", ["a", "col"], "min_broadcast"),
], {"a": floats(3, 4), "row": floats(4), "col": floats(3, 1)})


@pytest.fixture(scope="module")
def variadic() -> Compiled:
    return compile_case(VARIADIC)


def test_variadic(variadic: Compiled) -> None:
    check_case(variadic)


# --------------------------------------------------------------------------- errors


def _import_error(nodes: list[onnx.NodeProto], inputs: dict[str, np.ndarray], opset: int = 17,
                  initializers: dict[str, np.ndarray] | None = None) -> Callable[[type, str], None]:
    model = Case("bad", nodes, inputs, initializers or {}, opset).model()

    def expect(kind: type, pattern: str) -> None:
        with pytest.raises(kind, match=pattern) as info:
            api.compile(model)
        assert "\n" not in str(info.value)

    return expect


_FX = {"x": np.zeros((2, 2), np.float32)}
_IX = {"x": np.zeros((2, 2), np.int64)}


@pytest.mark.parametrize(("nodes", "inputs", "kind", "pattern"), [
    ([node("Exp", ["x"], "e")], _IX, ModelError,
     r"^bad: node 'e' \(Exp\): operand #0 must have a float element type, got i64$"),
    ([node("Not", ["x"], "n")], _FX, ModelError,
     r"node 'n' \(Not\): operand #0 must have an integer element type, got f32$"),
    ([node("Where", ["x", "x", "x"], "w")], _FX, ModelError,
     r"node 'w' \(Where\): operand #0 must have element type i1"),
    ([node("Less", ["x", "x"], "c"), node("Less", ["c", "c"], "l")], _FX, ModelError,
     r"node 'l' \(Less\): operand #0 must have a numeric element type, got i1$"),
    ([node("Cast", ["x"], "c", to=TensorProto.STRING)], _FX, UnsupportedError,
     (r"node 'c' \(Cast\): unsupported element type STRING for attribute 'to' "
      r"\(supported: FLOAT, INT64, INT32, BOOL, DOUBLE, FLOAT16, BFLOAT16, "
      r"FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT4E2M1, FLOAT8E8M0, INT8, UINT8, INT16, "
      r"UINT16, UINT32, INT4, UINT4, INT2, UINT2, UINT64\)$")),
    ([node("Cast", ["x"], "c", to=TensorProto.FLOAT6E2M3)], _FX, UnsupportedError,
     r"node 'c' \(Cast\): unsupported element type FLOAT6E2M3"),
    ([node("Cast", ["x"], "c")], _FX, ModelError, r"node 'c' \(Cast\): attribute 'to' is required$"),
    ([node("Gelu", ["x"], "g", approximate="fast")], _FX, ModelError,
     r"node 'g' \(Gelu\): attribute 'approximate' must be 'none' or 'tanh', got 'fast'$"),
    ([node("Mod", ["x", "x"], "m", fmod=2)], _IX, ModelError,
     r"node 'm' \(Mod\): attribute 'fmod' must be 0 or 1, got 2$"),
    ([node("Mod", ["x", "x"], "m")], _FX, ModelError,
     r"node 'm' \(Mod\): fmod=0 is defined for integer inputs only; float32 inputs need fmod=1$"),
    ([node("LeakyRelu", ["x"], "l", alpha=2)], _FX, ModelError,
     r"node 'l' \(LeakyRelu\): attribute 'alpha' must be FLOAT, got INT$"),
    ([node("Reciprocal", ["x"], "r")], _IX, ModelError, r"node 'r' \(Reciprocal\): input #0 must be a float tensor"),
    ([node("Mean", ["x", "x"], "m")], _IX, ModelError,
     r"node 'm' \(Mean\): input #0 must be a float tensor, got int64$"),
], ids=["exp_int", "not_float", "where_float_cond", "less_bool", "cast_f16", "cast_f64", "cast_without_to",
        "gelu_mode", "fmod_2", "float_mod_0", "alpha_int", "reciprocal_int", "mean_int"])
def test_bad_types_and_attributes(nodes: list[onnx.NodeProto], inputs: dict[str, np.ndarray], kind: type,
                                  pattern: str) -> None:
    _import_error(nodes, inputs, opset=20)(kind, pattern)


def test_float_mod_0_from_opset_28_takes_the_divisors_sign() -> None:
    # Mod-28 allows fmod=0 on floats: numpy's floored mod, its special cases included
    a = np.array([5.5, -5.5, 5.5, -5.5, 6.0, -1.0, 1.0, np.inf, 3.0, -0.0], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, np.inf, -np.inf, 2.0, 0.0, 4.0], np.float32)
    graph = helper.make_graph([node("Mod", ["a", "b"], "m")], "g",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [10]) for n in "ab"],
                              [helper.make_tensor_value_info("m", TensorProto.FLOAT, [10])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 28)])
    got = api.compile(m, cache=False).run({"a": a, "b": b})["m"]
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(m).run(None, {"a": a, "b": b})[0]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:7], [1.5, 0.5, -0.5, -1.5, 0.0, np.inf, -np.inf])


def test_prelu_slope_must_broadcast_to_x() -> None:
    expect = _import_error([node("PRelu", ["x", "s"], "p")], _FX, initializers={"s": np.ones((3, 2), np.float32)})
    expect(ModelError, r"node 'p' \(PRelu\): slope of shape 3x2 does not broadcast to X's 2x2$")


def test_prelu_slope_may_not_grow_x() -> None:
    expect = _import_error([node("PRelu", ["x", "s"], "p")], _FX, initializers={"s": np.ones((2, 2, 2), np.float32)})
    expect(ModelError, r"node 'p' \(PRelu\): slope of shape 2x2x2 does not broadcast to X's 2x2$")


def test_operand_types_differ() -> None:
    expect = _import_error([node("Equal", ["x", "y"], "e")], {**_FX, "y": np.zeros((2, 2), np.int64)})
    expect(ModelError, r"node 'e' \(Equal\): operand #1 has type tensor<2x2xi64>, expected tensor<2x2xf32>")
