"""Op tables: one row per op, from which the IRDL definition, the Python builder,
the named accessors and the Python verifier of a dialect are all derived.

This is the only module of the package that talks to IRDL.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np
from mlir import ir
from mlir._mlir_libs import _mlir as _cext
from mlir.dialects import irdl

# --------------------------------------------------------------------------- attributes

#: attribute kind -> (IRDL base name, python -> Attribute, Attribute -> python)
_ATTR_KINDS: dict[str, tuple[str, Callable[[Any], ir.Attribute], Callable[[ir.Attribute], Any]]] = {
    "i64": (
        "#builtin.integer",
        lambda v: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v)),
        lambda a: ir.IntegerAttr(a).value,
    ),
    "f32": (
        "#builtin.float",
        lambda v: ir.FloatAttr.get(ir.F32Type.get(), float(v)),
        lambda a: ir.FloatAttr(a).value,
    ),
    "i64s": (
        "#builtin.dense_array",
        lambda v: ir.DenseI64ArrayAttr.get([int(x) for x in v]),
        lambda a: list(ir.DenseI64ArrayAttr(a)),
    ),
    "f32s": (
        "#builtin.dense_array",
        lambda v: ir.DenseF32ArrayAttr.get([float(x) for x in v]),
        lambda a: list(ir.DenseF32ArrayAttr(a)),
    ),
    "str": ("#builtin.string", lambda v: ir.StringAttr.get(str(v)), lambda a: ir.StringAttr(a).value),
    "type": ("#builtin.type", lambda v: ir.TypeAttr.get(v), lambda a: ir.TypeAttr(a).value),
    "elements": ("#builtin.dense_int_or_fp_elements", lambda v: v, lambda a: a),
    # a number typed like the elements it fills: IntegerAttr or FloatAttr (IRDL cannot say "either")
    "scalar": ("", lambda v: v, lambda a: _scalar_value(a)),
}


def _scalar_value(a: ir.Attribute) -> float | int | bool:
    if isinstance(a, (ir.FloatAttr, ir.BoolAttr)):
        return a.value
    if isinstance(a, ir.IntegerAttr):
        return a.value
    raise ValueError("expected an integer or float attribute")


def attr_to_python(kind: str, attr: ir.Attribute) -> Any:
    """Decode an attribute of the given table kind into a plain Python value."""
    return _ATTR_KINDS[kind][2](attr)


def python_to_attr(kind: str, value: Any) -> ir.Attribute:
    """Encode a plain Python value as an attribute of the given table kind."""
    if isinstance(value, ir.Attribute):
        return value
    return _ATTR_KINDS[kind][1](value)


@dataclass(frozen=True)
class Attr:
    """An op attribute. Optional attributes are not declared to IRDL (it has none) and
    are checked by the Python verifier instead."""

    name: str
    kind: str
    optional: bool = False
    doc: str = ""


@dataclass(frozen=True)
class Operand:
    """An op operand. ``role`` is the buffer role of an address-only instruction
    operand (in, out, inout); ``group`` names a same-type group (one IRDL constraint
    variable shared by all operands in the group)."""

    name: str
    role: str = "in"
    variadic: bool = False
    group: str | None = None
    #: "container" (the dialect's tensor or memref) or "index" (a loop's induction variable)
    kind: str = "container"


@dataclass(frozen=True)
class OpDef:
    """One row of an op table."""

    name: str
    doc: str
    operands: tuple[Operand, ...] = ()
    attrs: tuple[Attr, ...] = ()
    results: tuple[str, ...] = ("result",)
    #: infer(op_view_like) -> list of result types; raises VerifyError on bad input.
    infer: Callable[["OpInfo"], list[ir.Type]] | None = None
    #: extra checks beyond inference; raises VerifyError.
    check: Callable[["OpInfo"], None] | None = None
    #: same-type group of the results (shares the IRDL constraint with those operands)
    result_group: str | None = None
    #: numpy semantics: evaluate(operand arrays, attrs, result types) -> result arrays (constant folding, tests)
    evaluate: Callable[[list[np.ndarray], dict[str, Any], list[ir.Type]], list[np.ndarray]] | None = None
    #: glowir instruction this node becomes in bufferization (None: handled specially)
    instr: str | None = None
    #: free-form traits used by passes ("elementwise", "pure", "instruction", ...)
    traits: frozenset[str] = field(default_factory=frozenset)
    #: names of the op's regions, one block each (a loop's body). IRDL cannot mark an op of ours as a terminator, so
    #: a region's block ends in :data:`TERMINATOR`
    regions: tuple[str, ...] = ()

    @property
    def py_name(self) -> str:
        n = self.name
        return n + "_" if keyword.iskeyword(n) or n in ("max", "min", "abs", "pow", "slice", "sum") else n


#: the op that ends the block of a region of ours (its operands are what the region yields). IRDL can declare no
#: terminator, and the upstream terminators check their parent op, but for ``gpu.yield``: any operands, any parent.
TERMINATOR = "gpu.yield"


class VerifyError(Exception):
    """Raised by an op's shape rule or check when the op is malformed."""


