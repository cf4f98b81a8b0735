"""Reading a glowir program: the ``func.func`` that convert-glowgraph-to-glowir produces.

A program takes no arguments and returns nothing; its entry block opens with its weight
vars (const weights, then the inputs, then the outputs) and the function names its
inputs and outputs in ``glowir.inputs`` / ``glowir.outputs``. The runtime binds data to
weight vars by these names, and the IR dump prints them; both read them through here.

A program whose memory is planned (glowir-plan-memory) also gives the byte sizes of its three regions as function
attributes (:data:`REGION_SIZE_ATTRS`) and each weight var's and activation's byte offset in its region as an
``offset`` attribute: constant weights in one region, inputs and outputs in another, activations in the third.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes  # noqa: F401 (registers bfloat16 and the 4- and 2-bit integers among numpy's type names)
import numpy as np
from mlir import ir

from ...dialects import opdef_of
from ...dialects.optable import elements_to_numpy, numpy_dtype

#: function attribute listing the input weight vars' names, in argument order
INPUTS_ATTR = "glowir.inputs"
#: function attribute listing the output weight vars' names, in result order
OUTPUTS_ATTR = "glowir.outputs"
#: the inputs and outputs the caller sees in another numpy type than their memref's (memrefs are signless: i8 is
#: int8, uint8 or a 4-bit integer in a byte), by name: a dictionary of type names, set on the graph by the importer
#: and kept on the program
DECLARED_TYPES_ATTR = "glowir.declared_types"
#: the memory regions of a planned program, in the order its lowered function takes their base pointers (Glow
#: bundles: constantWeight, mutableWeight, activations), each with the function attribute giving its size in bytes
REGIONS = ("constantWeight", "mutableWeight", "activations")
REGION_SIZE_ATTRS = {"constantWeight": "glowir.constant_weights_size", "mutableWeight": "glowir.mutable_weights_size",
                     "activations": "glowir.activations_size"}
#: attribute of weight_var and alloc_activation: the buffer's byte offset in its region
OFFSET_ATTR = "offset"
#: attribute of an instruction whose kernel takes scratch buffers: their byte offsets in the activations region
SCRATCH_ATTR = "scratch_offsets"


class UniqueNames:
    """The naming rule of glowir programs: a name already taken gets the first free suffix ``_1``, ``_2``, ..."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def take(self, wanted: str) -> str:
        """``wanted``, or its first free suffixed form; either way it is taken from now on."""
        name, i = wanted, 0
        while name in self._taken:
            i += 1
            name = f"{wanted}_{i}"
        self._taken.add(name)
        return name


def element_size_in_bytes(element_type: ir.Type) -> int:
    """Bytes per element; a bool (i1) takes a whole byte, as in Glow."""
    width = element_type.width if isinstance(element_type, (ir.IntegerType, ir.FloatType)) else 0
    if width == 0:
        raise TypeError(f"element type {element_type} has no size in bytes")
    return (width + 7) // 8


def size_in_bytes(shaped: ir.Type) -> int:
    """Bytes taken by a statically shaped memref or tensor."""
    st = ir.ShapedType(shaped)
    return int(np.prod(st.shape, dtype=np.int64)) * element_size_in_bytes(st.element_type)


@dataclass(frozen=True)
class WeightVar:
    """One ``glowir.weight_var`` of a program."""

    name: str
    #: "const" (data in ``value``) or "mutable" (an input or output the caller binds)
    mutability: str
    type: ir.MemRefType
    value: ir.DenseElementsAttr | None
    #: the SSA buffer the weight var declares (not part of equality)
    buffer: ir.Value = field(compare=False, repr=False)
    #: byte offset in its region (constantWeight or mutableWeight) once memory is planned
    offset: int | None = None
    #: the numpy type the caller sees an input or output in, where it is not its memref's
    #: (:data:`DECLARED_TYPES_ATTR`)
    declared: np.dtype | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.shape)

    @property
    def dtype(self) -> np.dtype:
        return numpy_dtype(self.type.element_type) if self.declared is None else self.declared

    @property
    def size_in_bytes(self) -> int:
        return size_in_bytes(self.type)

    def numpy(self) -> np.ndarray:
        """The data of a const weight, as a fresh numpy array."""
        if self.value is None:
            raise ValueError(f"weight var '{self.name}' is {self.mutability} and holds no data")
        return elements_to_numpy(self.value)


