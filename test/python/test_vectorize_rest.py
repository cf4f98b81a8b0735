"""The vectorized non-kernel ops (cpu-vectorize-rest) and the polynomial math (cpu-approximate-math) end to end.

Each family once, with shapes that 16 does not divide (masked remainders, rows of odd length, a reduced row longer
than one vector row), for each dtype the lowering produces (f32, i64, i32, booleans stored as bytes): compared with
``onnx.reference`` at rtol 1e-5, atol 1e-6 (integers and booleans exactly). The approximations of exp, erf and tanh
are checked against numpy (float64) on dense grids: exp rtol 1e-6 (about 8 ulp; it flushes below e^-86.5 to 0, where
the true value is below 2.8e-38), tanh rtol 1e-6 + atol 1e-7, erf rtol 1e-6 + atol 2e-7 (Abramowitz & Stegun's
1.5e-7 absolute error above 0.5).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.backend import cpu

RNG = np.random.default_rng(6)
_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
          np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}


def _model(op: str, inputs: dict[str, np.ndarray], out_type: int, **attrs: Any):
    node = helper.make_node(op, list(inputs), ["y"], name="n", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(k, _TYPES[v.dtype], v.shape)
                                            for k, v in inputs.items()],
                              [helper.make_tensor_value_info("y", out_type, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _run(op: str, inputs: dict[str, np.ndarray], out_type: int = TensorProto.FLOAT, **attrs: Any):
    model = _model(op, inputs, out_type, **attrs)
    want = ReferenceEvaluator(model).run(None, inputs)[0]
    got = glow.compile(model).run(inputs)["y"]
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    return got, want


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def i64(*shape: int) -> np.ndarray:
    return RNG.integers(-5, 6, shape).astype(np.int64)


FLOAT_CASES = [
    pytest.param("Softmax", {"x": f32(3, 37)}, {"axis": -1}, id="softmax-row-37"),
    pytest.param("LogSoftmax", {"x": f32(2, 3, 21)}, {"axis": -1}, id="log-softmax-row-21"),
    pytest.param("Softmax", {"x": f32(4, 19, 3)}, {"axis": 1}, id="softmax-middle-axis"),
    pytest.param("ReduceMax", {"x": f32(3, 1100)}, {"axes": [1], "keepdims": 0}, id="reduce-max-chunked-row"),
    pytest.param("ReduceSum", {"x": f32(4, 37, 5)}, {"keepdims": 1}, id="reduce-sum-all"),
    pytest.param("Transpose", {"x": f32(3, 37, 5)}, {"perm": [2, 0, 1]}, id="transpose"),
    pytest.param("Add", {"a": f32(5, 1, 37), "b": f32(6, 1)}, {}, id="add-broadcast-both"),
    pytest.param("Relu", {"x": f32(2, 1007)}, {}, id="relu-masked-1007"),
    pytest.param("Exp", {"x": f32(3, 33) * 4}, {}, id="exp"),
    pytest.param("Erf", {"x": f32(3, 33) * 2}, {}, id="erf"),
    pytest.param("Tanh", {"x": f32(3, 33) * 3}, {}, id="tanh"),
    pytest.param("Sigmoid", {"x": f32(5, 17) * 5}, {}, id="sigmoid"),
]


@pytest.mark.parametrize("op,inputs,attrs", FLOAT_CASES)
def test_float_families(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any]) -> None:
    got, want = _run(op, inputs, **attrs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,inputs,attrs", FLOAT_CASES)
def test_float_families_cut_into_tasks(op: str, inputs: dict[str, np.ndarray], attrs: dict[str, Any],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # every op cut into tasks over an outer dim, which the worker pool runs on 2 threads
    monkeypatch.setattr(cpu, "PARALLEL_BYTES", 0)
    model = _model(op, inputs, TensorProto.FLOAT, **attrs)
    want = ReferenceEvaluator(model).run(None, inputs)[0]
    compiled = glow.compile(model, threads=2, cache=False)
    if op != "ReduceSum":  # every dim reduced: nothing to cut
        assert "llvm.call @glow_pool_run" in compiled.stage("codegen").text
    np.testing.assert_allclose(compiled.run(inputs)["y"], want, rtol=1e-5, atol=1e-6)


def test_layer_norm_odd_rows() -> None:
    x, scale, bias = f32(2, 5, 23), f32(23), f32(23)
    node = helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], name="n", axis=-1, epsilon=1e-5)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape)
                                            for k, v in (("x", x), ("s", scale), ("b", bias))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    feeds = {"x": x, "s": scale, "b": bias}
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    np.testing.assert_allclose(glow.compile(model).run(feeds)["y"], want, rtol=1e-5, atol=1e-5)


INTEGER_CASES = [
    pytest.param("Add", {"a": i64(3, 23), "b": i64(23)}, TensorProto.INT64, {}, id="add-i64"),
    pytest.param("Less", {"a": i64(3, 23), "b": i64(3, 23)}, TensorProto.BOOL, {}, id="less-to-bool"),
    pytest.param("Cast", {"x": f32(2, 19) * 9}, TensorProto.INT32, {"to": TensorProto.INT32}, id="cast-f32-i32"),
    pytest.param("Not", {"x": RNG.integers(0, 2, (3, 41)).astype(np.bool_)}, TensorProto.BOOL, {}, id="not-bool"),
    pytest.param("ReduceMax", {"x": i64(5, 29)}, TensorProto.INT64, {"axes": [1], "keepdims": 0}, id="reduce-i64"),
    pytest.param("Where", {"c": RNG.integers(0, 2, (2, 37)).astype(np.bool_), "a": f32(2, 37), "b": f32(37)},
                 TensorProto.FLOAT, {}, id="where-bool-bytes"),
]


@pytest.mark.parametrize("op,inputs,out_type,attrs", INTEGER_CASES)
def test_integer_and_bool_families(op: str, inputs: dict[str, np.ndarray], out_type: int,
                                   attrs: dict[str, Any]) -> None:
    got, want = _run(op, inputs, out_type, **attrs)
    np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="module")
def math_models() -> dict[str, glow.CompiledModel]:
    grid = np.zeros((1, 4001), np.float32)
    return {op: glow.compile(_model(op, {"x": grid}, TensorProto.FLOAT)) for op in ("Exp", "Erf", "Tanh", "Sigmoid")}


def _grid(low: float, high: float) -> np.ndarray:
    return np.linspace(low, high, 4001, dtype=np.float32)[None]


def test_exp_accuracy(math_models: dict[str, glow.CompiledModel]) -> None:
    x = _grid(-86.5, 88.7)
    got = math_models["Exp"].run({"x": x})["y"]
    np.testing.assert_allclose(got, np.exp(x.astype(np.float64)), rtol=1e-6, atol=0)
    edges = np.array([[-np.inf, -200, -87.5, 88.75, 200, np.inf, np.nan, 0.0] + [0.0] * 3993], np.float32)
    got = math_models["Exp"].run({"x": edges})["y"][0, :8]
    assert np.all(got[:3] <= 2.8e-38) and np.all(got[:3] >= 0)
    assert np.all(np.isposinf(got[3:6])) and np.isnan(got[6]) and got[7] == 1.0


def test_erf_accuracy(math_models: dict[str, glow.CompiledModel]) -> None:
    from math import erf

    x = _grid(-6.0, 6.0)
    want = np.vectorize(erf)(x.astype(np.float64))
    np.testing.assert_allclose(math_models["Erf"].run({"x": x})["y"], want, rtol=1e-6, atol=2e-7)


def test_tanh_accuracy(math_models: dict[str, glow.CompiledModel]) -> None:
    x = _grid(-12.0, 12.0)
    got = math_models["Tanh"].run({"x": x})["y"]
    np.testing.assert_allclose(got, np.tanh(x.astype(np.float64)), rtol=1e-6, atol=1e-7)
    tiny = _grid(-1e-3, 1e-3)
    np.testing.assert_allclose(math_models["Tanh"].run({"x": tiny})["y"], np.tanh(tiny.astype(np.float64)),
                               rtol=1e-6, atol=0)
    # from the clamp up exactly +-1: 1 + tanh(x) in GELU's tail is then 0
    edges = np.array([[-np.inf, -100, -7.9053111, 7.9053111, 100, np.inf, np.nan] + [0.0] * 3994], np.float32)
    got = math_models["Tanh"].run({"x": edges})["y"][0, :7]
    assert got[:6].tolist() == [-1, -1, -1, 1, 1, 1] and np.isnan(got[6])


def test_sigmoid_accuracy(math_models: dict[str, glow.CompiledModel]) -> None:
    x = _grid(-80.0, 40.0)
    want = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(math_models["Sigmoid"].run({"x": x})["y"], want, rtol=1e-6, atol=0)
    # 0 (or below 1e-35) far below, exactly 1 from 17 up, NaN stays NaN
    edges = np.array([[-np.inf, -200, 17, 100, np.inf, np.nan] + [0.0] * 3995], np.float32)
    got = math_models["Sigmoid"].run({"x": edges})["y"][0, :6]
    assert np.all((got[:2] >= 0) & (got[:2] < 1e-35)) and got[2:5].tolist() == [1, 1, 1] and np.isnan(got[5])


def test_roundeven_expansion_for_bare_metal_is_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a bare-metal target cpu-approximate-math writes roundeven in arith (newlib has no roundevenf): made to
    run here by taking the host for bare metal, it rounds ties to even, keeps -0.0, large floats, inf and NaN."""
    from glow_mlir.backend import target

    monkeypatch.setattr(target, "bare_metal", lambda triple: True)
    ties = np.arange(-8.5, 9.0, 1.0, dtype=np.float32)
    near = np.nextafter(ties, np.float32(0))
    edges = np.array([-0.4, -0.0, 0.0, 0.49999997, 2.0**23 - 0.5, 2.0**23 + 2, -(2.0**24) - 2, 3e38, np.inf,
                      -np.inf, np.nan, 1.5e-45], np.float32)
    x = np.concatenate([ties, near, edges, f32(1, 200)[0] * 50])[None]
    model = _model("Round", {"x": x}, TensorProto.FLOAT)
    compiled = glow.compile(model, cache=False)
    assert "math.roundeven" not in compiled.stage("codegen").text
    got = compiled.run({"x": x})["y"]
    np.testing.assert_array_equal(got, np.round(x))
    assert np.array_equal(np.signbit(got), np.signbit(np.round(x)))


