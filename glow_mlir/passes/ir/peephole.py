"""glowir-peephole: local simplifications of views and copies.

  tensor_view(x) : T -> T                  -> x                   (a view of the same type is its source)
  tensor_view(tensor_view(x, o1), o2)      -> tensor_view(x, o)   (o: the flat offsets o1 + o2 in x's shape)
  copy(x, x)                               -> (nothing)           (same range: the copy writes what is there)
  tensor_view(x) with no users             -> (nothing)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from ..utils import body_ops
from .buffers import view_of
from .liveness import Liveness, Region, defining_op, flat_offset, numel, programs

VIEW = "glowir.tensor_view"


def _offsets(view: ir.Operation) -> list[int]:
    return [int(x) for x in ir.DenseI64ArrayAttr(view.attributes["offsets"])] if "offsets" in view.attributes else []


def fold_identity_view(op: ir.Operation) -> bool:
    """tensor_view(x) : T -> T  ->  x."""
    if op.name != VIEW or op.results[0].type != op.operands[0].type:
        return False
    op.results[0].replace_all_uses_with(op.operands[0])
    op.erase()
    return True


def fold_view_of_view(op: ir.Operation) -> bool:
    """tensor_view(tensor_view(x, o1), o2)  ->  tensor_view(x, o1 + o2)."""
    inner = defining_op(op.operands[0]) if op.name == VIEW else None
    if inner is None or inner.name != VIEW:
        return False
    root = inner.operands[0]
    start = flat_offset(list(ir.ShapedType(root.type).shape), _offsets(inner)) \
        + flat_offset(list(ir.ShapedType(inner.results[0].type).shape), _offsets(op))
    folded = view_of(Region(root, start, numel(op.results[0].type)), op.results[0].type, op)
    op.results[0].replace_all_uses_with(folded)
    op.erase()
    return True


def is_self_copy(lv: Liveness, op: ir.Operation) -> bool:
    """copy(x, x): a copy whose destination and source are the same range."""
    return op.name == "glowir.copy" and lv.regions[op.operands[0]] == lv.regions[op.operands[1]]


def erase_unused_view(op: ir.Operation) -> bool:
    """tensor_view(x) with no users -> (nothing)."""
    if op.name != VIEW or any(True for _ in op.results[0].uses):
        return False
    op.erase()
    return True


def simplify(func: ir.Operation) -> int:
    """Apply the rewrites to one program; returns how many applied."""
    count = 0
    for op in body_ops(func):
        count += fold_identity_view(op) or fold_view_of_view(op)
    lv = Liveness(func)
    for op in lv.instructions:
        if is_self_copy(lv, op):
            op.erase()
            count += 1
    for op in reversed(body_ops(func)):  # users first, so a chain of unused views goes in one sweep
        count += erase_unused_view(op)
    return count


@dataclass(frozen=True)
class Peephole(Pass):
    """Local simplifications of views and copies."""

    name = "glowir-peephole"
    summary = "fold views of the same type and views of views, erase self-copies and unused views"

    def run(self, module: ir.Operation) -> None:
        for func in programs(module):
            simplify(func)

