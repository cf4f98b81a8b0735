"""Loading and validating an ONNX model before import: decoding, external data, node order,
tensor data, and the static shapes of the graph inputs (with user overrides) through ONNX
shape inference. Nothing here knows MLIR; every failure is a one-line ModelError or
UnsupportedError naming the model, and the node or tensor at fault."""

from __future__ import annotations

import contextlib
import heapq
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np
import onnx
from google.protobuf.message import DecodeError, Message
from onnx import TensorProto, numpy_helper

from ..errors import ModelError, UnsupportedError

if TYPE_CHECKING:
    from .structured import Layout

#: The element types glow_mlir handles: float32 for compute, int64/int32 for shapes and indices, bool.
ELEMENT_TYPES: dict[int, np.dtype] = {
    TensorProto.FLOAT: np.dtype(np.float32),
    TensorProto.INT64: np.dtype(np.int64),
    TensorProto.INT32: np.dtype(np.int32),
    TensorProto.BOOL: np.dtype(np.bool_),
}

#: Element types a model may store tensors in that glow_mlir computes in float32 ("compute in f32, store as declared"):
#: their constants are read as float32, their graph inputs and outputs keep the declared type at the program's
#: boundary (a cast right after the input, right before the output), and where the model stores a float16 value the
#: importer rounds the float32 one to float16 (builder.py), so results equal what the declared type gives.
STORAGE_TYPES: dict[int, np.dtype] = {
    TensorProto.DOUBLE: np.dtype(np.float64),
    TensorProto.FLOAT16: np.dtype(np.float16),
    TensorProto.BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    TensorProto.FLOAT8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    TensorProto.FLOAT8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    TensorProto.FLOAT8E5M2: np.dtype(ml_dtypes.float8_e5m2),
    TensorProto.FLOAT8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    TensorProto.FLOAT4E2M1: np.dtype(ml_dtypes.float4_e2m1fn),
    TensorProto.FLOAT8E8M0: np.dtype(ml_dtypes.float8_e8m0fnu),
}
#: the 8-bit float storage types (saturated by Cast and QuantizeLinear where they say so)
FLOAT8_TYPES = tuple(STORAGE_TYPES[t] for t in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ,
                                                 TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ))
#: the type storage types are computed in
COMPUTE_DTYPE = np.dtype(np.float32)
#: Integer types glow_mlir computes in a wider signed integer (:func:`integer_compute_dtype`: int32, or int64 for
#: uint32), where every value of theirs is exact: their constants are read as the wider type, their graph inputs and
#: outputs keep the declared type at the program's boundary (an input sign- or zero-extended, an output truncated;
#: the 4- and 2-bit types one value per byte, in its low bits, as numpy's ml_dtypes holds them), and where the model
#: stores such a value the importer wraps the wide one back into the type's range (builder.py), so that arithmetic
#: wraps as the declared type's does. uint64 is held in int64, bit for bit: no wider type holds it, so only the ops
#: that do not read a sign take it (builder.UINT64_READERS; comparisons, Max and Min flip the sign bit first).
INTEGER_STORAGE_TYPES: dict[int, np.dtype] = {
    TensorProto.INT8: np.dtype(np.int8),
    TensorProto.UINT8: np.dtype(np.uint8),
    TensorProto.INT16: np.dtype(np.int16),
    TensorProto.UINT16: np.dtype(np.uint16),
    TensorProto.UINT32: np.dtype(np.uint32),
    TensorProto.INT4: np.dtype(ml_dtypes.int4),
    TensorProto.UINT4: np.dtype(ml_dtypes.uint4),
    TensorProto.INT2: np.dtype(ml_dtypes.int2),
    TensorProto.UINT2: np.dtype(ml_dtypes.uint2),
    TensorProto.UINT64: np.dtype(np.uint64),
}


def integer_compute_dtype(dtype: np.dtype) -> np.dtype:
    """The signed type an integer storage type (:data:`INTEGER_STORAGE_TYPES`) is computed in."""
    return np.dtype(np.int64) if np.dtype(dtype) in (np.uint32, np.uint64) else np.dtype(np.int32)


def is_integer_storage(dtype: np.dtype | None) -> bool:
    return dtype is not None and np.dtype(dtype) in INTEGER_STORAGE_TYPES.values()


