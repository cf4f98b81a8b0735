"""The graph optimizer end to end: small ONNX models built here, each holding the pattern one rewrite targets,
compiled with ``glow_mlir.api.compile`` (full pipeline) and compared with ``onnx.reference`` (rtol 1e-4, atol 1e-5);
each test also checks in the optimized graph that the rewrite happened, so a pattern that stops matching fails here
and not only in its lit test."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from conftest import run_tool
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow

RTOL, ATOL = 1e-4, 1e-5
F32 = TensorProto.FLOAT
RNG = np.random.default_rng(11)


def rand(*shape: int, positive: bool = False) -> np.ndarray:
    x = RNG.standard_normal(shape).astype(np.float32)
    return np.abs(x) + 0.5 if positive else x


def model(nodes: list[onnx.NodeProto], inputs: dict[str, Sequence[int]], outputs: dict[str, Sequence[int]],
          weights: dict[str, np.ndarray], opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "graph_optimizer",
        [helper.make_tensor_value_info(n, F32, list(s)) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, F32, list(s)) for n, s in outputs.items()],
        [numpy_helper.from_array(v, n) for n, v in weights.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    return m


def check(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> str:
    """Compile ``m``, compare every output with onnx.reference, and return the optimized graph's text."""
    compiled = glow.compile(m)
    got = compiled.run(feeds)
    names = [o.name for o in m.graph.output]
    want = dict(zip(names, ReferenceEvaluator(m).run(None, feeds)))
    for name in names:
        np.testing.assert_allclose(got[name], want[name], rtol=RTOL, atol=ATOL, err_msg=name)
    return compiled.stage("optimize").text


def count(text: str, kind: str) -> int:
    return text.count(f'"glowgraph.{kind}"')


def test_conv_batch_norm_relu_fold_into_one_conv():
    c, f = 3, 4
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "t", "m", "v"], ["n"], epsilon=1e-3),
             helper.make_node("Relu", ["n"], ["y"])]
    weights = {"w": rand(f, c, 3, 3), "b": rand(f), "s": rand(f), "t": rand(f), "m": rand(f),
               "v": rand(f, positive=True)}
    text = check(model(nodes, {"x": [1, c, 6, 5]}, {"y": [1, f, 6, 5]}, weights), {"x": rand(1, c, 6, 5)})
    assert count(text, "batch_norm") == 0 and count(text, "relu") == 0
    assert 'activation = "relu"' in text


def test_pad_merges_into_conv():
    nodes = [helper.make_node("Pad", ["x", "p"], ["xp"]), helper.make_node("Conv", ["xp", "w"], ["y"])]
    weights = {"p": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "w": rand(2, 3, 3, 3)}
    text = check(model(nodes, {"x": [1, 3, 5, 5]}, {"y": [1, 2, 6, 6]}, weights), {"x": rand(1, 3, 5, 5)})
    assert count(text, "pad") == 0
    assert "pads = array<i64: 1, 2, 2, 1>" in text


def test_channel_scale_and_shift_fold_into_conv():
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"]),
             helper.make_node("Mul", ["c", "k"], ["m"]), helper.make_node("Add", ["m", "d"], ["y"])]
    weights = {"w": rand(4, 2, 1, 1), "b": rand(4), "k": rand(1, 4, 1, 1), "d": rand(4, 1, 1)}
    text = check(model(nodes, {"x": [2, 2, 3, 3]}, {"y": [2, 4, 3, 3]}, weights), {"x": rand(2, 2, 3, 3)})
    assert count(text, "mul") == 0 and count(text, "add") == 0


def test_matmul_bias_relu_is_one_fully_connected():
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"]), helper.make_node("Add", ["p", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    weights = {"w": rand(8, 5), "b": rand(5)}
    text = check(model(nodes, {"x": [2, 3, 8]}, {"y": [2, 3, 5]}, weights), {"x": rand(2, 3, 8)})
    assert count(text, "fully_connected") == 1
    assert count(text, "matmul") == 0 and count(text, "add") == 0 and count(text, "relu") == 0


def test_min_max_after_gemm_is_a_fused_clip():
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"]), helper.make_node("Min", ["g", "hi"], ["m"]),
             helper.make_node("Max", ["m", "lo"], ["y"])]
    weights = {"w": rand(4, 6), "b": rand(6), "hi": np.array(0.5, np.float32), "lo": np.array(-0.25, np.float32)}
    text = check(model(nodes, {"x": [5, 4]}, {"y": [5, 6]}, weights), {"x": rand(5, 4)})
    assert 'activation = "clip"' in text and count(text, "min") == 0 and count(text, "max") == 0


