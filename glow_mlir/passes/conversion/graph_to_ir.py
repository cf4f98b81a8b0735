"""convert-glowgraph-to-glowir: Glow's IRGen, the bufferization of a graph.

A glowgraph graph ``func.func @f(%args: tensors) -> (tensors)`` becomes, in place, the glowir
program ``func.func @f() attributes {glowir.inputs = [...], glowir.outputs = [...]}``:

- every constant becomes a const ``weight_var`` holding its value (in first-use order); then every
  argument and every result becomes a mutable one, named by its ``glowgraph.name`` attribute;
- every node becomes the glowir instruction its op-table row names (``instr``), ``@out`` buffer
  first; a node that produces an output writes straight into that output's weight var, any other
  node into an ``alloc_activation`` placed right before it and freed by a ``dealloc_activation``
  right after its last reader;
- ``reshape`` becomes a ``tensor_view`` of its input's buffer, which then stays alive as long as the view;
  so does a ``slice`` of one contiguous range of its input (a ``tensor_view`` with offsets); any other slice
  becomes an ``extract_tensor`` (its starts are the offsets);
- a ``concat`` becomes one ``insert_tensor`` per input into its buffer, as in Glow's IRGen; a concat that only
  feeds another one along the same axis gets no buffer of its own: its inputs go straight into the outer one's;
- a ``copy`` fills an output only where no node can write it: the output is an argument, a
  constant, a view, or the same value as an earlier output;
- a loop (``scf.for`` from 0 by 1 to a constant, or the ``scf.while`` form of :func:`_while_form`) becomes a
  ``glowir.loop`` whose body holds the instructions of its nodes (:func:`_plan_loop`): each loop-carried value gets a
  state buffer, filled before the loop (a copy, or a splat for a splat constant) and written at the end of each
  iteration from the value the body yields (a copy; a ``step_insert`` into its own state is done in place, so a
  scan output is never copied whole); the loop's results are the state buffers. Every buffer of the body is
  allocated before the loop and freed after it: the body allocates nothing;
- an ``scf.if`` on ``tensor.extract`` of an i1 tensor becomes a ``glowir.if`` on that tensor's buffer, one buffer
  per result written by either branch (:func:`_plan_if`).

Nodes no output depends on get no buffer, as in Glow's IRGen, which walks back from the outputs.
Every graph of the module is planned in plain Python (:func:`plan_graph`) before the IR is
touched, so a graph that cannot convert leaves the whole module as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import func

from ...dialects import DIALECTS, opdef_of
from ...dialects import glowgraph as gg
from ...dialects import glowir as gi
from ...dialects.optable import TERMINATOR
from ..registry import Pass, PassError
from ..utils import LOOP_OPS, REGION_OPS
from .ir_program import INPUTS_ATTR, OUTPUTS_ATTR, UniqueNames, is_program

#: arg/res attribute through which the importer names a graph's inputs and outputs
NAME_ATTR = gg.NAME_ATTR

#: glowgraph nodes that become no instruction: they are handled by hand below
_SPECIAL = ("constant", "reshape", "iteration")
#: ops of other dialects a graph may hold: its loops, and the index and i1 arithmetic of their bounds and conditions
_CONTROL = (*REGION_OPS, "scf.yield", "scf.condition", "arith.constant", "arith.addi", "arith.cmpi", "arith.andi",
            "tensor.extract")
#: ops of a graph that become no step of their own: loop bounds, a loop's count, an if's condition as an i1
_NO_STEP = ("arith.constant", "arith.addi", "tensor.extract", "glowgraph.constant")


@dataclass(eq=False)
class Buffer:
    """A buffer of the program being planned: a weight var, an activation or a view.
    Compared by identity: two buffers of one name and type are still two buffers."""

    #: "const", "input", "output", "activation" or "view"
    kind: str
    #: empty for a view (glowir views carry no name)
    name: str
    type: ir.MemRefType
    loc: ir.Location
    #: the data of a const weight
    value: ir.Attribute | None = None
    #: the buffer a view looks into
    source: Buffer | None = None
    #: where a view starts in its source, one entry per source dim (None: at the start)
    offsets: list[int] | None = None

    def root(self) -> Buffer:
        """The weight var or activation at the end of a chain of views."""
        b = self
        while b.source is not None:
            b = b.source
        return b


@dataclass(eq=False)
class Step:
    """One op of the program's code, in order. ``buffers`` are an instruction's operands
    (``@out`` first); for an alloc, view or dealloc, the one buffer it declares or frees."""

    #: "alloc", "view", "instr", "loop" or "dealloc"
    kind: str
    buffers: list[Buffer]
    loc: ir.Location
    #: the glowir op name of an "instr" step ("fully_connected", "copy", ...)
    instr: str = ""
    attrs: dict[str, ir.Attribute] = field(default_factory=dict)
    #: the steps of a loop's body or of an if's then branch (its ``buffers``: the loop's counter and condition, or the
    #: if's condition, then every buffer these steps touch)
    body: list[Step] = field(default_factory=list)
    #: the steps of an if's else branch
    orelse: list[Step] = field(default_factory=list)


@dataclass
class Plan:
    """The glowir program of one graph, ready to emit."""

    graph: func.FuncOp
    #: const weights in first-use order, then the inputs, then the outputs
    weights: list[Buffer]
    inputs: list[str]
    outputs: list[str]
    steps: list[Step]
    return_loc: ir.Location


def _loc_name(loc: ir.Location) -> str | None:
    """The name of a name location (``loc("fc")``, the importer's node names), else None."""
    return loc.name_str if loc.is_a_name() and loc.name_str else None


def _io_names(f: func.FuncOp, key: str, count: int, prefix: str) -> list[str]:
    """The ``glowgraph.name`` of each argument (key ``arg_attrs``) or result (``res_attrs``),
    else ``<prefix>_<index>``."""
    entries = list(ir.ArrayAttr(f.attributes[key])) if key in f.attributes else []
    names = []
    for i in range(count):
        d = ir.DictAttr(entries[i]) if i < len(entries) else None
        given = ir.StringAttr(d[NAME_ATTR]).value if d is not None and NAME_ATTR in d else ""
        names.append(given or f"{prefix}_{i}")
    return names


def _memref(t: ir.Type, what: str, loc: ir.Location) -> ir.MemRefType:
    """The buffer type of a tensor value; glowir buffers are statically shaped."""
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        raise PassError(f"{what} has type {t}: glowir buffers need a statically shaped tensor", loc)
    return ir.MemRefType.get(list(t.shape), t.element_type, loc=loc)


def _check_convertible(op: ir.Operation) -> None:
    """Declared legality, checked up front: a graph holds only glowgraph nodes with a way into glowir, and loops."""
    if op.name in _CONTROL:
        for block in [b for r in op.regions for b in r.blocks]:
            for inner in block.operations:
                _check_convertible(inner.operation)
        return
    if not op.name.startswith("glowgraph."):
        raise PassError(f"'{op.name}' cannot be converted to glowir: a graph may hold only glowgraph nodes and "
                        "scf loops", op.location)
    opdef = opdef_of(op)
    if opdef is None:
        raise PassError(f"'{op.name}' is not in the glowgraph op table", op.location)
    if opdef.name in _SPECIAL:
        return
    if opdef.instr is None:
        raise PassError(f"'{op.name}' has no glowir instruction (its op-table row names no 'instr')", op.location)
    if opdef.instr not in DIALECTS["glowir"].ops:
        raise PassError(f"'{op.name}' names the instruction 'glowir.{opdef.instr}', which glowir does not define",
                        op.location)
    if len(op.results) != 1:
        raise PassError(f"'{op.name}' has {len(op.results)} results; conversion handles one @out buffer",
                        op.location)


def _contiguous_slice(op: ir.Operation) -> bool:
    """Whether a slice selects one contiguous range of its row-major input: dims of size 1, then at most one
    partial dim, then whole dims (steps only matter where more than one element is taken)."""
    if op.name != "glowgraph.slice":
        return False
    shape = list(ir.ShapedType(op.operands[0].type).shape)
    view = op.opview
    starts, sizes, steps = view.starts, view.sizes, view.steps or [1] * len(shape)
    if 0 in sizes or any(k > 1 and st != 1 for k, st in zip(sizes, steps)):
        return False
    first = next((d for d, k in enumerate(sizes) if k > 1), len(sizes))
    return all(sizes[d] == shape[d] and starts[d] == 0 for d in range(first + 1, len(shape)))


def _is_view(op: ir.Operation) -> bool:
    """Whether a node becomes a view of its input's buffer rather than an instruction."""
    return op.name == "glowgraph.reshape" or _contiguous_slice(op)


def _absorbed_concats(live: list[ir.Operation]) -> set[ir.Value]:
    """The concats that only feed another concat along the same axis: their inputs are inserted straight into
    the outer concat's buffer."""
    absorbed = set()
    for op in live:
        if op.name != "glowgraph.concat":
            continue
        for v in op.operands:
            if (_producer(v) == "glowgraph.concat" and v.owner.operation.opview.axis == op.opview.axis
                    and len(list(v.uses)) == 1):
                absorbed.add(v)
    return absorbed


def _concat_leaves(op: ir.Operation, offset: int, absorbed: set[ir.Value]) -> list[tuple[ir.Value, int]]:
    """The inputs of concat ``op`` and of the concats absorbed into it, with their offsets along its axis."""
    axis, found = op.opview.axis, []
    for x in op.operands:
        found.extend(_concat_leaves(x.owner.operation, offset, absorbed) if x in absorbed else [(x, offset)])
        offset += ir.ShapedType(x.type).shape[axis]
    return found


def _i64s(values: list[int], context: ir.Context) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(x) for x in values], context=context)


