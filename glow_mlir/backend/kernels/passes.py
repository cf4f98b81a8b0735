"""The codegen passes that apply the CPU kernels (see :mod:`glow_mlir.backend.kernels`).

In node lowering (``glow_mlir/passes/pipelines.py``), on glowgraph::

    cpu-pack-conv-filters             constant conv2d filters -> the kernels' packed layout [F/B, KH, KW, C, B]
                                      (or in chunks of input channels, [F/B, C/Cc, KH, KW, Cc, B])
    cpu-pointwise-as-fully-connected  1x1 conv2d whose filter stays HWCF -> fully_connected of its pixels
    cpu-pack-matmul-weights           constant fully_connected weights -> column panels [N/P, K, P]
    cpu-pack-int8-weights             constant qconv2d filters -> the int8 kernel's [F/L, KH, KW, Cp/4, L, 4] (VNNI)

Before the memory plan (``MEMORY_PLANNING``), on glowir::

    cpu-spread-conv-inputs            conv2d whose pixel tiles want longer input pixels -> glow.spread_channels: its
                                      bordered input (a scratch buffer the plan places) that much wider a pixel

In the codegen pipeline::

    cpu-int8-kernels              int8 convolutions on packed filters -> register tiles of dot products (VNNI)
    cpu-tile-kernels{threads=N}   contractions on memrefs -> tensor islands, tiled, vectorized, accumulators hoisted
    cpu-vectorize-rest            the other linalg ops on memrefs: loops on the outer dims, vectors on the innermost
    cpu-approximate-math          f32 exp / erf / tanh -> polynomials (vector arithmetic, no libm call per lane)
    one-shot-bufferize            the islands back onto their buffers, in place
    cpu-lower-vectors             vector.contract -> broadcast + FMA rows; transfers to 1-D loads and stores
    ...
    cpu-fma-contract              let LLVM fuse multiply-add pairs into FMA instructions
    cpu-index-bitwidth            a 32-bit target's module says so (DLTI): index arithmetic lowers to i32
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import ModuleType

import numpy as np
from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import vector as transform_vector

from ...dialects import glowgraph as gg
from ...dialects.cnn_numpy import pack_panels
from ...passes.conversion.ir_to_linalg import SPREAD_ATTR
from ...passes.graph.patterns import attr, constant, known, replace as replace_node, shape, users
from ...passes.ir.allocator import align_up
from ...passes.registry import Pass
from ...passes.utils import functions, graph_ops, has_trait
from .. import target as targets
from ..target import Target
from . import (approx, conv, epilogue, filter_layout, int8, interleave, isa, llvm_vectors, masked_channels, matmul,
               panels, pixel_tiles, vectorize)
from . import transform as schedule
from .balance import BLOCK_BALANCE, busy
from .matmul import TILES_ATTR


@dataclass(frozen=True)
class TargetOptions:
    """The target the kernels are made for: an LLVM CPU name and triple (``target-cpu=haswell``,
    ``target-triple=aarch64-linux-gnu``); empty: the host (:mod:`glow_mlir.backend.target`)."""

    target_cpu: str = ""
    target_triple: str = ""

    def target(self) -> Target:
        """The target description these options name."""
        return targets.named(self.target_cpu or None, self.target_triple or None)

    def kernel_spec(self) -> isa.KernelSpec:
        """The kernels' parameters for this target (an unknown CPU is a CompileError naming where the valid names
        come from)."""
        return isa.spec_of(self.target_cpu, self.target_triple)


def _graph_nodes(module: ir.Operation, names: tuple[str, ...]) -> list[ir.Operation]:
    """The glowgraph nodes named ``names`` of the module's functions (its nodes inside loops too)."""
    return [op for f in functions(module) for op in graph_ops(f) if op.name in names]


def _convs_on_constant_filters(module: ir.Operation) -> list[tuple[ir.Operation, np.ndarray]]:
    """The float conv2d nodes of the module whose filter is a known HWCF constant, with that filter."""
    found = []
    for op in _graph_nodes(module, ("glowgraph.conv2d",)):
        w = known(op.operands[1])
        if w is not None and w.ndim == 4 and w.dtype == np.float32:
            found.append((op, w))
    return found


def _filter_chunk(op: ir.Operation, w: np.ndarray, block: int, strides: list[int], spec: isa.KernelSpec) -> int:
    """The chunk of input channels in which to pack the filter ``w`` of conv2d ``op`` in blocks of ``block``
    (:func:`conv.packed_chunk`); 0: none."""
    n, h, wd, c = ir.RankedTensorType(op.operands[0].type).shape
    pads = attr(op, "pads", "i64s") or [0, 0, 0, 0]
    src = [n, h + pads[0] + pads[2], wd + pads[1] + pads[3], c]
    return conv.packed_chunk(src, list(w.shape), block, ir.RankedTensorType(op.results[0].type).shape[:3], strides,
                             spec)


