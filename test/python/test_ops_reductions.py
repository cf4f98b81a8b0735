"""Reductions, softmax, normalization, MatMul (batched) and ArgMax end to end: one small ONNX model per op and
attribute variant, compiled with ``glow_mlir.api.compile`` and compared with ``onnx.reference`` (rtol 1e-5,
atol 1e-6); bad axes and attributes give one-line errors naming the node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.backend import cpu
from glow_mlir.errors import ModelError, UnsupportedError
from glow_mlir.passes import pipelines

RTOL, ATOL = 1e-5, 1e-6
RNG = np.random.default_rng(11)
_ONNX_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
               np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def i64(*shape: int) -> np.ndarray:
    return RNG.integers(-5, 6, shape).astype(np.int64)


def make(op: str, inputs: dict[str, np.ndarray], opset: int = 17, consts: dict[str, np.ndarray] | None = None,
         outputs: Sequence[str] = ("y",), **attrs: Any) -> onnx.ModelProto:
    """A one-node model ``n``: graph inputs ``inputs``, initializers ``consts`` (node inputs in that order)."""
    consts = consts or {}
    node = helper.make_node(op, [*inputs, *consts], list(outputs), name="n", **attrs)
    out_type = TensorProto.INT64 if op in ("ArgMax", "ArgMin") else _ONNX_TYPES[next(iter(inputs.values())).dtype]
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(k, _ONNX_TYPES[v.dtype], v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info(outputs[0], out_type, None)],
        initializer=[numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # what the pinned onnxruntime reads
    return model


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], reference: str = "onnx") -> glow.CompiledModel:
    """Compile ``model``, run it on ``feeds`` and compare with the reference; returns the compiled model."""
    if reference == "onnx":
        want = ReferenceEvaluator(model).run(None, feeds)[0]
    else:
        onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime (the `test` extra) is the reference here")
        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        want = session.run(None, feeds)[0]
    compiled = glow.compile(model)
    got = compiled.run(feeds)["y"]
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    return compiled


def graph_ops(compiled: glow.CompiledModel, stage: str) -> list[str]:
    return [line.split('"')[1] for line in compiled.stage(stage).text.splitlines() if '"glowgraph.' in line]


# --------------------------------------------------------------------------- reductions

X3 = f32(2, 3, 4)
POSITIVE = (np.abs(f32(2, 3, 4)) + 0.5).astype(np.float32)  # products stay away from 0 and overflow


@pytest.mark.parametrize(("op", "opset", "attrs", "axes"), [
    ("ReduceSum", 11, {"axes": [1]}, None),
    ("ReduceSum", 11, {"axes": [0, 2], "keepdims": 0}, None),
    ("ReduceSum", 13, {"keepdims": 0}, [-1]),
    ("ReduceSum", 13, {}, None),
    ("ReduceSum", 13, {"keepdims": 0}, []),
    ("ReduceMax", 17, {"axes": [0, 2], "keepdims": 0}, None),
    ("ReduceMax", 18, {}, [-1, 0]),
    ("ReduceMin", 17, {"axes": [-2]}, None),
    ("ReduceMin", 18, {"keepdims": 0}, None),
    ("ReduceProd", 17, {"axes": [1]}, None),
    ("ReduceProd", 18, {"keepdims": 0}, None),
    ("ReduceMean", 17, {"axes": [1, 2]}, None),
    ("ReduceMean", 18, {"keepdims": 0}, [0]),
    ("ReduceMean", 17, {"keepdims": 0}, None),
    ("ReduceL2", 17, {"axes": [2], "keepdims": 0}, None),
    ("ReduceL2", 18, {}, None),
    ("ReduceL1", 17, {"axes": [0, 2]}, None),
    ("ReduceL1", 18, {"keepdims": 0}, [1]),
    ("ReduceSumSquare", 17, {"axes": [1]}, None),
    ("ReduceSumSquare", 18, {"keepdims": 0}, [0, 2]),
    ("ReduceLogSum", 17, {"axes": [2], "keepdims": 0}, None),
    ("ReduceLogSum", 18, {}, None),
    ("ReduceLogSumExp", 17, {"axes": [1]}, None),
    ("ReduceLogSumExp", 18, {"keepdims": 0}, [-1]),
    ("ReduceLogSumExp", 18, {}, None),
])
def test_reduce_float(op: str, opset: int, attrs: dict, axes: list[int] | None):
    x = POSITIVE if op in ("ReduceProd", "ReduceLogSum") else X3
    consts = None if axes is None else {"axes": np.array(axes, np.int64)}
    check(make(op, {"x": x}, opset, consts, **attrs), {"x": x})


@pytest.mark.parametrize(("op", "opset", "attrs"), [
    ("ReduceSum", 11, {"axes": [0]}),
    ("ReduceMax", 17, {"axes": [1], "keepdims": 0}),
    ("ReduceMin", 17, {"axes": [-1, 0]}),
    ("ReduceProd", 17, {"axes": [1], "keepdims": 0}),
])
def test_reduce_int64(op: str, opset: int, attrs: dict):
    x = i64(3, 4)
    check(make(op, {"x": x}, opset, **attrs), {"x": x})


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("axes", [[1], [0, 2]])
def test_reduce_max_min_of_bools_are_any_and_all(op: str, axes: list[int]):
    x = RNG.random((3, 4, 2)) < 0.3
    x[0, :, 0] = True  # a row of all true and one of all false, for all and any
    x[2, :, 1] = False
    check(make(op, {"x": x}, 18, consts={"axes": np.array(axes, np.int64)}), {"x": x})


def test_reduce_sum_square_of_int64():
    x = i64(3, 4)
    check(make("ReduceSumSquare", {"x": x}, 17, axes=[1]), {"x": x})


def test_reduce_log_sum_exp_does_not_overflow():
    # exp(1000) overflows float32: the maximum comes out first
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1001.0], [1.0, np.inf, 2.0]], np.float32)
    check(make("ReduceLogSumExp", {"x": x}, 17, axes=[1], keepdims=0), {"x": x})
    # a row of -inf is log(0) = -inf: onnx.reference gives NaN there (its -inf - -inf), onnxruntime -inf
    x = np.array([[-np.inf, -np.inf, -np.inf], [0.0, 1.0, 2.0]], np.float32)
    check(make("ReduceLogSumExp", {"x": x}, 17, axes=[1], keepdims=0), {"x": x}, reference="onnxruntime")


def test_reduce_noop_with_empty_axes_is_the_input():
    compiled = check(make("ReduceSum", {"x": X3}, 13, noop_with_empty_axes=1), {"x": X3})
    assert "glowgraph.reduce_sum" not in compiled.stage("import").text


def test_reduce_mean_is_lowered_to_a_sum_and_a_division():
    compiled = check(make("ReduceMean", {"x": X3}, 17, axes=[1]), {"x": X3})
    assert "glowgraph.reduce_mean" in graph_ops(compiled, "import")
    assert {"glowgraph.reduce_sum", "glowgraph.div"} <= set(graph_ops(compiled, "lower"))
    assert "glowgraph.reduce_mean" not in graph_ops(compiled, "lower")


# --------------------------------------------------------------------------- softmax


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [None, -1, 0, 1])
def test_softmax_opset13_one_axis(op: str, axis: int | None):
    attrs = {} if axis is None else {"axis": axis}
    check(make(op, {"x": X3}, 13, **attrs), {"x": X3})


# onnx.reference implements only the opset-13 semantics of Softmax and LogSoftmax: onnxruntime is the reference for
# the older ones, which normalize over the flattened dims from axis on.
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [None, 0, 2, -2])
def test_softmax_opset11_flattens_from_axis(op: str, axis: int | None):
    attrs = {} if axis is None else {"axis": axis}
    check(make(op, {"x": X3}, 11, **attrs), {"x": X3}, reference="onnxruntime")


def test_softmax_opset11_default_axis_differs_from_opset13():
    # the test above could pass with opset-13 semantics only if they agreed here: they do not
    y11 = glow.compile(make("Softmax", {"x": X3}, 11)).run({"x": X3})["y"]
    y13 = glow.compile(make("Softmax", {"x": X3}, 13, axis=1)).run({"x": X3})["y"]
    assert not np.allclose(y11, y13)
    np.testing.assert_allclose(y11.reshape(2, 12).sum(axis=1), 1, rtol=RTOL)


def test_softmax_is_stable_for_large_inputs():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]], np.float32)
    check(make("Softmax", {"x": x}, 13), {"x": x})
    check(make("LogSoftmax", {"x": x}, 13), {"x": x})
    # far from the max: log(softmax(x)) would be -inf, as onnx.reference has it (see below)
    spread = (X3 * 300).astype(np.float32)
    check(make("LogSoftmax", {"x": spread}, 13), {"x": spread}, reference="onnxruntime")


def test_softmax_stays_one_kernel_on_the_cpu():
    compiled = check(make("Softmax", {"x": X3}, 13), {"x": X3})
    assert graph_ops(compiled, "lower") == ["glowgraph.softmax"]


# --------------------------------------------------------------------------- layer normalization

SCALE, BIAS = f32(3, 4), f32(3, 4)


@pytest.mark.parametrize(("axis", "consts", "attrs"), [
    (-1, {"scale": SCALE[0], "bias": BIAS[0]}, {}),
    (1, {"scale": SCALE}, {"epsilon": 1e-3}),
    (-2, {"scale": SCALE[:1], "bias": BIAS[0]}, {}),  # scale [1, 4] and bias [4] broadcast to [3, 4]
    (0, {"scale": np.broadcast_to(SCALE, (2, 3, 4)).copy()}, {}),
])
def test_layer_normalization(axis: int, consts: dict[str, np.ndarray], attrs: dict):
    check(make("LayerNormalization", {"x": X3}, 17, consts, axis=axis, **attrs), {"x": X3})


@pytest.mark.parametrize(("axis", "scale", "attrs"), [(-1, SCALE[0], {}), (1, SCALE, {"epsilon": 1e-2}),
                                                     (0, np.broadcast_to(SCALE, (2, 3, 4)).copy(), {})])
def test_rms_normalization(axis: int, scale: np.ndarray, attrs: dict):
    check(make("RMSNormalization", {"x": X3}, 23, {"scale": scale}, axis=axis, **attrs), {"x": X3})


@pytest.mark.parametrize(("axis", "p"), [(-1, 2), (1, 1), (0, 2)])
def test_lp_normalization(axis: int, p: int):
    x = X3.copy()
    x[0, 1] = 0.0  # a zero slice (axis -1) stays zero
    # onnx.reference's p = 1 sums x, not |x| (the spec's L1 norm): onnxruntime is the reference there
    check(make("LpNormalization", {"x": x}, 22, {}, axis=axis, p=p), {"x": x}, "onnx" if p == 2 else "onnxruntime")


@pytest.mark.parametrize(("reduction", "weight", "ignore"), [("mean", True, None), ("sum", False, 1), ("none", True, -1),
                                                          ("mean", False, 2)])
@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
def test_losses(op: str, reduction: str, weight: bool, ignore: int | None):
    # [N, C, d1] scores, targets with the ignored class among them (or -1, outside the classes)
    x = f32(2, 4, 3)
    target = np.array([[0, 3, 1], [2, -1 if ignore == -1 else 1, 2]], np.int64)
    consts = {"w": np.array([0.5, 1.0, 2.0, 0.25], np.float32)} if weight else {}
    attrs = {"reduction": reduction, **({"ignore_index": ignore} if ignore is not None else {})}
    node = helper.make_node(op, ["x", "t", *consts], ["y"], name="n", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                                            helper.make_tensor_value_info("t", TensorProto.INT64, target.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    check(model, {"x": x, "t": target})


def test_layer_normalization_with_unused_statistics_outputs():
    model = make("LayerNormalization", {"x": X3}, 17, {"scale": SCALE[0]}, outputs=("y", "mean", "inv_std"))
    check(model, {"x": X3})


# --------------------------------------------------------------------------- MatMul


@pytest.mark.parametrize(("a", "b", "graph"), [
    ((2, 3), (3, 4), ["matmul"]),
    ((4,), (4, 5), ["reshape", "matmul", "reshape"]),
    ((2, 3, 4), (4,), ["reshape", "reshape", "matmul", "reshape"]),
    ((2, 3, 4), (1, 4, 5), ["reshape", "reshape", "matmul", "reshape"]),
    ((2, 3, 4), (2, 4, 5), ["batch_matmul"]),
    ((2, 1, 3, 4), (5, 4, 2), ["broadcast", "reshape", "broadcast", "reshape", "batch_matmul", "reshape"]),
    ((3, 4), (2, 4, 5), ["broadcast", "batch_matmul"]),
    ((4,), (2, 4, 5), ["reshape", "broadcast", "batch_matmul", "reshape"]),
    ((1, 2, 3, 4), (2, 1, 4, 3), ["broadcast", "reshape", "broadcast", "reshape", "batch_matmul", "reshape"]),
])
def test_matmul_broadcasts_batch_dims(a: tuple[int, ...], b: tuple[int, ...], graph: list[str]):
    feeds = {"a": f32(*a), "b": f32(*b)}
    compiled = check(make("MatMul", feeds), feeds)
    assert [op.removeprefix("glowgraph.") for op in graph_ops(compiled, "import")] == graph


def test_matmul_nd_by_constant_2d_is_one_2d_matmul():
    a, w = f32(2, 3, 4), f32(4, 5)
    compiled = check(make("MatMul", {"a": a}, consts={"w": w}), {"a": a})
    assert "glowgraph.batch_matmul" not in compiled.stage("import").text
    assert "glowgraph.matmul" in compiled.stage("import").text


# --------------------------------------------------------------------------- ArgMax

TIES = RNG.integers(0, 3, (3, 4, 5)).astype(np.float32)  # few distinct values: many ties


@pytest.mark.parametrize(("opset", "attrs"), [
    (11, {}),
    (11, {"axis": -1, "keepdims": 0}),
    (13, {"axis": 1, "select_last_index": 1}),
    (13, {"axis": 2, "keepdims": 0, "select_last_index": 0}),
])
def test_arg_max(opset: int, attrs: dict):
    check(make("ArgMax", {"x": TIES}, opset, **attrs), {"x": TIES})


@pytest.mark.parametrize(("opset", "attrs"), [
    (11, {}),
    (13, {"axis": 1, "select_last_index": 1}),
    (13, {"axis": -1, "keepdims": 0}),
])
def test_arg_min(opset: int, attrs: dict):
    check(make("ArgMin", {"x": TIES}, opset, **attrs), {"x": TIES})


def test_arg_min_of_int64_extremes():
    # -x would overflow at the most negative int64; -1 - x reverses the order exactly
    x = np.array([[5, np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max], [3, 3, -2, -2]], np.int64)
    for last in (0, 1):
        check(make("ArgMin", {"x": x}, 13, axis=1, select_last_index=last), {"x": x})


def _top_k_model(x: np.ndarray, k: int, opset: int = 11, **attrs) -> onnx.ModelProto:
    elem = _ONNX_TYPES[x.dtype]
    inputs = ["x"] if opset < 10 else ["x", "k"]
    node = helper.make_node("TopK", inputs, ["values", "indices"], **({"k": k} if opset < 10 else {}), **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, x.shape)],
                              [helper.make_tensor_value_info("values", elem, None),
                               helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
                              [] if opset < 10 else [numpy_helper.from_array(np.array([k], np.int64), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize(("x", "k", "opset", "attrs"), [
    (TIES, 3, 11, {}),  # ties: the lower index first
    (TIES, 2, 11, {"axis": 1, "largest": 0}),
    (TIES, 5, 11, {"axis": -1}),  # all of them
    (TIES, 2, 1, {"axis": 0}),  # k as an attribute
    (X3, 2, 10, {"axis": 1}),
])
def test_top_k(x: np.ndarray, k: int, opset: int, attrs: dict):
    model = _top_k_model(x, k, opset, **attrs)
    got = glow.compile(model).run({"x": x})
    values, indices = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(got["values"], values)
    np.testing.assert_array_equal(got["indices"], indices)


def test_top_k_of_int64_extremes():
    x = np.array([[5, np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max, -3]], np.int64)
    for largest in (1, 0):
        model = _top_k_model(x, 3, largest=largest)
        got = glow.compile(model).run({"x": x})
        values, indices = ReferenceEvaluator(model).run(None, {"x": x})
        np.testing.assert_array_equal(got["values"], values)
        np.testing.assert_array_equal(got["indices"], indices)


def test_top_k_bad_k():
    with pytest.raises(ModelError, match="K 9 must be between 0 and the axis' size 5"):
        glow.compile(_top_k_model(TIES, 9))


@pytest.mark.parametrize(("opset", "axis"), [(11, 1), (11, 0), (13, -1), (13, 1)])
def test_hardmax(opset: int, axis: int):
    # before opset 13 Hardmax sees the input as 2-D from axis on (one 1 per row of the flattened trailing dims);
    # onnx.reference applies the opset-13 rule to every opset, onnxruntime follows each opset's
    reference = "onnxruntime" if opset < 13 else "onnx"
    check(make("Hardmax", {"x": TIES}, opset, axis=axis), {"x": TIES}, reference=reference)


@pytest.mark.parametrize(("opset", "groups"), [(18, 2), (21, 3), (21, 6), (18, 1)])
def test_group_normalization(opset: int, groups: int):
    x = f32(2, 6, 3, 4)
    per = 6 if opset >= 21 else groups
    check(make("GroupNormalization", {"x": x}, opset, {"s": f32(per), "b": f32(per)}, num_groups=groups,
               epsilon=1e-3), {"x": x})


@pytest.mark.parametrize("axes", [None, [1], [0, 1, 2, 3]])
def test_mean_variance_normalization(axes: list[int] | None):
    x = f32(2, 3, 4, 5)
    attrs = {} if axes is None else {"axes": axes}
    check(make("MeanVarianceNormalization", {"x": x}, 13, **attrs), {"x": x})


def test_instance_normalization():
    x = f32(2, 3, 4, 5)
    check(make("InstanceNormalization", {"x": x}, 17, {"s": f32(3), "b": f32(3)}, epsilon=1e-3), {"x": x})
    x1 = f32(2, 4, 7)
    check(make("InstanceNormalization", {"x": x1}, 17, {"s": f32(4), "b": f32(4)}), {"x": x1})


def test_arg_max_int64_and_nan():
    x = i64(4, 6)
    check(make("ArgMax", {"x": x}, 13, axis=1, select_last_index=1), {"x": x})
    nan = np.array([[1, np.nan, 3, np.nan], [np.inf, 2, np.inf, 0], [-np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
    for last in (0, 1):
        check(make("ArgMax", {"x": nan}, 13, axis=1, select_last_index=last), {"x": nan})


def test_arg_max_of_a_vector_is_a_scalar():
    x = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], np.float32)
    check(make("ArgMax", {"x": x}, 13, keepdims=0), {"x": x})



# --------------------------------------------------------------------------- lowered to primitives


@pytest.fixture
def lower_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU backend without its keep list: softmax, layer_norm and reduce_l2 go to primitives too."""
    monkeypatch.setattr(cpu, "NODE_LOWERING", pipelines.NODE_LOWERING)


