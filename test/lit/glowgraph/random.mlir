// RUN: glow-opt %s --split-input-file --glowgraph-cse --glowgraph-dce --glowgraph-constant-fold | FileCheck %s

// Random draws are not pure: two with one seed stay two (each keeps its own run counter), none is folded, and one
// that nothing reads stays too (its draws advance the stream).
// CHECK-LABEL: func.func @draws_stay
// CHECK: %[[A:.+]] = "glowgraph.random_uniform"() {seed = 7 : i64} : () -> tensor<4xf32>
// CHECK: %[[B:.+]] = "glowgraph.random_uniform"() {seed = 7 : i64} : () -> tensor<4xf32>
// CHECK: "glowgraph.random_uniform"() {seed = 9 : i64} : () -> tensor<4xf32>
// CHECK: %[[S:.+]] = "glowgraph.add"(%[[A]], %[[B]])
// CHECK: return %[[S]]
func.func @draws_stay() -> tensor<4xf32> {
  %0 = "glowgraph.random_uniform"() {seed = 7 : i64} : () -> tensor<4xf32>
  %1 = "glowgraph.random_uniform"() {seed = 7 : i64} : () -> tensor<4xf32>
  %2 = "glowgraph.random_uniform"() {seed = 9 : i64} : () -> tensor<4xf32>
  %3 = "glowgraph.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// Positive, for comparison: the same graph with pure nodes in place of the draws merges, and the unread one goes.
// CHECK-LABEL: func.func @pure_merges
// CHECK: %[[C:.+]] = "glowgraph.constant"() {value = dense<1.000000e+00> : tensor<4xf32>}
// CHECK-NOT: dense<3.0
// CHECK: %[[S:.+]] = "glowgraph.add"(%[[C]], %[[C]])
// CHECK: return %[[S]]
func.func @pure_merges() -> tensor<4xf32> {
  %0 = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<4xf32>
  %1 = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<4xf32>
  %2 = "glowgraph.splat"() {value = 3.0 : f32} : () -> tensor<4xf32>
  %3 = "glowgraph.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}