@dataclass(frozen=True)
class PackConvFilters(TargetOptions, Pass):
    """Lay out the constant filters of the convolutions that :func:`conv.filter_block` picks in blocks of B output
    channels, ``[F / B, KH, KW, C, B]``, at compile time (the weights are constants: no copy at run time); where their
    tiles of pixels would stream a block from L2 on every tile, also in chunks of input channels, ``[F / B, C / Cc, KH,
    KW, Cc, B]`` (:func:`.filter_layout.filter_chunk`)."""

    name = "cpu-pack-conv-filters"
    summary = ("conv2d filters known at compile time -> [F/B, KH, KW, C, B] blocks where the conv kernel wants them "
               "(after graph optimization, which reads filters as HWCF)")

    def run(self, module: ir.Operation) -> None:
        with module.context, module.location:
            convs = _convs_on_constant_filters(module)
            spec = self.kernel_spec() if convs else None
            for op, w in convs:
                padded = _padded_to_blocks(op, w, spec)
                if padded is not None:
                    op, w = padded
                src, dest = (ir.RankedTensorType(t) for t in (op.operands[0].type, op.results[0].type))
                strides = attr(op, "strides", "i64s") or [1, 1]
                block = conv.filter_block(list(w.shape), attr(op, "group", "i64"), attr(op, "dilations", "i64s"), spec,
                                          list(dest.shape), max(strides), 4 * src.shape[-1] * strides[-1])
                if block:
                    with ir.InsertionPoint(op):
                        chunk = _filter_chunk(op, w, block, strides, spec)
                        op.operands[1] = constant(filter_layout.pack_filter(w, block, chunk))


def _padded_to_blocks(op: ir.Operation, w: np.ndarray, spec: isa.KernelSpec) -> tuple[ir.Operation, np.ndarray] | None:
    """conv2d ``op`` on the HWCF filter ``w`` as a convolution whose output channels are padded to whole filter
    blocks with zero filters and zero biases, followed by a slice of its first F channels (the new convolution and
    its padded filter), where :func:`.filter_layout.padded_channels` says so, the bias is known and no elementwise
    op reads the output; None: kept."""
    f = w.shape[3]
    padded = filter_layout.padded_channels(f, attr(op, "group", "i64") or 1, spec, math.prod(w.shape[:3]))
    bias = known(op.operands[2])
    # an elementwise user (a residual add, a scale and shift) would update the output inside the convolution's loops
    # (linalg-outline-kernels' epilogue); after the slice it is a pass of its own
    if padded == f or bias is None or any(has_trait(user, "elementwise") for user in users(op.results[0])):
        return None
    wide = _zero_padded(w, padded)
    with ir.InsertionPoint(op), op.location:
        attrs = {name: op.attributes[name] for name in op.attributes}
        widened = gg.conv2d(op.operands[0], constant(wide), constant(_zero_padded(bias, padded)), **attrs)
        replace_node(op, [gg.slice_(widened, starts=[0, 0, 0, 0], sizes=shape(op.results[0]))])
    return widened.owner.operation, wide


def _zero_padded(a: np.ndarray, size: int) -> np.ndarray:
    """float32 ``a`` with zeros appended along its last dim up to ``size``."""
    return np.pad(np.asarray(a, np.float32), [(0, 0)] * (a.ndim - 1) + [(0, size - a.shape[-1])])


def _activation(op: ir.Operation) -> dict[str, ir.Attribute]:
    """The fused-activation attributes of ``op`` (:data:`glowgraph.ACTIVATION`) that it has."""
    return {a.name: op.attributes[a.name] for a in gg.ACTIVATION if a.name in op.attributes}


@dataclass(frozen=True)
class SpreadConvInputs(TargetOptions, Pass):
    """Where the tiles of pixels of a glowir conv2d on a packed filter would read input pixels that share an L1 set
    and a copy of its input with each pixel :data:`.conv.SPREAD_CHANNELS` longer pays (:func:`.conv.blocked_plan`'s
    ``spread``: AVX-512 3x3/2 from 512 channels on 12 ways, from 256 on 8; 1x1 from 2048 at 7x7), mark it with
    :data:`~glow_mlir.passes.conversion.ir_to_linalg.SPREAD_ATTR`: its bordered input (the scratch buffer the
    lowering writes anyway where it is padded) then has pixels that much longer. Before glowir-plan-memory, which
    places that buffer in the activations region: the kernel reads it where it is, nothing comes from the heap at run
    time. Its ``threads`` and ``parallel_flops`` are cpu-tile-kernels', which turns tiles of whole rows with too
    little work a thread back into row tiles (:func:`threaded_plan`): those read the input as it is."""

    name = "cpu-spread-conv-inputs"
    summary = ("glowir conv2d on a packed filter whose pixel tiles would read pixels that share an L1 set -> its "
               "bordered input one cache line longer a pixel (before glowir-plan-memory, which places it)")

    #: the threads and the FLOPs threshold of cpu-tile-kernels, which must agree with these
    threads: int = 1
    parallel_flops: int = 0

    def run(self, module: ir.Operation) -> None:
        convs: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "glowir.conv2d" and ir.MemRefType(op.operands[2].type).rank in (5, 6):
                convs.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        spec = self.kernel_spec() if convs else None
        for op in convs:
            dest, src, filt = (ir.MemRefType(v.type) for v in op.operands[:3])
            if not all(t.has_static_shape and t.element_type == ir.F32Type.get(op.context) for t in (dest, src, filt)):
                continue
            view = op.opview
            top, left, bottom, right = view.pads
            n, h, w, c = src.shape
            geometry = filter_layout.PackedFilter.of(filt.shape).blocked()
            output = [*dest.shape[:3], geometry[0], geometry[-1]]
            plan = conv.blocked_plan([n, top + h + bottom, left + w + right, c], geometry, output,
                                     list(view.strides), spec)
            plan = threaded_plan(plan, output[2], conv.packed_flops(output, filt.shape), spec, self.threads,
                                 self.parallel_flops)
            if plan.spread:
                op.attributes[SPREAD_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64, op.context),
                                                                plan.spread)
            elif SPREAD_ATTR in op.attributes:  # decided before for other threads or another target
                del op.attributes[SPREAD_ATTR]


