"""The target description drives code generation: named CPUs, the kernels' spec per ISA, AVX2 code run on the host
(any x86 machine with AVX2 and FMA runs ``haswell`` code), and clear errors for targets that cannot run here."""

from __future__ import annotations

import dataclasses
import os
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir
from glow_mlir.backend import target as targets
from glow_mlir.backend import tools_paths
from glow_mlir.errors import CompileError

RNG = np.random.default_rng(5)


def _host_runs_avx2() -> bool:
    try:
        host = targets.host()
    except CompileError:
        return False
    return host.isa in ("avx2", "avx512") and host.fma


needs_avx2 = pytest.mark.skipif(not _host_runs_avx2(), reason="this host cannot run AVX2 code (not x86 with AVX2+FMA)")


def test_named_cpus_are_described_by_llvm() -> None:
    haswell = targets.named("haswell", "x86_64-unknown-linux-gnu")
    assert (haswell.isa, haswell.lanes, haswell.vector_registers, haswell.fma) == ("avx2", 8, 16, True)
    assert targets.named("znver4", "x86_64-unknown-linux-gnu").isa == "avx512"
    n1 = targets.named("neoverse-n1", "aarch64-linux-gnu")
    assert (n1.isa, n1.lanes, n1.vector_registers) == ("neon", 4, 32)
    assert "avx2" in haswell.describe() and "16 x 256-bit" in haswell.describe()


@pytest.mark.parametrize("cpu, triple, lanes", [
    ("haswell", "x86_64-unknown-linux-gnu", 16),  # two 8-lane FMA pipes
    ("skylake-avx512", "x86_64-unknown-linux-gnu", 32),  # two 16-lane pipes
    ("znver4", "x86_64-unknown-linux-gnu", 16),  # 16-lane vectors on two 8-lane pipes
    ("tigerlake", "x86_64-unknown-linux-gnu", 16),  # one 512-bit FMA port
    ("neoverse-n1", "aarch64-linux-gnu", 8),
])
def test_the_fma_lanes_per_cycle_behind_the_peak_follow_the_cpu(cpu: str, triple: str, lanes: int) -> None:
    assert targets.named(cpu, triple).fma_lanes == lanes


def test_an_unknown_cpu_says_where_the_names_come_from() -> None:
    with pytest.raises(CompileError, match=r"unknown target CPU 'pentium9'.*llc -mtriple=.* -mcpu=help"):
        targets.named("pentium9", "x86_64-unknown-linux-gnu")
    with pytest.raises(CompileError, match="unknown target CPU 'pentium9'"):
        glow_mlir.compile(_conv_model((1, 8, 8, 8), 3, 1), target_cpu="pentium9", cache=False)


@pytest.mark.parametrize("triple", ["thumbv7emeb-none-eabihf", "armv7a-linux-gnueabihf", "aarch64_be-linux-gnu",
                                    "riscv64-linux-gnu"])
def test_unsupported_triples_are_refused_with_the_supported_ones_named(triple: str) -> None:
    with pytest.raises(CompileError, match=f"target triple '{triple}' is not supported: .*aarch64, thumbv7em"):
        targets.named("generic", triple)


@pytest.mark.parametrize(("cpu", "triple"), [("cortex-m4", "thumbv7em-none-eabihf"),
                                             ("cortex-m33", "thumbv8m.main-none-eabihf")])
def test_cortex_m_targets_are_bare_metal_with_the_scalar_tiles(cpu: str, triple: str) -> None:
    target = targets.named(cpu, triple)
    assert targets.bare_metal(target.triple) and not targets.bare_metal("aarch64-linux-gnu")
    assert target.isa == "scalar" and target.fma
    assert targets.cannot_run(target).startswith("this machine is")  # firmware: no JIT here


def test_code_for_another_architecture_is_refused_for_the_jit() -> None:
    if targets.host().triple.startswith("aarch64"):
        pytest.skip("the host is aarch64")
    with pytest.raises(CompileError, match="cannot compile for neoverse-n1 .* to run here.*bundle"):
        glow_mlir.compile(_conv_model((1, 8, 8, 8), 3, 1), target_cpu="neoverse-n1",
                          target_triple="aarch64-linux-gnu", cache=False)


