"""Profiling for quantization: the range and histogram of every float value of a model on a calibration set.

As Glow does it (``-dump-profile``), the float model is compiled with a probe on every float value, run on the
calibration inputs, and for each value the count, min, max and a histogram over [min, max] are accumulated, then
written to a YAML profile with a hash of the graph. Where this differs from Glow, on purpose:

- Values are keyed by their ONNX names (node outputs and graph inputs), which are what the model file says and do not
  depend on how glow_mlir lowers a node, nor on the batch size. The probe is the value made a graph output of a copy
  of the model, compiled by :func:`glow_mlir.compile`: the profile measures glow_mlir's own compiled code.
- The graph hash (:func:`graph_hash`) leaves out the graph inputs' batch dimension, so the same network exported at
  another batch size keeps its profile.
- Histograms have 2048 bins (Glow: 10), enough for KL calibration. When a batch widens the range, the counts so
  far are spread into the bins of the wider range (an old bin that straddles two new ones splits its count by their
  overlap, rounded so that the total is kept), then the batch is added (:func:`rebin`).

Values that are constant (initializers, and what is computed from them alone) are not profiled: their ranges are
known at compile time. Nor are values of other element types than float32, nor values inside subgraphs.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto

from ..errors import GlowError, ProfileError
from ..importer.model import LoadedModel, load_model
from . import yaml_subset

#: histogram bins per value, unless told otherwise (KL calibration wants many: TensorRT uses 2048)
DEFAULT_BINS = 2048
#: the profile file's format version
FORMAT = 1
#: ops whose output is not a function of their inputs: never constant
_RANDOM_OPS = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                         "Bernoulli"})


# --------------------------------------------------------------------------- histograms


def bin_index(values: np.ndarray, lo: float, hi: float, bins: int) -> np.ndarray:
    """The bin of each (finite) value among ``bins`` equal bins over [lo, hi]: bin i holds
    [lo + i*w, lo + (i+1)*w), the last one also hi."""
    if hi <= lo:
        return np.zeros(values.shape, np.int64)
    index = np.floor((values.astype(np.float64) - lo) * (bins / (hi - lo))).astype(np.int64)
    return np.clip(index, 0, bins - 1)


def rebin(counts: np.ndarray, lo: float, hi: float, new_lo: float, new_hi: float) -> np.ndarray:
    """``counts`` of equal bins over [lo, hi] spread into as many equal bins over [new_lo, new_hi], a range that
    holds [lo, hi]. The new bins are at least as wide as the old, so an old bin falls in one new bin or straddles
    two; a straddling bin's count is split by the overlap, rounded, so the total is kept exactly."""
    bins = len(counts)
    out = np.zeros(bins, np.int64)
    filled = np.nonzero(counts)[0]
    if not len(filled):
        return out
    if hi <= lo:  # every value seen so far was the one value lo
        out[bin_index(np.array([lo]), new_lo, new_hi, bins)[0]] += int(counts.sum())
        return out
    width = (hi - lo) / bins
    start = lo + filled * width
    first = bin_index(start, new_lo, new_hi, bins)
    last = bin_index(start + width, new_lo, new_hi, bins)
    if new_hi > new_lo:
        # the share of the old bin left of the new bin `last` begins (1 when it does not straddle)
        boundary = new_lo + last * ((new_hi - new_lo) / bins)
        share = np.where(last > first, np.clip((boundary - start) / width, 0.0, 1.0), 1.0)
    else:
        share = np.ones(len(filled))
    left = np.rint(counts[filled] * share).astype(np.int64)
    np.add.at(out, first, left)
    np.add.at(out, last, counts[filled] - left)
    return out


