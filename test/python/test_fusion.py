"""Fusion (linalg-fuse-elementwise, the epilogue kernels of linalg-outline-kernels and cpu-tile-kernels): small ONNX
models whose convolution or matmul is followed by a bias, an activation or a residual add compile to kernels with
those ops fused into the contraction's loop nest, and compute what onnx.reference computes (rtol 1e-4, atol 1e-4
times the reduction length) on one thread and on two."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir
from glow_mlir.api import CompileOptions, lower_model
from glow_mlir.backend import cpu
from glow_mlir.passes.pipeline import run_pipeline

RNG = np.random.default_rng(7)
RTOL, ATOL = 1e-4, 1e-4


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, list[int]], output: list[int],
           weights: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "fusion", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v)
                                                for k, v in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, output)],
                              [numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _weights(**shapes: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {k: (RNG.standard_normal(v) * 0.2).astype(np.float32) for k, v in shapes.items()}


def _conv(out: str, x: str = "x", w: str = "w", b: str = "b") -> onnx.NodeProto:
    return helper.make_node("Conv", [x, w, b], [out], kernel_shape=[3, 3], pads=[1, 1, 1, 1])


def conv_bias_relu(filters: int = 32) -> tuple[onnx.ModelProto, int]:
    nodes = [_conv("c"), helper.make_node("Relu", ["c"], ["y"])]
    weights = _weights(w=(filters, 16, 3, 3), b=(filters,))
    return _model(nodes, {"x": [1, 16, 14, 14]}, [1, filters, 14, 14], weights), 16 * 9


def conv_bias_relu_blocked() -> tuple[onnx.ModelProto, int]:
    """64 filters: packed in blocks of 32 (cpu-pack-conv-filters), one island per block with its slice of the bias
    and the relu."""
    return conv_bias_relu(64)


def conv_blocked_project_add() -> tuple[onnx.ModelProto, int]:
    """The residual with 64 channels and a 128-channel expansion: the convolutions run on packed filter blocks (their
    filters are 32 KiB and more), each block's island with its slice of the epilogue (the last writes its slice of
    the skip)."""
    return _residual(64, 128)


def conv_pieces_scale_shift() -> tuple[onnx.ModelProto, int]:
    """24 filters, cut into pieces of 16 and 8: each piece's island takes its slice of the bias, the relu and a
    per-channel scale and shift after it (a batch norm after the activation, which no fold takes)."""
    weights = _weights(w=(24, 16, 3, 3), b=(24,), s=(1, 24, 1, 1), t=(1, 24, 1, 1))
    nodes = [_conv("c"), helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Mul", ["r", "s"], ["m"]),
             helper.make_node("Add", ["m", "t"], ["y"])]
    return _model(nodes, {"x": [1, 16, 14, 14]}, [1, 24, 14, 14], weights), 16 * 9


def conv_pieces_add() -> tuple[onnx.ModelProto, int]:
    """The residual with 24 channels (pieces of 16 + 8) and a 48-channel bottleneck (pieces of 32 + 16)."""
    return _residual(24, 48)


def conv_add_relu() -> tuple[onnx.ModelProto, int]:
    """A resnet basic block (batch norms folded): relu(conv(relu(conv(x))) + relu(conv(x))), the skip in NHWC."""
    nodes = [_conv("c"), helper.make_node("Relu", ["c"], ["r"]), _conv("c2", "r", "w2", "b2"),
             helper.make_node("Add", ["c2", "r"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    weights = _weights(w=(32, 32, 3, 3), b=(32,), w2=(32, 32, 3, 3), b2=(32,))
    return _model(nodes, {"x": [1, 32, 14, 14]}, [1, 32, 14, 14], weights), 2 * 32 * 9


def _residual(filters: int, inner: int) -> tuple[onnx.ModelProto, int]:
    """mobilenet's residual: r = relu(conv(x)); h = relu(conv1x1(r)); y = r + conv1x1(h), the projection's output
    dying in the add (written onto the skip r, which the projection does not read)."""
    nodes = [_conv("c"), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Conv", ["r", "e", "eb"], ["g"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["g"], ["h"]),
             helper.make_node("Conv", ["h", "p", "pb"], ["q"], kernel_shape=[1, 1]),
             helper.make_node("Add", ["r", "q"], ["y"])]
    weights = _weights(w=(filters, 16, 3, 3), b=(filters,), e=(inner, filters, 1, 1), eb=(inner,),
                       p=(filters, inner, 1, 1), pb=(filters,))
    return _model(nodes, {"x": [1, 16, 14, 14]}, [1, filters, 14, 14], weights), 16 * 9 + filters + inner


def conv_three_blocks_project_add() -> tuple[onnx.ModelProto, int]:
    """The residual whose projection (128 -> three blocks of the target's filter block, packed: a matmul of the
    pixels on three panels, mobilenet_v2's 576 -> 96 at 14x14) has the add onto the skip in its islands on one
    thread, and on two keeps it a loop of its own."""
    from glow_mlir.backend.kernels import isa

    return _residual(3 * isa.spec_of("").filter_block, 128)


def conv_project_add() -> tuple[onnx.ModelProto, int]:
    """The residual with 32 channels: one island per convolution."""
    return _residual(32, 32)


def conv_reads_skip_add() -> tuple[onnx.ModelProto, int]:
    """A 1x1 projection of the skip itself added onto the skip: the add may not write the skip inside the
    projection's loops (a later tile would read channels an earlier one updated); 24 channels, in pieces of 16 + 8."""
    nodes = [_conv("c"), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Conv", ["r", "p", "pb"], ["q"], kernel_shape=[1, 1]),
             helper.make_node("Add", ["r", "q"], ["y"])]
    weights = _weights(w=(24, 16, 3, 3), b=(24,), p=(24, 24, 1, 1), pb=(24,))
    return _model(nodes, {"x": [1, 16, 14, 14]}, [1, 24, 14, 14], weights), 16 * 9 + 24


def conv_relu6() -> tuple[onnx.ModelProto, int]:
    """mobilenet's conv + clip(0, 6): one conv with F not a multiple of 64, one depthwise."""
    weights = _weights(w=(48, 16, 3, 3), b=(48,), dw=(48, 1, 3, 3), db=(48,))
    weights["w"] *= 8  # values above 6 and below 0, so both bounds clip
    lo, hi = numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")
    nodes = [_conv("c"), helper.make_node("Clip", ["c", "lo", "hi"], ["r"]),
             helper.make_node("Conv", ["r", "dw", "db"], ["d"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=48),
             helper.make_node("Clip", ["d", "lo", "hi"], ["y"])]
    model = _model(nodes, {"x": [1, 16, 16, 16]}, [1, 48, 16, 16], weights)
    model.graph.initializer.extend([lo, hi])
    return model, 16 * 9


def matmul_bias_gelu() -> tuple[onnx.ModelProto, int]:
    """bert's feed-forward input: matmul, bias add, gelu written with erf as exporters do."""
    weights = _weights(w=(128, 256), b=(256,))
    weights.update(sqrt2=np.float32(np.sqrt(2)), one=np.float32(1), half=np.float32(0.5))
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Div", ["a", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["p"]), helper.make_node("Mul", ["a", "p"], ["q"]),
             helper.make_node("Mul", ["q", "half"], ["y"])]
    return _model(nodes, {"x": [64, 128]}, [64, 256], weights), 128


MODELS = {"conv-bias-relu": conv_bias_relu, "conv-bias-relu-blocked": conv_bias_relu_blocked,
          "conv-blocked-project-add": conv_blocked_project_add, "conv-three-blocks-project-add": conv_three_blocks_project_add,
          "conv-pieces-scale-shift": conv_pieces_scale_shift,
          "conv-pieces-add": conv_pieces_add, "conv-reads-skip-add": conv_reads_skip_add,
          "conv-add-relu": conv_add_relu, "conv-project-add": conv_project_add,
          "conv-relu6": conv_relu6, "matmul-bias-gelu": matmul_bias_gelu}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", MODELS)
def test_fused_model_matches_the_reference(name: str, threads: int) -> None:
    model, reduction = MODELS[name]()
    compiled = glow_mlir.compile(model, threads=threads, cache=False)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = RNG.standard_normal(shape).astype(np.float32)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(compiled(x), want, rtol=RTOL, atol=ATOL * reduction)


def _kernels(model: onnx.ModelProto, last: str = "cpu-tile-kernels", before: bool = False) -> str:
    """The module after codegen pass ``last`` (or right ``before`` it) for an AVX-512 CPU (8x32 matmul tiles, on B as
    it is or on constant weights packed in panels: both fuse), from the model's planned glowir."""
    lowered = lower_model(model, CompileOptions(threads=1, target_cpu="skylake-avx512"), until="iropt")
    codegen = cpu.codegen(1, "skylake-avx512")
    upto = next(i for i, e in enumerate(codegen) if getattr(e, "name", None) == last)
    with lowered.ctx:
        run_pipeline(lowered.module.operation, codegen[: upto + (0 if before else 1)])
        return str(lowered.module)


@pytest.mark.parametrize("name", ["conv-bias-relu", "conv-bias-relu-blocked", "conv-blocked-project-add",
                                  "conv-pieces-scale-shift", "conv-pieces-add", "conv-add-relu", "conv-project-add",
                                  "matmul-bias-gelu"])
def test_the_epilogue_is_in_the_contraction_loops(name: str) -> None:
    # what is left on memrefs are the layout transposes and the padding (fill, copy): no bias broadcast, no
    # elementwise pass over the output
    text = _kernels(MODELS[name]()[0])
    # a contraction (a matmul on packed weights: a reduction loop carrying the accumulators)
    assert "vector.contract" in text or re.search(r"scf\.for .* -> \(vector<\d+x1x\d+xf32>\)", text), text
    assert "linalg.broadcast" not in text
    # a generic left on memrefs is the copy of the network's input into the first convolution's padded buffer
    bodies = re.findall(r"linalg\.generic .*?\{\n\s*\^bb0\((%\w+): f32, %\w+: f32\):\n\s*linalg\.yield (%\w+)", text)
    assert text.count("linalg.generic") == len(bodies) and all(a == b for a, b in bodies), text


def _reads_back(text: str) -> int:
    """How many vector.transfer_read ops read, at the same indices, the buffer the transfer_write right before them
    wrote."""
    write = re.compile(r"^\s*vector\.transfer_write %[\w#]+, (%[\w#]+)(\[[^\]]*\])")
    read = re.compile(r"^\s*%[\w#]+ = vector\.transfer_read (%[\w#]+)(\[[^\]]*\])")
    lines = text.splitlines()
    return sum(1 for a, b in zip(lines, lines[1:])
               if (w := write.match(a)) and (r := read.match(b)) and w.groups() == r.groups())


@pytest.mark.parametrize("name", ["conv-bias-relu", "conv-bias-relu-blocked", "conv-add-relu", "conv-project-add"])
def test_fused_accumulators_start_from_the_bias_in_registers(name: str) -> None:
    # bufferized, a fused island writes the bias into its output tile and reads it straight back as the
    # accumulators; cpu-forward-transfers hands them the written vector (LLVM did not always: resnet18's residual
    # convolutions loaded them back from lines still being stored)
    model = MODELS[name]()[0]
    assert _reads_back(_kernels(model, "cpu-forward-transfers", before=True)) > 0
    after = _kernels(model, "cpu-forward-transfers")
    assert _reads_back(after) == 0, after
    assert "vector.shape_cast" in after


@pytest.mark.parametrize("name", ["conv-relu6", "conv-project-add", "conv-pieces-add", "conv-blocked-project-add",
                                  "conv-three-blocks-project-add"])
def test_threaded_kernels_allocate_nothing(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # a fused island inside an scf.forall over one buffer that writes tiles of another (a residual add moved onto
    # the skip, a copy into a bordered buffer) got a private buffer per tile from bufferization: a malloc per tile
    monkeypatch.setattr(cpu, "PARALLEL_FLOPS", 0)  # these small kernels spread over the threads too
    compiled = glow_mlir.compile(MODELS[name]()[0], threads=2, cache=False)
    text = compiled.stage("codegen").text
    assert "llvm.call @glow_pool_run" in text
    assert "@malloc" not in text and "@aligned_alloc" not in text


#: activations that node lowering spells with splats of their constants (clip: max and min against splats of its
#: bounds), on NCHW [1, 8, 7, 9]: every splat folds into the loop after it as a scalar (no fill, no splat buffer
#: read), and the chain is one loop (GELU's two interleaved chains too: a producer fuses past an op that leaves its
#: buffers alone). ONNX op, attributes, opset.
SPLATS = {"clip": ("Clip", {}, 11), "hard-sigmoid": ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}, 17),
          "hard-swish": ("HardSwish", {}, 17), "gelu": ("Gelu", {}, 20),
          "gelu-tanh": ("Gelu", {"approximate": "tanh"}, 20)}


