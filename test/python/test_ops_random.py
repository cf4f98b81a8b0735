"""Random draws end to end: RandomUniform(Like), RandomNormal(Like), Bernoulli, Multinomial and Dropout in training
mode, compiled with ``glow_mlir.api.compile``. No runtime repeats another's draws (onnx.reference draws from numpy's
global state), so the checks are of the distributions: the support, moments and frequencies of 10^5 draws within
bounds several standard errors wide (each bound given with its standard error), the element types, and the streams
(a seed repeats its sequence of runs across compiles, each run draws anew, a loop's iterations draw apart)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import glow_mlir.api as glow
from glow_mlir.errors import ModelError

F32, F64, F16, I32, I64, BOOL = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT32,
                                 TensorProto.INT64, TensorProto.BOOL)
N = 100_000


def model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[str],
          inits: dict[str, np.ndarray] | None = None, opset: int = 22) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info(o) for o in outputs],
                              [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def uniform(seed: float | None = 1.0, shape=(N,), **attrs) -> onnx.ModelProto:
    if seed is not None:
        attrs["seed"] = seed
    return model([helper.make_node("RandomUniform", [], ["y"], shape=list(shape), **attrs)], [], ["y"])


def test_uniform_support_moments_and_bins():
    y = glow.compile(uniform(low=-2.0, high=3.0)).run({})["y"]
    assert y.dtype == np.float32 and y.shape == (N,)
    assert y.min() >= -2.0 and y.max() < 3.0
    assert abs(y.mean() - 0.5) < 0.03  # standard error 5 / sqrt(12 N) = 0.0046
    assert abs(y.var() / (25 / 12) - 1) < 0.03  # standard error sqrt(0.8 / N) = 0.0028
    counts, _ = np.histogram(y, bins=20, range=(-2.0, 3.0))
    chi2 = float(((counts - N / 20) ** 2 / (N / 20)).sum())
    assert chi2 < 60, chi2  # 19 degrees of freedom: P(chi2 > 60) < 1e-5


def test_a_seed_repeats_its_runs_and_each_run_draws_anew():
    first, second = glow.compile(uniform(seed=3.0), cache=False), glow.compile(uniform(seed=3.0), cache=False)
    a1, a2 = first.run({})["y"], first.run({})["y"]
    b1 = second.run({})["y"]
    np.testing.assert_array_equal(a1, b1)
    assert np.mean(a1 == a2) < 0.01
    other = glow.compile(uniform(seed=4.0)).run({})["y"]
    assert np.mean(a1 == other) < 0.01
    # successive elements and successive runs are uncorrelated
    assert abs(np.corrcoef(a1[:-1], a1[1:])[0, 1]) < 0.02 and abs(np.corrcoef(a1, a2)[0, 1]) < 0.02


def test_unseeded_nodes_draw_apart():
    nodes = [helper.make_node("RandomUniform", [], [name], shape=[1000]) for name in ("a", "b")]
    got = glow.compile(model(nodes, [], ["a", "b"])).run({})
    assert np.mean(got["a"] == got["b"]) < 0.01


def test_normal_moments_as_float64():
    m = model([helper.make_node("RandomNormal", [], ["y"], shape=[N], mean=2.0, scale=3.0, seed=5.0, dtype=F64)],
              [], ["y"])
    y = glow.compile(m).run({})["y"]
    assert y.dtype == np.float64 and np.all(np.isfinite(y))
    assert abs(y.mean() - 2.0) < 0.05  # standard error 3 / sqrt(N) = 0.0095
    assert abs(y.std() / 3.0 - 1) < 0.015  # standard error 1 / sqrt(2 N) = 0.0022
    assert abs(np.mean(np.abs(y - 2.0) < 3.0) - 0.6827) < 0.01  # standard error 0.0015


@pytest.mark.parametrize("op", ["RandomUniformLike", "RandomNormalLike"])
def test_like_ops_take_the_input_shape_and_type(op: str):
    x = np.zeros((4, 250), np.float16)
    got = glow.compile(model([helper.make_node(op, ["x"], ["y"]), helper.make_node(op, ["x"], ["z"], dtype=F64)],
                             [helper.make_tensor_value_info("x", F16, x.shape)], ["y", "z"])).run({"x": x})
    assert got["y"].dtype == np.float16 and got["y"].shape == x.shape
    assert got["z"].dtype == np.float64 and got["z"].shape == x.shape
    if op == "RandomUniformLike":
        assert got["z"].min() >= 0 and got["z"].max() < 1


@pytest.mark.parametrize("to, dtype", [(None, np.float32), (I64, np.int64), (BOOL, np.bool_)])
def test_bernoulli(to, dtype):
    p = np.tile(np.array([0.0, 1.0, 0.3, 0.9], np.float32), N // 4)
    attrs = {} if to is None else {"dtype": to}
    m = model([helper.make_node("Bernoulli", ["p"], ["y"], seed=2.0, **attrs)],
              [helper.make_tensor_value_info("p", F32, p.shape)], ["y"])
    y = glow.compile(m).run({"p": p})["y"]
    assert y.dtype == dtype
    y = y.astype(np.float64)
    assert np.all(y[p == 0] == 0) and np.all(y[p == 1] == 1)
    assert abs(y[p == 0.3].mean() - 0.3) < 0.015  # standard error 0.0029
    assert abs(y[p == 0.9].mean() - 0.9) < 0.01  # standard error 0.0019


def test_multinomial_frequencies():
    probs = np.array([[0.1, 0.2, 0.7, 0.0], [0.25, 0.25, 0.25, 0.25]], np.float32)
    with np.errstate(divide="ignore"):
        x = np.log(probs)
    m = model([helper.make_node("Multinomial", ["x"], ["y"], sample_size=N // 2, seed=1.0)],
              [helper.make_tensor_value_info("x", F32, x.shape)], ["y"])
    y = glow.compile(m).run({"x": x})["y"]
    assert y.dtype == np.int32 and y.shape == (2, N // 2)
    for row, p in zip(y, probs):
        assert row.min() >= 0 and row.max() < 4
        np.testing.assert_allclose(np.bincount(row, minlength=4) / row.size, p, atol=0.015)  # std. error <= 0.003


def test_training_dropout_keeps_and_scales():
    x = np.random.default_rng(0).uniform(0.5, 1.5, (100, 1000)).astype(np.float32)
    m = model([helper.make_node("Dropout", ["x", "r", "t"], ["y", "mask"], seed=3)],
              [helper.make_tensor_value_info("x", F32, x.shape)], ["y", "mask"],
              {"r": np.float32(0.3), "t": np.array(True)}, opset=13)
    got = glow.compile(m).run({"x": x})
    y, mask = got["y"], got["mask"]
    assert mask.dtype == np.bool_
    np.testing.assert_allclose(y[mask], x[mask] / 0.7, rtol=1e-6)
    assert np.all(y[~mask] == 0)
    assert abs(mask.mean() - 0.7) < 0.01  # standard error 0.0014


@pytest.mark.parametrize("trips", [3, 8])  # unrolled at import; a loop in the graph (scf.for)
def test_loop_iterations_draw_apart(trips: int):
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("RandomUniform", [], ["u"], shape=[1000], seed=7.0)],
        "body", [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond", BOOL, [])],
        [helper.make_tensor_value_info("cond_out", BOOL, []), helper.make_tensor_value_info("u", F32, [1000])])
    m = model([helper.make_node("Loop", ["n", "c"], ["draws"], body=body)], [], ["draws"],
              {"n": np.array(trips, np.int64), "c": np.array(True)}, opset=16)
    compiled = glow.compile(m)
    assert ("scf.for" in compiled.stage("import").text) == (trips == 8)
    draws = compiled.run({})["draws"]
    assert draws.shape == (trips, 1000)
    assert all(np.mean(draws[i] == draws[i + 1]) < 0.01 for i in range(trips - 1))


@pytest.mark.parametrize("node, message", [
    (helper.make_node("RandomUniform", [], ["y"], name="r"), r"node 'r' \(RandomUniform\): attribute 'shape' is required"),
    (helper.make_node("RandomUniform", [], ["y"], shape=[2], low=2.0, high=1.0, name="r"),
     r"attribute 'low' \(2\) must not be above 'high' \(1\)"),
    (helper.make_node("RandomNormal", [], ["y"], shape=[2], dtype=I32, name="r"),
     r"attribute 'dtype' must be a float type, got INT32"),
])
def test_invalid_attributes(node, message):
    with pytest.raises(ModelError, match=message):
        glow.compile(model([node], [], ["y"]))


def test_multinomial_invalid_dtype():
    m = model([helper.make_node("Multinomial", ["x"], ["y"], dtype=F32, name="m")],
              [helper.make_tensor_value_info("x", F32, [2, 3])], ["y"])
    with pytest.raises(ModelError, match=r"node 'm' \(Multinomial\): attribute 'dtype' must be int32 or int64"):
        glow.compile(m)
