"""If, Loop and Scan against onnx.reference: a known condition selects its branch (reading the enclosing graph's
values), short known trip counts unroll with loop-carried values and scan outputs, a body's own known condition ends
a loop, Scan in both directions and on another axis, control flow nested; If on a condition computed at run time
is an scf.if in the graph and a glowir.if in the program. Longer loops are loops in the graph (scf.for, with scan outputs) and in the program
(glowir.loop); a condition computed at run time makes a bounded scf.while; a trip count computed at run time, scan
outputs of such a loop and loop-carried values that change shape are clean UnsupportedErrors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from mlir import ir
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import glow_mlir.api as glow
from glow_mlir.dialects import make_context
from glow_mlir.errors import ModelError, UnsupportedError
from glow_mlir.importer import import_model
from glow_mlir.importer.handlers.control import LoopBoundWarning

RNG = np.random.default_rng(3)
F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
#: a constant-true condition (onnx.reference stops a loop whose condition input is left out after one iteration)
YES = [numpy_helper.from_array(np.array(True), "yes")]


def vi(name: str, elem: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "control", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def check(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> glow.CompiledModel:
    compiled = glow.compile(m, cache=False)
    got = compiled.run(feeds)
    for out, want in zip(m.graph.output, ReferenceEvaluator(m).run(None, feeds), strict=True):
        np.testing.assert_allclose(got[out.name], want, rtol=1e-5, atol=1e-6, err_msg=out.name)
    return compiled


def branches() -> tuple[onnx.GraphProto, onnx.GraphProto]:
    """then: x * 2 + y; else: x - y (both read the enclosing x and y)."""
    then = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t0"]), helper.make_node("Add", ["t0", "y"], ["t"])],
                             "then", [], [vi("t", F32, [2, 3])], [numpy_helper.from_array(np.array(2, np.float32), "two")])
    other = helper.make_graph([helper.make_node("Sub", ["x", "y"], ["e"])], "else", [], [vi("e", F32, [2, 3])])
    return then, other


@pytest.mark.parametrize("flag", [True, False])
def test_if_with_a_known_condition_is_its_branch(flag: bool) -> None:
    then, other = branches()
    nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array(flag))),
             helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other)]
    m = model(nodes, [vi("x", F32, [2, 3]), vi("y", F32, [2, 3])], [vi("z", F32, [2, 3])])
    x, y = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((2, 3)).astype(np.float32)
    compiled = check(m, {"x": x, "y": y})
    assert ('"glowgraph.mul"' in compiled.stage("import").text) == flag


def test_if_on_a_shape_test_folds_as_exported_models_have_it() -> None:
    # if x.shape[0] == 2: ... (torch.onnx export of a data-independent branch)
    then, other = branches()
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
             helper.make_node("Equal", ["d0", "two_i"], ["c"]),
             helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other)]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.array(2, np.int64), "two_i")]
    m = model(nodes, [vi("x", F32, [2, 3]), vi("y", F32, [2, 3])], [vi("z", F32, [2, 3])], inits)
    check(m, {"x": RNG.standard_normal((2, 3)).astype(np.float32), "y": RNG.standard_normal((2, 3)).astype(np.float32)})


def test_known_values_a_folded_if_gives_feed_shape_inputs() -> None:
    # if x.shape[0] == 2 then [3, 2] else [6, 1] as the branch's Split of a constant, joined by a Concat outside the
    # If and used as Reshape's shape: the Concat (not static before the If was folded) is evaluated at import
    dims = numpy_helper.from_array(np.array([3, 2], np.int64), "dims")
    then = helper.make_graph([helper.make_node("Split", ["dims"], ["a", "b"], axis=0, num_outputs=2)], "then", [],
                             [vi("a", I64, [1]), vi("b", I64, [1])])
    other = helper.make_graph([helper.make_node("Constant", [], ["a2"], value_ints=[6]),
                               helper.make_node("Constant", [], ["b2"], value_ints=[1])], "else", [],
                              [vi("a2", I64, [1]), vi("b2", I64, [1])])
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
             helper.make_node("Equal", ["d0", "two"], ["c"]),
             helper.make_node("If", ["c"], ["p", "q"], then_branch=then, else_branch=other),
             helper.make_node("Concat", ["p", "q"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["z"])]
    inits = [dims, numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array(2, np.int64), "two")]
    m = model(nodes, [vi("x", F32, [2, 3])], [vi("z", F32, None)], inits, opset=18)
    compiled = check(m, {"x": RNG.standard_normal((2, 3)).astype(np.float32)})
    assert compiled.outputs[0].shape == (3, 2)


def test_a_shape_computed_outside_and_read_only_inside_a_branch_is_known() -> None:
    # Expand's shape [2, 3] made from x's shape by nodes of the main graph that only the branches read (readers in
    # subgraphs count: the shape is evaluated at import); the condition is given at run time
    then = helper.make_graph([helper.make_node("Expand", ["v", "shape"], ["t"])], "then", [], [vi("t", F32, [2, 3])])
    other = helper.make_graph([helper.make_node("Expand", ["w", "shape"], ["e"])], "else", [], [vi("e", F32, [2, 3])])
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Mul", ["s", "one"], ["shape"]),
             helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other)]
    inits = [numpy_helper.from_array(np.array(1, np.int64), "one"),
             numpy_helper.from_array(np.array([1.0, 2.0, 3.0], np.float32), "v"),
             numpy_helper.from_array(np.array([[5.0], [6.0]], np.float32), "w")]
    m = model(nodes, [vi("x", F32, [2, 3]), vi("c", BOOL, [])], [vi("z", F32, [2, 3])], inits)
    for flag in (True, False):
        check(m, {"x": np.zeros((2, 3), np.float32), "c": np.array(flag)})


@pytest.mark.parametrize("cond_shape", [[], [1]])
def test_if_on_a_runtime_condition_runs_the_branch_it_picks(cond_shape: list[int]) -> None:
    then, other = branches()
    m = model([helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other)],
              [vi("c", BOOL, cond_shape), vi("x", F32, [2, 3]), vi("y", F32, [2, 3])], [vi("z", F32, [2, 3])])
    x, y = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((2, 3)).astype(np.float32)
    assert "scf.if" in graph_text(m)
    compiled = glow.compile(m, cache=False)
    # one glowir.if; each branch writes the output itself (no copy): then x * 2 + y, else x - y
    program = compiled.stage("iropt").text
    assert program.count('"glowir.if"') == 1 and '"glowir.copy"' not in program, program
    for flag in (True, False):
        feeds = {"c": np.full(cond_shape, flag), "x": x, "y": y}
        np.testing.assert_allclose(compiled.run(feeds)["z"], ReferenceEvaluator(m).run(None, feeds)[0], rtol=1e-6)


def test_if_on_a_runtime_condition_with_branches_of_other_shapes_is_unsupported() -> None:
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", F32, [2, 3])])
    other = helper.make_graph([helper.make_node("Transpose", ["x"], ["e"])], "else", [], [vi("e", F32, [3, 2])])
    m = model([helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other)],
              [vi("c", BOOL, []), vi("x", F32, [2, 3])], [vi("z", F32, None)])
    with pytest.raises(UnsupportedError, match=r"node 'If#0' \(If\): output #0 is \[2, 3\] float32 in then_branch but "
                                               r"\[3, 2\] float32 in else_branch: a condition computed at run time needs "
                                               r"one static type"):
        glow.compile(m, cache=False)


def loop_body(stop_after: int | None = None) -> onnx.GraphProto:
    """acc = acc + x * i; scan out acc; the condition i + 1 < stop_after (or the incoming one)."""
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=F32),
             helper.make_node("Mul", ["x", "fi"], ["xi"]),
             helper.make_node("Add", ["acc", "xi"], ["acc_out"]),
             helper.make_node("Identity", ["acc_out"], ["scan_out"])]
    inits = []
    if stop_after is None:
        nodes.append(helper.make_node("Identity", ["cond"], ["cond_out"]))
    else:
        nodes += [helper.make_node("Add", ["i", "one"], ["next"]), helper.make_node("Less", ["next", "limit"], ["cond_out"])]
        inits = [numpy_helper.from_array(np.array(1, np.int64), "one"),
                 numpy_helper.from_array(np.array(stop_after, np.int64), "limit")]
    return helper.make_graph(nodes, "body", [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F32, [3])],
                             [vi("cond_out", BOOL, []), vi("acc_out", F32, [3]), vi("scan_out", F32, [3])], inits)


@pytest.mark.parametrize(("trip", "stop_after"), [(4, None), (6, 3), (None, 5)])
def test_loop_unrolls_a_known_trip_count(trip: int | None, stop_after: int | None) -> None:
    inits = [numpy_helper.from_array(np.array(True), "keep_going")]
    inputs = ["", "keep_going", "acc0"]
    if trip is not None:
        inits.append(numpy_helper.from_array(np.array(trip, np.int64), "M"))
        inputs[0] = "M"
    node = helper.make_node("Loop", inputs, ["acc", "history"], body=loop_body(stop_after))
    m = model([node], [vi("x", F32, [3]), vi("acc0", F32, [3])], [vi("acc", F32, [3]), vi("history", F32, None)], inits)
    check(m, {"x": RNG.standard_normal(3).astype(np.float32), "acc0": RNG.standard_normal(3).astype(np.float32)})


@pytest.mark.parametrize("trip", [0, 1, 5, 9])
def test_a_trip_count_computed_at_run_time_makes_a_while_loop(trip: int) -> None:
    # only loop-carried values: no bound needed, the trip count is read at run time
    node = helper.make_node("Loop", ["M", "yes", "acc0"], ["acc"], body=loop_body())
    del node.attribute[0].g.output[2]
    m = model([node], [vi("M", I64, []), vi("x", F32, [3]), vi("acc0", F32, [3])], [vi("acc", F32, [3])], YES)
    assert "scf.while" in graph_text(m)
    check(m, {"M": np.array(trip, np.int64), "x": RNG.standard_normal(3).astype(np.float32),
              "acc0": RNG.standard_normal(3).astype(np.float32)})


def test_scan_outputs_of_a_run_time_trip_count_take_their_declared_length() -> None:
    node = helper.make_node("Loop", ["M", "yes", "acc0"], ["acc", "history"], body=loop_body())
    m = model([node], [vi("M", I64, []), vi("x", F32, [3]), vi("acc0", F32, [3])],
              [vi("acc", F32, [3]), vi("history", F32, [6, 3])], YES)
    feeds = {"M": np.array(6, np.int64), "x": RNG.standard_normal(3).astype(np.float32),
             "acc0": RNG.standard_normal(3).astype(np.float32)}
    with pytest.warns(LoopBoundWarning, match=r"node 'Loop#0' \(Loop\): the loop may end before its bound of 6 "
                                              r"iterations .* its scan outputs have 6 rows, those after its last "
                                              "iteration zero"):
        compiled = check(m, feeds)
    # a shorter run: the rows it does not reach are zero
    got = compiled.run({**feeds, "M": np.array(4, np.int64)})["history"]
    want = ReferenceEvaluator(m).run(None, {**feeds, "M": np.array(4, np.int64)})[1]
    np.testing.assert_allclose(got[:4], want, rtol=1e-5, atol=1e-6)
    assert got.shape == (6, 3) and not got[4:].any()


def test_scan_outputs_of_a_run_time_trip_count_without_a_declared_length_are_unsupported() -> None:
    node = helper.make_node("Loop", ["M", "yes", "acc0"], ["acc", "history"], body=loop_body())
    m = model([node], [vi("M", I64, []), vi("x", F32, [3]), vi("acc0", F32, [3])],
              [vi("acc", F32, [3]), vi("history", F32, None)], YES)
    with pytest.raises(UnsupportedError, match=r"node 'Loop#0' \(Loop\): scan outputs of a loop whose trip count is "
                                               r"computed at run time need a bound"):
        glow.compile(m, cache=False)


@pytest.mark.parametrize(("steps", "in_axis", "in_dir", "out_dir", "out_axis"),
                         [(5, 0, 0, 0, 0), (5, 1, 1, 0, 0), (5, 0, 0, 1, 0), (9, 1, 1, 1, 1), (3, 0, 1, 0, 1)])
def test_scan_running_sum(steps: int, in_axis: int, in_dir: int, out_dir: int, out_axis: int) -> None:
    # more than 4 steps: a loop in the graph; 3: unrolled
    body = helper.make_graph([helper.make_node("Add", ["s", "row"], ["s_out"]),
                              helper.make_node("Mul", ["s_out", "row"], ["y"])], "body",
                             [vi("s", F32, [2]), vi("row", F32, [2])], [vi("s_out", F32, [2]), vi("y", F32, [2])])
    shape = [steps, 2] if in_axis == 0 else [2, steps]
    node = helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1,
                            scan_input_axes=[in_axis], scan_input_directions=[in_dir], scan_output_directions=[out_dir],
                            scan_output_axes=[out_axis])
    m = model([node], [vi("s0", F32, [2]), vi("xs", F32, shape)], [vi("s", F32, [2]), vi("ys", F32, None)])
    assert ("scf.for" in graph_text(m)) == (steps > 4)
    s0, xs = RNG.standard_normal(2).astype(np.float32), RNG.standard_normal(shape).astype(np.float32)
    if not (in_dir or out_dir):
        check(m, {"s0": s0, "xs": xs})
        return
    # onnx.reference implements forward directions only: the spec's loop in numpy
    rows = xs if in_axis == 0 else xs.T
    rows = rows[::-1] if in_dir else rows
    state, ys = s0.copy(), []
    for row in rows:
        state = state + row
        ys.append(state * row)
    ys = np.stack(ys[::-1] if out_dir else ys, axis=out_axis)
    got = glow.compile(m, cache=False).run({"s0": s0, "xs": xs})
    np.testing.assert_allclose(got["s"], state, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["ys"], ys, rtol=1e-5, atol=1e-6)


def test_if_nested_in_a_loop_body() -> None:
    # the body picks x or -x by the parity of the (known) iteration number
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["p"])], "then", [], [vi("p", F32, [3])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["n"])], "else", [], [vi("n", F32, [3])])
    body = helper.make_graph([helper.make_node("Mod", ["i", "two"], ["r"]),
                              helper.make_node("Equal", ["r", "zero"], ["even"]),
                              helper.make_node("If", ["even"], ["term"], then_branch=then, else_branch=other),
                              helper.make_node("Add", ["acc", "term"], ["acc_out"]),
                              helper.make_node("Identity", ["cond"], ["cond_out"])], "body",
                             [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F32, [3])],
                             [vi("cond_out", BOOL, []), vi("acc_out", F32, [3])],
                             [numpy_helper.from_array(np.array(2, np.int64), "two"),
                              numpy_helper.from_array(np.array(0, np.int64), "zero")])
    inits = [numpy_helper.from_array(np.array(5, np.int64), "M")]
    m = model([helper.make_node("Loop", ["M", "", "acc0"], ["acc"], body=body)],
              [vi("x", F32, [3]), vi("acc0", F32, [3])], [vi("acc", F32, [3])], inits)
    x, acc0 = RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
    # +x, -x, +x, -x, +x; onnx.reference runs no iteration when the condition input is left out (the spec: run M
    # times), so the expectation is written out
    got = glow.compile(m, cache=False).run({"x": x, "acc0": acc0})["acc"]
    np.testing.assert_allclose(got, acc0 + x, rtol=1e-6, atol=1e-6)


def graph_text(m: onnx.ModelProto) -> str:
    """The imported graph's text."""
    with make_context() as ctx, ir.Location.unknown():
        return str(import_model(m, ctx).module)


