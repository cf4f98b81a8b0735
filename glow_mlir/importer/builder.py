"""The import driver: the handler registry keyed by (op_type, since_opset), the check that
reports every unsupported op and attribute at once, and the walk that builds one glowgraph
``func.func`` from the ONNX nodes in topological order."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import onnx
from mlir import ir
from mlir.dialects import func

from ..dialects import glowgraph as gg
from ..dialects.optable import VerifyError, mlir_type, numpy_dtype, numpy_to_elements
from ..dialects.verifier import verify
from ..errors import GlowError, ModelError, NonConstantInputError, UnsupportedError
from .model import LoadedModel, TensorSpec, ValueType, fmt_shape, load_model, node_where, resolve_shapes

#: The argument and result attribute holding the ONNX name of a graph input or output
#: (convert-glowgraph-to-glowir names the program's weight vars after it).
NAME_ATTR = gg.NAME_ATTR

# --------------------------------------------------------------------------- values


@dataclass(eq=False)
class Const:
    """A tensor whose value is known at import: an initializer, a Constant node's output, or a
    value a handler folded. It becomes a ``glowgraph.constant`` at its first use as an operand."""

    array: np.ndarray
    #: the location of that constant: the tensor's name, or the name of the node that folded it
    name: str
    #: the constant op's result, once made
    value: ir.Value | None = None


#: What an ONNX value maps to while importing.
Tensor: TypeAlias = ir.Value | Const


def shape_of(x: Tensor) -> list[int]:
    """The static shape of a tensor."""
    if isinstance(x, Const):
        return list(x.array.shape)
    return list(ir.RankedTensorType(x.type).shape)


def dtype_of(x: Tensor) -> np.dtype:
    """The numpy element type of a tensor."""
    if isinstance(x, Const):
        return x.array.dtype
    return numpy_dtype(ir.RankedTensorType(x.type).element_type)


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Handler:
    """How to import one ONNX op from opset ``since`` on: ``fn`` returns the node's single output;
    ``inputs`` is the (min, max) number of node inputs; ``attrs`` the attribute names it reads."""

    op_type: str
    since: int
    fn: Callable[[NodeContext], Tensor]
    inputs: tuple[int, int]
    attrs: frozenset[str]


#: op_type -> since_opset -> handler, filled by the @onnx_op decorators of the handlers package
HANDLERS: dict[str, dict[int, Handler]] = {}


def onnx_op(op_type: str, since: int, *, inputs: tuple[int, int], attrs: Iterable[str] = ()):
    """Register the decorated function as the handler of ``op_type`` (default ONNX domain) for
    opsets ``since`` and later, up to the next registered version. Stack decorators to register
    one function for several versions (e.g. with different attribute sets)."""

    def register(fn: Callable[[NodeContext], Tensor]) -> Callable[[NodeContext], Tensor]:
        versions = HANDLERS.setdefault(op_type, {})
        if since in versions:
            raise ValueError(f"two handlers for {op_type} since opset {since}")
        versions[since] = Handler(op_type, since, fn, inputs, frozenset(attrs))
        return fn

    return register


def lookup(op_type: str, domain: str, opset: int) -> Handler | None:
    """The handler for ``op_type`` at ``opset``: the registered version with the highest ``since``
    not above it. Ops of other domains have none."""
    if domain not in ("", "ai.onnx"):
        return None
    versions = [v for v in HANDLERS.get(op_type, {}) if v <= opset]
    return HANDLERS[op_type][max(versions)] if versions else None


#: How many node names an unsupported-op report gives per op.
_NODES_SHOWN = 5


def check_support(loaded: LoadedModel) -> None:
    """Raise one UnsupportedError listing every op without a handler at the model's opset and
    every attribute its handler does not know, each with the nodes that use it."""
    ops: dict[str, list[str]] = {}
    attrs: dict[str, list[str]] = {}
    for label, node in loaded.nodes:
        handler = lookup(node.op_type, node.domain, loaded.opset)
        if handler is None:
            op = f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
            ops.setdefault(op, []).append(label)
            continue
        for attr in node.attribute:
            if attr.name not in handler.attrs:
                attrs.setdefault(f"{node.op_type} attribute '{attr.name}'", []).append(label)
    if not ops and not attrs:
        return

    def count(n: int, what: str) -> str:
        return f"{n} unsupported {what}{'s' if n > 1 else ''}"

    def nodes(labels: list[str]) -> str:
        # A few names locate the problem; hundreds would bury the other items of the line.
        shown = ", ".join(labels[:_NODES_SHOWN])
        more = f" and {len(labels) - _NODES_SHOWN} more" if len(labels) > _NODES_SHOWN else ""
        return f"{'nodes' if len(labels) > 1 else 'node'} {shown}{more}"

    def items(found: dict[str, list[str]]) -> list[str]:
        return [f"{k} ({nodes(v)})" for k, v in found.items()]

    head = " and ".join(
        ([count(len(ops), "ONNX op")] if ops else []) + ([count(len(attrs), "attribute")] if attrs else [])
    )
    raise UnsupportedError(f"{loaded.label}: {head} at opset {loaded.opset}: {'; '.join(items(ops) + items(attrs))}")


# --------------------------------------------------------------------------- node context


_ATTR_NAMES = onnx.AttributeProto.AttributeType.Name


class NodeContext:
    """What a handler sees of its node: its inputs as tensors, its attributes, and errors that
    name the model, the node and the op. Ops built by a handler get the node's location."""

    def __init__(self, node: onnx.NodeProto, label: str, model_label: str, values: Mapping[str, Tensor]):
        self.node = node
        #: the node's name, or ``<op>#<index>`` when it has none
        self.label = label
        self.where = node_where(model_label, label, node.op_type)
        self._values = values

    @property
    def output_name(self) -> str:
        """The name of the node's (single) output."""
        return self.node.output[0]

    # --- errors --------------------------------------------------------------
    def error(self, message: str) -> ModelError:
        """A ModelError about this node (raise it)."""
        return ModelError(f"{self.where}: {message}")

    def unsupported(self, message: str) -> UnsupportedError:
        """An UnsupportedError about this node (raise it)."""
        return UnsupportedError(f"{self.where}: {message}")

    # --- inputs --------------------------------------------------------------
    def optional_input(self, i: int) -> Tensor | None:
        """Input ``i``, or None when the node leaves it out."""
        if i >= len(self.node.input) or not self.node.input[i]:
            return None
        return self._values[self.node.input[i]]

    def input(self, i: int) -> Tensor:
        """Input ``i``, which the node must give."""
        x = self.optional_input(i)
        if x is None:
            raise self.error(f"input #{i} is missing")
        return x

    def operand(self, i: int) -> ir.Value:
        """Input ``i`` as an MLIR value."""
        return self.value(self.input(i))

    def constant_input(self, i: int, what: str) -> np.ndarray:
        """The value of input ``i``, which must be known at import (an initializer or a constant)."""
        x = self.input(i)
        if not isinstance(x, Const):
            name = self.node.input[i]
            raise NonConstantInputError(f"{self.where}: the {what} input '{name}' must be a constant or an initializer",
                                        name)
        return x.array

    # --- values --------------------------------------------------------------
    @staticmethod
    def value(x: Tensor) -> ir.Value:
        """``x`` as an MLIR value: a Const becomes a ``glowgraph.constant`` at its first use."""
        if not isinstance(x, Const):
            return x
        if x.value is None:
            x.value = gg.constant(value=numpy_to_elements(x.array), loc=ir.Location.name(x.name))
        return x.value

    def const(self, array: np.ndarray, name: str | None = None) -> Const:
        """A new known tensor, located at ``name`` (default: this node)."""
        return Const(np.asarray(array, order="C"), name or self.label)

    # --- attributes ----------------------------------------------------------
    def attr(self, name: str, kind: int, default: Any) -> Any:
        """The value of attribute ``name``, which must be of ``kind`` (an AttributeProto type),
        or ``default`` when absent."""
        for a in self.node.attribute:
            if a.name == name:
                if a.type != kind:
                    raise self.error(f"attribute '{name}' must be {_ATTR_NAMES(kind)}, got {_ATTR_NAMES(a.type)}")
                return onnx.helper.get_attribute_value(a)
        return default


