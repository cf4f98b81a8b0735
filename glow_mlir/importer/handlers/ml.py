"""ai.onnx.ml: Binarizer, ArrayFeatureExtractor, TreeEnsemble and TreeEnsembleRegressor (the classical models that
scikit-learn pipelines export next to, or in front of, a network).

TreeEnsemble (ai.onnx.ml 5) and TreeEnsembleRegressor (1 and 3, the form scikit-learn's converters write: nodes
named by (tree id, node id), leaves among them, a leaf's weights in the target_* lists, base values added at the
end) become one :class:`Forest`, evaluated by :func:`_evaluate`. It walks every tree at once, for every row of X: the
position in each tree is a tensor [rows, trees] of node indices, and one step moves all of them to a child (gathers
from constant tables of the nodes' features, splits, modes and children, one comparison per mode the ensemble uses).
Leaves point to themselves, so after as many steps as the deepest tree has levels every position is a leaf. The
graph is then a fixed number of ops per level, whatever the number of trees or nodes (those are only the tables'
lengths): a forest of hundreds of trees compiles as fast as one tree of its depth (300 trees of 10058 nodes, depth 8:
0.48 s, as one tree). Each tree's leaf adds its weights to their targets (SUM, AVERAGE) or takes the MIN or MAX; a
target no tree reaches keeps 0 (SUM, AVERAGE) or the float32 extreme (MIN, MAX: the reference's is that of X's
type, double's for double X, which float32 computation cannot hold). Splits are compared in float32 (X of float16
or double is computed in float32, as everywhere). A NaN feature: TreeEnsemble takes the true branch where
``nodes_missing_value_tracks_true`` is set and its test's result elsewhere; TreeEnsembleRegressor takes the branch the
flag says. BRANCH_MEMBER tests the feature against the node's set of values (``membership_values``, sets separated
by NaN). ``post_transform``: NONE, SOFTMAX and LOGISTIC; SOFTMAX_ZERO and PROBIT are refused as unsupported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mlir import ir
from onnx import AttributeProto, numpy_helper

from ...dialects import glowgraph as gg
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import fmt_shape
from .core import _expand, _reshape, _splat
from .elementwise import _convert

FLOAT, FLOATS, INT, INTS = AttributeProto.FLOAT, AttributeProto.FLOATS, AttributeProto.INT, AttributeProto.INTS
STRING, STRINGS, TENSOR = AttributeProto.STRING, AttributeProto.STRINGS, AttributeProto.TENSOR
DOMAIN = "ai.onnx.ml"
_F32, _I64 = np.dtype(np.float32), np.dtype(np.int64)
#: TreeEnsemble's node modes (nodes_modes)
LEQ, LT, GTE, GT, EQ, NEQ, MEMBER = range(7)
#: its aggregate functions and post transforms
AVERAGE, SUM, MIN, MAX = range(4)
NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT = range(5)


@onnx_op("Binarizer", since=1, domain=DOMAIN, inputs=(1, 1), attrs=("threshold",))
def binarizer(ctx: NodeContext) -> Tensor:
    """1 where X > threshold, else 0, in X's type."""
    x = ctx.input(0)
    ctx.check_element_type(x, "X", (_F32, _I64, np.dtype(np.int32)))
    threshold = ctx.attr("threshold", FLOAT, 0.0)
    v = ctx.value(x)
    above = gg.cmp_lt(_splat(v, threshold), v) if dtype_of(x).kind == "f" else \
        gg.cmp_lt(_splat(v, math.floor(threshold)), v)
    return gg.select(above, _splat(v, 1), _splat(v, 0))


@onnx_op("ArrayFeatureExtractor", since=1, domain=DOMAIN, inputs=(2, 2))
def array_feature_extractor(ctx: NodeContext) -> Tensor:
    """X[..., indices] with the indices flattened; a 1-D X gives one row [1, n] (as onnxruntime and the reference)."""
    x, indices = ctx.input(0), ctx.input(1)
    ctx.check_element_type(indices, "Y (the indices)", (_I64,))
    shape = shape_of(x)
    count = int(np.prod(shape_of(indices)))
    if not shape or shape[-1] == 0:
        raise ctx.error(f"X must have at least one dim with elements, got {fmt_shape(shape)}")
    if isinstance(indices, Const):
        bad = indices.array[(indices.array < 0) | (indices.array >= shape[-1])]
        if bad.size:
            raise ctx.error(f"index {int(bad.reshape(-1)[0])} is out of range for the last dim of X, "
                            f"{shape[-1]}")
    flat = _reshape(ctx, indices, [count])
    picked = gg.gather(ctx.value(x), ctx.value(flat), axis=len(shape) - 1)
    return _reshape(ctx, picked, [1, count] if len(shape) == 1 else [*shape[:-1], count])