def integer_bits(dtype: np.dtype) -> tuple[int, bool]:
    """The width in bits of an integer storage type, and whether it is signed."""
    info = ml_dtypes.iinfo(dtype)
    return info.bits, info.min < 0


def stored_dtype(elem_type: int) -> np.dtype | None:
    """The dtype a value of ONNX element type ``elem_type`` is stored in, where it is a storage type of either
    kind (None otherwise)."""
    return STORAGE_TYPES.get(elem_type, INTEGER_STORAGE_TYPES.get(elem_type))


def declared_dtype(elem_type: int) -> np.dtype | None:
    """The dtype of a graph input or output of ONNX element type ``elem_type`` at the program's edge: its storage type
    if it has one, else its element type (None: unsupported)."""
    stored = stored_dtype(elem_type)
    return ELEMENT_TYPES.get(elem_type) if stored is None else stored


def compute_dtype(elem_type: int) -> np.dtype | None:
    """The dtype a value of ONNX element type ``elem_type`` is computed in (None when unsupported)."""
    if elem_type in STORAGE_TYPES:
        return COMPUTE_DTYPE
    if elem_type in INTEGER_STORAGE_TYPES:
        return integer_compute_dtype(INTEGER_STORAGE_TYPES[elem_type])
    return ELEMENT_TYPES.get(elem_type)


#: Where a tensor of each supported element type keeps its values when it has no raw_data.
_TYPED_FIELD: dict[int, str] = {
    TensorProto.FLOAT: "float_data",
    TensorProto.INT64: "int64_data",
    TensorProto.INT32: "int32_data",
    TensorProto.BOOL: "int32_data",
}

_DEFAULT_DOMAINS = ("", "ai.onnx")

#: What ONNX shape inference raises on a model it cannot type: C++ errors surface as the first three,
#: a model too large to serialize as ValueError.
_INFERENCE_ERRORS = (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError, ValueError)

#: the most elements a tensor may have (2^40: 4 TiB of float32, beyond any machine's memory); a shape beyond it comes
#: from absurd dims or attributes (a Tile's repeats, pads of 10^16), and is an error before numpy tries to allocate
MAX_TENSOR_ELEMENTS = 1 << 40


def schema_max(node: onnx.NodeProto, opset: int, what: str) -> int:
    """How many inputs or outputs (``what``) ONNX allows ``node`` at ``opset``; 0 for an op it does not know."""
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
    except onnx.defs.SchemaError:
        return 0
    return schema.max_input if what == "input" else schema.max_output


def too_large(shape: Sequence[int]) -> str:
    """What errors say of a tensor of static ``shape`` beyond :data:`MAX_TENSOR_ELEMENTS` elements; "" within."""
    n = math.prod(int(d) for d in shape)
    return f"{fmt_shape(shape)}: {n} elements, more than any machine's memory holds" if n > MAX_TENSOR_ELEMENTS else ""


#: Inferred type of an ONNX value: element dtype (None when unsupported) and dims (None when unknown).
ValueType = tuple[np.dtype | None, tuple[int | None, ...]]


