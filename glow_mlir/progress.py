"""Where a long compile is, on a terminal: one line on stderr, rewritten in place, that names the model, the stage
and the pass now running and the seconds so far. It appears only once a compile has run for :data:`DELAY` seconds
(fast compiles print nothing) and is cleared when the compile ends or fails; silent when the stream is not a
terminal, and with the tools' ``--quiet``.

The compiler reports its steps through :func:`stage` and :func:`step`, which do nothing unless a :class:`Progress` is
active (the tools start one; the Python API stays silent)::

    with Progress("resnet18.onnx"):
        compile(...)            # run_pipeline calls step(pass), the API stage(name)
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

#: seconds before the line appears
DELAY = 2.0
#: seconds between refreshes of the elapsed time
REFRESH = 0.2
#: a line longer than this is cut (a terminal wraps longer ones, and the rewrite in place then fails)
WIDTH = 100
#: carriage return and clear to the end of the line
CLEAR = "\r\x1b[K"

_active: Progress | None = None


def stage(name: str) -> None:
    """The compile entered stage ``name``."""
    if _active is not None:
        _active.where = (name, "")


def step(name: str) -> None:
    """A pass (or a group of upstream passes) named ``name`` starts in the current stage."""
    if _active is not None:
        _active.where = (_active.where[0], name)


class Progress:
    """The progress line of one compile (a context manager; see the module docstring)."""

    def __init__(self, label: str, stream: TextIO | None = None, quiet: bool = False, delay: float = DELAY):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = not quiet and callable(isatty) and bool(isatty())
        self.delay = delay
        self.where = ("start", "")
        self._shown = False
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._start = 0.0

    def line(self) -> str:
        """The text of the line now."""
        stage_name, pass_name = self.where
        where = f"{stage_name}: {pass_name}" if pass_name else stage_name
        text = f"{self.label}: {where} ({time.perf_counter() - self._start:.0f} s)"
        return text if len(text) <= WIDTH else text[: WIDTH - 3] + "..."

    def _run(self) -> None:
        if self._stop.wait(self.delay):
            return
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                self.stream.write(CLEAR + self.line())
                self.stream.flush()
                self._shown = True
            if self._stop.wait(REFRESH):
                return

    def __enter__(self) -> Progress:
        global _active
        self._start = time.perf_counter()
        if self.enabled:
            _active = self
            self._thread = threading.Thread(target=self._run, name="glow-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        global _active
        if self._thread is None:
            return
        with self._lock:
            self._stop.set()
            if self._shown:
                self.stream.write(CLEAR)
                self.stream.flush()
        self._thread.join()
        if _active is self:
            _active = None
