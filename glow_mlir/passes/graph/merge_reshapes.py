"""glowgraph-merge-reshapes: a chain of reshapes is one reshape.

The importer makes a reshape for every Reshape, Flatten, Squeeze, Unsqueeze and keepdims, and for the 2-D views
of MatMul and Tile: chains of them are common (bert's attention has three in a row). A reshape is free in the
buffers (a view), but a chain hides from the other rewrites what a value is a view of.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects import glowgraph as gg
from .eliminate_noops import identity_view
from .patterns import PatternPass, defined_by, replace, shape


def reshape_of_reshape(op: ir.Operation) -> bool:
    """Reshape(Reshape(x)) -> Reshape(x), and -> x when that is x's shape."""
    if op.name != "glowgraph.reshape":
        return False
    inner = defined_by(op.operands[0], "reshape")
    if inner is None:
        return False
    x = inner.operands[0]
    replace(op, [x if x.type == op.results[0].type else gg.reshape(x, shape=shape(op.results[0]))])
    return True


PATTERNS = (identity_view, reshape_of_reshape)


@dataclass(frozen=True)
class MergeReshapes(PatternPass):
    """Reshape(Reshape(x)) -> Reshape(x); Reshape(x) to x's shape -> x."""

    name = "glowgraph-merge-reshapes"
    summary = "Merge chains of reshapes into one reshape"

    patterns = PATTERNS
