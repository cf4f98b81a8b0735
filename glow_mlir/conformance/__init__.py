"""``python -m glow_mlir.conformance``: run ONNX's node test cases through the ONNX backend and sort every case into

- ``pass``          the outputs match (rtol 1e-3, atol 1e-7 unless the case sets its own; float16 and bfloat16
                    outputs within two steps of their type at least, rtol 2^-9 and 2^-6: onnx.reference accumulates
                    their sums and products in the narrow type, glow_mlir computes them in float32 and rounds what
                    the model stores; DFT and STFT outputs within atol 2^-20 of their largest magnitude at least:
                    the reference's float32 FFT leaves rounding noise where the exact result is 0); for random
                    draws (Bernoulli, training Dropout: :data:`DRAW_CHECKS`) the outputs, shapes and dtypes match
                    and every value is one the op can give for its inputs;
- ``fail-numeric``  it ran and gave a wrong answer (a bug);
- ``unsupported``   a clean UnsupportedError: an op, attribute or element type glow_mlir does not handle;
- ``error``         any other exception, a GlowError that is not "unsupported" included (a bug);
- ``crash``         the worker process died (MLIR aborts on some invalid IR; a segfault) (a bug);
- ``timeout``       the case ran past ``--timeout`` seconds (a bug).

The cases are generated in-process by ``onnx.backend.test.case.node.collect_testcases``. Each runs in a worker
process of a pool, so a crash or a hang costs one case: the worker is replaced and the run goes on. A case is "in the
supported set" when the importer has a handler for each of its ops at its opset (``glow_mlir.importer.HANDLERS``,
so the set grows as handlers land) and its inputs and outputs have supported element types. Every case must pass or
be cleanly unsupported; the command lists the cases of the bug categories and exits 1 when there are any, unless
``--allow-failures``. Cases in the supported set that still come back unsupported (an attribute or a form of the op
not handled) are listed as gaps, which are not bugs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import multiprocessing.connection
import os
import re
import signal
import sys
import tempfile
import textwrap
import time
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx

from ..errors import UnsupportedError
from ..importer.builder import lookup
from ..importer.model import ELEMENT_TYPES, INTEGER_STORAGE_TYPES, STORAGE_TYPES

STATUSES = ("pass", "fail-numeric", "unsupported", "error", "crash", "timeout")
#: the categories that are bugs: the command lists their cases and fails
BUGS = ("fail-numeric", "error", "crash", "timeout")

#: A case runner: the model and its inputs in, the outputs (in graph order) out. Runs in a worker process, so it must
#: be a module-level function (it is pickled by name).
Runner = Callable[[onnx.ModelProto, list[np.ndarray]], Sequence[Any]]

#: The detail of a passing case of random draws (:data:`DRAW_CHECKS`).
RANDOM_PASS = "random draws: checked against the op's support, not the reference's numbers"

#: How much of a crashed worker's stderr (an assertion message, usually) a crash outcome quotes.
_STDERR_TAIL = 400


@dataclass(frozen=True)
class Case:
    """One node test case, ready to send to a worker."""

    name: str
    #: the op under test (for an ``_expanded`` case, the op whose function body it is)
    op: str
    #: the serialized ModelProto
    model: bytes
    inputs: list[Any]
    outputs: list[Any]
    rtol: float
    atol: float
    #: every op has a handler at the case's opset, and every input and output has a supported element type
    in_supported_set: bool


@dataclass(frozen=True)
class Outcome:
    """What came of one case."""

    name: str
    op: str
    status: str
    #: why it did not pass: the error, the mismatch, the signal; empty for a pass, :data:`RANDOM_PASS` for a pass of
    #: random draws
    detail: str
    seconds: float
    in_supported_set: bool


# --------------------------------------------------------------------------- cases


def _opset(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def in_supported_set(model: onnx.ModelProto, inputs: Iterable[Any], outputs: Iterable[Any]) -> bool:
    """Whether the importer has a handler for every op of ``model`` at its opset and every value given or expected
    is a tensor of a supported element type, a sequence of such tensors, or an empty optional."""
    opset = _opset(model)
    if any(lookup(n.op_type, n.domain, opset) is None for n in model.graph.node):
        return False
    dtypes = {*ELEMENT_TYPES.values(), *STORAGE_TYPES.values(), *INTEGER_STORAGE_TYPES.values()}
    # a sequence's tensors count one by one; an empty optional (None) holds none
    values = [x for v in [*inputs, *outputs] if v is not None for x in (v if isinstance(v, list) else [v])]
    initializers = [onnx.helper.tensor_dtype_to_np_dtype(t.data_type) for t in model.graph.initializer]
    return all(isinstance(v, (np.ndarray, np.generic)) and v.dtype in dtypes for v in values) and all(
        d in dtypes for d in initializers
    )


def collect_cases(ops: Iterable[str] | None = None, name_pattern: str | None = None) -> list[Case]:
    """The node test cases of the installed onnx, optionally only those testing ``ops`` (op types) or whose name
    matches the regular expression ``name_pattern``."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # Generating the cases computes reference outputs with numpy, some on purpose out of range.
        warnings.simplefilter("ignore")
        testcases = collect_testcases(None)
    single = {t.name: t.model.graph.node[0].op_type for t in testcases if len(t.model.graph.node) == 1}
    wanted = set(ops) if ops is not None else None
    pattern = re.compile(name_pattern) if name_pattern else None
    cases = []
    for t in testcases:
        # An expanded case is a function body: counted under the op it expands, found from its base case.
        base = re.sub(r"_expanded.*$", "", t.name)
        op = single.get(base) or single.get(t.name) or "+".join(sorted({n.op_type for n in t.model.graph.node}))
        if (wanted is not None and op not in wanted) or (pattern and not pattern.search(t.name)):
            continue
        (inputs, outputs), *_ = t.data_sets
        # some cases store their data as TensorProtos (the Cast family's): read them as onnx's runner does
        inputs, outputs = ([onnx.numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v for v in values]
                           for values in (inputs, outputs))
        cases.append(
            Case(t.name, op, t.model.SerializeToString(), list(inputs), list(outputs), t.rtol, t.atol,
                 in_supported_set(t.model, inputs, outputs))
        )
    return cases


