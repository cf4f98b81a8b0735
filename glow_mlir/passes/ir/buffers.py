"""Edits of glowir buffers that several passes share: storing one buffer inside another, and view helpers."""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from ...dialects import glowir as gi
from .liveness import ACTIVATION, Liveness, Region, unflatten


def view_of(region: Region, type_: ir.Type, before: ir.Operation) -> ir.Value:
    """A value of ``type_`` naming ``region``: its root itself when they match, else a new ``tensor_view`` of the
    root placed before ``before``."""
    root = region.root
    if root.type == type_ and region.start == 0:
        return root
    shape = list(ir.ShapedType(root.type).shape)
    offsets = unflatten(shape, region.start) if region.start else None
    with ir.InsertionPoint(before), before.location:
        return gi.tensor_view(root, offsets=offsets, result_types=[type_])


def store_in(lv: Liveness, a: ir.Value, target: Region) -> None:
    """Make activation ``a`` live in ``target``: every use of ``a`` becomes a use of that range, and ``a``'s
    alloc and deallocs go. When the target is an activation it is allocated before ``a`` was and freed at the later
    of the two frees, so the merged buffer covers both lives. The caller checked that this is legal."""
    alloc = lv.definition[a]
    target_def = lv.definition[target.root]
    if lv.kinds[target.root] == ACTIVATION:
        if lv.position[target_def] > lv.position[alloc]:
            target_def.move_before(alloc)
        mine, theirs = lv.deallocs.get(a, []), lv.deallocs.get(target.root, [])

        def end(frees: list[ir.Operation]) -> int:  # never freed: lives to the end
            return max((lv.position[d] for d in frees), default=len(lv.ops))

        if end(mine) > end(theirs):
            # the merged buffer is freed where `a` was
            for d in theirs:
                d.erase()
            if mine:
                keep = max(mine, key=lambda d: lv.position[d])
                keep.operands[0] = target.root
                mine = [d for d in mine if d != keep]
        for d in mine:
            d.erase()
    else:
        for d in lv.deallocs.get(a, []):
            d.erase()
    a.replace_all_uses_with(view_of(target, a.type, alloc))
    alloc.erase()


def rewrite_instructions(func: ir.Operation, rewrite: Callable[[Liveness, ir.Operation], bool]) -> int:
    """Call ``rewrite(liveness, instruction)`` on each instruction in order until none applies; returns how many
    applied. The liveness is recomputed after each rewrite that applied, and the same instruction is offered again
    (the rewrites here erase at most that instruction and only move declarations, so the order of the remaining
    instructions, hence the index, stays valid). Each rewrite must remove a buffer, so this ends."""
    count, i = 0, 0
    lv = Liveness(func)
    while i < len(lv.instructions):
        if rewrite(lv, lv.instructions[i]):
            count += 1
            lv = Liveness(func)
        else:
            i += 1
    return count
