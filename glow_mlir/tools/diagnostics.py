"""``--verify-diagnostics``: match the errors a run produced against the
``// expected-error {{...}}`` comments of the input, as mlir-opt does."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlir import ir

_EXPECT = re.compile(r"//\s*expected-(error|warning|note|remark)\s*(@[+-]?\d+|@above|@below)?\s*\{\{(.*?)\}\}")


@dataclass
class Expected:
    line: int
    kind: str
    text: str
    matched: bool = False


@dataclass
class Actual:
    line: int | None
    kind: str
    message: str


def expectations(text: str) -> list[Expected]:
    """The expected diagnostics of a source buffer (lines are 1-based)."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        for m in _EXPECT.finditer(line):
            where = m.group(2)
            target = i
            if where == "@above":
                target = i - 1
            elif where == "@below":
                target = i + 1
            elif where:
                target = i + int(where[1:])
            out.append(Expected(target, m.group(1), m.group(3)))
    return out


def location_line(loc: ir.Location) -> int | None:
    """The source line of a location (file locations, or names/fused wrapping one)."""
    try:
        if loc.is_a_file():
            return loc.start_line
        if loc.is_a_name():
            return location_line(loc.child_loc)
        if loc.is_a_fused():
            for sub in loc.locations:
                line = location_line(sub)
                if line is not None:
                    return line
        if loc.is_a_callsite():
            return location_line(loc.callee)
    except (AttributeError, ValueError):
        pass
    return None


def check(expected: list[Expected], actual: list[Actual]) -> list[str]:
    """Problems found: unexpected diagnostics and expectations nothing met."""
    problems = []
    for a in actual:
        hit = next((e for e in expected if not e.matched and e.kind == a.kind and e.line == a.line
                    and e.text in a.message), None)
        if hit is None:
            problems.append(f"line {a.line}: unexpected {a.kind}: {a.message}")
        else:
            hit.matched = True
    for e in expected:
        if not e.matched:
            problems.append(f"line {e.line}: expected {e.kind} \"{e.text}\" was not produced")
    return problems
