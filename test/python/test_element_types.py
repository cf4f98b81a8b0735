"""Storage element types (importer/model.py STORAGE_TYPES, INTEGER_STORAGE_TYPES): a model's float64, float16 and
bfloat16 tensors are computed in float32 and kept as declared at the program's boundary; where the model stores a
float16 or bfloat16 value it is rounded to that type, so results equal onnx.reference's, which computes in the declared
types. The narrow integer types are computed in int32 (uint32 in int64) and wrapped where the model stores them."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir

RNG = np.random.default_rng(7)
TYPES = {"float16": (TensorProto.FLOAT16, np.float16), "float64": (TensorProto.DOUBLE, np.float64),
         "bfloat16": (TensorProto.BFLOAT16, ml_dtypes.bfloat16)}
#: per type: the tolerance against the reference, which computes in the declared type (two steps of its mantissa)
TOLERANCES = {"float16": 1e-3, "float64": 1e-6, "bfloat16": 2.0 ** -6}


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, tuple[int, list[int]]],
           outputs: dict[str, tuple[int, list[int]]], weights: list[onnx.TensorProto] = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "types", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
                              [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()], list(weights))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], rtol: float, atol: float) -> None:
    compiled = glow_mlir.compile(model, threads=1, cache=False)
    want = ReferenceEvaluator(model).run(None, feeds)
    got = compiled.run(feeds)
    for out, expected in zip(model.graph.output, want, strict=True):
        assert got[out.name].dtype == expected.dtype, out.name  # the declared type at the boundary
        np.testing.assert_allclose(got[out.name].astype(np.float64), expected.astype(np.float64), rtol=rtol,
                                   atol=atol, err_msg=out.name)


@pytest.mark.parametrize("name", TYPES)
def test_a_network_in_a_storage_type_matches_the_reference(name: str) -> None:
    elem, dtype = TYPES[name]
    w = numpy_helper.from_array((RNG.standard_normal((8, 6)) * 0.5).astype(dtype), "w")
    b = numpy_helper.from_array(RNG.standard_normal(6).astype(dtype), "b")
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"]), helper.make_node("Relu", ["g"], ["r"]),
             helper.make_node("Softmax", ["r"], ["y"], axis=-1)]
    model = _model(nodes, {"x": (elem, [4, 8])}, {"y": (elem, [4, 6]), "r": (elem, [4, 6])}, [w, b])
    x = RNG.standard_normal((4, 8)).astype(dtype)
    # float16 and bfloat16: the reference rounds each stored value as this does; float64: computed in float32 here
    _check(model, {"x": x}, rtol=TOLERANCES[name], atol=TOLERANCES[name])


def test_float16_values_are_rounded_where_the_model_stores_them() -> None:
    # (x + 1000) - 1000 in float16 loses x's low bits at the stored sum; computed in float32 throughout, it would not
    big = numpy_helper.from_array(np.array([1000.0], np.float16), "big")
    nodes = [helper.make_node("Add", ["x", "big"], ["s"]), helper.make_node("Sub", ["s", "big"], ["y"])]
    model = _model(nodes, {"x": (TensorProto.FLOAT16, [5])}, {"y": (TensorProto.FLOAT16, [5])}, [big])
    x = np.array([0.1, 0.3, 1.7, -0.45, 3.3], np.float16)
    compiled = glow_mlir.compile(model, threads=1, cache=False)
    got = compiled.run({"x": x})["y"]
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, x)  # the rounding happened


@pytest.mark.parametrize(("src", "to"), [(TensorProto.FLOAT, TensorProto.FLOAT16), (TensorProto.FLOAT, TensorProto.DOUBLE),
                                         (TensorProto.FLOAT16, TensorProto.FLOAT), (TensorProto.DOUBLE, TensorProto.INT64),
                                         (TensorProto.FLOAT16, TensorProto.DOUBLE),
                                         (TensorProto.FLOAT, TensorProto.BFLOAT16),
                                         (TensorProto.BFLOAT16, TensorProto.FLOAT),
                                         (TensorProto.BFLOAT16, TensorProto.FLOAT16),
                                         (TensorProto.INT32, TensorProto.BFLOAT16)])
def test_casts_among_the_float_types(src: int, to: int) -> None:
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=to)], {"x": (src, [7])}, {"y": (to, [7])})
    x = (RNG.standard_normal(7) * 30).astype(helper.tensor_dtype_to_np_dtype(src))
    if to == TensorProto.BFLOAT16 and src == TensorProto.FLOAT:  # a tie, a NaN and an overflow round as ml_dtypes does
        x[:3] = [1.0 + 2.0 ** -8, np.nan, 3.4e38]
    _check(model, {"x": x}, rtol=0, atol=0)


# --------------------------------------------------------------------------- integer storage types

INTEGERS = {"int8": (TensorProto.INT8, np.int8), "uint8": (TensorProto.UINT8, np.uint8),
            "int16": (TensorProto.INT16, np.int16), "uint16": (TensorProto.UINT16, np.uint16),
            "uint32": (TensorProto.UINT32, np.uint32)}
#: the 4- and 2-bit ones (ONNX takes them in casts, quantization and data movement)
SUB_BYTE = {"int4": (TensorProto.INT4, ml_dtypes.int4), "uint4": (TensorProto.UINT4, ml_dtypes.uint4),
            "int2": (TensorProto.INT2, ml_dtypes.int2), "uint2": (TensorProto.UINT2, ml_dtypes.uint2)}


def _full_range(dtype: type, shape: list[int], nonzero: bool = False) -> np.ndarray:
    """Values over the whole range of ``dtype`` (so sums and products overflow), the extremes included."""
    info = ml_dtypes.iinfo(dtype)
    x = RNG.integers(int(info.min), int(info.max), shape, endpoint=True)
    x.flat[:2] = [info.min, info.max]
    return np.where(x == 0, 1, x).astype(dtype) if nonzero else x.astype(dtype)


def _exact(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    compiled = glow_mlir.compile(model, threads=1, cache=False)
    got = compiled.run(feeds)
    for out, want in zip(model.graph.output, ReferenceEvaluator(model).run(None, feeds), strict=True):
        assert got[out.name].dtype == want.dtype, out.name
        np.testing.assert_array_equal(got[out.name], want, err_msg=out.name)


@pytest.mark.parametrize("name", INTEGERS)
@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "BitwiseAnd", "BitwiseOr",
                                "BitwiseXor", "Equal", "Less", "GreaterOrEqual"])
def test_binary_ops_on_integer_types_wrap_as_the_type_does(name: str, op: str) -> None:
    elem, dtype = INTEGERS[name]
    out = TensorProto.BOOL if op in ("Equal", "Less", "GreaterOrEqual") else elem
    model = _model([helper.make_node(op, ["a", "b"], ["y"])], {"a": (elem, [4, 6]), "b": (elem, [6])},
                   {"y": (out, [4, 6])})
    model.opset_import[0].version = 18
    _exact(model, {"a": _full_range(dtype, [4, 6]), "b": _full_range(dtype, [6], nonzero=op in ("Div", "Mod"))})


@pytest.mark.parametrize("name", INTEGERS)
def test_unary_ops_casts_and_reductions_on_integer_types(name: str) -> None:
    elem, dtype = INTEGERS[name]
    lo, hi = numpy_helper.from_array(np.array(-5 if dtype(0) - 1 < 0 else 3, dtype), "lo"), \
        numpy_helper.from_array(np.array(100, dtype), "hi")
    nodes = [helper.make_node("BitwiseNot", ["x"], ["not"]), helper.make_node("Clip", ["x", "lo", "hi"], ["clip"]),
             helper.make_node("Cast", ["x"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["f"], ["back"], to=elem),
             helper.make_node("ReduceSum", ["x", "axis1"], ["sum"], keepdims=0),
             helper.make_node("ReduceMax", ["x"], ["max"], keepdims=0),
             helper.make_node("ArgMin", ["x"], ["argmin"], axis=1)]
    outputs = {"not": (elem, [3, 5]), "clip": (elem, [3, 5]), "f": (TensorProto.FLOAT, [3, 5]), "back": (elem, [3, 5]),
               "sum": (elem, [3]), "max": (elem, []), "argmin": (TensorProto.INT64, [3, 1])}
    if dtype(0) - 1 < 0:  # signed: -min wraps to min
        nodes += [helper.make_node("Neg", ["x"], ["neg"]), helper.make_node("Abs", ["x"], ["abs"])]
        outputs.update({"neg": (elem, [3, 5]), "abs": (elem, [3, 5])})
    model = _model(nodes, {"x": (elem, [3, 5])}, outputs, [lo, hi, numpy_helper.from_array(np.array([1]), "axis1")])
    model.opset_import[0].version = 18
    _exact(model, {"x": _full_range(dtype, [3, 5])})


def test_an_intermediate_value_wraps_where_the_model_stores_it() -> None:
    # uint8: (a + b) wraps before the comparison and the division read it; in int32 neither would see a wrap
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Less", ["s", "a"], ["wrapped"]),
             helper.make_node("Div", ["s", "two"], ["half"])]
    two = numpy_helper.from_array(np.array([2], np.uint8), "two")
    model = _model(nodes, {"a": (TensorProto.UINT8, [6]), "b": (TensorProto.UINT8, [6])},
                   {"wrapped": (TensorProto.BOOL, [6]), "half": (TensorProto.UINT8, [6])}, [two])
    a, b = np.array([250, 10, 128, 255, 0, 3], np.uint8), np.array([10, 10, 128, 255, 0, 252], np.uint8)
    _exact(model, {"a": a, "b": b})
    assert ReferenceEvaluator(model).run(None, {"a": a, "b": b})[0].any()  # some sums did wrap


def test_max_pool_of_uint8() -> None:
    model = _model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], pads=[1, 1, 1, 1])],
                   {"x": (TensorProto.UINT8, [1, 2, 5, 5])}, {"y": (TensorProto.UINT8, [1, 2, 6, 6])})
    _exact(model, {"x": _full_range(np.uint8, [1, 2, 5, 5])})


def test_uint64_keeps_its_values_above_2_to_the_63() -> None:
    # held in int64 bit for bit: sums wrap, comparisons, Max and Min order as unsigned (the sign bit flipped)
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"]), helper.make_node("Mul", ["a", "b"], ["product"]),
             helper.make_node("Less", ["a", "b"], ["less"]), helper.make_node("GreaterOrEqual", ["a", "b"], ["ge"]),
             helper.make_node("Max", ["a", "b", "c"], ["max"]), helper.make_node("Min", ["a", "b"], ["min"]),
             helper.make_node("Equal", ["a", "b"], ["eq"]), helper.make_node("BitwiseXor", ["a", "b"], ["xor"])]
    u64, b8 = TensorProto.UINT64, TensorProto.BOOL
    outs = {"sum": (u64, [6]), "product": (u64, [6]), "less": (b8, [6]), "ge": (b8, [6]), "max": (u64, [6]),
            "min": (u64, [6]), "eq": (b8, [6]), "xor": (u64, [6])}
    model = _model(nodes, {"a": (u64, [6]), "b": (u64, [6])}, outs,
                   [numpy_helper.from_array(np.array([2 ** 63 + 5], np.uint64), "c")])
    top = np.iinfo(np.uint64).max
    a = np.array([0, 1, 2 ** 63, top, 2 ** 63 - 1, 12345], np.uint64)
    b = np.array([top, 1, 2 ** 63 - 1, 2 ** 63 + 7, 2 ** 63, 3], np.uint64)
    model.opset_import[0].version = 18
    _exact(model, {"a": a, "b": b})


@pytest.mark.parametrize("op", ["Sign", "ReduceMax", "ArgMax"])
def test_ops_that_would_read_a_uint64_as_signed_are_unsupported(op: str) -> None:
    model = _model([helper.make_node(op, ["a"], ["y"], name="n")], {"a": (TensorProto.UINT64, [3])},
                   {"y": (TensorProto.UINT64 if op == "Sign" else TensorProto.INT64, None)})
    with pytest.raises(glow_mlir.UnsupportedError, match=rf"node 'n' \({op}\): input 'a' is uint64, which {op} is not "
                                                         r"supported on \(uint64 is held in int64"):
        glow_mlir.compile(model, cache=False)


@pytest.mark.parametrize("name", ["bfloat16", "uint8", "float8e5m2", "float4e2m1"])
def test_storage_types_come_back_from_the_compile_cache(name: str, tmp_path, monkeypatch) -> None:
    from glow_mlir import cache

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    elem, dtype = {**TYPES, **INTEGERS, **MINIFLOATS}[name]
    model = _model([helper.make_node("Add", ["x", "x"], ["y"])], {"x": (elem, [4])}, {"y": (elem, [4])})
    x = np.array([1, 2, 3, 100], dtype)
    first = glow_mlir.compile(model, threads=1)
    again = glow_mlir.compile(model, threads=1)
    assert again.cache == "hit", again.cache
    for compiled in (first, again):
        got = compiled.run({"x": x})["y"]
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, {"x": x})[0])


@pytest.mark.parametrize("name", SUB_BYTE)
def test_sub_byte_integers_in_casts_quantization_and_data_movement(name: str) -> None:
    # float to the type truncates toward zero and wraps, as numpy's ml_dtypes does; a value is one per byte, in its
    # low bits, at the boundary
    elem, dtype = SUB_BYTE[name]
    scale, zero = numpy_helper.from_array(np.array(0.5, np.float32), "scale"), \
        numpy_helper.from_array(np.array(1, dtype), "zero")
    nodes = [helper.make_node("Cast", ["f"], ["c"], to=elem), helper.make_node("Transpose", ["q"], ["t"]),
             helper.make_node("Concat", ["t", "t"], ["cat"], axis=0),
             helper.make_node("DequantizeLinear", ["cat", "scale", "zero"], ["dq"]),
             helper.make_node("QuantizeLinear", ["dq", "scale", "zero"], ["back"]),
             helper.make_node("Cast", ["back"], ["wide"], to=TensorProto.FLOAT)]
    model = _model(nodes, {"f": (TensorProto.FLOAT, [8]), "q": (elem, [2, 3])},
                   {"c": (elem, [8]), "dq": (TensorProto.FLOAT, [6, 2]), "back": (elem, [6, 2]),
                    "wide": (TensorProto.FLOAT, [6, 2])}, [scale, zero])
    model.opset_import[0].version = 21
    f = np.array([-3.7, 5.2, 9.0, 1.7, -1.2, 100.0, -0.5, 2.0], np.float32)
    _exact(model, {"f": f, "q": _full_range(dtype, [2, 3])})


# --------------------------------------------------------------------------- 8- and 4-bit floats

MINIFLOATS = {"float8e4m3fn": (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
          "float8e4m3fnuz": (TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz),
          "float8e5m2": (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
          "float8e5m2fnuz": (TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz),
          "float4e2m1": (TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn)}


def _codes(dtype: type) -> np.ndarray:
    """Every value of ``dtype`` (a float4 one per byte, in its low bits)."""
    return np.arange(1 << ml_dtypes.finfo(dtype).bits, dtype=np.uint8).view(dtype)


def _float8_probes(dtype: type) -> np.ndarray:
    """float32 values that exercise every rounding case of ``dtype``: each of its values, the midpoints between
    neighbours (ties to even) and a hair either side of them, the subnormal range, beyond the largest value,
    infinities, NaN and both zeros."""
    values = np.unique(_codes(dtype).astype(np.float32))
    values = values[np.isfinite(values)]
    mids = (values[:-1] + values[1:]) / 2  # exact: neighbours are within float32's precision
    beside = np.concatenate([np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))])
    largest = float(ml_dtypes.finfo(dtype).max)
    extra = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, largest * 1.0625, largest * 1.125, largest * 4,
                      3.0e38, -3.0e38, 1e-30, -1e-30, float(ml_dtypes.finfo(dtype).smallest_subnormal) / 2],
                     np.float32)
    return np.concatenate([values, mids, beside, extra, RNG.standard_normal(200).astype(np.float32) * largest / 8])


@pytest.mark.parametrize("name", MINIFLOATS)
def test_minifloat_casts_round_every_value_as_ml_dtypes(name: str) -> None:
    # to the type without saturation: nearest even, beyond the largest value infinity (e5m2), NaN, or the largest
    # (float4); the codes compared bit for bit (NaN's included); back to float32 exactly; with saturation clipped
    # first, as ONNX says
    elem, dtype = MINIFLOATS[name]
    nodes = [helper.make_node("Cast", ["x"], ["raw"], to=elem, saturate=0),
             helper.make_node("Cast", ["x"], ["sat"], to=elem),
             helper.make_node("Cast", ["q"], ["wide"], to=TensorProto.FLOAT)]
    x = _float8_probes(dtype)
    codes = _codes(dtype)
    model = _model(nodes, {"x": (TensorProto.FLOAT, [x.size]), "q": (elem, [codes.size])},
                   {"raw": (elem, [x.size]), "sat": (elem, [x.size]), "wide": (TensorProto.FLOAT, [codes.size])})
    model.opset_import[0].version = 19
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x, "q": codes})
    for key in ("raw", "sat"):
        assert got[key].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got["raw"].view(np.uint8), x.astype(dtype).view(np.uint8))
    np.testing.assert_array_equal(got["sat"].view(np.uint8),
                                  numpy_helper.saturate_cast(x, np.dtype(dtype)).view(np.uint8))
    np.testing.assert_array_equal(got["wide"].view(np.uint32), codes.astype(np.float32).view(np.uint32))


@pytest.mark.parametrize("name", MINIFLOATS)
def test_minifloat_quantization_and_values_stored_in_the_type(name: str) -> None:
    # QuantizeLinear to the type (saturating) per axis, a value of the type stored mid-graph (the Add's sum is
    # rounded), DequantizeLinear back; the model's weight of the type is read as its values; float4 adds its zero
    # point (the 8-bit floats' is zero by the spec)
    elem, dtype = MINIFLOATS[name]
    scale = numpy_helper.from_array(np.array([0.5, 2.0, 0.125], np.float32), "scale")
    zero = numpy_helper.from_array(np.array([0, 0, 0.5 if name == "float4e2m1" else 0], dtype), "zero")
    bias = numpy_helper.from_array(np.array([[1.5, -3.0, 0.375]], dtype), "bias")
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], axis=1),
             helper.make_node("Add", ["q", "bias"], ["s"]),
             helper.make_node("DequantizeLinear", ["s", "scale", "zero"], ["y"], axis=1)]
    model = _model(nodes, {"x": (TensorProto.FLOAT, [4, 3])}, {"y": (TensorProto.FLOAT, [4, 3]), "s": (elem, [4, 3])},
                   [scale, zero, bias])
    model.opset_import[0].version = 21
    x = np.array([[1.3, -7.7, 0.01], [100.0, 3.1e5, -2.2], [-0.3, 13.0, 1e6], [0.0, -1e9, 0.06]], np.float32)
    _exact(model, {"x": x})


# --------------------------------------------------------------------------- BitCast

_BITCASTS = [(np.float32, np.int32), (np.int32, np.float32), (np.float32, np.uint32), (np.uint32, np.float32),
             (np.uint32, np.int32), (np.int32, np.uint32), (np.int8, np.uint8), (np.uint16, np.int16),
             (np.uint64, np.int64), (np.bool_, np.uint8), (np.float16, np.int16), (np.uint16, np.float16),
             (ml_dtypes.bfloat16, np.uint16), (np.int16, ml_dtypes.bfloat16), (np.float16, ml_dtypes.bfloat16),
             (ml_dtypes.float8_e4m3fn, np.uint8), (np.int8, ml_dtypes.float8_e5m2), (ml_dtypes.int4, ml_dtypes.uint4)]


def _bit_patterns(dtype: type, n: int = 64) -> np.ndarray:
    """``n`` values of ``dtype`` from random bits (NaN patterns of the floats left out: a NaN's payload need not
    survive float32 arithmetic), with 0 and the extremes of the integers."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(n) < 0.5
    if dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)):
        info = ml_dtypes.iinfo(dtype)
        return RNG.integers(int(info.min), int(info.max), n, endpoint=True).astype(dtype)
    x = RNG.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        x[:3] = [0, info.min, info.max]
        return x
    return np.where(np.isnan(x.astype(np.float32)), dtype.type(1.5), x).astype(dtype)


