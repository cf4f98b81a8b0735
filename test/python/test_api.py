"""The Python API: compile, call, and check against onnx.reference on small generated networks."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import InputError

RTOL, ATOL = 1e-5, 1e-6


def _model(nodes, inputs, outputs, initializers=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "net", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    return m


def _vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def _w(name, shape, rng, scale=0.5):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], rtol=RTOL, atol=ATOL) -> None:
    expected = ReferenceEvaluator(model).run(None, feeds)
    compiled = glow.compile(model)
    got = compiled.run(feeds)
    for out, want in zip(model.graph.output, expected):
        np.testing.assert_allclose(got[out.name], want, rtol=rtol, atol=atol, err_msg=out.name)
        assert got[out.name].dtype == want.dtype


def test_mlp_with_every_spine_op():
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="fc1", transB=1, alpha=0.7, beta=1.3),
        helper.make_node("Relu", ["h1"], ["r1"], name="relu1"),
        helper.make_node("MatMul", ["r1", "w2"], ["m2"], name="mm2"),
        helper.make_node("Add", ["m2", "b2"], ["h2"], name="bias2"),
        helper.make_node("Tanh", ["h2"], ["t2"], name="tanh"),
        helper.make_node("Sub", ["t2", "c"], ["s"], name="sub"),
        helper.make_node("Mul", ["s", "s"], ["sq"], name="square"),
        helper.make_node("Div", ["sq", "d"], ["q"], name="div"),
        helper.make_node("Sigmoid", ["q"], ["y"], name="sigmoid"),
    ]
    inits = [_w("w1", (16, 8), rng), _w("b1", (16,), rng), _w("w2", (16, 4), rng), _w("b2", (4,), rng),
             _w("c", (1, 4), rng), numpy_helper.from_array(np.array(2.0, np.float32), "d")]
    m = _model(nodes, [_vi("x", [5, 8])], [_vi("y", [5, 4])], inits)
    _check(m, {"x": rng.standard_normal((5, 8)).astype(np.float32)})


def test_data_movement_and_two_outputs():
    rng = np.random.default_rng(1)
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], name="t", perm=[0, 2, 1]),
        helper.make_node("Reshape", ["t", "shape"], ["r"], name="r"),
        helper.make_node("Flatten", ["x"], ["f"], name="f", axis=2),
        helper.make_node("Identity", ["f"], ["i"], name="i"),
        helper.make_node("Relu", ["i"], ["y2"], name="relu"),
        helper.make_node("Add", ["r", "r"], ["y1"], name="add"),
    ]
    shape = numpy_helper.from_array(np.array([2, -1], np.int64), "shape")
    m = _model(nodes, [_vi("x", [2, 3, 4])], [_vi("y1", [2, 12]), _vi("y2", [6, 4])], [shape])
    _check(m, {"x": rng.standard_normal((2, 3, 4)).astype(np.float32)})


def test_broadcasting_both_ways():
    rng = np.random.default_rng(2)
    nodes = [helper.make_node("Add", ["a", "b"], ["s"], name="add"), helper.make_node("Mul", ["s", "c"], ["y"], name="m")]
    m = _model(nodes, [_vi("a", [3, 1]), _vi("b", [1, 4]), _vi("c", [4])], [_vi("y", [3, 4])])
    feeds = {k: rng.standard_normal(s).astype(np.float32) for k, s in (("a", (3, 1)), ("b", (1, 4)), ("c", (4,)))}
    _check(m, feeds)


def test_scalar_input():
    # Regression: the input check turned a 0-d input into a 1-D array, which the program then rejected.
    nodes = [helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="fc")]
    m = _model(nodes, [_vi("a", [2, 3]), _vi("b", [3, 4]), _vi("c", [])], [_vi("y", [2, 4])])
    rng = np.random.default_rng(3)
    _check(m, {"a": rng.standard_normal((2, 3)).astype(np.float32), "b": rng.standard_normal((3, 4)).astype(np.float32),
               "c": np.array(0.5, np.float32)})


@pytest.fixture(scope="module")
def two_outputs() -> glow.CompiledModel:
    nodes = [helper.make_node("Relu", ["a"], ["y1"], name="r"), helper.make_node("Sub", ["a", "b"], ["y2"], name="s")]
    return glow.compile(_model(nodes, [_vi("a", [2]), _vi("b", [2])], [_vi("y1", [2]), _vi("y2", [2])]))


def test_call_positionally_and_by_name(two_outputs):
    a, b = np.array([-1.0, 2.0], np.float32), np.array([0.5, 0.5], np.float32)
    y1, y2 = two_outputs(a, b)
    np.testing.assert_array_equal(y1, [0.0, 2.0])
    np.testing.assert_array_equal(y2, [-1.5, 1.5])
    z1, z2 = two_outputs(a, b=b)
    np.testing.assert_array_equal(z2, y2)
    out = two_outputs.run({"b": b, "a": a})
    assert list(out) == ["y1", "y2"]
    assert [s.name for s in two_outputs.inputs] == ["a", "b"]


def test_the_name_lists_are_the_callers_own(two_outputs):
    # the names are worked out once for every call to check against: what the caller does to a list it got
    # changes nothing
    two_outputs.input_names.append("c")
    two_outputs.output_names.clear()
    assert two_outputs.input_names == ["a", "b"] and two_outputs.output_names == ["y1", "y2"]
    y1, y2 = two_outputs(np.array([-1.0, 2.0], np.float32), np.ones(2, np.float32))
    np.testing.assert_array_equal(y1, [0.0, 2.0])
    np.testing.assert_array_equal(y2, [-2.0, 1.0])


def test_repeated_calls_do_not_alias(two_outputs):
    a, b = np.array([1.0, 2.0], np.float32), np.zeros(2, np.float32)
    first, _ = two_outputs(a, b)
    second, _ = two_outputs(a * 3, b)
    np.testing.assert_array_equal(first, [1.0, 2.0])
    np.testing.assert_array_equal(second, [3.0, 6.0])


def test_inputs_and_outputs_are_used_where_they_are(two_outputs):
    # the code reads the caller's arrays (a strided one is copied to be contiguous first) and writes fresh outputs
    # on 64-byte boundaries; the inputs are left as they were, and rerun does not touch the outputs returned
    a = np.array([-1.0, 2.0, 7.0, 4.0], np.float32)[::2]
    b = np.array([0.5, 0.5], np.float32)
    y1, y2 = two_outputs(a, b)
    np.testing.assert_array_equal(y1, [0.0, 7.0])
    np.testing.assert_array_equal(y2, [-1.5, 6.5])
    assert y1.ctypes.data % 64 == 0 and y2.ctypes.data % 64 == 0
    np.testing.assert_array_equal(a, [-1.0, 7.0])
    y1[...] = 42.0
    two_outputs.rerun()
    np.testing.assert_array_equal(y1, [42.0, 42.0])
    z1, _ = two_outputs(a * 2, b)
    np.testing.assert_array_equal(z1, [0.0, 14.0])


def test_inputs_are_read_where_they_are():
    # the code's input descriptor points at the caller's array itself (no copy), and a later write into that array
    # shows in the next call
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [256, 256])], [_vi("y", [256, 256])])
    compiled = glow.compile(model, cache=False)
    code = compiled.stage("codegen").text
    assert '"constantWeight", "activations", "x", "y"' in code and "mutableWeight" not in code
    x = np.full((256, 256), -1.0, np.float32)
    assert compiled(x).max() == 0.0
    assert compiled._jit._io[0][0].aligned == x.ctypes.data
    x[0, 0] = 3.0
    assert compiled(x)[0, 0] == 3.0


def test_read_only_and_scalar_inputs_and_outputs_of_every_width():
    # a read-only input is read where it is too; outputs of 1-, 4- and 8-byte elements (and a 0-d one) start on
    # 64-byte boundaries and hold what the reference computes
    nodes = [helper.make_node("Greater", ["x", "s"], ["gt"]), helper.make_node("Cast", ["x"], ["wide"], to=7),
             helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0)]
    model = _model(nodes, [_vi("x", [3, 5]), _vi("s", [])],
                   [_vi("gt", [3, 5], TensorProto.BOOL), _vi("wide", [3, 5], TensorProto.INT64), _vi("total", [])])
    compiled = glow.compile(model, cache=False)
    x = (np.arange(15, dtype=np.float32).reshape(3, 5) - 7) * 1.5
    x.flags.writeable = False
    s = np.array(2.0, np.float32)
    for _ in range(2):
        got = compiled.run({"x": x, "s": s})
        assert compiled._jit._io[0][0].aligned == x.ctypes.data
        want = ReferenceEvaluator(model).run(None, {"x": x, "s": s})
        for (name, value), ref in zip(got.items(), want):
            np.testing.assert_array_equal(value, ref, err_msg=name)
            assert value.dtype == ref.dtype and value.shape == ref.shape, name
            assert value.ctypes.data % 64 == 0, name
    compiled.rerun()
    np.testing.assert_array_equal(compiled._jit._rerun_outputs["total"][0], want[2])


def test_an_input_that_is_also_an_output(tmp_path, monkeypatch):
    # the program names its copy of the input apart (x_1); the caller sees the graph's names, compiled or cached
    monkeypatch.setenv("GLOW_CACHE_DIR", str(tmp_path))
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [4, 5])], [_vi("x", [4, 5]), _vi("y", [4, 5])])
    x = np.arange(20, dtype=np.float32).reshape(4, 5) - 10
    for cache in ("miss", "hit"):
        compiled = glow.compile(model)
        assert compiled.cache == cache
        same, relu = compiled(x)
        np.testing.assert_array_equal(same, x)
        np.testing.assert_array_equal(relu, np.maximum(x, 0))
        assert list(compiled.run({"x": x})) == ["x", "y"]


@pytest.mark.parametrize("call, message", [
    (lambda m: m(np.zeros(2, np.float32)), "missing input 'b'"),
    (lambda m: m(np.zeros(2, np.float32), np.zeros(2, np.float32), np.zeros(2, np.float32)), "3 inputs given"),
    (lambda m: m(a=np.zeros(2, np.float32), c=np.zeros(2, np.float32)), "unknown input 'c'"),
    (lambda m: m(np.zeros(3, np.float32), np.zeros(2, np.float32)), "input 'a' has shape [3], expected [2]"),
    (lambda m: m(np.zeros(2, np.float64), np.zeros(2, np.float32)), "input 'a' has dtype float64, expected float32"),
    (lambda m: m(np.zeros(2, np.float32), a=np.zeros(2, np.float32)), "input 'a' given twice"),
])
def test_bad_inputs_are_named(two_outputs, call, message):
    with pytest.raises(InputError, match=None) as err:
        call(two_outputs)
    assert message in str(err.value)
    assert str(err.value).startswith("net: ")


def test_stages_are_recorded():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    compiled = glow.compile(_model(nodes, [_vi("x", [2])], [_vi("y", [2])]), cache=False)
    assert [s.name for s in compiled.stages] == ["import", "optimize", "lower", "irgen", "iropt", "codegen", "jit"]
    assert '"glowgraph.relu"' in compiled.stage("import").text
    assert '"glowir.relu"' in compiled.stage("irgen").text
    assert "glowir.activations_size" in compiled.stage("iropt").text
    assert "llvm.func" in compiled.stage("codegen").text
    with pytest.raises(KeyError):
        compiled.stage("nope")


def test_optimize_off_skips_the_graph_optimizer():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    compiled = glow.compile(_model(nodes, [_vi("x", [2])], [_vi("y", [2])]), optimize=False, cache=False)
    assert [s.name for s in compiled.stages] == ["import", "lower", "irgen", "iropt", "codegen", "jit"]
    np.testing.assert_array_equal(compiled(np.array([-1.0, 1.0], np.float32)), [0.0, 1.0])


def test_package_level_compile():
    import glow_mlir

    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
    compiled = glow_mlir.compile(_model(nodes, [_vi("x", [2])], [_vi("y", [2])]))
    assert isinstance(compiled, glow_mlir.CompiledModel)
    np.testing.assert_array_equal(compiled(np.array([-2.0, 3.0], np.float32)), [0.0, 3.0])
