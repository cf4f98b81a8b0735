"""What every family of lowerings shares: the operands adaptor (:class:`Operands`), buffer types (i1 stored as bytes),
row-major strides, and the builders of elementwise generics."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math, memref

from ....dialects import glowir
from ....dialects.optable import mlir_type, numpy_to_elements
from ...registry import PassError

PREFIX = glowir.DIALECT.name + "."
ALIGNMENT = 64  # bytes: a cache line, and one zmm register for aligned vector loads
INF = float("inf")
#: i1 buffers are stored one byte per element (see the module docstring)
BOOL_STORAGE_BITS = 8
#: marks the generic of a convolution on a packed filter (:func:`blocked_conv`) and holds its strides
BLOCKED_CONV_ATTR = "glow.blocked_conv"
#: on a glowir conv2d (set by cpu-spread-conv-inputs before the memory plan): the channels its bordered input's
#: pixels carry beyond its own, so that the pixels a register tile reads fall into different L1 sets; the scratch
#: buffer (:func:`.cnn._padded_type`) is that much wider and the convolution reads its first C channels
SPREAD_ATTR = "glow.spread_channels"
#: marks the generic of a matmul on weights packed in column panels (:func:`.basic.packed_matmul`)
PACKED_MATMUL_ATTR = "glow.packed_matmul"
#: marks the generic of an int8 convolution on a filter packed for a dot-product instruction
#: (:func:`.quantized.packed_conv`) and holds its strides and dilations
INT8_CONV_ATTR = "glow.int8_conv"
#: marks the generic of an int8 depthwise convolution on a filter packed in tap quads
#: (:func:`.quantized.packed_depthwise`) and holds its strides and dilations
INT8_DEPTHWISE_ATTR = "glow.int8_depthwise"
#: marks the requantization generic that follows it and holds (offset, output_min, output_max, smallest right shift)
INT8_REQUANT_ATTR = "glow.int8_requant"


class Operands:
    """The operands of a glowir op by name, as the values that replace them: the adaptor of a conversion pattern.
    The op itself keeps its glowir types (i1 included) for the lowering to consult."""

    def __init__(self, op: ir.OpView, lowered: dict[ir.Value, ir.Value], scratch: Sequence[ir.Value] = ()):
        self._op = op
        self._lowered = lowered
        #: the op's scratch buffers, of the types its :data:`SCRATCH` row gives, in that order
        self.scratch = list(scratch)

    def __getattr__(self, name: str) -> ir.Value:
        return self._lowered[getattr(self._op, name)]


#: A lowering builds the replacement of one glowir op before it, from the op and its lowered operands; it returns
#: the value that replaces the op's result, or None for instructions (they have no result).
Lowering = Callable[[ir.OpView, Operands], "ir.Value | None"]
#: The scalar body of an elementwise generic: the input elements in, the element to store out.
Body = Callable[..., ir.Value]


def _memref(value: ir.Value) -> ir.MemRefType:
    return ir.MemRefType(value.type)


def _is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def storage_type(t: ir.Type) -> ir.MemRefType:
    """The memref that holds a glowir buffer of type ``t``: the same, but i1 and f4E2M1FN elements are stored as
    bytes (a float4 in the low bits of its byte, as ml_dtypes holds it)."""
    m = ir.MemRefType(t)
    if not _is_bool(m.element_type) and not isinstance(m.element_type, ir.Float4E2M1FNType):
        return m
    return ir.MemRefType.get(m.shape, ir.IntegerType.get_signless(BOOL_STORAGE_BITS), layout=m.layout)


def index_constant(value: int) -> ir.Value:
    """An arith constant of type index."""
    return arith.constant(ir.IndexType.get(), value)


def module_global(anchor: ir.Operation, name: str, value: np.ndarray, constant: bool = True) -> ir.Value:
    """A private ``memref.global`` holding ``value`` in the module of ``anchor``, read (``memref.get_global``) at the
    current insertion point. A constant one is a table of its own, named ``name`` or ``name_1``, ``name_2`` ...;
    a mutable one is state that every op asking for ``name`` shares (made on the first request)."""
    module = anchor
    while module.name != "builtin.module":
        module = module.parent
    table = ir.SymbolTable(module)
    base, k = name, 0
    while constant and name in table:
        k += 1
        name = f"{base}_{k}"
    mtype = ir.MemRefType.get(list(value.shape), mlir_type(value.dtype))
    if name not in table:
        with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
            # inserted into the symbol table too, so that the next request sees it
            table.insert(memref.GlobalOp(name, ir.TypeAttr.get(mtype), sym_visibility="private",
                                         initial_value=numpy_to_elements(value), constant=constant,
                                         alignment=ALIGNMENT))
    return memref.get_global(mtype, name)


def _constant(element_type: ir.Type, value: float) -> ir.Value:
    """An arith constant of ``element_type`` (float or integer) holding ``value``."""
    if isinstance(element_type, ir.FloatType):
        return arith.constant(element_type, ir.FloatAttr.get(element_type, float(value)))
    return arith.constant(element_type, ir.IntegerAttr.get(element_type, int(value)))


def row_major_strides(shape: Sequence[int]) -> list[int]:
    """The element strides of a contiguous row-major buffer of ``shape``."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


