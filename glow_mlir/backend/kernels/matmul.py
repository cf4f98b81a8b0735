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
buffer; the island only borrows them), and whatever writes ``%c`` before the contraction (fill, bias broadcast) is
left as it was.

Tiles must divide the shape (vectorization of a partial tile fails, and masked vectorization of a matmul did not
survive bufferization in these bindings), so a contraction whose M or N is not a multiple of the register tile is
split on its buffers (``memref.subview``) into a divisible main part and remainder strips, each with register tiles
that divide it (a remainder strip is one register tile wide). Every shape gets vectorized code this way; there is no
scalar fallback to fall into. ``batch_matmul`` becomes an ``scf.for`` over the batch with one 2-D island per step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, bufferization, linalg, memref, scf
from mlir.dialects.transform import structured

from . import transform as schedule

#: the attribute that carries a tensor contraction's tiles from the island to its schedule
TILES_ATTR = "glow.tiles"


@dataclass(frozen=True)
class Tiles:
    """The tiles of one contraction: L1 ``m x n x k`` (k 0: the whole reduction) and register ``mr x nr x 1``."""

    m: int
    n: int
    k: int
    mr: int
    nr: int

    def key(self) -> str:
        return f"l1={self.m}x{self.n}x{self.k} reg={self.mr}x{self.nr}"


@dataclass(frozen=True)
class ShapeClass:
    """A row of the tile table: the contractions it covers, and the tiles it aims at."""

    name: str
    covers: Callable[[int, int, int], bool]
    target: Tiles
    why: str


#: Target tiles by shape class (M, N, K), first match wins; measured single-core on this machine class
#: (AVX-512, 32 zmm registers) and checked by test/python/test_kernels.py on every class and its remainders.
TABLE: list[ShapeClass] = [
    ShapeClass("matrix-vector", lambda m, n, k: m < 8, Tiles(8, 256, 0, 8, 64),
               "few rows (batch-1 fully connected): wide rows of B, the tile's rows are the whole M"),
    ShapeClass("general", lambda m, n, k: True, Tiles(64, 128, 0, 8, 32),
               "8x32 = 16 zmm accumulators; B's 128-column panel of the whole K stays in L2 (NOTES: 111 GF/s at 512^3)"),
]


def target_tiles(m: int, n: int, k: int) -> Tiles:
    """The target tiles of the first shape class that covers ``m x n x k``."""
    return next(c.target for c in TABLE if c.covers(m, n, k))


def _fit(extent: int, reg: int, target: int) -> int:
    """The largest multiple of ``reg`` that divides ``extent`` and is at most ``target`` (at least ``reg``)."""
    best = reg
    for size in range(reg, min(extent, max(target, reg)) + 1, reg):
        if extent % size == 0:
            best = size
    return best


def _strips(extent: int, reg: int) -> list[tuple[int, int, int]]:
    """``extent`` cut into a part that ``reg`` divides and a remainder: (start, size, register tile) each."""
    main = extent - extent % reg
    strips = [(0, main, reg)] if main else []
    if extent % reg:
        strips.append((main, extent % reg, extent % reg))
    return strips


@dataclass(frozen=True)
class Piece:
    """A rectangle of the output, ``rows x cols`` at ``(row, col)``, with tiles that divide it."""

    row: int
    rows: int
    col: int
    cols: int
    tiles: Tiles


def plan(m: int, n: int, k: int) -> list[Piece]:
    """The pieces that cover an ``m x n`` output with a reduction of ``k``, each with dividing tiles."""
    t = target_tiles(m, n, k)
    k_tile = t.k if t.k and k % t.k == 0 else 0
    return [Piece(r, rows, c, cols, Tiles(_fit(rows, mr, t.m), _fit(cols, nr, t.n), k_tile, mr, nr))
            for r, rows, mr in _strips(m, t.mr) for c, cols, nr in _strips(n, t.nr)]


def _static_f32(op: ir.Operation) -> bool:
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
    if op.name not in PLAIN_MAPS or not _static_f32(op):
        return False
    return "indexing_maps" not in op.attributes or str(op.attributes["indexing_maps"]) == PLAIN_MAPS[op.name]


