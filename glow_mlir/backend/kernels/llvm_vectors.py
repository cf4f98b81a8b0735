"""The vector rewrites ``convert-vector-to-llvm`` makes before converting that no transform op exposes to these
bindings: ``vector.extract_strided_slice`` and ``vector.insert_strided_slice`` as shuffles, extracts and inserts, and
an n-D ``vector.fma`` as 1-D ones.

Why: a target with 32-bit pointers converts its vectors with ``convert-to-llvm{dynamic=true}`` (the one conversion
that takes the index width from the data layout, see ``cpu.codegen_entries``), which has conversion patterns only;
``convert-vector-to-llvm`` rewrites these first (``populateVectorInsertExtractStridedSliceTransforms``, its n-D FMA
pattern). On 1-D vectors a slice is one ``vector.shuffle``; on n-D vectors each op goes one row of the leading dim at
a time (static positions only: a strided slice has none dynamic).
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import vector

from .approx import const

NAMES = ("vector.extract_strided_slice", "vector.insert_strided_slice", "vector.fma")


def _ints(op: ir.Operation, name: str) -> list[int]:
    return [ir.IntegerAttr(a).value for a in ir.ArrayAttr(op.attributes[name])]


def _shape(value: ir.Value) -> list[int]:
    return list(ir.VectorType(value.type).shape)


def _at(value: ir.Value, position: int) -> ir.Value:
    return vector.extract(value, [], [position])


def _put(value: ir.Value, dest: ir.Value, position: int) -> ir.Value:
    return vector.insert(value, dest, [], [position])


def extract(src: ir.Value, offsets: Sequence[int], sizes: Sequence[int], strides: Sequence[int],
            result: ir.VectorType) -> ir.Value:
    """The slice of ``src`` at ``offsets`` of ``sizes`` elements every ``strides`` (in its leading dims)."""
    if len(_shape(src)) == 1:
        return vector.shuffle(src, src, [offsets[0] + i * strides[0] for i in range(sizes[0])])
    out = const(result, 0)
    inner = ir.VectorType.get(list(result.shape)[1:], result.element_type)
    for i in range(sizes[0]):
        row = _at(src, offsets[0] + i * strides[0])
        if len(offsets) > 1:
            row = extract(row, offsets[1:], sizes[1:], strides[1:], inner)
        out = _put(row, out, i)
    return out


def insert(src: ir.Value, dest: ir.Value, offsets: Sequence[int], strides: Sequence[int]) -> ir.Value:
    """``dest`` with ``src`` written at ``offsets`` every ``strides`` (``src`` may have fewer dims: the leading
    offsets pick the sub-vector of ``dest`` it goes into)."""
    src_shape, dest_shape = _shape(src), _shape(dest)
    if len(dest_shape) > len(src_shape):
        inner = insert(src, _at(dest, offsets[0]), offsets[1:], strides)
        return _put(inner, dest, offsets[0])
    if len(dest_shape) == 1:
        n = dest_shape[0]
        mask = list(range(n))
        for k in range(src_shape[0]):
            mask[offsets[0] + k * strides[0]] = n + k
        return vector.shuffle(dest, src, mask)
    for k in range(src_shape[0]):
        position = offsets[0] + k * strides[0]
        dest = _put(insert(_at(src, k), _at(dest, position), offsets[1:], strides[1:]), dest, position)
    return dest


def fma(a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    """An n-D ``a * b + c`` as 1-D FMAs, row by row of the leading dims."""
    shape = _shape(a)
    if len(shape) == 1:
        return vector.fma(a, b, c)
    out = c
    for i in range(shape[0]):
        out = _put(fma(_at(a, i), _at(b, i), _at(c, i)), out, i)
    return out


def lower(module: ir.Operation) -> int:
    """Rewrite every strided slice and n-D FMA in ``module``; returns how many."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in NAMES and (op.name != "vector.fma" or len(_shape(op.results[0])) > 1):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for op in found:
        with ir.InsertionPoint(op), op.location:
            if op.name == "vector.fma":
                value = fma(*op.operands)
            elif op.name == "vector.extract_strided_slice":
                value = extract(op.operands[0], _ints(op, "offsets"), _ints(op, "sizes"), _ints(op, "strides"),
                                ir.VectorType(op.results[0].type))
            else:
                value = insert(op.operands[0], op.operands[1], _ints(op, "offsets"), _ints(op, "strides"))
        op.results[0].replace_all_uses_with(value)
        op.erase()
    return len(found)
