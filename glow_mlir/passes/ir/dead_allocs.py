"""glowir-dead-allocs: erase buffers no instruction touches.

  b = alloc_activation; [tensor_view(b)...]; dealloc_activation(b)   -> (nothing)   when no instruction uses b
  w = weight_var const, with no users                                -> (nothing)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from .liveness import ACTIVATION, CONST, Liveness, programs


def dead_buffers(lv: Liveness) -> list[ir.Value]:
    """Activations no instruction accesses (through any view), and constants nothing uses."""
    return [r for r in lv.roots if (lv.kinds[r] == ACTIVATION and not lv.accesses_of(r))
            or (lv.kinds[r] == CONST and not any(True for _ in r.uses))]


def erase_buffer(root: ir.Value) -> None:
    """Erase the declaration of ``root`` and every op using it (deallocs, views and their users, all unused)."""
    users = [use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner for use in root.uses]
    for user in users:
        if user.name == "glowir.tensor_view":
            erase_buffer(user.results[0])  # erases the view itself last
        else:
            user.erase()
    root.owner.operation.erase()


@dataclass(frozen=True)
class DeadAllocs(Pass):
    """alloc/dealloc pairs with no other use -> (nothing)."""

    name = "glowir-dead-allocs"
    summary = "erase activations no instruction uses, with their views and deallocs, and unused constants"

    def run(self, module: ir.Operation) -> None:
        for func in programs(module):
            for root in dead_buffers(Liveness(func)):
                erase_buffer(root)
