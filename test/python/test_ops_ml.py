"""ai.onnx.ml: Binarizer, ArrayFeatureExtractor and TreeEnsemble against onnx.reference (random forests of every
node mode, NaN features that follow ``nodes_missing_value_tracks_true``, each aggregate function, the post
transforms), and the errors of malformed ensembles."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import ModelError, UnsupportedError

F32, F64, I64 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64
RNG = np.random.default_rng(11)


def ml_model(node: onnx.NodeProto, inputs: dict[str, tuple[int, list[int]]], opset: int = 5) -> onnx.ModelProto:
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
                              [helper.make_tensor_value_info("Y", inputs["X"][0], None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", opset),
                                                    helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], rtol: float = 1e-5) -> np.ndarray:
    got = glow.compile(model, cache=False).run(feeds)["Y"]
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5)
    return got


@pytest.mark.parametrize("dtype, threshold", [(np.float32, 0.25), (np.int64, 1.5), (np.int64, -1.5)])
def test_binarizer(dtype, threshold: float) -> None:
    x = (RNG.standard_normal([3, 4]) * 3).astype(dtype)
    node = helper.make_node("Binarizer", ["X"], ["Y"], domain="ai.onnx.ml", threshold=threshold)
    check(ml_model(node, {"X": (helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), [3, 4])}, 1), {"X": x})


@pytest.mark.parametrize("shape, indices", [([3, 5], [4, 0, 0]), ([5], [1, 3]), ([2, 3, 6], [[5, 2]])])
def test_array_feature_extractor(shape: list[int], indices: list) -> None:
    idx = np.array(indices, np.int64)
    node = helper.make_node("ArrayFeatureExtractor", ["X", "I"], ["Y"], domain="ai.onnx.ml")
    model = ml_model(node, {"X": (F32, shape), "I": (I64, list(idx.shape))}, 1)
    check(model, {"X": RNG.standard_normal(shape).astype(np.float32), "I": idx})


def random_forest(trees: int, features: int, targets: int, modes: list[int], depth: int = 4) -> dict:
    """The attributes of a TreeEnsemble of ``trees`` random trees of at most ``depth`` levels over ``modes``."""
    nodes: dict[str, list] = {k: [] for k in ("featureids", "splits", "modes", "truenodeids", "trueleafs",
                                               "falsenodeids", "falseleafs", "missing")}
    leaf_targets, leaf_weights, members, roots = [], [], [], []

    def leaf() -> int:
        leaf_targets.append(int(RNG.integers(targets)))
        leaf_weights.append(float(RNG.standard_normal()))
        return len(leaf_targets) - 1

    def grow(level: int) -> int:
        index = len(nodes["featureids"])
        for values in nodes.values():
            values.append(0)
        mode = int(RNG.choice(modes))
        nodes["featureids"][index] = int(RNG.integers(features))
        nodes["modes"][index] = mode
        # EQ/NEQ and MEMBER test small integers, which the features hold (rounded below)
        nodes["splits"][index] = float(RNG.integers(-2, 3)) if mode >= 4 else float(RNG.standard_normal())
        nodes["missing"][index] = int(RNG.integers(2))
        if mode == 6:  # no 0 among the members: onnx.reference ends a set at a 0 (its loop tests the value's truth)
            members.extend([*RNG.choice([-2, -1, 1, 2], size=2, replace=False).tolist(), np.nan])
        for side in ("true", "false"):
            if level + 1 >= depth or RNG.random() < 0.3:
                nodes[f"{side}nodeids"][index], nodes[f"{side}leafs"][index] = leaf(), 1
            else:
                nodes[f"{side}nodeids"][index], nodes[f"{side}leafs"][index] = grow(level + 1), 0
        return index

    for _ in range(trees):
        roots.append(grow(0))
    attrs = {f"nodes_{k}": v for k, v in nodes.items() if k not in ("splits", "modes", "missing")}
    attrs.update(nodes_splits=numpy_helper.from_array(np.array(nodes["splits"], np.float32), "splits"),
                 nodes_modes=numpy_helper.from_array(np.array(nodes["modes"], np.uint8), "modes"),
                 nodes_missing_value_tracks_true=nodes["missing"], leaf_targetids=leaf_targets,
                 leaf_weights=numpy_helper.from_array(np.array(leaf_weights, np.float32), "weights"),
                 tree_roots=roots, n_targets=targets)
    if members:
        attrs["membership_values"] = numpy_helper.from_array(np.array(members, np.float32), "members")
    return attrs


def forest_feeds(rows: int, features: int) -> np.ndarray:
    x = RNG.standard_normal([rows, features]).astype(np.float32)
    x[:, ::2] = np.round(x[:, ::2] * 2)  # integers for the EQ, NEQ and MEMBER tests
    x[RNG.random(x.shape) < 0.1] = np.nan  # missing features
    return x


@pytest.mark.parametrize("modes", [[0], [1, 2, 3], [0, 4, 5, 6]])
@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
def test_tree_ensemble(modes: list[int], aggregate: int) -> None:
    attrs = random_forest(trees=7, features=5, targets=3, modes=modes)
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", aggregate_function=aggregate, **attrs)
    x = forest_feeds(16, 5)
    got = check(ml_model(node, {"X": (F32, [16, 5])}), {"X": x})
    if aggregate in (0, 1):  # every target some tree reaches: the aggregate is not the fill value alone
        assert np.count_nonzero(got) > 0


def test_tree_ensemble_of_doubles_and_a_single_leaf_tree() -> None:
    attrs = random_forest(trees=3, features=4, targets=2, modes=[0])
    x = forest_feeds(8, 4).astype(np.float64)
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    (forest,) = ReferenceEvaluator(ml_model(node, {"X": (F64, [8, 4])})).run(None, {"X": x})
    # a fourth tree that is one leaf, as the spec writes it: one node whose two branches are the same leaf (leaf 0).
    # onnx.reference reads such a root as the leaf of the root's own index, so the sum is checked against its value
    # for the three trees plus leaf 0's weight on its target
    for name, value in (("nodes_featureids", 0), ("nodes_truenodeids", 0), ("nodes_falsenodeids", 0),
                        ("nodes_trueleafs", 1), ("nodes_falseleafs", 1), ("nodes_missing_value_tracks_true", 0)):
        attrs[name] = [*attrs[name], value]
    for name in ("nodes_splits", "nodes_modes"):
        array = numpy_helper.to_array(attrs[name])
        attrs[name] = numpy_helper.from_array(np.append(array, array.dtype.type(0)), name)
    attrs["tree_roots"] = [*attrs["tree_roots"], len(attrs["nodes_featureids"]) - 1]
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    got = glow.compile(ml_model(node, {"X": (F64, [8, 4])}), cache=False).run({"X": x})["Y"]
    want = forest.copy()
    want[:, attrs["leaf_targetids"][0]] += numpy_helper.to_array(attrs["leaf_weights"])[0]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("post, transform", [(1, lambda y: np.exp(y - y.max(1, keepdims=True))
                                              / np.exp(y - y.max(1, keepdims=True)).sum(1, keepdims=True)),
                                             (2, lambda y: 1 / (1 + np.exp(-y)))])
def test_tree_ensemble_post_transforms(post: int, transform) -> None:
    # onnx.reference leaves post_transform out: the spec's softmax and logistic of its raw scores
    attrs = random_forest(trees=5, features=3, targets=3, modes=[0])
    raw = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    x = forest_feeds(10, 3)
    (scores,) = ReferenceEvaluator(ml_model(raw, {"X": (F32, [10, 3])})).run(None, {"X": x})
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", post_transform=post, **attrs)
    got = glow.compile(ml_model(node, {"X": (F32, [10, 3])}), cache=False).run({"X": x})["Y"]
    np.testing.assert_allclose(got, transform(scores.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_tree_ensemble_errors() -> None:
    attrs = random_forest(trees=2, features=3, targets=2, modes=[0], depth=2)
    cyclic = dict(attrs, nodes_truenodeids=[0] * len(attrs["nodes_truenodeids"]),
                  nodes_trueleafs=[0] * len(attrs["nodes_trueleafs"]))
    for bad, message in ((cyclic, r"the trees have a cycle through node 0"),
                         (dict(attrs, leaf_targetids=[5] * len(attrs["leaf_targetids"])),
                          r"leaf_targetids must be in \[0, 2\)"),
                         (dict(attrs, nodes_featureids=[7] * len(attrs["nodes_featureids"])),
                          r"the nodes' feature ids must index the 3 features of X")):
        node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", **bad)
        with pytest.raises(ModelError, match=message):
            glow.compile(ml_model(node, {"X": (F32, [4, 3])}), cache=False)
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", post_transform=4, **attrs)
    with pytest.raises(UnsupportedError, match=r"post_transform 4 \(PROBIT\) is not supported"):
        glow.compile(ml_model(node, {"X": (F32, [4, 3])}), cache=False)


def regressor_attrs(trees: int, features: int, targets: int, modes: list[str], depth: int = 4) -> dict:
    """A TreeEnsembleRegressor of random trees (every node, leaves too, as (tree id, node id); each tree's root first,
    its other nodes shuffled; a leaf gives one or two targets a weight)."""
    attrs: dict[str, list] = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
                                               "nodes_values", "nodes_truenodeids", "nodes_falsenodeids",
                                               "nodes_missing_value_tracks_true", "target_treeids",
                                               "target_nodeids", "target_ids", "target_weights")}
    for tree in range(trees):
        rows: list[tuple] = []

        def grow(level: int, tree=tree, rows=rows) -> int:
            node_id = len(rows)
            rows.append(None)
            if level >= depth or (level and RNG.random() < 0.25):
                rows[node_id] = (node_id, 0, "LEAF", 0.0, 0, 0, 0)
                for target in RNG.choice(targets, size=int(RNG.integers(1, 3)), replace=False):
                    attrs["target_treeids"].append(tree)
                    attrs["target_nodeids"].append(node_id)
                    attrs["target_ids"].append(int(target))
                    attrs["target_weights"].append(float(RNG.standard_normal()))
                return node_id
            mode = str(RNG.choice(modes))
            split = float(RNG.integers(-2, 3)) if mode in ("BRANCH_EQ", "BRANCH_NEQ") else float(RNG.standard_normal())
            true_id, false_id = grow(level + 1), grow(level + 1)
            rows[node_id] = (node_id, int(RNG.integers(features)), mode, split, true_id, false_id,
                             int(RNG.integers(2)))
            return node_id

        grow(0)
        order = [0, *RNG.permutation(np.arange(1, len(rows))).tolist()]
        for k in order:
            node_id, feature, mode, split, true_id, false_id, missing = rows[k]
            for name, value in (("nodes_treeids", tree), ("nodes_nodeids", node_id), ("nodes_featureids", feature),
                                ("nodes_modes", mode), ("nodes_values", split), ("nodes_truenodeids", true_id),
                                ("nodes_falsenodeids", false_id), ("nodes_missing_value_tracks_true", missing)):
                attrs[name].append(value)
    attrs["n_targets"] = targets
    return attrs


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("modes, opset", [(["BRANCH_LEQ"], 1), (["BRANCH_LT", "BRANCH_GTE", "BRANCH_GT"], 3),
                                          (["BRANCH_LEQ", "BRANCH_EQ", "BRANCH_NEQ"], 3)])
def test_tree_ensemble_regressor(modes: list[str], opset: int, aggregate: str) -> None:
    attrs = regressor_attrs(trees=6, features=5, targets=3, modes=modes)
    x = forest_feeds(12, 5)
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml", aggregate_function=aggregate,
                            base_values=[0.5, -1.0, 2.0], **attrs)
    check(ml_model(node, {"X": (F32, [12, 5])}, opset), {"X": x})
    if opset == 3:  # the same values as tensors (onnx.reference reads only the lists: compared with their result)
        for name in ("nodes_values", "target_weights"):
            attrs[f"{name}_as_tensor"] = numpy_helper.from_array(np.array(attrs.pop(name), np.float64), name)
        tensors = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml",
                                   aggregate_function=aggregate, base_values=[0.5, -1.0, 2.0], **attrs)
        (want,) = ReferenceEvaluator(ml_model(node, {"X": (F32, [12, 5])}, opset)).run(None, {"X": x})
        got = glow.compile(ml_model(tensors, {"X": (F32, [12, 5])}, opset), cache=False).run({"X": x})["Y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_tree_ensemble_regressor_errors() -> None:
    attrs = regressor_attrs(trees=2, features=3, targets=2, modes=["BRANCH_LEQ"], depth=2)
    for bad, message in ((dict(attrs, nodes_truenodeids=[99] * len(attrs["nodes_truenodeids"])),
                          r"node 0 of tree 0 has a child 99 that is no node of its tree"),
                         (dict(attrs, nodes_modes=["BRANCH_SOMETIMES"] * len(attrs["nodes_modes"])),
                          r"'BRANCH_SOMETIMES' is no node mode"),
                         (dict(attrs, base_values=[1.0]), r"base_values must hold one value per target \(2\), got 1")):
        node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml", **bad)
        with pytest.raises(ModelError, match=message):
            glow.compile(ml_model(node, {"X": (F32, [4, 3])}, 1), cache=False)
