"""The progress line of long compiles (glow_mlir.progress): shown on a terminal after a delay, naming the stage and
pass, cleared at the end; nothing on a stream that is not a terminal, or with --quiet."""

from __future__ import annotations

import io
import time

from conftest import EXAMPLES_DIR, run_tool

from glow_mlir import progress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_line_names_the_stage_and_pass_then_is_cleared() -> None:
    stream = FakeTerminal()
    with progress.Progress("net.onnx", stream=stream, delay=0.0):
        progress.stage("codegen")
        progress.step("cpu-tile-kernels")
        time.sleep(3 * progress.REFRESH)
    text = stream.getvalue()
    assert progress.CLEAR + "net.onnx: codegen: cpu-tile-kernels (0 s)" in text
    assert text.endswith(progress.CLEAR)  # cleared when the compile ends
    assert progress._active is None
    progress.step("after")  # no reporter: nothing happens
    assert stream.getvalue() == text


def test_fast_compiles_and_other_streams_print_nothing() -> None:
    terminal, pipe = FakeTerminal(), io.StringIO()
    with progress.Progress("net.onnx", stream=terminal, delay=5.0):
        progress.stage("import")
    with progress.Progress("net.onnx", stream=pipe, delay=0.0):
        progress.stage("import")
        time.sleep(2 * progress.REFRESH)
    with progress.Progress("net.onnx", stream=FakeTerminal(), delay=0.0, quiet=True) as quiet:
        assert not quiet.enabled
    assert terminal.getvalue() == "" and pipe.getvalue() == ""


def test_line_is_cleared_when_the_compile_fails() -> None:
    stream = FakeTerminal()
    try:
        with progress.Progress("bad.onnx", stream=stream, delay=0.0):
            time.sleep(2 * progress.REFRESH)
            raise ValueError("boom")
    except ValueError:
        pass
    assert stream.getvalue().endswith(progress.CLEAR) and progress._active is None


def test_quiet_tools_print_nothing_on_stderr() -> None:
    result = run_tool("glow-compile", "-model", str(EXAMPLES_DIR / "linear_sigmoid.onnx"), "--no-cache", "--quiet")
    assert result.returncode == 0 and result.stderr == ""
