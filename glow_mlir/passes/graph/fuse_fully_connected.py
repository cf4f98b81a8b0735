"""glowgraph-fuse-fully-connected: a matmul followed by the addition of a bias row is a fully_connected.

ONNX MatMul then Add (bert's projections, PyTorch's exported Linear layers) import as a matmul, often a reshape
that puts the batch dims back, and an add of the bias broadcast to the full output. The fully_connected kernel
starts from the bias and accumulates the product onto it: one pass over the output instead of two, and a bias of
one row instead of a constant of the output's size.

A transpose of constant weights needs no rewrite here: constant folding turns it into transposed weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from .patterns import PatternPass, constant, defined_by, known, only_user, replace, shape


def bias_row(value: ir.Value, rows: int, cols: int) -> np.ndarray | None:
    """The one row a known ``value`` holds when, viewed as [rows, cols], all its rows are equal; else None."""
    array = known(value)
    if array is None or array.size != rows * cols or array.dtype != np.float32:
        return None
    matrix = array.reshape(rows, cols)
    return np.array(matrix[0]) if bool(np.all(matrix == matrix[0])) else None


def matmul_add_bias(op: ir.Operation) -> bool:
    """Add(MatMul(x, W), B) -> FullyConnected(x, W, b) and Add(Reshape(MatMul(x, W)), B) ->
    Reshape(FullyConnected(x, W, b)), B known with equal rows b (either operand order); the matmul (and the
    reshape) feed only the add."""
    if op.name != "glowgraph.add":
        return False
    for product, other in ((op.operands[0], op.operands[1]), (op.operands[1], op.operands[0])):
        view = defined_by(product, "reshape")
        if view is not None and not only_user(product, op):
            continue
        inner = view.operands[0] if view is not None else product
        matmul = defined_by(inner, "matmul")
        if matmul is None or not only_user(inner, view if view is not None else op):
            continue
        rows, cols = shape(matmul.results[0])
        bias = bias_row(other, rows, cols)
        if bias is None:
            continue
        fc = gg.fully_connected(matmul.operands[0], matmul.operands[1], constant(bias))
        replace(op, [gg.reshape(fc, shape=shape(op.results[0])) if view is not None else fc])
        return True
    return False


PATTERNS = (matmul_add_bias,)


@dataclass(frozen=True)
class FuseFullyConnected(PatternPass):
    """Add(MatMul(x, W), Broadcast(b)) -> FullyConnected(x, W, b), through a reshape of the product too."""

    name = "glowgraph-fuse-fully-connected"
    summary = "Turn a matmul followed by a bias addition into a fully_connected"

    patterns = PATTERNS
