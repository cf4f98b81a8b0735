"""The Python API: ``glow_mlir.compile(model)`` runs every stage and returns a
callable :class:`CompiledModel`.

The stages, in order (each a named pipeline in ``passes/pipelines.py``):

1. import         ONNX -> glowgraph (shape inference, one node per ONNX node)
2. optimize       graph optimizations on glowgraph
3. lower          node lowering, keeping what the backend has kernels for
4. irgen          glowgraph -> glowir (bufferization: weights, activations)
5. iropt          glowir optimizations (shorter, merged buffer lives), then the static memory plan
6. codegen        glowir -> linalg -> LLVM dialect (kernels for ``threads`` cores), then JIT-compiled for the host CPU

A model compiled before with the same options on this machine comes from the compile cache instead
(:mod:`glow_mlir.cache`): no stage runs and nothing is compiled, its machine code is loaded; its stages are those
recorded by the compile that stored it (their IR text and times), followed by "cache" (loading the entry) and "jit"
(loading the code).

Or, ahead of time (:func:`emit_bundle`), after iropt the program may be cut into partitions, and the code goes into
a bundle: an object file, a C header and the weights (``backend/bundle.py``).
"""

from __future__ import annotations

import dataclasses
import io
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from mlir import ir

from . import cache as compile_cache
from . import progress
from .backend import bundle, cpu, orc
from .backend import target as targets
from .backend.jit import Argument, JitProgram, signature_of
from .dialects import make_context
from .errors import CompileError, InputError
from .importer import ImportedModel, TensorSpec, import_model
from .importer.model import load_model
from .importer.structured import Layout, flatten, regroup
from .passes import pipelines
from .passes.conversion.ir_program import MemoryLayout, Program, read_programs
from .passes.ir.liveness import Liveness, programs
from .passes.ir.partition import Partition, budget_floor, read_partitions
from .passes.pipeline import Element, RunOptions, parse_pipeline, pipeline_text, run_pipeline
from .quantization.annotate import QuantizationOptions, annotate, has_qdq_pairs, keep_float_list
from .quantization.profile import Profile

ModelLike = str | os.PathLike | onnx.ModelProto


@dataclass
class CompileOptions:
    """What ``compile`` does. ``optimize=False`` skips the graph and IR optimizers (not lowering, nor the memory
    plan)."""

    #: static shapes of graph inputs; a sequence input's: a list of its elements' shapes; an optional input's: a shape,
    #: or None when it is empty (:mod:`glow_mlir.importer.structured`)
    input_shapes: dict[str, Any] | None = None
    optimize: bool = True
    #: where to write the .mlir of every stage (None: nowhere)
    emit_mlir_dir: str | os.PathLike | None = None
    #: print each pass's IR after it ran (to stderr)
    print_ir_after_all: bool = False
    #: cores the kernels run on (None: every core this process may use; 1 for single-thread comparisons)
    threads: int | None = None
    #: the CPU to generate code for, as LLVM names it (``haswell``, ``znver3``, ``skylake-avx512``); "" or "native":
    #: this machine's. The kernels' lanes and tiles follow it (:mod:`glow_mlir.backend.kernels.isa`)
    target_cpu: str = ""
    #: the target triple ("": this machine's); code compiled in process runs here, so a triple or a CPU this host
    #: cannot run is for bundles only
    target_triple: str = ""
    #: int8 quantization from a profile (None: the model runs in its own precision)
    quantization: QuantizationOptions | None = None

    def thread_count(self) -> int:
        """``threads``, or the cores this process may use."""
        return cpu.default_threads() if self.threads is None else self.threads

    def target_names(self) -> tuple[str, str]:
        """(CPU, triple) as the passes' options spell them: "" for the host's."""
        return ("" if self.target_cpu in targets.HOST_CPU_NAMES else self.target_cpu), self.target_triple

    def target(self) -> targets.Target:
        """The target description (an unknown CPU or triple is a CompileError saying where the names come from)."""
        cpu_name, triple = self.target_names()
        return targets.named(cpu_name or None, triple or None)

    def codegen(self, threads: int | None = None, io_arguments: bool = True) -> list[Element]:
        """The codegen stage for ``threads`` cores (default :meth:`thread_count`) of the target; ``io_arguments``:
        the inputs and outputs as arguments of their own, as the in-process runtime calls the code (a bundle keeps
        them in its mutableWeight region)."""
        return cpu.codegen(self.thread_count() if threads is None else threads, *self.target_names(),
                           io_arguments=io_arguments)

    def cache_options(self) -> dict[str, Any]:
        """What changes the generated code, as the compile cache keys it: the options, and every stage's pipeline
        as text (so a backend configured differently in this process, a keep list for one, never hits)."""
        shapes = {k: None if v is None else list(v) for k, v in sorted((self.input_shapes or {}).items())}
        stages = _stage_pipelines(self) + [("codegen", self.codegen())]
        return {"input_shapes": shapes, "optimize": self.optimize, "threads": self.thread_count(),
                "pipelines": {name: pipeline_text(elements) for name, elements in stages},
                "quantization": None if self.quantization is None else self.quantization.digest()}


