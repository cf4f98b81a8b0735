"""Sequences and optionals (:mod:`..structured`): SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
SequenceErase, SequenceLength, ConcatFromSequence, SplitToSequence, SequenceMap, Optional, OptionalHasElement and
OptionalGetElement.

A sequence's length and an optional's emptiness are known at compile time, so these ops run at import: they
rearrange tuples of tensors (a position must be known at import too), and only ConcatFromSequence and
SplitToSequence build ops in the graph (concats, boxes, reshapes). SequenceMap imports its body once per element.
"""

from __future__ import annotations

import numpy as np
from onnx import AttributeProto

from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import compute_dtype, fmt_shape, type_name
from ..structured import Opt, Seq
from .control import _graph, _import, _stack
from .core import _concat_all, _reshape
from .datamove import _box

INT, TYPE_PROTO = AttributeProto.INT, AttributeProto.TYPE_PROTO


def _sequence(ctx: NodeContext, i: int) -> Seq:
    x = ctx.input(i)
    if not isinstance(x, Seq):
        raise ctx.error(f"input #{i} '{ctx.node.input[i]}' must be a sequence")
    return x


def _tensor(ctx: NodeContext, i: int) -> Tensor:
    x = ctx.input(i)
    if isinstance(x, (Seq, Opt)):
        raise ctx.error(f"input #{i} '{ctx.node.input[i]}' must be a tensor")
    return x


def _position(ctx: NodeContext, i: int, length: int, default: int, inserting: bool = False) -> int:
    """The known position input ``i`` (default ``default`` when left out) in [0, length) (an insertion: [0, length]),
    negative ones counted from the end."""
    if ctx.optional_input(i) is None:
        return default
    value = ctx.constant_input(i, "position")
    if value.size != 1 or value.dtype.kind not in "iu":
        raise ctx.error(f"the position must be one integer, got {fmt_shape(value.shape)} {value.dtype}")
    p = int(value.reshape(-1)[0])
    top = length + (1 if inserting else 0)
    if not -length <= p < top:
        raise ctx.error(f"position {p} is out of range for a sequence of {length}")
    return p + length if p < 0 else p


def _checked_item(ctx: NodeContext, seq: Seq, x: Tensor) -> Tensor:
    """``x``, which must have the sequence's element type (an empty sequence's too: SequenceEmpty's ``dtype``)."""
    if dtype_of(x) != seq.dtype:
        raise ctx.error(f"a tensor of {dtype_of(x)} cannot join a sequence of {seq.dtype}")
    return x


@onnx_op("SequenceEmpty", since=11, inputs=(0, 0), attrs=("dtype",), folds=True, structured=True)
def sequence_empty(ctx: NodeContext) -> Seq:
    """A sequence of no tensors, of element type ``dtype`` (default float32)."""
    elem = ctx.attr("dtype", INT, 1)
    dtype = compute_dtype(elem)
    if dtype is None:
        raise ctx.unsupported(f"unsupported element type {type_name(elem)} for attribute 'dtype'")
    return Seq((), dtype)


@onnx_op("SequenceConstruct", since=11, inputs=(1, None), folds=True, structured=True)
def sequence_construct(ctx: NodeContext) -> Seq:
    """The input tensors, in order, as a sequence (of one element type)."""
    items = tuple(_tensor(ctx, i) for i in range(len(ctx.node.input)))
    if len({dtype_of(x) for x in items}) != 1:
        raise ctx.error(f"the tensors have different element types: {', '.join(str(dtype_of(x)) for x in items)}")
    return Seq(items, dtype_of(items[0]))


@onnx_op("SequenceInsert", since=11, inputs=(2, 3), folds=True, structured=True)
def sequence_insert(ctx: NodeContext) -> Seq:
    """The sequence with the tensor inserted at the known position (default: at the end)."""
    seq, x = _sequence(ctx, 0), _tensor(ctx, 1)
    at = _position(ctx, 2, len(seq.items), len(seq.items), inserting=True)
    _checked_item(ctx, seq, x)
    return Seq((*seq.items[:at], x, *seq.items[at:]), dtype_of(x))


