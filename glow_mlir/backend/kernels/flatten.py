"""Elementwise generics on short rows, seen as rows of whole vectors before cpu-vectorize-rest plans them.

:mod:`.vectorize` vectorizes the innermost dim of a loop nest. An elementwise op on NCHW at 14x14 or 7x7 (a clip, an
add between two such tensors) has rows of 14 or 7 elements: each row one masked vector of 16 lanes (AVX-512) or two
of 8, most lanes idle and a loop step per row. Where every buffer the op touches is the whole iteration space,
row-major without gaps and at the identity map (scalars aside), the elements are one contiguous run in each buffer,
so the op runs as well on ``[E / c, c]`` views of them: ``c`` a multiple of the lanes that divides the E elements,
up to :data:`ROW_VECTORS` vectors, so that rows remain for the threads to share.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import linalg, memref

from ...passes.conversion.ir_to_linalg.common import row_major_strides
from ...passes.conversion.linalg_buffers import clone_body, is_identity

#: the most vectors in a row of the flattened op (AVX-512: 256 elements): the rows left are the tasks for threads
ROW_VECTORS = 16


def _row_major(t: ir.MemRefType) -> bool:
    """Whether ``t`` lays its elements out row-major without gaps (at any offset), with a strided or the identity
    layout (the only ones :func:`_rows` spells)."""
    identity = ir.AffineMap.get_identity(t.rank, context=t.context)
    if not isinstance(t.layout, ir.StridedLayoutAttr) and t.layout.value != identity:
        return False
    strides, _ = t.get_strides_and_offset()
    return all(s == e or size == 1 for s, e, size in zip(strides, row_major_strides(t.shape), t.shape))


def row_length(op: ir.Operation, lanes: int, wide: int) -> int:
    """The row ``c`` of the ``[E / c, c]`` form of ``op`` (a linalg.generic on static memrefs), or 0 to keep it.
    Taken: an all-parallel op of rank 2 or more whose body is arithmetic alone (no indices, no loads), whose memrefs
    are each the whole iteration space at the identity map, row-major without gaps, whose other operands are scalars,
    and whose innermost dim is not whole vectors or fewer than ``wide`` of them (the vectors :mod:`.vectorize` takes
    at a time). The row is longer than that dim: ``wide`` vectors at a time where such a row divides the elements,
    else whole vectors, at most :data:`ROW_VECTORS` of them."""
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    rank = len(iterators)
    if rank < 2 or any("reduction" in it for it in iterators):
        return 0
    if not all(o.name.startswith(("arith.", "math.", "linalg.yield")) for o in op.regions[0].blocks[0].operations):
        return 0  # the body reads its indices (linalg.index) or memory
    shape = None
    for value, m in zip(op.operands, ir.ArrayAttr(op.attributes["indexing_maps"])):
        if not isinstance(value.type, ir.MemRefType):
            if isinstance(value.type, ir.ShapedType) or len(ir.AffineMapAttr(m).value.results):
                return 0
            continue
        t = ir.MemRefType(value.type)
        if not is_identity(m) or not _row_major(t) or (shape is not None and t.shape != shape):
            return 0
        shape = t.shape
    if shape is None or (shape[-1] % lanes == 0 and shape[-1] >= wide * lanes):
        return 0
    elements = math.prod(shape)
    longest = ROW_VECTORS * lanes
    rows = [*range(longest, 0, -wide * lanes), *range(longest, 0, -lanes)]
    return next((c for c in rows if elements % c == 0 and c > shape[-1]), 0)


def _rows(v: ir.Value, c: int) -> ir.Value:
    """``v`` (row-major without gaps) seen as ``[E / c, c]``: collapsed to one dim, then expanded."""
    t = ir.MemRefType(v.type)
    elements = math.prod(t.shape)
    _, offset = t.get_strides_and_offset()

    def typed(shape: list[int], strides: list[int], plain: bool) -> ir.MemRefType:
        layout = None if plain else ir.StridedLayoutAttr.get(offset, strides)
        return ir.MemRefType.get(shape, t.element_type, layout=layout, memory_space=t.memory_space)

    # the verifier's layouts: a collapse keeps a strided source strided (offset 0 too), an expansion is the identity
    # layout wherever the offset is 0
    strided = isinstance(t.layout, ir.StridedLayoutAttr)
    flat = memref.collapse_shape(typed([elements], [1], not strided), v, [list(range(t.rank))])
    return memref.expand_shape(typed([elements // c, c], [c, 1], offset == 0), flat, [[0, 1]], [],
                               [elements // c, c])


def flatten(op: ir.Operation, c: int) -> ir.Operation:
    """``op`` (see :func:`row_length`) on ``[E / c, c]`` views of its buffers, where it was; ``op`` is erased."""
    n_ins = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]
    old = op.regions[0].blocks[0]
    with ir.InsertionPoint(op), op.location:
        operands = [_rows(v, c) if isinstance(v.type, ir.MemRefType) else v for v in op.operands]
        d = [ir.AffineDimExpr.get(0), ir.AffineDimExpr.get(1)]
        maps = [ir.AffineMap.get(2, 0, d if isinstance(v.type, ir.MemRefType) else []) for v in op.operands]
        new = linalg.GenericOp([], operands[:n_ins], operands[n_ins:],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                               ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * 2))
        block = new.regions[0].blocks.append(*[a.type for a in old.arguments])
        clone_body(old, block, dict(zip(old.arguments, block.arguments)))
    for name in list(op.attributes):
        if name not in ("indexing_maps", "iterator_types", "operandSegmentSizes"):
            new.operation.attributes[name] = op.attributes[name]
    op.erase()
    return new.operation


__all__ = ["ROW_VECTORS", "flatten", "row_length"]
