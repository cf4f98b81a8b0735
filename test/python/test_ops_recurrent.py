"""LSTM, GRU and RNN against onnx.reference (directions, layouts, biases, initial states, peepholes,
linear_before_reset, optional outputs) and against onnxruntime where the reference ignores the attribute
(activations with alpha and beta, clip, input_forget, sequence_lens); a two-layer bidirectional LSTM tagger as torch
exports it; what becomes of the recurrence; bad nodes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import GlowError

RNG = np.random.default_rng(41)
RTOL, ATOL = 1e-4, 1e-5
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
OUTPUTS = {"LSTM": ("Y", "Y_h", "Y_c"), "GRU": ("Y", "Y_h"), "RNN": ("Y", "Y_h")}


def rnn_model(op: str, steps: int = 5, batch: int = 3, inputs: int = 4, hidden: int = 6, direction: str = "forward",
              layout: int = 0, bias: bool = True, initial: bool = False, peepholes: bool = False,
              lengths: list[int] | None = None, outputs: tuple[str, ...] | None = None, weights_as_inputs=False,
              **attrs) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    d, g = (2 if direction == "bidirectional" else 1), GATES[op]
    x = RNG.standard_normal((batch, steps, inputs) if layout else (steps, batch, inputs)).astype(np.float32)
    arrays = {"W": RNG.uniform(-0.5, 0.5, (d, g * hidden, inputs)), "R": RNG.uniform(-0.5, 0.5, (d, g * hidden, hidden))}
    names = ["X", "W", "R"]
    if bias or initial or peepholes or lengths is not None:
        names.append("B" if bias else "")
        if bias:
            arrays["B"] = RNG.uniform(-0.5, 0.5, (d, 2 * g * hidden))
    if initial or peepholes or lengths is not None:
        names.append("L" if lengths is not None else "")
        if lengths is not None:
            arrays["L"] = np.array(lengths, np.int32)
    state = (batch, d, hidden) if layout else (d, batch, hidden)
    if initial or peepholes:
        names.append("H0" if initial else "")
        if initial:
            arrays["H0"] = RNG.standard_normal(state)
    if op == "LSTM" and (initial or peepholes):
        names.append("C0" if initial else "")
        if initial:
            arrays["C0"] = RNG.standard_normal(state)
        if peepholes:
            names.append("P")
            arrays["P"] = RNG.uniform(-0.5, 0.5, (d, 3 * hidden))
    arrays = {k: v if v.dtype == np.int32 else v.astype(np.float32) for k, v in arrays.items()}
    outputs = outputs or OUTPUTS[op]
    node = helper.make_node(op, names, list(outputs), hidden_size=attrs.pop("hidden_size", hidden), direction=direction,
                            **({"layout": layout} if layout else {}), **attrs)
    feeds = {"X": x}
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)]
    inits = []
    for name, value in arrays.items():
        if weights_as_inputs and name in ("W", "R"):
            graph_inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, value.shape))
            feeds[name] = value
        else:
            inits.append(numpy_helper.from_array(value, name))
    graph = helper.make_graph([node], "rnn", graph_inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs if o], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model, feeds


def reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray], engine: str) -> list[np.ndarray]:
    if engine == "onnx":
        return ReferenceEvaluator(model).run(None, feeds)
    onnxruntime = pytest.importorskip("onnxruntime", reason="onnxruntime (the `test` extra) is the reference here")
    return onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], engine: str = "onnx") -> glow.CompiledModel:
    compiled = glow.compile(model, cache=False)
    got = compiled.run(feeds)
    names = [o.name for o in model.graph.output]
    for name, want in zip(names, reference(model, feeds, engine), strict=True):
        assert got[name].shape == want.shape, (name, got[name].shape, want.shape)
        np.testing.assert_allclose(got[name], want, rtol=RTOL, atol=ATOL, err_msg=name)
    return compiled


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize(("direction", "layout"), [("forward", 0), ("reverse", 0), ("bidirectional", 0),
                                                   ("forward", 1), ("bidirectional", 1)])
def test_directions_and_layouts(op: str, direction: str, layout: int) -> None:
    check(*rnn_model(op, direction=direction, layout=layout, initial=True))


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_defaults_without_bias_or_states(op: str) -> None:
    check(*rnn_model(op, bias=False))


def test_lstm_peepholes() -> None:
    check(*rnn_model("LSTM", peepholes=True, direction="bidirectional"))


@pytest.mark.parametrize("before", [0, 1])
def test_gru_linear_before_reset(before: int) -> None:
    check(*rnn_model("GRU", initial=True, linear_before_reset=before))


@pytest.mark.parametrize(("op", "outputs"), [("LSTM", ("", "Y_h")), ("LSTM", ("Y", "", "Y_c")), ("GRU", ("", "Y_h")),
                                             ("RNN", ("Y",))])
def test_optional_outputs(op: str, outputs: tuple[str, ...]) -> None:
    check(*rnn_model(op, outputs=outputs))


def test_weights_computed_at_run_time() -> None:
    check(*rnn_model("GRU", weights_as_inputs=True, direction="bidirectional"))


@pytest.mark.parametrize(("op", "activations", "alpha", "beta"), [
    ("LSTM", ["HardSigmoid", "LeakyRelu", "Softsign"], [0.3, 0.2], [0.4]),
    ("GRU", ["Sigmoid", "Relu", "HardSigmoid", "Tanh"], [0.25], [0.45]),
    ("RNN", ["Affine"], [0.7], [0.1]),
    ("RNN", ["ScaledTanh"], [1.2], [0.8]),
])
def test_activations_with_alpha_and_beta(op: str, activations: list[str], alpha: list[float], beta: list[float]) -> None:
    direction = "bidirectional" if len(activations) == 2 * {"LSTM": 3, "GRU": 2, "RNN": 1}[op] else "forward"
    check(*rnn_model(op, direction=direction, activations=activations, activation_alpha=alpha,
                     activation_beta=beta), engine="onnxruntime")


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_clip(op: str) -> None:
    check(*rnn_model(op, clip=0.4, initial=True), engine="onnxruntime")


def test_lstm_input_forget() -> None:
    check(*rnn_model("LSTM", input_forget=1), engine="onnxruntime")


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_shorter_sequences_forward(op: str) -> None:
    # past a sequence's end: its Y rows are 0 and Y_h / Y_c keep the state of its last step
    check(*rnn_model(op, lengths=[5, 2, 4], initial=True), engine="onnxruntime")


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["reverse", "bidirectional"])
def test_shorter_sequences_in_reverse(op: str, direction: str) -> None:
    # a reverse pass over a shorter sequence starts at its last step: the steps past its end come first and leave
    # the initial state as it is, their Y rows 0
    check(*rnn_model(op, direction=direction, lengths=[5, 2, 4], initial=True), engine="onnxruntime")


def test_bidirectional_two_layer_lstm_tagger_as_torch_exports_it() -> None:
    # torch.nn.LSTM(16, 12, num_layers=2, bidirectional=True) exports one LSTM node per layer, Y [T, 2, B, H]
    # transposed and reshaped to [T, B, 2H] between them, only the last layer's Y used
    steps, batch, inputs, hidden = 7, 2, 16, 12
    x = RNG.standard_normal((steps, batch, inputs)).astype(np.float32)
    inits, nodes, prev, width = [], [], "X", inputs
    for layer in range(2):
        w = RNG.uniform(-0.3, 0.3, (2, 4 * hidden, width)).astype(np.float32)
        r = RNG.uniform(-0.3, 0.3, (2, 4 * hidden, hidden)).astype(np.float32)
        b = RNG.uniform(-0.3, 0.3, (2, 8 * hidden)).astype(np.float32)
        inits += [numpy_helper.from_array(v, f"{n}{layer}") for n, v in (("W", w), ("R", r), ("B", b))]
        nodes.append(helper.make_node("LSTM", [prev, f"W{layer}", f"R{layer}", f"B{layer}"], [f"Y{layer}", "", ""],
                                      hidden_size=hidden, direction="bidirectional"))
        nodes.append(helper.make_node("Transpose", [f"Y{layer}"], [f"T{layer}"], perm=[0, 2, 1, 3]))
        nodes.append(helper.make_node("Reshape", [f"T{layer}", "shape"], [f"out{layer}"]))
        prev, width = f"out{layer}", 2 * hidden
    inits.append(numpy_helper.from_array(np.array([steps, batch, 2 * hidden], np.int64), "shape"))
    graph = helper.make_graph(nodes, "tagger", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("out1", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    compiled = check(model, {"X": x}, engine="onnxruntime")
    # the input projection of each direction is one fully_connected over every step
    assert compiled.stage("import").text.count('"glowgraph.fully_connected"') == 4


def test_gru_encoder_as_torch_exports_it() -> None:
    # torch.nn.GRU(16, 12, batch_first=True) exports a GRU node with linear_before_reset = 1 and the given h0,
    # its X transposed to time-major before it, Y squeezed on the directions axis and transposed back after it
    steps, batch, inputs, hidden = 20, 3, 16, 12
    x = RNG.standard_normal((batch, steps, inputs)).astype(np.float32)
    h0 = RNG.standard_normal((1, batch, hidden)).astype(np.float32)
    inits = [numpy_helper.from_array(RNG.uniform(-0.3, 0.3, shape).astype(np.float32), name) for name, shape in
             (("W", (1, 3 * hidden, inputs)), ("R", (1, 3 * hidden, hidden)), ("B", (1, 6 * hidden)))]
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "axes"))
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0, 2]),
             helper.make_node("GRU", ["xt", "W", "R", "B", "", "h0"], ["Y", "h"], hidden_size=hidden,
                              linear_before_reset=1),
             helper.make_node("Squeeze", ["Y", "axes"], ["ys"]),
             helper.make_node("Transpose", ["ys"], ["y"], perm=[1, 0, 2])]
    graph = helper.make_graph(nodes, "encoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
                                                 helper.make_tensor_value_info("h0", TensorProto.FLOAT, h0.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("h", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    compiled = check(model, {"x": x, "h0": h0}, engine="onnxruntime")
    assert compiled.stage("iropt").text.count('"glowir.loop"') == 1


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"direction": "sideways"}, "attribute 'direction' must be forward, reverse or bidirectional"),
    ({"activations": ["Tanh"]}, "attribute 'activations' must name 3 functions"),
    ({"activations": ["Sigmoid", "Tanh", "Gelu"]}, "activation 'Gelu' is not supported"),
    ({"clip": -1.0}, "attribute 'clip' must be positive"),
    ({"hidden_size": 5}, r"W must have shape 1x20x4 \(directions x 4 gates x hidden_size, ...\), got 1x24x4"),
])
def test_bad_nodes_are_one_line_errors(kwargs: dict, message: str) -> None:
    model, _ = rnn_model("LSTM", **kwargs)
    with pytest.raises(GlowError, match=message):
        glow.compile(model, cache=False)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_the_recurrence_is_one_loop_whatever_the_sequence_length(op: str) -> None:
    # the graph and the program hold one body per direction, whatever the number of steps: code and compile time
    # stay flat (12 and 96 steps give the same program but for the loop's trip count and the sequence's shapes)
    texts = []
    for steps in (12, 96):
        m, feeds = rnn_model(op, steps=steps, direction="bidirectional")
        compiled = glow.compile(m, cache=False)
        ref = ReferenceEvaluator(m).run(None, feeds)
        for name, want in zip(OUTPUTS[op], ref, strict=False):
            np.testing.assert_allclose(compiled.run(feeds)[name], want, rtol=RTOL, atol=ATOL, err_msg=name)
        program = compiled.stage("iropt").text
        assert program.count('"glowir.loop"') == 2 and f"max_trip = {steps} : i64" in program
        texts.append(program)
    count = [sum(1 for line in t.splitlines() if '"glowir.' in line) for t in texts]
    assert count[0] == count[1], count
