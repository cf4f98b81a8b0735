// RUN: glow-opt %s --split-input-file --glowgraph-lower | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-lower{keep=fully_connected})' | FileCheck %s --check-prefix=KEEP

// CHECK-LABEL: func.func @fc
// CHECK-SAME: (%[[X:.+]]: tensor<3x10xf32>, %[[W:.+]]: tensor<10x5xf32>, %[[B:.+]]: tensor<5xf32>)
// CHECK: %[[M:.+]] = "glowgraph.matmul"(%[[X]], %[[W]])
// CHECK: %[[A:.+]] = "glowgraph.batched_add"(%[[M]], %[[B]])
// CHECK: return %[[A]]
// KEEP-LABEL: func.func @fc
// KEEP: "glowgraph.fully_connected"
// KEEP-NOT: "glowgraph.matmul"
func.func @fc(%x: tensor<3x10xf32>, %w: tensor<10x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = "glowgraph.fully_connected"(%x, %w, %b) : (tensor<3x10xf32>, tensor<10x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// Negative: primitives are left as they are.
// CHECK-LABEL: func.func @primitive
// KEEP-LABEL: func.func @primitive
// CHECK: "glowgraph.matmul"
// CHECK: "glowgraph.relu"
func.func @primitive(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "glowgraph.matmul"(%x, %x) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.relu"(%0) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %1 : tensor<2x2xf32>
}

// -----

// BatchNorm -> x * mul + add, mul = scale / sqrt(var + epsilon) and add = bias - mean * mul computed per channel at
// compile time and broadcast along the channel axis (the last one in NHWC).
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x2x2xf32>)
// CHECK: %[[MUL:.+]] = "glowgraph.constant"() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: %[[MULB:.+]] = "glowgraph.broadcast"(%[[MUL]]) {shape = array<i64: 1, 2, 2, 2>}
// CHECK-NEXT: %[[SCALED:.+]] = "glowgraph.mul"(%[[X]], %[[MULB]])
// CHECK-NEXT: %[[ADD:.+]] = "glowgraph.constant"() {value = dense<[5.000000e-01, -5.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: %[[ADDB:.+]] = "glowgraph.broadcast"(%[[ADD]]) {shape = array<i64: 1, 2, 2, 2>}
// CHECK-NEXT: %[[Y:.+]] = "glowgraph.add"(%[[SCALED]], %[[ADDB]])
// CHECK-NEXT: return %[[Y]]
// KEEP-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %s = "glowgraph.constant"() {value = dense<[2.0, 6.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "glowgraph.constant"() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = "glowgraph.constant"() {value = dense<[0.5, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "glowgraph.constant"() {value = dense<[4.0, 9.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.batch_norm"(%x, %s, %b, %m, %v) {epsilon = 0.0 : f32, channel_axis = 3} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// On channel axis 1 of N x C x L, the per-channel constants get a trailing size-1 dim before the broadcast.
// CHECK-LABEL: func.func @batch_norm_axis1
// CHECK: %[[MUL:.+]] = "glowgraph.constant"() {value = dense<{{\[}}[1.000000e+00], [2.000000e+00]]> : tensor<2x1xf32>}
// CHECK-NEXT: "glowgraph.broadcast"(%[[MUL]]) {shape = array<i64: 2, 2, 3>} : (tensor<2x1xf32>) -> tensor<2x2x3xf32>
// KEEP-LABEL: func.func @batch_norm_axis1
func.func @batch_norm_axis1(%x: tensor<2x2x3xf32>) -> tensor<2x2x3xf32> {
  %s = "glowgraph.constant"() {value = dense<[2.0, 6.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "glowgraph.constant"() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = "glowgraph.constant"() {value = dense<[0.5, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "glowgraph.constant"() {value = dense<[4.0, 9.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.batch_norm"(%x, %s, %b, %m, %v) {epsilon = 0.0 : f32, channel_axis = 1} : (tensor<2x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// -----

// Clip -> Min(Max(x, Splat(min)), Splat(max)); an infinite bound is left out.
// CHECK-LABEL: func.func @clip
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[LO:.+]] = "glowgraph.splat"() {value = 0.000000e+00 : f32} : () -> tensor<4xf32>
// CHECK-NEXT: %[[A:.+]] = "glowgraph.max"(%[[X]], %[[LO]])
// CHECK-NEXT: %[[HI:.+]] = "glowgraph.splat"() {value = 6.000000e+00 : f32} : () -> tensor<4xf32>
// CHECK-NEXT: %[[B:.+]] = "glowgraph.min"(%[[A]], %[[HI]])
// CHECK-NEXT: %[[ONE:.+]] = "glowgraph.splat"() {value = 1.000000e+00 : f32} : () -> tensor<4xf32>
// CHECK-NEXT: %[[C:.+]] = "glowgraph.min"(%[[X]], %[[ONE]])
// CHECK-NEXT: return %[[B]], %[[C]]
// KEEP-LABEL: func.func @clip
func.func @clip(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "glowgraph.clip"(%x) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "glowgraph.clip"(%x) {min = 0xFF800000 : f32, max = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
