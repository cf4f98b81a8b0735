"""Control flow: If, Loop and Scan.

What is known at compile time is resolved here; the rest becomes control flow in the graph:

- If with a condition known at import (a shape test, a flag the exporter froze) is the nodes of the branch it
  selects, imported in place (they read the enclosing graph's values as the spec allows); with a condition computed
  at run time it is ``scf.if`` in the graph, each branch imported into its region, and only the branch the condition
  picks runs;
- Loop and Scan are ``scf.for`` (a known trip count, the condition passed on) or ``scf.while`` (a condition the
  body computes, or a trip count known only at run time) in the graph, each body imported once into the loop's
  region; a loop of at most :data:`UNROLL_MAX` known iterations, or one whose body cannot be a loop's region, is
  unrolled instead (at most :data:`MAX_UNROLL` iterations).

A loop that may end before its bound (a condition or a trip count computed at run time) stacks its scan outputs
into buffers of the bound's length: the trip count when it is known, else the length the model declares for the
scan outputs; rows after the last iteration stay zero, and a warning names the node. Scan outputs with neither a
known trip count nor a declared length are unsupported (their length is dynamic); a loop with only loop-carried
values needs no bound.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from mlir import ir
from mlir.dialects import arith, scf, tensor
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ...dialects.optable import numpy_dtype
from ...errors import ModelError, NonConstantInputError, UnsupportedError
from ..builder import Const, NodeContext, Tensor, dtype_of, materialize, onnx_op, shape_of
from ..model import fmt_shape
from ..structured import Opt, Seq
from .core import _concat_all, _reshape, _transpose
from .datamove import _box

GRAPH, INT, INTS = AttributeProto.GRAPH, AttributeProto.INT, AttributeProto.INTS
#: a loop body's builder: (the iteration number, the loop-carried values) -> (their next values, the scan items)
Step = Callable[[ir.Value, list[ir.Value]], tuple[list[ir.Value], list[ir.Value]]]
#: the most iterations a Loop or Scan is unrolled into
MAX_UNROLL = 1024
#: a Loop of at most this many iterations (its condition known) is unrolled rather than a loop in the graph
UNROLL_MAX = 4
#: the bound of a loop with no scan outputs that only a trip count or a condition computed at run time ends
RUN_TIME_BOUND = 2 ** 62


class LoopBoundWarning(UserWarning):
    """A loop's scan outputs have its bound's length, though it may end earlier."""


def _flag_value(ctx: NodeContext, x: Tensor, what: str) -> bool:
    """The value of a known one-element boolean (or number) tensor."""
    if not isinstance(x, Const):
        raise ctx.unsupported(f"{what} computed at run time is not supported (only one known at compile time)")
    if x.array.size != 1:
        raise ctx.error(f"{what} must hold one value, got shape {list(x.array.shape)}")
    return bool(x.array.reshape(-1)[0])


def _graph(ctx: NodeContext, name: str):
    graph = ctx.attr(name, GRAPH, None)
    if graph is None:
        raise ctx.error(f"attribute '{name}' is required")
    return graph


def _stack(ctx: NodeContext, parts: list[Tensor], axis: int = 0) -> Tensor:
    """``parts`` (one shape) stacked along a new ``axis``."""
    if all(isinstance(p, Const) for p in parts):
        return ctx.const(np.stack([p.array for p in parts], axis=axis))
    shape = shape_of(parts[0])
    return _concat_all(ctx, [_reshape(ctx, p, [*shape[:axis], 1, *shape[axis:]]) for p in parts], axis)


def _import(ctx: NodeContext, graph, bindings: dict[str, Tensor], scoped: bool = False) -> list[Tensor]:
    assert ctx.import_graph is not None, "the importer sets import_graph on every node"
    return ctx.import_graph(graph, bindings, scoped=scoped) if scoped else ctx.import_graph(graph, bindings)


@onnx_op("If", since=1, inputs=(1, 1), outputs=(1, None), attrs=("then_branch", "else_branch"), folds=True,
         structured=True)
def if_(ctx: NodeContext) -> list[Tensor]:
    """The branch a known condition selects, imported in place; with a condition computed at run time, an if in the
    graph (:func:`_branches_in_graph`)."""
    cond = ctx.input(0)
    if not isinstance(cond, Const):
        return _branches_in_graph(ctx, cond)
    chosen = "then_branch" if _flag_value(ctx, cond, "a condition") else "else_branch"
    graph = _graph(ctx, chosen)
    outputs = _import(ctx, graph, {})
    if len(outputs) != len(ctx.node.output):
        raise ctx.error(f"{chosen} gives {len(outputs)} outputs, the node {len(ctx.node.output)}")
    return outputs


def _branches_in_graph(ctx: NodeContext, cond: Tensor) -> list[Tensor]:
    """If with a run-time condition: ``scf.if`` on it, each branch imported into its region (``glowir.if`` after
    bufferization: only the branch the condition picks runs). The two must give each output one static type: a
    choice at run time between shapes would make the output's shape dynamic. The branches' types are known only
    once they are imported, so the if is then built again with its results and the branches' ops moved into it."""
    ctx.check_element_type(cond, "condition", (np.dtype(np.bool_),))
    if int(np.prod(shape_of(cond))) != 1:
        raise ctx.error(f"the condition must hold one value, got shape {shape_of(cond)}")
    flag = _reshape(ctx, cond, []) if shape_of(cond) else cond
    holds = tensor.extract(ctx.value(flag), [])
    probe = scf.IfOp(holds, [], has_else=True)
    branches: list[list[Tensor]] = []
    for name, block in (("then_branch", probe.then_block), ("else_branch", probe.else_block)):
        with ir.InsertionPoint(block):
            outputs = _import(ctx, _graph(ctx, name), {}, scoped=True)
            if len(outputs) != len(ctx.node.output):
                raise ctx.error(f"{name} gives {len(outputs)} outputs, the node {len(ctx.node.output)}")
            if any(isinstance(x, (Seq, Opt)) for x in outputs):
                probe.operation.erase()
                # a caller that knows the condition's value (the ONNX backend) may bind it and compile again
                raise NonConstantInputError(f"{ctx.where}: an If giving sequence or optional values needs a condition "
                                            "known at compile time", ctx.node.input[0])
            branches.append([ctx.value(x) for x in outputs])
    for i, (then, other) in enumerate(zip(*branches, strict=True)):
        if then.type != other.type:
            raise ctx.unsupported(
                f"output #{i} is {shape_of(then)} {dtype_of(then)} in then_branch but {shape_of(other)} "
                f"{dtype_of(other)} in else_branch: a condition computed at run time needs one static type")
    with ir.InsertionPoint(probe.operation):
        branch = scf.IfOp(holds, [v.type for v in branches[0]], has_else=True)
    for old, new, outputs in ((probe.then_block, branch.then_block, branches[0]),
                              (probe.else_block, branch.else_block, branches[1])):
        with ir.InsertionPoint(new) as at_end:
            for op in [o.operation for o in old.operations]:
                at_end.insert(op.detach_from_parent())
            scf.YieldOp(outputs)
    probe.operation.erase()
    return list(branch.results)


