"""Training-mode forms of inference ops end to end: BatchNormalization's training_mode (batch statistics, running
statistics out) and Dropout with training_mode and ratio 0 (dropping: test_ops_random.py); the optimizers of ai.onnx.preview.training (Adagrad,
Adam, Momentum); small ONNX models compiled with ``glow_mlir.api.compile`` and compared with ``onnx.reference``
(rtol 1e-4, atol 1e-5)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import ModelError

RTOL, ATOL = 1e-4, 1e-5
F32 = TensorProto.FLOAT
RNG = np.random.default_rng(5)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def model(node: onnx.NodeProto, inputs: dict[str, np.ndarray], inits: dict[str, np.ndarray],
          opset: int) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                      for k, v in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in node.output],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    got = glow.compile(m).run(feeds)
    want = ReferenceEvaluator(m).run(None, feeds)
    for name, w in zip([o.name for o in m.graph.output], want, strict=True):
        assert got[name].shape == w.shape and got[name].dtype == w.dtype, name
        np.testing.assert_allclose(got[name], w, rtol=RTOL, atol=ATOL, err_msg=name)


# --------------------------------------------------------------------------- BatchNormalization


def bn_params(c: int) -> dict[str, np.ndarray]:
    return {"scale": rand(c), "bias": rand(c), "mean": rand(c), "var": RNG.uniform(0.5, 2, c).astype(np.float32)}


@pytest.mark.parametrize("shape", [[4, 3], [2, 3, 5], [2, 3, 4, 5], [2, 3, 2, 3, 4]])
@pytest.mark.parametrize("known", [False, True], ids=["inputs", "initializers"])
def test_batch_norm_training(shape: Sequence[int], known: bool) -> None:
    x = 2 * rand(*shape) + 1
    params = bn_params(shape[1])
    node = helper.make_node("BatchNormalization", ["x", *params], ["y", "running_mean", "running_var"],
                            training_mode=1, epsilon=1e-3, momentum=0.8)
    feeds = {"x": x} if known else {"x": x, **params}
    check(model(node, feeds, params if known else {}, 15), feeds)


def test_batch_norm_training_default_momentum_y_only() -> None:
    x, params = rand(3, 4, 5, 5), bn_params(4)
    node = helper.make_node("BatchNormalization", ["x", *params], ["y"], training_mode=1)
    feeds = {"x": x, **params}
    check(model(node, feeds, {}, 14), feeds)


def test_batch_norm_training_statistics_of_the_wrong_size() -> None:
    params = {**bn_params(3), "var": np.ones(4, np.float32)}
    node = helper.make_node("BatchNormalization", ["x", *params], ["y"], name="bn", training_mode=1)
    m = model(node, {"x": rand(2, 3)}, params, 15)
    with pytest.raises(ModelError, match=r"node 'bn' \(BatchNormalization\): input_var 4 must have one entry per "
                                         r"channel \(3\)"):
        glow.compile(m)


# --------------------------------------------------------------------------- Dropout


@pytest.mark.parametrize("training", [False, True])
def test_dropout_mask_without_dropping(training: bool) -> None:
    x = rand(3, 4, 5)
    ratio = np.float32(0.0 if training else 0.4)
    node = helper.make_node("Dropout", ["x", "ratio", "training"], ["y", "mask"])
    m = model(node, {"x": x}, {"ratio": ratio, "training": np.array(training)}, 13)
    check(m, {"x": x})


# --------------------------------------------------------------------------- ai.onnx.preview.training optimizers

STATES = {"Adagrad": ["H"], "Adam": ["V", "H"], "Momentum": ["V"]}


def optimizer(op: str, shapes: list[list[int]], step: int, **attrs) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """One update of tensors of ``shapes`` by ``op``, R and T given at run time (T = ``step``): inputs R, T, the
    tensors, their gradients, then each state kind; outputs the new tensors, then the new states."""
    kinds = ["X", "G", *STATES[op]]
    ins = [f"{k}{i}" for k in kinds for i in range(len(shapes))]
    outs = [f"{k}{i}_new" for k in ["X", *STATES[op]] for i in range(len(shapes))]
    node = helper.make_node(op, ["R", "T", *ins], outs, domain="ai.onnx.preview.training", **attrs)
    feeds = {"R": np.array(0.1, np.float32), "T": np.array(step, np.int64)}
    for name in ins:
        shape = shapes[int(name[-1])]
        # the squared-gradient states must be >= 0
        feeds[name] = np.abs(rand(*shape)) if name.startswith("H") else rand(*shape)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype),
                                                                         v.shape) for k, v in feeds.items()],
                              [helper.make_tensor_value_info(o, F32, None) for o in outs])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.preview.training", 1)])
    m.ir_version = 8
    return m, feeds


@pytest.mark.parametrize("op, attrs", [
    ("Adagrad", {}),
    ("Adagrad", {"decay_factor": 0.1, "epsilon": 1e-3, "norm_coefficient": 0.01}),
    ("Adam", {}),
    ("Adam", {"alpha": 0.8, "beta": 0.95, "epsilon": 1e-4, "norm_coefficient": 0.01, "norm_coefficient_post": 0.02}),
    ("Momentum", {"alpha": 0.9, "beta": 0.5, "mode": "standard", "norm_coefficient": 0.01}),
    ("Momentum", {"alpha": 0.9, "beta": 0.5, "mode": "nesterov", "norm_coefficient": 0.0}),
])
@pytest.mark.parametrize("step", [0, 3])
def test_optimizers(op: str, attrs: dict, step: int) -> None:
    m, feeds = optimizer(op, [[3, 4], [5]], step, **attrs)
    got = glow.compile(m, cache=False).run(feeds)
    for out, want in zip(m.graph.output, ReferenceEvaluator(m).run(None, feeds), strict=True):
        np.testing.assert_allclose(got[out.name], want, rtol=RTOL, atol=ATOL, err_msg=out.name)


def test_optimizer_inputs_must_come_in_groups() -> None:
    m, _ = optimizer("Adagrad", [[3]], 1)
    m.graph.node[0].input.append("X0")  # 6 inputs: not R, T and 3 per tensor
    with pytest.raises(ModelError, match=r"\(Adagrad\): takes R, T and 3 inputs per tensor, got 6 inputs"):
        glow.compile(m, cache=False)


def test_momentum_needs_its_attributes() -> None:
    m, _ = optimizer("Momentum", [[3]], 1, alpha=0.9, beta=0.5, mode="standard")
    with pytest.raises(ModelError, match=r"\(Momentum\): attribute 'norm_coefficient' is required"):
        glow.compile(m, cache=False)
