"""glowgraph-merge-matmuls: products of one input with several constant weights become one product.

Attention layers exported without a fused QKV projection multiply one activation by three weight matrices; one
matmul with the weights side by side reads the activation once and runs one larger, more efficient kernel. The
results are then column slices of the merged product, which bufferization copies out (a column slice is not
contiguous): it pays when each slice is narrower than the activation, the copy of an [M, N_i] slice costing no more
than the [M, K] read of the activation it saves. Fully connected nodes merge the same way, biases side by side.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ..registry import Pass
from ..utils import body_ops, functions
from .patterns import constant, known, replace, shape

_KINDS = ("glowgraph.matmul", "glowgraph.fully_connected")


def pays(k: int, widths: list[int]) -> bool:
    """Whether merging products of an [M, K] input into results of ``widths`` columns saves memory traffic."""
    return len(widths) > 1 and all(n <= k for n in widths)


def merge_group(ops: list[ir.Operation]) -> None:
    """MatMul(x, W1), ..., MatMul(x, Wn) -> Slice(MatMul(x, Concat(W1..Wn))) per user, and likewise
    FullyConnected(x, Wi, bi) -> Slice(FullyConnected(x, Concat(Wi), Concat(bi))); built before the first."""
    weights = [known(op.operands[1]) for op in ops]
    widths = [w.shape[1] for w in weights]
    first = ops[0]
    with ir.InsertionPoint(first), first.location:
        merged_weights = constant(np.concatenate(weights, axis=1))
        x = first.operands[0]
        if first.name == "glowgraph.matmul":
            merged = gg.matmul(x, merged_weights)
        else:
            merged = gg.fully_connected(x, merged_weights, constant(np.concatenate([known(op.operands[2])
                                                                                      for op in ops])))
        rows, start = shape(x)[0], 0
        slices = []
        for n in widths:
            slices.append(gg.slice_(merged, starts=[0, start], sizes=[rows, n]))
            start += n
    for op, part in zip(ops, slices):
        replace(op, [part])


def mergeable_groups(func: ir.Operation) -> list[list[ir.Operation]]:
    """The matmuls (and fully connected nodes) of ``func`` grouped by input and kind, constant weights (and biases)
    only, in program order; the groups where merging pays."""
    groups: dict[tuple, list[ir.Operation]] = defaultdict(list)
    for op in body_ops(func):
        if op.name not in _KINDS or any(known(v) is None for v in op.operands[1:]):
            continue
        groups[(op.name, op.operands[0])].append(op)
    return [ops for (_, x), ops in groups.items() if pays(shape(x)[1], [shape(op.results[0])[1] for op in ops])]


@dataclass(frozen=True)
class MergeMatMuls(Pass):
    """MatMul(x, W1), MatMul(x, W2) -> Slice(MatMul(x, Concat(W1, W2))) each, W1 and W2 constants; the same for
    FullyConnected with the biases concatenated."""

    name = "glowgraph-merge-matmuls"
    summary = "Merge products of one input with several constant weights into one product and slices"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            for group in mergeable_groups(func):
                merge_group(group)
