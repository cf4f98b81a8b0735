"""The matmul kernels (glow_mlir/backend/kernels): the tile plan covers every shape with dividing tiles, and the
compiled code matches numpy (rtol 1e-4) on tiny, non-dividing and big shapes, on one thread and on two, for
MatMul, Gemm with a bias (fully_connected) and batch_matmul; the JIT object holds FMA instructions."""

from __future__ import annotations

import gc
import subprocess

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlir import ir
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.backend import cpu, tools_paths
from glow_mlir.backend.jit import Argument, JitProgram
from glow_mlir.backend.kernels import conv, filter_layout, isa, matmul
from glow_mlir.cache import cpu_features
from glow_mlir.dialects import make_context
from glow_mlir.passes.ir.allocator import align_up
from glow_mlir.passes.pipeline import parse_pipeline, run_pipeline

RTOL, ATOL = 1e-4, 1e-5
RNG = np.random.default_rng(11)
#: the tile tables these tests pin (the host's own spec depends on the machine)
AVX512, AVX2 = isa.AVX512, isa.AVX2


@pytest.fixture(autouse=True)
def every_kernel_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two-thread compiles here spread every kernel over the threads, the small shapes too (the default keeps kernels
    below cpu.PARALLEL_FLOPS on the calling thread): the parallel code is what these tests check."""
    monkeypatch.setattr(cpu, "PARALLEL_FLOPS", 0)


# --------------------------------------------------------------------------- the plan


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.integers(1, 700), st.integers(1, 900))
def test_plan_covers_the_output_with_dividing_tiles(m: int, n: int, k: int) -> None:
    for spec in isa.SPECS.values():
        covered = np.zeros((m, n), np.int32)
        for p in matmul.plan(m, n, k, spec):
            covered[p.row:p.row + p.rows, p.col:p.col + p.cols] += 1
            t = p.tiles
            assert p.rows % t.m == 0 and t.m % t.mr == 0, p
            assert p.cols % t.n == 0 and t.n % t.nr == 0, p
            assert t.k == 0 or k % t.k == 0, p
        assert (covered == 1).all(), spec.isa


def test_plan_of_a_dividing_shape_is_one_piece() -> None:
    (piece,) = matmul.plan(64, 512, 784, AVX512)
    assert piece.tiles == matmul.Tiles(64, 64, 0, 8, 32, split=1)
    (piece,) = matmul.plan(1024, 1024, 1024, AVX512)
    assert piece.tiles == matmul.Tiles(128, 128, 0, 8, 32, pack=True)


def test_tile_keys_round_trip() -> None:
    for tiles in (matmul.Tiles(64, 64, 0, 8, 32), matmul.Tiles(128, 128, 256, 8, 32, pack=True),
                  matmul.Tiles(8, 96, 0, 8, 32, split=1),
                  matmul.Tiles(28, 64, 0, 7, 32, pack=True, init=(28, 6, 1), serial=True)):
        assert matmul.parse_key(tiles.key()) == tiles


def test_plan_splits_off_remainders() -> None:
    pieces = matmul.plan(67, 1000, 33, AVX512)
    assert [(p.row, p.rows, p.col, p.cols) for p in pieces] == \
        [(0, 64, 0, 992), (0, 64, 992, 8), (64, 3, 0, 992), (64, 3, 992, 8)]
    assert [(p.tiles.mr, p.tiles.nr) for p in pieces] == [(8, 32), (8, 8), (3, 32), (3, 8)]


def test_remainder_columns_are_power_of_two_pieces() -> None:
    # 120 = 96 + 16 + 8: a 24-wide register tile ran 6x slower than these pieces together
    assert [(p.col, p.cols, p.tiles.nr) for p in matmul.plan(8, 120, 256, AVX512)] == [(0, 96, 32), (96, 16, 16), (112, 8, 8)]
    assert [p.tiles.nr for p in matmul.plan(8, 84, 120, AVX512)] == [32, 16, 4]
    assert matmul.vector_pieces(7, 16) == [(0, 4), (4, 2), (6, 1)]


@pytest.mark.parametrize("spec", list(isa.SPECS.values()), ids=list(isa.SPECS))
def test_every_tile_table_fits_its_registers_and_says_why(spec: isa.KernelSpec) -> None:
    spec.check()  # accumulators, loads and the broadcast within the register count; the last class takes every shape
    assert all(c.why and c.name for c in spec.matmul)


def test_one_row_takes_eight_accumulators() -> None:
    # batch 1 (an RNN's step, a classifier head): 8 vector accumulators keep two 4-cycle FMA pipes busy; 4 did not
    # (LSTM hidden 256 over 64 steps, batch 1: 1.03 -> 0.83 ms)
    assert [p.tiles.nr for p in matmul.plan(1, 1024, 256, AVX512)] == [128]
    assert [p.tiles.nr for p in matmul.plan(1, 1024, 256, AVX2)] == [64]


def test_avx2_tiles_fit_16_registers() -> None:
    # 6x16 = 12 ymm accumulators + 2 rows of B + a broadcast; constant weights in 16-column panels (60 rows share
    # them), a B known only at run time as it is (no copy per call)
    (piece,) = matmul.plan(60, 512, 784, AVX2)
    assert (piece.tiles.mr, piece.tiles.nr, piece.tiles.pack) == (6, 16, False)
    assert matmul.panel_width(60, 512, 784, AVX2) == 16 and matmul.panel_width(16, 512, 784, AVX2) == 16
    assert matmul.panel_width(4, 512, 784, AVX2) == 0  # a matrix-vector tile reads B's rows as they are
    assert matmul.panel_width(1, 512, 784, AVX2) == 64  # one row: 64-column panels (8 ymm accumulators)
    assert matmul.panel_width(60, 504, 784, AVX2) == 16  # padded to whole panels: 8 columns more
    assert matmul.panel_width(60, 40, 784, AVX2) == 0  # padding 40 to 48 would add more than an eighth
    # AVX-512 packs constant weights in 32-column panels from 8 rows on too, not below
    assert matmul.panel_width(64, 512, 784, AVX512) == 32 and matmul.panel_width(128, 1024, 1024, AVX512) == 32
    assert matmul.panel_width(4, 512, 784, AVX512) == 0
    # 64 rows: 60 rows of 6x16 and a strip of 4, not 4x16 everywhere (8 accumulators, exactly the busy count: 1.10x
    # the time); 8 and 20 rows: the tiles that divide them (4x16, 5x16), not 6x16 and a strip of 2 (4 accumulators)
    assert [(p.rows, p.tiles.mr) for p in matmul.plan(64, 64, 64, AVX2)] == [(60, 6), (4, 4)]
    assert [(p.rows, p.tiles.mr) for p in matmul.plan(8, 64, 64, AVX2)] == [(8, 4)]
    assert [(p.rows, p.tiles.mr) for p in matmul.plan(20, 64, 64, AVX2)] == [(20, 5)]
    # AVX-512: 60 rows in 6x32 (12 accumulators) as they divide; 44 in 8x32 and a strip of 4, not in 4x32
    assert [(p.rows, p.tiles.mr) for p in matmul.plan(60, 64, 64, AVX512)] == [(60, 6)]
    assert [(p.rows, p.tiles.mr) for p in matmul.plan(44, 64, 64, AVX512)] == [(40, 8), (4, 4)]
    # 62 rows: no divisor keeps the pipes busy: 60 in 6-row tiles and a remainder strip of 2
    assert [(p.rows, p.tiles.mr) for p in matmul.plan(62, 64, 64, AVX2)] == [(60, 6), (2, 2)]
    # 1024 rows: 6x16 and a strip of 4, not 4x16 everywhere
    assert [(p.rows, p.tiles.mr) for p in matmul.plan(1024, 64, 64, AVX2)] == [(1020, 6), (4, 4)]
    # a piece of one vector keeps 8 rows on AVX-512 (5 x 1 would not keep the pipes busy): strips as before
    assert [(p.rows, p.tiles.mr, p.tiles.nr) for p in matmul.plan(10, 16, 8, AVX512)] == [(8, 8, 16), (2, 2, 16)]
    # OW 56: 6x16 (12 accumulators, 8 loads per 12 FMAs) in 9 tiles and a last one of 2 columns, over 4x16 (6 loads
    # per 8 FMAs), which divides the row, and 14x8 (15 per 14): the least cost over the row (conv.tile_cost)
    assert conv.plan([1, 56, 56, 64], 1, AVX2) == conv.ConvTiles(56, 32, 6, 16)
    assert conv.tile_cost(56, 6, 2, AVX2) < conv.tile_cost(56, 4, 2, AVX2) < conv.tile_cost(56, 14, 1, AVX2)
    # OW 14: 5x16, 5 + 5 + 4 columns (7x16 would need 17 registers; 14x8 reads more per FMA)
    assert conv.plan([1, 14, 14, 256], 2, AVX2) == conv.ConvTiles(14, 32, 5, 16)
    # tiles whose input pixels are 4 KiB apart (C = 1024) count against the L1's 8 ways: 14 of them do not fit
    assert conv.set_streams(14, 4096, AVX2) == 14 and conv.set_streams(14, 2048, AVX2) == 7
    assert conv.plan([1, 14, 14, 8], 1, AVX2, pixel_bytes=4096) == conv.ConvTiles(14, 8, 7, 8)
    # OW 7: 4x16 and a last tile of 3x16 beat seven columns of one vector (7 accumulators: the pipes idle)
    assert conv.plan([1, 7, 7, 512], 1, AVX2) == conv.ConvTiles(7, 32, 4, 16)
    assert conv.plan([1, 24, 24, 64], 1, AVX2) == conv.ConvTiles(24, 32, 6, 16)  # 6x16: 12 + 2 + 1
    assert conv.plan_depthwise([1, 56, 56, 144], 1, AVX2) == conv.ConvTiles(56, 16, 4, 16, depthwise=True)
    assert conv.plan_depthwise([1, 7, 7, 960], 1, AVX2) == conv.ConvTiles(7, 8, 7, 8, depthwise=True)
    assert conv.filter_block([3, 3, 512, 512], 1, [1, 1], AVX2) == 16
    # filters that are whole vectors but no whole blocks: blocks of one vector (AVX-512 208 = 13 x 16, AVX2 1000 =
    # 125 x 8); 1000 on AVX-512 (62.5 vectors) stays HWCF
    assert conv.filter_block([3, 3, 96, 208], 1, [1, 1], AVX512) == 16
    assert conv.filter_block([1, 1, 512, 1000], 1, [1, 1], AVX512) == 0
    assert conv.filter_block([1, 1, 512, 1000], 1, [1, 1], AVX2) == 8
    # a pointwise convolution on 32 or more channels whose row tile is poor runs as a matmul of its pixels, on
    # panels of the matmul tile's width (AVX2 at OW 14: 14x8, 1.07 loads per FMA, against 4x16 over 196 pixels, 0.75)
    assert conv.filter_block([1, 1, 256, 1024], 1, [1, 1], AVX2, [1, 14, 14, 1024], 1, 1024) == 16
    def rows(shape, spec, channels):
        return conv.plan(shape, 1, spec, pixel_bytes=4 * channels)

    assert conv._matmul_wins(rows([1, 14, 14, 16], AVX2, 256), [1, 14, 14], 16, 256, 256, AVX2)
    assert conv._matmul_wins(rows([1, 14, 14, 16], AVX2, 64), [1, 14, 14], 16, 64, 256, AVX2)
    assert not conv._matmul_wins(rows([1, 14, 14, 16], AVX2, 16), [1, 14, 14], 16, 16, 256, AVX2)  # short reduction
    # at every row width but where tiles of whole rows beat it (AVX-512 at OW 7)
    assert conv._matmul_wins(rows([1, 56, 56, 16], AVX2, 256), [1, 56, 56], 16, 256, 64, AVX2)
    assert conv._matmul_wins(rows([1, 7, 7, 16], AVX2, 512), [1, 7, 7], 16, 512, 2048, AVX2)
    assert conv._matmul_wins(rows([1, 14, 14, 32], AVX512, 256), [1, 14, 14], 32, 256, 1024, AVX512)
    assert conv._matmul_wins(rows([1, 56, 56, 32], AVX512, 256), [1, 56, 56], 32, 256, 64, AVX512)
    assert not conv._matmul_wins(rows([1, 7, 7, 32], AVX512, 512), [1, 7, 7], 32, 512, 2048, AVX512)
    # at 2048 channels two whole rows read pixels 8 KiB apart, in one L1 set: only over a copy of the input whose
    # pixels are a cache line longer, which pays for itself with 512 filters (16 blocks), not with 64 (2)
    assert conv._matmul_wins(rows([1, 7, 7, 32], AVX512, 2048), [1, 7, 7], 32, 2048, 64, AVX512)
    assert not conv._matmul_wins(rows([1, 7, 7, 32], AVX512, 2048), [1, 7, 7], 32, 2048, 512, AVX512)
    assert conv._pixel_tiles(rows([1, 7, 7, 32], AVX512, 2048), [1, 7, 7, 2048], [1, 7, 7, 16, 32],
                             [16, 1, 1, 2048, 32], [1, 1], AVX512) == (14, conv.SPREAD_CHANNELS)
    # the block of a one-vector register tile is its width: every filter line read is used whole
    # (AVX2 at OW 7: 4x16 and a last tile of 3x16, two vectors wide: blocks of 16)
    assert conv.filter_block([3, 3, 512, 512], 1, [1, 1], AVX2, [1, 7, 7, 512], 1, 2048) == 16
    assert conv.filter_block([3, 3, 64, 64], 1, [1, 1], AVX2, [1, 56, 56, 64], 1, 256) == 16
    assert conv.filter_block([3, 3, 512, 512], 1, [1, 1], AVX512, [1, 7, 7, 512], 1, 2048) == 32
    assert conv.channel_pieces(44, AVX2.lanes) == [(0, 40), (40, 4)]


def test_the_spec_follows_the_target() -> None:
    assert isa.spec_of("haswell", "x86_64-unknown-linux-gnu").isa == "avx2"
    assert isa.spec_of("znver3", "x86_64-unknown-linux-gnu").lanes == 8
    assert isa.spec_of("skylake-avx512", "x86_64-unknown-linux-gnu").isa == "avx512"
    neon = isa.spec_of("neoverse-n1", "aarch64-linux-gnu")
    assert (neon.isa, neon.lanes, neon.registers) == ("neon", 4, 32)


# --------------------------------------------------------------------------- numerics through the API


def _skip_unless_host_runs(target_cpu: str) -> None:
    """Skip a numerical test of ``target_cpu``'s code ("haswell": AVX2) on a host that cannot run it."""
    if target_cpu == "haswell" and "avx2" not in cpu_features() and "avx512f" not in cpu_features():
        pytest.skip("this host cannot run AVX2 code")


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, list[int]], output: list[int],
           initializers: list[onnx.TensorProto] = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "kernel", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v)
                                                for k, v in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, output)], list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


