"""The worker pool that multi-threaded kernels run on: one per process, written in MLIR's LLVM dialect and JIT
compiled once, its entry point handed to every program that calls it.

``cpu-parallel-to-pool`` turns each parallel loop into a task function ``task(ctx, i)`` and one call::

    glow_pool_run(task, ctx, n, threads)   // task(ctx, i) for every i in [0, n), on up to `threads` threads

The calling thread takes part; ``threads - 1`` workers are started on first use (``pthread_create``) and kept. The
pool keeps the workers of the widest loop so far, each with its number, and a loop of ``threads`` seats workers 0 to
``threads - 2`` (the job publishes ``generation << 32 | threads - 1``; a worker compares its number, no atomic
read-modify-write, so sixteen workers join without contending for one cache line), so a program compiled for 2
threads runs on 2 whatever ran before. The iterations are cut into one contiguous chunk per thread (the caller's
first, then worker k's), each with its own 64-bit ticket, ``generation << 32 | next index``, on a cache line of its
own: a thread claims its chunk's iterations in order with a compare-and-swap, then what is left in the chunks after
it, so a late thread loses work to the others and none waits; it adds the iterations it ran from a chunk to the
job's done count once, as it leaves the chunk. A worker that read the job of an earlier generation
cannot claim an index of the next one. The chunks give each core the same share of consecutive loops: in a network
the loops over output rows of one layer and the next, so that what a core wrote it reads back from its own cache
(mobilenet_v2 on two cores of a Xeon VM, in one process against one shared ticket that the threads took iterations
from in turn: 4.82 -> 3.76 ms, 4.87 -> 4.05 in a second run; resnet18 and light_resnet50 within the noise,
bert_tiny_encoder 0.69 -> 0.70, 0.83 -> 0.82 and 0.86 -> 0.84). The caller publishes a job by storing each chunk's
end and ticket (release), then bumps the 32-bit generation word the workers watch, and spins until every iteration
is done. A worker spins (``pause``) for :data:`SPIN_ROUNDS` rounds after its last job, so the kernels of one
inference find it awake (a hand-off costs well under a microsecond), then sleeps on the generation word (Linux
futex): an idle process takes no CPU. A call made while another is running (a second Python thread, or a task that
calls the pool), or one of 2^32 iterations or more (the tickets' index is 32 bits), runs its iterations on its own
thread.

Why not the async runtime that MLIR ships: its workers sleep on a condition variable after each task, and waking
them cost 10 us at best and up to milliseconds when the other core was busy, so kernels below 60 MFLOP stayed on one
thread; with this pool they split down to :data:`~glow_mlir.backend.cpu.PARALLEL_FLOPS`.
"""

from __future__ import annotations

import ctypes
import functools
import platform

from mlir import ir
from mlir.execution_engine import ExecutionEngine

from ..errors import CompileError

#: the pool's entry point, the one symbol a program needs from it
ENTRY = "glow_pool_run"
#: rounds of the pause instruction a worker spins through after its last job before it sleeps (~100-200 us)
SPIN_ROUNDS = 20000
#: the most chunks a job's iterations are cut into (one per thread; threads beyond it take iterations left in
#: others' chunks)
MAX_CHUNKS = 256
#: per machine: the futex system call's number and the spin-wait hint instruction
_MACHINES = {"x86_64": (202, "pause"), "amd64": (202, "pause"), "aarch64": (98, "yield"), "arm64": (98, "yield")}
FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE = 128, 129