@pytest.mark.parametrize(("src", "to"), _BITCASTS, ids=[f"{np.dtype(a).name}-{np.dtype(b).name}" for a, b in _BITCASTS])
def test_bitcast_reads_the_bits_as_the_other_type(src: type, to: type) -> None:
    # a value the model computed (x + 0: not the graph input itself) is bitcast, and the result used (y + 0)
    elem, out = helper.np_dtype_to_tensor_dtype(np.dtype(src)), helper.np_dtype_to_tensor_dtype(np.dtype(to))
    x = _bit_patterns(src, 64)
    nodes = [helper.make_node("Identity", ["x"], ["c"]), helper.make_node("BitCast", ["c"], ["y"], to=out)]
    model = _model(nodes, {"x": (elem, [64])}, {"y": (out, [64])})
    model.opset_import[0].version = 26
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x})["y"]
    assert got.dtype == np.dtype(to)
    want = x.astype(np.uint8).view(np.dtype(to)) if np.dtype(src) == np.bool_ else x.view(np.dtype(to))
    unsigned = f"u{np.dtype(to).itemsize}"
    if np.dtype(to) in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e5m2)):
        # a NaN's payload is not kept (the value is computed in float32): NaN stays NaN
        nan = np.isnan(want.astype(np.float32))
        assert np.isnan(got.astype(np.float32)[nan]).all()
        got, want = got[~nan], want[~nan]
    np.testing.assert_array_equal(got.view(unsigned), want.view(unsigned))


