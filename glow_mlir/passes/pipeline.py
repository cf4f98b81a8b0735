"""Textual pipelines: parsing, printing and running a mix of our Python passes and
upstream MLIR passes, with verification after every pass and a reproducer on failure."""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, TextIO, Union

from mlir import ir
from mlir.passmanager import PassManager
from .. import progress

from ..dialects.verifier import verify
from ..errors import CompileError
from .registry import PASSES, Pass, PassError, get_pass

Element = Union[Pass, str]  # a Python pass, or one upstream pipeline element as text


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside (), {} and quotes."""
    out, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ')' in pipeline '{text}'")
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if depth != 0 or quote:
        raise ValueError(f"unbalanced brackets in pipeline '{text}'")
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _parse_options(body: str) -> dict[str, str]:
    opts = {}
    for item in _split_top(body, " "):
        if not item:
            continue
        key, _, value = item.partition("=")
        opts[key.strip()] = value.strip()
    return opts


def parse_pipeline(text: str) -> list[Element]:
    """Parse ``builtin.module(a,b{opt=1},func.func(c))`` or ``a,b,...`` into elements."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module(") : -1]
    elements: list[Element] = []
    for item in _split_top(text):
        name, brace, rest = item.partition("{")
        name = name.strip()
        if name in PASSES:
            if brace and not rest.endswith("}"):
                raise ValueError(f"bad options in '{item}'")
            elements.append(get_pass(name).from_options(_parse_options(rest[:-1]) if brace else {}))
        else:
            elements.append(item)
    return elements


def pipeline_text(elements: list[Element]) -> str:
    """The textual form that ``glow-opt -p`` accepts."""
    return "builtin.module(" + ",".join(e.spec() if isinstance(e, Pass) else e for e in elements) + ")"


def _element_name(e: Element) -> str:
    return e.name if isinstance(e, Pass) else e


@dataclass
class RunOptions:
    """How a pipeline runs: what to print, and where reproducers go."""

    print_after_all: bool = False
    print_after_change: bool = False
    print_stream: TextIO = field(default_factory=lambda: sys.stderr)
    large_elements_limit: int | None = 16
    reproducer_dir: str | None = None
    write_reproducer: bool = True
    #: called with (element name, seconds) after each element
    on_timing: Callable[[str, float], None] | None = None


def _asm(module: ir.Operation, limit: int | None) -> str:
    return module.get_asm(large_elements_limit=limit, assume_verified=True)


def run_pipeline(module: ir.Operation, elements: list[Element], options: RunOptions | None = None) -> None:
    """Run ``elements`` in order on ``module`` (a builtin.module op), verifying after each.

    On failure raises :class:`CompileError` whose message names the pass, the error, the
    reproducer file holding the IR before that pass, and the glow-opt command to rerun it.
    """
    options = options or RunOptions()
    diags = verify(module)
    if diags:
        raise PipelineError(f"the input IR is invalid: {diags[0]}", [(d.location, d.message) for d in diags])
    groups: list[list[Element]] = []
    for e in elements:
        # consecutive upstream elements run in one PassManager, unless each must be printed
        if isinstance(e, str) and groups and isinstance(groups[-1][0], str) and not (
            options.print_after_all or options.print_after_change
        ):
            groups[-1].append(e)
        else:
            groups.append([e])
    for group in groups:
        label = ",".join(_element_name(e) for e in group)
        # A clone is cheap (attributes, weights included, are shared, not copied); printing the module,
        # weights and all, before every pass is not. It is printed only if the pass fails.
        before = module.clone()
        progress.step(label)
        start = time.perf_counter()
        try:
            if isinstance(group[0], Pass):
                group[0].run(module)
                diags = verify(module)
                if diags:
                    raise PassError(f"produced invalid IR: {diags[0]}",
                                    diagnostics=[(d.location, d.message) for d in diags])
            else:
                pm = PassManager.parse(pipeline_text(group), module.context)
                pm.run(module)
        except (PassError, ir.MLIRError, ValueError, TypeError, KeyError, IndexError, AssertionError) as exc:
            failure = _failure(group, _asm(before, None), exc, options)
            before.erase()
            raise failure from exc
        if options.on_timing:
            options.on_timing(label, time.perf_counter() - start)
        if options.print_after_all or options.print_after_change:
            if options.print_after_all or _asm(module, None) != _asm(before, None):
                print(f"// -----// IR Dump After {label} //----- //", file=options.print_stream)
                print(_asm(module, options.large_elements_limit), file=options.print_stream)
        before.erase()


class PipelineError(CompileError):
    """A pass failed. ``diagnostics`` holds (location, message) pairs for tooling."""

    def __init__(self, message: str, diagnostics: list):
        super().__init__(message)
        self.diagnostics = diagnostics


def _failure(group: list[Element], before: str, exc: Exception, options: RunOptions) -> PipelineError:
    if isinstance(exc, PassError):
        diagnostics = list(exc.diagnostics)
    elif isinstance(exc, ir.MLIRError):
        diagnostics = [(d.location, d.message) for d in exc.error_diagnostics]
    else:
        diagnostics = []
    detail = str(exc).strip().replace("\n", " ")
    where = ""
    if isinstance(exc, PassError) and exc.location is not None:
        where = f" at {exc.location}"
    message = f"pass '{_element_name(group[0])}' failed{where}: {detail}"
    if options.write_reproducer:
        directory = options.reproducer_dir or tempfile.gettempdir()
        os.makedirs(directory, exist_ok=True)
        name = _element_name(group[0]).split("(")[0].split("{")[0]
        fd, path = tempfile.mkstemp(prefix=f"glow-repro-{name}-", suffix=".mlir", dir=directory)
        with os.fdopen(fd, "w") as f:
            f.write(before)
        command = f"glow-opt {shlex.quote(path)} -p {shlex.quote(pipeline_text(group))}"
        message += f"\n  the IR before the pass is in {path}\n  reproduce with: {command}"
    return PipelineError(message, diagnostics)
