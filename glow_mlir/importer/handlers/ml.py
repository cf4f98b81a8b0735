"""ai.onnx.ml: Binarizer, ArrayFeatureExtractor and TreeEnsemble (the classical models that scikit-learn pipelines
export next to, or in front of, a network).

TreeEnsemble (ai.onnx.ml 5) walks every tree of the ensemble at once, for every row of X: the position in each tree
is a tensor [rows, trees] of node indices, and one step moves all of them to a child (gathers from constant tables of
the nodes' features, splits, modes and children, one comparison per mode the ensemble uses). Leaves point to
themselves, so after as many steps as the deepest tree has levels every position is a leaf. The graph is then a fixed
number of ops per level, whatever the number of trees or nodes (those are only the tables' lengths): a forest of
hundreds of trees compiles as fast as one tree of its depth. Each tree's leaf adds its weight to its target (SUM,
AVERAGE) or takes the MIN or MAX; a target no tree reaches keeps 0 (SUM, AVERAGE) or the float32 extreme (MIN,
MAX: the reference's is that of X's type, double's for double X, which float32 computation cannot hold). Splits are
compared in float32 (X of float16 or double is computed in float32, as everywhere). ``nodes_missing_value_tracks_true``
sends a NaN feature to the true branch; BRANCH_MEMBER tests the feature against the node's set of values
(``membership_values``, sets separated by NaN). ``post_transform``: NONE, SOFTMAX and LOGISTIC; SOFTMAX_ZERO and
PROBIT are refused as unsupported.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir
from onnx import AttributeProto, numpy_helper

from ...dialects import glowgraph as gg
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import fmt_shape
from .core import _expand, _reshape, _splat
from .elementwise import _convert

FLOAT, INT, INTS, TENSOR = AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.INTS, AttributeProto.TENSOR
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


# --------------------------------------------------------------------------- TreeEnsemble


class _Forest:
    """The trees of a TreeEnsemble node as tables over one index space: interior nodes 0..N-1, then leaves N..N+L-1
    (a leaf's children are itself); each tree's root in it; the levels of the deepest tree."""

    def __init__(self, ctx: NodeContext):
        def ints(name: str, required: bool = True) -> np.ndarray | None:
            value = ctx.attr(name, INTS, None)
            if value is None and required:
                raise ctx.error(f"attribute '{name}' is required")
            return None if value is None else np.asarray(value, np.int64)

        def tensor(name: str, required: bool = True) -> np.ndarray | None:
            value = ctx.attr(name, TENSOR, None)
            if value is None and required:
                raise ctx.error(f"attribute '{name}' is required")
            return None if value is None else numpy_helper.to_array(value).reshape(-1)

        features, true_ids, false_ids = ints("nodes_featureids"), ints("nodes_truenodeids"), ints("nodes_falsenodeids")
        true_leaf, false_leaf = ints("nodes_trueleafs"), ints("nodes_falseleafs")
        modes, splits = tensor("nodes_modes").astype(np.int64), tensor("nodes_splits").astype(np.float64)
        targets, weights = ints("leaf_targetids"), tensor("leaf_weights").astype(np.float64)
        roots = ints("tree_roots")
        missing = ints("nodes_missing_value_tracks_true", required=False)
        n, leaves = len(features), len(targets)
        lengths = {len(a) for a in (true_ids, false_ids, true_leaf, false_leaf, modes, splits)}
        if lengths != {n} or (missing is not None and len(missing) != n) or len(weights) != leaves:
            raise ctx.error("the nodes_* attributes must all have one entry per node, and leaf_weights one per "
                            "entry of leaf_targetids")
        if bad := [int(m) for m in modes if not LEQ <= m <= MEMBER]:
            raise ctx.error(f"nodes_modes: {bad[0]} is no mode (0 BRANCH_LEQ to 6 BRANCH_MEMBER)")
        self.n_targets = ctx.attr("n_targets", INT, None)
        if self.n_targets is None or self.n_targets < 1:
            raise ctx.error("attribute 'n_targets' is required and must be positive")
        if ((targets < 0) | (targets >= self.n_targets)).any():
            raise ctx.error(f"leaf_targetids must be in [0, {self.n_targets})")

        def child(ids: np.ndarray, leaf: np.ndarray) -> np.ndarray:
            size = np.where(leaf != 0, leaves, n)
            if ((ids < 0) | (ids >= size)).any():
                raise ctx.error("a node's child is out of range of the nodes or leaves it indexes")
            return np.where(leaf != 0, n + ids, ids)

        self.nodes = n
        self.true = np.concatenate([child(true_ids, true_leaf), n + np.arange(leaves)])
        self.false = np.concatenate([child(false_ids, false_leaf), n + np.arange(leaves)])
        self.features = np.concatenate([features, np.zeros(leaves, np.int64)])
        self.splits = np.concatenate([splits, np.zeros(leaves)]).astype(np.float32)
        self.modes = np.concatenate([modes, np.full(leaves, LEQ)])
        self.missing = None if missing is None or not missing.any() else \
            np.concatenate([missing != 0, np.zeros(leaves, bool)])
        self.weights, self.targets = weights.astype(np.float32), targets
        if ((roots < 0) | (roots >= max(n, 1))).any():
            raise ctx.error("tree_roots must index the nodes")
        # a root whose two children are the same leaf is that leaf (a tree of one leaf, as the reference reads it)
        self.roots = np.array([n + true_ids[r] if true_leaf[r] and false_leaf[r] and true_ids[r] == false_ids[r]
                               else r for r in roots], np.int64)
        self.members = self._members(ctx, tensor("membership_values", required=False))
        self.levels = self._levels(ctx)

    def _members(self, ctx: NodeContext, values: np.ndarray | None) -> np.ndarray | None:
        """[nodes + leaves, widest set] of each BRANCH_MEMBER node's values (NaN-padded), None without such nodes."""
        member_nodes = np.flatnonzero(self.modes[:self.nodes] == MEMBER)
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
        table = np.full((len(self.modes), max(len(s) for s in sets)), np.nan, np.float32)
        for node, members in zip(member_nodes, sets, strict=True):
            table[node, :len(members) - 1] = members[:-1]
        return table

    def _levels(self, ctx: NodeContext) -> int:
        """Steps from the roots to the deepest leaf (0 when every tree is a leaf); a cycle is an error."""
        depth, deepest = {}, 0
        for root in self.roots:
            stack = [(int(root), 0, frozenset())]
            while stack:
                node, level, path = stack.pop()
                if node >= self.nodes:
                    deepest = max(deepest, level)
                    continue
                if node in path:
                    raise ctx.error(f"the trees have a cycle through node {node}")
                if depth.get(node, -1) >= level:
                    continue
                depth[node] = level
                for c in {int(self.true[node]), int(self.false[node])}:
                    stack.append((c, level + 1, path | {node}))
        return deepest


@onnx_op("TreeEnsemble", since=5, domain=DOMAIN, inputs=(1, 1),
         attrs=("aggregate_function", "leaf_targetids", "leaf_weights", "membership_values", "n_targets",
                "nodes_falseleafs", "nodes_falsenodeids", "nodes_featureids", "nodes_hitrates",
                "nodes_missing_value_tracks_true", "nodes_modes", "nodes_splits", "nodes_trueleafs",
                "nodes_truenodeids", "post_transform", "tree_roots"))
def tree_ensemble(ctx: NodeContext) -> Tensor:
    """Y [rows, n_targets] of X [rows, features] (see the module docstring)."""
    x = ctx.input(0)
    ctx.check_element_type(x, "X", (_F32,))
    if len(shape_of(x)) != 2:
        raise ctx.error(f"X must be 2-D [rows, features], got {fmt_shape(shape_of(x))}")
    rows, features = shape_of(x)
    forest = _Forest(ctx)
    aggregate = ctx.attr("aggregate_function", INT, SUM)
    post = ctx.attr("post_transform", INT, NONE)
    if aggregate not in (AVERAGE, SUM, MIN, MAX):
        raise ctx.error(f"aggregate_function must be 0 (AVERAGE) to 3 (MAX), got {aggregate}")
    if post in (SOFTMAX_ZERO, PROBIT):
        raise ctx.unsupported(f"post_transform {post} ({'SOFTMAX_ZERO' if post == SOFTMAX_ZERO else 'PROBIT'}) is "
                              "not supported (NONE, SOFTMAX and LOGISTIC are)")
    if post not in (NONE, SOFTMAX, LOGISTIC):
        raise ctx.error(f"post_transform must be 0 (NONE) to 4 (PROBIT), got {post}")
    if int(forest.features[:forest.nodes].max(initial=0)) >= features or (forest.features < 0).any():
        raise ctx.error(f"nodes_featureids must index the {features} features of X")
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
    used = sorted({int(m) for m in forest.modes[:forest.nodes]})
    for _ in range(forest.levels):
        value = gg.gather(flat_x, gg.add(row_base, lookup(tables["features"], position)), axis=0)
        split = lookup(tables["splits"], position)
        taken = None
        for mode in used:
            test = _member(ctx, forest, value, position) if mode == MEMBER else _compare(mode, value, split)
            if len(used) > 1:
                test = gg.and_(gg.cmp_eq(lookup(tables["modes"], position),
                                         _splat(lookup(tables["modes"], position), mode)), test)
            taken = test if taken is None else gg.or_(taken, test)
        if forest.missing is not None:
            tracks = lookup(table(forest.missing, "missing"), position)
            taken = gg.or_(taken, gg.and_(tracks, gg.not_(gg.cmp_eq(value, value))))
        position = gg.select(taken, lookup(tables["true"], position), lookup(tables["false"], position))
    leaf = gg.sub(position, _splat(position, forest.nodes))
    weight = lookup(table(forest.weights, "weights"), leaf)
    target = lookup(table(forest.targets, "targets"), leaf)
    k = forest.n_targets
    wide = [rows, trees, k]
    hit = gg.cmp_eq(ctx.value(_expand(ctx, _reshape(ctx, target, [rows, trees, 1]), wide)),
                    ctx.value(_expand(ctx, ctx.const(np.arange(k, dtype=np.int64).reshape(1, 1, k)), wide)))
    weight = ctx.value(_expand(ctx, _reshape(ctx, weight, [rows, trees, 1]), wide))
    if aggregate in (SUM, AVERAGE):
        y = gg.reduce_sum(gg.select(hit, weight, _splat(weight, 0.0)), axes=[1])
        if aggregate == AVERAGE:
            y = gg.div(y, _splat(y, float(trees)))
    else:
        extreme = float(np.finfo(np.float32).max) * (1 if aggregate == MIN else -1)
        kept = gg.select(hit, weight, _splat(weight, extreme))
        y = gg.reduce_min(kept, axes=[1]) if aggregate == MIN else gg.reduce_max(kept, axes=[1])
    y = ctx.value(_reshape(ctx, y, [rows, k]))
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


def _member(ctx: NodeContext, forest: _Forest, value: ir.Value, position: ir.Value) -> ir.Value:
    """Whether each feature value is in its node's set (BRANCH_MEMBER; other nodes' rows are NaN: never)."""
    rows, trees = shape_of(value)
    width = forest.members.shape[1]
    sets = gg.gather(ctx.value(ctx.const(forest.members, name=f"{ctx.label}.members")), position, axis=0)
    wide = ctx.value(_expand(ctx, _reshape(ctx, value, [rows, trees, 1]), [rows, trees, width]))
    found = gg.reduce_max(_convert_bool(ctx, gg.cmp_eq(wide, sets)), axes=[2])
    return gg.cmp_lt(_splat(found, 0.5), found)


def _convert_bool(ctx: NodeContext, b: ir.Value) -> ir.Value:
    return ctx.value(_convert(ctx, b, _F32))
