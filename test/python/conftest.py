"""Shared fixtures: where the team's models live, and running the command-line tools."""

from __future__ import annotations

import os
import subprocess
import sys
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