# --------------------------------------------------------------------------- tree ensembles


@dataclass
class Forest:
    """Trees as tables over one index space: interior nodes 0..N-1, then leaves N..N+L-1 (a leaf's children are
    itself, so that steps past it stay); ``roots`` each tree's root in that space; ``outputs`` [L, n_targets] the
    weight each leaf gives each target and ``reached`` whether it gives that target any (MIN and MAX skip the others);
    ``nan_decides``: a NaN feature takes the branch its node's ``missing`` flag says (TreeEnsembleRegressor), rather
    than the true branch where the flag is set and its test's own result elsewhere (TreeEnsemble)."""

    ctx: NodeContext
    features: np.ndarray
    splits: np.ndarray
    modes: np.ndarray
    true: np.ndarray
    false: np.ndarray
    roots: np.ndarray
    outputs: np.ndarray
    reached: np.ndarray
    missing: np.ndarray | None = None
    members: np.ndarray | None = None
    nan_decides: bool = False

    def __post_init__(self) -> None:
        n = len(self.features)
        self.nodes = n - len(self.outputs)
        if (self.features < 0).any():
            raise self.ctx.error("a node's feature id is negative")
        if ((self.true < 0) | (self.true >= n) | (self.false < 0) | (self.false >= n)).any():
            raise self.ctx.error("a node's child is out of range of the nodes or leaves it indexes")
        if bad := [int(m) for m in self.modes[:self.nodes] if not LEQ <= m <= MEMBER]:
            raise self.ctx.error(f"{bad[0]} is no branch mode")
        self.levels = self._levels()

    def _levels(self) -> int:
        """Steps from the roots to the deepest leaf (0 when every tree is a leaf); a cycle is an error."""
        depth: dict[int, int] = {}
        deepest = 0
        for root in self.roots:
            stack = [(int(root), 0, frozenset())]
            while stack:
                node, level, path = stack.pop()
                if node >= self.nodes:
                    deepest = max(deepest, level)
                    continue
                if node in path:
                    raise self.ctx.error(f"the trees have a cycle through node {node}")
                if depth.get(node, -1) >= level:
                    continue
                depth[node] = level
                for child in {int(self.true[node]), int(self.false[node])}:
                    stack.append((child, level + 1, path | {node}))
        return deepest


def _leaf_tables(targets: np.ndarray, leaves: np.ndarray, weights: np.ndarray, count: int, n_targets: int,
                 aggregate: int) -> tuple[np.ndarray, np.ndarray]:
    """Each leaf's weight per target and whether it gives that target any, from (leaf, target, weight) entries: a
    leaf's entries for one target add up (SUM, AVERAGE) or take their MIN or MAX."""
    outputs = np.zeros((count, n_targets), np.float64)
    reached = np.zeros((count, n_targets), bool)
    for leaf, target, weight in zip(leaves, targets, weights, strict=True):
        if not reached[leaf, target] or aggregate in (SUM, AVERAGE):
            outputs[leaf, target] = weight + (outputs[leaf, target] if aggregate in (SUM, AVERAGE) else 0.0)
        else:
            outputs[leaf, target] = (min if aggregate == MIN else max)(outputs[leaf, target], weight)
        reached[leaf, target] = True
    return outputs.astype(np.float32), reached