@dataclass(frozen=True)
class TensorSpec:
    """A graph input or output: its ONNX name, static shape and numpy dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass
class LoadedModel:
    """A decoded and validated model, its nodes in topological order."""

    proto: onnx.ModelProto
    #: how messages name the model: the path as given, or the graph name of a ModelProto
    label: str
    #: the file's stem, or the graph name of a ModelProto
    name: str
    #: opset of the default ONNX domain
    opset: int
    #: (label, node) in topological order; the label is the node name or ``<op>#<index>``
    nodes: list[tuple[str, onnx.NodeProto]]
    initializers: dict[str, np.ndarray]


def type_name(elem_type: int) -> str:
    """The ONNX name of an element type (``FLOAT``, ``DOUBLE``...)."""
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"<element type {elem_type}>"


def fmt_shape(shape: Sequence[int | str | None]) -> str:
    """A shape as messages write it: ``3x10``, ``batchx3`` or ``scalar``."""
    return "x".join("?" if d is None else str(d) for d in shape) if len(shape) else "scalar"


def node_where(model_label: str, node_label: str, op_type: str) -> str:
    """The prefix of a message about one node."""
    return f"{model_label}: node '{node_label}' ({op_type})"


# --------------------------------------------------------------------------- loading


def load_model(model: str | os.PathLike | onnx.ModelProto) -> LoadedModel:
    """Decode ``model`` (a path or a ModelProto, which is copied, not changed), load its external
    data, check its structure, order its nodes and read its initializers."""
    if isinstance(model, onnx.ModelProto):
        label = name = model.graph.name or "model"
        proto = onnx.ModelProto()
        # A copy: external data and input shapes are written into the proto.
        proto.CopyFrom(model)
        base_dir = None
    elif isinstance(model, (str, os.PathLike)):
        path = Path(model)
        label, name = os.fspath(model), path.stem
        proto = _decode(path, label)
        base_dir = path.parent
    else:
        raise TypeError(f"expected a path or an onnx.ModelProto, got {type(model).__name__}")
    opset = _check_structure(proto, label)
    _load_external_data(proto, base_dir, label)
    graph = proto.graph
    nodes = topological_order(graph, label)
    initializers = {t.name: tensor_to_array(t, f"{label}: initializer '{t.name}'") for t in graph.initializer}
    for node_label, node in nodes:
        # Constant values are checked now so that bad data is reported before anything is built.
        for attr in node.attribute:
            if node.op_type == "Constant" and attr.type == onnx.AttributeProto.TENSOR:
                tensor_to_array(attr.t, f"{node_where(label, node_label, node.op_type)}: attribute '{attr.name}'")
    return LoadedModel(proto, label, name, opset, nodes, initializers)


def _decode(path: Path, label: str) -> onnx.ModelProto:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelError(f"{label}: no such file") from None
    except OSError as e:
        raise ModelError(f"{label}: cannot read the model: {e.strerror}") from None
    try:
        # Always binary protobuf, whatever the file's extension (onnx.load guesses text formats from it).
        return onnx.ModelProto.FromString(data)
    except DecodeError:
        raise ModelError(
            f"{label}: not an ONNX model (the file does not decode as ONNX protobuf; is it truncated?)"
        ) from None


def _check_structure(proto: onnx.ModelProto, label: str) -> int:
    """Check what every model needs; return the opset of the default domain."""
    # Protobuf decodes some garbage (and some truncated files) without error: an empty graph or
    # a missing IR version is how they show.
    if not proto.HasField("graph") or proto.ir_version <= 0:
        raise ModelError(f"{label}: not an ONNX model (no graph or no IR version; is the file truncated?)")
    bad = _non_utf8_field(proto)
    if bad:
        raise ModelError(
            f"{label}: not an ONNX model: field {bad} holds text that is not valid UTF-8 (is the file corrupted?)"
        )
    opsets = [o.version for o in proto.opset_import if o.domain in _DEFAULT_DOMAINS]
    if not opsets:
        nodes = proto.graph.node
        if nodes and all(n.domain not in _DEFAULT_DOMAINS for n in nodes):
            # A valid model (ai.onnx.ml, training ops...) that needs no default opset: the ops of other domains that
            # have handlers import as any other; the rest is unsupported, not malformed.
            from .builder import lookup

            missing = sorted({f"{n.domain}.{n.op_type}" for n in nodes if lookup(n.op_type, n.domain, 0) is None})
            if not missing:
                return onnx.defs.onnx_opset_version()
            raise UnsupportedError(f"{label}: the model uses only ops of other domains than the default ONNX domain; "
                                   f"unsupported among them: {', '.join(missing)}")
        raise ModelError(f"{label}: the model imports no opset of the default ONNX domain")
    graph = proto.graph
    if not graph.output:
        raise ModelError(f"{label}: the graph has no outputs")
    for i, node in enumerate(graph.node):
        if not node.op_type:
            raise ModelError(f"{label}: node #{i} ('{node.name}') has no op_type")
    if graph.sparse_initializer:
        raise UnsupportedError(
            f"{label}: sparse initializers are not supported ('{graph.sparse_initializer[0].values.name}')"
        )
    return opsets[0]


def _non_utf8_field(msg: Message) -> str | None:
    """The full name of a string field holding bytes that are not UTF-8 (protobuf hands those over as
    ``bytes`` instead of failing), or None."""
    for field, value in msg.ListFields():
        # A singular field's value is the str, bytes or message itself; a repeated one is a container.
        if field.type == field.TYPE_STRING:
            if any(isinstance(v, bytes) for v in ([value] if isinstance(value, (str, bytes)) else value)):
                return field.full_name
        elif field.type == field.TYPE_MESSAGE:
            for sub in [value] if isinstance(value, Message) else value:
                bad = _non_utf8_field(sub)
                if bad:
                    return bad
    return None


def _graph_tensors(graph: onnx.GraphProto) -> Iterator[TensorProto]:
    """Every tensor stored in ``graph``: initializers and node attributes, subgraphs included."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("g"):
                yield from _graph_tensors(attr.g)
            for g in attr.graphs:
                yield from _graph_tensors(g)


