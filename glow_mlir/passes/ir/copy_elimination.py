"""glowir-copy-elimination: copies between buffers whose lives only meet at the copy disappear (Glow's copy
propagation), forward and backward:

  I(@out a); ...; copy(b, a)   -> I(@out b); ...          a's life ends at the copy: its producer writes b directly
  copy(b, a); ...; J(@in b)    -> ...; J(@in a)           b's life starts at the copy: its users read a, when a's
                                                          value dies there or stays unchanged while b is read

a and b may be views (reshapes): the buffer that goes is then stored in the matching range of the other one.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from .buffers import rewrite_instructions, store_in
from .liveness import Liveness, defining_op, interferes, programs, shares_value


def eliminate_copy(lv: Liveness, op: ir.Operation) -> bool:
    """Remove ``op`` when it is a copy that storing one side in the other makes a copy onto itself."""
    if op.name != "glowir.copy":
        return False
    dest, src = (lv.regions[v] for v in op.operands)
    if src == lv.regions[src.root] and not interferes(lv, src.root, dest, op, 1, 0):
        store_in(lv, src.root, dest)  # forward: the producer of src writes dest
    elif dest == lv.regions[dest.root] and (not interferes(lv, dest.root, src, op, 0, 1)
                                            or shares_value(lv, dest.root, src, op)):
        store_in(lv, dest.root, src)  # backward: the readers of dest read src
    else:
        return False
    views = [defining_op(v) for v in op.operands]
    lv.erased(op)
    op.erase()
    for view in views:  # the copy may have been the last user of a view (of a reshape)
        if view is not None and view.name == "glowir.tensor_view" and not any(True for _ in view.results[0].uses):
            lv.erased(view)
            view.erase()
    return True


@dataclass(frozen=True)
class CopyElimination(Pass):
    """copy(b, a) where a dies or b is born at the copy -> one buffer."""

    name = "glowir-copy-elimination"
    summary = "remove copies by storing their source in their destination, or the other way round"

    def run(self, module: ir.Operation) -> None:
        for func in programs(module):
            rewrite_instructions(func, eliminate_copy)
