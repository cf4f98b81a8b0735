"""Typing of the loop ops of both dialects.

glowgraph has no loop op of its own: a loop in a graph is upstream ``scf.for`` (a known trip count) or ``scf.while``
(a condition the body computes; a trip count known only at run time is folded into that condition) on tensors. IRDL
binds one type to all the values of a variadic operand or result, so an op of ours could not carry loop-carried
values of different types; scf's ops can, and come with their verifiers and terminators. What glowgraph adds are
the steps inside a loop:

- ``iteration(%iv)``: the iteration number of the loop (its ``index`` induction variable) as a ``tensor<i64>``;
- ``step_slice(x, i)``: ``x[i]`` along dim 0 (Scan's input, a recurrent layer's projected input at step i);
- ``step_insert(dest, x, i)``: ``dest`` with ``dest[i] = x`` along dim 0 (a scan output, threaded as a loop-carried
  value).

glowir ``loop(counter, condition) {max_trip, has_condition}`` has one region, its body (one block, no arguments,
ending in the dialects' terminator ``gpu.yield``), whose instructions read and write the program's buffers directly.
Before each iteration the loop writes the iteration number into ``counter`` (a ``memref<i64>``); it runs while that
number is below ``max_trip`` and, with ``has_condition`` = 1, while ``condition`` (a ``memref<i1>`` the body writes)
holds. The IR passes see the loop as one instruction that reads and writes every buffer its body touches
(passes/ir/liveness.py), so each of them lives across the whole loop and the memory plan places it once.

An ``scf.if`` of a graph (If on a condition computed at run time) becomes glowir ``if(condition)`` with a then and an
else region of the same kind, seen by the IR passes the same way: one instruction touching every buffer either
branch touches, a buffer one branch writes and the other may not counting as read too (its old value may survive).
"""

from __future__ import annotations

from mlir import ir

from .optable import TERMINATOR, OpInfo, VerifyError, tensor_like


def _body(info: OpInfo, k: int = 0) -> tuple[ir.Block, ir.Operation]:
    """The one block of region ``k`` and its terminator."""
    op = info.operation
    if op is None:
        raise VerifyError("an op with regions is checked on the op itself")
    region = op.regions[k]
    blocks = list(region.blocks)
    if len(blocks) != 1:
        raise VerifyError(f"the body must have one block, got {len(blocks)}")
    ops = list(blocks[0].operations)
    if not ops or ops[-1].operation.name != TERMINATOR:
        raise VerifyError(f"the body must end in {TERMINATOR}")
    return blocks[0], ops[-1].operation


def _scalar(t: ir.Type, elem: str) -> bool:
    return isinstance(t, (ir.RankedTensorType, ir.MemRefType)) and ir.ShapedType(t).rank == 0 \
        and str(ir.ShapedType(t).element_type) == elem


def iteration(info: OpInfo) -> list[ir.Type]:
    """Iteration(index) -> tensor<i64>."""
    return [ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))]


def ir_loop(info: OpInfo) -> None:
    """glowir.loop: a memref<i64> counter, a memref<i1> condition, a body of one block without arguments."""
    if info.attrs["max_trip"] < 0:
        raise VerifyError(f"max_trip must not be negative, got {info.attrs['max_trip']}")
    if info.attrs["has_condition"] not in (0, 1):
        raise VerifyError(f"has_condition must be 0 or 1, got {info.attrs['has_condition']}")
    for k, (what, elem) in enumerate((("counter", "i64"), ("condition", "i1"))):
        if not _scalar(info.operand_types[k], elem):
            raise VerifyError(f"the {what} must be a memref<{elem}>, got {info.operand_types[k]}")
    block, yields = _body(info)
    if len(block.arguments) or len(yields.operands):
        raise VerifyError("the body takes no arguments and yields nothing: it reads and writes buffers")


def ir_if(info: OpInfo) -> None:
    """glowir.if: a memref<i1> condition; then and else, one block each without arguments."""
    if not _scalar(info.operand_types[0], "i1"):
        raise VerifyError(f"the condition must be a memref<i1>, got {info.operand_types[0]}")
    for k in range(2):
        block, yields = _body(info, k)
        if len(block.arguments) or len(yields.operands):
            raise VerifyError("a branch takes no arguments and yields nothing: it reads and writes buffers")


def step_slice(info: OpInfo) -> list[ir.Type]:
    """StepSlice(input, index): input[index] along dim 0, the index a 0-d i64."""
    shape = info.shape(0)
    if not shape:
        raise VerifyError("the input must have at least one dimension")
    if not _scalar(info.operand_types[1], "i64"):
        raise VerifyError(f"the index must be a 0-d i64, got {info.operand_types[1]}")
    return [tensor_like(info.operand_types[0], shape[1:])]


def step_slice_instr(info: OpInfo) -> None:
    """StepSlice(dest, src, index): dest = src[index] along dim 0."""
    want = step_slice(OpInfo(info.operand_types[1:], info.attrs, []))
    if str(want[0]) != str(info.operand_types[0]):
        raise VerifyError(f"@out buffer {info.operand_types[0]} does not match the type {want[0]} computed from "
                          "the @in operands")


def step_insert_node(info: OpInfo) -> list[ir.Type]:
    """StepInsert(dest, input, index) -> dest's type."""
    step_insert(info)
    return [info.operand_types[0]]


def step_insert(info: OpInfo) -> None:
    """StepInsert(dest, src, index): dest[index] = src along dim 0."""
    dest, src = info.shape(0), info.shape(1)
    if not dest or dest[1:] != src or info.elem(0) != info.elem(1):
        raise VerifyError(f"the source {info.operand_types[1]} must be one step of the dest {info.operand_types[0]}")
    if not _scalar(info.operand_types[2], "i64"):
        raise VerifyError(f"the index must be a 0-d i64, got {info.operand_types[2]}")