# --------------------------------------------------------------------------- one case


def backend_runner(model: onnx.ModelProto, inputs: list[np.ndarray]) -> Sequence[Any]:
    """The default runner: ``GlowBackend.run_model``."""
    from ..onnx_backend import GlowBackend

    return GlowBackend.run_model(model, inputs)


#: the relative tolerance of a float16 or bfloat16 output at least: two steps of its 10- or 7-bit mantissa
NARROW_FLOAT_RTOL = {np.dtype(np.float16): 2.0 ** -9, np.dtype(ml_dtypes.bfloat16): 2.0 ** -6}
#: ops whose every output element is a sum over a whole signal: an element that should be 0 comes out of the
#: reference (numpy's float32 FFT) at float32's rounding of the signal's scale, not at 0, so the absolute tolerance of
#: these outputs is at least this fraction of their largest magnitude (2^-20: 8 float32 epsilons)
SUMMED_ATOL = {"DFT": 2.0 ** -20, "STFT": 2.0 ** -20}


def compare(expected: Sequence[Any], got: Sequence[Any], rtol: float, atol: float,
            scaled_atol: float = 0.0) -> str | None:
    """None when ``got`` matches ``expected`` as onnx's backend test runner checks (count, shape, dtype, then
    ``allclose`` with NaNs equal; the absolute tolerance at least ``scaled_atol`` times the output's largest finite
    magnitude), else a one-line description of the first difference."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, {len(expected)} expected"
    for i, (want, have) in enumerate(zip(expected, got)):
        if want is None or isinstance(want, list):  # an empty optional, or a sequence
            if want is None or not isinstance(have, list):
                if have is not want:
                    return f"output {i}: got {type(have).__name__}, expected {type(want).__name__}"
                continue
            if len(have) != len(want):
                return f"output {i}: a sequence of {len(have)}, expected {len(want)}"
            mismatch = compare(want, have, rtol, atol, scaled_atol)
            if mismatch is not None:
                return f"output {i}, element {mismatch.removeprefix('output ')}"
            continue
        if not isinstance(want, (np.ndarray, np.generic)):
            return f"output {i}: got {type(have).__name__}, expected a {type(want).__name__}"
        # Some cases give a scalar output as a numpy scalar.
        want, have = np.asarray(want), np.asarray(have)
        mismatch = _shape_or_dtype(i, want, have)
        if mismatch is not None:
            return mismatch
        if want.dtype.kind in "bOSU":
            bad = have != want
        else:
            tolerance = max(rtol, NARROW_FLOAT_RTOL.get(want.dtype, rtol))
            if scaled_atol and want.size:
                finite = np.abs(want.astype(np.float64))[np.isfinite(want.astype(np.float64))]
                atol = max(atol, scaled_atol * float(finite.max(initial=0.0)))
            wide = want.dtype == ml_dtypes.bfloat16  # numpy's isclose does not take bfloat16
            bad = ~np.isclose(have.astype(np.float32) if wide else have, want.astype(np.float32) if wide else want,
                              rtol=tolerance, atol=atol, equal_nan=True)
        if np.any(bad):
            at = tuple(int(j) for j in np.argwhere(bad)[0])
            return (f"output {i}: {int(np.count_nonzero(bad))} of {want.size} elements differ beyond rtol {rtol}, "
                    f"atol {atol}; at {list(at)} got {have[at]!r}, expected {want[at]!r}")
    return None


def _shape_or_dtype(i: int, want: np.ndarray, have: np.ndarray) -> str | None:
    """How output ``i`` differs from the expected one in shape or dtype, or None."""
    if have.shape != want.shape:
        return f"output {i}: shape {list(have.shape)}, expected {list(want.shape)}"
    if have.dtype != want.dtype:
        return f"output {i}: dtype {have.dtype}, expected {want.dtype}"
    return None


def _structure(expected: Sequence[Any], got: Sequence[Any]) -> str | None:
    """None when ``got`` has the outputs, shapes and dtypes of ``expected``, else the first difference."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, {len(expected)} expected"
    return next((m for i, (want, have) in enumerate(zip(expected, got))
                 if (m := _shape_or_dtype(i, np.asarray(want), np.asarray(have))) is not None), None)


