"""Det (importer/handlers/linalg.py) against numpy's LU-based det: random, batched, singular and permuted matrices
(every pivot choice), and ones whose leading entry is zero (a swap is needed)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import glow_mlir
from glow_mlir.errors import ModelError

RNG = np.random.default_rng(41)


def _model(shape: list[int]) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Det", ["x"], ["y"], name="det")], "det",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def test_det_of_a_batch_of_matrices() -> None:
    # [2, 3, 5, 5]: random matrices, a singular one (two equal rows), a permutation (det -1), one with a zero
    # leading entry, the identity, and one of large and small rows
    x = RNG.standard_normal((2, 3, 5, 5)).astype(np.float32)
    x[0, 1, 3] = x[0, 1, 1]
    x[0, 2] = np.eye(5, dtype=np.float32)[[1, 0, 2, 4, 3]][[2, 0, 1, 3, 4]]
    x[1, 0, 0, 0] = 0.0
    x[1, 1] = np.eye(5, dtype=np.float32)
    x[1, 2] *= np.array([[1e3], [1e-3], [1.0], [10.0], [0.1]], np.float32)
    got = glow_mlir.compile(_model([2, 3, 5, 5]), cache=False).run({"x": x})["y"]
    want = np.linalg.det(x.astype(np.float64))
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert got[0, 2] == 1.0 and got[1, 1] == 1.0  # permutations exactly: the signs of the swaps


@pytest.mark.parametrize("n", [1, 2, 8])
def test_det_of_one_matrix(n: int) -> None:
    x = RNG.standard_normal((n, n)).astype(np.float32)
    got = glow_mlir.compile(_model([n, n]), cache=False).run({"x": x})["y"]
    np.testing.assert_allclose(got, np.linalg.det(x.astype(np.float64)), rtol=1e-4, atol=1e-5)


def test_det_of_a_non_square_input_is_an_error() -> None:
    with pytest.raises(ModelError, match=r"node 'det' \(Det\): the input must be \[\.\.\., n, n\], got 2x3"):
        glow_mlir.compile(_model([2, 3]), cache=False)
