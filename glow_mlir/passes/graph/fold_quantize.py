"""glowgraph-fold-quantize: remove what quantization left redundant between int8 nodes (Glow's optimizations of a
quantized graph), so that a chain of int8 nodes runs in int8 from its first quantize to its last dequantize:

- ``quantize(dequantize(q))`` -> ``q`` when the parameters agree, else ``rescale(q)``;
- ``dequantize(quantize(x))`` stays (Glow removes it): it is the rounding a QDQ model asks for on a value a float
  node reads, and glowgraph-quantize makes no such pair of its own;
- a dequantize sinks below ``reshape``, ``transpose`` and ``max_pool``, and below ``relu`` (which becomes the clamp
  of a rescale to the same parameters), so that the pairs above meet;
- ``rescale`` into the int8 node before it (qconv2d, qfully_connected, qadd, when the rescale is its only user): one
  requantization with the multipliers scaled, the new offset, and both clamps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.quantized import QMAX, QMIN, ratio
from .patterns import PatternPass, attr, defined_by, only_user, producer, replace


def _params(op: ir.Operation, prefix: str = "") -> tuple[float, int]:
    """(scale, offset) of a node's attributes ``<prefix>scale`` and ``<prefix>offset``, the scale as float32."""
    return float(np.float32(attr(op, prefix + "scale", "f32"))), attr(op, prefix + "offset", "i64")


def quantize_of_dequantize(op: ir.Operation) -> bool:
    """quantize(dequantize(q)) -> q, or rescale(q) under other parameters."""
    if op.name != "glowgraph.quantize":
        return False
    dq = defined_by(op.operands[0], "dequantize")
    if dq is None:
        return False
    source, target = _params(dq), _params(op)
    if source == target:
        replace(op, [dq.operands[0]])
    else:
        replace(op, [gg.rescale(dq.operands[0], input_scale=source[0], input_offset=source[1], scale=target[0],
                                offset=target[1], output_min=QMIN, output_max=QMAX)])
    return True


#: nodes a dequantize moves below unchanged: each computes on int8 what it computes on the reals
_SINKS = ("glowgraph.reshape", "glowgraph.transpose", "glowgraph.max_pool")


def sink_dequantize(op: ir.Operation) -> bool:
    """view(dequantize(q)) -> dequantize(view(q)) for the views and max_pool; relu(dequantize(q)) ->
    dequantize(rescale(q){clamped at the offset}); when the dequantize feeds only ``op``."""
    if op.name not in (*_SINKS, "glowgraph.relu"):
        return False
    dq = defined_by(op.operands[0], "dequantize")
    if dq is None or not only_user(op.operands[0], op):
        return False
    scale, offset = _params(dq)
    q = dq.operands[0]
    if op.name == "glowgraph.relu":
        moved = gg.rescale(q, input_scale=scale, input_offset=offset, scale=scale, offset=offset,
                           output_min=max(QMIN, offset), output_max=QMAX)
    else:
        attrs = dict(op.attributes.items())
        moved = getattr(gg, op.name.split(".", 1)[1])(q, **attrs)
    replace(op, [gg.dequantize(moved, scale=scale, offset=offset)])
    return True


def _mapped(q: int, source: tuple[float, int], target: tuple[float, int]) -> int:
    """The int8 code under ``target`` of the code ``q`` under ``source``, saturated."""
    return int(min(max(round((q - source[1]) * source[0] / target[0]) + target[1], QMIN), QMAX))


def rescale_into_producer(op: ir.Operation) -> bool:
    """rescale(node(..)) -> node'(..): the node's result parameters become the rescale's, its clamp the two clamps
    met; for qconv2d, qfully_connected and qadd feeding only the rescale."""
    if op.name != "glowgraph.rescale":
        return False
    node = producer(op.operands[0])
    if node is None or node.name not in ("glowgraph.qconv2d", "glowgraph.qfully_connected", "glowgraph.qadd") \
            or not only_user(op.operands[0], op):
        return False
    source, target = _params(op, "input_"), _params(op)
    if attr(node, "offset", "i64") != source[1]:
        return False  # the rescale reads the node's codes under other parameters: not this node's result
    attrs = dict(node.attributes.items())
    lo = max(attr(op, "output_min", "i64"), _mapped(attr(node, "output_min", "i64"), source, target))
    hi = min(attr(op, "output_max", "i64"), _mapped(attr(node, "output_max", "i64"), source, target))
    if lo > hi:
        return False
    attrs.update(offset=target[1], output_min=lo, output_max=hi)
    if node.name == "glowgraph.qadd":
        if source[0] != float(np.float32(attr(node, "scale", "f32"))):
            return False
        attrs["scale"] = target[0]
    else:
        factor = float(ratio(source[0], target[0]))
        attrs["multipliers"] = [m * factor for m in attr(node, "multipliers", "f32s")]
    replace(op, [getattr(gg, node.name.split(".", 1)[1])(*node.operands, **attrs)])
    return True


@dataclass(frozen=True)
class FoldQuantize(PatternPass):
    """quantize(dequantize(q)) -> q or a rescale; dequantize sunk below views, max_pool and relu; a rescale merged
    into the int8 node before it."""

    name = "glowgraph-fold-quantize"
    summary = "Remove the quantize/dequantize pairs and rescales between int8 nodes"
    patterns = (quantize_of_dequantize, sink_dequantize, rescale_into_producer)
