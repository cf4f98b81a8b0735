"""glowir: the address-only instruction level. Buffers are memrefs; instructions have
no results, and every buffer operand has a role: @in (read), @out (written), @inout.

Declarations (``weight_var``, ``alloc_activation``, ``tensor_view``) yield the buffers
that instructions read and write.
"""

from __future__ import annotations

from mlir import ir

from . import control
from . import quantized as Q
from . import shapes as S
from .optable import Attr, Dialect, OpDef, Operand, OpInfo, VerifyError

_INSTR = frozenset({"instruction"})
_DEST = Operand("dest", role="out")


def _instr(name: str, doc: str, ins: tuple[str, ...], rule: S.Rule, attrs: tuple[Attr, ...] = (),
           traits: frozenset[str] = _INSTR) -> OpDef:
    return OpDef(name, doc, (_DEST, *(Operand(i) for i in ins)), attrs, results=(),
                 check=S.instruction(rule), traits=traits)


def _check_weight(info: OpInfo) -> None:
    """A const weight carries a value of its buffer's shape; a mutable one carries none."""
    mut, value = info.attrs["mutability"], info.attrs.get("value")
    if mut not in ("const", "mutable"):
        raise VerifyError(f"mutability must be 'const' or 'mutable', got '{mut}'")
    _check_offset(info)
    if mut == "const" and value is None:
        raise VerifyError("a const weight_var needs a 'value'")
    if value is not None:
        vt = ir.ShapedType(ir.DenseElementsAttr(value).type)
        bt = ir.ShapedType(info.result_types[0])
        if list(vt.shape) != list(bt.shape) or vt.element_type != bt.element_type:
            raise VerifyError(f"value of type {vt} does not fit the buffer {bt}")


def _check_offset(info: OpInfo) -> None:
    """A planned buffer's byte offset in its memory region is not negative."""
    if info.attrs.get("offset", 0) < 0:
        raise VerifyError(f"offset must not be negative, got {info.attrs['offset']}")


def _check_view(info: OpInfo) -> None:
    """A view keeps the element type and does not read past its source."""
    src, view = ir.ShapedType(info.operand_types[0]), ir.ShapedType(info.result_types[0])
    if src.element_type != view.element_type:
        raise VerifyError(f"view element type {view.element_type} differs from the source's {src.element_type}")
    offsets = info.attrs.get("offsets") or []
    src_n = 1
    for d in src.shape:
        src_n *= d
    view_n = 1
    for d in view.shape:
        view_n *= d
    flat_offset = 0
    if offsets:
        if len(offsets) != src.rank:
            raise VerifyError(f"offsets {offsets} must have one entry per source dimension ({src.rank})")
        stride = 1
        for d, o in zip(reversed(src.shape), reversed(offsets)):
            flat_offset += o * stride
            stride *= d
    if flat_offset + view_n > src_n:
        raise VerifyError(f"view of {view_n} elements at offset {flat_offset} reads past the {src_n}-element source")


#: ``elementwise``: dest[i] is computed from element i of each input alone, every input element being read before
#: dest[i] is written; the IR optimizer may then run the op in place on an input of dest's type
#: (passes/ir/liveness.py, inplace_safe). An op that reads other positions (matmul, transpose, convolution,
#: broadcasts, reductions) or writes dest before reading its inputs (e.g. a fill then an accumulation) must not
#: carry it.
_EWI = frozenset({"instruction", "elementwise"})
#: a windowed instruction's geometry, as its node's: strides, pads [top, left, bottom, right], dilations
_WINDOW = (Attr("strides", "i64s"), Attr("pads", "i64s"), Attr("dilations", "i64s"))

# --- reductions, softmax, normalization and batched matmul ---
_AXES = Attr("axes", "i64s")
_AXIS = Attr("axis", "i64")