def test_spelled_out_softmax():
    nodes = [helper.make_node("Exp", ["x"], ["e"]),
             helper.make_node("ReduceSum", ["e", "axes"], ["s"], keepdims=1),
             helper.make_node("Div", ["e", "s"], ["y"])]
    text = check(model(nodes, {"x": [3, 7]}, {"y": [3, 7]}, {"axes": np.array([1], np.int64)}), {"x": rand(3, 7)})
    assert count(text, "softmax") == 1 and count(text, "exp") == 0


def test_spatial_mean_after_conv_is_an_average_pool():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("ReduceMean", ["c"], ["y"], axes=[2, 3], keepdims=0)]
    text = check(model(nodes, {"x": [2, 3, 4, 5]}, {"y": [2, 6]}, {"w": rand(6, 3, 1, 1)}, opset=13),
                 {"x": rand(2, 3, 4, 5)})
    assert count(text, "reduce_mean") == 0 and count(text, "avg_pool") == 1


def test_layer_norm_scale_and_shift_fold():
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], axis=-1),
             helper.make_node("Mul", ["n", "k"], ["m"]), helper.make_node("Add", ["m", "d"], ["y"])]
    weights = {"g": rand(6), "b": rand(6), "k": rand(6), "d": rand(1, 6)}
    text = check(model(nodes, {"x": [2, 3, 6]}, {"y": [2, 3, 6]}, weights), {"x": rand(2, 3, 6)})
    assert count(text, "layer_norm") == 1 and count(text, "mul") == 0 and count(text, "add") == 0


def test_split_then_concat_is_the_input():
    nodes = [helper.make_node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1),
             helper.make_node("Concat", ["a", "b", "c"], ["j"], axis=1), helper.make_node("Relu", ["j"], ["y"]),
             helper.make_node("Concat", ["x", "x"], ["k"], axis=0),
             helper.make_node("Slice", ["k", "starts", "ends"], ["z"])]
    weights = {"sizes": np.array([1, 2, 3], np.int64), "starts": np.array([2, 0], np.int64),
               "ends": np.array([4, 6], np.int64)}
    text = check(model(nodes, {"x": [2, 6]}, {"y": [2, 6], "z": [2, 6]}, weights), {"x": rand(2, 6)})
    assert count(text, "slice") == 0 and count(text, "concat") == 0


def test_products_of_one_input_merge():
    nodes = [helper.make_node("MatMul", ["x", f"w{i}"], [f"y{i}"]) for i in range(3)]
    weights = {f"w{i}": rand(16, 4) for i in range(3)}
    text = check(model(nodes, {"x": [8, 16]}, {f"y{i}": [8, 4] for i in range(3)}, weights), {"x": rand(8, 16)})
    assert count(text, "matmul") == 1 and count(text, "slice") == 3


def test_dropout_never_reaches_the_graph():
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Dropout", ["r"], ["d"]),
             helper.make_node("Relu", ["d"], ["y"])]
    compiled = glow.compile(model(nodes, {"x": [4]}, {"y": [4]}, {}), optimize=False)
    text = compiled.stage("import").text
    assert count(text, "relu") == 2 and "dropout" not in text.lower()


def test_glow_compile_stats_table(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("BatchNormalization", ["c", "s", "t", "m", "v"], ["y"])]
    weights = {"w": rand(2, 1, 1, 1), "s": rand(2), "t": rand(2), "m": rand(2), "v": rand(2, positive=True)}
    path = tmp_path / "conv_bn.onnx"
    onnx.save(model(nodes, {"x": [1, 1, 3, 3]}, {"y": [1, 2, 3, 3]}, weights), path)
    done = run_tool("glow-compile", "-model", str(path), "--stats")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("conv_bn: target ") and "vector registers" in lines[0]
    assert lines[2] == "| node | import | optimize | lower |"
    # the batch norm folds into the convolution; the entry transpose (1 channel) is a reshape, the exit one stays
    assert "| batch_norm | 1 | 0 | 0 |" in lines
    assert "| transpose | 4 | 1 | 1 |" in lines


