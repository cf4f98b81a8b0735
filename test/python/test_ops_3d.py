"""3-D convolution and pooling on [N, C, D, H, W] end to end: Conv and ConvTranspose (one 2-D convolution with the
depth taps as input channels), MaxPool and AveragePool (a pool over (H, W), then one over D), GlobalMaxPool and
GlobalAveragePool; small ONNX models compiled with ``glow_mlir.api.compile`` and compared with ``onnx.reference``
(rtol 1e-4, atol 1e-5), the pools with onnxruntime (onnx.reference's 3-D pools take 6 pads for 2-D ones). Each family is one model with one output per variant, compiled once per module."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import UnsupportedError

RTOL, ATOL = 1e-4, 1e-5
F32 = TensorProto.FLOAT
RNG = np.random.default_rng(11)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


class Family:
    """Variants of one family: each ``add`` is a node reading named inputs and giving one graph output."""

    def __init__(self, inputs: dict[str, Sequence[int]]):
        self.inputs = {name: rand(*shape) for name, shape in inputs.items()}
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.outputs: list[str] = []
        self.got: dict[str, np.ndarray] = {}
        self.want: dict[str, np.ndarray] = {}

    def init(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def add(self, out: str, op: str, inputs: list[str], **attrs) -> None:
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        self.outputs.append(out)

    def model(self, opset: int) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, "ops3d", [helper.make_tensor_value_info(n, F32, v.shape) for n, v in self.inputs.items()],
            [helper.make_tensor_value_info(o, F32, None) for o in self.outputs], self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    def run(self, opset: int, onnxruntime: bool = False) -> Family:
        model = self.model(opset)
        self.got = glow.compile(model).run(self.inputs)
        if onnxruntime:
            ort = pytest.importorskip("onnxruntime")
            model.ir_version = 9  # what onnxruntime loads
            session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            want = session.run(self.outputs, self.inputs)
        else:
            want = ReferenceEvaluator(model).run(None, self.inputs)
        self.want = dict(zip(self.outputs, want, strict=True))
        return self

    def check(self, name: str) -> None:
        got, want = self.got[name], self.want[name]
        assert got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=name)


# --------------------------------------------------------------------------- convolution


def conv_family() -> Family:
    f = Family({"x": (2, 4, 6, 7, 5), "wx": (3, 4, 2, 3, 3)})
    w = f.init("w", rand(6, 4, 3, 3, 3))
    bias = f.init("b", rand(6))
    f.add("basic", "Conv", ["x", w, bias], pads=[1] * 6)
    f.add("no_bias", "Conv", ["x", w], kernel_shape=[3, 3, 3])
    f.add("strides_dilations_pads", "Conv", ["x", w, bias], strides=[2, 1, 2], dilations=[2, 1, 1],
          pads=[1, 0, 2, 2, 1, 0])
    f.add("depth_stride3", "Conv", ["x", w], strides=[3, 1, 1], pads=[2, 1, 1, 0, 1, 1])
    w4 = f.init("w4", rand(5, 4, 2, 4, 2))  # even kernels: SAME_UPPER and SAME_LOWER pad differently
    f.add("same_upper", "Conv", ["x", w4], auto_pad="SAME_UPPER")
    f.add("same_lower", "Conv", ["x", w4, f.init("b5", rand(5))], auto_pad="SAME_LOWER", strides=[2, 2, 1])
    f.add("valid", "Conv", ["x", w], auto_pad="VALID", strides=[1, 2, 2])
    f.add("group2", "Conv", ["x", f.init("wg", rand(6, 2, 3, 2, 3)), bias], group=2, pads=[1, 0, 1, 1, 1, 0])
    f.add("depthwise", "Conv", ["x", f.init("wd", rand(8, 1, 2, 3, 3))], group=4, pads=[0, 1, 1, 1, 1, 1],
          dilations=[3, 1, 2])
    f.add("depth1", "Conv", ["x", f.init("w1", rand(3, 4, 1, 3, 3))], strides=[2, 1, 1], pads=[0, 1, 1, 0, 1, 1])
    f.add("depth1_group2", "Conv", ["x", f.init("w1g", rand(4, 2, 1, 1, 1))], group=2)
    f.add("weights_from_input", "Conv", ["x", "wx"], pads=[0, 1, 1, 1, 1, 1])
    f.add("transpose_basic", "ConvTranspose", ["x", f.init("wt", rand(4, 3, 3, 2, 3))])
    f.add("transpose_strided", "ConvTranspose", ["x", f.init("wt2", rand(4, 2, 2, 3, 3)), f.init("bt", rand(2))],
          strides=[2, 1, 2], pads=[1, 0, 1, 0, 1, 1], output_padding=[1, 0, 0], dilations=[1, 2, 1])
    return f


@pytest.fixture(scope="module")
def conv() -> Family:
    return conv_family().run(17)


@pytest.mark.parametrize("name", conv_family().outputs)
def test_conv3d(conv: Family, name: str) -> None:
    conv.check(name)


def test_conv_transpose3d_groups() -> None:
    """Grouped ConvTranspose against the concatenation of each group's own (onnx.reference's grouped ConvTranspose
    writes each group's output to one image: it fails for a batch of 2)."""
    x, w, b = rand(2, 4, 3, 4, 3), rand(4, 3, 2, 3, 2), rand(6)
    attrs = {"strides": [2, 2, 1], "pads": [0, 1, 1, 1, 0, 0], "output_padding": [1, 0, 0]}
    f = Family({})
    f.inputs = {"x": x}
    f.add("y", "ConvTranspose", ["x", f.init("w", w), f.init("b", b)], group=2, **attrs)
    got = glow.compile(f.model(17)).run({"x": x})["y"]
    parts = []
    for g in range(2):
        one = Family({})
        one.inputs = {"x": x[:, 2 * g: 2 * g + 2]}
        one.add("y", "ConvTranspose", ["x", one.init("w", w[2 * g: 2 * g + 2]), one.init("b", b[3 * g: 3 * g + 3])],
                **attrs)
        parts.append(ReferenceEvaluator(one.model(17)).run(None, one.inputs)[0])
    np.testing.assert_allclose(got, np.concatenate(parts, axis=1), rtol=RTOL, atol=ATOL)


