"""Sequences and optionals end to end: the sequence ops (SequenceConstruct, SequenceInsert, SequenceAt,
SequenceErase, SequenceLength, ConcatFromSequence, SplitToSequence, SequenceMap), Optional and its accessors, and
sequence and optional graph inputs and outputs (lists and None in the Python API, their elements' shapes given in
``input_shapes``), compiled with ``glow_mlir.api.compile`` and compared with ``onnx.reference`` (rtol 1e-5)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import InputError, ModelError, NonConstantInputError, UnsupportedError

F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
RNG = np.random.default_rng(3)


def seq_info(name: str, elem: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_sequence_value_info(name, elem, None)


def opt_info(name: str, inner: onnx.TypeProto) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, helper.make_optional_type_proto(inner))


def tensor_info(name: str, shape, elem: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits: dict[str, np.ndarray] | None = None, opset: int = 18) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def check(m: onnx.ModelProto, feeds: dict, input_shapes: dict | None = None) -> dict:
    got = glow.compile(m, input_shapes=input_shapes).run(feeds)
    want = ReferenceEvaluator(m).run(None, feeds)
    for o, w in zip(m.graph.output, want):
        g = got[o.name]
        if isinstance(w, list):
            assert isinstance(g, list) and len(g) == len(w), o.name
            for a, b in zip(g, w):
                np.testing.assert_allclose(a, b, rtol=1e-5)
        elif w is None:
            assert g is None
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5)
    return got


def test_construct_then_concat_and_stack():
    a, b = rand(2, 3), rand(2, 3)
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
             helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=1),
             helper.make_node("ConcatFromSequence", ["s"], ["stack"], axis=-1, new_axis=1),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    got = check(model(nodes, [tensor_info("a", [2, 3]), tensor_info("b", [2, 3])],
                      [tensor_info("cat", None), tensor_info("stack", None), tensor_info("n", None, I64)]),
                {"a": a, "b": b})
    assert got["stack"].shape == (2, 3, 2) and got["n"] == 2


@pytest.mark.parametrize("split, attrs", [
    (None, {"axis": 1}), (None, {"axis": 1, "keepdims": 0}), (np.array(4, np.int64), {"axis": 1}),
    (np.array([1, 5, 4], np.int64), {"axis": -1}),
])
def test_split_to_sequence_gives_a_list(split, attrs):
    x = rand(3, 10)
    inputs = ["x"] if split is None else ["x", "split"]
    m = model([helper.make_node("SplitToSequence", inputs, ["parts"], **attrs)], [tensor_info("x", [3, 10])],
              [seq_info("parts")], None if split is None else {"split": split})
    got = check(m, {"x": x})
    assert isinstance(got["parts"], list)


def test_sequence_input_through_insert_erase_at():
    xs = [rand(2, 2), rand(2, 2), rand(2, 2)]
    t = rand(2, 2)
    nodes = [helper.make_node("SequenceInsert", ["xs", "t", "one"], ["ins"]),
             helper.make_node("SequenceErase", ["ins"], ["erased"]),
             helper.make_node("SequenceAt", ["erased", "minus_one"], ["last"])]
    m = model(nodes, [seq_info("xs"), tensor_info("t", [2, 2])],
              [seq_info("ins"), seq_info("erased"), tensor_info("last", None)],
              {"one": np.array(1, np.int64), "minus_one": np.array(-1, np.int64)})
    got = check(m, {"xs": xs, "t": t}, input_shapes={"xs": [[2, 2]] * 3})
    assert len(got["ins"]) == 4 and len(got["erased"]) == 3


def test_sequence_inputs_are_compiled_for_a_length():
    m = model([helper.make_node("ConcatFromSequence", ["xs"], ["y"], axis=0)], [seq_info("xs")],
              [tensor_info("y", None)])
    with pytest.raises(ModelError, match=r"graph input 'xs' is a sequence of tensor: give the shapes of its elements "
                                         r"in input_shapes\['xs'\]"):
        glow.compile(m)
    compiled = glow.compile(m, input_shapes={"xs": [[1, 4], [2, 4]]})
    assert [s.name for s in compiled.inputs] == ["xs[0]", "xs[1]"] and compiled.input_names == ["xs"]
    xs = [rand(1, 4), rand(2, 4)]
    np.testing.assert_array_equal(compiled(xs), np.concatenate(xs))
    with pytest.raises(InputError, match=r"input 'xs' is a sequence compiled for 2 tensors; got 3"):
        compiled.run({"xs": xs + [rand(1, 4)]})
    with pytest.raises(InputError, match=r"input 'xs\[1\]' has shape \[1, 4\], expected \[2, 4\]"):
        compiled.run({"xs": [rand(1, 4), rand(1, 4)]})


def test_sequence_map_imports_the_body_per_element():
    body = helper.make_graph([helper.make_node("Add", ["x", "t"], ["y"]), helper.make_node("Shape", ["x"], ["s"])],
                             "body", [tensor_info("x", None), tensor_info("t", None)],
                             [tensor_info("y", None), tensor_info("s", None, I64)])
    m = model([helper.make_node("SequenceMap", ["xs", "t"], ["ys", "shapes"], body=body)],
              [seq_info("xs"), tensor_info("t", [4])], [seq_info("ys"), seq_info("shapes", I64)])
    check(m, {"xs": [rand(4), rand(3, 4)], "t": rand(4)}, input_shapes={"xs": [[4], [3, 4]]})


def test_loop_carrying_a_sequence_is_unrolled():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Add", ["i", "one"], ["n"]),
         helper.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
         helper.make_node("Slice", ["x", "zero", "n1"], ["part"]),
         helper.make_node("SequenceInsert", ["seq", "part"], ["seq_out"])],
        "body", [tensor_info("i", [], I64), tensor_info("cond", [], BOOL), seq_info("seq")],
        [tensor_info("cond_out", [], BOOL), seq_info("seq_out")])
    m = model([helper.make_node("SequenceEmpty", [], ["empty"]),
               helper.make_node("Loop", ["trip", "go", "empty"], ["parts"], body=body)],
              [tensor_info("x", [5])], [seq_info("parts")],
              {"trip": np.array(5, np.int64), "go": np.array(True), "one": np.array(1, np.int64),
               "zero": np.array([0], np.int64)})
    got = check(m, {"x": rand(5)})
    assert [p.shape for p in got["parts"]] == [(1,), (2,), (3,), (4,), (5,)]


def test_if_with_a_sequence_needs_a_known_condition():
    branch = helper.make_graph([helper.make_node("SequenceConstruct", ["x"], ["s"])], "b", [], [seq_info("s")])
    m = model([helper.make_node("If", ["c"], ["out"], then_branch=branch, else_branch=branch)],
              [tensor_info("c", [], BOOL), tensor_info("x", [2])], [seq_info("out")])
    with pytest.raises(NonConstantInputError, match=r"an If giving sequence or optional values needs a condition "
                                                    r"known at compile time"):
        glow.compile(m)


@pytest.mark.parametrize("given", [True, False])
def test_optional_tensor_input_and_output(given: bool):
    inner = helper.make_tensor_type_proto(F32, [3])
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["has"]), helper.make_node("Identity", ["o"], ["same"])]
    m = model(nodes, [opt_info("o", inner)], [tensor_info("has", [], BOOL), opt_info("same", inner)])
    x = rand(3) if given else None
    compiled = glow.compile(m, input_shapes=None if given else {"o": None})
    got = compiled.run({"o": x})
    assert bool(got["has"]) is given
    if given:
        np.testing.assert_array_equal(got["same"], x)
    else:
        assert got["same"] is None
    with pytest.raises(InputError, match=r"input 'o' is an optional compiled "):
        compiled.run({"o": None if given else rand(3)})


def test_optional_get_element_of_an_optional_sequence():
    inner = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F32, None))
    m = model([helper.make_node("OptionalGetElement", ["o"], ["s"])], [opt_info("o", inner)], [seq_info("s")])
    check(m, {"o": [rand(2), rand(3)]}, input_shapes={"o": [[2], [3]]})


def test_empty_optional_get_element_is_an_error():
    inner = helper.make_tensor_type_proto(F32, [3])
    m = model([helper.make_node("OptionalGetElement", ["o"], ["x"], name="get")], [opt_info("o", inner)],
              [tensor_info("x", [3])])
    with pytest.raises(ModelError, match=r"node 'get' \(OptionalGetElement\): the optional 'o' is empty"):
        glow.compile(m, input_shapes={"o": None})


def test_a_sequence_given_to_a_tensor_op_is_unsupported():
    m = model([helper.make_node("SequenceConstruct", ["a"], ["s"]), helper.make_node("Relu", ["s"], ["y"], name="r")],
              [tensor_info("a", [2])], [tensor_info("y", [2])])
    with pytest.raises(UnsupportedError, match=r"node 'r' \(Relu\): input #0 's' is a sequence, which Relu does not "
                                               r"take"):
        glow.compile(m)


def test_a_cached_model_keeps_its_sequences(tmp_path, monkeypatch):
    monkeypatch.setenv("GLOW_CACHE_DIR", str(tmp_path))
    m = model([helper.make_node("SplitToSequence", ["x"], ["parts"], axis=0)], [tensor_info("x", [2, 3])],
              [seq_info("parts")])
    x = rand(2, 3)
    first = glow.compile(m)
    second = glow.compile(m)
    assert (first.cache, second.cache) == ("miss", "hit")
    for compiled in (first, second):
        parts = compiled.run({"x": x})["parts"]
        assert len(parts) == 2
        np.testing.assert_array_equal(parts[1], x[1:])


def test_input_shape_option_names_sequences_and_empty_optionals():
    from glow_mlir.importer.model import parse_input_shapes

    assert parse_input_shapes(["x=1x3", "xs=[1x4, 2x4]", "e=[]", "o=none"]) == {
        "x": (1, 3), "xs": [(1, 4), (2, 4)], "e": [], "o": None}
    with pytest.raises(ModelError, match=r"a sequence's elements: NAME=\[DxD,DxD\]"):
        parse_input_shapes(["xs=[1x4,]"])


def test_glow_run_feeds_a_sequence_by_its_elements(tmp_path, capsys):
    from glow_mlir.tools import glow_run

    m = model([helper.make_node("ConcatFromSequence", ["xs"], ["y"], axis=0),
               helper.make_node("SplitToSequence", ["y"], ["parts"], axis=0)],
              [seq_info("xs")], [tensor_info("y", None), seq_info("parts")])
    onnx.save(m, tmp_path / "m.onnx")
    xs = [rand(1, 2), rand(1, 2)]
    for i, x in enumerate(xs):
        np.save(tmp_path / f"x{i}.npy", x)
    assert glow_run.main(["-model", str(tmp_path / "m.onnx"), "--input-shape", "xs=[1x2,1x2]", "--input",
                          f"xs[0]={tmp_path / 'x0.npy'}", "--input", f"xs[1]={tmp_path / 'x1.npy'}",
                          "--no-cache"]) == 0
    printed = capsys.readouterr().out
    assert "y: shape ( 2 x 2 ) float32" in printed and "parts[1]: shape ( 1 x 2 ) float32" in printed


def test_a_tensor_of_another_type_cannot_join_a_sequence():
    m = model([helper.make_node("SequenceEmpty", [], ["e"], dtype=F32),
               helper.make_node("SequenceInsert", ["e", "i"], ["s"], name="ins")],
              [tensor_info("i", [2], I64)], [seq_info("s", I64)])
    with pytest.raises(ModelError, match=r"node 'ins' \(SequenceInsert\): a tensor of int64 cannot join a sequence of "
                                         r"float32"):
        glow.compile(m)