def elementwise(dest: ir.Value, ins: Sequence[ir.Value], body: Body,
                in_maps: Sequence[ir.AffineMap] | None = None) -> linalg.GenericOp:
    """``dest[i] = body(*(x[map(i)] for x in ins))`` as a parallel linalg.generic over dest's index space.

    ``in_maps`` default to the identity (operands of dest's shape); the body gets the input elements only."""
    rank = _memref(dest).rank
    identity = ir.AffineMap.get_identity(rank)
    maps = [*(in_maps if in_maps is not None else [identity] * len(ins)), identity]
    op = linalg.GenericOp([], list(ins), [dest], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          [linalg.IteratorType.parallel] * rank)
    block = op.regions[0].blocks.append(*(_memref(v).element_type for v in (*ins, dest)))
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*list(block.arguments)[: len(ins)])])
    return op


def _arith_op(op: ir.OpView, float_op: Body, int_op: Body) -> Body:
    """The float or the signed-integer arith op for ``op``'s element type; i1 has no arithmetic in glowir."""
    et = _memref(op.operands[0]).element_type
    if _is_bool(et):
        raise PassError(f"'{op.operation.name}' has no lowering for i1 buffers (glowir has no boolean arithmetic)",
                        op.location)
    return float_op if isinstance(et, ir.FloatType) else int_op


def _binary(float_op: Body, int_op: Body) -> Lowering:
    """Elementwise ``dest = lhs op rhs``."""

    def lower(op: ir.OpView, new: Operands) -> None:
        elementwise(new.dest, [new.lhs, new.rhs], _arith_op(op, float_op, int_op))

    return lower


def _unary(fn: Body) -> Lowering:
    """Elementwise ``dest = fn(src)`` on floats (the op table admits only float types)."""

    def lower(op: ir.OpView, new: Operands) -> None:
        elementwise(new.dest, [new.src], fn)

    return lower


def _relu(x: ir.Value) -> ir.Value:
    return arith.maximumf(x, _constant(x.type, 0.0))


def _sigmoid(x: ir.Value) -> ir.Value:
    # 1 / (1 + exp(-x)): exp overflows to inf for very negative x, and 1 / inf = 0 is the right limit
    one = _constant(x.type, 1.0)
    return arith.divf(one, arith.addf(one, math.exp(arith.negf(x))))

def _update(dest: ir.Value, ins: Sequence[ir.Value], in_maps: Sequence[ir.AffineMap], body: Body) -> None:
    """``dest[i] = body(*(x[map(i)] for x in ins), dest[i])``: an elementwise update of dest in place."""
    rank = _memref(dest).rank
    maps = [*in_maps, ir.AffineMap.get_identity(rank)]
    op = linalg.GenericOp([], list(ins), [dest], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          [linalg.IteratorType.parallel] * rank)
    block = op.regions[0].blocks.append(*(_memref(v).element_type for v in (*ins, dest)))
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments)])


def _dims(*positions: int, rank: int) -> ir.AffineMap:
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(p) for p in positions])


def _expand(value: ir.Value, shape: Sequence[int], reassociation: Sequence[Sequence[int]]) -> ir.Value:
    """``value`` (a buffer whose dims each have one stride: row-major, or a box of a larger one) viewed under a shape
    that splits some of its dims: the dims a dim splits into take its stride times the sizes after them."""
    src = _memref(value)
    src_strides, offset = src.get_strides_and_offset()
    strides = [0] * len(shape)
    for dim, group in enumerate(reassociation):
        step = src_strides[dim]
        for d in reversed(list(group)):
            strides[d] = step
            step *= shape[d]
    compact = strides == row_major_strides(shape)
    layout = None if compact and not offset else ir.StridedLayoutAttr.get(offset, strides)
    return memref.expand_shape(ir.MemRefType.get(list(shape), src.element_type, layout=layout), value,
                               [list(r) for r in reassociation], [], list(shape))
