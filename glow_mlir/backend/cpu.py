"""The CPU backend's choices: which nodes it keeps unlowered (Glow's shouldLower), and its whole
pipeline from glowgraph to the LLVM dialect, as data."""

from __future__ import annotations

import os

from ..passes import pipelines
from ..passes.pipeline import Element, parse_pipeline, pipeline_text
from ..passes.pipelines import Entry
from . import target as targets

#: node kinds with a CPU kernel of their own, kept out of node lowering
KEEP_NODES: tuple[str, ...] = (
    "fully_connected",  # the kernel writes the bias as the matmul's initial value: one pass over the output
    # One kernel each, with small per-row scratch buffers for the statistics: lowered, they would put a full-size
    # temporary (x - max, exp, x - mean, ...) between every pair of primitives and read the input several times more.
    "softmax",  # max, exp and sum, then a division: max-subtracted, so exp cannot overflow
    "log_softmax",  # max, sum of exp, one log per row
    "layer_norm",  # mean, then variance from x - mean (two passes: no E[x^2] - E[x]^2 cancellation), then normalize
    "reduce_l2",  # the squares are summed as they are read: no x * x temporary
)

#: node kinds whose kernel applies a relu or clip to its result in place (Glow's supportsFusedActivation)
FUSED_ACTIVATIONS: tuple[str, ...] = ("conv2d", "fully_connected")

#: graph optimization with this backend's fused activations
GRAPH_OPTIMIZATION: list[Entry] = [
    (f"glowgraph-fuse-activations{{nodes={','.join(FUSED_ACTIVATIONS)}}}" if spec == "glowgraph-fuse-activations"
     else spec, why)
    for spec, why in pipelines.GRAPH_OPTIMIZATION
]

#: node lowering with this backend's keep list
NODE_LOWERING: list[Entry] = [
    (f"glowgraph-lower{{keep={','.join(KEEP_NODES)}}}" if spec == "glowgraph-lower" else spec, why)
    for spec, why in pipelines.NODE_LOWERING
]

#: every stage, glowgraph to the LLVM dialect: what glow-opt --lower-to-llvm and the API run
LOWER_TO_LLVM: list[Entry] = (
    GRAPH_OPTIMIZATION + NODE_LOWERING + pipelines.IR_GENERATION + pipelines.IR_OPTIMIZATION
    + pipelines.MEMORY_PLANNING + pipelines.CODEGEN
)


def _elements(entries: list[Entry]) -> list[Element]:
    return parse_pipeline(",".join(spec for spec, _ in entries))


def graph_optimization() -> list[Element]:
    """The graph optimization stage with this backend's fused activations."""
    return _elements(GRAPH_OPTIMIZATION)


#: the passes whose choices follow the target (the kernels' tiles, lanes and filter blocks)
TARGETED = ("cpu-pack-conv-filters", "cpu-pointwise-as-fully-connected", "cpu-pack-matmul-weights",
            "cpu-pack-int8-weights", "cpu-spread-conv-inputs", "cpu-int8-kernels", "cpu-tile-kernels",
            "cpu-vectorize-rest", "cpu-approximate-math", "cpu-index-bitwidth")


def target_options(target_cpu: str = "", target_triple: str = "") -> dict[str, str]:
    """The pass options that name a target (none for the host)."""
    options = {}
    if target_cpu:
        options["target-cpu"] = target_cpu
    if target_triple:
        options["target-triple"] = target_triple
    return options


def _with_options(entries: list[Entry], extra: dict[str, str]) -> list[Entry]:
    """``entries`` with ``extra`` options added to the passes in :data:`TARGETED` (merged into any they have)."""
    if not extra:
        return entries
    out: list[Entry] = []
    for spec, why in entries:
        name, _, rest = spec.partition("{")
        if name in TARGETED:
            opts = rest.rstrip("}").split() if rest else []
            opts += [f"{k}={v}" for k, v in extra.items()]
            spec = f"{name}{{{' '.join(opts)}}}"
        out.append((spec, why))
    return out


def node_lowering(target_cpu: str = "", target_triple: str = "") -> list[Element]:
    """The node-lowering stage with this backend's keep list, its filter packing for the target (default: host)."""
    return _elements(_with_options(NODE_LOWERING, target_options(target_cpu, target_triple)))


def memory_planning(threads: int = 1, target_cpu: str = "", target_triple: str = "") -> list[Element]:
    """The memory-planning stage, the convolutions' spread inputs decided as codegen's kernels for ``threads`` cores
    of the target (default: host) will read them."""
    entries = [(_kernel_threads(spec, threads) if spec == "cpu-spread-conv-inputs" and threads > 1 else spec, why)
               for spec, why in pipelines.MEMORY_PLANNING]
    return _elements(_with_options(entries, target_options(target_cpu, target_triple)))