@dataclass(frozen=True)
class PointwiseAsFullyConnected(TargetOptions, Pass):
    """A 1x1 stride-1 convolution whose constant filter :func:`conv.filter_block` keeps HWCF though it outgrows L1
    (:func:`conv.pointwise_as_fully_connected`: output channels that are no whole vectors) becomes a fully_connected
    of its pixels between two reshapes, its bias and fused activation kept: ``[N, H, W, C]`` as ``[N x H x W, C]``
    times the filter as ``[C, F]``, which the matmul kernel copies into panels on every call."""

    name = "cpu-pointwise-as-fully-connected"
    summary = ("1x1 conv2d whose constant filter stays HWCF (F no whole vectors) -> reshape, fully_connected of the "
               "pixels, reshape (after cpu-pack-conv-filters, which decides the filters' layout)")

    def run(self, module: ir.Operation) -> None:
        with module.context, module.location:
            convs = _convs_on_constant_filters(module)
            spec = self.kernel_spec() if convs else None
            for op, w in convs:
                x = ir.RankedTensorType(op.operands[0].type)
                if not x.has_static_shape:
                    continue
                if not conv.pointwise_as_fully_connected(list(w.shape), attr(op, "strides", "i64s") or [1, 1],
                                                         attr(op, "pads", "i64s") or [0, 0, 0, 0],
                                                         attr(op, "dilations", "i64s") or [1, 1],
                                                         attr(op, "group", "i64") or 1, math.prod(x.shape[:3]), spec):
                    continue
                n, h, width, c = x.shape
                f = w.shape[3]
                with ir.InsertionPoint(op), op.location:
                    pixels = gg.reshape(op.operands[0], shape=[n * h * width, c])
                    fc = gg.fully_connected(pixels, constant(np.ascontiguousarray(w.reshape(c, f))), op.operands[2],
                                            **_activation(op))
                    replace_node(op, [gg.reshape(fc, shape=[n, h, width, f])])


@dataclass(frozen=True)
class PackInt8Weights(TargetOptions, Pass):
    """For an x86 target: the constant filters of group-1 qconv2d nodes in the layout of the int8 kernel,
    ``[F/L, KH, KW, Cp/4, L, 4]`` with VNNI (their biases less ``128 * sum(w)``), int16 pairs ``[F/L, KH, KW, Cp/2,
    L, 2]`` without; qfully_connected nodes as 1x1 qconv2d first (:mod:`.int8`)."""

    name = "cpu-pack-int8-weights"
    summary = ("qconv2d filters known at compile time -> [F/L, KH, KW, Cp/4, L, 4] (VNNI) or int16 pairs [.., Cp/2, "
               "L, 2] (AVX2) for the int8 kernel; qfully_connected as a 1x1 qconv2d")

    def run(self, module: ir.Operation) -> None:
        with module.context, module.location:
            nodes = _graph_nodes(module, ("glowgraph.qconv2d", "glowgraph.qfully_connected"))
            dot = int8.dot_of(self.target()) if nodes else None
            if dot is None:
                return
            for op in nodes:
                with ir.InsertionPoint(op), op.location:
                    if op.name == "glowgraph.qconv2d":
                        int8.pack_qconv(op, dot) or int8.pack_depthwise_qconv(op, dot)
                    else:
                        int8.fully_connected_as_conv(op, dot)


