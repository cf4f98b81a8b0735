"""glowgraph-constant-fold: evaluate nodes whose operands are all constants."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects import opdef_of
from ...dialects.optable import attr_to_python, numpy_to_elements
from ..registry import Pass, PassError
from ..utils import constant_value, functions, graph_ops, is_constant, replace_op


def _feeds_only_outputs(op: ir.Operation) -> bool:
    # Folding a node that only feeds graph outputs trades its compute for a copy of the
    # same size into the output buffer and a larger constant blob: no gain, so keep it.
    uses = [u.owner for r in op.results for u in r.uses]
    return bool(uses) and all(u.name == "func.return" for u in uses)


def fold_node(op: ir.Operation, max_elements: int) -> bool:
    """Replace ``op`` by constants if every operand is constant; returns whether it did."""
    opdef = opdef_of(op)
    if opdef is None or opdef.evaluate is None or "pure" not in opdef.traits or "constant" in opdef.traits:
        return False
    if not all(is_constant(v) for v in op.operands) or _feeds_only_outputs(op):
        return False
    if any(np.prod(ir.ShapedType(r.type).shape) > max_elements for r in op.results):
        return False
    args = [constant_value(v) for v in op.operands]
    attrs = {a.name: attr_to_python(a.kind, op.attributes[a.name]) for a in opdef.attrs if a.name in op.attributes}
    types = [r.type for r in op.results]
    try:
        with np.errstate(all="ignore"):
            values = opdef.evaluate(args, attrs, types)
    except (ValueError, ArithmeticError) as e:
        raise PassError(f"cannot evaluate '{op.name}' on its constant operands: {e}", op.location) from None
    with ir.InsertionPoint(op), op.location:
        constants = [gg.constant(value=numpy_to_elements(value)) for value in values]
    replace_op(op, constants)
    return True


@dataclass(frozen=True)
class ConstantFold(Pass):
    """Node(Constant a, Constant b) -> Constant(node(a, b)), for nodes that feed other nodes."""

    name = "glowgraph-constant-fold"
    summary = "Evaluate glowgraph nodes whose operands are all constants"
    max_elements: int = 1 << 24

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            # Program order: a folded node's constant is visible to its users in the same sweep.
            for op in graph_ops(func):
                fold_node(op, self.max_elements)