def default_threads() -> int:
    """The cores this process may run on (its CPU affinity, which containers and taskset narrow)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


#: with several threads, a kernel below this many FLOPs runs on the calling thread (cpu-tile-kernels' parallel-flops):
#: a hand-off to the worker pool costs ~0.2 us, but a kernel cut into tasks smaller than a few microseconds each gains
#: little (2 threads against 1, same process: bert_tiny_encoder 1.63x at 2 MFLOP, 1.61x at 0.5, 1.36x at 8, none at
#: 60; mlp_mnist 1.80x at 2 MFLOP; mobilenet_v2 1.36x at 2 MFLOP, 1.41x at 0.5)
PARALLEL_FLOPS = 1_000_000

#: with several threads, the other loops (elementwise, copies, fills, transposes, softmax and layer_norm rows:
#: cpu-vectorize-rest's parallel-bytes) are cut into tasks when they move at least this many bytes: 16 KiB a thread
#: on two, a few microseconds' work against a ~0.2 us hand-off (2 threads, same process, blocks of runs, minimum of
#: eight: 256 -> 32 KiB took bert_tiny_encoder 1.57 -> 1.36 ms, mobilenet_v2 4.85 -> 4.19, lenet5 0.053 -> 0.047,
#: resnet18 even; 16 KiB as 32)
PARALLEL_BYTES = 32 * 1024


def codegen_entries(threads: int = 1, target_cpu: str = "", target_triple: str = "",
                    io_arguments: bool = False) -> list[Entry]:
    """glowir -> LLVM dialect for ``threads`` cores of a target (default: the host): CODEGEN, with the kernels'
    tiles spread over the cores by the worker pool when ``threads > 1``; ``io_arguments``: a planned program takes
    its inputs and outputs as arguments of their own (the in-process runtime's convention, :mod:`.jit`), not in
    the mutableWeight region (bundles)."""
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    entries = _threaded(threads)
    if io_arguments:
        entries = [(f"{spec}{{io-arguments=true}}" if spec == "convert-glowir-to-linalg" else spec, why)
                   for spec, why in entries]
    if target_triple and targets.index_bits(target_triple) == 32:
        entries = _index32(entries)
    return _with_options(entries, target_options(target_cpu, target_triple))


def _index32(entries: list[Entry]) -> list[Entry]:
    """The conversion to LLVM for 32-bit pointers: convert-vector-to-llvm makes 64-bit index whatever the data
    layout says (it would disagree with the memref lowering), so vectors convert with the rest in
    ``convert-to-llvm{dynamic=true}``, which takes the index width from the module's data layout
    (cpu-index-bitwidth). A row sum's lanes then add in order (no reassociate-fp-reductions)."""
    out = []
    for spec, why in entries:
        if spec.startswith("convert-vector-to-llvm"):
            continue
        if spec == "convert-to-llvm":
            out.append(("cpu-lower-vectors{complete=true}", ("n-D vectors, transfers and masks left become what "
                        "convert-to-llvm converts (convert-vector-to-llvm's own rewrites, which is not run)")))
            spec, why = "convert-to-llvm{dynamic=true}", why + "; vectors too, index as wide as the data layout says"
        out.append((spec, why))
    return out


def _kernel_threads(spec: str, threads: int) -> str:
    """A pass that decides the kernels' tasks, with ``threads`` and :data:`PARALLEL_FLOPS`."""
    return f"{spec}{{threads={threads} parallel-flops={PARALLEL_FLOPS}}}"


def _threaded(threads: int) -> list[Entry]:
    if threads == 1:
        return list(pipelines.CODEGEN)
    entries: list[Entry] = []
    for spec, why in pipelines.CODEGEN:
        if spec == "convert-scf-to-cf":
            pool = (f"cpu-parallel-to-pool{{threads={threads} flops-per-thread={PARALLEL_FLOPS // 2} "
                    f"bytes-per-thread={PARALLEL_BYTES // 2}}}")
            entries += [(pool if s == "cpu-parallel-to-pool" else s, w) for s, w in pipelines.PARALLEL]
        if spec in ("cpu-tile-kernels", "cpu-int8-kernels"):
            spec = _kernel_threads(spec, threads)
        elif spec == "cpu-vectorize-rest":
            spec = f"{spec}{{threads={threads} parallel-bytes={PARALLEL_BYTES}}}"
        entries.append((spec, why))
    return entries


def codegen(threads: int = 1, target_cpu: str = "", target_triple: str = "",
            io_arguments: bool = False) -> list[Element]:
    """glowir -> LLVM dialect, parsed (see :func:`codegen_entries`)."""
    return _elements(codegen_entries(threads, target_cpu, target_triple, io_arguments))


def lower_to_llvm_text() -> str:
    """The whole pipeline as one textual pipeline (``glow-opt -p`` accepts it)."""
    return pipeline_text(_elements(LOWER_TO_LLVM))
