"""glowgraph-lower: node lowering to the primitive set (Glow's Lower.cpp). The backend
decides per node kind what it keeps (Glow's shouldLower) through the ``keep`` option."""

from __future__ import annotations

import math
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


# --- elementwise math, activations, comparisons and casts ---


def _splat(like: ir.Value, value: float) -> ir.Value:
    """``value`` filling a tensor of ``like``'s type."""
    return gg.splat(value=value, result_types=[like.type])


def lower_leaky_relu(op: ir.OpView) -> list[ir.Value]:
    """LeakyRelu(x) -> Select(CmpLT(x, 0), Mul(x, alpha), x)."""
    x = op.input
    return [gg.select(gg.cmp_lt(x, _splat(x, 0)), gg.mul(x, _splat(x, op.alpha)), x)]


def lower_prelu(op: ir.OpView) -> list[ir.Value]:
    """PRelu(x, slope) -> Select(CmpLT(x, 0), Mul(x, slope), x)."""
    x = op.input
    return [gg.select(gg.cmp_lt(x, _splat(x, 0)), gg.mul(x, op.slope), x)]


def lower_elu(op: ir.OpView) -> list[ir.Value]:
    """Elu(x) -> Select(CmpLT(x, 0), Mul(Sub(Exp(x), 1), alpha), x)."""
    x = op.input
    negative = gg.mul(gg.sub(gg.exp(x), _splat(x, 1)), _splat(x, op.alpha))
    return [gg.select(gg.cmp_lt(x, _splat(x, 0)), negative, x)]


def lower_hard_sigmoid(op: ir.OpView) -> list[ir.Value]:
    """HardSigmoid(x) -> Max(Min(Add(Mul(x, alpha), beta), 1), 0)."""
    x = op.input
    linear = gg.add(gg.mul(x, _splat(x, op.alpha)), _splat(x, op.beta))
    return [gg.max_(gg.min_(linear, _splat(x, 1)), _splat(x, 0))]


def lower_softplus(op: ir.OpView) -> list[ir.Value]:
    """Softplus(x) -> Add(Max(x, 0), Log(Add(Exp(Neg(Abs(x))), 1))), which never overflows."""
    x = op.input
    tail = gg.log(gg.add(gg.exp(gg.neg(gg.abs_(x))), _splat(x, 1)))
    return [gg.add(gg.max_(x, _splat(x, 0)), tail)]


def lower_gelu(op: ir.OpView) -> list[ir.Value]:
    """Gelu(x) -> Mul(Mul(x, 0.5), Add(Erf(Mul(x, 1/sqrt(2))), 1));
    Gelu(x){tanh} -> Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Mul(Mul(x, x), x), 0.044715)), sqrt(2/pi))), 1))."""
    x = op.input
    if op.approximate == "tanh":
        cube = gg.mul(gg.mul(x, x), x)
        inner = gg.mul(gg.add(x, gg.mul(cube, _splat(x, 0.044715))), _splat(x, math.sqrt(2 / math.pi)))
        phi = gg.tanh(inner)
    else:
        phi = gg.erf(gg.mul(x, _splat(x, 1 / math.sqrt(2))))
    return [gg.mul(gg.mul(x, _splat(x, 0.5)), gg.add(phi, _splat(x, 1)))]


#: node name -> its lowering; a node kind missing here is already primitive.
LOWERINGS: dict[str, Lowering] = {
    "fully_connected": lower_fully_connected,

    # --- convolution, pooling and normalization (NHWC) ---

    # --- elementwise math, activations, comparisons and casts ---
    "leaky_relu": lower_leaky_relu,
    "prelu": lower_prelu,
    "elu": lower_elu,
    "hard_sigmoid": lower_hard_sigmoid,
    "softplus": lower_softplus,
    "gelu": lower_gelu,

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