def _island(a: ir.Value, b: ir.Value, c: ir.Value, tiles: Tiles) -> None:
    """``c += a @ b`` as a tensor matmul on the three buffers, tagged with its tiles."""
    def tensor(v: ir.Value, writable: bool = False) -> ir.Value:
        t = ir.MemRefType(v.type)
        return bufferization.to_tensor(ir.RankedTensorType.get(t.shape, t.element_type), v, restrict=True,
                                       writable=writable or None)

    result = linalg.matmul(tensor(a), tensor(b), outs=[tensor(c, writable=True)])
    result.owner.attributes[TILES_ATTR] = ir.StringAttr.get(tiles.key())
    bufferization.materialize_in_destination(None, result, c, writable=True)


def _matmul_islands(a: ir.Value, b: ir.Value, c: ir.Value) -> None:
    """Islands covering ``c += a @ b`` (2-D buffers), one per piece of :func:`plan`."""
    (m, k), n = ir.MemRefType(a.type).shape, ir.MemRefType(b.type).shape[1]
    pieces = plan(m, n, k)
    for p in pieces:
        if len(pieces) == 1:
            _island(a, b, c, p.tiles)
            continue
        _island(memref.subview(a, [p.row, 0], [p.rows, k], [1, 1]), memref.subview(b, [0, p.col], [k, p.cols], [1, 1]),
                memref.subview(c, [p.row, p.col], [p.rows, p.cols], [1, 1]), p.tiles)


def _batch_slice(v: ir.Value, index: ir.Value) -> ir.Value:
    """``v[index]`` of a 3-D buffer, as a rank-reduced 2-D view at a dynamic offset."""
    t = ir.MemRefType(v.type)
    strides, _ = t.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), strides[1:])
    result = ir.MemRefType.get(t.shape[1:], t.element_type, layout=layout)
    return memref.subview(v, [index, 0, 0], [1, *t.shape[1:]], [1, 1, 1], result_type=result)


def make_islands(op: ir.Operation) -> None:
    """Replace a contraction that :func:`matches` by its tensor islands."""
    a, b, c = op.operands
    with ir.InsertionPoint(op), op.location:
        if op.name == "linalg.matmul":
            _matmul_islands(a, b, c)
        else:
            lo, hi, step = (arith.constant(ir.IndexType.get(), v) for v in (0, ir.MemRefType(a.type).shape[0], 1))
            batch = scf.ForOp(lo, hi, step)
            with ir.InsertionPoint(batch.body):
                i = batch.induction_variable
                _matmul_islands(_batch_slice(a, i), _batch_slice(b, i), _batch_slice(c, i))
                scf.YieldOp([])
    op.erase()


def parse_key(key: str) -> Tiles:
    """The tiles that :meth:`Tiles.key` printed."""
    l1, reg = (part.split("=")[1] for part in key.split())
    m, n, k = (int(x) for x in l1.split("x"))
    mr, nr = (int(x) for x in reg.split("x"))
    return Tiles(m, n, k, mr, nr)


def schedule_tiles(root: ir.Value, key: str, threads: int) -> None:
    """Tile and vectorize the tensor matmuls tagged ``key``. With several threads the L1 tiles become the
    iterations of an ``scf.forall`` (run across cores after bufferization), else of ``scf.for`` loops."""
    t = parse_key(key)
    ops = structured.MatchOp(schedule.any_op(), root, ops=["linalg.matmul"],
                             op_attrs=ir.DictAttr.get({TILES_ATTR: ir.StringAttr.get(key)})).result
    if threads > 1:
        ops = structured.TileUsingForallOp(schedule.any_op(), schedule.any_op(), ops, tile_sizes=[t.m, t.n]).tiled_op
        if t.k:
            ops = structured.TileUsingForOp(ops, sizes=[0, 0, t.k]).tiled_linalg_op
    else:
        ops = structured.TileUsingForOp(ops, sizes=[t.m, t.n, t.k]).tiled_linalg_op
    registers = structured.TileUsingForOp(ops, sizes=[t.mr, t.nr, 1]).tiled_linalg_op
    structured.VectorizeOp(registers).create_named_contraction = True


def tiled_keys(module: ir.Operation) -> list[str]:
    """The distinct tile keys of the islands in ``module``, in order of appearance."""
    keys: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.matmul" and TILES_ATTR in op.attributes:
            key = ir.StringAttr(op.attributes[TILES_ATTR]).value
            if key not in keys:
                keys.append(key)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return keys


__all__ = ["TABLE", "TILES_ATTR", "Piece", "ShapeClass", "Tiles", "make_islands", "matches", "plan",
           "schedule_tiles", "target_tiles", "tiled_keys"]
