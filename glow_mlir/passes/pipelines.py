"""Named pipelines, as data. Each entry is (pipeline element, why it sits there);
``pipeline_text`` of a list gives the one string that ``glow-opt -p`` accepts."""

from __future__ import annotations

from .pipeline import Element, parse_pipeline, pipeline_text

Entry = tuple[str, str]

#: glowgraph -> glowgraph: domain optimizations on the high-level graph.
GRAPH_OPTIMIZATION: list[Entry] = [
    ("glowgraph-constant-fold", "evaluate nodes whose inputs are all constants (weight transposes, shape math): the "
     "rewrites below read weights as constants, and a transpose of constant weights is then already folded"),
    ("glowgraph-eliminate-noops", "drop identity views and arithmetic with 0 or 1 (bert's zero biases) first, so the "
     "patterns below see the nodes that compute something next to each other"),
    ("glowgraph-merge-reshapes", "one reshape per chain: the patterns below look through one reshape at most"),
    ("glowgraph-reduce-mean-to-avg-pool", "before sinking, while the NCHW mean still reads the layout transpose "
     "that it can skip"),
    ("glowgraph-fuse-clip", "min and max with constants become a clip, which transposes sink through and which "
     "fuse-activations can fold into a convolution"),
    ("glowgraph-sink-transposes", "cancel the layout transposes the importer puts around NHWC nodes; after folding, "
     "so that broadcast constants are constants it can transpose at compile time; before the convolution rewrites, "
     "which need the batch norm, pad and arithmetic next to the convolution in NHWC"),
    ("glowgraph-merge-pad-into-conv", "a zero pad before a convolution becomes its pads (through the transpose left "
     "where the graph enters NHWC)"),
    ("glowgraph-fold-batch-norm", "batch norm into the convolution before it, once sinking made them neighbours; "
     "before fusing activations, which would put a relu between them"),
    ("glowgraph-fold-channel-arithmetic", "per-channel constant multiplies and adds into the convolution or batch "
     "norm before them (densenet's scale layers; after fold-batch-norm, a convolution again)"),
    ("glowgraph-fuse-fully-connected", "matmul plus a bias row becomes fully_connected; after eliminate-noops removed "
     "zero biases and merge-reshapes the views between the product and the add"),
    ("glowgraph-batch-matmul-to-matmul", "a batched product with one shared constant matrix becomes a 2-D one, which "
     "merge-matmuls can then merge"),
    ("glowgraph-merge-matmuls", "products of one input with several constant weights become one; after the fully "
     "connected fusion, so that biases merge too"),
    ("glowgraph-fuse-softmax", "exp, sum and division become a softmax (the CPU backend keeps it as one kernel)"),
    ("glowgraph-fold-layer-norm-affine", "constant scale and shift after a layer norm join its own"),
    ("glowgraph-fold-concat-slices", "slices of concats and concats of adjacent slices; after sinking, which moves "
     "the transposes that sat between them"),
    ("glowgraph-fuse-activations", "last: relu and clip into the convolution or fully connected node before them, "
     "once nothing else needs to rewrite that node; the backend names the node kinds (backend/cpu.py)"),
    ("glowgraph-cse", "merge identical nodes, constants included, so later passes see one value"),
    ("glowgraph-dce", "drop nodes nothing uses: dead outputs and the constants folding left behind"),
]

#: glowgraph -> glowgraph: int8 quantization from the parameters a profile gave the values (glow_mlir.quantization)
QUANTIZATION: list[Entry] = [
    ("glowgraph-quantize", "the nodes whose values have parameters become int8 nodes between quantize and dequantize; "
     "after the graph optimizations, so that a convolution quantizes with its batch norm and relu folded in"),
    ("glowgraph-fold-quantize", "the dequantize/quantize pairs between int8 nodes go, so chains run in int8"),
    ("glowgraph-cse", "one quantize of a value read by several int8 nodes"),
    ("glowgraph-dce", "the float weights the int8 ones replaced"),
]


#: glowgraph -> glowgraph: an ONNX QDQ model's quantize/dequantize pairs made int8 islands (no profile needed)
QDQ = [("glowgraph-qdq-to-params", "each pair's scale and zero point become the parameters of the value it quantizes"),
       *QUANTIZATION]


def quantization_text(channelwise: bool, qdq: bool = False) -> str:
    """The quantization pipeline as text (from a profile's parameters, or with ``qdq`` from a QDQ model's pairs),
    the weights per output channel with ``channelwise``."""
    specs = [spec + ("{channelwise=true}" if spec == "glowgraph-quantize" and channelwise else "")
             for spec, _ in (QDQ if qdq else QUANTIZATION)]
    return ",".join(specs)


