"""Resize and Upsample against onnx.reference: every mode, coordinate transformation and nearest rounding, scales
and sizes, axes, antialias, exclude_outside, tf_crop_and_resize; the graph each common form becomes; bad inputs."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import GlowError, UnsupportedError
from glow_mlir.importer.handlers.resize import COORDINATE_MODES

RNG = np.random.default_rng(23)
RTOL, ATOL = 1e-5, 1e-5
_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}


def resize_model(x: np.ndarray, opset: int = 19, roi=None, scales=None, sizes=None, op: str = "Resize",
                 **attrs) -> onnx.ModelProto:
    inits, names = [], ["x"]
    if op == "Resize" and opset >= 11:
        for name, value, dtype in (("roi", roi, np.float32), ("scales", scales, np.float32),
                                   ("sizes", sizes, np.int64)):
            if value is None:
                names.append("")
                continue
            names.append(name)
            inits.append(numpy_helper.from_array(np.array(value, dtype), name))
        while names[-1] == "":
            names.pop()
    elif scales is not None:  # Resize-10 and Upsample-9: X, scales
        names.append("scales")
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", _TYPES[x.dtype], x.shape)],
                              [helper.make_tensor_value_info("y", _TYPES[x.dtype], None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(model: onnx.ModelProto, x: np.ndarray) -> glow.CompiledModel:
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    compiled = glow.compile(model, cache=False)
    got = compiled.run({"x": x})["y"]
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    return compiled


def image(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def ops(compiled: glow.CompiledModel) -> list[str]:
    return re.findall(r'"glowgraph\.(\w+)"', compiled.stage("import").text)


@pytest.mark.parametrize("coordinates", [m for m in COORDINATE_MODES if m not in ("tf_crop_and_resize",
                                                                                "tf_half_pixel_for_nn")])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize(("scales", "sizes"), [([1, 1, 2.0, 1.5], None), ([1, 1, 0.6, 0.8], None),
                                               (None, [1, 2, 7, 3])])
def test_every_mode_and_coordinate_transformation(mode: str, coordinates: str, scales, sizes) -> None:
    x = image(1, 2, 4, 5)
    check(resize_model(x, scales=scales, sizes=sizes, mode=mode, coordinate_transformation_mode=coordinates), x)


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("coordinates", ["half_pixel", "asymmetric", "align_corners"])
def test_nearest_rounding(nearest_mode: str, coordinates: str) -> None:
    x = image(1, 1, 5, 6)
    check(resize_model(x, sizes=[1, 1, 8, 4], mode="nearest", nearest_mode=nearest_mode,
                       coordinate_transformation_mode=coordinates), x)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_antialiased_downsampling(mode: str) -> None:
    x = image(1, 1, 16, 12)
    check(resize_model(x, scales=[1, 1, 0.4, 0.6], mode=mode, antialias=1), x)


def test_cubic_options_and_axes() -> None:
    x = image(2, 3, 6, 5)
    check(resize_model(x, scales=[1.5, 2.0], mode="cubic", axes=[2, 3], cubic_coeff_a=-0.5, exclude_outside=1), x)
    check(resize_model(x, sizes=[9, 7], mode="linear", axes=[3, 2], keep_aspect_ratio_policy="not_larger"), x)
    check(resize_model(x, sizes=[9, 7], mode="nearest", axes=[2, 3], keep_aspect_ratio_policy="not_smaller"), x)


def test_tf_half_pixel_for_nn_before_opset_18() -> None:
    # source = (y + 0.5) / scale; onnx.reference no longer has the mode (removed from Resize-18): onnxruntime's result
    onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime (the `test` extra) is the reference here")
    x = image(1, 1, 5, 7)
    model = resize_model(x, opset=13, sizes=[1, 1, 8, 4], mode="nearest",
                         coordinate_transformation_mode="tf_half_pixel_for_nn")
    want = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]
    np.testing.assert_array_equal(glow.compile(model, cache=False).run({"x": x})["y"], want)
    with pytest.raises(GlowError, match="tf_half_pixel_for_nn.*removed at opset 18"):
        glow.compile(resize_model(x, opset=18, sizes=[1, 1, 8, 4], coordinate_transformation_mode="tf_half_pixel_for_nn"),
                     cache=False)


def test_tf_crop_and_resize_extrapolates() -> None:
    x = image(1, 1, 6, 6)
    check(resize_model(x, roi=[0, 0, -0.2, 0.3, 1, 1, 0.7, 1.4], sizes=[1, 1, 5, 4], mode="linear",
                       coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.5), x)


def test_integer_upsampling_is_a_broadcast_not_a_gather() -> None:
    # YOLO's and FPNs' nearest x2 upsampling: each element repeated, as reshape + broadcast + reshape
    x = image(1, 8, 5, 7)
    compiled = check(resize_model(x, scales=[1, 1, 2, 2], mode="nearest", coordinate_transformation_mode="asymmetric",
                                  nearest_mode="floor"), x)
    assert "gather" not in ops(compiled) and "broadcast" in ops(compiled)


def test_integer_downsampling_is_a_strided_slice() -> None:
    x = image(1, 2, 8, 8)
    compiled = check(resize_model(x, scales=[1, 1, 0.5, 0.5], mode="nearest", coordinate_transformation_mode="asymmetric"),
                     x)
    assert "gather" not in ops(compiled) and "slice" in ops(compiled)


def test_nearest_on_integers() -> None:
    x = RNG.integers(-100, 100, (1, 1, 3, 4)).astype(np.int64)
    check(resize_model(x, sizes=[1, 1, 5, 7], mode="nearest"), x)


@pytest.mark.parametrize(("op", "opset", "mode"), [("Resize", 10, "nearest"), ("Resize", 10, "linear"),
                                                   ("Upsample", 9, "nearest"), ("Upsample", 9, "linear")])
def test_resize_10_and_upsample(op: str, opset: int, mode: str) -> None:
    x = image(1, 2, 3, 4)
    model = resize_model(x, opset=opset, scales=[1, 1, 2, 3], op=op, mode=mode)
    if mode == "nearest":  # integer scales: each element repeated (onnx.reference reads Resize-10's scales as roi)
        got = glow.compile(model, cache=False).run({"x": x})["y"]
        np.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(3, axis=3))
    else:  # onnx.reference implements nearest integer scales only for these: the spec's asymmetric bilinear
        got = glow.compile(model, cache=False).run({"x": x})["y"]
        want = ReferenceEvaluator(resize_model(x, scales=[1, 1, 2, 3], mode="linear",
                                               coordinate_transformation_mode="asymmetric")).run(None, {"x": x})[0]
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_upsample_7_scales_attribute() -> None:
    x = image(1, 1, 3, 3)
    graph = helper.make_graph([helper.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=[1.0, 1.0, 2.0, 2.0])],
                              "up", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)])
    got = glow.compile(model, cache=False).run({"x": x})["y"]
    np.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(2, axis=3))


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"scales": [1, 1, 2, 2], "sizes": [1, 1, 4, 4]}, GlowError, "give scales or sizes, not both"),
    ({"scales": [2, 2]}, GlowError, "must hold one value per axis"),
    ({"scales": [1, 1, -2, 2]}, GlowError, "must be positive"),
    ({"sizes": [1, 1, 4, 4], "mode": "area"}, GlowError, "attribute 'mode' must be one of nearest, linear, cubic"),
    ({"sizes": [1, 1, 4, 4], "coordinate_transformation_mode": "tf_crop_and_resize"}, GlowError, "needs the roi"),
])
def test_bad_resizes_are_one_line_errors(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        glow.compile(resize_model(image(1, 1, 2, 2), **kwargs), cache=False)


def test_linear_resize_of_integers_is_unsupported() -> None:
    x = np.zeros((1, 1, 2, 2), np.int64)
    with pytest.raises(UnsupportedError, match="int64"):
        glow.compile(resize_model(x, scales=[1, 1, 2, 2], mode="linear"), cache=False)


def test_scales_computed_at_run_time_are_named() -> None:
    x = image(1, 1, 2, 2)
    node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")
    graph = helper.make_graph([node], "r", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                                            helper.make_tensor_value_info("s", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(GlowError, match="scales input 's' must be a constant"):
        glow.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), cache=False)