@onnx_op("Loop", since=1, inputs=(2, None), outputs=(1, None), attrs=("body",), folds=True, structured=True)
def loop(ctx: NodeContext) -> list[Tensor]:
    """A loop in the graph (:func:`_loop_in_graph`), or the body unrolled (:func:`_unrolled`) when it is short or
    cannot be a loop's body."""
    body = _graph(ctx, "body")
    node = ctx.node
    trip, limit = None, None
    if ctx.optional_input(0) is not None:
        count = ctx.input(0)
        if int(np.prod(shape_of(count))) != 1:
            raise ctx.error(f"the trip count must hold one value, got shape {shape_of(count)}")
        if isinstance(count, Const):
            trip = max(int(count.array.reshape(-1)[0]), 0)
        else:
            limit = count
    cond = ctx.optional_input(1)
    if trip is None and limit is None and cond is None:
        raise ctx.error("a loop with neither a trip count nor a condition never ends")
    carried = [ctx.input(i) for i in range(2, len(node.input))]
    names = [i.name for i in body.input]
    if len(names) != 2 + len(carried):
        raise ctx.error(f"the body takes {len(names)} inputs; it must take the iteration number, the condition and "
                        f"the {len(carried)} loop-carried values")
    scans = len(body.output) - 1 - len(carried)
    if scans < 0 or len(node.output) != len(carried) + scans:
        raise ctx.error(f"the node has {len(node.output)} outputs; the body gives {len(carried)} loop-carried values "
                        f"and {scans} scan outputs")
    known = cond is None or isinstance(cond, Const)
    if any(isinstance(x, (Seq, Opt)) for x in carried):
        # sequences and optionals exist only at import: the loop is unrolled, so its bounds must be known there
        for i, unknown in ((0, limit is not None), (1, not known)):
            if unknown:
                raise NonConstantInputError(f"{ctx.where}: a loop carrying sequence or optional values needs its "
                                            f"{'trip count' if i == 0 else 'condition'} known at compile time",
                                            node.input[i])
    if known and not (cond is None or _flag_value(ctx, cond, "the initial condition")):
        if scans:
            raise ctx.unsupported("a loop that runs no iteration has empty scan outputs of unknown shape")
        return carried
    if limit is not None:
        bound = _declared_length(ctx, len(carried), scans) if scans else RUN_TIME_BOUND
        return _loop_in_graph(ctx, body, bound, cond, carried, scans, limit)
    if trip is not None and (trip <= UNROLL_MAX or any(isinstance(x, (Seq, Opt)) for x in carried)) and known:
        return _unrolled(ctx, body, trip, carried, scans)
    if trip is None:  # only the body's condition ends it: unrolled while that is known at import
        if known:
            return _unrolled(ctx, body, None, carried, scans)
        if not scans:
            return _loop_in_graph(ctx, body, RUN_TIME_BOUND, cond, carried, scans)
        raise ctx.unsupported("scan outputs of a loop whose condition is computed at run time need a bound: a trip "
                              "count known at compile time")
    if scans and known and trip <= MAX_UNROLL and not _passes_condition_on(body):
        # the body's condition may end the loop early: unrolled, its scan outputs get their exact length when that
        # condition turns out known at import
        try:
            return _undone_on_error(lambda: _unrolled(ctx, body, trip, carried, scans))
        except UnsupportedError:
            pass
    try:
        return _loop_in_graph(ctx, body, trip, cond, carried, scans)
    except (UnsupportedError, ModelError):
        if not known or trip > MAX_UNROLL:
            raise
        return _unrolled(ctx, body, trip, carried, scans)