def _load_external_data(proto: onnx.ModelProto, base_dir: Path | None, label: str) -> None:
    """Read external tensor data into raw_data, refusing any file outside the model's folder."""
    for t in _graph_tensors(proto.graph):
        if t.data_location != TensorProto.EXTERNAL:
            continue
        what = f"{label}: tensor '{t.name}'"
        if base_dir is None:
            raise ModelError(
                f"{what} keeps its data in an external file: import the model from its path, not as a ModelProto"
            )
        info = {e.key: e.value for e in t.external_data}
        location = info.get("location", "")
        target = base_dir / location
        root = base_dir.resolve()
        # resolve() follows symbolic links too, so a link pointing out of the folder is refused as well.
        if not location or Path(location).is_absolute() or not target.resolve().is_relative_to(root):
            raise ModelError(f"{what}: external data location '{location}' is not a file inside the model's folder")
        try:
            offset = int(info.get("offset", "0"))
            length = int(info.get("length", "-1"))
        except ValueError:
            raise ModelError(f"{what}: external data offset or length is not an integer") from None
        if offset < 0:
            raise ModelError(f"{what}: external data offset {offset} is negative")
        try:
            with target.open("rb") as f:
                f.seek(offset)
                data = f.read(length if length >= 0 else -1)
        except OSError as e:
            raise ModelError(f"{what}: cannot read external data file '{location}': {e.strerror}") from None
        if length >= 0 and len(data) != length:
            raise ModelError(
                f"{what}: external data file '{location}' has {len(data)} bytes at offset {offset}, {length} expected"
            )
        t.raw_data = data
        del t.external_data[:]
        t.data_location = TensorProto.DEFAULT


