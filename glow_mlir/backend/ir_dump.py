"""A glowir program as Glow prints it (``-dump-ir``), and statistics about it.

The text has Glow's two sections: ``declare`` lists the weight vars with their sizes and users and
closes with their total size; ``code`` numbers the instructions, and each buffer an instruction
declares (``allocactivation``, ``tensorview``) lists its users as ``@role instruction-number``.
Once memory is planned, each weight var and activation also shows its byte offset in its region, an instruction
whose kernel takes scratch buffers their sizes and offsets in the activations region, and the declare section closes
with the three region sizes:

    function main
    declare {
      %weights = WeightVar float<10 x 5> const // size: 200 // Users: @in 1
      ...
      ; size = 400 bytes
    }

    code {
      0 %fc = allocactivation  { Ty: float<3 x 5>} // size: 60 // Users: @out 1, @in 2, @out 3
      1 %fc_res = fullyconnected @out %fc, @in %input_1, @in %weights, @in %bias
      ...
    }
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from mlir import ir

from ..dialects import opdef_of
from ..dialects.optable import attr_to_python
from ..passes.conversion.ir_program import (
    REGIONS,
    SCRATCH_ATTR,
    UniqueNames,
    operand_roles,
    read_program,
    size_in_bytes,
)
from ..passes.conversion.ir_to_linalg import scratch_types

#: MLIR element type -> Glow's element kind name
_ELEMENT_NAMES = {"f32": "float", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
                  "f8E4M3FN": "float8e4m3fn", "f8E4M3FNUZ": "float8e4m3fnuz", "f8E5M2": "float8e5m2",
                  "f8E5M2FNUZ": "float8e5m2fnuz", "f4E2M1FN": "float4e2m1", "f8E8M0FNU": "float8e8m0",
                  "i64": "index64", "i32": "int32", "i8": "int8", "i1": "bool"}

#: glowir ops that declare a buffer in the code section: their users are listed, as Glow does
_DECLARING = ("glowir.alloc_activation", "glowir.tensor_view")


def glow_type(t: ir.Type) -> str:
    """Glow's spelling of a buffer type: ``float<3 x 5>``."""
    st = ir.ShapedType(t)
    elem = str(st.element_type)
    return f"{_ELEMENT_NAMES.get(elem, elem)}<{' x '.join(str(d) for d in st.shape)}>"


def _kind_name(op_name: str) -> str:
    """Glow's instruction kind name: ``glowir.fully_connected`` -> ``fullyconnected``."""
    return op_name.removeprefix("glowir.").replace("_", "")


def _code_ops(func_op: ir.Operation) -> list[ir.Operation]:
    """The ops after the weight vars, return excluded; ValueError for anything that is not glowir."""
    ops = []
    for op in func_op.operation.regions[0].blocks[0].operations:
        op = op.operation
        if op.name in ("glowir.weight_var", "func.return"):
            continue
        if not op.name.startswith("glowir.") or opdef_of(op) is None:
            raise ValueError(f"'{op.name}' at {op.location} is not a glowir op; the dump shows glowir programs only")
        ops.append(op)
    return ops


def _regions(op: ir.Operation) -> list[list[ir.Operation]]:
    """The instructions of each region of a loop (its body) or an if (then, else); none for another op."""
    return [[o.operation for o in r.blocks[0].operations][:-1] for r in op.regions]


def _body(op: ir.Operation) -> list[ir.Operation]:
    """Every instruction directly in the regions of a loop or an if, in order."""
    return [inner for region in _regions(op) for inner in region]


def _users(code: list[ir.Operation], prefix: str = "",
           users: dict[ir.Value, list[str]] | None = None) -> dict[ir.Value, list[str]]:
    """Each buffer's uses as ``@role number``, in instruction order; inside a loop numbered ``<loop>.<k>``."""
    users = {} if users is None else users
    for number, op in enumerate(code):
        for value, role in zip(op.operands, operand_roles(op), strict=True):
            users.setdefault(value, []).append(f"@{role} {prefix}{number}")
        _users(_body(op), f"{prefix}{number}.", users)
    return users


def _nested(op: ir.Operation) -> list[ir.Operation]:
    """Every instruction inside a loop, nested loops included."""
    return [x for inner in _body(op) for x in (inner, *_nested(inner))]


def _users_text(users: list[str]) -> str:
    return f" // Users: {', '.join(users)}" if users else ""


def _members(op: ir.Operation) -> list[str]:
    """The op's table attributes as Glow prints an instruction's members: ``Shuffle: [1, 0]``."""
    items = []
    for a in opdef_of(op).attrs:
        if a.name in op.attributes and a.name != "name":  # the name is printed as the %name
            value = attr_to_python(a.kind, op.attributes[a.name])
            text = "[" + ", ".join(str(x) for x in value) + "]" if isinstance(value, list) else str(value)
            items.append(f"{''.join(p.capitalize() for p in a.name.split('_'))}: {text}")
    return items


def _braces(items: list[str]) -> str:
    return "{ " + ", ".join(items) + "}"


def _scratch_text(op: ir.Operation) -> str:
    """`` // scratch: 64 bytes at 128`` for an instruction whose kernel's scratch buffers the plan placed."""
    if SCRATCH_ATTR not in op.attributes:
        return ""
    offsets = [int(x) for x in ir.DenseI64ArrayAttr(op.attributes[SCRATCH_ATTR])]
    sizes = [size_in_bytes(t) for t in scratch_types(op)]
    return " // scratch: " + ", ".join(f"{n} bytes at {o}" for n, o in zip(sizes, offsets, strict=True))