SHAPES = {
    "tiny": (1, 1, 1),
    "small": (3, 5, 10),
    "remainders": (67, 130, 33),
    "column-pieces": (8, 120, 256),  # 96 + 16 + 8 columns
    "odd-column-pieces": (8, 7, 84),  # 4 + 2 + 1
    "narrow": (64, 10, 512),
    "row": (1, 1000, 512),
    "mlp": (64, 512, 784),
    "big": (256, 384, 512),
    "packed-remainders": (136, 300, 260),
    "odd-tile-grid": (136, 128, 64),  # 17 x 2 L1 tiles: a 2-D grid of tasks
    # B copied into panels at run time a block at a time (4 MiB packed whole: more than half of any L2)
    "packed-in-blocks": (128, 1024, 1024),
    "packed-prime-k": (128, 1024, 521),  # no divisor of K between 64 and the block's rows: all of K in a block
    "packed-column-blocks": (136, 4000, 512),  # 125 panels of 32: blocks of 256 rows x 800 columns (host L2 2 MiB)
}


def test_run_time_packing_blocks_b_to_half_the_l2() -> None:
    assert matmul.packed_blocks(256, 512, 128, 1 << 20) == (256, 512)  # 512 KiB: whole
    assert matmul.packed_blocks(1024, 1024, 128, 2 << 20) == (256, 1024)  # all N columns, 256 rows
    assert matmul.packed_blocks(1024, 1024, 64, 1 << 20) == (256, 512)  # 256 rows, the columns that fit
    assert matmul.packed_blocks(1000, 1024, 64, 1 << 20) == (250, 512)  # rows that divide K
    assert matmul.packed_blocks(521, 1024, 64, 1 << 20) == (521, 128)  # K prime: all rows, fewer columns
    assert matmul.packed_blocks(25088, 4096, 128, 2 << 20) == (784, 4096)  # at most 32 blocks
    # 31 or 25 blocks of columns would make too many islands: wider blocks (992 = 31 x 32, 4000 = 125 x 32)
    assert matmul.packed_blocks(1024, 992, 32, 1 << 20) == (256, 992)
    assert matmul.packed_blocks(512, 4000, 32, 1 << 20) == (256, 800)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_matmul_matches_numpy(shape: tuple[int, int, int], threads: int) -> None:
    m, n, k = shape
    model = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": [m, k], "b": [k, n]}, [m, n])
    compiled = glow_mlir.compile(model, threads=threads)
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(compiled(a, b), a @ b, rtol=RTOL, atol=ATOL * k)


def test_register_tiles_run_down_a_panel_whose_slice_fits_half_the_l1() -> None:
    avx2 = isa.spec_of("haswell", "x86_64-unknown-linux-gnu")  # 32 KiB L1
    avx512 = isa.spec_of("skylake-avx512", "x86_64-unknown-linux-gnu")
    assert matmul.panels_outer(256, 16, avx2)  # 16 KiB
    assert not matmul.panels_outer(257, 16, avx2)
    assert not matmul.panels_outer(521, 16, avx2)  # a prime K is one block
    assert not matmul.panels_outer(256, 32, avx512)  # 32 KiB
    assert matmul.panels_outer(128, 32, avx512)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(128, 1024, 1024), (260, 512, 512), (128, 1024, 521)],
                         ids=["blocks", "main-and-strip", "prime-k"])
def test_avx2_packed_matmul_matches_numpy(shape: tuple[int, int, int], threads: int) -> None:
    # B packed at run time in blocks of 256 rows: the register tiles run down each panel (both pieces of 260 = 43 x 6
    # + 2 rows), across the panels where K is prime (one block of 521 rows)
    _skip_unless_host_runs("haswell")
    m, n, k = shape
    model = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": [m, k], "b": [k, n]}, [m, n])
    compiled = glow_mlir.compile(model, threads=threads, target_cpu="haswell")
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(compiled(a, b), a @ b, rtol=RTOL, atol=ATOL * k)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
@pytest.mark.parametrize("shape", [(3, 5, 10), (61, 100, 77), (64, 512, 784), (1, 1024, 300), (1, 1000, 64),
                                   (1, 1000, 512)],
                         ids=["small", "remainders", "mlp", "one-row-packed", "one-row-1000", "classifier"])
def test_fully_connected_matches_numpy(shape: tuple[int, int, int], target_cpu: str, threads: int) -> None:
    # one row: the weights packed in the row class's panels (1024 columns), or padded to them (1000 columns)
    _skip_unless_host_runs(target_cpu)
    m, n, k = shape
    w = RNG.standard_normal((k, n)).astype(np.float32)
    bias = RNG.standard_normal(n).astype(np.float32)
    model = _model([helper.make_node("Gemm", ["x", "w", "bias"], ["y"])], {"x": [m, k]}, [m, n],
                   [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")])
    compiled = glow_mlir.compile(model, threads=threads, target_cpu=target_cpu)
    x = RNG.standard_normal((m, k)).astype(np.float32)
    np.testing.assert_allclose(compiled(x), x @ w + bias, rtol=RTOL, atol=ATOL * k)


def _gemm_and_matmul(name: str, rows: int, k: int, n: int, activation: str, scale: float) -> onnx.ModelProto:
    """A Gemm with ``activation`` after it (output y) and a MatMul (output z) on the same constant weights ``[k, n]``,
    both reading x ``[rows, k]``."""
    w = (RNG.standard_normal((k, n)) * scale).astype(np.float32)
    bias = RNG.standard_normal(n).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w", "bias"], ["g"]), helper.make_node(activation, ["g"], ["y"]),
             helper.make_node("MatMul", ["x", "w"], ["z"])]
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, k])],
                              [helper.make_tensor_value_info(v, TensorProto.FLOAT, [rows, n]) for v in "yz"],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _matches_the_reference(compiled, model: onnx.ModelProto, rows: int, k: int) -> None:
    from onnx.reference import ReferenceEvaluator

    x = RNG.standard_normal((rows, k)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})
    for got, expected in zip(compiled(x), want):
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL * k)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
@pytest.mark.parametrize("rows", [1, 169], ids=["one-row", "pixels"])
def test_weights_of_no_whole_panels_are_padded_and_sliced(rows: int, target_cpu: str, threads: int) -> None:
    # 1000 columns (a classifier; squeezenet's 1x1 512->1000 over 13x13 pixels): the weights padded with zero columns
    # to whole panels and packed, the product (bias, relu) sliced back; a MatMul of constant weights the same
    _skip_unless_host_runs(target_cpu)
    k, n = 48, 1000
    model = _gemm_and_matmul("padded", rows, k, n, "Relu", 0.2)
    compiled = glow_mlir.compile(model, threads=threads, target_cpu=target_cpu or None, cache=False)
    spec = isa.spec_of(target_cpu)
    width = matmul.panel_width(rows, n, k, spec)
    padded = align_up(n, width)
    assert width and padded > n
    lowered = compiled.stage("lower").text
    assert lowered.count(f"tensor<{padded // width}x{k}x{width}xf32>") >= 2 and lowered.count("glowgraph.slice") == 2
    _matches_the_reference(compiled, model, rows, k)