def _instructions(op: ir.Operation, dest: Buffer, buf: dict[ir.Value, Buffer], absorbed: set[ir.Value]) -> list[Step]:
    """The instructions that compute node ``op`` into ``dest``."""
    if op.name == "glowgraph.concat":
        axis, rank = op.opview.axis, ir.ShapedType(op.results[0].type).rank
        return [Step("instr", [dest, buf[x]], op.location, "insert_tensor",
                     {"offsets": _i64s([at if d == axis else 0 for d in range(rank)], op.context)})
                for x, at in _concat_leaves(op, 0, absorbed)]
    if op.name == "glowgraph.slice":
        attrs = {"offsets": op.attributes["starts"]}
        if "steps" in op.attributes:
            attrs["steps"] = op.attributes["steps"]
        return [Step("instr", [dest, buf[op.operands[0]]], op.location, "extract_tensor", attrs)]
    return [Step("instr", [dest, *(buf[x] for x in op.operands)], op.location, opdef_of(op).instr, _instr_attrs(op))]


def _instr_attrs(op: ir.Operation) -> dict[str, ir.Attribute]:
    """The node's table attributes, carried over to its instruction, which must declare them all."""
    node, instr = opdef_of(op), DIALECTS["glowir"].ops[opdef_of(op).instr]
    declared = {a.name: a for a in instr.attrs}
    attrs = {}
    for a in node.attrs:
        if a.name not in op.attributes:
            continue
        if a.name not in declared:
            raise PassError(f"'{op.name}' has attribute '{a.name}', which 'glowir.{instr.name}' does not declare",
                            op.location)
        attrs[a.name] = op.attributes[a.name]
    missing = [a.name for a in instr.attrs if not a.optional and a.name not in attrs]
    if missing:
        raise PassError(f"'glowir.{instr.name}' needs attribute(s) {', '.join(missing)} that '{op.name}' lacks",
                        op.location)
    return attrs


