"""Matrix-multiplication kernels: ``linalg.matmul`` and ``linalg.batch_matmul`` on f32 buffers, tiled and vectorized.

The recipe (shared/NOTES-mlir.md, "Codegen that worked"): on linalg-on-tensors, an L1 tile of the output, a
register tile of ``mr x nr`` accumulators with a reduction step of 1, ``structured.vectorize`` (as a named
contraction, which the vector lowering turns into one broadcast + FMA per accumulator row), then hoisting of the
accumulator out of the reduction loop while still on tensors.

glowir lowers to linalg on memrefs, so each contraction is rewritten here into a *tensor island* on its own buffers::

    linalg.matmul ins(%a, %b : memref) outs(%c : memref)
  ->
    %ta = bufferization.to_tensor %a restrict            (read-only operands)
    %tb = bufferization.to_tensor %b restrict
    %tc = bufferization.to_tensor %c restrict writable   (the accumulator: %c's content is the init, e.g. the bias
                                                          that fully_connected broadcast into it just before)
    %r = linalg.matmul ins(%ta, %tb) outs(%tc) {glow.tiles = "..."}
    bufferization.materialize_in_destination %r in writable %c

One-shot bufferization later turns the island back into in-place code on ``%a``, ``%b`` and ``%c``: no buffer is
allocated (the lit test cpu-tile-kernels.mlir checks it). The memref design stays whole (the memory plan fixes every
buffer; the island only borrows them). Whatever writes ``%c`` before the contraction (fill, bias broadcast) is left as
it was, except around a matmul on packed weights: there the init and the elementwise updates after it (an
activation, a residual add) move into the island (:class:`.panels.Epilogue`) and are fused into each register tile, so that
the accumulators start from the init, go through the updates and the output is written once (a separate bias pass
over a 1024x1024 output cost 1-6% of its GEMM, same-run A/B; unpacked matmuls get the same from :mod:`.epilogue`).

Tiles must divide the shape (vectorization of a partial tile fails, and masked vectorization of a matmul did not
survive bufferization in these bindings), so a contraction whose M or N is not a multiple of the register tile is
split on its buffers (``memref.subview``) into a divisible main part and remainder strips, each with register tiles
that divide it (a remainder strip is one register tile wide). Every shape gets vectorized code this way; there is no
scalar fallback to fall into. ``batch_matmul`` becomes an ``scf.for`` over the batch with one 2-D island per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from mlir import ir
from mlir.dialects import arith, bufferization, linalg, memref, scf, transform
from mlir.dialects.transform import structured

from ...passes.ir.allocator import align_up
from . import transform as schedule
from .balance import multiples
from .isa import KernelSpec

#: the attribute that carries a tensor contraction's tiles from the island to its schedule
TILES_ATTR = "glow.tiles"
#: the attribute that says how an island's L1 tiles spread over the threads: how many of them one task (one iteration
#: of the scf.forall that runs across the cores) takes along the split dim; 0: no forall, the island runs on the
#: calling thread (``cpu-tile-kernels`` sets it)
TASK_ATTR = "glow.tiles_per_task"
#: the :data:`TASK_ATTR` of an island whose every L1 tile of both output dims is a task (a two-dim scf.forall): the
#: split dim alone has too few tiles to keep the threads busy (a 1x1 convolution at 7x7 pixels: 7 row tiles)
GRID = -1
#: on the init and update ops inside a packed island (:class:`.panels.Epilogue`): the island's tile key, for its schedule
INIT_ATTR = "glow.island_epilogue"
#: on the last op of a packed island with an epilogue (the last update, else the product): the island's tile key
LAST_ATTR = "glow.island_last"
#: on each island of a contraction cut into pieces (:func:`plan`): 2 x the multiply-adds of the whole contraction, so
#: that whether its pieces run across the threads follows the contraction's size, not each piece's (a fully connected
#: layer of 512 -> 1000 at batch 1, 1.02 MFLOP, is a piece of 896 columns and strips of 104: each below
#: ``parallel-flops``, it ran on one thread whatever the threads)
OP_FLOPS_ATTR = "glow.contraction_flops"
#: the ops of this family's islands (a packed one is a linalg.generic)
ISLAND_OPS = ("linalg.matmul", "linalg.generic")


def match_islands(root: ir.Value, name: str, key: str, tiles_per_task: int) -> ir.Value:
    """A handle to the islands ``name`` under ``root`` tagged with tiles ``key`` and ``tiles_per_task``."""
    attrs = {TILES_ATTR: ir.StringAttr.get(key),
             TASK_ATTR: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), tiles_per_task)}
    return structured.MatchOp(schedule.any_op(), root, ops=[name], op_attrs=ir.DictAttr.get(attrs)).result
ALIGNMENT = 64  # bytes: the packed panels start on a cache line


@dataclass(frozen=True)
class Tiles:
    """The tiles of one contraction: L1 ``m x n x k`` (k 0: the whole reduction) and register ``mr x nr x 1``;
    ``pack``: B is first copied into ``nr``-column panels (see :func:`_packed_islands`)."""

    m: int
    n: int
    k: int
    mr: int
    nr: int
    pack: bool = False
    #: the L1 dim whose tiles are spread over the threads: 0 rows, 1 columns (the one with more tiles)
    split: int = 0
    #: a packed island with its epilogue inside (:class:`.panels.Epilogue`): the output's rows and panels, which the schedule
    #: needs to tile and fuse the epilogue into the register tiles, and how many updates follow the product (rows 0:
    #: no epilogue)
    init: tuple[int, int, int] = (0, 0, 0)
    #: the island runs on the thread that runs its loop's iteration (an image row of :func:`.panels.row_islands`)
    serial: bool = False
    #: a packed island's register tiles run down the rows of one panel before the next panel, not across the panels
    #: of one row: each panel's slice of B is read from L1 by every row tile (:func:`panels_outer`)
    panels_outer: bool = False
    #: a packed island's L1 tiles run down the rows of one column tile before the next, not across the columns of one
    #: row tile: B, larger than L2, streams once instead of once per row tile (:func:`columns_outer`)
    columns_outer: bool = False

    def key(self) -> str:
        return (f"l1={self.m}x{self.n}x{self.k} reg={self.mr}x{self.nr}" + (" pack" if self.pack else "")
                + (f" split={self.split}" if self.split else "")
                + (f" init={'x'.join(str(v) for v in self.init)}" if self.init[0] else "")
                + (" serial" if self.serial else "") + (" panels-outer" if self.panels_outer else "")
                + (" columns-outer" if self.columns_outer else ""))


def target_tiles(m: int, n: int, k: int, spec: KernelSpec) -> Tiles:
    """The target tiles of the first shape class of ``spec``'s table that covers ``m x n x k``, for a B known only at
    run time (packed when the class copies it into panels on every call)."""
    c = spec.matmul_class(m, n, k)
    return Tiles(c.m, c.n, c.k, c.mr, c.nr, c.pack and c.copy)


#: constant weights whose N is no whole number of panels are padded with zero columns to the next whole panel (the
#: product then sliced back to N) when that adds at most one column in this many: unpacked, the matmul kernel copied
#: B into panels on every call or read it at the N x 4-byte stride (AVX-512, one core, same process: 169x512x1000,
#: squeezenet's classifier as a matmul of its pixels, 851 -> 725 us, onnxruntime 729; 1x512x1000 30.5 -> 27.3 us,
#: 1x2048x1000 107 -> 90 us; AVX2 code 169x512x1000 1656 -> 1490 us, 1x512x1000 32.0 -> 25.5 us)
PAD_SHARE = 8


def panel_width(m: int, n: int, k: int, spec: KernelSpec) -> int:
    """The panel width in which to pack constant weights ``[K, N]`` of an ``m x n x k`` contraction at compile time
    (cpu-pack-matmul-weights), or 0 to keep them: the shape's class wants B in panels, N is more than one panel, and
    whole panels or padded to them (at most one column in :data:`PAD_SHARE` more)."""
    c = spec.matmul_class(m, n, k)
    if not c.pack or n <= c.nr:
        return 0
    return c.nr if (align_up(n, c.nr) - n) * PAD_SHARE <= n else 0


#: the shortest reduction whose weights :func:`vector_columns` pads: below it the FMAs saved are no measurable share of
#: the call (64 and 3 rows, 10 columns, K of 10 to 64: 4.4-5.7 us either way, znver3 code on Zen 5)
MIN_PADDED_K = 64


def vector_columns(m: int, n: int, k: int, spec: KernelSpec) -> int:
    """The columns to pad constant weights ``[K, N]`` to where :func:`panel_width` packs none, or 0 to keep them:
    whole vectors, where their register tiles cost fewer FMA slots than those of N's :func:`vector_pieces`
    (:func:`columns_cost`; the product is then sliced back to N). A 10-class head on AVX2 ran as pieces of 8 and 2
    columns, each a tile of one vector (6 accumulators, below the full rate), where 16 columns are one tile of two
    (64x512x10 16.0 us, 64x512x16 12.2; AVX-512 13.5 and 8.8; znver3 and host code on Zen 5); 40 columns on
    AVX-512 (32 + 8) cost what 48 do (32 + 16) and stay."""
    t = target_tiles(m, n, k, spec)
    padded = align_up(n, spec.lanes)
    if padded == n or k < MIN_PADDED_K or panel_width(m, n, k, spec):
        return 0
    return padded if columns_cost(padded, t.mr, t.nr, spec) < columns_cost(n, t.mr, t.nr, spec) else 0


def columns_cost(n: int, mr: int, nr: int, spec: KernelSpec) -> int:
    """One reduction step of ``mr`` rows over ``n`` columns cut into :func:`vector_pieces` of register tiles at most
    ``nr`` wide, in FMA slots (:func:`row_tile_cost`)."""
    return sum(cols // min(cols, nr) * row_tile_cost(mr, min(cols, nr), spec) for _, cols in vector_pieces(n, nr))


def fit(extent: int, reg: int, target: int) -> int:
    """The largest multiple of ``reg`` that divides ``extent`` and is at most ``target`` (at least ``reg``)."""
    return multiples(extent, reg, target)[0]


def strips(extent: int, reg: int) -> list[tuple[int, int, int]]:
    """``extent`` cut into a part that ``reg`` divides and a remainder: (start, size, register tile) each."""
    main = extent - extent % reg
    strips = [(0, main, reg)] if main else []
    if extent % reg:
        strips.append((main, extent % reg, extent % reg))
    return strips


def vector_pieces(extent: int, width: int) -> list[tuple[int, int]]:
    """``extent`` lanes (output columns, output channels) cut into ``(start, size)`` pieces that vectorize well: the
    largest multiple of ``width`` (a power of two), then ``width / 2``, ``width / 4`` ... 1 as the remainder needs. A
    register tile whose width is no power of two runs at a fraction of the speed (a 24-wide one: 8x256x120 took
    16.6 us where 8x256x128 took 2.6 us; as 96 + 16 + 8 it vectorizes at full width)."""
    pieces, start = [], 0
    size = extent - extent % width
    while extent > start:
        if size and extent - start >= size:
            pieces.append((start, size))
            start += size
        size = width = width // 2
    return pieces


@dataclass(frozen=True)
class Piece:
    """A rectangle of the output, ``rows x cols`` at ``(row, col)``, with tiles that divide it."""

    row: int
    rows: int
    col: int
    cols: int
    tiles: Tiles


def divisor_rows(m: int, mr: int, nr: int, spec: KernelSpec) -> int:
    """The most rows below ``mr`` that divide ``m`` while a tile of them, ``nr`` wide, keeps every FMA pipe busy
    (``spec.busy_accumulators``), or 0 where none does."""
    vectors = -(-nr // spec.lanes)
    return next((r for r in range(mr - 1, 0, -1) if m % r == 0 and r * vectors >= spec.busy_accumulators), 0)


def row_tile_cost(rows: int, nr: int, spec: KernelSpec) -> int:
    """One reduction step of a register tile ``rows x nr``, in FMA slots: its accumulators' FMAs, and no fewer than
    ``spec.full_rate_accumulators`` (a tile of fewer waits on the FMAs' latency or its loads)."""
    return max(rows * -(-nr // spec.lanes), spec.full_rate_accumulators)


def register_rows(m: int, mr: int, nr: int, spec: KernelSpec, strips: bool = True) -> int:
    """The rows of the register tile for ``m`` rows: ``mr`` where it divides ``m``; else the tiles of
    :func:`divisor_rows` where they cost no more than ``mr``-row tiles and a remainder strip
    (:func:`row_tile_cost`), else ``mr`` with the strip. A tile of exactly the busy accumulators runs below the full
    rate: AVX2 (4x16, 8 accumulators) at M = 64 took 1.10x the time of 6x16 and a strip of 4, at M = 28 to 88
    1.04-1.12x, at 1024 1.02-1.06x; a divisor of more accumulators or a strip of fewer loses (AVX2 at M = 8, 10,
    20; AVX-512 6x32 at M = 12, 36, 60, 66; 512 x 512 weights, znver3 and host code on Zen 5, same runs).
    ``strips=False``: the divisor rows for every ``m`` (how a pointwise convolution weighs running as a matmul,
    :func:`.conv._matmul_wins`, as measured)."""
    if m % mr == 0:
        return mr
    rows = divisor_rows(m, mr, nr, spec)
    if not strips or not rows:
        return rows or mr
    whole = m // rows * row_tile_cost(rows, nr, spec)
    strip = m // mr * row_tile_cost(mr, nr, spec) + row_tile_cost(m % mr, nr, spec)
    return rows if whole <= strip else mr


def plan(m: int, n: int, k: int, spec: KernelSpec) -> list[Piece]:
    """The pieces that cover an ``m x n`` output with a reduction of ``k``, each with dividing tiles on ``spec``."""
    t = target_tiles(m, n, k, spec)
    k_tile = t.k if t.k and k % t.k == 0 else 0
    pieces = []
    for c, cols in vector_pieces(n, t.nr):
        nr = min(cols, t.nr)
        for r, rows, mr in strips(m, register_rows(m, t.mr, nr, spec)):
            l1_m, l1_n = fit(rows, mr, t.m), fit(cols, nr, t.n)
            # a remainder strip is one register tile wide: one panel, nothing to pack
            tiles = Tiles(l1_m, l1_n, k_tile, mr, nr, t.pack and nr == t.nr,
                          split=0 if rows // l1_m >= cols // l1_n else 1)
            pieces.append(Piece(r, rows, c, cols, tiles))
    pieces.sort(key=lambda p: (p.row, p.col))
    return pieces


def static_f32(op: ir.Operation) -> bool:
    types = [ir.MemRefType(v.type) for v in op.operands if isinstance(v.type, ir.MemRefType)]
    return (len(types) == 3 and all(t.has_static_shape and t.element_type == ir.F32Type.get() for t in types))


#: the indexing maps of a plain (un-transposed, un-broadcast) matmul and batch_matmul
PLAIN_MAPS = {
    "linalg.matmul": "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
                     "affine_map<(d0, d1, d2) -> (d0, d1)>]",
    "linalg.batch_matmul": "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
                           "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]",
}


def matches(op: ir.Operation) -> bool:
    """Whether ``op`` is a contraction this kernel family takes: a plain matmul or batch_matmul on f32 memrefs of
    static shape. Others (transposed maps, integers) keep the generic lowering (scalar loops)."""
    if op.name not in PLAIN_MAPS or not static_f32(op):
        return False
    return "indexing_maps" not in op.attributes or str(op.attributes["indexing_maps"]) == PLAIN_MAPS[op.name]


def tensor_of(v: ir.Value, writable: bool = False) -> ir.Value:
    """The tensor of buffer ``v`` in an island (``restrict``: the island is the only way into the tensor world)."""
    t = ir.MemRefType(v.type)
    return bufferization.to_tensor(ir.RankedTensorType.get(t.shape, t.element_type), v, restrict=True,
                                   writable=writable or None)


def _island(a: ir.Value, b: ir.Value, c: ir.Value, tiles: Tiles, spec: KernelSpec, whole_flops: int = 0) -> None:
    """``c += a @ b`` as a tensor matmul on the three buffers, tagged with its tiles (``spec``: the target's caches,
    for B packed at run time) and, as a piece of a larger contraction, that one's FLOPs ``whole_flops``
    (:data:`OP_FLOPS_ATTR`)."""
    if tiles.pack:
        _packed_islands(b, [(a, c, tiles)], spec)
        return
    result = linalg.matmul(tensor_of(a), tensor_of(b), outs=[tensor_of(c, writable=True)])
    result.owner.attributes[TILES_ATTR] = ir.StringAttr.get(tiles.key())
    if whole_flops:
        result.owner.attributes[OP_FLOPS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), whole_flops)
    bufferization.materialize_in_destination(None, result, c, writable=True)


def column_panels(v: ir.Value, width: int) -> ir.Value:
    """A ``rows x cols`` buffer seen as ``rows x (cols / width) x width``: column panels of ``width``."""
    t = ir.MemRefType(v.type)
    rows, cols = t.shape
    strides, offset = t.get_strides_and_offset()
    shape, panel_strides = [rows, cols // width, width], [strides[0], width, 1]
    # the verifier wants the identity layout whenever the strides are the row-major ones
    plain = offset == 0 and panel_strides == [cols, width, 1]
    layout = None if plain else ir.StridedLayoutAttr.get(offset, panel_strides)
    result = ir.MemRefType.get(shape, t.element_type, layout=layout)
    return memref.expand_shape(result, v, [[0], [1, 2]], [], shape)


def _pack_panels(b: ir.Value, packed: ir.Value, nr: int) -> None:
    """``packed[p, k, j] = b[k, p * nr + j]`` as a generic over (k, p, j): its loops read B row by row, one
    sequential stream, where the transpose's (p, k, j) order read a panel down its rows, 4 KiB apart at N = 1024 (a
    line per row and page: the prefetchers stop at pages). haswell code on Zen 4, SGEMM 1024^3, same-run A/B, three
    rounds: 0.94-0.96x OpenBLAS-Haswell against 0.91-0.93x (the AVX-512 code level, 0.94-1.01 both)."""
    d = [ir.AffineDimExpr.get(i) for i in range(3)]
    maps = [ir.AffineMap.get(3, 0, d), ir.AffineMap.get(3, 0, [d[1], d[0], d[2]])]
    op = linalg.GenericOp([], [column_panels(b, nr)], [packed], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          [linalg.IteratorType.parallel] * 3)
    block = op.regions[0].blocks.append(ir.F32Type.get(), ir.F32Type.get())
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])


#: the share of L2 that one block of B packed at run time may fill (the rest holds A's rows and C's tiles)
PACKED_BLOCK_L2_SHARE = 0.5
#: the rows of B a packed block aims at where all of N does not fit (each block's island then reads and writes its
#: columns of C once): fewer where all of N fits that way
PACKED_BLOCK_ROWS = 256
#: the fewest rows of B in a packed block: below it (a K with no divisor in between) all of K is one block
MIN_PACKED_ROWS = 64
#: the most blocks: each is an island of its own in the code (larger blocks beyond)
MAX_PACKED_BLOCKS = 32


def packed_blocks(k: int, n: int, cols: int, l2: int) -> tuple[int, int]:
    """``(rows, columns)`` of B packed at a time for a run-time copy into panels, so that each block is packed and
    read back in L2 (:data:`PACKED_BLOCK_L2_SHARE` of it): all of B where it fits; else blocks of all N columns and
    the rows that fit where they reach :data:`PACKED_BLOCK_ROWS`, else blocks of that many rows and the columns that
    fit (whole L1 tiles of ``cols``); no more than :data:`MAX_PACKED_BLOCKS` (more rows, then wider blocks, beyond
    the share of L2 where that takes them). Each block's island adds onto C, so C is read and written K / rows
    times, A N / columns times. Against B packed whole, same runs on an Emerald Rapids
    VM, SGEMM / OpenBLAS's kernel for the ISA: haswell code 1024^3 0.94-0.97 -> 0.97, 2048^3 0.69 -> 0.96; AVX-512
    1024^3 0.98-0.99 either way, 2048^3 1.00 -> 1.01; two threads, GFLOP/s: AVX-512 1024^3 227 -> 260, 2048^3
    237 -> 263, haswell code 2048^3 104 -> 148."""
    budget = int(l2 * PACKED_BLOCK_L2_SHARE) // 4
    if k * n <= budget:
        return k, n
    rows = fit(k, 1, max(budget // n, PACKED_BLOCK_ROWS))
    rows = rows if rows >= min(k, MIN_PACKED_ROWS) else k
    columns = fit(n, cols, max(cols, budget // rows)) if rows * n > budget else n
    if k // rows > MAX_PACKED_BLOCKS:
        rows = min(d for d in range(1, k + 1) if k % d == 0 and k // d <= MAX_PACKED_BLOCKS)
    if (k // rows) * (n // columns) > MAX_PACKED_BLOCKS:  # wider blocks, as few as the bound needs
        columns = min(d for d in range(cols, n + 1, cols) if n % d == 0 and (k // rows) * (n // d) <= MAX_PACKED_BLOCKS)
    return rows, columns


#: the share of L1 that one panel's slice of B (its rows in one packed block x the panel's columns) may fill for the
#: register tiles to run down a panel's rows (:func:`panels_outer`); the rest holds the row tile's rows of A
PANEL_L1_SHARE = 0.5


#: the share of L2 that B may fill and still stay there while every L1 row tile reads it (:func:`columns_outer`)
COLUMNS_L2_SHARE = 0.5


def columns_outer(k: int, n: int, row_tiles: int, spec: KernelSpec) -> bool:
    """Whether a packed island's L1 tiles run down the rows of each column tile (B's ``k x n`` streamed once, A's rows
    read again from L2 for every column tile) rather than across the columns of each row tile (all of B read again
    by every row tile): where B exceeds :data:`COLUMNS_L2_SHARE` of L2 and there is more than one row tile.
    squeezenet's classifier, 169x512x1000 as AVX2 code (2 MB of B, 4 row tiles and a strip), took 1.06-1.20x
    onnxruntime's AVX2 time with the caches flushed between calls, 1.00x in cache."""
    return row_tiles > 1 and k * n * 4 > COLUMNS_L2_SHARE * spec.l2


def panels_outer(kc: int, nr: int, spec: KernelSpec) -> bool:
    """Whether the register tiles of a packed island of ``kc`` rows of B in ``nr``-column panels run down the rows of
    one panel before the next (the slice, ``kc x nr`` floats, read from L1 by every row tile; A's rows of the tile
    stream from L2) rather than across the panels of one row tile (A's rows in L1, every panel's slice streamed from
    L2 by every row tile): where the slice fits in :data:`PANEL_L1_SHARE` of L1. AVX2 SGEMM 1024^3 in blocks of 256
    rows (16 KiB slices), cachegrind with a 32 KiB 8-way L1 and a 512 KiB L2 (Zen 3's): 16.1M L1 misses a call ->
    8.7M (OpenBLAS-Haswell 8.7M); haswell code on Zen 5 (48 KiB L1), same-run A/B: 0.99x the time. AVX-512's 32 KiB
    slices in Zen 5's 48 KiB L1 took 1.01-1.02x the time so, and keep the panels inside."""
    return kc * nr * 4 <= PANEL_L1_SHARE * spec.l1


def _packed_islands(b: ir.Value, parts: list[tuple[ir.Value, ir.Value, Tiles]], spec: KernelSpec) -> None:
    """``c += a @ b`` for each ``(a, c, tiles)`` of ``parts`` (rows of one product that share B's columns: a main
    piece and its remainder strip) with B packed once for all of them: ``bp[p, k, j] = b[k, p * nr + j]`` into a
    scratch buffer (:func:`_pack_panels`; each ``nr``-column panel of B contiguous, so the register tile streams it
    without cache-set conflicts), then ``c[m, p, j] += a[m, k] * bp[p, k, j]`` as a tensor island on the panel view of
    each part's ``c``; a block of B at a time (:func:`packed_blocks`), each block's copy and islands in turn, the
    islands adding onto their columns of ``c``. The blocks are written out, not a loop: cpu-vectorize-rest visits
    top-level ops only, so a copy inside a loop would be neither vectorized nor spread over the threads (2048^3 on
    two threads, AVX-512, one run: 184 GFLOP/s so, 267 written out). Packed once, not once per part: AVX2 SGEMM at
    M = 1024 (1020 rows of 6x16 tiles and a strip of 4) copied B twice, 0.3-0.7 ms of 16.6 (haswell code on Zen 5)."""
    from .panels import panel_island

    k, n = ir.MemRefType(b.type).shape
    tiles = parts[0][2]
    assert all(t.nr == tiles.nr and t.n == tiles.n for _, _, t in parts), "parts share B's panels and blocks"
    f32, nr = ir.F32Type.get(), tiles.nr
    kc, nc = packed_blocks(k, n, tiles.n, spec.l2)
    outer = panels_outer(kc, nr, spec)
    packed = memref.alloc(ir.MemRefType.get([nc // nr, kc, nr], f32), [], [], alignment=ALIGNMENT)
    whole = (kc, nc) == (k, n)
    panels: list[ir.Value | None] = [None] * len(parts)
    for col in range(0, n, nc):
        for row in range(0, k, kc):
            _pack_panels(b if whole else memref.subview(b, [row, col], [kc, nc], [1, 1]), packed, nr)
            for i, (a, c, part_tiles) in enumerate(parts):
                if panels[i] is None:  # C's panel view, made after the first copy
                    panels[i] = column_panels(c, nr)
                m = ir.MemRefType(a.type).shape[0]
                into = panels[i] if nc == n else memref.subview(panels[i], [0, col // nr, 0], [m, nc // nr, nr],
                                                                [1, 1, 1])
                panel_island(a if kc == k else memref.subview(a, [0, row], [m, kc], [1, 1]), packed, into,
                             replace(part_tiles, panels_outer=outer))
    memref.dealloc(packed)


def _matmul_islands(a: ir.Value, b: ir.Value, c: ir.Value, spec: KernelSpec) -> None:
    """Islands covering ``c += a @ b`` (2-D buffers), one per piece of :func:`plan`; the pieces that pack the same
    columns of B share one copy (:func:`_packed_islands`)."""
    (m, k), n = ir.MemRefType(a.type).shape, ir.MemRefType(b.type).shape[1]
    pieces = plan(m, n, k, spec)
    if len(pieces) == 1:
        _island(a, b, c, pieces[0].tiles, spec)
        return

    def rows(q: Piece) -> ir.Value:
        return memref.subview(a, [q.row, 0], [q.rows, k], [1, 1])

    def out(q: Piece) -> ir.Value:
        return memref.subview(c, [q.row, q.col], [q.rows, q.cols], [1, 1])

    done: set[Piece] = set()
    for p in pieces:
        if p in done:
            continue
        columns = memref.subview(b, [0, p.col], [k, p.cols], [1, 1])
        if p.tiles.pack:  # the pieces on these columns of B share one copy of it in panels
            group = [q for q in pieces if q.tiles.pack and (q.col, q.cols) == (p.col, p.cols)]
            done.update(group)
            _packed_islands(columns, [(rows(q), out(q), q.tiles) for q in group], spec)
        else:
            _island(rows(p), columns, out(p), p.tiles, spec, 2 * m * n * k)


def _batch_slice(v: ir.Value, index: ir.Value) -> ir.Value:
    """``v[index]`` of a 3-D buffer, as a rank-reduced 2-D view at a dynamic offset."""
    t = ir.MemRefType(v.type)
    strides, _ = t.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), strides[1:])
    result = ir.MemRefType.get(t.shape[1:], t.element_type, layout=layout)
    return memref.subview(v, [index, 0, 0], [1, *t.shape[1:]], [1, 1, 1], result_type=result)


def make_islands(op: ir.Operation, spec: KernelSpec) -> None:
    """Replace a contraction that :func:`matches` by its tensor islands, tiled for ``spec``."""
    a, b, c = op.operands
    with ir.InsertionPoint(op), op.location:
        if op.name == "linalg.matmul":
            _matmul_islands(a, b, c, spec)
        else:
            lo, hi, step = (arith.constant(ir.IndexType.get(), v) for v in (0, ir.MemRefType(a.type).shape[0], 1))
            batch = scf.ForOp(lo, hi, step)
            with ir.InsertionPoint(batch.body):
                i = batch.induction_variable
                _matmul_islands(_batch_slice(a, i), _batch_slice(b, i), _batch_slice(c, i), spec)
                scf.YieldOp([])
    op.erase()


def parse_key(key: str) -> Tiles:
    """The tiles that :meth:`Tiles.key` printed."""
    parts = key.split()
    l1, reg = (part.split("=")[1] for part in parts[:2])
    m, n, k = (int(x) for x in l1.split("x"))
    mr, nr = (int(x) for x in reg.split("x"))
    split = next((int(p.split("=")[1]) for p in parts[2:] if p.startswith("split=")), 0)
    init = next((tuple(int(x) for x in p.split("=")[1].split("x")) for p in parts[2:] if p.startswith("init=")),
                (0, 0, 0))
    return Tiles(m, n, k, mr, nr, pack="pack" in parts[2:], split=split, init=init, serial="serial" in parts[2:],
                 panels_outer="panels-outer" in parts[2:], columns_outer="columns-outer" in parts[2:])


def _l1_counts(op: ir.Operation) -> tuple[list[int], Tiles]:
    """How many L1 tiles the island ``op`` has along its two output dims, and its tiles."""
    t = parse_key(ir.StringAttr(op.attributes[TILES_ATTR]).value)
    shape = ir.RankedTensorType(op.results[0].type).shape  # [m, n], packed: [m, panels, nr]
    l1 = [t.m, t.n // t.nr] if t.pack else [t.m, t.n]
    return [shape[0] // l1[0], shape[1] // l1[1]], t


def split_tiles(op: ir.Operation) -> int:
    """How many L1 tiles the island ``op`` has along its split dim (the one spread over the threads)."""
    counts, t = _l1_counts(op)
    return counts[t.split]


def grid_tiles(op: ir.Operation) -> int:
    """How many L1 tiles the island ``op`` has along both output dims (the tasks of a :data:`GRID`)."""
    counts, _ = _l1_counts(op)
    return counts[0] * counts[1]


def flops(op: ir.Operation) -> int:
    """2 x the multiply-adds of the island ``op``: the output's elements times the reduction (A's last dim)."""
    out = ir.RankedTensorType(op.results[0].type)
    return 2 * math.prod(out.shape) * ir.RankedTensorType(op.operands[0].type).shape[-1]


def task_flops(op: ir.Operation) -> int:
    """The FLOPs that decide whether the island ``op`` runs across the threads: those of the contraction it is a
    piece of (:data:`OP_FLOPS_ATTR`) where the island is at least half of it (the piece of whole register tiles),
    else its own (a remainder strip stays on the calling thread unless it is large itself)."""
    own = flops(op)
    whole = ir.IntegerAttr(op.attributes[OP_FLOPS_ATTR]).value if OP_FLOPS_ATTR in op.attributes else own
    return whole if 2 * own >= whole else own


def schedule_tiles(root: ir.Value, key: str, threads: int, tiles_per_task: int = 1) -> None:
    """Tile and vectorize the tensor matmuls tagged ``key`` and ``tiles_per_task`` (:data:`TASK_ATTR`). With
    several threads and ``tiles_per_task`` above 0, that many L1 tiles along the split dim make each iteration of an
    ``scf.forall`` (run across cores after bufferization), the other L1 tiles are ``scf.for`` loops inside; else every
    L1 tile is an iteration of ``scf.for`` loops."""
    t = parse_key(key)
    if t.init[0]:
        _schedule_initialized(root, key, t, threads, tiles_per_task)
        return
    if t.pack:  # dims (m, panel, column in panel, k): the n tile counts panels, a panel stays whole
        name, l1, registers = "linalg.generic", [t.m, t.n // t.nr, 0, t.k], [t.mr, 1, 0, 1]
    else:  # dims (m, n, k)
        name, l1, registers = "linalg.matmul", [t.m, t.n, t.k], [t.mr, t.nr, 1]
    ops = match_islands(root, name, key, tiles_per_task if threads > 1 else 0)
    if threads > 1 and tiles_per_task:  # tasks of the split dim's L1 tiles over the threads, loops inside each
        across = _across(l1[:2], t.split, tiles_per_task)
        ops = structured.TileUsingForallOp(schedule.any_op(), schedule.any_op(), ops, tile_sizes=across).tiled_op
        inside = _inside(l1, t.split, tiles_per_task)
        if any(inside):
            ops = structured.TileUsingForOp(ops, sizes=inside).tiled_linalg_op
    else:
        ops = structured.TileUsingForOp(ops, sizes=l1, interchange=_columns_first(len(l1), t)).tiled_linalg_op
    # dims (m, panel, column, k): the panel loop outside the row tiles' loop
    order = [1, 0, 2, 3] if t.panels_outer else None
    registers = structured.TileUsingForOp(ops, sizes=registers, interchange=order).tiled_linalg_op
    structured.VectorizeOp(registers).create_named_contraction = True


def _columns_first(loops: int, t: Tiles) -> list[int] | None:
    """The order of an island's ``loops`` L1 tile loops (dims m, n or panel, ...): the columns' loop first where
    ``t.columns_outer``, else the dims' own order (None)."""
    return [1, 0, *range(2, loops)] if t.columns_outer else None


def _across(l1: list[int], split: int, tiles_per_task: int) -> list[int]:
    """The tile sizes of the scf.forall of tasks over the two output dims: ``tiles_per_task`` L1 tiles of the split
    dim (the other dim whole), or one L1 tile of both (:data:`GRID`)."""
    if tiles_per_task == GRID:
        return list(l1[:2])
    return [size * tiles_per_task if d == split else 0 for d, size in enumerate(l1[:2])]


def _inside(l1: list[int], split: int, tiles_per_task: int) -> list[int]:
    """The L1 tile sizes inside one task: none along a dim whose task is one L1 tile."""
    if tiles_per_task == GRID:
        return [0, 0, *l1[2:]]
    return [0 if d == split and tiles_per_task == 1 else size for d, size in enumerate(l1)]


def _schedule_initialized(root: ir.Value, key: str, t: Tiles, threads: int, tiles_per_task: int) -> None:
    """:func:`schedule_tiles` of packed islands with an epilogue (:class:`.panels.Epilogue`, the whole K in one tile): the
    island's last op (the last update, else the product) tiled at L1 and at the register tile with its producers
    fused into both loop nests (``transform.structured.fuse`` follows the outputs through the loops), so that each
    register tile's accumulators start from the init and go through the updates; then the reduction in steps of 1
    and all of it vectorized. Tile sizes equal to a dim's whole extent are 0 (a one-iteration loop fails the
    fusion)."""
    rows, panels, updates = t.init
    tail = [0] if updates else [0, 0]  # an update's dims are (m, p, j); the product's (m, p, j, k)

    def whole(sizes: list[int], extents: list[int]) -> list[int]:
        return schedule.whole(sizes, extents) + tail

    fuse = schedule.fuse
    extents, l1 = [rows, panels], [t.m, t.n // t.nr]
    last = structured.MatchOp(schedule.any_op(), root, ops=["linalg.generic"],
                              op_attrs=ir.DictAttr.get({LAST_ATTR: ir.StringAttr.get(key)})).result
    inside = l1
    if threads > 1 and tiles_per_task:
        last = fuse(last, whole(_across(l1, t.split, tiles_per_task), extents), forall=True)
        inside = _inside(l1, t.split, tiles_per_task)
    last = fuse(last, whole(inside, extents), interchange=_columns_first(2 + len(tail), t))
    fuse(last, whole([t.mr, 1], l1))
    schedule.for_each(schedule.functions(root), transform.ApplyDeadCodeEliminationOp)
    products = match_islands(root, "linalg.generic", key, tiles_per_task if threads > 1 else 0)
    registers = structured.TileUsingForOp(products, sizes=[0, 0, 0, 1]).tiled_linalg_op
    structured.VectorizeOp(registers).create_named_contraction = True
    epilogue = structured.MatchOp(schedule.any_op(), root, ops=["linalg.fill", "linalg.broadcast", "linalg.generic"],
                                  op_attrs=ir.DictAttr.get({INIT_ATTR: ir.StringAttr.get(key)})).result
    structured.VectorizeOp(epilogue)


__all__ = [
    "COLUMNS_L2_SHARE",
    "GRID",
    "INIT_ATTR",
    "ISLAND_OPS",
    "LAST_ATTR",
    "MIN_PADDED_K",
    "OP_FLOPS_ATTR",
    "TASK_ATTR",
    "TILES_ATTR",
    "Piece",
    "Tiles",
    "column_panels",
    "columns_cost",
    "columns_outer",
    "divisor_rows",
    "fit",
    "flops",
    "grid_tiles",
    "make_islands",
    "match_islands",
    "matches",
    "panel_width",
    "panels_outer",
    "plan",
    "register_rows",
    "row_tile_cost",
    "schedule_tiles",
    "split_tiles",
    "static_f32",
    "strips",
    "target_tiles",
    "task_flops",
    "tensor_of",
    "vector_columns",
    "vector_pieces",
]
