"""QuantizeLinear and DequantizeLinear (importer/handlers/quantize.py): int8 and uint8 values held as the float32 of
their integers inside the graph, QDQ models against onnx.reference and onnxruntime: their per-tensor pairs made int8
islands (glowgraph-qdq-to-params), the rest computed in float32 with int8 numerics."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir

RNG = np.random.default_rng(11)


def _model(nodes, inits, out_shape=None, opset: int = 19) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _conv_qdq(opset: int = 19) -> onnx.ModelProto:
    """Q/DQ of a uint8 input, int8 weights with one scale per output channel, Conv + Relu in float, then a uint8
    Q/DQ around a MaxPool on the quantized values (data movement on int8 values)."""
    w = (RNG.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32)
    ws = (np.abs(w).reshape(8, -1).max(1) / 127).astype(np.float32)
    wq = np.clip(np.round(w / ws[:, None, None, None]), -127, 127).astype(np.int8)
    inits = [numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(8, np.int8), "wz"), numpy_helper.from_array(np.float32(0.02), "xs"),
             numpy_helper.from_array(np.uint8(128), "xz"), numpy_helper.from_array(np.float32(0.05), "ys"),
             numpy_helper.from_array(np.uint8(10), "yz"),
             numpy_helper.from_array(RNG.standard_normal(8).astype(np.float32), "b")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["rq"]),
             helper.make_node("MaxPool", ["rq"], ["pq"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("DequantizeLinear", ["pq", "ys", "yz"], ["y"])]
    return _model(nodes, inits, opset=opset)


def test_a_qdq_convolution_matches_onnx_reference_and_onnxruntime() -> None:
    model = _conv_qdq()
    x = RNG.standard_normal((1, 4, 8, 8)).astype(np.float32) * 2
    got = glow_mlir.compile(model, threads=1, cache=False)(x)
    np.testing.assert_allclose(got, ReferenceEvaluator(model).run(None, {"x": x})[0], atol=0.05 + 1e-6, rtol=0)
    ort = pytest.importorskip("onnxruntime")
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    # onnxruntime runs this QDQ model with int8 kernels: equal up to one step of the output's scale
    np.testing.assert_allclose(got, want, atol=0.05 + 1e-6, rtol=0)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_quantize_rounds_halves_to_even_and_saturates(dtype) -> None:
    scale, zero = np.float32(0.5), dtype(3)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    inits = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero, "z")]
    model = _model(nodes, inits, [1, 4, 8, 8])
    x = np.array([0.25, 0.75, 1.25, -0.25, -0.75, 1000.0, -1000.0, 0.0] * 32, np.float32).reshape(1, 4, 8, 8)
    got = glow_mlir.compile(model, threads=1, cache=False)(x)
    np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, {"x": x})[0])


def test_older_opsets_and_per_axis_scales_as_onnxruntime_runs_them() -> None:
    ort = pytest.importorskip("onnxruntime")
    model = _conv_qdq(opset=13)
    x = RNG.standard_normal((1, 4, 8, 8)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(glow_mlir.compile(model, threads=1, cache=False)(x), want, atol=0.05 + 1e-6, rtol=0)


def test_int8_arithmetic_wraps_and_int8_graph_outputs_keep_their_type() -> None:
    # q + q of int8 values up to 127 wraps as int8 does (onnx.reference computes it in numpy's int8)
    inits = [numpy_helper.from_array(np.float32(0.1), "s"), numpy_helper.from_array(np.int8(0), "z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]), helper.make_node("Add", ["q", "q"], ["a"]),
             helper.make_node("DequantizeLinear", ["a", "s", "z"], ["y"])]
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5]),
                               helper.make_tensor_value_info("a", TensorProto.INT8, [5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    x = np.array([-20.0, -7.3, 0.0, 6.4, 12.7], np.float32)
    got = glow_mlir.compile(model, cache=False).run({"x": x})
    want_y, want_a = ReferenceEvaluator(model).run(None, {"x": x})
    assert got["a"].dtype == np.int8 and want_a.dtype == np.int8
    np.testing.assert_array_equal(got["a"], want_a)
    np.testing.assert_allclose(got["y"], want_y, rtol=1e-6)
    assert want_a[-1] == -2  # 127 + 127 wrapped


def test_onnxruntime_quantize_static_qdq_model_of_digits_cnn(tmp_path) -> None:
    from conftest import digits, model_path

    quantization = pytest.importorskip("onnxruntime.quantization")
    train, images, labels = digits("x_train", 32), digits("x_test", 40), digits("y_test", 40)

    class Reader(quantization.CalibrationDataReader):
        def __init__(self) -> None:
            self.feeds = iter([{"image": train[i:i + 1]} for i in range(32)])

        def get_next(self):
            return next(self.feeds, None)

    path = tmp_path / "digits_qdq.onnx"
    quantization.quantize_static(str(model_path("digits_cnn")), str(path), Reader(),
                                 quant_format=quantization.QuantFormat.QDQ, per_channel=True,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8)
    model = onnx.load(path)
    assert {"QuantizeLinear", "DequantizeLinear"} <= {n.op_type for n in model.graph.node}
    compiled = glow_mlir.compile(model, threads=1, cache=False)
    # its QDQ pairs are int8 islands: every convolution and the fully connected layer run on int8 kernels
    kinds = re.findall(r'"glowgraph\.(\w+)"', compiled.stage("quantize").text)
    assert kinds.count("qconv2d") == 3 and "qfully_connected" in kinds and "conv2d" not in kinds
    reference = ReferenceEvaluator(onnx.version_converter.convert_version(model, 19))
    step = max(float(numpy_helper.to_array(t)) for t in model.graph.initializer
               if t.name.startswith("logits") and t.name.endswith("scale"))
    right = 0
    for i in range(40):
        x = images[i:i + 1]
        got = compiled(x)
        np.testing.assert_allclose(got, reference.run(None, {"image": x})[0], atol=step * 1.01, rtol=0)
        right += int(got.argmax() == labels[i])
    assert right >= 38  # the float model gets 98% of the test images


def _integer_matmuls(k: int) -> onnx.ModelProto:
    """QLinearMatMul with a per-column B scale and MatMulInteger with zero points, between Q and DQ / Cast."""
    b = RNG.integers(-127, 128, (k, 10)).astype(np.int8)
    inits = [numpy_helper.from_array(np.float32(0.02), "xs"), numpy_helper.from_array(np.uint8(120), "xz"),
             numpy_helper.from_array(b, "b"),
             numpy_helper.from_array((RNG.random(10) * 0.01 + 0.001).astype(np.float32), "bs"),
             numpy_helper.from_array(np.zeros(10, np.int8), "bz"), numpy_helper.from_array(np.float32(0.05), "ys"),
             numpy_helper.from_array(np.uint8(100), "yz"), numpy_helper.from_array(np.int8(3), "bz3")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("QLinearMatMul", ["xq", "xs", "xz", "b", "bs", "bz", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
             helper.make_node("MatMulInteger", ["xq", "b", "xz", "bz3"], ["i"]),
             helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("f", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def test_qlinear_matmul_and_matmul_integer_equal_onnx_reference() -> None:
    model = _integer_matmuls(40)
    x = RNG.standard_normal((6, 40)).astype(np.float32)
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x})
    want = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(got["y"], want[0])
    np.testing.assert_array_equal(got["f"], want[1])  # the int32 sums, exact


def test_matmul_integer_beyond_exact_float32_sums_adds_int32_chunks() -> None:
    # K = 600: three chunks of at most 258, each exact in float32, added as int32
    model = _integer_matmuls(600)
    x = RNG.standard_normal((6, 600)).astype(np.float32) * 3
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x})
    want = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(got["f"], want[1])
    assert np.abs(want[1]).max() > 2**18  # sums far beyond one chunk's


def test_dynamic_quantize_linear_equals_onnx_reference() -> None:
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
             helper.make_node("DequantizeLinear", ["y", "s", "z"], ["d"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
                              [helper.make_tensor_value_info("d", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("s", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    compiled = glow_mlir.compile(model, threads=1, cache=False)
    for x in (RNG.standard_normal((3, 5)), np.abs(RNG.standard_normal((3, 5))) + 0.5):  # mixed signs; all above 0
        x = x.astype(np.float32)
        got, want = compiled.run({"x": x}), ReferenceEvaluator(model).run(None, {"x": x})
        np.testing.assert_array_equal(got["d"], want[0])
        np.testing.assert_array_equal(got["s"], want[1])


def test_onnxruntime_quantize_dynamic_model_of_mlp_mnist(tmp_path) -> None:
    from conftest import model_path

    quantization = pytest.importorskip("onnxruntime.quantization")
    path = tmp_path / "mlp_dynamic.onnx"
    quantization.quantize_dynamic(str(model_path("mlp_mnist")), str(path), weight_type=quantization.QuantType.QInt8)
    model = onnx.load(path)
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= {n.op_type for n in model.graph.node}
    x = np.load(model_path("mlp_mnist").with_suffix(".io.npz"))["in_input"]
    got = glow_mlir.compile(model, threads=1, cache=False)(x)
    want = ReferenceEvaluator(onnx.version_converter.convert_version(model, 19)).run(None, {"input": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # the int32 sums exact (K = 784 in chunks)


def test_qlinear_conv_is_an_int8_convolution_within_one_step_of_onnx_reference() -> None:
    """QLinearConv (uint8 input with a zero point, int8 weights with a scale per output channel, an int32 bias)
    between a QuantizeLinear and a DequantizeLinear: the convolution runs on int8 kernels (qconv2d), each output
    within one step of its scale of onnx.reference's, and most equal."""
    w = RNG.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8)
    inits = [numpy_helper.from_array(np.float32(0.02), "xs"), numpy_helper.from_array(np.uint8(128), "xz"),
             numpy_helper.from_array(w, "w"),
             numpy_helper.from_array((RNG.random(8) * 0.01 + 0.001).astype(np.float32), "ws"),
             numpy_helper.from_array(np.zeros(8, np.int8), "wz"), numpy_helper.from_array(np.float32(0.3), "ys"),
             numpy_helper.from_array(np.uint8(100), "yz"),
             numpy_helper.from_array(RNG.integers(-500, 500, 8).astype(np.int32), "b")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["yq"],
                              pads=[1, 1, 1, 1], strides=[2, 1]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    model = _model(nodes, inits, [1, 8, 4, 8])
    compiled = glow_mlir.compile(model, threads=1, cache=False)
    assert '"glowgraph.qconv2d"' in compiled.stage("quantize").text
    x = RNG.standard_normal((1, 4, 8, 8)).astype(np.float32)
    got, want = compiled(x), ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, atol=0.3 * 1.001, rtol=0)
    assert np.mean(np.abs(got - want) < 1e-4) > 0.9


