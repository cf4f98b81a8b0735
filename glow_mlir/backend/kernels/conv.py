"""Convolution kernels: ``linalg.conv_2d_nhwc_hwcf`` and ``linalg.depthwise_conv_2d_nhwc_hwc`` on f32 buffers (NHWC
activations, HWCF / HWC filters), tiled, decomposed to 1-D convolutions and vectorized.

The recipe (shared/NOTES-mlir.md, "Convolution and matmul at onnxruntime speed"): an L1 tile of one output row
``[1, 1, OW, Fl]``, a register tile ``[OWr, Fr]`` of accumulators with the filter's row and channel loops stepping by
1, ``structured.decompose`` (the 2-D convolution with a 1-row filter tile becomes a 1-D one), vectorization, then
hoisting of the accumulators out of the reduction loops BEFORE slices fold into the vector transfers (folding first
left the accumulator re-read on every step: 25-53 GFLOP/s instead of 105-115). The island over the buffers is the
matmul kernels' (:mod:`.matmul`): the output's content is the init, so a bias written into it before stays.

Register tiles come from a rule, not a search: ``Fr`` 32 (else 16, else the whole F up to 32: vectors of F's
width) and the largest ``OWr`` in {14, 8, 7, 4, 2, 1} dividing OW that keeps ``OWr x Fr / 16 <= 28`` zmm
accumulators; with a stride above 1 ``OWr`` stays at 8 or below (stride-2 tiles of 14 or 16 crashed inside the JIT
code in the NOTES' probe). Depthwise convolutions: register tiles of ``OWr x 16`` channels with the whole filter row
(NOTES: [16, 16] with KW 3 ran at 63 GFLOP/s, twice onnxruntime; channel tiles of 48 or 96 collapsed to 3-7), ``OWr``
from {16, 14, 8, 7, 4, 2, 1}. A convolution the rule cannot tile well (dilated, or F with no divisor of 8 or more
above 32, where the vectors would be scalar) keeps the generic lowering.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import bufferization, linalg
from mlir.dialects.transform import structured

from . import transform as schedule
from .matmul import TILES_ATTR, match_islands, tensor_of

NAME = "linalg.conv_2d_nhwc_hwcf"
DEPTHWISE = "linalg.depthwise_conv_2d_nhwc_hwc"
#: the ops of this family's islands
ISLAND_OPS = (NAME, DEPTHWISE)
#: depthwise register tiles: output columns, best first, and channels
DEPTHWISE_ROW_TILES = (16, 14, 8, 7, 4, 2, 1)
DEPTHWISE_CHANNELS = 16
#: zmm accumulators a register tile may hold (32 registers, some for the operands)
MAX_ACCUMULATORS = 28
#: the register tile's output columns, best first
ROW_TILES = (14, 8, 7, 4, 2, 1)
#: above stride 1, register tiles wider than this crashed (NOTES)
MAX_STRIDED_ROW_TILE = 8


@dataclass(frozen=True)
class ConvTiles:
    """L1 ``[1, 1, ow, f]`` and register ``[owr, fr]`` tiles of a convolution (f: filters, or channels when
    ``depthwise``)."""

    ow: int
    f: int
    owr: int
    fr: int
    depthwise: bool = False

    def key(self) -> str:
        return f"{'depthwise' if self.depthwise else 'conv'} l1=1x{self.ow}x{self.f} reg={self.owr}x{self.fr}"


def parse_key(key: str) -> ConvTiles:
    """The tiles that :meth:`ConvTiles.key` printed."""
    kind, *parts = key.split()
    l1, reg = (part.split("=")[1] for part in parts)
    _, ow, f = (int(x) for x in l1.split("x"))
    owr, fr = (int(x) for x in reg.split("x"))
    return ConvTiles(ow, f, owr, fr, kind == "depthwise")


def _ints(op: ir.Operation, name: str) -> list[int]:
    return [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])] if name in op.attributes else [1, 1]


def plan(output_shape: list[int], stride: int) -> ConvTiles | None:
    """Tiles for an output ``[N, OH, OW, F]`` at ``stride``, or None when the rule has none worth vectorizing."""
    _, _, ow, f = output_shape
    fr = next((t for t in (32, 16) if f % t == 0), f if f <= 32 else 0)
    if fr < 8:
        return None
    limit = MAX_STRIDED_ROW_TILE if stride > 1 else max(ROW_TILES)
    owr = next(t for t in ROW_TILES if ow % t == 0 and t <= limit and t * fr <= 16 * MAX_ACCUMULATORS)
    fl = 64 if f % 64 == 0 and fr == 32 else fr
    return ConvTiles(ow, fl, owr, fr)


def plan_depthwise(output_shape: list[int], stride: int) -> ConvTiles | None:
    """Tiles for a depthwise output ``[N, OH, OW, C]`` at ``stride``, or None (C not a multiple of 16)."""
    _, _, ow, c = output_shape
    if c % DEPTHWISE_CHANNELS:
        return None
    limit = MAX_STRIDED_ROW_TILE if stride > 1 else max(DEPTHWISE_ROW_TILES)
    owr = next(t for t in DEPTHWISE_ROW_TILES if ow % t == 0 and t <= limit)
    return ConvTiles(ow, DEPTHWISE_CHANNELS, owr, DEPTHWISE_CHANNELS, depthwise=True)


def matches(op: ir.Operation) -> ConvTiles | None:
    """The tiles for ``op`` if it is a convolution this family takes (f32, static shapes, no dilation)."""
    if op.name not in (NAME, DEPTHWISE) or _ints(op, "dilations") != [1, 1]:
        return None
    types = [ir.MemRefType(v.type) for v in op.operands if isinstance(v.type, ir.MemRefType)]
    if len(types) != 3 or not all(t.has_static_shape and t.element_type == ir.F32Type.get() for t in types):
        return None
    planner = plan_depthwise if op.name == DEPTHWISE else plan
    return planner(list(types[2].shape), max(_ints(op, "strides")))


def make_island(op: ir.Operation, tiles: ConvTiles) -> None:
    """Replace ``op`` by the same convolution on tensors over its buffers, tagged with its tiles."""
    src, filt, dest = op.operands
    with ir.InsertionPoint(op), op.location:
        builder = linalg.depthwise_conv_2d_nhwc_hwc if tiles.depthwise else linalg.conv_2d_nhwc_hwcf
        result = builder(tensor_of(src), tensor_of(filt), outs=[tensor_of(dest, writable=True)],
                         strides=_ints(op, "strides"), dilations=[1, 1])
        result.owner.attributes[TILES_ATTR] = ir.StringAttr.get(tiles.key())
        bufferization.materialize_in_destination(None, result, dest, writable=True)
    op.erase()


def island_op(key: str) -> str:
    """The op name of the islands with tiles ``key``."""
    return DEPTHWISE if parse_key(key).depthwise else NAME


def split_tiles(op: ir.Operation) -> int:
    """How many L1 tiles the island ``op`` has along the dim spread over the threads: its output rows."""
    return ir.RankedTensorType(op.results[0].type).shape[1]


def flops(op: ir.Operation) -> int:
    """2 x the multiply-adds of the island ``op``: the output's elements times the filter's window (and input
    channels: all of the filter but its last dim, the output channels, or for depthwise the channels)."""
    filt = ir.RankedTensorType(op.operands[1].type).shape
    return 2 * math.prod(ir.RankedTensorType(op.results[0].type).shape) * math.prod(filt[:-1])


def schedule_tiles(root: ir.Value, key: str, threads: int, tiles_per_task: int = 1) -> None:
    """Tile, decompose and vectorize the tensor convolutions tagged ``key`` and ``tiles_per_task``
    (:data:`.matmul.TASK_ATTR`); with threads, tasks of ``tiles_per_task`` output rows are spread over them. Dims:
    (n, oh, ow, f, kh, kw, c), depthwise (n, oh, ow, c, kh, kw)."""
    t = parse_key(key)
    ops = match_islands(root, island_op(key), key, tiles_per_task if threads > 1 else 0)
    reductions = [0, 0] if t.depthwise else [0, 0, 0]
    if threads > 1 and tiles_per_task:
        ops = structured.TileUsingForallOp(schedule.any_op(), schedule.any_op(), ops,
                                           tile_sizes=[0, tiles_per_task]).tiled_op
        rows = 1 if tiles_per_task > 1 else 0
        ops = structured.TileUsingForOp(ops, sizes=[1, rows, t.ow, t.f, *reductions]).tiled_linalg_op
    else:
        ops = structured.TileUsingForOp(ops, sizes=[1, 1, t.ow, t.f, *reductions]).tiled_linalg_op
    # the depthwise register tile takes the whole filter row (kw 0: untiled); the dense one steps kw and c by 1
    window = [1, 0] if t.depthwise else [1, 1, 1]
    registers = structured.TileUsingForOp(ops, sizes=[0, 0, t.owr, t.fr, *window]).tiled_linalg_op
    structured.VectorizeOp(structured.DecomposeOp(registers).transformed)


def tiled_keys(module: ir.Operation) -> list[str]:
    """The distinct tile keys of the convolution islands in ``module``."""
    keys: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in (NAME, DEPTHWISE) and TILES_ATTR in op.attributes:
            key = ir.StringAttr(op.attributes[TILES_ATTR]).value
            if key not in keys:
                keys.append(key)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return keys
