"""Attention (opsets 23-25) against onnx.reference: 4-D and 3-D inputs, grouped-query heads, past keys and values,
boolean and float masks (shorter than the keys: padded), causal masking with an offset, softcap, the
qk_matmul_output modes, sliding windows and per-batch valid key lengths given at run time; bad inputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import ModelError

RNG = np.random.default_rng(23)
F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
DTYPES = {F32: np.float32, I64: np.int64, BOOL: np.bool_}


def attention(inputs: dict[str, tuple[int, list[int]]], outputs: list[str], opset: int = 23,
              lengths: list[int] | None = None, **attrs):
    """A one-node Attention model and random feeds for its inputs (named as the schema names them; ``lengths``
    feeds nonpad_kv_seqlen)."""
    names = ["Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"]
    used = [n if n in inputs else "" for n in names]
    while used and not used[-1]:
        used.pop()
    node = helper.make_node("Attention", used, outputs, **attrs)
    graph = helper.make_graph([node], "attention",
                              [helper.make_tensor_value_info(n, e, s) for n, (e, s) in inputs.items()],
                              [helper.make_tensor_value_info(o, F32, None) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    feeds = {}
    for n, (e, s) in inputs.items():
        if e == BOOL:
            feeds[n] = RNG.random(s) > 0.3
        elif e == I64:
            feeds[n] = np.asarray(lengths, np.int64)
        else:
            feeds[n] = RNG.standard_normal(s).astype(np.float32)
    return model, feeds


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    got = glow.compile(model, cache=False).run(feeds)
    for out, want in zip(model.graph.output, ReferenceEvaluator(model).run(None, feeds), strict=True):
        np.testing.assert_allclose(got[out.name], want, rtol=1e-5, atol=1e-6, err_msg=out.name)


def test_4d_with_a_float_mask_and_every_output() -> None:
    check(*attention({"Q": (F32, [2, 3, 4, 8]), "K": (F32, [2, 3, 6, 8]), "V": (F32, [2, 3, 6, 5]),
                      "attn_mask": (F32, [4, 6])}, ["Y", "present_key", "present_value", "qk"], scale=0.3))


def test_3d_grouped_query_heads_with_a_short_boolean_mask() -> None:
    # 6 query heads share 2 K/V heads; the mask covers 5 of the 7 keys: the other two are masked
    check(*attention({"Q": (F32, [2, 4, 6 * 4]), "K": (F32, [2, 7, 2 * 4]), "V": (F32, [2, 7, 2 * 3]),
                      "attn_mask": (BOOL, [2, 1, 4, 5])}, ["Y"], q_num_heads=6, kv_num_heads=2))


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_causal_with_past_keys_softcap_and_the_qk_output_modes(mode: int) -> None:
    check(*attention({"Q": (F32, [1, 2, 3, 4]), "K": (F32, [1, 2, 3, 4]), "V": (F32, [1, 2, 3, 4]),
                      "past_key": (F32, [1, 2, 5, 4]), "past_value": (F32, [1, 2, 5, 4])},
                     ["Y", "present_key", "present_value", "qk"], is_causal=1, softcap=2.5,
                     qk_matmul_output_mode=mode))


def test_a_fully_masked_query_attends_to_nothing() -> None:
    model, feeds = attention({"Q": (F32, [1, 1, 3, 4]), "K": (F32, [1, 1, 5, 4]), "V": (F32, [1, 1, 5, 4]),
                              "attn_mask": (BOOL, [3, 5])}, ["Y"])
    feeds["attn_mask"][1] = False  # query 1: every key masked, Y = 0 (not NaN)
    check(model, feeds)


def test_sliding_window_and_valid_key_lengths_given_at_run_time() -> None:
    # opset 25: keys more than 2 before or 1 after the query's position are masked, and so are the keys past each
    # batch's length (an input: the masks are computed at run time)
    check(*attention({"Q": (F32, [3, 2, 2, 4]), "K": (F32, [3, 2, 6, 4]), "V": (F32, [3, 2, 6, 4]),
                      "nonpad_kv_seqlen": (I64, [3])}, ["Y"], opset=25, is_causal=1, left_window_size=2,
                     right_window_size=1, lengths=[6, 4, 3]))


def test_inputs_of_mixed_ranks_are_a_model_error() -> None:
    model, _ = attention({"Q": (F32, [1, 2, 3, 4]), "K": (F32, [1, 3, 8]), "V": (F32, [1, 3, 8])}, ["Y"])
    with pytest.raises(ModelError, match=r"node 'Attention#0' \(Attention\): Q, K and V must all be 3-D or all 4-D"):
        glow.compile(model, cache=False)


@pytest.mark.parametrize(("shape", "attrs", "positions"), [
    ([2, 3, 5, 8], {}, True),
    ([2, 5, 3 * 8], {"num_heads": 3, "interleaved": 1}, True),
    ([2, 3, 5, 8], {"rotary_embedding_dim": 4, "interleaved": 1}, False),
])
def test_rotary_embedding(shape: list[int], attrs: dict, positions: bool) -> None:
    batch, seq = shape[0], (shape[2] if len(shape) == 4 else shape[1])
    half = attrs.get("rotary_embedding_dim", 8) // 2
    cache_shape = [16, half] if positions else [batch, seq, half]
    inputs = [helper.make_tensor_value_info("x", F32, shape), helper.make_tensor_value_info("cos", F32, cache_shape),
              helper.make_tensor_value_info("sin", F32, cache_shape)]
    feeds = {"x": RNG.standard_normal(shape).astype(np.float32),
             "cos": np.cos(RNG.uniform(0, 3, cache_shape)).astype(np.float32),
             "sin": np.sin(RNG.uniform(0, 3, cache_shape)).astype(np.float32)}
    if positions:
        inputs.append(helper.make_tensor_value_info("pos", I64, [batch, seq]))
        feeds["pos"] = RNG.integers(0, 16, [batch, seq]).astype(np.int64)
    node = helper.make_node("RotaryEmbedding", [i.name for i in inputs], ["y"], **attrs)
    graph = helper.make_graph([node], "rope", inputs, [helper.make_tensor_value_info("y", F32, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    check(model, feeds)


# --------------------------------------------------------------------------- LinearAttention


@pytest.mark.parametrize(("rule", "t", "heads", "decay_last", "beta_last", "past", "scale"), [
    ("linear", 3, (2, 2), None, None, False, None),
    ("gated", 6, (2, 2), "dim", None, True, None),  # 6 tokens: a loop in the graph
    ("gated", 2, (2, 2), "head", None, False, 0.5),
    ("delta", 5, (2, 2), None, "head", True, None),
    ("gated_delta", 7, (4, 2), "head", "one", True, None),  # grouped query heads, a loop
    ("gated_delta", 1, (4, 1), "dim", "head", True, None),  # a decode step, one KV head
], ids=["linear", "gated-loop", "gated-per-head", "delta-loop", "gated-delta-gqa-loop", "decode-mqa"])
def test_linear_attention(rule: str, t: int, heads: tuple[int, int], decay_last: str | None, beta_last: str | None,
                          past: bool, scale: float | None) -> None:
    (hq, hkv), b, dk, dv = heads, 2, 4, 3
    feeds = {"q": RNG.standard_normal((b, t, hq * dk)).astype(np.float32),
             "k": (RNG.standard_normal((b, t, hkv * dk)) * 0.5).astype(np.float32),
             "v": RNG.standard_normal((b, t, hkv * dv)).astype(np.float32)}
    names = ["q", "k", "v", "", "", ""]
    if past:
        feeds["past"], names[3] = RNG.standard_normal((b, hkv, dk, dv)).astype(np.float32), "past"
    if decay_last:
        width = hkv if decay_last == "head" else hkv * dk
        feeds["g"], names[4] = (-RNG.uniform(0.05, 0.5, (b, t, width))).astype(np.float32), "g"
    if beta_last:
        width = hkv if beta_last == "head" else 1
        feeds["beta"], names[5] = RNG.uniform(0.1, 0.9, (b, t, width)).astype(np.float32), "beta"
    while names[-1] == "":
        names.pop()
    attrs = {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": rule} | ({"scale": scale} if scale else {})
    graph = helper.make_graph([helper.make_node("LinearAttention", names, ["y", "state"], **attrs)], "la",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, x.shape) for n, x in feeds.items()],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "state")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])
    compiled = glow.compile(model, cache=False)
    assert ("scf.for" in compiled.stage("import").text) == (t > 4)  # a loop beyond a few tokens, one body
    got = compiled.run(feeds)
    for name, want in zip(("y", "state"), ReferenceEvaluator(model).run(None, feeds), strict=True):
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-5, err_msg=name)


def test_linear_attention_rule_and_inputs_must_agree() -> None:
    feeds = {n: np.zeros((1, 2, 8), np.float32) for n in ("q", "k", "v")}
    graph = helper.make_graph([helper.make_node("LinearAttention", ["q", "k", "v"], ["y"], name="la", q_num_heads=2,
                                                kv_num_heads=2)], "la",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2, 8]) for n in feeds],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])
    with pytest.raises(ModelError, match=r"node 'la' \(LinearAttention\): update rule 'gated_delta' takes decay and "
                                         r"takes beta"):
        glow.compile(model, cache=False)


# --------------------------------------------------------------------------- FlexAttention (ai.onnx.preview)


def flex_model(q: list[int], k: list[int], v: list[int], **attrs) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A one-node FlexAttention model (ai.onnx.preview 1) and random feeds."""
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview", **attrs)
    shapes = {"Q": q, "K": k, "V": v}
    graph = helper.make_graph([node], "flex", [helper.make_tensor_value_info(n, F32, s) for n, s in shapes.items()],
                              [helper.make_tensor_value_info("Y", F32, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26),
                                                    helper.make_opsetid("ai.onnx.preview", 1)])
    model.ir_version = 10
    return model, {n: RNG.standard_normal(s).astype(np.float32) for n, s in shapes.items()}