@dataclass
class OpInfo:
    """What a shape rule sees of an op: operand types and decoded attributes."""

    operand_types: list[ir.Type]
    attrs: dict[str, Any]
    result_types: list[ir.Type]
    raw_attrs: dict[str, ir.Attribute] = field(default_factory=dict)
    #: the op itself, where it exists (verification; not while a builder infers its result types): what a rule of
    #: an op with regions reads them from
    operation: ir.Operation | None = None

    def shape(self, i: int) -> list[int]:
        return list(ir.ShapedType(self.operand_types[i]).shape)

    def elem(self, i: int) -> ir.Type:
        return ir.ShapedType(self.operand_types[i]).element_type

    @property
    def n(self) -> int:
        return len(self.operand_types)


# --------------------------------------------------------------------------- dialect


class Dialect:
    """A dialect built from an op table. ``container`` is the builtin type every
    operand and result has ("tensor" or "memref")."""

    def __init__(self, name: str, container: str, ops: Sequence[OpDef], doc: str = ""):
        self.name = name
        self.container = container
        self.doc = doc
        self.ops: dict[str, OpDef] = {o.name: o for o in ops}
        self.op_classes: dict[str, type] = {}

    # --- IRDL ---------------------------------------------------------------
    def emit_irdl(self) -> None:
        """Append this dialect's IRDL definition at the current insertion point."""
        base = "!builtin." + self.container
        d = irdl.dialect(self.name)
        with ir.InsertionPoint(d.body):
            for op in self.ops.values():
                o = irdl.operation_(op.name)
                with ir.InsertionPoint(o.body):
                    groups: dict[str, ir.Value] = {}

                    def constraint(group: str | None, kind: str = "container") -> ir.Value:
                        if kind == "index":
                            return irdl.is_(ir.TypeAttr.get(ir.IndexType.get()))
                        if group is None:
                            return irdl.base(base_name=base)
                        if group not in groups:
                            groups[group] = irdl.base(base_name=base)
                        return groups[group]

                    attrs = [a for a in op.attrs if not a.optional]
                    if attrs:
                        irdl.attributes_(
                            [irdl.base(base_name=_ATTR_KINDS[a.kind][0]) if _ATTR_KINDS[a.kind][0] else irdl.any()
                             for a in attrs],
                            [a.name for a in attrs],
                        )
                    if op.operands:
                        irdl.operands_(
                            [constraint(x.group, x.kind) for x in op.operands],
                            [x.name for x in op.operands],
                            [irdl.Variadicity.variadic if x.variadic else irdl.Variadicity.single for x in op.operands],
                        )
                    if op.results:
                        irdl.results_(
                            [constraint(op.result_group) for _ in op.results],
                            list(op.results),
                            [irdl.Variadicity.variadic if r.endswith("*") else irdl.Variadicity.single
                             for r in op.results],
                        )
                    if op.regions:
                        irdl.regions_([irdl.region([], number_of_blocks=1) for _ in op.regions], list(op.regions))

    # --- Python classes -----------------------------------------------------
    def register_python(self, module_globals: dict) -> None:
        """Create one OpView subclass and one builder function per op in the module
        that is importable as ``glow_mlir.dialects.<name>``."""

        @_cext.register_dialect
        class _Dialect(ir.Dialect):
            DIALECT_NAMESPACE = self.name

        module_globals["_Dialect"] = _Dialect
        for op in self.ops.values():
            cls = _make_opview(self, op)
            _cext.register_operation(_Dialect, replace=True)(cls)
            self.op_classes[op.name] = cls
            module_globals[_class_name(op.name)] = cls
            module_globals[op.py_name] = _make_builder(self, op)

    # --- verification -------------------------------------------------------
    def verify_op(self, op: ir.Operation) -> str | None:
        """Return an error message when ``op`` breaks a rule IRDL cannot express."""
        with op.location:
            return self._verify_op(op)

    def _verify_op(self, op: ir.Operation) -> str | None:
        opdef = self.ops[op.name.split(".", 1)[1]]
        info = op_info(opdef, op)
        if isinstance(info, str):
            return info
        try:
            if opdef.check is not None:
                opdef.check(info)
            if opdef.infer is not None:
                expected = opdef.infer(info)
                if [str(t) for t in expected] != [str(t) for t in info.result_types]:
                    got = ", ".join(str(t) for t in info.result_types)
                    want = ", ".join(str(t) for t in expected)
                    return f"result type {got} does not match the inferred type {want}"
        except VerifyError as e:
            return str(e)
        return None


