// RUN: glow-opt %s --split-input-file --glowgraph-fuse-clip | FileCheck %s

// Max(Min(x, 6), 0) and Min(Max(x, -1), 1), constants on either side: clips.
// CHECK-LABEL: func.func @clips
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[A:.+]] = "glowgraph.clip"(%[[X]]) {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32}
// CHECK: %[[B:.+]] = "glowgraph.clip"(%[[X]]) {max = 1.000000e+00 : f32, min = -1.000000e+00 : f32}
// CHECK-NOT: "glowgraph.max"
// CHECK-NOT: "glowgraph.min"
// CHECK: return %[[A]], %[[B]]
func.func @clips(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %six = "glowgraph.splat"() {value = 6.0 : f32} : () -> tensor<4xf32>
  %zero = "glowgraph.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %one = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<4xf32>
  %minus = "glowgraph.splat"() {value = -1.0 : f32} : () -> tensor<4xf32>
  %0 = "glowgraph.min"(%x, %six) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "glowgraph.max"(%zero, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = "glowgraph.max"(%x, %minus) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "glowgraph.min"(%2, %one) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %3 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: bounds that cross (the result is a constant), a bound that varies, and an inner node with another
// user stay as they are.
// CHECK-LABEL: func.func @not_clips
// CHECK-NOT: "glowgraph.clip"
func.func @not_clips(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %one = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<2xf32>
  %two = "glowgraph.splat"() {value = 2.0 : f32} : () -> tensor<2xf32>
  %v = "glowgraph.constant"() {value = dense<[1.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.min"(%x, %one) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "glowgraph.max"(%0, %two) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = "glowgraph.min"(%x, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = "glowgraph.max"(%2, %one) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %4 = "glowgraph.max"(%x, %one) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %5 = "glowgraph.min"(%4, %two) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %1, %3, %5, %4 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
