"""The kernels' parameters per ISA class, derived from the target description (:mod:`glow_mlir.backend.target`).

Every decision a kernel makes about vectors and registers reads a :class:`KernelSpec`: the f32 lanes of one vector
register, how many registers there are, the register tiles of convolutions and matmuls (accumulators plus the
broadcast and load registers within the register count), the filter block of packed convolutions, the depthwise
channel block. The tiles are data per ISA class (:data:`SPECS`), each row checked against its register budget
(:meth:`KernelSpec.check`) and by generated-code tests; the lanes and register count come from the target itself, so
an ISA class holds for every CPU of its width (``haswell``, ``znver3`` and ``alderlake`` share the AVX2 row).

Register budgets, for a register tile of ``rows x width`` f32 outputs (``width / lanes`` vectors per row):

- convolution (NHWC, the input broadcast): ``rows x width / lanes`` accumulators, ``width / lanes`` filter vectors
  and one broadcast of the input live at once (AVX2: 14x8 is 14 + 1 + 1 = 16 registers, where 7x16, 14 + 2 + 1,
  spilled and ran at a third of the speed); among the tiles within the budget the kernel takes the one of least
  cost over the output row: loads per FMA, scaled up where fewer than ``busy_accumulators`` are in flight, the row's
  last tile the columns left over (conv.plan, conv.tile_cost: AVX2 at OW 14 5x16 and at OW 7 4x16 and 3x16, 11-15%
  faster than the dividing 14x8 and 7x8);
- matmul (the A element broadcast): ``mr x nr / lanes`` accumulators, ``nr / lanes`` rows of B, one broadcast; fewer
  rows where they divide M and still keep the pipes busy (matmul.register_rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..target import DEFAULT_CACHES, DEFAULT_L1_WAYS, Target


@dataclass(frozen=True)
class MatmulClass:
    """A row of a matmul tile table: the contractions it covers (by name: the covering rule is code,
    :func:`covers`), and the tiles it aims at: L1 ``m x n`` (the whole K), register ``mr x nr``, B in panels."""

    name: str
    m: int
    n: int
    mr: int
    nr: int
    #: B in column panels of ``nr``: constant weights packed at compile time (cpu-pack-matmul-weights)
    pack: bool = False
    why: str = ""
    #: the L1 tile of the reduction (0: the whole K)
    k: int = 0
    #: a B known only at run time is copied into panels on every call too (into a buffer of its own)
    copy: bool = False


def covers(name: str, m: int, n: int, k: int) -> bool:
    """Whether the shape class ``name`` takes an ``m x n x k`` contraction (first match wins, in table order)."""
    if name == "row":
        return m == 1
    if name == "matrix-vector":
        return m < 8
    if name == "large":
        return m >= 128 and n >= 256 and k >= 256
    if name == "panels":
        return m >= 8
    return name == "general"


@dataclass(frozen=True)
class KernelSpec:
    """What the kernels assume about the vector unit of one target."""

    isa: str
    #: f32 lanes of one vector register, and how many vector registers the ISA has
    lanes: int
    registers: int
    #: convolution register tile: output channels (a multiple of ``lanes``), the most accumulators, the output columns
    #: tried best first
    conv_width: int
    conv_accumulators: int
    conv_row_tiles: tuple[int, ...]
    #: above stride 1, register tiles wider than this many output columns
    conv_strided_row_tile: int
    #: depthwise register tile: channels (at most), the output columns tried best first, the most accumulators
    depthwise_channels: int
    depthwise_row_tiles: tuple[int, ...]
    depthwise_accumulators: int
    #: output channels per block of a packed filter [F / B, KH, KW, C, B]
    filter_block: int
    #: the matmul tile table, first covering row wins (the last must cover every shape)
    matmul: tuple[MatmulClass, ...] = field(default=())
    #: the most output pixels in a register tile of pixels that may cross output rows (conv.pixel_rows): each reads
    #: the input at an address of its own, one general-purpose register per pixel beside the filter's, the channel
    #: index and the loop bounds (x86-64 has 16: AVX-512 tiles of 12 and 14 pixels ran at 1.09x the time of its 7x32
    #: row tiles, haswell 6x16 at 0.83x)
    pixel_tile_limit: int = 6
    #: accumulators that keep every FMA pipe busy (pipes x FMA latency): a register tile below it waits on its FMAs
    busy_accumulators: int = 8
    #: f32 lanes one core multiplies and adds per cycle (:attr:`.target.Target.fma_lanes`; the ISA class's two full
    #: pipes until :func:`for_target` reads the target's)
    fma_lanes: int = 0
    #: L1 data and L2 cache bytes of the target (per core), and the L1's ways
    l1: int = DEFAULT_CACHES["l1d"]
    l2: int = DEFAULT_CACHES["l2"]
    l1_ways: int = DEFAULT_L1_WAYS

    @property
    def full_rate_accumulators(self) -> int:
        """Accumulators a register tile needs for its FMAs to issue at the full rate: half again the busy count (a
        tile of exactly that many ran below it: AVX2 4x16 at 0.90x the rate per row of 6x16, AVX-512 4x32 at M = 44
        1.10x the time of 8x32 and a strip of 4; one of 10, AVX2 5x16 and AVX-512 5x32, 1.03-1.04x the time of full
        tiles and a strip at M = 40 and 100; Zen 5, :func:`.matmul.register_rows`)."""
        return self.busy_accumulators * 3 // 2

    @property
    def fma_rate(self) -> int:
        """f32 lanes one core multiplies and adds per cycle: :attr:`fma_lanes`, or two full pipes of the ISA class
        where the target did not say."""
        return self.fma_lanes or 2 * self.lanes

    @property
    def l1_way_bytes(self) -> int:
        """Bytes of one L1 way: addresses this far apart fall into the same set (4 KiB on current x86 cores)."""
        return self.l1 // self.l1_ways

    def matmul_class(self, m: int, n: int, k: int) -> MatmulClass:
        return next(c for c in self.matmul if covers(c.name, m, n, k))

    def check(self) -> None:
        """Every tile of this spec within the register count and a whole number of vectors wide."""
        assert self.conv_width % self.lanes == 0 and self.filter_block % self.conv_width == 0, self.isa
        # the most accumulators, in a one-vector-wide tile: with its filter vector and the broadcast (conv.plan keeps
        # every tile it picks within the registers so)
        assert self.conv_accumulators + 2 <= self.registers, self.isa
        assert self.depthwise_channels % self.lanes == 0, self.isa
        # depthwise: accumulators, a 3-tap filter row of the widest channel block, one input vector
        taps = 3 * self.depthwise_channels // self.lanes
        assert self.depthwise_accumulators + taps + 1 <= self.registers, self.isa
        for c in self.matmul:
            # a row or matrix-vector tile has fewer than 8 rows, and its rows of B stream once each: FMAs may read
            # them from memory; the other tiles keep a row of B in registers for every row of A
            few = c.name in ("row", "matrix-vector")
            rows = min(c.mr, 7) if few else c.mr
            loads = 0 if few else c.nr // self.lanes
            assert c.nr % self.lanes == 0, (self.isa, c)
            assert rows * (c.nr // self.lanes) + loads + 1 <= self.registers, (self.isa, c)
        assert self.matmul and covers(self.matmul[-1].name, 1, 1, 1), self.isa


#: AVX-512: 32 zmm registers of 16 lanes. Measured one core on Zen 4/5 and Sapphire Rapids (NOTES, bench_kernels).
AVX512 = KernelSpec(
    isa="avx512", lanes=16, registers=32,
    conv_width=32, conv_accumulators=28, conv_row_tiles=(14, 8, 7, 4, 2, 1), conv_strided_row_tile=8,
    depthwise_channels=16, depthwise_row_tiles=(16, 14, 8, 7, 4, 2, 1), depthwise_accumulators=16, filter_block=32,
    matmul=(
        MatmulClass("row", 1, 256, 1, 128, pack=True,
                    why="one row (batch 1): 8 zmm accumulators, as many as two FMA pipes of 4-cycle latency keep busy; "
                        "constant weights packed in 128-column panels: each tile streams one contiguous run where K "
                        "rows of B lay N x 4 bytes apart, which the prefetchers followed badly once B came from memory "
                        "(Zen 4, same process, median: 1x4096x4096 4.9 -> 2.4 ms, 1x1024x4096 1.25 -> 0.67, "
                        "1x2048x1024 0.24 -> 0.17, cold 0.72 -> 0.46; 1x256x1024 in cache 21.7 -> 20.4 us)"),
        MatmulClass("matrix-vector", 8, 256, 8, 64,
                    why="few rows (batch-1 fully connected): wide rows of B, the tile's rows are the whole M"),
        MatmulClass("large", 128, 128, 8, 32, pack=True, copy=True,
                    why="B's rows are far apart (4 KiB at N = 1024: every row in the same cache sets), so its panels "
                        "are packed contiguous once per call; enough rows amortize the copy (1024^3: 140 -> 190-200 "
                        "GF/s)"),
        MatmulClass("panels", 64, 64, 8, 32, pack=True,
                    why="constant weights packed in 32-column panels at compile time once 8 rows or more share them: "
                        "no copy at run time, and with the bias and the updates fused into the panel islands (Zen 4, "
                        "same-run A/B against the unpacked tiles: an LSTM layer of batch 16, 16x256x1024 a step, 0.97-0.99, "
                        "GRU 0.98, mlp_mnist 0.97-0.98)"),
        MatmulClass("general", 64, 64, 8, 32,
                    why="8x32 = 16 zmm accumulators; B's 64-column panel of the whole K stays in L2 (64x512x784: "
                        "~209 GF/s, L1 64x128 180-207, 64x256 165-180; packing B at run time costs more than it "
                        "saves)"),
    ),
)

#: AVX2 (and AVX with FMA): 16 ymm registers of 8 lanes.
AVX2 = KernelSpec(
    isa="avx2", lanes=8, registers=16,
    conv_width=16, conv_accumulators=14, conv_row_tiles=(14, 8, 7, 6, 5, 4, 3, 2, 1), conv_strided_row_tile=14,
    depthwise_channels=16, depthwise_row_tiles=(8, 7, 4, 2, 1), depthwise_accumulators=8, filter_block=16,
    matmul=(
        MatmulClass("row", 1, 256, 1, 64, pack=True,
                    why="one row: 8 ymm accumulators, enough for two 4-cycle FMA pipes; constant weights packed in "
                        "64-column panels, so that each tile streams one contiguous run instead of K rows 4 KiB apart "
                        "(all in the same cache sets at N = 1024): 1x256x1024 0.76-0.79x the time, an LSTM of batch 1 "
                        "0.71-0.78x (haswell code on Zen 4, same-run A/B); the AVX-512 row gained nothing (1.00-1.03)"),
        MatmulClass("matrix-vector", 8, 256, 8, 16,
                    why="few rows: up to 7 x 2 ymm accumulators and a broadcast, B's rows read by the FMAs"),
        MatmulClass("large", 64, 64, 6, 16, pack=True, copy=True,
                    why="as panels, and a B known only at run time is copied into panels on every call too: rows of "
                        "B 4 KiB apart (N = 1024) share cache sets (Zen 3, 1024^3: 42 GF/s unpacked, 92 packed)"),
        MatmulClass("panels", 64, 64, 6, 16, pack=True,
                    why="6x16 = 12 ymm accumulators, 2 rows of B and a broadcast: 15 of 16 registers; B packed in "
                        "16-column panels once 8 rows or more share them (Zen 3, 64x784x512: 0.83 -> 0.63 ms, "
                        "128x128x512 0.23 -> 0.21, 16x256x1024 (an LSTM step) 173 -> 97 us, 8x256x1024 91 -> 54 us; "
                        "1024^3 as fast as with 120x64 tiles)"),
        MatmulClass("general", 60, 64, 6, 16,
                    why="6x16 = 12 ymm accumulators, 2 rows of B and a broadcast: 15 of 16 registers"),
    ),
)

#: SSE (x86 without AVX): 16 xmm registers of 4 lanes, no FMA.
SSE = KernelSpec(
    isa="sse", lanes=4, registers=16,
    conv_width=8, conv_accumulators=12, conv_row_tiles=(7, 6, 4, 3, 2, 1), conv_strided_row_tile=7,
    depthwise_channels=8, depthwise_row_tiles=(8, 7, 4, 2, 1), depthwise_accumulators=8, filter_block=8,
    matmul=(
        MatmulClass("row", 1, 256, 1, 32, why="one row: 8 xmm accumulators"),
        MatmulClass("matrix-vector", 8, 256, 8, 8, why="few rows: up to 7 x 2 xmm accumulators and a broadcast"),
        MatmulClass("general", 60, 64, 6, 8, why="6x8 = 12 xmm accumulators, 2 rows of B and a broadcast"),
    ),
)

#: AArch64 NEON (Advanced SIMD): 32 q registers of 4 lanes; FMLA by element needs no broadcast register.
NEON = KernelSpec(
    isa="neon", lanes=4, registers=32,
    conv_width=16, conv_accumulators=24, conv_row_tiles=(7, 6, 4, 3, 2, 1), conv_strided_row_tile=7,
    depthwise_channels=16, depthwise_row_tiles=(8, 7, 4, 2, 1), depthwise_accumulators=16, filter_block=16,
    matmul=(
        MatmulClass("row", 1, 256, 1, 32, why="one row: 8 q accumulators"),
        MatmulClass("matrix-vector", 8, 256, 8, 16, why="few rows: up to 7 x 4 q accumulators and a broadcast"),
        MatmulClass("general", 48, 64, 6, 16,
                    why="6x16 = 24 q accumulators, 4 vectors of B and a broadcast: 29 of 32 registers"),
    ),
)

#: Arm M-profile Helium (MVE: Cortex-M55, M85): 8 q registers of 4 lanes; its FMA takes the broadcast scalar from a
#: general-purpose register, but the budgets below count it as a vector register all the same.
MVE = KernelSpec(
    isa="mve", lanes=4, registers=8,
    conv_width=4, conv_accumulators=6, conv_row_tiles=(6, 4, 3, 2, 1), conv_strided_row_tile=6,
    depthwise_channels=4, depthwise_row_tiles=(4, 2, 1), depthwise_accumulators=4, filter_block=4,
    busy_accumulators=4, pixel_tile_limit=4,
    matmul=(
        MatmulClass("row", 1, 64, 1, 16, why="one row: 4 q accumulators"),
        MatmulClass("matrix-vector", 8, 64, 6, 4, why="few rows: up to 6 x 1 q accumulators and a broadcast"),
        MatmulClass("general", 24, 32, 6, 4, why="6x4 = 6 q accumulators, 1 row of B and a broadcast: 8 of 8"),
    ),
)

#: the spec of each ISA class; a scalar target takes SSE's tiles (LLVM scalarizes the vectors)
SPECS: dict[str, KernelSpec] = {"avx512": AVX512, "avx2": AVX2, "sse": SSE, "neon": NEON, "mve": MVE}


def for_target(target: Target) -> KernelSpec:
    """The kernels' spec for ``target``: its ISA class's tiles (the class follows from the vector width, so the
    lanes agree) and its cache sizes."""
    spec = replace(SSE, isa="scalar") if target.isa == "scalar" else SPECS[target.isa]
    return replace(spec, l1=target.caches.get("l1d", spec.l1), l2=target.caches.get("l2", spec.l2),
                   l1_ways=target.l1_ways, fma_lanes=target.fma_lanes)


def spec_of(cpu: str = "", triple: str = "") -> KernelSpec:
    """The spec of the target named by a pass's ``target-cpu`` and ``target-triple`` options (empty: the host)."""
    from .. import target as targets

    return for_target(targets.named(cpu or None, triple or None))


__all__ = ["AVX2", "AVX512", "MVE", "NEON", "SPECS", "SSE", "KernelSpec", "MatmulClass", "covers", "for_target", "spec_of"]