def _producer(v: ir.Value) -> str | None:
    """The glowgraph op name that defines ``v``, or None for a graph argument."""
    return v.owner.operation.name if isinstance(v, ir.OpResult) else None


def _reads(op: ir.Operation) -> list[ir.Value]:
    """The values ``op`` reads: its operands and, for a loop or an if, every value its regions use from outside."""
    if op.name not in REGION_OPS:
        return list(op.operands)
    inside: set[ir.Value] = set()
    used: list[ir.Value] = list(op.operands)

    def visit(o: ir.Operation) -> None:
        for region in o.regions:
            for block in region.blocks:
                inside.update(block.arguments)
                for inner in block.operations:
                    used.extend(inner.operation.operands)
                    inside.update(inner.operation.results)
                    visit(inner.operation)

    visit(op)
    return [v for v in dict.fromkeys(used) if v not in inside]


def _live_nodes(nodes: list[ir.Operation], ret: ir.Operation) -> list[ir.Operation]:
    """The nodes some output depends on, in program order."""
    needed = set(ret.operands)
    live = []
    for op in reversed(nodes):
        if any(r in needed for r in op.results):
            live.append(op)
            needed.update(_reads(op))
    return live[::-1]


def _index_constant(v: ir.Value) -> int | None:
    """The value of an ``arith.constant`` of index type, else None."""
    if isinstance(v, ir.OpResult) and v.owner.operation.name == "arith.constant" and isinstance(v.type, ir.IndexType):
        return ir.IntegerAttr(v.owner.operation.attributes["value"]).value
    return None


@dataclass
class _Loop:
    """A graph loop in the terms of glowir.loop: its body block, and what its block arguments, yields and results
    are. ``carried`` pairs each loop-carried value's init with its block argument, the value the body yields for it,
    and the loop's result."""

    op: ir.Operation
    body: ir.Block
    max_trip: int
    #: the index induction variable (its value is glowir.loop's counter)
    iv: ir.Value
    #: (init, block argument, yielded value, result) per loop-carried tensor
    carried: list[tuple[ir.Value, ir.Value, ir.Value, ir.Value]]
    #: scf.while: (init, block argument, yielded value) of the condition tensor
    condition: tuple[ir.Value, ir.Value, ir.Value] | None = None


