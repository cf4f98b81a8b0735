"""Named pipelines, as data. Each entry is (pipeline element, why it sits there);
``pipeline_text`` of a list gives the one string that ``glow-opt -p`` accepts."""

from __future__ import annotations

from .pipeline import Element, parse_pipeline, pipeline_text

Entry = tuple[str, str]

#: glowgraph -> glowgraph: domain optimizations on the high-level graph.
GRAPH_OPTIMIZATION: list[Entry] = [
    ("glowgraph-constant-fold", "evaluate nodes whose inputs are all constants (weight transposes, shape math)"),
    ("glowgraph-sink-transposes", "cancel the layout transposes the importer puts around NHWC nodes; after folding, "
     "so that broadcast constants are constants it can transpose at compile time, and before CSE and DCE, which "
     "merge the transposes it moves and drop the constants it replaces"),
    ("glowgraph-cse", "merge identical nodes, constants included, so later passes see one value"),
    ("glowgraph-dce", "drop nodes nothing uses: dead outputs and the constants folding left behind"),
]

#: glowgraph -> glowgraph: node lowering to the primitive set (a backend sets the keep list: backend/cpu.py).
NODE_LOWERING: list[Entry] = [
    ("glowgraph-lower", "lower high-level nodes the CPU backend has no kernel for (Glow's Lower.cpp)"),
    ("glowgraph-cse", "lowering can duplicate broadcasts and constants"),
    ("glowgraph-dce", "remove what lowering made dead"),
]

#: glowgraph -> glowir: Glow's IRGen, the bufferization step.
IR_GENERATION: list[Entry] = [
    ("convert-glowgraph-to-glowir", "give every value a buffer: weights, activations with alloc/dealloc"),
]

#: glowir -> glowir: Glow's IROptimizer, which shortens and merges buffer lives so less memory is needed.
IR_OPTIMIZATION: list[Entry] = [
    ("glowir-peephole", "fold views of views and same-type views, so the passes below see whole buffers"),
    ("glowir-dse", "drop writes nobody reads first: they would keep buffers alive and block the merges below"),
    ("glowir-copy-elimination", "the copies IRGen made for outputs and views: the producer writes the output"),
    ("glowir-share-buffers", "elementwise ops run in place on an input that dies there (from the op table)"),
    ("glowir-peephole", "the merges leave self-copies and views of the same type behind"),
    ("glowir-dse", "copies removed and buffers merged can leave stores nobody reads"),
    ("glowir-dead-allocs", "buffers the passes above left without users"),
    ("glowir-make-weights-const", "mutable weights nothing writes can join the constants"),
    ("glowir-sink-allocs", "each buffer is allocated right before its first user"),
    ("glowir-hoist-deallocs", "and freed right after its last: the shortest lives for the plan"),
]

#: glowir -> glowir: the static memory plan. Last on glowir: it reads the final allocation intervals.
MEMORY_PLANNING: list[Entry] = [
    ("glowir-plan-memory", "offsets for every buffer in three regions: constant weights, inputs/outputs, activations"),
]

#: glowir -> LLVM dialect: code generation.
CODEGEN: list[Entry] = [
    ("convert-glowir-to-linalg", "each instruction becomes linalg on its memrefs, each buffer a view of its region"),
    ("linalg-outline-kernels", "one function per distinct linalg op: LLVM's loop passes grow faster than linearly "
     "with function size (minutes for a CNN in one function), and a network repeats its kernels"),
    ("func.func(convert-linalg-to-loops)", "scalar loops over the buffers"),
    ("func.func(canonicalize,cse)", "clean the loop nests before leaving structured control flow"),
    ("expand-strided-metadata", "make view arithmetic explicit for the LLVM lowering"),
    ("lower-affine", "affine.apply/min from linalg become arith"),
    ("convert-scf-to-cf", "structured loops become branches"),
    ("convert-math-to-llvm", "math ops with LLVM intrinsics"),
    ("convert-math-to-libm", "the rest of math (tanh, erf) call libm"),
    ("convert-to-llvm", "everything left: func, arith, cf, memref, index"),
    ("reconcile-unrealized-casts", "remove the casts the partial conversions left"),
]

PIPELINES: dict[str, list[Entry]] = {
    "graph-optimization": GRAPH_OPTIMIZATION,
    "node-lowering": NODE_LOWERING,
    "ir-generation": IR_GENERATION,
    "ir-optimization": IR_OPTIMIZATION,
    "memory-planning": MEMORY_PLANNING,
    "codegen": CODEGEN,
}


def elements(name: str) -> list[Element]:
    """The parsed elements of a named pipeline."""
    return parse_pipeline(",".join(spec for spec, _ in PIPELINES[name]))


def text(name: str) -> str:
    """A named pipeline as one textual pipeline."""
    return pipeline_text(elements(name))
