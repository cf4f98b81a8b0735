"""DFT and STFT (importer/handlers/signal.py) against numpy's FFT in float64: forward and inverse, real and complex
signals, one-sided spectra and irfft, every axis, dft_length cutting or padding the signal; STFT with and without a
window. Tolerance: float32 rounding of a sum over the signal, relative to the output's largest magnitude."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir
from glow_mlir.errors import ModelError

RNG = np.random.default_rng(31)


def _model(node: onnx.NodeProto, x: np.ndarray, opset: int, inits: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph([node], "signal", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6 * max(1.0, float(np.abs(want).max())))


def _as_parts(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1).astype(np.float32)


@pytest.mark.parametrize(("opset", "axis"), [(17, 1), (17, 2), (20, -2), (20, 1)])
@pytest.mark.parametrize("complex_input", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("length", [None, 6, 13], ids=["whole", "cut", "padded"])
def test_dft_forward_and_inverse(opset: int, axis: int, complex_input: bool, length: int | None) -> None:
    x = RNG.standard_normal((2, 9, 10, 2 if complex_input else 1)).astype(np.float32)
    z = x[..., 0] + (1j * x[..., 1] if complex_input else 0)
    signal_axis = axis % 4
    for inverse in (0, 1):
        inputs, inits = ["x"], {}
        if length is not None:
            inputs.append("n")
            inits["n"] = np.array(length, np.int64)
        if opset >= 20:
            inputs += [""] * (2 - len(inputs)) + ["axis"]
            inits["axis"] = np.array(axis, np.int64)
            attrs = {"inverse": inverse}
        else:
            attrs = {"inverse": inverse, "axis": axis}
        model = _model(helper.make_node("DFT", inputs, ["y"], **attrs), x, opset, inits)
        got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x})["y"]
        fn = np.fft.ifft if inverse else np.fft.fft
        _close(got, _as_parts(fn(z.astype(np.complex128), n=length, axis=signal_axis)))


@pytest.mark.parametrize("length", [None, 10, 11, 7])
def test_rfft_and_irfft(length: int | None) -> None:
    x = RNG.standard_normal((3, 10, 1)).astype(np.float32)
    inits = {} if length is None else {"n": np.array(length, np.int64)}
    inputs = ["x"] if length is None else ["x", "n"]
    model = _model(helper.make_node("DFT", inputs, ["y"], onesided=1, axis=1), x, 19, inits)
    spectrum = glow_mlir.compile(model, threads=1, cache=False).run({"x": x})["y"]
    _close(spectrum, _as_parts(np.fft.rfft(x[..., 0].astype(np.float64), n=length, axis=1)))
    # back: the one-sided spectrum to the real signal of the given (or the default even) length
    model = _model(helper.make_node("DFT", inputs, ["y"], onesided=1, inverse=1, axis=1), spectrum, 19, inits)
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": spectrum})["y"]
    z = spectrum[..., 0] + 1j * spectrum[..., 1]
    _close(got, np.fft.irfft(z.astype(np.complex128), n=length, axis=1)[..., None].astype(np.float32))


@pytest.mark.parametrize(("window", "onesided", "components"), [(False, 1, 1), (True, 1, 1), (True, 0, 2)])
def test_stft_matches_onnx_reference(window: bool, onesided: int, components: int) -> None:
    x = RNG.standard_normal((2, 64, components)).astype(np.float32)
    inits = {"step": np.array(7, np.int64)}
    if window:
        inits["window"] = np.hanning(16).astype(np.float32)
        inputs = ["x", "step", "window"]
    else:
        inits["length"] = np.array(16, np.int64)
        inputs = ["x", "step", "", "length"]
    model = _model(helper.make_node("STFT", inputs, ["y"], onesided=onesided), x, 17, inits)
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x})["y"]
    _close(got, ReferenceEvaluator(model).run(None, {"x": x})[0])


def test_stft_without_onesided_is_one_sided() -> None:
    # the schema's default; ONNX's C++ shape inference reads the absent attribute as 0 (the full spectrum), which
    # the model's undeclared output shape must not take from it
    x = RNG.standard_normal((1, 64, 1)).astype(np.float32)
    inits = {"step": np.array(8, np.int64), "length": np.array(16, np.int64)}
    model = _model(helper.make_node("STFT", ["x", "step", "", "length"], ["y"]), x, 17, inits)
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x})["y"]
    assert got.shape == (1, 7, 9, 2)
    _close(got, ReferenceEvaluator(model).run(None, {"x": x})[0])
    assert not any(a.name == "onesided" for a in model.graph.node[0].attribute)  # the caller's model is untouched


def test_dft_along_the_component_dim_is_an_error() -> None:
    x = np.zeros((2, 4, 1), np.float32)
    model = _model(helper.make_node("DFT", ["x"], ["y"], name="d", axis=2), x, 19, {})
    with pytest.raises(ModelError, match=r"node 'd' \(DFT\): axis 2 must name a signal dim of the input 2x4x1, not "
                                         r"its last one"):
        glow_mlir.compile(model, cache=False)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [1, 0])
def test_window_functions_of_a_known_size(op: str, periodic: int) -> None:
    x = np.ones(10, np.float32)
    nodes = [helper.make_node(op, ["size"], ["w"], periodic=periodic), helper.make_node("Mul", ["x", "w"], ["y"])]
    graph = helper.make_graph(nodes, "window", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array(10, np.int64), "size")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    got = glow_mlir.compile(model, cache=False).run({"x": x})["y"]
    np.testing.assert_allclose(got, ReferenceEvaluator(model).run(None, {"x": x})[0], rtol=1e-6, atol=1e-7)


def test_a_window_of_a_run_time_size_is_unsupported() -> None:
    graph = helper.make_graph([helper.make_node("HannWindow", ["size"], ["y"], name="w")], "window",
                              [helper.make_tensor_value_info("size", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(glow_mlir.errors.NonConstantInputError, match=r"node 'w' \(HannWindow\): the #0 input 'size' "
                                                                     r"must be a constant"):
        glow_mlir.compile(model, cache=False)


def test_mel_weight_matrix_of_known_parameters() -> None:
    params = {"bins": np.array(8, np.int64), "dft": np.array(64, np.int64), "rate": np.array(16000, np.int64),
              "low": np.array(20.0, np.float32), "high": np.array(7600.0, np.float32)}
    spectrum = RNG.standard_normal((3, 33)).astype(np.float32)
    nodes = [helper.make_node("MelWeightMatrix", list(params), ["m"]), helper.make_node("MatMul", ["s", "m"], ["y"])]
    graph = helper.make_graph(nodes, "mel", [helper.make_tensor_value_info("s", TensorProto.FLOAT, [3, 33])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in params.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    got = glow_mlir.compile(model, cache=False).run({"s": spectrum})["y"]
    np.testing.assert_allclose(got, ReferenceEvaluator(model).run(None, {"s": spectrum})[0], rtol=1e-5, atol=1e-5)
