"""An ONNX backend (``onnx.backend.base.Backend``) on top of :func:`glow_mlir.api.compile`, so that onnx's backend
tests, and tools written against that interface, run models through glow_mlir::

    rep = GlowBackend.prepare(model)            # checks the model; compiles it now when its inputs are static
    (y,) = rep.run([x])                         # or rep.run({"x": x}); outputs in graph order, also by name
    (y,) = GlowBackend.run_model(model, [x])
    (y,) = GlowBackend.run_node(node, [x])      # a one-node model typed from the inputs

glow_mlir compiles for static shapes. A model with dynamic input dims is compiled at ``run`` for the shapes of the
actual inputs. An input whose value a node needs at compile time (Reshape's shape, and the like: the importer raises
:class:`NonConstantInputError` naming it) is bound, from then on, to the value given at ``run`` as an initializer;
where the value needed is computed from inputs, the inputs it is computed from are (not through Shape or Size, which
read only a shape).
So is an input without elements (empty axes, say): its value is its shape, and the compiled code takes no tensor
without elements. A sequence input (a list of arrays) is compiled for its length and its elements' shapes, an
optional one (an array, a list, or None) for what it holds; sequence outputs come back as lists, optional ones as
their value or None. Compiled code is cached per input signature: the names, shapes and dtypes of the inputs (a
sequence's elements each, an optional's presence) and the bound inputs' values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from .api import CompiledModel, compile
from .errors import InputError, NonConstantInputError, UnsupportedError
from .importer import check_model
from .importer.folding import nested_nodes, reads

#: An input signature: (name, what it is) per input (:func:`_signature`), then (name, value bytes) per bound input.
_Key = tuple[tuple[tuple[str, tuple], ...], tuple[tuple[str, bytes], ...]]


def _value(v: Any) -> Any:
    """An input as the compiled model takes it: an array, a list of arrays (a sequence), or None (an empty
    optional)."""
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return [np.asarray(x) for x in v]
    return np.asarray(v)


def _signature(v: Any) -> tuple:
    """What compiled code depends on in an input: (shape, dtype) of an array, those of each element of a list,
    or ("none",)."""
    if v is None:
        return ("none",)
    if isinstance(v, list):
        return ("sequence", tuple((tuple(a.shape), a.dtype.str) for a in v))
    return (tuple(v.shape), v.dtype.str)


def _shape_of(v: Any) -> Any:
    """An input's entry in input_shapes: an array's shape, a list of shapes, or None."""
    if v is None:
        return None
    if isinstance(v, list):
        return [list(a.shape) for a in v]
    return list(v.shape)


def _feeding_inputs(graph: onnx.GraphProto, value: str, inputs: Sequence[str]) -> set[str]:
    """The graph ``inputs`` that ``value`` (of the graph or of a subgraph) is computed from, walking back through
    the nodes that make it (not through Shape and Size: their outputs are known from a shape alone)."""
    producer = {out: node for node in nested_nodes(graph) for out in node.output if out}
    found, seen, todo = set(), set(), [value]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in inputs:
            found.add(name)
        node = producer.get(name)
        if node is not None and node.op_type not in ("Shape", "Size"):
            todo.extend(reads(node))
    return found


def _static_dims(value_info: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    """The declared shape of a graph input when every dim is a known size, else None."""
    tensor_type = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type") or not tensor_type.HasField("shape"):
        return None
    dims = tensor_type.shape.dim
    return tuple(d.dim_value for d in dims) if all(d.HasField("dim_value") for d in dims) else None


class GlowRep(BackendRep):
    """A model prepared for repeated runs: compiled code per input signature (see the module docstring)."""

    def __init__(self, model: onnx.ModelProto, optimize: bool = True):
        self._model = onnx.ModelProto()
        self._model.CopyFrom(model)
        self._optimize = optimize
        graph = self._model.graph
        initializers = {t.name for t in graph.initializer}
        self._inputs = [i for i in graph.input if i.name not in initializers]
        self.input_names = [i.name for i in self._inputs]
        self.output_names = [o.name for o in graph.output]
        self._outputs_type = namedtupledict("Outputs", self.output_names)
        #: inputs whose values the compiled code depends on, found from the importer's NonConstantInputError
        self._bound: set[str] = set()
        self._cache: dict[_Key, CompiledModel] = {}
        declared = {i.name: _static_dims(i) for i in self._inputs}
        if all(dims is not None and 0 not in dims for dims in declared.values()):
            try:
                compiled = self._compile({})
            except NonConstantInputError as e:
                needed = _feeding_inputs(graph, e.value, self.input_names)
                if not needed:  # a value the model computes from no input: unsupported
                    raise
                # Compiled at run, when their values are known.
                self._bound |= needed
            else:
                self._cache[self._key(self._declared_signature(declared), {})] = compiled
        else:
            # Nothing can be compiled before the shapes (or the empty inputs) are known; unsupported ops are reported
            # now all the same.
            check_model(self._model)

    def _declared_signature(self, declared: Mapping[str, tuple[int, ...] | None]) -> dict[str, tuple]:
        """(shape, dtype) of each input as the model declares them (all static)."""
        signature = {}
        for i in self._inputs:
            dtype = helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
            signature[i.name] = (tuple(declared[i.name]), np.dtype(dtype).str)
        return signature

    def _key(self, signature: Mapping[str, tuple], arrays: Mapping[str, Any]) -> _Key:
        values = tuple((name, arrays[name].tobytes()) for name in sorted(self._bound))
        return tuple(sorted(signature.items())), values

    def _named(self, inputs: Any) -> dict[str, Any]:
        """The inputs by name, from a sequence in graph-input order or a mapping."""
        if isinstance(inputs, Mapping):
            named = {str(k): _value(v) for k, v in inputs.items()}
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) != len(self.input_names):
                takes = f"{len(self.input_names)} ({', '.join(self.input_names)})"
                raise InputError(f"{len(inputs)} inputs given, the model takes {takes}")
            named = {name: _value(v) for name, v in zip(self.input_names, inputs)}
        else:
            raise InputError(f"inputs must be a list, a tuple or a dict of arrays, got {type(inputs).__name__}")
        unknown = sorted(set(named) - set(self.input_names))
        missing = [n for n in self.input_names if n not in named]
        if unknown or missing:
            raise InputError(f"the model takes inputs {self.input_names}; missing {missing}, unknown {unknown}")
        return named

    def _constants(self, arrays: Mapping[str, np.ndarray]) -> set[str]:
        """The inputs compiled as initializers: the bound ones, and those without elements."""
        return self._bound | {name for name, a in arrays.items() if isinstance(a, np.ndarray) and a.size == 0}

    def _compile(self, arrays: Mapping[str, np.ndarray]) -> CompiledModel:
        """Compile with the bound and empty inputs made initializers and the dynamic inputs given the shapes of
        ``arrays``."""
        model = onnx.ModelProto()
        model.CopyFrom(self._model)
        constants = self._constants(arrays)
        model.graph.initializer.extend(numpy_helper.from_array(arrays[name], name) for name in sorted(constants))
        input_shapes = {
            i.name: _shape_of(arrays[i.name])
            for i in self._inputs
            if i.name not in constants and i.name in arrays and _static_dims(i) is None
        }
        return compile(model, input_shapes=input_shapes or None, optimize=self._optimize)

    def _compiled_for(self, arrays: Mapping[str, np.ndarray]) -> CompiledModel:
        """The compiled code for these inputs: cached, or compiled now (binding inputs the importer needs)."""
        signature = {name: _signature(a) for name, a in arrays.items()}
        while True:
            key = self._key(signature, arrays)
            compiled = self._cache.get(key)
            if compiled is not None:
                return compiled
            try:
                compiled = self._compile(arrays)
            except NonConstantInputError as e:
                # Only graph inputs can be bound; a value the model computes from none stays unsupported.
                needed = _feeding_inputs(self._model.graph, e.value, list(arrays)) - self._bound
                if not needed:
                    raise
                self._bound |= needed
                continue
            self._cache[key] = compiled
            return compiled

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """Run on ``inputs`` (a sequence in graph-input order, or a dict by name); the outputs in graph order, as a
        namedtuple that also takes output names as keys."""
        if kwargs:
            raise TypeError(f"unexpected run options {sorted(kwargs)}")
        arrays = self._named(inputs)
        compiled = self._compiled_for(arrays)
        constants = self._constants(arrays)
        outputs = compiled.run({name: a for name, a in arrays.items() if name not in constants})
        return self._outputs_type(*(outputs[name] for name in self.output_names))


class GlowBackend(Backend):
    """glow_mlir as an ONNX backend: CPU only. ``prepare`` takes ``optimize=False`` to skip the graph optimizer."""

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Only the CPU (``"CPU"``, ``"CPU:0"``)."""
        try:
            parsed = Device(device)
        except (AttributeError, ValueError):
            return False
        return parsed.type == DeviceType.CPU and parsed.device_id == 0

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> GlowRep:
        """A :class:`GlowRep` of ``model``. Raises UnsupportedError for other devices than the CPU, and the
        importer's ModelError or UnsupportedError for models glow_mlir cannot compile."""
        if not cls.supports_device(device):
            raise UnsupportedError(f"device '{device}' is not supported: glow_mlir compiles for the CPU only")
        optimize = kwargs.pop("optimize", True)
        if kwargs:
            raise TypeError(f"unexpected prepare options {sorted(kwargs)}")
        if not isinstance(model, onnx.ModelProto):
            raise TypeError(f"expected an onnx.ModelProto, got {type(model).__name__}")
        return GlowRep(model, optimize=optimize)

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[Any, ...]:
        """``prepare(model).run(inputs)``."""
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[Any, ...]:
        """Run one node on ``inputs`` (in the order of the node's non-empty inputs, or by name): a model made of the
        node alone, its inputs typed from the arrays, its outputs from ``outputs_info`` (dtype, shape) when given,
        at ``opset_version`` (default: the newest onnx knows)."""
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        names = [n for n in node.input if n]
        if isinstance(inputs, Mapping):
            arrays = {n: np.asarray(inputs[n]) for n in names if n in inputs}
        else:
            if len(inputs) != len(names):
                raise InputError(f"{len(inputs)} inputs given, node '{node.name}' ({node.op_type}) takes {len(names)}")
            arrays = {n: np.asarray(v) for n, v in zip(names, inputs)}
        graph_inputs = [helper.make_tensor_value_info(n, _elem_type(n, a.dtype), a.shape) for n, a in arrays.items()]
        outputs = [n for n in node.output if n]
        if outputs_info is None:
            graph_outputs = [helper.make_empty_tensor_value_info(n) for n in outputs]
        else:
            graph_outputs = [
                helper.make_tensor_value_info(n, _elem_type(n, np.dtype(dtype)), shape)
                for n, (dtype, shape) in zip(outputs, outputs_info)
            ]
        graph = helper.make_graph([node], node.name or node.op_type, graph_inputs, graph_outputs)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        return cls.run_model(model, arrays, device, **kwargs)


def _elem_type(name: str, dtype: np.dtype) -> int:
    """The ONNX element type of a numpy dtype."""
    try:
        return helper.np_dtype_to_tensor_dtype(dtype)
    except (KeyError, TypeError, ValueError):
        raise InputError(f"value '{name}' has dtype {dtype}, which has no ONNX element type") from None


prepare = GlowBackend.prepare
run_model = GlowBackend.run_model
run_node = GlowBackend.run_node
supports_device = GlowBackend.supports_device

__all__ = ["GlowBackend", "GlowRep", "prepare", "run_model", "run_node", "supports_device"]