def test_code_using_int8_dot_products_the_host_lacks_is_refused_for_the_jit(monkeypatch: pytest.MonkeyPatch) -> None:
    """alderlake's AVX-VNNI on a host of the same vector width without it (a Zen 3): refused, not run into an illegal
    instruction; haswell code (no int8 dot products) still runs there."""
    here = targets.host()
    if not here.triple.startswith("x86_64") or here.vector_bits < 256 or not here.fma:
        pytest.skip("needs an x86-64 host with AVX2 and FMA")
    zen3 = dataclasses.replace(here, cpu="znver3", vector_bits=256, vector_registers=16, int8_dot=())
    monkeypatch.setattr(targets, "host", lambda: zen3)
    assert targets.cannot_run(targets.named("alderlake", here.triple)) == (
        "this machine's CPU (znver3) has no avxvnni, which code for alderlake uses")
    assert targets.cannot_run(targets.named("haswell", here.triple)) == ""
    monkeypatch.setattr(targets, "host", lambda: dataclasses.replace(zen3, cpu="alderlake", int8_dot=("avxvnni",)))
    assert targets.cannot_run(targets.named("alderlake", here.triple)) == ""


@needs_avx2
def test_a_named_cpu_stands_in_for_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """GLOW_MLIR_HOST_CPU: the host as another CPU this machine runs (the suite as an AVX2 machine sees it, on an
    AVX-512 one): that CPU's name, features, lanes and caches for the JIT, the kernels and the compile cache; a name
    LLVM does not know, or a CPU whose code this machine cannot run, is an error that names the variable."""
    real, given = targets.host(), os.environ.get(targets.HOST_CPU_ENV)  # the suite may run with a stand-in itself
    try:
        # the machine itself, not a stand-in the suite runs with (which may be haswell)
        monkeypatch.delenv(targets.HOST_CPU_ENV, raising=False)
        targets.host.cache_clear()
        machine = targets.host()
        monkeypatch.setenv(targets.HOST_CPU_ENV, "haswell")
        targets.host.cache_clear()
        host = targets.host()
        assert (host.cpu, host.features, host.isa, host.vector_registers, host.host) == ("haswell", "", "avx2", 16, True)
        assert (host.caches["l1d"], host.l1_ways, host.caches["l2"]) == (32 << 10, 8, 256 << 10)
        assert targets.named("native") == host and host.key() != machine.key()
        model = _conv_model((1, 64, 7, 7), 128, 3)  # AVX2's tiles of pixels, 5 x 16 over 49
        compiled = glow_mlir.compile(model, threads=1, cache=False)
        # AVX2's blocks of 16 filters, in chunks of 32 input channels on haswell's 8-way L1 (not on a 12-way host's)
        assert "tensor<8x2x3x3x32x16xf32>" in compiled.stage("lower").text
        x = RNG.standard_normal((1, 64, 7, 7)).astype(np.float32)
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        np.testing.assert_allclose(compiled(x), want, rtol=1e-4, atol=1e-4 * 9 * 64)
        monkeypatch.setenv(targets.HOST_CPU_ENV, "pentium9000")
        targets.host.cache_clear()
        with pytest.raises(CompileError, match="GLOW_MLIR_HOST_CPU=pentium9000: not a CPU LLVM knows"):
            targets.host()
        if real.isa == "avx2" and not given:
            monkeypatch.setenv(targets.HOST_CPU_ENV, "skylake-avx512")
            targets.host.cache_clear()
            with pytest.raises(CompileError, match="cannot run its code .it has 256-bit vectors"):
                targets.host()
    finally:
        monkeypatch.undo()
        targets.host.cache_clear()
    assert targets.host() == real


