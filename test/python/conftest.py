"""Shared fixtures: where the team's models live, running the command-line tools, and a compile cache of the
session's own (hermetic: nothing read from or left in the user's cache; each model compiles once per session, and
the tools started from tests share it through the environment)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = Path(os.environ.get("GLOW_MODELS_DIR") or ROOT.parent / "shared" / "models")
EXAMPLES_DIR = ROOT / "examples"


def model_path(name: str) -> Path:
    """The path of a shared model; skips the test (with the reason) when it is absent."""
    path = MODELS_DIR / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"shared model {path} is absent (set GLOW_MODELS_DIR to the models folder)")
    return path


def run_tool(tool: str, *args: str) -> subprocess.CompletedProcess:
    """Run ``glow-<tool>`` from this checkout; returns the finished process (text output)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    module = "glow_mlir.tools." + tool.replace("-", "_")
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env,
                          timeout=600)


_SESSION_CACHE: str | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _SESSION_CACHE
    _SESSION_CACHE = tempfile.mkdtemp(prefix="glow-test-cache-")
    os.environ["GLOW_CACHE_DIR"] = _SESSION_CACHE


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION_CACHE is not None:
        shutil.rmtree(_SESSION_CACHE, ignore_errors=True)