@dataclass(eq=False)
class TensorProfile:
    """What the calibration set made of one value: ``count`` elements seen, of which ``nonfinite`` were inf or NaN;
    the finite ones lie in [min, max] and ``histogram`` counts them in equal bins over exactly that range (the form
    the calibration methods read). Before any data, min is +inf and max -inf."""

    min: float = math.inf
    max: float = -math.inf
    count: int = 0
    histogram: np.ndarray = field(default_factory=lambda: np.zeros(DEFAULT_BINS, np.int64))
    nonfinite: int = 0

    @classmethod
    def empty(cls, bins: int = DEFAULT_BINS) -> TensorProfile:
        return cls(histogram=np.zeros(bins, np.int64))

    @property
    def histogram_range(self) -> tuple[float, float]:
        """The range the histogram's bins divide equally: always [min, max]."""
        return self.min, self.max

    @property
    def bins(self) -> int:
        return len(self.histogram)

    def update(self, values: np.ndarray) -> None:
        """Add a batch of values: widen the range (re-binning the counts so far) and count them."""
        flat = np.asarray(values).reshape(-1)
        self.count += flat.size
        if not flat.size:
            return
        lo, hi = flat.min(), flat.max()
        if not (np.isfinite(lo) and np.isfinite(hi)):  # NaN shows in both; inf in one
            finite = flat[np.isfinite(flat)]
            self.nonfinite += flat.size - finite.size
            if not finite.size:
                return
            flat, lo, hi = finite, finite.min(), finite.max()
        lo, hi = float(lo), float(hi)
        if self.min > self.max:
            self.min, self.max = lo, hi  # the first finite values: the range is theirs
        elif lo < self.min or hi > self.max:
            new_lo, new_hi = min(lo, self.min), max(hi, self.max)
            self.histogram = rebin(self.histogram, self.min, self.max, new_lo, new_hi)
            self.min, self.max = new_lo, new_hi
        self.histogram += np.bincount(bin_index(flat, self.min, self.max, self.bins), minlength=self.bins)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TensorProfile):
            return NotImplemented
        same_float = all(a == b or (math.isnan(a) and math.isnan(b))
                         for a, b in ((self.min, other.min), (self.max, other.max)))
        return (same_float and self.count == other.count and self.nonfinite == other.nonfinite
                and np.array_equal(self.histogram, other.histogram))


# --------------------------------------------------------------------------- the graph and its hash


def _shape_free_type(t: onnx.TypeProto, skip_batch: bool) -> str:
    if not t.HasField("tensor_type"):
        return t.WhichOneof("value") or "?"
    dims = [d.dim_param or (str(d.dim_value) if d.HasField("dim_value") else "?") for d in t.tensor_type.shape.dim]
    if skip_batch and dims:
        dims[0] = "N"
    rank = str(len(dims)) if t.tensor_type.HasField("shape") else "?"
    return f"{TensorProto.DataType.Name(t.tensor_type.elem_type)}[{rank}:{','.join(dims)}]"


def _attribute_text(a: AttributeProto) -> str:
    if a.type == AttributeProto.TENSOR:  # a tensor counts by its type and shape, as initializers do
        return f"tensor {a.t.data_type} {list(a.t.dims)}"
    if a.type == AttributeProto.TENSORS:
        return "tensors " + ";".join(f"{t.data_type} {list(t.dims)}" for t in a.tensors)
    if a.type == AttributeProto.GRAPH:
        return "graph {" + _graph_text(a.g, skip_batch=False) + "}"
    if a.type == AttributeProto.GRAPHS:
        return "graphs " + ";".join("{" + _graph_text(g, skip_batch=False) + "}" for g in a.graphs)
    if a.type == AttributeProto.SPARSE_TENSOR:
        return f"sparse {list(a.sparse_tensor.dims)}"
    if a.type == AttributeProto.TYPE_PROTO:
        return "type " + _shape_free_type(a.tp, skip_batch=False)
    return repr(onnx.helper.get_attribute_value(a))


def _graph_text(graph: onnx.GraphProto, skip_batch: bool) -> str:
    init = {t.name for t in graph.initializer}
    lines = [f"input {i.name} {_shape_free_type(i.type, skip_batch)}" for i in graph.input if i.name not in init]
    lines += [f"init {t.name} {t.data_type} {list(t.dims)}" for t in sorted(graph.initializer, key=lambda t: t.name)]
    for n in graph.node:
        attrs = " ".join(f"{a.name}={_attribute_text(a)}" for a in sorted(n.attribute, key=lambda a: a.name))
        lines.append(f"node {n.domain}:{n.op_type}({','.join(n.input)})->({','.join(n.output)}) {attrs}")
    lines += [f"output {o.name} {o.type.tensor_type.elem_type}" for o in graph.output]
    return "\n".join(lines)


