"""Matmul islands on weights packed in column panels (``[N / nr, K, nr]``: constant weights that
cpu-pack-matmul-weights packed at compile time, and the filter blocks of a 1x1 convolution run as a matmul of its
pixels), with their epilogue: the init op before the product and the elementwise updates after it fused into each
register tile (:class:`Epilogue`), and the islands of one image row each that write a bordered buffer's interior
(:func:`row_islands`). The tiles, keys and schedules are :mod:`.matmul`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, bufferization, linalg, memref, tensor

from ...passes.conversion.ir_to_linalg import PACKED_MATMUL_ATTR, index_constant
from ...passes.conversion.ir_to_linalg.common import row_major_strides
from .balance import balanced_tiles, task_flops
from .isa import KernelSpec
from .matmul import (
    INIT_ATTR,
    LAST_ATTR,
    TASK_ATTR,
    TILES_ATTR,
    Tiles,
    column_panels,
    columns_outer,
    divisor_rows,
    fit,
    register_rows,
    static_f32,
    strips,
    target_tiles,
    tensor_of,
)


def matches_packed(op: ir.Operation) -> bool:
    """Whether ``op`` is the generic of a matmul on weights packed in panels (convert-glowir-to-linalg's
    ``packed_matmul``) on f32 buffers of static shape."""
    return op.name == "linalg.generic" and PACKED_MATMUL_ATTR in op.attributes and static_f32(op)


@dataclass(frozen=True)
class Init:
    """What a matmul on packed weights starts from when the linalg op right before it writes its whole output: a
    ``linalg.fill`` of ``value`` or a ``linalg.broadcast`` of the bias row ``bias`` ([N]). Inside the island it is the
    accumulators' initial value, fused into each register tile, rather than a pass over the whole output first."""

    #: the memref op it comes from (erased once the islands hold it)
    op: ir.Operation
    value: ir.Value | None = None
    bias: ir.Value | None = None

    @staticmethod
    def before(head: ir.Operation, dest: ir.Value) -> Init | None:
        """The init that the op before ``head`` (only pure view ops between) writes into ``dest`` (the product's
        buffer, its last dim the columns: [M, N], or a 1x1 convolution's [N, H, W, F]), None if it is neither."""
        from ...passes.conversion.linalg_buffers import PURE_OPS

        ops = [o.operation for o in head.block.operations]
        op = next((o for o in reversed(ops[:ops.index(head)]) if o.name not in PURE_OPS), None)
        if op is None or op.name not in ("linalg.fill", "linalg.broadcast") \
                or op.operands[len(op.operands) - 1] != dest:
            return None
        if op.name == "linalg.fill":
            return Init(op, value=op.operands[0])
        bias = op.operands[0]
        dims = [int(d) for d in ir.DenseI64ArrayAttr(op.attributes["dimensions"])]
        rank = ir.MemRefType(dest.type).rank
        return Init(op, bias=bias) if dims == list(range(rank - 1)) and ir.MemRefType(bias.type).rank == 1 else None

    def build(self, tc: ir.Value, key: str) -> ir.Value:
        """The init on the island's output tensor ``tc`` ([M, N / P, P]), tagged with the island's ``key``."""
        if self.value is not None:
            result = linalg.fill(self.value, outs=[tc])
        else:
            _, panels, width = ir.RankedTensorType(tc.type).shape
            row = tensor_of(self.bias)
            rows = tensor.expand_shape(ir.RankedTensorType.get([panels, width], ir.F32Type.get()), row, [[0, 1]], [],
                                       [panels, width])
            result = linalg.broadcast(rows, outs=[tc], dimensions=[0])
        op = result.operation if isinstance(result, ir.OpView) else result.owner.operation
        op.attributes[INIT_ATTR] = ir.StringAttr.get(key)
        return op.results[0]


