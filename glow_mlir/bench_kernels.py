"""``python -m glow_mlir.bench_kernels``: glow_mlir's convolution kernels against onnxruntime, one shape at a time.

Every distinct convolution of the given models (default: resnet18 and mobilenet_v2 from the shared models), keyed by
input shape, filter shape, group, strides and pads, runs in this one process on both engines, one after the other:

- glow_mlir: the kernel alone, as the codegen pipeline builds it inside a network: a function of the bias broadcast
  into the output and the convolution on NHWC buffers (``linalg.conv_2d_nhwc_hwcf``, ``depthwise_conv_2d_nhwc_hwc``,
  or the blocked generic of convert-glowir-to-linalg where cpu-pack-conv-filters packs the filter), the input
  already padded (in a network the padding is a bordered copy before the kernel, not timed here), the filter a
  constant, compiled with ``cpu.codegen(threads)``;
- onnxruntime: a one-node ONNX Conv with the same shape, pads and bias (its padding/im2col is inside its kernel).

The table gives each shape's count in the models, the tile key the rule picked, both medians, GFLOP/s (2 x MACs over
the median), glow / onnxruntime (medians: above 1 is slower) and each shape's share of the models' glow convolution
time (count x median). Only ratios from the same run compare on a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

from .bench import _ort_session, _resolve, models_dir, named_target, peak_gflops, peak_text

DEFAULT_MODELS = "resnet18,mobilenet_v2"
#: seconds of timed runs each engine gets per shape (the run count follows from one warm-up call)
BUDGET_S = 0.25
#: bytes written between timed runs to push the weights out of the caches (L3 here is 32 MiB)
EVICT_BYTES = 64 << 20


@dataclass(frozen=True)
class ConvShape:
    """One ONNX Conv: input ``[n, c, h, w]``, ``f`` filters of ``kh x kw``, group, stride, pads (t, l, b, r)."""

    c: int
    h: int
    w: int
    f: int
    kh: int
    kw: int
    group: int
    stride: int
    pads: tuple[int, int, int, int]
    #: the batch
    n: int = 1

    @property
    def depthwise(self) -> bool:
        return self.group == self.c == self.f

    @property
    def out_hw(self) -> tuple[int, int]:
        t, l, b, r = self.pads
        return (self.h + t + b - self.kh) // self.stride + 1, (self.w + l + r - self.kw) // self.stride + 1

    def flops(self) -> float:
        oh, ow = self.out_hw
        return 2.0 * self.n * oh * ow * self.f * self.kh * self.kw * (self.c // self.group)

    def label(self) -> str:
        kind = "dw " if self.depthwise else ""
        pad = f" p{self.pads[0]}" if any(self.pads) else ""
        batch = f" n{self.n}" if self.n != 1 else ""
        return f"{kind}{self.kh}x{self.kw}/{self.stride} {self.c}->{self.f} @{self.h}x{self.w}{pad}{batch}"


def conv_shapes(model: onnx.ModelProto) -> Counter[ConvShape]:
    """The distinct 2-D convolutions of ``model`` (group 1 or depthwise), with their counts."""
    model = shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in [*model.graph.value_info, *model.graph.input, *model.graph.output]}
    shapes.update({i.name: list(i.dims) for i in model.graph.initializer})
    found: Counter[ConvShape] = Counter()
    for node in model.graph.node:
        if node.op_type != "Conv":
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        (n, c, h, w), (f, _, kh, kw) = shapes[node.input[0]], shapes[node.input[1]]
        strides, dilations = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
        pads = attrs.get("pads", [0, 0, 0, 0])
        auto_pad = attrs.get("auto_pad", b"NOTSET")
        if strides[0] != strides[1] or list(dilations) != [1, 1] or auto_pad != b"NOTSET":
            continue
        shape = ConvShape(c, h, w, f, kh, kw, attrs.get("group", 1), strides[0], (pads[0], pads[1], pads[2], pads[3]),
                          n)
        if shape.group == 1 or shape.depthwise:
            found[shape] += 1
    return found


# --------------------------------------------------------------------------- the two engines

def glow_kernel(shape: ConvShape, weights: np.ndarray, bias: np.ndarray, threads: int, target_cpu: str = ""):
    """``(program, tile keys)``: the compiled kernel of ``shape`` as the codegen pipeline builds it in a network (the
    filter packed when cpu-pack-conv-filters would pack it), taking the padded NHWC input ``x``; for ``target_cpu``
    (default: the host)."""
    from mlir import ir
    from mlir.dialects import func, linalg

    from .backend import cpu
    from .backend import target as targets
    from .backend.jit import Argument, JitProgram
    from .backend.kernels import conv as conv_kernels
    from .backend.kernels.filter_layout import pack_filter
    from .backend.kernels import isa
    from .dialects import make_context
    from .passes.conversion.ir_to_linalg import blocked_conv
    from .passes.pipeline import run_pipeline

    t, l, b, r = shape.pads
    oh, ow = shape.out_hw
    hwcf = weights.transpose(2, 3, 1, 0)  # [F, C, KH, KW] -> [KH, KW, C, F]
    spec = isa.spec_of(target_cpu)
    block = 0 if shape.depthwise else conv_kernels.filter_block(list(hwcf.shape), 1, [1, 1], spec,
                                                                 [shape.n, oh, ow, shape.f],
                                                                 shape.stride, 4 * shape.c * shape.stride)
    x_shape, y_shape = (shape.n, shape.h + t + b, shape.w + l + r, shape.c), (shape.n, oh, ow, shape.f)
    chunk = conv_kernels.packed_chunk(list(x_shape), list(hwcf.shape), block, [shape.n, oh, ow], [shape.stride] * 2,
                                      spec) if block else 0
    filt = hwcf[:, :, 0, :] if shape.depthwise else pack_filter(hwcf, block, chunk) if block else hwcf
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        f32 = ir.F32Type.get()
        types = [ir.MemRefType.get(list(s), f32) for s in (x_shape, filt.shape, (shape.f,), y_shape)]
        with ir.InsertionPoint(module.body):
            kernel = func.FuncOp("conv", (types, []))
            kernel.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
            with ir.InsertionPoint(kernel.add_entry_block()):
                x, w, bias_arg, y = kernel.arguments
                linalg.broadcast(bias_arg, outs=[y], dimensions=[0, 1, 2])
                strides = [shape.stride] * 2
                if block:
                    blocked_conv(x, w, y, strides)
                elif shape.depthwise:
                    linalg.depthwise_conv_2d_nhwc_hwc(x, w, outs=[y], strides=strides, dilations=[1, 1])
                else:
                    linalg.conv_2d_nhwc_hwcf(x, w, outs=[y], strides=strides, dilations=[1, 1])
                func.ReturnOp([])
        keys: list[str] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if (plan := conv_kernels.matches(op, spec)) is not None and plan.as_matmul:
                keys.append(f"matmul of the pixels, {filt.shape[0]} panels")
            elif plan is not None and plan.masked:
                keys.append(f"masked {shape.f} of {plan.masked} lanes reg={plan.pieces[0][2].owr}")
            elif plan is not None and plan.pixel_rows:
                keys.append(f"pixels reg={plan.pixel_rows}x{filt.shape[-1]} x{filt.shape[0]} blocks"
                            + (f" x{filt.shape[1]} chunks" if filt.ndim == 6 else ""))
            elif plan is not None:
                keys.extend(tiles.key() + (f" x{filt.shape[0]} blocks" if plan.blocked else "")
                            for _, _, tiles in plan.pieces)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
    codegen = [e for e in cpu.codegen(threads, target_cpu) if getattr(e, "name", None) != "convert-glowir-to-linalg"]
    run_pipeline(module.operation, codegen)
    program = JitProgram(module, "conv", [
        Argument("x", x_shape, np.dtype(np.float32), "input"),
        Argument("f", filt.shape, np.dtype(np.float32), "const", np.ascontiguousarray(filt)),
        Argument("b", (shape.f,), np.dtype(np.float32), "const", bias),
        Argument("y", y_shape, np.dtype(np.float32), "output")], threads=threads,
        target=targets.named(target_cpu or None))
    return program, (", ".join(keys) or "generic")


def onnx_conv(shape: ConvShape, weights: np.ndarray, bias: np.ndarray) -> onnx.ModelProto:
    """A one-node ONNX Conv of ``shape``."""
    oh, ow = shape.out_hw
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[shape.kh, shape.kw], group=shape.group,
                            strides=[shape.stride] * 2, pads=list(shape.pads))
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                             [shape.n, shape.c, shape.h, shape.w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [shape.n, shape.f, oh, ow])],
                              [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


# --------------------------------------------------------------------------- the table

@dataclass
class Row:
    shape: ConvShape
    count: int
    key: str
    glow_ms: float
    ort_ms: float
    max_error: float


def _median_ms(fn, warm, budget_s: float, cold: np.ndarray | None) -> float:
    """The median time of ``fn()`` over ``budget_s`` of runs (at least 5). With ``cold`` (a buffer larger than the
    caches), every run is preceded by writing it, then by ``warm()`` (reading the input back in), so that the
    weights come from memory as they do in a network, whose other layers' weights pass through the caches in
    between, while the input is in cache as the layer before left it."""
    times: list[float] = []
    fn()
    spent = 0.0
    while len(times) < 5 or (spent < budget_s and len(times) < 2000):
        if cold is not None:
            cold += 1.0
            warm()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        spent += times[-1] + (0.002 if cold is not None else 0.0)
    return 1e3 * statistics.median(times)


def bench_shape(shape: ConvShape, count: int, threads: int, budget_s: float, cold: np.ndarray | None,
                target_cpu: str = "") -> Row:
    """Both engines on ``shape``; the glow result is checked against onnxruntime's."""
    rng = np.random.default_rng(0)
    weights = (rng.standard_normal((shape.f, shape.c // shape.group, shape.kh, shape.kw)) * 0.1).astype(np.float32)
    bias = rng.standard_normal(shape.f).astype(np.float32)
    x = rng.standard_normal((shape.n, shape.c, shape.h, shape.w)).astype(np.float32)
    t, l, b, r = shape.pads
    padded = np.ascontiguousarray(np.pad(x.transpose(0, 2, 3, 1), [(0, 0), (t, b), (l, r), (0, 0)]))
    program, key = glow_kernel(shape, weights, bias, threads, target_cpu)
    session = _ort_session(onnx_conv(shape, weights, bias), threads)
    want = session.run(None, {"x": x})[0].transpose(0, 2, 3, 1)
    got = program({"x": padded})["y"]
    error = float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30))
    glow_ms = _median_ms(lambda: program({"x": padded}), padded.sum, budget_s, cold)
    ort_ms = _median_ms(lambda: session.run(None, {"x": x}), x.sum, budget_s, cold)
    return Row(shape, count, key, glow_ms, ort_ms, error)


def format_table(rows: list[Row], peak: float) -> str:
    """The rows, then the count-weighted totals; ``peak``: the target ISA's GFLOP/s on the cores used."""
    head = (f"{'conv':<30} {'n':>2} {'tiles':<34} {'glow ms':>8} {'ort ms':>8} {'glow GF/s':>9} {'peak':>5} "
            f"{'ort GF/s':>8} {'glow/ort':>8} {'share':>6} {'err':>8}")
    lines = [head, "-" * len(head)]
    total_glow = sum(r.count * r.glow_ms for r in rows) or 1.0
    for r in rows:
        gflop = r.shape.flops() / 1e9
        lines.append(f"{r.shape.label():<30} {r.count:>2} {r.key[:34]:<34} {r.glow_ms:>8.3f} {r.ort_ms:>8.3f} "
                     f"{gflop / r.glow_ms * 1e3:>9.1f} {gflop / r.glow_ms * 1e5 / peak:>4.0f}% "
                     f"{gflop / r.ort_ms * 1e3:>8.1f} {r.glow_ms / r.ort_ms:>8.2f} "
                     f"{100 * r.count * r.glow_ms / total_glow:>5.1f}% {r.max_error:>8.1e}")
    total_ort = sum(r.count * r.ort_ms for r in rows)
    flops = sum(r.count * r.shape.flops() for r in rows) / 1e9
    lines.append("-" * len(head))
    lines.append(f"{'all (count-weighted)':<30} {sum(r.count for r in rows):>2} {'':<34} {total_glow:>8.3f} "
                 f"{total_ort:>8.3f} {flops / total_glow * 1e3:>9.1f} {flops / total_glow * 1e5 / peak:>4.0f}% "
                 f"{flops / total_ort * 1e3:>8.1f} "
                 f"{total_glow / total_ort:>8.2f}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m glow_mlir.bench_kernels", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help=f"comma-separated model names or .onnx paths (default: {DEFAULT_MODELS})")
    p.add_argument("--threads", type=int, default=1, help="threads of both engines (default 1)")
    p.add_argument("--budget", type=float, default=BUDGET_S,
                   help=f"seconds of timed runs per engine and shape (default {BUDGET_S})")
    p.add_argument("--warm", action="store_true",
                   help="keep the weights in cache between runs (default: evict the caches before each run)")
    p.add_argument("--only", help="run only the shapes whose label contains this text (e.g. '3x3/1 512')")
    p.add_argument("--target-cpu", default="",
                   help="generate glow_mlir's kernels for this CPU (e.g. haswell: AVX2 code, which runs on any "
                        "AVX-512 machine too); default: this machine's")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.threads < 1 or args.budget <= 0:
        raise SystemExit("glow_mlir.bench_kernels: --threads must be at least 1 and --budget above 0")
    directory = models_dir()
    shapes: Counter[ConvShape] = Counter()
    for spec in args.models.split(","):
        shapes.update(conv_shapes(onnx.load(str(_resolve(spec, directory)))))
    selected = [(s, n) for s, n in shapes.items() if args.only is None or args.only in s.label()]
    if not selected:
        what = f" whose label contains {args.only!r}" if args.only is not None else ""
        print(f"glow_mlir.bench_kernels: {args.models} has no 2-D convolution (group 1 or depthwise, equal strides, "
              f"no dilation or auto_pad){what}", file=sys.stderr)
        return 2
    cold = None if args.warm else np.zeros(EVICT_BYTES // 4, np.float32)
    target = named_target(args.target_cpu)
    peak = peak_gflops(target, args.threads)
    print(f"target: {target.describe()}\npeak of its ISA: {peak:.0f} GFLOP/s on {args.threads} core(s) "
          f"({peak_text(target)}); onnxruntime runs its own kernels for this machine")
    rows = []
    for shape, count in selected:
        rows.append(bench_shape(shape, count, args.threads, args.budget, cold, args.target_cpu))
        print(f"  {shape.label()} done", file=sys.stderr, flush=True)
    print(format_table(rows, peak))
    bad = [r for r in rows if r.max_error > 1e-4]
    if bad:
        print(f"\nWRONG RESULTS (relative error above 1e-4): {', '.join(r.shape.label() for r in bad)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
