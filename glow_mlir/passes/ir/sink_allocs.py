"""glowir-sink-allocs: declare every activation and view right before its first user.

  b = alloc_activation; J; I(b)   -> J; b = alloc_activation; I(b)       (J does not use b)
  v = tensor_view(b); J; I(v)     -> J; v = tensor_view(b); I(v)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from ..utils import body_ops
from .liveness import programs

_SINKABLE = ("glowir.alloc_activation", "glowir.tensor_view")


def top_level(op: ir.Operation, block: ir.Block) -> ir.Operation:
    """``op``, or the op of ``block`` that holds it (the loop whose body uses a buffer)."""
    while op.parent is not None and op.block != block:
        op = op.parent.operation
    return op


def first_user(value: ir.Value) -> ir.Operation | None:
    """The earliest op in the value's block that uses ``value``, itself or inside its body."""
    first = None
    block = value.owner.operation.block if isinstance(value, ir.OpResult) else value.owner
    for use in value.uses:
        user = top_level(use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner, block)
        if first is None or user.is_before_in_block(first):
            first = user
    return first


def sink_declarations(func: ir.Operation) -> int:
    """Move each alloc and view right before its first user, last first (a view moves before its source does,
    so the source then follows it down); returns how many ops were considered."""
    count = 0
    for op in reversed(body_ops(func)):
        if op.name in _SINKABLE:
            user = first_user(op.results[0])
            if user is not None:
                op.move_before(user)
                count += 1
    return count


@dataclass(frozen=True)
class SinkAllocs(Pass):
    """Allocs (and views) move down to right before their first user."""

    name = "glowir-sink-allocs"
    summary = "declare each activation and view right before its first user"

    def run(self, module: ir.Operation) -> None:
        for func in programs(module):
            sink_declarations(func)