def graph_hash(model: onnx.ModelProto) -> str:
    """A hash of the graph's structure: the opsets; each node's op, attributes and input and output names; the
    initializers' names, types and shapes (not their data); the graph inputs' names and types with their first
    (batch) dimension left out; the outputs' names. The same network exported at another batch size hashes the same;
    a changed node, attribute or weight shape does not."""
    opsets = sorted(f"opset {o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
    text = "\n".join(opsets) + "\n" + _graph_text(model.graph, skip_batch=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _subgraph_reads(node: onnx.NodeProto) -> set[str]:
    """Every name a node's subgraphs read (outer values among them)."""
    names: set[str] = set()
    for a in node.attribute:
        for g in [a.g] if a.type == AttributeProto.GRAPH else list(a.graphs):
            for n in g.node:
                names.update(n.input)
                names.update(_subgraph_reads(n))
    return names


def _has_subgraph(node: onnx.NodeProto) -> bool:
    return any(a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS) for a in node.attribute)


def profiled_values(loaded: LoadedModel) -> tuple[list[str], list[str]]:
    """The float32 graph inputs, and the float32 node outputs on the way to the graph outputs that are not constant
    (in topological order). Element types come from ONNX shape inference."""
    graph = loaded.proto.graph
    constant = set(loaded.initializers)
    for _, node in loaded.nodes:
        if (node.op_type not in _RANDOM_OPS and not _has_subgraph(node)
                and all(not name or name in constant for name in node.input)):
            constant.update(node.output)
    needed = {o.name for o in graph.output}
    for _, node in reversed(loaded.nodes):
        if any(out in needed for out in node.output):
            needed.update(node.input)
            needed.update(_subgraph_reads(node))
    types: dict[str, int] = {}
    try:
        inferred = onnx.shape_inference.infer_shapes(loaded.proto).graph
    except Exception:  # noqa: BLE001 - any failure of ONNX's inference: fall back to the declared types
        inferred = graph
    for vi in [*inferred.input, *inferred.value_info, *inferred.output]:
        if vi.type.HasField("tensor_type"):
            types[vi.name] = vi.type.tensor_type.elem_type
    inputs = [i.name for i in graph.input if i.name not in constant and types.get(i.name) == TensorProto.FLOAT]
    values = [out for _, node in loaded.nodes for out in node.output
              if out and out in needed and out not in constant and types.get(out) == TensorProto.FLOAT]
    return inputs, values


def instrument(loaded: LoadedModel, values: Iterable[str]) -> onnx.ModelProto:
    """A copy of the model whose graph outputs also include ``values`` (after its own outputs)."""
    proto = onnx.ModelProto()
    proto.CopyFrom(loaded.proto)
    proto.graph.name = loaded.name
    outputs = {o.name for o in proto.graph.output}
    for name in values:
        if name not in outputs:
            proto.graph.output.append(onnx.helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    return proto


# --------------------------------------------------------------------------- the profile


@dataclass
class Profile:
    """Per value name (ONNX names: graph inputs, then node outputs in graph order) its :class:`TensorProfile`, the
    name of the model profiled and the hash of its graph (:func:`graph_hash`)."""

    model: str
    graph_hash: str
    values: dict[str, TensorProfile] = field(default_factory=dict)

    def __getitem__(self, name: str) -> TensorProfile:
        return self.values[name]

    def save(self, path: str | os.PathLike) -> None:
        """Write the profile as YAML (:mod:`.yaml_subset`)."""
        items = []
        for name, p in self.values.items():
            item: dict[str, Any] = {"name": name, "count": p.count, "min": p.min, "max": p.max}
            if p.nonfinite:
                item["nonfinite"] = p.nonfinite
            item["histogram"] = [int(c) for c in p.histogram]
            items.append(item)
        comment = ("glow_mlir quantization profile: per float value of the graph (ONNX names), the elements seen,\n"
                   "their min and max, and a histogram of equal bins over [min, max]")
        text = yaml_subset.dumps({"format": FORMAT, "model": self.model, "graph_hash": self.graph_hash}, "values",
                                 items, comment)
        Path(path).write_text(text)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Profile:
        """Read a profile :meth:`save` wrote."""
        where = os.fspath(path)
        try:
            text = Path(path).read_text()
        except OSError as e:
            raise ProfileError(f"cannot read the profile '{where}': {e.strerror or e}") from None
        try:
            header, items = yaml_subset.loads(text, "values")
        except yaml_subset.YamlSubsetError as e:
            raise ProfileError(f"{where}: not a glow_mlir profile: {e}") from None
        if header.get("format") != FORMAT:
            raise ProfileError(f"{where}: not a glow_mlir profile of format {FORMAT} "
                               f"(format: {header.get('format', 'absent')})")
        model, digest = header.get("model"), header.get("graph_hash")
        if not isinstance(model, str) or not isinstance(digest, str):
            raise ProfileError(f"{where}: the profile has no model name or graph hash")
        values: dict[str, TensorProfile] = {}
        for k, item in enumerate(items):
            name, hist = item.get("name"), item.get("histogram")
            numbers = [item.get(key, 0) for key in ("count", "min", "max", "nonfinite")]
            if (not isinstance(name, str) or not isinstance(hist, list) or name in values
                    or not all(isinstance(v, (int, float)) for v in numbers)):
                raise ProfileError(f"{where}: value #{k} ('{name}') is incomplete or given twice")
            values[name] = TensorProfile(float(item["min"]), float(item["max"]), int(item["count"]),
                                         np.array(hist, np.int64), int(item.get("nonfinite", 0)))
        return cls(model, digest, values)

    def check(self, model: str | os.PathLike | onnx.ModelProto | LoadedModel) -> None:
        """Raise ProfileError unless the profile was made for ``model``'s graph (up to its batch size)."""
        loaded = model if isinstance(model, LoadedModel) else load_model(model)
        digest = graph_hash(loaded.proto)
        if digest != self.graph_hash:
            raise ProfileError(f"{loaded.label}: the profile of model '{self.model}' (graph hash {self.graph_hash}) "
                               f"does not belong to this graph (graph hash {digest}); profile this model instead")


class Profiler:
    """The instrumented model, compiled, and the profiles accumulated so far: :meth:`add` runs one feed."""

    def __init__(self, model: str | os.PathLike | onnx.ModelProto, *, bins: int = DEFAULT_BINS,
                 **compile_options: Any):
        from ..api import compile

        if bins < 1:
            raise ValueError(f"bins must be at least 1, got {bins}")
        loaded = load_model(model)
        self.name, self.label = loaded.name, loaded.label
        self.graph_hash = graph_hash(loaded.proto)
        self.input_names, self.value_names = profiled_values(loaded)
        self.compiled = compile(instrument(loaded, self.value_names), **compile_options)
        #: the compiled model's inputs: names, static shapes and dtypes the feeds must have
        self.inputs = self.compiled.inputs
        self.feeds = 0
        self._profiles = {name: TensorProfile.empty(bins) for name in [*self.input_names, *self.value_names]}

    def add(self, feed: Mapping[str, np.ndarray]) -> None:
        """Run one feed ({input name: array}) and add its values to the profiles."""
        outputs = self.compiled.run(dict(feed))
        for name in self.input_names:
            self._profiles[name].update(np.asarray(feed[name]))
        for name in self.value_names:
            self._profiles[name].update(outputs[name])
        self.feeds += 1

    def result(self) -> Profile:
        if not self.feeds:
            raise GlowError(f"{self.label}: no calibration inputs were given, nothing to profile")
        return Profile(self.name, self.graph_hash, dict(self._profiles))


def profile(model: str | os.PathLike | onnx.ModelProto, feeds: Iterable[Mapping[str, np.ndarray]], *,
            threads: int | None = None, bins: int = DEFAULT_BINS, **compile_options: Any) -> Profile:
    """Profile ``model`` (a path or a ModelProto) on ``feeds``, each a dict {input name: array} of the shapes the
    model declares: the range and a histogram of ``bins`` bins of each float value (see the module's docstring).
    ``threads`` and the other keywords are :func:`glow_mlir.compile`'s."""
    profiler = Profiler(model, bins=bins, threads=threads, **compile_options)
    for feed in feeds:
        profiler.add(feed)
    return profiler.result()