def causal_mask() -> onnx.GraphProto:
    """score_mod: -inf above the diagonal, from the scores' own shape (Shape, Gather and Range on it)."""
    ints = {"zero": 0, "one": 1, "two": 2, "three": 3}
    inits = [helper.make_tensor(n, I64, [], [v]) for n, v in ints.items()]
    inits += [helper.make_tensor("q_shape", I64, [4], [1, 1, -1, 1]), helper.make_tensor("k_shape", I64, [4],
                                                                                         [1, 1, 1, -1]),
              helper.make_tensor("neg_inf", F32, [], [-np.inf])]
    nodes = [helper.make_node("Shape", ["s"], ["shape"]),
             helper.make_node("Gather", ["shape", "two"], ["L"], axis=0),
             helper.make_node("Gather", ["shape", "three"], ["S"], axis=0),
             helper.make_node("Range", ["zero", "L", "one"], ["qr"]),
             helper.make_node("Reshape", ["qr", "q_shape"], ["qi"]),
             helper.make_node("Range", ["zero", "S", "one"], ["kr"]),
             helper.make_node("Reshape", ["kr", "k_shape"], ["ki"]),
             helper.make_node("GreaterOrEqual", ["qi", "ki"], ["keep"]),
             helper.make_node("Where", ["keep", "s", "neg_inf"], ["out"])]
    return helper.make_graph(nodes, "causal", [helper.make_tensor_value_info("s", F32, None)],
                             [helper.make_tensor_value_info("out", F32, None)], inits)