def _evaluate(ctx: NodeContext, forest: Forest, aggregate: int, post: int,
              base: np.ndarray | None = None) -> ir.Value:
    """Y [rows, n_targets] of the node's input X by ``forest`` (see the module docstring)."""
    x = ctx.input(0)
    ctx.check_element_type(x, "X", (_F32,))
    if len(shape_of(x)) != 2:
        raise ctx.error(f"X must be 2-D [rows, features], got {fmt_shape(shape_of(x))}")
    rows, features = shape_of(x)
    if post in (SOFTMAX_ZERO, PROBIT):
        raise ctx.unsupported(f"post_transform {post} ({'SOFTMAX_ZERO' if post == SOFTMAX_ZERO else 'PROBIT'}) is "
                              "not supported (NONE, SOFTMAX and LOGISTIC are)")
    if int(forest.features[:forest.nodes].max(initial=0)) >= features:
        raise ctx.error(f"the nodes' feature ids must index the {features} features of X")
    trees = len(forest.roots)
    shape = [rows, trees]

    def table(values: np.ndarray, name: str) -> ir.Value:
        return ctx.value(ctx.const(values, name=f"{ctx.label}.{name}"))

    def lookup(values: ir.Value, at: ir.Value) -> ir.Value:
        return gg.gather(values, at, axis=0)

    flat_x = ctx.value(_reshape(ctx, x, [rows * features]))
    row_base = table(np.repeat(np.arange(rows, dtype=np.int64) * features, trees).reshape(shape), "row_base")
    position = ctx.value(_expand(ctx, ctx.const(forest.roots.reshape(1, trees)), shape))
    tables = {name: table(values, name) for name, values in (("true", forest.true), ("false", forest.false),
                                                               ("features", forest.features),
                                                               ("splits", forest.splits), ("modes", forest.modes))}
    missing = None if forest.missing is None else table(forest.missing, "missing")
    used = sorted({int(m) for m in forest.modes[:forest.nodes]})
    for _ in range(forest.levels):
        value = gg.gather(flat_x, gg.add(row_base, lookup(tables["features"], position)), axis=0)
        split = lookup(tables["splits"], position)
        taken = None
        for mode in used:
            test = _member(ctx, forest, value, position) if mode == MEMBER else _compare(mode, value, split)
            if len(used) > 1:
                modes = lookup(tables["modes"], position)
                test = gg.and_(gg.cmp_eq(modes, _splat(modes, mode)), test)
            taken = test if taken is None else gg.or_(taken, test)
        nan = gg.not_(gg.cmp_eq(value, value))
        if forest.nan_decides:  # NaN: the node's flag (false where there are none)
            taken = gg.select(nan, lookup(missing, position), taken) if missing is not None else \
                gg.and_(taken, gg.not_(nan))
        elif missing is not None:
            taken = gg.or_(taken, gg.and_(lookup(missing, position), nan))
        position = gg.select(taken, lookup(tables["true"], position), lookup(tables["false"], position))
    leaf = gg.sub(position, _splat(position, forest.nodes))
    k = forest.outputs.shape[1]
    weight = lookup(table(forest.outputs, "leaf_outputs"), leaf)  # [rows, trees, k]
    if aggregate in (SUM, AVERAGE):
        y = gg.reduce_sum(weight, axes=[1])
        if aggregate == AVERAGE:
            y = gg.div(y, _splat(y, float(trees)))
    else:
        hit = lookup(table(forest.reached, "leaf_reached"), leaf)
        extreme = float(np.finfo(np.float32).max) * (1 if aggregate == MIN else -1)
        kept = gg.select(hit, weight, _splat(weight, extreme))
        y = gg.reduce_min(kept, axes=[1]) if aggregate == MIN else gg.reduce_max(kept, axes=[1])
    y = ctx.value(_reshape(ctx, y, [rows, k]))
    if base is not None:
        y = gg.add(y, ctx.value(_expand(ctx, ctx.const(base.astype(np.float32).reshape(1, k)), [rows, k])))
    if post == SOFTMAX:
        y = gg.softmax(y, axis=1)
    elif post == LOGISTIC:
        y = gg.sigmoid(y)
    return y


def _compare(mode: int, value: ir.Value, split: ir.Value) -> ir.Value:
    """The branch test of ``mode`` (BRANCH_LEQ to BRANCH_NEQ) of feature values against their nodes' splits."""
    if mode == LEQ:
        return gg.cmp_lte(value, split)
    if mode == LT:
        return gg.cmp_lt(value, split)
    if mode == GTE:
        return gg.cmp_lte(split, value)
    if mode == GT:
        return gg.cmp_lt(split, value)
    same = gg.cmp_eq(value, split)
    return same if mode == EQ else gg.not_(same)