def _declared_length(ctx: NodeContext, carried: int, scans: int) -> int:
    """The length the model declares (or ONNX infers) for the scan outputs of a loop whose trip count is computed
    at run time: their bound. Unsupported when no scan output has one."""
    lengths = {dims[0] for name in ctx.node.output[carried:carried + scans] if name
               for dims in [ctx.known_dims(name)] if dims and dims[0] is not None}
    if len(lengths) > 1:
        raise ctx.error(f"the scan outputs are declared with different lengths {sorted(lengths)}")
    if not lengths:  # a caller that knows the trip count's value (the ONNX backend) may bind it and compile again
        raise NonConstantInputError(f"{ctx.where}: scan outputs of a loop whose trip count is computed at run time "
                                    "need a bound: a static length declared for them (their length is otherwise "
                                    "dynamic)", ctx.node.input[0])
    return lengths.pop()


def _unrolled(ctx: NodeContext, body, trip: int | None, carried: list[Tensor], scans: int) -> list[Tensor]:
    """The body imported once per iteration while the trip count lasts and its condition (which must then be known
    at import) holds: loop-carried values threaded through, scan outputs stacked along a new first axis."""
    names = [i.name for i in body.input]
    stacked: list[list[Tensor]] = [[] for _ in range(scans)]
    going, i = True, 0
    while going and (trip is None or i < trip):
        if i >= MAX_UNROLL:
            raise ctx.unsupported(f"a loop of more than {MAX_UNROLL} iterations is not supported (it is unrolled)")
        bindings = {names[0]: ctx.const(np.array(i, np.int64), name=f"{ctx.label}.i{i}"),
                    names[1]: ctx.const(np.array(going), name=f"{ctx.label}.cond{i}"),
                    **dict(zip(names[2:], carried, strict=True))}
        outputs = _import(ctx, body, bindings)
        if trip is None and not isinstance(outputs[0], Const):
            raise ctx.unsupported("a loop whose condition is computed at run time needs a trip count (its static "
                                  "bound)")
        going = _flag_value(ctx, outputs[0], "a loop condition")
        carried = outputs[1:1 + len(carried)]
        for k, s in enumerate(outputs[1 + len(carried):]):
            stacked[k].append(s)
        i += 1
    if scans and i == 0:
        raise ctx.unsupported("a loop that runs no iteration has empty scan outputs of unknown shape")
    return [*carried, *(_stack(ctx, s) for s in stacked)]