def test_float64_bitcasts_keep_every_bit_at_the_graph_edges() -> None:
    # float64 is computed in float32, but a graph input's bits are read before it is narrowed, and a graph output
    # made by a bitcast is stored as the float64 itself: random bit patterns (any exponent) round-trip exactly
    x = _bit_patterns(np.float64, 64)
    bits = x.view(np.int64)
    nodes = [helper.make_node("BitCast", ["x"], ["i"], to=TensorProto.INT64),
             helper.make_node("BitCast", ["b"], ["f"], to=TensorProto.DOUBLE)]
    model = _model(nodes, {"x": (TensorProto.DOUBLE, [64]), "b": (TensorProto.INT64, [64])},
                   {"i": (TensorProto.INT64, [64]), "f": (TensorProto.DOUBLE, [64])})
    model.opset_import[0].version = 26
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x, "b": bits})
    np.testing.assert_array_equal(got["i"], bits)
    np.testing.assert_array_equal(got["f"].view(np.int64), bits)


@pytest.mark.parametrize(("src", "to", "pattern"), [
    (TensorProto.FLOAT, TensorProto.INT64, (r"input type float32 \(32 bits\) and 'to' int64 \(64 bits\) must have "
                                            r"one width")),
    (TensorProto.DOUBLE, TensorProto.INT64, (r"a bitcast from float64 to int64 of a value computed in the graph is "
                                             r"not supported \(float64 is computed in float32")),
])
def test_bitcast_refusals(src: int, to: int, pattern: str) -> None:
    nodes = [helper.make_node("Neg", ["x"], ["n"]), helper.make_node("BitCast", ["n"], ["y"], to=to)]
    model = _model(nodes, {"x": (src, [4])}, {"y": (to, [4])})
    model.opset_import[0].version = 26
    with pytest.raises(glow_mlir.GlowError, match=r"BitCast#[01]' \(BitCast\): " + pattern):
        glow_mlir.compile(model, threads=1, cache=False)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