@dataclass(frozen=True)
class Int8Kernels(TargetOptions, Pass):
    """The int8 convolutions on packed filters (``glow.int8_conv`` generics) -> loops of dot-product instructions
    with their accumulators in registers (:mod:`.int8`)."""

    name = "cpu-int8-kernels"
    summary = "int8 convolutions on packed filters -> register tiles of vpdpbusd (VNNI) or vpmaddwd (AVX2, AVX-512)"

    #: cores the kernels may run on: above 1 the output rows of a convolution of at least ``parallel_flops`` are
    #: the tasks of an scf.forall (cpu-parallel-to-pool spreads them)
    threads: int = 1
    parallel_flops: int = 0

    def run(self, module: ir.Operation) -> None:
        found: list[ir.Operation] = []
        with module.context, module.location:
            dot = int8.dot_of(self.target())
            if dot is None:
                return

            def visit(op: ir.Operation) -> ir.WalkResult:
                if int8.matches(op, dot) or int8.matches_depthwise(op, dot):
                    found.append(op)
                return ir.WalkResult.ADVANCE

            module.walk(visit)
            for op in found:
                if int8.matches(op, dot):
                    int8.make_kernel(op, dot, self.threads, self.parallel_flops)
                else:
                    int8.make_depthwise_kernel(op, self.threads, self.parallel_flops)


@dataclass(frozen=True)
class PackMatmulWeights(TargetOptions, Pass):
    """Lay out the constant weights ``[K, N]`` of the fully connected and matmul nodes whose tile class wants B in panels
    (:func:`matmul.panel_width`) as ``[N / P, K, P]`` at compile time: each panel of P columns contiguous, so that the
    register tile streams it without cache-set conflicts and nothing copies it at run time. An N of no whole panels
    (1000 classes) is padded with zero columns to them and the product sliced back (:func:`_pad_columns`); weights of
    less than a panel and no whole vectors (10 classes) to whole vectors (:func:`matmul.vector_columns`)."""

    name = "cpu-pack-matmul-weights"
    summary = ("fully_connected and matmul weights known at compile time -> [N/P, K, P] column panels where the "
               "matmul kernel wants them (after graph optimization, which reads weights as [K, N])")

    def run(self, module: ir.Operation) -> None:
        with module.context, module.location:
            nodes = _graph_nodes(module, ("glowgraph.fully_connected", "glowgraph.matmul"))
            spec = self.kernel_spec() if nodes else None
            for op in nodes:
                w = known(op.operands[1])
                x = ir.RankedTensorType(op.operands[0].type)
                if w is None or w.ndim != 2 or w.dtype != np.float32 or not x.has_static_shape:
                    continue
                m, (k, n) = x.shape[0], w.shape
                width = matmul.panel_width(m, n, k, spec)
                if width and n % width == 0:
                    with ir.InsertionPoint(op):
                        op.operands[1] = constant(pack_panels(w, width))
                elif width:
                    _pad_columns(op, w, align_up(n, width), width)
                elif columns := matmul.vector_columns(m, n, k, spec):
                    _pad_columns(op, w, columns)


def _pad_columns(op: ir.Operation, w: np.ndarray, padded: int, width: int = 0) -> None:
    """``op`` (a fully_connected or matmul on constant weights ``w`` of N columns) as the same node on ``w`` padded
    with zero columns to ``padded`` (whole panels of ``width``, then packed in them; or whole vectors, ``width`` 0)
    and its bias padded with zeros, then a slice of its first N columns; a fully_connected whose bias is known only
    at run time stays as it is."""
    n = w.shape[1]
    fully_connected = op.name == "glowgraph.fully_connected"
    bias = known(op.operands[2]) if fully_connected else None
    if fully_connected and bias is None:
        return
    x = op.operands[0]
    with ir.InsertionPoint(op), op.location:
        weights = _zero_padded(w, padded)
        weights = constant(pack_panels(weights, width) if width else weights)
        if fully_connected:
            product = gg.fully_connected(x, weights, constant(_zero_padded(bias, padded)), **_activation(op))
        else:
            product = gg.matmul(x, weights)
        replace_node(op, [gg.slice_(product, starts=[0, 0], sizes=[shape(x)[0], n])])


#: on several threads, a convolution takes tiles of whole output rows (which leave its epilogue unfused: one more
#: pass over the output and one more hand-off to the threads) only with at least this many times ``parallel_flops`` a
#: thread: on a 16-core Xeon mobilenet_v2's 1x1 layers at 7x7 (15-30 MFLOP, one or two a thread) made the network
#: 2-5% slower on sixteen threads in three runs, while resnet18's 3x3 512->512 (231 MFLOP) gained
WHOLE_ROW_THREAD_FLOPS = 4


def threaded_plan(plan: conv.ConvPlan, ow: int, flops: int, spec: isa.KernelSpec, threads: int,
                  parallel_flops: int) -> conv.ConvPlan:
    """``plan`` of a convolution on a packed filter of ``flops`` with output rows of ``ow`` pixels, or on ``threads``
    above 1 its row tiles where its tiles of whole rows are too little work a thread (:data:`WHOLE_ROW_THREAD_FLOPS`
    times ``parallel_flops``)."""
    if threads <= 1 or not conv.whole_rows(ow, plan, spec):
        return plan
    return plan if flops / threads >= WHOLE_ROW_THREAD_FLOPS * parallel_flops else replace(plan, pixel_rows=0, spread=0)