def scaled_by(name: str, factor: float) -> onnx.GraphProto:
    """A modifier subgraph multiplying its input by an outer-scope-free constant."""
    return helper.make_graph([helper.make_node("Mul", ["p", "f"], ["out"])], name,
                             [helper.make_tensor_value_info("p", F32, None)],
                             [helper.make_tensor_value_info("out", F32, None)],
                             [helper.make_tensor("f", F32, [], [factor])])


@pytest.mark.parametrize("heads, attrs", [
    ((4, 4), {}),
    ((8, 2), {"scale": 0.2}),  # grouped-query: 4 query heads per K/V head
    ((4, 2), {"score_mod": causal_mask(), "prob_mod": scaled_by("half", 0.5)}),
])
def test_flex_attention(heads: tuple[int, int], attrs: dict) -> None:
    hq, hk = heads
    check(*flex_model([2, hq, 5, 8], [2, hk, 5, 8], [2, hk, 5, 6], **attrs))


def test_flex_attention_modifiers_must_keep_their_input_type() -> None:
    widen = helper.make_graph([helper.make_node("Concat", ["p", "p"], ["out"], axis=3)], "widen",
                              [helper.make_tensor_value_info("p", F32, None)],
                              [helper.make_tensor_value_info("out", F32, None)])
    model, _ = flex_model([1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4], score_mod=widen)
    with pytest.raises(ModelError, match=r"^flex: node 'FlexAttention#0' \(FlexAttention\): score_mod must keep its "
                                         r"input's shape and type: 1x2x3x3 float32 in, 1x2x3x6 float32 out$"):
        glow.compile(model, cache=False)
