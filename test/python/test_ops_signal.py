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


def test_dft_along_the_component_dim_is_an_error() -> None:
    x = np.zeros((2, 4, 1), np.float32)
    model = _model(helper.make_node("DFT", ["x"], ["y"], name="d", axis=2), x, 19, {})
    with pytest.raises(ModelError, match=r"node 'd' \(DFT\): axis 2 must name a signal dim of the input 2x4x1, not "
                                         r"its last one"):
        glow_mlir.compile(model, cache=False)