OPS: list[OpDef] = [
    OpDef("weight_var", "A weight: a constant (with its value) or a mutable input/output buffer.", (),
          (Attr("name", "str"), Attr("mutability", "str", doc="'const' or 'mutable'"),
           Attr("value", "elements", optional=True, doc="the data of a const weight"),
           Attr("offset", "i64", optional=True, doc="byte offset in its memory region, once memory is planned")),
          results=("buffer",), check=_check_weight, traits=frozenset({"declaration"})),
    OpDef("alloc_activation", "Allocate an activation buffer; its live range ends at dealloc_activation.", (),
          (Attr("name", "str", optional=True),
           Attr("offset", "i64", optional=True, doc="byte offset in the activations region, once memory is planned")),
          results=("buffer",), check=_check_offset, traits=frozenset({"declaration"})),
    OpDef("dealloc_activation", "End the live range of an activation buffer.",
          (Operand("buffer", role="out"),), results=(), traits=frozenset({"dealloc"})),
    OpDef("tensor_view", "Reinterpret a buffer under another shape (no data moves).",
          (Operand("src", role="in"),), (Attr("offsets", "i64s", optional=True),), results=("view",),
          check=_check_view, traits=frozenset({"declaration", "view"})),
    _instr("copy", "dest = src.", ("src",), S.same_as_first, traits=_EWI),
    OpDef("splat", "Fill dest with one value (typed like its elements).", (_DEST,), (Attr("value", "scalar"),),
          results=(), check=S.splat, traits=_INSTR),
    OpDef("random_uniform", "Fill dest with float32 draws in [0, 1) (glowgraph.random_uniform), anew each run.",
          (_DEST,), (Attr("seed", "i64"),), results=(), check=S.random_uniform, traits=_INSTR),
    _instr("fully_connected", "dest = src * weights + bias, then the fused activation if any.",
           ("src", "weights", "bias"), S.with_activation(S.fully_connected), S.ACTIVATION),
    _instr("matmul", "dest = lhs * rhs.", ("lhs", "rhs"), S.matmul),
    _instr("batched_add", "dest[n] = batch[n] + slice for every n.", ("batch", "slice"), S.batched_add),
    *(_instr("element_" + n, f"Elementwise {n}.", ("lhs", "rhs"), S.same_as_first, traits=_EWI)
      for n in ("add", "sub", "mul", "div", "max", "min")),
    *(_instr(n, f"Elementwise {n}.", ("src",), S.float_unary, traits=_EWI) for n in ("relu", "sigmoid", "tanh")),
    _instr("transpose", "dest = transpose(src, shuffle).", ("src",), S.transpose, (Attr("shuffle", "i64s"),)),
    _instr("broadcast", "dest = broadcast(src) to dest's shape.", ("src",), S.broadcast, (Attr("shape", "i64s"),)),

    # --- convolution, pooling and normalization (NHWC) ---
    _instr("conv2d", "dest = conv2d(src, filter) + bias, NHWC with an HWCF filter, then the fused activation if any.",
           ("src", "filter", "bias"), S.with_activation(S.conv2d), (*_WINDOW, Attr("group", "i64"), *S.ACTIVATION)),
    _instr("max_pool", "dest = the maximum of each window of src, NHWC.", ("src",), S.max_pool,
           (Attr("kernels", "i64s"), *_WINDOW, Attr("ceil_mode", "i64"))),
    _instr("avg_pool", "dest = the average of each window of src, NHWC.", ("src",), S.avg_pool,
           (Attr("kernels", "i64s"), *_WINDOW, Attr("ceil_mode", "i64"), Attr("count_include_pad", "i64"))),
    _instr("local_response_norm", "dest = local response normalization of src across channels, NHWC.", ("src",),
           S.local_response_norm, (Attr("size", "i64"), Attr("alpha", "f32"), Attr("beta", "f32"),
                                    Attr("bias", "f32"))),
    _instr("pad", "dest = src grown (or cropped) by pads, filled with value.", ("src",), S.pad,
           (Attr("pads", "i64s"), Attr("value", "scalar"))),

    # --- elementwise math, activations, comparisons and casts ---
    *(_instr(n, f"dest = {n}(src), floats.", ("src",), S.float_unary, traits=_EWI)
      for n in ("exp", "log", "sqrt", "erf", "floor", "ceil", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                "cosh", "asinh", "acosh", "atanh", "round")),
    _instr("neg", "dest = -src.", ("src",), S.numeric_unary, traits=_EWI),
    _instr("abs", "dest = |src|.", ("src",), S.numeric_unary, traits=_EWI),
    _instr("element_pow", "dest = lhs ** rhs, floats.", ("lhs", "rhs"), S.float_binary, traits=_EWI),
    _instr("element_mod", "dest = lhs mod rhs: fmod 1 has the sign of lhs, fmod 0 that of rhs.", ("lhs", "rhs"),
           S.mod, (Attr("fmod", "i64"),), traits=_EWI),
    _instr("element_shift_left", "dest = lhs << rhs (0 outside 0 <= rhs < the width).", ("lhs", "rhs"),
           S.integer_binary, traits=_EWI),
    _instr("element_shift_right", "dest = lhs >> rhs, arithmetic (the sign alone outside 0 <= rhs < the width).",
           ("lhs", "rhs"), S.integer_binary, traits=_EWI),
    _instr("element_cmp_eq", "dest (i1) = lhs == rhs.", ("lhs", "rhs"), S.same_as_first_bool, traits=_EWI),
    _instr("element_cmp_lt", "dest (i1) = lhs < rhs.", ("lhs", "rhs"), S.ordered_compare, traits=_EWI),
    _instr("element_cmp_lte", "dest (i1) = lhs <= rhs.", ("lhs", "rhs"), S.ordered_compare, traits=_EWI),
    _instr("not", "dest = ~src, integers (on i1, logical).", ("src",), S.bitwise_unary, traits=_EWI),
    _instr("element_and", "dest = lhs & rhs, integers (on i1, logical).", ("lhs", "rhs"), S.bitwise_binary,
           traits=_EWI),
    _instr("element_or", "dest = lhs | rhs, integers (on i1, logical).", ("lhs", "rhs"), S.bitwise_binary,
           traits=_EWI),
    _instr("element_xor", "dest = lhs ^ rhs, integers (on i1, logical).", ("lhs", "rhs"), S.bitwise_binary,
           traits=_EWI),
    _instr("element_select", "dest = cond ? lhs : rhs.", ("cond", "lhs", "rhs"), S.select, traits=_EWI),
    _instr("cast", "dest = src converted to dest's element type 'to'.", ("src",), S.cast, (Attr("to", "type"),),
           traits=_EWI),
    _instr("bitcast", "dest = the bits of src read as dest's element type 'to' (of src's width).", ("src",), S.bitcast,
           (Attr("to", "type"),), traits=_EWI),

    # --- data movement and shapes ---
    OpDef("extract_tensor", "dest = the box of src at offsets, every steps-th element (steps default to 1).",
          (_DEST, Operand("src")), (Attr("offsets", "i64s"), Attr("steps", "i64s", optional=True)), results=(),
          check=S.extract_tensor, traits=_INSTR),
    OpDef("insert_tensor", "The box of dest at offsets, of src's shape, = src; the rest of dest is left as it is.",
          (Operand("dest", role="inout"), Operand("src")), (Attr("offsets", "i64s"),), results=(),
          check=S.insert_tensor, traits=_INSTR),
    OpDef("step_slice", "dest = src[index] along dim 0 (index: a 0-d i64 buffer).",
          (_DEST, Operand("src"), Operand("index")), results=(), check=control.step_slice_instr, traits=_INSTR),
    OpDef("step_insert", "dest[index] = src along dim 0; the rest of dest is left as it is.",
          (Operand("dest", role="inout"), Operand("src"), Operand("index")), results=(), check=control.step_insert,
          traits=_INSTR),
    _instr("gather", "dest = gather(data, indices) along axis (a negative index counts from the end).",
           ("data", "indices"), S.gather, (Attr("axis", "i64"),)),
    _instr("scatter_nd", "dest = data, then updates written at the indices (or combined by reduction) in order; an "
           "index outside its dim writes nothing.", ("data", "indices", "updates"), S.scatter_nd,
           (Attr("reduction", "str"),)),

    # --- reductions, softmax, normalization and batched matmul ---
    *(_instr(f"reduce_{n}", f"dest = the {n} of src over the axes (dest has src's shape without them).", ("src",),
             S.reduce, (_AXES,)) for n in ("sum", "max", "min", "prod")),
    _instr("reduce_l2", "dest = sqrt(sum(src * src)) over the axes.", ("src",), S.float_reduce, (_AXES,)),
    _instr("softmax", "dest = softmax(src) along axis, max-subtracted.", ("src",), S.softmax, (_AXIS,)),
    _instr("log_softmax", "dest = log_softmax(src) along axis, max-subtracted.", ("src",), S.softmax, (_AXIS,)),
    _instr("layer_norm", "dest = (src - mean) / sqrt(var + epsilon) * scale + bias over the dims from axis on.",
           ("src", "scale", "bias"), S.layer_norm, (_AXIS, Attr("epsilon", "f32"))),
    _instr("batch_matmul", "dest[b] = lhs[b] * rhs[b].", ("lhs", "rhs"), S.batch_matmul),
    _instr("arg_max", "dest = index of the max of src along axis (the last one with select_last = 1).", ("src",),
           S.arg_max, (_AXIS, Attr("select_last", "i64"))),

    # --- int8 (dialects/quantized.py) ---
    _instr("quantize", "dest (i8) = saturate(round_half_even(src / scale) + offset).", ("src",), Q.quantize, Q.OUTPUT,
           traits=_EWI),
    _instr("dequantize", "dest (f32) = (src - offset) * scale.", ("src",), Q.dequantize, Q.OUTPUT, traits=_EWI),
    _instr("rescale", "dest = src (i8) under other parameters, clamped.", ("src",), Q.rescale,
           (Attr("input_scale", "f32"), Attr("input_offset", "i64"), *Q.OUTPUT, *Q.CLAMP), traits=_EWI),
    _instr("qadd", "dest = lhs + rhs, int8, rescaled to dest's parameters, clamped.", ("lhs", "rhs"), Q.qadd,
           (Attr("lhs_scale", "f32"), Attr("lhs_offset", "i64"), Attr("rhs_scale", "f32"), Attr("rhs_offset", "i64"),
            *Q.OUTPUT, *Q.CLAMP), traits=_EWI),
    _instr("qconv2d", "dest = requantize(bias + conv2d(src padded with input_offset, filter)), int8, NHWC/HWCF.",
           ("src", "filter", "bias"), Q.qconv2d, (*_WINDOW, Attr("group", "i64"), Attr("input_offset", "i64"),
                                                 *Q.REQUANT)),
    _instr("qfully_connected", "dest = requantize(bias + src * weights), int8.", ("src", "weights", "bias"),
           Q.qfully_connected, Q.REQUANT),

    # --- control flow (dialects/control.py) ---
    OpDef("loop", "Run the body while the iteration number, written into counter before each iteration, is below "
          "max_trip and (with has_condition = 1) the condition holds; the body reads and writes the buffers of the "
          "enclosing program directly.", (Operand("counter", role="inout"), Operand("condition", role="inout")),
          (Attr("max_trip", "i64"), Attr("has_condition", "i64")), results=(), check=control.ir_loop,
          traits=frozenset({"instruction", "loop"}), regions=("body",)),
    OpDef("if", "Run the then region when the i1 condition holds, else the else region; both read and write the "
          "buffers of the enclosing program directly.", (Operand("condition"),), (), results=(),
          check=control.ir_if, traits=frozenset({"instruction", "branch"}), regions=("then", "else")),
]

DIALECT = Dialect("glowir", "memref", OPS, __doc__ or "")
DIALECT.register_python(globals())