def _bernoulli_draws(inputs: Sequence[Any], got: Sequence[Any]) -> str | None:
    p, (y,) = np.asarray(inputs[0]), got
    if not np.all((y == 0) | (y == 1)):
        return f"values {sorted(set(np.unique(y).tolist()) - {0, 1})[:5]} outside {{0, 1}}"
    if np.any(y[p == 0] != 0) or np.any(y[p == 1] != 1):
        return "a draw differs from a certain probability (0 or 1)"
    return None


def _dropout_draws(inputs: Sequence[Any], got: Sequence[Any]) -> str | None:
    x = np.asarray(inputs[0])
    ratio = float(np.asarray(inputs[1])) if len(inputs) > 1 else 0.5
    y = np.asarray(got[0])
    kept = np.isclose(y, x / (1.0 - ratio), rtol=1e-6, atol=0.0)
    if not np.all(kept | (y == 0)):
        return "an output is neither 0 nor its input / (1 - ratio)"
    if len(got) > 1:
        mask = np.asarray(got[1])
        if np.any(y[~mask] != 0) or not np.all(kept[mask]):
            return "the mask disagrees with the output"
        kept = mask
    if x.size >= 50 and abs(np.mean(kept) - (1.0 - ratio)) > 0.35:
        return f"kept {np.mean(kept):.2f} of the elements with ratio {ratio:g}"
    return None


#: ops whose outputs are random draws, and a check of the draws against the op's support (each value one the op can
#: give for its inputs): a case of one is compared by outputs, shapes and dtypes, then by that check, not against the
#: reference's numbers, which come from numpy's generator and which no runtime repeats. Dropout draws only in training
#: mode with a ratio above 0.
DRAW_CHECKS: dict[str, Callable[[Sequence[Any], Sequence[Any]], str | None]] = {
    "Bernoulli": _bernoulli_draws,
    "Dropout": _dropout_draws,
}


def draws(case: Case) -> bool:
    """Whether ``case``'s outputs are random draws (:data:`DRAW_CHECKS`)."""
    if case.op == "Dropout":
        training = len(case.inputs) > 2 and bool(np.asarray(case.inputs[2]))
        return training and (float(np.asarray(case.inputs[1])) if len(case.inputs) > 1 else 0.5) > 0
    return case.op in DRAW_CHECKS


def _first_line(text: str, limit: int = 500) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def run_case(case: Case, runner: Runner) -> tuple[str, str]:
    """Run one case in this process: (status, detail), for any status but crash and timeout."""
    model = onnx.ModelProto.FromString(case.model)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = list(runner(model, list(case.inputs)))
    except UnsupportedError as e:
        return "unsupported", _first_line(str(e))
    except Exception as e:  # noqa: BLE001 - anything else is a bug to report, whatever raised it
        return "error", f"{type(e).__name__}: {_first_line(str(e))}"
    if draws(case):
        mismatch = _structure(case.outputs, got) or DRAW_CHECKS[case.op](case.inputs, got)
        return ("pass", RANDOM_PASS) if mismatch is None else ("fail-numeric", mismatch)
    mismatch = compare(case.outputs, got, case.rtol, case.atol, SUMMED_ATOL.get(case.op, 0.0))
    return ("pass", "") if mismatch is None else ("fail-numeric", mismatch)