@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
def test_weights_larger_than_half_the_l2_stream_once_column_tile_by_column_tile(target_cpu: str) -> None:
    # 130 rows (several L1 row tiles and a strip) by 768 KiB of packed weights: the L1 tiles run down the rows of each
    # column tile (matmul.columns_outer), with the bias and relu fused into the islands, and a MatMul without them
    _skip_unless_host_runs(target_cpu)
    m, k, n = 130, 256, 768
    spec = isa.spec_of(target_cpu)
    assert matmul.columns_outer(k, n, 2, spec) and not matmul.columns_outer(k, n, 1, spec)
    model = _gemm_and_matmul("wide", m, k, n, "Relu", 0.1)
    compiled = glow_mlir.compile(model, threads=1, target_cpu=target_cpu or None, cache=False)
    _matches_the_reference(compiled, model, m, k)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
@pytest.mark.parametrize("rows", [1, 64], ids=["one-row", "batch"])
def test_weights_of_less_than_a_panel_are_padded_to_whole_vectors(rows: int, target_cpu: str, threads: int) -> None:
    # 10 columns (mlp_mnist's head): the weights padded with zero columns to 16 (whole vectors on AVX2 and AVX-512),
    # the product (bias, sigmoid, which is 0.5 in the padding) sliced back; a MatMul of constant weights the same
    _skip_unless_host_runs(target_cpu)
    k, n = 72, 10
    model = _gemm_and_matmul("head", rows, k, n, "Sigmoid", 0.2)
    compiled = glow_mlir.compile(model, threads=threads, target_cpu=target_cpu or None, cache=False)
    assert matmul.vector_columns(rows, n, k, isa.spec_of(target_cpu)) == 16
    lowered = compiled.stage("lower").text
    assert lowered.count(f"tensor<{k}x16xf32>") >= 2 and lowered.count("glowgraph.slice") == 2
    _matches_the_reference(compiled, model, rows, k)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