@dataclass(frozen=True)
class TileKernels(TargetOptions, Pass):
    """Rewrite each f32 contraction and convolution on memrefs into tensor islands and apply its kernel schedule."""

    name = "cpu-tile-kernels"
    summary = ("tile and vectorize matmul, batch_matmul and conv_2d_nhwc_hwcf on tensor islands over their buffers "
               "(run one-shot-bufferize next)")

    #: cores the tiled loops may run on: above 1 the L1 tiles of the islands worth it become scf.forall iterations
    threads: int = 1
    #: the FLOPs below which an island stays on the calling thread: its tasks would be too small to gain from the
    #: hand-off to the worker pool and the wait for the last one
    parallel_flops: int = 0

    def run(self, module: ir.Operation) -> None:
        contractions: list[ir.Operation] = []
        convolutions: list[tuple[ir.Operation, conv.ConvPlan]] = []
        spec = self.kernel_spec()

        packed: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if matmul.matches(op):
                contractions.append(op)
            elif panels.matches_packed(op):
                packed.append(op)
            elif (plan := conv.matches(op, spec)) is not None:
                convolutions.append((op, self._threaded_plan(op, plan, spec)))
            return ir.WalkResult.ADVANCE

        with module.context, module.location:
            module.walk(visit)
            if not contractions and not convolutions and not packed:
                return
            for op in packed:  # its init and updates join its islands (panels.Epilogue)
                # an update that moves the chain to another buffer: only on one thread (in an scf.forall, each
                # task's tile of the first buffer would be a buffer of its own)
                panels.make_packed_islands(op, spec, moves=self.threads == 1, threads=self.threads,
                                           parallel_flops=self.parallel_flops)
            for op in contractions:
                chain = epilogue.chain_of(op) if op.name == "linalg.matmul" else None
                tiles = epilogue.matmul_tiles(chain, spec) if chain is not None and chain.fused() else None
                if tiles is not None:
                    epilogue.matmul_island(chain, tiles, self._serial(chain))
                else:
                    matmul.make_islands(op, spec)
            for op, plan in convolutions:
                if plan.as_matmul:  # its bias and updates join the islands (panels.Epilogue)
                    conv.make_matmul_islands(op, spec, moves=self.threads == 1, threads=self.threads,
                                             parallel_flops=self.parallel_flops)
                    continue
                if plan.pixel_rows:  # its epilogue stays behind as vector loops
                    threads = self._block_threads(op, plan)
                    pixel_tiles.make_kernel(op, plan, spec, threads, self._tile_tasks(op, plan, threads))
                    continue
                if plan.masked:  # as pixel tiles: the epilogue stays behind
                    masked_channels.make_kernel(op, plan, self._row_threads(op))
                    continue
                # the epilogue fuses into each island: the whole output's, or each channel piece's or filter
                # block's with its slice of the epilogue (an epilogue that does not slice by channels stays behind
                # in the same kernel as vector loops)
                chain = epilogue.blocked_chain(op) if plan.blocked else epilogue.chain_of(op)
                chain = epilogue.retarget_copy(chain) if chain is not None else None
                if chain is not None and chain.moves() and self._rows_are_tasks(op, plan, chain):
                    # a residual add onto the skip fused in would keep the convolution on one thread (Chain.moves):
                    # on several the rows stay the tasks and the add is a vector loop of its own after it
                    # (mobilenet_v2 on two threads: its 1x1 144->24 at 56x56 and 192->32 at 28x28 ran on one,
                    # 9% of the time in a bundle profile)
                    chain = chain.before_move()
                if chain is None or not chain.fused():
                    conv.make_island(op, plan, self._block_threads(op, plan))
                elif plan.blocked:
                    # a filter in chunks of input channels (packed for tiles of pixels, which threads may have turned
                    # back into row tiles: _threaded_plan) runs an island per chunk, its epilogue left behind
                    if epilogue.sliceable(chain) and ir.MemRefType(op.operands[1].type).rank == 5:
                        epilogue.blocked_islands(chain, plan.pieces[0][2], self._block_threads(op, plan))
                    else:
                        conv.make_island(op, plan, self._block_threads(op, plan))
                elif len(plan.pieces) == 1:
                    epilogue.conv_island(chain, plan.pieces[0][2], self._serial(chain) or chain.moves())
                elif epilogue.sliceable(chain):
                    epilogue.pieced_islands(chain, plan, self._serial(chain) or chain.moves())
                else:
                    conv.make_island(op, plan, self._block_threads(op, plan))
            groups = self._tag_tasks(module)
            fused_keys = epilogue.fused_keys(module)

            def build(root: ir.Value) -> None:
                for family, key, per_task in groups:
                    family.schedule_tiles(root, key, self.threads, per_task)
                for key in fused_keys:
                    epilogue.schedule_tiles(root, key, self.threads)
                funcs = schedule.functions(root)
                schedule.canonicalize(funcs)
                schedule.hoist_subsets(root)
                schedule.canonicalize(funcs, fold_into_transfers=True)
                schedule.hoist_subsets(root)

            keys = [key for _, key, _ in groups] + fused_keys
            schedule.apply(module, build, "the kernels tiled " + "; ".join(f"'{key}'" for key in keys))

    def _serial(self, chain: epilogue.Chain) -> bool:
        """Whether a fused chain stays on the calling thread (too few FLOPs to hand out, as :func:`tiles_per_task`)."""
        return self.threads > 1 and epilogue.head_flops(chain) < self.parallel_flops

    def _rows_are_tasks(self, op: ir.Operation, plan: conv.ConvPlan, chain: epilogue.Chain) -> bool:
        """Whether the islands of convolution ``op`` will be cut into tasks of output rows: on several threads, an
        unpacked one that is not too small (:meth:`_serial`), or a packed one whose blocks do not make the tasks
        (:meth:`_block_threads`). A fused update that moves the chain to another buffer would then get a private
        buffer per task from bufferization (a malloc, never freed, in every task)."""
        if self.threads == 1:
            return False
        if not plan.blocked:
            return not self._serial(chain)
        return conv.blocked_flops(op) >= self.parallel_flops and self._block_threads(op, plan) == 1

    def _row_threads(self, op: ir.Operation) -> int:
        """The threads a convolution of named form (not on packed blocks) spreads its output rows over (1: none)."""
        _, filt, dest = (ir.MemRefType(v.type).shape for v in op.operands)
        flops = 2 * math.prod(dest) * math.prod(filt[:-1])
        return self.threads if self.threads > 1 and flops >= self.parallel_flops else 1

    def _block_threads(self, op: ir.Operation, plan: conv.ConvPlan) -> int:
        """The threads a convolution on packed filter blocks spreads its blocks over (1: none, the blocks run in
        turn), as :func:`tiles_per_task` decides for the other kernels. Only where the blocks keep the threads busier
        than its output rows would (on sixteen threads the 7 rows of a 320->1280 1x1 convolution at 7x7 keep 7 busy,
        its 40 blocks 13 on average); else each block's output rows are the tasks (the islands are then not tagged
        serial): the worker pool gives each thread the same share of the rows in consecutive loops, so that a core
        reads the rows the layer before wrote into its cache, where with the blocks as tasks every core read the
        whole input (two cores of a Xeon VM, same process: resnet18 18.9 -> 17.5 ms, light_resnet50 33.1 -> 31.3,
        mobilenet_v2 4.60 -> 4.51; the rule took the blocks where they kept the threads 90% busy). The tiles of
        pixels have no rows to split and keep the blocks."""
        if not plan.blocked or self.threads == 1 or conv.blocked_flops(op) < self.parallel_flops:
            return 1
        blocks = ir.MemRefType(op.operands[1].type).shape[0]
        images, rows = ir.MemRefType(op.operands[2].type).shape[:2]
        on_blocks, on_rows = busy(blocks, self.threads), busy(images * rows, self.threads)
        return self.threads if on_blocks > on_rows or plan.pixel_rows else 1

    def _threaded_plan(self, op: ir.Operation, plan: conv.ConvPlan, spec: isa.KernelSpec) -> conv.ConvPlan:
        """``plan`` for this pass's threads (:func:`threaded_plan`)."""
        return threaded_plan(plan, ir.MemRefType(op.operands[2].type).shape[2], conv.blocked_flops(op), spec,
                             self.threads, self.parallel_flops)

    def _tile_tasks(self, op: ir.Operation, plan: conv.ConvPlan, threads: int) -> bool:
        """Whether a convolution in tiles of pixels takes each tile of each block as a task: where its blocks would
        keep the threads busy less than :data:`BLOCK_BALANCE` of the time and the tiles more (on sixteen threads
        the 8 blocks of a 256-filter layer kept 8 busy; at 14x14, 8 x 14 tiles keep all)."""
        if threads <= 1:
            return False
        blocks, images = ir.MemRefType(op.operands[1].type).shape[0], ir.MemRefType(op.operands[2].type).shape[0]
        on_blocks = busy(blocks, threads)
        tiles = blocks * images * pixel_tiles.tiles_per_image(op, plan)
        return on_blocks < BLOCK_BALANCE and busy(tiles, threads) > on_blocks

    def _tag_tasks(self, module: ir.Operation) -> list[tuple[ModuleType, str, int]]:
        """Tag each island with its L1 tiles per task (:data:`.matmul.TASK_ATTR`, :func:`tiles_per_task`); the
        distinct (kernel family, tile key, tiles per task) to schedule, in order of appearance."""
        groups: list[tuple[ModuleType, str, int]] = []
        i64 = ir.IntegerType.get_signless(64)

        def visit(op: ir.Operation) -> ir.WalkResult:
            if TILES_ATTR in op.attributes:
                key = ir.StringAttr(op.attributes[TILES_ATTR]).value
                family = matmul if op.name in matmul.ISLAND_OPS else conv if op.name in conv.ISLAND_OPS else None
                if family is not None:
                    # an island inside a task already (a block of a packed convolution) keeps its tag: no tasks
                    per_task = ir.IntegerAttr(op.attributes[matmul.TASK_ATTR]).value \
                        if matmul.TASK_ATTR in op.attributes else \
                        tiles_per_task(matmul.task_flops(op) if family is matmul else family.flops(op),
                                       family.split_tiles(op), self.threads, self.parallel_flops)
                    if family is matmul and per_task == 1 and matmul.TASK_ATTR not in op.attributes:
                        per_task = _grid_or_rows(matmul.grid_tiles(op), family.split_tiles(op), self.threads)
                    op.attributes[matmul.TASK_ATTR] = ir.IntegerAttr.get(i64, per_task)
                    if (family, key, per_task) not in groups:
                        groups.append((family, key, per_task))
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        return groups


