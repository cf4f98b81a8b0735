"""glowgraph-quantize: float nodes whose values have quantization parameters become int8 nodes between a quantize
and a dequantize (Glow's quantization of the graph from a profile).

The parameters come as attributes: ``glowgraph.qparams = array<f64: scale, offset>`` on a node (for its result) or
on a function argument, put there from a profile (:mod:`glow_mlir.quantization.annotate`) or written by hand. A node
is quantized when its result and its float inputs all have parameters and its weights are constants, unless it has
the unit attribute ``glowgraph.keep_float``:

- ``conv2d`` -> ``quantize -> qconv2d -> dequantize``; ``fully_connected`` and ``matmul`` by a constant matrix ->
  ``qfully_connected``. Weights int8 with offset 0 (symmetric: the larger magnitude maps to 127), one scale per
  output channel with ``channelwise`` or one for all; the bias int32 with scale ``input_scale * weight_scale`` and the
  input's zero point folded in (``bias - input_offset * sum(weights)`` per output channel), so that the kernel
  multiplies the raw int8 input; a fused relu or clip becomes the clamp of the result;
- ``add`` of two quantized values -> ``qadd``; ``relu`` and ``clip`` -> ``rescale`` with a clamp;
- ``max_pool`` -> an int8 max_pool on the input's parameters (max commutes with quantization);
- ``avg_pool`` whose windows all count alike -> a depthwise ``qconv2d`` of ones requantized by ``1 / count``;
- ``concat`` -> an int8 concat in the result's parameters, each side quantized (rescaled) to them; the inner
  concats of a chain (an ONNX Concat of more than two inputs) take the parameters of the chain's result.

Every ``glowgraph.qparams`` and ``glowgraph.keep_float`` is removed afterwards. The dequantize -> quantize pairs left between two int8 nodes are
glowgraph-fold-quantize's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.cnn_numpy import pool_counts
from ...dialects.quantized import QMAX, QMIN
from ...dialects.shapes import window_output_size
from ..registry import Pass
from ..utils import functions, graph_ops
from .patterns import attr, constant, known, producer, replace

#: the attribute carrying a value's (scale, offset)
QPARAMS_ATTR = "glowgraph.qparams"
#: the attribute of a node left in float whatever its values' parameters (Glow's keep-original-precision)
KEEP_FLOAT_ATTR = "glowgraph.keep_float"
#: the multipliers a 31-bit fixed-point rescale holds (dialects/quantized.py)
_MULTIPLIER_RANGE = (2.0 ** -30, 2.0 ** 29)

Params = tuple[float, int]
#: nodes whose result holds their input's values: it has the input's parameters (and computes the same ONNX value)
VIEWS = ("glowgraph.reshape", "glowgraph.transpose")


def read_params(attribute: ir.Attribute) -> Params:
    values = list(ir.DenseF64ArrayAttr(attribute))
    return float(values[0]), int(values[1])


def params_attr(params: Params) -> ir.Attribute:
    return ir.DenseF64ArrayAttr.get([float(params[0]), float(params[1])])


def set_argument_params(func: ir.Operation, found: dict[int, Params]) -> None:
    """Put ``glowgraph.qparams`` on the arguments of ``func`` at the indices of ``found``."""
    count = len(func.regions[0].blocks[0].arguments)
    existing = list(ir.ArrayAttr(func.attributes["arg_attrs"])) if "arg_attrs" in func.attributes else \
        [ir.DictAttr.get({})] * count
    updated = []
    for index, attrs in enumerate(existing):
        entries = {n.name: n.attr for n in ir.DictAttr(attrs)}
        if index in found:
            entries[QPARAMS_ATTR] = params_attr(found[index])
        updated.append(ir.DictAttr.get(entries))
    func.attributes["arg_attrs"] = ir.ArrayAttr.get(updated)


def _q(value: float, params: Params) -> int:
    """The int8 code of the real ``value``, saturated."""
    return int(min(max(round(value / params[0]) + params[1], QMIN), QMAX))


def _clamp(op: ir.Operation, params: Params) -> tuple[int, int]:
    """The int8 bounds of a node's fused activation under its result's ``params``."""
    kind = attr(op, "activation", "str") or "none"
    if kind == "relu":
        return max(QMIN, params[1]), QMAX
    if kind == "clip":
        return _q(attr(op, "activation_min", "f32"), params), _q(attr(op, "activation_max", "f32"), params)
    return QMIN, QMAX


def _symmetric(weights: np.ndarray, axis: int | None) -> tuple[np.ndarray, np.ndarray]:
    """int8 weights with offset 0 and their scales: one per entry of ``axis`` (the output channels), or one."""
    magnitude = np.abs(weights.astype(np.float64))
    if axis is None:
        top = np.full(weights.shape[-1], magnitude.max(initial=0.0))
    else:
        top = magnitude.reshape(-1, weights.shape[-1]).max(axis=0)
    scales = np.where(top > 0, top / QMAX, 1.0)
    q = np.clip(np.rint(weights / scales), -QMAX, QMAX).astype(np.int8)
    return q, scales


@dataclass(frozen=True)
class Quantize(Pass):
    """conv2d, fully_connected, matmul, add, relu, clip, max_pool, avg_pool and concat nodes whose values carry
    ``glowgraph.qparams`` become int8 nodes between quantize and dequantize; weights per output channel with
    ``channelwise``."""

    name = "glowgraph-quantize"
    summary = "Quantize the float nodes whose values have quantization parameters (glowgraph.qparams) to int8"
    channelwise: bool = False

    def run(self, module: ir.Operation) -> None:
        with module.context:
            for func in functions(module):
                self._run_on(func)

    def _run_on(self, func: ir.Operation) -> None:
        params = self._argument_params(func)
        for op in graph_ops(func):
            if QPARAMS_ATTR in op.attributes and len(op.results) == 1:
                params[op.results[0]] = read_params(op.attributes[QPARAMS_ATTR])
        for op in reversed(graph_ops(func)):  # an ONNX Concat of n inputs is a chain of n - 1 binary concats
            if op.name == "glowgraph.concat" and op.results[0] in params:
                for x in op.operands:
                    inner = producer(x)
                    if inner is not None and inner.name == "glowgraph.concat" and x not in params \
                            and len(list(x.uses)) == 1:
                        params[x] = params[op.results[0]]
        for op in graph_ops(func):
            if op.name in VIEWS and op.operands[0] in params:  # the same values: the same parameters
                params.setdefault(op.results[0], params[op.operands[0]])
            elif op.name.startswith("glowgraph.") and KEEP_FLOAT_ATTR not in op.attributes:
                with ir.InsertionPoint(op), op.location:
                    self._quantize(op, params)
        for op in graph_ops(func):
            for name in (QPARAMS_ATTR, KEEP_FLOAT_ATTR):
                if name in op.attributes:
                    del op.attributes[name]

    @staticmethod
    def _argument_params(func: ir.Operation) -> dict[ir.Value, Params]:
        """The parameters of the arguments that carry them (the attribute then dropped)."""
        found: dict[ir.Value, Params] = {}
        if "arg_attrs" not in func.attributes:
            return found
        kept = []
        for arg, attrs in zip(func.regions[0].blocks[0].arguments, ir.ArrayAttr(func.attributes["arg_attrs"])):
            entries = {n.name: n.attr for n in ir.DictAttr(attrs)}
            if QPARAMS_ATTR in entries:
                found[arg] = read_params(entries.pop(QPARAMS_ATTR))
            kept.append(ir.DictAttr.get(entries))
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(kept)
        return found

    def _quantize(self, op: ir.Operation, params: dict[ir.Value, Params]) -> None:
        kind = op.name.split(".", 1)[1]
        out = params.get(op.results[0]) if len(op.results) == 1 else None
        if kind == "max_pool" and op.operands[0] in params and _is_f32(op.operands[0]):
            p = params[op.operands[0]]
            pooled = gg.max_pool(self._quantized(op.operands[0], p), **_table_attrs(op))
            _replace(op, pooled, p, params)
            return
        if out is None or not _is_f32(op.results[0]):
            return
        if kind in ("conv2d", "fully_connected", "matmul"):
            self._contraction(op, kind, params, out)
        elif kind == "add" and all(x in params for x in op.operands):
            lhs, rhs = (params[x] for x in op.operands)
            y = gg.qadd(self._quantized(op.operands[0], lhs), self._quantized(op.operands[1], rhs),
                        lhs_scale=lhs[0], lhs_offset=lhs[1], rhs_scale=rhs[0], rhs_offset=rhs[1], scale=out[0],
                        offset=out[1], output_min=QMIN, output_max=QMAX)
            _replace(op, y, out, params)
        elif kind == "avg_pool" and op.operands[0] in params:
            self._average(op, params, out)
        elif kind == "concat" and all(x in params for x in op.operands):
            # both sides in the result's parameters (a rescale where theirs differ, which glowgraph-fold-quantize
            # merges into the int8 node that made the side), then joined as int8
            y = gg.concat(*(self._quantized(x, out) for x in op.operands), **_table_attrs(op))
            _replace(op, y, out, params)
        elif kind in ("relu", "clip") and op.operands[0] in params:
            p = params[op.operands[0]]
            if kind == "relu":
                lo, hi = max(QMIN, out[1]), QMAX
            else:
                lo, hi = _q(attr(op, "min", "f32"), out), _q(attr(op, "max", "f32"), out)
            y = gg.rescale(self._quantized(op.operands[0], p), input_scale=p[0], input_offset=p[1], scale=out[0],
                           offset=out[1], output_min=lo, output_max=hi)
            _replace(op, y, out, params)

    def _contraction(self, op: ir.Operation, kind: str, params: dict[ir.Value, Params], out: Params) -> None:
        x = op.operands[0]
        weights = known(op.operands[1])
        bias = known(op.operands[2]) if kind != "matmul" else None
        if x not in params or weights is None or (kind != "matmul" and bias is None):
            return
        if weights.ndim != (4 if kind == "conv2d" else 2) or (kind != "conv2d" and len(_shape(x)) != 2):
            return  # a packed layout, or a batched product
        p = params[x]
        qw, w_scales = _symmetric(np.asarray(weights, np.float64), -1 if self.channelwise else None)
        channels = weights.shape[-1]
        b = np.zeros(channels) if bias is None else np.asarray(bias, np.float64)
        bias_scales = p[0] * w_scales
        correction = p[1] * qw.astype(np.int64).reshape(-1, channels).sum(axis=0)
        qb = np.clip(np.rint(b / bias_scales) - correction, -(2**31), 2**31 - 1).astype(np.int32)
        multipliers = (bias_scales / out[0]).astype(np.float32)
        if not all(_MULTIPLIER_RANGE[0] < m < _MULTIPLIER_RANGE[1] for m in multipliers):
            return  # a degenerate scale: the node stays float
        lo, hi = _clamp(op, out) if kind != "matmul" else (QMIN, QMAX)
        requant = {"multipliers": [float(m) for m in multipliers] if self.channelwise else [float(multipliers[0])],
                   "offset": out[1], "output_min": lo, "output_max": hi}
        qx = self._quantized(x, p)
        if kind == "conv2d":
            y = gg.qconv2d(qx, constant(qw), constant(qb), strides=attr(op, "strides", "i64s"),
                           pads=attr(op, "pads", "i64s"), dilations=attr(op, "dilations", "i64s"),
                           group=attr(op, "group", "i64"), input_offset=p[1], **requant)
        else:
            y = gg.qfully_connected(qx, constant(qw), constant(qb), **requant)
        _replace(op, y, out, params)

    def _average(self, op: ir.Operation, params: dict[ir.Value, Params], out: Params) -> None:
        """avg_pool whose windows all count alike -> a depthwise qconv2d of ones: the sum of each window of
        ``x - input_offset`` (the pads at the zero point: 0 in real terms, as count_include_pad counts them), rescaled
        by ``input_scale / (scale * count)``."""
        x, p = op.operands[0], params[op.operands[0]]
        _, h, w, c = _shape(x)
        kernels, strides = attr(op, "kernels", "i64s"), attr(op, "strides", "i64s")
        pads, dilations = attr(op, "pads", "i64s"), attr(op, "dilations", "i64s")
        counts = pool_counts([h, w], kernels, strides, pads, dilations, _shape(op.results[0])[1:3],
                             bool(attr(op, "count_include_pad", "i64")))
        size = kernels[0] * kernels[1]
        windows = [window_output_size(extent, k, s, lo, hi, d)
                   for extent, lo, hi, k, s, d in zip([h, w], pads[:2], pads[2:], kernels, strides, dilations)]
        if windows != _shape(op.results[0])[1:3] or np.any(counts != size):
            return  # partial windows (ceil_mode) or windows counting their pads out: stays float
        multiplier = float(np.float32(p[0] / (out[0] * size)))
        if not _MULTIPLIER_RANGE[0] < multiplier < _MULTIPLIER_RANGE[1]:
            return
        ones = constant(np.ones((kernels[0], kernels[1], 1, c), np.int8))
        bias = constant(np.full(c, -p[1] * size, np.int32))
        y = gg.qconv2d(self._quantized(x, p), ones, bias, strides=strides, pads=pads, dilations=dilations, group=c,
                       input_offset=p[1], multipliers=[multiplier], offset=out[1], output_min=QMIN, output_max=QMAX)
        _replace(op, y, out, params)

    @staticmethod
    def _quantized(value: ir.Value, p: Params) -> ir.Value:
        """``value`` quantized by ``p``: the int8 value it was dequantized from when the parameters agree."""
        source = producer(value)
        if source is not None and source.name == "glowgraph.dequantize" and \
                (float(np.float32(attr(source, "scale", "f32"))), attr(source, "offset", "i64")) == \
                (float(np.float32(p[0])), p[1]):
            return source.operands[0]
        return gg.quantize(value, scale=p[0], offset=p[1])


def _replace(op: ir.Operation, q: ir.Value, p: Params, params: dict[ir.Value, Params]) -> None:
    """``op`` replaced by the dequantized int8 ``q``, whose parameters ``p`` later nodes look up."""
    y = gg.dequantize(q, scale=p[0], offset=p[1])
    params.pop(op.results[0], None)  # the erased value's key could come back as a new value's
    params[y] = p
    replace(op, [y])


def _is_f32(value: ir.Value) -> bool:
    return isinstance(ir.ShapedType(value.type).element_type, ir.F32Type)


def _shape(value: ir.Value) -> list[int]:
    return list(ir.ShapedType(value.type).shape)


def _table_attrs(op: ir.Operation) -> dict[str, ir.Attribute]:
    """The attributes of ``op`` its table declares (not the qparams annotation)."""
    return {name: value for name, value in op.attributes.items() if not name.startswith("glowgraph.")}