def test_output_channels_padded_to_whole_filter_blocks(target_cpu: str, threads: int) -> None:
    # F half a vector short of whole filter blocks (AVX-512 120 of 128, AVX2 60 of 64): computed with zero filters
    # and biases up to the blocks and the first F channels sliced out (the relu fused into the convolution, a strided
    # 3x3 convolution reading the sliced channels); convolutions whose output an elementwise op reads (an add, which
    # runs inside the convolution's loops) keep their F
    from onnx.reference import ReferenceEvaluator

    _skip_unless_host_runs(target_cpu)
    spec = isa.spec_of(target_cpu)
    f = 4 * spec.filter_block - spec.lanes // 2
    assert filter_layout.padded_channels(f, 1, spec, 32 * 9) == 4 * spec.filter_block
    w, u = ((RNG.standard_normal((f, 32, 3, 3)) * 0.1).astype(np.float32) for _ in range(2))
    v = (RNG.standard_normal((f, f, 3, 3)) * 0.1).astype(np.float32)
    b, c, d = (RNG.standard_normal(f).astype(np.float32) for _ in range(3))
    same = {"pads": [1, 1, 1, 1]}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], **same), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Conv", ["r", "v", "bv"], ["y"], strides=[2, 2], **same),
             helper.make_node("Conv", ["x", "u", "bu"], ["k"], **same),
             helper.make_node("Conv", ["x", "w", "bu"], ["q"], **same), helper.make_node("Add", ["k", "q"], ["z"])]
    graph = helper.make_graph(
        nodes, "padded", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 13, 13])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, 7, 7]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, f, 13, 13])],
        [numpy_helper.from_array(a, name) for a, name in zip((w, u, v, b, c, d), ("w", "u", "v", "b", "bv", "bu"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = glow_mlir.compile(model, threads=threads, target_cpu=target_cpu, cache=False)
    assert compiled.stage("lower").text.count('"glowgraph.slice"') == 2
    x = RNG.standard_normal((1, 32, 13, 13)).astype(np.float32)
    for got, want in zip(compiled(x), ReferenceEvaluator(model).run(None, {"x": x}), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_failing_schedule_says_which_and_that_mlir_gave_no_diagnostic() -> None:
    from mlir.dialects.transform import structured

    from glow_mlir.backend.kernels import transform as schedule

    with make_context(), ir.Location.unknown():
        module = ir.Module.parse("""
          func.func @f(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
            %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>)
              -> tensor<8x8xf32>
            return %r : tensor<8x8xf32>
          }""")

        def build(root: ir.Value) -> None:  # an interchange that is no permutation: fails without a message
            ops = structured.MatchOp(schedule.any_op(), root, ops=["linalg.matmul"]).result
            structured.FuseOp(ops, tile_sizes=[2, 2, 0], tile_interchange=[1, 0, 0], apply_cleanup=True)

        with pytest.raises(ValueError) as failed:
            schedule.apply(module.operation, build, "a matmul in 2x2 tiles")
    message = str(failed.value)
    assert message.startswith("Failed to apply named transform sequence")
    assert "the transform interpreter gave no diagnostic" in message and "Diagnostic message" not in message
    assert message.endswith("Schedule: a matmul in 2x2 tiles.")


def test_threads_run_the_tiles_on_the_worker_pool() -> None:
    model = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": [128, 64], "b": [64, 256]}, [128, 256])
    parallel = glow_mlir.compile(model, threads=2, cache=False).stage("codegen").text
    serial = glow_mlir.compile(model, threads=1, cache=False).stage("codegen").text
    assert "llvm.call @glow_pool_run" in parallel
    assert "glow_pool_run" not in serial


def test_a_contraction_cut_into_pieces_runs_on_the_pool_by_its_whole_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # resnet's classifier, 512 -> 1000 at batch 1 (1.02 MFLOP): its piece of 896 columns alone is below the threshold
    monkeypatch.setattr(cpu, "PARALLEL_FLOPS", 1_000_000)
    model = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": [1, 512], "b": [512, 1000]}, [1, 1000])
    assert "llvm.call @glow_pool_run" in glow_mlir.compile(model, threads=2, cache=False).stage("codegen").text


def test_small_kernels_stay_on_the_calling_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu, "PARALLEL_FLOPS", 5_000_000)
    # the FLOP threshold alone: AVX2's 6-row tiles leave 128 rows' zero fill a loop of its own (128 KiB), which the
    # byte threshold of the other loops would cut into tasks
    monkeypatch.setattr(cpu, "PARALLEL_BYTES", 1 << 30)
    small = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": [128, 64], "b": [64, 256]}, [128, 256])
    assert "llvm.call @glow_pool_run" not in glow_mlir.compile(small, threads=2, cache=False).stage("codegen").text
    big = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": [128, 256], "b": [256, 256]}, [128, 256])
    compiled = glow_mlir.compile(big, threads=2, cache=False)  # 16.8 MFLOP
    assert "llvm.call @glow_pool_run" in compiled.stage("codegen").text
    a = RNG.standard_normal((128, 256)).astype(np.float32)
    b = RNG.standard_normal((256, 256)).astype(np.float32)
    np.testing.assert_allclose(compiled(a, b), a @ b, rtol=RTOL, atol=ATOL * 256)


@pytest.mark.parametrize(("flops", "tiles", "threads", "expected"), [
    (10**9, 8, 1, 0),  # one thread: no tasks
    (10**9, 1, 2, 0),  # one tile: nothing to spread
    (10**5, 8, 2, 0),  # below the threshold
    (10**9, 8, 2, 4),  # one task per thread
    (10**9, 7, 2, 1),  # tiles that do not divide: one task per tile
    (10**9, 12, 4, 3),
])
def test_tiles_per_task(flops: int, tiles: int, threads: int, expected: int) -> None:
    from glow_mlir.backend.kernels.passes import tiles_per_task

    assert tiles_per_task(flops, tiles, threads, parallel_flops=10**6) == expected


@pytest.mark.parametrize(("grid", "split", "threads", "expected"), [
    (18, 9, 2, 1),  # 9 row tiles keep two threads 9/10 busy: rows
    (14, 7, 2, matmul.GRID),  # 7 row tiles: 7/8
    (14, 7, 16, matmul.GRID),  # 7 of 16: the 14 tiles of both dims
    (56, 28, 16, 1),  # 28 tiles: 28/32 busy, the grid no better
    (16, 16, 16, 1),
])
def test_matmul_tasks_are_a_grid_where_the_split_dim_has_too_few_tiles(grid: int, split: int, threads: int,
                                                                       expected: int) -> None:
    from glow_mlir.backend.kernels.balance import busy
    from glow_mlir.backend.kernels.passes import _grid_or_rows

    assert busy(7, 16) == 7 / 16 and busy(40, 16) == 40 / 48
    assert _grid_or_rows(grid, split, threads) == expected


@pytest.mark.parametrize(("island", "threads", "expected"), [
    ((192, 64, 384, 8, 32, 64, 64), 16, (24, 32)),  # 3 tasks of 64 rows -> 8 x 2 tasks of 24 rows x 32
    ((192, 64, 384, 8, 32, 64, 64), 2, (48, 64)),  # 3 tasks on two threads -> 2 tasks of 2 tiles of 48 rows
    ((192, 64, 384, 8, 32, 64, 64), 1, (64, 64)),  # one thread: the tiles for one core
    ((784, 192, 32, 8, 32, 56, 64), 16, (56, 64)),  # 14 tasks of 56 rows: the smaller tiles cost more than they save
    ((3136, 64, 256, 8, 32, 64, 64), 2, (64, 64)),  # 49 tasks keep two threads 49/50 busy: kept
    ((192, 256, 1024, 8, 32, 96, 128), 16, (96, 32)),  # 2 x 2 tiles -> 2 x 8, one panel of 32 a tile
])
def test_matmul_tiles_on_several_threads_keep_the_threads_busy(island: tuple, threads: int,
                                                                expected: tuple[int, int]) -> None:
    from glow_mlir.backend.kernels.balance import balanced_tiles

    rows, cols, k, mr, nr, l1_m, l1_n = island
    m, n = balanced_tiles(rows, cols, k, mr, nr, l1_m, l1_n, threads, 32_000)  # task_flops on AVX-512
    assert (m, n) == expected
    assert rows % m == 0 and cols % n == 0 and m % mr == 0 and n % nr == 0 and m <= l1_m and n <= l1_n


def test_a_task_costs_500_cycles_of_the_targets_fmas() -> None:
    from glow_mlir.backend.kernels.balance import task_flops

    assert task_flops(isa.spec_of("skylake-avx512", "x86_64-unknown-linux-gnu")) == 32_000  # two 16-lane pipes
    assert task_flops(isa.spec_of("haswell", "x86_64-unknown-linux-gnu")) == 16_000


@pytest.mark.parametrize("shape", [(128, 128, 128), (49, 160, 960), (136, 128, 64), (7, 1000, 512)],
                         ids=["bert", "pixels-7x7", "odd-tile-grid", "few-rows"])
def test_matmul_on_sixteen_threads_matches_numpy(shape: tuple[int, int, int]) -> None:
    # more threads than this machine has cores: tasks as grids of tiles, loops asking for fewer threads than 16
    m, n, k = shape
    model = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": [m, k], "b": [k, n]}, [m, n])
    compiled = glow_mlir.compile(model, threads=16, cache=False)
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    for _ in range(3):
        np.testing.assert_allclose(compiled(a, b), a @ b, rtol=RTOL, atol=ATOL * k)


def test_a_destroyed_threaded_program_leaves_the_others_running() -> None:
    # the pool outlives every program: a program's code is freed only after its last call's tasks are done
    model = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": [128, 64], "b": [64, 256]}, [128, 256])
    kept = glow_mlir.compile(model, threads=2, cache=False)
    dropped = glow_mlir.compile(model, threads=2, cache=False)
    a = RNG.standard_normal((128, 64)).astype(np.float32)
    b = RNG.standard_normal((64, 256)).astype(np.float32)
    dropped(a, b)
    del dropped
    gc.collect()
    for _ in range(3):
        np.testing.assert_allclose(kept(a, b), a @ b, rtol=RTOL, atol=ATOL * 64)


# --------------------------------------------------------------------------- batch_matmul through the codegen passes

BATCH = """
func.func @bmm(%a: memref<{b}x{m}x{k}xf32>, %w: memref<{b}x{k}x{n}xf32>, %y: memref<{b}x{m}x{n}xf32>)
    attributes {{llvm.emit_c_interface}} {{
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<{b}x{m}x{n}xf32>)
  linalg.batch_matmul ins(%a, %w : memref<{b}x{m}x{k}xf32>, memref<{b}x{k}x{n}xf32>)
                      outs(%y : memref<{b}x{m}x{n}xf32>)
  return
}}
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (3, 17, 40, 9), (2, 128, 64, 128)], ids=["tiny", "odd", "attention"])
def test_batch_matmul_matches_numpy(shape: tuple[int, int, int, int], threads: int) -> None:
    b, m, n, k = shape
    ctx = make_context()
    module = ir.Module.parse(BATCH.format(b=b, m=m, n=n, k=k), ctx)
    codegen = [e for e in cpu.codegen(threads) if getattr(e, "name", None) != "convert-glowir-to-linalg"]
    run_pipeline(module.operation, codegen)
    f32 = np.dtype(np.float32)
    program = JitProgram(module, "bmm", [Argument("a", (b, m, k), f32, "input"), Argument("w", (b, k, n), f32, "input"),
                                         Argument("y", (b, m, n), f32, "output")], threads=threads)
    a = RNG.standard_normal((b, m, k)).astype(np.float32)
    w = RNG.standard_normal((b, k, n)).astype(np.float32)
    np.testing.assert_allclose(program({"a": a, "w": w})["y"], a @ w, rtol=RTOL, atol=ATOL * k)


# --------------------------------------------------------------------------- conv_2d_nhwc_hwcf through the codegen passes

CONV = """
func.func @conv(%x: memref<{n}x{h}x{w}x{c}xf32>, %f: memref<{kh}x{kw}x{c}x{co}xf32>, %b: memref<{co}xf32>,
                %y: memref<{n}x{oh}x{ow}x{co}xf32>) attributes {{llvm.emit_c_interface}} {{
  linalg.broadcast ins(%b : memref<{co}xf32>) outs(%y : memref<{n}x{oh}x{ow}x{co}xf32>) dimensions = [0, 1, 2]
  linalg.conv_2d_nhwc_hwcf {{dilations = dense<1> : tensor<2xi64>, strides = dense<{s}> : tensor<2xi64>}}
    ins(%x, %f : memref<{n}x{h}x{w}x{c}xf32>, memref<{kh}x{kw}x{c}x{co}xf32>) outs(%y : memref<{n}x{oh}x{ow}x{co}xf32>)
  return
}}
"""

def test_conv_register_tiles_follow_the_rule() -> None:
    assert conv.plan([1, 56, 56, 64], 1, AVX512) == conv.ConvTiles(56, 64, 14, 32)
    assert conv.plan([1, 112, 112, 64], 2, AVX512) == conv.ConvTiles(112, 64, 8, 32)  # no 14-wide tiles with a stride
    assert conv.plan([1, 7, 7, 2048], 1, AVX512) == conv.ConvTiles(7, 64, 7, 32)
    assert conv.plan([1, 7, 7, 512], 1, AVX512, weight_heavy=True) == conv.ConvTiles(7, 32, 7, 32, filters_outer=True)
    assert conv.plan([1, 8, 8, 8], 1, AVX512) == conv.ConvTiles(8, 8, 8, 8)
    assert conv.plan_depthwise([1, 112, 112, 96], 1, AVX512) == conv.ConvTiles(112, 16, 16, 16, depthwise=True)
    assert conv.plan_depthwise([1, 56, 56, 32], 2, AVX512) == conv.ConvTiles(56, 16, 8, 16, depthwise=True)
    assert conv.plan_depthwise([1, 8, 8, 4], 1, AVX512) == conv.ConvTiles(8, 4, 8, 4, depthwise=True)
    for t in (conv.ConvTiles(56, 64, 14, 32), conv.ConvTiles(8, 8, 8, 8), conv.ConvTiles(7, 16, 7, 16, True),
              conv.ConvTiles(7, 32, 7, 32, filters_outer=True)):
        assert conv.parse_key(t.key()) == t


def test_pixel_tiles_take_whole_rows_where_the_registers_hold_them() -> None:
    # AVX-512 at OW 7: two rows of 7 (28 zmm accumulators) against the 7x32 row tile; at OW 14 the 14x32 row tile
    # already holds as many, at OW 3 three rows of 3; AVX2 (16 registers) keeps its tiles of 5 pixels across rows
    rows = {ow: conv.plan([1, ow, ow, 32], 1, AVX512) for ow in (3, 7, 14)}
    assert conv.pixel_rows(rows[7], 49, 32, AVX512, 7) == 14
    # 3x3 512->512: pixels 2 KiB apart, rows of 9 (padded) 18 KiB: 7 of the 14 in each of two L1 sets, within its 8
    # ways; 1x1 2048->512: 8 KiB apart, all 14 in one set: the row tiles stay
    assert conv.pixel_rows(rows[7], 49, 32, AVX512, 7, 2048, 9 * 2048) == 14
    assert conv.pixel_rows(rows[7], 49, 32, AVX512, 7, 8192, 7 * 8192) == 0
    assert conv.offset_streams([0, 4096, 8192, 18432], AVX512) == 3  # 4 KiB ways: 18432 is 2048 into one
    assert conv.pixel_rows(rows[14], 196, 32, AVX512, 14) == 0
    # a filter that comes from memory in a network (3x3 256->256: 2.4 MB, over half the L2): at OW 14 its 14 row
    # tiles a block tie with tiles of one whole row, which prefetch the next block; at OW 28 (56 a block) they stay
    streamed = 4 * 9 * 256 * 256
    assert conv.pixel_rows(rows[14], 196, 32, AVX512, 14, filter_bytes=streamed) == 14
    assert conv.pixel_rows(conv.plan([1, 28, 28, 32], 1, AVX512), 784, 32, AVX512, 28, filter_bytes=streamed) == 0
    # two images: 28 row tiles a block; AVX2's 6-pixel tiles at OW 6 (tiles that may start anywhere) need the saving
    assert conv.pixel_rows(rows[14], 196, 32, AVX512, 14, filter_bytes=streamed, images=2) == 0
    assert conv.pixel_rows(conv.plan([1, 6, 6, 16], 1, AVX2), 36, 16, AVX2, 6, filter_bytes=streamed) == 0
    assert conv.pixel_rows(rows[3], 9, 32, AVX512, 3) == 9
    assert conv.pixel_rows(rows[7], 49, 32, AVX512) == 0  # rows of unknown width: at most the 6 pixels
    assert conv.pixel_rows(conv.plan([1, 7, 7, 16], 1, AVX2), 49, 16, AVX2, 7) == 5
    # or equal parts of one row: at stride 2 the AVX-512 row tiles stop at 8 columns, 28 = 8 + 8 + 8 + 4, where
    # halves of the row are 14x32 (3x3/2 64->128 into 28x28: 1.43 -> 1.21 ms); at stride 1 the 14x32 row tile is one
    strided = conv.plan([1, 28, 28, 32], 2, AVX512, pixel_bytes=512)
    assert (strided.owr, conv.pixel_rows(strided, 784, 32, AVX512, 28, 512, 58 * 512)) == (8, 14)
    assert conv.pixel_rows(conv.plan([1, 28, 28, 32], 1, AVX512), 784, 32, AVX512, 28, 256, 30 * 256) == 0


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 2100))
def test_channel_pieces_cover_the_channels_in_vector_widths(f: int) -> None:
    pieces = conv.channel_pieces(f, 16)
    assert [start for start, _ in pieces] == list(np.cumsum([0] + [size for _, size in pieces])[:-1])
    assert sum(size for _, size in pieces) == f
    assert all(size % 16 == 0 or size in (8, 4, 2, 1) for _, size in pieces)
    assert len(pieces) <= 5


def test_odd_filter_counts_are_split_into_vector_widths() -> None:
    assert conv.channel_pieces(24, 16) == [(0, 16), (16, 8)]
    assert conv.channel_pieces(1000, 16) == [(0, 992), (992, 8)]
    assert conv.channel_pieces(10, 16) == [(0, 8), (8, 2)]
    assert conv.channel_pieces(64, 16) == [(0, 64)]


CONVS = {  # (N, H, W, C, KH, KW, F, stride)
    "3x3": (1, 16, 16, 32, 3, 3, 64, 1),
    "1x1-wide": (1, 7, 7, 64, 1, 1, 256, 1),  # weight-heavy: filter tiles outermost
    "3x3-weight-heavy-stride-2": (1, 9, 9, 64, 3, 3, 128, 2),
    "16+8-filters": (1, 12, 12, 40, 1, 1, 24, 1),
    "32+8+4+2+1-filters-stride-2": (1, 11, 13, 6, 3, 3, 47, 2),
    "7x7-stride-2": (1, 21, 21, 3, 7, 7, 32, 2),
    "stride-2-prime-width": (2, 15, 15, 16, 1, 1, 16, 2),
    "few-filters": (1, 8, 8, 4, 3, 3, 10, 1),
    "32+8-filters": (1, 8, 8, 4, 3, 3, 40, 1),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", CONVS.values(), ids=CONVS.keys())
def test_conv_matches_numpy(shape: tuple[int, ...], threads: int) -> None:
    n, h, w, c, kh, kw, co, s = shape
    oh, ow = (h - kh) // s + 1, (w - kw) // s + 1
    module = ir.Module.parse(CONV.format(n=n, h=h, w=w, c=c, kh=kh, kw=kw, co=co, s=s, oh=oh, ow=ow), make_context())
    run_pipeline(module.operation, [e for e in cpu.codegen(threads) if getattr(e, "name", None) != "convert-glowir-to-linalg"])
    f32 = np.dtype(np.float32)
    program = JitProgram(module, "conv", [Argument("x", (n, h, w, c), f32, "input"),
                                          Argument("f", (kh, kw, c, co), f32, "input"),
                                          Argument("b", (co,), f32, "input"),
                                          Argument("y", (n, oh, ow, co), f32, "output")], threads=threads)
    x = RNG.standard_normal((n, h, w, c)).astype(np.float32)
    f = RNG.standard_normal((kh, kw, c, co)).astype(np.float32)
    b = RNG.standard_normal(co).astype(np.float32)
    want = np.broadcast_to(b, (n, oh, ow, co)).astype(np.float64)
    for i in range(kh):
        for j in range(kw):
            want = want + np.einsum("nhwc,cf->nhwf", x[:, i:i + s * oh:s, j:j + s * ow:s, :].astype(np.float64), f[i, j])
    np.testing.assert_allclose(program({"x": x, "f": f, "b": b})["y"], want, rtol=RTOL, atol=ATOL * kh * kw * c)


def test_pixel_tiles_read_a_spread_copy_where_the_input_pixels_share_a_set() -> None:
    # 3x3/2 from 512 channels at 14x14 (padded 16x16) into 7x7: pixels 4 KiB apart, all 14 of two rows in one L1 set
    def tiles(f: int, c: int, spec: isa.KernelSpec) -> tuple[int, int]:
        t = conv.plan([1, 7, 7, spec.filter_block], 2, spec, pixel_bytes=8 * c)
        return conv._pixel_tiles(t, [1, 16, 16, c], [1, 7, 7, f // spec.filter_block, spec.filter_block],
                                 [f // spec.filter_block, 3, 3, c, spec.filter_block], [2, 2], spec)

    avx512 = isa.spec_of("skylake-avx512", "x86_64-unknown-linux-gnu")
    assert tiles(512, 512, avx512) == (14, conv.SPREAD_CHANNELS)
    # two blocks: the copy would cost more than the tiles save; tiles of one row read the input as it is (1.2 MB of
    # filter in 7 tiles a block: they tie with the row tiles and prefetch, PREFETCH_TILES)
    assert tiles(64, 512, avx512) == (7, 0)
    assert tiles(512, 128, avx512) == (14, 0)  # 1 KiB apart: 4 of the 14 pixels a set, within the ways as they are
    assert tiles(512, 512, isa.spec_of("haswell", "x86_64-unknown-linux-gnu"))[1] == 0  # 6 pixels at most: no copy


def test_few_filters_take_one_masked_vector_per_pixel() -> None:
    # fewer channels than the lanes that channel_pieces would cut in several: the next power of two
    assert [conv.masked_width(f, AVX512) for f in (3, 5, 6, 10, 12, 15)] == [4, 8, 8, 16, 16, 16]
    assert [conv.masked_width(f, AVX2) for f in (3, 5, 6, 7)] == [4, 8, 8, 8]
    # one piece already (a power of two), or as many as the lanes or more: their pieces are whole vectors but one
    assert [conv.masked_width(f, AVX512) for f in (1, 2, 4, 8, 16, 24, 40)] == [0] * 7
    assert [conv.masked_width(f, AVX2) for f in (8, 10, 12, 27)] == [0] * 4


#: a pointwise convolution as a matmul of its pixels, its Clip, then a depthwise 3x3 with pads: the matmul's output
#: goes into the depthwise's bordered input. N, C, H (= W), F, and whether its islands are one image row each on
#: AVX-512 and on AVX2 (a register tile divides the row: 7 or 8 rows of 32 lanes, 4 of 16; AVX2's 6 does not divide 14)
BORDERED = {
    "28-rows-two-images": (2, 64, 28, 128, True, True),
    "14-rows-two-images": (2, 64, 14, 128, True, False),
    "56-rows": (1, 64, 56, 128, True, True),
}


def _copies_left(model: onnx.ModelProto, threads: int, target_cpu: str) -> bool:
    """Whether a copy whose input dies in it (glow.dead_input) is left after cpu-tile-kernels."""
    from glow_mlir.api import CompileOptions, lower_model

    lowered = lower_model(model, CompileOptions(threads=threads, target_cpu=target_cpu), until="iropt")
    passes = cpu.codegen(threads, target_cpu)
    upto = next(i for i, p in enumerate(passes) if getattr(p, "name", None) == "cpu-tile-kernels")
    with lowered.ctx:
        run_pipeline(lowered.module.operation, passes[:upto + 1])
        return "glow.dead_input" in str(lowered.module)


@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", BORDERED.values(), ids=BORDERED.keys())
def test_pointwise_into_a_bordered_input_matches_the_reference(case: tuple, threads: int, target_cpu: str) -> None:
    from onnx.reference import ReferenceEvaluator

    _skip_unless_host_runs(target_cpu)
    n, c, h, f, on_avx512, on_avx2 = case
    inits = [numpy_helper.from_array((RNG.standard_normal((f, c, 1, 1)) * 0.3).astype(np.float32), "w1"),
             numpy_helper.from_array(RNG.standard_normal(f).astype(np.float32), "b1"),
             numpy_helper.from_array((RNG.standard_normal((f, 1, 3, 3)) * 0.3).astype(np.float32), "w2"),
             numpy_helper.from_array(RNG.standard_normal(f).astype(np.float32), "b2"),
             numpy_helper.from_array(np.array(0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6, np.float32), "hi")]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["p"]), helper.make_node("Clip", ["p", "lo", "hi"], ["q"]),
             helper.make_node("Conv", ["q", "w2", "b2"], ["d"], group=f, pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["d"], ["y"])]
    model = _model(nodes, {"x": [n, c, h, h]}, [n, f, h, h], inits)
    fused = on_avx2 if target_cpu == "haswell" else on_avx512
    if not target_cpu and isa.spec_of().isa != "avx512":
        fused = on_avx2 if isa.spec_of().isa == "avx2" else None
    if fused is not None:
        assert _copies_left(model, threads, target_cpu) is not fused
    compiled = glow_mlir.compile(model, threads=threads, target_cpu=target_cpu, cache=False)
    x = RNG.standard_normal((n, c, h, h)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(compiled(x), want, rtol=RTOL, atol=ATOL * 9 * c)


def _few_filter_model(case: str) -> tuple[onnx.ModelProto, list[int]]:
    """A model whose convolutions have fewer output channels than the vector lanes, and its input shape."""
    def conv(x: str, y: str, c: int, f: int, k: int, stride: int = 1, pad: int = 0) -> list:
        w = numpy_helper.from_array((RNG.standard_normal((f, c, k, k)) * 0.3).astype(np.float32), f"{y}_w")
        b = numpy_helper.from_array(RNG.standard_normal(f).astype(np.float32), f"{y}_b")
        node = helper.make_node("Conv", [x, w.name, b.name], [y], kernel_shape=[k, k], strides=[stride] * 2,
                                pads=[pad] * 4)
        return [node], [w, b]

    def relu(x: str, y: str) -> list:
        return [helper.make_node("Relu", [x], [y])], []

    if case == "lenet-first":  # 5x5 1->6 at 24 columns (tiles of 14 and 10 pixels), two images, ReLU after
        parts, shape, out = [conv("x", "c", 1, 6, 5), relu("c", "y")], [2, 1, 28, 28], [2, 6, 24, 24]
    elif case == "stride-2-three-channels":  # 3x3/2 3->5 with pads: 8 lanes, 3 pixels per row
        parts, shape, out = [conv("x", "y", 3, 5, 3, 2, 1)], [1, 3, 17, 5], [1, 5, 9, 3]
    elif case == "pointwise-three":  # 1x1 2->3: 4 lanes
        parts, shape, out = [conv("x", "y", 2, 3, 1)], [1, 2, 6, 5], [1, 3, 6, 5]
    elif case == "residual":  # 3x3 7->7 with pads, a residual add and a ReLU after (vector loops of their own)
        parts = [conv("x", "c", 7, 7, 3, 1, 1), ([helper.make_node("Add", ["c", "x"], ["s"])], []), relu("s", "y")]
        shape, out = [1, 7, 9, 11], [1, 7, 9, 11]
    else:  # "concat": two convolutions into the channel slices of one buffer (pixels not F apart)
        parts = [conv("x", "a", 4, 6, 3, 1, 1), conv("x", "b", 4, 3, 3, 1, 1),
                 ([helper.make_node("Concat", ["a", "b"], ["c"], axis=1)], []), relu("c", "y")]
        shape, out = [1, 4, 10, 12], [1, 9, 10, 12]
    nodes = [n for ns, _ in parts for n in ns]
    inits = [i for _, inits in parts for i in inits]
    return _model(nodes, {"x": shape}, out, inits), shape


@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", ["lenet-first", "stride-2-three-channels", "pointwise-three", "residual", "concat"])
def test_few_filter_convolutions_match_the_reference(case: str, threads: int, target_cpu: str) -> None:
    from onnx.reference import ReferenceEvaluator

    _skip_unless_host_runs(target_cpu)
    model, shape = _few_filter_model(case)
    compiled = glow_mlir.compile(model, threads=threads, target_cpu=target_cpu, cache=False)
    assert "llvm.intr.masked.store" in compiled.stage("codegen").text  # the masked kernel ran
    x = RNG.standard_normal(shape).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    for _ in range(2):  # the outputs' lanes past a pixel's channels leave nothing behind for the next call
        np.testing.assert_allclose(compiled(x), want, rtol=1e-4, atol=1e-4)


def _grouped_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, group: int, stride: int, pad: int,
                       dilation: int) -> np.ndarray:
    """NCHW grouped convolution in float64, group by group."""
    n, _, h, wd = x.shape
    f, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    out = np.broadcast_to(b.astype(np.float64)[None, :, None, None], (n, f, oh, ow)).copy()
    fg = f // group
    for g in range(group):
        xs, ws = xp[:, g * cg:(g + 1) * cg], w[g * fg:(g + 1) * fg].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilation:i * dilation + stride * oh:stride, j * dilation:j * dilation + stride * ow:stride]
                out[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch, ws[:, :, i, j])
    return out


GROUPED = {  # (N, C, H, W), F, K, group, stride, pad, dilation
    "alexnet-like": ((1, 32, 13, 13), 48, 3, 2, 1, 1, 1),  # 16 -> 24 channels a group: pieces 16 + 8
    "three-groups-strided": ((2, 12, 11, 9), 18, 3, 3, 2, 1, 1),  # 4 -> 6 a group: masked vectors of 8
    "many-groups": ((1, 64, 8, 8), 64, 3, 16, 1, 1, 1),  # ResNeXt-like: 4 -> 4 a group
    "dilated": ((1, 8, 12, 12), 16, 3, 2, 1, 2, 2),
    "pointwise": ((1, 48, 7, 7), 96, 1, 3, 1, 0, 1),
}


@pytest.mark.parametrize("target_cpu", ["", "haswell"], ids=["host", "haswell"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", GROUPED.values(), ids=GROUPED.keys())
def test_grouped_convolutions_run_a_convolution_per_group(case: tuple, threads: int, target_cpu: str) -> None:
    _skip_unless_host_runs(target_cpu)
    shape, f, k, group, stride, pad, dilation = case
    w = (RNG.standard_normal((f, shape[1] // group, k, k)) * 0.3).astype(np.float32)
    b = RNG.standard_normal(f).astype(np.float32)
    x = RNG.standard_normal(shape).astype(np.float32)
    want = np.maximum(_grouped_reference(x, w, b, group, stride, pad, dilation), 0.0)
    node = helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k], group=group, strides=[stride] * 2,
                            pads=[pad] * 4, dilations=[dilation] * 2)
    model = _model([node, helper.make_node("Relu", ["c"], ["y"])], {"x": list(shape)}, list(want.shape),
                   [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    compiled = glow_mlir.compile(model, threads=threads, target_cpu=target_cpu, cache=False)
    assert "conv_2d_nhwc_hwcf" in compiled.stage("codegen").text or dilation > 1  # the kernels, not a generic
    np.testing.assert_allclose(compiled(x), want, rtol=1e-4, atol=1e-4 * k * k)


def test_a_fused_bias_is_not_staged_through_the_stack() -> None:
    # the bias broadcast of a fused conv is an n-D vector transfer; lowered as a whole it went through a stack buffer
    # and two memcpy calls per register tile (8% of mobilenet_v2's time), unrolled it is 1-D vector stores
    n, h, w, c, kh, kw, co, s = 1, 14, 14, 32, 1, 1, 16, 1
    module = ir.Module.parse(CONV.format(n=n, h=h, w=w, c=c, kh=kh, kw=kw, co=co, s=s, oh=h, ow=w), make_context())
    run_pipeline(module.operation, [e for e in cpu.codegen(1, "skylake-avx512") if getattr(e, "name", None) != "convert-glowir-to-linalg"])
    text = str(module)
    assert "vector<16xf32>" in text  # vectorized at all
    assert "llvm.alloca" not in text


DEPTHWISE = """
func.func @dw(%x: memref<1x{h}x{w}x{c}xf32>, %f: memref<3x3x{c}xf32>, %y: memref<1x{oh}x{ow}x{c}xf32>)
    attributes {{llvm.emit_c_interface}} {{
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x{oh}x{ow}x{c}xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {{dilations = dense<1> : tensor<2xi64>, strides = dense<{s}> : tensor<2xi64>}}
    ins(%x, %f : memref<1x{h}x{w}x{c}xf32>, memref<3x3x{c}xf32>) outs(%y : memref<1x{oh}x{ow}x{c}xf32>)
  return
}}
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(18, 18, 32, 1), (17, 17, 48, 2), (9, 9, 24, 1), (13, 11, 136, 2), (9, 16, 7, 1)],
                         ids=["3x3", "stride-2", "16+8", "128+8-stride-2", "4+2+1"])
def test_depthwise_conv_matches_numpy(shape: tuple[int, int, int, int], threads: int) -> None:
    h, w, c, s = shape
    oh, ow = (h - 3) // s + 1, (w - 3) // s + 1
    module = ir.Module.parse(DEPTHWISE.format(h=h, w=w, c=c, s=s, oh=oh, ow=ow), make_context())
    run_pipeline(module.operation, [e for e in cpu.codegen(threads) if getattr(e, "name", None) != "convert-glowir-to-linalg"])
    f32 = np.dtype(np.float32)
    program = JitProgram(module, "dw", [Argument("x", (1, h, w, c), f32, "input"), Argument("f", (3, 3, c), f32, "input"),
                                        Argument("y", (1, oh, ow, c), f32, "output")], threads=threads)
    x = RNG.standard_normal((1, h, w, c)).astype(np.float32)
    f = RNG.standard_normal((3, 3, c)).astype(np.float32)
    want = sum(x[:, i:i + s * oh:s, j:j + s * ow:s, :].astype(np.float64) * f[i, j] for i in range(3) for j in range(3))
    np.testing.assert_allclose(program({"x": x, "f": f})["y"], want, rtol=RTOL, atol=ATOL * 9)


# --------------------------------------------------------------------------- packed filters (cpu-pack-conv-filters)


def test_filters_are_packed_where_a_block_fits_l2() -> None:
    assert conv.filter_block([3, 3, 512, 512], 1, [1, 1], AVX512) == 32
    assert conv.filter_block([1, 1, 256, 1280], 1, [1, 1], AVX512) == 32
    assert conv.filter_block([3, 3, 64, 32], 1, [1, 1], AVX512) == 0  # one block: nothing to gain
    assert conv.filter_block([3, 3, 64, 48], 1, [1, 1], AVX512) == 16  # not whole blocks: blocks of one vector
    assert conv.filter_block([3, 3, 64, 40], 1, [1, 1], AVX512) == 0  # not whole vectors either
    assert conv.filter_block([3, 3, 32, 64], 2, [1, 1], AVX512) == 0  # grouped
    assert conv.filter_block([3, 3, 64, 64], 1, [2, 2], AVX512) == 0  # dilated
    # a block of 32 (1.2 MB) would not stay in L2, one of 16 (0.6 MB) does; at 2048 channels not even that
    assert conv.filter_block([3, 3, 1024, 64], 1, [1, 1], AVX512) == 16
    assert conv.filter_block([3, 3, 2048, 64], 1, [1, 1], AVX512) == 0
    assert conv.filter_block([7, 7, 3, 64], 1, [1, 1], AVX512) == 0  # the stem: few channels, the input outweighs the filter
    assert conv.filter_block([1, 1, 16, 96], 1, [1, 1], AVX512) == 0  # 6 KiB: stays in L1 whole
    assert conv.filter_block([1, 1, 64, 128], 1, [1, 1], AVX512) == 32  # 32 KiB: packed


def test_a_packed_filter_means_the_same_convolution() -> None:
    from glow_mlir.dialects.cnn_numpy import conv2d

    x = RNG.standard_normal((1, 6, 5, 8)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 8, 64)).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    packed = filter_layout.pack_filter(w, 32)
    assert packed.shape == (2, 3, 3, 8, 32) and packed.flags.c_contiguous
    np.testing.assert_array_equal(packed[1, 2, 0, 5], w[2, 0, 5, 32:])
    args = dict(strides=[2, 1], pads=[1, 0, 1, 2], dilations=[1, 1], group=1)
    np.testing.assert_allclose(conv2d(x, packed, b, **args), conv2d(x, w, b, **args), rtol=1e-6)


