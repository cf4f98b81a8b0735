"""Building and applying transform-dialect schedules from Python.

A schedule is built as a ``transform.named_sequence @__transform_main`` in a module of its own, then applied to the
payload with ``transform.interpreter.apply_named_sequence``. These helpers build the recurring steps of the CPU
recipe (shared/NOTES-mlir.md): canonicalize + CSE over every function, and rounds of
``loop.hoist_loop_invariant_subsets`` over every ``scf.for`` (the step that keeps an accumulator tile in registers
across the reduction loop: it works on tensors, before bufferization, and does nothing after it).
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import interpreter, loop, structured
from mlir.dialects.transform import tensor as transform_tensor

#: the name the interpreter looks for
ENTRY = "__transform_main"


def any_op() -> ir.Type:
    return transform.AnyOpType.get()


def functions(root: ir.Value) -> ir.Value:
    """A handle to every func.func under ``root``."""
    return structured.MatchOp.match_op_names(root, ["func.func"]).result


def for_each(handle: ir.Value, body: Callable[[ir.Value], None]) -> None:
    """``body(one)`` for each payload op of ``handle`` (some transform ops take exactly one target)."""
    each = transform.ForeachOp([], [handle])
    with ir.InsertionPoint(each.body):
        body(each.bodyTargets[0])
        transform.YieldOp([])


def canonicalize(funcs: ir.Value, fold_into_transfers: bool = False) -> None:
    """Canonicalize then CSE each of ``funcs``; with ``fold_into_transfers``, tensor slices also fold into the vector
    transfers that read or write them (only after hoisting: folding first leaves the accumulator re-read)."""
    def one(func: ir.Value) -> None:
        patterns = transform.ApplyPatternsOp(func)
        with ir.InsertionPoint(patterns.patterns):
            if fold_into_transfers:
                transform_tensor.ApplyFoldTensorSubsetOpsIntoVectorTransfersPatternsOp()
            transform.ApplyCanonicalizationPatternsOp()
        transform.ApplyCommonSubexpressionEliminationOp(func)

    for_each(funcs, one)


def peel_remainder(target: ir.Value) -> None:
    """Split ``target``, an scf.for (static bounds, a step that does not divide them), into the loop over its whole
    steps and the last, shorter iteration, whose tiles canonicalization makes static: that of the functions holding
    it only, as other kernels' islands may still wait for their own schedule (canonicalized before it, a 1x1
    convolution's image-row islands were left untiled and vectorized whole:
    test/lit/codegen/cpu-tile-kernels-peel.mlir)."""
    loop_type = transform.OperationType.get("scf.for")
    funcs = transform.GetParentOp(any_op(), target, op_name="func.func", deduplicate=True).result
    cast = transform.CastOp(loop_type, target).output
    loop.LoopPeelOp(loop_type, loop_type, cast)
    canonicalize(funcs)


def hoist_subsets(root: ir.Value, rounds: int = 3) -> None:
    """``rounds`` rounds of loop-invariant subset hoisting over every scf.for under ``root`` (a single op: match
    takes one target; one round hoists out of one loop level)."""
    for _ in range(rounds):
        for_each(structured.MatchOp.match_op_names(root, ["scf.for"]).result, loop.HoistLoopInvariantSubsetsOp)


def whole(sizes: list[int], extents: list[int]) -> list[int]:
    """Tile sizes with those equal to their dim's extent as 0 (untiled: ``structured.fuse`` failed, "replacement
    value 0", on a one-iteration loop)."""
    return [0 if s == e else s for s, e in zip(sizes, extents)]


def fuse(target: ir.Value, sizes: list[int], forall: bool = False, interchange: list[int] | None = None) -> ir.Value:
    """Tile ``target`` by ``sizes`` (its loops in the order ``interchange``, default the dims') and fuse its producers
    into the loops; the tiled op's handle."""
    if not any(sizes):
        return target
    return structured.FuseOp(target, tile_sizes=sizes, tile_interchange=interchange, apply_cleanup=True,
                             use_forall=forall).transformed


#: what the bindings say where the transform interpreter failed without a diagnostic of its own (an op of the
#: schedule that fails with no message: a tile interchange that is no permutation)
_NO_DIAGNOSTIC = "Diagnostic message"


def apply(payload: ir.Operation, build: Callable[[ir.Value], None], what: str = "") -> None:
    """Build a schedule with ``build(root handle)`` and apply it to ``payload`` (a builtin.module); ``what`` names the
    schedule in the error should the interpreter fail (a ValueError, as the bindings raise it, with MLIR's
    diagnostic)."""
    with payload.context, ir.Location.unknown():
        schedule = ir.Module.create()
        schedule.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        with ir.InsertionPoint(schedule.body):
            main = transform.NamedSequenceOp(ENTRY, [any_op()], [],
                                             arg_attrs=[{"transform.readonly": ir.UnitAttr.get()}])
            with ir.InsertionPoint(main.body):
                build(main.bodyTarget)
                transform.YieldOp([])
        try:
            interpreter.apply_named_sequence(payload, main.operation, schedule.operation)
        except ValueError as exc:
            reason = str(exc).strip()
            if reason.endswith(_NO_DIAGNOSTIC):
                reason = reason[:-len(_NO_DIAGNOSTIC)].strip() + " (the transform interpreter gave no diagnostic)"
            raise ValueError(reason + (f" Schedule: {what}." if what else "")) from None