def _member(ctx: NodeContext, forest: Forest, value: ir.Value, position: ir.Value) -> ir.Value:
    """Whether each feature value is in its node's set (BRANCH_MEMBER; other nodes' rows are NaN: never)."""
    rows, trees = shape_of(value)
    width = forest.members.shape[1]
    sets = gg.gather(ctx.value(ctx.const(forest.members, name=f"{ctx.label}.members")), position, axis=0)
    wide = ctx.value(_expand(ctx, _reshape(ctx, value, [rows, trees, 1]), [rows, trees, width]))
    found = gg.reduce_max(ctx.value(_convert(ctx, gg.cmp_eq(wide, sets), _F32)), axes=[2])
    return gg.cmp_lt(_splat(found, 0.5), found)


class _Attrs:
    """A node's attributes read with the types they must have, required or with a default."""

    def __init__(self, ctx: NodeContext):
        self.ctx = ctx

    def get(self, name: str, kind: int, default=None, required: bool = False):
        value = self.ctx.attr(name, kind, None)
        if value is None and required:
            raise self.ctx.error(f"attribute '{name}' is required")
        if value is None:
            return default
        if kind == INTS:
            return np.asarray(value, np.int64)
        if kind == FLOATS:
            return np.asarray(value, np.float64)
        if kind == TENSOR:
            return numpy_helper.to_array(value).reshape(-1)
        if kind == STRINGS:
            return [v.decode(errors="replace") for v in value]
        if kind == STRING:
            return value.decode(errors="replace")
        return value

    def floats(self, name: str, required: bool = False) -> np.ndarray | None:
        """A FLOATS attribute or its ``_as_tensor`` twin (opset 3), as float64."""
        value = self.get(f"{name}_as_tensor", TENSOR)
        if value is None:
            value = self.get(name, FLOATS, required=required)
        return None if value is None else value.astype(np.float64)


def _same_lengths(ctx: NodeContext, what: str, *arrays) -> None:
    if len({len(a) for a in arrays if a is not None}) > 1:
        raise ctx.error(f"the {what} attributes must all have the same length")


@onnx_op("TreeEnsemble", since=5, domain=DOMAIN, inputs=(1, 1),
         attrs=("aggregate_function", "leaf_targetids", "leaf_weights", "membership_values", "n_targets",
                "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids", "nodes_hitrates",
                "nodes_missing_value_tracks_true", "nodes_modes", "nodes_splits", "nodes_trueleafs",
                "nodes_truenodeids", "post_transform", "tree_roots"))
def tree_ensemble(ctx: NodeContext) -> Tensor:
    """Y [rows, n_targets] of X [rows, features] (ai.onnx.ml 5): interior nodes and leaves in separate lists, a
    leaf one (target, weight)."""
    a = _Attrs(ctx)
    features, true_ids = a.get("nodes_featureids", INTS, required=True), a.get("nodes_truenodeids", INTS,
                                                                                 required=True)
    false_ids = a.get("nodes_falsenodeids", INTS, required=True)
    true_leaf, false_leaf = a.get("nodes_trueleafs", INTS, required=True), a.get("nodes_falseleafs", INTS,
                                                                                  required=True)
    modes = a.get("nodes_modes", TENSOR, required=True).astype(np.int64)
    splits = a.get("nodes_splits", TENSOR, required=True).astype(np.float32)
    missing = a.get("nodes_missing_value_tracks_true", INTS)
    targets, weights = a.get("leaf_targetids", INTS, required=True), a.get("leaf_weights", TENSOR, required=True)
    roots = a.get("tree_roots", INTS, required=True)
    n_targets = a.get("n_targets", INT, required=True)
    aggregate, post = a.get("aggregate_function", INT, SUM), a.get("post_transform", INT, NONE)
    _same_lengths(ctx, "nodes_*", features, true_ids, false_ids, true_leaf, false_leaf, modes, splits, missing)
    _same_lengths(ctx, "leaf_*", targets, weights)
    if aggregate not in (AVERAGE, SUM, MIN, MAX) or post not in range(5):
        raise ctx.error(f"aggregate_function must be 0 to 3 and post_transform 0 to 4, got {aggregate} and {post}")
    if n_targets < 1 or ((targets < 0) | (targets >= n_targets)).any():
        raise ctx.error(f"leaf_targetids must be in [0, {n_targets})")
    n, leaves = len(features), len(targets)

    def child(ids: np.ndarray, leaf: np.ndarray) -> np.ndarray:
        if ((ids < 0) | (ids >= np.where(leaf != 0, leaves, n))).any():
            raise ctx.error("a node's child is out of range of the nodes or leaves it indexes")
        return np.where(leaf != 0, n + ids, ids)

    if ((roots < 0) | (roots >= max(n, 1))).any():
        raise ctx.error("tree_roots must index the nodes")
    # a root whose two branches are the same leaf is that leaf (the spec's tree of one leaf)
    roots = np.array([n + true_ids[r] if true_leaf[r] and false_leaf[r] and true_ids[r] == false_ids[r] else r
                      for r in roots], np.int64)
    outputs, reached = _leaf_tables(targets, np.arange(leaves), weights.astype(np.float64), leaves, n_targets,
                                    aggregate)
    itself = n + np.arange(leaves)
    forest = Forest(ctx, np.concatenate([features, np.zeros(leaves, np.int64)]),
                    np.concatenate([splits, np.zeros(leaves, np.float32)]),
                    np.concatenate([modes, np.full(leaves, LEQ)]),
                    np.concatenate([child(true_ids, true_leaf), itself]),
                    np.concatenate([child(false_ids, false_leaf), itself]), roots, outputs, reached,
                    missing=None if missing is None or not missing.any() else
                    np.concatenate([missing != 0, np.zeros(leaves, bool)]))
    forest.members = _members(ctx, forest, a.get("membership_values", TENSOR))
    return _evaluate(ctx, forest, aggregate, post)


