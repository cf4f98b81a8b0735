"""Liveness of the buffers of a glowir program: the one analysis every glowir pass reads.

A program is its entry block, in order. Its buffers are *roots* (``weight_var``, ``alloc_activation``) and *views*
(``tensor_view``), each view a contiguous range of its root (:class:`Region`, in elements). Every op that is
neither a declaration nor a dealloc is an instruction, and each of its operands is an :class:`Access` of a region
with the operand's role from the op table: ``@in`` reads, ``@out`` writes the whole operand, ``@inout`` both.

What a pass asks:
- the accesses of a root in program order (:meth:`Liveness.accesses_of`), those overlapping a region;
- whether the value a region holds after some point is still read (:meth:`Liveness.read_later`), counting an
  output weight as read at the end of the program (its value leaves the program);
- whether two buffers can share storage around one instruction (:func:`interferes`), which copy elimination and
  buffer sharing both use.

A ``glowir.loop`` or ``glowir.if`` is one instruction at its place in the block: it reads and writes every buffer its
regions touch (:func:`operand_accesses`), so each of them lives across the whole loop or if; the passes leave the
regions as they are.

Positions are indices into the block at the time of the walk. The passes that merge buffers keep the analysis up to
date as they go (:meth:`Liveness.merged`, :meth:`Liveness.erased`): a merge moves only declarations and removes
ops, so the positions of instructions and deallocs keep their order. Others recompute it (it is one walk).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from mlir import ir

from ...dialects import opdef_of
from ..conversion.ir_program import INPUTS_ATTR, OUTPUTS_ATTR, element_size_in_bytes, is_program, operand_roles
from ..utils import functions

#: a root's kind: what the program may do with it
ACTIVATION, CONST, INPUT, OUTPUT, MUTABLE = "activation", "const", "input", "output", "mutable"
#: kinds whose value leaves the program: a write to them is never dead
LIVE_OUT = frozenset({OUTPUT})
#: kinds a pass may redirect writes into (inputs are read-only by contract, consts hold data)
WRITABLE = frozenset({ACTIVATION, OUTPUT})


class OpMap(dict):
    """A dict keyed by op objects by identity: an ``ir.Operation``'s hash changes when its operands do, so ops
    cannot key a plain dict across edits. Look ops up with the objects this analysis gave out."""

    def __getitem__(self, op: ir.Operation):
        return super().__getitem__(id(op))[1]

    def __setitem__(self, op: ir.Operation, value) -> None:
        super().__setitem__(id(op), (op, value))  # holding the op keeps its id unique

    def __contains__(self, op: object) -> bool:
        return super().__contains__(id(op))

    def pop(self, op: ir.Operation, *default):
        return super().pop(id(op), (None, *default))[1] if default else super().pop(id(op))[1]


@dataclass(frozen=True)
class Region:
    """``size`` elements of ``root`` starting at element ``start`` (views are contiguous row-major ranges)."""

    root: ir.Value
    start: int
    size: int

    def overlaps(self, other: Region) -> bool:
        return self.root == other.root and self.start < other.start + other.size and other.start < self.start + self.size

    def covers(self, other: Region) -> bool:
        return self.root == other.root and self.start <= other.start and other.start + other.size <= self.start + self.size


@dataclass(frozen=True)
class Access:
    """One operand of one instruction: the region it touches and how."""

    position: int
    op: ir.Operation
    operand: int
    role: str
    region: Region

    @property
    def reads(self) -> bool:
        return self.role in ("in", "inout")

    @property
    def writes(self) -> bool:
        return self.role in ("out", "inout")


def numel(t: ir.Type) -> int:
    """Elements of a statically shaped memref."""
    return int(np.prod(ir.ShapedType(t).shape, dtype=np.int64))


def byte_size(t: ir.Type) -> int:
    """Bytes of a statically shaped memref (a bool takes a byte, as it is stored)."""
    return numel(t) * element_size_in_bytes(ir.ShapedType(t).element_type)


def flat_offset(shape: list[int], offsets: list[int]) -> int:
    """The row-major element index of ``offsets`` in a buffer of ``shape``."""
    flat, stride = 0, 1
    for d, o in zip(reversed(shape), reversed(offsets)):
        flat += o * stride
        stride *= d
    return flat


def unflatten(shape: list[int], flat: int) -> list[int]:
    """Per-dimension offsets whose row-major index in ``shape`` is ``flat`` (the inverse of :func:`flat_offset`)."""
    out = []
    for d in reversed(shape):
        out.append(flat % d if d else 0)
        flat = flat // d if d else 0
    return out[::-1]


def programs(module: ir.Operation) -> list[ir.Operation]:
    """The glowir programs of a module (functions with a body naming their inputs and outputs)."""
    return [f for f in functions(module) if f.regions[0].blocks and is_program(f)]


def defining_op(value: ir.Value) -> ir.Operation | None:
    """The op that defines ``value``; None for a block argument."""
    return value.owner.operation if isinstance(value, ir.OpResult) else None


def is_instruction(op: ir.Operation) -> bool:
    """A glowir op that reads or writes buffers: neither a declaration nor a dealloc."""
    d = opdef_of(op)
    return d is not None and op.name.startswith("glowir.") and not ({"declaration", "dealloc"} & d.traits)


def operand_accesses(op: ir.Operation) -> list[tuple[ir.Value, str]]:
    """The (buffer, role) pairs of an instruction's operands. A loop's or an if's are its own operands, then each
    buffer its regions touch, nested ones included, once, in order: ``in`` where they only read it, else ``inout``:
    what one iteration writes the next may read, and what one branch writes the other may leave as it was (an
    :class:`Access` of such an instruction numbers these pairs, not its operands)."""
    own = list(zip(op.operands, operand_roles(op), strict=True))
    if not len(op.regions):
        return own
    roles: dict[ir.Value, str] = {}
    for region in op.regions:
        for inner in region.blocks[0].operations:
            if is_instruction(inner.operation):
                for v, role in operand_accesses(inner.operation):
                    roles[v] = "in" if roles.get(v, "in") == "in" and role == "in" else "inout"
    return [*own, *roles.items()]


def inplace_safe(op: ir.Operation, out_operand: int, in_operand: int) -> bool:
    """Whether ``op`` may write operand ``out_operand`` into the memory it reads as ``in_operand``.

    From the op table: an ``elementwise`` instruction computes dest[i] from the inputs' element i alone, so it may
    overwrite an input of the same type; any other op (matmul, transpose, convolution) reads other positions."""
    d = opdef_of(op)
    if d is None or "elementwise" not in d.traits:
        return False
    roles = operand_roles(op)
    return (roles[out_operand] == "out" and roles[in_operand] == "in"
            and op.operands[out_operand].type == op.operands[in_operand].type)


class Liveness:
    """The buffers, accesses and allocation points of one glowir program (a ``func.func`` with a body)."""

    def __init__(self, func_op: ir.Operation):
        self.func = func_op
        block = func_op.regions[0].blocks[0]
        self.ops: list[ir.Operation] = [op.operation for op in block.operations][:-1]  # the return is no buffer op
        attrs = func_op.attributes
        inputs = {ir.StringAttr(a).value for a in ir.ArrayAttr(attrs[INPUTS_ATTR])} if INPUTS_ATTR in attrs else set()
        outputs = {ir.StringAttr(a).value for a in ir.ArrayAttr(attrs[OUTPUTS_ATTR])} if OUTPUTS_ATTR in attrs else set()
        self.position: OpMap = OpMap()
        self.regions: dict[ir.Value, Region] = {}
        #: every value (the root and its views) whose region lies in each root
        self._values: dict[ir.Value, list[ir.Value]] = {}
        self.kinds: dict[ir.Value, str] = {}
        #: the op declaring each root and view
        self.definition: dict[ir.Value, ir.Operation] = {}
        self.deallocs: dict[ir.Value, list[ir.Operation]] = {}
        self._accesses: dict[ir.Value, list[Access]] = {}
        self._by_op: OpMap = OpMap()
        self.instructions: list[ir.Operation] = []
        for i, op in enumerate(self.ops):
            self.position[op] = i
            name = op.name
            if name == "glowir.weight_var":
                root = op.results[0]
                mutability = ir.StringAttr(op.attributes["mutability"]).value
                var = ir.StringAttr(op.attributes["name"]).value
                self.kinds[root] = (CONST if mutability == "const" else OUTPUT if var in outputs
                                    else INPUT if var in inputs else MUTABLE)
                self._declare_root(root, op)
            elif name == "glowir.alloc_activation":
                self.kinds[op.results[0]] = ACTIVATION
                self._declare_root(op.results[0], op)
            elif name == "glowir.tensor_view":
                src = self.regions[op.operands[0]]
                view = op.results[0]
                offsets = [int(x) for x in ir.DenseI64ArrayAttr(op.attributes["offsets"])] \
                    if "offsets" in op.attributes else []
                start = src.start + flat_offset(list(ir.ShapedType(op.operands[0].type).shape), offsets)
                self._declare_view(view, Region(src.root, start, numel(view.type)), op)
            elif name == "glowir.dealloc_activation":
                self.deallocs.setdefault(self.regions[op.operands[0]].root, []).append(op)
            elif is_instruction(op):
                self.instructions.append(op)
                mine = self._by_op[op] = []
                for k, (v, role) in enumerate(operand_accesses(op)):
                    access = Access(i, op, k, role, self.regions[v])
                    self._accesses[access.region.root].append(access)
                    mine.append(access)

    def _declare_root(self, root: ir.Value, op: ir.Operation) -> None:
        self.regions[root] = Region(root, 0, numel(root.type))
        self.definition[root] = op
        self._accesses[root] = []
        self._values[root] = [root]

    def _declare_view(self, view: ir.Value, region: Region, op: ir.Operation) -> None:
        self.regions[view] = region
        self.definition[view] = op
        self._values[region.root].append(view)

    # --- updates, for passes that edit as they go -----------------------------------------------------------------

    def merged(self, a: ir.Value, target: Region, replacement: ir.Value) -> None:
        """Record that root ``a`` now lives in ``target``: its uses became uses of ``replacement`` (the target's
        root, or a new view of it) and its declaration is gone. Deallocs are the caller's (it moves them)."""
        root, shift = target.root, target.start
        if replacement not in self.regions:
            self._declare_view(replacement, target, defining_op(replacement))
        for v in self._values.pop(a):
            if v != a:
                r = self.regions[v]
                self.regions[v] = Region(root, shift + r.start, r.size)
                self._values[root].append(v)
        del self.regions[a], self.kinds[a], self.definition[a]
        moved = [replace(x, region=Region(root, shift + x.region.start, x.region.size)) for x in self._accesses.pop(a)]
        for x in moved:
            self._by_op[x.op][x.operand] = x
        self._accesses[root] = sorted(self._accesses[root] + moved, key=lambda x: (x.position, x.operand))

    def erased(self, op: ir.Operation) -> None:
        """Forget instruction or view ``op``, about to be erased."""
        if op in self._by_op:
            for x in self._by_op.pop(op):
                self._accesses[x.region.root].remove(x)
            self.instructions.remove(op)
        elif op.name == "glowir.tensor_view":
            view = op.results[0]
            self._values[self.regions.pop(view).root].remove(view)
            del self.definition[view]

    # --- queries -------------------------------------------------------------------------------------------------

    @property
    def roots(self) -> list[ir.Value]:
        """Every weight var and activation, in declaration order."""
        return list(self.kinds)

    def accesses_of(self, root: ir.Value) -> list[Access]:
        """Every access of ``root``, through any view, in program order."""
        return self._accesses[root]

    def accesses_of_op(self, op: ir.Operation) -> list[Access]:
        """The accesses of one instruction, operand by operand."""
        return self._by_op[op]

    def overlapping(self, region: Region) -> list[Access]:
        """The accesses touching any element of ``region``, in program order."""
        return [a for a in self._accesses[region.root] if a.region.overlaps(region)]

    def window(self, root: ir.Value) -> tuple[int, int] | None:
        """Positions of the first and last instruction touching ``root``; None when nothing does."""
        acc = self._accesses[root]
        return (acc[0].position, acc[-1].position) if acc else None

    def read_later(self, region: Region, position: int, ignore: OpMap | None = None) -> bool:
        """Whether the value ``region`` holds just after ``position`` may be read: some later access reads part of
        it before an access writes all of it, or nothing writes it again and its root's value leaves the program.
        Accesses by the instructions in ``ignore`` (about to be erased) do not count."""
        overwritten_at = None
        for a in self.overlapping(region):
            if a.position <= position or (ignore is not None and a.op in ignore):
                continue
            if overwritten_at is not None and a.position > overwritten_at:
                return False
            if a.reads:  # an instruction reads its inputs before it writes: a read at the overwrite still counts
                return True
            if a.region.covers(region):
                overwritten_at = a.position
        return overwritten_at is None and self.kinds[region.root] in LIVE_OUT

    def interval(self, root: ir.Value) -> tuple[int, int]:
        """An activation's allocation interval: the positions of its alloc and its (last) dealloc, inclusive;
        one never freed lives to the end of the program."""
        start = self.position[self.definition[root]]
        frees = self.deallocs.get(root, [])
        return start, max((self.position[d] for d in frees), default=len(self.ops))

    def activations(self) -> list[ir.Value]:
        """The alloc_activation buffers, in allocation order."""
        return [r for r, k in self.kinds.items() if k == ACTIVATION]