@pytest.mark.parametrize("trip", [5, 40])
def test_a_longer_loop_is_a_loop_in_the_graph(trip: int) -> None:
    inits = [numpy_helper.from_array(np.array(True), "keep_going"), numpy_helper.from_array(np.array(trip, np.int64), "M")]
    node = helper.make_node("Loop", ["M", "keep_going", "acc0"], ["acc", "history"], body=loop_body())
    m = model([node], [vi("x", F32, [3]), vi("acc0", F32, [3])], [vi("acc", F32, [3]), vi("history", F32, None)], inits)
    text = graph_text(m)
    assert "scf.for" in text and text.count('"glowgraph.mul"') == 1, text  # one body, whatever the trip count
    compiled = check(m, {"x": RNG.standard_normal(3).astype(np.float32), "acc0": RNG.standard_normal(3).astype(np.float32)})
    program = compiled.stage("iropt").text
    assert program.count('"glowir.loop"') == 1 and f"max_trip = {trip} : i64" in program, program


def while_body() -> onnx.GraphProto:
    """acc = acc * 2 + x; the loop goes on while sum(acc) < limit (a condition computed at run time)."""
    nodes = [helper.make_node("Mul", ["acc", "two"], ["twice"]), helper.make_node("Add", ["twice", "x"], ["acc_out"]),
             helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
             helper.make_node("Less", ["total", "limit"], ["cond_out"])]
    return helper.make_graph(nodes, "body", [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F32, [3])],
                             [vi("cond_out", BOOL, []), vi("acc_out", F32, [3])],
                             [numpy_helper.from_array(np.array(2, np.float32), "two")])