def _members(ctx: NodeContext, forest: Forest, values: np.ndarray | None) -> np.ndarray | None:
    """[nodes + leaves, widest set] of each BRANCH_MEMBER node's values (NaN-padded, in the order of the nodes),
    None without such nodes."""
    member_nodes = np.flatnonzero(forest.modes[:forest.nodes] == MEMBER)
    if not member_nodes.size:
        return None
    if values is None:
        raise ctx.error("BRANCH_MEMBER nodes need the attribute 'membership_values'")
    values = values.astype(np.float64)
    cuts = np.flatnonzero(np.isnan(values))
    if len(cuts) != len(member_nodes):
        raise ctx.error(f"membership_values holds {len(cuts)} sets (each ended by NaN) for {len(member_nodes)} "
                        "BRANCH_MEMBER nodes")
    sets = np.split(values, cuts + 1)[:len(cuts)]
    table = np.full((len(forest.modes), max(len(s) for s in sets)), np.nan, np.float32)
    for node, members in zip(member_nodes, sets, strict=True):
        table[node, :len(members) - 1] = members[:-1]
    return table


_MODE_NAMES = {"BRANCH_LEQ": LEQ, "BRANCH_LT": LT, "BRANCH_GTE": GTE, "BRANCH_GT": GT, "BRANCH_EQ": EQ,
               "BRANCH_NEQ": NEQ, "LEAF": -1}
_AGGREGATES = {"AVERAGE": AVERAGE, "SUM": SUM, "MIN": MIN, "MAX": MAX}
_POSTS = {"NONE": NONE, "SOFTMAX": SOFTMAX, "LOGISTIC": LOGISTIC, "SOFTMAX_ZERO": SOFTMAX_ZERO, "PROBIT": PROBIT}
_REGRESSOR_ATTRS = ("aggregate_function", "base_values", "n_targets", "nodes_falsenodeids", "nodes_featureids",
                    "nodes_hitrates", "nodes_missing_value_tracks_true", "nodes_modes", "nodes_nodeids",
                    "nodes_treeids", "nodes_truenodeids", "nodes_values", "post_transform", "target_ids",
                    "target_nodeids", "target_treeids", "target_weights")


@onnx_op("TreeEnsembleRegressor", since=1, domain=DOMAIN, inputs=(1, 1), attrs=_REGRESSOR_ATTRS)
@onnx_op("TreeEnsembleRegressor", since=3, domain=DOMAIN, inputs=(1, 1),
         attrs=(*_REGRESSOR_ATTRS, "base_values_as_tensor", "nodes_hitrates_as_tensor", "nodes_values_as_tensor",
                "target_weights_as_tensor"))