def _passes_condition_on(body) -> bool:
    """Whether the body's condition output is its condition input (directly or through an Identity), so that only
    the trip count ends the loop."""
    cond_in, cond_out = body.input[1].name, body.output[0].name
    if cond_out == cond_in:
        return True
    producer = next((n for n in body.node if cond_out in n.output), None)
    return producer is not None and producer.op_type == "Identity" and list(producer.input) == [cond_in]


def _loop_in_graph(ctx: NodeContext, body, trip: int, cond: Tensor | None, carried: list[Tensor],
                   scans: int, limit: Tensor | None = None) -> list[Tensor]:
    """The loop as ``scf.for`` (the body passes its condition on, the first one holds, the trip count is known) or
    ``scf.while`` (bounded by ``trip``; ``limit``, a trip count computed at run time, folded into its condition);
    see dialects/control.py for the forms. Each loop-carried value keeps its type across iterations."""
    names = [i.name for i in body.input]
    inits = [ctx.value(x) for x in carried]
    return _undone_on_error(lambda: _build_loop(ctx, body, names, trip, cond, inits, scans, limit))


def _undone_on_error(build: Callable[[], list[Tensor]]) -> list[Tensor]:
    """``build()``, which appends a loop to the current block; when it raises, the ops it appended are erased (the
    loop with its body, and its bounds) so that the graph is as it was, and the error goes on."""
    block = ir.InsertionPoint.current.block  # the importer appends to it
    count = len(block.operations)
    try:
        return build()
    except (UnsupportedError, ModelError):
        for op in reversed([o.operation for o in block.operations][count:]):
            op.erase()
        raise


