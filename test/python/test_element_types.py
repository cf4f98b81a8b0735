"""Storage element types (importer/model.py STORAGE_TYPES): a model's float64 and float16 tensors are computed in
float32 and kept as declared at the program's boundary; where the model stores a float16 value it is rounded to
float16, so results equal onnx.reference's, which computes in the declared types."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir

RNG = np.random.default_rng(7)
TYPES = {"float16": (TensorProto.FLOAT16, np.float16), "float64": (TensorProto.DOUBLE, np.float64)}


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, tuple[int, list[int]]],
           outputs: dict[str, tuple[int, list[int]]], weights: list[onnx.TensorProto] = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "types", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
                              [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()], list(weights))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], rtol: float, atol: float) -> None:
    compiled = glow_mlir.compile(model, threads=1, cache=False)
    want = ReferenceEvaluator(model).run(None, feeds)
    got = compiled.run(feeds)
    for out, expected in zip(model.graph.output, want, strict=True):
        assert got[out.name].dtype == expected.dtype, out.name  # the declared type at the boundary
        np.testing.assert_allclose(got[out.name].astype(np.float64), expected.astype(np.float64), rtol=rtol,
                                   atol=atol, err_msg=out.name)


@pytest.mark.parametrize("name", TYPES)
def test_a_network_in_a_storage_type_matches_the_reference(name: str) -> None:
    elem, dtype = TYPES[name]
    w = numpy_helper.from_array((RNG.standard_normal((8, 6)) * 0.5).astype(dtype), "w")
    b = numpy_helper.from_array(RNG.standard_normal(6).astype(dtype), "b")
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"]), helper.make_node("Relu", ["g"], ["r"]),
             helper.make_node("Softmax", ["r"], ["y"], axis=-1)]
    model = _model(nodes, {"x": (elem, [4, 8])}, {"y": (elem, [4, 6]), "r": (elem, [4, 6])}, [w, b])
    x = RNG.standard_normal((4, 8)).astype(dtype)
    # float16: the reference rounds each stored value as this does; float64: computed in float32 here
    _check(model, {"x": x}, rtol=1e-3 if name == "float16" else 1e-6, atol=1e-3 if name == "float16" else 1e-6)


def test_float16_values_are_rounded_where_the_model_stores_them() -> None:
    # (x + 1000) - 1000 in float16 loses x's low bits at the stored sum; computed in float32 throughout, it would not
    big = numpy_helper.from_array(np.array([1000.0], np.float16), "big")
    nodes = [helper.make_node("Add", ["x", "big"], ["s"]), helper.make_node("Sub", ["s", "big"], ["y"])]
    model = _model(nodes, {"x": (TensorProto.FLOAT16, [5])}, {"y": (TensorProto.FLOAT16, [5])}, [big])
    x = np.array([0.1, 0.3, 1.7, -0.45, 3.3], np.float16)
    compiled = glow_mlir.compile(model, threads=1, cache=False)
    got = compiled.run({"x": x})["y"]
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, x)  # the rounding happened


@pytest.mark.parametrize(("src", "to"), [(TensorProto.FLOAT, TensorProto.FLOAT16), (TensorProto.FLOAT, TensorProto.DOUBLE),
                                         (TensorProto.FLOAT16, TensorProto.FLOAT), (TensorProto.DOUBLE, TensorProto.INT64),
                                         (TensorProto.FLOAT16, TensorProto.DOUBLE)])
def test_casts_among_the_float_types(src: int, to: int) -> None:
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=to)], {"x": (src, [7])}, {"y": (to, [7])})
    x = (RNG.standard_normal(7) * 30).astype(helper.tensor_dtype_to_np_dtype(src))
    _check(model, {"x": x}, rtol=0, atol=0)
