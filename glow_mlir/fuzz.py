"""``python -m glow_mlir.fuzz``: differential fuzzing against onnx.reference, and mutated models that must only ever
get typed errors.

- **graphs** (:func:`random_graph`): a chain of 2-8 nodes drawn from the supported op set (elementwise, broadcasting
  binaries, Pow, Where, matmul and Gemm, convolution, pooling, batch and layer normalization, reductions, softmax,
  ArgMax, CumSum, data movement: pads, gathers, tiles, resizes, reshapes), each reading the value
  before it and sometimes an earlier one, with random static shapes and attributes within the schema, weights as
  initializers. Each graph is compiled (on one or two threads, for this host or as AVX2 code, by the seed:
  :func:`code_variant`) and its outputs compared with onnx.reference's (rtol 1e-3, atol 1e-4 times the reduction
  length): a wrong answer, an error other than a clean unsupported, or a crash is a finding.
- **mutations** (:func:`mutate`): a valid model with a field changed (a dim, an attribute, an input name, an op type),
  or its bytes flipped or cut short. Compiling it must succeed or raise one of glow_mlir's typed errors
  (``GlowError``): any other exception, or a crash of the process, is a finding.

Every case is a seed: the same seed gives the same graph or mutation. Cases run in worker processes (a crash costs
one case); findings are written to ``--out`` as ``<kind>-<seed>.onnx`` with a line in ``findings.txt``, to become
regression tests. ``--minutes N`` runs until N minutes have passed; the test suite runs a few seeds of each kind.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
UNARY = ("Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Softsign", "Sin", "Cos", "Floor", "Ceil", "Elu", "Selu",
         "HardSigmoid", "LeakyRelu", "Softplus", "Erf", "Shrink")
BINARY = ("Add", "Sub", "Mul", "Max", "Min")


@dataclass
class _Graph:
    """A graph under construction: its nodes, initializers, and the values so far with their shapes."""

    rng: random.Random
    nodes: list
    weights: list
    values: list  # (name, shape)

    def name(self, base: str) -> str:
        return f"{base}{len(self.nodes)}"

    def weight(self, shape: list[int], scale: float = 0.5) -> str:
        name = f"w{len(self.weights)}"
        data = np.random.default_rng(self.rng.getrandbits(32)).standard_normal(shape) * scale
        self.weights.append(numpy_helper.from_array(data.astype(np.float32), name))
        return name

    def add(self, op: str, inputs: list[str], shape: list[int], **attrs) -> None:
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        self.values.append((out, shape))


def _broadcast_shape(rng: random.Random, shape: list[int]) -> list[int]:
    """A shape that broadcasts against ``shape``: a suffix of it with some dims set to 1."""
    suffix = shape[rng.randrange(len(shape) + 1):]
    return [1 if rng.random() < 0.3 else d for d in suffix] or [1]


def _step(g: _Graph) -> None:
    """Append one node reading the last value (and maybe an earlier one)."""
    rng = g.rng
    x, shape = g.values[-1]
    rank = len(shape)
    choices = ["unary", "binary", "softmax", "reduce", "transpose", "reshape", "concat", "slice", "clip", "pad",
               "gather", "flatten", "unsqueeze", "where", "pow", "layernorm", "tile", "cumsum", "argmax", "exp",
               "compress"]
    if rank >= 2:
        choices += ["reversesequence"]
    if rank == 2:
        choices += ["matmul", "gemm"]
    if rank == 4:
        choices += ["conv", "pool", "batchnorm", "globalpool", "resize"]
    kind = rng.choice(choices)
    if kind == "unary":
        op = rng.choice(UNARY)
        attrs = {"alpha": round(rng.uniform(0.05, 0.5), 3)} if op in ("LeakyRelu", "Elu") else {}
        if op == "Shrink":
            attrs = {"lambd": round(rng.uniform(0.0, 1.0), 3), "bias": round(rng.uniform(-0.5, 0.5), 3)}
        g.add(op, [x], shape, **attrs)
    elif kind == "binary":
        earlier = [v for v in g.values[:-1] if v[1] == shape]
        other = rng.choice(earlier)[0] if earlier and rng.random() < 0.5 else g.weight(_broadcast_shape(rng, shape))
        g.add(rng.choice(BINARY), [x, other] if rng.random() < 0.5 else [other, x], shape)
    elif kind == "softmax":
        g.add(rng.choice(("Softmax", "LogSoftmax")), [x], shape, axis=rng.randrange(-rank, rank))
    elif kind == "reduce":
        axes = sorted(rng.sample(range(rank), rng.randint(1, rank)))
        keep = rng.random() < 0.5
        out = [1 if a in axes else d for a, d in enumerate(shape)] if keep else \
            [d for a, d in enumerate(shape) if a not in axes]
        if not keep and len(axes) == rank:  # a scalar: keep the dims instead, so later nodes have a rank
            keep, out = True, [1] * rank
        op = rng.choice(("ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum"))
        if op == "ReduceSum":  # axes an input from opset 13
            g.add(op, [x, _const_i64(g, axes)], out, keepdims=int(keep))
        else:
            g.add(op, [x], out, axes=axes, keepdims=int(keep))
    elif kind == "transpose":
        perm = list(range(rank))
        rng.shuffle(perm)
        g.add("Transpose", [x], [shape[p] for p in perm], perm=perm)
    elif kind == "reshape":
        total = int(np.prod(shape))
        new = _factor(rng, total)
        g.add("Reshape", [x, _const_i64(g, new)], new)
    elif kind == "concat":
        axis = rng.randrange(rank)
        extra = shape.copy()
        extra[axis] = rng.randint(1, 3)
        out = shape.copy()
        out[axis] += extra[axis]
        g.add("Concat", [x, g.weight(extra)], out, axis=axis)
    elif kind == "slice":
        axis = rng.randrange(rank)
        if shape[axis] < 2:
            g.add("Identity", [x], shape)
            return
        start = rng.randrange(shape[axis] - 1)
        end = rng.randrange(start + 1, shape[axis] + 1)
        out = shape.copy()
        out[axis] = end - start
        g.add("Slice", [x, _const_i64(g, [start]), _const_i64(g, [end]), _const_i64(g, [axis])], out)
    elif kind == "clip":
        lo = rng.uniform(-1.0, 0.0)
        g.add("Clip", [x, _const_f32(g, lo), _const_f32(g, lo + rng.uniform(0.2, 2.0))], shape)
    elif kind == "pad":
        pads = [rng.randint(0, 2) for _ in range(2 * rank)]
        mode = rng.choice(("constant", "edge", "reflect"))
        if mode == "reflect":  # a reflection needs more elements than it pads
            pads = [min(pad, shape[i % rank] - 1) for i, pad in enumerate(pads)]
        out = [d + pads[i] + pads[i + rank] for i, d in enumerate(shape)]
        g.add("Pad", [x, _const_i64(g, pads)], out, mode=mode)
    elif kind == "gather":
        axis = rng.randrange(rank)
        indices = [rng.randrange(-shape[axis], shape[axis]) for _ in range(rng.randint(1, 4))]
        g.add("Gather", [x, _const_i64(g, indices)], shape[:axis] + [len(indices)] + shape[axis + 1:], axis=axis)
    elif kind == "flatten":
        axis = rng.randint(0, rank)
        g.add("Flatten", [x], [int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))], axis=axis)
    elif kind == "unsqueeze":
        if rank < 4:
            axis = rng.randint(0, rank)
            g.add("Unsqueeze", [x, _const_i64(g, [axis])], shape[:axis] + [1] + shape[axis:])
        else:
            g.add("Identity", [x], shape)
    elif kind == "where":
        cond = g.name("greater")
        g.nodes.append(helper.make_node("Greater", [x, _const_f32(g, rng.uniform(-0.5, 0.5))], [cond]))
        g.add("Where", [cond, x, g.weight(_broadcast_shape(rng, shape))], shape)
    elif kind == "pow":
        g.add("Pow", [x, _const_f32(g, float(rng.choice((2, 3))))], shape)
    elif kind == "exp":
        g.add("Exp", [x], shape)
    elif kind == "compress":
        axis = rng.randrange(rank)
        keep = [rng.random() < 0.6 for _ in range(rng.randint(1, shape[axis]))]
        keep[0] = True  # never empty
        name = f"c{len(g.weights)}"
        g.weights.append(numpy_helper.from_array(np.array(keep, np.bool_), name))
        g.add("Compress", [x, name], shape[:axis] + [sum(keep)] + shape[axis + 1:], axis=axis)
    elif kind == "reversesequence":
        batch_axis = rng.randint(0, 1)
        time_axis = 1 - batch_axis
        lens = [rng.randint(0, shape[time_axis]) for _ in range(shape[batch_axis])]
        g.add("ReverseSequence", [x, _const_i64(g, lens)], shape, batch_axis=batch_axis, time_axis=time_axis)
    elif kind == "layernorm":
        axis = rng.randrange(-rank, 0)
        norm = shape[axis:]
        g.add("LayerNormalization", [x, g.weight(norm), g.weight(norm)], shape, axis=axis,
              epsilon=rng.choice((1e-5, 1e-3)))
    elif kind == "tile":
        repeats = [rng.choice((1, 1, 2)) for _ in range(rank)]
        g.add("Tile", [x, _const_i64(g, repeats)], [d * r for d, r in zip(shape, repeats)])
    elif kind == "cumsum":
        axis = rng.randrange(rank)
        axis_name = f"c{len(g.weights)}"
        g.weights.append(numpy_helper.from_array(np.array(axis, np.int64), axis_name))  # a rank-0 axis
        g.add("CumSum", [x, axis_name], shape, exclusive=rng.randint(0, 1), reverse=rng.randint(0, 1))
    elif kind == "argmax":
        axis = rng.randrange(rank)
        arg = g.name("argmax")
        g.nodes.append(helper.make_node("ArgMax", [x], [arg], axis=axis, keepdims=1))
        g.add("Cast", [arg], shape[:axis] + [1] + shape[axis + 1:], to=TensorProto.FLOAT)
    elif kind == "batchnorm":
        c = shape[1]
        scale, bias, mean = g.weight([c]), g.weight([c]), g.weight([c])
        var = _const_f32_array(g, np.abs(np.random.default_rng(rng.getrandbits(32)).standard_normal(c)) + 0.5)
        g.add("BatchNormalization", [x, scale, bias, mean, var], shape, epsilon=1e-5)
    elif kind == "globalpool":
        g.add(rng.choice(("GlobalAveragePool", "GlobalMaxPool")), [x], shape[:2] + [1, 1])
    elif kind == "resize":
        g.add("Resize", [x, "", _const_f32_array(g, np.array([1, 1, 2, 2], np.float32))],
              shape[:2] + [2 * shape[2], 2 * shape[3]], mode="nearest")
    elif kind in ("matmul", "gemm"):
        n = rng.randint(1, 24)
        if kind == "matmul":
            g.add("MatMul", [x, g.weight([shape[1], n], 0.3)], [shape[0], n])
        else:
            trans = rng.random() < 0.5
            w = g.weight([n, shape[1]] if trans else [shape[1], n], 0.3)
            g.add("Gemm", [x, w, g.weight([n])], [shape[0], n], transB=int(trans),
                  alpha=round(rng.uniform(0.5, 1.5), 3))
    elif kind == "conv":
        _, c, h, w = shape
        k = rng.choice((1, 3)) if min(h, w) >= 3 else 1
        f, stride, group = rng.randint(1, 12), rng.choice((1, 2)), rng.choice([d for d in (1, c) if c % d == 0])
        f = f * group if group > 1 else f
        pad = k // 2 if rng.random() < 0.7 else 0
        oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
        g.add("Conv", [x, g.weight([f, c // group, k, k], 0.3), g.weight([f])], [shape[0], f, oh, ow],
              kernel_shape=[k, k], strides=[stride] * 2, pads=[pad] * 4, group=group)
    else:  # pool
        _, c, h, w = shape
        k = 2 if min(h, w) >= 2 else 1
        op = rng.choice(("MaxPool", "AveragePool"))
        g.add(op, [x], [shape[0], c, (h - k) // k + 1, (w - k) // k + 1], kernel_shape=[k, k], strides=[k, k])


def _const_i64(g: _Graph, values: list[int]) -> str:
    name = f"c{len(g.weights)}"
    g.weights.append(numpy_helper.from_array(np.array(values, np.int64), name))
    return name


def _const_f32(g: _Graph, value: float) -> str:
    name = f"c{len(g.weights)}"
    g.weights.append(numpy_helper.from_array(np.array(value, np.float32), name))
    return name


def _const_f32_array(g: _Graph, values: np.ndarray) -> str:
    name = f"c{len(g.weights)}"
    g.weights.append(numpy_helper.from_array(np.asarray(values, np.float32), name))
    return name


def _factor(rng: random.Random, total: int) -> list[int]:
    """A random shape of ``total`` elements, rank 1 to 4."""
    dims, left = [], total
    for _ in range(rng.randint(0, 3)):
        divisors = [d for d in range(2, min(left, 16) + 1) if left % d == 0]
        if not divisors:
            break
        d = rng.choice(divisors)
        dims.append(d)
        left //= d
    dims.append(left)
    rng.shuffle(dims)
    return dims


def random_graph(seed: int) -> onnx.ModelProto:
    """A valid model of 2-8 nodes from the supported op set, with one input; every value computed is an output of
    the last node's chain (the last value and one earlier one are graph outputs)."""
    rng = random.Random(seed)
    rank = rng.choice((2, 2, 3, 4, 4))
    shape = {2: lambda: [rng.randint(1, 6), rng.randint(1, 32)], 3: lambda: [rng.randint(1, 4) for _ in range(3)],
             4: lambda: [1, rng.randint(1, 8), rng.randint(3, 12), rng.randint(3, 12)]}[rank]()
    g = _Graph(rng, [], [], [("x", shape)])
    for _ in range(rng.randint(2, 8)):
        _step(g)
    outputs = [g.values[-1]] + ([g.values[rng.randrange(1, len(g.values) - 1)]] if len(g.values) > 2 else [])
    graph = helper.make_graph(g.nodes, f"fuzz{seed}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n, _ in outputs],
                              g.weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def mutate(model: onnx.ModelProto, seed: int) -> bytes:
    """``model`` serialized with one random change: a dim, an attribute value, an input name or an op type changed,
    or its bytes flipped or cut short (the result may be valid or not)."""
    rng = random.Random(seed)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    kind = rng.choice(("dim", "attr", "input", "op", "flip", "cut"))
    nodes = list(m.graph.node)
    if kind == "dim":
        vi = m.graph.input[0].type.tensor_type.shape.dim
        if len(vi):
            vi[rng.randrange(len(vi))].dim_value = rng.choice((0, 1, 2, 7, 64, -3))
    elif kind == "attr" and nodes:
        node = rng.choice(nodes)
        if node.attribute:
            a = rng.choice(node.attribute)
            if a.type == onnx.AttributeProto.INT:
                a.i = rng.choice((-5, 0, 1, 99, 2**40))
            elif a.type == onnx.AttributeProto.INTS and len(a.ints):
                a.ints[rng.randrange(len(a.ints))] = rng.choice((-7, 0, 1, 50))
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = rng.choice((float("nan"), float("inf"), -1.0, 0.0))
    elif kind == "input" and nodes:
        node = rng.choice(nodes)
        if node.input:
            node.input[rng.randrange(len(node.input))] = rng.choice(("nowhere", "", "x"))
    elif kind == "op" and nodes:
        rng.choice(nodes).op_type = rng.choice(("Conv", "Relu", "NoSuchOp", "Add", "Gemm", "Reshape"))
    data = bytearray(m.SerializeToString())
    if kind == "flip" and data:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif kind == "cut" and data:
        data = data[: rng.randrange(len(data))]
    return bytes(data)


def code_variant(seed: int) -> tuple[int, str]:
    """(threads, target CPU) of graph ``seed``'s code, by the seed: one or two threads, for this host or as AVX2
    code (``haswell``, where this host runs it): the kernels' tiles, masks and tasks differ with both (a transpose's
    masked blocks wrote wrong elements as AVX2 code only)."""
    from .backend import target as targets

    threads = 1 + seed % 2
    avx2 = (seed // 2) % 2 == 1 and not targets.cannot_run(targets.named("haswell"))
    return threads, "haswell" if avx2 else ""


def check_graph(seed: int) -> tuple[str, str]:
    """Compile graph ``seed`` (for :func:`code_variant`) and compare it with onnx.reference: (outcome, detail);
    outcome is "pass", "unsupported" or "finding"."""
    from onnx.reference import ReferenceEvaluator

    import glow_mlir
    from glow_mlir.errors import UnsupportedError

    model = random_graph(seed)
    threads, target_cpu = code_variant(seed)
    code = f"threads={threads}" + (f" target-cpu={target_cpu}" if target_cpu else "")
    x = np.random.default_rng(seed).standard_normal(
        [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]).astype(np.float32)
    try:
        with np.errstate(all="ignore"):
            want = ReferenceEvaluator(model).run(None, {"x": x})
    except Exception as e:  # noqa: BLE001 - the generator made something the reference rejects: not ours to judge
        return "skipped", f"onnx.reference: {type(e).__name__}: {e}"
    if _near_tie(model, x):
        return "skipped", "an ArgMax of values equal up to rounding: either index is right"
    if _flat_normalization(model, x):
        return "skipped", "a LayerNormalization of (nearly) constant values: rounding scaled by 1/sqrt(epsilon)"
    if _large_periodic_argument(model, x):
        return "skipped", (f"a Sin, Cos or Tan of arguments beyond {PERIODIC_LIMIT:g}: the argument's own rounding "
                           "decides the result")
    if not all(np.isfinite(w).all() for w in want):
        # overflow, or the reference's own (its LogSoftmax is log(softmax), -inf where the stable form is finite)
        return "skipped", "onnx.reference's outputs are not all finite"
    try:
        compiled = glow_mlir.compile(model, threads=threads, target_cpu=target_cpu, cache=False)
        got = compiled.run({"x": x})
    except UnsupportedError as e:
        return "unsupported", str(e)
    except Exception as e:  # noqa: BLE001 - anything else is what the fuzzer looks for
        return "finding", f"{code}: {type(e).__name__}: {e}"
    for out, expected in zip(model.graph.output, want, strict=True):
        value = got[out.name]
        # float32 sums of up to a few hundred terms: relative to the largest value
        atol = 1e-4 * max(1.0, float(np.nanmax(np.abs(expected), initial=0.0)))
        if value.shape != expected.shape or not np.allclose(value, expected, rtol=1e-3, atol=atol, equal_nan=True):
            error = float(np.nanmax(np.abs(value - expected))) if value.shape == expected.shape else float("nan")
            return "finding", f"{code}: output '{out.name}' differs from onnx.reference (max abs error {error:.3g})"
    return "pass", ""


def _reference_inputs(model: onnx.ModelProto, x: np.ndarray, op_type: str) -> list[tuple[onnx.NodeProto, np.ndarray]]:
    """Each ``op_type`` node of ``model`` with the value of its first input, as onnx.reference computes it."""
    from onnx.reference import ReferenceEvaluator

    nodes = [n for n in model.graph.node if n.op_type == op_type]
    if not nodes:
        return []
    with np.errstate(all="ignore"):
        values = ReferenceEvaluator(model).run([n.input[0] for n in nodes], {"x": x})
    return list(zip(nodes, values, strict=True))


def _near_tie(model: onnx.ModelProto, x: np.ndarray) -> bool:
    """Whether an ArgMax of ``model`` sees two values within float32 rounding of each other (mathematically equal
    values such as ``LogSoftmax(x) - x`` along its axis), where any engine may pick either index."""
    for node, v in _reference_inputs(model, x, "ArgMax"):
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        top = -np.sort(-v, axis=axis)
        if top.shape[axis] > 1:
            first, second = np.take(top, 0, axis=axis), np.take(top, 1, axis=axis)
            with np.errstate(invalid="ignore"):  # infinities: inf - inf is no tie
                tie = np.any(first - second <= 1e-4 * np.maximum(1.0, np.abs(first)))
            if tie:
                return True
    return False


def _flat_normalization(model: onnx.ModelProto, x: np.ndarray) -> bool:
    """Whether a LayerNormalization of ``model`` normalizes values whose variance is below 1e-4 (a constant row: the
    rounding of its mean, 1e-7 of it, comes out scaled by up to 1/sqrt(epsilon), 316 at 1e-5)."""
    for node, v in _reference_inputs(model, x, "LayerNormalization"):
        axis = next((a.i for a in node.attribute if a.name == "axis"), -1) % v.ndim
        if v.size and np.min(np.var(v.astype(np.float64), axis=tuple(range(axis, v.ndim)))) < 1e-4:
            return True
    return False


#: the largest argument of a Sin, Cos or Tan that the fuzzer compares: an argument's rounding upstream (a few ulps,
#: 2^-21 of it) moves the result by as much, 1e-4 from here on, the comparison's tolerance (cos(exp(exp(x))) at
#: 1.2e10, where an ulp is 1024: any engine's exp decides the cosine)
PERIODIC_LIMIT = 1024.0


def _large_periodic_argument(model: onnx.ModelProto, x: np.ndarray) -> bool:
    """Whether a Sin, Cos or Tan of ``model`` takes an argument beyond :data:`PERIODIC_LIMIT` in magnitude."""
    for op_type in ("Sin", "Cos", "Tan"):
        for _, v in _reference_inputs(model, x, op_type):
            with np.errstate(invalid="ignore"):
                if v.size and np.nanmax(np.abs(v.astype(np.float64))) > PERIODIC_LIMIT:
                    return True
    return False


def check_mutation(seed: int, base: int) -> tuple[str, str]:
    """Compile the mutation ``seed`` of graph ``base``: (outcome, detail); "pass" when it compiles or raises a
    GlowError, "finding" for any other exception."""
    import tempfile

    import glow_mlir
    from glow_mlir.errors import GlowError

    data = mutate(random_graph(base), seed)
    with tempfile.TemporaryDirectory(prefix="glow-fuzz-") as tmp:
        path = Path(tmp) / f"mutation{seed}.onnx"
        path.write_bytes(data)  # loaded as a user's file is: the loader's own checks included
        try:
            glow_mlir.compile(str(path), threads=1, cache=False)
        except GlowError as e:
            return "pass", f"{type(e).__name__}: {e}"
        except Exception as e:  # noqa: BLE001
            return "finding", f"{type(e).__name__}: {e} ({traceback.format_exc(limit=-1).strip().splitlines()[-2]})"
    return "pass", "compiled"


def _run(job: tuple[str, int, int]) -> tuple[str, int, int, str, str]:
    kind, seed, base = job
    outcome, detail = check_graph(seed) if kind == "graph" else check_mutation(seed, base)
    return kind, seed, base, outcome, detail


def run(seeds: list[tuple[str, int, int]], timeout: float, out: Path | None) -> dict[str, int]:
    """Run the cases in a worker process (a crash or a hang costs one case: the worker is replaced); write each
    finding to ``out``. Returns the count of each outcome."""
    counts: dict[str, int] = {}
    ctx = multiprocessing.get_context("forkserver")
    pool = None
    try:
        for kind, seed, base in seeds:
            pool = pool or ctx.Pool(1)
            try:
                _, _, _, outcome, detail = pool.apply_async(_run, ((kind, seed, base),)).get(timeout)
            except multiprocessing.TimeoutError:  # a hang, or the worker died (an abort in MLIR, a segfault)
                outcome, detail = "finding", f"no result in {timeout:.0f} s: the worker hung or crashed"
                pool.terminate()
                pool = None
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome == "finding":
                _report(kind, seed, base, detail, out)
    finally:
        if pool is not None:
            pool.terminate()
    return counts


def _report(kind: str, seed: int, base: int, detail: str, out: Path | None) -> None:
    print(f"finding: {kind} seed {seed}{f' of graph {base}' if kind != 'graph' else ''}: {detail}", flush=True)
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    case = random_graph(seed) if kind == "graph" else mutate(random_graph(base), seed)
    path = out / f"{kind}-{seed}.onnx"
    path.write_bytes(case.SerializeToString() if isinstance(case, onnx.ModelProto) else case)
    with (out / "findings.txt").open("a") as f:
        f.write(f"{path.name}: {detail}\n")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m glow_mlir.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=1.0, help="run this long (default 1)")
    p.add_argument("--seed", type=int, default=None, help="first seed (default: from the clock)")
    p.add_argument("--mutations", type=float, default=0.3, help="share of cases that are mutations (default 0.3)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds a case may take (default 60)")
    p.add_argument("--out", type=Path, default=Path("fuzz-findings"), help="where findings go")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    seed = args.seed if args.seed is not None else int(time.time())
    deadline = time.monotonic() + args.minutes * 60
    totals: dict[str, int] = {}
    rng = random.Random(seed)
    n = 0
    while time.monotonic() < deadline:
        cases = [("mutation" if rng.random() < args.mutations else "graph", seed + n + i, rng.randrange(1 << 30))
                 for i in range(8)]
        for k, v in run(cases, args.timeout, args.out).items():
            totals[k] = totals.get(k, 0) + v
        n += len(cases)
    print(f"{n} cases from seed {seed}: " + ", ".join(f"{v} {k}" for k, v in sorted(totals.items())))
    return 1 if totals.get("finding") else 0


if __name__ == "__main__":
    sys.exit(main())