def _build_loop(ctx: NodeContext, body, names: list[str], trip: int, cond: Tensor | None, inits: list[ir.Value],
                scans: int, limit: Tensor | None) -> list[Tensor]:
    if limit is None and (isinstance(cond, Const) or cond is None) and _passes_condition_on(body):
        def step(i: ir.Value, args: list[ir.Value]) -> tuple[list[ir.Value], list[ir.Value]]:
            outputs = _import(ctx, body, {names[0]: i, names[1]: ctx.const(np.array(True)),
                                          **dict(zip(names[2:], args, strict=True))}, scoped=True)
            return _carried(ctx, outputs[1:1 + len(inits)], inits), [ctx.value(y) for y in outputs[1 + len(inits):]]

        finals, stacked = _for_loop(ctx, trip, inits, step, [False] * scans)
        return [*finals, *stacked]
    i1 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    cond_value = _scalar(ctx, ctx.const(np.array(True)) if cond is None else cond, "the condition")
    if limit is not None:  # the condition to enter iteration i is also i < limit
        limit_value = _scalar(ctx, limit, "the trip count")
        cond_value = gg.and_(cond_value, gg.cmp_lt(_i64(ctx, 0), limit_value))
    index = ir.IndexType.get()

    def make(stacks: list[ir.Value]) -> tuple[scf.WhileOp, ir.Block, ir.Value]:
        """The loop with ``stacks`` carried after the other values: the loop, its empty body, the constant 1."""
        zero, one, bound = (arith.constant(index, v) for v in (0, 1, trip))
        types = [index, i1, *(v.type for v in inits), *(v.type for v in stacks)]
        loop = scf.WhileOp(types, [zero, cond_value, *inits, *stacks])
        before = loop.before.blocks.append(*types)
        with ir.InsertionPoint(before):
            args = list(before.arguments)
            go = arith.andi(arith.cmpi(arith.CmpIPredicate.slt, args[0], bound), tensor.extract(args[1], []))
            scf.ConditionOp(go, args)
        return loop, loop.after.blocks.append(*types), one

    probe, after, one = make([])
    with ir.InsertionPoint(after):
        args = list(after.arguments)
        i = gg.iteration(args[0])
        outputs = _import(ctx, body, {names[0]: i, names[1]: args[1], **dict(zip(names[2:], args[2:], strict=True))},
                          scoped=True)
        go = _body_value(ctx, outputs[0], i1, "the condition")
        if limit is not None:
            go = gg.and_(go, gg.cmp_lt(gg.add(i, _i64(ctx, 1)), limit_value))
        nexts = _carried(ctx, outputs[1:1 + len(inits)], inits)
        items = [ctx.value(y) for y in outputs[1 + len(inits):]]
        if not items:
            scf.YieldOp([arith.addi(args[0], one), go, *nexts])
            return list(probe.results)[2:]
    # the scan items' types are known only now: a loop that also carries their stacks takes over the body
    with ir.InsertionPoint(probe.operation):
        stacks = [materialize(ctx.const(np.broadcast_to(np.zeros((), numpy_dtype(ir.ShapedType(y.type).element_type)),
                                                         [trip, *shape_of(y)])), ctx.where) for y in items]
        loop, new_after, one = make(stacks)
    new_args = list(new_after.arguments)
    with ir.InsertionPoint(new_after) as at_end:
        for op in [o.operation for o in after.operations]:
            at_end.insert(op.detach_from_parent())
        moved = _move_arguments(args, new_args)
        filled = [gg.step_insert(stack, moved(item), moved(i))
                  for stack, item in zip(new_args[2 + len(inits):], items, strict=True)]
        scf.YieldOp([arith.addi(new_args[0], one), moved(go), *map(moved, nexts), *filled])
    probe.operation.erase()
    warnings.warn(f"{ctx.where}: the loop may end before its bound of {trip} iterations (its condition or trip count "
                  f"is computed at run time): its scan outputs have {trip} rows, those after its last iteration zero",
                  LoopBoundWarning, stacklevel=2)
    return list(loop.results)[2:]


def _move_arguments(old: list[ir.Value], new: list[ir.Value]) -> Callable[[ir.Value], ir.Value]:
    """Replace the uses of a probe loop's block arguments ``old`` by the first of the final loop's ``new`` (which
    carries the stacks after them); the map of a value the body passes on as it is (an old argument) to its new one."""
    for o, n in zip(old, new):
        o.replace_all_uses_with(n)
    return lambda v: next((n for o, n in zip(old, new) if o == v), v)


def _scalar(ctx: NodeContext, x: Tensor, what: str) -> ir.Value:
    """A one-element tensor as a rank-0 value."""
    v = ctx.value(x)
    if shape_of(v) not in ([], [1]):
        raise ctx.error(f"{what} must hold one value, got shape {shape_of(v)}")
    return gg.reshape(v, shape=[]) if shape_of(v) == [1] else v


def _i64(ctx: NodeContext, value: int) -> ir.Value:
    return materialize(ctx.const(np.array(value, np.int64)), ctx.where)


def _carried(ctx: NodeContext, values: list[Tensor], inits: list[ir.Value]) -> list[ir.Value]:
    """The loop-carried values a body gives, each of the type it entered the loop with."""
    return [_body_value(ctx, y, v.type, f"loop-carried value #{k}")
            for k, (y, v) in enumerate(zip(values, inits, strict=True))]


def _body_value(ctx: NodeContext, x: Tensor, want: ir.Type, what: str) -> ir.Value:
    """A value the body yields, as an MLIR value of the type the loop gives it (a [1] condition reshaped)."""
    v = ctx.value(x)
    if v.type != want and shape_of(v) == [1] and list(ir.RankedTensorType(want).shape) == []:
        v = gg.reshape(v, shape=[])
    if v.type != want:
        raise ctx.unsupported(f"the body gives {what} as {v.type}, but it enters the loop as {want}: a loop-carried "
                              "value must keep its type")
    return v


