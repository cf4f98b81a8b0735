"""Quantized compilation from a profile (glow_mlir.compile(profile=...), glow-run/glow-compile --load-profile): the
int8 graph glowgraph-quantize and glowgraph-fold-quantize make, the compiled int8 code against the numpy semantics
of that graph (bit for bit), and the accuracy of a trained network on real data against its float run."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import compile_program, dense, digits, interpret, model_path, run_tool
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.api import CompileOptions, lower_model
from glow_mlir.errors import GlowError, ProfileError
from glow_mlir.quantization.annotate import QuantizationOptions

RNG = np.random.default_rng(5)


def _conv(name: str, x: str, y: str, c: int, f: int, k: int, **attrs) -> tuple[onnx.NodeProto, list]:
    w = (RNG.standard_normal((f, c // attrs.get("group", 1), k, k)) / np.sqrt(c * k * k)).astype(np.float32)
    b = (0.1 * RNG.standard_normal(f)).astype(np.float32)
    node = helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [y], name=name, **attrs)
    return node, [numpy_helper.from_array(w, f"{name}_w"), numpy_helper.from_array(b, f"{name}_b")]


def cnn() -> onnx.ModelProto:
    """Convolutions of every geometry the int8 kernel has (pads, stride 2, dilation, depthwise, grouped), relu and
    clip, a residual add, max pool, and a fully connected head after a global average pool (kept float)."""
    nodes, inits = [], []
    for spec in [("c1", "x", "a1", 3, 16, 3, {"pads": [1, 1, 1, 1]}),
                 ("c2", "r1", "a2", 16, 16, 3, {"pads": [1, 1, 1, 1], "group": 16}),
                 ("c3", "r2", "a3", 16, 32, 3, {"pads": [2, 2, 2, 2], "dilations": [2, 2], "strides": [2, 2]}),
                 ("c4", "p", "a4", 32, 32, 1, {"group": 4}),
                 ("c5", "a4", "a5", 32, 32, 3, {"pads": [1, 2, 1, 0]})]:
        name, x, y, c, f, k, attrs = spec
        node, params = _conv(name, x, y, c, f, k, **attrs)
        nodes.append(node)
        inits += params
        if name == "c1":
            nodes.append(helper.make_node("Relu", ["a1"], ["r1"], name="relu1"))
        if name == "c2":
            inits += [numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(1.5), "hi")]
            nodes.append(helper.make_node("Clip", ["a2", "lo", "hi"], ["r2"], name="clip2"))
        if name == "c3":
            nodes.append(helper.make_node("MaxPool", ["a3"], ["p"], name="pool", kernel_shape=[2, 2], strides=[1, 1],
                                          pads=[0, 0, 1, 1]))
    w = (RNG.standard_normal((32, 10)) / 6).astype(np.float32)
    inits += [numpy_helper.from_array(w, "fc_w"), numpy_helper.from_array(np.zeros(10, np.float32), "fc_b")]
    nodes += [helper.make_node("Add", ["a5", "p"], ["s"], name="residual"),
              helper.make_node("Relu", ["s"], ["rs"], name="relu_s"),
              helper.make_node("GlobalAveragePool", ["rs"], ["g"], name="gap"),
              helper.make_node("Flatten", ["g"], ["flat"], name="flatten"),
              helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], name="fc")]
    graph = helper.make_graph(nodes, "qcnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 12, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def model_and_profile(tmp_path_factory: pytest.TempPathFactory):
    model = cnn()
    feeds = [{"x": RNG.standard_normal((2, 3, 12, 12)).astype(np.float32)} for _ in range(6)]
    profile = glow_mlir.profile(model, feeds, threads=1)
    path = tmp_path_factory.mktemp("qcnn") / "qcnn.onnx"
    onnx.save(model, path)
    return model, path, profile, feeds


#: the host (VNNI where it has it), AVX2 (int16 pairs on ymm) and AVX-512 without VNNI (pairs on zmm); all run on an
#: AVX-512 host, and an AVX2 one runs the first two
TARGETS = [("", False), ("", True), ("haswell", True), ("skylake-avx512", False)]


@pytest.mark.parametrize("target_cpu,channelwise", TARGETS)
def test_int8_code_equals_the_numpy_semantics_of_the_int8_graph(model_and_profile, target_cpu: str,
                                                                 channelwise: bool) -> None:
    from glow_mlir.backend import target as targets

    if target_cpu and targets.cannot_run(targets.named(target_cpu)):
        pytest.skip(f"this machine cannot run {target_cpu} code")
    model, _, profile, feeds = model_and_profile
    options = CompileOptions(threads=1, quantization=QuantizationOptions(profile, channelwise=channelwise))
    lowered = lower_model(model, options, until="quantize")
    with lowered.ctx:
        kinds = re.findall(r'"glowgraph\.(\w+)"', str(lowered.module))
        x = feeds[0]["x"]
        (want,) = interpret(lowered.module, [x])
    # five convolutions and the global average pool (a depthwise convolution of ones)
    assert kinds.count("qconv2d") == 6 and kinds.count("qadd") == 1 and "max_pool" in kinds
    assert "conv2d" not in kinds and "add" not in kinds and "avg_pool" not in kinds
    compiled = glow_mlir.compile(model, threads=1, quantization=options.quantization, target_cpu=target_cpu)
    got = compiled(x)
    # the int8 chain runs to the logits: the qadd's float32 sums may round once (an FMA) where numpy rounds twice
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    float_run = glow_mlir.compile(model, threads=1)(x)
    sqnr = 10 * np.log10(np.sum(float_run.astype(np.float64) ** 2) / np.sum((got - float_run) ** 2))
    assert sqnr > 25, f"int8 logits SQNR {sqnr:.1f} dB against float"


def test_without_an_int8_kernel_every_convolution_runs_row_by_row_as_the_numpy_semantics(
        model_and_profile, monkeypatch: pytest.MonkeyPatch) -> None:
    """A target with no int8 dot-product kernel (ARM, Cortex-M) lowers every convolution of the model (pads, stride
    2 with dilation 2, depthwise, grouped, batch 2) one output row at a time through a window of input rows: made
    to happen here by taking the kernels away."""
    from glow_mlir.backend.kernels import int8

    monkeypatch.setattr(int8, "dot_of", lambda target: None)
    model, _, profile, feeds = model_and_profile
    options = CompileOptions(threads=1, quantization=QuantizationOptions(profile, channelwise=True))
    lowered = lower_model(model, options, until="quantize")
    with lowered.ctx:
        (want,) = interpret(lowered.module, [feeds[1]["x"]])
    compiled = glow_mlir.compile(model, threads=1, quantization=options.quantization, cache=False)
    codegen = compiled.stage("codegen").text
    assert "vpdpbusd" not in codegen and "vpmaddwd" not in codegen
    np.testing.assert_allclose(compiled(feeds[1]["x"]), want, rtol=1e-5, atol=1e-5)


def test_the_int8_chain_has_no_dequantize_quantize_pairs_left(model_and_profile) -> None:
    model, _, profile, _ = model_and_profile
    lowered = lower_model(model, CompileOptions(threads=1, quantization=QuantizationOptions(profile)),
                          until="quantize")
    text = str(lowered.module)
    # one quantize of the network input, one dequantize of the logits: the pool and the head run in int8 too
    assert text.count('"glowgraph.quantize"') == 1
    assert text.count('"glowgraph.dequantize"') == 1
    assert "glowgraph.qparams" not in text


def test_keep_float_leaves_the_named_op_types_in_float(model_and_profile) -> None:
    model, _, profile, _ = model_and_profile
    options = QuantizationOptions(profile, keep_float=("Conv", "Gemm"))
    text = str(lower_model(model, CompileOptions(threads=1, quantization=options), until="quantize").module)
    assert "qfully_connected" not in text and text.count('"glowgraph.conv2d"') == 5
    assert "glowgraph.qadd" in text and text.count('"glowgraph.qconv2d"') == 1  # the add and the pool still int8


def test_unknown_schema_and_a_foreign_profile_are_clear_errors(model_and_profile) -> None:
    model, _, profile, _ = model_and_profile
    with pytest.raises(GlowError, match="unknown quantization schema 'nope'.*asymmetric"):
        glow_mlir.compile(model, profile=profile, quantization_schema="nope")
    with pytest.raises(ProfileError, match="does not belong to this graph"):
        glow_mlir.compile(model_path("digits_cnn"), profile=profile)


SCHEMES = [("asymmetric", "minmax", True), ("symmetric", "kl", False), ("symmetric_uint8", "percentile", True),
           ("symmetric_power2", "mse", False)]


@pytest.fixture(scope="module")
def digits_setup():
    path = model_path("digits_cnn")
    train, test, labels = digits("x_train"), digits("x_test"), digits("y_test")
    profile = glow_mlir.profile(path, ({"image": train[i:i + 1]} for i in range(len(train))), threads=1)
    float_model = glow_mlir.compile(path, threads=1)
    return path, profile, test, labels, _top1(float_model, test, labels)


def _top1(model, images: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean([np.argmax(model(images[i:i + 1])) == labels[i] for i in range(len(images))]))


@pytest.mark.parametrize("schema,calibration,channelwise", SCHEMES)
def test_digits_top1_within_one_point_of_float(digits_setup, schema: str, calibration: str,
                                                channelwise: bool) -> None:
    path, profile, test, labels, float_top1 = digits_setup
    model = glow_mlir.compile(path, threads=1, profile=profile, quantization_schema=schema, calibration=calibration,
                              channelwise=channelwise)
    assert "qconv2d" in model.stage("quantize").text
    top1 = _top1(model, test, labels)
    assert top1 >= float_top1 - 0.01, f"{schema}/{calibration}: top-1 {top1:.3f} against float {float_top1:.3f}"


def test_glow_run_and_glow_compile_take_a_profile(model_and_profile, tmp_path: Path) -> None:
    _, path, profile, feeds = model_and_profile
    profile.save(tmp_path / "p.yaml")
    np.save(tmp_path / "x.npy", feeds[0]["x"])
    run = run_tool("glow-run", "-model", str(path), "--load-profile", str(tmp_path / "p.yaml"),
                   "--enable-channelwise", "--input", f"x={tmp_path / 'x.npy'}")
    assert run.returncode == 0, run.stderr
    assert "y: shape ( 2 x 10 ) float32" in run.stdout
    dump = run_tool("glow-compile", "-model", str(path), "--load-profile", str(tmp_path / "p.yaml"), "--dump-graph",
                    "--keep-original-precision-for-nodes", "Add")
    assert dump.returncode == 0, dump.stderr
    assert '"glowgraph.qconv2d"' in dump.stdout and '"glowgraph.qadd"' not in dump.stdout
    alone = run_tool("glow-run", "-model", str(path), "--enable-channelwise")
    assert alone.returncode != 0 and "go with --load-profile" in alone.stderr


def test_a_bundle_for_an_avx_vnni_cpu_holds_vex_dot_products(model_and_profile, tmp_path: Path) -> None:
    """alderlake has AVX-VNNI (ymm, VEX-encoded) and no AVX-512: its int8 bundle's convolutions are `{vex} vpdpbusd`
    on ymm registers (this machine need not run them: the object is only disassembled)."""
    import subprocess

    from glow_mlir.backend.tools_paths import llvm_tool

    _, path, profile, _ = model_and_profile
    profile.save(tmp_path / "p.yaml")
    done = run_tool("glow-compile", "-model", str(path), "--load-profile", str(tmp_path / "p.yaml"),
                    "--target-cpu", "alderlake", "--emit-bundle", str(tmp_path / "bundle"))
    assert done.returncode == 0, done.stderr
    (obj,) = (tmp_path / "bundle").glob("*.o")
    text = subprocess.run([llvm_tool("llvm-objdump"), "-d", "--no-show-raw-insn", str(obj)], capture_output=True,
                          text=True, check=True).stdout
    dots = re.findall(r"\{vex\}\s+vpdpbusd\s+%ymm", text)
    assert dots and "zmm" not in text


def test_int8_convolutions_split_across_threads_give_the_same_codes(tmp_path: Path) -> None:
    """A convolution big enough to be cut into tasks (its output rows across 2 threads) gives the output of the
    one-thread code bit for bit (every row written once)."""
    w = (RNG.standard_normal((32, 16, 3, 3)) * 0.2).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
        "wide", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 30, 30])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 30, 30])], [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = [{"x": RNG.standard_normal((1, 16, 30, 30)).astype(np.float32)} for _ in range(3)]
    profile = glow_mlir.profile(model, feeds, threads=1)
    one, two = (glow_mlir.compile(model, threads=t, profile=profile) for t in (1, 2))
    assert "qconv2d" in one.stage("quantize").text
    x = feeds[0]["x"]
    got = two(x)
    np.testing.assert_array_equal(got, one(x))
    assert np.count_nonzero(got) > got.size // 4


def test_a_concat_of_two_branches_runs_in_int8() -> None:
    """Two convolution branches joined by Concat (inception's and densenet's shape): the concat is an int8 node
    in the result's parameters (a branch whose parameters differ rescaled by its convolution's requantization), the
    code equals the int8 graph's numpy semantics, and the logits stay close to float."""
    nodes, inits = [], []
    for name, x, y, c, f, k in [("b1", "x", "y1", 8, 16, 1), ("b2", "x", "y2", 8, 16, 3), ("head", "r", "y", 32, 8, 1)]:
        node, params = _conv(name, x, y, c, f, k, pads=[k // 2] * 4)
        nodes.append(node)
        inits += params
        if name == "b2":
            nodes += [helper.make_node("Relu", ["y1"], ["r1"]), helper.make_node("Relu", ["y2"], ["r2"]),
                      helper.make_node("Concat", ["r1", "r2"], ["j"], axis=1), helper.make_node("Relu", ["j"], ["r"])]
    graph = helper.make_graph(nodes, "branches", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 10, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = [{"x": RNG.standard_normal((1, 8, 10, 10)).astype(np.float32)} for _ in range(4)]
    options = CompileOptions(threads=1, quantization=QuantizationOptions(profile := glow_mlir.profile(
        model, feeds, threads=1)))
    lowered = lower_model(model, options, until="quantize")
    x = feeds[0]["x"]
    with lowered.ctx:
        text = str(lowered.module)
        (want,) = interpret(lowered.module, [x])
    assert re.search(r'"glowgraph\.concat"\([^)]*\) \{axis = 3 : i64\} : \(tensor<1x10x10x16xi8>', text), text
    assert text.count('"glowgraph.qconv2d"') == 3 and '"glowgraph.conv2d"' not in text
    got = glow_mlir.compile(model, threads=1, profile=profile)(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    float_run = glow_mlir.compile(model, threads=1)(x)
    sqnr = 10 * np.log10(np.sum(float_run.astype(np.float64) ** 2) / np.sum((got - float_run) ** 2))
    assert sqnr > 25, f"int8 SQNR {sqnr:.1f} dB against float"


def _run_qconv2d(x: np.ndarray, packed: np.ndarray, bias: np.ndarray, channels: int, attrs: dict) -> np.ndarray:
    """One glowir qconv2d on a packed filter, compiled by the codegen pipeline for the host and run."""
    from glow_mlir.dialects import make_context

    def shaped(value: np.ndarray | tuple, element: str) -> str:
        return f"memref<{'x'.join(map(str, getattr(value, 'shape', value)))}x{element}>"

    filt = shaped(packed, "i8" if packed.dtype == np.int8 else "i16")
    n, h, w, _ = x.shape
    kh = packed.shape[1] if packed.ndim == 6 else packed.shape[0]
    kw = packed.shape[2] if packed.ndim == 6 else 4 * packed.shape[1]
    top, left, bottom, right = attrs["pads"]
    out = (n, h + top + bottom - kh + 1, w + left + right - kw + 1, channels)
    scales = ", ".join(repr(float(np.float32(m))) for m in attrs["multipliers"])
    text = f"""
func.func @q() attributes {{glowir.inputs = ["x"], glowir.outputs = ["y"]}} {{
  %w = "glowir.weight_var"() {{mutability = "const", name = "w", value = {dense(packed)}}} : () -> {filt}
  %b = "glowir.weight_var"() {{mutability = "const", name = "b", value = {dense(bias)}}} : () -> {shaped(bias, "i32")}
  %x = "glowir.weight_var"() {{mutability = "mutable", name = "x"}} : () -> {shaped(x, "i8")}
  %y = "glowir.weight_var"() {{mutability = "mutable", name = "y"}} : () -> {shaped(out, "i8")}
  "glowir.qconv2d"(%y, %x, %w, %b) {{strides = array<i64: 1, 1>, pads = array<i64: {top}, {left}, {bottom}, {right}>, dilations = array<i64: 1, 1>, group = {attrs["group"]}, input_offset = {attrs["input_offset"]}, multipliers = array<f32: {scales}>, offset = {attrs["offset"]}, output_min = {attrs["output_min"]}, output_max = {attrs["output_max"]}}} : ({shaped(out, "i8")}, {shaped(x, "i8")}, {filt}, {shaped(bias, "i32")}) -> ()
  return
}}"""
    program, _module = compile_program(make_context(), text)
    return program({"x": x})["y"]


@pytest.mark.parametrize("depthwise", [False, True])
@pytest.mark.parametrize("multiplier", [2.0 ** -29.5, 0.37, 3.0])
def test_the_kernel_epilogue_is_exact_at_the_extremes(multiplier: float, depthwise: bool) -> None:
    """The int8 kernels' fused requantization against the numpy semantics where the 64-bit arithmetic is tight:
    accumulators near +-2^31 (biases at the edge of int32, int8 extremes in the input), the smallest multiplier
    (a right shift of 61), one above 1 (clamped in 64 bits first), per channel with offsets and a narrowed clamp;
    a group-1 convolution, and a depthwise one of 112 channels (chunks of 64, 32 and 16)."""
    from glow_mlir.backend import target as targets
    from glow_mlir.backend.kernels import int8
    from glow_mlir.dialects.quantized import UNSIGNED_SHIFT, eval_qconv2d, pack_depthwise

    dot = int8.dot_of(targets.host())
    if dot is None or (depthwise and (dot.group, dot.lanes) != (4, 16)):
        pytest.skip("this host has no int8 dot-product kernel for this convolution")
    rng = np.random.default_rng(11)
    # 32 filters: two blocks of AVX-512's 16 lanes, four of AVX2's 8 (with 16 the sums at 0.37 all but saturate)
    channels = 112 if depthwise else max(2 * dot.lanes, 32)
    w = rng.choice(np.array([-127, 127, -1, 0], np.int8), (3, 3, 1 if depthwise else 8, channels))
    b = np.where(np.arange(channels) % 2, 2**31 - 2**25, -(2**31) + 2**25).astype(np.int32)
    b[::3] = rng.integers(-1000, 1000, len(b[::3]))
    x = rng.choice(np.array([-128, 127, 0, 5], np.int8), (1, 6, 6, channels if depthwise else 8))
    multipliers = [multiplier * (1 + k / channels) for k in range(channels)]
    attrs = {"strides": [1, 1], "pads": [1, 1, 1, 1], "dilations": [1, 1], "group": channels if depthwise else 1,
             "input_offset": 3, "multipliers": multipliers, "offset": -7, "output_min": -100, "output_max": 120}
    want = eval_qconv2d(x, w, b, **attrs)
    if depthwise:
        packed = pack_depthwise(w)
        bias = (b - UNSIGNED_SHIFT * w.astype(np.int64).reshape(-1, channels).sum(axis=0)).astype(np.int32)
        attrs["pads"] = [1, 1, 1, 2]
    else:
        packed, bias = int8._packed(w, b, dot)
    assert np.array_equal(want, eval_qconv2d(x, packed, bias, **attrs))
    got = _run_qconv2d(x, packed, bias, channels, attrs)
    assert np.array_equal(got, want), f"{np.count_nonzero(got != want)} of {got.size} codes differ"
    assert len(np.unique(want)) > (1 if multiplier > 1 else 3)  # above 1 the large sums saturate both ways


def test_average_pools_run_in_int8() -> None:
    """AveragePool (pads counted) and GlobalAveragePool between convolutions become depthwise int8 convolutions of
    ones: no float pool is left, the code equals the int8 graph's numpy semantics, the output stays close to float."""
    nodes, inits = [], []
    for name, x, y, c, f in [("c1", "x", "a1", 8, 16), ("c2", "p1", "a2", 16, 32)]:
        node, params = _conv(name, x, y, c, f, 3, pads=[1, 1, 1, 1])
        nodes.append(node)
        inits += params
        if name == "c1":
            nodes += [helper.make_node("Relu", ["a1"], ["r1"]),
                      helper.make_node("AveragePool", ["r1"], ["p1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                       count_include_pad=1)]
    nodes += [helper.make_node("Relu", ["a2"], ["r2"]), helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
              helper.make_node("Relu", ["g"], ["y"])]
    graph = helper.make_graph(nodes, "pools", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 9, 9])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = [{"x": RNG.standard_normal((1, 8, 9, 9)).astype(np.float32)} for _ in range(4)]
    profile = glow_mlir.profile(model, feeds, threads=1)
    lowered = lower_model(model, CompileOptions(threads=1, quantization=QuantizationOptions(profile)),
                          until="quantize")
    x = feeds[0]["x"]
    with lowered.ctx:
        text = str(lowered.module)
        (want,) = interpret(lowered.module, [x])
    assert '"glowgraph.avg_pool"' not in text and text.count('"glowgraph.qconv2d"') == 4
    got = glow_mlir.compile(model, threads=1, profile=profile)(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    float_run = glow_mlir.compile(model, threads=1)(x)
    sqnr = 10 * np.log10(np.sum(float_run.astype(np.float64) ** 2) / np.sum((got - float_run) ** 2))
    assert sqnr > 25, f"int8 SQNR {sqnr:.1f} dB against float"
