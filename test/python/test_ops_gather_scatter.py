"""Indexed data movement end to end: DepthToSpace and SpaceToDepth (reshape, transpose, reshape), GatherElements and
GatherND (a gather of the flat data), ScatterND, ScatterElements and Scatter (scatter_nd). Each variant is a one-node
ONNX model compiled with ``glow_mlir.api.compile`` and compared with ``onnx.reference.ReferenceEvaluator`` exactly
(same dtype, same values: nothing is computed but the float reductions of the scatters, done in the same order), with
the indices known at import and given at run time."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.errors import ModelError, UnsupportedError

RNG = np.random.default_rng(5)
_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}
DTYPES = [np.float32, np.int64, np.int32, np.bool_]


def data(shape: Sequence[int], dtype=np.float32) -> np.ndarray:
    if np.dtype(dtype) == np.bool_:
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-50, 50, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def indices(low: int | Sequence[int], high: int | Sequence[int], shape: Sequence[int], dtype=np.int64) -> np.ndarray:
    """Random indices in [low, high) (per entry of the last axis when given as lists): negative ones included."""
    return RNG.integers(low, high, shape).astype(dtype)


def model(op: str, inputs: dict[str, np.ndarray], known: Sequence[str] = (), opset: int = 18,
          **attrs) -> onnx.ModelProto:
    """One ``op`` node reading ``inputs`` in order; those named in ``known`` are initializers."""
    node = helper.make_node(op, list(inputs), ["y"], name="n", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(k, _ONNX[v.dtype], v.shape) for k, v in inputs.items()
                      if k not in known],
        [helper.make_empty_tensor_value_info("y")],
        initializer=[numpy_helper.from_array(v, k) for k, v in inputs.items() if k in known])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run(m: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> np.ndarray:
    known = {t.name for t in m.graph.initializer}
    return glow.compile(m).run({k: v for k, v in inputs.items() if k not in known})["y"]


def check(op: str, inputs: dict[str, np.ndarray], known: Sequence[str] = (), opset: int = 18, **attrs) -> None:
    """Compile the one-node model and compare it with the reference, exactly."""
    m = model(op, inputs, known, opset, **attrs)
    feeds = {k: v for k, v in inputs.items() if k not in known}
    (want,) = ReferenceEvaluator(m).run(None, feeds)
    got = run(m, inputs)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------- DepthToSpace, SpaceToDepth


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("opset", "mode"), [(1, None), (13, "DCR"), (13, "CRD")])
def test_depth_to_space(opset: int, mode: str | None, dtype) -> None:
    attrs = {"mode": mode} if mode else {}
    check("DepthToSpace", {"x": data([2, 12, 2, 3], dtype)}, opset=opset, blocksize=2, **attrs)


@pytest.mark.parametrize(("opset", "mode"), [(13, None), (28, "DCR"), (28, "CRD")])
def test_space_to_depth(opset: int, mode: str | None) -> None:
    attrs = {"mode": mode} if mode else {}
    check("SpaceToDepth", {"x": data([2, 3, 6, 9], np.int64)}, opset=opset, blocksize=3, **attrs)


def test_space_to_depth_inverts_depth_to_space() -> None:
    x = data([1, 8, 3, 5])
    for mode in ("DCR", "CRD"):
        nodes = [helper.make_node("DepthToSpace", ["x"], ["t"], blocksize=2, mode=mode),
                 helper.make_node("SpaceToDepth", ["t"], ["y"], blocksize=2, mode=mode)]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                                  [helper.make_empty_tensor_value_info("y")])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 28)])
        np.testing.assert_array_equal(glow.compile(m)(x), x)


@pytest.mark.parametrize(("op", "shape", "message"), [
    ("DepthToSpace", [1, 6, 2, 2], "the 6 channels do not divide into blocks of 2 x 2"),
    ("SpaceToDepth", [1, 2, 3, 4], "the spatial dims 3 x 4 do not divide into blocks of 2 x 2"),
    ("DepthToSpace", [8, 2, 2], "the input must have rank 4"),
])
def test_block_shapes_must_divide(op: str, shape: list[int], message: str) -> None:
    with pytest.raises(ModelError, match=message):
        glow.compile(model(op, {"x": data(shape)}, opset=13, blocksize=2))


# --------------------------------------------------------------------------- GatherElements


@pytest.mark.parametrize("known", [False, True], ids=["runtime", "known"])
@pytest.mark.parametrize(("axis", "dtype", "idx_dtype"), [(0, np.float32, np.int64), (1, np.int64, np.int32),
                                                          (2, np.bool_, np.int64), (1, np.int32, np.int64)])
def test_gather_elements(axis: int, dtype, idx_dtype, known: bool) -> None:
    shape = [3, 4, 5]
    ishape = list(shape)
    ishape[axis] = 6  # more indices than the axis has: repeats
    inputs = {"d": data(shape, dtype), "i": indices(-shape[axis], shape[axis], ishape, idx_dtype)}
    check("GatherElements", inputs, ["i"] if known else [], axis=axis)


def test_gather_elements_negative_axis() -> None:
    # onnx.reference refuses a negative axis: compare with the same node on axis 2
    inputs = {"d": data([2, 3, 4]), "i": indices(-4, 4, [2, 3, 2])}
    got = run(model("GatherElements", inputs, axis=-1), inputs)
    np.testing.assert_array_equal(got, run(model("GatherElements", inputs, axis=2), inputs))
    np.testing.assert_array_equal(got, np.take_along_axis(inputs["d"], inputs["i"] % 4, axis=2))


def test_gather_elements_known_index_out_of_range() -> None:
    inputs = {"d": data([3, 3]), "i": np.array([[0, 3, 1]], np.int64)}
    with pytest.raises(ModelError, match="index 3 is out of range for a dim of size 3"):
        glow.compile(model("GatherElements", inputs, ["i"], axis=1))


def test_gather_elements_runtime_index_out_of_range_is_clamped() -> None:
    inputs = {"d": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([[5, -9], [1, 2]], np.int64)}
    got = run(model("GatherElements", inputs, axis=1), inputs)
    np.testing.assert_array_equal(got, [[2, 0], [4, 5]])


# --------------------------------------------------------------------------- GatherND


@pytest.mark.parametrize("known", [False, True], ids=["runtime", "known"])
@pytest.mark.parametrize(("batch_dims", "ishape", "dtype"), [
    (0, [4, 1], np.float32),     # rows
    (0, [2, 3, 2], np.int64),    # sub-matrices of [2, 3] positions
    (0, [5, 3], np.bool_),       # elements
    (0, [3], np.float32),        # one element, a scalar result
    (1, [3, 2, 1], np.int32),    # per batch entry, rows
    (1, [3, 2], np.float32),     # per batch entry, elements
    (2, [3, 4, 1], np.float32),  # two batch dims
])
def test_gather_nd(batch_dims: int, ishape: list[int], dtype, known: bool) -> None:
    shape = [3, 4, 5]
    k = ishape[-1]
    dims = shape[batch_dims:batch_dims + k]
    idx = np.stack([indices(-n, n, ishape[:-1]) for n in dims], axis=-1).astype(np.int64)
    check("GatherND", {"d": data(shape, dtype), "i": idx}, ["i"] if known else [], opset=13, batch_dims=batch_dims)


def test_gather_nd_before_batch_dims() -> None:
    check("GatherND", {"d": data([4, 3]), "i": np.array([[1], [-1]], np.int64)}, opset=11)


def test_gather_nd_batch_dims_must_agree() -> None:
    inputs = {"d": data([3, 4]), "i": np.zeros([2, 1], np.int64)}
    with pytest.raises(ModelError, match="batch_dims 1 must be below"):
        glow.compile(model("GatherND", inputs, opset=13, batch_dims=1))


# --------------------------------------------------------------------------- ScatterND


REDUCTIONS = ["none", "add", "mul", "max", "min"]


@pytest.mark.parametrize("known", [False, True], ids=["runtime", "known"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
def test_scatter_nd(reduction: str, dtype, known: bool) -> None:
    # rows 1, -1 (= 3) and 1 again: repeated indices, applied in order
    inputs = {"d": data([4, 2, 3], dtype), "i": np.array([[1], [-1], [1]], np.int64), "u": data([3, 2, 3], dtype)}
    check("ScatterND", inputs, ["i"] if known else [], reduction=reduction)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_nd_elements(dtype) -> None:
    idx = np.array([[0, 1], [-1, -2], [2, 0]], np.int32)
    check("ScatterND", {"d": data([3, 3], dtype), "i": idx, "u": data([3], dtype)}, opset=13)


def test_scatter_nd_runtime_index_out_of_range_writes_nothing() -> None:
    inputs = {"d": np.zeros([4], np.float32), "i": np.array([[4], [-5], [-1]], np.int64),
              "u": np.array([1, 2, 3], np.float32)}
    np.testing.assert_array_equal(run(model("ScatterND", inputs, opset=13), inputs), [0, 0, 0, 3])


def test_scatter_nd_known_index_out_of_range() -> None:
    inputs = {"d": np.zeros([4], np.float32), "i": np.array([[4]], np.int64), "u": np.ones([1], np.float32)}
    with pytest.raises(ModelError, match="index 4 is out of range for a dim of size 4"):
        glow.compile(model("ScatterND", inputs, ["i"], opset=13))


def test_scatter_nd_max_before_opset_18() -> None:
    inputs = {"d": np.zeros([4], np.float32), "i": np.array([[1]], np.int64), "u": np.ones([1], np.float32)}
    with pytest.raises(ModelError, match="reduction' must be one of none, add, mul at opset 16, got 'max'"):
        glow.compile(model("ScatterND", inputs, opset=16, reduction="max"))


def test_scatter_nd_add_on_bool_is_unsupported() -> None:
    inputs = {"d": np.zeros([4], np.bool_), "i": np.array([[1]], np.int64), "u": np.ones([1], np.bool_)}
    with pytest.raises(UnsupportedError, match="reduction 'add' on bool data is not supported"):
        glow.compile(model("ScatterND", inputs, reduction="add"))


# --------------------------------------------------------------------------- ScatterElements, Scatter


@pytest.mark.parametrize("known", [False, True], ids=["runtime", "known"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("axis", "dtype"), [(0, np.float32), (1, np.int64), (2, np.int32)])
def test_scatter_elements(axis: int, dtype, reduction: str, known: bool) -> None:
    shape, ishape = [3, 4, 5], [2, 3, 4]
    ishape[axis] = 6  # more updates than the axis has: collisions
    inputs = {"d": data(shape, dtype), "i": indices(-shape[axis], shape[axis], ishape), "u": data(ishape, dtype)}
    check("ScatterElements", inputs, ["i"] if known else [], axis=axis, reduction=reduction)


def test_scatter_elements_of_bools_with_int32_indices() -> None:
    inputs = {"d": data([3, 4], np.bool_), "i": indices(-4, 4, [3, 2], np.int32), "u": data([3, 2], np.bool_)}
    check("ScatterElements", inputs, opset=13, axis=1)


def test_scatter_before_opset_11() -> None:
    # onnx.reference has no Scatter: it is ScatterElements under its earlier name
    inputs = {"d": data([3, 3]), "i": np.array([[1, 0, 2], [0, 2, 1]], np.int64), "u": data([2, 3])}
    (want,) = ReferenceEvaluator(model("ScatterElements", inputs, opset=11, axis=1)).run(None, inputs)
    np.testing.assert_array_equal(run(model("Scatter", inputs, opset=10, axis=1), inputs), want)


# --------------------------------------------------------------------------- ReverseSequence, EyeLike


@pytest.mark.parametrize("known", [True, False], ids=["known-lengths", "run-time-lengths"])
@pytest.mark.parametrize(("batch_axis", "time_axis", "shape"), [(1, 0, [5, 3, 2]), (0, 1, [3, 5])])
def test_reverse_sequence(known: bool, batch_axis: int, time_axis: int, shape: list[int]) -> None:
    # lengths 0 (nothing reversed), full and in between
    lens = np.array([5, 0, 3], np.int64)
    check("ReverseSequence", {"x": data(shape), "lens": lens}, known=["lens"] if known else [], opset=10,
          batch_axis=batch_axis, time_axis=time_axis)


def test_reverse_sequence_of_float16_with_run_time_lengths() -> None:
    # the float16 input is widened into an activation that the gather reads at computed positions; the casts after
    # the gather once fused into its loop and overwrote that activation before the last reads (a planned output
    # buffer in the memory the widened input had held): 32.06 for 1.0
    x = (np.arange(8, dtype=np.float32).reshape(2, 4) + 1).astype(np.float16)
    m = helper.make_model(helper.make_graph(
        [helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=0, time_axis=1)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 4]),
         helper.make_tensor_value_info("lens", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2, 4])]), opset_imports=[helper.make_opsetid("", 10)])
    got = glow.compile(m, cache=False).run({"x": x, "lens": np.array([4, 3])})["y"]
    np.testing.assert_array_equal(got, np.array([[4, 3, 2, 1], [7, 6, 5, 8]], np.float16))


def test_reverse_sequence_lengths_must_fit_the_time_axis() -> None:
    m = model("ReverseSequence", {"x": data([4, 2]), "lens": np.array([5, 1], np.int64)}, known=["lens"], opset=10)
    with pytest.raises(ModelError, match=r"node 'n' \(ReverseSequence\): sequence_lens \[5, 1\] must lie in \[0, 4\]"):
        glow.compile(m)


@pytest.mark.parametrize(("shape", "k", "dtype"), [([3, 5], 0, None), ([4, 3], -2, TensorProto.INT32),
                                                   ([2, 6], 3, TensorProto.BOOL)])
def test_eye_like(shape: list[int], k: int, dtype: int | None) -> None:
    attrs = {"k": k} | ({} if dtype is None else {"dtype": dtype})
    check("EyeLike", {"x": data(shape)}, opset=9, **attrs)


@pytest.mark.parametrize(("axis", "condition"), [(None, [1, 0, 0, 1, 1, 0, 1]), (0, [0, 1, 1]), (1, [1, 0, 1, 1]),
                                                 (-1, [0, 1])], ids=["flat", "axis-0", "axis-1", "short-condition"])
def test_compress_with_a_known_condition(axis: int | None, condition: list[int]) -> None:
    attrs = {} if axis is None else {"axis": axis}
    check("Compress", {"x": data([3, 4]), "c": np.array(condition, np.bool_)}, known=["c"], opset=11, **attrs)


def test_compress_with_a_run_time_condition_is_unsupported() -> None:
    m = model("Compress", {"x": data([3, 4]), "c": np.array([1, 0, 1], np.bool_)}, opset=11, axis=0)
    with pytest.raises(UnsupportedError, match=r"node 'n' \(Compress\): the condition input 'c' must be a constant"):
        glow.compile(m)


@pytest.mark.parametrize(("mode", "writes", "axis", "known"), [
    ("linear", None, -2, True), ("linear", [0, 3], -2, True), ("linear", [0, 3], -2, False),
    ("circular", [2, 5], -2, True), ("circular", [2, 5], -2, False), ("circular", [4, 1], 1, False)])
def test_tensor_scatter_writes_the_update_from_each_batch_entrys_index(mode: str, writes: list[int] | None,
                                                                        axis: int, known: bool) -> None:
    # a cache [2, 3, 6, 4] (sequence dim 2) or [2, 6, 3] (axis 1), an update of 3 steps
    shape = [2, 3, 6, 4] if axis == -2 else [2, 6, 3]
    ushape = list(shape)
    ushape[axis] = 3
    inputs = {"cache": data(shape), "update": data(ushape)}
    if writes is not None:
        inputs["writes"] = np.array(writes, np.int64)
    check("TensorScatter", inputs, known=["writes"] if known else [], opset=24, mode=mode, axis=axis)


@pytest.mark.parametrize(("mode", "lengths", "skips", "shape", "weights"), [
    ("TF", (1, 3), 2, [2, 9], False), ("IDF", (2, 2), 1, [10], True), ("TFIDF", (1, 2), 0, [3, 7], True),
    ("TF", (1, 3), 3, [11], False)])  # (onnx.reference needs weights for TFIDF and IDF)
def test_tf_idf_vectorizer(mode: str, lengths: tuple[int, int], skips: int, shape: list[int], weights: bool) -> None:
    # a pool of 3 unigrams, 3 bigrams and 2 trigrams over the tokens 1..4; two n-grams share an output column
    pool = [1, 2, 4, 1, 2, 2, 3, 4, 4, 1, 2, 3, 4, 4, 1]
    attrs = {"mode": mode, "min_gram_length": lengths[0], "max_gram_length": lengths[1], "max_skip_count": skips,
             "ngram_counts": [0, 3, 9], "ngram_indexes": [0, 1, 2, 3, 4, 5, 2, 6], "pool_int64s": pool}
    if weights:
        attrs["weights"] = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75]
    x = RNG.integers(1, 5, shape).astype(np.int64)
    check("TfIdfVectorizer", {"x": x}, opset=9, **attrs)