#: transposes in blocks transposed in registers (16 x 16 on AVX-512, 8 x 8 on AVX2), with runs of dims kept together
#: (NCHW <-> NHWC), dims that the lanes do not divide (masked last blocks), a 5-D one, and rows too short for blocks
TRANSPOSES = [
    pytest.param((1, 64, 14, 16), [0, 2, 3, 1], id="nchw-to-nhwc"),
    pytest.param((1, 14, 16, 64), [0, 3, 1, 2], id="nhwc-to-nchw"),
    pytest.param((2, 48, 32), [0, 2, 1], id="batched-32x48"),
    pytest.param((40, 64), [1, 0], id="rows-of-40"),
    pytest.param((8, 16, 3, 16), [3, 2, 0, 1], id="scattered-dims"),
    pytest.param((2, 16, 2, 8, 16), [0, 4, 2, 3, 1], id="five-dims"),
    pytest.param((1, 64, 14, 14), [0, 2, 3, 1], id="nchw-to-nhwc-masked"),
    pytest.param((1, 13, 13, 255), [0, 3, 1, 2], id="nhwc-to-nchw-masked-both"),
    pytest.param((3, 20, 9), [2, 0, 1], id="rows-shorter-than-a-vector"),
    # rows interleaved into pixels of fewer channels than the lanes (interleave.py): runs of whole vectors of
    # pixels and the pixels left over; 12 channels are fewer than AVX-512's lanes, not AVX2's
    pytest.param((1, 3, 37, 45), [0, 2, 3, 1], id="rgb-to-pixels"),
    pytest.param((2, 2, 5, 3), [0, 2, 3, 1], id="two-channels-of-3-pixels"),
    pytest.param((4, 7, 33), [0, 2, 1], id="seven-channels"),
    pytest.param((1, 12, 9, 9), [0, 2, 3, 1], id="twelve-channels"),
    # and back: pixels of fewer channels than the lanes into channel rows (NHWC -> NCHW of a network's few-class
    # output), runs of whole vectors of pixels and the pixels left over
    pytest.param((1, 14, 37, 8), [0, 3, 1, 2], id="pixels-to-eight-channel-rows"),
    pytest.param((2, 5, 7, 3), [0, 3, 1, 2], id="pixels-to-three-channel-rows"),
    pytest.param((4, 33, 7), [0, 2, 1], id="pixels-to-seven-channel-rows"),
    pytest.param((1, 9, 9, 12), [0, 3, 1, 2], id="pixels-to-twelve-channel-rows"),
    pytest.param((2, 3, 2, 5), [0, 3, 1, 2], id="pixels-to-five-channel-rows-of-6"),
    # as many channels as AVX2's lanes onto rows they do not divide: blocks masked along the rows
    pytest.param((1, 8, 12, 12), [0, 2, 3, 1], id="eight-channels-of-12-columns"),
    pytest.param((2, 8, 3, 12), [0, 2, 3, 1], id="eight-channels-of-36-pixels"),
    pytest.param((1, 1, 12, 13), [0, 2, 3, 1], id="one-channel"),
    # a masked block whose two dims are not the input's last two (a dim between them): wrote unset lanes
    pytest.param((2, 8, 3, 12), [2, 0, 3, 1], id="masked-block-dim-between-avx2"),
    pytest.param((1, 16, 6, 20), [2, 0, 3, 1], id="masked-block-dim-between"),
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
@pytest.mark.parametrize("shape,perm", TRANSPOSES)
def test_transposes_in_blocks(shape: tuple[int, ...], perm: list[int], target_cpu: str, threads: int) -> None:
    from glow_mlir.cache import cpu_features

    if target_cpu == "haswell" and "avx2" not in cpu_features():
        pytest.skip("this host cannot run AVX2 code")
    x = f32(*shape)
    model = _model("Transpose", {"x": x}, TensorProto.FLOAT, perm=perm)
    got = glow.compile(model, threads=threads, target_cpu=target_cpu).run({"x": x})["y"]
    np.testing.assert_array_equal(got, x.transpose(perm))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
@pytest.mark.parametrize("to_nchw", [True, False], ids=["nhwc-to-nchw", "nchw-to-nhwc"])
def test_the_block_the_lanes_leave_over_has_no_transfer_without_a_lane(to_nchw: bool, target_cpu: str,
                                                                     threads: int) -> None:
    # channels a vector and a half (AVX-512 24, AVX2 12): the last block of channel rows is peeled off the loop, so
    # that its rows past the channels are no masked transfers with no lane set at addresses past the buffer (each a
    # microcode assist where no page is present there: 10 or 200 us a call, by where the output array was); the
    # rows of the block that exist are read or written whole, the lanes past the channels masked only along them
    from glow_mlir.backend.kernels import isa
    from glow_mlir.cache import cpu_features

    if target_cpu == "haswell" and "avx2" not in cpu_features():
        pytest.skip("this host cannot run AVX2 code")
    lanes = isa.spec_of(target_cpu).lanes
    channels = lanes + lanes // 2
    x = f32(1, 20, 20, channels) if to_nchw else f32(1, channels, 20, 20)
    perm = [0, 3, 1, 2] if to_nchw else [0, 2, 3, 1]
    compiled = glow.compile(_model("Transpose", {"x": x}, TensorProto.FLOAT, perm=perm), threads=threads,
                            target_cpu=target_cpu)
    np.testing.assert_array_equal(compiled.run({"x": x})["y"], x.transpose(perm))
    code = compiled.stage("codegen").text
    rows = "llvm.intr.masked.store" if to_nchw else "llvm.intr.masked.load"  # one per channel row of a block
    assert "llvm.store" in code or "llvm.intr.masked.store" in code
    assert rows not in code


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
def test_an_image_interleaved_into_a_bordered_input_matches_the_reference(target_cpu: str, threads: int) -> None:
    # the NCHW -> NHWC transpose of a 3-channel image and the copy into the convolution's bordered input are one
    # loop (linalg-fuse-elementwise), runs of pixels written into rows of the border (interleave.py)
    from onnx import numpy_helper

    from glow_mlir.cache import cpu_features

    if target_cpu == "haswell" and "avx2" not in cpu_features():
        pytest.skip("this host cannot run AVX2 code")
    x, w = f32(1, 3, 29, 35), f32(8, 3, 5, 5)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[2, 2, 2, 2], strides=[2, 2])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    compiled = glow.compile(model, threads=threads, target_cpu=target_cpu)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(compiled.run({"x": x})["y"], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
@pytest.mark.parametrize("shape", [(2, 6, 28, 18), (3, 17, 5, 20)], ids=["28x18", "17x20"])
def test_every_transpose_of_dims_the_lanes_do_not_divide(shape: tuple[int, ...], target_cpu: str) -> None:
    # every permutation, each pair of dims a transpose in blocks would take with both last blocks masked: (1, 3, 0,
    # 2) of the first and (2, 0, 3, 1) of the second wrote stale lanes when both were masked (a fuzz finding)
    import itertools

    from glow_mlir.cache import cpu_features

    if target_cpu == "haswell" and "avx2" not in cpu_features():
        pytest.skip("this host cannot run AVX2 code")
    x = f32(*shape)
    wrong = []
    for perm in itertools.permutations(range(len(shape))):
        model = _model("Transpose", {"x": x}, TensorProto.FLOAT, perm=list(perm))
        if not np.array_equal(glow.compile(model, target_cpu=target_cpu).run({"x": x})["y"], x.transpose(perm)):
            wrong.append(perm)
    assert not wrong


def test_a_transpose_after_a_slice_matches_numpy() -> None:
    # the slice [:, :, :, 1:] is copied out (glowir's views are contiguous), then transposed as [1, 32, 8 * 16]
    x = f32(1, 32, 8, 17)
    starts, ends, axes = (np.array(v, dtype=np.int64) for v in ([1], [17], [3]))
    nodes = [helper.make_node("Slice", ["x", "s", "e", "a"], ["v"]),
             helper.make_node("Transpose", ["v"], ["y"], perm=[0, 2, 3, 1])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [helper.make_tensor("s", TensorProto.INT64, [1], starts),
                               helper.make_tensor("e", TensorProto.INT64, [1], ends),
                               helper.make_tensor("a", TensorProto.INT64, [1], axes)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    got = glow.compile(model).run({"x": x})["y"]
    np.testing.assert_array_equal(got, x[:, :, :, 1:].transpose(0, 2, 3, 1))


@pytest.mark.parametrize(("perm", "groups"), [
    ([0, 2, 3, 1], [[0], [2, 3], [1]]),
    ([0, 3, 1, 2], [[0], [3], [1, 2]]),
    ([2, 0, 1], [[2], [0, 1]]),
    ([2, 1, 0], [[2], [1], [0]]),
    ([0, 1, 2], [[0, 1, 2]]),
])
def test_transpose_groups(perm: list[int], groups: list[list[int]]) -> None:
    from glow_mlir.passes.utils import adjacent_runs

    assert adjacent_runs(perm) == groups