#: glowgraph -> glowgraph: node lowering to the primitive set (a backend sets the keep list: backend/cpu.py).
NODE_LOWERING: list[Entry] = [
    ("glowgraph-lower", "lower high-level nodes the CPU backend has no kernel for (Glow's Lower.cpp)"),
    ("cpu-pack-conv-filters", "constant convolution filters in the blocked layout of the CPU conv kernel, at compile "
     "time; after every graph rewrite, which all read filters as HWCF"),
    ("cpu-pointwise-as-fully-connected", "a 1x1 convolution whose filter the packing left HWCF (output channels that "
     "are no whole vectors) becomes a fully connected layer of its pixels, whose weights the matmul kernel copies "
     "into panels on every call"),
    ("cpu-pack-matmul-weights", "constant fully connected weights in the column panels of the CPU matmul kernel where "
     "its tiles want them, at compile time; after every graph rewrite, which all read weights as [K, N]"),
    ("cpu-pack-int8-weights", "constant int8 filters in the layout of the dot-product kernel, their biases corrected "
     "for its unsigned input, on a target with VNNI; after quantization and every graph rewrite"),
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

#: glowir -> glowir: the static memory plan. Last on glowir: it reads the final allocation intervals and the
#: kernels' scratch buffers, whose layout the CPU backend settles first.
MEMORY_PLANNING: list[Entry] = [
    ("cpu-spread-conv-inputs", "a convolution whose register tiles would read input pixels that share an L1 set "
     "gets a bordered input with longer pixels: a scratch buffer the plan places, not a copy from the heap"),
    ("glowir-plan-memory", "offsets for every buffer in three regions: constant weights, inputs/outputs, activations"),
]

#: glowir -> LLVM dialect: code generation (one thread; backend/cpu.py adds PARALLEL for more).
CODEGEN: list[Entry] = [
    ("convert-glowir-to-linalg", "each instruction becomes linalg on its memrefs, each buffer a view of its region"),
    ("linalg-fuse-elementwise", "chains of elementwise ops whose intermediates die at once become one loop (Glow's "
     "stacked data-parallel kernels); before outlining, which makes one kernel of each"),
    ("linalg-outline-kernels", "one function per distinct linalg op, a contraction or convolution with its bias and "
     "elementwise epilogue as one (cpu-tile-kernels fuses them): LLVM's loop passes grow faster than linearly "
     "with function size (minutes for a CNN in one function), and a network repeats its kernels"),
    ("cpu-int8-kernels", "int8 convolutions on packed filters become register tiles of dot products, before the "
     "float kernels, which would not take them"),
    ("cpu-tile-kernels", "contractions become tensor islands on their buffers: tiled, vectorized, accumulators hoisted; "
     "the bias and elementwise epilogue of a kernel fused into its register loops"),
    ("cpu-vectorize-rest", "the other linalg ops on memrefs (fills, copies, broadcasts, elementwise, reductions, "
     "pooling) get explicit vectors: LLVM's loop vectorizer gives up on them behind its runtime alias checks"),
    ("cpu-approximate-math", "exp, erf and tanh as polynomials, after vectorization so that they are vector "
     "arithmetic: LLVM would call libm once per lane"),
    ("one-shot-bufferize", "the islands back onto the buffers they borrowed, in place (nothing else holds tensors)"),
    ("func.func(canonicalize,cse,canonicalize)", "bufferization leaves self-copies of tile views: CSE makes both "
     "sides one value, the second canonicalize erases them"),
    ("cpu-forward-transfers", "a fused kernel's accumulators read back the bias it just wrote into its tile: they take "
     "the written vector instead"),
    ("cpu-lower-vectors", "vector.contract -> FMA rows, transfers -> 1-D loads and stores"),
    ("func.func(convert-linalg-to-loops)", "scalar loops for everything that is not a kernel"),
    ("func.func(canonicalize,cse)", "clean the loop nests before leaving structured control flow"),
    ("fold-memref-alias-ops", "the islands' subviews fold into the loads and stores that use them"),
    ("convert-vector-to-scf{full-unroll=true}", "what is left of n-D vector transfers (a fused bias broadcast) becomes "
     "1-D ones; not unrolled, each went through a stack buffer and two memcpy calls per register tile (8% of "
     "mobilenet_v2's time)"),
    ("expand-strided-metadata", "make view arithmetic explicit for the LLVM lowering"),
    ("lower-affine", "affine.apply/min from linalg and tiling become arith"),
    ("convert-scf-to-cf", "structured loops become branches"),
    ("cpu-fma-contract", "float multiply-adds may fuse: LLVM emits FMA instructions"),
    ("cpu-index-bitwidth", "a target with 32-bit pointers lowers index to i32 (cpu.codegen_entries then converts "
     "with convert-to-llvm{dynamic=true}, which reads the width)"),
    ("convert-math-to-llvm", "math ops with LLVM intrinsics"),
    ("convert-math-to-libm", "the rest of math (pow, log, f64 exp...) calls libm"),
    ("convert-vector-to-llvm{reassociate-fp-reductions}", "vectors become LLVM vectors (zmm registers); a row's "
     "sum (softmax, layer_norm) may add in a tree: ordered, LLVM would add its lanes one after the other"),
    ("convert-to-llvm", "everything left: func, arith, cf, memref, index"),
    ("reconcile-unrealized-casts", "remove the casts the partial conversions left"),
]

#: run the kernels' scf.forall loops across cores: inserted into CODEGEN before convert-scf-to-cf when threads > 1,
#: with cpu-tile-kernels{threads=N} and cpu-parallel-to-pool{threads=N} (the JIT links the worker pool)
PARALLEL: list[Entry] = [
    ("cpu-parallel-to-pool", "each of the kernels' task loops (scf.forall) becomes a task function and a call to the "
     "worker pool, whose spinning workers take a task in well under a microsecond; a loop asks for no more threads "
     "than its work is worth"),
]

PIPELINES: dict[str, list[Entry]] = {
    "graph-optimization": GRAPH_OPTIMIZATION,
    "quantization": QUANTIZATION,
    "qdq-quantization": QDQ,
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