def _conv_model(shape: tuple[int, int, int, int], f: int, k: int, stride: int = 1, group: int = 1) -> onnx.ModelProto:
    n, c, h, w = shape
    weights = (RNG.standard_normal((f, c // group, k, k)) * 0.2).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    pad = k // 2
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["conv"], kernel_shape=[k, k], strides=[stride] * 2,
                            pads=[pad] * 4, group=group)
    graph = helper.make_graph([node, helper.make_node("Relu", ["conv"], ["y"])], "conv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, f, oh, ow])],
                              [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


AVX2_CONVS = {  # (N, C, H, W), F, K, stride, group
    # rows in register tiles that need not divide them, the last tile peeled off narrower (bias and ReLU fused)
    "3x3-56": ((1, 32, 56, 56), 64, 3, 1, 1),  # 6x16 tiles, the last 2 columns
    # short rows on 16-wide filter blocks: tiles of pixels across output rows (5 x 16 over 49, 6 x 16 over 196)
    "3x3-7-packed": ((1, 64, 7, 7), 128, 3, 1, 1),
    "3x3-14-stride-2": ((1, 32, 28, 28), 64, 3, 2, 1),
    "3x3-7-two-images": ((2, 64, 7, 7), 128, 3, 1, 1),
    "1x1-stride-2-into-7": ((1, 64, 14, 14), 128, 1, 2, 1),
    "3x3-13": ((1, 16, 13, 13), 32, 3, 1, 1),  # 5x16, 5x16 and 3x16
    "odd-filters": ((1, 12, 9, 11), 27, 3, 1, 1),  # 16 + 8 + 2 + 1 channel pieces
    "depthwise-56": ((1, 48, 28, 28), 48, 3, 1, 48),
    "depthwise-7-stride-2": ((1, 40, 14, 14), 40, 3, 2, 40),
    # pointwise on 256 channels at 14 and 7 columns: a matmul of the pixels (4x16 / 6x16 tiles) on 16-wide panels
    "1x1-14-as-matmul": ((1, 256, 14, 14), 64, 1, 1, 1),
    "1x1-7-as-matmul": ((1, 256, 7, 7), 48, 1, 1, 1),
    # on 64 channels at 28 columns too (784 pixels: 6x16 tiles and a strip of 4 rows)
    "1x1-28-64-channels-as-matmul": ((1, 64, 28, 28), 256, 1, 1, 1),
    # filters that are whole vectors but no whole blocks (200 = 25 x 8): packed in blocks of one vector
    "one-vector-blocks": ((1, 512, 13, 13), 200, 1, 1, 1),
    # 3x3 on 512 channels: blocks of 16 (288 KiB) exceed haswell's 256 KiB L2, narrowed to blocks of 8
    "3x3-512-narrowed-blocks": ((1, 512, 7, 7), 64, 3, 1, 1),
}


def test_a_cpu_that_cannot_run_the_triple_is_a_compile_error() -> None:
    with pytest.raises(CompileError, match="target CPU 'i686' cannot run x86_64-unknown-linux-gnu code: 64-bit"):
        targets.named("i686", "x86_64-unknown-linux-gnu")


def test_a_named_cpu_has_its_own_caches() -> None:
    haswell, zen3, spr = (targets.named(cpu, "x86_64-unknown-linux-gnu") for cpu in
                          ("haswell", "znver3", "sapphirerapids"))
    assert (haswell.caches["l1d"], haswell.l1_ways, haswell.caches["l2"]) == (32 << 10, 8, 256 << 10)
    assert (zen3.caches["l1d"], zen3.l1_ways, zen3.caches["l2"]) == (32 << 10, 8, 512 << 10)
    assert (spr.caches["l1d"], spr.l1_ways, spr.caches["l2"]) == (48 << 10, 12, 2 << 20)
    assert "L2 2048 KiB" in spr.describe() and "(L1D 12-way)" in spr.describe()
    neon = targets.named("neoverse-n1", "aarch64-linux-gnu")
    assert (neon.caches["l1d"], neon.l1_ways, neon.caches["l2"]) == (64 << 10, 4, 1 << 20)
    other = targets.named("x86-64-v3", "x86_64-unknown-linux-gnu")  # not in the table: the defaults
    assert other.caches == targets.DEFAULT_CACHES and other.l1_ways == targets.DEFAULT_L1_WAYS


def test_the_caches_are_part_of_the_targets_key() -> None:
    zen3 = targets.named("znver3", "x86_64-unknown-linux-gnu")
    bigger = dataclasses.replace(zen3, caches={**zen3.caches, "l2": 1 << 20})
    assert zen3.key() != bigger.key() and zen3.key()["cpu"] == bigger.key()["cpu"]


@needs_avx2
def test_avx2_filter_blocks_narrow_to_stay_in_l2() -> None:
    """3x3x512 filters: blocks of 8 for haswell (256 KiB L2), of 16 for znver3 (512 KiB), both in chunks of input
    channels (their 32 KiB 8-way L1s: 64 and 32 channels); the numbers: AVX2_CONVS["3x3-512-narrowed-blocks"]."""
    model = _conv_model((1, 512, 7, 7), 64, 3)
    haswell = glow_mlir.compile(model, target_cpu="haswell", cache=False).stage("irgen").text
    assert "memref<8x8x3x3x64x8xf32>" in haswell
    znver3 = glow_mlir.compile(model, target_cpu="znver3", cache=False).stage("irgen").text
    assert "memref<4x16x3x3x32x16xf32>" in znver3


@needs_avx2
def test_avx2_filters_of_whole_vectors_but_no_whole_blocks_pack_in_one_vector_blocks() -> None:
    """200 filters (25 vectors of 8, 12.5 blocks of 16): packed [25, 1, 1, 512, 8] for haswell (the numbers:
    AVX2_CONVS["one-vector-blocks"])."""
    compiled = glow_mlir.compile(_conv_model((1, 512, 13, 13), 200, 1), target_cpu="haswell", cache=False)
    assert "memref<25x1x1x512x8xf32>" in compiled.stage("irgen").text


@needs_avx2
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", AVX2_CONVS.values(), ids=AVX2_CONVS.keys())
def test_avx2_code_matches_the_reference(case: tuple, threads: int) -> None:
    shape, f, k, stride, group = case
    model = _conv_model(shape, f, k, stride, group)
    compiled = glow_mlir.compile(model, threads=threads, target_cpu="haswell", cache=False)
    x = RNG.standard_normal(shape).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(compiled(x), want, rtol=1e-4, atol=1e-4 * k * k * shape[1] / group)


@needs_avx2
@pytest.mark.parametrize("threads", [1, 2])
def test_avx2_residual_block_on_tiles_of_pixels_matches_the_reference(threads: int) -> None:
    # two 3x3 convolutions at 7x7 on 16-wide filter blocks (tiles of pixels), the second's epilogue a residual add
    # and a ReLU that stay behind as vector loops
    c = 48
    w1, w2 = ((RNG.standard_normal((c, c, 3, 3)) * 0.1).astype(np.float32) for _ in range(2))
    b1, b2 = (RNG.standard_normal(c).astype(np.float32) for _ in range(2))
    conv = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], **conv), helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], **conv), helper.make_node("Add", ["c2", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 7, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 7, 7])],
                              [numpy_helper.from_array(v, n) for v, n in ((w1, "w1"), (w2, "w2"), (b1, "b1"), (b2, "b2"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = glow_mlir.compile(model, threads=threads, target_cpu="haswell", cache=False)
    assert "llvm.intr.prefetch" in compiled.stage("codegen").text
    x = RNG.standard_normal((1, c, 7, 7)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(compiled(x), want, rtol=1e-4, atol=1e-3)


def test_short_rows_take_tiles_of_pixels_where_they_save_fma_slots() -> None:
    from glow_mlir.backend.kernels import conv, isa

    def rows(ow: int, spec: isa.KernelSpec, stride: int = 1) -> int:
        block = spec.filter_block
        return conv.pixel_rows(conv.plan([1, ow, ow, block], stride, spec), ow * ow, block, spec)

    assert (rows(7, isa.AVX2), rows(14, isa.AVX2), rows(7, isa.AVX2, 2)) == (5, 6, 5)
    assert rows(28, isa.AVX2) == 0  # the 6x16 row tiles cost under 2% more, and fuse the epilogue
    assert rows(7, isa.AVX512) == rows(14, isa.AVX512) == 0  # 7x32 and 14x32 row tiles
    for spec in isa.SPECS.values():  # every tile within the registers and the address registers
        for ow in (5, 7, 13, 14):
            r = rows(ow, spec)
            vectors = spec.filter_block // spec.lanes
            assert r <= spec.pixel_tile_limit and (r + 1) * vectors + 1 <= spec.registers


def test_a_pointwise_convolution_on_many_channels_becomes_a_matmul_of_its_pixels() -> None:
    from glow_mlir.api import CompileOptions, lower_model
    from glow_mlir.backend import cpu
    from glow_mlir.passes.pipeline import run_pipeline

    def kernels(cpu_name: str, shape: tuple, f: int) -> str:
        lowered = lower_model(_conv_model(shape, f, 1), CompileOptions(threads=1, target_cpu=cpu_name), until="iropt")
        codegen = cpu.codegen(1, cpu_name)
        upto = next(i for i, e in enumerate(codegen) if getattr(e, "name", None) == "cpu-tile-kernels")
        with lowered.ctx:
            run_pipeline(lowered.module.operation, codegen[: upto + 1])
            return str(lowered.module)

    avx2 = kernels("haswell", (1, 256, 14, 14), 64)  # 196 pixels x 256 channels on 16-wide panels
    assert "memref<196x256xf32" in avx2 and "memref<4x256x16xf32" in avx2  # the pixels, the panels
    avx512 = kernels("skylake-avx512", (1, 256, 14, 14), 64)  # on 32-wide panels
    assert "memref<196x256xf32" in avx512 and "memref<2x256x32xf32" in avx512
    # at 7 columns AVX-512 takes tiles of two whole rows (14x32) instead
    assert "memref<49x512xf32" not in kernels("skylake-avx512", (1, 512, 7, 7), 64)
    assert "memref<49x512xf32" in kernels("haswell", (1, 512, 7, 7), 64)


@needs_avx2
@pytest.mark.parametrize("mnk", [(1, 1000, 512), (64, 512, 784), (130, 300, 260)], ids=["row", "mlp", "packed"])
def test_avx2_matmuls_match_numpy(mnk: tuple[int, int, int]) -> None:
    m, n, k = mnk
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "mm",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k]),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [k, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])])
    compiled = glow_mlir.compile(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), threads=1,
                                 target_cpu="haswell", cache=False)
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(compiled(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-5 * k)


@needs_avx2
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m", [64, 62, 96])  # 6x16 tiles and a strip of 4, a strip of 2, 6x16 tiles
def test_avx2_weights_packed_at_compile_time_match_the_reference(m: int, threads: int) -> None:
    # Gemm (a fully_connected with bias and relu) and a MatMul on constant weights, both packed in 16-column panels
    k, n = 200, 96
    w = (RNG.standard_normal((k, n)) * 0.1).astype(np.float32)
    v = (RNG.standard_normal((n, n)) * 0.1).astype(np.float32)
    bias = RNG.standard_normal(n).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"]), helper.make_node("Relu", ["g"], ["r"]),
             helper.make_node("MatMul", ["r", "v"], ["y"])]
    graph = helper.make_graph(nodes, "fc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(v, "v"),
                               numpy_helper.from_array(bias, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = glow_mlir.compile(model, threads=threads, target_cpu="haswell", cache=False)
    assert "x200x16xf32" in compiled.stage("lower").text  # the Gemm's weights in panels
    x = RNG.standard_normal((m, k)).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_allclose(compiled(x), want, rtol=1e-4, atol=1e-4 * k)


@needs_avx2
@pytest.mark.parametrize("threads", [1, 2])
def test_avx2_one_row_weights_packed_in_64_column_panels(threads: int) -> None:
    # batch 1 (an LSTM step, a classifier head): the row tile's 8 ymm accumulators read B in 64-column panels
    k, n = 200, 192
    w = (RNG.standard_normal((k, n)) * 0.1).astype(np.float32)
    bias = RNG.standard_normal(n).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"]), helper.make_node("Tanh", ["g"], ["y"])]
    graph = helper.make_graph(nodes, "row", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = glow_mlir.compile(model, threads=threads, target_cpu="haswell", cache=False)
    assert "3x200x64xf32" in compiled.stage("lower").text
    x = RNG.standard_normal((1, k)).astype(np.float32)
    np.testing.assert_allclose(compiled(x), ReferenceEvaluator(model).run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)


@needs_avx2
def test_avx2_machine_code_uses_ymm_registers_only(tmp_path) -> None:
    compiled = glow_mlir.compile(_conv_model((1, 32, 14, 14), 64, 3), threads=1, target_cpu="haswell", cache=False)
    obj = tmp_path / "conv.o"
    obj.write_bytes(b"".join(compiled._jit.object_code()[:1]))
    text = subprocess.run([tools_paths.llvm_tool("llvm-objdump"), "-d", str(obj)], capture_output=True, text=True,
                          check=True).stdout
    assert "vfmadd" in text and "ymm" in text
    assert "zmm" not in text  # the tiles and LLVM's instructions both for 16 ymm registers


@needs_avx2
def test_the_target_is_part_of_the_cache_key(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GLOW_CACHE_DIR", str(tmp_path))
    model = _conv_model((1, 8, 8, 8), 16, 3)
    assert glow_mlir.compile(model, threads=1, target_cpu="haswell").cache == "miss"
    assert glow_mlir.compile(model, threads=1, target_cpu="haswell").cache == "hit"
    assert glow_mlir.compile(model, threads=1).cache == "miss"  # the host's code is another entry


def test_the_tools_take_a_target_and_name_a_bad_one(tmp_path) -> None:
    path = tmp_path / "conv.onnx"
    onnx.save(_conv_model((1, 8, 8, 8), 16, 3), path)
    tool = ["python", "-m", "glow_mlir.tools.glow_compile", "-model", str(path), "--no-cache", "--quiet"]
    import sys

    tool[0] = sys.executable
    bad = subprocess.run([*tool, "--target-cpu", "pentium9"], capture_output=True, text=True, check=False)
    assert bad.returncode == 1 and "unknown target CPU 'pentium9'" in bad.stderr and "Traceback" not in bad.stderr
    # a CPU LLVM knows that cannot run the triple: LLVM's C API would end the process, llc says why
    if targets.host().triple.startswith("x86_64"):
        bad = subprocess.run([*tool, "--target-cpu", "pentium4"], capture_output=True, text=True, check=False)
        assert bad.returncode == 1 and "target CPU 'pentium4' cannot run x86_64" in bad.stderr, bad.stderr
        assert "LLVM ERROR" not in bad.stderr and "Traceback" not in bad.stderr
    stats = subprocess.run([*tool, "--target-cpu", "haswell", "--stats"], capture_output=True, text=True, check=False)
    if _host_runs_avx2():
        assert stats.returncode == 0, stats.stderr
        assert "target haswell (x86_64" in stats.stdout and "avx2, 16 x 256-bit" in stats.stdout


@pytest.mark.parametrize("name", ["native", "host"])
def test_the_hosts_names_make_the_hosts_code_in_a_bundle_too(tmp_path, name: str) -> None:
    from glow_mlir.api import BundleOptions, CompileOptions, emit_bundle
    from glow_mlir.backend import bundle

    model = _conv_model((1, 8, 8, 8), 16, 3)
    assert CompileOptions(target_cpu=name).target() == targets.host()
    files, _ = emit_bundle(model, tmp_path, BundleOptions(name="net", target_cpu=name), CompileOptions(threads=1))
    # llc's name of this machine's CPU, or the CPU that GLOW_MLIR_HOST_CPU makes stand in for it
    want = targets.host().cpu if os.environ.get(targets.HOST_CPU_ENV) else bundle.host_cpu()
    assert files.target_cpu == want
    assert f"CPU {want}" in files.header.read_text()


def test_a_bundle_for_aarch64_is_an_aarch64_object(tmp_path) -> None:
    from glow_mlir.api import BundleOptions, CompileOptions, emit_bundle

    options = CompileOptions(threads=1, target_cpu="neoverse-n1", target_triple="aarch64-linux-gnu")
    files, _ = emit_bundle(_conv_model((1, 16, 8, 8), 32, 3), tmp_path, BundleOptions(name="net",
                                                                                    target_cpu="neoverse-n1"), options)
    header = files.object.read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == 183  # EM_AARCH64
    assert "aarch64-linux-gnu, CPU neoverse-n1" in files.header.read_text()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cpu, m", [pytest.param("haswell", 128, marks=needs_avx2, id="haswell"),
                                    pytest.param("", 132, id="host")])
def test_matmul_packed_in_blocks_matches_numpy(threads: int, cpu: str, m: int) -> None:
    # B (1024 x 1024, known at run time) packed in blocks that fit half the L2 (haswell's 256 KiB: 256 rows x 128
    # columns at a time, 32 blocks; a 1 MiB one: 256 x 512), each block's islands adding onto C; the rows are a main
    # piece and a strip (haswell: 21 x 6 + 2; AVX-512: 16 x 8 + 4) that share each copy
    k, n = 1024, 1024
    a_info, b_info = (helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
                      for name, shape in (("a", [m, k]), ("b", [k, n])))
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "mm", [a_info, b_info],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = glow_mlir.compile(model, threads=threads, target_cpu=cpu, cache=False)
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(compiled(a, b), a @ b, rtol=1e-4, atol=1e-4 * k)