# --------------------------------------------------------------------------- driver


@dataclass
class ImportedModel:
    """The result of an import: a module holding one glowgraph function, and its signature."""

    module: ir.Module
    #: the model's name for messages: the file's stem, or the graph name
    name: str
    func_name: str
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]


def func_name_of(graph_name: str) -> str:
    """A symbol name for the graph: its name with other characters than [A-Za-z0-9_] replaced, or "main"."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", graph_name)
    if not name:
        return "main"
    return "_" + name if name[0].isdigit() else name


def import_model(
    model: str | os.PathLike | onnx.ModelProto,
    ctx: ir.Context,
    *,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> ImportedModel:
    """Import an ONNX model (a path or a ModelProto) as a glowgraph function in a new module of
    ``ctx``. ``input_shapes`` gives or overrides the static shapes of graph inputs.
    Raises ModelError or UnsupportedError, each with a one-line message."""
    try:
        loaded = load_model(model)
        # Before shapes: a model we cannot compile should not first ask the user for input shapes.
        check_support(loaded)
        inputs, inferred = resolve_shapes(loaded, input_shapes)
        with ctx, ir.Location.unknown(ctx):
            return _Importer(loaded, inputs, inferred).run()
    except GlowError as e:
        message = str(e)
        if message.isprintable():
            raise
        # Names in messages come from the model and may hold line breaks or control characters. The exception
        # itself is kept: subclasses carry more than their message.
        e.args = ("".join(c if c.isprintable() else repr(c)[1:-1] for c in message),)
        raise e from None


class _Importer:
    """One import: the map from ONNX value names to tensors, filled node by node."""

    def __init__(self, loaded: LoadedModel, inputs: list[TensorSpec], inferred: dict[str, ValueType]):
        self.loaded = loaded
        self.inputs = inputs
        self.inferred = inferred
        self.values: dict[str, Tensor] = {name: Const(a, name) for name, a in loaded.initializers.items()}

    def run(self) -> ImportedModel:
        loaded = self.loaded
        graph = loaded.proto.graph
        module = ir.Module.create()
        arg_types = [ir.RankedTensorType.get(list(s.shape), mlir_type(s.dtype)) for s in self.inputs]
        name = func_name_of(graph.name)
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp(name, ir.FunctionType.get(arg_types, []))
        block = fn.add_entry_block([ir.Location.name(s.name) for s in self.inputs])
        self.values.update({s.name: arg for s, arg in zip(self.inputs, block.arguments, strict=True)})
        with ir.InsertionPoint(block):
            for label, node in loaded.nodes:
                self._import_node(label, node)
            results = [NodeContext.value(self.values[o.name]) for o in graph.output]
            func.ReturnOp(results)
        # The result types are known only now that the body is built.
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(arg_types, [r.type for r in results]))
        for key, names in (("arg_attrs", [s.name for s in self.inputs]), ("res_attrs", [o.name for o in graph.output])):
            if names:
                fn.attributes[key] = ir.ArrayAttr.get(
                    [ir.DictAttr.get({NAME_ATTR: ir.StringAttr.get(n)}) for n in names]
                )
        self._verify(module)
        outputs = [
            TensorSpec(o.name, tuple(shape_of(r)), dtype_of(r)) for o, r in zip(graph.output, results, strict=True)
        ]
        return ImportedModel(module, loaded.name, name, self.inputs, outputs)

    def _import_node(self, label: str, node: onnx.NodeProto) -> None:
        handler = lookup(node.op_type, node.domain, self.loaded.opset)
        assert handler is not None, "check_support lets no unsupported op through"
        ctx = NodeContext(node, label, self.loaded.label, self.values)
        lo, hi = handler.inputs
        if not lo <= len(node.input) <= hi:
            expected = str(lo) if lo == hi else f"{lo} to {hi}"
            raise ctx.error(f"expects {expected} input{'' if hi == 1 else 's'}, got {len(node.input)}")
        if len(node.output) != 1 or not node.output[0]:
            raise ctx.error(f"expects 1 output, got {len([o for o in node.output if o])}")
        with ir.Location.name(label):
            try:
                result = handler.fn(ctx)
            except VerifyError as e:
                raise ctx.error(str(e)) from None
        self._check_inferred(ctx, result)
        self.values[ctx.output_name] = result

    def _check_inferred(self, ctx: NodeContext, result: Tensor) -> None:
        """Compare what the handler built with the type the model declares or ONNX shape inference
        gives, so a disagreement with our shape rules is reported at the node, not found at run time."""
        if ctx.output_name not in self.inferred:
            return
        dtype, dims = self.inferred[ctx.output_name]
        shape, got = shape_of(result), dtype_of(result)
        if (
            len(dims) != len(shape)
            or any(d is not None and d != s for d, s in zip(dims, shape, strict=True))
            or (dtype is not None and dtype != got)
        ):
            raise ctx.error(
                f"output '{ctx.output_name}' is {fmt_shape(shape)} {got} here, but the model's declared or "
                f"inferred type is {fmt_shape(dims)} {dtype}"
            )

    def _verify(self, module: ir.Module) -> None:
        label = self.loaded.label
        try:
            diags = verify(module.operation)
        except ir.MLIRError as e:
            found = "; ".join(f"{_at(d.location)}: {_one_line(d.message)}" for d in e.error_diagnostics)
            found = found or _one_line(e.message)
            raise ModelError(f"{label}: the imported IR does not verify: {found}") from None
        if diags:
            found = "; ".join(f"{_at(d.location)}: {_one_line(d.message)}" for d in diags)
            raise ModelError(f"{label}: the imported IR does not verify: {found}")


def _at(loc: ir.Location) -> str:
    """A location as messages name it: ``node 'fc1'`` for a node's location."""
    return f"node '{loc.name_str}'" if loc.is_a_name() else str(loc)


def _one_line(text: str) -> str:
    return " ".join(text.split())
