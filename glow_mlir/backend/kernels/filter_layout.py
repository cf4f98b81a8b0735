"""The layouts of constant convolution filters for the kernels: blocks of B output channels, ``[F / B, KH, KW, C,
B]``, each block contiguous (:func:`.conv.filter_block` picks B), and, where the tiles of pixels would stream a block
through an L1 with fewer ways than the filter has taps, also chunks of Cc input channels, ``[F / B, C / Cc, KH, KW,
Cc, B]`` (:func:`filter_chunk`); output channels a little short of whole blocks are padded to them
(:func:`padded_channels`). cpu-pack-conv-filters lays the constants out at compile time; the kernels read the
geometry back from the filter's type (:class:`PackedFilter`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...passes.ir.allocator import align_up
from .isa import KernelSpec


def pack_filter(w: np.ndarray, block: int, chunk: int = 0) -> np.ndarray:
    """HWCF ``w`` as ``[F / block, KH, KW, C, block]``: each block of output channels contiguous; with ``chunk``, as
    ``[F / block, C / chunk, KH, KW, chunk, block]``: each chunk of ``chunk`` input channels of a block contiguous
    (:func:`filter_chunk`)."""
    kh, kw, c, f = w.shape
    if not chunk:
        return np.ascontiguousarray(w.reshape(kh, kw, c, f // block, block).transpose(3, 0, 1, 2, 4))
    blocked = w.reshape(kh, kw, c // chunk, chunk, f // block, block)
    return np.ascontiguousarray(blocked.transpose(4, 2, 0, 1, 3, 5))


@dataclass(frozen=True)
class PackedFilter:
    """The geometry of a packed filter: ``[F / B, KH, KW, C, B]`` (one chunk of all C input channels) or ``[F / B,
    C / Cc, KH, KW, Cc, B]``."""

    blocks: int
    chunks: int
    kh: int
    kw: int
    chunk: int
    block: int

    @staticmethod
    def of(shape: list[int]) -> PackedFilter:
        if len(shape) == 5:
            blocks, kh, kw, c, b = shape
            return PackedFilter(blocks, 1, kh, kw, c, b)
        return PackedFilter(*shape)

    @property
    def channels(self) -> int:
        return self.chunks * self.chunk

    def blocked(self) -> list[int]:
        """The geometry as the unchunked layout's shape ``[F / B, KH, KW, C, B]``."""
        return [self.blocks, self.kh, self.kw, self.channels, self.block]


#: the share of the L1 a chunk of a filter block may fill (:func:`filter_chunk`): the rest holds the input pixels the
#: tiles read and the output they accumulate (AVX2 on 32 KiB: 3x3 chunks of 32 channels, 18 KiB)
CHUNK_L1_SHARE = 0.6
#: the fewest reduction steps (KH x KW x Cc) a chunk holds: each register tile loads and stores its accumulators and
#: finds its pixels' addresses once per chunk (AVX-512 chunks of 144 steps, 3x3 x 16 channels, took 1.10-1.12x the
#: time of 3x3 512->512 at 7x7 on Zen 5; AVX2 chunks of 288 ran level)
MIN_CHUNK_STEPS = 256


def filter_chunk(kh: int, kw: int, c: int, block: int, spec: KernelSpec) -> int:
    """The input channels per chunk of a filter packed in blocks of ``block`` whose tiles of pixels
    (:mod:`.pixel_tiles`) read it, or 0 to keep each block whole.

    A tile sweeps its block ``[KH, KW, C, B]`` once per tile; where the block outgrows the L1 every tile streams it
    from L2, and its KH x KW taps lie C x B x 4 bytes apart, a multiple of the L1 way from 64 input channels on, so
    each of the sets the taps fall into holds KH x KW lines of them: with more taps than the L1 has ways (3x3 on an
    8-way L1: Zen 2/3/4, Intel client cores to Comet Lake, Skylake-SP) they evict each other on every tile. There the
    filter is packed in chunks ``[F / B, C / Cc, KH, KW, Cc, B]`` and the tiles run chunk by chunk, each chunk
    contiguous and read from L1 by every tile of the block: the largest Cc that halves C down to
    :data:`CHUNK_L1_SHARE` of the L1, of at least :data:`MIN_CHUNK_STEPS` steps. AVX2 on a 32 KiB 8-way L1: 3x3
    filters from 64 channels in chunks of 32 (18 KiB), AVX-512's blocks of one vector too; 12-way L1s (Zen 5, Intel
    from Ice Lake) and 1x1 filters keep whole blocks, as do AVX-512's blocks of 32 on 32 KiB (a chunk of 288 steps
    would not fit).

    resnet18's znver3 code, cachegrind with Zen 3's caches (32 KiB 8-way L1D, 512 KiB L2), one warm run: 25.0M L1
    misses -> 11.8M (onnxruntime's AVX2 kernels: 3.0M), L2 misses 2.27M -> 1.99M, instructions 1.04x; its time on
    Zen 5 (48 KiB 12-way) level, 28.48/29.02/28.52 -> 28.47/28.49/28.71 ms alternating (light_resnet50 the same).
    Not yet timed on an 8-way core."""
    budget = spec.l1 * CHUNK_L1_SHARE
    if kh * kw * c * block * 4 <= budget or kh * kw <= spec.l1_ways:
        return 0
    chunk = c
    while chunk % 2 == 0 and kh * kw * chunk * block * 4 > budget:
        chunk //= 2
    if kh * kw * chunk * block * 4 > budget or kh * kw * chunk < MIN_CHUNK_STEPS:
        return 0
    return chunk


#: the multiply-adds per output element (KH x KW x C) from which padding the output channels pays for the copy of
#: the sliced output: a stem of 3 input channels lost (light_shufflenet's 3x3/2 3->24 at 112x112, 27 of them, its
#: output of 1.2 MB copied: the network 1.5% slower)
PAD_MIN_WINDOW = 64


def padded_channels(f: int, group: int, spec: KernelSpec, window: int) -> int:
    """The output channels to compute for a convolution of ``f`` (a group-1 one on a constant filter) that takes
    ``window`` multiply-adds per output element: ``f`` rounded up to whole filter blocks where that adds at most half
    a vector of zero filters (AVX-512: 24 -> 32, 120 -> 128; AVX2: 28 -> 32, 60 -> 64) and the window is at least
    :data:`PAD_MIN_WINDOW`, else ``f``. Unpadded, such channels ran in pieces of a vector, half a vector and less,
    each reading the input again, on a filter kept HWCF. Measured one core, Zen 5, 3x3 stride 1, the padded
    convolution against the unpadded one (its output copied out on top, not counted): AVX-512 24 at 56x56 0.91x the
    time, 56 at 28x28 0.88x, 88 at 28x28 0.89x, 120 at 13x13 0.72x and at 28x28 0.89x; AVX2 (znver3 code) 28 at
    28x28 0.90x, 44 0.92x, 60 0.90x, 92 at 14x14 0.91x. Padding by more lost or was level: AVX-512 72 -> 80 1.05x, 40
    -> 48 1.03x, 200 -> 208 0.98x, 176 -> 192 1.05x (as 3x3 at 14x14 and 28x28)."""
    padded = align_up(f, spec.filter_block)
    return padded if group == 1 and 0 < padded - f <= spec.lanes // 2 and window >= PAD_MIN_WINDOW else f
