"""Convolution kernels: ``linalg.conv_2d_nhwc_hwcf`` and ``linalg.depthwise_conv_2d_nhwc_hwc`` on f32 buffers (NHWC
activations, HWCF / HWC filters), tiled, decomposed to 1-D convolutions and vectorized.

The recipe (shared/NOTES-mlir.md, "Convolution and matmul at onnxruntime speed"): an L1 tile of one output row
``[1, 1, OW, Fl]``, a register tile ``[OWr, Fr]`` of accumulators with the filter's row and channel loops stepping by
1, ``structured.decompose`` (the 2-D convolution with a 1-row filter tile becomes a 1-D one), vectorization, then
hoisting of the accumulators out of the reduction loops BEFORE slices fold into the vector transfers (folding first
left the accumulator re-read on every step: 25-53 GFLOP/s instead of 105-115). The island over the buffers is the
matmul kernels' (:mod:`.matmul`): the output's content is the init, so a bias written into it before stays.

Register tiles come from a rule on the target's :class:`~.isa.KernelSpec`, not a search (:func:`plan`): ``Fr`` the
spec's conv width (two vectors: 32 on AVX-512, 16 on AVX2) or half of it, ``OWr`` one of the spec's row tiles
within the registers and the L1's ways, of least cost over the row (:func:`tile_cost`: loads per FMA, the FMA
pipes kept busy, the row's last tile the columns left over, which the schedule peels off); above stride 1
``OWr`` stays at the spec's strided limit (AVX-512 stride-2 tiles of 14 or 16 crashed inside the JIT code in the
NOTES' probe). Depthwise convolutions: register tiles of ``OWr x`` the spec's
depthwise channels with the whole filter row (NOTES, AVX-512: [16, 16] with KW 3 ran at 63 GFLOP/s, twice
onnxruntime; channel tiles of 48 or 96 collapsed to 3-7). Dilated convolutions keep the generic lowering.

Shape classes (measured one core, weights cold as in a network: ``python -m glow_mlir.bench_kernels``):

- output or depthwise channels that are not a multiple of the lanes are cut into pieces of vector widths, the
  multiple of the lanes then half of it, a quarter ... 1 (:func:`channel_pieces`), one island each on views of the buffers: F = 24 as one register tile
  of 24 ran at 6 GFLOP/s (mobilenet_v2's 1x1 144->24 and 96->24: 41% of the network), as 16 + 8 at 70-90;
- fewer output channels than the lanes, which the pieces would cut in several (6 as 4 + 2), run as one masked
  vector of the next power of two per output pixel (:func:`masked_width`, :mod:`.masked_channels`: lenet5's 5x5
  1->6 at 24 columns 51 -> 25 us on AVX-512, 42 -> 28 us as haswell code, warm, on Zen 4);
- filters known at compile time with whole blocks of the spec's filter block (32 AVX-512, 16 AVX2) output channels,
  or else whole vectors of them (AVX-512 208 = 13 x 16: blocks of one vector), and at least 16 input channels are
  packed as ``[F / B, KH, KW, C, B]`` by cpu-pack-conv-filters (:func:`filter_block`; for tiles of pixels on an L1
  with fewer ways than the filter has taps, in chunks of input channels, ``[F / B, C / Cc, KH, KW, Cc, B]``:
  :func:`.filter_layout.filter_chunk`); convert-glowir-to-linalg
  gives such a convolution as one generic (``blocked_conv``) and this kernel runs it as an ``scf.for`` over the
  blocks with one conv island per block, so that a block streams in once and stays in L2 across the output rows;
- a convolution on a packed filter whose output rows are short for the row tiles (AVX2 at OW 7 and 14: 4x16 and
  3x16, 5x16 and 4x16; AVX-512 at OW 7: 7x32) runs in tiles of output pixels that cross the rows (:func:`pixel_rows`,
  :mod:`.pixel_tiles`: AVX2 6x16 over 196 pixels, 5x16 over 49; AVX-512 two whole rows, 14x32 over 49), its
  epilogue left as vector loops; so does one whose filter comes from memory in a network and whose row tiles would
  read each filter block in few tiles (AVX-512 at OW 14: 14x32, one whole row a tile), as the pixel kernel
  prefetches the next block (:data:`PREFETCH_TILES`);
- a 1x1 stride-1 convolution on a packed filter of 32 or more input channels runs as a matmul of its pixels on
  the filter's blocks as panels (:func:`make_matmul_islands`, :func:`_matmul_wins`; AVX2 at OW 14 and 7: resnet50's
  1x1 layers there 1.1-1.2x onnxruntime's time -> 0.9-1.05x; AVX-512 and AVX2 at OW 13 to 56: 0.54-1.09x the row
  tiles' time, 0.76-0.80x count-weighted over five networks' pointwise layers below 256 channels), but where tiles
  of two whole output rows take it (AVX-512 at OW 7, and from 1024 channels over a copy of the input that spreads
  its pixels over the L1 sets, where that pays);
- a convolution whose filter outweighs its input and is not packed (a filter that is an input, F not whole vectors)
  puts its filter tiles outermost on one thread (``filters_outer``: 3x3 512->512 at 7x7 3.6 -> 2.4 ms; threaded,
  the output rows are the tasks as for every convolution);
- the rest keep the loop over output rows outermost with L1 tiles of two register tiles' filters where they fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, bufferization, linalg, memref, scf
from mlir.dialects.transform import structured

from ...passes.conversion.ir_to_linalg import BLOCKED_CONV_ATTR, channel_slice
from ...passes.conversion.ir_to_linalg import index_constant as _index
from . import transform as schedule
from .filter_layout import PackedFilter, filter_chunk
from .isa import KernelSpec
from .matmul import TASK_ATTR, TILES_ATTR, match_islands, tensor_of, vector_pieces

NAME = "linalg.conv_2d_nhwc_hwcf"
DEPTHWISE = "linalg.depthwise_conv_2d_nhwc_hwc"
#: the ops of this family's islands
ISLAND_OPS = (NAME, DEPTHWISE)
#: below this many input channels a filter is small and each block would re-read a wide input for few FMAs (the 7x7
#: stride-2 3->64 stem: 1.8 ms unpacked, 2.4 ms in two blocks)
MIN_PACKED_CHANNELS = 16


def max_block_bytes(spec: KernelSpec) -> int:
    """A filter block must stay in L2 beside the input rows it is applied to: 5/8 of it (640 KiB of 1 MiB)."""
    return spec.l2 * 5 // 8


def min_packed_bytes(spec: KernelSpec) -> int:
    """A filter below 2/3 of L1 (32 KiB of 48) stays there whole and needs no packing, while blocks would re-read the
    input once per block (cold weights, same runs): mobilenet_v2's 1x1 16->96 at 112x112 (6 KiB of filter, 800 KiB
    of input) 1.03-1.19 ms in 3 blocks -> 0.81-0.85 ms unpacked, 1x1 32->192 at 28x28 (24 KiB) 0.18-0.28 -> 0.14-0.23
    ms."""
    return spec.l1 * 2 // 3


@dataclass(frozen=True)
class ConvTiles:
    """L1 ``[1, 1, ow, f]`` and register ``[owr, fr]`` tiles of a convolution (f: filters, or channels when
    ``depthwise``)."""

    ow: int
    f: int
    owr: int
    fr: int
    depthwise: bool = False
    #: the filter-tile loop outside the output-row loop: a filter block stays in L2 across every output row
    filters_outer: bool = False

    def key(self) -> str:
        return (f"{'depthwise' if self.depthwise else 'conv'} l1=1x{self.ow}x{self.f} reg={self.owr}x{self.fr}"
                + (" filters-outer" if self.filters_outer else ""))


def parse_key(key: str) -> ConvTiles:
    """The tiles that :meth:`ConvTiles.key` printed."""
    kind, l1, reg, *flags = key.split()
    _, ow, f = (int(x) for x in l1.split("=")[1].split("x"))
    owr, fr = (int(x) for x in reg.split("=")[1].split("x"))
    return ConvTiles(ow, f, owr, fr, kind == "depthwise", "filters-outer" in flags)


def _ints(op: ir.Operation, name: str) -> list[int]:
    return [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])] if name in op.attributes else [1, 1]


def filter_block(filter_shape: list[int], group: int, dilations: list[int], spec: KernelSpec,
                 output_shape: list[int] | None = None, stride: int = 1, pixel_bytes: int = 0) -> int:
    """The block B in which to pack an HWCF filter of this shape at compile time, or 0 to keep HWCF.

    A register tile reads ``Fr = 32`` filters of one input channel at a time; in HWCF those 128 bytes sit F x 4
    bytes apart, so with F above 32 every tile gathers its filters from a stride that the prefetchers do not
    follow, and a network's filters come from memory (resnet18: 45 MB of weights). Packed, each block of 32 filters
    is one contiguous run that streams in once and stays in L2 for every output row: 3x3 512->512 at 7x7 with cold
    weights went from 3.6 ms (65 GFLOP/s, loop over output rows outermost) and 2.4 ms (filter tiles outermost) to
    1.2 ms (190 GFLOP/s; onnxruntime 1.5 ms); 3x3 64->64 at 56x56 1.5 -> 1.14 ms."""
    kh, kw, c, f = filter_shape
    # filters that are whole vectors but no whole blocks (AVX-512: 48, 112, 144, 208 = 16 x odd) are packed in blocks
    # of one vector: unpacked, their one-vector tiles read the filter at the F x 4-byte stride (Emerald Rapids, one
    # core, cold weights, alternating: inception's 3x3 96->208 at 13x13 0.67 -> 0.43 ms, 1x1 512->144 0.33 -> 0.27,
    # 512->112 0.27 -> 0.22, 384->48 0.11 -> 0.07; as AVX2 code squeezenet's 1x1 512->1000 at 13x13, 125 blocks of
    # 8, 3.9 -> 2.3 ms; networks: light_inception_v1 0.98x, as AVX2 code light_squeezenet 0.83x)
    block = spec.filter_block if f % spec.filter_block == 0 else spec.lanes
    # a block that would not stay in L2 is narrowed, down to one vector (a 256 KiB L2: 3x3x512 in 8-filter blocks)
    while block > spec.lanes and kh * kw * c * block * 4 > max_block_bytes(spec) and f % (block // 2) == 0:
        block //= 2
    if (group != 1 or list(dilations) != [1, 1] or f <= block or f % block or c < MIN_PACKED_CHANNELS
            or kh * kw * c * f * 4 < min_packed_bytes(spec) or kh * kw * c * block * 4 > max_block_bytes(spec)):
        return 0
    if output_shape is not None:
        # with ``output_shape`` (and the stride and input pixel bytes the tiles depend on): a register tile narrower
        # than the block (one vector: AVX2 at OW 14 and 7) takes blocks of its own width, so that every filter line
        # it reads from L2 is used whole (AVX2, 3x3 512->512 at 7x7: 1.15 -> 1.09x onnxruntime's time, 1x1
        # 1024->256 at 14x14: 1.32 -> 1.16x)
        tiles = plan([*output_shape[:3], block], stride, spec, pixel_bytes=pixel_bytes)
        if kh == kw == 1 and stride == 1 and _matmul_wins(tiles, output_shape[:3], block, c, f, spec):
            return block  # run as a matmul of the pixels (ConvPlan.as_matmul): panels of the matmul tile's width
        if tiles.fr < block and f % tiles.fr == 0:
            return tiles.fr
    return block


def pointwise_as_fully_connected(filter_shape: list[int], strides: list[int], pads: list[int], dilations: list[int],
                                 group: int, pixels: int, spec: KernelSpec) -> bool:
    """Whether a 1x1 stride-1 unpadded convolution with a constant HWCF filter over ``pixels`` output pixels runs as
    a fully connected layer of its pixels (cpu-pointwise-as-fully-connected): its output channels are no whole number
    of vectors, so :func:`filter_block` keeps the filter HWCF, and more than a block of them, so that the row tiles
    read it at an F x 4-byte stride the prefetchers do not follow, though it is too big to stay in L1; and the matmul
    is of the "large" tile class, which wants B in panels (cpu-pack-matmul-weights packs the weights at compile time,
    padded to whole panels; measured as matmuls of the "panels" class, 80->200 and 112->200 at 14x14 took 1.06x the
    time of the convolution). AVX-512 (Emerald Rapids, one core, same process, alternating): squeezenet's 1x1
    512->1000 at 13x13 2.67 -> 1.82 ms (onnxruntime 1.35), light_squeezenet 0.87x; kept as convolutions, measured
    there: 512->24 at 13x13 (1.02x as a matmul) and densenet's 1024->1000 at one pixel (1.10x)."""
    kh, kw, c, f = filter_shape
    return (kh == kw == 1 and list(strides) == [1, 1] and not any(pads) and list(dilations) == [1, 1] and group == 1
            and f > spec.filter_block and f % spec.lanes != 0 and c >= MIN_MATMUL_CHANNELS
            and c * f * 4 >= min_packed_bytes(spec) and spec.matmul_class(pixels, f, c).copy)


