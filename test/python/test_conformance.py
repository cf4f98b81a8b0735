"""The ONNX backend on real ONNX node test cases, and the conformance command's classification: a crash or a hang in
a worker costs one case, an unsupported op is "unsupported", wrong answers and other exceptions are bugs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.backend.test.runner import Runner

from glow_mlir import conformance
from glow_mlir.conformance import Case, backend_runner, compare, run_case, run_cases
from glow_mlir.errors import InputError, ModelError, UnsupportedError
from glow_mlir.onnx_backend import GlowBackend

ROOT = Path(__file__).resolve().parents[2]

#: node test cases the backend must pass: the spine ops, and an input without elements (empty axes)
NODE_CASES = [
    "test_relu", "test_add_bcast", "test_sub", "test_mul_example", "test_div_bcast",
    "test_gemm_default_no_bias", "test_gemm_default_scalar_bias", "test_gemm_default_vector_bias",
    "test_gemm_default_matrix_bias", "test_gemm_transposeA", "test_gemm_all_attributes",
    "test_matmul_2d", "test_matmul_4d_1d", "test_matmul_1d_1d", "test_sigmoid", "test_tanh",
    "test_reshape_negative_dim", "test_reshape_zero_dim", "test_transpose_all_permutations_3",
    "test_transpose_default", "test_flatten_negative_axis1", "test_identity", "test_constant",
    "test_reduce_sum_empty_axes_input_noop",
]


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    """The spine cases by name (generating onnx's node cases takes a few seconds: once per module)."""
    found = {c.name: c for c in conformance.collect_cases(name_pattern=f"^({'|'.join(NODE_CASES)})$")}
    assert sorted(found) == sorted(NODE_CASES)
    return found


@pytest.mark.parametrize("name", NODE_CASES)
def test_backend_passes_node_case(cases: dict[str, Case], name: str):
    case = cases[name]
    assert case.in_supported_set
    outputs = GlowBackend.run_model(onnx.ModelProto.FromString(case.model), case.inputs)
    # onnx's own check: output count, shapes, dtypes, allclose with the case's tolerances
    Runner.assert_similar_outputs(case.outputs, list(outputs), case.rtol, case.atol)


# --------------------------------------------------------------------------- the backend's interface


def _model(node: onnx.NodeProto, inputs, outputs, initializers=(), opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph([node], "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name: str, shape, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def test_run_takes_a_list_or_a_dict_and_outputs_have_names():
    rep = GlowBackend.prepare(_model(helper.make_node("Sub", ["a", "b"], ["y"]), [_vi("a", [2]), _vi("b", [2])],
                                     [_vi("y", [2])]))
    a, b = np.array([3, 4], np.float32), np.array([1, 1], np.float32)
    out = rep.run([a, b])
    np.testing.assert_array_equal(out[0], [2, 3])
    np.testing.assert_array_equal(out["y"], [2, 3])
    np.testing.assert_array_equal(rep.run({"b": a, "a": b}).y, [-2, -3])
    with pytest.raises(InputError, match=r"1 inputs given, the model takes 2 \(a, b\)"):
        rep.run([a])
    with pytest.raises(InputError, match=r"missing \['b'\], unknown \['c'\]"):
        rep.run({"a": a, "c": b})


def test_dynamic_inputs_compile_per_shape():
    rep = GlowBackend.prepare(_model(helper.make_node("Relu", ["x"], ["y"]), [_vi("x", ["n", 3])], [_vi("y", None)]))
    for n in (1, 4, 1):
        x = np.linspace(-1, 1, n * 3, dtype=np.float32).reshape(n, 3)
        np.testing.assert_array_equal(rep.run([x])[0], np.maximum(x, 0))
    assert len(rep._cache) == 2


def test_inputs_needed_at_compile_time_are_bound_per_value():
    # Reshape's shape is a graph input: compiled for the value given, once per value.
    m = _model(helper.make_node("Reshape", ["x", "s"], ["y"]), [_vi("x", [2, 3]), _vi("s", [2], TensorProto.INT64)],
               [_vi("y", None)])
    rep = GlowBackend.prepare(m)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert rep.run([x, np.array([3, 2])])[0].shape == (3, 2)
    assert rep.run([x, np.array([6, -1])])[0].shape == (6, 1)
    np.testing.assert_array_equal(rep.run([x, np.array([3, 2])])[0], x.reshape(3, 2))
    assert len(rep._cache) == 2


def test_inputs_without_elements_are_compiled_as_constants():
    # Empty axes: ReduceSum over every axis. An empty tensor holds no data, so it is compiled in, not passed.
    m = _model(helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0),
               [_vi("x", [2, 3]), _vi("axes", [0], TensorProto.INT64)], [_vi("y", None)], opset=18)
    rep = GlowBackend.prepare(m)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(rep.run([x, np.zeros(0, np.int64)])[0], np.float32(15))


def test_a_value_needed_at_compile_time_binds_the_inputs_it_is_computed_from():
    # Reshape's shape computed by the model from input s (and from x's shape, which binds nothing): s is bound
    nodes = [helper.make_node("Shape", ["x"], ["xs"]), helper.make_node("Mul", ["s", "xs"], ["t"]),
             helper.make_node("Div", ["t", "xs"], ["u"]), helper.make_node("Reshape", ["x", "u"], ["y"])]
    graph = helper.make_graph(nodes, "g", [_vi("x", [2, 3]), _vi("s", [2], TensorProto.INT64)], [_vi("y", None)])
    rep = GlowBackend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(rep.run([x, np.array([3, 2])])[0], x.reshape(3, 2))
    assert rep.run([x, np.array([1, 6])])[0].shape == (1, 6)
    assert rep._bound == {"s"}


def test_an_input_whose_values_give_an_output_shape_is_bound_per_value():
    # NonZero's count depends on x's values: compiled per value of x
    rep = GlowBackend.prepare(_model(helper.make_node("NonZero", ["x"], ["y"]), [_vi("x", [2, 3])],
                                     [_vi("y", None, TensorProto.INT64)]))
    for x in (np.array([[0, 1, 0], [2, 0, 3]], np.float32), np.array([[1, 1, 0], [0, 0, 0]], np.float32)):
        np.testing.assert_array_equal(rep.run([x])[0], np.array(np.nonzero(x)))
    assert rep._bound == {"x"} and len(rep._cache) == 2


def test_run_node_types_the_node_from_its_inputs():
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=2.0)
    a, b, c = np.ones((2, 3), np.float32), np.ones((4, 3), np.float32), np.arange(4, dtype=np.float32)
    (y,) = GlowBackend.run_node(node, [a, b, c])
    np.testing.assert_allclose(y, 2 * a @ b.T + c)
    (y,) = GlowBackend.run_node(helper.make_node("Relu", ["x"], ["y"]), {"x": -a}, outputs_info=[(np.float32, (2, 3))])
    np.testing.assert_array_equal(y, np.zeros((2, 3)))


def test_devices():
    assert GlowBackend.supports_device("CPU")
    assert not GlowBackend.supports_device("CUDA")
    assert not GlowBackend.supports_device("TPU")
    with pytest.raises(UnsupportedError, match="device 'CUDA' is not supported"):
        GlowBackend.prepare(_model(helper.make_node("Relu", ["x"], ["y"]), [_vi("x", [2])], [_vi("y", [2])]), "CUDA")


def test_prepare_reports_unsupported_ops_of_dynamic_models():
    m = _model(helper.make_node("Foo", ["x"], ["y"]), [_vi("x", ["n"])], [_vi("y", None)])
    with pytest.raises(UnsupportedError, match="Foo"):
        GlowBackend.prepare(m)


# --------------------------------------------------------------------------- classification


def _case(name: str, model: onnx.ModelProto, inputs: list, outputs: list) -> Case:
    return Case(name, model.graph.node[0].op_type, model.SerializeToString(), inputs, outputs, 1e-3, 1e-7,
                conformance.in_supported_set(model, inputs, outputs))


def _relu_case(name: str = "relu") -> Case:
    x = np.array([-1.0, 2.0], np.float32)
    return _case(name, _model(helper.make_node("Relu", ["x"], ["y"]), [_vi("x", [2])], [_vi("y", [2])]), [x],
                 [np.maximum(x, 0)])


def _unsupported_case() -> Case:
    x = np.array([1.0], np.float32)
    return _case("foo", _model(helper.make_node("NoSuchOp", ["x"], ["y"]), [_vi("x", [1])], [_vi("y", [1])]), [x], [x])


def abort_on_relu(model: onnx.ModelProto, inputs: list[np.ndarray]):
    """A runner that crashes its process on Relu models, as MLIR does on some invalid IR."""
    if model.graph.node[0].op_type == "Relu":
        print("simulated assertion failure", file=sys.stderr, flush=True)
        os.abort()
    return backend_runner(model, inputs)


def hang_on_relu(model: onnx.ModelProto, inputs: list[np.ndarray]):
    """A runner that never returns on Relu models."""
    while model.graph.node[0].op_type == "Relu":
        time.sleep(1)
    return backend_runner(model, inputs)


def wrong_answer(model: onnx.ModelProto, inputs: list[np.ndarray]):
    return [np.asarray(o) + 1 for o in backend_runner(model, inputs)]


def model_error(model: onnx.ModelProto, inputs: list[np.ndarray]):
    raise ModelError("g: something is wrong")


def test_pool_classifies_pass_and_unsupported():
    outcomes = run_cases([_relu_case(), _unsupported_case()], jobs=2)
    assert [(o.name, o.status, o.in_supported_set) for o in outcomes] == [
        ("relu", "pass", True), ("foo", "unsupported", False)]
    assert "NoSuchOp" in outcomes[1].detail


def test_a_crash_costs_one_case():
    cases = [_relu_case("a"), _unsupported_case(), _relu_case("b")]
    outcomes = run_cases(cases, runner=abort_on_relu, jobs=1)
    assert [o.status for o in outcomes] == ["crash", "unsupported", "crash"]
    assert outcomes[0].detail == "worker killed by SIGABRT: simulated assertion failure"


def test_a_hang_is_a_timeout_and_costs_one_case():
    outcomes = run_cases([_relu_case(), _unsupported_case()], runner=hang_on_relu, jobs=1, timeout=1.0)
    assert [o.status for o in outcomes] == ["timeout", "unsupported"]


@pytest.mark.parametrize(("runner", "status", "detail"), [
    (backend_runner, "pass", ""),
    (wrong_answer, "fail-numeric", "output 0: 2 of 2 elements differ"),
    (model_error, "error", "ModelError: g: something is wrong"),
])
def test_run_case_classifies(runner, status: str, detail: str):
    got_status, got_detail = run_case(_relu_case(), runner)
    assert got_status == status and got_detail.startswith(detail)


def test_compare():
    f = np.array([1.0, 2.0], np.float32)
    assert compare([np.float32(3)], [np.array(3, np.float32)], 1e-3, 1e-7) is None  # numpy scalars as 0-d arrays
    assert compare([f], [f, f], 1e-3, 1e-7) == "2 outputs, 1 expected"
    assert compare([f], [f[:1]], 1e-3, 1e-7) == "output 0: shape [1], expected [2]"
    assert compare([f], [f.astype(np.float64)], 1e-3, 1e-7) == "output 0: dtype float64, expected float32"
    assert compare([np.array([np.nan], np.float32)], [np.array([np.nan], np.float32)], 1e-3, 1e-7) is None
    assert compare([np.array([True])], [np.array([False])], 1e-3, 1e-7).startswith("output 0: 1 of 1 elements")
    # sequences (lists) compare element by element; an empty optional (None) only with None
    assert compare([[f]], [f], 1e-3, 1e-7) == "output 0: got ndarray, expected list"
    assert compare([[f, f]], [[f, f]], 1e-3, 1e-7) is None
    assert compare([[f, f]], [[f]], 1e-3, 1e-7) == "output 0: a sequence of 1, expected 2"
    assert compare([[f, f]], [[f, f + 1]], 1e-3, 1e-7).startswith("output 0, element 1: 2 of 2 elements differ")
    assert compare([None], [None], 1e-3, 1e-7) is None
    assert compare([None], [f], 1e-3, 1e-7) == "output 0: got ndarray, expected NoneType"
    # a summed output (DFT): rounding noise where the exact value is 0 passes at 2^-20 of the largest magnitude
    want, got = np.array([8.0, 2e-7], np.float32), np.array([8.0, 0.0], np.float32)
    assert compare([want], [got], 1e-3, 1e-7) is not None
    assert compare([want], [got], 1e-3, 1e-7, scaled_atol=2.0 ** -20) is None
    assert compare([want], [np.array([8.0, 1e-4], np.float32)], 1e-3, 1e-7, scaled_atol=2.0 ** -20) is not None


def _dropout_case(ratio: float, training: bool) -> Case:
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"], seed=0)
    m = _model(node, [_vi("x", [100]), _vi("r", [], TensorProto.FLOAT), _vi("t", [], TensorProto.BOOL)],
               [_vi("y", [100]), _vi("mask", [100], TensorProto.BOOL)], opset=13)
    x = np.linspace(1.0, 2.0, 100, dtype=np.float32)
    mask = np.arange(100) % 4 == 0  # the reference's draws: never those of another runtime
    y = np.where(mask, x / (1 - ratio), 0).astype(np.float32)
    return Case("dropout", "Dropout", m.SerializeToString(), [x, np.float32(ratio), np.array(training)], [y, mask],
                1e-3, 1e-7, True)


def test_random_draws_pass_by_their_support_and_fail_outside_it():
    case = _dropout_case(0.75, True)
    assert conformance.draws(case) and not conformance.draws(_dropout_case(0.0, True))
    assert not conformance.draws(_dropout_case(0.75, False))
    assert run_case(case, backend_runner) == ("pass", conformance.RANDOM_PASS)
    # draws outside the support fail: a kept value not scaled, a mask that disagrees, or far too many kept
    x = case.inputs[0]
    check = conformance.DRAW_CHECKS["Dropout"]
    assert check(case.inputs, [x, np.ones(100, bool)]) == "an output is neither 0 nor its input / (1 - ratio)"
    assert check(case.inputs, [x * 4, np.zeros(100, bool)]) == "the mask disagrees with the output"
    assert check(case.inputs, [x * 4, np.ones(100, bool)]) == "kept 1.00 of the elements with ratio 0.75"
    bernoulli = conformance.DRAW_CHECKS["Bernoulli"]
    p = np.array([0.0, 1.0, 0.5, 0.5])
    assert bernoulli([p], [np.array([0.0, 1.0, 1.0, 0.0])]) is None
    assert bernoulli([p], [np.array([0.0, 1.0, 2.0, 0.0])]) == "values [2.0] outside {0, 1}"
    assert bernoulli([p], [np.array([1.0, 1.0, 1.0, 0.0])]) == "a draw differs from a certain probability (0 or 1)"


def test_supported_set_follows_the_handlers_and_element_types():
    assert _relu_case().in_supported_set
    assert not _unsupported_case().in_supported_set
    x = np.array([1], ml_dtypes.float6_e2m3fn)
    m = _model(helper.make_node("Relu", ["x"], ["y"]), [_vi("x", [1], TensorProto.FLOAT6E2M3)], [_vi("y", [1])])
    assert not conformance.in_supported_set(m, [x], [x])
    x = np.array([1], ml_dtypes.float8_e4m3fn)  # an 8-bit float storage type, computed in float32
    m = _model(helper.make_node("Relu", ["x"], ["y"]), [_vi("x", [1], TensorProto.FLOAT8E4M3FN)], [_vi("y", [1])])
    assert conformance.in_supported_set(m, [x], [x])
    x = np.array([1], np.uint8)  # an integer storage type, computed in int32
    m = _model(helper.make_node("Relu", ["x"], ["y"]), [_vi("x", [1], TensorProto.UINT8)], [_vi("y", [1])])
    assert conformance.in_supported_set(m, [x], [x])
    x = np.array([1.0], np.float64)  # a storage type, computed in float32
    m = _model(helper.make_node("Relu", ["x"], ["y"]), [_vi("x", [1], TensorProto.DOUBLE)], [_vi("y", [1])])
    assert conformance.in_supported_set(m, [x], [x])
    m = _model(helper.make_node("Reshape", ["x", "s"], ["y"]), [_vi("x", [1])], [_vi("y", [1])], opset=4)
    assert not conformance.in_supported_set(m, [np.ones(1, np.float32)], [np.ones(1, np.float32)])


def test_command_runs_and_writes_json(tmp_path: Path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = tmp_path / "result.json"
    done = subprocess.run(
        [sys.executable, "-m", "glow_mlir.conformance", "--cases", "^test_(relu|tanh_example|string_concat)$",
         "--jobs", "1", "--json", str(out)],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 cases in" in done.stdout and "2 pass" in done.stdout and "1 unsupported" in done.stdout
    result = json.loads(out.read_text())
    assert result["totals"]["pass"] == 2 and result["totals"]["unsupported"] == 1
    assert result["ops"]["Relu"]["pass"] == 1
    assert {c["name"]: c["status"] for c in result["cases"]}["test_string_concat"] == "unsupported"


def test_command_rejects_unknown_ops():
    assert conformance.main(["--ops", "NoSuchOp"]) == 2
