"""glowir-hoist-deallocs: free every activation right after the last instruction that touches it.

  I(b); J; dealloc_activation(b)   -> I(b); dealloc_activation(b); J      (J does not touch b)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from .liveness import Liveness, programs


def hoist_deallocs(lv: Liveness) -> int:
    """Move each activation's dealloc right after its last access (one dealloc per buffer is kept); returns how
    many moved. Buffers in reverse allocation order, so deallocs after one instruction keep allocation order."""
    moved = 0
    for root in reversed(lv.activations()):
        frees = lv.deallocs.get(root, [])
        accesses = lv.accesses_of(root)
        if not frees or not accesses:
            continue
        for extra in frees[:-1]:
            extra.erase()
        last = accesses[-1].op
        if lv.position[frees[-1]] != lv.position[last] + 1:
            moved += 1
        frees[-1].move_after(last)
    return moved


@dataclass(frozen=True)
class HoistDeallocs(Pass):
    """Deallocs move up to right after the last use of their buffer."""

    name = "glowir-hoist-deallocs"
    summary = "free each activation right after the last instruction that touches it"

    def run(self, module: ir.Operation) -> None:
        for func in programs(module):
            hoist_deallocs(Liveness(func))