def _step_at(ctx: NodeContext, i: ir.Value, trip: int, reverse: bool) -> ir.Value:
    """Where iteration ``i`` reads or writes a sequence of ``trip`` steps: ``i``, or ``trip - 1 - i`` in reverse."""
    if not reverse:
        return i
    return gg.sub(materialize(ctx.const(np.array(trip - 1, np.int64), name=f"{ctx.label}.last"), ctx.where), i)


def _for_loop(ctx: NodeContext, trip: int, inits: list[ir.Value], step: Step,
              reverse: list[bool]) -> tuple[list[ir.Value], list[ir.Value]]:
    """``scf.for`` over [0, trip): ``step(i, args)`` builds the body once (``i`` the iteration number) and gives the
    next loop-carried values and the scan items, each stacked into a ``[trip, ...]`` tensor at step ``i`` (at
    ``trip - 1 - i`` where ``reverse`` says so): one more iteration argument per item, filled by step_insert. The
    items' types are known only once the body is built, so the loop is then built again with those arguments and
    the body's ops moved into it. Returns the last loop-carried values and the stacked items."""
    index = ir.IndexType.get()
    zero, one, bound = (arith.constant(index, v) for v in (0, 1, trip))
    probe = scf.ForOp(zero, bound, one, inits)
    with ir.InsertionPoint(probe.body):
        args = list(probe.body.arguments)
        i = gg.iteration(args[0])
        carried, items = step(i, args[1:])
        if not items:
            scf.YieldOp(carried)
            return list(probe.results), []
    with ir.InsertionPoint(probe.operation):
        stacks = [materialize(ctx.const(np.broadcast_to(np.zeros((), numpy_dtype(ir.ShapedType(y.type).element_type)),
                                                         [trip, *shape_of(y)])), ctx.where) for y in items]
        loop = scf.ForOp(zero, bound, one, [*inits, *stacks])
    new_args = list(loop.body.arguments)
    with ir.InsertionPoint(loop.body) as at_end:
        for op in [o.operation for o in probe.body.operations]:
            at_end.insert(op.detach_from_parent())
        moved = _move_arguments(args, new_args)
        filled = [gg.step_insert(stack, moved(item), _step_at(ctx, i, trip, rev))
                  for stack, item, rev in zip(new_args[1 + len(inits):], items, reverse, strict=True)]
        scf.YieldOp([*map(moved, carried), *filled])
    probe.operation.erase()
    results = list(loop.results)
    return results[:len(inits)], results[len(inits):]


@onnx_op("Scan", since=9, inputs=(1, None), outputs=(1, None), folds=True,
         attrs=("body", "num_scan_inputs", "scan_input_axes", "scan_input_directions", "scan_output_axes",
                "scan_output_directions"))
def scan(ctx: NodeContext) -> list[Tensor]:
    """The body once per slice of the scan inputs along their scan axes (in their directions), states threaded
    through, scan outputs stacked along their axes (in theirs)."""
    body = _graph(ctx, "body")
    node = ctx.node
    m = ctx.attr("num_scan_inputs", INT, None)
    if m is None or not 1 <= m <= len(node.input):
        raise ctx.error(f"attribute 'num_scan_inputs' must be between 1 and {len(node.input)}, got {m}")
    n = len(node.input) - m
    states = [ctx.input(i) for i in range(n)]
    inputs = [ctx.input(n + j) for j in range(m)]
    in_axes = [int(a) for a in ctx.attr("scan_input_axes", INTS, [0] * m)]
    in_dirs = [int(a) for a in ctx.attr("scan_input_directions", INTS, [0] * m)]
    outs = len(body.output) - n
    out_axes = [int(a) for a in ctx.attr("scan_output_axes", INTS, [0] * outs)]
    out_dirs = [int(a) for a in ctx.attr("scan_output_directions", INTS, [0] * outs)]
    if len(in_axes) != m or len(in_dirs) != m or len(out_axes) != outs or len(out_dirs) != outs:
        raise ctx.error("scan_input_axes/directions need one entry per scan input, scan_output_axes/directions one "
                        "per scan output")
    _check_scan_body(ctx, body, n, m)
    return _scan(ctx, body, states, inputs, in_axes, in_dirs, out_axes, out_dirs)


