"""The small YAML subset profiles are written in, emitted and read back without a YAML library.

A document is a mapping of keys to scalars or to a list of mappings, whose values are scalars or flow lists of
numbers (which may wrap over several lines)::

    # comment
    model: "digits_cnn"
    values:
      - name: "image"
        count: 64
        min: 0.0
        histogram: [0, 3, 0,
          1]

Strings are always double-quoted (JSON escapes, which YAML reads the same); integers plain; floats in Python's
shortest round-trip form, always with a dot (``1.0e-05``, as YAML 1.1 wants), and ``.inf``, ``-.inf``, ``.nan``. Any YAML reader reads the output;
:func:`loads` reads only this subset, and exactly: every float and integer comes back as it went in.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence

Scalar = str | int | float
Item = Mapping[str, Scalar | Sequence[int | float]]

#: the width that flow lists wrap at
WIDTH = 120
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT = re.compile(r"^[-+]?[0-9]+$")
_SPECIAL = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}


class YamlSubsetError(ValueError):
    """Text outside the subset; the message gives the line number."""


def scalar_text(value: Scalar) -> str:
    """One scalar as this subset writes it."""
    if isinstance(value, bool):
        raise TypeError("booleans are not part of the profile format")
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, e, exponent = text.partition("e")
    # YAML 1.1 readers (PyYAML) take a float only with a dot in it: 1e-05 would be a string to them
    return text if "." in mantissa else f"{mantissa}.0{e}{exponent}"


def _flow_list(values: Sequence[int | float], first: str, indent: str) -> list[str]:
    """``first: [v, v, ...]`` wrapped at WIDTH, continuation lines at ``indent``."""
    lines, line = [], first + "["
    texts = [scalar_text(v) for v in values]
    for i, text in enumerate(texts):
        piece = text + ("]" if i == len(texts) - 1 else ",")
        if len(line) + 1 + len(piece) > WIDTH and not line.endswith("["):
            lines.append(line)
            line = indent + piece
        else:
            line += ("" if line.endswith("[") else " ") + piece
    lines.append(line if texts else line + "]")
    return lines


def dumps(header: Mapping[str, Scalar], list_key: str, items: Sequence[Item], comment: str = "") -> str:
    """The document: ``comment`` lines, the ``header`` scalars, then ``list_key:`` and its items."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    for key, value in header.items():
        lines.append(f"{_checked_key(key)}: {scalar_text(value)}")
    lines.append(f"{_checked_key(list_key)}:" + ("" if items else " []"))
    for item in items:
        for i, (key, value) in enumerate(item.items()):
            lead = "  - " if i == 0 else "    "
            if isinstance(value, (str, int, float)):
                lines.append(f"{lead}{_checked_key(key)}: {scalar_text(value)}")
            else:
                lines.extend(_flow_list(list(value), f"{lead}{_checked_key(key)}: ", "      "))
    return "\n".join(lines) + "\n"


def _checked_key(key: str) -> str:
    if not _KEY.match(key):
        raise ValueError(f"key '{key}' is not a plain identifier")
    return key


def _scalar(token: str, lineno: int) -> Scalar:
    token = token.strip()
    if token.startswith('"'):
        try:
            value = json.loads(token)
        except json.JSONDecodeError:
            raise YamlSubsetError(f"line {lineno}: bad quoted string {token}") from None
        if not isinstance(value, str):
            raise YamlSubsetError(f"line {lineno}: expected a string, got {token}")
        return value
    if token in _SPECIAL:
        return _SPECIAL[token]
    if _INT.match(token):
        return int(token)
    try:
        return float(token)
    except ValueError:
        raise YamlSubsetError(f"line {lineno}: expected a number or a quoted string, got '{token}'") from None


def _key_value(text: str, lineno: int) -> tuple[str, str]:
    key, sep, rest = text.partition(":")
    if not sep or not _KEY.match(key):
        raise YamlSubsetError(f"line {lineno}: expected 'key: value', got '{text.strip()}'")
    return key, rest.strip()


def loads(text: str, list_key: str) -> tuple[dict[str, Scalar], list[dict[str, Scalar | list[int | float]]]]:
    """Read a document :func:`dumps` wrote: its header scalars and the items under ``list_key``."""
    header: dict[str, Scalar] = {}
    items: list[dict[str, Scalar | list[int | float]]] = []
    lines = text.splitlines()
    i = 0
    in_list = False
    while i < len(lines):
        lineno, line = i + 1, lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not in_list:
            if line[0] == " ":
                raise YamlSubsetError(f"line {lineno}: unexpected indentation")
            key, rest = _key_value(line, lineno)
            if key == list_key:
                if rest not in ("", "[]"):
                    raise YamlSubsetError(f"line {lineno}: expected a list of items under '{list_key}'")
                in_list = True
            else:
                header[key] = _scalar(rest, lineno)
            continue
        if line.startswith("  - "):
            items.append({})
            body = line[4:]
        elif line.startswith("    ") and items and line[4] != " ":
            body = line[4:]
        else:
            raise YamlSubsetError(f"line {lineno}: expected an item ('  - key: value') or an item's '    key: value'")
        key, rest = _key_value(body, lineno)
        if key in items[-1]:
            raise YamlSubsetError(f"line {lineno}: '{key}' given twice")
        if rest.startswith("["):
            flow = rest
            while not flow.rstrip().endswith("]"):
                if i == len(lines):
                    raise YamlSubsetError(f"line {lineno}: the list of '{key}' has no closing ']'")
                flow += " " + lines[i].strip()
                i += 1
            inner = flow.strip()[1:-1].strip()
            values = [_scalar(t, lineno) for t in inner.split(",")] if inner else []
            if any(isinstance(v, str) for v in values):
                raise YamlSubsetError(f"line {lineno}: the list of '{key}' holds a string")
            items[-1][key] = values  # type: ignore[assignment] - strings excluded just above
        else:
            items[-1][key] = _scalar(rest, lineno)
    return header, items
