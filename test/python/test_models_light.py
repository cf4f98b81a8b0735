"""The nine model-zoo networks shipped inside the onnx wheel (opset 9, weights from ConstantOfShape fills):
each compiles and matches its .io.npz through the API, and through glow-run.

With constant weights most reference outputs are a flat softmax, so these test operator coverage (LRN,
BatchNormalization, Concat, Sum, AveragePool, ConstantOfShape folding at import) more than numerics.
"""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir
from conftest import MODELS_DIR, run_tool

LIGHT = ["light_bvlc_alexnet", "light_densenet121", "light_inception_v1", "light_inception_v2", "light_resnet50",
         "light_shufflenet", "light_squeezenet", "light_vgg19", "light_zfnet512"]
#: the .io.npz tolerance of the models README
RTOL, ATOL = 1e-3, 1e-4


def _path(name: str):
    path = MODELS_DIR / "light" / f"{name}.onnx"
    if not path.exists():
        pytest.skip(f"light model {path} is absent (set GLOW_MODELS_DIR to the models folder)")
    return path


@pytest.mark.parametrize("name", LIGHT)
def test_light_model_matches_reference(name: str):
    path = _path(name)
    data = np.load(path.with_suffix(".io.npz"))
    model = glow_mlir.compile(path)
    got = model.run({k[3:]: data[k] for k in data.files if k.startswith("in_")})
    outputs = [k for k in data.files if k.startswith("out_")]
    assert outputs
    for key in outputs:
        np.testing.assert_allclose(got[key[4:]], data[key], rtol=RTOL, atol=ATOL, err_msg=f"{name}:{key}")


@pytest.mark.parametrize("name", ["light_squeezenet", "light_bvlc_alexnet"])
def test_light_model_matches_reference_through_glow_run(name: str):
    path = _path(name)
    done = run_tool("glow-run", "-model", str(path), "--reference", str(path.with_suffix(".io.npz")),
                    "--rtol", str(RTOL), "--atol", str(ATOL))
    assert done.returncode == 0, done.stderr
    assert ": match" in done.stdout and "MISMATCH" not in done.stdout