def test_float8_e8m0_casts_round_by_the_round_mode(mode: str, saturate: int) -> None:
    # powers of two and a hair either side, midpoints, the largest exponents, tiny and subnormal floats, zeros,
    # negatives (the sign is not read), NaN and infinities: the codes bit for bit as onnx's reference rounds them;
    # every code back to float32 exactly
    powers = np.ldexp(np.float32(1), np.arange(-126, 128)).astype(np.float32)
    x = np.concatenate([powers, np.nextafter(powers, np.float32(np.inf)), np.nextafter(powers, np.float32(0)),
                        powers * np.float32(1.5), powers * np.float32(1.25), -powers[100:110],
                        np.array([0.0, -0.0, 1e-40, 3.4e38, np.inf, -np.inf, np.nan], np.float32)])
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0, round_mode=mode, saturate=saturate),
             helper.make_node("Cast", ["q"], ["wide"], to=TensorProto.FLOAT)]
    model = _model(nodes, {"x": (TensorProto.FLOAT, [x.size]), "q": (TensorProto.FLOAT8E8M0, [256])},
                   {"y": (TensorProto.FLOAT8E8M0, [x.size]), "wide": (TensorProto.FLOAT, [256])})
    model.opset_import[0].version = 25
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x, "q": codes})
    want = numpy_helper.to_float8e8m0(x, bool(saturate), mode)
    np.testing.assert_array_equal(got["y"].view(np.uint8), want.view(np.uint8))
    wide = got["wide"]
    np.testing.assert_array_equal(np.isnan(wide), np.arange(256) == 255)
    np.testing.assert_array_equal(wide[:255], np.ldexp(np.float32(1), np.arange(255) - 127).astype(np.float32))


