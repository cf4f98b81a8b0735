"""glowgraph-lower: node lowering to the primitive set (Glow's Lower.cpp). The backend
decides per node kind what it keeps (Glow's shouldLower) through the ``keep`` option."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mlir import ir

from ...dialects import glowgraph as gg
from ..registry import Pass
from ..utils import body_ops, functions, replace_op

Lowering = Callable[[ir.OpView], list[ir.Value]]


def lower_fully_connected(op: ir.OpView) -> list[ir.Value]:
    """FullyConnected(x, W, b) -> BatchedAdd(MatMul(x, W), b)."""
    return [gg.batched_add(gg.matmul(op.input, op.weights), op.bias)]


#: node name -> its lowering; a node kind missing here is already primitive.
LOWERINGS: dict[str, Lowering] = {
    "fully_connected": lower_fully_connected,

    # --- convolution, pooling and normalization (NHWC) ---

    # --- elementwise math, activations, comparisons and casts ---

    # --- data movement and shapes ---

    # --- reductions, softmax, normalization and batched matmul ---
}


def lower_node(op: ir.Operation, keep: frozenset[str]) -> bool:
    """Lower one node unless the backend keeps its kind; returns whether it changed."""
    dialect, _, kind = op.name.partition(".")
    if dialect != "glowgraph" or kind in keep or kind not in LOWERINGS:
        return False
    with ir.InsertionPoint(op), op.location:
        new = LOWERINGS[kind](op.opview)
    replace_op(op, new)
    return True


@dataclass(frozen=True)
class LowerNodes(Pass):
    """High-level node -> primitives, except the kinds in ``keep``."""

    name = "glowgraph-lower"
    summary = "Lower high-level glowgraph nodes to primitives, keeping the node kinds the backend lists"
    keep: tuple[str, ...] = ()

    def run(self, module: ir.Operation) -> None:
        keep = frozenset(self.keep)
        for func in functions(module):
            for op in body_ops(func):
                lower_node(op, keep)
