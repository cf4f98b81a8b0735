// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-fuse-activations{nodes=conv2d,fully_connected})' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-fuse-activations{nodes=fully_connected})' | FileCheck %s --check-prefix=FC
// RUN: glow-opt %s --split-input-file --glowgraph-fuse-activations | FileCheck %s --check-prefix=NONE

// A relu after a convolution and a clip after a fully connected node become their fused activations.
// CHECK-LABEL: func.func @fused
// CHECK: %[[C:.+]] = "glowgraph.conv2d"({{.*}}) {activation = "relu", dilations
// CHECK: %[[F:.+]] = "glowgraph.fully_connected"({{.*}}) {activation = "clip", activation_max = 6.000000e+00 : f32, activation_min = 0.000000e+00 : f32}
// CHECK-NOT: "glowgraph.relu"
// CHECK-NOT: "glowgraph.clip"
// CHECK: return %[[C]], %[[F]]
// FC-LABEL: func.func @fused
// FC: "glowgraph.relu"
// FC: "glowgraph.fully_connected"({{.*}}) {activation = "clip"
// NONE-LABEL: func.func @fused
// NONE: "glowgraph.relu"
// NONE: "glowgraph.clip"
func.func @fused(%x: tensor<1x2x2x1xf32>, %w: tensor<1x1x1x2xf32>, %b: tensor<2xf32>, %y: tensor<3x2xf32>, %v: tensor<2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<3x2xf32>) {
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x2x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = "glowgraph.relu"(%0) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %2 = "glowgraph.fully_connected"(%y, %v, %b) : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %3 = "glowgraph.clip"(%2) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1, %3 : tensor<1x2x2x2xf32>, tensor<3x2xf32>
}

// -----

// Negative: a node with another user, a node with an activation already, and a relu of something else stay.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-3: "glowgraph.relu"
func.func @not_fused(%y: tensor<3x2xf32>, %v: tensor<2x2xf32>, %b: tensor<2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %0 = "glowgraph.fully_connected"(%y, %v, %b) : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.relu"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %2 = "glowgraph.fully_connected"(%y, %v, %b) {activation = "clip", activation_min = -1.0 : f32, activation_max = 1.0 : f32} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %3 = "glowgraph.relu"(%2) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %4 = "glowgraph.relu"(%y) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1, %0, %3, %4 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// Through the reshape that puts the batch dims of a 3-D product back.
// CHECK-LABEL: func.func @through_reshape
// CHECK: %[[F:.+]] = "glowgraph.fully_connected"({{.*}}) {activation = "relu"}
// CHECK-NEXT: %[[R:.+]] = "glowgraph.reshape"(%[[F]]) {shape = array<i64: 1, 3, 2>}
// CHECK-NEXT: return %[[R]]
func.func @through_reshape(%y: tensor<3x2xf32>, %v: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<1x3x2xf32> {
  %0 = "glowgraph.fully_connected"(%y, %v, %b) : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 1, 3, 2>} : (tensor<3x2xf32>) -> tensor<1x3x2xf32>
  %2 = "glowgraph.relu"(%1) : (tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  return %2 : tensor<1x3x2xf32>
}