@pytest.mark.parametrize(("limit", "go"), [(50.0, True), (1e9, True), (50.0, False), (-1.0, True)])
def test_a_condition_computed_at_run_time_makes_a_bounded_while_loop(limit: float, go: bool) -> None:
    # limit 50: the condition ends the loop after a few iterations; 1e9: the trip count does; go False: no iteration
    inits = [numpy_helper.from_array(np.array(12, np.int64), "M"), numpy_helper.from_array(np.array(limit, np.float32),
                                                                                           "limit")]
    node = helper.make_node("Loop", ["M", "go", "acc0"], ["acc"], body=while_body())
    m = model([node], [vi("go", BOOL, []), vi("x", F32, [3]), vi("acc0", F32, [3])], [vi("acc", F32, [3])], inits)
    assert "scf.while" in graph_text(m)
    check(m, {"go": np.array(go), "x": np.array([1.0, 0.5, 2.0], np.float32), "acc0": np.ones(3, np.float32)})


def test_loops_nest_and_read_the_enclosing_values() -> None:
    # outer: 6 iterations of acc += inner(acc); inner: 7 iterations of t = t * w + x (w and x from outside)
    inner_body = helper.make_graph(
        [helper.make_node("Mul", ["t", "w"], ["tw"]), helper.make_node("Add", ["tw", "x"], ["t_out"]),
         helper.make_node("Identity", ["c"], ["c_out"])], "inner",
        [vi("j", I64, []), vi("c", BOOL, []), vi("t", F32, [3])], [vi("c_out", BOOL, []), vi("t_out", F32, [3])])
    outer_body = helper.make_graph(
        [helper.make_node("Loop", ["N", "yes", "acc"], ["t"], body=inner_body),
         helper.make_node("Add", ["acc", "t"], ["acc_out"]), helper.make_node("Identity", ["cond"], ["cond_out"])],
        "outer", [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F32, [3])],
        [vi("cond_out", BOOL, []), vi("acc_out", F32, [3])])
    inits = [numpy_helper.from_array(np.array(6, np.int64), "M"), numpy_helper.from_array(np.array(7, np.int64), "N"),
             numpy_helper.from_array(np.array(True), "yes"),
             numpy_helper.from_array(np.array([0.5, -0.25, 0.1], np.float32), "w")]
    # w is also used outside the loops: the body's constant is its own
    nodes = [helper.make_node("Loop", ["M", "yes", "acc0"], ["acc"], body=outer_body),
             helper.make_node("Mul", ["acc", "w"], ["out"])]
    m = model(nodes, [vi("x", F32, [3]), vi("acc0", F32, [3])], [vi("out", F32, [3])], inits)
    assert graph_text(m).count("scf.for") == 2
    check(m, {"x": RNG.standard_normal(3).astype(np.float32), "acc0": RNG.standard_normal(3).astype(np.float32)})


