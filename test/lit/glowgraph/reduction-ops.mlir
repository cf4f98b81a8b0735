// RUN: glow-opt %s --split-input-file | FileCheck %s
// RUN: glow-opt %s --split-input-file | glow-opt --split-input-file | FileCheck %s

// Reductions drop their axes from the shape; float and integer elements.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[I:.+]]: tensor<2x3xi64>)
// CHECK: "glowgraph.reduce_sum"(%[[X]]) {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK: "glowgraph.reduce_max"(%[[X]]) {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK: "glowgraph.reduce_min"(%[[X]]) {axes = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK: "glowgraph.reduce_prod"(%[[I]]) {axes = array<i64: 1>} : (tensor<2x3xi64>) -> tensor<2xi64>
// CHECK: "glowgraph.reduce_mean"(%[[X]]) {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
// CHECK: "glowgraph.reduce_l2"(%[[X]]) {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi64>) -> (tensor<3xf32>, tensor<2x4xf32>, tensor<f32>, tensor<2xi64>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "glowgraph.reduce_sum"(%x) {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %1 = "glowgraph.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %2 = "glowgraph.reduce_min"(%x) {axes = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<f32>
  %3 = "glowgraph.reduce_prod"(%i) {axes = array<i64: 1>} : (tensor<2x3xi64>) -> tensor<2xi64>
  %4 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  %5 = "glowgraph.reduce_l2"(%x) {axes = array<i64: 2>} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3xf32>, tensor<2x4xf32>, tensor<f32>, tensor<2xi64>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Softmax and LogSoftmax keep the type; LayerNorm takes scale and bias of the normalized dims.
// CHECK-LABEL: func.func @normalizations
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[G:.+]]: tensor<3x4xf32>, %[[B:.+]]: tensor<3x4xf32>)
// CHECK: "glowgraph.softmax"(%[[X]]) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: "glowgraph.log_softmax"(%[[X]]) {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: "glowgraph.layer_norm"(%[[X]], %[[G]], %[[B]]) {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
func.func @normalizations(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = "glowgraph.softmax"(%x) {axis = 1} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %1 = "glowgraph.log_softmax"(%x) {axis = 2} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = "glowgraph.layer_norm"(%x, %g, %b) {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// BatchMatMul multiplies matching batch entries; ArgMax gives i64 indices without the axis.
// CHECK-LABEL: func.func @matmul_and_argmax
// CHECK: "glowgraph.batch_matmul"(%{{.+}}, %{{.+}}) : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK: "glowgraph.arg_max"(%{{.+}}) {axis = 2 : i64, select_last = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3xi64>
// CHECK: "glowgraph.arg_max"(%{{.+}}) {axis = 0 : i64, select_last = 0 : i64} : (tensor<5xi64>) -> tensor<i64>
func.func @matmul_and_argmax(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %i: tensor<5xi64>) -> (tensor<2x3x5xf32>, tensor<2x3xi64>, tensor<i64>) {
  %0 = "glowgraph.batch_matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = "glowgraph.arg_max"(%a) {axis = 2, select_last = 1} : (tensor<2x3x4xf32>) -> tensor<2x3xi64>
  %2 = "glowgraph.arg_max"(%i) {axis = 0, select_last = 0} : (tensor<5xi64>) -> tensor<i64>
  return %0, %1, %2 : tensor<2x3x5xf32>, tensor<2x3xi64>, tensor<i64>
}