def _for_form(op: ir.Operation) -> _Loop:
    """``scf.for %iv = 0 to M step 1 iter_args(...)`` with M a constant."""
    lb, ub, step = (_index_constant(v) for v in list(op.operands)[:3])
    if lb != 0 or step != 1 or ub is None:
        raise PassError("a loop must run from 0 by 1 to a constant", op.location)
    body = op.regions[0].blocks[0]
    yields = list(body.operations)[-1].operation
    args = list(body.arguments)
    carried = list(zip(list(op.operands)[3:], args[1:], yields.operands, op.results, strict=True))
    return _Loop(op, body, max(ub, 0), args[0], carried)


def _while_form(op: ir.Operation) -> _Loop:
    """The while loop the importer builds for a condition computed in the body::

        scf.while (%iv = 0, %cond = c0, %x = x0, ...) {
          %go = arith.andi (arith.cmpi slt %iv, M), (tensor.extract %cond[])
          scf.condition(%go) %iv, %cond, %x, ...
        } do { ^bb(%iv, %cond, %x, ...): ... scf.yield (arith.addi %iv, 1), %cond2, %x2, ... }
    """
    where = op.location
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    ops = [o.operation for o in before.operations]
    names = [o.name for o in ops]
    if names != ["arith.cmpi", "tensor.extract", "arith.andi", "scf.condition"]:
        raise PassError(f"a while loop's condition must be its trip count and its condition tensor, got {names}", where)
    cmp, extract, _, cond = ops
    bargs = list(before.arguments)
    max_trip = _index_constant(cmp.operands[1])
    if (cmp.operands[0] != bargs[0] or max_trip is None or ir.IntegerAttr(cmp.attributes["predicate"]).value != 2
            or extract.operands[0] != bargs[1] or list(cond.operands)[1:] != bargs):
        raise PassError("a while loop's condition must be `iv < M and cond`, forwarding its arguments", where)
    yields = list(after.operations)[-1].operation
    out = list(yields.operands)
    step = out[0].owner.operation if isinstance(out[0], ir.OpResult) else None
    aargs = list(after.arguments)
    if step is None or step.name != "arith.addi" or step.operands[0] != aargs[0] or \
            _index_constant(step.operands[1]) != 1:
        raise PassError("a while loop must count its iterations from 0 by 1", where)
    inits = list(op.operands)
    if _index_constant(inits[0]) != 0:
        raise PassError("a while loop must count its iterations from 0 by 1", where)
    carried = list(zip(inits[2:], aargs[2:], out[2:], list(op.results)[2:], strict=True))
    return _Loop(op, after, max(max_trip, 0), aargs[0], carried, (inits[1], aargs[1], out[1]))


def _loop_form(op: ir.Operation) -> _Loop:
    return _for_form(op) if op.name == "scf.for" else _while_form(op)


def _touched(steps: list[Step]) -> list[Buffer]:
    """Every buffer the steps touch, nested loops included, in first-touch order."""
    out: list[Buffer] = []
    for step in steps:
        out.extend(step.buffers)
        out.extend(_touched(step.body))
        out.extend(_touched(step.orelse))
    return list(dict.fromkeys(out))


def _with_deallocs(steps: list[Step]) -> list[Step]:
    """Free each activation right after the last step that touches it, directly or through a view."""
    last: dict[Buffer, int] = {}
    for i, step in enumerate(steps):
        for b in step.buffers:
            if b.root().kind == "activation":
                last[b.root()] = i
    frees: dict[int, list[Buffer]] = {}
    for b, i in last.items():  # allocation order, so frees after one step come out in a stable order
        frees.setdefault(i, []).append(b)
    out = []
    for i, step in enumerate(steps):
        out.append(step)
        out.extend(Step("dealloc", [b], b.loc) for b in frees.get(i, []))
    return out


def _interface(f: func.FuncOp, ret: ir.Operation, names: UniqueNames) -> tuple[list[Buffer], list[Buffer]]:
    """The input and output weight vars, named by ``glowgraph.name`` or by position."""
    fname = ir.StringAttr(f.attributes["sym_name"]).value
    args, results = list(f.regions[0].blocks[0].arguments), list(ret.operands)
    inputs = [Buffer("input", names.take(n), _memref(a.type, f"argument #{i} of @{fname}", a.location), a.location)
              for i, (a, n) in enumerate(zip(args, _io_names(f, "arg_attrs", len(args), "input"), strict=True))]
    outputs = [Buffer("output", names.take(n), _memref(v.type, f"result #{j} of @{fname}", ret.location),
                      ret.location)
               for j, (v, n) in enumerate(zip(results, _io_names(f, "res_attrs", len(results), "output"), strict=True))]
    return inputs, outputs