@dataclass(frozen=True)
class MemoryLayout:
    """The byte sizes of a planned program's regions."""

    constant_weights: int
    mutable_weights: int
    activations: int

    def sizes(self) -> tuple[int, int, int]:
        """The sizes in :data:`REGIONS` order."""
        return self.constant_weights, self.mutable_weights, self.activations


@dataclass(frozen=True)
class Program:
    """What a glowir program declares: its weight vars in order, and which are inputs and outputs."""

    name: str
    weights: tuple[WeightVar, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    #: the region sizes when memory is planned, else None
    memory: MemoryLayout | None = None

    def weight(self, name: str) -> WeightVar:
        """The weight var called ``name``."""
        for w in self.weights:
            if w.name == name:
                return w
        raise KeyError(f"program @{self.name} has no weight var '{name}'")

    @property
    def constants(self) -> tuple[WeightVar, ...]:
        return tuple(w for w in self.weights if w.mutability == "const")

    @property
    def input_vars(self) -> tuple[WeightVar, ...]:
        return tuple(self.weight(n) for n in self.inputs)

    @property
    def output_vars(self) -> tuple[WeightVar, ...]:
        return tuple(self.weight(n) for n in self.outputs)


def is_program(func_op: ir.Operation) -> bool:
    """Whether ``func_op`` is a glowir program (it names its inputs and outputs)."""
    attrs = func_op.operation.attributes
    return INPUTS_ATTR in attrs and OUTPUTS_ATTR in attrs


def _names(func_op: ir.Operation, attr: str) -> tuple[str, ...]:
    return tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(func_op.operation.attributes[attr]))


def read_program(func_op: ir.Operation) -> Program:
    """The program of a glowir ``func.func``; ValueError when it does not follow the contract."""
    op = func_op.operation
    fname = ir.StringAttr(op.attributes["sym_name"]).value
    if not is_program(op):
        raise ValueError(f"@{fname} is not a glowir program: it lacks '{INPUTS_ATTR}' and '{OUTPUTS_ATTR}'")
    weights = []
    declared = {}
    if DECLARED_TYPES_ATTR in op.attributes:
        entries = ir.DictAttr(op.attributes[DECLARED_TYPES_ATTR])
        declared = {a.name: np.dtype(ir.StringAttr(a.attr).value) for a in entries}
    for inner in op.regions[0].blocks[0].operations:
        if inner.operation.name != "glowir.weight_var":
            continue
        attrs = inner.operation.attributes
        weights.append(WeightVar(
            name=ir.StringAttr(attrs["name"]).value,
            mutability=ir.StringAttr(attrs["mutability"]).value,
            type=ir.MemRefType(inner.operation.results[0].type),
            value=ir.DenseElementsAttr(attrs["value"]) if "value" in attrs else None,
            buffer=inner.operation.results[0],
            offset=ir.IntegerAttr(attrs[OFFSET_ATTR]).value if OFFSET_ATTR in attrs else None,
            declared=declared.get(ir.StringAttr(attrs["name"]).value),
        ))
    program = Program(fname, tuple(weights), _names(op, INPUTS_ATTR), _names(op, OUTPUTS_ATTR), memory_layout(op))
    by_name = {w.name: w for w in weights}
    for role, names in (("input", program.inputs), ("output", program.outputs)):
        for n in names:
            if n not in by_name or by_name[n].mutability != "mutable":
                raise ValueError(f"@{fname}: {role} '{n}' is not a mutable weight var of the program")
    return program


def memory_layout(func_op: ir.Operation) -> MemoryLayout | None:
    """The region sizes of a planned program; None when its memory is not planned."""
    attrs = func_op.operation.attributes
    if not all(a in attrs for a in REGION_SIZE_ATTRS.values()):
        return None
    return MemoryLayout(*(ir.IntegerAttr(attrs[REGION_SIZE_ATTRS[r]]).value for r in REGIONS))


def read_programs(module_op: ir.Operation) -> list[Program]:
    """Every glowir program of a module, in order."""
    return [read_program(op) for op in module_op.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and is_program(op)]


def operand_roles(op: ir.Operation) -> list[str]:
    """The buffer role ("in", "out", "inout") of each operand of a glowir op, from its op-table row."""
    opdef = opdef_of(op.operation)
    if opdef is None:
        raise ValueError(f"'{op.operation.name}' has no op-table row to give its operand roles")
    n = len(op.operation.operands)
    # at most one operand is variadic; it takes whatever the fixed ones leave
    variadic_width = n - sum(not o.variadic for o in opdef.operands)
    roles: list[str] = []
    for o in opdef.operands:
        roles.extend([o.role] * (variadic_width if o.variadic else 1))
    return roles