def test_reversed_gather_across_a_concat():
    # python -m glow_mlir.fuzz --seed 26, graph 262: Gather of [5, -6] along a concat's axis is a reversed slice
    # (step -5) whose two elements come from different inputs; the optimizer took it for a slice of the first
    # element's input alone and failed verification
    index = helper.make_node("Constant", [], ["i"], value=numpy_helper.from_array(np.array([5, -6], np.int64)))
    nodes = [index, helper.make_node("Concat", ["x", "w"], ["c"], axis=2),
             helper.make_node("Gather", ["c", "i"], ["y"], axis=2)]
    check(model(nodes, {"x": [1, 4, 3]}, {"y": [1, 4, 2]}, {"w": rand(1, 4, 3)}), {"x": rand(1, 4, 3)})


def test_a_channel_shuffle_between_convolutions_is_one_transpose_of_each_pixel():
    # NCHW channel shuffle (reshape [N, G, C/G, H, W], swap G and C/G, reshape back) between two convolutions that run
    # NHWC: the importer's NHWC <-> NCHW transposes and the shuffle's fold into one transpose of a [G, C/G] view
    c, g = 12, 3
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], kernel_shape=[1, 1]),
             helper.make_node("Reshape", ["a", "s5"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["t", "s4"], ["s"]),
             helper.make_node("Conv", ["s", "w2"], ["y"], kernel_shape=[1, 1])]
    weights = {"w1": rand(c, 4, 1, 1), "w2": rand(8, c, 1, 1), "s5": np.array([1, g, c // g, 5, 6], np.int64),
               "s4": np.array([1, c, 5, 6], np.int64)}
    m = model(nodes, {"x": [1, 4, 5, 6]}, {"y": [1, 8, 5, 6]}, weights)
    text = check(m, {"x": rand(1, 4, 5, 6)})
    # the transposes at the graph's input and output, and the shuffle's on [pixels, G, C/G]
    assert count(text, "transpose") == 3
    assert "tensor<30x3x4xf32>) -> tensor<30x4x3xf32>" in text


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["transpose", "merge", "split"]), st.integers(0, 10**6)), min_size=2,
                max_size=6))
def test_chains_of_transposes_and_reshapes_fold_to_one_transpose(steps):
    # random chains of transposes and reshapes on [2, 6, 4, 3] that move whole factors: a reshape merges two
    # neighbouring dims or splits one where it was merged, or a dim of one factor in two; whatever the optimizer
    # makes of them computes the same permutation of the elements, with one transpose at most
    dims: list[list[int]] = [[2], [6], [4], [3]]  # each dim as the factors it is made of
    nodes, inits, name = [], {}, "x"
    for i, (kind, seed) in enumerate(steps):
        r = np.random.default_rng(seed)
        if kind == "transpose":
            perm = [int(p) for p in r.permutation(len(dims))]
            nodes.append(helper.make_node("Transpose", [name], [f"n{i}"], perm=perm))
            dims = [dims[p] for p in perm]
        else:
            if kind == "merge" and len(dims) > 1:
                at = int(r.integers(0, len(dims) - 1))
                dims = dims[:at] + [dims[at] + dims[at + 1]] + dims[at + 2:]
            else:
                cuts = [(d, k) for d, fs in enumerate(dims) for k in range(1, len(fs))]
                cuts += [(d, 0) for d, fs in enumerate(dims) if len(fs) == 1 and fs[0] in (4, 6)]
                if not cuts:
                    continue
                d, k = cuts[int(r.integers(0, len(cuts)))]
                if k:
                    dims = dims[:d] + [dims[d][:k], dims[d][k:]] + dims[d + 1:]
                else:
                    dims = dims[:d] + [[2], [dims[d][0] // 2]] + dims[d + 1:]
            inits[f"s{i}"] = np.array([int(np.prod(fs)) for fs in dims], np.int64)
            nodes.append(helper.make_node("Reshape", [name, f"s{i}"], [f"n{i}"]))
        name = f"n{i}"
    nodes.append(helper.make_node("Identity", [name], ["y"]))
    m = model(nodes, {"x": [2, 6, 4, 3]}, {"y": [int(np.prod(fs)) for fs in dims]}, inits)
    text = check(m, {"x": rand(2, 6, 4, 3)})
    assert count(text, "transpose") <= 1


def test_a_reshape_across_factors_keeps_its_transposes():
    # [3, 6] read as [2, 9] moves no whole factor: the chain is left as it is, and still computes the reference
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
             helper.make_node("Reshape", ["t", "s"], ["r"]),
             helper.make_node("Transpose", ["r"], ["y"], perm=[1, 0, 2])]
    m = model(nodes, {"x": [6, 3, 4]}, {"y": [9, 2, 4]}, {"s": np.array([2, 9, 4], np.int64)})
    text = check(m, {"x": rand(6, 3, 4)})
    assert count(text, "transpose") == 2