def _constants(users: list[ir.Operation], names: UniqueNames) -> dict[ir.Value, Buffer]:
    """A const weight var for every constant ``users`` read, in first-use order (inside their loops too; a splat
    that only starts a loop-carried value is a splat instruction instead)."""
    constants: dict[ir.Value, Buffer] = {}
    for op in users:
        for v in _constant_reads(op):
            if v not in constants and _producer(v) == "glowgraph.constant":
                c = v.owner.operation
                name = names.take(_loc_name(c.location) or f"const_{len(constants)}")
                constants[v] = Buffer("const", name, _memref(v.type, f"'{c.name}'", c.location), c.location,
                                      value=c.attributes["value"])
    return constants


def _constant_reads(op: ir.Operation) -> list[ir.Value]:
    """The values ``op`` reads as operands of its nodes, its loops' bodies and its ifs' branches included; a loop's
    splat inits left out."""
    if op.name == "scf.if":
        return [v for r in op.regions for inner in r.blocks[0].operations for v in _constant_reads(inner.operation)]
    if op.name not in LOOP_OPS:
        return list(op.operands)
    loop = _loop_form(op)
    out = [init for init, _, _, _ in loop.carried if not _is_splat(init)]
    if loop.condition is not None:
        out.append(loop.condition[0])
    for inner in loop.body.operations:
        out.extend(_constant_reads(inner.operation))
    return out


def _is_splat(v: ir.Value) -> bool:
    return _producer(v) == "glowgraph.constant" and ir.DenseElementsAttr(v.owner.operation.attributes["value"]).is_splat


def _code(live: list[ir.Operation], ret: ir.Operation, outputs: list[Buffer], buf: dict[ir.Value, Buffer],
          names: UniqueNames) -> list[Step]:
    """The code of the program, deallocs excluded. ``buf`` maps the arguments and constants to their
    weight vars on entry, and every other live value to its buffer on return."""
    # An output is written by the node producing it, unless there is none (argument, constant, view)
    # or that node already writes an earlier output: then the output is copied from the value's buffer.
    direct: dict[ir.Value, Buffer] = {}
    copies: dict[ir.Value, list[Buffer]] = {}
    for v, out in zip(ret.operands, outputs, strict=True):
        if _producer(v) not in (None, "glowgraph.constant") and not _is_view(v.owner.operation) and v not in direct:
            direct[v] = out
        else:
            copies.setdefault(v, []).append(out)
    steps: list[Step] = []

    def fill_copies(v: ir.Value) -> None:
        # right after v's buffer exists: the earliest point, so a copy never extends a live range
        steps.extend(Step("instr", [out, buf[v]], ret.location, "copy") for out in copies.get(v, []))

    for v in dict.fromkeys(v for v in ret.operands if v in buf):  # arguments and constants exist from the start
        fill_copies(v)
    activations = 0
    absorbed = _absorbed_concats(live)
    for op in live:
        if op.name in REGION_OPS:
            _plan_loop(_loop_form(op), buf, names, steps, steps, direct) if op.name in LOOP_OPS else \
                _plan_if(op, buf, names, steps, steps, direct)
            for v in op.results:
                fill_copies(v)
            continue
        if op.name in ("arith.constant", "tensor.extract"):
            continue
        if op.name == "glowgraph.constant" or op.results[0] in absorbed:
            continue
        v = op.results[0]
        what = f"the result of '{op.name}'"
        if _is_view(op):
            offsets = list(op.opview.starts) if op.name == "glowgraph.slice" else None
            b = Buffer("view", "", _memref(v.type, what, op.location), op.location, source=buf[op.operands[0]],
                       offsets=offsets if offsets and any(offsets) else None)
            steps.append(Step("view", [b], op.location))
        else:
            b = direct.get(v)
            if b is None:
                b = Buffer("activation", names.take(_loc_name(op.location) or f"act_{activations}"),
                           _memref(v.type, what, op.location), op.location)
                activations += 1
                steps.append(Step("alloc", [b], op.location))
            steps.extend(_instructions(op, b, buf, absorbed))
        buf[v] = b
        fill_copies(v)
    return steps


def _activation(names: UniqueNames, wanted: str, t: ir.MemRefType, loc: ir.Location, top: list[Step]) -> Buffer:
    b = Buffer("activation", names.take(wanted), t, loc)
    top.append(Step("alloc", [b], loc))
    return b


