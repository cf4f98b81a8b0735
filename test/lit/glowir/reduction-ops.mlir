// RUN: glow-opt %s --split-input-file | FileCheck %s
// RUN: glow-opt %s --split-input-file | glow-opt --split-input-file | FileCheck %s

// The reduction, softmax, normalization, batch matmul and argmax instructions, @out first.
// CHECK-LABEL: func.func @instructions
// CHECK: %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3x4xf32>
// CHECK: %[[G:.+]] = "glowir.weight_var"() {mutability = "const", name = "g", value = dense<1.000000e+00> : tensor<4xf32>} : () -> memref<4xf32>
// CHECK: %[[R:.+]] = "glowir.alloc_activation"() : () -> memref<3xf32>
// CHECK: "glowir.reduce_sum"(%[[R]], %[[X]]) {axes = array<i64: 0, 2>} : (memref<3xf32>, memref<2x3x4xf32>) -> ()
// CHECK: "glowir.reduce_max"(%[[R]], %[[X]]) {axes = array<i64: 0, 2>}
// CHECK: "glowir.reduce_min"(%[[R]], %[[X]]) {axes = array<i64: 0, 2>}
// CHECK: "glowir.reduce_prod"(%[[R]], %[[X]]) {axes = array<i64: 0, 2>}
// CHECK: "glowir.reduce_l2"(%[[R]], %[[X]]) {axes = array<i64: 0, 2>}
// CHECK: %[[F:.+]] = "glowir.alloc_activation"() : () -> memref<2x3x4xf32>
// CHECK: "glowir.softmax"(%[[F]], %[[X]]) {axis = 2 : i64} : (memref<2x3x4xf32>, memref<2x3x4xf32>) -> ()
// CHECK: "glowir.log_softmax"(%[[F]], %[[X]]) {axis = 0 : i64}
// CHECK: "glowir.layer_norm"(%[[F]], %[[X]], %[[G]], %[[G]]) {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (memref<2x3x4xf32>, memref<2x3x4xf32>, memref<4xf32>, memref<4xf32>) -> ()
// CHECK: %[[B:.+]] = "glowir.alloc_activation"() : () -> memref<2x3x3xf32>
// CHECK: %[[XT:.+]] = "glowir.alloc_activation"() : () -> memref<2x4x3xf32>
// CHECK: "glowir.batch_matmul"(%[[B]], %[[X]], %[[XT]]) : (memref<2x3x3xf32>, memref<2x3x4xf32>, memref<2x4x3xf32>) -> ()
// CHECK: %[[I:.+]] = "glowir.alloc_activation"() : () -> memref<2x4xi64>
// CHECK: "glowir.arg_max"(%[[I]], %[[X]]) {axis = 1 : i64, select_last = 1 : i64} : (memref<2x4xi64>, memref<2x3x4xf32>) -> ()
func.func @instructions() attributes {glowir.inputs = ["x"], glowir.outputs = []} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3x4xf32>
  %g = "glowir.weight_var"() {mutability = "const", name = "g", value = dense<1.0> : tensor<4xf32>} : () -> memref<4xf32>
  %r = "glowir.alloc_activation"() : () -> memref<3xf32>
  "glowir.reduce_sum"(%r, %x) {axes = array<i64: 0, 2>} : (memref<3xf32>, memref<2x3x4xf32>) -> ()
  "glowir.reduce_max"(%r, %x) {axes = array<i64: 0, 2>} : (memref<3xf32>, memref<2x3x4xf32>) -> ()
  "glowir.reduce_min"(%r, %x) {axes = array<i64: 0, 2>} : (memref<3xf32>, memref<2x3x4xf32>) -> ()
  "glowir.reduce_prod"(%r, %x) {axes = array<i64: 0, 2>} : (memref<3xf32>, memref<2x3x4xf32>) -> ()
  "glowir.reduce_l2"(%r, %x) {axes = array<i64: 0, 2>} : (memref<3xf32>, memref<2x3x4xf32>) -> ()
  %f = "glowir.alloc_activation"() : () -> memref<2x3x4xf32>
  "glowir.softmax"(%f, %x) {axis = 2} : (memref<2x3x4xf32>, memref<2x3x4xf32>) -> ()
  "glowir.log_softmax"(%f, %x) {axis = 0} : (memref<2x3x4xf32>, memref<2x3x4xf32>) -> ()
  "glowir.layer_norm"(%f, %x, %g, %g) {axis = 2, epsilon = 1.0e-5 : f32} : (memref<2x3x4xf32>, memref<2x3x4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  %b = "glowir.alloc_activation"() : () -> memref<2x3x3xf32>
  %xt = "glowir.alloc_activation"() : () -> memref<2x4x3xf32>
  "glowir.batch_matmul"(%b, %x, %xt) : (memref<2x3x3xf32>, memref<2x3x4xf32>, memref<2x4x3xf32>) -> ()
  %i = "glowir.alloc_activation"() : () -> memref<2x4xi64>
  "glowir.arg_max"(%i, %x) {axis = 1, select_last = 1} : (memref<2x4xi64>, memref<2x3x4xf32>) -> ()
  return
}
