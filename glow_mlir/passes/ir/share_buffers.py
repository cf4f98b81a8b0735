"""glowir-share-buffers: an elementwise instruction runs in place when one of its inputs dies there (Glow's
shareBuffers); whether an op may is read from the op table (its ``elementwise`` trait and operand roles, see
:func:`.liveness.inplace_safe`), never from a list of op names.

  a = alloc; I(@out a, @in x)   -> I(@out x, @in x)    x dies at I: a lives in x's memory
  I(@out y, @in x)              -> I(@out y, @in y)    x dies at I and nothing touches y while x lives:
                                                       x's producer writes y, and I runs in place on it

Buffers whose lives end before an instruction starts writing are left to the memory plan
(glowir-plan-memory), which places them at the same offsets without merging their lives here: a merged buffer
would be live in the gap between the two lives, where a third buffer could have used the memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..conversion.ir_program import operand_roles
from ..registry import Pass
from .buffers import rewrite_instructions, store_in
from .liveness import Liveness, inplace_safe, interferes, programs


def share_at(lv: Liveness, op: ir.Operation) -> bool:
    """Store one buffer of ``op`` in another so that ``op`` runs in place; whether one was."""
    roles = operand_roles(op)
    for k, out_role in enumerate(roles):
        for j, in_role in enumerate(roles):
            if out_role != "out" or in_role != "in" or not inplace_safe(op, k, j):
                continue
            dest, src = lv.regions[op.operands[k]], lv.regions[op.operands[j]]
            if dest == src:
                continue
            if dest == lv.regions[dest.root] and not interferes(lv, dest.root, src, op, k, j):
                store_in(lv, dest.root, src)  # the output is born here in the dying input
                return True
            if src == lv.regions[src.root] and not interferes(lv, src.root, dest, op, j, k):
                store_in(lv, src.root, dest)  # the dying input was already the output
                return True
    return False


@dataclass(frozen=True)
class ShareBuffers(Pass):
    """Elementwise instructions whose input dies there run in place."""

    name = "glowir-share-buffers"
    summary = "run elementwise instructions in place on an input that dies there (from the op table's traits)"

    def run(self, module: ir.Operation) -> None:
        for func in programs(module):
            rewrite_instructions(func, share_at)