# --------------------------------------------------------------------------- pooling


def pool_family() -> Family:
    f = Family({"x": (2, 3, 7, 6, 5)})
    for op, kind in (("MaxPool", "max"), ("AveragePool", "avg")):
        f.add(f"{kind}_basic", op, ["x"], kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1] * 6)
        f.add(f"{kind}_asymmetric", op, ["x"], kernel_shape=[2, 3, 2], strides=[1, 2, 1], pads=[1, 0, 1, 0, 2, 0])
        f.add(f"{kind}_ceil", op, ["x"], kernel_shape=[2, 2, 2], strides=[2, 2, 2], ceil_mode=1)
        f.add(f"{kind}_ceil_padded", op, ["x"], kernel_shape=[3, 3, 2], strides=[2, 2, 2], pads=[1, 1, 0, 1, 1, 0],
              ceil_mode=1)
        f.add(f"{kind}_dilated", op, ["x"], kernel_shape=[2, 2, 2], dilations=[3, 2, 1], pads=[1, 1, 1, 1, 1, 1])
        f.add(f"{kind}_same_upper", op, ["x"], kernel_shape=[2, 3, 2], auto_pad="SAME_UPPER")
        f.add(f"{kind}_same_lower", op, ["x"], kernel_shape=[2, 2, 3], auto_pad="SAME_LOWER")
        f.add(f"{kind}_valid", op, ["x"], kernel_shape=[3, 2, 2], strides=[2, 1, 2], auto_pad="VALID")
        f.add(f"{kind}_depth1", op, ["x"], kernel_shape=[1, 3, 3], pads=[0, 1, 1, 0, 1, 1])
        f.add(f"{kind}_plane1", op, ["x"], kernel_shape=[3, 1, 1], strides=[2, 1, 1])
        f.add(f"{kind}_global", f"Global{op}", ["x"])
    f.add("avg_include_pad", "AveragePool", ["x"], kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1, 1, 2, 1, 1, 0],
          count_include_pad=1)
    f.add("avg_include_pad_ceil", "AveragePool", ["x"], kernel_shape=[3, 3, 3], strides=[2, 2, 2],
          pads=[1, 0, 1, 1, 0, 1], ceil_mode=1, count_include_pad=1)
    f.add("avg_include_pad_dilated", "AveragePool", ["x"], kernel_shape=[2, 2, 2], dilations=[2, 1, 2],
          pads=[1, 1, 1, 1, 0, 1], count_include_pad=1)
    return f


