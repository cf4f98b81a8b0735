"""The import driver: the handler registry keyed by (op_type, since_opset), the check that
reports every unsupported op and attribute at once, and the walk that builds one glowgraph
``func.func`` from the ONNX nodes in topological order, evaluating the static ones (see ``folding``)."""

from __future__ import annotations

import collections
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import ml_dtypes
import numpy as np
import onnx
from mlir import ir
from mlir.dialects import func

from ..dialects import glowgraph as gg
from ..dialects.optable import VerifyError, mlir_type, numpy_dtype, numpy_to_elements
from ..dialects.verifier import verify
from ..errors import GlowError, ModelError, NonConstantInputError, UnsupportedError
from ..passes.conversion.ir_program import DECLARED_TYPES_ATTR
from .folding import FOLD_MAX_ELEMENTS, FoldPlan, can_evaluate, evaluate, plan_folding
from .model import (
    COMPUTE_DTYPE,
    ELEMENT_TYPES,
    FLOAT8_TYPES,
    INTEGER_STORAGE_TYPES,
    LoadedModel,
    TensorSpec,
    ValueType,
    declared_types,
    fmt_shape,
    integer_bits,
    integer_compute_dtype,
    is_integer_storage,
    load_model,
    node_where,
    resolve_shapes,
    schema_max,
    stored_dtype,
    tensor_to_array,
    too_large,
    topological_order,
)
from .structured import OPTIONAL, SEQUENCE, Layout, Opt, Seq, bound, carried, element_type, output_layout, value_kind

#: The argument and result attribute holding the ONNX name of a graph input or output
#: (convert-glowgraph-to-glowir names the program's weight vars after it).
NAME_ATTR = gg.NAME_ATTR
#: the ops that may read a uint64 value (held in int64, bit for bit): they do not read a sign, or flip the sign bit
#: first (comparisons, Max, Min); any other one would read the values of 2^63 and above as negative
UINT64_READERS = frozenset({
    "Add", "Sub", "Mul", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "Equal", "Less", "LessOrEqual",
    "Greater", "GreaterOrEqual", "Max", "Min", "Where", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
    "Transpose", "Concat", "Slice", "Gather", "Split", "Expand", "Tile", "Shape", "Size", "BitCast", "BitShift",
    "TopK", "Div", "Mod", "Pow"})
#: the storage types narrower than float32: a value the model stores in one is rounded to it
ROUNDED_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), *FLOAT8_TYPES, np.dtype(ml_dtypes.float4_e2m1fn),
                 np.dtype(ml_dtypes.float8_e8m0fnu))


def computed(a: np.ndarray) -> np.ndarray:
    """A value evaluated at import in the type it is computed in: a storage type's as float32 or a wider integer
    (rounded or wrapped by the caller where the model stores it), any other as it is."""
    if a.dtype in (np.float64, *ROUNDED_TYPES):
        return a.astype(COMPUTE_DTYPE)
    return a.astype(integer_compute_dtype(a.dtype)) if a.dtype in INTEGER_STORAGE_TYPES.values() else a


class DeclaredShapeWarning(UserWarning):
    """A value's shape as the model declares it differs from the one its inputs give (the computed one is used)."""


# --------------------------------------------------------------------------- values


@dataclass(eq=False)
class Const:
    """A tensor whose value is known at import: an initializer, a Constant node's output, or a
    value a handler folded or static evaluation computed. It becomes a ``glowgraph.constant`` at its first use as
    an operand. The array may be a read-only view: a ConstantOfShape fill is a ``np.broadcast_to`` of one element,
    never a full array, and becomes a splat constant."""

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
    """How to import one ONNX op from opset ``since`` on: ``fn`` returns the node's output, or a sequence with
    one entry per node output (None for an output the node leaves out, or does not compute: nothing may read it
    then); ``inputs`` and ``outputs`` are the (min, max) numbers of node inputs and outputs (max None: no limit);
    ``attrs`` the attribute names it reads.
    ``folds``: given known inputs, ``fn`` returns known outputs itself (static evaluation leaves such nodes to it).
    ``structured``: it takes sequence and optional values (:mod:`.structured`); no other handler sees one."""

    op_type: str
    since: int
    fn: Callable[[NodeContext], Tensor | Sequence[Tensor | None]]
    inputs: tuple[int, int | None]
    attrs: frozenset[str]
    outputs: tuple[int, int | None] = (1, 1)
    folds: bool = False
    #: the op's domain ("" the default one)
    domain: str = ""
    structured: bool = False


