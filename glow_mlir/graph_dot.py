"""Graphviz DOT of a glowgraph function (glow-compile --dump-graph-dag)."""

from __future__ import annotations

import re

from mlir import ir


def _escape(text: str) -> str:
    # record labels treat {}|<> as structure and " ends the string
    return re.sub(r'([{}|<>"\\])', r"\\\1", text)


def _type_label(t: ir.Type) -> str:
    st = ir.ShapedType(t)
    return f"{st.element_type}<{' x '.join(str(d) for d in st.shape)}>"


def _location_name(op: ir.Operation) -> str:
    loc = op.location
    try:
        return loc.name_str if loc.is_a_name() else ""
    except AttributeError:
        return ""


def graph_to_dot(func: ir.Operation) -> str:
    """One record per node (with its ONNX name and result type), one edge per use."""
    func = func.operation
    name = ir.StringAttr(func.attributes["sym_name"]).value
    lines = [f'digraph "{_escape(name)}" {{', '  node [shape=record, fontname="monospace"];']
    ids: dict[ir.Value, str] = {}
    block = func.regions[0].blocks[0]
    for i, arg in enumerate(block.arguments):
        ids[arg] = f"in{i}"
        label = _escape(f"Placeholder|input {i}|{_type_label(arg.type)}").replace("\\|", "|")
        lines.append(f'  in{i} [label="{{{label}}}", style=filled, fillcolor=lightblue];')
    for i, op in enumerate(block.operations):
        op = op.operation
        if op.name == "func.return":
            for j, v in enumerate(op.operands):
                lines.append(f'  out{j} [label="{{Save|output {j}|{_escape(_type_label(v.type))}}}", '
                             "style=filled, fillcolor=lightgreen];")
                lines.append(f"  {ids[v]} -> out{j};")
            continue
        node = f"n{i}"
        parts = [op.name.split(".", 1)[-1], _location_name(op), *(_type_label(r.type) for r in op.results)]
        label = "|".join(_escape(p) for p in parts if p)
        fill = ", style=filled, fillcolor=lightyellow" if op.name == "glowgraph.constant" else ""
        lines.append(f'  {node} [label="{{{label}}}"{fill}];')
        for r in op.results:
            ids[r] = node
        for v in op.operands:
            lines.append(f"  {ids[v]} -> {node};")
    lines.append("}")
    return "\n".join(lines) + "\n"