@pytest.fixture(scope="module")
def pool() -> Family:
    # AveragePool takes dilations from opset 19; onnx.reference's 3-D pools read 6 pads as 2-D ones (onnx 1.23)
    return pool_family().run(19, onnxruntime=True)


@pytest.mark.parametrize("name", pool_family().outputs)
def test_pool3d(pool: Family, name: str) -> None:
    pool.check(name)


# --------------------------------------------------------------------------- what is refused


def test_4d_convolution_is_unsupported() -> None:
    f = Family({"x": (1, 2, 3, 3, 3, 3)})
    f.add("y", "Conv", ["x", f.init("w", rand(2, 2, 1, 1, 1, 1))])
    with pytest.raises(UnsupportedError, match=r"node 'y' \(Conv\): 4-D Conv is not supported \(1-D, 2-D and 3-D are\)"):
        glow.compile(f.model(17))


def test_4d_pool_is_unsupported() -> None:
    f = Family({"x": (1, 2, 3, 3, 3, 3)})
    f.add("y", "MaxPool", ["x"], kernel_shape=[1, 1, 1, 1])
    with pytest.raises(UnsupportedError, match=r"node 'y' \(MaxPool\): 4-D MaxPool is not supported"):
        glow.compile(f.model(17))


# --------------------------------------------------------------------------- MaxPool's Indices


def max_pool_with_indices(shape: Sequence[int], opset: int = 12, **attrs) -> tuple[onnx.ModelProto, np.ndarray]:
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], name="n", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F32, shape)],
                              [helper.make_tensor_value_info("y", F32, None),
                               helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), rand(*shape)


INDICES = {
    "2d": ([2, 3, 6, 7], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "2d_pads": ([1, 2, 5, 5], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "2d_column_major": ([2, 2, 5, 4], {"kernel_shape": [2, 3], "strides": [1, 2], "pads": [0, 1, 1, 1],
                                       "storage_order": 1}),
    "2d_dilated": ([1, 3, 7, 6], {"kernel_shape": [2, 2], "strides": [1, 2], "dilations": [2, 2],
                                  "pads": [1, 0, 1, 1]}),
    "2d_ceil": ([2, 2, 6, 5], {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1}),
    "2d_same_upper": ([1, 2, 5, 6], {"kernel_shape": [3, 2], "strides": [2, 1], "auto_pad": "SAME_UPPER"}),
    "1d": ([2, 3, 9], {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    "3d": ([2, 2, 4, 5, 6], {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "pads": [0, 1, 1, 1, 1, 0]}),
    "3d_column_major": ([1, 2, 5, 4, 3], {"kernel_shape": [2, 2, 2], "strides": [1, 2, 1], "storage_order": 1}),
}


@pytest.mark.parametrize("name", INDICES)
def test_max_pool_indices(name: str) -> None:
    """Against onnxruntime: onnx.reference gives Indices only where a stride or dilation is not 1 (onnx 1.23)."""
    ort = pytest.importorskip("onnxruntime")
    shape, attrs = INDICES[name]
    model, x = max_pool_with_indices(shape, **attrs)
    got = glow.compile(model).run({"x": x})
    model.ir_version = 9
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want_y, want_i = session.run(["y", "i"], {"x": x})
    np.testing.assert_array_equal(got["y"], want_y)
    assert got["i"].dtype == np.int64
    np.testing.assert_array_equal(got["i"], want_i)
    if attrs.get("storage_order"):  # the spatial dims column-major: row-major ones of x with them reversed
        x = x.transpose(0, 1, *reversed(range(2, x.ndim)))
    np.testing.assert_array_equal(x.reshape(-1)[got["i"]], got["y"])


def test_max_pool_indices_ties_to_the_first() -> None:
    """Equal elements: the first in window order wins (as in onnx.reference's loops, which take a stride of 2)."""
    model, _ = max_pool_with_indices([1, 1, 5, 5], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    x = np.zeros([1, 1, 5, 5], np.float32)
    x[0, 0, 3:, 3:] = 1.0
    got = glow.compile(model).run({"x": x})["i"]
    want = ReferenceEvaluator(model).run(None, {"x": x})[1]
    np.testing.assert_array_equal(got, want)
