"""Shared fixtures: where the team's models live, running the command-line tools, glowir programs compiled from
text, the numpy interpretation of a glowgraph function, and a compile cache of the session's own (hermetic: nothing read from or left in the user's cache; each model compiles once per session, and
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


def dense(value) -> str:
    """A numpy array as an MLIR dense elements literal (float32 values print exactly as Python floats)."""
    import json

    import numpy as np

    types = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64", np.dtype(np.int32): "i32",
             np.dtype(np.int16): "i16", np.dtype(np.int8): "i8", np.dtype(np.bool_): "i1"}
    shape = "x".join(str(d) for d in value.shape)
    return f"dense<{json.dumps(value.tolist())}> : tensor<{shape + 'x' if shape else ''}{types[value.dtype]}>"


def compile_program(ctx, text: str):
    """Parse one glowir program, read its signature, lower it to LLVM and JIT it: (its JitProgram, the module, which
    must stay referenced while the program runs)."""
    from mlir import ir

    from glow_mlir.backend.jit import JitProgram, program_signature
    from glow_mlir.passes import pipelines
    from glow_mlir.passes.pipeline import run_pipeline

    module = ir.Module.parse(text, ctx)
    func = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
    name = ir.StringAttr(func.attributes["sym_name"]).value
    signature = program_signature(func)
    run_pipeline(module.operation, pipelines.elements("codegen"))
    return JitProgram(module, name, signature), module


def digits(split: str = "x_train", count: int | None = None):
    """Images of the shared digits data (../shared/data/digits.npz); skips the test when it is absent."""
    import numpy as np

    path = ROOT.parent / "shared" / "data" / "digits.npz"
    if not path.exists():
        pytest.skip(f"shared data {path} is absent")
    return np.load(path)[split][:count]


def runner_inputs(jit, model: Path, tmp: Path) -> tuple[dict, list[str], Path]:
    """For a bundle runner: the inputs of ``model``'s .io.npz, each written to a raw file for the runner (in the
    order of the compiled model's inputs), and an empty output folder."""
    import numpy as np

    data = np.load(model.with_suffix(".io.npz"))
    inputs = {k[3:]: data[k] for k in data.files if k.startswith("in_")}
    files = []
    for k, spec in enumerate(jit.inputs):
        path = tmp / f"in{k}.bin"
        np.ascontiguousarray(inputs[spec.name], dtype=spec.dtype).tofile(path)
        files.append(str(path))
    out = tmp / "out"
    out.mkdir()
    return inputs, files, out


def check_runner_outputs(jit, inputs: dict, out: Path, name: str) -> None:
    """The raw outputs a bundle runner wrote to ``out`` equal the JIT's within 1e-5."""
    import numpy as np

    want = jit.run(inputs)
    for k, spec in enumerate(jit.outputs):
        got = np.fromfile(out / f"output{k}.bin", dtype=spec.dtype).reshape(spec.shape)
        np.testing.assert_allclose(got, want[spec.name], rtol=1e-5, atol=1e-5, err_msg=f"{name} output {k}")


def interpret(module, inputs):
    """Run the one glowgraph function of ``module`` (an ``ir.Module``) on ``inputs`` with each node's numpy
    ``evaluate`` row: the graph as its op tables define it."""
    import numpy as np

    from glow_mlir.dialects import opdef_of
    from glow_mlir.dialects.optable import attr_to_python, elements_to_numpy

    func = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
    block = func.regions[0].blocks[0]
    env = dict(zip(block.arguments, inputs, strict=True))
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            return [env[v] for v in op.operands]
        if op.name == "glowgraph.constant":
            env[op.results[0]] = elements_to_numpy(op.attributes["value"])
            continue
        opdef = opdef_of(op)
        assert opdef is not None and opdef.evaluate is not None, f"'{op.name}' has no evaluate row"
        attrs = {a.name: attr_to_python(a.kind, op.attributes[a.name]) for a in opdef.attrs if a.name in op.attributes}
        with np.errstate(all="ignore"):
            results = opdef.evaluate([env[v] for v in op.operands], attrs, [r.type for r in op.results])
        env.update(zip(op.results, results, strict=True))
    raise AssertionError("the function has no return")


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