def _plan_loop(loop: _Loop, buf: dict[ir.Value, Buffer], names: UniqueNames, top: list[Step], steps: list[Step],
               direct: dict[ir.Value, Buffer]) -> None:
    """Append the glowir loop of ``loop`` to ``steps``: its allocations (state buffers, the counter, the condition,
    every buffer of its body) to ``top``, the program's own steps, so that nothing is allocated inside a loop."""
    loc, ctx = loop.op.location, loop.op.context
    base = _loc_name(loc) or "loop"
    scalar = lambda elem: ir.MemRefType.get([], elem, loc=loc)
    counter = _activation(names, f"{base}.counter", scalar(ir.IntegerType.get_signless(64, ctx)), loc, top)
    condition = _activation(names, f"{base}.condition", scalar(ir.IntegerType.get_signless(1, ctx)), loc, top)
    buf[loop.iv] = counter
    states: list[Buffer] = []
    body_ops = [o.operation for o in loop.body.operations][:-1]
    yields = list(loop.body.operations)[-1].operation
    live = _live_nodes(body_ops, yields)
    in_place = _in_place_inserts(loop, live)
    filled = _filled_whole(loop, in_place)
    for k, (init, arg, _, result) in enumerate(loop.carried):
        state = direct.get(result) or _activation(names, f"{base}.state{k}", _memref(arg.type, f"state #{k}", loc),
                                                    loc, top)
        if arg in filled:
            pass  # every step of it is written before anything reads it: its first value is never seen
        elif _is_splat(init):
            value = ir.DenseElementsAttr(init.owner.operation.attributes["value"]).get_splat_value()
            steps.append(Step("instr", [state], loc, "splat", {"value": value}))
        else:
            steps.append(Step("instr", [state, buf[init]], loc, "copy"))
        buf[arg] = states.append(state) or state
    if loop.condition is not None:
        init, arg, _ = loop.condition
        steps.append(Step("instr", [condition, buf[init]], loc, "copy"))
        buf[arg] = condition
    body: list[Step] = []
    _plan_nodes(live, buf, names, top, body, in_place)
    # the yielded values become the next iteration's state; a value that is another state is read before any
    # state is written (a swap of two loop-carried values)
    pending = [(state, buf[y]) for state, (_, _, y, _) in zip(states, loop.carried)]
    if loop.condition is not None:
        pending.append((condition, buf[loop.condition[2]]))
    state_roots = {b.root() for b, _ in pending}
    final = []
    for state, value in pending:
        if value is state:
            continue
        if value.root() in state_roots:
            temp = _activation(names, f"{base}.next", value.type, loc, top)
            body.append(Step("instr", [temp, value], loc, "copy"))
            value = temp
        final.append(Step("instr", [state, value], loc, "copy"))
    body.extend(final)
    i64 = ir.IntegerType.get_signless(64, ctx)
    attrs = {"max_trip": ir.IntegerAttr.get(i64, loop.max_trip),
             "has_condition": ir.IntegerAttr.get(i64, int(loop.condition is not None))}
    steps.append(Step("loop", [counter, condition, *_touched(body)], loc, "loop", attrs, body))
    for state, (_, _, _, result) in zip(states, loop.carried):
        buf[result] = state


def _plan_nodes(live: list[ir.Operation], buf: dict[ir.Value, Buffer], names: UniqueNames, top: list[Step],
                steps: list[Step], in_place: set[ir.Operation] = frozenset(),
                direct: dict[ir.Value, Buffer] | None = None) -> None:
    """The steps of the live nodes of a loop's body or an if's branch, appended to ``steps``; their allocations and
    views go to ``top`` (the program's own steps). A step_insert in ``in_place`` writes its dest's buffer; a value
    in ``direct`` is written into the buffer it maps to."""
    direct = direct or {}
    for node in live:
        if node.name in REGION_OPS:
            _plan_loop(_loop_form(node), buf, names, top, steps, direct) if node.name in LOOP_OPS else \
                _plan_if(node, buf, names, top, steps, direct)
            continue
        if node.name in _NO_STEP:
            continue
        v = node.results[0]
        what = f"the result of '{node.name}'"
        if node.name == "glowgraph.iteration":
            buf[v] = buf[node.operands[0]]
            continue
        if _is_view(node):
            offsets = list(node.opview.starts) if node.name == "glowgraph.slice" else None
            b = Buffer("view", "", _memref(v.type, what, node.location), node.location, source=buf[node.operands[0]],
                       offsets=offsets if offsets and any(offsets) else None)
            top.append(Step("view", [b], node.location))
            buf[v] = b
            continue
        if node in in_place:  # a scan output: written into its own state
            b = buf[node.operands[0]]
        else:
            b = direct.get(v) or _activation(names, _loc_name(node.location) or "act",
                                             _memref(v.type, what, node.location), node.location, top)
        if node.name == "glowgraph.step_insert":
            if node not in in_place:
                steps.append(Step("instr", [b, buf[node.operands[0]]], node.location, "copy"))
            steps.append(Step("instr", [b, buf[node.operands[1]], buf[node.operands[2]]], node.location,
                              "step_insert"))
        else:
            steps.extend(_instructions(node, b, buf, set()))
        buf[v] = b


