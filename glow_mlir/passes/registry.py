"""The pass registry: flag name -> pass class, imported lazily.

The driver, ``glow-opt --help``, ``--list-passes`` and the tests all enumerate this one
dict; a test checks that every key equals the pass's own ``name``.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir


class PassError(Exception):
    """A pass could not do its work; ``location`` names the op at fault when known."""

    def __init__(self, message: str, location: ir.Location | None = None, diagnostics: list | None = None):
        super().__init__(message)
        self.location = location
        #: (location, message) pairs, for --verify-diagnostics
        self.diagnostics = diagnostics if diagnostics is not None else ([(location, message)] if location else [])


@dataclass(frozen=True)
class Pass:
    """A pass over a whole module. Subclasses are frozen dataclasses whose fields are
    the pass options (``foo_bar`` is spelled ``foo-bar`` in a pipeline)."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def run(self, module: ir.Operation) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    @classmethod
    def options(cls) -> list[dataclasses.Field]:
        return list(dataclasses.fields(cls))

    @classmethod
    def from_options(cls, opts: dict[str, str]) -> "Pass":
        fields = {f.name.replace("_", "-"): f for f in cls.options()}
        kwargs: dict[str, Any] = {}
        for key, raw in opts.items():
            if key not in fields:
                known = ", ".join(sorted(fields)) or "none"
                raise ValueError(f"pass '{cls.name}' has no option '{key}' (options: {known})")
            f = fields[key]
            kwargs[f.name] = _parse_option(raw, f.default if f.default is not dataclasses.MISSING else None)
        return cls(**kwargs)

    def spec(self) -> str:
        """This pass as a pipeline element, options included."""
        opts = []
        for f in self.options():
            v = getattr(self, f.name)
            if v != f.default:
                if isinstance(v, (tuple, list)):
                    v = ",".join(str(x) for x in v)
                elif isinstance(v, bool):
                    v = "true" if v else "false"
                opts.append(f"{f.name.replace('_', '-')}={v}")
        return self.name + ("{" + " ".join(opts) + "}" if opts else "")


def _parse_option(raw: str, default: Any) -> Any:
    if isinstance(default, bool):
        if raw.lower() in ("1", "true", "on", ""):
            return True
        if raw.lower() in ("0", "false", "off"):
            return False
        raise ValueError(f"expected a boolean, got '{raw}'")
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, tuple):
        return tuple(x for x in raw.split(",") if x)
    return raw


