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
    of the two frees, so the merged buffer covers both lives. The caller checked that this is legal; ``lv`` is
    kept up to date."""
    alloc = lv.definition[a]
    mine = lv.deallocs.pop(a, [])
    if lv.kinds[target.root] == ACTIVATION:
        target_def = lv.definition[target.root]
        if alloc.is_before_in_block(target_def):
            target_def.move_before(alloc)
        theirs = lv.deallocs.get(target.root, [])

        def end(frees: list[ir.Operation]) -> int:  # never freed: lives to the end
            return max((lv.position[d] for d in frees), default=len(lv.ops))

        if end(mine) > end(theirs):
            # the merged buffer is freed where `a` was
            for d in theirs:
                d.erase()
            lv.deallocs[target.root] = []
            if mine:
                keep = max(mine, key=lambda d: lv.position[d])
                keep.operands[0] = target.root
                lv.deallocs[target.root] = [keep]
                mine = [d for d in mine if d != keep]
    for d in mine:
        d.erase()
    replacement = view_of(target, a.type, alloc)
    a.replace_all_uses_with(replacement)
    alloc.erase()
    lv.merged(a, target, replacement)


def rewrite_instructions(func: ir.Operation, rewrite: Callable[[Liveness, ir.Operation], bool]) -> int:
    """Call ``rewrite(liveness, instruction)`` on each instruction in order until none applies; returns how many
    applied. A rewrite keeps the liveness up to date and may erase only the instruction it is given; that one is
    offered again when it survives (another operand pair may apply). Each rewrite removes a buffer, so this ends."""
    count, i = 0, 0
    lv = Liveness(func)
    while i < len(lv.instructions):
        if rewrite(lv, lv.instructions[i]):
            count += 1
        else:
            i += 1
    return count