# --------------------------------------------------------------------------- the pool


def _worker(conn: multiprocessing.connection.Connection, runner: Runner, stderr_path: str) -> None:
    """A worker's loop: cases in, (status, detail) out, until the pipe closes. Its stderr goes to ``stderr_path``,
    emptied before each case, so that a crash can be explained by what the process printed last."""
    log = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(log, 2)
    os.close(log)
    while True:
        try:
            case = conn.recv()
        except EOFError:
            return
        sys.stderr.flush()
        os.ftruncate(2, 0)
        conn.send(run_case(case, runner))


class _Worker:
    """One worker process and the case it is running."""

    def __init__(self, mp: multiprocessing.context.BaseContext, runner: Runner, stderr_path: str):
        self.stderr_path = stderr_path
        self.conn, child = mp.Pipe()
        self.process = mp.Process(target=_worker, args=(child, runner, stderr_path), daemon=True)
        self.process.start()
        child.close()
        self.index: int | None = None
        self.started = 0.0

    def assign(self, index: int, case: Case) -> None:
        self.index, self.started = index, time.perf_counter()
        self.conn.send(case)

    def stop(self) -> None:
        self.conn.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()

    def death(self) -> str:
        """Why the process died (its signal or exit code), with the last line it printed to stderr."""
        self.process.join()
        code = self.process.exitcode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        try:
            tail = Path(self.stderr_path).read_text(errors="replace").strip().splitlines()
        except OSError:
            tail = []
        last = _first_line(tail[-1], _STDERR_TAIL) if tail else ""
        return f"worker {how}" + (f": {last}" if last else "")


