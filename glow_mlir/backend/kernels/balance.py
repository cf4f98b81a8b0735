"""How a kernel's tasks keep the threads busy: the measure the kernel passes cut by.

A kernel on several threads is cut into tasks (L1 tiles, output rows, filter blocks) that the worker pool's threads
take in turn; a layer is done when the busiest thread is. :func:`busy` is the share of the time the threads work;
where the tiles a kernel would take for one core keep them less than :data:`BLOCK_BALANCE` busy, a finer cut is
taken; a matmul's L1 tiles are chosen for the least work on the busiest thread (:func:`balanced_tiles`).
"""

from __future__ import annotations

from .isa import KernelSpec

#: the least share of the time the tasks of one dim keep the threads busy (tasks / (threads x rounds)) before a finer
#: cut is taken where it keeps them busier: each tile of each filter block of a convolution in tiles of pixels, a grid
#: of both dims of a matmul, smaller L1 tiles (three tasks on two threads keep one thread idle a quarter of the time)
BLOCK_BALANCE = 0.9


def busy(tasks: int, threads: int) -> float:
    """The share of the time ``threads`` are busy on ``tasks`` equal tasks (each thread takes the next)."""
    return tasks / (threads * -(-tasks // threads))


#: what one more task costs the thread that runs it, in cycles (its claim on the pool's ticket, its set-up, the
#: panels a smaller tile reuses less): about 0.2 us. A finer cut must save more than this on the busiest thread (on
#: sixteen threads, 14 tasks of a 9.6 MFLOP 1x1 convolution at 28x28 keep 14 threads busy; 147 smaller ones keep 16,
#: for 10 rounds of claims)
TASK_CYCLES = 500


def task_flops(spec: KernelSpec) -> int:
    """:data:`TASK_CYCLES` as the float operations a core of ``spec`` does in them (two per FMA lane,
    :attr:`.isa.KernelSpec.fma_rate`): 32,000 on AVX-512 with two FMA pipes, 16,000 on AVX2."""
    return TASK_CYCLES * 2 * spec.fma_rate


def _tasks(rows: int, cols: int, threads: int) -> tuple[int, int]:
    """(tasks, L1 tiles per task) of a matmul island of ``rows x cols`` L1 tiles on ``threads``, as
    ``cpu-tile-kernels`` cuts it: the tiles of the dim with more of them, as many a task as make one task a thread
    where they divide evenly, else one each; the whole grid where that keeps the threads busier than
    :data:`BLOCK_BALANCE`."""
    split, other = max(rows, cols), min(rows, cols)
    if split < 2:
        return 1, rows * cols
    if split % threads == 0:
        return threads, split // threads * other
    if busy(split, threads) < BLOCK_BALANCE and busy(rows * cols, threads) > busy(split, threads):
        return rows * cols, 1
    return split, other


def _critical(rows: int, cols: int, tile_flops: int, threads: int, per_task: int) -> int:
    """The float operations on the busiest thread, ``per_task`` (:func:`task_flops`) for each task its own."""
    tasks, tiles = _tasks(rows, cols, threads)
    return -(-tasks // threads) * (tiles * tile_flops + per_task)


def multiples(extent: int, reg: int, most: int) -> list[int]:
    """The multiples of ``reg`` that divide ``extent``, at most ``most``, largest first (``[reg]`` where none does):
    the L1 tiles an island of ``extent`` may take with a register tile of ``reg``."""
    sizes = [s for s in range(reg, min(extent, max(most, reg)) + 1, reg) if extent % s == 0]
    return sorted(sizes or [reg], reverse=True)


def balanced_tiles(rows: int, cols: int, k: int, mr: int, nr: int, l1_m: int, l1_n: int, threads: int,
                   per_task: int) -> tuple[int, int]:
    """The L1 tiles of an ``rows x cols`` matmul island with a reduction of ``k`` on ``threads`` threads: ``l1_m x
    l1_n`` (the tiles for one core) where their tasks keep the threads :data:`BLOCK_BALANCE` busy, else of the
    multiples of the ``mr x nr`` register tile that divide the island and are no larger, those that leave the least
    work on the busiest thread (:func:`_critical`, ``per_task`` the float operations a task costs: :func:`task_flops`),
    the larger tiles on a tie. On sixteen threads the 1x1 convolutions of mobilenet_v2 at 14x14 pixels, 192 rows in L1
    tiles of 64 rows, made 3 tasks (384 -> 64) and 9 (384 -> 96)."""
    if threads <= 1 or busy(_tasks(rows // l1_m, cols // l1_n, threads)[0], threads) >= BLOCK_BALANCE:
        return l1_m, l1_n
    best = (l1_m, l1_n)
    best_key = (_critical(rows // l1_m, cols // l1_n, 2 * l1_m * l1_n * k, threads, per_task), 0)
    for m in multiples(rows, mr, l1_m):
        for n in multiples(cols, nr, l1_n):
            key = (_critical(rows // m, cols // n, 2 * m * n * k, threads, per_task), -m * n)
            if key < best_key:
                best, best_key = (m, n), key
    return best


__all__ = ["BLOCK_BALANCE", "TASK_CYCLES", "balanced_tiles", "busy", "multiples", "task_flops"]