@dataclass(frozen=True)
class Epilogue:
    """A packed matmul's output D as its islands write it: from the init op before the product if any
    (:class:`Init`, else D's content), then through the elementwise updates of D right after it (an activation, a
    residual add: :func:`fusable_updates`), all fused into each register tile, so that the output is written once.
    An update may move the chain to another buffer E (a residual add written onto the skip, D dead after it: the
    outliner marks it); the islands then write E, and D not at all."""

    init: Init | None
    #: the updates, linalg.generic ops on D's buffers (erased once the islands hold them)
    updates: tuple[ir.Operation, ...]
    #: D, the buffer the product and the updates write ([M, N], or a 1x1 convolution's [N, H, W, F])
    dest: ir.Value

    @property
    def final(self) -> ir.Value:
        """The buffer the chain ends in: D, or the E an update moved it to."""
        last = self.updates[-1] if self.updates else None
        return self.dest if last is None else last.operands[len(last.operands) - 1]

    def erase(self) -> None:
        """Erase the memref ops the islands took in."""
        for op in [*([self.init.op] if self.init is not None else []), *self.updates]:
            op.erase()

    def build(self, product: ir.Value, tiles: Tiles, rows: Rows) -> ir.Value:
        """The updates on tensors after ``product`` (the island's [rows, P, W] result, rows ``rows`` = (first,
        count) of D's), each tagged with the island's key; returns the last value."""
        current, target = product, self.dest
        for op in self.updates:
            current = _tensor_update(op, target, current, rows)
            target = op.operands[len(op.operands) - 1]
            current.owner.operation.attributes[INIT_ATTR] = ir.StringAttr.get(tiles.key())
        return current


def _as_panels(buffer: ir.Value, panels: int, width: int) -> ir.Value:
    """A contiguous buffer of D's shape ([.., F]) as [rows, F / width, width] (its leading dims one)."""
    t = ir.MemRefType(buffer.type)
    f32 = t.element_type
    if t.rank > 2:
        rows = math.prod(t.shape[:-1])
        buffer = memref.collapse_shape(ir.MemRefType.get([rows, t.shape[-1]], f32), buffer,
                                       [list(range(t.rank - 1)), [t.rank - 1]])
    rows = ir.MemRefType(buffer.type).shape[0]
    return memref.expand_shape(ir.MemRefType.get([rows, panels, width], f32), buffer, [[0], [1, 2]], [],
                               [rows, panels, width])


Rows = tuple[ir.Value | int, int]


def rows_at(v: ir.Value, first: ir.Value | int, count: int) -> ir.Value:
    """Rows ``[first, first + count)`` of buffer ``v`` (its first dim), ``first`` static or an index value."""
    t = ir.MemRefType(v.type)
    offsets, sizes, steps = [first] + [0] * (t.rank - 1), [count, *t.shape[1:]], [1] * t.rank
    if not isinstance(first, ir.Value):
        return memref.subview(v, offsets, sizes, steps)
    strides, _ = t.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), strides)
    return memref.subview(v, offsets, sizes, steps, result_type=ir.MemRefType.get(sizes, t.element_type, layout=layout))


def _contiguous(v: ir.Value) -> bool:
    """Whether buffer ``v`` is row-major from offset 0 (no gaps, no view into a larger buffer)."""
    t = ir.MemRefType(v.type)
    strides, offset = t.get_strides_and_offset()
    return offset == 0 and strides == row_major_strides(t.shape)


def rows_contiguous(buffer: ir.Value, dest: ir.Value) -> bool:
    """Whether ``buffer`` is not contiguous from offset 0 but has the shape of ``dest`` ([N, H, W, F]) and each of its
    image rows (W pixels of F channels) is, at a static offset: the interior of a bordered buffer (the padded input
    of the next convolution), or a slice of a batch, which islands of one image row each write directly
    (:func:`row_islands`)."""
    t, d = ir.MemRefType(buffer.type), ir.MemRefType(dest.type)
    if t.rank != 4 or t.shape != d.shape or t.element_type != d.element_type or _contiguous(buffer):
        return False
    strides, offset = t.get_strides_and_offset()
    return offset >= 0 and strides[3] == 1 and strides[2] == t.shape[3]


def _divided(value: ir.Value, by: int) -> ir.Value:
    """``value / by`` (unsigned): the ``x`` of a ``value = x * by`` that :func:`row_islands` built, else a division."""
    if isinstance(value, ir.OpResult) and value.owner.operation.name == "arith.muli":
        x, factor = value.owner.operation.operands
        if isinstance(factor, ir.OpResult) and factor.owner.operation.name == "arith.constant" \
                and ir.IntegerAttr(factor.owner.operation.attributes["value"]).value == by:
            return x
    return arith.divui(value, index_constant(by))


