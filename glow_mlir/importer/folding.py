"""Static evaluation at import: which ONNX values are known before any IR is built, and their computation.

Models exported from PyTorch compute their static shapes at run time: ``Shape -> Gather -> Unsqueeze -> Concat ->
Reshape``, ``Mod``, ``Cast``, ``Slice``, ``Range``, ``ConstantOfShape``... With static input shapes every such chain
is a function of known values only, so the importer evaluates it in numpy and the graph never sees it.

Known values: initializers and Constant outputs; the output of Shape and Size whatever their input (every tensor
has a static shape here); and every output of a deterministic default-domain node whose inputs are all known
(a *static* node). :func:`plan_folding` finds them from the graph's structure alone, before shapes are resolved, so
the unsupported-op report can leave out what needs no code: a static node is evaluated with the op's reference
implementation from ``onnx.reference`` (:func:`evaluate`), whether or not glow_mlir has a handler for it.

At import (see ``builder._Importer``), a static node is evaluated when it must be (no handler can build it, or
an evaluated node needs its value) or when it pays: its outputs feed other nodes and hold at most
:data:`FOLD_MAX_ELEMENTS` elements each. Otherwise its handler builds it from constants, and the optimizer decides
(a node feeding only graph outputs would trade its compute for a copy into the output, and a huge result would
bloat the IR). Handlers registered with ``folds=True`` (Constant, Shape, ConstantOfShape, data movement) make
known tensors from known inputs themselves, keeping a weight's name and a fill's splat form.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator
from onnx.reference.ops import load_op

#: A static node whose outputs feed other nodes is evaluated at import if each holds at most this many elements.
FOLD_MAX_ELEMENTS = 1 << 20

#: Ops whose output is known from their input's static shape alone.
SHAPE_OPS = frozenset({"Shape", "Size"})

#: Ops never evaluated at import: their results change from one run to the next.
_NONDETERMINISTIC = frozenset(
    {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}
)

_DEFAULT_DOMAINS = ("", "ai.onnx")


@dataclass(frozen=True)
class FoldPlan:
    """What static evaluation will do to a graph, decided from its structure."""

    #: names of the ONNX values known at import
    known: frozenset[str]
    #: positions (in the topological order) of the static nodes: every output known at import
    static: frozenset[int]
    #: positions of the static nodes that must be evaluated: no handler can build them (the import walk does not even
    #: try), or an evaluated node needs their value
    required: frozenset[int]
    #: how many nodes read each value, in their subgraphs included (graph outputs not counted)
    readers: dict[str, int]


def subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    """The graphs a node holds (If's branches, Loop's and Scan's bodies)."""
    return [g for a in node.attribute for g in ([a.g] if a.HasField("g") else []) + list(a.graphs)]


def nested_nodes(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """The nodes of ``graph`` and of all the subgraphs in it, all depths."""
    found = []
    for node in graph.node:
        found.append(node)
        for sub in subgraphs(node):
            found.extend(nested_nodes(sub))
    return found


def reads(node: onnx.NodeProto) -> list[str]:
    """The values ``node`` reads: its inputs and every name its subgraphs' nodes read (the enclosing graph's values
    among them)."""
    return [n for n in node.input if n] + [n for sub in subgraphs(node) for inner in nested_nodes(sub)
                                           for n in inner.input if n]


def _has_subgraph(node: onnx.NodeProto) -> bool:
    return any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)


@functools.cache
def _reference_op(op_type: str, opset: int) -> type | None:
    """The onnx.reference implementation of a default-domain op at ``opset``, or None when it has none."""
    try:
        return load_op("", op_type, opset, evaluator_cls=ReferenceEvaluator)
    except (NotImplementedError, RuntimeError, ValueError, KeyError):
        return None


def can_evaluate(node: onnx.NodeProto, opset: int) -> bool:
    # Subgraphs may read values of the enclosing graph, which a one-node evaluation does not have.
    return (node.domain in _DEFAULT_DOMAINS and node.op_type not in _NONDETERMINISTIC and not _has_subgraph(node)
            and _reference_op(node.op_type, opset) is not None)


def plan_folding(
    nodes: Sequence[tuple[str, onnx.NodeProto]],
    initializers: Sequence[str],
    buildable: Callable[[onnx.NodeProto], bool],
    opset: int,
) -> FoldPlan:
    """Find the known values and static nodes of a graph (``nodes`` in topological order, as (label, node);
    node names need not be unique, so nodes are identified by their position).
    ``buildable(node)`` says whether a handler can build ``node`` (it exists and knows every attribute); ``opset``
    is the model's, for the reference implementations."""
    known = set(initializers)
    static: set[int] = set()
    producer: dict[str, int] = {}
    readers: dict[str, int] = {}
    for position, (_, node) in enumerate(nodes):
        for name in reads(node):  # a value a subgraph reads is read by its node
            readers[name] = readers.get(name, 0) + 1
        inputs_known = all(not name or name in known for name in node.input)
        if node.domain in _DEFAULT_DOMAINS and node.op_type == "Constant":
            # A value, not a computation: its handler says which attributes give a supported tensor.
            is_static = buildable(node)
        else:
            is_static = (node.domain in _DEFAULT_DOMAINS and node.op_type in SHAPE_OPS) or (
                can_evaluate(node, opset) and inputs_known)
        if is_static:
            static.add(position)
            known.update(o for o in node.output if o)
            producer.update((o, position) for o in node.output if o)
    # An unbuildable static node must be evaluated, and so must every static node it reads from.
    required: set[int] = set()
    work = [position for position in static if not buildable(nodes[position][1])]
    while work:
        position = work.pop()
        if position in required:
            continue
        required.add(position)
        node = nodes[position][1]
        if node.op_type not in SHAPE_OPS:
            work.extend(producer[name] for name in node.input if name in producer)
    return FoldPlan(frozenset(known), frozenset(static), frozenset(required), readers)


def _run_params(opset: int) -> dict:
    return {"log": lambda *args: None, "opsets": {"": opset}, "verbose": 0, "new_ops": None,
            "existing_functions": {}, "evaluator_cls": ReferenceEvaluator}


def evaluate(node: onnx.NodeProto, inputs: Sequence[np.ndarray | None], opset: int) -> list[np.ndarray]:
    """The outputs of ``node`` (given outputs only, in order) for known ``inputs`` (None for an input left
    out), by the op's reference implementation at ``opset``. Raises ValueError when it cannot be evaluated."""
    try:
        # The op's implementation straight from onnx.reference: a ReferenceEvaluator of a one-node model would give
        # the same, at 30 times the cost (0.75 ms against 0.025 ms per node here).
        implementation = _reference_op(node.op_type, opset)
        if implementation is None:
            raise NotImplementedError(f"onnx.reference has no {node.op_type} at opset {opset}")
        results = list(implementation(node, _run_params(opset)).run(*inputs))
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, ArithmeticError, NotImplementedError,
            RuntimeError) as e:  # an input left out that the op needs reaches the reference as None: AttributeError
        message = " ".join(str(e).split()) or type(e).__name__
        raise ValueError(f"cannot evaluate it at import: {message}") from None
    given = [(name, value) for name, value in zip(node.output, results + [None] * len(node.output)) if name]
    others = [name for name, value in given if not isinstance(value, (np.ndarray, np.generic))]
    if others:
        raise ValueError(f"cannot evaluate it at import: output '{others[0]}' is not a tensor")
    return [np.asarray(value) for _, value in given]
