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

// A fused activation of a lowered fully_connected follows the bias: a clip becomes max then min with splats.
// CHECK-LABEL: func.func @fully_connected_clip
// CHECK: %[[A:.+]] = "glowgraph.batched_add"
// CHECK-NEXT: %[[LO:.+]] = "glowgraph.splat"() {value = -1.000000e+00 : f32}
// CHECK-NEXT: %[[M:.+]] = "glowgraph.max"(%[[A]], %[[LO]])
// CHECK-NEXT: %[[HI:.+]] = "glowgraph.splat"() {value = 2.000000e+00 : f32}
// CHECK-NEXT: %[[C:.+]] = "glowgraph.min"(%[[M]], %[[HI]])
// CHECK-NEXT: return %[[C]]
// KEEP-LABEL: func.func @fully_connected_clip
// KEEP: "glowgraph.fully_connected"{{.*}}activation = "clip"
func.func @fully_connected_clip(%x: tensor<3x2xf32>, %w: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<3x2xf32> {
  %0 = "glowgraph.fully_connected"(%x, %w, %b) {activation = "clip", activation_min = -1.0 : f32, activation_max = 2.0 : f32} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