def tree_ensemble_regressor(ctx: NodeContext) -> Tensor:
    """Y [rows, n_targets] of X [rows, features] (ai.onnx.ml 1 and 3, what scikit-learn's converters write): every
    node, leaves too, named by (tree id, node id), a tree's first node its root; a leaf's (target, weight) entries
    in the target_* lists; base_values added after the aggregation; a NaN feature goes where the node's
    missing_value_tracks_true flag says."""
    a = _Attrs(ctx)
    trees, ids = a.get("nodes_treeids", INTS, required=True), a.get("nodes_nodeids", INTS, required=True)
    features = a.get("nodes_featureids", INTS, required=True)
    mode_names = a.get("nodes_modes", STRINGS, required=True)
    values = a.floats("nodes_values")
    true_ids, false_ids = a.get("nodes_truenodeids", INTS, required=True), a.get("nodes_falsenodeids", INTS,
                                                                                  required=True)
    missing = a.get("nodes_missing_value_tracks_true", INTS)
    target_trees, target_nodes = a.get("target_treeids", INTS, required=True), a.get("target_nodeids", INTS,
                                                                                    required=True)
    target_ids, weights = a.get("target_ids", INTS, required=True), a.floats("target_weights", required=True)
    n_targets = a.get("n_targets", INT, required=True)
    base = a.floats("base_values")
    aggregate = _AGGREGATES.get(a.get("aggregate_function", STRING, "SUM"))
    post = _POSTS.get(a.get("post_transform", STRING, "NONE"))
    if values is None:
        values = np.zeros(len(ids))
    _same_lengths(ctx, "nodes_*", trees, ids, features, mode_names, values, true_ids, false_ids, missing)
    _same_lengths(ctx, "target_*", target_trees, target_nodes, target_ids, weights)
    if aggregate is None or post is None:
        raise ctx.error(f"aggregate_function must be one of {', '.join(_AGGREGATES)} and post_transform one of "
                        f"{', '.join(_POSTS)}")
    if bad := [m for m in mode_names if m not in _MODE_NAMES]:
        raise ctx.error(f"'{bad[0]}' is no node mode ({', '.join(_MODE_NAMES)})")
    if n_targets < 1 or ((target_ids < 0) | (target_ids >= n_targets)).any():
        raise ctx.error(f"target_ids must be in [0, {n_targets})")
    if base is not None and len(base) != n_targets:
        raise ctx.error(f"base_values must hold one value per target ({n_targets}), got {len(base)}")
    modes = np.array([_MODE_NAMES[m] for m in mode_names], np.int64)
    position = {(int(t), int(i)): k for k, (t, i) in enumerate(zip(trees, ids, strict=True))}
    if len(position) != len(ids):
        raise ctx.error("two nodes have the same (tree id, node id)")
    interior, leaves = np.flatnonzero(modes >= 0), np.flatnonzero(modes < 0)
    # the unified order: interior nodes, then leaves
    order = np.concatenate([interior, leaves])
    index = np.empty(len(order), np.int64)
    index[order] = np.arange(len(order))

    def child(k: int, node_id: int) -> int:
        found = position.get((int(trees[k]), int(node_id)))
        if found is None:
            raise ctx.error(f"node {int(ids[k])} of tree {int(trees[k])} has a child {int(node_id)} that is no node "
                            "of its tree")
        return int(index[found])

    true = np.array([child(k, true_ids[k]) if modes[k] >= 0 else index[k] for k in order], np.int64)
    false = np.array([child(k, false_ids[k]) if modes[k] >= 0 else index[k] for k in order], np.int64)
    firsts: dict[int, int] = {}
    for k, t in enumerate(trees):
        firsts.setdefault(int(t), k)
    roots = np.array([index[k] for k in firsts.values()], np.int64)
    leaf_of = []
    for t, i in zip(target_trees, target_nodes, strict=True):
        k = position.get((int(t), int(i)))
        if k is None or modes[k] >= 0:
            raise ctx.error(f"target entry for node {int(i)} of tree {int(t)}, which is no leaf")
        leaf_of.append(int(index[k]) - len(interior))
    outputs, reached = _leaf_tables(target_ids, np.array(leaf_of, np.int64), weights, len(leaves), n_targets,
                                    aggregate)
    missing_table = None if missing is None or not missing.any() else (missing[order] != 0)
    forest = Forest(ctx, features[order], values[order].astype(np.float32), np.maximum(modes[order], LEQ), true,
                    false, roots, outputs, reached, missing=missing_table, nan_decides=True)
    return _evaluate(ctx, forest, aggregate, post, base)
