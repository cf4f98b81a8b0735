"""glowgraph-fold-layer-norm-affine: a constant scale and shift after a layer_norm join its own.

Exporters that write layer normalization out, or that give it no affine parameters and apply them as separate
Mul and Add nodes, leave a multiply and an add over the full output after the normalization. When the factor and
the term vary only along the normalized dims, they fold into the node's scale and bias at compile time:
(n * g + b) * c + d = n * (g * c) + (b * c + d).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects import glowgraph as gg
from .patterns import PatternPass, along, attr, constant, defined_by, known, only_user, replace, shape


def layer_norm_affine(op: ir.Operation) -> bool:
    """Mul(LayerNorm(x, g, b), C) -> LayerNorm(x, g * c, b * c) and Add(LayerNorm(x, g, b), C) ->
    LayerNorm(x, g, b + c), either operand order, for C known and constant along the dims before the axis (c is
    C along the normalized dims); g and b known; the layer_norm feeds only this node."""
    if op.name not in ("glowgraph.mul", "glowgraph.add"):
        return False
    for y, other in ((op.operands[0], op.operands[1]), (op.operands[1], op.operands[0])):
        norm = defined_by(y, "layer_norm")
        if norm is None or not only_user(y, op) or y.type != op.results[0].type:
            continue
        axis = attr(norm, "axis", "i64")
        array, scale, bias = known(other), known(norm.operands[1]), known(norm.operands[2])
        if array is None or scale is None or bias is None:
            continue
        c = along(array, range(axis, array.ndim))
        if c is None:
            continue
        c = c.reshape(shape(y)[axis:])
        if op.name == "glowgraph.mul":
            scale, bias = scale * c, bias * c
        else:
            bias = bias + c
        x = norm.operands[0]
        replace(op, [gg.layer_norm(x, constant(scale), constant(bias), axis=axis, epsilon=norm.attributes["epsilon"])])
        return True
    return False


PATTERNS = (layer_norm_affine,)


@dataclass(frozen=True)
class FoldLayerNormAffine(PatternPass):
    """Add(Mul(LayerNorm(x, g, b), c), d) -> LayerNorm(x, g * c, b * c + d), c and d constants."""

    name = "glowgraph-fold-layer-norm-affine"
    summary = "Fold constant scales and shifts after a layer_norm into its scale and bias"

    patterns = PATTERNS