def test_uint64_division_and_remainder_are_unsigned() -> None:
    # dividends and divisors on both sides of 2^63 (negative as int64), a divisor of 1 and one equal to the dividend
    x = np.array([2**64 - 1, 2**63 + 5, 2**64 - 2, 100, 2**63, 12345678901234567890, 7, 2**64 - 1], np.uint64)
    y = np.array([3, 2**63, 2**63 + 1, 7, 1, 2**62 + 12345, 2**64 - 1, 2**64 - 1], np.uint64)
    nodes = [helper.make_node("Div", ["x", "y"], ["q"]), helper.make_node("Mod", ["x", "y"], ["r"])]
    model = _model(nodes, {"x": (TensorProto.UINT64, [8]), "y": (TensorProto.UINT64, [8])},
                   {"q": (TensorProto.UINT64, [8]), "r": (TensorProto.UINT64, [8])})
    _exact(model, {"x": x, "y": y})
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x, "y": y})
    np.testing.assert_array_equal(got["q"], x // y)  # numpy's own unsigned arithmetic agrees
    np.testing.assert_array_equal(got["r"], x % y)


def test_pow_of_a_float_base_takes_a_uint64_exponent_above_2_to_the_63() -> None:
    x = np.array([2.0, 0.5, 1.0, -1.0], np.float32)
    y = np.array([3, 2**63 + 8, 2**64 - 1, 2**63 + 2], np.uint64)
    model = _model([helper.make_node("Pow", ["x", "y"], ["z"])],
                   {"x": (TensorProto.FLOAT, [4]), "y": (TensorProto.UINT64, [4])}, {"z": (TensorProto.FLOAT, [4])})
    got = glow_mlir.compile(model, threads=1, cache=False).run({"x": x, "y": y})["z"]
    np.testing.assert_array_equal(got, np.array([8.0, 0.0, 1.0, 1.0], np.float32))


def test_uint64_shifts_right_logically_and_top_k_orders_as_unsigned() -> None:
    # values above 2^63 (negative as int64): a logical right shift by 0..63; TopK's largest and smallest
    x = np.array([2**64 - 1, 2**63, 2**63 + 12345, 7, 0, 2**62 + 3], np.uint64)
    s = np.array([0, 1, 63, 2, 5, 17], np.uint64)
    k = numpy_helper.from_array(np.array([3], np.int64), "k")
    nodes = [helper.make_node("BitShift", ["x", "s"], ["right"], direction="RIGHT"),
             helper.make_node("BitShift", ["x", "s"], ["left"], direction="LEFT"),
             helper.make_node("TopK", ["x", "k"], ["top", "top_i"]),
             helper.make_node("TopK", ["x", "k"], ["low", "low_i"], largest=0)]
    outputs = {"right": (TensorProto.UINT64, [6]), "left": (TensorProto.UINT64, [6]), "top": (TensorProto.UINT64, [3]),
               "top_i": (TensorProto.INT64, [3]), "low": (TensorProto.UINT64, [3]), "low_i": (TensorProto.INT64, [3])}
    model = _model(nodes, {"x": (TensorProto.UINT64, [6]), "s": (TensorProto.UINT64, [6])}, outputs, [k])
    _exact(model, {"x": x, "s": s})
