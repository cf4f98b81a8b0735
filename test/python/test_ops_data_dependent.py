"""NonZero, Unique and NonMaxSuppression, whose output shape depends on their inputs' values: evaluated at import
when the inputs are known (the result checked against ``onnx.reference``, exactly), a one-line UnsupportedError
naming the data-dependent dim when one is computed at run time (every shape here is static)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import UnsupportedError

RNG = np.random.default_rng(3)


def known(op: str, value: np.ndarray, outputs: list[str], opset: int = 17, **attrs) -> onnx.ModelProto:
    """``op`` of the initializer ``w`` = ``value``; its first output also goes through Add(x, y) with a graph input,
    so that a folded result is used by a node as well as returned."""
    nodes = [helper.make_node(op, ["w"], outputs, name="n", **attrs),
             helper.make_node("Add", [outputs[0], "x"], ["sum"])]
    first = np.asarray(ReferenceEvaluator(helper.make_model(helper.make_graph(
        nodes[:1], "g", [], [helper.make_empty_tensor_value_info(outputs[0])],
        [numpy_helper.from_array(value, "w")]), opset_imports=[helper.make_opsetid("", opset)])).run(None, {})[0])
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(first.dtype), first.shape)],
        [helper.make_empty_tensor_value_info(o) for o in [*outputs, "sum"]], [numpy_helper.from_array(value, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(m: onnx.ModelProto) -> None:
    x = np.ones([d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim],
                helper.tensor_dtype_to_np_dtype(m.graph.input[0].type.tensor_type.elem_type))
    got = glow.compile(m).run({"x": x})
    want = ReferenceEvaluator(m).run(None, {"x": x})
    for name, w in zip([o.name for o in m.graph.output], want, strict=True):
        assert got[name].dtype == w.dtype, name
        np.testing.assert_array_equal(got[name], w, err_msg=name)


def test_non_zero_of_a_known_input() -> None:
    check(known("NonZero", (RNG.random([3, 4]) < 0.5).astype(np.float32) * 2.0, ["y"]))


def test_non_zero_of_a_known_scalar() -> None:
    for value in (np.float32(2.0), np.float32(0.0)):
        graph = helper.make_graph([helper.make_node("NonZero", ["w"], ["y"])], "g", [],
                                  [helper.make_empty_tensor_value_info("y")], [numpy_helper.from_array(value, "w")])
        got = glow.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])).run({})["y"]
        assert got.dtype == np.int64 and got.shape == (0, int(value != 0))


@pytest.mark.parametrize("attrs", [{}, {"axis": 0}, {"axis": -1}], ids=str)
def test_unique_of_a_known_input(attrs: dict) -> None:
    value = RNG.integers(0, 3, [4, 3]).astype(np.int64)
    check(known("Unique", value, ["y", "indices", "inverse", "counts"], **attrs))


@pytest.mark.parametrize(("value", "axis", "want"), [
    # the ONNX spec's example
    ([2, 1, 1, 3, 4, 3], None, [[2, 1, 3, 4], [0, 1, 3, 4], [0, 1, 1, 2, 3, 2], [1, 2, 2, 1]]),
    ([[3, 1], [0, 3]], None, [[3, 1, 0], [0, 1, 2], [0, 1, 2, 0], [2, 1, 1]]),
    ([[2, 1, 2], [5, 0, 5]], 1, [[[2, 1], [5, 0]], [0, 1], [0, 1, 0], [2, 1]]),
])
def test_unique_unsorted_of_a_known_input(value: list, axis: int | None, want: list) -> None:
    """sorted=0: in order of first occurrence (against the spec's example and worked ones: onnx.reference 1.23 fails
    on a 2-D input without axis and gives the wrong shape with one)."""
    attrs = {} if axis is None else {"axis": axis}
    graph = helper.make_graph([helper.make_node("Unique", ["w"], ["y", "i", "inv", "c"], sorted=0, **attrs)], "g",
                              [], [helper.make_empty_tensor_value_info(o) for o in ["y", "i", "inv", "c"]],
                              [numpy_helper.from_array(np.array(value, np.int64), "w")])
    got = glow.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])).run({})
    for name, w in zip(["y", "i", "inv", "c"], want, strict=True):
        assert got[name].dtype == np.int64
        np.testing.assert_array_equal(got[name], np.array(w), err_msg=name)


@pytest.mark.parametrize(("op", "outputs", "dim"), [
    ("NonZero", ["y"], r"the output's dim 1 \(the number of nonzero elements\)"),
    ("Unique", ["y", "", "", "counts"], r"the outputs' length \(the number of distinct elements\)"),
])
def test_a_run_time_input_is_unsupported(op: str, outputs: list[str], dim: str) -> None:
    graph = helper.make_graph([helper.make_node(op, ["x"], outputs, name="n")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
                              [helper.make_empty_tensor_value_info(o) for o in outputs if o])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(UnsupportedError, match=rf"node 'n' \({op}\): {dim} depends on the values of input 'x', which "
                                               r"is computed at run time"):
        glow.compile(m)


def nms(boxes_known: bool) -> onnx.ModelProto:
    """NonMaxSuppression of 6 boxes in 2 classes (at most 2 kept per class, IoU 0.5), its indices added to x."""
    boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                       [0, 100, 1, 101]]], np.float32)
    scores = RNG.random((1, 2, 6)).astype(np.float32)
    consts = [numpy_helper.from_array(scores, "scores"), numpy_helper.from_array(np.array([2], np.int64), "most"),
              numpy_helper.from_array(np.array([0.5], np.float32), "iou")]
    inputs = []
    if boxes_known:
        consts.append(numpy_helper.from_array(boxes, "boxes"))
    else:
        inputs.append(helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 6, 4]))
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "most", "iou"], ["kept"], name="n"),
             helper.make_node("Add", ["kept", "x"], ["sum"])]
    inputs.append(helper.make_tensor_value_info("x", TensorProto.INT64, [4, 3]))
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info("sum")], consts)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_non_max_suppression_of_known_boxes_and_scores() -> None:
    m = nms(boxes_known=True)
    x = RNG.integers(0, 9, (4, 3)).astype(np.int64)
    (want,) = ReferenceEvaluator(m).run(None, {"x": x})
    np.testing.assert_array_equal(glow.compile(m).run({"x": x})["sum"], want)


def test_non_max_suppression_of_run_time_boxes_is_unsupported() -> None:
    with pytest.raises(UnsupportedError, match=r"node 'n' \(NonMaxSuppression\): the output's dim 0 \(the number of "
                                               r"boxes kept\) depends on the values of input 'boxes', which is "
                                               r"computed at run time"):
        glow.compile(nms(boxes_known=False))