BIG = (X3 * 300).astype(np.float32)  # exp(x) alone would overflow: the primitive chain subtracts the max too


# onnx.reference computes LogSoftmax as log(softmax(x)), which underflows to -inf far from the max: onnxruntime
# computes x - max - log(sum(exp(x - max))), as we do.
@pytest.mark.parametrize(("model", "node", "reference"), [
    (make("Softmax", {"x": BIG}, 13, axis=1), "softmax", "onnx"),
    (make("Softmax", {"x": BIG}, 11), "softmax", "onnxruntime"),
    (make("LogSoftmax", {"x": BIG}, 13), "log_softmax", "onnxruntime"),
    (make("LayerNormalization", {"x": X3}, 17, {"scale": SCALE, "bias": BIAS}, axis=1), "layer_norm", "onnx"),
    (make("LayerNormalization", {"x": X3}, 17, {"scale": SCALE[0]}), "layer_norm", "onnx"),
    (make("ReduceL2", {"x": X3}, 17, axes=[0, 2]), "reduce_l2", "onnx"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_node_lowerings_match_the_kernels(lower_everything: None, model: onnx.ModelProto, node: str, reference: str):
    feeds = {"x": BIG if "softmax" in node else X3}
    compiled = check(model, feeds, reference)
    assert f"glowgraph.{node}" in graph_ops(compiled, "import")
    assert f"glowgraph.{node}" not in graph_ops(compiled, "lower")

# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(("model", "error", "message"), [
    (make("ReduceSum", {"x": X3}, 11, axes=[3]), ModelError, r"axis 3 is out of range for a rank-3 input"),
    (make("ReduceMax", {"x": X3}, 17, axes=[1, -2]), ModelError, r"axes \[1, -2\] name a dim more than once"),
    (make("ReduceMin", {"x": X3}, 17, keepdims=2), ModelError, r"attribute 'keepdims' must be 0 or 1, got 2"),
    (make("ReduceSum", {"x": X3, "axes": np.array([1], np.int64)}, 13), UnsupportedError,
     r"the axes input 'axes' must be a constant or an initializer"),
    (make("ReduceSum", {"x": X3}, 13, consts={"axes": np.array([[1]], np.int64)}), ModelError,
     r"the axes input must be a 1-D integer tensor, got 1x1 int64"),
    (make("ReduceMean", {"x": i64(2, 3)}, 17), UnsupportedError, r"unsupported element type int64 for the input \(supported: float32\)"),
    (make("ReduceSum", {"x": i64(2, 3).astype(np.bool_)}, 17), UnsupportedError,
     r"unsupported element type bool for the input \(supported: float32, int64, int32\)"),
    (make("Softmax", {"x": X3}, 13, axis=3), ModelError, r"axis 3 is out of range for a rank-3 input"),
    (make("LogSoftmax", {"x": X3}, 11, axis=-4), ModelError, r"axis -4 is out of range for a rank-3 input"),
    (make("LayerNormalization", {"x": X3}, 17, {"scale": SCALE}), ModelError,
     r"scale of shape 3x4 does not broadcast to the normalized shape 4"),
    (make("LayerNormalization", {"x": X3}, 17, {"scale": SCALE[0]}, stash_type=0), UnsupportedError,
     r"stash_type 0: only 1 \(float32 statistics\) is supported"),
    (make("MatMul", {"a": i64(2, 3), "b": i64(3, 2)}), UnsupportedError,
     r"unsupported element type int64 for the A input \(supported: float32\)"),
    (make("MatMul", {"a": f32(2, 3, 4), "b": f32(3, 4, 5)}), ModelError,
     r"shapes 2, 3 do not broadcast together"),
    (make("MatMul", {"a": f32(2, 3, 4), "b": f32(2, 5, 4)}), ModelError,
     r"inner dimensions differ: A 2x3x4, B 2x5x4"),
    (make("ArgMax", {"x": X3}, 13, select_last_index=2), ModelError,
     r"attribute 'select_last_index' must be 0 or 1, got 2"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_bad_nodes_give_one_line_errors(model: onnx.ModelProto, error: type, message: str):
    with pytest.raises(error, match=rf"^g: node 'n' \({model.graph.node[0].op_type}\): {message}$"):
        glow.compile(model)


@pytest.mark.parametrize(("axis", "outputs"), [(-1, ["y", "mean"]), (1, ["y", "mean", "inv_std"]),
                                             (0, ["y", "", "inv_std"])])
def test_layer_normalization_statistics_outputs(axis: int, outputs: list[str]):
    x = f32(2, 3, 4)
    normalized = x.shape[axis:]
    norm = helper.make_node("LayerNormalization", ["x", "scale"], outputs, name="ln", axis=axis, epsilon=1e-3)
    graph = helper.make_graph([norm], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs if o],
                              initializer=[numpy_helper.from_array(f32(*normalized), "scale")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    got = glow.compile(model).run({"x": x})
    for name, want in zip([o for o in outputs if o], ReferenceEvaluator(model).run(None, {"x": x}), strict=True):
        assert got[name].shape == want.shape, name
        np.testing.assert_allclose(got[name], want, rtol=RTOL, atol=ATOL, err_msg=name)


