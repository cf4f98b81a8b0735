"""The worker pool (glow_mlir.backend.pool): every iteration run exactly once, from one caller or several at once,
and idle workers asleep."""

from __future__ import annotations

import ctypes
import os
import threading
import time

import numpy as np
import pytest
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from glow_mlir.backend import pool
from glow_mlir.errors import CompileError

#: out[i] += 2 * i for i in [0, n), `reps` parallel calls of the pool on `threads` threads
DRIVER = """
module {
  llvm.func @glow_pool_run(!llvm.ptr, !llvm.ptr, i64, i64)
  llvm.func @task(%ctx: !llvm.ptr, %i: i64) {
    %p = llvm.getelementptr %ctx[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %two = llvm.mlir.constant(2 : i64) : i64
    %v = llvm.mul %i, %two : i64
    %old = llvm.load %p : !llvm.ptr -> i64
    %new = llvm.add %old, %v : i64
    llvm.store %new, %p : i64, !llvm.ptr
    llvm.return
  }
  llvm.func @drive(%out: !llvm.ptr, %n: i64, %threads: i64, %reps: i64) {
    %f = llvm.mlir.addressof @task : !llvm.ptr
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    llvm.br ^head(%c0 : i64)
  ^head(%r: i64):
    %more = llvm.icmp "slt" %r, %reps : i64
    llvm.cond_br %more, ^body, ^exit
  ^body:
    llvm.call @glow_pool_run(%f, %out, %n, %threads) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
    %r1 = llvm.add %r, %c1 : i64
    llvm.br ^head(%r1 : i64)
  ^exit:
    llvm.return
  }
}
"""


#: @spin(): a task's busy wait, 200k pause rounds (a millisecond or so), for the modules below
SPIN = """
  llvm.func @spin() {
    %zero = llvm.mlir.constant(0 : i64) : i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %rounds = llvm.mlir.constant(200000 : i64) : i64
    llvm.br ^spin(%zero : i64)
  ^spin(%k: i64):
    %more = llvm.icmp "slt" %k, %rounds : i64
    llvm.cond_br %more, ^pause, ^out
  ^pause:
    llvm.inline_asm has_side_effects "pause", "" : () -> ()
    %k1 = llvm.add %k, %one : i64
    llvm.br ^spin(%k1 : i64)
  ^out:
    llvm.return
  }
"""


#: counts the threads inside a task at once: ctx = [inside, most]; each task stays in @spin
CROWD = """
module {
  llvm.func @glow_pool_run(!llvm.ptr, !llvm.ptr, i64, i64)
""" + SPIN + """
  llvm.func @task(%ctx: !llvm.ptr, %i: i64) {
    %most_at = llvm.getelementptr %ctx[1] : (!llvm.ptr) -> !llvm.ptr, i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %before = llvm.atomicrmw add %ctx, %one seq_cst : !llvm.ptr, i64
    %now = llvm.add %before, %one : i64
    %old = llvm.atomicrmw max %most_at, %now seq_cst : !llvm.ptr, i64
    llvm.call @spin() : () -> ()
    %after = llvm.atomicrmw sub %ctx, %one seq_cst : !llvm.ptr, i64
    llvm.return
  }
  llvm.func @crowd(%ctx: !llvm.ptr, %n: i64, %threads: i64) {
    %f = llvm.mlir.addressof @task : !llvm.ptr
    llvm.call @glow_pool_run(%f, %ctx, %n, %threads) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
    llvm.return
  }
}
"""


