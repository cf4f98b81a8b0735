"""The pass registry: every flag names its pass, every pass has a lit test named after it, and every
named pipeline prints as a textual pipeline that parses back to the same passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from glow_mlir.passes import pipelines
from glow_mlir.passes.pipeline import parse_pipeline, pipeline_text
from glow_mlir.passes.registry import PASSES, Pass, get_pass

LIT = Path(__file__).resolve().parents[1] / "lit"


@pytest.mark.parametrize("flag", sorted(PASSES))
def test_flag_is_the_pass_name(flag: str):
    cls = get_pass(flag)
    assert issubclass(cls, Pass)
    assert cls.name == flag
    assert cls.summary and cls.__doc__


@pytest.mark.parametrize("flag", sorted(PASSES))
def test_every_pass_has_a_lit_test_named_after_it(flag: str):
    # the file is named after the flag without its stage prefix, and its RUN lines run that flag
    stem = flag.split("-", 1)[1] if flag.startswith(("glowgraph-", "glowir-", "convert-")) else flag
    files = [p for p in LIT.rglob(f"{stem}.mlir")]
    assert files, f"no lit test {stem}.mlir for the pass {flag}"
    runs = [line for p in files for line in p.read_text().splitlines() if line.startswith("// RUN:")]
    assert any(flag in line for line in runs), f"{files[0]} has no RUN line with {flag}"


@pytest.mark.parametrize("name", sorted(pipelines.PIPELINES))
def test_pipelines_round_trip_as_text(name: str):
    text = pipelines.text(name)
    assert text.startswith("builtin.module(")
    assert pipeline_text(parse_pipeline(text)) == text
    for spec, why in pipelines.PIPELINES[name]:
        assert why, f"{name}: entry {spec} says nothing about why it is there"


def test_no_module_passes_800_lines():
    """One module per concern: a module that grows past 800 lines is split by family (as the importer's handlers
    and the glowir lowerings are)."""
    root = Path(__file__).resolve().parents[2] / "glow_mlir"
    long = {str(p.relative_to(root)): n for p in root.rglob("*.py") if (n := len(p.read_text().splitlines())) > 800}
    assert long == {}


def test_every_glowir_instruction_has_one_lowering_in_one_family():
    from glow_mlir.passes.conversion.ir_to_linalg import (
        arithmetic,
        basic,
        cnn,
        datamove,
        program,
        quantized,
        reductions,
    )

    families = [basic, cnn, arithmetic, datamove, reductions, quantized]
    rows = [name for family in families for name in family.LOWERINGS]
    assert len(rows) == len(set(rows)), "an instruction lowered by two families"
    assert set(rows) == set(program.LOWERINGS)