def _image_row(buffer: ir.Value, first: ir.Value | int, count: int) -> ir.Value:
    """Rows ``[first, first + count)`` of ``buffer`` ([N, H, W, F], :func:`rows_contiguous`) seen as a matrix of
    pixels: one image row (``count`` is W, ``first`` a multiple of it), as a ``[W, F]`` view."""
    t = ir.MemRefType(buffer.type)
    images, height, width, channels = t.shape
    if count != width:
        raise ValueError(f"an island of a bordered buffer covers one image row of {width} pixels, not {count}")
    row = first // width if not isinstance(first, ir.Value) else _divided(first, width)
    image, h = (0, row) if images == 1 else (
        (row // height, row % height) if not isinstance(row, ir.Value)
        else (arith.divui(row, index_constant(height)), arith.remui(row, index_constant(height))))
    strides, offset = t.get_strides_and_offset()
    dynamic = isinstance(row, ir.Value)
    layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset() if dynamic
                                      else offset + image * strides[0] + h * strides[1], [channels, 1])
    return memref.subview(buffer, [image, h, 0, 0], [1, 1, width, channels], [1, 1, 1, 1],
                          result_type=ir.MemRefType.get([width, channels], t.element_type, layout=layout))


def _panel_view(buffer: ir.Value, panels: int, width: int, rows: Rows) -> ir.Value:
    """Rows ``rows`` (first, count) of ``buffer`` of D's shape ([.., F], the rows its pixels) as ``[count, F /
    width, width]``: of a contiguous buffer, or one image row of a bordered one (:func:`rows_contiguous`)."""
    if not _contiguous(buffer):
        return column_panels(_image_row(buffer, *rows), width)
    view = _as_panels(buffer, panels, width)
    if rows != (0, ir.MemRefType(view.type).shape[0]):
        view = rows_at(view, *rows)
    return view


def _read_kind(value: ir.Value, map_attr: ir.Attribute, dest: ir.Value) -> str | None:
    """How an update reads an input, in the island's [rows, P, W] space: "out" (D itself), "full" (a contiguous
    buffer of D's shape at the identity map), "channels" (a vector of D's last dim, read by it alone), "scalar", or
    None (any other read: the update stays out of the islands)."""
    m = ir.AffineMapAttr(map_attr).value
    identity = m == ir.AffineMap.get_identity(m.n_dims)
    if not isinstance(value.type, ir.MemRefType):
        return "scalar" if not isinstance(value.type, ir.ShapedType) else None
    t, d = ir.MemRefType(value.type), ir.MemRefType(dest.type)
    if value == dest:
        return "out" if identity else None
    if t.element_type != d.element_type:
        return None
    contiguous = _contiguous(value)
    if identity and t.shape == d.shape and contiguous:
        return "full"
    results = list(m.results)
    if t.rank == 1 and t.shape[0] == d.shape[-1] and contiguous and len(results) == 1 \
            and str(results[0]) == f"d{m.n_dims - 1}":
        return "channels"
    if t.rank == 0:
        return "scalar"
    return None


def fusable_updates(head: ir.Operation, dest: ir.Value, moves: bool = True,
                    bordered: bool = False) -> list[ir.Operation]:
    """The elementwise updates of ``dest`` right after ``head`` in its block (only pure view ops between) that its
    panel islands can take: in place (:func:`updates_in_place`), or once moving the chain to a buffer of D's shape
    that the outliner found D dead before (DEAD_INPUT_ATTR): a contiguous one (``moves``: a residual add written onto
    the skip) or (``bordered``) the interior of a bordered buffer (:func:`rows_contiguous`: the copy into the next
    convolution's padded input, for :func:`row_islands`); and the next ones in place on that buffer; over D's whole
    index space, reading nothing in their bodies, every input of a kind :func:`_read_kind` knows and defined before
    the head."""
    from ...passes.conversion.linalg_buffers import DEAD_INPUT_ATTR, PURE_OPS, captured, updates_in_place

    ops = [o.operation for o in head.block.operations]
    later = set(ops[ops.index(head):])  # the islands go where the head is: what they read must be defined before
    found: list[ir.Operation] = []
    target = dest
    for op in ops[ops.index(head) + 1:]:
        if op.name in PURE_OPS:
            continue
        if op.name != "linalg.generic" or any(isinstance(v, ir.OpResult) and v.owner.operation in later
                                               for v in op.operands):
            break
        out = op.operands[len(op.operands) - 1]
        identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(ir.MemRefType(dest.type).rank))
        moved = (target == dest and DEAD_INPUT_ATTR in op.attributes and out != dest
                 and list(op.opview.inputs)[ir.IntegerAttr(op.attributes[DEAD_INPUT_ATTR]).value] == dest
                 and ((moves and _read_kind(out, identity, dest) == "full")
                      or (bordered and rows_contiguous(out, dest))))
        if not (moved or updates_in_place(op, target)) or len(ir.ArrayAttr(op.attributes["iterator_types"])) != \
                ir.MemRefType(dest.type).rank or any(isinstance(v.type, ir.MemRefType) for v in captured(op)):
            break
        maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
        if any(_read_kind(v, m, target) is None for v, m in zip(op.opview.inputs, maps, strict=False)):
            break
        found.append(op)
        target = out
    return found