#: alternate(a, b, na, nb, reps): `reps` times a loop of na iterations over a, then one of nb over b (atomic += 1)
ALTERNATE = """
module {
  llvm.func @glow_pool_run(!llvm.ptr, !llvm.ptr, i64, i64)
  llvm.func @task(%ctx: !llvm.ptr, %i: i64) {
    %p = llvm.getelementptr %ctx[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %old = llvm.atomicrmw add %p, %one monotonic : !llvm.ptr, i64
    llvm.return
  }
  llvm.func @alternate(%a: !llvm.ptr, %b: !llvm.ptr, %na: i64, %nb: i64, %reps: i64) {
    %f = llvm.mlir.addressof @task : !llvm.ptr
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c2 = llvm.mlir.constant(2 : i64) : i64
    llvm.br ^head(%c0 : i64)
  ^head(%r: i64):
    %more = llvm.icmp "slt" %r, %reps : i64
    llvm.cond_br %more, ^body, ^exit
  ^body:
    llvm.call @glow_pool_run(%f, %a, %na, %c2) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
    llvm.call @glow_pool_run(%f, %b, %nb, %c2) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
    %r1 = llvm.add %r, %c1 : i64
    llvm.br ^head(%r1 : i64)
  ^exit:
    llvm.return
  }
}
"""


#: who(ctx, n, threads): ctx[i] = the thread (pthread_self) that ran iteration i, each iteration in @spin first
WHO = """
module {
  llvm.func @glow_pool_run(!llvm.ptr, !llvm.ptr, i64, i64)
""" + SPIN + """
  llvm.func @pthread_self() -> i64
  llvm.func @task(%ctx: !llvm.ptr, %i: i64) {
    llvm.call @spin() : () -> ()
    %self = llvm.call @pthread_self() : () -> i64
    %p = llvm.getelementptr %ctx[%i] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    llvm.store %self, %p : i64, !llvm.ptr
    llvm.return
  }
  llvm.func @who(%ctx: !llvm.ptr, %n: i64, %threads: i64) {
    %f = llvm.mlir.addressof @task : !llvm.ptr
    llvm.call @glow_pool_run(%f, %ctx, %n, %threads) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
    llvm.return
  }
}
"""


def _packed(engine: ExecutionEngine, name: str, *types):
    """The packed wrapper of ``name`` (``f(void **args)``) as a Python function of ``types``."""
    function = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup(name))

    def call(*args) -> None:
        values = [t(a) for t, a in zip(types, args, strict=True)]
        function((ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values]))

    return call


