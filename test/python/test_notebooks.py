"""Every notebook under notebooks/ runs headless from top to bottom without an error (nbclient, one kernel each,
a time limit per cell). The notebooks only call the public API: an API change that breaks one fails here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbformat, nbclient and ipykernel")
nbclient = pytest.importorskip("nbclient", reason="the test extra installs nbformat, nbclient and ipykernel")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: seconds one cell may take (the slowest compiles a small model twice)
CELL_TIMEOUT = 300


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebook under notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch):
    # the kernel imports glow_mlir from this checkout, as the tests do
    monkeypatch.setenv("PYTHONPATH", str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, on the first error
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
