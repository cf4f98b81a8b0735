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
  constant, a view, or the same value as an earlier output.

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
from ..registry import Pass, PassError
from .ir_program import INPUTS_ATTR, OUTPUTS_ATTR, UniqueNames, is_program

#: arg/res attribute through which the importer names a graph's inputs and outputs
NAME_ATTR = gg.NAME_ATTR

#: glowgraph nodes that become no instruction: they are handled by hand below
_SPECIAL = ("constant", "reshape")


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

    #: "alloc", "view", "instr" or "dealloc"
    kind: str
    buffers: list[Buffer]
    loc: ir.Location
    #: the glowir op name of an "instr" step ("fully_connected", "copy", ...)
    instr: str = ""
    attrs: dict[str, ir.Attribute] = field(default_factory=dict)


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
    """Declared legality, checked up front: a graph holds only glowgraph nodes with a way into glowir."""
    if not op.name.startswith("glowgraph."):
        raise PassError(f"'{op.name}' cannot be converted to glowir: a graph may hold only glowgraph nodes",
                        op.location)
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


def _live_nodes(nodes: list[ir.Operation], ret: ir.Operation) -> list[ir.Operation]:
    """The nodes some output depends on, in program order."""
    needed = set(ret.operands)
    live = []
    for op in reversed(nodes):
        if any(r in needed for r in op.results):
            live.append(op)
            needed.update(op.operands)
    return live[::-1]


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
    """A const weight var for every constant ``users`` read, in first-use order."""
    constants: dict[ir.Value, Buffer] = {}
    for op in users:
        for v in op.operands:
            if v not in constants and _producer(v) == "glowgraph.constant":
                c = v.owner.operation
                name = names.take(_loc_name(c.location) or f"const_{len(constants)}")
                constants[v] = Buffer("const", name, _memref(v.type, f"'{c.name}'", c.location), c.location,
                                      value=c.attributes["value"])
    return constants


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
            for step in plan.steps:
                b = step.buffers[0]
                if step.kind == "alloc":
                    values[b] = gi.alloc_activation(name=b.name, result_types=[b.type], loc=step.loc)
                elif step.kind == "view":
                    values[b] = gi.tensor_view(values[b.source], offsets=b.offsets, result_types=[b.type],
                                               loc=step.loc)
                elif step.kind == "dealloc":
                    gi.dealloc_activation(values[b], loc=step.loc)
                else:
                    ir.Operation.create(f"glowir.{step.instr}", results=[], operands=[values[x] for x in step.buffers],
                                        attributes=step.attrs, loc=step.loc)
            func.ReturnOp([], loc=plan.return_loc)
    old.operation.erase()


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