def _plan_if(op: ir.Operation, buf: dict[ir.Value, Buffer], names: UniqueNames, top: list[Step], steps: list[Step],
             direct: dict[ir.Value, Buffer]) -> None:
    """Append the glowir if of ``scf.if`` to ``steps``: one buffer per result (allocated in ``top``, or the output
    it is), which each branch writes: the node that computes the value it yields writes it there directly, else a
    copy does at the branch's end."""
    loc = op.location
    extract = op.operands[0].owner.operation if isinstance(op.operands[0], ir.OpResult) else None
    if extract is None or extract.name != "tensor.extract":
        raise PassError("an if's condition must be a tensor<i1> read with tensor.extract", loc)
    condition = buf[extract.operands[0]]
    base = _loc_name(loc) or "if"
    results = [direct.get(r) or _activation(names, f"{base}.result{k}", _memref(r.type, f"result #{k}", loc), loc,
                                            top) for k, r in enumerate(op.results)]
    branches: list[list[Step]] = []
    for region in op.regions:
        block = region.blocks[0]
        yields = list(block.operations)[-1].operation
        ops = [o.operation for o in block.operations][:-1]
        inner: dict[ir.Value, Buffer] = {}
        for y, b in zip(yields.operands, results, strict=True):
            node = y.owner.operation if isinstance(y, ir.OpResult) else None
            if node is not None and node in ops and node.name.startswith("glowgraph.") and y not in inner \
                    and node.name not in ("glowgraph.constant", "glowgraph.iteration") and not _is_view(node):
                inner[y] = b
        body: list[Step] = []
        _plan_nodes(_live_nodes(ops, yields), buf, names, top, body, direct=inner)
        body.extend(Step("instr", [b, buf[y]], loc, "copy") for y, b in zip(yields.operands, results)
                    if buf[y] is not b)
        branches.append(body)
    steps.append(Step("if", [condition, *_touched(branches[0] + branches[1])], loc, "if", {}, branches[0],
                      branches[1]))
    for r, b in zip(op.results, results):
        buf[r] = b


def _filled_whole(loop: _Loop, in_place: set[ir.Operation]) -> set[ir.Value]:
    """The loop-carried block arguments that the loop fills step by step before anything reads them: a scan output
    written in place at the iteration number (or backwards from the end) by a loop that runs all its ``max_trip``
    iterations, ``max_trip`` being its number of steps. Their initial value is dead."""
    if loop.condition is not None:
        return set()
    out = set()
    for node in in_place:
        index = node.operands[2]
        arg = node.operands[0]
        if ir.ShapedType(arg.type).shape[0] == loop.max_trip and _steps_through(index, loop.iv, loop.max_trip):
            out.add(arg)
    return out


def _steps_through(index: ir.Value, iv: ir.Value, trip: int) -> bool:
    """Whether ``index`` is the iteration number of the loop of ``iv``, or ``trip - 1`` minus it."""
    op = index.owner.operation if isinstance(index, ir.OpResult) else None
    if op is not None and op.name == "glowgraph.iteration":
        return op.operands[0] == iv
    if op is None or op.name != "glowgraph.sub":
        return False
    last = _constant_scalar(op.operands[0])
    return last == trip - 1 and _steps_through(op.operands[1], iv, trip) \
        and op.operands[1].owner.operation.name == "glowgraph.iteration"


def _constant_scalar(v: ir.Value) -> int | None:
    """The one value of a glowgraph constant of one element, else None."""
    if _producer(v) != "glowgraph.constant":
        return None
    attr = ir.DenseElementsAttr(v.owner.operation.attributes["value"])
    if ir.ShapedType(attr.type).rank != 0 and list(ir.ShapedType(attr.type).shape) != [1]:
        return None
    element = attr.get_splat_value() if attr.is_splat else attr[0]
    return int(ir.IntegerAttr(element).value) if isinstance(element, ir.IntegerAttr) else None


def _in_place_inserts(loop: _Loop, live: list[ir.Operation]) -> set[ir.Operation]:
    """The step_insert nodes of the body that may write their loop-carried dest in place: the dest is a block
    argument that nothing else reads, and the result is yielded for that same argument and read by nothing else."""
    out = set()
    for _, arg, yielded, _ in loop.carried:
        node = yielded.owner.operation if isinstance(yielded, ir.OpResult) else None
        if (node is not None and node.name == "glowgraph.step_insert" and node in live and node.operands[0] == arg
                and len(list(arg.uses)) == 1 and len(list(yielded.uses)) == 1):
            out.add(node)
    return out


