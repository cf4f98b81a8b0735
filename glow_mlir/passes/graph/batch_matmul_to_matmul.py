"""glowgraph-batch-matmul-to-matmul: a batched product whose right-hand side is one matrix for every batch entry
is one 2-D product.

When the importer cannot see that the weights of a MatMul are shared by the whole batch (they become known only
after constant folding, or arrive broadcast), the product is a batch_matmul over a broadcast: B small products
reading B copies of the weights. Stacking the batch into the rows of the left-hand side (a free reshape) gives one
[B*M, K] x [K, N] product, which reads the weights once and runs the faster 2-D kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from .patterns import PatternPass, constant, known, replace, shape


def shared_matrix(value: ir.Value) -> np.ndarray | None:
    """The one [K, N] matrix every batch entry of a known [B, K, N] ``value`` holds, else None."""
    array = known(value)
    if array is None or not bool(np.all(array == array[0])):
        return None
    return np.array(array[0])


def batch_matmul_shared_rhs(op: ir.Operation) -> bool:
    """BatchMatMul(A[B,M,K], R) with every R[b] = W (a broadcast or a constant) ->
    Reshape(MatMul(Reshape(A, [B*M, K]), W), [B, M, N])."""
    if op.name != "glowgraph.batch_matmul":
        return False
    matrix = shared_matrix(op.operands[1])
    if matrix is None:
        return False
    b, m, k = shape(op.operands[0])
    rows = gg.reshape(op.operands[0], shape=[b * m, k])
    replace(op, [gg.reshape(gg.matmul(rows, constant(matrix)), shape=shape(op.results[0]))])
    return True


PATTERNS = (batch_matmul_shared_rhs,)


@dataclass(frozen=True)
class BatchMatMulToMatMul(PatternPass):
    """BatchMatMul(A, Broadcast(W)) -> Reshape(MatMul(Reshape(A), W))."""

    name = "glowgraph-batch-matmul-to-matmul"
    summary = "Turn a batched product with one shared constant right-hand side into a 2-D product"

    patterns = PATTERNS