def pool_text(machine: str | None = None) -> str:
    """The pool as an LLVM-dialect module for ``machine`` (``platform.machine()`` by default)."""
    machine = (machine or platform.machine()).lower()
    if machine not in _MACHINES:
        raise CompileError(f"no worker pool for this machine ({machine}): compile with threads=1")
    futex, hint = _MACHINES[machine]
    chunks = f"!llvm.array<{MAX_CHUNKS} x array<8 x i64>>"  # the chunks' type: [ticket, end, 6 x padding] each
    return f"""
module {{
  // per chunk of a job, on a cache line of its own: [ticket, end, 6 x padding]
  llvm.mlir.global internal @glow_pool_chunks(dense<0> : tensor<{MAX_CHUNKS}x8xi64>) {{alignment = 64 : i64}}
      : {chunks}
  llvm.mlir.global internal @glow_pool_parts(0 : i64) {{alignment = 64 : i64}} : i64
  llvm.mlir.global internal @glow_pool_generation(0 : i32) {{alignment = 64 : i64}} : i32
  llvm.mlir.global internal @glow_pool_done(0 : i64) {{alignment = 64 : i64}} : i64
  llvm.mlir.global internal @glow_pool_sleepers(0 : i32) {{alignment = 64 : i64}} : i32
  llvm.mlir.global internal @glow_pool_busy(0 : i32) {{alignment = 64 : i64}} : i32
  llvm.mlir.global internal @glow_pool_workers(0 : i64) {{alignment = 64 : i64}} : i64
  llvm.mlir.global internal @glow_pool_seats(0 : i64) {{alignment = 64 : i64}} : i64
  llvm.mlir.global internal @glow_pool_job_fn() {{alignment = 8 : i64}} : !llvm.ptr {{
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }}
  llvm.mlir.global internal @glow_pool_job_ctx() {{alignment = 8 : i64}} : !llvm.ptr {{
    %0 = llvm.mlir.zero : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }}
  llvm.func @pthread_create(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
  llvm.func @syscall(i64, ...) -> i64

  llvm.func internal @glow_pool_spin_hint() {{
    llvm.inline_asm has_side_effects "{hint}", "" : () -> ()
    llvm.return
  }}

  // Claim and run iterations of the job of generation %gen: those of chunk %p first, then those left in the
  // chunks after it, until none is left or the job is another one. The iterations run from one chunk are added to
  // the job's done count once, as the thread leaves the chunk: one atomic add on the shared count per chunk visited,
  // not one per iteration.
  llvm.func internal @glow_pool_work(%gen: i64, %p: i64) {{
    %chunks = llvm.mlir.addressof @glow_pool_chunks : !llvm.ptr
    %parts_at = llvm.mlir.addressof @glow_pool_parts : !llvm.ptr
    %done = llvm.mlir.addressof @glow_pool_done : !llvm.ptr
    %fn_at = llvm.mlir.addressof @glow_pool_job_fn : !llvm.ptr
    %ctx_at = llvm.mlir.addressof @glow_pool_job_ctx : !llvm.ptr
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c32 = llvm.mlir.constant(32 : i64) : i64
    %low = llvm.mlir.constant(4294967295 : i64) : i64
    %parts = llvm.load %parts_at atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %none = llvm.icmp "eq" %parts, %c0 : i64
    llvm.cond_br %none, ^exit, ^first
  ^first:
    %p0 = llvm.urem %p, %parts : i64
    llvm.br ^chunk(%c0 : i64)
  ^chunk(%r: i64):
    %more = llvm.icmp "ult" %r, %parts : i64
    llvm.cond_br %more, ^enter, ^exit
  ^enter:
    %kr = llvm.add %p0, %r : i64
    %k = llvm.urem %kr, %parts : i64
    %ticket = llvm.getelementptr %chunks[0, %k, 0] : (!llvm.ptr, i64) -> !llvm.ptr, {chunks}
    %end_at = llvm.getelementptr %chunks[0, %k, 1] : (!llvm.ptr, i64) -> !llvm.ptr, {chunks}
    llvm.br ^loop(%c0 : i64)
  ^loop(%ran: i64):
    %t = llvm.load %ticket atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %tgen = llvm.lshr %t, %c32 : i64
    %same = llvm.icmp "eq" %tgen, %gen : i64
    llvm.cond_br %same, ^check, ^leave(%ran, %c0 : i64, i64)
  ^check:
    // the ticket of this generation was stored (release) after the chunk's end: acquire above, the end is this job's;
    // a worker still in an earlier job that reads the next job's end (release, after this job closed the tickets)
    // then sees the closed ticket too, so its claim fails
    %end = llvm.load %end_at atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %index = llvm.and %t, %low : i64
    %left = llvm.icmp "ult" %index, %end : i64
    %r1 = llvm.add %r, %c1 : i64
    llvm.cond_br %left, ^claim, ^leave(%ran, %r1 : i64, i64)
  ^claim:
    %next = llvm.add %t, %c1 : i64
    %pair = llvm.cmpxchg %ticket, %t, %next acq_rel monotonic : !llvm.ptr, i64
    %won = llvm.extractvalue %pair[1] : !llvm.struct<(i64, i1)>
    llvm.cond_br %won, ^run, ^loop(%ran : i64)
  ^run:
    %fn = llvm.load %fn_at : !llvm.ptr -> !llvm.ptr
    %ctx = llvm.load %ctx_at : !llvm.ptr -> !llvm.ptr
    llvm.call %fn(%ctx, %index) : !llvm.ptr, (!llvm.ptr, i64) -> ()
    %ran1 = llvm.add %ran, %c1 : i64
    llvm.br ^loop(%ran1 : i64)
  ^leave(%count: i64, %to: i64):
    // the chunk's iterations this thread ran, added to the done count (release: their writes before it); then the
    // next chunk (%to), or none (0: the job is another one)
    %any = llvm.icmp "ne" %count, %c0 : i64
    llvm.cond_br %any, ^add, ^onward
  ^add:
    %old = llvm.atomicrmw add %done, %count release : !llvm.ptr, i64
    llvm.br ^onward
  ^onward:
    %go = llvm.icmp "ne" %to, %c0 : i64
    llvm.cond_br %go, ^chunk(%to : i64), ^exit
  ^exit:
    llvm.return
  }}

  // A worker: wait for a new generation (spinning, then asleep on the futex), work on it, wait again.
  llvm.func internal @glow_pool_worker(%arg: !llvm.ptr) -> !llvm.ptr {{
    %generation = llvm.mlir.addressof @glow_pool_generation : !llvm.ptr
    %sleepers = llvm.mlir.addressof @glow_pool_sleepers : !llvm.ptr
    %zero = llvm.mlir.constant(0 : i32) : i32
    %one = llvm.mlir.constant(1 : i32) : i32
    %rounds = llvm.mlir.constant({SPIN_ROUNDS} : i32) : i32
    %futex = llvm.mlir.constant({futex} : i64) : i64
    %wait = llvm.mlir.constant({FUTEX_WAIT_PRIVATE} : i64) : i64
    %seats = llvm.mlir.addressof @glow_pool_seats : !llvm.ptr
    %c32 = llvm.mlir.constant(32 : i64) : i64
    %low = llvm.mlir.constant(4294967295 : i64) : i64
    %one64 = llvm.mlir.constant(1 : i64) : i64
    %null = llvm.mlir.zero : !llvm.ptr
    // the argument: this worker's number << 32 | the generation when it was started
    %start64 = llvm.ptrtoint %arg : !llvm.ptr to i64
    %start = llvm.trunc %start64 : i64 to i32
    %id = llvm.lshr %start64, %c32 : i64
    llvm.br ^wait(%start, %zero : i32, i32)
  ^wait(%seen: i32, %spun: i32):
    %g = llvm.load %generation atomic acquire {{alignment = 4 : i64}} : !llvm.ptr -> i32
    %new = llvm.icmp "ne" %g, %seen : i32
    llvm.cond_br %new, ^work, ^idle
  ^idle:
    %more = llvm.icmp "ult" %spun, %rounds : i32
    llvm.cond_br %more, ^spin, ^sleep
  ^spin:
    llvm.call @glow_pool_spin_hint() : () -> ()
    %spun1 = llvm.add %spun, %one : i32
    llvm.br ^wait(%seen, %spun1 : i32, i32)
  ^sleep:
    %s0 = llvm.atomicrmw add %sleepers, %one seq_cst : !llvm.ptr, i32
    %seen64 = llvm.zext %seen : i32 to i64
    %r = llvm.call @syscall(%futex, %generation, %wait, %seen64, %null) vararg(!llvm.func<i64 (i64, ...)>)
        : (i64, !llvm.ptr, i64, i64, !llvm.ptr) -> i64
    %s1 = llvm.atomicrmw sub %sleepers, %one seq_cst : !llvm.ptr, i32
    llvm.br ^wait(%seen, %zero : i32, i32)
  ^work:
    // this worker takes part if the job is still this generation's and its number is below the job's helpers
    %g64 = llvm.zext %g : i32 to i64
    %w = llvm.load %seats atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %wgen = llvm.lshr %w, %c32 : i64
    %helpers = llvm.and %w, %low : i64
    %current = llvm.icmp "eq" %wgen, %g64 : i64
    %mine = llvm.icmp "ult" %id, %helpers : i64
    %open = llvm.and %current, %mine : i1
    llvm.cond_br %open, ^run, ^wait(%g, %zero : i32, i32)
  ^run:
    %p = llvm.add %id, %one64 : i64
    llvm.call @glow_pool_work(%g64, %p) : (i64, i64) -> ()
    llvm.br ^wait(%g, %zero : i32, i32)
  }}

  // The entry point's address, for the runtime to hand to programs.
  llvm.func @glow_pool_address() -> !llvm.ptr {{
    %entry = llvm.mlir.addressof @{ENTRY} : !llvm.ptr
    llvm.return %entry : !llvm.ptr
  }}

  // fn(ctx, i) for every i in [0, n), on this thread and up to threads - 1 workers.
  llvm.func @{ENTRY}(%fn: !llvm.ptr, %ctx: !llvm.ptr, %n: i64, %threads: i64) {{
    %chunks = llvm.mlir.addressof @glow_pool_chunks : !llvm.ptr
    %parts_at = llvm.mlir.addressof @glow_pool_parts : !llvm.ptr
    %generation = llvm.mlir.addressof @glow_pool_generation : !llvm.ptr
    %done = llvm.mlir.addressof @glow_pool_done : !llvm.ptr
    %sleepers = llvm.mlir.addressof @glow_pool_sleepers : !llvm.ptr
    %busy = llvm.mlir.addressof @glow_pool_busy : !llvm.ptr
    %workers = llvm.mlir.addressof @glow_pool_workers : !llvm.ptr
    %seats = llvm.mlir.addressof @glow_pool_seats : !llvm.ptr
    %fn_at = llvm.mlir.addressof @glow_pool_job_fn : !llvm.ptr
    %ctx_at = llvm.mlir.addressof @glow_pool_job_ctx : !llvm.ptr
    %worker = llvm.mlir.addressof @glow_pool_worker : !llvm.ptr
    %null = llvm.mlir.zero : !llvm.ptr
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c32 = llvm.mlir.constant(32 : i64) : i64
    %most = llvm.mlir.constant({MAX_CHUNKS} : i64) : i64
    %z32 = llvm.mlir.constant(0 : i32) : i32
    %o32 = llvm.mlir.constant(1 : i32) : i32
    %all = llvm.mlir.constant(2147483647 : i64) : i64
    %low = llvm.mlir.constant(4294967295 : i64) : i64
    %futex = llvm.mlir.constant({futex} : i64) : i64
    %wake = llvm.mlir.constant({FUTEX_WAKE_PRIVATE} : i64) : i64
    %several = llvm.icmp "sgt" %n, %c1 : i64
    %threaded = llvm.icmp "sgt" %threads, %c1 : i64
    %indexed = llvm.icmp "ult" %n, %low : i64
    %some = llvm.and %several, %threaded : i1
    %both = llvm.and %some, %indexed : i1
    llvm.cond_br %both, ^lock, ^serial(%c0 : i64)
  ^lock:
    %pair = llvm.cmpxchg %busy, %z32, %o32 acquire monotonic : !llvm.ptr, i32
    %mine = llvm.extractvalue %pair[1] : !llvm.struct<(i32, i1)>
    llvm.cond_br %mine, ^start, ^serial(%c0 : i64)
  ^start:
    %g0 = llvm.load %generation atomic monotonic {{alignment = 4 : i64}} : !llvm.ptr -> i32
    %want = llvm.sub %threads, %c1 : i64
    %have = llvm.load %workers : !llvm.ptr -> i64
    llvm.br ^spawn(%have : i64)
  ^spawn(%k: i64):
    %short = llvm.icmp "slt" %k, %want : i64
    llvm.cond_br %short, ^create, ^publish(%k : i64)
  ^create:
    %tid = llvm.alloca %c1 x i64 : (i64) -> !llvm.ptr
    %g0_64 = llvm.zext %g0 : i32 to i64
    %number = llvm.shl %k, %c32 : i64
    %tagged = llvm.or %number, %g0_64 : i64
    %arg = llvm.inttoptr %tagged : i64 to !llvm.ptr
    %err = llvm.call @pthread_create(%tid, %null, %worker, %arg) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
    %failed = llvm.icmp "ne" %err, %z32 : i32
    %k1 = llvm.add %k, %c1 : i64
    llvm.cond_br %failed, ^publish(%k : i64), ^spawn(%k1 : i64)
  ^publish(%count: i64):
    llvm.store %count, %workers : i64, !llvm.ptr
    llvm.store %fn, %fn_at : !llvm.ptr, !llvm.ptr
    llvm.store %ctx, %ctx_at : !llvm.ptr, !llvm.ptr
    llvm.store %c0, %done atomic monotonic {{alignment = 8 : i64}} : i64, !llvm.ptr
    %g1 = llvm.add %g0, %o32 : i32
    %g1_64 = llvm.zext %g1 : i32 to i64
    %t = llvm.shl %g1_64, %c32 : i64
    // the iterations in one contiguous chunk per thread: chunk k is [k n / parts, (k + 1) n / parts)
    %fewer = llvm.icmp "slt" %threads, %most : i64
    %parts = llvm.select %fewer, %threads, %most : i1, i64
    llvm.store %parts, %parts_at atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
    llvm.br ^cut(%c0 : i64)
  ^cut(%q: i64):
    %cutting = llvm.icmp "slt" %q, %parts : i64
    llvm.cond_br %cutting, ^chunk, ^seat
  ^chunk:
    %kn = llvm.mul %q, %n : i64
    %begin = llvm.udiv %kn, %parts : i64
    %q1 = llvm.add %q, %c1 : i64
    %q1n = llvm.mul %q1, %n : i64
    %end = llvm.udiv %q1n, %parts : i64
    %ticket = llvm.getelementptr %chunks[0, %q, 0] : (!llvm.ptr, i64) -> !llvm.ptr, {chunks}
    %end_at = llvm.getelementptr %chunks[0, %q, 1] : (!llvm.ptr, i64) -> !llvm.ptr, {chunks}
    llvm.store %end, %end_at atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
    %first = llvm.or %t, %begin : i64
    llvm.store %first, %ticket atomic release {{alignment = 8 : i64}} : i64, !llvm.ptr
    llvm.br ^cut(%q1 : i64)
  ^seat:
    %helpers = llvm.or %t, %want : i64
    llvm.store %helpers, %seats atomic monotonic {{alignment = 8 : i64}} : i64, !llvm.ptr
    llvm.store %g1, %generation atomic seq_cst {{alignment = 4 : i64}} : i32, !llvm.ptr
    %asleep = llvm.load %sleepers atomic seq_cst {{alignment = 4 : i64}} : !llvm.ptr -> i32
    %any = llvm.icmp "ne" %asleep, %z32 : i32
    llvm.cond_br %any, ^wake, ^join
  ^wake:
    %r = llvm.call @syscall(%futex, %generation, %wake, %all) vararg(!llvm.func<i64 (i64, ...)>)
        : (i64, !llvm.ptr, i64, i64) -> i64
    llvm.br ^join
  ^join:
    llvm.call @glow_pool_work(%g1_64, %c0) : (i64, i64) -> ()
    llvm.br ^finish
  ^finish:
    %d = llvm.load %done atomic acquire {{alignment = 8 : i64}} : !llvm.ptr -> i64
    %pending = llvm.icmp "ult" %d, %n : i64
    llvm.cond_br %pending, ^pause, ^unlock
  ^pause:
    llvm.call @glow_pool_spin_hint() : () -> ()
    llvm.br ^finish
  ^unlock:
    // close the tickets before the next job's fields are written: a worker still in glow_pool_work for this
    // generation compares its index with its chunk's end, which the next call overwrites before it stores its own
    // tickets; against that end it could claim an index past this job's chunk, on this ticket
    %closed = llvm.or %t, %low : i64
    llvm.br ^close(%c0 : i64)
  ^close(%c: i64):
    %closing = llvm.icmp "slt" %c, %parts : i64
    llvm.cond_br %closing, ^shut, ^release
  ^shut:
    %cticket = llvm.getelementptr %chunks[0, %c, 0] : (!llvm.ptr, i64) -> !llvm.ptr, {chunks}
    llvm.store %closed, %cticket atomic monotonic {{alignment = 8 : i64}} : i64, !llvm.ptr
    %c1next = llvm.add %c, %c1 : i64
    llvm.br ^close(%c1next : i64)
  ^release:
    llvm.store %z32, %busy atomic release {{alignment = 4 : i64}} : i32, !llvm.ptr
    llvm.return
  ^serial(%i: i64):
    %left = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %left, ^one, ^out
  ^one:
    llvm.call %fn(%ctx, %i) : !llvm.ptr, (!llvm.ptr, i64) -> ()
    %i1 = llvm.add %i, %c1 : i64
    llvm.br ^serial(%i1 : i64)
  ^out:
    llvm.return
  }}
}}
"""


#: the pool's engine and module: compiled once, never freed (its workers run its code)
_KEPT: list = []


@functools.cache
def address() -> int:
    """The address of :data:`ENTRY` in this process (the pool is compiled on first use)."""
    with ir.Context() as context, ir.Location.unknown():
        context.allow_unregistered_dialects = False
        module = ir.Module.parse(pool_text())
        engine = ExecutionEngine(module, opt_level=2)
        _KEPT.append((context, module, engine))
        # raw_lookup gives a function's packed wrapper, f(void **args), the result's slot last
        result = ctypes.c_void_p()
        slots = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(result), ctypes.c_void_p))
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup("glow_pool_address"))(slots)
        return result.value


__all__ = ["ENTRY", "SPIN_ROUNDS", "address", "pool_text"]
