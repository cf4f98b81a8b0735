"""glow-compile: compile an ONNX model and show what each stage made of it, or write it as an ahead-of-time bundle
(Glow's model-compiler)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from mlir import ir

from ..api import BundleOptions, compile, emit_bundle, lower_model
from ..backend.bundle import OPT_LEVELS, BundleFiles
from ..backend.ir_dump import format_program, program_stats
from ..cache import cache_dir
from ..errors import GlowError
from ..explore import counts_table, node_counts
from ..graph_dot import graph_to_dot
from ..passes.ir.plan_memory import memory_report
from ..passes.utils import functions
from .common import (
    add_model_arguments,
    add_quantization_arguments,
    exit_with,
    model_options,
    progress_line,
    quantization_options,
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="glow-compile", description=__doc__)
    add_model_arguments(p, several=True)
    p.add_argument("--dump-graph", action="store_true", help="print the optimized glowgraph")
    p.add_argument("--dump-graph-dag", metavar="FILE.dot", help="write the optimized graph as Graphviz DOT")
    p.add_argument("--dump-ir", action="store_true",
                   help="print the optimized glowir program in Glow's style, with its memory plan")
    p.add_argument("--memory-report", action="store_true",
                   help="print the activation memory (naive, planned, lower bound) and weight regions as JSON")
    p.add_argument("--emit-mlir", metavar="DIR", help="write the .mlir of every stage into DIR")
    p.add_argument("--time-passes", action="store_true", help="print the time of each stage and pass")
    p.add_argument("--stats", action="store_true",
                   help="print the target and the node counts per kind after import, graph optimization and node "
                        "lowering")
    add_quantization_arguments(p.add_argument_group("int8 quantization"))
    bundle = p.add_argument_group("ahead-of-time bundles")
    bundle.add_argument("--emit-bundle", metavar="DIR",
                        help="write NAME.o, NAME.h and the weights (ENTRY.weights.bin) into DIR; with several -model, "
                             "one entry point per model, named after it")
    bundle.add_argument("--network-name", metavar="NAME",
                        help="the bundle's name (and with one model its entry point); default: the model's name")
    bundle.add_argument("--partitions", type=int, default=0, metavar="N",
                        help="cut each network into N partitions balanced by FLOPs, run in order by the entry point")
    bundle.add_argument("--memory-budget", type=int, default=0, metavar="BYTES",
                        help="cut each network into as few partitions as keep each one's activations within BYTES")
    bundle.add_argument("--emit-weights-txt", action="store_true",
                        help="also write the weights as a C array initializer (ENTRY.weights.txt)")
    bundle.add_argument("--weights-in-object", action="store_true",
                        help="also put the weights into NAME.o as read-only data (flash), the symbol "
                             "ENTRY_constantWeight: firmware links one object")
    bundle.add_argument("--max-stack", type=int, default=0, metavar="BYTES",
                        help="fail unless every entry point runs within BYTES of stack (its deepest call chain, the C "
                             "library's frames aside)")
    bundle.add_argument("--bundle-opt-level", choices=tuple(OPT_LEVELS),
                        help="LLVM's optimization of the bundle's object: O3 (default, speed, as the JIT), O2, or Os "
                             "and Oz for small code (firmware's flash; every function optsize, minsize)")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    options = model_options(args)
    options.quantization = quantization_options(args)
    bundling = [a for a in ("network_name", "partitions", "memory_budget", "emit_weights_txt", "weights_in_object",
                            "max_stack", "bundle_opt_level") if getattr(args, a)]
    if not args.emit_bundle and (bundling or len(args.model) > 1):
        what = f"--{bundling[0].replace('_', '-')}" if bundling else "several -model"
        raise GlowError(f"{what} needs --emit-bundle DIR")
    if not (args.dump_graph or args.dump_graph_dag or args.dump_ir or args.emit_mlir or args.time_passes
            or args.memory_report or args.stats or args.emit_bundle):
        return compile_only(args, options)
    options.emit_mlir_dir = args.emit_mlir
    until = "codegen" if args.emit_mlir or args.time_passes else "iropt"
    report: dict[str, object] = {}
    counts: dict[str, Counter[str]] = {}

    def on_stage(name: str, module: ir.Module) -> None:
        if args.stats and name in ("import", "optimize", "lower"):
            counts[name] = node_counts(module)
        if name == "lower":
            if args.dump_graph:
                print(module.operation.get_asm(large_elements_limit=16))
            if args.dump_graph_dag:
                Path(args.dump_graph_dag).write_text("".join(graph_to_dot(f) for f in functions(module.operation)))
        if name == "irgen" and args.memory_report:
            (stats,) = [program_stats(f) for f in functions(module.operation)]
            report.update(irgen_naive_bytes=stats.activation_bytes, irgen_lower_bound_bytes=stats.peak_activation_bytes)
        if name == "iropt":
            if args.dump_ir:
                print("\n".join(format_program(f) for f in functions(module.operation)))
            if args.memory_report:
                (planned,) = [memory_report(f).as_dict() for f in functions(module.operation)]
                report.update(planned)

    if args.emit_bundle:
        if args.emit_mlir and len(args.model) > 1:
            raise GlowError("--emit-mlir takes one model")
        bundle_options = BundleOptions(args.network_name, args.target_cpu or "native", args.partitions,
                                       args.memory_budget, args.emit_weights_txt, args.weights_in_object,
                                       args.max_stack, args.bundle_opt_level or "O3")
        # the progress line only where nothing else prints during the compile
        quiet = args.quiet or args.dump_graph or args.dump_ir
        with progress_line(argparse.Namespace(model=args.model, quiet=quiet)):
            files, lowered_list = emit_bundle(args.model, args.emit_bundle, bundle_options, options, on_stage)
        print(bundle_summary(files))
        lowered = lowered_list[0]
    else:
        lowered = lower_model(args.model[0], options, until=until, on_stage=on_stage)
    if args.memory_report:
        print(json.dumps({"model": lowered.imported.name, **report}))
    if args.stats:
        print(f"{lowered.imported.name}: target {options.target().describe()}")
        print(f"{lowered.imported.name}: nodes per kind (optimize: {'on' if options.optimize else 'off'})")
        print(counts_table(counts))
    if args.time_passes:
        total = sum(s.seconds for s in lowered.stages)
        print("===- glow-compile time report -===", file=sys.stderr)
        print(f"  {'seconds':>8}  {'%':>5}  stage / pass", file=sys.stderr)
        for s in lowered.stages:
            print(f"  {s.seconds:8.4f}  {100 * s.seconds / total:5.1f}  {s.name}", file=sys.stderr)
            for name, sec in s.pass_seconds:
                print(f"  {sec:8.4f}  {100 * sec / total:5.1f}    {name}", file=sys.stderr)
        print(f"  {total:8.4f}  100.0  total", file=sys.stderr)
    return 0


def compile_only(args, options) -> int:
    """Compile to machine code, through the compile cache unless --no-cache: a later glow-run or API compile of the
    same model with the same options loads it from there."""
    start = time.perf_counter()
    with progress_line(args):
        model = compile(args.model[0], **vars(options), cache=not args.no_cache)
    seconds = time.perf_counter() - start
    where = {"hit": f"loaded from the compile cache {cache_dir()}", "miss": f"stored in the compile cache {cache_dir()}",
             "off": "not cached"}[model.cache]
    print(f"{model.name}: compiled in {seconds:.2f} s, {options.thread_count()} thread(s); {where}. "
          "Use --dump-graph, --dump-ir, --memory-report, --stats, --emit-mlir DIR or --time-passes to see the stages")
    return 0


def bundle_summary(files: BundleFiles) -> str:
    """What a bundle holds, in a few lines: its files and sizes, and each network's partitions."""
    sizes = [f"{files.object.name} ({files.object.stat().st_size} bytes)", files.header.name]
    sizes += [f"{p.name} ({p.stat().st_size} bytes)" for p in (*files.weights.values(), *files.weights_txt.values())]
    lines = [f"bundle written to {files.directory} for CPU {files.target_cpu}: {', '.join(sizes)}"]
    if files.budget is not None:
        b = files.budget
        lines.append(f"  code: {b.text} bytes of .text, {b.rodata} of .rodata; deepest stack frame {b.max_stack_frame} "
                     f"bytes; stack {b.stack} bytes ({' -> '.join(b.stack_chain)}"
                     f"{', plus ' + ', '.join(b.external) if b.external else ''})")
    for network in files.networks:
        parts = "; ".join(f"{p.flops} FLOPs, {p.activation_bytes} activation bytes" for p in network.partitions)
        lines.append(f"  {network.entry}(): {len(network.partitions)} partition(s): {parts}")
        memory = network.program.memory
        lines.append(f"    flash (constant weights) {memory.constant_weights} bytes; RAM {memory.mutable_weights} "
                     f"(inputs and outputs) + {memory.activations} (activations) = "
                     f"{memory.mutable_weights + memory.activations} bytes")
    return "\n".join(lines)


def entry() -> None:
    exit_with("glow-compile", main)


if __name__ == "__main__":
    entry()