#: flag -> "module:Class" (imported on first use); a module path is relative to this package unless it starts with
#: "glow_mlir." (a backend's codegen passes live with its kernels; only this string names them here)
PASSES: dict[str, str] = {
    # glowgraph: graph optimizations
    "glowgraph-dce": "graph.dce:DeadCodeElimination",
    "glowgraph-cse": "graph.cse:CommonSubexpressionElimination",
    "glowgraph-constant-fold": "graph.constant_fold:ConstantFold",
    "glowgraph-sink-transposes": "graph.sink_transposes:SinkTransposes",
    "glowgraph-eliminate-noops": "graph.eliminate_noops:EliminateNoops",
    "glowgraph-merge-reshapes": "graph.merge_reshapes:MergeReshapes",
    "glowgraph-merge-pad-into-conv": "graph.merge_pad_into_conv:MergePadIntoConv",
    "glowgraph-fold-batch-norm": "graph.fold_batch_norm:FoldBatchNorm",
    "glowgraph-fold-channel-arithmetic": "graph.fold_channel_arithmetic:FoldChannelArithmetic",
    "glowgraph-fuse-fully-connected": "graph.fuse_fully_connected:FuseFullyConnected",
    "glowgraph-merge-matmuls": "graph.merge_matmuls:MergeMatMuls",
    "glowgraph-batch-matmul-to-matmul": "graph.batch_matmul_to_matmul:BatchMatMulToMatMul",
    "glowgraph-fuse-softmax": "graph.fuse_softmax:FuseSoftmax",
    "glowgraph-fold-layer-norm-affine": "graph.fold_layer_norm_affine:FoldLayerNormAffine",
    "glowgraph-fold-concat-slices": "graph.fold_concat_slices:FoldConcatSlices",
    "glowgraph-fuse-clip": "graph.fuse_clip:FuseClip",
    "glowgraph-reduce-mean-to-avg-pool": "graph.reduce_mean_to_avg_pool:ReduceMeanToAvgPool",
    "glowgraph-fuse-activations": "graph.fuse_activations:FuseActivations",
    # glowgraph: int8 quantization
    "glowgraph-quantize": "graph.quantize:Quantize",
    "glowgraph-fold-quantize": "graph.fold_quantize:FoldQuantize",
    "glowgraph-qdq-to-params": "graph.qdq_to_params:QdqToParams",
    # node lowering
    "glowgraph-lower": "lowering.lower_nodes:LowerNodes",
    # glowir: memory optimizations (Glow's IROptimizer) and the static memory plan
    "glowir-peephole": "ir.peephole:Peephole",
    "glowir-dse": "ir.dse:DeadStoreElimination",
    "glowir-copy-elimination": "ir.copy_elimination:CopyElimination",
    "glowir-share-buffers": "ir.share_buffers:ShareBuffers",
    "glowir-dead-allocs": "ir.dead_allocs:DeadAllocs",
    "glowir-sink-allocs": "ir.sink_allocs:SinkAllocs",
    "glowir-hoist-deallocs": "ir.hoist_deallocs:HoistDeallocs",
    "glowir-make-weights-const": "ir.make_weights_const:MakeWeightsConst",
    "glowir-plan-memory": "ir.plan_memory:PlanMemory",
    # glowir: partitions of a planned program (ahead-of-time bundles)
    "glowir-partition": "ir.partition:Partition",
    # conversions
    "convert-glowgraph-to-glowir": "conversion.graph_to_ir:ConvertGraphToIR",
    "convert-glowir-to-linalg": "conversion.ir_to_linalg:ConvertIRToLinalg",
    # linalg on the program's buffers
    "linalg-fuse-elementwise": "conversion.fuse_elementwise:FuseElementwise",
    "linalg-outline-kernels": "conversion.outline_kernels:OutlineKernels",
    # CPU code generation: the backend's kernels (absolute module paths: they live in glow_mlir.backend)
    "cpu-pack-conv-filters": "glow_mlir.backend.kernels.passes:PackConvFilters",
    "cpu-pointwise-as-fully-connected": "glow_mlir.backend.kernels.passes:PointwiseAsFullyConnected",
    "cpu-pack-matmul-weights": "glow_mlir.backend.kernels.passes:PackMatmulWeights",
    "cpu-pack-int8-weights": "glow_mlir.backend.kernels.passes:PackInt8Weights",
    "cpu-spread-conv-inputs": "glow_mlir.backend.kernels.passes:SpreadConvInputs",
    "cpu-int8-kernels": "glow_mlir.backend.kernels.passes:Int8Kernels",
    "cpu-tile-kernels": "glow_mlir.backend.kernels.passes:TileKernels",
    "cpu-forward-transfers": "glow_mlir.backend.kernels.forward_transfers:ForwardTransfers",
    "cpu-lower-vectors": "glow_mlir.backend.kernels.passes:LowerVectors",
    "cpu-fma-contract": "glow_mlir.backend.kernels.passes:FmaContract",
    "cpu-vectorize-rest": "glow_mlir.backend.kernels.passes:VectorizeRest",
    "cpu-approximate-math": "glow_mlir.backend.kernels.passes:ApproximateMath",
    "cpu-index-bitwidth": "glow_mlir.backend.kernels.passes:IndexBitwidth",
    "cpu-parallel-to-pool": "glow_mlir.backend.kernels.tasks:ParallelToPool",
}


def get_pass(name: str) -> type[Pass]:
    """The pass class registered under ``name``."""
    if name not in PASSES:
        raise KeyError(name)
    mod, cls = PASSES[name].split(":")
    return getattr(importlib.import_module(mod if mod.startswith("glow_mlir.") else f"{__package__}.{mod}"), cls)
