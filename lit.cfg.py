# Lit configuration for glow_mlir's FileCheck tests (test/lit/**/*.mlir).
import os
import shutil
import sys

import lit.formats

config.name = "glow_mlir"
config.test_format = lit.formats.ShTest(execute_external=False)  # lit's shell: provides `not`
config.suffixes = [".mlir"]
root = os.path.dirname(os.path.abspath(__file__))
# Only test/lit holds lit tests: everything else at the top is excluded.
config.excludes = [e for e in os.listdir(root) if e != "test"] + ["python", "Inputs"]
config.test_exec_root = os.path.join(root, "build", "lit")

# Run the tools from this checkout with the interpreter that runs lit.
config.environment["PYTHONPATH"] = root + os.pathsep + os.environ.get("PYTHONPATH", "")
for var in ("HOME", "TMPDIR", "GLOW_DEBUG", "GLOW_MODELS_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
python = sys.executable
for tool, module in (("glow-opt", "glow_opt"), ("glow-compile", "glow_compile"), ("glow-run", "glow_run")):
    config.substitutions.append((rf"(?<![\w/-]){tool}(?![\w-])", f"{python} -m glow_mlir.tools.{module}"))
config.substitutions.append(("%python", python))
models = os.environ.get("GLOW_MODELS_DIR", os.path.join(os.path.dirname(root), "shared", "models"))
config.substitutions.append(("%models", models))
if os.path.isdir(models):
    config.available_features.add("models")

# FileCheck comes with llvm-testing-tools as a console script beside this interpreter; prefer that one
# (a fresh pyenv or venv may not have it on PATH yet).
sibling = os.path.join(os.path.dirname(sys.executable), "FileCheck")
filecheck = sibling if os.path.exists(sibling) else shutil.which("FileCheck")
if filecheck is None:
    lit_config.fatal("FileCheck not found: install the test extra (pip install -e '.[test]')")
config.substitutions.append(("FileCheck", filecheck))