def channel_pieces(f: int, lanes: int) -> list[tuple[int, int]]:
    """``f`` output channels (or depthwise channels) cut into ``(start, size)`` pieces whose widths vectorize well:
    the largest multiple of 16, then 8, 4, 2 and 1 as the remainder needs. A register tile of a width that is no
    power of two (F = 24: vectors of 24) ran at 3-7 GFLOP/s; 16 + 8 as two pieces runs at full vector width."""
    return vector_pieces(f, lanes)


#: bytes of a cache line
CACHE_LINE = 64


def set_streams(rows: int, pixel_bytes: int, spec: KernelSpec) -> int:
    """How many of ``rows`` input pixels ``pixel_bytes`` apart (one per output column of a register tile, broadcast
    at each reduction step) fall into the same L1 set: with ``pixel_bytes`` a multiple of the way (C = 1024, or
    C = 512 at stride 2: 4 KiB) all of them do, and beyond the cache's ways they evict each other at every step
    (AVX2, 1x1 1024->256 at 14x14: 14x8 at 3.5x onnxruntime's time, 7x8 at 1.3x)."""
    if pixel_bytes <= 0:
        return 1
    period = spec.l1_way_bytes // math.gcd(pixel_bytes, spec.l1_way_bytes)
    return -(-rows // period)


def offset_streams(offsets: list[int], spec: KernelSpec) -> int:
    """The most of the input pixels at byte ``offsets`` that fall into one L1 set (:func:`set_streams` for pixels
    that need not be evenly apart: the two rows of a tile of whole rows)."""
    sets = max(1, spec.l1_way_bytes // CACHE_LINE)
    counts: dict[int, int] = {}
    for offset in offsets:
        key = offset // CACHE_LINE % sets
        counts[key] = counts.get(key, 0) + 1
    return max(counts.values(), default=0)


def _column_cost(owr: int, vectors: int, spec: KernelSpec) -> float:
    """The time of one output column of a register tile ``owr`` columns by ``vectors`` wide, in FMA slots: its loads
    per FMA, ``(owr + vectors) / (owr x vectors)``, scaled up where its accumulators cannot keep every FMA pipe busy
    (``spec.busy_accumulators``)."""
    accumulators = owr * vectors
    return (owr + vectors) / accumulators * max(1.0, spec.busy_accumulators / accumulators)


def tile_cost(ow: int, owr: int, vectors: int, spec: KernelSpec) -> float:
    """:func:`_column_cost` over a row of ``ow`` columns in tiles of ``owr``, the last one the ``ow % owr`` left over
    (peeled into a narrower tile of its own by the schedule)."""
    rest = ow % owr
    cost = (ow - rest) * _column_cost(owr, vectors, spec)
    return (cost + (rest * _column_cost(rest, vectors, spec) if rest else 0.0)) / ow


def plan(output_shape: list[int], stride: int, spec: KernelSpec, weight_heavy: bool = False,
         pixel_bytes: int = 0) -> ConvTiles:
    """Tiles on ``spec`` for an output ``[N, OH, OW, F]`` at ``stride`` with F a multiple of the lanes or a power of
    two below (a piece of :func:`channel_pieces`); ``weight_heavy``: the filter outweighs the input (see
    :func:`matches`); ``pixel_bytes``: how far apart the input pixels of neighbouring output columns are.

    The register tile ``OWr x Fr`` (``Fr / lanes`` vectors) is chosen among those whose accumulators, filter vectors
    and one broadcast fit the registers and whose broadcast streams fit the L1's ways (:func:`set_streams`): the
    least :func:`tile_cost` over the row (loads per FMA, scaled up where the accumulators leave the FMA pipes idle,
    with the row's last tile the columns left over: OWr need not divide OW), then the most accumulators, then the
    wider. AVX2 (haswell code on Zen 4, bench_kernels, resnet18's 3x3 convolutions, cold weights): OW 56 and 28 take
    6x16 with a last tile of 2 and 4 columns (99-100 -> 102-107 GFLOP/s, where 4x16 divided them), OW 14 5x16
    (14x8, the one dividing tile that kept the pipes busy: 86-87 -> 97-98), OW 7 4x16 and 3x16 (7x8: 68-70 ->
    78-83); AVX-512's tiles stay the widest (14x32: 0.57 loads per FMA)."""
    _, _, ow, f = output_shape
    width = spec.conv_width
    limit = spec.conv_strided_row_tile if stride > 1 else max(spec.conv_row_tiles)
    widths = [t for t in (width, width // 2) if t >= spec.lanes and f % t == 0] or [f]
    fits = [(owr, fr, -(-fr // spec.lanes)) for fr in widths for owr in spec.conv_row_tiles
            if owr <= min(ow, limit)
            and owr * -(-fr // spec.lanes) <= spec.conv_accumulators
            and (owr + 1) * -(-fr // spec.lanes) + 1 <= spec.registers]
    apart = [t for t in fits if set_streams(t[0], pixel_bytes, spec) < spec.l1_ways] or fits
    owr, fr, _ = min(apart, key=lambda t: (tile_cost(ow, t[0], t[2], spec), -t[0] * t[2], -t[1]))
    if weight_heavy and f > fr:
        return ConvTiles(ow, fr, owr, fr, filters_outer=True)
    fl = 2 * width if f % (2 * width) == 0 and fr == width else fr
    return ConvTiles(ow, fl, owr, fr)


def plan_depthwise(output_shape: list[int], stride: int, spec: KernelSpec) -> ConvTiles:
    """Tiles on ``spec`` for a depthwise output ``[N, OH, OW, C]`` at ``stride``, C a piece of
    :func:`channel_pieces`."""
    _, _, ow, c = output_shape
    limit = spec.conv_strided_row_tile if stride > 1 else max(spec.depthwise_row_tiles)
    # as :func:`plan`: the most accumulators within the budget, ties to the wider channel block (AVX2: 4x16 at OW 56,
    # 7x8 at OW 14 and 7; 14x8 spilled with the three filter taps, 27 -> 43 GFLOP/s as 8x8)
    top = spec.depthwise_channels
    widths = [t for t in (top, top // 2) if t >= spec.lanes and c % t == 0] or [min(c, top)]
    candidates = [(owr * -(-ch // spec.lanes), ch, owr) for ch in widths for owr in spec.depthwise_row_tiles
                  if ow % owr == 0 and owr <= limit and owr * -(-ch // spec.lanes) <= spec.depthwise_accumulators]
    _, channels, owr = max(candidates)
    return ConvTiles(ow, channels, owr, channels, depthwise=True)


@dataclass(frozen=True)
class ConvPlan:
    """How one convolution becomes islands: one per channel piece ``(start, size, tiles)``; ``blocked``: the
    convolution is on a packed filter (one piece of the block's width), and its islands run in a loop over the
    blocks."""

    pieces: tuple[tuple[int, int, ConvTiles], ...]
    blocked: bool = False
    #: a 1x1 stride-1 convolution on a packed filter, run as a matmul of the flattened pixels by the filter's blocks
    #: (:func:`make_matmul_islands`)
    as_matmul: bool = False
    #: a convolution on a packed filter in register tiles of this many output pixels, which may cross output rows
    #: (:func:`pixel_rows`, :mod:`.pixel_tiles`); 0: row tiles
    pixel_rows: int = 0
    #: fewer output channels than a vector's lanes, as one vector of this many lanes per pixel with the lanes past
    #: the channels masked off (:func:`masked_width`, :mod:`.masked_channels`); 0: channel pieces
    masked: int = 0
    #: the pixel tiles read a copy of the input whose pixels are this many channels longer (:func:`_pixel_tiles`);
    #: 0: the input itself
    spread: int = 0


def matches(op: ir.Operation, spec: KernelSpec) -> ConvPlan | None:
    """The plan for ``op`` if it is a convolution this family takes (f32 or int8 depthwise, static shapes, no
    dilation): a named
    convolution, or the generic of one on a packed filter (convert-glowir-to-linalg's ``blocked_conv``)."""
    blocked = op.name == "linalg.generic" and BLOCKED_CONV_ATTR in op.attributes
    if not blocked and (op.name not in (NAME, DEPTHWISE) or _ints(op, "dilations") != [1, 1]):
        return None
    types = [ir.MemRefType(v.type) for v in op.operands if isinstance(v.type, ir.MemRefType)]
    if len(types) != 3 or not all(t.has_static_shape for t in types):
        return None
    elements = [str(t.element_type) for t in types]
    if elements != ["f32"] * 3 and not (op.name == DEPTHWISE and elements == ["i8", "i8", "i32"]):
        return None  # f32, or an int8 depthwise convolution into int32 accumulators (i32 lanes as f32's)
    src, filt, dest = (list(t.shape) for t in types)
    if blocked:  # dest viewed [N, OH, OW, F / B, B], the filter [F / B, KH, KW, C, B] or in chunks of C
        strides = [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[BLOCKED_CONV_ATTR])]
        return blocked_plan(src, PackedFilter.of(filt).blocked(), dest, strides, spec,
                            _contiguous(op.operands[0]) and _expanded(op.operands[2]),
                            ir.MemRefType(op.operands[0].type).get_strides_and_offset()[0][2])
    stride = max(_ints(op, "strides"))
    width = masked_width(dest[-1], spec) if op.name == NAME and elements == ["f32"] * 3 else 0
    if width:
        from .masked_channels import register_columns

        return ConvPlan(((0, dest[-1], ConvTiles(dest[2], width, register_columns(dest[2], spec), width)),),
                        masked=width)
    pixel_bytes = 4 * src[-1] * _ints(op, "strides")[-1]
    # the filter outweighs the input: streaming every filter once per output row then costs more than the FMAs
    weight_heavy = np.prod(filt) > np.prod(src)
    pieces = []
    for start, size in channel_pieces(dest[-1], spec.lanes):
        shape = [*dest[:-1], size]
        tiles = (plan_depthwise(shape, stride, spec) if op.name == DEPTHWISE
                 else plan(shape, stride, spec, weight_heavy, pixel_bytes))
        pieces.append((start, size, tiles))
    return ConvPlan(tuple(pieces))


def blocked_plan(src: list[int], filt: list[int], dest: list[int], strides: list[int], spec: KernelSpec,
                 flat: bool = True, pitch: int = 0) -> ConvPlan:
    """The plan of a convolution on a packed filter of geometry ``filt`` ``[F / B, KH, KW, C, B]`` (whatever its
    chunks) from input ``src`` ``[N, H, W, C]`` (bordered) into ``dest`` ``[N, OH, OW, F / B, B]``; ``flat``: the
    input and output buffers can be seen as matrices of their pixels (a pointwise convolution may run as a matmul);
    ``pitch``: the input's elements from one pixel to the next (0: C; more: spread already, no copy to plan)."""
    tiles = plan([*dest[:3], filt[-1]], max(strides), spec, pixel_bytes=4 * max(pitch, src[-1]) * strides[-1])
    pointwise = filt[1:3] == [1, 1] and strides == [1, 1] and src[1:3] == dest[1:3] and flat
    as_matmul = pointwise and _matmul_wins(tiles, dest[:3], filt[-1], src[-1], filt[0] * filt[-1], spec)
    rows, spread = (0, 0) if as_matmul else _pixel_tiles(tiles, src, dest, filt, strides, spec, pitch=pitch)
    return ConvPlan(((0, filt[-1], tiles),), blocked=True, as_matmul=as_matmul, pixel_rows=rows, spread=spread)


def packed_chunk(src: list[int], filter_shape: list[int], block: int, output: list[int], strides: list[int],
                 spec: KernelSpec) -> int:
    """The input channels per chunk (:func:`.filter_layout.filter_chunk`) in which to pack an HWCF filter of
    ``filter_shape`` in blocks of ``block`` for a convolution from the bordered input ``src`` ``[N, H, W, C]`` to
    output pixels ``output`` ``[N, OH, OW]``, where its plan runs in tiles of pixels (:func:`blocked_plan`); 0:
    none."""
    kh, kw, c, f = filter_shape
    chunk = filter_chunk(kh, kw, c, block, spec)
    if not chunk:
        return 0
    found = blocked_plan(src, [f // block, kh, kw, c, block], [*output, f // block, block], strides, spec)
    return chunk if found.pixel_rows else 0


def masked_width(f: int, spec: KernelSpec) -> int:
    """The lanes of the one masked vector per output pixel that ``f`` output channels fewer than the spec's lanes
    take (:mod:`.masked_channels`), where :func:`channel_pieces` would cut them into several: the next power of
    two (6 -> 8, 10 -> 16 on AVX-512), one FMA and one broadcast per pixel and step where the pieces take one each
    (4 + 2: two). 0: one piece, or as many channels as the lanes or more (their pieces are whole vectors but the
    last)."""
    if f >= spec.lanes or len(channel_pieces(f, spec.lanes)) < 2:
        return 0
    return 1 << (f - 1).bit_length()


#: how much less a pixel tile must cost than the row tiles (:func:`tile_cost`) to take its place: the pixel kernel
#: leaves the epilogue to a pass of its own over the output, which the row tiles fuse (AVX2, by the cost model: OW 7
#: saves 22%, 14 6.5%, 28 1.8%; measured, 28 ran even: 1.00-1.01 of the row tiles' time); none where the next filter
#: block's prefetch pays for that (:data:`PREFETCH_TILES`)
PIXEL_TILE_SAVING = 0.05
#: the most register tiles in which row tiles may read each filter block (over all the images) for pixel tiles of whole
#: rows, or of equal parts of one (more pixels than ``pixel_tile_limit``), to take their place at no saving, where the
#: filter takes :data:`STREAMED_FILTER_L2_SHARE` of L2 or more: in a network such a filter comes from memory on every
#: run (the other layers' filters and activations pass through the caches in between), and each block's first row tile
#: waits for it, where the pixel tiles prefetch the next block into L2 while the current one's tiles run; with few
#: tiles a block that first tile is a large share. AVX-512 at OW 14 (14 row tiles a block; 28x28 has 56), bundles for
#: skylake-avx512 on a 16-core Xeon VM, fastest of 6-8 alternating rounds against the row tiles, two runs:
#: light_resnet50 on one thread 60.57 -> 59.10 and 61.03 -> 60.07 ms, on sixteen 7.96 -> 7.49 and 7.88 -> 7.61;
#: resnet18 on one 26.27 -> 25.78, on sixteen 3.54 -> 3.03 and 3.40 -> 3.24 (mobilenet_v2, unchanged, moved 5% between
#: its two sides)
PREFETCH_TILES = 16
#: the share of L2 a filter fills from which it comes from memory in a network (:data:`PREFETCH_TILES`)
STREAMED_FILTER_L2_SHARE = 0.5


def pixel_rows(tiles: ConvTiles, pixels: int, block: int, spec: KernelSpec, ow: int = 0, pixel_bytes: int = 0,
               row_bytes: int = 0, filter_bytes: int = 0, images: int = 1) -> int:
    """The output pixels per register tile of a convolution on a packed filter of ``block`` channels with ``pixels``
    output pixels per image in rows of ``ow``, when tiles of pixels that may cross output rows (:mod:`.pixel_tiles`)
    cost at least :data:`PIXEL_TILE_SAVING` less than its row tiles ``tiles`` (:func:`tile_cost`), or no more where the
    row tiles would read each block of a filter of ``filter_bytes`` that comes from memory in a network in at most
    :data:`PREFETCH_TILES` tiles over the ``images`` (the pixel tiles prefetch the next block), for tiles of whole rows
    or equal parts of one; 0 otherwise. The accumulators stay within the spec's, with the filter vectors and one
    broadcast within the registers. A tile that starts anywhere holds at most ``spec.pixel_tile_limit`` pixels (each
    reads the input at an address of its own); a tile of whole output rows reads every pixel at a fixed distance from
    its first, so it may hold more, where its input pixels (``pixel_bytes`` apart in a row, ``row_bytes`` between rows)
    spread over the L1's sets as :func:`plan` asks of row tiles (:func:`offset_streams` below the ways); so may a tile
    of an equal part of one row.
    AVX2 at OW 7 and 14: 6x16 over 49 and 196 pixels; AVX-512 at OW 7: two rows, 14x32 over 49 pixels, where a 7x32
    row tile read each filter vector for 7 FMAs (not at 2048 channels: 14 pixels 8 KiB apart in one set); AVX-512 at
    stride 2 into OW 28: halves of a row, 14x32, where the strided row tiles stop at 8 columns (Xeon, one core,
    fastest call, cold weights: 3x3/2 64->128 1.00 -> 0.85 ms, 128->128 2.83 -> 2.57, 1x1/2 256->512 2.67 -> 2.42);
    AVX-512's 14x32 row tiles at OW 14 stay where the filter may stay in the caches (below
    :data:`STREAMED_FILTER_L2_SHARE` of L2), the same tiles of whole rows take their place where it streams in."""
    if block % spec.lanes:
        return 0
    vectors = block // spec.lanes

    def fits(r: int) -> bool:
        return r * vectors <= spec.conv_accumulators and (r + 1) * vectors + 1 <= spec.registers

    def apart(r: int) -> bool:  # unknown distances (0): no constraint, as in :func:`set_streams`
        if pixel_bytes <= 0:
            return True
        offsets = [p // ow * row_bytes + p % ow * pixel_bytes for p in range(r)]
        return offset_streams(offsets, spec) < spec.l1_ways

    sizes = [r for r in range(1, min(spec.pixel_tile_limit, pixels) + 1) if fits(r)]
    if ow:  # tiles of whole rows (1, 2, ... rows of ``ow`` pixels) or of equal parts of one
        sizes += [r for r in range(ow, pixels + 1, ow) if r > spec.pixel_tile_limit and fits(r) and apart(r)]
        sizes += [r for r in range(spec.pixel_tile_limit + 1, ow) if ow % r == 0 and fits(r) and apart(r)]
    if not sizes:
        return 0
    rows = min(sizes, key=lambda r: (tile_cost(pixels, r, vectors, spec), -r))
    rows_cost = tile_cost(tiles.ow, tiles.owr, -(-tiles.fr // spec.lanes), spec)
    row_tiles = images * pixels // tiles.ow * -(-tiles.ow // tiles.owr)
    streamed = filter_bytes > 0 and filter_bytes >= STREAMED_FILTER_L2_SHARE * spec.l2
    ties = streamed and row_tiles <= PREFETCH_TILES and rows > spec.pixel_tile_limit
    saving = 0.0 if ties else PIXEL_TILE_SAVING
    return rows if tile_cost(pixels, rows, vectors, spec) <= (1 - saving) * rows_cost else 0


#: the channels a spread copy of the input adds to each pixel: one cache line, so that pixels a multiple of an L1 way
#: apart move to sets of their own
SPREAD_CHANNELS = CACHE_LINE // 4
#: bytes an input copy moves per cycle, read and written (a conservative L2 rate)
COPY_BYTES_PER_CYCLE = 8


def _copy_cycles(elements: int) -> float:
    """Cycles to read and write ``elements`` f32 at :data:`COPY_BYTES_PER_CYCLE`."""
    return 2 * 4 * elements / COPY_BYTES_PER_CYCLE


def _pixel_tiles(tiles: ConvTiles, src: list[int], dest: list[int], filt: list[int], strides: list[int],
                 spec: KernelSpec, streamed_ties: bool = True, pitch: int = 0) -> tuple[int, int]:
    """``(pixels per tile, spread)`` of a convolution on a packed filter (:func:`pixel_rows`; 0: row tiles) with input
    ``src`` ``[N, H, W, C]``, output ``dest`` ``[N, OH, OW, F / B, B]`` and filter ``[F / B, KH, KW, C, B]``. Where
    the input pixels that a tile of whole rows reads fall into too few L1 sets (C = 512 at stride 2, or C = 1024: 4 or
    8 KiB apart, every pixel in one set), the tile reads a copy of the input whose pixels are
    :data:`SPREAD_CHANNELS` longer (``spread``), if the tile saves more than the copy costs (:func:`tile_cost` of the
    FMA cycles against the input moved at :data:`COPY_BYTES_PER_CYCLE`). AVX-512, 3x3/2 512->512 at 14x14 took 7x32
    row tiles (14 pixels 4 KiB apart exceed the 12 ways) where its 14x32 tiles of two whole rows now run. Without
    ``streamed_ties`` the filter is not weighed as streaming (:func:`pixel_rows`'s ties at no saving). An input whose
    pixels are ``pitch`` elements apart, more than C, is spread already: its tiles read it as it is."""
    pixels, ow, block, channels = dest[1] * dest[2], dest[2], filt[-1], max(pitch, src[-1])
    filter_bytes = 4 * math.prod(filt) if streamed_ties else 0

    def rows_for(c: int) -> int:
        return pixel_rows(tiles, pixels, block, spec, ow, 4 * c * strides[-1], 4 * c * src[2] * strides[0],
                          filter_bytes, src[0])

    rows = rows_for(channels)
    if channels > src[-1]:
        return rows, 0
    wider = rows_for(channels + SPREAD_CHANNELS)
    if wider <= spec.pixel_tile_limit or wider == rows:
        return rows, 0
    vectors = block // spec.lanes
    before = tile_cost(pixels, rows, vectors, spec) if rows else tile_cost(tiles.ow, tiles.owr, tiles.fr // spec.lanes,
                                                                             spec)
    saved = 1 - tile_cost(pixels, wider, vectors, spec) / before
    fma_cycles = dest[0] * pixels * filt[0] * block * math.prod(filt[1:4]) / spec.fma_rate
    return (wider, SPREAD_CHANNELS) if saved * fma_cycles > _copy_cycles(math.prod(src)) else (rows, 0)


def _expanded(v: ir.Value) -> bool:
    """Whether ``v`` is a ``memref.expand_shape`` of a buffer (a blocked convolution's dest viewed ``[N, OH, OW, F /
    B, B]``), whose source the matmul of the pixels writes as ``[N x OH x OW, F]``."""
    owner = v.owner
    return not isinstance(owner, ir.Block) and owner.name == "memref.expand_shape"


def _contiguous(v: ir.Value) -> bool:
    """Whether buffer ``v`` is laid out row-major without gaps (its pixels can be seen as the rows of a matrix)."""
    t = ir.MemRefType(v.type)
    strides, _ = t.get_strides_and_offset()
    expected, step = [], 1
    for n in reversed(t.shape):
        expected.insert(0, step)
        step *= n
    return strides == expected


#: the fewest input channels for which a pointwise convolution runs as a matmul of its pixels: the fewest measured
#: (32 -> 192 at 28x28 as AVX2 code, 0.71x the row tiles' time); a packed filter has 16 or more
MIN_MATMUL_CHANNELS = 32


def _matmul_wins(tiles: ConvTiles, output: list[int], block: int, channels: int, filters: int,
                 spec: KernelSpec) -> bool:
    """Whether a pointwise convolution with ``output`` pixels ``[N, OH, OW]`` and row tiles ``tiles``, of
    ``channels`` -> ``filters`` on filter blocks of ``block``, runs as a matmul of its pixels: from
    :data:`MIN_MATMUL_CHANNELS` input channels, where the matmul's register tile over all the pixels keeps the FMA
    pipes busy, unless the rows are short enough for tiles of whole output rows (:func:`_pixel_tiles`, the filter not
    weighed as streaming: AVX-512 at OW 7; at 1024 and 2048 channels, whose pixels 4 and 8 KiB apart fill one L1 set,
    over the copy that spreads them where it pays: resnet50's 2048 -> 512 at 7x7, one core, cold weights, same
    process, alternating, 1.03 -> 0.77 and 0.91 -> 0.70 ms (onnxruntime 0.83 and 0.79), 2048 -> 1024 1.89 -> 1.49,
    1024 -> 512 at 14x14 1.47 -> 1.36, 1024 -> 352 at 7x7 0.37 -> 0.33; light_resnet50 60 alternating runs 61.5 ->
    60.0 ms fastest, 0.97x paired median (onnxruntime 58.1); with two filter blocks the copy does not pay).
    Likely why the matmul wins elsewhere (not measured apart): the row tiles stream a filter block through L1 for each
    register tile and the whole input once per block, the matmul's tiles of 64 pixels read their input once.
    Measured one core, same process, alternating, fastest call: AVX-512 (Emerald Rapids, cold weights) 1x1 256->64 at
    56x56 1.09 -> 0.95 ms, 1024->512 at 14x14 1.88 -> 1.59, 1024->256 1.03 -> 0.90, 512->256 at 28x28 2.67 -> 2.61,
    512->512 at 14x14 0.96 -> 0.97; AVX2 code 256->64 at 56x56 2.05 -> 1.31, 512->128 at 28x28 1.54 -> 1.41, 256->256
    1.57 -> 1.71 (the one loss); networks: light_resnet50 62.6 -> 61.9 ms on one thread, 49.6 -> 47.0 on two, as AVX2
    code 118 -> 116. At OW 7 the whole-row tiles beat it (512->2048 1.10 -> 1.35 ms as a matmul, 320->1280 0.69 ->
    0.76). Below 256 channels (the same CPU): 64->256 at 56x56 1.69 -> 1.18 ms cold, 1.19 -> 0.66 warm, as AVX2 code
    1.93 -> 1.27; 128->512 at 28x28 1.39 -> 1.23, 0.81 -> 0.64, 1.50 -> 1.33; the losses 192->64 at 14x14 and 27x27
    warm, 1.09x and 1.15x (cold 1.06x and 0.81x); light_resnet50 59.7 -> 58.2 ms on one thread, 34.9 -> 33.6 on two, as
    AVX2 code 111 -> 107; mobilenet_v2, inception_v1 and densenet121 within this VM's noise (densenet121 +1%, +3%, -1%
    in three runs: its 1x1 outputs are then copied into the next convolution's bordered input, which row tiles write
    directly; keeping those on row tiles cost light_resnet50 2% on one thread, 4% on two), as AVX2 code mobilenet_v2
    10.7 -> 10.5."""
    from .matmul import register_rows, target_tiles

    if channels < MIN_MATMUL_CHANNELS:
        return False
    images, oh, ow = output
    pixels = images * oh * ow
    t = target_tiles(pixels, block, 1, spec)
    rows = register_rows(pixels, t.mr, block, spec, strips=False)
    if rows * -(-block // spec.lanes) < spec.busy_accumulators:
        return False
    whole_rows, _ = _pixel_tiles(tiles, [images, oh, ow, channels], [images, oh, ow, filters // block, block],
                                 [filters // block, 1, 1, channels, block], [1, 1], spec, streamed_ties=False)
    return whole_rows <= spec.pixel_tile_limit


def make_matmul_islands(op: ir.Operation, spec: KernelSpec, moves: bool = True, threads: int = 1,
                        parallel_flops: int = 0) -> None:
    """A 1x1 stride-1 convolution on a packed filter (ConvPlan.as_matmul) as panel islands of the matmul kernel:
    src [N, H, W, C] as [N x H x W, C], the filter [F / B, 1, 1, C, B] as panels [F / B, C, B], dest as
    [N x H x W, F / B, B] (L1 tiles for ``threads`` as :func:`.panels.panel_islands`). The op right before it that
    writes dest (its bias broadcast) and the updates after it move into the islands where they can
    (:func:`.panels.fusable_epilogue`, ``moves`` as there). Where the updates end in the copy into the next
    convolution's bordered input (:func:`.panels.rows_contiguous`), the islands are one image row each and write
    the copy's destination directly (:func:`.panels.row_islands`, where :func:`_row_islands_fit`), so that the
    output is written once, not written and then copied in a pass of its own."""
    from .panels import fusable_epilogue, panel_islands, row_islands, rows_contiguous

    src, filt, dest5 = op.operands
    n, h, w, c = ir.MemRefType(src.type).shape
    shape = ir.MemRefType(filt.type).shape
    blocks, b = shape[0], shape[-1]
    dest = dest5.owner.operation.operands[0]  # the generic writes dest viewed [N, OH, OW, F / B, B]
    with ir.InsertionPoint(op), op.location:
        a = memref.collapse_shape(ir.MemRefType.get([n * h * w, c], ir.F32Type.get()), src, [[0, 1, 2], [3]])
        # [F / B, 1, 1, C, B], or in chunks [F / B, C / Cc, 1, 1, Cc, B]: either way each block's C x B contiguous
        inner = list(range(1, len(shape) - 1))
        panels = memref.collapse_shape(ir.MemRefType.get([blocks, c, b], ir.F32Type.get()), filt,
                                       [[0], inner, [len(shape) - 1]])
        flat = memref.collapse_shape(ir.MemRefType.get([n * h * w, blocks * b], ir.F32Type.get()), dest,
                                     [[0, 1, 2], [3]])
        c3 = memref.expand_shape(ir.MemRefType.get([n * h * w, blocks, b], ir.F32Type.get()), flat, [[0], [1, 2]],
                                 [], [n * h * w, blocks, b])
        row_threads = threads if threads > 1 and 2 * n * h * w * c * blocks * b >= parallel_flops else 1
        bordered = _row_islands_fit(n * h, w, c, blocks * b, spec, row_threads)
        epilogue = fusable_epilogue(op, dest, a, panels, spec, moves, bordered)
        if epilogue is not None and epilogue.final != dest and rows_contiguous(epilogue.final, dest):
            row_islands(a, panels, c3, spec, epilogue, w, row_threads)
        else:
            panel_islands(a, panels, c3, spec, epilogue, threads, parallel_flops)
    if epilogue is not None:
        epilogue.erase()
    op.erase()


def _row_islands_fit(rows: int, width: int, channels: int, filters: int, spec: KernelSpec, threads: int) -> bool:
    """Whether a matmul of the pixels of ``rows`` image rows of ``width`` pixels (``channels`` -> ``filters``) may run
    as one island per image row (:func:`.panels.row_islands`): a register tile divides the row
    (:func:`.panels.image_row_tile`), and on ``threads`` above 1 the rows as tasks keep them
    :data:`.balance.BLOCK_BALANCE` busy, or the cycles their imbalance adds to the busiest thread (its FMAs at the
    target's :attr:`.isa.KernelSpec.fma_rate`, as :func:`_pixel_tiles` counts them) are fewer than what the copy they
    save costs that thread (the output read and written at :data:`COPY_BYTES_PER_CYCLE`, in the tasks cpu-vectorize-rest
    would cut it into: :func:`.vectorize.split`). Else the L1 tiles of the whole matmul are the tasks and the copy stays
    a pass of its own. Sixteen threads, AVX-512: 14 rows of 14 pixels, 96 -> 576, keep 14 busy, 3,000 cycles lost
    against 8,100 of copy (a row a task): row islands; at 14 x 14 the copy stays from 256 input channels."""
    from .balance import BLOCK_BALANCE, busy
    from .panels import image_row_tile
    from .vectorize import split

    if not image_row_tile(rows * width, filters, channels, width, spec):
        return False
    if threads <= 1 or busy(rows, threads) >= BLOCK_BALANCE:
        return True
    fma_cycles = rows * width * channels * filters / spec.fma_rate
    busiest = math.ceil(rows / threads) * fma_cycles / rows
    extents = [rows, width, filters]
    dim, tile = split(extents, [False] * 3, threads)
    tasks = extents[dim] // tile if dim >= 0 else 1
    return busiest - fma_cycles / threads < _copy_cycles(math.prod(extents)) * math.ceil(tasks / threads) / tasks


def _channels(v: ir.Value, start: int, size: int) -> ir.Value:
    """The view of channels ``[start, start + size)`` (the last dim) of buffer ``v``."""
    shape = ir.MemRefType(v.type).shape
    rank = len(shape)
    return memref.subview(v, [0] * (rank - 1) + [start], [*shape[:-1], size], [1] * rank)


def _block(v: ir.Value, index: ir.Value, dim: int) -> ir.Value:
    """``v`` at ``index`` along ``dim``, as a rank-reduced view at a dynamic offset."""
    t = ir.MemRefType(v.type)
    strides, _ = t.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), strides[:dim] + strides[dim + 1:])
    result = ir.MemRefType.get(t.shape[:dim] + t.shape[dim + 1:], t.element_type, layout=layout)
    offsets = [index if d == dim else 0 for d in range(t.rank)]
    sizes = [1 if d == dim else n for d, n in enumerate(t.shape)]
    return memref.subview(v, offsets, sizes, [1] * t.rank, result_type=result)


def _island(src: ir.Value, filt: ir.Value, dest: ir.Value, tiles: ConvTiles, strides: list[int],
            serial: bool = False) -> None:
    """``dest += conv(src, filt)`` as a tensor convolution on the three buffers, tagged with its tiles; ``serial``:
    tagged to run on the calling thread (it is a task already)."""
    builder = linalg.depthwise_conv_2d_nhwc_hwc if tiles.depthwise else linalg.conv_2d_nhwc_hwcf
    result = builder(tensor_of(src), tensor_of(filt), outs=[tensor_of(dest, writable=True)], strides=strides,
                     dilations=[1, 1])
    result.owner.attributes[TILES_ATTR] = ir.StringAttr.get(tiles.key())
    if serial:
        result.owner.attributes[TASK_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)
    bufferization.materialize_in_destination(None, result, dest, writable=True)


def for_range(lo: int | ir.Value, hi: int | ir.Value, body: Callable[[ir.Value], None]) -> None:
    """``for i in [lo, hi): body(i)`` as an scf.for."""
    loop = scf.ForOp(*(v if isinstance(v, ir.Value) else _index(v) for v in (lo, hi, 1)))
    with ir.InsertionPoint(loop.body):
        body(loop.induction_variable)
        scf.YieldOp([])


def for_carrying(hi: int, carried: list[ir.Value],
                 body: Callable[[ir.Value, list[ir.Value]], list[ir.Value]]) -> list[ir.Value]:
    """``for i in [0, hi)`` carrying ``carried`` through ``body(i, carried) -> carried`` as an scf.for; the final
    values (the hand-written kernels' loops over accumulators: :mod:`.pixel_tiles`, :mod:`.masked_channels`)."""
    loop = scf.ForOp(_index(0), _index(hi), _index(1), carried)
    with ir.InsertionPoint(loop.body):
        scf.YieldOp(body(loop.induction_variable, list(loop.inner_iter_args)))
    return list(loop.results)


def for_tasks(count: int, body: Callable[[ir.Value], None]) -> None:
    """``body(i)`` for ``i`` in ``[0, count)`` as the iterations of an scf.forall (tasks for the threads)."""
    loop = scf.ForallOp([0], [count], [1])
    with ir.InsertionPoint(loop.body):
        body(loop.induction_variables[0])
        scf.InParallelOp()


def _blocked_islands(src: ir.Value, filt: ir.Value, dest: ir.Value, tiles: ConvTiles, strides: list[int],
                     threads: int) -> None:
    """The islands of a convolution on a packed filter, one per filter block; with ``threads`` above 1 the blocks are
    the tasks (a contiguous run of blocks per thread when they divide evenly), each island on the calling thread
    (tagged with no tasks of its own): blocks write disjoint channels, and a task per block, not per output row of
    each block, keeps the hand-offs to a few per convolution."""
    geometry = PackedFilter.of(ir.MemRefType(filt.type).shape)

    def one(j: ir.Value) -> None:
        block, out = _block(filt, j, 0), _block(dest, j, 3)
        if ir.MemRefType(filt.type).rank == 5:
            _island(src, block, out, tiles, strides, serial=threads > 1)
            return
        # in chunks of input channels: each chunk's island accumulates onto the output the ones before wrote
        size = geometry.chunk
        for_range(0, geometry.chunks, lambda q: _island(channel_slice(src, arith.muli(q, _index(size)), size),
                                                        _block(block, q, 0), out, tiles, strides, serial=threads > 1))

    for_blocks(geometry.blocks, threads, one)


def for_blocks(count: int, threads: int, one: Callable[[ir.Value], None]) -> None:
    """``one(j)`` for each of ``count`` filter blocks: an scf.for, or with ``threads`` above 1 the tasks of an
    scf.forall, a contiguous run of blocks per thread when they divide evenly, else one block per task."""
    if threads <= 1:
        for_range(0, count, one)
    elif count % threads == 0 and count > threads:
        run = count // threads

        def chunk(t: ir.Value) -> None:
            first = arith.muli(t, _index(run))
            for_range(first, arith.addi(first, _index(run)), one)

        for_tasks(threads, chunk)
    else:
        for_tasks(count, one)


def make_island(op: ir.Operation, plan_: ConvPlan, threads: int = 1) -> None:
    """Replace ``op`` by the same convolution on tensors over its buffers, one island per channel piece, each
    tagged with its tiles; a convolution on a packed filter becomes a loop over the filter's blocks with one island
    per step (block ``j`` of the filter into channels ``[j * B, (j + 1) * B)`` of dest), spread over ``threads``."""
    src, filt, dest = op.operands
    with ir.InsertionPoint(op), op.location:
        if plan_.blocked:
            strides = [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[BLOCKED_CONV_ATTR])]
            (_, _, tiles), = plan_.pieces
            _blocked_islands(src, filt, dest, tiles, strides, threads)
        else:
            depthwise, whole = op.name == DEPTHWISE, len(plan_.pieces) == 1
            for start, size, tiles in plan_.pieces:
                s, f, d = (src, filt, dest) if whole else (
                    _channels(src, start, size) if depthwise else src, _channels(filt, start, size),
                    _channels(dest, start, size))
                _island(s, f, d, tiles, _ints(op, "strides"))
    op.erase()


def island_op(key: str) -> str:
    """The op name of the islands with tiles ``key``."""
    return DEPTHWISE if parse_key(key).depthwise else NAME


def split_tiles(op: ir.Operation) -> int:
    """How many L1 tiles the island ``op`` has along the dim spread over the threads: its output rows."""
    return ir.RankedTensorType(op.results[0].type).shape[1]


def whole_rows(ow: int, plan: ConvPlan, spec: KernelSpec) -> bool:
    """Whether ``plan`` runs a convolution with output rows of ``ow`` pixels in tiles of whole output rows, or of
    equal parts of one, beyond the pixels a tile may start anywhere with (:func:`pixel_rows`)."""
    rows = plan.pixel_rows
    return rows > spec.pixel_tile_limit and (rows % ow == 0 or ow % rows == 0)


def blocked_flops(op: ir.Operation) -> int:
    """2 x the multiply-adds of ``op``, a convolution generic on a packed filter (:func:`packed_flops`)."""
    return packed_flops(ir.MemRefType(op.operands[2].type).shape, ir.MemRefType(op.operands[1].type).shape)


def packed_flops(output: list[int], filt: list[int]) -> int:
    """2 x the multiply-adds of a convolution into ``output`` ``[N, OH, OW, F / B, B]`` on a packed filter ``[F / B,
    KH, KW, C, B]`` or ``[F / B, C / Cc, KH, KW, Cc, B]``: every output element takes one block's KH x KW x C window."""
    return 2 * math.prod(output) * math.prod(filt[1:-1])


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
    # threaded: tasks of output rows (the filter tiles stay inside each task, filters_outer or not)
    if threads > 1 and tiles_per_task:
        ops = structured.TileUsingForallOp(schedule.any_op(), schedule.any_op(), ops,
                                           tile_sizes=[0, tiles_per_task]).tiled_op
        rows = 1 if tiles_per_task > 1 else 0
        ops = structured.TileUsingForOp(ops, sizes=[1, rows, t.ow, t.f, *reductions]).tiled_linalg_op
    else:
        order = [0, 3, 1, 2] if t.filters_outer else [0, 1, 2, 3]
        ops = structured.TileUsingForOp(ops, sizes=[1, 1, t.ow, t.f, *reductions],
                                        interchange=order).tiled_linalg_op
    # the depthwise register tile takes the whole filter row (kw 0: untiled); the dense one steps kw and c by 1
    window = [1, 0] if t.depthwise else [1, 1, 1]
    tiled = structured.TileUsingForOp(ops, sizes=[0, 0, t.owr, t.fr, *window])
    registers = tiled.tiled_linalg_op
    if t.ow % t.owr:  # the last register tile of a row is narrower: peeled into a loop of its own, static shapes
        schedule.peel_remainder(tiled.loops[0])
        registers = match_islands(root, island_op(key), key, tiles_per_task if threads > 1 else 0)
    structured.VectorizeOp(structured.DecomposeOp(registers).transformed)
