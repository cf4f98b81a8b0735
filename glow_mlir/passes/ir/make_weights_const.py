"""glowir-make-weights-const: a mutable weight no instruction writes, that is neither an input nor an output of
the program and holds a value, becomes const (Glow's makeWeightsConst): it can then live with the other constants.

  weight_var {mutability = "mutable", value = V}   -> weight_var {mutability = "const", value = V}

Inputs stay mutable although the program never writes them: the caller fills them before every run.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ..registry import Pass
from .liveness import MUTABLE, Liveness, programs


def never_written(lv: Liveness) -> list[ir.Operation]:
    """The weight_vars that can become const."""
    return [lv.definition[r] for r in lv.roots
            if lv.kinds[r] == MUTABLE and "value" in lv.definition[r].attributes
            and not any(a.writes for a in lv.accesses_of(r))]


@dataclass(frozen=True)
class MakeWeightsConst(Pass):
    """Mutable weights nothing writes -> const."""

    name = "glowir-make-weights-const"
    summary = "mark mutable weights that no instruction writes and that are no input or output as const"

    def run(self, module: ir.Operation) -> None:
        for func in programs(module):
            for op in never_written(Liveness(func)):
                op.attributes["mutability"] = ir.StringAttr.get("const", op.context)
