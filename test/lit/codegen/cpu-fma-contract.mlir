// cpu-fma-contract: float multiplies, adds and subtracts get the contract fast-math flag (LLVM may then fuse a
// multiply and an add into one FMA), keeping the flags they had; integer ops are left alone.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-fma-contract)' | FileCheck %s

// CHECK-LABEL: func.func @flags(
// CHECK:       %[[M:.+]] = arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : vector<16xf32>
// CHECK:       %[[A:.+]] = arith.addf %[[M]], %{{.+}} fastmath<contract> : vector<16xf32>
// CHECK:       arith.subf %[[A]], %{{.+}} fastmath<nnan,contract> : vector<16xf32>
// CHECK:       arith.addf %{{.+}}, %{{.+}} fastmath<fast> : f32
// CHECK:       arith.divf %{{.+}}, %{{.+}} : f32
// CHECK:       arith.addi %{{.+}}, %{{.+}} : i32
func.func @flags(%x: vector<16xf32>, %y: vector<16xf32>, %s: f32, %i: i32) -> (vector<16xf32>, f32, f32, i32) {
  %m = arith.mulf %x, %y : vector<16xf32>
  %a = arith.addf %m, %y : vector<16xf32>
  %b = arith.subf %a, %x fastmath<nnan> : vector<16xf32>
  %c = arith.addf %s, %s fastmath<fast> : f32
  %d = arith.divf %s, %s : f32
  %j = arith.addi %i, %i : i32
  return %b, %c, %d, %j : vector<16xf32>, f32, f32, i32
}

// -----

// The flag carries over to the LLVM dialect, where the pair may become one fused multiply-add.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-fma-contract,convert-to-llvm)' | FileCheck %s --check-prefix=LLVM
// LLVM-LABEL: llvm.func @to_llvm(
// LLVM:       llvm.fmul %{{.+}}, %{{.+}} {fastmathFlags = #llvm.fastmath<contract>}
// LLVM:       llvm.fadd %{{.+}}, %{{.+}} {fastmathFlags = #llvm.fastmath<contract>}
func.func @to_llvm(%x: f32, %y: f32) -> f32 {
  %m = arith.mulf %x, %y : f32
  %a = arith.addf %m, %y : f32
  return %a : f32
}
