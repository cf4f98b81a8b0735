"""Control flow: If, Loop and Scan, resolved at import.

What is known at compile time is taken apart here, and the program stays a straight-line graph:

- If with a condition known at import (a shape test, a flag the exporter froze) is the nodes of the branch it
  selects, imported in place (they read the enclosing graph's values as the spec allows); with a condition computed
  at run time both branches are imported and each output is a select between them (both run: fine for the small
  branches exporters make; a branch worth skipping would need ``scf.if``);
- Loop with a known trip count (or a condition the body computes from known values) is unrolled: the body imported
  once per iteration, its loop-carried values threaded through, its scan outputs stacked; so is Scan, over its scan
  axis. A loop of more than :data:`MAX_UNROLL` iterations is refused.

A Loop condition or trip count computed at run time is an UnsupportedError naming the node: it needs control flow in
the IR (``scf.while``), which glow_mlir does not build yet.
"""

from __future__ import annotations

import numpy as np
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from .core import _concat_all, _expand, _reshape
from .datamove import _box

GRAPH, INT, INTS = AttributeProto.GRAPH, AttributeProto.INT, AttributeProto.INTS
#: the most iterations a Loop or Scan is unrolled into
MAX_UNROLL = 1024


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


def _import(ctx: NodeContext, graph, bindings: dict[str, Tensor]) -> list[Tensor]:
    assert ctx.import_graph is not None, "the importer sets import_graph on every node"
    return ctx.import_graph(graph, bindings)


@onnx_op("If", since=1, inputs=(1, 1), outputs=(1, None), attrs=("then_branch", "else_branch"), folds=True)
def if_(ctx: NodeContext) -> list[Tensor]:
    """The branch a known condition selects, imported in place; with a condition computed at run time, both branches
    imported and each output selected between them by the condition (:func:`_select_branches`)."""
    cond = ctx.input(0)
    if not isinstance(cond, Const):
        return _select_branches(ctx, cond)
    chosen = "then_branch" if _flag_value(ctx, cond, "a condition") else "else_branch"
    graph = _graph(ctx, chosen)
    outputs = _import(ctx, graph, {})
    if len(outputs) != len(ctx.node.output):
        raise ctx.error(f"{chosen} gives {len(outputs)} outputs, the node {len(ctx.node.output)}")
    return outputs


def _select_branches(ctx: NodeContext, cond: Tensor) -> list[Tensor]:
    """If with a run-time condition: both branches computed (an ONNX branch has no side effects), each output the
    then-branch's where the condition holds, else the else-branch's. The two must give each output one static type:
    a choice at run time between shapes would make the output's shape dynamic."""
    ctx.check_element_type(cond, "condition", (np.dtype(np.bool_),))
    if int(np.prod(shape_of(cond))) != 1:
        raise ctx.error(f"the condition must hold one value, got shape {shape_of(cond)}")
    branches = [_import(ctx, _graph(ctx, name), {}) for name in ("then_branch", "else_branch")]
    for name, outputs in zip(("then_branch", "else_branch"), branches, strict=True):
        if len(outputs) != len(ctx.node.output):
            raise ctx.error(f"{name} gives {len(outputs)} outputs, the node {len(ctx.node.output)}")
    results = []
    for i, (then, other) in enumerate(zip(*branches, strict=True)):
        if shape_of(then) != shape_of(other) or dtype_of(then) != dtype_of(other):
            raise ctx.unsupported(
                f"output #{i} is {shape_of(then)} {dtype_of(then)} in then_branch but {shape_of(other)} "
                f"{dtype_of(other)} in else_branch: a condition computed at run time needs one static type")
        shape = shape_of(then)
        flag = _reshape(ctx, cond, [1] * len(shape)) if shape else _reshape(ctx, cond, [])
        mask = _expand(ctx, flag, shape) if shape else flag
        results.append(gg.select(ctx.value(mask), ctx.value(then), ctx.value(other)))
    return results


@onnx_op("Loop", since=1, inputs=(2, None), outputs=(1, None), attrs=("body",), folds=True)
def loop(ctx: NodeContext) -> list[Tensor]:
    """The body unrolled while the trip count M (if given) lasts and its condition (if given, then the body's) holds:
    loop-carried values threaded through, scan outputs stacked along a new first axis."""
    body = _graph(ctx, "body")
    node = ctx.node
    trip = None
    if ctx.optional_input(0) is not None:
        count = ctx.input(0)
        if not isinstance(count, Const) or count.array.size != 1:
            raise ctx.unsupported("a trip count computed at run time is not supported (only one known at compile time)")
        trip = int(count.array.reshape(-1)[0])
    going = True if ctx.optional_input(1) is None else _flag_value(ctx, ctx.input(1), "the initial condition")
    if trip is None and ctx.optional_input(1) is None:
        raise ctx.error("a loop with neither a trip count nor a condition never ends")
    carried = [ctx.input(i) for i in range(2, len(node.input))]
    names = [i.name for i in body.input]
    if len(names) != 2 + len(carried):
        raise ctx.error(f"the body takes {len(names)} inputs; it must take the iteration number, the condition and "
                        f"the {len(carried)} loop-carried values")
    scans: list[list[Tensor]] = [[] for _ in range(len(body.output) - 1 - len(carried))]
    if len(node.output) != len(carried) + len(scans):
        raise ctx.error(f"the node has {len(node.output)} outputs; the body gives {len(carried)} loop-carried values "
                        f"and {len(scans)} scan outputs")
    i = 0
    while going and (trip is None or i < trip):
        if i >= MAX_UNROLL:
            raise ctx.unsupported(f"a loop of more than {MAX_UNROLL} iterations is not supported (it is unrolled)")
        bindings = {names[0]: ctx.const(np.array(i, np.int64), name=f"{ctx.label}.i{i}"),
                    names[1]: ctx.const(np.array(going), name=f"{ctx.label}.cond{i}"),
                    **dict(zip(names[2:], carried, strict=True))}
        outputs = _import(ctx, body, bindings)
        going = _flag_value(ctx, outputs[0], "a loop condition")
        carried = outputs[1:1 + len(carried)]
        for k, s in enumerate(outputs[1 + len(carried):]):
            scans[k].append(s)
        i += 1
    if scans and i == 0:
        raise ctx.unsupported("a loop that runs no iteration has empty scan outputs of unknown shape")
    return [*carried, *(_stack(ctx, s) for s in scans)]


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
    ranks = [len(shape_of(x)) for x in inputs]
    in_axes = [a % r if -r <= a < r else -1 for a, r in zip(in_axes, ranks)]
    if -1 in in_axes:
        raise ctx.error(f"scan_input_axes {ctx.attr('scan_input_axes', INTS, [])} are out of range")
    lengths = {shape_of(x)[a] for x, a in zip(inputs, in_axes)}
    if len(lengths) != 1:
        raise ctx.error(f"the scan inputs have different lengths along their scan axes: {sorted(lengths)}")
    steps = lengths.pop()
    if steps > MAX_UNROLL:
        raise ctx.unsupported(f"a scan of more than {MAX_UNROLL} iterations is not supported (it is unrolled)")
    names = [i.name for i in body.input]
    if len(names) != n + m or len(node.output) != len(body.output):
        raise ctx.error(f"the body takes {len(names)} inputs and gives {len(body.output)} outputs; the node has "
                        f"{n} states, {m} scan inputs and {len(node.output)} outputs")
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