@dataclass
class Stage:
    """One compilation stage's output and timings."""

    name: str
    text: str
    seconds: float
    pass_seconds: list[tuple[str, float]] = field(default_factory=list)


def _stage_pipelines(options: CompileOptions) -> list[tuple[str, list[Element]]]:
    stages: list[tuple[str, list[Element]]] = []
    if options.optimize:
        stages.append(("optimize", cpu.graph_optimization()))
    if options.quantization is not None:
        stages.append(("quantize", parse_pipeline(pipelines.quantization_text(options.quantization.channelwise))))
    stages.append(("lower", cpu.node_lowering(*options.target_names())))
    stages.append(("irgen", pipelines.elements("ir-generation")))
    iropt = pipelines.elements("ir-optimization") if options.optimize else []
    stages.append(("iropt", iropt + cpu.memory_planning(options.thread_count(), *options.target_names())))
    return stages


class CompiledModel:
    """A model compiled for the CPU. Call it with numpy arrays, positionally or by input name; a sequence input
    takes a list of arrays and an optional one an array or None, and sequence and optional outputs come back so.
    ``inputs`` and ``outputs`` are the tensors of the compiled code (a sequence's elements named ``x[0]``, ...),
    ``input_layouts`` and ``output_layouts`` how the sequences and optionals map to them."""

    def __init__(self, name: str, inputs: list[TensorSpec], outputs: list[TensorSpec], jit: JitProgram,
                 stages: list[Stage], ctx: ir.Context | None, cache: str = "off",
                 input_layouts: Sequence[Layout] = (), output_layouts: Sequence[Layout] = (),
                 program_outputs: Sequence[str] = ()):
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        # the program's name of each output where it is not the graph's (an output named as an input gets a name
        # of its own in the program)
        self._renamed = {p: o.name for p, o in zip(program_outputs, outputs) if p != o.name}
        self.input_layouts = list(input_layouts)
        self.output_layouts = list(output_layouts)
        self.stages = stages
        #: what the compile cache did: "hit" (loaded), "miss" (compiled and stored) or "off"
        self.cache = cache
        self._jit = jit
        self._ctx = ctx  # keeps the MLIR objects of the JIT alive (None: loaded machine code, no MLIR objects)
        # what every call checks, worked out once: a small model's call costs microseconds (seed_linear_sigmoid: the
        # code 0.3 us, the call 4 us), and the names and shapes were rebuilt on each
        self._input_names = _graph_names(self.inputs, self.input_layouts)
        self._output_names = _graph_names(self.outputs, self.output_layouts)
        self._expected = {s.name: (tuple(s.shape), np.dtype(s.dtype)) for s in self.inputs}

    @property
    def memory(self) -> MemoryLayout | None:
        """The byte sizes of the program's three memory regions (constant weights, inputs and outputs,
        activations), as planned at compile time: a bundle's caller allocates them so; in process the code takes the
        caller's input arrays and fresh output arrays in place of the inputs-and-outputs region."""
        return self._jit.memory

    def stage(self, name: str) -> Stage:
        """The stage called ``name`` (import, optimize, lower, irgen, iropt, codegen, jit)."""
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(f"no stage '{name}' (stages: {', '.join(s.name for s in self.stages)})")

    @property
    def input_names(self) -> list[str]:
        """The graph's input names in order (a sequence or optional input once)."""
        return list(self._input_names)

    @property
    def output_names(self) -> list[str]:
        """The graph's output names in order (a sequence or optional output once)."""
        return list(self._output_names)

    def run(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Run on named inputs; returns the outputs by name. The code reads the input arrays where they are (a
        reference to them is kept until the next call, for :meth:`rerun`) and writes each output into a fresh array
        of its own, which starts on a 64-byte boundary (a view of a slightly larger buffer: ``owndata`` is False)."""
        outputs = self.run_tensors(inputs)
        return regroup(self.output_layouts, outputs) if self.output_layouts else outputs

    def rerun(self) -> None:
        """Run the code once more on the inputs of the last ``run``, into outputs of its own that it does not return:
        no output is allocated (the bench times the code alone so, as a bundle runs)."""
        self._jit.rerun()

    def run_tensors(self, inputs: dict[str, Any]) -> dict[str, np.ndarray]:
        """Run on named inputs (a sequence's elements as a list, or by their own names ``x[0]``, ...); returns the
        tensors of ``outputs`` by name, a sequence's elements each under its own."""
        if self.input_layouts:
            inputs = flatten(self.name, {lay.name: lay for lay in self.input_layouts}, inputs)
        out = self._jit(self._check_inputs(inputs))
        return {self._renamed.get(k, k): v for k, v in out.items()} if self._renamed else out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Outputs for positional and/or named inputs: one array, or a tuple for several outputs."""
        names = self._input_names
        if len(args) > len(names):
            raise InputError(f"{self.name}: {len(args)} inputs given, the model takes {len(names)}")
        named = dict(zip(names, args))
        for k, v in kwargs.items():
            if k in named:
                raise InputError(f"{self.name}: input '{k}' given twice")
            named[k] = v
        out = self.run(named)
        values = tuple(out[n] for n in self._output_names)
        return values[0] if len(values) == 1 else values

    def _check_inputs(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        expected = self._expected
        if len(inputs) != len(expected) or any(n not in inputs for n in expected):
            self._wrong_names(inputs)
        checked = {}
        for name, (shape, dtype) in expected.items():
            value = inputs[name]
            if type(value) is not np.ndarray:
                value = np.asarray(value)
            if value.shape != shape:
                raise InputError(f"{self.name}: input '{name}' has shape {list(value.shape)}, expected {list(shape)}")
            if value.dtype != dtype:
                raise InputError(f"{self.name}: input '{name}' has dtype {value.dtype}, expected {dtype}")
            checked[name] = value  # the JIT makes it C-contiguous (np.ascontiguousarray would make a scalar 1-D)
        return checked

    def _wrong_names(self, inputs: dict[str, np.ndarray]) -> None:
        """Raise the InputError that names the unknown and the missing inputs."""
        expected = self._expected
        unknown = sorted(set(inputs) - set(expected))
        missing = [n for n in expected if n not in inputs]
        if unknown or missing:
            parts = []
            if unknown:
                parts.append(f"unknown input {', '.join(repr(u) for u in unknown)}")
            if missing:
                parts.append(f"missing input {', '.join(repr(m) for m in missing)}")
            names = ", ".join(expected) or "none"
            raise InputError(f"{self.name}: {'; '.join(parts)} (the model's inputs: {names})")


def _graph_names(specs: Sequence[TensorSpec], layouts: Sequence[Layout]) -> list[str]:
    """The graph-level names of tensors ``specs``, each sequence's or optional's once, in order; the layouts carried
    by no tensor (an empty sequence or optional) at the end."""
    owner = {e: lay.name for lay in layouts for e in lay.elements}
    names = list(dict.fromkeys(owner.get(s.name, s.name) for s in specs))
    return names + [lay.name for lay in layouts if lay.name not in names]


#: stage texts keep small constants readable and elide weights
STAGE_ELEMENTS_LIMIT = 16


def _asm(module: ir.Module, full: bool = False) -> str:
    return module.operation.get_asm(large_elements_limit=None if full else STAGE_ELEMENTS_LIMIT)


STAGES = ("import", "optimize", "quantize", "lower", "irgen", "iropt", "codegen")


@dataclass
class Lowered:
    """A model taken through the stages up to some point; ``module`` is its IR there."""

    ctx: ir.Context
    imported: ImportedModel
    module: ir.Module
    stages: list[Stage]
    #: the glowir program (set once the irgen stage ran)
    program: Program | None = None


def lower_model(model: ModelLike, options: CompileOptions | None = None, *, until: str = "codegen",
                on_stage: Callable[[str, ir.Module], None] | None = None) -> Lowered:
    """Run the stages from import up to and including ``until``; ``on_stage(name, module)``
    sees the IR after each stage (the tools print and draw from it)."""
    if until not in STAGES:
        raise ValueError(f"unknown stage '{until}' (stages: {', '.join(STAGES)})")
    options = options or CompileOptions()
    ctx = make_context()
    with ctx, ir.Location.unknown(ctx):
        start = time.perf_counter()
        progress.stage("import")
        imported = import_model(model, ctx, input_shapes=options.input_shapes)
        module = imported.module
        lowered = Lowered(ctx, imported, module, [Stage("import", _asm(module), time.perf_counter() - start)])
        steps = _stage_pipelines(options) + [("codegen", options.codegen())]
        loaded = load_model(model)  # what the quantization stage reads: its node labels and op types
        if options.quantization is None and has_qdq_pairs(loaded):
            # a QDQ model: its pairs' parameters make int8 islands, after the graph optimizations
            at = 1 if steps[0][0] == "optimize" else 0
            steps.insert(at, ("quantize", parse_pipeline(pipelines.quantization_text(True, qdq=True))))
        for name, elements in [("import", [])] + steps:
            if name != "import":
                if name == "quantize" and options.quantization is not None:
                    annotate(module, loaded, options.quantization)
                if name == "codegen":
                    (lowered.program,) = read_programs(module.operation)
                lowered.stages.append(_run_stage(name, module, elements, options))
            _emit(options, len(lowered.stages) - 1, name, module)
            if on_stage is not None:
                on_stage(name, module)
            if name == until:
                break
        if lowered.program is None and until in ("irgen", "iropt"):
            (lowered.program,) = read_programs(module.operation)
    return lowered


def compile(model: ModelLike, *, input_shapes: dict[str, Any] | None = None, optimize: bool = True,
            emit_mlir_dir: str | os.PathLike | None = None, print_ir_after_all: bool = False,
            threads: int | None = None, cache: bool = True, target_cpu: str = "",
            target_triple: str = "", profile: Profile | str | os.PathLike | None = None,
            quantization_schema: str = "asymmetric", calibration: str = "minmax", channelwise: bool = False,
            keep_float: Sequence[str] | str = (), quantization: QuantizationOptions | None = None) -> CompiledModel:
    """Compile an ONNX model (path or ModelProto) for the host CPU (or ``target_cpu``, a CPU this host can run the
    code of: ``haswell`` on any AVX2 machine), its kernels running on ``threads`` cores (default: all this process
    may use). With ``cache`` (and no stage output asked for), a model compiled before with the same options on this
    machine is loaded from the compile cache (:mod:`glow_mlir.cache`).

    With a ``profile`` (a :class:`Profile` or its file, from :func:`glow_mlir.profile`), the model is quantized to
    int8 (:mod:`glow_mlir.quantization`): ``quantization_schema`` one of asymmetric, symmetric, symmetric_uint8,
    symmetric_power2; ``calibration`` one of minmax, percentile, mse, kl; ``channelwise`` weights per output channel;
    ``keep_float`` ONNX op types left in float. ``quantization`` gives all of these at once instead.

    ``input_shapes`` gives or overrides the static shapes of graph inputs; for a sequence input it gives the shapes
    of its elements (a list: the length is fixed), for an optional one a shape or None (empty)."""
    if profile is not None:
        loaded_profile = profile if isinstance(profile, Profile) else Profile.load(profile)
        quantization = QuantizationOptions(loaded_profile, quantization_schema, calibration, channelwise,
                                           keep_float_list(keep_float))
    options = CompileOptions(input_shapes, optimize, emit_mlir_dir, print_ir_after_all, threads, target_cpu,
                             target_triple, quantization)
    target = options.target()
    reason = targets.cannot_run(target)
    if reason:
        raise CompileError(f"cannot compile for {target.cpu} ({target.triple}) to run here: {reason}; "
                           f"emit a bundle for that target instead")
    key = None
    if cache and emit_mlir_dir is None and not print_ir_after_all:
        key = compile_cache.cache_key(_model_bytes(model), options.cache_options())
        start = time.perf_counter()
        entry = compile_cache.load(key)
        if entry is not None:
            return _from_cache(entry, options, time.perf_counter() - start)
    lowered = lower_model(model, options)
    assert lowered.program is not None
    with lowered.ctx:
        signature = signature_of(lowered.program)
        bytecode = None
        if key is not None:
            buffer = io.BytesIO()
            lowered.module.operation.write_bytecode(buffer)
            bytecode = buffer.getvalue()
        start = time.perf_counter()
        progress.stage("jit: LLVM")
        jit = JitProgram(lowered.module, lowered.program.name, signature, memory=lowered.program.memory,
                         threads=options.thread_count(), target=target, io_arguments=True)
        lowered.stages.append(Stage("jit", "", time.perf_counter() - start))
    imported = lowered.imported
    if key is not None:
        assert bytecode is not None
        meta = {"name": imported.name, "program": lowered.program.name, "threads": options.thread_count(),
                "inputs": [_spec_json(t) for t in imported.inputs], "outputs": [_spec_json(t) for t in imported.outputs],
                "layouts": [[lay.to_json() for lay in imported.input_layouts],
                            [lay.to_json() for lay in imported.output_layouts]],
                "signature": [[a.name, list(a.shape), a.dtype.name, a.role, a.offset] for a in signature],
                "memory": None if lowered.program.memory is None else list(lowered.program.memory.sizes()),
                "program_outputs": list(lowered.program.outputs),
                "stages": [[st.name, st.text, st.seconds, st.pass_seconds] for st in lowered.stages if st.name != "jit"]}
        consts = {a.name: a.value for a in signature if a.role == "const" and a.value is not None}
        compile_cache.store(key, compile_cache.Entry(bytecode, meta, consts, jit.object_code()))
    return CompiledModel(imported.name, imported.inputs, imported.outputs, jit, lowered.stages, lowered.ctx,
                         cache="off" if key is None else "miss", input_layouts=imported.input_layouts,
                         output_layouts=imported.output_layouts, program_outputs=lowered.program.outputs)


def _model_bytes(model: ModelLike) -> bytes:
    if isinstance(model, onnx.ModelProto):
        return model.SerializeToString(deterministic=True)
    try:
        return Path(model).read_bytes()
    except OSError:
        return b""  # the importer reports the unreadable file, naming it


def _spec_json(spec: TensorSpec) -> list[Any]:
    # by name: bfloat16's .str is a 2-byte void ('<V2') that reads back as one
    return [spec.name, list(spec.shape), spec.dtype.name]


def _spec(item: list[Any]) -> TensorSpec:
    return TensorSpec(item[0], tuple(item[1]), np.dtype(item[2]))


def _from_cache(entry: compile_cache.Entry, options: CompileOptions, load_seconds: float) -> CompiledModel:
    """A CompiledModel from a cache entry: load its machine code, or where this host cannot, parse the bytecode and
    JIT it."""
    meta = entry.meta
    start = time.perf_counter()
    signature = [Argument(name, tuple(shape), np.dtype(dtype), role, entry.consts.get(name), offset)
                 for name, shape, dtype, role, offset in meta["signature"]]
    memory = None if meta["memory"] is None else MemoryLayout(*meta["memory"])
    # the stages of the compile that made the entry (their IR and times), then this load's
    stages = [Stage(name, text, seconds, [tuple(p) for p in passes]) for name, text, seconds, passes in meta["stages"]]
    stages.append(Stage("cache", "", load_seconds + time.perf_counter() - start))
    start = time.perf_counter()
    ctx = None
    if entry.object_code is not None and orc.available():
        jit = JitProgram(None, meta["program"], signature, memory=memory, threads=meta["threads"],
                         object_code=entry.object_code, io_arguments=True)
    else:
        ctx = make_context()
        with ctx, ir.Location.unknown(ctx):
            module = ir.Module.parse(entry.bytecode, ctx)
            jit = JitProgram(module, meta["program"], signature, memory=memory, threads=meta["threads"],
                             io_arguments=True)
    stages.append(Stage("jit", "", time.perf_counter() - start))
    ins, outs = ([Layout.from_json(x) for x in part] for part in meta.get("layouts", [[], []]))
    return CompiledModel(meta["name"], [_spec(t) for t in meta["inputs"]], [_spec(t) for t in meta["outputs"]], jit,
                         stages, ctx, cache="hit", input_layouts=ins, output_layouts=outs,
                         program_outputs=meta["program_outputs"])


@dataclass
class BundleOptions:
    """What :func:`emit_bundle` makes."""

    #: the bundle's name (object, header); with one model also its entry point. None: the model's name
    name: str | None = None
    #: the CPU to generate code for (llc -mcpu); "native" (or "host", or "") is this machine's
    target_cpu: str = "native"
    #: cut each network into this many partitions balanced by FLOPs (0: do not)
    partitions: int = 0
    #: cut each network into as few partitions as fit this many activation bytes each (0: do not)
    memory_budget: int = 0
    #: also write the weights as a C array initializer (ENTRY.weights.txt)
    weights_txt: bool = False
    #: also put the weights into the object, as read-only data (the symbol ENTRY_constantWeight)
    weights_in_object: bool = False
    #: the most stack (bytes) an entry point may need, its deepest call chain (0: no bound); more is a CompileError
    max_stack: int = 0
    #: LLVM's optimization level: O3 (speed, as the JIT) or O2, Os, Oz (smaller code: firmware's flash)
    opt_level: str = "O3"


def emit_bundle(models: ModelLike | Sequence[ModelLike], directory: str | os.PathLike,
                bundle_options: BundleOptions | None = None, options: CompileOptions | None = None,
                on_stage: Callable[[str, ir.Module], None] | None = None) -> tuple[bundle.BundleFiles, list[Lowered]]:
    """Compile models ahead of time into one bundle in ``directory`` (Glow's model-compiler -emit-bundle): each
    model is a network with its own entry point, named after the model when there are several. Returns the files
    and each network's stages (import to codegen; partition when asked)."""
    bo = bundle_options or BundleOptions()
    options = options or CompileOptions()
    bundle_cpu = targets.llc_host_name() if bo.target_cpu in targets.HOST_CPU_NAMES else bo.target_cpu
    if bundle_cpu != "native" and not options.target_cpu:
        options = dataclasses.replace(options, target_cpu=bundle_cpu)  # the kernels' tiles follow the bundle's CPU
    # one thread unless asked: a bundle's threads are fixed when it is compiled, not the host's core count
    options = dataclasses.replace(options, threads=options.threads or 1)
    target = options.target()  # an unknown CPU fails here, before any work
    if options.threads > 1 and targets.bare_metal(target.triple):
        raise CompileError(f"a bundle for {target.triple} runs on one thread: that target has no operating system to "
                           f"start threads (give threads 1)")
    bundle.check_opt_level(bo.opt_level)  # before any work
    if bo.partitions and bo.memory_budget:
        raise CompileError("give a number of partitions or a memory budget, not both")
    if bo.partitions < 0 or bo.memory_budget < 0 or bo.max_stack < 0:
        raise CompileError(f"partitions ({bo.partitions}), memory budget ({bo.memory_budget}) and stack bound "
                           f"({bo.max_stack}) must be positive")
    if bo.name is not None:
        bundle.check_name(bo.name, "bundle name")
    model_list = list(models) if isinstance(models, (list, tuple)) else [models]
    networks, lowered_list = [], []
    for model in model_list:
        lowered = lower_model(model, options, until="iropt", on_stage=on_stage)
        entry = bo.name if bo.name is not None and len(model_list) == 1 else bundle.c_identifier(lowered.imported.name)
        with lowered.ctx, ir.Location.unknown(lowered.ctx):
            module = lowered.module
            _check_partitioning(lowered, bo)
            if bo.partitions or bo.memory_budget:
                lowered.stages.append(_run_stage(
                    "partition", module, [Partition(partitions=bo.partitions, memory_budget=bo.memory_budget)],
                    options))
                _emit(options, len(lowered.stages) - 1, "partition", module)
            partitions = bundle.name_programs(module.operation, entry, read_partitions(module.operation))
            lowered.stages.append(_run_stage("codegen", module, options.codegen(io_arguments=False), options))
            _emit(options, len(lowered.stages) - 1, "codegen", module)
            if on_stage is not None:
                on_stage("codegen", module)
        assert lowered.program is not None
        networks.append(bundle.Network(entry, lowered.program, module, partitions, lowered.imported.name))
        lowered_list.append(lowered)
    name = bo.name or (networks[0].entry if len(networks) == 1 else "bundle")
    start = time.perf_counter()
    files = bundle.write_bundle(directory, name, networks, bundle_cpu, bo.weights_txt, options.target_triple,
                                bo.weights_in_object, bo.max_stack, bo.opt_level)
    lowered_list[-1].stages.append(Stage("bundle", "", time.perf_counter() - start))
    return files, lowered_list


def _check_partitioning(lowered: Lowered, bo: BundleOptions) -> None:
    """A number of partitions or a memory budget the partitioner cannot meet, as one line naming the model (the pass
    would report it with a reproducer, for what is no compiler bug)."""
    if not (bo.partitions or bo.memory_budget):
        return
    for func in programs(lowered.module.operation):
        lv = Liveness(func)
        if len(lv.instructions) < max(bo.partitions, 1):
            raise CompileError(f"{lowered.imported.name}: cannot cut {len(lv.instructions)} instructions into "
                               f"{bo.partitions} partitions")
        if bo.memory_budget:
            floor = budget_floor(lv)
            if floor.bytes > bo.memory_budget:
                raise CompileError(f"{lowered.imported.name}: memory budget of {bo.memory_budget} bytes cannot be met: "
                                   f"{floor.describe()} needs {floor.bytes} bytes of live activations")


def _run_stage(name: str, module: ir.Module, elements: list[Element], options: CompileOptions) -> Stage:
    progress.stage(name)
    timings: list[tuple[str, float]] = []
    run_options = RunOptions(print_after_all=options.print_ir_after_all,
                             on_timing=lambda n, s: timings.append((n, s)))
    start = time.perf_counter()
    run_pipeline(module.operation, elements, run_options)
    return Stage(name, _asm(module), time.perf_counter() - start, timings)


def _emit(options: CompileOptions, index: int, name: str, module: ir.Module) -> None:
    """Write the full IR of a stage (weights included, so glow-opt can rerun it) as NN-name.mlir."""
    if options.emit_mlir_dir is None:
        return
    directory = Path(options.emit_mlir_dir)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{index:02d}-{name}.mlir").write_text(_asm(module, full=True))


__all__ = ["STAGES", "BundleOptions", "CompileOptions", "CompiledModel", "Lowered", "Stage", "compile",
           "emit_bundle", "lower_model"]