def _check_scan_body(ctx: NodeContext, body, n: int, m: int) -> None:
    """The body of a Scan of ``n`` states and ``m`` scan inputs takes one input for each and gives the node's
    outputs."""
    if len(body.input) != n + m or len(ctx.node.output) != len(body.output):
        raise ctx.error(f"the body takes {len(body.input)} inputs and gives {len(body.output)} outputs; the node has "
                        f"{n} states, {m} scan inputs and {len(ctx.node.output)} outputs")


@onnx_op("Scan", since=8, inputs=(2, None), outputs=(1, None), folds=True,
         attrs=("body", "num_scan_inputs", "directions"))
def scan8(ctx: NodeContext) -> list[Tensor]:
    """Scan at opset 8: a batch axis first on every state, scan input and output, the scan axis second; the body sees
    one batch entry. Each batch entry scanned as at opset 9 (its own loop), the results stacked on the batch axis.
    ``sequence_lens`` must be known and leave every sequence whole."""
    body = _graph(ctx, "body")
    node = ctx.node
    m = ctx.attr("num_scan_inputs", INT, None)
    if m is None or not 1 <= m <= len(node.input) - 1:
        raise ctx.error(f"attribute 'num_scan_inputs' must be between 1 and {len(node.input) - 1}, got {m}")
    n = len(node.input) - 1 - m
    states = [ctx.input(1 + i) for i in range(n)]
    inputs = [ctx.input(1 + n + j) for j in range(m)]
    dirs = [int(a) for a in ctx.attr("directions", INTS, [0] * m)]
    if len(dirs) != m:
        raise ctx.error(f"attribute 'directions' needs one entry per scan input, got {dirs}")
    ranks = [len(shape_of(x)) for x in [*states, *inputs]]
    batches = {shape_of(x)[0] for x in [*states, *inputs] if shape_of(x)}
    if min(ranks) < 1 or min(ranks[n:]) < 2 or len(batches) != 1:
        raise ctx.error("every state needs a batch axis and every scan input a batch and a sequence axis, of one "
                        f"batch size: got {', '.join(fmt_shape(shape_of(x)) for x in [*states, *inputs])}")
    batch, steps = batches.pop(), shape_of(inputs[0])[1]
    if any(shape_of(x)[1] != steps for x in inputs):
        raise ctx.error(f"the scan inputs have different lengths: {[shape_of(x)[1] for x in inputs]}")
    lens = ctx.optional_input(0)
    if lens is not None:
        if not isinstance(lens, Const):
            raise ctx.unsupported("sequence_lens computed at run time is not supported (the outputs' lengths would "
                                  "be dynamic)")
        if lens.array.shape != (batch,) or np.any(lens.array != steps):
            raise ctx.unsupported(f"sequence_lens {lens.array.tolist()} shorter than the scan inputs ({steps} steps) "
                                  "is not supported")
    _check_scan_body(ctx, body, n, m)
    if batch > MAX_UNROLL:
        raise ctx.unsupported(f"a batch of more than {MAX_UNROLL} entries is not supported (scanned one by one)")
    outs = len(body.output) - n
    per_entry = []
    for b in range(batch):
        entry = [_reshape(ctx, _box(ctx, x, [b] + [0] * (len(shape_of(x)) - 1), [1, *shape_of(x)[1:]]),
                          shape_of(x)[1:]) for x in [*states, *inputs]]
        per_entry.append(_scan(ctx, body, entry[:n], entry[n:], [0] * m, dirs, [0] * outs, [0] * outs))
    return [_stack(ctx, [r[k] for r in per_entry]) for k in range(n + outs)]