def _grid_or_rows(grid: int, split: int, threads: int) -> int:
    """A matmul island's tasks: one L1 tile of its split dim each (1), or of both dims (:data:`.matmul.GRID`) when
    the split dim's tiles keep the threads busy less than :data:`BLOCK_BALANCE` of the time and the grid more (on
    sixteen threads, the 7 row tiles of a 1x1 convolution at 7x7 pixels used 7 of them)."""
    if busy(split, threads) < BLOCK_BALANCE and busy(grid, threads) > busy(split, threads):
        return matmul.GRID
    return 1


def tiles_per_task(flops: int, tiles: int, threads: int, parallel_flops: int) -> int:
    """How many L1 tiles (along the split dim, ``tiles`` of them) one task of a kernel of ``flops`` takes: 0 (no
    tasks, the calling thread runs it all) on one thread, with one tile, or below ``parallel_flops``; else one task per
    thread when the tiles divide evenly (the fewest hand-offs), else one task per tile, which the worker pool's
    threads claim one at a time as they finish the last."""
    if threads == 1 or tiles < 2 or flops < parallel_flops:
        return 0
    return tiles // threads if tiles % threads == 0 else 1


@dataclass(frozen=True)
class LowerVectors(Pass):
    """Lower the kernels' vector ops to what convert-vector-to-llvm maps well onto vector registers; ``complete``:
    also the rewrites convert-vector-to-llvm makes before it converts (n-D broadcasts, shape casts, masks,
    reductions, transposes, n-D from_elements; unit dims cast away where it reduces the rank of an FMA), for a
    pipeline that converts vectors with ``convert-to-llvm`` instead (32-bit targets: see cpu.codegen_entries)."""

    name = "cpu-lower-vectors"
    summary = "vector.contract -> outer products -> FMA rows; vector transfers to 1-D (after bufferization)"
    complete: bool = False

    def run(self, module: ir.Operation) -> None:
        def build(root: ir.Value) -> None:
            patterns = transform.ApplyPatternsOp(schedule.functions(root))
            with ir.InsertionPoint(patterns.patterns):
                transform_vector.ApplyLowerContractionPatternsOp(
                    lowering_strategy=transform_vector.VectorContractLowering.OuterProduct)
                transform_vector.ApplyLowerOuterProductPatternsOp()
                transform_vector.ApplyTransferPermutationPatternsOp()
                transform_vector.ApplyLowerTransferPatternsOp(max_transfer_rank=1)
            if not self.complete:
                return
            # unit dims first (a vector<1x1x8xf32> fma becomes 1-D), on their own: with the lowerings below in one
            # set the two rewrite each other's results without end
            unit = transform.ApplyPatternsOp(schedule.functions(root))
            with ir.InsertionPoint(unit.patterns):
                transform_vector.ApplyCastAwayVectorLeadingOneDimPatternsOp()
            lowering = transform.ApplyPatternsOp(schedule.functions(root))
            with ir.InsertionPoint(lowering.patterns):
                transform_vector.ApplyLowerBroadcastPatternsOp()
                transform_vector.ApplyLowerShapeCastPatternsOp()
                transform_vector.ApplyLowerCreateMaskPatternsOp()
                transform_vector.ApplyLowerMasksPatternsOp()
                transform_vector.ApplyLowerMultiReductionPatternsOp()
                transform_vector.ApplyLowerTransposePatternsOp()
                transform_vector.ApplyLowerInterleavePatternsOp()
                transform_vector.ApplyLowerBitCastPatternsOp()
                transform_vector.ApplyLowerGatherPatternsOp()
                transform_vector.ApplyMaterializeMasksPatternsOp()
                transform_vector.ApplyUnrollFromElementsPatternsOp()
                transform_vector.ApplyUnrollToElementsPatternsOp()

        schedule.apply(module, build)
        if self.complete:
            with module.context:
                if llvm_vectors.lower(module):  # then what the rewrite made (n-D broadcasts) is lowered too
                    schedule.apply(module, build)


