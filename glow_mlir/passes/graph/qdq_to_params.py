"""glowgraph-qdq-to-params: the QuantizeLinear -> DequantizeLinear pairs of an ONNX QDQ model (onnxruntime's
``quantize_static``) become the quantization parameters of the value they quantize, so that glowgraph-quantize makes
int8 islands of the nodes between them instead of running them in float on dequantized values.

The importer computes such a pair in float32 and int32 (importer/handlers/quantize.py)::

    y = mul(cast_f32(wrap(cast_i32(clip(add(round(div(x, S)), Z), lo, hi)))) - Z, S)

(``add``/``sub`` of a zero point of 0 folded away; ``wrap`` the masking of uint8 or the round trip through i8 of
int8, no-ops after the clip). A pair with one scale S and one zero point Z for the whole tensor and the range of
uint8 ([0, 255]) or int8 ([-128, 127]) is recognised bottom-up from its ``mul`` and becomes ``dequantize(quantize
x)`` with scale S and offset Z - 128 for uint8 (the same grid of values in int8) or Z; its parameters also go onto
the node that computes ``x`` (or its function argument) and onto the dequantize as ``glowgraph.qparams``. The nodes
the pairs surround then become int8 nodes as from a profile, glowgraph-fold-quantize removes the pairs between them,
and a pair read by a node that stays float keeps its rounding. A value quantized by two pairs of different parameters
keeps the second as float arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects import glowgraph as gg
from ..registry import Pass
from ..utils import functions, graph_ops
from .patterns import defined_by, producer, uniform
from .quantize import QPARAMS_ATTR, params_attr, read_params, set_argument_params

#: the integer ranges a pair may clip to, and the offset that maps its zero point onto int8
_RANGES = {(0.0, 255.0): -128, (-128.0, 127.0): 0}


def _element(value: ir.Value) -> str:
    return str(ir.ShapedType(value.type).element_type)


def _unwrap(value: ir.Value) -> ir.Value:
    """``value`` without the wrap of a narrow integer store: ``and(v, 255)``, ``cast_i32(cast_i8(v))``."""
    op = producer(value)
    if op is None:
        return value
    if op.name == "glowgraph.and" and uniform(op.operands[1]) == 255:
        return op.operands[0]
    if op.name == "glowgraph.cast" and _element(value) == "i32":
        inner = defined_by(op.operands[0], "cast")
        if inner is not None and _element(op.operands[0]) == "i8" and _element(inner.operands[0]) == "i32":
            return inner.operands[0]
    return value


def match_pair(op: ir.Operation) -> tuple[ir.Value, float, int] | None:
    """(x, scale, int8 offset) when ``op`` is the ``mul`` that ends a per-tensor Q -> DQ pair of x, else None."""
    if op.name != "glowgraph.mul":
        return None
    scale = uniform(op.operands[1])
    if scale is None or not scale > 0:
        return None
    value, zero = op.operands[0], 0.0
    sub = defined_by(value, "sub")
    if sub is not None:
        zero = uniform(sub.operands[1])
        if zero is None:
            return None
        value = sub.operands[0]
    to_float = defined_by(value, "cast")
    if to_float is None or _element(to_float.operands[0]) != "i32":
        return None
    to_int = defined_by(_unwrap(to_float.operands[0]), "cast")
    clip = defined_by(to_int.operands[0], "clip") if to_int is not None else None
    if clip is None:
        return None
    bounds = (float(ir.FloatAttr(clip.attributes["min"]).value), float(ir.FloatAttr(clip.attributes["max"]).value))
    if bounds not in _RANGES:
        return None
    value = clip.operands[0]
    if zero:
        add = defined_by(value, "add")
        if add is None or uniform(add.operands[1]) != zero:
            return None
        value = add.operands[0]
    rounded = defined_by(value, "round")
    div = defined_by(rounded.operands[0], "div") if rounded is not None else None
    if div is None or uniform(div.operands[1]) != scale:
        return None
    return div.operands[0], float(scale), round(zero) + _RANGES[bounds]


@dataclass(frozen=True)
class QdqToParams(Pass):
    """Per-tensor QuantizeLinear -> DequantizeLinear pairs (as imported) become ``glowgraph.qparams`` on the value
    they quantize, which then replaces them."""

    name = "glowgraph-qdq-to-params"
    summary = "ONNX QDQ pairs -> quantization parameters (glowgraph.qparams) of the value they quantize"

    def run(self, module: ir.Operation) -> None:
        with module.context:
            for func in functions(module):
                self._run_on(func)

    def _run_on(self, func: ir.Operation) -> None:
        arguments = list(func.regions[0].blocks[0].arguments)
        arg_params: dict[int, tuple[float, int]] = {}
        for op in graph_ops(func):
            found = match_pair(op)
            if found is None:
                continue
            x, scale, offset = found
            source = producer(x)
            if source is None:
                if x not in arguments:
                    continue  # an argument of a loop body: left as float arithmetic
                index = arguments.index(x)
                if arg_params.setdefault(index, (scale, offset)) != (scale, offset):
                    continue
            elif QPARAMS_ATTR in source.attributes:
                if read_params(source.attributes[QPARAMS_ATTR]) != (scale, offset):
                    continue
            elif len(source.results) == 1 and source.name.startswith("glowgraph."):
                source.attributes[QPARAMS_ATTR] = params_attr((scale, offset))
            else:
                continue
            with ir.InsertionPoint(op), op.location:
                pair = gg.dequantize(gg.quantize(x, scale=scale, offset=offset), scale=scale, offset=offset)
            pair.owner.attributes[QPARAMS_ATTR] = params_attr((scale, offset))
            op.results[0].replace_all_uses_with(pair)
        if arg_params:
            set_argument_params(func, arg_params)

