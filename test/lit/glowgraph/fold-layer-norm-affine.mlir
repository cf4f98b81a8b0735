// RUN: glow-opt %s --split-input-file --glowgraph-fold-layer-norm-affine | FileCheck %s

// (n * g + b) * c + d = n * (g * c) + (b * c + d), c and d broadcast over the rows.
// CHECK-LABEL: func.func @affine
// CHECK-SAME: (%[[X:.+]]: tensor<2x2xf32>)
// CHECK-DAG: %[[G:.+]] = "glowgraph.constant"() {value = dense<[2.000000e+00, 6.000000e+00]> : tensor<2xf32>}
// CHECK-DAG: %[[B:.+]] = "glowgraph.constant"() {value = dense<[1.200000e+01, 2.300000e+01]> : tensor<2xf32>}
// CHECK: %[[N:.+]] = "glowgraph.layer_norm"(%[[X]], %[[G]], %[[B]]) {axis = 1 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NEXT: return %[[N]]
func.func @affine(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %g = "glowgraph.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "glowgraph.constant"() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = "glowgraph.constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %d = "glowgraph.constant"() {value = dense<[10.0, 20.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %cb = "glowgraph.broadcast"(%c) {shape = array<i64: 2, 2>} : (tensor<2xf32>) -> tensor<2x2xf32>
  %db = "glowgraph.broadcast"(%d) {shape = array<i64: 2, 2>} : (tensor<2xf32>) -> tensor<2x2xf32>
  %0 = "glowgraph.layer_norm"(%x, %g, %b) {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.mul"(%cb, %0) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.add"(%1, %db) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}

// -----

// Negative: a factor that varies along the rows, and a layer norm with another user, stay.
// CHECK-LABEL: func.func @not_foldable
// CHECK: "glowgraph.mul"
// CHECK: "glowgraph.add"
func.func @not_foldable(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %g = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = "glowgraph.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %0 = "glowgraph.layer_norm"(%x, %g, %g) {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.mul"(%0, %c) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.layer_norm"(%x, %g, %g) {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %s = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<2x2xf32>
  %3 = "glowgraph.add"(%2, %s) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %1, %3, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
