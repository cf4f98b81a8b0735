"""The CNNs of the shared models end to end (lenet5, resnet18, mobilenet_v2): compiled once per module through the
API, run on their .io.npz inputs and compared with the onnxruntime outputs stored beside them (rtol 1e-3, atol 1e-4,
the models folder's tolerance for float32). Skipped with the reason when the models folder is absent."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import model_path

import glow_mlir.api as glow

RTOL, ATOL = 1e-3, 1e-4
MODELS = ("lenet5", "resnet18", "mobilenet_v2")


def reference(path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    data = np.load(path.with_suffix(".io.npz"))
    inputs = {k[3:]: data[k] for k in data.files if k.startswith("in_")}
    outputs = {k[4:]: data[k] for k in data.files if k.startswith("out_")}
    return inputs, outputs


@pytest.fixture(scope="module", params=MODELS)
def compiled(request) -> tuple[str, glow.CompiledModel]:
    return request.param, glow.compile(model_path(request.param))


def test_model_matches_reference(compiled: tuple[str, glow.CompiledModel]):
    name, model = compiled
    inputs, expected = reference(model_path(name))
    got = model.run(inputs)
    assert set(got) == set(expected)
    for key, want in expected.items():
        np.testing.assert_allclose(got[key], want, rtol=RTOL, atol=ATOL, err_msg=f"{name}:{key}")


def test_only_the_boundary_transposes_remain(compiled: tuple[str, glow.CompiledModel]):
    """The importer wraps every NHWC node in NCHW <-> NHWC transposes; after graph optimization one data-moving
    transpose is left: into the first convolution (its input has 3 channels), or out of the last pooling for lenet5,
    whose one-channel input needs none. The other boundary transpose moves dims of size 1 only and is a reshape."""
    name, model = compiled
    before = model.stage("import").text.count('"glowgraph.transpose"')
    after = model.stage("optimize").text.count('"glowgraph.transpose"')
    assert before > 2, name
    assert after == 1, name