def _class_name(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_")) + "Op"


def op_info(opdef: OpDef, op: ir.Operation) -> OpInfo | str:
    """Decode an op for its shape rule; returns an error string on missing attributes."""
    attrs: dict[str, Any] = {}
    raw: dict[str, ir.Attribute] = {}
    for a in opdef.attrs:
        if a.name in op.attributes:
            raw[a.name] = op.attributes[a.name]
            try:
                attrs[a.name] = attr_to_python(a.kind, raw[a.name])
            except (ValueError, TypeError):
                return f"attribute '{a.name}' must be of kind {a.kind}"
        elif not a.optional:
            return f"missing attribute '{a.name}'"
    return OpInfo([v.type for v in op.operands], attrs, [r.type for r in op.results], raw, op)


def _operand_slices(opdef: OpDef, n: int) -> list[slice]:
    """Map declared operands to slices of the flat operand list (one variadic at most)."""
    nvar = sum(o.variadic for o in opdef.operands)
    fixed = len(opdef.operands) - nvar
    out, i = [], 0
    for o in opdef.operands:
        width = (n - fixed) if o.variadic else 1
        out.append(slice(i, i + width))
        i += width
    return out


def _make_opview(dialect: Dialect, opdef: OpDef) -> type:
    ns: dict[str, Any] = {
        "OPERATION_NAME": f"{dialect.name}.{opdef.name}",
        "_ODS_REGIONS": (len(opdef.regions), True),
        "__doc__": opdef.doc,
        "OPDEF": opdef,
    }
    for idx, o in enumerate(opdef.operands):

        def getter(self, idx=idx, variadic=o.variadic):
            sl = _operand_slices(self.OPDEF, len(self.operation.operands))[idx]
            vals = list(self.operation.operands)[sl]
            return vals if variadic else vals[0]

        ns[o.name] = property(getter, doc=f"operand '{o.name}' ({o.role})")
    for a in opdef.attrs:

        def aget(self, a=a):
            attrs = self.operation.attributes
            if a.name not in attrs:
                return None
            return attr_to_python(a.kind, attrs[a.name])

        ns[a.name] = property(aget, doc=a.doc or f"attribute '{a.name}' ({a.kind})")
    for i, r in enumerate(opdef.results):
        if r.endswith("*"):  # variadic: every result
            ns[r[:-1]] = property(lambda self: list(self.operation.results))
        elif r not in ns:
            ns[r] = property(lambda self, i=i: self.operation.results[i])
    for i, r in enumerate(opdef.regions):
        ns[r] = property(lambda self, i=i: self.operation.regions[i])
    return type(_class_name(opdef.name), (ir.OpView,), ns)


def _make_builder(dialect: Dialect, opdef: OpDef) -> Callable[..., Any]:
    full = f"{dialect.name}.{opdef.name}"

    def build(*operands: Any, result_types: Sequence[ir.Type] | None = None, loc: ir.Location | None = None, **attrs: Any):
        flat: list[ir.Value] = []
        for o in operands:
            if isinstance(o, (list, tuple)):
                flat.extend(o)
            else:
                flat.append(o)
        encoded: dict[str, ir.Attribute] = {}
        decoded: dict[str, Any] = {}
        known = {a.name: a for a in opdef.attrs}
        for k, v in attrs.items():
            if v is None:
                continue
            if k not in known:
                raise TypeError(f"{full} has no attribute '{k}'")
            if known[k].kind == "scalar" and not isinstance(v, ir.Attribute):
                # typed like the elements it fills: the result's, or the @out buffer's for an instruction
                target = result_types[0] if result_types else flat[0].type
                v = scalar_attr(ir.ShapedType(target).element_type, v)
            encoded[k] = python_to_attr(known[k].kind, v)
            decoded[k] = attr_to_python(known[k].kind, encoded[k])
        if result_types is None:
            if not opdef.results:
                result_types = []
            elif opdef.infer is None:
                raise TypeError(f"{full} needs explicit result_types")
            else:
                result_types = opdef.infer(OpInfo([v.type for v in flat], decoded, [], encoded))
        op = ir.Operation.create(full, results=list(result_types), operands=flat, attributes=encoded, loc=loc,
                                 regions=len(opdef.regions))
        if len(opdef.results) == 1 and not opdef.results[0].endswith("*"):
            return op.results[0]
        if not opdef.results:
            return op.opview
        return list(op.results)

    build.__name__ = opdef.py_name
    build.__doc__ = opdef.doc
    return build


# --------------------------------------------------------------------------- helpers for rules


def tensor_like(like: ir.Type, shape: Sequence[int], elem: ir.Type | None = None) -> ir.Type:
    """A type of the same container (tensor or memref) as ``like`` with a new shape."""
    st = ir.ShapedType(like)
    et = elem if elem is not None else st.element_type
    if isinstance(like, ir.MemRefType):
        return ir.MemRefType.get(list(shape), et)
    return ir.RankedTensorType.get(list(shape), et)


def scalar_attr(element_type: ir.Type, value: float | int | bool) -> ir.Attribute:
    """``value`` as an attribute of ``element_type`` (float or integer)."""
    if isinstance(element_type, ir.FloatType):
        return ir.FloatAttr.get(element_type, float(value))
    if isinstance(element_type, ir.IntegerType) and element_type.width == 1:
        return ir.BoolAttr.get(bool(value))
    return ir.IntegerAttr.get(element_type, int(value))


def attr_type(attr: ir.Attribute) -> ir.Type:
    """The type of a scalar attribute (a BoolAttr is an i1 IntegerAttr)."""
    if isinstance(attr, ir.BoolAttr):
        return ir.IntegerType.get_signless(1)
    return attr.type


def elements_to_numpy(attr: ir.Attribute) -> np.ndarray:
    """A numpy copy of a dense elements attribute (splats included)."""
    dense = ir.DenseElementsAttr(attr)
    shape = list(ir.ShapedType(dense.type).shape)
    if dense.is_splat:
        el = dense.get_splat_value()
        if isinstance(el, ir.FloatAttr):
            val: Any = ir.FloatAttr(el).value
        else:
            val = ir.IntegerAttr(el).value
        et = ir.ShapedType(dense.type).element_type
        return np.full(shape, val, dtype=numpy_dtype(et))
    return np.array(dense, copy=True).reshape(shape)


_NP_TO_MLIR = {
    np.dtype(np.float32): lambda: ir.F32Type.get(),
    np.dtype(np.float64): lambda: ir.F64Type.get(),
    np.dtype(np.float16): lambda: ir.F16Type.get(),
    np.dtype(ml_dtypes.bfloat16): lambda: ir.BF16Type.get(),
    np.dtype(ml_dtypes.float8_e4m3fn): lambda: ir.Float8E4M3FNType.get(),
    np.dtype(ml_dtypes.float8_e4m3fnuz): lambda: ir.Float8E4M3FNUZType.get(),
    np.dtype(ml_dtypes.float8_e5m2): lambda: ir.Float8E5M2Type.get(),
    np.dtype(ml_dtypes.float8_e5m2fnuz): lambda: ir.Float8E5M2FNUZType.get(),
    np.dtype(ml_dtypes.float4_e2m1fn): lambda: ir.Float4E2M1FNType.get(),
    np.dtype(ml_dtypes.float8_e8m0fnu): lambda: ir.Float8E8M0FNUType.get(),
    np.dtype(np.int64): lambda: ir.IntegerType.get_signless(64),
    np.dtype(np.int32): lambda: ir.IntegerType.get_signless(32),
    np.dtype(np.bool_): lambda: ir.IntegerType.get_signless(1),
    # the narrow integers exist only at a program's boundary (signless: the sign is the importer's to keep)
    np.dtype(np.int16): lambda: ir.IntegerType.get_signless(16),
    np.dtype(np.uint16): lambda: ir.IntegerType.get_signless(16),
    np.dtype(np.int8): lambda: ir.IntegerType.get_signless(8),
    np.dtype(np.uint8): lambda: ir.IntegerType.get_signless(8),
    np.dtype(np.uint32): lambda: ir.IntegerType.get_signless(32),
    np.dtype(np.uint64): lambda: ir.IntegerType.get_signless(64),
    # the 4- and 2-bit integers one per byte, in its low bits, as numpy's ml_dtypes holds them
    **{np.dtype(t): (lambda: ir.IntegerType.get_signless(8))
       for t in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2)},
}