def test_filters_come_in_chunks_where_the_taps_outnumber_the_l1_ways() -> None:
    haswell, znver3 = isa.spec_of("haswell"), isa.spec_of("znver3")
    assert (haswell.l1, haswell.l1_ways) == (32768, 8)
    # 3x3 blocks of 16 beyond 0.6 of a 32 KiB L1 come in chunks of 32 input channels (18 KiB), blocks of 8 in 64
    assert [filter_layout.filter_chunk(3, 3, c, 16, haswell) for c in (32, 64, 256, 512)] == [0, 32, 32, 32]
    assert filter_layout.filter_chunk(3, 3, 512, 8, znver3) == 64
    assert filter_layout.filter_chunk(3, 3, 96, 8, haswell) == 48  # halved down from 96: 432 steps
    # 1x1: one tap; a 12-way L1 (alderlake, 48 KiB) holds nine taps a set; AVX-512's 32-filter blocks on 32 KiB would
    # take chunks of 16 (144 steps, below MIN_CHUNK_STEPS)
    assert filter_layout.filter_chunk(1, 1, 1024, 16, haswell) == 0
    assert filter_layout.filter_chunk(3, 3, 256, 16, isa.spec_of("alderlake")) == 0
    assert filter_layout.filter_chunk(3, 3, 512, 32, isa.spec_of("skylake-avx512")) == 0
    # only the tiles of pixels take chunks: haswell's row tiles at 28 columns keep whole blocks
    assert conv.packed_chunk([1, 16, 16, 64], [3, 3, 64, 64], 16, [1, 14, 14], [1, 1], haswell) == 32
    assert conv.packed_chunk([1, 30, 30, 64], [3, 3, 64, 64], 16, [1, 28, 28], [1, 1], haswell) == 0