#: op_type (``domain:op_type`` outside the default domain) -> since_opset -> handler, filled by the @onnx_op
#: decorators of the handlers package
HANDLERS: dict[str, dict[int, Handler]] = {}


def _key(op_type: str, domain: str) -> str:
    """The registry's key of ``op_type`` in ``domain``: the op's name in the default domain, ``domain:op`` else."""
    return op_type if domain in ("", "ai.onnx") else f"{domain}:{op_type}"


def onnx_op(op_type: str, since: int, *, inputs: tuple[int, int | None], attrs: Iterable[str] = (),
            outputs: tuple[int, int | None] = (1, 1), folds: bool = False, domain: str = "", structured: bool = False):
    """Register the decorated function as the handler of ``op_type`` for opsets ``since`` and later, up to the next
    registered version. Stack decorators to register one function for several versions (e.g. with different
    attribute sets). ``domain``: another domain than the default one (``ai.onnx.preview``, ``ai.onnx.ml``), whose
    ops are looked up by name alone (:func:`lookup`)."""

    def register(fn: Callable[[NodeContext], Any]) -> Callable[[NodeContext], Any]:
        versions = HANDLERS.setdefault(_key(op_type, domain), {})
        if since in versions:
            raise ValueError(f"two handlers for {op_type} since opset {since}")
        versions[since] = Handler(op_type, since, fn, inputs, frozenset(attrs), outputs, folds, domain, structured)
        return fn

    return register


def lookup(op_type: str, domain: str, opset: int) -> Handler | None:
    """The handler for ``op_type`` at ``opset`` (the default domain's): the registered version with the highest
    ``since`` not above it. An op of another domain: the newest handler registered for it in that domain (the
    domains it has handlers in have one version of each op), None where it has none."""
    if domain not in ("", "ai.onnx"):
        versions = HANDLERS.get(_key(op_type, domain), {})
        return versions[max(versions)] if versions else None
    versions = [v for v in HANDLERS.get(op_type, {}) if v <= opset]
    return HANDLERS[op_type][max(versions)] if versions else None


#: How many node names an unsupported-op report gives per op.
_NODES_SHOWN = 5


def buildable(node: onnx.NodeProto, opset: int) -> bool:
    """Whether a handler can build ``node``: one exists at ``opset`` and knows every attribute the node has."""
    handler = lookup(node.op_type, node.domain, opset)
    return handler is not None and all(a.name in handler.attrs for a in node.attribute)


def fold_plan(loaded: LoadedModel) -> FoldPlan:
    """The static evaluation of ``loaded``'s graph (see ``folding``)."""
    return plan_folding(loaded.nodes, list(loaded.initializers), lambda node: buildable(node, loaded.opset),
                        loaded.opset)


def check_support(loaded: LoadedModel, plan: FoldPlan) -> None:
    """Raise one UnsupportedError listing every op without a handler at the model's opset and
    every attribute its handler does not know, each with the nodes that use it. Nodes that static
    evaluation computes at import need no handler and are not reported."""
    ops: dict[str, list[str]] = {}
    attrs: dict[str, list[str]] = {}
    for position, (label, node) in enumerate(loaded.nodes):
        if position in plan.required:
            continue
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


def _widened(arg: ir.Value, stored: np.dtype) -> ir.Value:
    """A graph input of a storage type as the type it is computed in: float32, or a wider integer (extended, then
    wrapped into the type's range: the high bits of an unsigned or sub-byte value are not its own)."""
    if not is_integer_storage(stored):
        return gg.cast(arg, to=mlir_type(COMPUTE_DTYPE))
    compute = integer_compute_dtype(stored)
    if compute.itemsize == stored.itemsize:  # uint64: the same bits
        return arg
    wide = gg.cast(arg, to=mlir_type(compute))
    bits, signed = integer_bits(stored)
    return wide if signed and bits == 8 * stored.itemsize else wrapped(wide, stored)


