"""Small helpers shared by passes: iterating graphs and ops, reading constants."""

from __future__ import annotations

from typing import Iterator

import numpy as np
from mlir import ir

from ..dialects import opdef_of
from ..dialects.optable import elements_to_numpy


def adjacent_runs(sequence: list[int]) -> list[list[int]]:
    """The runs of ``sequence`` whose items go up one at a time: the dims a permutation keeps next to each other and
    in order (NCHW -> NHWC, ``[0, 2, 3, 1]``: ``[[0], [2, 3], [1]]``)."""
    runs: list[list[int]] = []
    for item in sequence:
        if runs and runs[-1][-1] + 1 == item:
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


def functions(module: ir.Operation) -> Iterator[ir.Operation]:
    """The func.func ops of a module."""
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name == "func.func":
            yield op.operation


def body_ops(func: ir.Operation) -> list[ir.Operation]:
    """The ops of a function's entry block, as a list (safe to mutate the block while iterating)."""
    if not func.regions[0].blocks:
        return []
    return [op.operation for op in func.regions[0].blocks[0].operations]


#: the upstream loops a graph may hold (a glowgraph graph's control flow: dialects/control.py)
LOOP_OPS = ("scf.for", "scf.while")
#: every upstream op with regions a graph may hold: its loops and its ifs
REGION_OPS = (*LOOP_OPS, "scf.if")


def nested_blocks(op: ir.Operation) -> list[ir.Block]:
    """The blocks of a graph loop's or if's regions (a while's condition block, then its body; a for's body; an
    if's then and else blocks)."""
    return [b for r in op.regions for b in r.blocks] if op.name in REGION_OPS else []


def graph_ops(func: ir.Operation) -> list[ir.Operation]:
    """The ops of a function's entry block and, after each loop or if, those of its blocks, recursively: every node
    of a graph, wherever it sits (safe to mutate while iterating)."""
    out: list[ir.Operation] = []

    def visit(block: ir.Block) -> None:
        for op in block.operations:
            out.append(op.operation)
            for inner in nested_blocks(op.operation):
                visit(inner)

    if func.regions[0].blocks:
        visit(func.regions[0].blocks[0])
    return out


def has_trait(op: ir.Operation, trait: str) -> bool:
    """Whether ``op`` is a glowgraph/glowir op whose table row has ``trait``."""
    d = opdef_of(op)
    return d is not None and trait in d.traits


def constant_value(value: ir.Value) -> np.ndarray | None:
    """The numpy value of a glowgraph.constant result, else None."""
    owner = value.owner
    if not isinstance(owner, ir.OpView) and not isinstance(owner, ir.Operation):
        return None
    op = owner.operation
    if op.name != "glowgraph.constant":
        return None
    return elements_to_numpy(op.attributes["value"])


def is_constant(value: ir.Value) -> bool:
    """Whether ``value`` is produced by a glowgraph.constant."""
    owner = value.owner
    return isinstance(owner, (ir.OpView, ir.Operation)) and owner.operation.name == "glowgraph.constant"


def has_uses(op: ir.Operation) -> bool:
    return any(True for r in op.results for _ in r.uses)


def replace_op(op: ir.Operation, values: list[ir.Value]) -> None:
    """Make the users of ``op``'s results use ``values`` instead, then erase ``op``."""
    for old, new in zip(op.results, values):
        old.replace_all_uses_with(new)
    op.erase()