def _tensor_update(op: ir.Operation, target: ir.Value, current: ir.Value, rows: Rows) -> ir.Value:
    """Update ``op`` of the chain's buffer ``target`` on the island's [rows, P, W] tensor ``current``: in place, its
    reads of ``target`` become the output operand's; moving the chain (it writes another buffer), they read
    ``current``, the output is that buffer's panel view and its own reads of that buffer the output operand's. The
    other inputs are tensors of their panel views (rows ``rows`` of those of D's shape)."""
    f32 = ir.F32Type.get()
    _, panels, width = ir.RankedTensorType(current.type).shape
    dims = [ir.AffineDimExpr.get(i) for i in range(3)]
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    out_buffer = op.operands[len(op.operands) - 1]
    moves = out_buffer != target

    ins, in_maps, kept = [], [], []
    for k, (value, map_attr) in enumerate(zip(op.opview.inputs, maps, strict=False)):
        kind = _read_kind(value, map_attr, target)
        if (kind == "out" and not moves) or (moves and value == out_buffer):
            continue  # read through the output operand
        if kind == "out":
            ins.append(current)
            in_maps.append(ir.AffineMap.get_identity(3))
        elif kind == "full":
            ins.append(tensor_of(_panel_view(value, panels, width, rows)))
            in_maps.append(ir.AffineMap.get_identity(3))
        elif kind == "channels":
            ins.append(tensor_of(memref.expand_shape(ir.MemRefType.get([panels, width], f32), value, [[0, 1]], [],
                                                     [panels, width])))
            in_maps.append(ir.AffineMap.get(3, 0, [dims[1], dims[2]]))
        else:
            ins.append(value if not isinstance(value.type, ir.MemRefType) else tensor_of(value))
            in_maps.append(ir.AffineMap.get(3, 0, []))
        kept.append(k)
    out = tensor_of(_panel_view(out_buffer, panels, width, rows), writable=True) if moves else current
    new = linalg.GenericOp([out.type], ins, [out],
                           ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in [*in_maps, ir.AffineMap.get_identity(3)]]),
                           ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * 3))
    old = op.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*[old.arguments[k].type for k in kept], old.arguments[-1].type)
    mapping = {old.arguments[k]: block.arguments[n] for n, k in enumerate(kept)}
    reads = list(op.opview.inputs)
    through_output = out_buffer if moves else target
    mapping.update((old.arguments[k], block.arguments[-1]) for k in range(len(reads)) if reads[k] == through_output)
    mapping[old.arguments[-1]] = block.arguments[-1]
    from ...passes.conversion.linalg_buffers import clone_body

    clone_body(old, block, mapping)
    return new.result


