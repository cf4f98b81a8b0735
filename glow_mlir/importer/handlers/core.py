"""One handler per ONNX op, registered by (op_type, since_opset) with ``@onnx_op``.

A handler gets a :class:`NodeContext` and returns the node's output: an MLIR value built with
the glowgraph builders (which infer result types and raise VerifyError on bad shapes), or a
:class:`Const` when the value is known at import.

Folding at import: data movement of known tensors (Gemm's transA/transB, Transpose, Reshape,
Flatten) and Gemm's alpha/beta scalings are done here in numpy, so weights arrive in the graph
ready to use (a constant in the layout ``fully_connected`` wants) instead of as a chain for the
constant-folding pass; those handlers are registered with ``folds=True`` and keep the weight's name.
Any other node whose inputs are all known is evaluated before its handler is asked (``folding``).
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import fmt_shape, tensor_to_array

FLOAT, INT, INTS, FLOATS, TENSOR, STRING = (
    AttributeProto.FLOAT,
    AttributeProto.INT,
    AttributeProto.INTS,
    AttributeProto.FLOATS,
    AttributeProto.TENSOR,
    AttributeProto.STRING,
)

# --------------------------------------------------------------------------- helpers


def _reshape(ctx: NodeContext, x: Tensor, shape: Sequence[int]) -> Tensor:
    """``x`` under a new shape with the same element count (checked by the caller)."""
    shape = [int(d) for d in shape]
    if shape == shape_of(x):
        return x
    if isinstance(x, Const):
        return ctx.const(x.array.reshape(shape), name=x.name)  # the same weight, re-laid out
    return gg.reshape(x, shape=shape)


def _transpose(ctx: NodeContext, x: Tensor, perm: Sequence[int]) -> Tensor:
    """``x`` with its dims permuted: result dim i is input dim perm[i]."""
    perm = [int(p) for p in perm]
    rank = len(shape_of(x))
    if sorted(perm) != list(range(rank)):
        raise ctx.error(f"perm {perm} is not a permutation of the {rank} dimensions of the input")
    if perm == list(range(rank)):
        return x
    if isinstance(x, Const):
        return ctx.const(x.array.transpose(perm), name=x.name)
    return gg.transpose(x, shuffle=perm)


def _scale(ctx: NodeContext, x: Tensor, factor: float) -> Tensor:
    """``x * factor``: folded for a known tensor, a multiply by a splat otherwise."""
    if factor == 1.0:
        return x
    if isinstance(x, Const):
        return ctx.const((x.array * factor).astype(x.array.dtype), name=x.name)
    return gg.mul(x, _splat(x, factor))


def _splat(x: ir.Value, value: float) -> ir.Value:
    """``value`` filling a tensor of ``x``'s type."""
    return gg.splat(value=value, result_types=[x.type])


def _concat_all(ctx: NodeContext, parts: Sequence[Tensor], axis: int) -> Tensor:
    """``parts`` joined along ``axis`` as a chain of binary concats (one part: itself)."""
    if len(parts) == 1:
        return parts[0]
    result = ctx.value(parts[0])
    for x in parts[1:]:
        result = gg.concat(result, ctx.value(x), axis=axis)
    return result