#: the float ops whose pairs LLVM may fuse once they carry the contract flag
CONTRACTIBLE = ("arith.mulf", "arith.addf", "arith.subf")


def add_contract(op: ir.Operation) -> None:
    """Add ``contract`` to ``op``'s fast-math flags, keeping the flags it has."""
    flags = {"contract"}
    if "fastmath" in op.attributes:
        text = str(op.attributes["fastmath"])  # #arith.fastmath<nnan,contract> or #arith.fastmath<none>
        flags |= {f.strip() for f in text[text.index("<") + 1: text.rindex(">")].split(",")} - {"none"}
    order = ["reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn"]
    spelled = ",".join(f for f in order if f in flags) if flags <= set(order) else None
    if spelled is None:  # "fast" or a flag this list does not know: fast already contains contract
        return
    op.attributes["fastmath"] = ir.Attribute.parse(f"#arith.fastmath<{spelled}>")


@dataclass(frozen=True)
class FmaContract(Pass):
    """Let LLVM fuse float multiplies and adds into FMA instructions (one rounding instead of two)."""

    name = "cpu-fma-contract"
    summary = "set the contract fast-math flag on arith.mulf/addf/subf, so that LLVM emits FMAs"

    def run(self, module: ir.Operation) -> None:
        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name in CONTRACTIBLE:
                add_contract(op)
            return ir.WalkResult.ADVANCE

        with module.context:
            module.walk(visit)