def _scan(ctx: NodeContext, body, states: list[Tensor], inputs: list[Tensor], in_axes: list[int], in_dirs: list[int],
          out_axes: list[int], out_dirs: list[int]) -> list[Tensor]:
    """Scan's outputs: the final states and the stacked scan outputs (a loop in the graph, or unrolled)."""
    n, outs = len(states), len(out_axes)
    ranks = [len(shape_of(x)) for x in inputs]
    in_axes = [a % r if -r <= a < r else -1 for a, r in zip(in_axes, ranks)]
    if -1 in in_axes:
        raise ctx.error(f"scan_input_axes {ctx.attr('scan_input_axes', INTS, [])} are out of range")
    lengths = {shape_of(x)[a] for x, a in zip(inputs, in_axes)}
    if len(lengths) != 1:
        raise ctx.error(f"the scan inputs have different lengths along their scan axes: {sorted(lengths)}")
    steps = lengths.pop()
    names = [i.name for i in body.input]
    if steps > UNROLL_MAX:
        try:
            return _undone_on_error(lambda: _scan_loop(ctx, body, names, states, inputs, in_axes, in_dirs,
                                                       out_axes, out_dirs, steps))
        except (UnsupportedError, ModelError):
            if steps > MAX_UNROLL:
                raise
    if steps > MAX_UNROLL:
        raise ctx.unsupported(f"a scan of more than {MAX_UNROLL} iterations is not supported (it is unrolled)")
    collected: list[list[Tensor]] = [[] for _ in range(outs)]
    for t in range(steps):
        slices = []
        for x, axis, reverse in zip(inputs, in_axes, in_dirs):
            shape = shape_of(x)
            at = steps - 1 - t if reverse else t
            box = _box(ctx, x, [at if d == axis else 0 for d in range(len(shape))],
                       [1 if d == axis else s for d, s in enumerate(shape)])
            slices.append(_reshape(ctx, box, shape[:axis] + shape[axis + 1:]))
        results = _import(ctx, body, dict(zip(names, [*states, *slices], strict=True)))
        states = results[:n]
        for k, y in enumerate(results[n:]):
            collected[k].append(y)
    stacked = []
    for parts, axis, reverse in zip(collected, out_axes, out_dirs):
        rank = len(shape_of(parts[0])) + 1
        if not -rank <= axis < rank:
            raise ctx.error(f"scan_output_axes {out_axes} are out of range")
        stacked.append(_stack(ctx, parts[::-1] if reverse else parts, axis % rank))
    return [*states, *stacked]


def _scan_loop(ctx: NodeContext, body, names: list[str], states: list[Tensor], inputs: list[Tensor],
               in_axes: list[int], in_dirs: list[int], out_axes: list[int], out_dirs: list[int],
               steps: int) -> list[Tensor]:
    """Scan as a loop in the graph: each scan input with its scan axis moved first, read a step at a time
    (step_slice, backwards in reverse), each scan output stacked (forwards or backwards), then its axis moved where
    scan_output_axes puts it."""
    fronts = []
    for x, axis in zip(inputs, in_axes):
        rank = len(shape_of(x))
        fronts.append(ctx.value(x if axis == 0 else
                                _transpose(ctx, x, [axis, *(d for d in range(rank) if d != axis)])))
    inits = [ctx.value(s) for s in states]
    n = len(states)

    def step(i: ir.Value, args: list[ir.Value]) -> tuple[list[ir.Value], list[ir.Value]]:
        slices = [gg.step_slice(x, _step_at(ctx, i, steps, bool(rev))) for x, rev in zip(fronts, in_dirs)]
        results = _import(ctx, body, dict(zip(names, [*args, *slices], strict=True)), scoped=True)
        return _carried(ctx, results[:n], inits), [ctx.value(y) for y in results[n:]]

    finals, stacked = _for_loop(ctx, steps, inits, step, [bool(d) for d in out_dirs])
    outputs: list[Tensor] = list(finals)
    for y, axis in zip(stacked, out_axes):
        rank = len(shape_of(y))
        if not -rank <= axis < rank:
            raise ctx.error(f"scan_output_axes {out_axes} are out of range")
        axis %= rank
        order = [d for d in range(1, rank)]
        outputs.append(y if axis == 0 else _transpose(ctx, y, [*order[:axis], 0, *order[axis:]]))
    return outputs