def _broadcast_shape(ctx: NodeContext, *shapes: Sequence[int]) -> list[int]:
    """The numpy broadcast of ``shapes``."""
    try:
        return list(np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        raise ctx.error(f"shapes {', '.join(fmt_shape(s) for s in shapes)} do not broadcast together") from None


def _expand(ctx: NodeContext, x: Tensor, shape: Sequence[int]) -> ir.Value:
    """``x`` broadcast to ``shape`` (numpy rules) as an explicit ``glowgraph.broadcast``; known
    tensors are not inflated at import."""
    v = ctx.value(x)
    return v if shape_of(v) == list(shape) else gg.broadcast(v, shape=list(shape))


def _binary(ctx: NodeContext, build: Callable[[ir.Value, ir.Value], ir.Value]) -> ir.Value:
    """An elementwise op with ONNX (numpy) broadcasting made explicit on the operands."""
    a, b = ctx.input(0), ctx.input(1)
    shape = _broadcast_shape(ctx, shape_of(a), shape_of(b))
    return build(_expand(ctx, a, shape), _expand(ctx, b, shape))


# --------------------------------------------------------------------------- matrix products


@onnx_op("Gemm", since=7, inputs=(2, 3), attrs=("alpha", "beta", "transA", "transB"))
def gemm(ctx: NodeContext) -> Tensor:
    """Y = alpha * A' * B' + beta * C, C broadcastable to [M, N]. A C that is the same for every row
    ([N], [1, N], [1] or a scalar) becomes the bias of a fully_connected; any other C is added
    after a matmul."""
    a, b = ctx.input(0), ctx.input(1)
    if len(shape_of(a)) != 2 or len(shape_of(b)) != 2:
        raise ctx.error(f"A and B must be 2-D, got {fmt_shape(shape_of(a))} and {fmt_shape(shape_of(b))}")
    if ctx.attr("transA", INT, 0):
        a = _transpose(ctx, a, [1, 0])
    if ctx.attr("transB", INT, 0):
        b = _transpose(ctx, b, [1, 0])
    # Scaling B rather than the product folds alpha into constant weights.
    b = _scale(ctx, b, ctx.attr("alpha", FLOAT, 1.0))
    m, n = shape_of(a)[0], shape_of(b)[1]
    a_value, b_value = ctx.value(a), ctx.value(b)
    c = ctx.optional_input(2)
    if c is None:
        return gg.matmul(a_value, b_value)
    c = _scale(ctx, c, ctx.attr("beta", FLOAT, 1.0))
    c_shape = shape_of(c)
    if _broadcast_shape(ctx, c_shape, [m, n]) != [m, n]:
        raise ctx.error(f"C of shape {fmt_shape(c_shape)} does not broadcast to the product's {fmt_shape([m, n])}")
    if len(c_shape) < 2 or c_shape[0] == 1:
        bias = _expand(ctx, _reshape(ctx, c, [math.prod(c_shape)]), [n])
        return gg.fully_connected(a_value, b_value, bias)
    return gg.add(gg.matmul(a_value, b_value), _expand(ctx, c, [m, n]))


@onnx_op("MatMul", since=1, inputs=(2, 2))
def matmul(ctx: NodeContext) -> Tensor:
    """numpy matmul of float32 operands. A 1-D A is a row and a 1-D B a column, their unit dim dropped from the result.
    When B holds one matrix (rank 2, or batch dims all 1), A's batch dims fold into the rows of one 2-D matmul;
    otherwise both operands are broadcast to the common batch dims (numpy rules, explicit) and flattened into the
    batch of one batch_matmul. The result is reshaped to the batch dims and the matrix dims."""
    a, b = ctx.input(0), ctx.input(1)
    for x, what in ((a, "A input"), (b, "B input")):
        ctx.check_element_type(x, what, [np.float32])
    return matmul_of(ctx, a, b)


def matmul_of(ctx: NodeContext, a: Tensor, b: Tensor) -> Tensor:
    """numpy's matmul of two float32 tensors (see :func:`matmul`)."""
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise ctx.error(f"operands must have rank 1 or more, got {fmt_shape(sa)} and {fmt_shape(sb)}")
    a2 = sa if len(sa) > 1 else [1, *sa]
    b2 = sb if len(sb) > 1 else [*sb, 1]
    (m, k), (k2, n) = a2[-2:], b2[-2:]
    if k != k2:
        raise ctx.error(f"inner dimensions differ: A {fmt_shape(sa)}, B {fmt_shape(sb)}")
    batch = _broadcast_shape(ctx, a2[:-2], b2[:-2])
    if math.prod(b2[:-2]) == 1:
        lhs = _reshape(ctx, a, [math.prod(a2[:-1]), k])
        y = gg.matmul(ctx.value(lhs), ctx.value(_reshape(ctx, b, [k, n])))
    else:
        flat = math.prod(batch)
        lhs = _reshape(ctx, _expand(ctx, _reshape(ctx, a, a2), [*batch, m, k]), [flat, m, k])
        rhs = _reshape(ctx, _expand(ctx, _reshape(ctx, b, b2), [*batch, k, n]), [flat, k, n])
        y = gg.batch_matmul(ctx.value(lhs), ctx.value(rhs))
    # numpy drops the dims it added to 1-D operands.
    rows = [m] if len(sa) > 1 else []
    cols = [n] if len(sb) > 1 else []
    return _reshape(ctx, y, [*batch, *rows, *cols])


def _einsum_terms(ctx: NodeContext, equation: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """The input terms and the output term of an Einsum ``equation`` on inputs of ``ranks``, one letter per dim: an
    ellipsis stands for the dims no letter names, right-aligned across the terms, as letters the equation does not
    use; the implicit output is the ellipsis's letters (first, as numpy puts them), then the letters found once,
    sorted."""
    text = equation.replace(" ", "")
    lhs, arrow, out = text.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ctx.error(f"equation '{equation}' has {len(terms)} input terms for {len(ranks)} inputs")
    if len(ranks) > 2:
        raise ctx.unsupported(f"Einsum '{equation}' of {len(ranks)} operands is not supported (one or two)")
    spare = [c for c in string.ascii_letters if c not in text]
    broadcast = max((rank - len(term.replace("...", "")) for term, rank in zip(terms, ranks) if "..." in term),
                    default=0)
    if broadcast > len(spare) or any(t.count("...") > 1 for t in [*terms, out]):
        raise ctx.error(f"equation '{equation}': an ellipsis may appear once per term and stand for free letters")
    filler = "".join(spare[:broadcast])
    terms = [t.replace("...", filler[broadcast - (rank - len(t.replace("...", ""))):]) if "..." in t else t
             for t, rank in zip(terms, ranks)]
    if not arrow:
        letters = "".join(terms)
        out = filler + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in filler))
    out = out.replace("...", filler)
    for term, rank in zip(terms, ranks):
        if not set(term) <= set(string.ascii_letters) or len(term) != rank:
            raise ctx.error(f"equation '{equation}': term '{term}' must name each of the {rank} dims with a letter")
    if len(set(out)) != len(out) or not set(out) <= set("".join(terms)):
        raise ctx.error(f"equation '{equation}': the output term '{out}' must name distinct letters of the inputs")
    return terms, out