@dataclass(frozen=True)
class VectorizeRest(TargetOptions, Pass):
    """Tile and vectorize the linalg ops on memrefs that no kernel took (see :mod:`.vectorize`)."""

    name = "cpu-vectorize-rest"
    summary = ("fills, copies, broadcasts, transposes, elementwise generics and reductions on memrefs: "
               "loops over the outer dims, explicit vectors (masked for remainders) on the innermost; channel rows "
               "interleaved into pixels as shuffled runs")

    #: cores the loops may run on: above 1, an op moving at least ``parallel_bytes`` is cut into tasks (an
    #: scf.forall over an outer parallel dim) that the worker pool spreads
    threads: int = 1
    parallel_bytes: int = 0

    def run(self, module: ir.Operation) -> None:
        with module.context, module.location:
            marked = False

            def mark(op: ir.Operation) -> None:
                nonlocal marked
                if op.name in vectorize.NAMED and vectorize.is_candidate(op):
                    op.attributes[vectorize.VECTOR_ATTR] = ir.StringAttr.get(vectorize.GENERALIZE)
                    marked = True

            vectorize.walk_top_level(module, mark)
            if marked:
                schedule.apply(module, lambda root: vectorize.generalize(root, list(vectorize.NAMED)))
            lanes = self.kernel_spec().lanes
            copies: list[ir.Operation] = []
            vectorize.walk_top_level(module, lambda op: copies.append(op) if interleave.interleaved(op, lanes)
                                     or interleave.deinterleaved(op, lanes) else None)
            for op in copies:  # channel rows into pixels and back: vectors of whole runs of pixels (interleave.py)
                parallel = self.threads > 1 and vectorize.nbytes(op) >= self.parallel_bytes
                interleave.make_kernel(op, lanes, self.threads if parallel else 1)
            keys = vectorize.tag(module, lanes, self.threads, self.parallel_bytes)
            if keys:
                def build(root: ir.Value) -> None:
                    for key in keys:
                        vectorize.schedule_vectors(root, key)
                    vectorize.lower(vectorize.marked_functions(root))

                schedule.apply(module, build)
            vectorize.unmark(module)


#: the module attribute that gives the lowering to LLVM its data layout (convert-to-llvm{dynamic} reads it)
DATA_LAYOUT_ATTR = "dlti.dl_spec"


@dataclass(frozen=True)
class IndexBitwidth(TargetOptions, Pass):
    """On a target with 32-bit pointers (Cortex-M), the module's data layout says that ``index`` is 32 bits wide,
    so that the lowering to LLVM (``convert-to-llvm{dynamic=true}``, which reads it) makes every address and loop
    counter an i32: 64-bit index arithmetic costs a 32-bit core register pairs and carries on every address."""

    name = "cpu-index-bitwidth"
    summary = "on a target with 32-bit pointers, set the module's DLTI index width to 32 (nothing elsewhere)"

    def run(self, module: ir.Operation) -> None:
        bits = targets.index_bits(self.target().triple)
        if bits == 64:
            return
        with module.context:
            module.attributes[DATA_LAYOUT_ATTR] = ir.Attribute.parse(f"#dlti.dl_spec<index = {bits} : i64>")


@dataclass(frozen=True)
class ApproximateMath(TargetOptions, Pass):
    """math.exp / erf / tanh on f32 -> polynomial approximations in arith ops; on a bare-metal target also
    math.roundeven -> its exact expansion (newlib has no ``roundevenf``; see :mod:`.approx`)."""

    name = "cpu-approximate-math"
    summary = ("replace f32 math.exp, math.erf and math.tanh (scalar or vector) by polynomials: no libm calls per "
               "lane; for a bare-metal target-triple math.roundeven by arith too")

    def run(self, module: ir.Operation) -> None:
        with module.context:
            approx.approximate(module, expand=targets.bare_metal(self.target().triple))