def interferes(lv: Liveness, a: ir.Value, target: Region, at: ir.Operation, a_operand: int, t_operand: int) -> bool:
    """Whether activation ``a`` can NOT live in ``target`` (a range of another root) for its whole life.

    The two meet at instruction ``at``, which writes one of them from the other in place (a copy, or an elementwise
    op: :func:`inplace_safe`), through operands ``a_operand`` and ``t_operand``. They can share memory when ``at`` is
    where one value dies and the other is born:

    - ``at`` is ``a``'s first access and writes it from ``target``, whose value is never read after ``at``;
    - or ``at`` is ``a``'s last access and reads it into ``target``, which it writes whole.

    Nothing else may touch ``target`` during ``a``'s life; other operands of ``at`` may only read the dying value
    through the very same range (an elementwise op reading a shifted range of its output would read values it
    already overwrote). ``target`` must be writable: an activation or an output, never an input or a constant.
    """
    if lv.kinds.get(a) != ACTIVATION or lv.kinds[target.root] not in WRITABLE or target.root == a:
        return True
    if target.size != numel(a.type) or ir.ShapedType(a.type).element_type != ir.ShapedType(target.root.type).element_type:
        return True
    if lv.regions[at.operands[a_operand]] != lv.regions[a] or lv.regions[at.operands[t_operand]] != target:
        return True
    roles = operand_roles(at)
    born = roles[a_operand] == "out"
    if not (inplace_safe(at, a_operand, t_operand) if born else inplace_safe(at, t_operand, a_operand)):
        return True
    first, last = lv.window(a) or (-1, -1)
    here = lv.position[at]
    if here != (first if born else last):
        return True
    if any(first <= x.position <= last and x.position != here for x in lv.overlapping(target)):
        return True
    dying = target if born else lv.regions[a]
    for k, v in enumerate(at.operands):
        r = lv.regions[v]
        if k not in (a_operand, t_operand) and (r.root == a or r.overlaps(target)) and (r != dying or roles[k] != "in"):
            return True
    # born here: the target's value must not be needed once `a` has taken its place (outputs are read at the end)
    return born and lv.read_later(target, last)


def shares_value(lv: Liveness, a: ir.Value, source: Region, copy: ir.Operation) -> bool:
    """Whether activation ``a``, written whole by ``copy`` from ``source`` and then only read, may read ``source``
    instead: nothing writes ``a`` but the copy, and nothing writes ``source`` while ``a`` is read."""
    if lv.kinds.get(a) != ACTIVATION or source.root == a or source.size != numel(a.type):
        return False
    if ir.ShapedType(a.type).element_type != ir.ShapedType(source.root.type).element_type:
        return False
    accesses = lv.accesses_of(a)
    if not accesses or accesses[0].op != copy or accesses[0].region != lv.regions[a]:
        return False
    if any(x.writes for x in accesses[1:]):
        return False
    last = accesses[-1].position
    return not any(x.writes and lv.position[copy] < x.position <= last for x in lv.overlapping(source))