def test_a_filter_in_chunks_means_the_same_convolution() -> None:
    from glow_mlir.dialects.cnn_numpy import conv2d

    x = RNG.standard_normal((1, 6, 5, 64)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 64, 32)).astype(np.float32)
    b = RNG.standard_normal(32).astype(np.float32)
    packed = filter_layout.pack_filter(w, 16, 32)
    assert packed.shape == (2, 2, 3, 3, 32, 16) and packed.flags.c_contiguous
    np.testing.assert_array_equal(packed[1, 1, 2, 0, 5], w[2, 0, 32 + 5, 16:])
    assert filter_layout.PackedFilter.of(list(packed.shape)).blocked() == [2, 3, 3, 64, 16]
    args = dict(strides=[1, 2], pads=[1, 1, 0, 1], dilations=[1, 1], group=1)
    np.testing.assert_allclose(conv2d(x, packed, b, **args), conv2d(x, w, b, **args), rtol=1e-6)


#: haswell code (an 8-way L1): convolutions whose tiles of pixels read filters in chunks of input channels
CHUNKED = {  # images, then ONNX Conv: C, H, W, F, K, stride, pads (t, l, b, r)
    "3x3-at-14": (1, 64, 14, 14, 64, 3, 1, (1, 1, 1, 1)),  # 2 chunks of 32; on sixteen threads each tile a task
    "stride-2-into-14": (1, 128, 28, 28, 256, 3, 2, (1, 1, 1, 1)),  # 4 chunks
    # blocks of one vector (8) in 8 chunks of 64, tiles of two whole rows; on sixteen threads each thread's share
    # is too small for them (WHOLE_ROW_THREAD_FLOPS): row tiles, an island per chunk
    "whole-rows-at-7": (1, 512, 7, 7, 64, 3, 1, (1, 1, 1, 1)),
    "uneven-pads-two-images": (2, 96, 13, 11, 200, 3, 1, (0, 1, 2, 1)),  # 25 blocks of 8, 2 chunks of 48
}


