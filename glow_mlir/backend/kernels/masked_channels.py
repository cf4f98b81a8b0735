"""Convolutions with fewer output channels than a vector has lanes, in one masked vector per output pixel.

The row tiles (:mod:`.conv`) vectorize the output channels. ``F`` channels that are no power of two are cut into
pieces of vector widths (:func:`.conv.channel_pieces`: 6 as 4 + 2), one island each: every piece reads the input
again and takes an FMA of its own per pixel, so 6 channels on AVX-512 fill 6 of the 32 lanes of two FMAs (lenet5's
first convolution, 5x5 1->6, ran at 23% of the peak). Here the ``F`` channels of a pixel are one vector of the next
power of two (8 for 6), its lanes beyond ``F`` masked off: the filter row ``[KH, KW, C, F]`` is read with a masked
load. The output (its bias, written before) is read and written whole vectors at a time over each row seen as one
dim, the lanes past a pixel's channels being the next pixel's, stored over in order, but for a tile's last pixel,
whose load and store are masked; where the pixels are not F apart (a channel slice of a wider buffer) every load
and store is masked, so the lanes past ``F`` touch no memory.

Loops: output rows (the tasks with threads: each thread a contiguous run of the image rows), then register tiles of
``columns`` output pixels of the row (the last one narrower), then (kh, kw, input channel): per step one masked
filter load, a broadcast per pixel and an FMA per pixel into accumulators carried by the loops. The epilogue
(activation, residual add) stays a vector loop of its own after the kernel, as for :mod:`.pixel_tiles`. Which
convolutions take it: :func:`.conv.masked_width`.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref, vector

from ...passes.conversion.ir_to_linalg import index_constant as _index
from .conv import ConvPlan, for_blocks, for_carrying, tile_cost
from .isa import KernelSpec


class _Kernel:
    """The operands and geometry of one ``linalg.conv_2d_nhwc_hwcf``: src ``[N, H, W, C]`` (padded), the filter
    ``[KH, KW, C, F]``, dest ``[N, OH, OW, F]``; ``width`` lanes per vector, the first ``F`` of them live."""

    def __init__(self, op: ir.Operation, width: int):
        self.src, self.filt, self.dest = op.operands
        self.strides = [int(v) for v in ir.DenseIntElementsAttr(op.attributes["strides"])]
        self.kh, self.kw, self.channels, self.f = ir.MemRefType(self.filt.type).shape
        self.images, self.oh, self.ow, _ = ir.MemRefType(self.dest.type).shape
        f32 = ir.F32Type.get()
        self.vector_type = ir.VectorType.get([width], f32)
        self.mask_type = ir.VectorType.get([width], ir.IntegerType.get_signless(1))
        strides, offset = ir.MemRefType(self.dest.type).get_strides_and_offset()
        #: the output with each row's pixels and channels as one dim, where the pixels are F apart (not a channel
        #: slice of a wider buffer): whole vectors read and write across a pixel's end
        self.flat = None
        if strides[2:] == [self.f, 1]:
            shape = [self.images, self.oh, self.ow * self.f]
            dest_type = ir.MemRefType(self.dest.type)
            identity = dest_type == ir.MemRefType.get(dest_type.shape, f32)
            layout = None if identity else ir.StridedLayoutAttr.get(offset, [*strides[:2], 1])
            self.flat = memref.collapse_shape(ir.MemRefType.get(shape, f32, layout), self.dest, [[0], [1], [2, 3]])

    def tile(self, n: ir.Value, y: ir.Value, x: ir.Value, columns: int) -> None:
        """Output pixels ``[x, x + columns)`` of row ``y`` of image ``n``, all their channels."""
        sh, sw = self.strides
        mask = vector.constant_mask(self.mask_type, [self.f])
        zero = arith.constant(self.vector_type, ir.DenseElementsAttr.get_splat(
            self.vector_type, ir.FloatAttr.get(ir.F32Type.get(), 0.0)))
        c0 = _index(0)
        xs = [arith.addi(x, _index(p)) if p else x for p in range(columns)]
        # all but the last pixel read and write whole vectors where the pixels are contiguous: the lanes past F are
        # the next pixel's first channels, stored before that pixel's own values (in order): masked AVX2 stores are
        # slow on AMD cores (5x5 1->6 at 24 columns, haswell code on Zen 4: 43 us with every load and store masked,
        # 28 us so)
        whole = [self.flat is not None and p < columns - 1 for p in range(columns)]
        offsets = [arith.muli(xp, _index(self.f)) if full else None for xp, full in zip(xs, whole)]
        accumulators = [vector.load(self.vector_type, self.flat, [n, y, at]) if at is not None else
                        vector.maskedload(self.vector_type, self.dest, [n, y, xp, c0], mask, zero)
                        for xp, at in zip(xs, offsets)]
        in_y = arith.muli(y, _index(sh)) if sh != 1 else y
        in_xs = [arith.muli(xp, _index(sw)) if sw != 1 else xp for xp in xs]

        def over_kh(kh: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
            row = arith.addi(in_y, kh)
            return for_carrying(self.kw, carried, lambda kw, c: over_kw(kh, kw, row, c))

        def over_kw(kh: ir.Value, kw: ir.Value, row: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
            columns_in = [arith.addi(v, kw) for v in in_xs]
            return for_carrying(self.channels, carried, lambda c, acc: step(kh, kw, c, row, columns_in, acc))

        def step(kh: ir.Value, kw: ir.Value, c: ir.Value, row: ir.Value, columns_in: list[ir.Value],
                 carried: list[ir.Value]) -> list[ir.Value]:
            weights = vector.maskedload(self.vector_type, self.filt, [kh, kw, c, c0], mask, zero)
            return [vector.fma(vector.broadcast(self.vector_type, memref.load(self.src, [n, row, xp, c])), weights,
                               acc) for xp, acc in zip(columns_in, carried)]

        accumulators = for_carrying(self.kh, accumulators, over_kh)
        for xp, value, at in zip(xs, accumulators, offsets):
            if at is not None:
                vector.store(value, self.flat, [n, y, at])
            else:
                vector.maskedstore(self.dest, [n, y, xp, c0], mask, value)

    def row(self, r: ir.Value, columns: int) -> None:
        """Output row ``r`` of the images' rows (image ``r / OH``), in tiles of ``columns`` pixels."""
        n, y = arith.divui(r, _index(self.oh)), arith.remui(r, _index(self.oh))
        whole, rest = divmod(self.ow, columns)

        def one(t: ir.Value, _: list[ir.Value]) -> list[ir.Value]:
            self.tile(n, y, arith.muli(t, _index(columns)), columns)
            return []

        for_carrying(whole, [], one)
        if rest:
            self.tile(n, y, _index(whole * columns), rest)


def make_kernel(op: ir.Operation, plan: ConvPlan, threads: int = 1) -> None:
    """Replace ``op``, a ``linalg.conv_2d_nhwc_hwcf`` whose plan takes masked channel vectors (``plan.masked``), by
    its loops; with ``threads`` above 1 the output rows are the tasks."""
    (_, _, tiles), = plan.pieces
    with ir.InsertionPoint(op), op.location:
        kernel = _Kernel(op, plan.masked)
        for_blocks(kernel.images * kernel.oh, threads, lambda r: kernel.row(r, tiles.owr))
    op.erase()


def register_columns(ow: int, spec: KernelSpec) -> int:
    """The output pixels of a register tile of one masked vector each: the spec's row tile of least
    :func:`.conv.tile_cost` over a row of ``ow`` (each pixel's accumulator, the filter vector and a broadcast within
    the registers), ties to the wider."""
    fits = [t for t in spec.conv_row_tiles if t <= ow and t <= spec.conv_accumulators and t + 2 <= spec.registers]
    return min(fits or [1], key=lambda t: (tile_cost(ow, t, 1, spec), -t))


__all__ = ["make_kernel", "register_columns"]
