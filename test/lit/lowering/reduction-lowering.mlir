// RUN: glow-opt %s --split-input-file --glowgraph-lower | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-lower{keep=reduce_mean})' | FileCheck %s --check-prefix=KEEP

// ReduceMean(x) -> Div(ReduceSum(x), Splat(n)): n counts the elements summed into each result.
// CHECK-LABEL: func.func @mean
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[S:.+]] = "glowgraph.reduce_sum"(%[[X]]) {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK: %[[N:.+]] = "glowgraph.splat"() {value = 8.000000e+00 : f32} : () -> tensor<3xf32>
// CHECK: %[[M:.+]] = "glowgraph.div"(%[[S]], %[[N]])
// CHECK: return %[[M]]
// KEEP-LABEL: func.func @mean
// KEEP: "glowgraph.reduce_mean"
// KEEP-NOT: "glowgraph.reduce_sum"
func.func @mean(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// The mean of every element is a scalar divided by a scalar splat.
// CHECK-LABEL: func.func @mean_all
// CHECK: %[[S:.+]] = "glowgraph.reduce_sum"(%{{.+}}) {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
// CHECK: %[[N:.+]] = "glowgraph.splat"() {value = 6.000000e+00 : f32} : () -> tensor<f32>
// CHECK: "glowgraph.div"(%[[S]], %[[N]]) : (tensor<f32>, tensor<f32>) -> tensor<f32>
func.func @mean_all(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Negative: the other reductions are primitives, left as they are.
// CHECK-LABEL: func.func @primitives
// KEEP-LABEL: func.func @primitives
// CHECK: "glowgraph.reduce_sum"
// CHECK: "glowgraph.reduce_max"
// CHECK: "glowgraph.arg_max"
// CHECK: "glowgraph.batch_matmul"
// CHECK-NOT: "glowgraph.div"
func.func @primitives(%x: tensor<2x3x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2x3xi64>, tensor<2x3x3xf32>) {
  %0 = "glowgraph.reduce_sum"(%x) {axes = array<i64: 1, 2>} : (tensor<2x3x3xf32>) -> tensor<2xf32>
  %1 = "glowgraph.reduce_max"(%x) {axes = array<i64: 1, 2>} : (tensor<2x3x3xf32>) -> tensor<2xf32>
  %2 = "glowgraph.arg_max"(%x) {axis = 2, select_last = 0} : (tensor<2x3x3xf32>) -> tensor<2x3xi64>
  %3 = "glowgraph.batch_matmul"(%x, %x) : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2x3xi64>, tensor<2x3x3xf32>
}
