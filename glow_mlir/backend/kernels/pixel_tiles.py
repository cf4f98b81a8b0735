"""Convolutions on packed filters in register tiles of output pixels that may cross output rows.

A row tile (:mod:`.conv`) takes ``OWr`` columns of one output row. Where the rows are short the tiles that fit the
registers waste FMA slots: on AVX2 (16 ymm, filter blocks of 16 channels) a row of 7 is a 4x16 and a 3x16 tile,
the second with 6 accumulators for two FMA pipes of 4 cycles' latency. Here the ``OH x OW`` output pixels of an
image are one sequence cut into tiles of ``rows`` pixels (the last one narrower), each pixel read from its own
input address: on AVX2 6x16 tiles (12 accumulators, two filter vectors and a broadcast: 15 registers) cover 49 or
196 pixels with one short tile at the end.

Loops, per filter block (the tasks with threads, as :func:`.conv.for_blocks` spreads them) and image: tiles of
pixels, then (kh, kw, input channel); per channel step ``nv`` filter vectors, a broadcast per pixel and
``rows x nv`` FMAs into accumulators carried by the loops, loaded from the output (its bias, written before) and
stored back at the end. Each step also prefetches the same filter lines of the next block into L2, every line of the
row (AVX-512's 32 filters: two): in a network the filters come from memory (a 3x3 512->512 layer holds 9.4 MB), and a
block's later tiles read it from L2 while the next one streams in. With only the row's first line prefetched, the
second came from memory as each block began (Zen 5, AVX-512, one core, cold weights, two alternating runs: 3x3/2
256->512 at 14x14 0.56 -> 0.49 ms, 3x3 512->512 at 7x7 1.07 -> 1.00, 1x1/2 256->512 0.10 -> 0.08).

A filter packed in chunks of input channels (:func:`.filter_layout.filter_chunk`: an L1 with fewer ways than the
filter has taps) runs chunk by chunk around the images and tiles: every tile of the block over one chunk, ``[KH, KW,
Cc, B]`` from L1, its accumulators loaded from and stored to the output once per chunk; with each tile a task, a tile
runs its chunks in turn.

Measured (haswell code on Zen 4, one core, filters cold, the same run against the row tiles; the prefetch alone
0.90 -> 0.83 of the first): 3x3 512->512 at 7x7 0.82-0.83 of the row tiles' time (66-67% -> 79-81% of the AVX2
peak), 3x3 256->256 at 14x14 0.94, stride 2 into 7x7 0.84 and into 14x14 0.90; at 28x28 1.00-1.01, where the row
tiles keep the epilogue fused. The epilogue (activation, residual add) stays a vector loop of its own after the
kernel: one pass over an output of a few hundred KB. Which convolutions take it: :func:`.conv.pixel_rows`.

A tile of whole output rows (its size a multiple of OW, so every tile starts a row) reads each pixel at a constant
distance from its first: no address register per pixel, so it may hold as many pixels as the accumulators allow.
AVX-512 at OW 7: two rows, 14x32 (28 zmm accumulators), where the 7x32 row tile read each filter vector for 7 FMAs
(Zen 4, one core, cold filters, old and new alternating in one process, fastest of six: 3x3 512->512 at 7x7 2.54 ->
1.79 ms, stride 2 into 7x7 2.39 -> 1.85, 1x1 512->2048 1.05 -> 0.98; resnet18 on one thread 27.2 -> 26.0 ms,
light_resnet50 62.2 -> 61.4, alternating processes). With threads the filter blocks are the tasks, or each tile of
each block where the blocks alone would leave threads idle (on sixteen, 9 blocks of 4 tiles: 36 tasks). A tile of an
equal part of one row (AVX-512 at stride 2 into OW 28: halves, 14x32, where the strided row tiles stop at 8 columns)
has the same constant distances along its row.

Where the input pixels of such a tile are a multiple of an L1 way apart (AVX-512, 3x3 stride 2 from 512 channels: 4
KiB, all 14 pixels in one set of 12 ways), the tiles read an input whose pixels are one cache line longer
(:func:`.conv._pixel_tiles` weighs the copy against the tiles' saving). In a compiled program
cpu-spread-conv-inputs has made the convolution's bordered input so before the memory plan placed it, and the kernel
reads it where it is; given a contiguous input (linalg on its own, not planned), the kernel copies it into a buffer of
its own first. Emerald Rapids VM,
one core, every call of each in turn: 3x3/2 512->512 at 14x14 1.43x -> 1.12x onnxruntime's time (7x32 row tiles
before), 1x1/2 1024->2048 at 14x14 1.20x -> 0.99x.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, memref, scf, vector

from ...passes.conversion.ir_to_linalg import BLOCKED_CONV_ATTR
from ...passes.conversion.ir_to_linalg import index_constant as _index
from .conv import CACHE_LINE, ConvPlan, for_blocks, for_carrying, for_tasks
from .filter_layout import PackedFilter
from .isa import KernelSpec
from .matmul import ALIGNMENT

#: the prefetch's locality hint: 2 keeps the line in L2 (prefetcht1 on x86), where the block's tiles read it
_L2 = 2


class _Kernel:
    """The operands and geometry of one convolution generic on a packed filter (``glow.blocked_conv``): src ``[N, H,
    W, C]``, the filter ``[F / B, KH, KW, C, B]`` or in chunks of input channels ``[F / B, C / Cc, KH, KW, Cc, B]``
    (:func:`.filter_layout.filter_chunk`), dest viewed ``[N, OH, OW, F / B, B]``."""

    def __init__(self, op: ir.Operation, spec: KernelSpec):
        self.src, self.filt, self.dest = op.operands
        self.strides = [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[BLOCKED_CONV_ATTR])]
        self.images = ir.MemRefType(self.src.type).shape[0]
        geometry = PackedFilter.of(ir.MemRefType(self.filt.type).shape)
        self.chunked = ir.MemRefType(self.filt.type).rank == 6
        self.blocks, self.kh, self.kw = geometry.blocks, geometry.kh, geometry.kw
        self.chunks, self.channels = geometry.chunks, geometry.chunk
        _, self.oh, self.ow, _, _ = ir.MemRefType(self.dest.type).shape
        self.lanes = spec.lanes
        self.vectors = geometry.block // spec.lanes
        self.vector_type = ir.VectorType.get([spec.lanes], ir.F32Type.get())
        #: the filter vectors of a step that start a cache line: the lines of the next block's row to prefetch
        #: (AVX-512's blocks of 32 channels: two lines; AVX2's 16: one)
        self.line_starts = [v for v in range(self.vectors) if v * spec.lanes * 4 % CACHE_LINE == 0]

    def _filter_at(self, j: ir.Value, q: ir.Value, kh: ir.Value, kw: ir.Value, c: ir.Value,
                   lane: ir.Value) -> list[ir.Value]:
        return [j, q, kh, kw, c, lane] if self.chunked else [j, kh, kw, c, lane]

    def tile(self, n: ir.Value, j: ir.Value, after: ir.Value, first: ir.Value, rows: int,
             q: ir.Value | None = None) -> None:
        """``rows`` output pixels from pixel ``first`` of image ``n`` in block ``j``: over chunk ``q`` of the input
        channels, or with ``q`` None over all of them; ``after``: the block whose filter lines to prefetch. A tile of
        whole output rows starts at a row (the tiles before it are whole rows too), so its pixels' rows and columns are
        the first's plus constants."""
        sh, sw = self.strides
        if rows % self.ow == 0:  # whole output rows: each pixel at a fixed distance from the first
            top = arith.divui(first, _index(self.ow))
            out_rows = [arith.addi(top, _index(p // self.ow)) if p >= self.ow else top for p in range(rows)]
            out_columns = [_index(p % self.ow) for p in range(rows)]
        elif self.ow % rows == 0:  # an equal part of one output row: the pixels follow the first along it
            top, left = arith.divui(first, _index(self.ow)), arith.remui(first, _index(self.ow))
            out_rows = [top] * rows
            out_columns = [arith.addi(left, _index(p)) if p else left for p in range(rows)]
        else:
            pixels = [arith.addi(first, _index(p)) if p else first for p in range(rows)]
            out_rows = [arith.divui(p, _index(self.ow)) for p in pixels]
            out_columns = [arith.remui(p, _index(self.ow)) for p in pixels]
        ys = [arith.muli(r, _index(sh)) for r in out_rows]
        xs = [arith.muli(c, _index(sw)) for c in out_columns]
        lanes = [_index(v * self.lanes) for v in range(self.vectors)]
        at = [(out_rows[p], out_columns[p], v) for p in range(rows) for v in range(self.vectors)]
        accumulators = [vector.load(self.vector_type, self.dest, [n, y, x, j, lanes[v]]) for y, x, v in at]

        def over_kh(kh: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
            in_rows = [arith.addi(y, kh) for y in ys]
            return for_carrying(self.kw, carried, lambda kw, c: over_kw(kh, kw, in_rows, c))

        def over_kw(kh: ir.Value, kw: ir.Value, in_rows: list[ir.Value], carried: list[ir.Value]) -> list[ir.Value]:
            in_columns = [arith.addi(x, kw) for x in xs]
            return for_carrying(self.channels, carried, lambda c, acc: step(kh, kw, c, in_rows, in_columns, acc))

        def step(kh: ir.Value, kw: ir.Value, c: ir.Value, in_rows: list[ir.Value], in_columns: list[ir.Value],
                 carried: list[ir.Value]) -> list[ir.Value]:
            for v in self.line_starts:
                memref.prefetch(self.filt, self._filter_at(after, chunk, kh, kw, c, lanes[v]), False, _L2, True)
            weights = [vector.load(self.vector_type, self.filt, self._filter_at(j, chunk, kh, kw, c, lanes[v]))
                       for v in range(self.vectors)]
            channel = arith.addi(base, c) if self.chunked else c
            out = list(carried)
            for p in range(rows):
                pixel = vector.broadcast(self.vector_type,
                                         memref.load(self.src, [n, in_rows[p], in_columns[p], channel]))
                for v in range(self.vectors):
                    out[p * self.vectors + v] = vector.fma(pixel, weights[v], out[p * self.vectors + v])
            return out

        def over_chunk(at: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
            nonlocal chunk, base
            chunk, base = at, arith.muli(at, _index(self.channels))
            return for_carrying(self.kh, carried, over_kh)

        chunk = base = None
        if not self.chunked:
            accumulators = for_carrying(self.kh, accumulators, over_kh)
        elif q is not None:
            accumulators = over_chunk(q, accumulators)
        else:  # a tile that is a task of its own: every chunk in turn, the accumulators carried through
            accumulators = for_carrying(self.chunks, accumulators, over_chunk)
        for (y, x, v), value in zip(at, accumulators):
            vector.store(value, self.dest, [n, y, x, j, lanes[v]])

    def block(self, j: ir.Value, rows: int) -> None:
        """Every output pixel of every image in filter block ``j``, in tiles of ``rows``; a filter in chunks of input
        channels chunk by chunk, every tile over one chunk before the next (which then stays in L1)."""
        after = arith.minui(arith.addi(j, _index(1)), _index(self.blocks - 1))
        pixels = self.oh * self.ow
        whole, rest = divmod(pixels, rows)

        def images(q: ir.Value | None) -> None:
            def image(n: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
                def one(t: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
                    self.tile(n, j, after, arith.muli(t, _index(rows)), rows, q)
                    return []

                for_carrying(whole, [], one)
                if rest:
                    self.tile(n, j, after, _index(whole * rows), rest, q)
                return []

            for_carrying(self.images, [], image)

        if self.chunked:
            for_carrying(self.chunks, [], lambda q, _: images(q) or [])
        else:
            images(None)


    def tasks(self, rows: int) -> None:
        """Every tile of every image in every filter block, one task each (an scf.forall): for threads that the
        blocks alone would leave idle."""
        whole, rest = divmod(self.oh * self.ow, rows)
        per_image = whole + (1 if rest else 0)
        per_block = self.images * per_image

        def one(t: ir.Value) -> None:
            j = arith.divui(t, _index(per_block))
            in_block = arith.remui(t, _index(per_block))
            n, k = arith.divui(in_block, _index(per_image)), arith.remui(in_block, _index(per_image))
            after = arith.minui(arith.addi(j, _index(1)), _index(self.blocks - 1))
            if not rest:
                self.tile(n, j, after, arith.muli(k, _index(rows)), rows)
                return
            last = arith.cmpi(arith.CmpIPredicate.eq, k, _index(whole))
            branch = scf.IfOp(last, has_else=True)
            with ir.InsertionPoint(branch.then_block):
                self.tile(n, j, after, _index(whole * rows), rest)
                scf.YieldOp([])
            with ir.InsertionPoint(branch.else_block):
                self.tile(n, j, after, arith.muli(k, _index(rows)), rows)
                scf.YieldOp([])

        for_tasks(self.blocks * per_block, one)


def tiles_per_image(op: ir.Operation, plan: ConvPlan) -> int:
    """The register tiles of pixels that cover one image of ``op``'s output."""
    _, oh, ow, _, _ = ir.MemRefType(op.operands[2].type).shape
    return -(-(oh * ow) // plan.pixel_rows)


def make_kernel(op: ir.Operation, plan: ConvPlan, spec: KernelSpec, threads: int = 1, tile_tasks: bool = False) -> None:
    """Replace ``op``, a convolution generic on a packed filter whose plan takes pixel tiles (``plan.pixel_rows``),
    by its loops; with ``threads`` above 1 the filter blocks are the tasks, or with ``tile_tasks`` each tile of each
    block is one."""
    kernel = _Kernel(op, spec)
    with ir.InsertionPoint(op), op.location:
        wide = _spread(kernel, plan.spread) if plan.spread else None
        if threads > 1 and tile_tasks:
            kernel.tasks(plan.pixel_rows)
        else:
            for_blocks(kernel.blocks, threads, lambda j: kernel.block(j, plan.pixel_rows))
        if wide is not None:
            memref.dealloc(wide)
    op.erase()


def _spread(kernel: _Kernel, extra: int) -> ir.Value:
    """Copy the kernel's input into a buffer of ``extra`` more channels per pixel (:attr:`.conv.ConvPlan.spread`),
    which the tiles then read through a view of its first channels; the buffer, to free after them. Only where the
    input came contiguous: in a planned program cpu-spread-conv-inputs has spread it already (no heap at run time)."""
    shape = ir.MemRefType(kernel.src.type).shape
    wide = memref.alloc(ir.MemRefType.get([*shape[:3], shape[3] + extra], ir.F32Type.get()), [], [],
                        alignment=ALIGNMENT)
    view = memref.subview(wide, [0, 0, 0, 0], shape, [1, 1, 1, 1])
    linalg.copy(kernel.src, outs=[view])
    kernel.src = view
    return wide
