// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @unknown_activation(%y: tensor<3x2xf32>, %v: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{activation must be one of none, relu, clip, got 'tanh'}}
  %0 = "glowgraph.fully_connected"(%y, %v, %b) {activation = "tanh"} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @clip_without_bounds(%y: tensor<3x2xf32>, %v: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{a clip activation needs activation_min <= activation_max}}
  %0 = "glowgraph.fully_connected"(%y, %v, %b) {activation = "clip", activation_min = 1.0 : f32} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @bounds_without_clip(%x: tensor<1x2x2x1xf32>, %w: tensor<1x1x1x2xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error @+1 {{activation_min and activation_max go with a clip activation, not 'relu'}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, activation = "relu", activation_max = 1.0 : f32} : (tensor<1x2x2x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