def _masked(x: ir.Value, bits: int) -> ir.Value:
    return gg.and_(x, gg.splat(value=(1 << bits) - 1, result_types=[x.type]))


def wrapped(x: Tensor, stored: np.dtype) -> Tensor:
    """``x`` (computed in the wider integer of ``stored``) wrapped into ``stored``'s range, as arithmetic in the
    narrow type wraps: an unsigned type masked; a signed one truncated and sign-extended back (a sub-byte one by
    shifting its bits to the top and back)."""
    if isinstance(x, Const):
        return Const(x.array.astype(stored).astype(x.array.dtype), x.name)
    bits, signed = integer_bits(stored)
    if bits == 8 * dtype_of(x).itemsize:  # uint64 in int64: every bit pattern is a value
        return x
    if not signed:
        return _masked(x, bits)
    if bits == 8 * stored.itemsize:
        return gg.cast(gg.cast(x, to=mlir_type(stored)), to=mlir_type(dtype_of(x)))
    by = gg.splat(value=8 * dtype_of(x).itemsize - bits, result_types=[x.type])
    return gg.shift_right(gg.shift_left(x, by), by)


# --------------------------------------------------------------------------- node context


_ATTR_NAMES = onnx.AttributeProto.AttributeType.Name


class NodeContext:
    """What a handler sees of its node: its inputs as tensors, its attributes, and errors that
    name the model, the node and the op. Ops built by a handler get the node's location."""

    def __init__(self, node: onnx.NodeProto, label: str, model_label: str, values: Mapping[str, Tensor],
                 opset: int):
        self.node = node
        #: the model's opset of the default domain
        self.opset = opset
        #: the node's name, or ``<op>#<index>`` when it has none
        self.label = label
        self.where = node_where(model_label, label, node.op_type)
        self._values = values
        #: import a subgraph of this node (If's branches, Loop's body): ``import_graph(graph, bindings)`` -> its
        #: outputs, its inputs bound to ``bindings`` and the enclosing values visible (set by the importer); with
        #: ``scoped=True`` (a loop's body, imported into the loop's region) the enclosing graphs' known tensors
        #: become constants of the body, never of the enclosing graph
        self.import_graph: Callable[..., list[Tensor]] | None = None
        #: the type the model stores each value in where it is a storage type (set by the importer)
        self.stored: Mapping[str, np.dtype] = {}
        #: the types the model declares or ONNX infers for the values, by name (set by the importer)
        self.known_types: Mapping[str, ValueType] = {}

    @property
    def output_name(self) -> str:
        """The name of the node's first named output (a recurrent node may leave Y unnamed and give Y_h)."""
        return next((o for o in self.node.output if o), self.label)

    def known_dims(self, name: str) -> tuple[int | None, ...] | None:
        """The dims the model declares or ONNX infers for value ``name`` (None for a dim not static), or None."""
        known = self.known_types.get(name)
        return None if known is None else tuple(known[1])

    def has_output(self, i: int) -> bool:
        """Whether the node gives output ``i`` (an optional output may be left out or named '')."""
        return i < len(self.node.output) and bool(self.node.output[i])

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
    def value(self, x: Tensor) -> ir.Value:
        """``x`` as an MLIR value: a Const becomes a ``glowgraph.constant`` at its first use."""
        return materialize(x, self.where)

    def const(self, array: np.ndarray, name: str | None = None) -> Const:
        """A new known tensor, located at ``name`` (default: this node). Views stay views."""
        return Const(np.asarray(array), name or self.label)

    def check_element_type(self, x: Tensor, what: str, allowed: Iterable[np.dtype] = ELEMENT_TYPES.values()) -> None:
        """Raise UnsupportedError when ``x`` (the node's ``what``) has an element type outside ``allowed``."""
        allowed = [np.dtype(d) for d in allowed]
        if dtype_of(x) not in allowed:
            names = ", ".join(str(d) for d in allowed)
            name = next((n for n in self.node.input if n and self._values.get(n) is x), None)
            stored = self.stored.get(name) if name else None
            got = f"{stored} (computed as {dtype_of(x)})" if stored is not None else str(dtype_of(x))
            raise self.unsupported(f"unsupported element type {got} for the {what} (supported: {names})")

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


