// A failing pass leaves the IR in a file and prints the command that reproduces it.
// RUN: not glow-opt %s -p 'builtin.module(glowgraph-dce,no-such-pass)' --reproducer-dir %t 2>&1 | FileCheck %s --check-prefix=REPRO
// REPRO: glow-opt: error: pass 'no-such-pass' failed
// REPRO: the IR before the pass is in {{.*}}glow-repro-no-such-pass-{{.*}}.mlir
// REPRO: reproduce with: glow-opt {{.*}}glow-repro-no-such-pass-{{.*}}.mlir -p 'builtin.module(no-such-pass)'

// An unknown option is a one-line error, not a traceback.
// RUN: not glow-opt %s -p 'glowgraph-lower{nope=1}' 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: glow-opt: error: bad pass pipeline: pass 'glowgraph-lower' has no option 'nope' (options: keep)

// A missing file is reported by name.
// RUN: not glow-opt %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: glow-opt: error: cannot read '{{.*}}missing.mlir': No such file or directory

// --verify-diagnostics fails when an expected error does not occur.
// RUN: not glow-opt %S/Inputs/unmet-expectation.mlir --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=UNMET
// UNMET: unmet-expectation.mlir:3: expected error "this never happens" was not produced

// --list-passes names every pass and pipeline.
// RUN: glow-opt --list-passes | FileCheck %s --check-prefix=LIST
// LIST: glowgraph-dce
// LIST: glowgraph-cse
// LIST: glowgraph-constant-fold
// LIST: glowgraph-lower
// LIST: convert-glowgraph-to-glowir
// LIST: convert-glowir-to-linalg
// LIST: lower-to-llvm = builtin.module(

// CHECK-LABEL: func.func @f
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