def topological_order(graph: onnx.GraphProto, label: str,
                      outer: Iterable[str] = ()) -> list[tuple[str, onnx.NodeProto]]:
    """The nodes of ``graph`` in topological order, keeping the file's order where it is already
    valid (ONNX requires sorted nodes; unsorted acyclic graphs are accepted). Raises ModelError
    for values nothing produces, values produced twice, and cycles. ``outer``: the values of the enclosing graphs
    a subgraph may read."""
    nodes = list(graph.node)
    labels = [n.name or f"{n.op_type}#{i}" for i, n in enumerate(nodes)]
    available = {i.name for i in graph.input} | {t.name for t in graph.initializer} | set(outer)
    problems: list[str] = []
    producer: dict[str, int] = {}
    for i, n in enumerate(nodes):
        for out in n.output:
            if out in available or out in producer:
                problems.append(f"node '{labels[i]}' ({n.op_type}): output '{out}' is already defined")
            elif out:
                producer[out] = i
    users: list[list[int]] = [[] for _ in nodes]
    pending = [0] * len(nodes)
    for i, n in enumerate(nodes):
        deps = set()
        for name in n.input:
            if not name or name in available:
                continue
            if name in producer:
                deps.add(producer[name])
            else:
                problems.append(
                    f"node '{labels[i]}' ({n.op_type}): input '{name}' is not produced by any node "
                    "and is not a graph input or initializer"
                )
        pending[i] = len(deps)
        for d in deps:
            users[d].append(i)
    for out in graph.output:
        if out.name not in available and out.name not in producer:
            problems.append(f"graph output '{out.name}' is not produced by any node")
    if problems:
        raise ModelError(f"{label}: " + "; ".join(problems))
    # Kahn's algorithm, taking ready nodes lowest index first so a sorted graph keeps its order.
    ready = [i for i in range(len(nodes)) if pending[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for u in users[i]:
            pending[u] -= 1
            if pending[u] == 0:
                heapq.heappush(ready, u)
    if len(order) < len(nodes):
        stuck = ", ".join(labels[i] for i in range(len(nodes)) if pending[i] > 0)
        raise ModelError(f"{label}: the graph has a cycle: nodes {stuck} cannot be ordered")
    return [(labels[i], nodes[i]) for i in order]


def tensor_to_array(t: TensorProto, what: str) -> np.ndarray:
    """The value of a stored tensor, after checking its element type and that its data fills its
    shape exactly. ``what`` starts every message (model, and tensor or node)."""
    if stored_dtype(t.data_type) is not None:
        return _storage_to_array(t, what)
    dtype = ELEMENT_TYPES.get(t.data_type)
    if dtype is None:
        raise UnsupportedError(f"{what}: unsupported element type {type_name(t.data_type)}")
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise ModelError(f"{what}: shape {dims} has a negative dimension")
    count = math.prod(dims)
    typed = getattr(t, _TYPED_FIELD[t.data_type])
    if t.HasField("raw_data"):
        if len(typed):
            raise ModelError(f"{what}: holds both raw_data and {_TYPED_FIELD[t.data_type]}")
        got, want, unit = len(t.raw_data), count * dtype.itemsize, "bytes"
    else:
        got, want, unit = len(typed), count, "values"
    if got != want:
        size = "too long" if got > want else "too short"
        raise ModelError(
            f"{what}: data is {size}: {got} {unit} for shape {fmt_shape(dims)} of "
            f"{type_name(t.data_type)}, {want} expected"
        )
    return numpy_helper.to_array(t).astype(dtype, copy=False)


def _storage_to_array(t: TensorProto, what: str) -> np.ndarray:
    """A stored tensor of a storage type (:data:`STORAGE_TYPES`, :data:`INTEGER_STORAGE_TYPES`) as the values it
    holds, in the type they are computed in."""
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise ModelError(f"{what}: shape {dims} has a negative dimension")
    if t.data_location == TensorProto.EXTERNAL:
        raise ModelError(f"{what}: its data is in an external file that was not loaded")
    try:
        array = numpy_helper.to_array(t)
    except (ValueError, TypeError) as e:
        raise ModelError(f"{what}: cannot read its {type_name(t.data_type)} data: {e}") from None
    if array.size != math.prod(dims):
        raise ModelError(f"{what}: data holds {array.size} values for shape {fmt_shape(dims)}")
    return array.astype(compute_dtype(t.data_type))


def storage_types(graph: onnx.GraphProto) -> dict[str, np.dtype]:
    """The values of ``graph`` (an inferred one: inputs, value_info, outputs) whose element type is a storage type,
    with that type's dtype."""
    found = {}
    for vi in [*graph.input, *graph.value_info, *graph.output]:
        elem = vi.type.tensor_type.elem_type if vi.type.HasField("tensor_type") else 0
        if stored_dtype(elem) is not None:
            found[vi.name] = stored_dtype(elem)
    return found


# --------------------------------------------------------------------------- shapes


def parse_input_shapes(specs: Iterable[str]) -> dict[str, Any]:
    """Parse ``--input-shape`` options into ``{NAME: dims}``: ``NAME=DxDx...xD`` a tensor's shape, ``NAME=[DxD,DxD]``
    the shapes of a sequence's elements (``NAME=[]`` an empty sequence), ``NAME=none`` an empty optional."""
    shapes: dict[str, Any] = {}
    shape = r"[1-9][0-9]*(x[1-9][0-9]*)*"
    for spec in specs:
        # rpartition: a name may contain '=', dims never do.
        name, sep, dims = spec.rpartition("=")
        name, dims = name.strip(), dims.strip()
        if not sep or not name or not re.fullmatch(rf"{shape}|\[({shape}(,{shape})*)?\]|none", dims.replace(" ", "")):
            raise ModelError(
                f"--input-shape '{spec}': expected NAME=DxDx...xD with positive integer dimensions, "
                "e.g. input=1x3x224x224 (a sequence's elements: NAME=[DxD,DxD]; an empty optional: NAME=none)"
            )
        if name in shapes:
            raise ModelError(f"--input-shape: input '{name}' is given twice")
        dims = dims.replace(" ", "")
        if dims == "none":
            shapes[name] = None
        elif dims.startswith("["):
            shapes[name] = [tuple(int(d) for d in s.split("x")) for s in dims[1:-1].split(",") if s]
        else:
            shapes[name] = tuple(int(d) for d in dims.split("x"))
    return shapes


def declared_types(graph: onnx.GraphProto) -> dict[str, ValueType]:
    """The types the model itself declares for its intermediate values and outputs (value_info, graph outputs), where
    they give an element type and a shape."""
    types: dict[str, ValueType] = {}
    for vi in [*graph.value_info, *graph.output]:
        tt = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and tt.HasField("shape"):
            dims = tuple(d if isinstance(d, int) and d > 0 else None for d in _dims(tt.shape))
            types[vi.name] = (compute_dtype(tt.elem_type), dims)
    return types


def _dims(shape: onnx.TensorShapeProto) -> list[int | str | None]:
    """Dims of a shape: an int when static, the symbolic name or None when not."""
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in shape.dim]


def _hint(name: str, dims: Sequence[int | str | None]) -> str:
    example = "x".join(str(d) if isinstance(d, int) and d > 0 else "D" for d in dims) or "D"
    return f"give it with --input-shape {name}={example} (input_shapes={{'{name}': [...]}})"


def _no_elements(label: str, name: str, dims: Sequence[int | str | None]) -> UnsupportedError:
    return UnsupportedError(
        f"{label}: graph input '{name}' has shape {fmt_shape(dims)}: tensors without elements are not supported"
    )


#: float initializers with more elements than this are weights, whose values no shape depends on
_SHAPE_FREE_ELEMENTS = 4096


#: attribute defaults that ONNX's C++ shape inference reads otherwise than the op's schema (and onnx.reference, and
#: the handlers): STFT without ``onesided`` is inferred as the full spectrum, where the schema's default, 1, gives
#: the one-sided one (a model with no declared output shape then failed import on the disagreement)
_INFERENCE_DEFAULTS = {"STFT": {"onesided": 1}}


def _explicit_defaults(graph: onnx.GraphProto) -> None:
    """Write :data:`_INFERENCE_DEFAULTS` into the nodes that leave them out, subgraphs included (the value the
    schema gives them: the model's meaning does not change)."""
    for node in graph.node:
        if node.domain in _DEFAULT_DOMAINS and node.op_type in _INFERENCE_DEFAULTS:
            present = {a.name for a in node.attribute}
            for name, value in _INFERENCE_DEFAULTS[node.op_type].items():
                if name not in present:
                    node.attribute.append(onnx.helper.make_attribute(name, value))
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _explicit_defaults(attr.g)
            for sub in attr.graphs:
                _explicit_defaults(sub)


@contextlib.contextmanager
def _weights_set_aside(graph: onnx.GraphProto) -> Iterator[None]:
    """The data of large float initializers out of ``graph`` for the duration: ONNX shape inference copies the whole
    model through its serialized form, weights included (resnet18: 0.35 s of a 0.55 s import for 46 MB of weights),
    but reads only the types and dims of tensors that hold weights. Shape tensors (ints) and small ones stay."""
    floats = (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)
    aside = []
    for t in graph.initializer:
        if t.data_type in floats and t.HasField("raw_data") and int(np.prod(t.dims)) > _SHAPE_FREE_ELEMENTS:
            aside.append((t, t.raw_data))
            t.ClearField("raw_data")
    try:
        yield
    finally:
        for t, data in aside:
            t.raw_data = data


def resolve_shapes(
    loaded: LoadedModel, input_shapes: Mapping[str, Any] | None
) -> tuple[list[TensorSpec], dict[str, ValueType], dict[str, np.dtype], list[Layout]]:
    """Fix the graph inputs' shapes (``input_shapes`` overrides the model's dims; for a sequence or optional input it
    gives its elements' shapes: :mod:`.structured`), run ONNX shape inference, and return the tensor inputs
    (initializers excluded, a sequence's or optional's elements included; a storage type as declared), the inferred
    type of every value (storage types as the float32 they are computed in), the values the model stores in a storage
    type (:func:`storage_types`) and the layouts of the sequence and optional inputs."""
    from .structured import OPTIONAL, SEQUENCE, structured_input, value_kind
    label, graph = loaded.label, loaded.proto.graph
    overrides = dict(input_shapes or {})
    inputs = [i for i in graph.input if i.name not in loaded.initializers]
    names = [i.name for i in inputs]
    unknown = [n for n in overrides if n not in names]
    if unknown:
        raise ModelError(
            f"{label}: input_shapes names {', '.join(repr(n) for n in unknown)}, which "
            f"{'is' if len(unknown) == 1 else 'are'} not a graph input (inputs: {', '.join(names) or 'none'})"
        )
    for out in graph.output:
        kind = out.type.WhichOneof("value")
        if kind not in (None, "tensor_type", "sequence_type", "optional_type"):
            raise UnsupportedError(f"{label}: graph output '{out.name}' is a {kind.removesuffix('_type')}, not a tensor "
                                   "(map values are not supported)")
    specs: list[TensorSpec] = []
    layouts: list[Layout] = []
    for inp in inputs:
        if value_kind(inp.type) in (SEQUENCE, OPTIONAL):
            layout, elements = structured_input(label, inp, overrides.get(inp.name), inp.name in overrides)
            layouts.append(layout)
            specs += elements
            continue
        if not inp.type.HasField("tensor_type"):
            raise UnsupportedError(f"{label}: graph input '{inp.name}' is not a tensor (map values are not supported)")
        tt = inp.type.tensor_type
        dtype = declared_dtype(tt.elem_type)
        if dtype is None:
            raise UnsupportedError(
                f"{label}: graph input '{inp.name}' has unsupported element type {type_name(tt.elem_type)}"
            )
        declared = _dims(tt.shape) if tt.HasField("shape") else None
        if inp.name in overrides:
            dims = list(overrides[inp.name])
            if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
                raise ModelError(f"{label}: input_shapes['{inp.name}'] = {dims} must hold positive integers")
            if 0 in dims:
                raise _no_elements(label, inp.name, dims)
            if declared is not None and len(dims) != len(declared):
                raise ModelError(
                    f"{label}: input_shapes['{inp.name}'] has rank {len(dims)} ({fmt_shape(dims)}) but "
                    f"the model's input has rank {len(declared)} ({fmt_shape(declared)})"
                )
            tt.shape.ClearField("dim")
            for d in dims:
                tt.shape.dim.add().dim_value = int(d)
        elif declared is None:
            raise ModelError(f"{label}: graph input '{inp.name}' has no shape: {_hint(inp.name, [])}")
        elif 0 in declared:
            raise _no_elements(label, inp.name, declared)
        elif not all(isinstance(d, int) and d > 0 for d in declared):
            raise ModelError(
                f"{label}: graph input '{inp.name}' has a dynamic shape {fmt_shape(declared)}: "
                f"{_hint(inp.name, declared)}"
            )
        spec = TensorSpec(inp.name, tuple(int(d.dim_value) for d in tt.shape.dim), dtype)
        if size := too_large(spec.shape):
            raise ModelError(f"{label}: graph input '{inp.name}' would be {size}")
        specs.append(spec)
    if overrides:
        # Shapes the file records for other values were computed from the old input shapes and
        # would contradict the new ones: let inference recompute them.
        del graph.value_info[:]
        for out in graph.output:
            if out.type.HasField("tensor_type"):
                out.type.tensor_type.ClearField("shape")
    _explicit_defaults(graph)
    try:
        with _weights_set_aside(graph):
            inferred = onnx.shape_inference.infer_shapes(loaded.proto, check_type=False, strict_mode=False)
    except _INFERENCE_ERRORS as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(f"{label}: ONNX shape inference failed: {first}") from None
    g = inferred.graph
    types: dict[str, ValueType] = {}
    for vi in [*g.input, *g.value_info, *g.output]:
        tt = vi.type.tensor_type
        if vi.type.HasField("tensor_type") and tt.HasField("shape"):
            dims = tuple(d if isinstance(d, int) and d > 0 else None for d in _dims(tt.shape))
            types[vi.name] = (compute_dtype(tt.elem_type), dims)
    return specs, types, storage_types(g), layouts
