"""The glowgraph and glowir dialects, defined at run time through IRDL from op tables."""

from __future__ import annotations

from mlir import ir
from mlir._mlir_libs import _mlir as _cext
from mlir.dialects import irdl

from . import glowgraph, glowir
from .optable import Dialect

DIALECTS: dict[str, Dialect] = {d.name: d for d in (glowgraph.DIALECT, glowir.DIALECT)}

_cext.globals.append_dialect_search_prefix(__name__)


def load_dialects(ctx: ir.Context) -> None:
    """Define glowgraph and glowir in ``ctx`` from their op tables."""
    with ctx, ir.Location.unknown(ctx):
        defs = ir.Module.create()
        with ir.InsertionPoint(defs.body):
            for d in DIALECTS.values():
                d.emit_irdl()
        irdl.load_dialects(defs)


def make_context() -> ir.Context:
    """A fresh MLIR context with the upstream dialects and ours loaded."""
    ctx = ir.Context()
    ctx.enable_multithreading(False)
    load_dialects(ctx)
    return ctx


def opdef_of(op: ir.Operation):
    """The op-table row of a glowgraph/glowir op, or None for other dialects."""
    dialect, _, name = op.name.partition(".")
    d = DIALECTS.get(dialect)
    return d.ops.get(name) if d else None
