"""Verification: MLIR's own verifier (IRDL constraints included) plus the op tables'
Python rules for what IRDL cannot express (element types, ranks, attribute values)."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from . import DIALECTS


@dataclass
class Diagnostic:
    """One verification error at a location."""

    location: ir.Location
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


def python_diagnostics(root: ir.Operation) -> list[Diagnostic]:
    """Run every glowgraph/glowir op's table rule; collect the failures."""
    out: list[Diagnostic] = []

    def visit(op: ir.Operation):
        dialect, _, name = op.name.partition(".")
        d = DIALECTS.get(dialect)
        if d is not None and name in d.ops:
            msg = d.verify_op(op)
            if msg is not None:
                out.append(Diagnostic(op.location, f"'{op.name}' op {msg}"))
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return out


def verify(root: ir.Operation, emit: bool = False) -> list[Diagnostic]:
    """Verify ``root``; returns the Python-rule failures (MLIR's raise MLIRError).
    With ``emit`` the failures are also emitted as MLIR error diagnostics."""
    root.verify()
    diags = python_diagnostics(root)
    if emit:
        for d in diags:
            d.location.emit_error(d.message)
    return diags