@pytest.fixture(scope="module")
def drive():
    """drive(out, n, threads, reps): the driver above, JIT compiled against the process's pool."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(DRIVER)
        engine = ExecutionEngine(module, opt_level=2)
        engine.raw_register_runtime(pool.ENTRY, ctypes.c_void_p(pool.address()))
        packed = _packed(engine, "drive", ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
        yield lambda out, n, threads, reps: packed(out.ctypes.data, n, threads, reps)


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 1000])
def test_every_iteration_runs_once_per_call(drive, n: int, threads: int) -> None:
    out = np.zeros(max(n, 1), np.int64)
    drive(out, n, threads, 50)
    np.testing.assert_array_equal(out[:n], np.arange(n) * 2 * 50)


def test_calls_of_fewer_threads_after_more(drive) -> None:
    # each call cuts its loop into as many chunks as it has threads: a worker still in the loop of a call of 4
    # threads holds that call's chunk count while a call of 2 starts (closed tickets and a newer generation stop it)
    out = np.zeros(64, np.int64)
    for _ in range(200):
        for threads in (4, 2, 3):
            drive(out, 64, threads, 5)
    np.testing.assert_array_equal(out, np.arange(64) * 2 * 5 * 600)


def test_two_callers_at_once(drive) -> None:
    # the second caller finds the pool busy and runs its iterations itself: both results exact
    outs = [np.zeros(64, np.int64) for _ in range(3)]
    callers = [threading.Thread(target=drive, args=(out, 64, 2, 3000)) for out in outs]
    for c in callers:
        c.start()
    for c in callers:
        c.join()
    for out in outs:
        np.testing.assert_array_equal(out, np.arange(64) * 2 * 3000)


def test_a_late_worker_claims_nothing_of_the_next_loop() -> None:
    # A worker still in the loop of one call compared its index with the job size, which the next call overwrites
    # before it publishes its own ticket: against the next, bigger size it claimed index 2 of a finished 2-iteration
    # loop (a[2] written, or b[2] run twice), a few times per million calls before the ticket was closed on return.
    with ir.Context(), ir.Location.unknown():
        engine = ExecutionEngine(ir.Module.parse(ALTERNATE), opt_level=2)
        engine.raw_register_runtime(pool.ENTRY, ctypes.c_void_p(pool.address()))
        alternate = _packed(engine, "alternate", *[ctypes.c_void_p] * 2, *[ctypes.c_int64] * 3)
        reps = 500_000
        a, b = np.zeros(64, np.int64), np.zeros(64, np.int64)
        alternate(a.ctypes.data, b.ctypes.data, 2, 64, reps)
    np.testing.assert_array_equal(a, np.r_[np.full(2, reps), np.zeros(62, np.int64)])
    np.testing.assert_array_equal(b, np.full(64, reps))


def test_a_loop_uses_at_most_its_threads(drive) -> None:
    # the pool keeps the workers of the widest loop so far; a narrower loop seats only threads - 1 of them
    drive(np.zeros(8, np.int64), 8, 4, 10)  # 3 workers now
    with ir.Context(), ir.Location.unknown():
        engine = ExecutionEngine(ir.Module.parse(CROWD), opt_level=2)
        engine.raw_register_runtime(pool.ENTRY, ctypes.c_void_p(pool.address()))
        crowd = _packed(engine, "crowd", ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
        for threads in (2, 1):
            counters = np.zeros(2, np.int64)
            crowd(counters.ctypes.data, 12, threads)
            assert counters[0] == 0 and 1 <= counters[1] <= threads, (threads, counters)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two cores: on one, a worker runs whatever the caller leaves")
def test_each_thread_runs_a_contiguous_chunk(drive) -> None:
    # Iteration i goes to the thread of chunk i x threads / n first (the caller's is chunk 0), so that a loop over
    # output rows gives each core the same rows in consecutive kernels: what one layer wrote into a core's cache, the
    # next one reads there (mobilenet_v2 on two cores 4.8 -> 3.8 ms). A thread that is done takes what is left in the
    # others' chunks; a worker that came late may lose part of its chunk to the caller (a loaded machine: in one CI
    # run five tries in a row), so each try first wakes the worker, and up to 40 tries. One ticket for all (the pool
    # before) gives the caller the next iteration whenever it is done, never 0-3 alone.
    drive(np.zeros(2, np.int64), 2, 2, 1)  # the worker exists
    with ir.Context(), ir.Location.unknown():
        engine = ExecutionEngine(ir.Module.parse(WHO), opt_level=2)
        engine.raw_register_runtime(pool.ENTRY, ctypes.c_void_p(pool.address()))
        who = _packed(engine, "who", ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
        seen = []
        for _ in range(40):
            drive(np.zeros(2, np.int64), 2, 2, 1)  # the worker awake, spinning for the next call
            ran = np.zeros(8, np.int64)
            who(ran.ctypes.data, 8, 2)
            seen.append([int(np.flatnonzero(ran == t)[0]) for t in dict.fromkeys(ran.tolist())])
            seen = seen[-5:]
            caller = ran[0]
            if (ran[:4] == caller).all() and (ran[4:] == ran[4]).all() and ran[4] != caller:
                return
    pytest.fail(f"no call ran iterations 0-3 on the caller and 4-7 on the worker; first iteration per thread: {seen}")


def test_idle_workers_sleep(drive) -> None:
    drive(np.zeros(8, np.int64), 8, 2, 100)
    time.sleep(0.5)  # the workers' spin (SPIN_ROUNDS pauses) ends long before
    before = os.times()
    time.sleep(1.0)
    after = os.times()
    busy = (after.user - before.user) + (after.system - before.system)
    assert busy < 0.1, f"an idle process used {busy:.2f} s of CPU in 1 s: a worker did not go to sleep"


def test_an_unknown_machine_has_no_pool() -> None:
    with pytest.raises(CompileError, match="no worker pool"):
        pool.pool_text("pdp11")
