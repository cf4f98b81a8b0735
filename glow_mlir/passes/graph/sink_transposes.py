"""glowgraph-sink-transposes: move transposes down through elementwise nodes until they meet their inverse.

The importer runs every NHWC node between two transposes (NCHW -> NHWC -> NCHW), so a chain conv -> relu -> conv
holds the pairs ``Transpose(NCHW) -> Relu -> Transpose(NHWC)`` between the convolutions. Sinking the first transpose
below the relu puts the two transposes next to each other, where they cancel; what is left is one transpose where the
graph enters NHWC and one where it leaves. A transpose is only sunk when the node it feeds is its only user: sinking
a shared one would add a transpose for the other users instead of removing one. A transpose shared by elementwise
nodes that meet again in one node (SiLU's ``x * sigmoid(x)``, hard swish's ``x * hard_sigmoid(x)``) is sunk below the
whole region at once, where one transpose is left after the node where they meet (:func:`sink_into_region`).

Besides elementwise nodes, a transpose sinks below the nodes that work in any layout once their attributes name
the dims anew: batch_norm (its channel axis), pad (its pads) and concat of two transposes alike (its axis; densenet
and inception join NCHW tensors). A transpose left over that moves no data (only dims of size 1 change places, as
around a [N, 1, 1, C] pool result) is a reshape, which bufferization makes a view instead of a copy.

A chain of transposes and reshapes with two transposes or more (a channel shuffle between NHWC convolutions) folds
into at most one transpose of the input viewed in the factors the chain permutes (:func:`fold_transpose_chain`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects import opdef_of
from ...dialects.optable import numpy_to_elements, tensor_like
from ..registry import Pass
from ..utils import adjacent_runs, body_ops, constant_value, functions, has_trait, has_uses
from .patterns import attr, replace

TRANSPOSE = "glowgraph.transpose"


def _producer(value: ir.Value) -> ir.Operation | None:
    """The op defining ``value``, or None for a block argument."""
    return value.owner.operation if isinstance(value, ir.OpResult) else None


def _shuffle(transpose: ir.Operation) -> list[int]:
    return list(ir.DenseI64ArrayAttr(transpose.attributes["shuffle"]))


def _transpose_feeding_only(value: ir.Value, user: ir.Operation) -> ir.Operation | None:
    """The transpose defining ``value`` when ``user`` is its only user (possibly through several operands)."""
    op = _producer(value)
    if op is None or op.name != TRANSPOSE or any(u.owner.operation != user for u in value.uses):
        return None
    return op


def _inverse(shuffle: list[int]) -> list[int]:
    inverse = [0] * len(shuffle)
    for i, p in enumerate(shuffle):
        inverse[p] = i
    return inverse


def _untransposed(value: ir.Value, shuffle: list[int]) -> ir.Value | None:
    """A splat or constant ``c'`` with ``Transpose(c', shuffle) == value``, built at the current insertion point;
    None when ``value`` is neither."""
    op = _producer(value)
    if op is None:
        return None
    inverse = _inverse(shuffle)
    if op.name == "glowgraph.splat":
        shape = ir.RankedTensorType(value.type).shape
        return gg.splat(value=op.attributes["value"], result_types=[tensor_like(value.type, [shape[p] for p in inverse])])
    array = constant_value(value)
    if array is None:
        return None
    return gg.constant(value=numpy_to_elements(np.ascontiguousarray(np.transpose(array, inverse))))


def _same_node_on(op: ir.Operation, operands: list[ir.Value]) -> ir.Value:
    """The result of the same elementwise node as ``op`` on ``operands`` (their shape), built at the insertion
    point."""
    result = op.results[0]
    shape = ir.RankedTensorType(operands[0].type).shape
    new_type = tensor_like(result.type, list(shape), ir.RankedTensorType(result.type).element_type)
    return ir.Operation.create(op.name, results=[new_type], operands=operands, attributes=dict(op.attributes.items()),
                               loc=op.location).results[0]


def _rebuild_below(op: ir.Operation, operands: list[ir.Value], transpose: ir.Operation) -> None:
    """Replace elementwise ``op`` by the same node on the untransposed ``operands``, followed by ``transpose``'s
    shuffle; ``transpose`` (and any other operand left dead) is erased."""
    result = op.results[0]
    with ir.InsertionPoint(op):
        moved = gg.transpose(_same_node_on(op, operands), shuffle=_shuffle(transpose), loc=transpose.location)
    old_operands = [_producer(v) for v in op.operands]
    result.replace_all_uses_with(moved)
    op.erase()
    for producer in dict.fromkeys(old_operands):  # erase what only fed op, transposes first among them
        if producer is not None and not has_uses(producer):
            producer.erase()


def sink_below_unary(op: ir.Operation) -> bool:
    """Unary(Transpose(x)) -> Transpose(Unary(x)), for elementwise unary nodes that the transpose only feeds."""
    if not has_trait(op, "elementwise") or len(op.operands) != 1:
        return False
    transpose = _transpose_feeding_only(op.operands[0], op)
    if transpose is None:
        return False
    _rebuild_below(op, [transpose.operands[0]], transpose)
    return True


def sink_below_binary(op: ir.Operation) -> bool:
    """Binary(Transpose(a), Transpose(b)) -> Transpose(Binary(a, b)) when both shuffles are one;
    Binary(Transpose(a), c) -> Transpose(Binary(a, c')) for a splat or constant c, c' = c transposed back at compile
    time (and the mirror image). Only for transposes that feed nothing else."""
    if not has_trait(op, "elementwise") or len(op.operands) != 2:
        return False
    lhs, rhs = op.operands
    tl, tr = _transpose_feeding_only(lhs, op), _transpose_feeding_only(rhs, op)
    if tl is not None and tr is not None:
        if _shuffle(tl) != _shuffle(tr):
            return False
        _rebuild_below(op, [tl.operands[0], tr.operands[0]], tl)
        return True
    transpose = tl or tr
    if transpose is None:
        return False
    with ir.InsertionPoint(op):
        other = _untransposed(rhs if tl is not None else lhs, _shuffle(transpose))
    if other is None:
        return False
    x = transpose.operands[0]
    _rebuild_below(op, [x, other] if tl is not None else [other, x], transpose)
    return True


#: the most nodes a shared transpose is sunk through at once (:func:`sink_into_region`): an activation spelled in a
#: few nodes (SiLU, hard swish, GELU) needs a handful; the bound keeps each try's cost constant
MAX_REGION = 16


def _constant_like(value: ir.Value) -> bool:
    producer = _producer(value)
    return producer is not None and producer.name in ("glowgraph.splat", "glowgraph.constant")


def _made_by(value: ir.Value, ops: list[ir.Operation]) -> bool:
    """Whether ``value`` is a result of one of ``ops``."""
    producer = _producer(value)
    return producer is not None and producer in ops


def _block_order(a: ir.Operation, b: ir.Operation) -> int:
    return -1 if a.is_before_in_block(b) else 1 if b.is_before_in_block(a) else 0


def _elementwise_region(transpose: ir.Operation) -> list[ir.Operation] | None:
    """The elementwise nodes that a transpose with several users feeds, closed under their users, every operand
    the transpose, a node of the region, or a splat or constant, in block order, the last the one node whose result
    leaves the region (its exit; a member after it, reading its result or unused, would be rebuilt before what it
    reads). None when there is no such region of at most :data:`MAX_REGION` nodes."""
    source = transpose.results[0]
    members: list[ir.Operation] = []
    queue = list(dict.fromkeys(u.owner.operation for u in source.uses))
    while queue:
        if len(members) + len(queue) > 2 * MAX_REGION:  # a fan-out past any region's size: each try stays bounded
            return None
        op = queue.pop(0)
        if op in members:
            continue
        if not has_trait(op, "elementwise") or len(op.results) != 1 or len(members) == MAX_REGION:
            return None
        members.append(op)
        for u in op.results[0].uses:
            user = u.owner.operation
            if user not in members and user not in queue and has_trait(user, "elementwise") \
                    and len(user.results) == 1 and all(w == source or _constant_like(w) or _made_by(w, members)
                                                       or _made_by(w, queue) for w in user.operands):
                queue.append(user)
    if any(not (v == source or _constant_like(v) or _made_by(v, members)) for op in members for v in op.operands):
        return None
    exits = [op for op in members if any(u.owner.operation not in members for u in op.results[0].uses)]
    ordered = sorted(members, key=functools.cmp_to_key(_block_order))  # a member comes after those it reads
    return ordered if len(exits) == 1 and len(ordered) > 1 and ordered[-1] == exits[0] else None


def _shared_transposes(op: ir.Operation) -> list[ir.Operation]:
    """The transposes with several users (at most :data:`MAX_REGION`) that elementwise ``op`` reads through at most
    :data:`MAX_REGION` elementwise nodes."""
    found: list[ir.Operation] = []
    seen: set[ir.Operation] = set()
    stack = [op]
    while stack and len(seen) <= MAX_REGION:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for v in node.operands:
            producer = _producer(v)
            if producer is None:
                continue
            if producer.name == TRANSPOSE:
                if producer not in found and 1 < sum(1 for _ in v.uses) <= MAX_REGION:
                    found.append(producer)
            elif has_trait(producer, "elementwise"):
                stack.append(producer)
    return found


def sink_into_region(op: ir.Operation) -> bool:
    """A transpose shared by elementwise nodes that meet again in ``op`` (SiLU: ``Mul(T(x), Sigmoid(T(x)))``; hard
    swish; the branches of GELU) -> the region of those nodes on ``x``, then one transpose after the node where
    they meet: between two NHWC convolutions the transposes then cancel, and the activation runs in NHWC (and
    fuses into the convolution's loops) rather than as transpose, activation, transpose. Tried at the node where
    the branches meet, so that the rewrite erases only nodes before the one the sweep visits."""
    if not has_trait(op, "elementwise") or len(op.results) != 1:
        return False
    found = next(((t, r) for t in _shared_transposes(op) if (r := _elementwise_region(t)) is not None and r[-1] == op),
                 None)
    if found is None:
        return False
    transpose, region = found  # in block order: a splat two members share is built before the first of them
    shuffle = _shuffle(transpose)
    moved: dict[ir.Value, ir.Value] = {transpose.results[0]: transpose.operands[0]}
    for node in region:
        with ir.InsertionPoint(node), node.location:
            operands = []
            for v in node.operands:
                if v not in moved:
                    moved[v] = _untransposed(v, shuffle)
                operands.append(moved[v])
            moved[node.results[0]] = _same_node_on(node, operands)
    with ir.InsertionPoint(op):
        out = gg.transpose(moved[op.results[0]], shuffle=shuffle, loc=transpose.location)
    op.results[0].replace_all_uses_with(out)
    for node in reversed(region):
        producers = list(dict.fromkeys(_producer(v) for v in node.operands))
        node.erase()
        for producer in producers:  # splats and constants that fed only the region
            if producer is not None and producer.name in ("glowgraph.splat", "glowgraph.constant") \
                    and not has_uses(producer):
                producer.erase()
    transpose.erase()
    return True


def fold_transposes(op: ir.Operation) -> bool:
    """Transpose(Transpose(x)) -> x when the shuffles compose to the identity, else -> Transpose(x) with the composed
    shuffle (the inner transpose stays if something else uses it)."""
    if op.name != TRANSPOSE:
        return False
    inner = _producer(op.operands[0])
    if inner is None or inner.name != TRANSPOSE:
        return False
    first, second = _shuffle(inner), _shuffle(op)
    composed = [first[p] for p in second]  # result dim i is x's dim first[second[i]]
    x = inner.operands[0]
    if composed == list(range(len(composed))):
        replacement = x
    else:
        with ir.InsertionPoint(op):
            replacement = gg.transpose(x, shuffle=composed, loc=op.location)
    op.results[0].replace_all_uses_with(replacement)
    op.erase()
    if not has_uses(inner):
        inner.erase()
    return True


def _sink_with(op: ir.Operation, operands: list[ir.Value], transpose: ir.Operation, **changed) -> None:
    """Replace ``op`` by the same node on the untransposed ``operands`` with the ``changed`` attributes (the dims
    they name, renamed), followed by ``transpose``'s shuffle."""
    attrs = dict(op.attributes.items())
    attrs.update(changed)
    with ir.InsertionPoint(op), op.location:
        node = getattr(gg, opdef_of(op).py_name)(*operands, **attrs)
        moved = gg.transpose(node, shuffle=_shuffle(transpose), loc=transpose.location)
    replace(op, [moved])


def sink_below_batch_norm(op: ir.Operation) -> bool:
    """BatchNorm(Transpose(x)){channel_axis a} -> Transpose(BatchNorm(x){channel_axis shuffle[a]})."""
    if op.name != "glowgraph.batch_norm":
        return False
    transpose = _transpose_feeding_only(op.operands[0], op)
    if transpose is None:
        return False
    axis = _shuffle(transpose)[attr(op, "channel_axis", "i64")]
    _sink_with(op, [transpose.operands[0], *list(op.operands)[1:]], transpose, channel_axis=axis)
    return True


def sink_below_pad(op: ir.Operation) -> bool:
    """Pad(Transpose(x)){pads} -> Transpose(Pad(x){pads'}), pads' giving x's dim shuffle[i] the pads of dim i."""
    if op.name != "glowgraph.pad":
        return False
    transpose = _transpose_feeding_only(op.operands[0], op)
    if transpose is None:
        return False
    shuffle, pads = _shuffle(transpose), attr(op, "pads", "i64s")
    rank = len(shuffle)
    moved = [0] * (2 * rank)
    for i, p in enumerate(shuffle):
        moved[p], moved[rank + p] = pads[i], pads[rank + i]
    _sink_with(op, [transpose.operands[0]], transpose, pads=moved)
    return True


def sink_below_concat(op: ir.Operation) -> bool:
    """Concat(Transpose(a), Transpose(b)){axis} -> Transpose(Concat(a, b){shuffle[axis]}) when both shuffles are
    one and both transposes feed only the concat."""
    if op.name != "glowgraph.concat":
        return False
    tl, tr = (_transpose_feeding_only(v, op) for v in op.operands)
    if tl is None or tr is None or tl == tr or _shuffle(tl) != _shuffle(tr):
        return False
    axis = _shuffle(tl)[attr(op, "axis", "i64")]
    _sink_with(op, [tl.operands[0], tr.operands[0]], tl, axis=axis)
    return True


def moves_no_data(shape: list[int], shuffle: list[int]) -> bool:
    """Whether transposing ``shape`` by ``shuffle`` keeps the elements in order: the dims larger than 1 keep their
    relative order."""
    kept = [p for p in shuffle if shape[p] != 1]
    return kept == sorted(kept)


def transpose_to_reshape(op: ir.Operation) -> bool:
    """Transpose(x){shuffle} -> Reshape(x) when the shuffle only moves dims of size 1."""
    if op.name != TRANSPOSE:
        return False
    x = op.operands[0]
    if not moves_no_data(list(ir.ShapedType(x.type).shape), _shuffle(op)):
        return False
    with ir.InsertionPoint(op), op.location:
        replace(op, [gg.reshape(x, shape=list(ir.ShapedType(op.results[0].type).shape))])
    return True


RESHAPE = "glowgraph.reshape"


def _chain(op: ir.Operation) -> list[ir.Operation]:
    """The transposes and reshapes ending at ``op`` (one of them), each but ``op`` used by the next one only; first
    to last."""
    chain = [op]
    while True:
        producer = _producer(chain[0].operands[0])
        if (producer is None or producer.name not in (TRANSPOSE, RESHAPE)
                or any(u.owner.operation != chain[0] for u in producer.results[0].uses)):
            return chain
        chain.insert(0, producer)


def _atoms_of_chain(shape: list[int], chain: list[ir.Operation]) -> tuple[list[int], list[list[int]]] | None:
    """The chain as one permutation of "atoms", the factors of the input's dims that no node of the chain splits
    further: ``(sizes, dims)``, the atoms' sizes in the input's order and the output's dims as lists of atoms (size-1
    dims hold none). None when a reshape splits a factor unevenly (it is no permutation of whole factors)."""
    sizes: list[int] = []
    order: list[int] = []  # the atoms in the input's (row-major) order
    dims: list[list[int]] = []
    for d in shape:
        dims.append([len(sizes)] if d != 1 else [])
        if d != 1:
            order.append(len(sizes))
            sizes.append(d)
    for op in chain:
        if op.name == TRANSPOSE:
            dims = [dims[p] for p in _shuffle(op)]
            continue
        flat = [a for dim in dims for a in dim]
        dims = []
        for target in ir.RankedTensorType(op.results[0].type).shape:
            dim, product = [], 1
            while product < target:
                atom = flat.pop(0)
                if target % (product * sizes[atom]) == 0:
                    dim.append(atom)
                    product *= sizes[atom]
                    continue
                major = target // product  # the atom straddles the boundary: its major factor ends this dim
                if target % product or sizes[atom] % major:
                    return None
                minor = len(sizes)
                sizes.append(sizes[atom] // major)
                sizes[atom] = major
                order.insert(order.index(atom) + 1, minor)
                flat.insert(0, minor)
                dim.append(atom)
                product *= major
            if product != target:
                return None
            dims.append(dim)
    return [sizes[a] for a in order], [[order.index(a) for a in dim] for dim in dims]


def fold_transpose_chain(op: ir.Operation) -> bool:
    """A chain of transposes and reshapes that holds two transposes or more -> at most Reshape, one Transpose,
    Reshape (reshapes are views): the chain permutes whole factors of the input's dims, and one transpose of the
    input viewed in those factors does it. ShuffleNet's channel shuffle between NHWC convolutions,
    NHWC -> NCHW, [N, G, C/G, H, W], swap G and C/G, back to [N, C, H, W] and NHWC (three transposes that move every
    element), becomes a transpose of each pixel's channels viewed [G, C/G] (light_shufflenet, one thread: 13.9 ->
    3.8 ms, onnxruntime 4.6)."""
    if op.name not in (TRANSPOSE, RESHAPE):
        return False
    chain = _chain(op)
    if sum(o.name == TRANSPOSE for o in chain) < 2:
        return False
    x = chain[0].operands[0]
    found = _atoms_of_chain(list(ir.RankedTensorType(x.type).shape), chain)
    if found is None:
        return False
    sizes, dims = found
    # runs of atoms (in the output's order) that stay next to each other and in order are one dim of the view
    runs = adjacent_runs([a for dim in dims for a in dim])
    by_input = sorted(runs)
    view = [int(np.prod([sizes[a] for a in run])) for run in by_input]
    shuffle = [by_input.index(run) for run in runs]
    out_shape = list(ir.RankedTensorType(op.results[0].type).shape)
    with ir.InsertionPoint(op), op.location:
        value = x
        if list(ir.RankedTensorType(x.type).shape) != view:
            value = gg.reshape(value, shape=view)
        if shuffle != sorted(shuffle):
            value = gg.transpose(value, shuffle=shuffle)
        if list(ir.RankedTensorType(value.type).shape) != out_shape:
            value = gg.reshape(value, shape=out_shape)
    replace(op, [value])  # the chain before op, used by op alone, is pruned with it
    return True


#: the rewrites, tried in this order on every node; a transpose becomes a reshape only once it can neither cancel
#: nor merge with the one before it
PATTERNS = (fold_transposes, fold_transpose_chain, sink_below_unary, sink_below_binary, sink_into_region,
            sink_below_batch_norm, sink_below_pad, sink_below_concat, transpose_to_reshape)


def sink_transposes(func: ir.Operation) -> int:
    """Apply :data:`PATTERNS` until none applies; returns the number of rewrites.

    One sweep in program order carries a transpose down a whole chain: each rewrite puts the moved transpose before
    the users of the node it replaced, and those come later in the sweep. Rewrites only erase the node visited and
    nodes before it, so the sweep never meets an erased node."""
    total = 0
    while True:
        count = 0
        for op in body_ops(func):
            with op.location:  # the default location of what a rewrite builds
                count += any(pattern(op) for pattern in PATTERNS)
        total += count
        if not count:
            return total


@dataclass(frozen=True)
class SinkTransposes(Pass):
    """Unary(Transpose(x)) -> Transpose(Unary(x)); Binary(Transpose(a), Transpose(b)) -> Transpose(Binary(a, b));
    elementwise nodes sharing Transpose(x) that meet in one -> the nodes on x, one Transpose after them;
    BatchNorm/Pad(Transpose(x)) -> Transpose(BatchNorm/Pad(x)); Concat(Transpose(a), Transpose(b)) ->
    Transpose(Concat(a, b)); Transpose(Transpose(x)) -> x; a chain of transposes and reshapes -> at most one
    transpose between reshapes; Transpose(x) moving no data -> Reshape(x)."""

    name = "glowgraph-sink-transposes"
    summary = ("Sink transposes below elementwise nodes (a shared one below the region where its users meet), batch "
               "norm, pad and concat nodes; cancel, merge, fold chains with reshapes into one, or turn them into "
               "reshapes")

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            sink_transposes(func)