def mlir_type(dtype: np.dtype) -> ir.Type:
    """The MLIR element type of a numpy dtype."""
    try:
        return _NP_TO_MLIR[np.dtype(dtype)]()
    except KeyError:
        raise TypeError(f"unsupported element type {np.dtype(dtype)}") from None


def numpy_dtype(t: ir.Type) -> np.dtype:
    """The numpy dtype of an MLIR element type."""
    s = str(t)
    table = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i64": np.int64, "i32": np.int32, "i1": np.bool_,
             "i16": np.int16, "i8": np.int8, "bf16": ml_dtypes.bfloat16, "f8E4M3FN": ml_dtypes.float8_e4m3fn,
             "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "f8E5M2": ml_dtypes.float8_e5m2,
             "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz, "f4E2M1FN": ml_dtypes.float4_e2m1fn,
             "f8E8M0FNU": ml_dtypes.float8_e8m0fnu}
    if s not in table:
        raise TypeError(f"unsupported element type {s}")
    return np.dtype(table[s])


def _is_uniform(value: np.ndarray) -> bool:
    """Whether every element of ``value`` is the same, without copying a broadcast view (a fill of a huge
    shape is a ``np.broadcast_to`` of one element: strides 0 on every dim that has more than one entry)."""
    if value.size == 0:
        return False
    if all(stride == 0 or n == 1 for stride, n in zip(value.strides, value.shape)):
        return True
    return bool(np.all(value == value.flat[0]))


def numpy_to_elements(value: np.ndarray) -> ir.Attribute:
    """A dense elements attribute holding ``value`` (bool is stored as i1); a uniform value becomes a splat."""
    value = np.asarray(value)
    ttype = ir.RankedTensorType.get(list(value.shape), mlir_type(value.dtype))
    if _is_uniform(value):
        v0 = value.flat[0]
        if value.dtype.kind == "f":
            el = ir.FloatAttr.get(ttype.element_type, float(v0))
        else:
            el = ir.IntegerAttr.get(ttype.element_type, int(v0))
        return ir.DenseElementsAttr.get_splat(ttype, el)
    if not value.flags.c_contiguous:  # np.ascontiguousarray would turn a 0-d array into 1-d
        value = value.copy(order="C")
    if value.dtype == np.bool_:
        return ir.DenseElementsAttr.get(np.packbits(value.reshape(-1), bitorder="little"), type=ttype.element_type, shape=list(value.shape))
    return ir.DenseElementsAttr.get(value, type=ttype.element_type, shape=list(value.shape))
