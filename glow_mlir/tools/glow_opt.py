"""glow-opt: run glow_mlir and upstream passes on a .mlir file, in the manner of mlir-opt."""

from __future__ import annotations

import argparse
import sys

from mlir import ir

from ..backend import cpu
from ..dialects import make_context
from ..dialects.verifier import python_diagnostics
from ..errors import GlowError
from ..passes import pipelines
from ..passes.pipeline import Element, PipelineError, RunOptions, parse_pipeline, run_pipeline
from ..passes.registry import PASSES, get_pass
from .common import exit_with
from .diagnostics import Actual, check, expectations, location_line

SPLIT_MARKER = "// -----"


class _AppendPass(argparse.Action):
    """Keep pass flags and -p in command-line order, as mlir-opt does."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = getattr(namespace, "pipeline_items", None) or []
        items.append(values if isinstance(values, str) else self.const)
        namespace.pipeline_items = items


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="glow-opt", description=__doc__)
    p.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' for stdin)")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    p.add_argument("-p", "--pass-pipeline", action=_AppendPass, dest="pipeline_items",
                   help="a textual pipeline, e.g. 'builtin.module(glowgraph-dce,glowgraph-cse)'")
    p.add_argument("--lower-to-llvm", action=_AppendPass, nargs=0, const=cpu.lower_to_llvm_text(),
                   dest="pipeline_items", help="run every stage from glowgraph to the LLVM dialect (CPU backend)")
    for name in PASSES:
        p.add_argument(f"--{name}", action=_AppendPass, nargs=0, const=name, dest="pipeline_items",
                       help=get_pass(name).summary)
    p.add_argument("--split-input-file", action="store_true", help="process chunks separated by '// -----' alone")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check diagnostics against expected-error comments")
    p.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass")
    p.add_argument("--mlir-print-ir-after-change", action="store_true",
                   help="print the IR after every pass that changed it")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    p.add_argument("--mlir-elide-elementsattrs-if-larger", type=int, default=None, metavar="N",
                   help="elide element attributes with more than N elements")
    p.add_argument("--list-passes", action="store_true", help="list the registered passes and pipelines")
    p.add_argument("--reproducer-dir", default=None, help="where failing passes leave the IR (default: temp dir)")
    return p


def list_passes() -> str:
    lines = ["Passes:"]
    for name in PASSES:
        cls = get_pass(name)
        opts = ", ".join(f.name.replace("_", "-") for f in cls.options())
        lines.append(f"  {name:34} {cls.summary}" + (f" [options: {opts}]" if opts else ""))
    lines.append("Pipelines (glow-opt -p accepts the text after '='):")
    for name in pipelines.PIPELINES:
        lines.append(f"  {name} = {pipelines.text(name)}")
    lines.append(f"  lower-to-llvm = {cpu.lower_to_llvm_text()}")
    return "\n".join(lines)


def _print_module(module: ir.Module, args) -> str:
    return module.operation.get_asm(large_elements_limit=args.mlir_elide_elementsattrs_if_larger,
                                    enable_debug_info=args.mlir_print_debuginfo)


def process_chunk(text: str, ctx: ir.Context, elements: list[Element], args, first_line: int) -> tuple[str, list[Actual]]:
    """Parse, verify and transform one buffer; returns the output and the diagnostics
    (as errors, with lines relative to the buffer)."""
    actual: list[Actual] = []

    def collect(loc: ir.Location, message: str, kind: str = "error") -> None:
        actual.append(Actual(location_line(loc), kind, message))

    def on_diag(d) -> bool:
        collect(d.location, d.message, str(d.severity).rsplit(".", 1)[-1].lower())
        return True

    handler = ctx.attach_diagnostic_handler(on_diag)
    try:
        try:
            module = ir.Module.parse(text, ctx)
            module.operation.verify()
        except ir.MLIRError as e:
            for d in e.error_diagnostics:
                collect(d.location, d.message)
            return "", actual
        for d in python_diagnostics(module.operation):
            collect(d.location, d.message)
        if actual:
            return "", actual
        options = RunOptions(print_after_all=args.mlir_print_ir_after_all,
                             print_after_change=args.mlir_print_ir_after_change,
                             large_elements_limit=args.mlir_elide_elementsattrs_if_larger,
                             reproducer_dir=args.reproducer_dir,
                             write_reproducer=not args.verify_diagnostics)
        try:
            run_pipeline(module.operation, elements, options)
        except PipelineError as e:
            if not e.diagnostics:
                actual.append(Actual(None, "error", str(e)))
            for loc, message in e.diagnostics:
                collect(loc, message)
            if not args.verify_diagnostics:
                raise
            return "", actual
        return _print_module(module, args), actual
    finally:
        handler.detach()


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.list_passes:
        print(list_passes())
        return 0
    try:
        elements: list[Element] = []
        for item in args.pipeline_items or []:
            elements.extend(parse_pipeline(item))
    except (ValueError, KeyError) as e:
        raise GlowError(f"bad pass pipeline: {e}") from None
    try:
        source = sys.stdin.read() if args.input == "-" else open(args.input).read()
    except OSError as e:
        raise GlowError(f"cannot read '{args.input}': {e.strerror}") from None
    name = "<stdin>" if args.input == "-" else args.input
    chunks = [source]
    starts = [1]
    if args.split_input_file:
        chunks, starts, line = [], [], 1
        cur: list[str] = []
        start = 1
        for raw in source.splitlines(keepends=True):
            if raw.strip() == SPLIT_MARKER:
                chunks.append("".join(cur))
                starts.append(start)
                cur, start = [], line + 1
            else:
                cur.append(raw)
            line += 1
        chunks.append("".join(cur))
        starts.append(start)
    ctx = make_context()
    outputs, failures = [], []
    for chunk, start in zip(chunks, starts):
        output, actual = process_chunk(chunk, ctx, elements, args, start)
        if args.verify_diagnostics:
            for problem in check(expectations(chunk), actual):
                line, _, rest = problem.partition(": ")
                lineno = line.removeprefix("line ")
                absolute = int(lineno) + start - 1 if lineno.isdigit() else "?"
                failures.append(f"{name}:{absolute}: {rest}")
        elif actual:
            for a in actual:
                where = f"{name}:{a.line + start - 1}" if a.line is not None else name
                print(f"{where}: {a.kind}: {a.message}", file=sys.stderr)
            return 1
        outputs.append(output)
    if failures:
        for f in failures:
            print(f, file=sys.stderr)
        return 1
    text = f"\n{SPLIT_MARKER}\n".join(o.rstrip("\n") for o in outputs) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


def entry() -> None:
    exit_with("glow-opt", main)


if __name__ == "__main__":
    entry()
