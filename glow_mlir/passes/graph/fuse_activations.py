"""glowgraph-fuse-activations: a relu or clip after a convolution or fully connected node becomes its fused
activation, for the node kinds the backend says can apply one (backend/cpu.py; Glow's supportsFusedActivation).

The kernel applies the activation to its result while it is still in cache, in place: no separate pass over the
activations and no instruction between the two. Only when the node feeds nothing else, whose unactivated result
would otherwise still be needed.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects import glowgraph as gg
from ..registry import Pass
from ..utils import functions
from .patterns import apply_patterns, defined_by, only_user, producer, replace, shape

_ACTIVATIONS = ("glowgraph.relu", "glowgraph.clip")


def fuse_activation(op: ir.Operation, nodes: frozenset[str]) -> bool:
    """Relu(Node(..)) -> Node(..){activation relu}; Clip(Node(..)){min, max} -> Node(..){activation clip, min, max};
    also through a reshape between them (Relu(Reshape(Node)) -> Reshape(Node{relu}), the batch dims of a 3-D
    product put back); for a Node whose kind is in ``nodes``, with no activation yet, that feeds only the
    activation (or the reshape, which feeds only the activation)."""
    if op.name not in _ACTIVATIONS:
        return False
    value, view = op.operands[0], defined_by(op.operands[0], "reshape")
    if view is not None:
        if not only_user(value, op):
            return False
        value = view.operands[0]
    node = producer(value)
    if node is None or not node.name.startswith("glowgraph.") or node.name.split(".", 1)[1] not in nodes:
        return False
    if "activation" in node.attributes or not only_user(value, view if view is not None else op):
        return False
    attrs = dict(node.attributes.items())
    if op.name == "glowgraph.relu":
        attrs["activation"] = "relu"
    else:
        attrs.update(activation="clip", activation_min=op.attributes["min"], activation_max=op.attributes["max"])
    fused = getattr(gg, node.name.split(".", 1)[1])(*node.operands, **attrs)
    replace(op, [gg.reshape(fused, shape=shape(op.results[0])) if view is not None else fused])
    return True


@dataclass(frozen=True)
class FuseActivations(Pass):
    """Relu(Conv2d(x, w, b)) -> Conv2d(x, w, b){activation relu}; Clip(FullyConnected(..)) -> FullyConnected(..)
    {activation clip}; for the node kinds in ``nodes`` (none by default: the backend names them)."""

    name = "glowgraph-fuse-activations"
    summary = "Fuse relu and clip into the preceding conv2d or fully_connected, for the kinds the backend lists"
    nodes: tuple[str, ...] = ()

    def run(self, module: ir.Operation) -> None:
        nodes = frozenset(self.nodes)
        for func in functions(module):
            apply_patterns(func, [lambda op: fuse_activation(op, nodes)])