def slice_body(width: int, step: int) -> onnx.GraphProto:
    """acc += xs[i : i + width : step] along axis 0: a Slice at the iteration number."""
    return helper.make_graph(
        [helper.make_node("Add", ["i", "width"], ["end"]), helper.make_node("Unsqueeze", ["i", "axes"], ["start1"]),
         helper.make_node("Unsqueeze", ["end", "axes"], ["end1"]),
         helper.make_node("Slice", ["xs", "start1", "end1", "axes", "steps"], ["rows"]),
         helper.make_node("Add", ["acc", "rows"], ["acc_out"]), helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F32, None)],
        [vi("cond_out", BOOL, []), vi("acc_out", F32, None)],
        [numpy_helper.from_array(np.array(width, np.int64), "width"), numpy_helper.from_array(np.array([0], np.int64), "axes"),
         numpy_helper.from_array(np.array([step], np.int64), "steps")])


@pytest.mark.parametrize(("width", "step"), [(1, 1), (3, 1), (3, 2)])
def test_a_slice_at_the_iteration_number_is_a_gather_in_the_loop(width: int, step: int) -> None:
    # xs[i : i + width : step] has a static size whatever i is: the 6 iterations stay one loop
    rows = -(-width // step)
    inits = [numpy_helper.from_array(np.array(6, np.int64), "M"), numpy_helper.from_array(np.array(True), "yes")]
    m = model([helper.make_node("Loop", ["M", "yes", "acc0"], ["acc"], body=slice_body(width, step))],
              [vi("xs", F32, [8, 3]), vi("acc0", F32, [rows, 3])], [vi("acc", F32, [rows, 3])], inits)
    text = graph_text(m)
    assert "scf.for" in text and '"glowgraph.gather"' in text, text
    check(m, {"xs": RNG.standard_normal((8, 3)).astype(np.float32),
              "acc0": RNG.standard_normal((rows, 3)).astype(np.float32)})


def test_a_slice_whose_ends_are_not_its_starts_plus_a_known_offset_needs_known_starts() -> None:
    m = model([helper.make_node("Slice", ["x", "s", "e"], ["y"])],
              [vi("x", F32, [5]), vi("s", I64, [1]), vi("e", I64, [1])], [vi("y", F32, None)])
    with pytest.raises(UnsupportedError, match=r"node 'Slice#0' \(Slice\): the starts input 's' must be a constant"):
        glow.compile(m, cache=False)


def test_scan_outputs_of_a_loop_its_condition_may_end_have_the_trip_counts_length() -> None:
    body = while_body()
    body.output.append(vi("acc_out", F32, [3]))
    inits = [numpy_helper.from_array(np.array(12, np.int64), "M"), numpy_helper.from_array(np.array(50, np.float32),
                                                                                           "limit")]
    node = helper.make_node("Loop", ["M", "go", "acc0"], ["acc", "history"], body=body)
    m = model([node], [vi("go", BOOL, []), vi("x", F32, [3]), vi("acc0", F32, [3])],
              [vi("acc", F32, [3]), vi("history", F32, None)], inits)
    with pytest.warns(LoopBoundWarning, match="bound of 12 iterations"):
        compiled = glow.compile(m, cache=False)
    feeds = {"go": np.array(True), "x": np.array([1.0, 0.5, 2.0], np.float32), "acc0": np.ones(3, np.float32)}
    acc, history = ReferenceEvaluator(m).run(None, feeds)
    got = compiled.run(feeds)
    ran = len(history)
    assert 0 < ran < 12 and got["history"].shape == (12, 3) and not got["history"][ran:].any()
    np.testing.assert_allclose(got["history"][:ran], history, rtol=1e-5)
    np.testing.assert_allclose(got["acc"], acc, rtol=1e-5)


def test_a_loop_carried_value_that_changes_shape_is_unsupported() -> None:
    body = helper.make_graph([helper.make_node("Concat", ["acc", "acc"], ["acc_out"], axis=0),
                              helper.make_node("Identity", ["cond"], ["cond_out"])], "body",
                             [vi("i", I64, []), vi("cond", BOOL, []), vi("acc", F32, None)],
                             [vi("cond_out", BOOL, []), vi("acc_out", F32, None)])
    inits = [numpy_helper.from_array(np.array(3000, np.int64), "M"), numpy_helper.from_array(np.array(True), "yes")]
    m = model([helper.make_node("Loop", ["M", "yes", "acc0"], ["acc"], body=body)], [vi("acc0", F32, [2])],
              [vi("acc", F32, None)], inits)
    with pytest.raises(UnsupportedError, match=r"node 'Loop#0' \(Loop\): the body gives loop-carried value #0 as "
                                               r"tensor<4xf32>, but it enters the loop as tensor<2xf32>"):
        glow.compile(m, cache=False)


def test_a_condition_of_more_than_one_value_is_a_model_error() -> None:
    then, other = branches()
    m = model([helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other)],
              [vi("c", BOOL, [2]), vi("x", F32, [2, 3]), vi("y", F32, [2, 3])], [vi("z", F32, [2, 3])])
    with pytest.raises(ModelError, match=r"node 'If#0' \(If\): the condition must hold one value, got shape \[2\]"):
        glow.compile(m, cache=False)
    inits = [numpy_helper.from_array(np.array(9, np.int64), "M"), numpy_helper.from_array(np.array([True, True]), "go")]
    node = helper.make_node("Loop", ["M", "go", "acc0"], ["acc"], body=while_body())
    m = model([node], [vi("x", F32, [3]), vi("acc0", F32, [3])], [vi("acc", F32, [3])],
              [*inits, numpy_helper.from_array(np.array(50, np.float32), "limit")])
    with pytest.raises(ModelError, match=r"node 'Loop#0' \(Loop\): the initial condition must hold one value, got "
                                         r"shape \[2\]"):
        glow.compile(m, cache=False)


