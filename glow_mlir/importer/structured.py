"""Sequence and optional values: ONNX's ``sequence(tensor)``, ``optional(tensor)`` and ``optional(sequence(tensor))``.

glow_mlir compiles for static shapes, so a sequence has a length known at compile time, and an optional is known to
be empty or not. Inside the graph they exist only at import: a :class:`Seq` is a tuple of tensors and an
:class:`Opt` holds a tensor, a Seq or nothing; the sequence ops (SequenceConstruct, SequenceAt, SplitToSequence,
SequenceMap, ...) rearrange them there, and what is left is plain tensors.

At the graph's edges a sequence or optional input or output is carried by plain tensors, one per element (a
:class:`Layout`): a sequence ``x`` of n tensors by ``x[0]`` .. ``x[n-1]``; an optional tensor ``x`` by ``x`` itself
when it holds one, by nothing when it is empty; an optional sequence as a sequence, or by nothing. The shapes of an
input's elements are given at compile time (``input_shapes``: a list of shapes for a sequence, a shape or None for
an optional), and the compiled model takes and gives Python lists and None for these values
(:func:`flatten`, :func:`regroup`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import onnx

from ..errors import InputError, ModelError, UnsupportedError
from .model import TensorSpec, compute_dtype, declared_dtype, type_name

#: the kinds of structured values
SEQUENCE, OPTIONAL = "sequence", "optional"


@dataclass(frozen=True)
class Seq:
    """A sequence at import: its tensors (ir.Value or Const) and their element type (an empty one has one too)."""

    items: tuple[Any, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class Opt:
    """An optional at import: its element (a tensor or a :class:`Seq`), or None when it is empty."""

    value: Any


#: a value at import that is not a plain tensor
Structured: TypeAlias = Seq | Opt


@dataclass(frozen=True)
class Layout:
    """How a graph input or output that is a sequence or an optional is carried by plain tensors."""

    name: str
    #: SEQUENCE or OPTIONAL
    kind: str
    #: the names of the tensors carrying it, in order: a sequence's elements; an optional's tensor (its own name), or
    #: its sequence's elements
    elements: tuple[str, ...]
    #: what an optional holds: "tensor", "sequence", or "" (empty); "sequence" for a sequence
    holds: str = SEQUENCE
    #: the ONNX element type of its tensors
    elem_type: int = onnx.TensorProto.FLOAT

    def to_json(self) -> list:
        return [self.name, self.kind, list(self.elements), self.holds, self.elem_type]

    @classmethod
    def from_json(cls, data: list) -> Layout:
        name, kind, elements, holds, elem_type = data
        return cls(name, kind, tuple(elements), holds, elem_type)


def element_names(name: str, n: int) -> tuple[str, ...]:
    """The names of the tensors carrying the n elements of sequence ``name``."""
    return tuple(f"{name}[{i}]" for i in range(n))


def value_kind(t: onnx.TypeProto) -> str:
    """'tensor', SEQUENCE, OPTIONAL, or another kind (map, sparse tensor) of an ONNX type."""
    kind = t.WhichOneof("value")
    return {"tensor_type": "tensor", "sequence_type": SEQUENCE, "optional_type": OPTIONAL}.get(kind, kind or "")


def _tensor_elem_type(label: str, name: str, t: onnx.TypeProto, what: str) -> int:
    if value_kind(t) != "tensor":
        raise UnsupportedError(f"{label}: graph {what} '{name}' is a {_describe(t)}, not a tensor, a sequence of "
                               "tensors or an optional of either")
    return t.tensor_type.elem_type


def _describe(t: onnx.TypeProto) -> str:
    kind = value_kind(t)
    if kind == SEQUENCE:
        return f"sequence of {_describe(t.sequence_type.elem_type)}"
    if kind == OPTIONAL:
        return f"optional {_describe(t.optional_type.elem_type)}"
    return kind.removesuffix("_type") or "value of no type"


def element_type(label: str, name: str, t: onnx.TypeProto, what: str = "input") -> int:
    """The ONNX element type of the tensors of structured value ``name`` of type ``t``, which must be supported."""
    inner = t.sequence_type.elem_type if value_kind(t) == SEQUENCE else t.optional_type.elem_type
    if value_kind(inner) == SEQUENCE:
        inner = inner.sequence_type.elem_type
    elem = _tensor_elem_type(label, name, inner, what)
    if declared_dtype(elem) is None:
        raise UnsupportedError(f"{label}: graph {what} '{name}' has unsupported element type {type_name(elem)}")
    return elem


def _shape(label: str, name: str, dims: Any) -> tuple[int, ...]:
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence) or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d > 0 for d in dims):
        raise ModelError(f"{label}: input_shapes['{name}'] has an element shape {dims!r}: it must hold integers >= 1")
    return tuple(int(d) for d in dims)


def _is_shape_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and all(
        isinstance(v, Sequence) and not isinstance(v, (str, bytes)) for v in value)


def structured_input(label: str, inp: onnx.ValueInfoProto, given: Any, has_override: bool
                     ) -> tuple[Layout, list[TensorSpec]]:
    """The layout of a sequence or optional graph input and the tensors carrying it, from ``given`` (its entry in
    input_shapes: a list of element shapes for a sequence, a shape or None for an optional tensor, a list of shapes
    or None for an optional sequence). An optional tensor without an entry holds a tensor of its declared shape."""
    t, name = inp.type, inp.name
    kind = value_kind(t)
    elem = element_type(label, name, t)
    dtype = declared_dtype(elem)
    if kind == OPTIONAL:
        inner = t.optional_type.elem_type
        if not has_override:
            dims = [d.dim_value if d.HasField("dim_value") else None for d in inner.tensor_type.shape.dim] \
                if value_kind(inner) == "tensor" and inner.tensor_type.HasField("shape") else None
            if dims is None or None in dims or 0 in dims:
                raise ModelError(f"{label}: graph input '{name}' is an {_describe(t)}: give input_shapes['{name}'] "
                                 "(a shape, a list of shapes for a sequence, or None when it is empty; on the tools "
                                 f"--input-shape '{name}=DxD', '{name}=[DxD,DxD]' or '{name}=none')")
            given = dims
        if given is None:
            return Layout(name, OPTIONAL, (), "", elem), []
        if value_kind(inner) == "tensor":
            return Layout(name, OPTIONAL, (name,), "tensor", elem), [TensorSpec(name, _shape(label, name, given),
                                                                               dtype)]
    elif not has_override:
        raise ModelError(f"{label}: graph input '{name}' is a {_describe(t)}: give the shapes of its elements in "
                         f"input_shapes['{name}'] (a list of shapes; on the tools --input-shape '{name}=[DxD,DxD]'): "
                         "its length is fixed at compile time")
    if not _is_shape_list(given):
        raise ModelError(f"{label}: input_shapes['{name}'] = {given!r} must be a list of shapes, one per element of "
                         f"the {_describe(t)}")
    names = element_names(name, len(given))
    specs = [TensorSpec(n, _shape(label, name, dims), dtype) for n, dims in zip(names, given)]
    return Layout(name, kind, names, SEQUENCE, elem), specs


def bound(layout: Layout, values: Mapping[str, Any]) -> Structured:
    """The import-time value of a structured input, its tensors bound to ``values`` (by name)."""
    items = tuple(values[n] for n in layout.elements)
    if layout.kind == OPTIONAL and layout.holds != SEQUENCE:
        return Opt(items[0] if items else None)
    seq = Seq(items, compute_dtype(layout.elem_type))
    return seq if layout.kind == SEQUENCE else Opt(seq)


def output_layout(name: str, value: Any, elem_type: int) -> Layout | None:
    """The layout of graph output ``name`` whose import-time value is ``value`` (its tensors of ONNX element type
    ``elem_type``); None for a plain tensor."""
    if isinstance(value, Seq):
        return Layout(name, SEQUENCE, element_names(name, len(value.items)), SEQUENCE, elem_type)
    if isinstance(value, Opt):
        inner = value.value
        if inner is None:
            return Layout(name, OPTIONAL, (), "", elem_type)
        if isinstance(inner, Seq):
            return Layout(name, OPTIONAL, element_names(name, len(inner.items)), SEQUENCE, elem_type)
        return Layout(name, OPTIONAL, (name,), "tensor", elem_type)
    return None


def carried(value: Any) -> list[Any]:
    """The tensors carrying an import-time value: itself, a sequence's items, an optional's tensor or items."""
    if isinstance(value, Seq):
        return list(value.items)
    if isinstance(value, Opt):
        return [] if value.value is None else carried(value.value)
    return [value]


def flatten(model: str, layouts: Mapping[str, Layout], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Named inputs as the tensors the compiled code takes: each sequence or optional replaced by its tensors."""
    flat: dict[str, Any] = {}
    for name, value in inputs.items():
        layout = layouts.get(name)
        if layout is None:
            flat[name] = value
            continue
        if layout.kind == OPTIONAL and layout.holds != SEQUENCE:
            if (value is None) != (layout.holds == ""):
                compiled = "empty" if layout.holds == "" else "holding a tensor"
                raise InputError(f"{model}: input '{name}' is an optional compiled {compiled}; got "
                                 f"{'None' if value is None else 'a value'}")
            if value is not None:
                flat[name] = value
            continue
        if value is None and layout.kind == OPTIONAL:
            raise InputError(f"{model}: input '{name}' is an optional sequence compiled holding "
                             f"{len(layout.elements)} tensors; got None")
        if not isinstance(value, (list, tuple)):
            raise InputError(f"{model}: input '{name}' is a sequence: give a list of arrays, got "
                             f"{type(value).__name__}")
        if len(value) != len(layout.elements):
            raise InputError(f"{model}: input '{name}' is a sequence compiled for {len(layout.elements)} tensors; got "
                             f"{len(value)}")
        flat.update(zip(layout.elements, value))
    return flat


def regroup(layouts: Sequence[Layout], outputs: dict[str, Any]) -> dict[str, Any]:
    """The compiled code's named outputs with each sequence output a list and each optional one its value or None
    (``layouts``: those of the structured outputs)."""
    for layout in layouts:
        items = [outputs.pop(n) for n in layout.elements]
        if layout.kind == SEQUENCE or layout.holds == SEQUENCE:
            outputs[layout.name] = items
        else:
            outputs[layout.name] = items[0] if items else None
    return outputs