@pytest.mark.parametrize("channels", [3, 64])
def test_conv_integer_equals_onnx_reference(channels: int) -> None:
    """ConvInteger of uint8 x (zero point 120, padded) and int8 w (a zero point per output channel): int32 results
    equal onnx.reference's; 64 channels x 9 taps is 576 products per output, summed in chunks of whole channels."""
    w = RNG.integers(-128, 128, (5, channels, 3, 3)).astype(np.int8)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.uint8(120), "xz"),
             numpy_helper.from_array(RNG.integers(-3, 3, 5).astype(np.int8), "wz")]
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "ci", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, channels, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = RNG.integers(0, 256, (1, channels, 6, 6)).astype(np.uint8)
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x})["y"]
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, {"x": x})[0])


@pytest.mark.parametrize("known", [True, False], ids=["constant-scales", "run-time-scales"])
def test_blocked_quantization_repeats_each_scale_over_its_block(known: bool) -> None:
    # x [3, 7] quantized per block of 3 along axis 1 (the last block of one entry), the scale and zero point [3, 3]
    # initializers or graph inputs, then dequantized per block of 2 along axis 0 of the transposed values
    x = (RNG.standard_normal((3, 7)) * 4).astype(np.float32)
    params = {"s": (RNG.uniform(0.02, 0.2, (3, 3))).astype(np.float32),
              "z": RNG.integers(-20, 20, (3, 3)).astype(np.int8),
              "ds": (RNG.uniform(0.02, 0.2, (4, 3))).astype(np.float32)}
    types = {"s": TensorProto.FLOAT, "z": TensorProto.INT8, "ds": TensorProto.FLOAT}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1, block_size=3),
             helper.make_node("Transpose", ["q"], ["qt"]),
             helper.make_node("DequantizeLinear", ["qt", "ds"], ["y"], axis=0, block_size=2)]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 7])]
    if known:
        inits = [numpy_helper.from_array(v, k) for k, v in params.items()]
    else:
        inits = []
        inputs += [helper.make_tensor_value_info(k, types[k], list(v.shape)) for k, v in params.items()]
    graph = helper.make_graph(nodes, "blocked", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [7, 3]),
                                                          helper.make_tensor_value_info("q", TensorProto.INT8, [3, 7])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    feeds = {"x": x} if known else {"x": x, **params}
    got = glow_mlir.compile(model, threads=1, cache=False).run(feeds)
    want = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_array_equal(got["q"], want[1])
    np.testing.assert_allclose(got["y"], want[0], rtol=1e-6, atol=0)


def test_blocked_scales_of_the_wrong_shape_are_an_error() -> None:
    nodes = [helper.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=3)]
    graph = helper.make_graph(nodes, "blocked", [helper.make_tensor_value_info("x", TensorProto.INT8, [2, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 7])],
                              [numpy_helper.from_array(np.ones((2, 2), np.float32), "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(glow_mlir.GlowError, match=r"DequantizeLinear.*x_scale \[2, 2\] does not match blocks of 3 "
                                                  r"along axis 1.*\[2, 3\] expected"):
        glow_mlir.compile(model, threads=1, cache=False)