@pytest.mark.parametrize("name", SPLATS)
def test_splats_fold_into_one_loop(name: str) -> None:
    op, attributes, opset = SPLATS[name]
    shape = [1, 8, 7, 9]
    node = helper.make_node(op, ["x"], ["y"], **attributes)
    model = _model([node], {"x": shape}, shape, {})
    model.opset_import[0].version = opset
    if op == "Clip":  # bounds as initializers (opset 11)
        model.graph.initializer.extend([numpy_helper.from_array(np.array(-0.5, np.float32), "lo"),
                                        numpy_helper.from_array(np.array(0.7, np.float32), "hi")])
        model.graph.node[0].input.extend(["lo", "hi"])
    text = _kernels(model)
    loops = [f for f in re.split(r"\n(?=  func\.func )", text) if "linalg.generic" in f]
    assert "linalg.fill" not in text and len(loops) == 1, text
    compiled = glow_mlir.compile(model, cache=False)
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    # absolute error at the input's scale: GELU's 1 + tanh (or erf) cancels to a few ulps for large negative x
    np.testing.assert_allclose(compiled(x), want, rtol=1e-5, atol=1e-6 * np.abs(x).max())


def _conv_activation_conv(activation: str) -> onnx.ModelProto:
    """conv 3x3 16 -> 32, the activation, conv 3x3 32 -> 16, at 12x12."""
    def act(x: str, y: str) -> list[onnx.NodeProto]:
        if activation == "silu":
            return [helper.make_node("Sigmoid", [x], [x + "_s"]), helper.make_node("Mul", [x, x + "_s"], [y])]
        return [helper.make_node("HardSwish", [x], [y])]
    nodes = [_conv("c"), *act("c", "a"), _conv("c2", "a", "w2", "b2"), *act("c2", "y")]
    weights = _weights(w=(32, 16, 3, 3), b=(32,), w2=(16, 32, 3, 3), b2=(16,))
    return _model(nodes, {"x": [1, 16, 12, 12]}, [1, 16, 12, 12], weights)


@pytest.mark.parametrize("activation", ["silu", "hard-swish"])
def test_activations_between_convolutions_stay_in_nhwc(activation: str) -> None:
    # the NCHW <-> NHWC transposes around the activation (a transpose shared by two nodes that meet again) cancel:
    # one transpose where the graph enters NHWC, one where it leaves
    model = _conv_activation_conv(activation)
    assert _kernels(model).count("linalg.transpose ins") == 2
    for threads in (1, 2):
        compiled = glow_mlir.compile(model, threads=threads, cache=False)
        x = RNG.standard_normal([1, 16, 12, 12]).astype(np.float32)
        (want,) = ReferenceEvaluator(model).run(None, {"x": x})
        np.testing.assert_allclose(compiled(x), want, rtol=RTOL, atol=ATOL * 32 * 9)