@onnx_op("SequenceAt", since=11, inputs=(2, 2), folds=True, structured=True)
def sequence_at(ctx: NodeContext) -> Tensor:
    """The tensor at the known position."""
    seq = _sequence(ctx, 0)
    if not seq.items:
        raise ctx.error("the sequence is empty")
    return seq.items[_position(ctx, 1, len(seq.items), 0)]


@onnx_op("SequenceErase", since=11, inputs=(1, 2), folds=True, structured=True)
def sequence_erase(ctx: NodeContext) -> Seq:
    """The sequence without the tensor at the known position (default: the last)."""
    seq = _sequence(ctx, 0)
    if not seq.items:
        raise ctx.error("the sequence is empty")
    at = _position(ctx, 1, len(seq.items), len(seq.items) - 1)
    return Seq((*seq.items[:at], *seq.items[at + 1:]), seq.dtype)


@onnx_op("SequenceLength", since=11, inputs=(1, 1), folds=True, structured=True)
def sequence_length(ctx: NodeContext) -> Tensor:
    """The number of tensors, a known int64 scalar."""
    return ctx.const(np.array(len(_sequence(ctx, 0).items), np.int64), name=ctx.output_name)


@onnx_op("ConcatFromSequence", since=11, inputs=(1, 1), attrs=("axis", "new_axis"), folds=True, structured=True)
def concat_from_sequence(ctx: NodeContext) -> Tensor:
    """The tensors joined along ``axis`` (new_axis=1: stacked along a new axis there)."""
    seq = _sequence(ctx, 0)
    if not seq.items:
        raise ctx.unsupported("concatenating an empty sequence gives a tensor of unknown shape")
    new_axis = ctx.attr("new_axis", INT, 0)
    if new_axis not in (0, 1):
        raise ctx.error(f"attribute 'new_axis' must be 0 or 1, got {new_axis}")
    rank = len(shape_of(seq.items[0])) + new_axis
    axis = ctx.attr("axis", INT, None)
    if axis is None:
        raise ctx.error("attribute 'axis' is required")
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    axis += rank if axis < 0 else 0
    shapes = {tuple(shape_of(x)) for x in seq.items}
    if new_axis and len(shapes) != 1:
        raise ctx.error(f"stacking needs tensors of one shape, got {', '.join(fmt_shape(s) for s in sorted(shapes))}")
    if new_axis:
        return _stack(ctx, list(seq.items), axis)
    if all(isinstance(x, Const) for x in seq.items):
        return ctx.const(np.concatenate([x.array for x in seq.items], axis=axis), name=ctx.output_name)
    return _concat_all(ctx, list(seq.items), axis)


@onnx_op("SplitToSequence", since=11, inputs=(1, 2), attrs=("axis", "keepdims"), folds=True, structured=True)
def split_to_sequence(ctx: NodeContext) -> Seq:
    """The input cut along ``axis``: into pieces of the known ``split`` lengths (1-D), of one length (a scalar; the
    last piece shorter), or of length 1 each (no split; keepdims=0 drops the axis then)."""
    x = _tensor(ctx, 0)
    shape = shape_of(x)
    if not shape:
        raise ctx.error("the input must have rank 1 or more")
    axis = ctx.attr("axis", INT, 0)
    if not -len(shape) <= axis < len(shape):
        raise ctx.error(f"axis {axis} is out of range for a rank-{len(shape)} input")
    axis += len(shape) if axis < 0 else 0
    n = shape[axis]
    keepdims = ctx.attr("keepdims", INT, 1)
    if keepdims not in (0, 1):
        raise ctx.error(f"attribute 'keepdims' must be 0 or 1, got {keepdims}")
    if ctx.optional_input(1) is None:
        sizes = [1] * n
    else:
        keepdims = 1  # ignored with a split
        split = ctx.constant_input(1, "split")
        if split.dtype.kind not in "iu" or split.ndim > 1:
            raise ctx.error(f"split must be an integer scalar or 1-D tensor, got {fmt_shape(split.shape)} "
                            f"{split.dtype}")
        if split.ndim == 0:
            step = int(split)
            if step < 1:
                raise ctx.error(f"split must be at least 1, got {step}")
            sizes = [min(step, n - s) for s in range(0, n, step)]
        else:
            sizes = [int(s) for s in split]
            if any(s < 0 for s in sizes) or sum(sizes) != n:
                raise ctx.error(f"split {sizes} must be lengths >= 0 adding up to the axis' {n}")
    items, start = [], 0
    for size in sizes:
        piece = _box(ctx, x, [start if d == axis else 0 for d in range(len(shape))],
                     [size if d == axis else k for d, k in enumerate(shape)])
        items.append(piece if keepdims else _reshape(ctx, piece, shape[:axis] + shape[axis + 1:]))
        start += size
    return Seq(tuple(items), dtype_of(x))