def materialize(x: Tensor, where: str) -> ir.Value:
    """``x`` as an MLIR value: a Const becomes a ``glowgraph.constant`` at its first use. ``where`` starts the
    message when a known tensor of an element type glowgraph does not take must enter the graph."""
    if not isinstance(x, Const):
        return x
    if x.value is None:
        if x.array.dtype not in ELEMENT_TYPES.values():
            raise UnsupportedError(
                f"{where}: tensor '{x.name}', known at import, has unsupported element type {x.array.dtype}"
            )
        x.value = gg.constant(value=numpy_to_elements(x.array), loc=ir.Location.name(x.name))
    return x.value


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
    #: labels of the nodes computed at import (static evaluation, or a handler's folding), Constants excluded
    folded: list[str]
    #: the sequence and optional graph inputs, each carried by the tensors of ``inputs`` that its layout names
    input_layouts: list[Layout] = field(default_factory=list)
    #: the sequence and optional graph outputs, each carried by the tensors of ``outputs`` that its layout names
    output_layouts: list[Layout] = field(default_factory=list)


def func_name_of(graph_name: str) -> str:
    """A symbol name for the graph: its name with other characters than [A-Za-z0-9_] replaced, or "main"."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", graph_name)
    if not name:
        return "main"
    return "_" + name if name[0].isdigit() else name


def check_model(model: str | os.PathLike | onnx.ModelProto) -> None:
    """What ``import_model`` checks before it needs input shapes: a ModelError for a malformed model, one
    UnsupportedError listing every op and attribute without a handler."""
    loaded = load_model(model)
    check_support(loaded, fold_plan(loaded))


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
        plan = fold_plan(loaded)
        # Before shapes: a model we cannot compile should not first ask the user for input shapes.
        check_support(loaded, plan)
        inputs, inferred, storage, layouts = resolve_shapes(loaded, input_shapes)
        with ctx, ir.Location.unknown(ctx):
            return _Importer(loaded, plan, inputs, inferred, storage, layouts).run()
    except GlowError as e:
        message = str(e)
        if message.isprintable():
            raise
        # Names in messages come from the model and may hold line breaks or control characters. The exception
        # itself is kept: subclasses carry more than their message.
        e.args = ("".join(c if c.isprintable() else repr(c)[1:-1] for c in message),)
        raise e from None


class _BodyScope(Mapping[str, Tensor]):
    """The enclosing values as a loop's body sees them: each known tensor is a Const of the body's own, made a
    constant inside the body at its first use there. The enclosing graph's Const may not have its constant op yet,
    and one made inside the loop would not be visible after it."""

    def __init__(self, outer: Mapping[str, Tensor]):
        self._outer = outer
        self._own: dict[str, Const] = {}

    def __getitem__(self, name: str) -> Tensor:
        x = self._outer[name]
        if not isinstance(x, Const):
            return x
        if name not in self._own:
            self._own[name] = Const(x.array, x.name)
        return self._own[name]

    def __iter__(self):
        return iter(self._outer)

    def __len__(self) -> int:
        return len(self._outer)


class _Importer:
    """One import: the map from ONNX value names to tensors, filled node by node."""

    def __init__(self, loaded: LoadedModel, plan: FoldPlan, inputs: list[TensorSpec],
                 inferred: dict[str, ValueType], storage: Mapping[str, np.dtype] | None = None,
                 layouts: Sequence[Layout] = ()):
        self.loaded = loaded
        self.layouts = list(layouts)
        self.plan = plan
        self.inputs = inputs
        self.inferred = inferred
        #: values the model stores in a storage type (model.STORAGE_TYPES, computed here in float32;
        #: INTEGER_STORAGE_TYPES, computed in a wider integer)
        self.storage = dict(storage or {})
        self.storage.update({t.name: INTEGER_STORAGE_TYPES[t.data_type] for t in loaded.proto.graph.initializer
                             if t.data_type in INTEGER_STORAGE_TYPES})
        self.values: dict[str, Tensor] = {name: Const(a, name) for name, a in loaded.initializers.items()}
        self.folded: list[str] = []
        self.graph_outputs = {o.name for o in loaded.proto.graph.output}
        self.declared = declared_types(loaded.proto.graph)
        #: whether ONNX's inferred shapes can be held against ours: not after a wrong declared shape, which its
        #: inference carries on to the values computed from it
        self.inferred_shapes_trusted = True

    def run(self) -> ImportedModel:
        loaded = self.loaded
        graph = loaded.proto.graph
        module = ir.Module.create()
        arg_types = [ir.RankedTensorType.get(list(s.shape), mlir_type(s.dtype)) for s in self.inputs]
        name = func_name_of(graph.name)
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp(name, ir.FunctionType.get(arg_types, []))
        block = fn.add_entry_block([ir.Location.name(s.name) for s in self.inputs])
        with ir.InsertionPoint(block):
            # an input stored in a storage type is computed in float32 or a wider integer from here on
            args = {s.name: arg if s.dtype in ELEMENT_TYPES.values() else _widened(arg, s.dtype)
                    for s, arg in zip(self.inputs, block.arguments, strict=True)}
            self.values.update(args)
            self.values.update({layout.name: bound(layout, args) for layout in self.layouts})
            for position, (label, node) in enumerate(loaded.nodes):
                self._import_node(position, label, node)
            out_names, results, out_layouts = [], [], []
            for o in graph.output:
                value = self.values[o.name]
                layout = output_layout(o.name, value, self._elem_type(o, value))
                names = [o.name] if layout is None else list(layout.elements)
                stored = None if layout is None else stored_dtype(layout.elem_type)
                if layout is not None:
                    out_layouts.append(layout)
                if stored is not None:  # each tensor of a sequence of a storage type is stored in it
                    self.storage.update(dict.fromkeys(names, stored))
                for n, x in zip(names, carried(value), strict=True):
                    out_names.append(n)
                    results.append(self._stored(n, materialize(x, f"{loaded.label}: graph output '{o.name}'")))
            func.ReturnOp(results)
        # The result types are known only now that the body is built.
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(arg_types, [r.type for r in results]))
        declared = {s.name: s.dtype for s in self.inputs} | {n: self.storage[n] for n in out_names
                                                              if n in self.storage}
        declared = {n: d for n, d in declared.items() if d != numpy_dtype(mlir_type(d))}
        if declared:
            fn.attributes[DECLARED_TYPES_ATTR] = ir.DictAttr.get({n: ir.StringAttr.get(d.name)
                                                                  for n, d in declared.items()})
        for key, names in (("arg_attrs", [s.name for s in self.inputs]), ("res_attrs", out_names)):
            if names:
                fn.attributes[key] = ir.ArrayAttr.get(
                    [ir.DictAttr.get({NAME_ATTR: ir.StringAttr.get(n)}) for n in names]
                )
        self._verify(module)
        outputs = [TensorSpec(n, tuple(shape_of(r)), self.storage.get(n, dtype_of(r)))
                   for n, r in zip(out_names, results, strict=True)]
        return ImportedModel(module, loaded.name, name, self.inputs, outputs, self.folded, self.layouts, out_layouts)

    def _elem_type(self, output: onnx.ValueInfoProto, value: Any) -> int:
        """The ONNX element type of the tensors of a sequence or optional graph output: as declared, else from the
        tensors (0 for a plain tensor)."""
        if not isinstance(value, (Seq, Opt)):
            return 0
        if value_kind(output.type) in (SEQUENCE, OPTIONAL):
            return element_type(self.loaded.label, output.name, output.type, "output")
        inner = value if isinstance(value, Seq) else value.value
        dtype = inner.dtype if isinstance(inner, Seq) else np.dtype(np.float32) if inner is None else dtype_of(inner)
        return onnx.helper.np_dtype_to_tensor_dtype(dtype)

    def _stored(self, name: str, value: ir.Value) -> ir.Value:
        """A graph output as the model declares it: cast to its storage type where it has one (an integer one
        truncated: the value is already in its range; a sub-byte one keeps only its own bits)."""
        dtype = self.storage.get(name)
        if dtype is None:
            return value
        owner = value.owner.opview if isinstance(value, ir.OpResult) else None
        if owner is not None and owner.operation.name == "glowgraph.cast" and \
                ir.RankedTensorType(owner.operands[0].type).element_type == mlir_type(dtype):
            return owner.operands[0]  # a value of the stored type narrowed to be computed (a bitcast's float64)
        if is_integer_storage(dtype) and integer_bits(dtype)[0] < 8:
            value = _masked(value, integer_bits(dtype)[0])
        return value if mlir_type(dtype) == ir.RankedTensorType(value.type).element_type else \
            gg.cast(value, to=mlir_type(dtype))

    def _rounded(self, name: str, result: Tensor) -> Tensor:
        """``result`` as the value the model stores: rounded to float16 or bfloat16 where it stores ``name`` so
        (float64 holds every float32 exactly), wrapped into the range of a narrower integer type where it stores it
        in one."""
        stored = self.storage.get(name)
        if is_integer_storage(stored) and dtype_of(result) == integer_compute_dtype(stored):
            return wrapped(result, stored)
        if stored not in ROUNDED_TYPES or dtype_of(result) != COMPUTE_DTYPE:
            return result
        if isinstance(result, Const):
            return Const(result.array.astype(stored).astype(COMPUTE_DTYPE), result.name)
        return gg.cast(gg.cast(result, to=mlir_type(stored)), to=mlir_type(COMPUTE_DTYPE))

    def _import_node(self, position: int, label: str, node: onnx.NodeProto) -> None:
        opset = self.loaded.opset
        handler = lookup(node.op_type, node.domain, opset) if buildable(node, opset) else None
        ctx = NodeContext(node, label, self.loaded.label, self.values, opset)
        ctx.import_graph = self._subgraph_importer(label, self.values)
        ctx.stored = self.storage
        self._check_uint64(ctx)
        ctx.known_types = collections.ChainMap(self.declared, self.inferred)
        required = position in self.plan.required
        # static by the plan, or known only now (after an If whose known condition chose a branch of known values)
        static = position in self.plan.static or (
            can_evaluate(node, self.loaded.opset)
            and all(x is None or isinstance(x, Const) for x in (ctx.optional_input(i) for i in range(len(node.input)))))
        if static and handler is not None:  # an input the op needs but the node leaves out: the handler's error
            for i in range(handler.inputs[0]):
                ctx.input(i)
        evaluates = static and self._evaluates(ctx, handler, required)
        results = self._evaluate(ctx, handler, required) if evaluates else None
        if results is None:
            assert handler is not None, "check_support lets through only the unsupported nodes that fold"
            results = self._build(ctx, handler)
        for i, (name, result) in enumerate(zip(node.output, results, strict=True)):
            if not name:
                continue
            if result is None:  # an output the handler does not compute: nothing may read it
                if self.plan.readers.get(name) or name in self.graph_outputs:
                    raise ctx.unsupported(f"output #{i} '{name}' is used, but this output is not supported")
                continue
            if isinstance(result, (Seq, Opt)):
                self.values[name] = result
                continue
            self._check_inferred(ctx, name, result)
            if name in self.storage:
                with ir.Location.name(label):
                    result = self._rounded(name, result)
            self.values[name] = result
        if node.op_type != "Constant" and all(isinstance(r, Const) for r, n in zip(results, node.output) if n):
            self.folded.append(label)

    def _check_uint64(self, ctx: NodeContext) -> None:
        """Refuse a node that would read a uint64 value (held in int64) as signed (:data:`UINT64_READERS`)."""
        wide = [n for n in ctx.node.input if n and ctx.stored.get(n) == np.dtype(np.uint64)]
        if wide and ctx.node.op_type not in UINT64_READERS:
            raise ctx.unsupported(f"input '{wide[0]}' is uint64, which {ctx.node.op_type} is not supported on (uint64 "
                                  "is held in int64: only ops that do not read a sign take it)")

    def _subgraph_importer(self, label: str, outer: Mapping[str, Tensor]):
        """The ``import_graph`` of a node labelled ``label`` whose enclosing values are ``outer``."""
        def import_graph(graph: onnx.GraphProto, bindings: dict[str, Tensor], scoped: bool = False) -> list[Tensor]:
            return self._import_subgraph(graph, bindings, _BodyScope(outer) if scoped else outer, label)

        return import_graph

    def _import_subgraph(self, graph: onnx.GraphProto, bindings: dict[str, Tensor], outer: Mapping[str, Tensor],
                         label: str) -> list[Tensor]:
        """Import the nodes of ``graph`` (a branch or a loop body) at the insertion point, its inputs bound to
        ``bindings``, the enclosing graphs' values visible; its outputs. A node whose inputs are all known is
        evaluated (as static evaluation would), any other built by its handler."""
        opset = self.loaded.opset
        values: collections.ChainMap[str, Tensor] = collections.ChainMap(dict(bindings), outer)
        known = declared_types(graph)
        for t in graph.initializer:
            values[t.name] = Const(tensor_to_array(t, f"{self.loaded.label}: {label}: initializer '{t.name}'"), t.name)
        for node_label, node in topological_order(graph, f"{self.loaded.label}: {label}", values.keys()):
            inner = f"{label}/{node_label}"
            handler = lookup(node.op_type, node.domain, opset) if buildable(node, opset) else None
            ctx = NodeContext(node, inner, self.loaded.label, values, opset)
            ctx.import_graph = self._subgraph_importer(inner, values)
            ctx.known_types = known
            ctx.stored = self.storage
            self._check_uint64(ctx)
            inputs = [ctx.optional_input(i) for i in range(len(node.input))]
            known = all(x is None or isinstance(x, Const) for x in inputs)
            if known and can_evaluate(node, opset) and (handler is None or not handler.folds):
                results = self._evaluate(ctx, handler, required=handler is None)
            else:
                results = None
            if results is None:
                if handler is None:
                    raise ctx.unsupported(f"{node.op_type} is not supported (inside a subgraph)")
                results = self._build(ctx, handler)
            for name, result in zip(node.output, results, strict=True):
                if name and result is not None:
                    values[name] = result
        missing = [o.name for o in graph.output if o.name not in values]
        if missing:
            raise ModelError(f"{self.loaded.label}: {label}: subgraph output '{missing[0]}' is not produced")
        return [values[o.name] for o in graph.output]

    def _evaluates(self, ctx: NodeContext, handler: Handler | None, required: bool) -> bool:
        """Whether static evaluation computes this node: it must (no handler can build it, or an evaluated node
        needs it), or it pays (its inputs are known, the handler does not fold them itself, and its outputs feed
        other nodes and are not too large)."""
        if handler is None:
            return True
        if handler.folds:
            return False
        if required:
            return True
        inputs = [ctx.optional_input(i) for i in range(len(ctx.node.input))]
        if not all(x is None or isinstance(x, Const) for x in inputs):
            return False
        outputs = [o for o in ctx.node.output if o]
        if not any(self.plan.readers.get(o, 0) for o in outputs):
            return False  # graph outputs only, or dead: left to the optimizer
        sizes = [self.inferred.get(o, (None, (None,)))[1] for o in outputs]
        return all(None in dims or math.prod(dims) <= FOLD_MAX_ELEMENTS for dims in sizes)

    def _evaluate(self, ctx: NodeContext, handler: Handler | None, required: bool) -> list[Tensor | None] | None:
        """The node's outputs computed at import, each a Const named after its ONNX value; None when the result
        turns out too large to be worth it and a handler can build the node instead."""
        node = ctx.node
        inputs = [ctx.optional_input(i) for i in range(len(node.input))]
        live = [n for n, x in zip(node.input, inputs, strict=True) if x is not None and not isinstance(x, Const)]
        if live:
            # Only a known input too large to evaluate (left to its handler) gets here.
            raise ctx.unsupported(f"its value is needed at import, but input '{live[0]}' is computed at run time")
        try:
            with np.errstate(all="ignore"):
                arrays = evaluate(node, [None if x is None else x.array for x in inputs], self.loaded.opset)
        except ValueError as e:
            raise ctx.unsupported(str(e)) from None
        except MemoryError as e:
            raise ctx.error(f"its value does not fit in memory ({e})") from None
        arrays = [computed(a) for a in arrays]
        beyond_folding = any(a.size > FOLD_MAX_ELEMENTS for a in arrays)
        if beyond_folding and handler is not None and not required:
            return None
        given = iter(arrays)
        return [Const(next(given), name) if name else None for name in node.output]

    def _build(self, ctx: NodeContext, handler: Handler) -> list[Tensor | None]:
        """The node's outputs as its handler builds them."""
        node = ctx.node
        for what, (lo, hi), given in (("input", handler.inputs, node.input), ("output", handler.outputs, node.output)):
            if not lo <= len(given) <= (hi if hi is not None else len(given)):
                if hi is not None and len(given) > hi and len(given) <= schema_max(node, ctx.opset, what):
                    # Valid ONNX (MaxPool's Indices, training-mode statistics...) that the handler does not compute.
                    extra = ", ".join(f"#{i} '{n}'" for i, n in enumerate(given) if i >= hi)
                    raise ctx.unsupported(f"{what}{'s' if len(given) - hi > 1 else ''} {extra} "
                                          f"{'are' if len(given) - hi > 1 else 'is'} not supported")
                expected = str(lo) if lo == hi else f"{lo} to {hi}" if hi is not None else f"at least {lo}"
                raise ctx.error(f"expects {expected} {what}{'' if hi == 1 else 's'}, got {len(given)}")
        if not any(node.output):
            raise ctx.error("none of its outputs has a name")
        if not handler.structured:
            for i in range(len(node.input)):
                x = ctx.optional_input(i)
                if isinstance(x, (Seq, Opt)):
                    what = "a sequence" if isinstance(x, Seq) else "an optional"
                    raise ctx.unsupported(f"input #{i} '{node.input[i]}' is {what}, which {node.op_type} does not "
                                          "take (it takes tensors)")
        with ir.Location.name(ctx.label):
            try:
                result = handler.fn(ctx)
            except VerifyError as e:
                raise ctx.error(str(e)) from None
            except MemoryError as e:  # a shape from absurd attributes (pads of 10^16) that numpy cannot allocate
                raise ctx.error(f"the tensors it makes do not fit in memory ({e})") from None
        results = [result] if isinstance(result, (Const, ir.Value, Seq, Opt)) else list(result)
        assert len(results) == len(node.output), f"the {node.op_type} handler returned {len(results)} outputs"
        for i, r in enumerate(results):
            t = r.type if isinstance(r, ir.Value) else None
            if isinstance(t, ir.RankedTensorType) and t.has_static_shape and (size := too_large(t.shape)):
                raise ctx.error(f"output #{i} '{node.output[i]}' would be {size}")
        return results

    def _check_inferred(self, ctx: NodeContext, name: str, result: Tensor) -> None:
        """Compare what the handler built with the type the model declares or ONNX shape inference
        gives, so a disagreement with our shape rules is reported at the node, not found at run time. A shape the
        model merely declares (value_info, a graph output) and gets wrong is a warning, as onnxruntime has it: the
        computed shape is used; a wrong element type stays an error."""
        shape, got = shape_of(result), dtype_of(result)

        def differs(expected: ValueType) -> bool:
            dims = expected[1]
            return len(dims) != len(shape) or any(d is not None and d != s for d, s in zip(dims, shape, strict=True))

        declared = self.declared.get(name)
        if declared is not None and (declared[0] is None or declared[0] == got) and differs(declared):
            kind = self.storage.get(name, got)  # the type the model stores the value in
            warnings.warn(f"{ctx.where}: output '{name}' is declared {fmt_shape(declared[1])} {kind} "
                          f"but computes to {fmt_shape(shape)} {kind}; going on with {fmt_shape(shape)}",
                          DeclaredShapeWarning, stacklevel=2)
            self.inferred_shapes_trusted = False
        if name not in self.inferred:
            return
        dtype, dims = self.inferred[name]
        if (self.inferred_shapes_trusted and differs((dtype, dims))) or (dtype is not None and dtype != got):
            raise ctx.error(
                f"output '{name}' is {fmt_shape(shape)} {got} here, but the model's declared or "
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
