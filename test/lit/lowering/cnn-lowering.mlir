// RUN: glow-opt %s --split-input-file --glowgraph-lower | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-lower{keep=batch_norm,clip})' | FileCheck %s --check-prefix=KEEP

// Negative case of every pattern: a node kind the backend keeps stays as it is.

// BatchNorm -> x * mul + add, mul = scale / sqrt(var + epsilon) and add = bias - mean * mul computed per channel at
// compile time from constant parameters, and broadcast along the channel axis (the last one in NHWC).
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x2x2xf32>)
// CHECK: %[[MUL:.+]] = "glowgraph.constant"() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: %[[ADD:.+]] = "glowgraph.constant"() {value = dense<[5.000000e-01, -5.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: %[[MULB:.+]] = "glowgraph.broadcast"(%[[MUL]]) {shape = array<i64: 1, 2, 2, 2>}
// CHECK-NEXT: %[[SCALED:.+]] = "glowgraph.mul"(%[[X]], %[[MULB]])
// CHECK-NEXT: %[[ADDB:.+]] = "glowgraph.broadcast"(%[[ADD]]) {shape = array<i64: 1, 2, 2, 2>}
// CHECK-NEXT: %[[Y:.+]] = "glowgraph.add"(%[[SCALED]], %[[ADDB]])
// CHECK-NEXT: return %[[Y]]
// KEEP-LABEL: func.func @batch_norm
// KEEP: "glowgraph.batch_norm"
// KEEP-NOT: "glowgraph.mul"
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
// CHECK: "glowgraph.broadcast"(%[[MUL]]) {shape = array<i64: 2, 2, 3>} : (tensor<2x1xf32>) -> tensor<2x2x3xf32>
// KEEP-LABEL: func.func @batch_norm_axis1
// KEEP: "glowgraph.batch_norm"
func.func @batch_norm_axis1(%x: tensor<2x2x3xf32>) -> tensor<2x2x3xf32> {
  %s = "glowgraph.constant"() {value = dense<[2.0, 6.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "glowgraph.constant"() {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = "glowgraph.constant"() {value = dense<[0.5, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = "glowgraph.constant"() {value = dense<[4.0, 9.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.batch_norm"(%x, %s, %b, %m, %v) {epsilon = 0.0 : f32, channel_axis = 1} : (tensor<2x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// -----

// Parameters known only at run time: the same per-channel mul and add, computed by graph nodes.
// CHECK-LABEL: func.func @batch_norm_runtime
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[S:.+]]: tensor<3xf32>, %[[B:.+]]: tensor<3xf32>, %[[M:.+]]: tensor<3xf32>, %[[V:.+]]: tensor<3xf32>)
// CHECK: %[[EPS:.+]] = "glowgraph.splat"() {value = 5.000000e-01 : f32} : () -> tensor<3xf32>
// CHECK-NEXT: %[[VE:.+]] = "glowgraph.add"(%[[V]], %[[EPS]])
// CHECK-NEXT: %[[STD:.+]] = "glowgraph.sqrt"(%[[VE]])
// CHECK-NEXT: %[[MUL:.+]] = "glowgraph.div"(%[[S]], %[[STD]])
// CHECK-NEXT: %[[MM:.+]] = "glowgraph.mul"(%[[M]], %[[MUL]])
// CHECK-NEXT: %[[ADD:.+]] = "glowgraph.sub"(%[[B]], %[[MM]])
// CHECK-NEXT: %[[MUL2:.+]] = "glowgraph.reshape"(%[[MUL]]) {shape = array<i64: 3, 1>}
// CHECK-NEXT: %[[ADD2:.+]] = "glowgraph.reshape"(%[[ADD]]) {shape = array<i64: 3, 1>}
// CHECK-NEXT: %[[MULB:.+]] = "glowgraph.broadcast"(%[[MUL2]]) {shape = array<i64: 2, 3, 4>}
// CHECK-NEXT: %[[SCALED:.+]] = "glowgraph.mul"(%[[X]], %[[MULB]])
// CHECK-NEXT: %[[ADDB:.+]] = "glowgraph.broadcast"(%[[ADD2]]) {shape = array<i64: 2, 3, 4>}
// CHECK-NEXT: %[[Y:.+]] = "glowgraph.add"(%[[SCALED]], %[[ADDB]])
// CHECK-NEXT: return %[[Y]]
// KEEP-LABEL: func.func @batch_norm_runtime
// KEEP: "glowgraph.batch_norm"
func.func @batch_norm_runtime(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0 = "glowgraph.batch_norm"(%x, %s, %b, %m, %v) {epsilon = 0.5 : f32, channel_axis = 1} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
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
// KEEP-COUNT-2: "glowgraph.clip"
// KEEP-NOT: "glowgraph.max"
func.func @clip(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "glowgraph.clip"(%x) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "glowgraph.clip"(%x) {min = 0xFF800000 : f32, max = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
