"""The ONNX importer: the IR each supported op becomes, and a clean ModelError or
UnsupportedError for every kind of bad input. Models are built in-process with onnx.helper;
numerics are checked elsewhere (this file only checks structure)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from mlir import ir
from onnx import TensorProto, helper, numpy_helper

from glow_mlir.dialects import make_context
from glow_mlir.dialects.optable import elements_to_numpy
from glow_mlir.dialects.verifier import Diagnostic
from glow_mlir.errors import ModelError, NonConstantInputError, UnsupportedError
from glow_mlir.importer import HANDLERS, ImportedModel, TensorSpec, builder, import_model, parse_input_shapes
from glow_mlir.importer.builder import lookup

F32 = TensorProto.FLOAT
MODELS_DIR = Path(os.environ.get("GLOW_MODELS_DIR") or Path(__file__).resolve().parents[2].parent / "shared" / "models")


# --------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def ctx() -> ir.Context:
    return make_context()


def vi(name: str, shape: Sequence[int | str] | None, elem: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def init(name: str, value: np.ndarray | Sequence) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: Sequence[onnx.TensorProto] = (),
    *,
    opset: int = 17,
    name: str = "g",
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def node(op: str, inputs: list[str], outputs: list[str], name: str = "", **attrs) -> onnx.NodeProto:
    return helper.make_node(op, inputs, outputs, name=name or outputs[0] + "_node", **attrs)


def body(m: ImportedModel) -> list[ir.Operation]:
    """The ops of the graph function, return excluded."""
    fn = m.module.body.operations[0]
    return [op.operation for op in fn.regions[0].blocks[0].operations][:-1]


def names(m: ImportedModel) -> list[str]:
    """The op names of the graph function without the dialect prefix, return excluded."""
    return [op.name.removeprefix("glowgraph.") for op in body(m)]


def result_type(m: ImportedModel) -> str:
    return str(body(m)[-1].results[0].type)


def const_values(m: ImportedModel) -> list[np.ndarray]:
    return [elements_to_numpy(op.attributes["value"]) for op in body(m) if op.name == "glowgraph.constant"]


def attr(op: ir.Operation, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def save(m: onnx.ModelProto, path: Path) -> Path:
    onnx.save(m, path)
    return path


def unary_model(op: str, shape: Sequence[int] = (2, 3), name: str = "n", **attrs) -> onnx.ModelProto:
    return model([node(op, ["x"], ["y"], name, **attrs)], [vi("x", shape)], [vi("y", None)])


W = np.arange(12, dtype=np.float32).reshape(4, 3)  # [N=4, K=3]: a weight for transB=1
BIAS = np.arange(4, dtype=np.float32)


# --------------------------------------------------------------------------- registry


def test_registry_has_every_supported_op():
    expected = {
        "Gemm",
        "MatMul",
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Relu",
        "Sigmoid",
        "Tanh",
        "Reshape",
        "Flatten",
        "Transpose",
        "Identity",
        "Constant",
    }
    assert expected <= set(HANDLERS)
    for op, versions in HANDLERS.items():
        for since, handler in versions.items():
            name = handler.op_type if not handler.domain else f"{handler.domain}:{handler.op_type}"
            assert (name, handler.since) == (op, since)


def test_ops_of_other_domains_are_looked_up_in_their_domain():
    assert lookup("FlexAttention", "ai.onnx.preview", 1).domain == "ai.onnx.preview"
    assert lookup("FlexAttention", "", 26) is None  # not an op of the default domain
    assert lookup("Relu", "ai.onnx.preview", 1) is None


@pytest.mark.parametrize(("opset", "since"), [(5, 5), (13, 5), (14, 14), (21, 14)])
def test_lookup_takes_highest_since_not_above_opset(opset: int, since: int):
    assert lookup("Reshape", "", opset).since == since


def test_lookup_rejects_old_opsets_and_other_domains():
    assert lookup("Pow", "", 6) is None  # Pow's opset-1 form (legacy broadcast) has no handler
    assert lookup("Add", "", 6).since == 6
    assert lookup("Add", "com.example", 17) is None
    assert lookup("Add", "ai.onnx", 17).since == 7


# --------------------------------------------------------------------------- Gemm and MatMul


def test_gemm_transb_constant_weight_becomes_fully_connected(ctx):
    m = model(
        [node("Gemm", ["x", "w", "b"], ["y"], "fc", transB=1)],
        [vi("x", [2, 3])],
        [vi("y", [2, 4])],
        [init("w", W), init("b", BIAS)],
    )
    imported = import_model(m, ctx)
    assert names(imported) == ["constant", "constant", "fully_connected"]
    weight, bias = const_values(imported)
    np.testing.assert_array_equal(weight, W.T)  # transposed at import
    np.testing.assert_array_equal(bias, BIAS)
    assert result_type(imported) == "tensor<2x4xf32>"
    assert [str(op.location) for op in body(imported)] == ['loc("w")', 'loc("b")', 'loc("fc")']


def test_gemm_alpha_beta_fold_into_constants(ctx):
    m = model(
        [node("Gemm", ["x", "w", "b"], ["y"], "fc", transB=1, alpha=2.0, beta=0.5)],
        [vi("x", [2, 3])],
        [vi("y", None)],
        [init("w", W), init("b", BIAS)],
    )
    imported = import_model(m, ctx)
    assert names(imported) == ["constant", "constant", "fully_connected"]
    weight, bias = const_values(imported)
    np.testing.assert_array_equal(weight, 2 * W.T)
    np.testing.assert_array_equal(bias, 0.5 * BIAS)


def test_gemm_of_activations_transposes_and_scales_with_ops(ctx):
    m = model(
        [node("Gemm", ["a", "b"], ["y"], "g", transA=1, alpha=3.0)], [vi("a", [3, 2]), vi("b", [3, 4])], [vi("y", None)]
    )
    imported = import_model(m, ctx)
    assert names(imported) == ["transpose", "splat", "mul", "matmul"]
    assert attr(body(imported)[0], "shuffle") == [1, 0]
    assert ir.FloatAttr(body(imported)[1].attributes["value"]).value == 3.0
    assert result_type(imported) == "tensor<2x4xf32>"


@pytest.mark.parametrize("c_shape", [[], [1], [4], [1, 4]])
def test_gemm_row_bias_becomes_fully_connected(ctx, c_shape: list[int]):
    m = model(
        [node("Gemm", ["x", "w", "c"], ["y"], "g")],
        [vi("x", [2, 3]), vi("w", [3, 4]), vi("c", c_shape)],
        [vi("y", None)],
    )
    imported = import_model(m, ctx)
    ops = names(imported)
    assert ops[-1] == "fully_connected"
    assert str(body(imported)[-1].operands[2].type) == "tensor<4xf32>"
    assert (
        ops[:-1] == {(): ["reshape", "broadcast"], (1,): ["broadcast"], (4,): [], (1, 4): ["reshape"]}[tuple(c_shape)]
    )


@pytest.mark.parametrize(
    ("c_shape", "expected"), [([2, 4], ["matmul", "add"]), ([2, 1], ["matmul", "broadcast", "add"])]
)
def test_gemm_per_row_bias_is_added_after_matmul(ctx, c_shape: list[int], expected: list[str]):
    m = model(
        [node("Gemm", ["x", "w", "c"], ["y"], "g")],
        [vi("x", [2, 3]), vi("w", [3, 4]), vi("c", c_shape)],
        [vi("y", None)],
    )
    imported = import_model(m, ctx)
    assert names(imported) == expected
    assert result_type(imported) == "tensor<2x4xf32>"


def test_gemm_without_c_is_a_matmul(ctx):
    m = model([node("Gemm", ["x", "w"], ["y"], "g")], [vi("x", [2, 3]), vi("w", [3, 4])], [vi("y", None)])
    assert names(import_model(m, ctx)) == ["matmul"]


def test_gemm_bad_c_shape(ctx):
    m = model(
        [node("Gemm", ["x", "w", "c"], ["y"], "gemm0")],
        [vi("x", [2, 3]), vi("w", [3, 4]), vi("c", [3, 4])],
        [vi("y", None)],
    )
    with pytest.raises(ModelError, match=r"^g: node 'gemm0' \(Gemm\): shapes 3x4, 2x4 do not broadcast together$"):
        import_model(m, ctx)


def test_gemm_rank_3_operand(ctx):
    m = model([node("Gemm", ["x", "w"], ["y"], "gemm0")], [vi("x", [1, 2, 3]), vi("w", [3, 4])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"node 'gemm0' \(Gemm\): A and B must be 2-D, got 1x2x3 and 3x4"):
        import_model(m, ctx)


def test_gemm_attribute_of_wrong_type(ctx):
    m = model([node("Gemm", ["x", "w"], ["y"], "gemm0", alpha=2)], [vi("x", [2, 3]), vi("w", [3, 4])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"node 'gemm0' \(Gemm\): attribute 'alpha' must be FLOAT, got INT"):
        import_model(m, ctx)


def test_matmul_2d(ctx):
    m = model([node("MatMul", ["a", "b"], ["y"], "mm")], [vi("a", [2, 3]), vi("b", [3, 5])], [vi("y", None)])
    imported = import_model(m, ctx)
    assert names(imported) == ["matmul"]
    assert result_type(imported) == "tensor<2x5xf32>"


def test_matmul_batched_lhs_folds_batch_into_rows(ctx):
    m = model([node("MatMul", ["a", "b"], ["y"], "mm")], [vi("a", [2, 4, 3]), vi("b", [3, 5])], [vi("y", None)])
    imported = import_model(m, ctx)
    assert names(imported) == ["reshape", "matmul", "reshape"]
    assert attr(body(imported)[0], "shape") == [8, 3]
    assert imported.outputs == [TensorSpec("y", (2, 4, 5), np.dtype(np.float32))]


def test_matmul_vector_rhs(ctx):
    m = model([node("MatMul", ["a", "b"], ["y"], "mm")], [vi("a", [2, 3]), vi("b", [3])], [vi("y", None)])
    imported = import_model(m, ctx)
    assert names(imported) == ["reshape", "matmul", "reshape"]
    assert imported.outputs[0].shape == (2,)


def test_matmul_batched_rhs_is_a_batch_matmul(ctx):
    m = model([node("MatMul", ["a", "b"], ["y"], "mm")], [vi("a", [2, 4, 3]), vi("b", [2, 3, 5])], [vi("y", None)])
    imported = import_model(m, ctx)
    assert names(imported) == ["batch_matmul"]
    assert imported.outputs == [TensorSpec("y", (2, 4, 5), np.dtype(np.float32))]


def test_matmul_inner_dims_differ(ctx):
    m = model([node("MatMul", ["a", "b"], ["y"], "mm")], [vi("a", [2, 3]), vi("b", [4, 5])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"^g: node 'mm' \(MatMul\): inner dimensions differ"):
        import_model(m, ctx)


# --------------------------------------------------------------------------- elementwise


@pytest.mark.parametrize(("op", "ir_op"), [("Add", "add"), ("Sub", "sub"), ("Mul", "mul"), ("Div", "div")])
def test_binary_same_shape(ctx, op: str, ir_op: str):
    m = model([node(op, ["a", "b"], ["y"], "e")], [vi("a", [2, 3]), vi("b", [2, 3])], [vi("y", None)])
    imported = import_model(m, ctx)
    assert names(imported) == [ir_op]
    assert str(body(imported)[0].location) == 'loc("e")'


def test_binary_broadcasts_the_smaller_operand(ctx):
    m = model([node("Add", ["a", "b"], ["y"], "e")], [vi("a", [2, 3])], [vi("y", None)], [init("b", BIAS[:3])])
    imported = import_model(m, ctx)
    assert names(imported) == ["constant", "broadcast", "add"]
    assert attr(body(imported)[1], "shape") == [2, 3]
    assert result_type(imported) == "tensor<2x3xf32>"


def test_binary_broadcasts_both_operands(ctx):
    m = model([node("Mul", ["a", "b"], ["y"], "e")], [vi("a", [2, 1]), vi("b", [1, 3])], [vi("y", None)])
    imported = import_model(m, ctx)
    assert names(imported) == ["broadcast", "broadcast", "mul"]
    assert result_type(imported) == "tensor<2x3xf32>"


def test_binary_shapes_that_do_not_broadcast(ctx):
    m = model([node("Add", ["a", "b"], ["y"], "e")], [vi("a", [2, 3]), vi("b", [4])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"^g: node 'e' \(Add\): shapes 2x3, 4 do not broadcast together$"):
        import_model(m, ctx)


def test_binary_element_types_differ(ctx):
    m = model([node("Add", ["a", "b"], ["y"], "e")], [vi("a", [2]), vi("b", [2], TensorProto.INT64)], [vi("y", None)])
    with pytest.raises(ModelError, match=r"^g: node 'e' \(Add\): operand #1 has type tensor<2xi64>"):
        import_model(m, ctx)


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh"])
def test_unary(ctx, op: str):
    imported = import_model(unary_model(op), ctx)
    assert names(imported) == [op.lower()]
    assert result_type(imported) == "tensor<2x3xf32>"


# --------------------------------------------------------------------------- shapes and layout


def reshape_model(shape: Sequence[int], in_shape: Sequence[int] = (2, 3, 4), opset: int = 17, **attrs):
    return model(
        [node("Reshape", ["x", "s"], ["y"], "r", **attrs)],
        [vi("x", in_shape)],
        [vi("y", None)],
        [init("s", np.array(shape, dtype=np.int64))],
        opset=opset,
    )


@pytest.mark.parametrize(
    ("shape", "out"), [([0, -1], [2, 12]), ([-1], [24]), ([4, 0, 2], [4, 3, 2]), ([24, 1], [24, 1])]
)
def test_reshape(ctx, shape: list[int], out: list[int]):
    imported = import_model(reshape_model(shape), ctx)
    assert names(imported) == ["reshape"]  # the shape initializer becomes no constant
    assert attr(body(imported)[0], "shape") == out


def test_reshape_allowzero_keeps_a_literal_zero(ctx):
    import_model(reshape_model([0, 12], allowzero=0), ctx)  # 0 copies dim 0: 2x12
    with pytest.raises(ModelError, match=r"node 'r' \(Reshape\): cannot reshape 2x3x4 into \[0, 12\]"):
        import_model(reshape_model([0, 12], allowzero=1), ctx)


@pytest.mark.parametrize("shape", [[-1, -1], [5, -1], [7, 0], [2, -2, -1]])
def test_reshape_bad_shapes(ctx, shape: list[int]):
    with pytest.raises(ModelError, match=r"^g: node 'r' \(Reshape\): (cannot reshape|shape .* at most one -1)"):
        import_model(reshape_model(shape), ctx)


def test_reshape_shape_must_be_constant(ctx):
    m = model(
        [node("Reshape", ["x", "s"], ["y"], "r")], [vi("x", [2, 3]), vi("s", [2], TensorProto.INT64)], [vi("y", None)]
    )
    expected = r"node 'r' \(Reshape\): the shape input 's' must be a constant"
    with pytest.raises(NonConstantInputError, match=expected) as info:
        import_model(m, ctx)
    assert isinstance(info.value, UnsupportedError)
    assert info.value.value == "s"  # what a caller that knows the value binds


def test_non_constant_input_keeps_its_value_name_through_message_cleaning(ctx):
    m = model(
        [node("Reshape", ["x", "s\n1"], ["y"], "r")], [vi("x", [2, 3]), vi("s\n1", [2], TensorProto.INT64)],
        [vi("y", None)],
    )
    with pytest.raises(NonConstantInputError) as info:
        import_model(m, ctx)
    assert "\n" not in str(info.value) and info.value.value == "s\n1"


def test_reshape_allowzero_before_opset_14_is_unsupported(ctx):
    with pytest.raises(
        UnsupportedError,
        match=r"1 unsupported attribute at opset 13: Reshape attribute 'allowzero' "
        r"\(node r\)$",
    ):
        import_model(reshape_model([0, -1], opset=13, allowzero=0), ctx)


def test_reshape_of_a_constant_is_folded(ctx):
    m = model(
        [node("Reshape", ["c", "s"], ["y"], "r")], [], [vi("y", None)], [init("c", W), init("s", np.array([3, 4]))]
    )
    imported = import_model(m, ctx)
    assert names(imported) == ["constant"]
    np.testing.assert_array_equal(const_values(imported)[0], W.reshape(3, 4))


@pytest.mark.parametrize(("axis", "out"), [(None, [2, 12]), (0, [1, 24]), (2, [6, 4]), (3, [24, 1]), (-1, [6, 4])])
def test_flatten(ctx, axis: int | None, out: list[int]):
    attrs = {} if axis is None else {"axis": axis}
    imported = import_model(unary_model("Flatten", (2, 3, 4), **attrs), ctx)
    assert names(imported) == ["reshape"]
    assert attr(body(imported)[0], "shape") == out


def test_flatten_axis_out_of_range(ctx):
    with pytest.raises(ModelError, match=r"^g: node 'n' \(Flatten\): axis 3 is out of range for a rank-2 input$"):
        import_model(unary_model("Flatten", (2, 3), axis=3), ctx)


@pytest.mark.parametrize(("perm", "out"), [(None, [4, 3, 2]), ([1, 0, 2], [3, 2, 4])])
def test_transpose(ctx, perm: list[int] | None, out: list[int]):
    attrs = {} if perm is None else {"perm": perm}
    imported = import_model(unary_model("Transpose", (2, 3, 4), **attrs), ctx)
    assert names(imported) == ["transpose"]
    assert result_type(imported) == f"tensor<{'x'.join(map(str, out))}xf32>"


def test_transpose_bad_perm(ctx):
    with pytest.raises(ModelError, match=r"^g: node 'n' \(Transpose\): perm \[0, 0\] is not a permutation"):
        import_model(unary_model("Transpose", (2, 3), perm=[0, 0]), ctx)


def test_transpose_of_a_constant_is_folded(ctx):
    m = model([node("Transpose", ["c"], ["y"], "t")], [], [vi("y", None)], [init("c", W)])
    imported = import_model(m, ctx)
    assert names(imported) == ["constant"]
    np.testing.assert_array_equal(const_values(imported)[0], W.T)
    assert str(body(imported)[0].location) == 'loc("c")'  # the same weight, re-laid out


def test_identity_builds_nothing(ctx):
    imported = import_model(unary_model("Identity"), ctx)
    assert names(imported) == []
    assert imported.outputs == [TensorSpec("y", (2, 3), np.dtype(np.float32))]


# --------------------------------------------------------------------------- constants


@pytest.mark.parametrize(
    ("attrs", "expected"),
    [
        ({"value": init("t", W)}, W),
        ({"value_float": 1.5}, np.array(1.5, np.float32)),
        ({"value_floats": [1.0, 2.0]}, np.array([1.0, 2.0], np.float32)),
        ({"value_int": 3}, np.array(3, np.int64)),
        ({"value_ints": [3, 4]}, np.array([3, 4], np.int64)),
    ],
)
def test_constant_node(ctx, attrs: dict, expected: np.ndarray):
    m = model([node("Constant", [], ["c"], "const0", **attrs)], [], [vi("c", None, 0)])
    imported = import_model(m, ctx)
    assert names(imported) == ["constant"]
    (value,) = const_values(imported)
    assert value.dtype == expected.dtype
    np.testing.assert_array_equal(value, expected)
    assert str(body(imported)[0].location) == 'loc("c")'  # a constant is located at its tensor's name


def test_constant_sparse_value_is_unsupported(ctx):
    sparse = helper.make_sparse_tensor(init("v", [1.0]), init("i", [0]), [2])
    m = model([node("Constant", [], ["c"], "const0", sparse_value=sparse)], [], [vi("c", None)])
    with pytest.raises(UnsupportedError, match=r"Constant attribute 'sparse_value' \(node const0\)"):
        import_model(m, ctx)


def test_initializers_and_locations(ctx):
    m = model(
        [helper.make_node("Add", ["x", "b"], ["t"]), node("Relu", ["t"], ["y"], "act")],
        [vi("x", [3])],
        [vi("y", None)],
        [init("b", BIAS[:3]), init("unused", W)],
    )
    imported = import_model(m, ctx)
    assert names(imported) == ["constant", "add", "relu"]  # an unused initializer becomes no constant
    assert [str(op.location) for op in body(imported)] == ['loc("b")', 'loc("Add#0")', 'loc("act")']


def test_initializer_listed_as_input_is_a_constant(ctx):
    m = model(
        [node("Add", ["x", "b"], ["y"], "e")], [vi("x", [3]), vi("b", [3])], [vi("y", None)], [init("b", BIAS[:3])]
    )
    imported = import_model(m, ctx)
    assert [s.name for s in imported.inputs] == ["x"]
    assert names(imported) == ["constant", "add"]


# --------------------------------------------------------------------------- signature


def test_signature_names_and_func_name(ctx):
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", [2])], [vi("y", [2])], name="my-graph.v1")
    imported = import_model(m, ctx)
    assert (imported.name, imported.func_name) == ("my-graph.v1", "my_graph_v1")
    assert imported.inputs == [TensorSpec("x", (2,), np.dtype(np.float32))]
    text = str(imported.module)
    assert 'func.func @my_graph_v1(%arg0: tensor<2xf32> {glowgraph.name = "x"})' in text
    assert '-> (tensor<2xf32> {glowgraph.name = "y"})' in text


@pytest.mark.parametrize(("graph_name", "func_name"), [("", "main"), ("3d", "_3d"), ("main_graph", "main_graph")])
def test_func_name_of(graph_name: str, func_name: str):
    assert builder.func_name_of(graph_name) == func_name


def test_name_of_a_file_is_its_stem(ctx, tmp_path: Path):
    imported = import_model(save(unary_model("Relu"), tmp_path / "tiny.onnx"), ctx)
    assert imported.name == "tiny"


def test_verify_failure_is_a_model_error(ctx, monkeypatch):
    def failing(root: ir.Operation) -> list[Diagnostic]:
        return [Diagnostic(ir.Location.name("n"), "'glowgraph.relu' op bad")]

    monkeypatch.setattr(builder, "verify", failing)
    with pytest.raises(ModelError, match=r"^g: the imported IR does not verify: node 'n': 'glowgraph.relu' op bad$"):
        import_model(unary_model("Relu"), ctx)


def test_a_wrongly_declared_shape_is_a_warning_and_the_computed_one_is_used(ctx):
    # onnxruntime and onnx.reference run such models (onnxruntime warns): so does the importer
    m = model([node("Relu", ["x"], ["t"], "r1"), node("Relu", ["t"], ["y"], "r2")], [vi("x", [2, 3])], [vi("y", None)])
    m.graph.value_info.append(vi("t", [5, 5]))
    with pytest.warns(builder.DeclaredShapeWarning,
                      match=r"^g: node 'r1' \(Relu\): output 't' is declared 5x5 float32 but computes to 2x3 float32; "
                            r"going on with 2x3$"):
        imported = import_model(m, ctx)
    assert imported.outputs[0].shape == (2, 3)


def test_a_wrongly_declared_element_type_is_an_error(ctx):
    m = model([node("Relu", ["x"], ["t"], "r1"), node("Relu", ["t"], ["y"], "r2")], [vi("x", [2, 3])], [vi("y", None)])
    m.graph.value_info.append(helper.make_tensor_value_info("t", TensorProto.INT64, [2, 3]))
    with pytest.raises(
        ModelError,
        match=r"^g: node 'r1' \(Relu\): output 't' is 2x3 float32 here, but the model's "
        r"declared or inferred type is 2x3 int64$",
    ):
        import_model(m, ctx)


def test_shape_inference_failure_is_a_model_error(ctx, monkeypatch):
    def failing(*args, **kwargs):
        raise onnx.shape_inference.InferenceError("[ShapeInferenceError] bad\nsecond line")

    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", failing)
    with pytest.raises(ModelError, match=r"^g: ONNX shape inference failed: \[ShapeInferenceError\] bad$"):
        import_model(unary_model("Relu"), ctx)


# --------------------------------------------------------------------------- unreadable models


def test_missing_file(ctx, tmp_path: Path):
    path = tmp_path / "absent.onnx"
    with pytest.raises(ModelError, match=rf"^{path}: no such file$"):
        import_model(path, ctx)


def test_directory(ctx, tmp_path: Path):
    with pytest.raises(ModelError, match=r"cannot read the model"):
        import_model(tmp_path, ctx)


def test_random_bytes(ctx, tmp_path: Path):
    path = tmp_path / "noise.onnx"
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(ModelError, match=r"noise\.onnx: not an ONNX model"):
        import_model(path, ctx)


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_truncated_file(ctx, tmp_path: Path, fraction: float):
    m = model(
        [node("Gemm", ["x", "w", "b"], ["y"], "fc", transB=1)],
        [vi("x", [2, 3])],
        [vi("y", None)],
        [init("w", W), init("b", BIAS)],
    )
    data = m.SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(ModelError, match=r"cut\.onnx: not an ONNX model \(.*truncated\?\)$"):
        import_model(path, ctx)


def test_non_utf8_names(ctx, tmp_path: Path):
    data = unary_model("Relu", name="nodename").SerializeToString().replace(b"nodename", b"node\xffame")
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    with pytest.raises(ModelError, match=r"bad\.onnx: not an ONNX model: field onnx\.NodeProto\.name .*UTF-8"):
        import_model(path, ctx)


def test_no_default_opset(ctx):
    m = unary_model("Relu")
    del m.opset_import[:]
    with pytest.raises(ModelError, match=r"^g: the model imports no opset of the default ONNX domain$"):
        import_model(m, ctx)


def test_only_ops_of_other_domains_is_unsupported(ctx):
    # Valid ONNX (ai.onnx.ml models need no default opset): it was reported as a malformed model.
    m = model([helper.make_node("ZipMap", ["x"], ["y"], domain="ai.onnx.ml")], [vi("x", [2])], [vi("y", None)])
    m.opset_import[0].domain = "ai.onnx.ml"
    expected = r"^g: the model uses only ops of other domains .*: ai.onnx.ml.ZipMap$"
    with pytest.raises(UnsupportedError, match=expected):
        import_model(m, ctx)


def test_messages_stay_on_one_line(ctx):
    with pytest.raises(UnsupportedError) as info:
        import_model(unary_model("Foo", name="a\nb"), ctx)
    assert "\n" not in str(info.value)
    assert "Foo (node a\\nb)" in str(info.value)


# --------------------------------------------------------------------------- malformed graphs


def test_input_nothing_produces(ctx):
    m = model([node("Add", ["x", "ghost"], ["y"], "add0")], [vi("x", [2])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"^g: node 'add0' \(Add\): input 'ghost' is not produced by any node"):
        import_model(m, ctx)


def test_output_nothing_produces(ctx):
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", [2])], [vi("z", None)])
    with pytest.raises(ModelError, match=r"^g: graph output 'z' is not produced by any node$"):
        import_model(m, ctx)


def test_value_produced_twice(ctx):
    m = model([node("Relu", ["x"], ["y"], "r1"), node("Tanh", ["x"], ["y"], "r2")], [vi("x", [2])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"node 'r2' \(Tanh\): output 'y' is already defined"):
        import_model(m, ctx)


def test_cyclic_graph(ctx):
    m = model(
        [node("Add", ["x", "b"], ["a"], "n1"), node("Relu", ["a"], ["b"], "n2"), node("Relu", ["a"], ["y"], "n3")],
        [vi("x", [2])],
        [vi("y", None)],
    )
    with pytest.raises(ModelError, match=r"^g: the graph has a cycle: nodes n1, n2, n3 cannot be ordered$"):
        import_model(m, ctx)


def test_unsorted_acyclic_graph_is_accepted(ctx):
    m = model(
        [node("Tanh", ["t"], ["y"], "second"), node("Relu", ["x"], ["t"], "first")], [vi("x", [2])], [vi("y", None)]
    )
    imported = import_model(m, ctx)
    assert names(imported) == ["relu", "tanh"]


def test_wrong_number_of_inputs(ctx):
    m = model([node("Relu", ["x", "x"], ["y"], "r")], [vi("x", [2])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"^g: node 'r' \(Relu\): expects 1 input, got 2$"):
        import_model(m, ctx)


def test_wrong_number_of_outputs(ctx):
    m = model([node("Relu", ["x"], ["y", "z"], "r")], [vi("x", [2])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"^g: node 'r' \(Relu\): expects 1 output, got 2$"):
        import_model(m, ctx)


def test_outputs_onnx_allows_but_the_handler_does_not_compute_are_unsupported(ctx):
    # Regression: MaxPool's optional Indices output (supported since) was reported as a malformed model; opset 9's
    # BatchNormalization allows the training statistics outputs, which its handler does not compute.
    params = [init(n, np.ones(1, np.float32)) for n in ("s", "b", "mean", "var")]
    m = model([node("BatchNormalization", ["x", "s", "b", "mean", "var"], ["y", "m"], "p")], [vi("x", [1, 1, 4])],
              [vi("y", None)], params, opset=9)
    with pytest.raises(UnsupportedError, match=r"^g: node 'p' \(BatchNormalization\): output #1 'm' is not "
                                               r"supported$"):
        import_model(m, ctx)


# --------------------------------------------------------------------------- tensor data


def test_initializer_data_too_long(ctx):
    w = init("w", BIAS)
    w.raw_data += b"\0\0\0\0"
    m = model([node("Add", ["x", "w"], ["y"], "e")], [vi("x", [4])], [vi("y", None)], [w])
    with pytest.raises(ModelError, match=r"^g: initializer 'w': data is too long: 20 bytes for shape 4 of FLOAT, 16"):
        import_model(m, ctx)


def test_initializer_data_too_short(ctx):
    w = init("w", BIAS)
    w.raw_data = w.raw_data[:-1]
    m = model([node("Add", ["x", "w"], ["y"], "e")], [vi("x", [4])], [vi("y", None)], [w])
    with pytest.raises(ModelError, match=r"^g: initializer 'w': data is too short: 15 bytes"):
        import_model(m, ctx)


def test_initializer_typed_data_too_short(ctx):
    w = TensorProto(name="w", data_type=F32, dims=[4], float_data=[1.0, 2.0, 3.0])
    m = model([node("Add", ["x", "w"], ["y"], "e")], [vi("x", [4])], [vi("y", None)], [w])
    with pytest.raises(ModelError, match=r"initializer 'w': data is too short: 3 values for shape 4 of FLOAT, 4"):
        import_model(m, ctx)


def test_constant_node_data_too_long(ctx):
    value = TensorProto(name="v", data_type=TensorProto.INT64, dims=[2], int64_data=[1, 2, 3])
    m = model([node("Constant", [], ["c"], "k", value=value)], [], [vi("c", None, 0)])
    with pytest.raises(ModelError, match=r"^g: node 'k' \(Constant\): attribute 'value': data is too long"):
        import_model(m, ctx)


def test_unsupported_initializer_element_type(ctx):
    m = model(
        [node("Add", ["x", "w"], ["y"], "e")], [vi("x", [4])], [vi("y", None)], [init("w", BIAS.astype(ml_dtypes.float6_e2m3fn))]
    )
    with pytest.raises(UnsupportedError, match=r"^g: initializer 'w': unsupported element type FLOAT6E2M3$"):
        import_model(m, ctx)


def test_unsupported_constant_element_type(ctx):
    m = model([node("Constant", [], ["c"], "k", value=init("v", BIAS.astype(ml_dtypes.float6_e2m3fn)))], [], [vi("c", None, 0)])
    with pytest.raises(
        UnsupportedError,
        match=r"^g: node 'k' \(Constant\): attribute 'value': unsupported element "
        r"type FLOAT6E2M3$",
    ):
        import_model(m, ctx)


def test_unsupported_input_element_type(ctx):
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", [2], TensorProto.FLOAT6E2M3)], [vi("y", None)])
    with pytest.raises(UnsupportedError, match=r"^g: graph input 'x' has unsupported element type FLOAT6E2M3$"):
        import_model(m, ctx)


# --------------------------------------------------------------------------- external data


def external_model(tmp_path: Path, location: str) -> Path:
    """A model whose weight 'w' lives in the external file ``location``; the data is written
    inside tmp_path/model/ whatever ``location`` says."""
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    m = model([node("Add", ["x", "w"], ["y"], "e")], [vi("x", [4])], [vi("y", None)], [init("w", BIAS)])
    onnx.save(
        m,
        folder / "m.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=0,
    )
    m = onnx.load(folder / "m.onnx", load_external_data=False)
    for entry in m.graph.initializer[0].external_data:
        if entry.key == "location":
            entry.value = location
    return save(m, folder / "m.onnx")


def test_external_data_in_the_model_folder(ctx, tmp_path: Path):
    imported = import_model(external_model(tmp_path, "weights.bin"), ctx)
    np.testing.assert_array_equal(const_values(imported)[0], BIAS)


@pytest.mark.parametrize("location", ["../weights.bin", "/etc/passwd", "sub/../../model/../weights.bin"])
def test_external_data_outside_the_model_folder(ctx, tmp_path: Path, location: str):
    (tmp_path / "weights.bin").write_bytes(BIAS.tobytes())
    path = external_model(tmp_path, location)
    with pytest.raises(
        ModelError,
        match=rf"m\.onnx: tensor 'w': external data location '{location}' is not a file "
        r"inside the model's folder$",
    ):
        import_model(path, ctx)


def test_external_data_file_too_short(ctx, tmp_path: Path):
    path = external_model(tmp_path, "weights.bin")
    (path.parent / "weights.bin").write_bytes(BIAS.tobytes()[:10])
    with pytest.raises(ModelError, match=r"tensor 'w': external data file 'weights.bin' has 10 bytes at offset 0, 16"):
        import_model(path, ctx)


def test_external_data_of_a_model_proto(ctx, tmp_path: Path):
    proto = onnx.load(external_model(tmp_path, "weights.bin"), load_external_data=False)
    with pytest.raises(ModelError, match=r"tensor 'w' keeps its data in an external file: import the model from its"):
        import_model(proto, ctx)


# --------------------------------------------------------------------------- unsupported ops


def test_unsupported_ops_reported_all_at_once(ctx, tmp_path: Path):
    m = model(
        [
            node("Foo", ["x"], ["a"], "a"),
            node("Foo", ["a"], ["b"], "b"),
            node("Bar", ["b"], ["c"], "c"),
            node("Relu", ["c"], ["y"], "r"),
        ],
        [vi("x", [2])],
        [vi("y", None)],
    )
    path = save(m, tmp_path / "model.onnx")
    with pytest.raises(UnsupportedError) as info:
        import_model(path, ctx)
    assert str(info.value) == f"{path}: 2 unsupported ONNX ops at opset 17: Foo (nodes a, b); Bar (node c)"


def test_unsupported_ops_and_attributes_together(ctx):
    m = model(
        [helper.make_node("Foo", ["x"], ["a"]), node("Relu", ["a"], ["y"], "r", bogus=1)],
        [vi("x", [2])],
        [vi("y", None)],
        opset=12,
    )
    with pytest.raises(UnsupportedError) as info:
        import_model(m, ctx)
    assert str(info.value) == (
        "g: 1 unsupported ONNX op and 1 unsupported attribute at opset 12: Foo (node Foo#0); "
        "Relu attribute 'bogus' (node r)"
    )


def test_op_without_handler_at_the_model_opset(ctx):
    m = model([node("Pow", ["x", "x"], ["y"], "e")], [vi("x", [2])], [vi("y", None)], opset=6)
    with pytest.raises(UnsupportedError, match=r"^g: 1 unsupported ONNX op at opset 6: Pow \(node e\)$"):
        import_model(m, ctx)


def test_op_of_another_domain(ctx):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="r", domain="com.example")], [vi("x", [2])], [vi("y", None)])
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(UnsupportedError, match=r"1 unsupported ONNX op at opset 17: com\.example\.Relu \(node r\)$"):
        import_model(m, ctx)


def test_many_nodes_of_one_unsupported_op_are_abridged(ctx):
    nodes = [node("Foo", ["x"], [f"t{i}"], f"f{i}") for i in range(8)]
    m = model([*nodes, node("Relu", ["x"], ["y"], "r")], [vi("x", [2])], [vi("y", None)])
    with pytest.raises(UnsupportedError, match=r": Foo \(nodes f0, f1, f2, f3, f4 and 3 more\)$"):
        import_model(m, ctx)


def test_unsupported_ops_come_before_shape_errors(ctx):
    m = model([node("Foo", ["x"], ["y"], "f")], [vi("x", ["N", 3])], [vi("y", None)])
    with pytest.raises(UnsupportedError, match="Foo"):
        import_model(m, ctx)


# --------------------------------------------------------------------------- input shapes


def test_dynamic_input_dimension_asks_for_input_shape(ctx):
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", ["batch", 3])], [vi("y", None)])
    with pytest.raises(
        ModelError,
        match=r"^g: graph input 'x' has a dynamic shape batchx3: give it with "
        r"--input-shape x=Dx3 \(input_shapes=",
    ):
        import_model(m, ctx)


def test_input_without_shape_asks_for_input_shape(ctx):
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", None)], [vi("y", None)])
    with pytest.raises(ModelError, match=r"graph input 'x' has no shape: give it with --input-shape x="):
        import_model(m, ctx)


def test_input_shapes_fix_dynamic_dimensions(ctx):
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", ["batch", 3])], [vi("y", ["batch", 3])])
    imported = import_model(m, ctx, input_shapes={"x": [5, 3]})
    assert imported.inputs == [TensorSpec("x", (5, 3), np.dtype(np.float32))]
    assert imported.outputs[0].shape == (5, 3)


def test_input_shapes_override_static_dimensions(ctx):
    m = model([node("Relu", ["x"], ["t"], "r"), node("Tanh", ["t"], ["y"], "h")], [vi("x", [2, 3])], [vi("y", [2, 3])])
    m.graph.value_info.append(vi("t", [2, 3]))  # recorded for the old shape: dropped, not a conflict
    assert import_model(m, ctx, input_shapes={"x": (4, 3)}).outputs[0].shape == (4, 3)


def test_input_shapes_wrong_rank(ctx):
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", ["batch", 3])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"input_shapes\['x'\] has rank 3 \(1x2x3\) but the model's input has rank 2"):
        import_model(m, ctx, input_shapes={"x": [1, 2, 3]})


def test_input_shapes_unknown_name(ctx):
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", [2])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"input_shapes names 'z', which is not a graph input \(inputs: x\)"):
        import_model(m, ctx, input_shapes={"z": [1]})


@pytest.mark.parametrize("dims", [[-1, 3], [2.5, 3]])
def test_input_shapes_bad_dims(ctx, dims: list):
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", ["batch", 3])], [vi("y", None)])
    with pytest.raises(ModelError, match=r"input_shapes\['x'\] = .* must hold positive integers"):
        import_model(m, ctx, input_shapes={"x": dims})


@pytest.mark.parametrize(("declared", "given"), [([0, 3], None), (["batch", 3], [0, 3])])
def test_inputs_without_elements_are_unsupported(ctx, declared: list, given: list | None):
    # A zero-size dimension is valid ONNX (it was reported as a bad or dynamic shape before); we do not compile it.
    m = model([node("Relu", ["x"], ["y"], "r")], [vi("x", declared)], [vi("y", None)])
    with pytest.raises(UnsupportedError, match=r"^g: graph input 'x' has shape 0x3: tensors without elements are not"):
        import_model(m, ctx, input_shapes={"x": given} if given else None)


def test_parse_input_shapes():
    assert parse_input_shapes(["input=1x3x224x224", " b = 7 ", "a=b=2x2"]) == {
        "input": (1, 3, 224, 224),
        "b": (7,),
        "a=b": (2, 2),
    }
    assert parse_input_shapes([]) == {}


@pytest.mark.parametrize("spec", ["input", "=1x2", "x=", "x=1x0", "x=1,2", "x=-1x2", "x=2x"])
def test_parse_input_shapes_bad_syntax(spec: str):
    with pytest.raises(ModelError, match=r"--input-shape '.*': expected NAME=DxDx\.\.\.xD"):
        parse_input_shapes([spec])


def test_parse_input_shapes_duplicate():
    with pytest.raises(ModelError, match="input 'x' is given twice"):
        parse_input_shapes(["x=1", "x=2"])


# --------------------------------------------------------------------------- shared models

needs_models = pytest.mark.skipif(
    not MODELS_DIR.is_dir(), reason=f"no model folder at {MODELS_DIR} (set GLOW_MODELS_DIR)"
)


@needs_models
@pytest.mark.parametrize(
    ("stem", "ops", "inputs", "outputs"),
    [
        ("seed_linear_sigmoid", ["constant", "constant", "fully_connected", "sigmoid"], [(3, 10)], [(3, 5)]),
        ("seed_add_const", ["constant", "constant", "add", "add"], [], [(3,)]),
        (
            "mlp_mnist",
            ["constant", "constant", "fully_connected", "relu"] * 2 + ["constant", "constant", "fully_connected"],
            [(64, 784)],
            [(64, 10)],
        ),
    ],
)
def test_shared_models_import(ctx, stem: str, ops: list[str], inputs: list[tuple], outputs: list[tuple]):
    imported = import_model(MODELS_DIR / f"{stem}.onnx", ctx)
    assert names(imported) == ops
    assert [s.shape for s in imported.inputs] == inputs
    assert [s.shape for s in imported.outputs] == outputs
    assert imported.name == stem
