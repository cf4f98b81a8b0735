// glow-opt --lower-to-llvm runs every stage from glowgraph to the LLVM dialect.
// RUN: glow-opt %s --lower-to-llvm | FileCheck %s
// The same stages, named one by one, print what each made (the stage boundaries are testable).
// RUN: glow-opt %s --lower-to-llvm --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=STAGES

// CHECK-NOT: glowgraph.
// CHECK-NOT: glowir.{{[a-z_]+}}"
// The linalg ops became kernel functions that the program calls (linalg-outline-kernels): here one, the bias
// broadcast, the matmul and the sigmoid in place on its output fused into one loop nest (cpu-tile-kernels).
// CHECK-LABEL: llvm.func @linear_sigmoid_matmul(
// The matmul kernel: vectorized multiply-adds, then the sigmoid on the accumulators.
// CHECK: llvm.intr.fmuladd
// exp as a vector polynomial (cpu-approximate-math), no libm call per lane.
// CHECK: llvm.intr.floor(%{{.+}}) : (vector<{{[0-9]+}}xf32>)
// CHECK-LABEL: llvm.func @linear_sigmoid(
// CHECK-SAME: glowir.arguments = ["constantWeight", "mutableWeight", "activations"]
// CHECK-NOT: llvm.call @linear_sigmoid_broadcast(
// CHECK: llvm.call @linear_sigmoid_matmul(
// CHECK-NOT: llvm.call @linear_sigmoid_generic(
// CHECK-LABEL: llvm.func @_mlir_ciface_linear_sigmoid(

// STAGES: IR Dump After glowgraph-constant-fold
// STAGES: IR Dump After glowgraph-lower
// STAGES: "glowgraph.fully_connected"
// STAGES: IR Dump After convert-glowgraph-to-glowir
// STAGES: "glowir.fully_connected"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}})
// STAGES: "glowir.sigmoid"
// STAGES: IR Dump After glowir-share-buffers
// STAGES: "glowir.sigmoid"(%[[Y:[0-9]+]], %[[Y]])
// STAGES: IR Dump After glowir-plan-memory
// STAGES: glowir.activations_size = 0 : i64
// STAGES: IR Dump After convert-glowir-to-linalg
// STAGES: linalg.matmul
// STAGES: IR Dump After linalg-outline-kernels
// STAGES: func.func private @linear_sigmoid_matmul
// STAGES: IR Dump After reconcile-unrealized-casts
// STAGES: llvm.func @linear_sigmoid

func.func @linear_sigmoid(%x: tensor<3x10xf32> {glowgraph.name = "x"}) -> (tensor<3x5xf32> {glowgraph.name = "y"}) {
  %w = "glowgraph.constant"() {value = dense<0.25> : tensor<10x5xf32>} : () -> tensor<10x5xf32> loc("w")
  %b = "glowgraph.constant"() {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>} : () -> tensor<5xf32> loc("b")
  %0 = "glowgraph.fully_connected"(%x, %w, %b) : (tensor<3x10xf32>, tensor<10x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %1 = "glowgraph.sigmoid"(%0) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}
