"""Xor (Not(CmpEQ)), BitShift (shift_left and shift_right nodes), Mish (x * tanh(softplus(x))) and Einsum (sums,
transposes and one matmul or batch matmul) end to end: one-node ONNX models compiled with ``glow_mlir.api.compile``
and compared with ``onnx.reference.ReferenceEvaluator``: bools and integers exactly, floats within rtol 1e-5 and
atol 1e-5 (Einsum's sums run in another order; Mish's tanh is a polynomial). The Einsum forms that are not a
transpose, a sum or a product of two operands are refused naming the equation."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import ModelError, UnsupportedError

RNG = np.random.default_rng(7)
RTOL = ATOL = 1e-5


def model(op: str, inputs: dict[str, np.ndarray], opset: int, **attrs) -> onnx.ModelProto:
    node = helper.make_node(op, list(inputs), ["y"], name="n", **attrs)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in inputs.items()],
                              [helper.make_empty_tensor_value_info("y")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(op: str, inputs: dict[str, np.ndarray], opset: int, **attrs) -> None:
    m = model(op, inputs, opset, **attrs)
    (want,) = ReferenceEvaluator(m).run(None, inputs)
    got = glow.compile(m).run(inputs)["y"]
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    else:
        np.testing.assert_array_equal(got, want)


def floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------------- Xor


@pytest.mark.parametrize(("a", "b"), [([3, 4], [3, 4]), ([2, 3, 4], [4]), ([1, 4, 1], [3, 1, 5])])
def test_xor(a: list[int], b: list[int]) -> None:
    check("Xor", {"a": RNG.random(a) < 0.5, "b": RNG.random(b) < 0.5}, opset=7)


def test_xor_legacy_broadcast() -> None:
    a, b = RNG.random([2, 3, 4]) < 0.5, RNG.random([3]) < 0.5
    m = model("Xor", {"a": a, "b": b}, opset=6, broadcast=1, axis=1)
    np.testing.assert_array_equal(glow.compile(m).run({"a": a, "b": b})["y"], a ^ b[None, :, None])


def test_xor_of_integers() -> None:
    ones = np.ones([2], np.int64)
    with pytest.raises(ModelError, match="input #0 must be a bool tensor, got int64"):
        glow.compile(model("Xor", {"a": ones, "b": ones}, opset=7))


# --------------------------------------------------------------------------- BitShift


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_bit_shift(direction: str, dtype) -> None:
    bits = 8 * np.dtype(dtype).itemsize
    x = np.concatenate([RNG.integers(-1000, 1000, 12), [np.iinfo(dtype).min, np.iinfo(dtype).max, -1, 1]])
    # amounts in range, negative and of the width or more
    y = np.concatenate([RNG.integers(0, bits, 10), [-1, -bits, bits, bits + 3, bits - 1, 0]])
    check("BitShift", {"a": x.astype(dtype), "b": y.astype(dtype)}, opset=28, direction=direction)


def test_bit_shift_broadcasts() -> None:
    check("BitShift", {"a": RNG.integers(-99, 99, [3, 4]).astype(np.int64), "b": np.arange(4, dtype=np.int64)},
          opset=28, direction="RIGHT")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_of_unsigned_types_wraps_as_they_do(dtype: type, direction: str) -> None:
    # shifts up to the width and past it: a left shift keeps the type's low bits
    bits = 8 * np.dtype(dtype).itemsize
    x = RNG.integers(0, np.iinfo(dtype).max, [3, 6], dtype=dtype, endpoint=True)
    check("BitShift", {"a": x, "b": np.array([0, 1, 3, bits - 1, bits, bits + 2], dtype)}, opset=11,
          direction=direction)


def test_bit_shift_of_uint64_against_onnx_reference() -> None:
    # uint64 is held in int64: the left shift is the same bits, the right one logical (values above 2^63 included)
    for direction in ("LEFT", "RIGHT"):
        node = helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction)
        graph = helper.make_graph([node], "g",
                                  [helper.make_tensor_value_info(n, TensorProto.UINT64, [3]) for n in "xy"],
                                  [helper.make_tensor_value_info("z", TensorProto.UINT64, [3])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
        feeds = {"x": np.array([2**64 - 1, 2**63 + 6, 5], np.uint64), "y": np.array([4, 63, 0], np.uint64)}
        got = glow.compile(model).run(feeds)["z"]
        np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, feeds)[0], err_msg=direction)


# --------------------------------------------------------------------------- Mish


@pytest.mark.parametrize("opset", [18, 22])
def test_mish(opset: int) -> None:
    x = np.concatenate([np.linspace(-30, 30, 61), RNG.standard_normal(39) * 3]).astype(np.float32)
    check("Mish", {"x": x.reshape(5, 20)}, opset=opset)


# --------------------------------------------------------------------------- Einsum


@pytest.mark.parametrize(("equation", "shapes"), [
    ("ij,jk->ik", [[3, 4], [4, 5]]),
    ("ij,jk", [[3, 4], [4, 5]]),  # implicit output: the letters found once, sorted
    ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
    ("bhid,bhjd->bhij", [[2, 3, 4, 8], [2, 3, 5, 8]]),
    ("bij,bkj->bki", [[2, 3, 4], [2, 5, 4]]),  # the output in another order
    ("i,i->", [[5], [5]]),
    ("i,j->ij", [[3], [4]]),  # outer product: nothing contracted
    ("abc,cd->abd", [[2, 3, 4], [4, 5]]),
    ("ijk,jl->il", [[2, 3, 4], [3, 5]]),  # k summed out of the first operand first
    ("ij->ji", [[3, 4]]),
    ("ij->i", [[3, 4]]),
    ("ijk->kj", [[2, 3, 4]]),
    ("ij->", [[3, 4]]),
    ("...ij,...jk->...ik", [[2, 3, 4], [2, 4, 5]]),  # an ellipsis: the batch dims
    ("...ij,...jk", [[2, 1, 3, 4], [3, 4, 5]]),  # ... broadcast (1 against 3, a missing dim), leading the output
    ("ii->i", [[4, 4]]),  # a diagonal
    ("ii", [[4, 4]]),  # the trace
    ("...ii->...i", [[2, 3, 3]]),  # a batch of diagonals
    ("bij,bjj->bi", [[2, 3, 4], [2, 4, 4]]),
])
def test_einsum(equation: str, shapes: list[list[int]]) -> None:
    check("Einsum", {f"x{i}": floats(*s) for i, s in enumerate(shapes)}, opset=12, equation=equation)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_einsum_of_one_integer_operand(dtype) -> None:
    check("Einsum", {"x": RNG.integers(-9, 9, [3, 4, 2]).astype(dtype)}, opset=12, equation="ijk->ki")


@pytest.mark.parametrize(("equation", "inputs", "reason"), [
    ("ij,jk,kl->il", [floats(2, 3), floats(3, 4), floats(4, 5)], "of 3 operands"),
    ("ij,jk->ik", [np.ones([2, 3], np.int64), np.ones([3, 2], np.int64)], "of 2 int64 operand"),
])
def test_einsum_refused_forms(equation: str, inputs: list[np.ndarray], reason: str) -> None:
    m = model("Einsum", {f"x{i}": x for i, x in enumerate(inputs)}, opset=12, equation=equation)
    with pytest.raises(UnsupportedError, match=f"Einsum '{equation}'.*{reason}".replace(".", r"\.").replace(
            r"\.*", ".*")):
        glow.compile(m)


def test_einsum_sizes_must_agree() -> None:
    m = model("Einsum", {"a": floats(3, 4), "b": floats(5, 2)}, opset=12, equation="ij,jk->ik")
    with pytest.raises(ModelError, match="letter 'j' names dims of sizes 4 and 5"):
        glow.compile(m)