def scan8_model(lens: list[int] | None) -> onnx.ModelProto:
    """Scan at opset 8 over a batch of 2: s += a * b (b read backwards), the running s scanned out."""
    body = helper.make_graph([helper.make_node("Mul", ["a", "b"], ["ab"]), helper.make_node("Add", ["s", "ab"], ["s_out"]),
                              helper.make_node("Identity", ["s_out"], ["y"])], "body",
                             [vi("s", F32, [2]), vi("a", F32, [2]), vi("b", F32, [2])],
                             [vi("s_out", F32, [2]), vi("y", F32, [2])])
    inits = [] if lens is None else [numpy_helper.from_array(np.array(lens, np.int64), "lens")]
    node = helper.make_node("Scan", ["" if lens is None else "lens", "s0", "a", "b"], ["s", "ys"], body=body,
                            num_scan_inputs=2, directions=[0, 1])
    return model([node], [vi("s0", F32, [2, 2]), vi("a", F32, [2, 6, 2]), vi("b", F32, [2, 6, 2])],
                 [vi("s", F32, [2, 2]), vi("ys", F32, [2, 6, 2])], inits, opset=8)


@pytest.mark.parametrize("lens", [None, [6, 6]])
def test_scan_at_opset_8_scans_each_batch_entry(lens: list[int] | None) -> None:
    m = scan8_model(lens)
    feeds = {k: RNG.standard_normal(shape).astype(np.float32) for k, shape in
             (("s0", (2, 2)), ("a", (2, 6, 2)), ("b", (2, 6, 2)))}
    got = glow.compile(m, cache=False).run(feeds)
    s, ys = feeds["s0"].copy(), np.zeros((2, 6, 2), np.float32)
    for t in range(6):  # b backwards, a forwards
        s = s + feeds["a"][:, t] * feeds["b"][:, 5 - t]
        ys[:, t] = s
    np.testing.assert_allclose(got["s"], s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["ys"], ys, rtol=1e-5, atol=1e-6)


