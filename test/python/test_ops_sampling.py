"""AffineGrid and GridSample (importer/handlers/sampling.py) against onnx.reference: every mode, padding mode and
align_corners on 2-D inputs, linear and nearest on 3-D ones, with grid positions far outside the image (several
reflections) and exactly on its borders."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir
from glow_mlir.errors import ModelError, UnsupportedError

RNG = np.random.default_rng(23)


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, np.ndarray], opset: int = 20,
           inits: dict[str, np.ndarray] | None = None) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "sampling",
                              [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    got = glow_mlir.compile(model, threads=1, cache=False).run(feeds)["y"]
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _grid(shape: list[int]) -> np.ndarray:
    """Normalized positions mostly inside, some up to 3.5 image sizes out, some exactly on -1, 0 and 1."""
    g = RNG.uniform(-1.2, 1.2, shape).astype(np.float32)
    flat = g.reshape(-1)
    flat[:6] = [-1.0, 1.0, 0.0, -7.3, 6.1, 3.0]
    return g


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
def test_grid_sample_2d(mode: str, padding: str, align: int) -> None:
    x = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
    grid = _grid([2, 6, 7, 2])
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding, align_corners=align)
    _check(_model([node], {"x": x, "grid": grid}), {"x": x, "grid": grid})


@pytest.mark.parametrize(("mode", "padding"), [("linear", "zeros"), ("nearest", "reflection"), ("linear", "border")])
def test_grid_sample_3d(mode: str, padding: str) -> None:
    x = RNG.standard_normal((1, 2, 3, 4, 5)).astype(np.float32)
    grid = _grid([1, 2, 3, 4, 3])
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding)
    _check(_model([node], {"x": x, "grid": grid}), {"x": x, "grid": grid})


def test_grid_sample_opset_16_names() -> None:
    # opset 16 says bilinear and bicubic (onnx.reference knows only the opset-20 names: it runs that model)
    x = RNG.standard_normal((1, 1, 4, 4)).astype(np.float32)
    grid = _grid([1, 3, 3, 2])
    for old, new in (("bicubic", "cubic"), ("bilinear", "linear")):
        node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=old, padding_mode="border")
        got = glow_mlir.compile(_model([node], {"x": x, "grid": grid}, opset=16), cache=False).run(
            {"x": x, "grid": grid})["y"]
        node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode=new, padding_mode="border")
        want = ReferenceEvaluator(_model([node], {"x": x, "grid": grid})).run(None, {"x": x, "grid": grid})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=old)


@pytest.mark.parametrize(("size", "align"), [([2, 3, 4, 5], 0), ([2, 3, 1, 6], 1), ([1, 2, 3, 2, 4], 0),
                                             ([1, 2, 3, 2, 4], 1)])
def test_affine_grid_then_grid_sample(size: list[int], align: int) -> None:
    # the spatial transformer: a grid from theta, the input sampled on it
    r = len(size) - 2
    theta = RNG.standard_normal((size[0], r, r + 1)).astype(np.float32)
    x = RNG.standard_normal((size[0], size[1], *[3] * r)).astype(np.float32)
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align),
             helper.make_node("GridSample", ["x", "grid"], ["y"], align_corners=align)]
    model = _model(nodes, {"theta": theta, "x": x}, inits={"size": np.array(size, np.int64)})
    _check(model, {"theta": theta, "x": x})


@pytest.mark.parametrize(("attrs", "kind", "pattern"), [
    ({"mode": "area"}, ModelError, r"attribute 'mode' must be one of linear, nearest, cubic, got 'area'"),
    ({"padding_mode": "wrap"}, ModelError, r"attribute 'padding_mode' must be zeros, border or reflection"),
])
def test_grid_sample_bad_attributes(attrs: dict, kind: type, pattern: str) -> None:
    x, grid = np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 2, 2, 2), np.float32)
    model = _model([helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", **attrs)], {"x": x, "grid": grid})
    with pytest.raises(kind, match=r"node 'gs' \(GridSample\): " + pattern):
        glow_mlir.compile(model, cache=False)


def test_cubic_grid_sample_of_a_volume_is_unsupported() -> None:
    x, grid = np.zeros((1, 1, 2, 2, 2), np.float32), np.zeros((1, 2, 2, 2, 3), np.float32)
    model = _model([helper.make_node("GridSample", ["x", "grid"], ["y"], name="gs", mode="cubic")],
                   {"x": x, "grid": grid})
    with pytest.raises(UnsupportedError, match=r"node 'gs' \(GridSample\): cubic sampling of a 3-D input"):
        glow_mlir.compile(model, cache=False)


@pytest.mark.parametrize(("mode", "transform", "ratio", "known"), [
    ("avg", "half_pixel", 2, False), ("max", "output_half_pixel", 2, False), ("avg", "output_half_pixel", 0, True),
    ("max", "half_pixel", 0, True), ("avg", "half_pixel", 3, True)])
def test_roi_align(mode: str, transform: str, ratio: int, known: bool) -> None:
    # two images, rois of several sizes (one partly off the map, one tiny) at spatial scale 0.5
    x = RNG.standard_normal((2, 3, 9, 11)).astype(np.float32)
    rois = np.array([[0, 0, 14, 10], [4, 2, 21, 19], [-6, -4, 5, 3], [10, 8, 10.5, 9], [18, 12, 30, 24]], np.float32)
    batch = np.array([0, 1, 1, 0, 1], np.int64)
    attrs = {"mode": mode, "coordinate_transformation_mode": transform, "sampling_ratio": ratio,
             "output_height": 3, "output_width": 4, "spatial_scale": 0.5}
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], **attrs)
    graph = helper.make_graph([node], "roi", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)] + (
        [] if known else [helper.make_tensor_value_info("rois", TensorProto.FLOAT, rois.shape),
                          helper.make_tensor_value_info("batch", TensorProto.INT64, batch.shape)]),
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(rois, "rois"), numpy_helper.from_array(batch, "batch")] if known else [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    feeds = {"x": x} if known else {"x": x, "rois": rois, "batch": batch}
    _check(model, feeds)


def test_roi_align_with_adaptive_sampling_needs_known_rois() -> None:
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], name="ra", sampling_ratio=0)
    graph = helper.make_graph([node], "roi", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
                                              helper.make_tensor_value_info("rois", TensorProto.FLOAT, [2, 4]),
                                              helper.make_tensor_value_info("batch", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    with pytest.raises(UnsupportedError, match=r"node 'ra' \(RoiAlign\): the rois input 'rois' must be a constant"):
        glow_mlir.compile(model, cache=False)


@pytest.mark.parametrize(("attrs", "channels", "filters", "mask", "bias"), [
    ({"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, 2, 3, False, True),
    ({"kernel_shape": [2, 2], "strides": [2, 1], "dilations": [1, 2], "group": 2, "offset_group": 2}, 4, 4, True,
     False),
    ({"kernel_shape": [3, 2], "pads": [0, 1, 2, 0], "offset_group": 2}, 4, 2, True, True),
], ids=["padded-3x3", "groups-strides-dilations-mask", "offset-groups"])
def test_deform_conv(attrs: dict, channels: int, filters: int, mask: bool, bias: bool) -> None:
    # offsets of up to 2 pixels (taps off the image read zeros), on a batch of 2
    kh, kw = attrs["kernel_shape"]
    group, offset_group = attrs.get("group", 1), attrs.get("offset_group", 1)
    strides, dilations = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    h, w = 6, 7
    oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    feeds = {"x": RNG.standard_normal((2, channels, h, w)).astype(np.float32),
             "offset": RNG.uniform(-2, 2, (2, offset_group * kh * kw * 2, oh, ow)).astype(np.float32)}
    if mask:
        feeds["mask"] = RNG.uniform(0, 1, (2, offset_group * kh * kw, oh, ow)).astype(np.float32)
    inits = {"w": RNG.standard_normal((filters, channels // group, kh, kw)).astype(np.float32),
             "b": RNG.standard_normal(filters).astype(np.float32)}
    inputs = ["x", "w", "offset", "b" if bias else "", "mask" if mask else ""]
    node = helper.make_node("DeformConv", inputs, ["y"], **attrs)
    _check(_model([node], feeds, opset=19, inits=inits), feeds)