def panel_island(a: ir.Value, packed: ir.Value, c3: ir.Value, tiles: Tiles, epilogue: Epilogue | None = None,
                  rows: Rows = (0, 0)) -> None:
    """``c[m, p, j] += a[m, k] * packed[p, k, j]`` as a tensor island on the three buffers (``c3``: the output as
    ``[M, N / nr, nr]``), tagged with its tiles; with an ``epilogue``, ``c`` starts from its init instead of its
    content and goes through its updates (the island covering D's rows ``rows``: first, count)."""
    f32 = ir.F32Type.get()
    ta, tb, tc = tensor_of(a), tensor_of(packed), tensor_of(c3, writable=True)
    if epilogue is not None and epilogue.init is not None:
        tc = epilogue.init.build(tc, tiles.key())
    dims = [ir.AffineDimExpr.get(i) for i in range(4)]  # (m, p, j, k)
    maps = [ir.AffineMap.get(4, 0, [dims[i] for i in idx]) for idx in ((0, 3), (1, 3, 2), (0, 1, 2))]
    op = linalg.GenericOp([tc.type], [ta, tb], [tc], ir.ArrayAttr.get([ir.AffineMapAttr.get(x) for x in maps]),
                          ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{it}>")
                                            for it in ("parallel", "parallel", "parallel", "reduction")]))
    block = op.regions[0].blocks.append(f32, f32, f32)
    with ir.InsertionPoint(block):
        x, y, acc = block.arguments
        linalg.YieldOp([arith.addf(acc, arith.mulf(x, y))])
    op.attributes[TILES_ATTR] = ir.StringAttr.get(tiles.key())
    if tiles.serial:
        op.attributes[TASK_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)
    result, into = op.result, c3
    if epilogue is not None:
        result = epilogue.build(op.result, tiles, rows)
        if epilogue.final != epilogue.dest:  # the chain moved to E: the island writes E's rows, D not at all
            _, panels, width = ir.MemRefType(c3.type).shape
            into = _panel_view(epilogue.final, panels, width, rows)
    result.owner.operation.attributes[LAST_ATTR] = ir.StringAttr.get(tiles.key())
    bufferization.materialize_in_destination(None, result, into, writable=True)


def make_packed_islands(op: ir.Operation, spec: KernelSpec, moves: bool = True, threads: int = 1,
                        parallel_flops: int = 0) -> None:
    """Replace a matmul on packed weights (:func:`matches_packed`) by its tensor islands: its rows cut as
    :func:`.matmul.plan` cuts them, every piece all of the panels (L1 tiles for ``threads`` as :func:`panel_islands`); the
    op right before it that writes its output (a fill or bias broadcast, :class:`Init`) and the updates after it
    (:func:`fusable_updates`, ``moves`` as there) move into the islands where they tile the whole K."""
    a, packed, c3 = op.operands
    dest = c3.owner.operation.operands[0] if isinstance(c3, ir.OpResult) \
        and c3.owner.operation.name == "memref.expand_shape" else None
    epilogue = fusable_epilogue(op, dest, a, packed, spec, moves) if dest is not None else None
    with ir.InsertionPoint(op), op.location:
        panel_islands(a, packed, c3, spec, epilogue, threads, parallel_flops)
    if epilogue is not None:
        epilogue.erase()
    op.erase()


def fusable_epilogue(head: ir.Operation, dest: ir.Value, a: ir.Value, packed: ir.Value, spec: KernelSpec,
                     moves: bool = True, bordered: bool = False) -> Epilogue | None:
    """The :class:`Epilogue` of ``head`` (the init before it, :meth:`Init.before`, its updates of ``dest``:
    ``moves`` and ``bordered`` as :func:`fusable_updates`) if its panel islands of ``a`` and ``packed`` can hold it
    (they tile the whole K), else None (it then stays where it is)."""
    if _panel_k_tile(a, packed, spec):
        return None
    init = Init.before(head, dest)
    updates = tuple(fusable_updates(head, dest, moves, bordered))
    return Epilogue(init, updates, dest) if init is not None or updates else None


def _panel_k_tile(a: ir.Value, packed: ir.Value, spec: KernelSpec) -> int:
    """The L1 tile of the reduction of panel islands (0: the whole K)."""
    (m, k), (panels, _, width) = ir.MemRefType(a.type).shape, ir.MemRefType(packed.type).shape
    t = target_tiles(m, panels * width, k, spec)
    return t.k if t.k and k % t.k == 0 else 0