def _diagonal(ctx: NodeContext, x: Tensor, term: str) -> tuple[Tensor, str]:
    """``x`` (dims named by ``term``) with each letter named twice taken on its diagonal: the two dims moved last,
    flattened, and gathered at i (n + 1); the term with the letter once, last."""
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        first, second = term.index(c), term.index(c, term.index(c) + 1)
        rest = [d for d in range(len(term)) if d not in (first, second)]
        shape = shape_of(x)
        n = shape[first]
        moved = _reshape(ctx, _transpose(ctx, x, [*rest, first, second]), [*(shape[d] for d in rest), n * n])
        index = ctx.const(np.arange(n, dtype=np.int64) * (n + 1), name=f"{ctx.label}.diagonal")
        x = gg.gather(ctx.value(moved), ctx.value(index), axis=len(rest))
        term = "".join(term[d] for d in rest) + c
    return x, term


def _sum_out(x: ir.Value, term: str, keep: str) -> tuple[ir.Value, str]:
    """``x`` (dims named by ``term``) summed over the letters not in ``keep``, and the term of what is left."""
    axes = [d for d, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    return gg.reduce_sum(x, axes=axes), "".join(c for c in term if c in keep)


@onnx_op("Einsum", since=12, inputs=(1, None), attrs=("equation",))
def einsum(ctx: NodeContext) -> Tensor:
    """Einstein summation of one or two operands (an ellipsis for the dims no letter names; a letter twice in a term
    takes that diagonal first). One operand: a sum over the letters the output drops, then a transpose. Two
    (float32): the letters of one operand only that the output drops are summed first; then the letters of both and
    of the output are the batch, those of both only are contracted, and the product is one (batch) matmul of the
    operands transposed to [batch, kept, contracted] and [batch, contracted, kept], reshaped to the letters and
    transposed to the output's order."""
    equation = ctx.attr("equation", STRING, b"").decode("utf-8", "replace")
    xs = [ctx.input(i) for i in range(len(ctx.node.input))]
    terms, out = _einsum_terms(ctx, equation, [len(shape_of(x)) for x in xs])
    for i, (x, term) in enumerate(zip(xs, terms)):
        if len(set(term)) != len(term):
            xs[i], terms[i] = _diagonal(ctx, x, term)
    size: dict[str, int] = {}
    allowed = [np.dtype(np.float32)] if len(xs) == 2 else [np.dtype(t) for t in (np.float32, np.int64, np.int32)]
    for x, term in zip(xs, terms):
        if dtype_of(x) not in allowed:
            raise ctx.unsupported(f"Einsum '{equation}' of {len(xs)} {dtype_of(x)} operand(s) is not supported "
                                  f"(supported: {', '.join(map(str, allowed))})")
        for c, n in zip(term, shape_of(x)):
            if size.setdefault(c, n) != n and 1 not in (size[c], n):
                raise ctx.error(f"equation '{equation}': letter '{c}' names dims of sizes {size[c]} and {n}")
            size[c] = max(size[c], n)
    # a dim of 1 where the other operand's is larger broadcasts (numpy's rule, for the ellipsis's dims)
    xs = [x if shape_of(x) == [size[c] for c in t] else _expand(ctx, x, [size[c] for c in t])
          for x, t in zip(xs, terms)]
    out_shape = [size[c] for c in out]
    if any(0 in shape_of(x) for x in xs):  # an empty sum is 0
        return ctx.const(np.zeros(out_shape, dtype_of(xs[0])))
    if len(xs) == 1:
        x, term = _sum_out(ctx.value(xs[0]), terms[0], out)
        return _transpose(ctx, x, [term.index(c) for c in out])
    (a, ta), (b, tb) = (_sum_out(ctx.value(x), t, out + other) for x, t, other in zip(xs, terms, terms[::-1]))
    batch = [c for c in ta if c in tb and c in out]
    contracted = [c for c in ta if c in tb and c not in out]
    kept_a, kept_b = [c for c in ta if c not in tb], [c for c in tb if c not in ta]
    m, k, n, nb = (math.prod(size[c] for c in group) for group in (kept_a, contracted, kept_b, batch))
    lhs = _transpose(ctx, a, [ta.index(c) for c in batch + kept_a + contracted])
    rhs = _transpose(ctx, b, [tb.index(c) for c in batch + contracted + kept_b])
    if nb == 1:
        y = gg.matmul(ctx.value(_reshape(ctx, lhs, [m, k])), ctx.value(_reshape(ctx, rhs, [k, n])))
    else:
        y = gg.batch_matmul(ctx.value(_reshape(ctx, lhs, [nb, m, k])), ctx.value(_reshape(ctx, rhs, [nb, k, n])))
    letters = batch + kept_a + kept_b
    y = _reshape(ctx, y, [size[c] for c in letters])
    return _transpose(ctx, y, [letters.index(c) for c in out])


# --------------------------------------------------------------------------- elementwise


def _legacy_binary(ctx: NodeContext, build: Callable[[ir.Value, ir.Value], ir.Value]) -> ir.Value:
    """Before opset 7: B equals A's shape, or with ``broadcast=1`` matches A's dims from ``axis`` on (default: its
    last dims), a scalar B any A; made explicit as a reshape and a broadcast of B. ``consumed_inputs`` (opsets 1-5)
    was a memory hint and changes nothing."""
    a, b = ctx.input(0), ctx.input(1)
    sa, sb = shape_of(a), shape_of(b)
    if not ctx.attr("broadcast", INT, 0):
        if sa != sb:
            raise ctx.error(f"B {fmt_shape(sb)} must have A's shape {fmt_shape(sa)} without broadcast=1")
        return build(ctx.value(a), ctx.value(b))
    if math.prod(sb) == 1:  # a scalar (or one-element) B
        return build(ctx.value(a), _expand(ctx, _reshape(ctx, b, [1] * len(sa)), sa))
    axis = ctx.attr("axis", INT, len(sa) - len(sb))
    if axis < 0:
        axis += len(sa)
    if not 0 <= axis <= len(sa) - len(sb) or sa[axis:axis + len(sb)] != sb:
        raise ctx.error(f"B {fmt_shape(sb)} does not match A {fmt_shape(sa)} from axis {axis} (legacy broadcast)")
    aligned = _reshape(ctx, b, [1] * axis + sb + [1] * (len(sa) - axis - len(sb)))
    return build(ctx.value(a), _expand(ctx, aligned, sa))


def _register_legacy(op_type: str, build: Callable[[ir.Value, ir.Value], ir.Value]) -> None:
    """``op_type`` at opsets 1-5 (with consumed_inputs) and 6 (without), as :func:`_legacy_binary` of ``build``."""

    def handler(ctx: NodeContext) -> Tensor:
        return _legacy_binary(ctx, build)

    handler.__name__ = f"{op_type.lower()}_legacy"
    handler.__doc__ = f"{op_type} with the legacy broadcast."
    onnx_op(op_type, since=1, inputs=(2, 2), attrs=("axis", "broadcast", "consumed_inputs"))(handler)
    onnx_op(op_type, since=6, inputs=(2, 2), attrs=("axis", "broadcast"))(handler)


for _op, _build in (("Add", gg.add), ("Sub", gg.sub), ("Mul", gg.mul), ("Div", gg.div)):
    _register_legacy(_op, _build)


@onnx_op("Add", since=7, inputs=(2, 2))
def add(ctx: NodeContext) -> Tensor:
    """A + B, numpy broadcasting."""
    return _binary(ctx, gg.add)


@onnx_op("Sub", since=7, inputs=(2, 2))
def sub(ctx: NodeContext) -> Tensor:
    """A - B, numpy broadcasting."""
    return _binary(ctx, gg.sub)


@onnx_op("Mul", since=7, inputs=(2, 2))
def mul(ctx: NodeContext) -> Tensor:
    """A * B, numpy broadcasting."""
    return _binary(ctx, gg.mul)


@onnx_op("Div", since=7, inputs=(2, 2))
def div(ctx: NodeContext) -> Tensor:
    """A / B, numpy broadcasting; of uint64 (held in int64) the unsigned quotient (:func:`unsigned_divide`)."""
    if ctx.stored.get(ctx.node.input[0]) == np.dtype(np.uint64):
        return _binary(ctx, lambda a, b: unsigned_divide(a, b)[0])
    return _binary(ctx, gg.div)


def sign_flipped(x: ir.Value) -> ir.Value:
    """A uint64 held in int64 with its sign bit flipped: the signed order of such values is the unsigned one (its
    own inverse)."""
    return gg.xor(x, _splat(x, -(1 << 63)))


def unsigned_half(x: ir.Value) -> ir.Value:
    """x >> 1 of a uint64 held in int64, logically: the top bit cleared, so the result is non-negative."""
    return gg.and_(gg.shift_right(x, _splat(x, 1)), _splat(x, (1 << 63) - 1))


def _unsigned_less(a: ir.Value, b: ir.Value) -> ir.Value:
    """a < b on the bits of uint64 values held in int64."""
    return gg.cmp_lt(sign_flipped(a), sign_flipped(b))


def unsigned_divide(a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(a // b, a % b) of uint64 values held in int64, with signed operations (Hacker's Delight's divlu): a divisor
    of 2^63 or more goes once or not at all; a smaller one divides a / 2 (non-negative: the signed division is the
    unsigned one), the quotient doubled and corrected by one where the remainder is still at least b. A divisor of 0
    gives what the signed division gives (ONNX leaves it undefined)."""
    one, zero = _splat(a, 1), _splat(a, 0)
    big = gg.cmp_lt(b, zero)  # b >= 2^63
    q_big = gg.select(_unsigned_less(a, b), zero, one)
    q = gg.shift_left(gg.div(unsigned_half(a), b), one)
    r = gg.sub(a, gg.mul(q, b))
    q = gg.select(_unsigned_less(r, b), q, gg.add(q, one))
    quotient = gg.select(big, q_big, q)
    return quotient, gg.sub(a, gg.mul(quotient, b))


@onnx_op("Relu", since=1, inputs=(1, 1), attrs=("consumed_inputs",))
@onnx_op("Relu", since=6, inputs=(1, 1))
def relu(ctx: NodeContext) -> Tensor:
    """max(X, 0)."""
    return gg.relu(ctx.operand(0))


@onnx_op("Sigmoid", since=1, inputs=(1, 1), attrs=("consumed_inputs",))
@onnx_op("Sigmoid", since=6, inputs=(1, 1))
def sigmoid(ctx: NodeContext) -> Tensor:
    """1 / (1 + exp(-X))."""
    return gg.sigmoid(ctx.operand(0))


@onnx_op("Tanh", since=1, inputs=(1, 1), attrs=("consumed_inputs",))
@onnx_op("Tanh", since=6, inputs=(1, 1))
def tanh(ctx: NodeContext) -> Tensor:
    """tanh(X)."""
    return gg.tanh(ctx.operand(0))


# --------------------------------------------------------------------------- shapes and layout


@onnx_op("Reshape", since=5, inputs=(2, 2), folds=True)
@onnx_op("Reshape", since=14, inputs=(2, 2), attrs=("allowzero",), folds=True)
def reshape(ctx: NodeContext) -> Tensor:
    """Reshape to a constant shape: 0 copies the input's dim at that position (a literal 0 with
    allowzero=1), and one -1 takes the remaining elements."""
    x = ctx.input(0)
    spec = ctx.constant_input(1, "shape")
    if spec.ndim != 1 or spec.dtype.kind not in "iu":
        raise ctx.error(f"the shape input must be a 1-D integer tensor, got {fmt_shape(spec.shape)} {spec.dtype}")
    requested = [int(d) for d in spec]
    in_shape = shape_of(x)
    allowzero = ctx.attr("allowzero", INT, 0)
    out = []
    for i, d in enumerate(requested):
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise ctx.error(f"shape {requested} copies dim {i} of a rank-{len(in_shape)} input")
            d = in_shape[i]
        out.append(d)
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise ctx.error(f"shape {requested} must hold dims >= -1 with at most one -1")
    total = math.prod(in_shape)
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        if known == 0 or total % known:
            raise ctx.error(f"cannot reshape {fmt_shape(in_shape)} into {requested}")
        out[out.index(-1)] = total // known
    if math.prod(out) != total:
        raise ctx.error(f"cannot reshape {fmt_shape(in_shape)} into {requested}: element counts differ")
    return _reshape(ctx, x, out)


@onnx_op("Flatten", since=1, inputs=(1, 1), attrs=("axis",), folds=True)
def flatten(ctx: NodeContext) -> Tensor:
    """Reshape to 2-D: [prod(dims before axis), prod(dims from axis)]."""
    x = ctx.input(0)
    shape = shape_of(x)
    axis = ctx.attr("axis", INT, 1)
    if not -len(shape) <= axis <= len(shape):
        raise ctx.error(f"axis {axis} is out of range for a rank-{len(shape)} input")
    if axis < 0:
        axis += len(shape)
    return _reshape(ctx, x, [math.prod(shape[:axis]), math.prod(shape[axis:])])


@onnx_op("Transpose", since=1, inputs=(1, 1), attrs=("perm",), folds=True)
def transpose(ctx: NodeContext) -> Tensor:
    """Permute dims; the default perm reverses them."""
    x = ctx.input(0)
    return _transpose(ctx, x, ctx.attr("perm", INTS, list(reversed(range(len(shape_of(x)))))))


@onnx_op("Identity", since=1, inputs=(1, 1), folds=True, structured=True)
def identity(ctx: NodeContext) -> Tensor:
    """The input itself (a tensor, a sequence or an optional): no op is built."""
    return ctx.input(0)


# --------------------------------------------------------------------------- constants

#: Constant's scalar and list attributes: attribute type and numpy dtype.
_CONSTANT_LISTS: dict[str, tuple[int, type]] = {
    "value_float": (FLOAT, np.float32),
    "value_floats": (FLOATS, np.float32),
    "value_int": (INT, np.int64),
    "value_ints": (INTS, np.int64),
}


@onnx_op("Constant", since=1, inputs=(0, 0), attrs=("value",), folds=True)
@onnx_op("Constant", since=12, inputs=(0, 0), attrs=("value", *_CONSTANT_LISTS), folds=True)
def constant(ctx: NodeContext) -> Tensor:
    """A known tensor, from one of the value attributes. Its constant op is located at the output's
    name, as an initializer's is at the initializer's."""
    if len(ctx.node.attribute) != 1:
        raise ctx.error(f"expects exactly one value attribute, got {len(ctx.node.attribute)}")
    name = ctx.node.attribute[0].name
    if name == "value":
        array = tensor_to_array(ctx.attr(name, TENSOR, None), f"{ctx.where}: attribute 'value'")
    else:
        kind, dtype = _CONSTANT_LISTS[name]
        array = np.array(ctx.attr(name, kind, None), dtype=dtype)
    return ctx.const(array, name=ctx.output_name)
