// cpu-index-bitwidth: on a target with 32-bit pointers (Cortex-M: thumb triples) the module's data layout says that
// index is 32 bits wide, and convert-to-llvm{dynamic=true} (the 32-bit pipeline's conversion) then lowers every
// address and loop counter to i32; on a 64-bit target the module is left as it is.
// RUN: glow-opt %s -p 'builtin.module(cpu-index-bitwidth{target-triple=thumbv7em-none-eabihf target-cpu=cortex-m4})' | FileCheck %s --check-prefix=M4
// RUN: glow-opt %s -p 'builtin.module(cpu-index-bitwidth{target-triple=thumbv7em-none-eabihf target-cpu=cortex-m4},convert-scf-to-cf,convert-to-llvm{dynamic=true},reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM
// RUN: glow-opt %s -p 'builtin.module(cpu-index-bitwidth{target-triple=aarch64-linux-gnu target-cpu=neoverse-n1})' | FileCheck %s --check-prefix=A64

// M4:   module attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>}
// M4-LABEL: func.func @sum(
// LLVM-LABEL: llvm.func @sum(
// LLVM-SAME:  %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i32, %{{.+}}: i32, %{{.+}}: i32
// LLVM:       llvm.getelementptr {{.*}}[%{{.+}}] : (!llvm.ptr, i32) -> !llvm.ptr, f32
// LLVM-NOT:   i64
// A64-NOT:    dlti.dl_spec
// A64-LABEL:  func.func @sum(
func.func @sum(%m: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %m[%i] : memref<16xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  return %r : f32
}
