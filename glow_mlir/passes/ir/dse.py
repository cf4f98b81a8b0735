"""glowir-dse: dead store elimination.

  I(@out b, ...)  -> (nothing)   when no later instruction reads what I wrote into b before b is overwritten
                                 whole, and b is not an output (an output's value leaves the program)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from .liveness import CONST, Liveness, OpMap, programs


def dead_stores(lv: Liveness) -> list[ir.Operation]:
    """The instructions whose every write is dead, found last first so that a store only a dead store read is
    dead too. Writes into constants are kept: they are no stores this pass can reason about."""
    dead = OpMap()
    for op in reversed(lv.instructions):
        writes = [a for a in lv.accesses_of_op(op) if a.writes]
        if writes and all(lv.kinds[a.region.root] != CONST and not lv.read_later(a.region, a.position, ignore=dead)
                          for a in writes):
            dead[op] = True
    return [op for op, _ in dict.values(dead)]


@dataclass(frozen=True)
class DeadStoreElimination(Pass):
    """I(@out b) whose result nobody reads -> (nothing)."""

    name = "glowir-dse"
    summary = "erase instructions whose written buffers are overwritten or dropped before any read"

    def run(self, module: ir.Operation) -> None:
        for func in programs(module):
            for op in dead_stores(Liveness(func)):
                op.erase()