def run_cases(cases: Sequence[Case], runner: Runner = backend_runner, jobs: int = 1, timeout: float = 60.0,
              on_outcome: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run ``cases`` on a pool of ``jobs`` worker processes; the outcomes in the order of ``cases``.
    A worker that dies or runs past ``timeout`` seconds is replaced; ``on_outcome`` sees each outcome as it comes."""
    mp = multiprocessing.get_context("forkserver")
    # Workers fork from a server that has imported the compiler once: starting one (again) costs milliseconds.
    mp.set_forkserver_preload([__name__, "glow_mlir.onnx_backend"])
    outcomes: list[Outcome | None] = [None] * len(cases)
    pending = deque(range(len(cases)))

    def record(worker: _Worker, status: str, detail: str) -> None:
        assert worker.index is not None
        case = cases[worker.index]
        outcome = Outcome(case.name, case.op, status, detail, time.perf_counter() - worker.started,
                          case.in_supported_set)
        outcomes[worker.index] = outcome
        worker.index = None
        if on_outcome is not None:
            on_outcome(outcome)

    with tempfile.TemporaryDirectory(prefix="glow-conformance-") as tmp:
        serial = iter(range(1 << 62))

        def start() -> _Worker:
            return _Worker(mp, runner, os.path.join(tmp, f"worker-{next(serial)}.stderr"))

        workers = [start() for _ in range(max(1, min(jobs, len(cases))))]
        try:
            while True:
                for w in workers:
                    if w.index is None and pending:
                        i = pending.popleft()
                        w.assign(i, cases[i])
                busy = [w for w in workers if w.index is not None]
                if not busy:
                    break
                deadline = min(w.started for w in busy) + timeout
                multiprocessing.connection.wait(
                    [w.conn for w in busy] + [w.process.sentinel for w in busy],
                    max(0.0, deadline - time.perf_counter()),
                )
                for k, w in enumerate(workers):
                    if w.index is None:
                        continue
                    if w.conn.poll():
                        try:
                            status, detail = w.conn.recv()
                        except EOFError:  # it died; the sentinel says how
                            pass
                        else:
                            record(w, status, detail)
                            continue
                    if not w.process.is_alive():
                        record(w, "crash", w.death())
                    elif time.perf_counter() - w.started >= timeout:
                        record(w, "timeout", f"no result after {timeout:g} s")
                    else:
                        continue
                    w.stop()
                    workers[k] = start()
        finally:
            for w in workers:
                w.stop()
    assert all(o is not None for o in outcomes)
    return outcomes  # type: ignore[return-value]


# --------------------------------------------------------------------------- report


def tally(outcomes: Iterable[Outcome]) -> tuple[dict[str, Counter], Counter]:
    """Counts of each status per op, and in total."""
    per_op: dict[str, Counter] = {}
    totals: Counter = Counter()
    for o in outcomes:
        per_op.setdefault(o.op, Counter())[o.status] += 1
        totals[o.status] += 1
    return per_op, totals


def _row(name: str, counts: Counter) -> str:
    return f"{name:<28}{sum(counts.values()):>6}" + "".join(f"{counts[s]:>14}" for s in STATUSES)


def report(outcomes: Sequence[Outcome], seconds: float) -> str:
    """The text report: a table of the ops with a case that did not come back unsupported, the ops whose cases all
    did, the totals, the bugs, and the gaps of the supported set."""
    per_op, totals = tally(outcomes)
    lines = [f"{'op':<28}{'cases':>6}" + "".join(f"{s:>14}" for s in STATUSES)]
    unsupported_only = []
    for op in sorted(per_op, key=str.lower):
        counts = per_op[op]
        if counts["unsupported"] == sum(counts.values()):
            unsupported_only.append(f"{op} ({counts['unsupported']})")
        else:
            lines.append(_row(op, counts))
    lines.append(_row("total", totals))
    if unsupported_only:
        lines.append("")
        lines += textwrap.wrap(f"unsupported only, {len(unsupported_only)} ops: {', '.join(unsupported_only)}", 120)
    in_set = [o for o in outcomes if o.in_supported_set]
    lines.append("")
    lines.append(f"{len(outcomes)} cases in {seconds:.1f} s: " + ", ".join(f"{totals[s]} {s}" for s in STATUSES))
    lines.append(f"in the supported set: {len(in_set)} cases, {sum(o.status == 'pass' for o in in_set)} pass")
    random = [o.name for o in outcomes if o.status == "pass" and o.detail == RANDOM_PASS]
    if random:
        lines.append(f"random draws, passed by the support of the op rather than the reference's numbers "
                     f"({len(random)}): {', '.join(random)}")
    bugs = [o for o in outcomes if o.status in BUGS]
    if bugs:
        lines.append("")
        lines.append(f"bugs ({len(bugs)}):")
        lines += [f"  {o.status:<13} {o.name} [{o.op}]: {o.detail}" for o in bugs]
    gaps = [o for o in in_set if o.status == "unsupported"]
    if gaps:
        lines.append("")
        lines.append(f"unsupported although in the supported set ({len(gaps)}; gaps, not bugs):")
        lines += [f"  {o.name} [{o.op}]: {o.detail}" for o in gaps]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m glow_mlir.conformance", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", metavar="OP,OP", help="only the cases testing these ONNX ops (e.g. Conv,Relu)")
    p.add_argument("--cases", metavar="REGEX", help="only the cases whose name matches REGEX (e.g. '^test_gemm_')")
    p.add_argument("--json", metavar="FILE", help="write every outcome and the counts to FILE as JSON")
    p.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                   help="worker processes (default: the cores this process may use)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds a case may take (default 60)")
    p.add_argument("--allow-failures", action="store_true", help="exit 0 even when there are bugs")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.jobs < 1 or args.timeout <= 0:
        print("conformance: error: --jobs and --timeout must be positive", file=sys.stderr)
        return 2
    ops = [o.strip() for o in args.ops.split(",") if o.strip()] if args.ops else None
    try:
        cases = collect_cases(ops, args.cases)
    except re.error as e:
        print(f"conformance: error: --cases '{args.cases}': {e}", file=sys.stderr)
        return 2
    if ops is not None:
        unknown = sorted(set(ops) - {c.op for c in cases})
        if unknown:
            print(f"conformance: error: no test case tests {', '.join(unknown)}", file=sys.stderr)
            return 2
    done = 0
    step = max(1, len(cases) // 10)

    def progress(outcome: Outcome) -> None:
        nonlocal done
        done += 1
        if done % step == 0 or done == len(cases):
            print(f"conformance: {done}/{len(cases)} cases", file=sys.stderr, flush=True)

    start = time.perf_counter()
    outcomes = run_cases(cases, jobs=args.jobs, timeout=args.timeout, on_outcome=progress)
    seconds = time.perf_counter() - start
    print(report(outcomes, seconds))
    if args.json:
        per_op, totals = tally(outcomes)
        Path(args.json).write_text(json.dumps({
            "onnx_version": onnx.__version__,
            "seconds": round(seconds, 3),
            "totals": {s: totals[s] for s in STATUSES},
            "ops": {op: {s: c[s] for s in STATUSES} for op, c in sorted(per_op.items())},
            "cases": [asdict(o) for o in outcomes],
        }, indent=1) + "\n")
    bugs = sum(o.status in BUGS for o in outcomes)
    return 1 if bugs and not args.allow_failures else 0