@onnx_op("SequenceMap", since=17, inputs=(1, None), outputs=(1, None), attrs=("body",), folds=True,
         structured=True)
def sequence_map(ctx: NodeContext) -> list[Seq]:
    """The body imported once per element: its inputs bound to the element of each sequence input (of one length)
    and to each tensor input itself; each body output gathered into an output sequence."""
    body = _graph(ctx, "body")
    inputs = [ctx.input(i) for i in range(len(ctx.node.input))]
    if len(body.input) != len(inputs) or len(body.output) != len(ctx.node.output):
        raise ctx.error(f"the body takes {len(body.input)} inputs and gives {len(body.output)} outputs; the node has "
                        f"{len(inputs)} and {len(ctx.node.output)}")
    lengths = {len(x.items) for x in inputs if isinstance(x, Seq)}
    if not isinstance(inputs[0], Seq) or len(lengths) != 1:
        raise ctx.error("the first input must be a sequence, and every sequence input of one length")
    if any(isinstance(x, Opt) for x in inputs):
        raise ctx.error("the inputs must be sequences or tensors")
    outputs: list[list[Tensor]] = [[] for _ in body.output]
    for k in range(lengths.pop()):
        bindings = {b.name: x.items[k] if isinstance(x, Seq) else x for b, x in zip(body.input, inputs)}
        for gathered, y in zip(outputs, _import(ctx, body, bindings), strict=True):
            if isinstance(y, (Seq, Opt)):
                raise ctx.error("the body must give tensors")
            gathered.append(y)
    dtypes = [compute_dtype(o.type.tensor_type.elem_type) if o.type.HasField("tensor_type") else None
              for o in body.output]
    return [Seq(tuple(items), dtype_of(items[0]) if items else dtype or np.dtype(np.float32))
            for items, dtype in zip(outputs, dtypes)]


# --------------------------------------------------------------------------- optionals


@onnx_op("Optional", since=15, inputs=(0, 1), attrs=("type",), folds=True, structured=True)
def optional(ctx: NodeContext) -> Opt:
    """An optional holding the input (a tensor or a sequence), or an empty one."""
    if ctx.optional_input(0) is None and ctx.attr("type", TYPE_PROTO, None) is None:
        raise ctx.error("an empty optional needs the attribute 'type'")
    x = ctx.optional_input(0)
    if isinstance(x, Opt):
        raise ctx.error("an optional cannot hold an optional")
    return Opt(x)


@onnx_op("OptionalHasElement", since=15, inputs=(1, 1), folds=True, structured=True)
@onnx_op("OptionalHasElement", since=18, inputs=(0, 1), folds=True, structured=True)
def optional_has_element(ctx: NodeContext) -> Tensor:
    """Whether the input holds an element: a known bool scalar, true for a tensor or sequence given, false for an
    empty optional or none."""
    x = ctx.optional_input(0)
    return ctx.const(np.array(x is not None and not (isinstance(x, Opt) and x.value is None)), name=ctx.output_name)


@onnx_op("OptionalGetElement", since=15, inputs=(1, 1), folds=True, structured=True)
@onnx_op("OptionalGetElement", since=18, inputs=(1, 1), folds=True, structured=True)
def optional_get_element(ctx: NodeContext) -> Tensor | Seq:
    """The element of an optional; a tensor or sequence (which opset 18 allows) itself. An empty optional is an
    error."""
    x = ctx.input(0)
    if not isinstance(x, Opt):
        return x
    if x.value is None:
        raise ctx.error(f"the optional '{ctx.node.input[0]}' is empty")
    return x.value