@pytest.mark.parametrize("threads", [1, 2, 16])
@pytest.mark.parametrize("shape", CHUNKED.values(), ids=CHUNKED.keys())
def test_convs_on_filters_in_chunks_match_the_reference(shape: tuple, threads: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from onnx.reference import ReferenceEvaluator

    # the pipeline's threshold, under which a thread's share of whole-row tiles turns back into row tiles
    monkeypatch.setattr(cpu, "PARALLEL_FLOPS", 1_000_000)
    images, c, h, w, f, k, s, pads = shape
    weights = RNG.standard_normal((f, c, k, k)).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    oh, ow = (h + pads[0] + pads[2] - k) // s + 1, (w + pads[1] + pads[3] - k) // s + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["conv"], kernel_shape=[k, k], strides=[s, s], pads=list(pads))
    model = _model([node, helper.make_node("Relu", ["conv"], ["y"])], {"x": [images, c, h, w]}, [images, f, oh, ow],
                   [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")])
    compiled = glow_mlir.compile(model, threads=threads, cache=False, target_cpu="haswell")
    spec = isa.spec_of("haswell")
    b = conv.filter_block([k, k, c, f], 1, [1, 1], spec, [images, oh, ow, f], s, 4 * c * s)
    chunk = conv.packed_chunk([images, h + pads[0] + pads[2], w + pads[1] + pads[3], c], [k, k, c, f], b,
                              [images, oh, ow], [s, s], spec)
    assert chunk and f"memref<{f // b}x{c // chunk}x{k}x{k}x{chunk}x{b}xf32>" in compiled.stage("irgen").text
    x = RNG.standard_normal((images, c, h, w)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(compiled(x), want, rtol=RTOL, atol=ATOL * k * k * c)


#: convolutions whose register tiles of whole output rows read input pixels that share an L1 set, so that
#: cpu-spread-conv-inputs gives them a bordered input one cache line longer a pixel: the target, then ONNX Conv: C, H,
#: W, F, K, stride, pads (t, l, b, r), then the threads from which a thread's share is too small for tiles of whole
#: rows (WHOLE_ROW_THREAD_FLOPS), whose row tiles read the input as it is (0: none)
SPREAD = {
    # AVX2 on 8 ways: blocks of one vector in chunks of 64 channels, 14 pixels 4 KiB apart (115 MFLOP)
    "haswell-3x3-stride-2": ("haswell", 512, 14, 14, 256, 3, 2, (1, 1, 1, 1), 0),
    # AVX-512 on 8 ways: pixels 2 KiB apart crowd the sets already
    "skylake-3x3-stride-2-from-256": ("skylake-avx512", 256, 14, 14, 512, 3, 2, (1, 1, 1, 1), 0),
    # no border: the scratch buffer is the spread copy alone (a pointwise convolution that is no matmul then); 26
    # MFLOP, under 4 a thread on sixteen
    "znver4-1x1-unpadded": ("znver4", 1024, 7, 7, 256, 1, 1, (0, 0, 0, 0), 16),
}


@pytest.mark.parametrize("threads", [1, 2, 16])
@pytest.mark.parametrize("shape", SPREAD.values(), ids=SPREAD.keys())
def test_spread_inputs_are_planned_scratch_not_heap(shape: tuple, threads: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel copied such an input into a memref.alloc of its own after the memory plan: malloc and free at run
    # time, in bundles too (which must need only libc's memcpy/memset and libm). The input comes from a pointwise
    # convolution of 16 channels (no spread of its own), whose kernel may write the spread buffer's interior itself
    # (linalg-outline-kernels).
    from onnx.reference import ReferenceEvaluator

    from glow_mlir.api import CompileOptions, lower_model
    from glow_mlir.backend import target as targets

    monkeypatch.setattr(cpu, "PARALLEL_FLOPS", 1_000_000)
    target_cpu, c, h, w, f, k, s, pads, row_tiles = shape
    arrays = {"p": RNG.standard_normal((c, 16, 1, 1)) / 4, "q": RNG.standard_normal(c),
              "w": RNG.standard_normal((f, c, k, k)), "b": RNG.standard_normal(f)}
    oh, ow = (h + pads[0] + pads[2] - k) // s + 1, (w + pads[1] + pads[3] - k) // s + 1
    nodes = [helper.make_node("Conv", ["x", "p", "q"], ["first"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["first"], ["input"]),
             helper.make_node("Conv", ["input", "w", "b"], ["conv"], kernel_shape=[k, k], strides=[s, s],
                              pads=list(pads)),
             helper.make_node("Relu", ["conv"], ["y"])]
    model = _model(nodes, {"x": [1, 16, h, w]}, [1, f, oh, ow],
                   [numpy_helper.from_array(v.astype(np.float32), name) for name, v in arrays.items()])
    runs = not targets.cannot_run(targets.named(target_cpu))
    if runs:
        compiled = glow_mlir.compile(model, threads=threads, cache=False, target_cpu=target_cpu)
        texts = {name: compiled.stage(name).text for name in ("iropt", "codegen")}
    else:  # AVX-512 code on an AVX2 host: what it would run, not run
        lowered = lower_model(model, CompileOptions(threads=threads, target_cpu=target_cpu))
        texts = {stage.name: stage.text for stage in lowered.stages}
    assert ("glow.spread_channels = 16" in texts["iropt"]) == (not row_tiles or threads < row_tiles)
    # the kernel reads the planned buffer as it is: it copies nothing into a buffer of its own
    assert "@malloc" not in texts["codegen"] and "@aligned_alloc" not in texts["codegen"]
    if runs:
        x = RNG.standard_normal((1, 16, h, w)).astype(np.float32)
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        np.testing.assert_allclose(compiled(x), want, rtol=RTOL, atol=ATOL * k * k * c)


PACKED = {  # ONNX Conv: C, H, W, F, K, stride, pads (t, l, b, r)
    "3x3": (16, 9, 9, 64, 3, 1, (1, 1, 1, 1)),
    "3x3-stride-2-odd": (16, 15, 13, 96, 3, 2, (1, 1, 1, 1)),
    "1x1-stride-2": (64, 14, 14, 128, 1, 2, (0, 0, 0, 0)),  # 32 KiB of filter: the smallest packed
    "7x7-stride-2-uneven-pads": (16, 20, 17, 64, 7, 2, (3, 2, 1, 3)),
    "5-wide-rows": (32, 5, 5, 128, 3, 1, (1, 1, 1, 1)),
    # AVX-512: tiles of whole output rows, 14 pixels at 7x7 (3 x 14 + 7), 9 at 3x3
    "two-rows-of-seven": (64, 7, 7, 64, 3, 1, (1, 1, 1, 1)),
    "three-rows-of-three": (64, 3, 3, 64, 3, 1, (1, 1, 1, 1)),
    # above cpu.PARALLEL_FLOPS: with 2 threads the blocks are the tasks, a run of 2 blocks per thread (4 blocks) or
    # one task per block (3 blocks)
    "blocks-per-thread": (64, 28, 28, 128, 3, 1, (1, 1, 1, 1)),
    "a-task-per-block": (64, 28, 28, 96, 3, 1, (1, 1, 1, 1)),
    # pointwise on 32 channels or more: a matmul of the pixels (784 of them: 98 tiles of 8 rows), and at 7x7 where
    # 2048 channels put a tile's pixels 8 KiB apart (no whole-row tiles: a copy spreading them does not pay for 64)
    "pointwise-as-matmul": (256, 28, 28, 64, 1, 1, (0, 0, 0, 0)),
    "pointwise-64-channels-as-matmul": (64, 28, 28, 256, 1, 1, (0, 0, 0, 0)),
    "pointwise-2048-at-7": (2048, 7, 7, 64, 1, 1, (0, 0, 0, 0)),
    # AVX-512: with 512 filters, tiles of two whole rows over a copy of 2064 channels a pixel (resnet50's last stage)
    "pointwise-2048-at-7-spread": (2048, 7, 7, 512, 1, 1, (0, 0, 0, 0)),
    # AVX-512 at stride 2 into 28 columns: tiles of half a row (14 pixels)
    "half-rows-stride-2": (32, 56, 56, 64, 3, 2, (1, 1, 1, 1)),
    # 196 pixels: 192 rows in 3 L1 tiles of 64 and a strip of 4; on two threads tiles of 48 rows (balance.py)
    "pointwise-at-14": (384, 14, 14, 64, 1, 1, (0, 0, 0, 0)),
    # AVX-512: input pixels 4 KiB apart at stride 2; the tiles of two rows read a copy of 528 channels a pixel
    "spread-input-stride-2": (512, 14, 14, 256, 3, 2, (1, 1, 1, 1)),
    # AVX-512: a 2.4 MB filter over 14 rows of 14: tiles of one whole row, prefetching the next block (PREFETCH_TILES)
    "fourteen-rows-streamed-filter": (256, 14, 14, 256, 3, 1, (1, 1, 1, 1)),
    # 208 filters: 13 blocks of one vector on AVX-512 (AVX2: 13 of 16), tiles of two rows of 13 pixels
    "one-vector-blocks": (96, 13, 13, 208, 3, 1, (1, 1, 1, 1)),
    # 144 filters at 14x14: on AVX-512 a matmul of the pixels on 9 panels of one vector
    "pointwise-one-vector-panels": (512, 14, 14, 144, 1, 1, (0, 0, 0, 0)),
}


#: packed convolutions whose tasks depend on the thread count: on 16 threads, 40 blocks (7 rows: the blocks are the
#: tasks though they do not divide) and 5 blocks (the 7 rows are the tasks of each block)
SIXTEEN_THREADS = {
    "forty-blocks-seven-rows": (320, 7, 7, 1280, 1, 1, (0, 0, 0, 0)),
    "five-blocks-seven-rows": (960, 7, 7, 160, 1, 1, (0, 0, 0, 0)),
    # a matmul of 196 pixels: 8 x 2 tasks of 24 rows x 32 (AVX-512) where its tiles for one core made 3
    "pointwise-at-14-balanced-tiles": (384, 14, 14, 64, 1, 1, (0, 0, 0, 0)),
    # AVX-512: 9 blocks in tiles of two rows, over 4 MFLOP a thread (WHOLE_ROW_THREAD_FLOPS): each tile of each
    # block a task (36: 3/4 busy, the blocks 9/16), the short last one in a branch
    "tiles-as-tasks": (512, 7, 7, 288, 3, 1, (1, 1, 1, 1)),
    "tiles-as-tasks-stride-2": (384, 14, 14, 288, 3, 2, (1, 1, 1, 1)),
    "half-rows-as-tasks": (64, 56, 56, 96, 3, 2, (1, 1, 1, 1)),  # 3 blocks of 56 tiles
    "spread-input-tiles-as-tasks": (512, 14, 14, 256, 3, 2, (1, 1, 1, 1)),  # 8 blocks of 4 tiles on the copy
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", PACKED.values(), ids=PACKED.keys())
def test_convs_on_packed_filters_match_the_reference(shape: tuple, threads: int) -> None:
    from onnx.reference import ReferenceEvaluator

    c, h, w, f, k, s, pads = shape
    weights = RNG.standard_normal((f, c, k, k)).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    oh, ow = (h + pads[0] + pads[2] - k) // s + 1, (w + pads[1] + pads[3] - k) // s + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["conv"], kernel_shape=[k, k], strides=[s, s], pads=list(pads))
    model = _model([node, helper.make_node("Relu", ["conv"], ["y"])], {"x": [1, c, h, w]}, [1, f, oh, ow],
                   [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")])
    compiled = glow_mlir.compile(model, threads=threads, cache=False)
    # the filter reached the IR packed in the host's blocks: [F/B, K, K, C, B] (AVX-512 32, AVX2 16, or the width
    # of a one-vector register tile), on an 8-way L1 maybe in chunks of input channels
    spec = isa.spec_of()
    b = conv.filter_block([k, k, c, f], 1, [1, 1], spec, [1, oh, ow, f], s, 4 * c * s)
    assert b in (8, 16, 32)
    chunk = conv.packed_chunk([1, h + pads[0] + pads[2], w + pads[1] + pads[3], c], [k, k, c, f], b, [1, oh, ow],
                              [s, s], spec)
    packed = f"{f // b}x{c // chunk}x{k}x{k}x{chunk}x{b}" if chunk else f"{f // b}x{k}x{k}x{c}x{b}"
    assert f"memref<{packed}xf32>" in compiled.stage("irgen").text
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(compiled(x), want, rtol=RTOL, atol=ATOL * k * k * c)


#: 1x1 convolutions on filters that stay HWCF: (N, C, H, F, activation); squeezenet's classifier becomes a
#: fully_connected on AVX-512 (1000 filters are no whole vectors of 16; on AVX2 125 vectors of 8: a packed
#: convolution), 300 filters on AVX-512 too (on AVX2 padded to 304, whole blocks of 16: a packed convolution), two
#: images and a clip fused
POINTWISE_AS_FULLY_CONNECTED = {
    "classifier-relu": (1, 512, 13, 1000, "Relu"),
    "two-images-clip": (2, 256, 13, 300, "Clip"),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", POINTWISE_AS_FULLY_CONNECTED.values(), ids=POINTWISE_AS_FULLY_CONNECTED.keys())
def test_a_pointwise_convolution_on_unpacked_filters_runs_as_a_fully_connected_layer(case: tuple, threads: int) -> None:
    from onnx.reference import ReferenceEvaluator

    n, c, h, f, activation = case
    weights = (RNG.standard_normal((f, c, 1, 1)) * 0.05).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    inits = [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")]
    if activation == "Clip":
        inits += [numpy_helper.from_array(np.float32(0.0), "lo"), numpy_helper.from_array(np.float32(0.5), "hi")]
    node = helper.make_node("Conv", ["x", "w", "b"], ["conv"], kernel_shape=[1, 1])
    act = helper.make_node(activation, ["conv"] + (["lo", "hi"] if activation == "Clip" else []), ["y"])
    model = _model([node, act], {"x": [n, c, h, h]}, [n, f, h, h], inits)
    compiled = glow_mlir.compile(model, threads=threads, cache=False)
    spec = isa.spec_of()
    f = filter_layout.padded_channels(f, 1, spec, c)  # padded to whole filter blocks first, where that is little
    as_fc = conv.pointwise_as_fully_connected([1, 1, c, f], [1, 1], [0, 0, 0, 0], [1, 1], 1, n * h * h, spec)
    assert as_fc == (f % spec.lanes != 0)
    irgen = compiled.stage("irgen").text
    assert ("glowir.fully_connected" in irgen) == as_fc
    if as_fc:  # the activation moved with it
        assert f'activation = "{activation.lower()}"' in irgen
    x = RNG.standard_normal((n, c, h, h)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(compiled(x), want, rtol=RTOL, atol=ATOL * c)


@pytest.mark.parametrize("shape", SIXTEEN_THREADS.values(), ids=SIXTEEN_THREADS.keys())
def test_convs_on_packed_filters_on_sixteen_threads(shape: tuple) -> None:
    test_convs_on_packed_filters_match_the_reference(shape, 16)


# a 1x1 convolution, ReLU6, then a 3x3 depthwise one (its bordered input): (channels, filters, image side, row islands
# on sixteen threads: conv._row_islands_fit, None where the convolution is no matmul of its pixels on AVX-512). Row
# islands write the bordered input directly; the others copy into it in a pass of its own, in tasks of image rows
# at 14 (vectorize.split); at 7 columns AVX-512 takes tiles of whole rows
POINTWISE_INTO_DEPTHWISE = {
    "rows-as-tasks-at-14": (96, 576, 14, True),
    "copy-as-tasks-at-14": (320, 128, 14, False),
    "whole-row-tiles-at-7": (160, 960, 7, None),
}


@pytest.mark.parametrize("shape", POINTWISE_INTO_DEPTHWISE.values(), ids=POINTWISE_INTO_DEPTHWISE.keys())
def test_pointwise_into_depthwise_on_sixteen_threads(shape: tuple) -> None:
    from onnx.reference import ReferenceEvaluator

    c, f, side, rows = shape
    spec = isa.spec_of("skylake-avx512")
    if rows is not None:
        assert conv._row_islands_fit(side, side, c, f, spec, 16) is rows
        assert conv._row_islands_fit(side, side, c, f, spec, 2)  # two threads: the rows
    inits = [numpy_helper.from_array(RNG.standard_normal((f, c, 1, 1)).astype(np.float32) * 0.2, "w1"),
             numpy_helper.from_array(RNG.standard_normal(f).astype(np.float32), "b1"),
             numpy_helper.from_array(RNG.standard_normal((f, 1, 3, 3)).astype(np.float32), "w2"),
             numpy_helper.from_array(RNG.standard_normal(f).astype(np.float32), "b2"),
             numpy_helper.from_array(np.array(0, np.float32), "lo"), numpy_helper.from_array(np.array(6, np.float32), "hi")]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"]), helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["y"], group=f, pads=[1, 1, 1, 1])]
    model = _model(nodes, {"x": [1, c, side, side]}, [1, f, side, side], inits)
    x = RNG.standard_normal((1, c, side, side)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    for cpu_name in ("", "haswell"):
        compiled = glow_mlir.compile(model, threads=16, cache=False, target_cpu=cpu_name or None)
        np.testing.assert_allclose(compiled(x), want, rtol=RTOL, atol=ATOL * 9 * 6 * c)


def test_the_kernel_benchmark_runs_packed_and_odd_shapes() -> None:
    from glow_mlir import bench_kernels

    for shape in (bench_kernels.ConvShape(64, 7, 7, 96, 3, 3, 1, 1, (1, 1, 1, 1)),   # packed: 96 / block blocks
                  bench_kernels.ConvShape(40, 9, 9, 24, 1, 1, 1, 1, (0, 0, 0, 0)),   # 16 + 8 filters
                  bench_kernels.ConvShape(24, 9, 9, 24, 3, 3, 24, 2, (1, 1, 1, 1))):  # depthwise 16 + 8, stride 2
        row = bench_kernels.bench_shape(shape, 1, 1, 0.001, None)
        assert row.max_error < 1e-5, row
    block = conv.filter_block([3, 3, 64, 96], 1, [1, 1], isa.spec_of(), [1, 7, 7, 96], 1, 4 * 64)
    assert f"x{96 // block} blocks" in bench_kernels.bench_shape(
        bench_kernels.ConvShape(64, 7, 7, 96, 3, 3, 1, 1, (1, 1, 1, 1)), 1, 1, 0.001, None).key


# --------------------------------------------------------------------------- machine code


def test_the_jit_object_uses_fma_instructions(tmp_path) -> None:
    from glow_mlir.backend import target as targets

    host = targets.host()  # the CPU the JIT compiles for (GLOW_MLIR_HOST_CPU's where it names one)
    if not host.fma or host.isa not in ("avx512", "avx2"):
        pytest.skip(f"the host ({host.cpu}) has no x86 FMA instructions")
    ctx = make_context()
    module = ir.Module.parse(BATCH.format(b=1, m=16, n=64, k=32), ctx)
    run_pipeline(module.operation, [e for e in cpu.codegen(1) if getattr(e, "name", None) != "convert-glowir-to-linalg"])
    program = JitProgram(module, "bmm", [])
    obj = tmp_path / "bmm.o"
    obj.write_bytes(b"".join(program.object_code()[:1]))
    disassembly = subprocess.run([tools_paths.llvm_tool("llvm-objdump"), "-d", str(obj)], capture_output=True,
                                 text=True, check=True).stdout
    assert "vfmadd" in disassembly
    if host.isa == "avx512":
        assert "zmm" in disassembly  # AVX-512 registers: the JIT compiles for the host CPU
    else:
        assert "ymm" in disassembly and "zmm" not in disassembly


def test_parse_pipeline_round_trips_the_threaded_codegen() -> None:
    text = ",".join(spec for spec, _ in cpu.codegen_entries(4))
    assert f"cpu-tile-kernels{{threads=4 parallel-flops={cpu.PARALLEL_FLOPS}}}" in text
    assert (f"cpu-parallel-to-pool{{threads=4 flops-per-thread={cpu.PARALLEL_FLOPS // 2} "
            f"bytes-per-thread={cpu.PARALLEL_BYTES // 2}}}") in text
    assert len(parse_pipeline(text)) == len(cpu.codegen(4))
    with pytest.raises(ValueError, match="threads must be at least 1"):
        cpu.codegen_entries(0)


#: elementwise ops on NCHW with short rows, run on [E / c, c] views (kernels/flatten.py): op, shape, row c on AVX-512
SHORT_ROWS = {
    "clip-14x14": ("Clip", [1, 8, 14, 14], 224),  # 1568 elements: 7 rows of 14 vectors
    "add-7x7": ("Add", [1, 16, 7, 7], 112),  # 784: no row of 4 vectors divides it, 7 rows of 7 vectors
    "sigmoid-5x5": ("Sigmoid", [1, 3, 5, 5], 0),  # 75: no row of whole vectors divides it, kept
}


@pytest.mark.parametrize("target_cpu", ["", "haswell"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", SHORT_ROWS)
def test_elementwise_ops_on_short_rows_run_as_rows_of_vectors(name: str, threads: int, target_cpu: str) -> None:
    from onnx.reference import ReferenceEvaluator

    from glow_mlir.backend.kernels import flatten

    _skip_unless_host_runs(target_cpu)
    op, shape, row = SHORT_ROWS[name]
    ins = ["x", "z"] if op == "Add" else ["x", "lo", "hi"] if op == "Clip" else ["x"]
    inits = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("lo", -0.5), ("hi", 0.7))]
    model = _model([helper.make_node(op, ins, ["y"])], {k: shape for k in ins if k in ("x", "z")}, shape,
                   inits if op == "Clip" else [])
    ctx = make_context()
    module = ir.Module.parse(
        "func.func @f(%x: memref<{0}xf32>, %y: memref<{0}xf32>) {{\n"
        "  linalg.generic {{indexing_maps = [{1}, {1}], iterator_types = [{2}]}} ins(%x : memref<{0}xf32>)"
        " outs(%y : memref<{0}xf32>) {{\n  ^bb0(%a: f32, %o: f32):\n    %r = arith.negf %a : f32\n"
        "    linalg.yield %r : f32\n  }}\n  return\n}}".format(
            "x".join(map(str, shape)), "affine_map<(a, b, c, d) -> (a, b, c, d)>", ", ".join(['"parallel"'] * 4)),
        ctx)
    generic = module.body.operations[0].regions[0].blocks[0].operations[0].operation
    assert flatten.row_length(generic, 16, 4) == row  # AVX-512's lanes, four vectors at a time
    compiled = glow_mlir.compile(model, threads=threads, cache=False, target_cpu=target_cpu or None)
    feeds = {k: (RNG.standard_normal(shape) * 2).astype(np.float32) for k in ins if k in ("x", "z")}
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_allclose(compiled(*feeds.values()), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("extents", "reduced", "expected"), [
    ([1, 112, 112, 32], [False] * 4, (1, 56)),  # the batch of 1 skipped: rows in halves
    ([7, 128], [False, False], (0, 1)),  # 7 rows: one task each
    ([1, 1, 1000], [False, False, False], (-1, 0)),  # only the vectors' dim is wider than 1: no tasks
    ([128, 64], [True, False], (-1, 0)),  # a reduced outer dim is not split
    ([64, 8, 100], [False, False, True], (0, 32)),  # softmax rows
])
def test_vectorized_loops_split_into_tasks(extents: list[int], reduced: list[bool], expected: tuple[int, int]) -> None:
    from glow_mlir.backend.kernels.vectorize import split

    assert split(extents, reduced, threads=2) == expected
