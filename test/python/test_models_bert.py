"""bert_tiny_encoder end to end: two transformer encoder layers (batched MatMul, Softmax, LayerNormalization, and
Shape/Gather/... chains folded at import) compiled once through the API and compared with its .io.npz."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from conftest import model_path

import glow_mlir.api as glow

#: the models folder's tolerance for float32 references computed by onnxruntime
RTOL, ATOL = 1e-3, 1e-4


@pytest.fixture(scope="module")
def bert() -> tuple[glow.CompiledModel, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The compiled model, its reference inputs and its reference outputs."""
    path = model_path("bert_tiny_encoder")
    data = np.load(path.with_suffix(".io.npz"))
    inputs = {k[3:]: data[k] for k in data.files if k.startswith("in_")}
    outputs = {k[4:]: data[k] for k in data.files if k.startswith("out_")}
    return glow.compile(path), inputs, outputs


def test_bert_matches_reference(bert):
    model, inputs, expected = bert
    got = model.run(inputs)
    assert set(got) == set(expected)
    for name, want in expected.items():
        np.testing.assert_allclose(got[name], want, rtol=RTOL, atol=ATOL, err_msg=name)


def test_bert_attention_and_norms_are_single_kernels(bert):
    # per layer: Q.K^T and P.V are batch matmuls over the 2 heads; the CPU keeps softmax and layer_norm whole
    model, _, _ = bert
    lowered = Counter(line.split('"')[1] for line in model.stage("lower").text.splitlines() if '"glowgraph.' in line)
    assert lowered["glowgraph.batch_matmul"] == 4
    assert lowered["glowgraph.softmax"] == 2
    assert lowered["glowgraph.layer_norm"] == 4
    assert "glowgraph.exp" not in lowered and "glowgraph.sqrt" not in lowered