def _view_name(op: ir.Operation, source: str) -> str:
    """A view has no name attribute: it takes its location's name (the reshape's), else its source's."""
    loc = op.location
    return loc.name_str if loc.is_a_name() and loc.name_str else f"{source}_view"


def format_program(func_op: ir.Operation) -> str:
    """The Glow-style text of a glowir program (a ``func.func`` that convert-glowgraph-to-glowir produced)."""
    program = read_program(func_op)
    code = _code_ops(func_op)
    users = _users(code)
    # Glow prints buffers and instructions in one namespace
    namer = UniqueNames()
    names: dict[ir.Value, str] = {w.buffer: namer.take(w.name) for w in program.weights}

    lines = [f"function {program.name}", "declare {"]
    for w in program.weights:
        offset = f" // offset: {w.offset}" if w.offset is not None else ""
        lines.append(f"  %{names[w.buffer]} = WeightVar {glow_type(w.type)} {w.mutability}"
                     f" // size: {w.size_in_bytes}{offset}{_users_text(users.get(w.buffer, []))}")
    lines += ["", f"  ; size = {sum(w.size_in_bytes for w in program.weights)} bytes"]
    if program.memory is not None:
        regions = ", ".join(f"{r} {size} bytes" for r, size in zip(REGIONS, program.memory.sizes()))
        lines.append(f"  ; memory plan: {regions}")
    lines += ["}", "", "code {"]

    def name_of(v: ir.Value) -> str:
        if v not in names:
            raise ValueError(f"an operand of @{program.name} is not a glowir buffer: {v}")
        return names[v]

    def instruction(op: ir.Operation, number: str, indent: str) -> list[str]:
        roles = operand_roles(op)
        operands = ", ".join(f"@{role} %{name_of(v)}" for v, role in zip(op.operands, roles, strict=True))
        # Glow names an instruction after the buffer it writes (its @out operand comes first)
        base = "dealloc" if op.name == "glowir.dealloc_activation" else f"{name_of(op.operands[0])}_res"
        members = _members(op)
        text = f"%{namer.take(base)} = {_kind_name(op.name)} {operands}{' ' + _braces(members) if members else ''}"
        out = [f"{indent}{number} {text}{_scratch_text(op)}"]
        k = 0
        for r, region in enumerate(_regions(op)):  # a loop's body, an if's branches: one level in
            out[-1] += " {" if r == 0 else " else {"
            for inner in region:
                out.extend(instruction(inner, f"{number}.{k}", indent + "  "))
                k += 1
            out.append(f"{indent}}}")
        return out

    for number, op in enumerate(code):
        if op.name in _DECLARING:
            buf = op.results[0]
            if op.name == "glowir.alloc_activation":
                given = ir.StringAttr(op.attributes["name"]).value if "name" in op.attributes else ""
                names[buf] = namer.take(given or "allo")
                head, size = "allocactivation ", f" // size: {size_in_bytes(buf.type)}"
            else:
                src = name_of(op.operands[0])
                names[buf] = namer.take(_view_name(op, src))
                head, size = f"tensorview @in %{src}", ""
            members = _braces([f"Ty: {glow_type(buf.type)}", *_members(op)])
            text = f"%{names[buf]} = {head} {members}{size}{_users_text(users.get(buf, []))}"
        else:
            lines.extend(instruction(op, str(number), "  "))
            continue
        lines.append(f"  {number} {text}")
    lines.append("}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class IRStats:
    """How big a glowir program is: its instructions, its weights, and its activation memory."""

    name: str
    #: instructions that compute (declarations and deallocs excluded), by Glow kind name
    instructions: dict[str, int]
    constant_bytes: int
    mutable_bytes: int
    activations: int
    #: bytes of every activation allocated, as if none shared memory
    activation_bytes: int
    #: most activation bytes live at once, between each alloc and its dealloc
    peak_activation_bytes: int

    def __str__(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.instructions.items()))
        return "\n".join([
            f"glowir program @{self.name}",
            f"  instructions: {sum(self.instructions.values())} ({kinds})",
            f"  weights: {self.constant_bytes} bytes const, {self.mutable_bytes} bytes mutable",
            (f"  activations: {self.activations}, {self.activation_bytes} bytes allocated,"
             f" peak {self.peak_activation_bytes} bytes live"),
        ])


def program_stats(func_op: ir.Operation) -> IRStats:
    """Statistics of a glowir program."""
    program = read_program(func_op)
    kinds: Counter[str] = Counter()
    live: dict[ir.Value, int] = {}
    allocated = current = peak = count = 0
    for op in _code_ops(func_op):
        if op.name == "glowir.alloc_activation":
            size = size_in_bytes(op.results[0].type)
            live[op.results[0]] = size
            allocated += size
            current += size
            count += 1
            peak = max(peak, current)
        elif op.name == "glowir.dealloc_activation":
            current -= live.pop(op.operands[0], 0)
        elif op.name != "glowir.tensor_view":
            kinds[_kind_name(op.name)] += 1
            kinds.update(_kind_name(inner.name) for inner in _nested(op))
    return IRStats(
        name=program.name,
        instructions=dict(kinds),
        constant_bytes=sum(w.size_in_bytes for w in program.constants),
        mutable_bytes=sum(w.size_in_bytes for w in program.weights if w.mutability == "mutable"),
        activations=count,
        activation_bytes=allocated,
        peak_activation_bytes=peak,
    )