def panel_islands(a: ir.Value, packed: ir.Value, c3: ir.Value, spec: KernelSpec,
                  epilogue: Epilogue | None = None, threads: int = 1, parallel_flops: int = 0) -> None:
    """``c3[m, p, j] += a[m, k] * packed[p, k, j]`` as tensor islands (at the insertion point): the rows cut as
    :func:`.matmul.plan` cuts them, every piece all of the panels, each with the ``epilogue`` (when the whole K is one
    tile) restricted to its rows. On ``threads`` above 1, a piece of ``parallel_flops`` or more takes L1 tiles
    whose tasks keep the threads busy (:func:`.balance.balanced_tiles`)."""
    (m, k), (panels, _, width) = ir.MemRefType(a.type).shape, ir.MemRefType(packed.type).shape
    t = target_tiles(m, panels * width, k, spec)
    k_tile = _panel_k_tile(a, packed, spec)
    if epilogue is not None and k_tile:
        raise ValueError("an epilogue fuses into panel islands only where they tile the whole K")
    pieces = strips(m, register_rows(m, t.mr, width, spec))
    for row, rows, mr in pieces:
        l1_m, l1_n = fit(rows, mr, t.m), fit(panels * width, width, t.n)
        if 2 * rows * panels * width * k >= parallel_flops:
            l1_m, l1_n = balanced_tiles(rows, panels * width, k, mr, width, l1_m, l1_n, threads,
                                        task_flops(spec))
        tiles = Tiles(l1_m, l1_n, k_tile, mr, width, True, split=0 if rows // l1_m >= panels * width // l1_n else 1,
                      init=(rows, panels, len(epilogue.updates)) if epilogue is not None else (0, 0, 0),
                      columns_outer=threads <= 1 and columns_outer(k, panels * width, rows // l1_m, spec))
        if len(pieces) == 1:
            panel_island(a, packed, c3, tiles, epilogue, (0, m))
        else:
            panel_island(memref.subview(a, [row, 0], [rows, k], [1, 1]), packed,
                          memref.subview(c3, [row, 0, 0], [rows, panels, width], [1, 1, 1]), tiles, epilogue,
                          (row, rows))


def image_row_tile(m: int, n: int, k: int, width: int, spec: KernelSpec) -> int:
    """The register tile's rows for :func:`row_islands` of ``width`` pixels in an ``m x n x k`` matmul of the pixels:
    the full tile where it divides the row, else :func:`.matmul.divisor_rows` (no remainder strip: a strip per image
    row would be a second island per row, of few accumulators), else 0 (AVX2's 6x16 at 7 and 14 pixels)."""
    t = target_tiles(m, n, k, spec)
    return t.mr if width % t.mr == 0 else divisor_rows(width, t.mr, t.nr, spec)


def row_islands(a: ir.Value, packed: ir.Value, c3: ir.Value, spec: KernelSpec, epilogue: Epilogue, width: int,
                threads: int = 1) -> None:
    """``c3[m, p, j] += a[m, k] * packed[p, k, j]`` (the pixels of N x H image rows of ``width`` pixels) as one panel
    island per image row inside a loop over them, each with the ``epilogue`` restricted to its row: the islands of a
    chain that moves to the interior of a bordered buffer (:func:`rows_contiguous`), whose rows are contiguous one
    image row at a time. ``threads`` above 1: the rows are the tasks of an scf.forall (as many a task as make one
    task a thread where they divide evenly); each island runs on the thread of its row (tagged serial)."""
    from .conv import for_blocks

    (m, k), (panels, _, nr) = ir.MemRefType(a.type).shape, ir.MemRefType(packed.type).shape
    mr = image_row_tile(m, panels * nr, k, width, spec)
    if not mr or m % width:
        raise ValueError(f"no register tile divides an image row of {width} pixels of {m}")
    t = target_tiles(m, panels * nr, k, spec)
    tiles = Tiles(fit(width, mr, t.m), fit(panels * nr, nr, t.n), 0, mr, nr, True,
                  init=(width, panels, len(epilogue.updates)), serial=True)

    def one(row: ir.Value) -> None:
        first = arith.muli(row, index_constant(width))
        panel_island(rows_at(a, first, width), packed, rows_at(c3, first, width), tiles, epilogue, (first, width))

    for_blocks(m // width, threads, one)


__all__ = [
    "Epilogue",
    "Init",
    "fusable_epilogue",
    "fusable_updates",
    "image_row_tile",
    "make_packed_islands",
    "matches_packed",
    "panel_island",
    "panel_islands",
    "row_islands",
    "rows_at",
    "rows_contiguous",
]
