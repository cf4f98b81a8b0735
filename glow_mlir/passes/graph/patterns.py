"""What the graph rewrites share: reading producers, users and values known at compile time, replacing a node
and pruning what it leaves dead, and the sweep that applies a list of patterns until none applies.

A pattern is a function of one root op that returns whether it rewrote it. It fails early (the op kind first),
builds its replacement right before the root (the driver sets the insertion point and the root's location), and
replaces the root with :func:`replace`, which erases the root and the producers nothing uses any more. Rewrites
only erase the root and nodes before it, so a sweep over a snapshot of the block never meets an erased node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.optable import attr_to_python, elements_to_numpy, numpy_dtype, numpy_to_elements
from ..registry import Pass
from ..utils import functions, graph_ops, has_trait

Pattern = Callable[[ir.Operation], bool]


def producer(value: ir.Value) -> ir.Operation | None:
    """The op defining ``value``, or None for a block argument."""
    return value.owner.operation if isinstance(value, ir.OpResult) else None


def defined_by(value: ir.Value, kind: str) -> ir.Operation | None:
    """The op defining ``value`` when it is a ``glowgraph.<kind>``, else None."""
    op = producer(value)
    return op if op is not None and op.name == "glowgraph." + kind else None


def users(value: ir.Value) -> list[ir.Operation]:
    """The ops using ``value``, one entry per use."""
    return [u.owner.operation if isinstance(u.owner, ir.OpView) else u.owner for u in value.uses]


def only_user(value: ir.Value, op: ir.Operation) -> bool:
    """Whether every use of ``value`` is by ``op`` (possibly through several operands)."""
    return all(u == op for u in users(value))


def shape(value: ir.Value) -> list[int]:
    return list(ir.ShapedType(value.type).shape)


def attr(op: ir.Operation, name: str, kind: str):
    """Attribute ``name`` of ``op`` decoded as a plain Python value (None when absent)."""
    return attr_to_python(kind, op.attributes[name]) if name in op.attributes else None


def known(value: ir.Value) -> np.ndarray | None:
    """The value of a constant, a splat, or a broadcast of either, as a numpy array (a read-only broadcast view
    for splats and broadcasts: no copy of the full size); None when it is only known at run time."""
    op = producer(value)
    if op is None:
        return None
    if op.name == "glowgraph.constant":
        return elements_to_numpy(op.attributes["value"])
    if op.name == "glowgraph.splat":
        dtype = numpy_dtype(ir.ShapedType(value.type).element_type)
        return np.broadcast_to(np.array(attr(op, "value", "scalar"), dtype), shape(value))
    if op.name == "glowgraph.broadcast":
        inner = known(op.operands[0])
        return None if inner is None else np.broadcast_to(inner, shape(value))
    return None


def uniform(value: ir.Value) -> float | None:
    """The one value every element of a known ``value`` holds, else None."""
    array = known(value)
    if array is None or array.size == 0:
        return None
    first = array.flat[0]
    return first.item() if bool(np.all(array == first)) else None


def along(array: np.ndarray, axes: Sequence[int]) -> np.ndarray | None:
    """``array`` restricted to ``axes`` (the other dims taken at 0) when it does not vary along the other dims,
    else None: a per-channel constant broadcast over N, H and W gives its channel vector."""
    index = tuple(slice(None) if d in axes else 0 for d in range(array.ndim))
    part = array[index]
    kept = [n if d in axes else 1 for d, n in enumerate(array.shape)]
    return part if np.array_equal(np.broadcast_to(part.reshape(kept), array.shape), array) else None


def constant(array: np.ndarray) -> ir.Value:
    """A glowgraph constant holding ``array`` (a splat when uniform), at the current insertion point."""
    return gg.constant(value=numpy_to_elements(np.ascontiguousarray(array)))


def prune(ops: Iterable[ir.Operation | None]) -> None:
    """Erase the pure nodes among ``ops`` that nothing uses, and then their producers left unused.

    The dead nodes are all found before any is erased (a node can be reached twice, through a diamond, and an
    erased op must not be touched again), then erased users first."""
    dead: list[ir.Operation] = []
    stack = [op for op in ops if op is not None]
    while stack:
        op = stack.pop()
        if any(op == d for d in dead) or not has_trait(op, "pure"):
            continue
        if all(any(u == d for d in dead) for r in op.results for u in users(r)):
            dead.append(op)
            stack.extend(p for p in (producer(v) for v in op.operands) if p is not None)
    for op in dead:
        op.erase()


def replace(op: ir.Operation, values: Sequence[ir.Value]) -> None:
    """Make the users of ``op``'s results use ``values``, erase ``op``, and prune its producers left unused."""
    operands = [producer(v) for v in op.operands]
    for old, new in zip(op.results, values):
        old.replace_all_uses_with(new)
    op.erase()
    prune(dict.fromkeys(operands))


def apply_patterns(func: ir.Operation, patterns: Sequence[Pattern]) -> int:
    """Try ``patterns`` on every node in program order, sweeping again until a sweep changes nothing; returns the
    number of rewrites. A rewrite builds its replacement before the root, so the users of what it made come later
    in the same sweep and see it."""
    total = 0
    while True:
        count = 0
        for op in graph_ops(func):
            with ir.InsertionPoint(op), op.location:
                count += any(pattern(op) for pattern in patterns)
        total += count
        if not count:
            return total


@dataclass(frozen=True)
class PatternPass(Pass):
    """A pass that is its ``patterns``: each function swept with them until none applies (:func:`apply_patterns`)."""

    patterns: ClassVar[tuple[Pattern, ...]] = ()

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            apply_patterns(func, self.patterns)