def plan_graph(f: func.FuncOp) -> Plan:
    """Plan the glowir program of graph ``f``; PassError naming the op at fault when it cannot convert."""
    fname = ir.StringAttr(f.attributes["sym_name"]).value
    if len(f.regions[0].blocks) != 1:
        raise PassError(f"graph @{fname} must have exactly one block", f.location)
    block = f.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    ret, nodes = ops[-1], ops[:-1]
    if ret.name != "func.return":
        raise PassError(f"graph @{fname} must end in func.return, not '{ret.name}'", ret.location)
    for op in nodes:
        _check_convertible(op)
    live = _live_nodes(nodes, ret)
    names = UniqueNames()
    # The interface is named first, so that an input or output keeps its name when a node's name clashes with it.
    inputs, outputs = _interface(f, ret, names)
    constants = _constants([*live, ret], names)
    buf = {**dict(zip(block.arguments, inputs, strict=True)), **constants}
    steps = _with_deallocs(_code(live, ret, outputs, buf, names))
    return Plan(f, [*constants.values(), *inputs, *outputs], [b.name for b in inputs], [b.name for b in outputs],
                steps, ret.location)


def emit_program(plan: Plan) -> None:
    """Replace the graph by its glowir program: same symbol, same place, same function attributes."""
    old = plan.graph
    with old.context:
        new = func.FuncOp(ir.StringAttr(old.attributes["sym_name"]).value, ([], []), loc=old.location,
                          ip=ir.InsertionPoint(old))
        for key in old.attributes:
            if key not in ("sym_name", "function_type", "arg_attrs", "res_attrs"):
                new.attributes[key] = old.attributes[key]
        new.attributes[INPUTS_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in plan.inputs])
        new.attributes[OUTPUTS_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in plan.outputs])
        values: dict[Buffer, ir.Value] = {}
        with ir.InsertionPoint(new.add_entry_block()):
            for w in plan.weights:
                values[w] = gi.weight_var(name=w.name, mutability="const" if w.kind == "const" else "mutable",
                                          value=w.value, result_types=[w.type], loc=w.loc)
            _emit_steps(plan.steps, values)
            func.ReturnOp([], loc=plan.return_loc)
    old.operation.erase()


def _emit_steps(steps: list[Step], values: dict[Buffer, ir.Value]) -> None:
    """The glowir ops of ``steps`` at the insertion point (a loop's body inside its region)."""
    for step in steps:
        b = step.buffers[0]
        if step.kind == "alloc":
            values[b] = gi.alloc_activation(name=b.name, result_types=[b.type], loc=step.loc)
        elif step.kind == "view":
            values[b] = gi.tensor_view(values[b.source], offsets=b.offsets, result_types=[b.type], loc=step.loc)
        elif step.kind == "dealloc":
            gi.dealloc_activation(values[b], loc=step.loc)
        elif step.kind in ("loop", "if"):
            own = 2 if step.kind == "loop" else 1
            branches = [step.body] if step.kind == "loop" else [step.body, step.orelse]
            op = ir.Operation.create(f"glowir.{step.kind}", results=[], operands=[values[x] for x in step.buffers[:own]],
                                     attributes=step.attrs, loc=step.loc, regions=len(branches))
            for region, branch in zip(op.regions, branches):
                with ir.InsertionPoint(region.blocks.append()):
                    _emit_steps(branch, values)
                    ir.Operation.create(TERMINATOR, loc=step.loc)
        else:
            ir.Operation.create(f"glowir.{step.instr}", results=[], operands=[values[x] for x in step.buffers],
                                attributes=step.attrs, loc=step.loc)


def graph_functions(module: ir.Operation) -> list[func.FuncOp]:
    """The functions of ``module`` to convert: those with a body that are not glowir programs yet."""
    return [op for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and len(op.regions[0].blocks) > 0 and not is_program(op)]


def check_legal(module: ir.Operation) -> None:
    """Declared legality, checked at the end: no glowgraph op may survive the conversion."""
    left: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("glowgraph."):
            left.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    if left:
        raise PassError(f"'{left[0].name}' was left unconverted by convert-glowgraph-to-glowir", left[0].location)


@dataclass(frozen=True)
class ConvertGraphToIR(Pass):
    """Glow's IRGen: every glowgraph graph of the module becomes a glowir program."""

    name = "convert-glowgraph-to-glowir"
    summary = "bufferize graphs into glowir programs: weight vars, activations with alloc/dealloc, instructions"

    def run(self, module: ir.Operation) -> None:
        plans = [plan_graph(f) for f in graph_functions(module)]
        for plan in plans:
            emit_program(plan)
        check_legal(module)
