// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @quantize_not_float(%x: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error @+1 {{operand #0 must have a float element type, got i32}}
  %0 = "glowgraph.quantize"(%x) {scale = 0.5 : f32, offset = 0} : (tensor<4xi32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @scale_not_positive(%x: tensor<4xf32>) -> tensor<4xi8> {
  // expected-error @+1 {{scale must be positive and finite, got 0.0}}
  %0 = "glowgraph.quantize"(%x) {scale = 0.0 : f32, offset = 0} : (tensor<4xf32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @offset_out_of_range(%q: tensor<4xi8>) -> tensor<4xf32> {
  // expected-error @+1 {{offset 200 is outside the int8 range [-128, 127]}}
  %0 = "glowgraph.dequantize"(%q) {scale = 0.5 : f32, offset = 200} : (tensor<4xi8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clamp_unordered(%q: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{output_min 10 and output_max 5 must be ordered within [-128, 127]}}
  %0 = "glowgraph.rescale"(%q) {input_scale = 0.5 : f32, input_offset = 0, scale = 1.0 : f32, offset = 0, output_min = 10, output_max = 5} : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @bias_not_i32(%x: tensor<1x4x4x2xi8>, %w: tensor<1x1x2x3xi8>, %b: tensor<3xi8>) -> tensor<1x4x4x3xi8> {
  // expected-error @+1 {{the bias must be i32, got i8}}
  %0 = "glowgraph.qconv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, input_offset = 0, multipliers = array<f32: 0.1>, offset = 0, output_min = -128, output_max = 127} : (tensor<1x4x4x2xi8>, tensor<1x1x2x3xi8>, tensor<3xi8>) -> tensor<1x4x4x3xi8>
  return %0 : tensor<1x4x4x3xi8>
}

// -----

func.func @multipliers_per_channel(%x: tensor<2x4xi8>, %w: tensor<4x3xi8>, %b: tensor<3xi32>) -> tensor<2x3xi8> {
  // expected-error @+1 {{multipliers must hold 1 or 3 values (one per output channel), got 2}}
  %0 = "glowgraph.qfully_connected"(%x, %w, %b) {multipliers = array<f32: 0.1, 0.2>, offset = 0, output_min = -128, output_max = 127} : (tensor<2x4xi8>, tensor<4x3xi8>, tensor<3xi32>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}

// -----

func.func @multiplier_out_of_range(%x: tensor<2x4xi8>, %w: tensor<4x3xi8>, %b: tensor<3xi32>) -> tensor<2x3xi8> {
  // expected-error @+1 {{multiplier 10000000000.0 is out of the range a 31-bit fixed-point rescale holds}}
  %0 = "glowgraph.qfully_connected"(%x, %w, %b) {multipliers = array<f32: 1.0e10>, offset = 0, output_min = -128, output_max = 127} : (tensor<2x4xi8>, tensor<4x3xi8>, tensor<3xi32>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}

// -----

func.func @qadd_types(%a: tensor<4xi8>, %b: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error @+1 {{expected 'tensor<4xi8>' but got 'tensor<4xi32>'}}
  %0 = "glowgraph.qadd"(%a, %b) {lhs_scale = 0.5 : f32, lhs_offset = 0, rhs_scale = 0.5 : f32, rhs_offset = 0, scale = 1.0 : f32, offset = 0, output_min = -128, output_max = 127} : (tensor<4xi8>, tensor<4xi32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