def test_scan_at_opset_8_with_shorter_sequences_is_unsupported() -> None:
    with pytest.raises(UnsupportedError, match=r"node 'Scan#0' \(Scan\): sequence_lens \[6, 4\] shorter than the scan "
                                               r"inputs \(6 steps\) is not supported"):
        glow.compile(scan8_model([6, 4]), cache=False)


@pytest.mark.parametrize("steps", [3, 7])
def test_a_scan_output_that_is_the_incoming_state_is_stacked(steps: int) -> None:
    # the body scans out its state as it came in (an Identity of a block argument of the loop)
    body = helper.make_graph([helper.make_node("Add", ["s", "x"], ["s_out"]), helper.make_node("Identity", ["s"], ["y"])],
                             "body", [vi("s", F32, [2]), vi("x", F32, [2])], [vi("s_out", F32, [2]), vi("y", F32, [2])])
    node = helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1)
    m = model([node], [vi("s0", F32, [2]), vi("xs", F32, [steps, 2])], [vi("s", F32, [2]), vi("ys", F32, [steps, 2])],
              opset=11)
    check(m, {"s0": RNG.standard_normal(2).astype(np.float32), "xs": RNG.standard_normal((steps, 2)).astype(np.float32)})


def test_optional_get_element_and_has_element_of_plain_tensors() -> None:
    # opset 18 lets both take a tensor: its element is the tensor itself, and it has one; a left-out input has none
    nodes = [helper.make_node("OptionalGetElement", ["x"], ["y"]), helper.make_node("OptionalHasElement", ["x"], ["h"]),
             helper.make_node("OptionalHasElement", [], ["none"])]
    m = model(nodes, [vi("x", F32, [2, 3])], [vi("y", F32, [2, 3]), vi("h", BOOL, []), vi("none", BOOL, [])], opset=18)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    got = glow.compile(m, cache=False).run({"x": x})
    np.testing.assert_array_equal(got["y"], x)
    assert bool(got["h"]) is True and bool(got["none"]) is False
