// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @conv_result(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x6xf32>, %b: tensor<6xf32>) -> tensor<1x8x8x6xf32> {
  // expected-error @+1 {{result type tensor<1x8x8x6xf32> does not match the inferred type tensor<1x6x6x6xf32>}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x4xf32>, tensor<3x3x4x6xf32>, tensor<6xf32>) -> tensor<1x8x8x6xf32>
  return %0 : tensor<1x8x8x6xf32>
}

// -----

func.func @conv_group(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x6xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{group 3 must divide the 4 input channels and the 6 output channels}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 3} : (tensor<1x8x8x4xf32>, tensor<3x3x4x6xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_filter_channels(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x6xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{filter 3x3x4x6 must have 2 channels (input channels / group)}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2} : (tensor<1x8x8x4xf32>, tensor<3x3x4x6xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_bias(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x6xf32>, %b: tensor<4xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{bias 4 must have one entry per output channel (6)}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x4xf32>, tensor<3x3x4x6xf32>, tensor<4xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_strides(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x6xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{strides [0, 1] must hold 2 integers >= 1}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 0, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x4xf32>, tensor<3x3x4x6xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_pads(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x6xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{pads [0, 0] must hold 4 integers >= 0}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x4xf32>, tensor<3x3x4x6xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_window_too_large(%x: tensor<1x2x2x4xf32>, %w: tensor<3x3x4x6xf32>, %b: tensor<6xf32>) -> tensor<1x1x1x6xf32> {
  // expected-error @+1 {{window 3x3 (dilated) does not fit the padded input 2x2 with pads [0, 0, 0, 0]}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x2x4xf32>, tensor<3x3x4x6xf32>, tensor<6xf32>) -> tensor<1x1x1x6xf32>
  return %0 : tensor<1x1x1x6xf32>
}

// -----

func.func @conv_rank(%x: tensor<8x8x4xf32>, %w: tensor<3x3x4x6xf32>, %b: tensor<6xf32>) -> tensor<6x6x6xf32> {
  // expected-error @+1 {{input must have rank 4, got 8x8x4}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<8x8x4xf32>, tensor<3x3x4x6xf32>, tensor<6xf32>) -> tensor<6x6x6xf32>
  return %0 : tensor<6x6x6xf32>
}

// -----

func.func @conv_integer(%x: tensor<1x8x8x4xi32>, %w: tensor<3x3x4x6xi32>, %b: tensor<6xi32>) -> tensor<1x6x6x6xi32> {
  // expected-error @+1 {{operand #0 must have a float element type, got i32}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x4xi32>, tensor<3x3x4x6xi32>, tensor<6xi32>) -> tensor<1x6x6x6xi32>
  return %0 : tensor<1x6x6x6xi32>
}

// -----

func.func @conv_missing_group(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x4x6xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error @+1 {{attribute "group" is expected but not provided}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<3x3x4x6xf32>, tensor<6xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @pool_pad_too_wide(%x: tensor<1x5x5x3xf32>) -> tensor<1x7x7x3xf32> {
  // expected-error @+1 {{pads [2, 2, 2, 2] must be smaller than the dilated window 2x2}}
  %0 = "glowgraph.max_pool"(%x) {kernels = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 1, 1>, ceil_mode = 0} : (tensor<1x5x5x3xf32>) -> tensor<1x7x7x3xf32>
  return %0 : tensor<1x7x7x3xf32>
}

// -----

func.func @pool_flag(%x: tensor<1x5x5x3xf32>) -> tensor<1x4x4x3xf32> {
  // expected-error @+1 {{count_include_pad must be 0 or 1, got 2}}
  %0 = "glowgraph.avg_pool"(%x) {kernels = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 0, count_include_pad = 2} : (tensor<1x5x5x3xf32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

// -----

func.func @pool_ceil_result(%x: tensor<1x5x5x3xf32>) -> tensor<1x2x2x3xf32> {
  // expected-error @+1 {{result type tensor<1x2x2x3xf32> does not match the inferred type tensor<1x3x3x3xf32>}}
  %0 = "glowgraph.max_pool"(%x) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 1} : (tensor<1x5x5x3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

func.func @batch_norm_params(%x: tensor<1x2x2x3xf32>, %p: tensor<3xf32>, %q: tensor<2xf32>) -> tensor<1x2x2x3xf32> {
  // expected-error @+1 {{mean 2 f32 must be 3 f32 (one entry per channel)}}
  %0 = "glowgraph.batch_norm"(%x, %p, %p, %q, %p) {epsilon = 1.0e-5 : f32, channel_axis = 3} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

func.func @batch_norm_axis(%x: tensor<1x2x2x3xf32>, %p: tensor<3xf32>) -> tensor<1x2x2x3xf32> {
  // expected-error @+1 {{channel_axis 4 must name a dim of the input 1x2x2x3 (rank 2 or more)}}
  %0 = "glowgraph.batch_norm"(%x, %p, %p, %p, %p) {epsilon = 1.0e-5 : f32, channel_axis = 4} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

func.func @lrn_size(%x: tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32> {
  // expected-error @+1 {{size 0 must be at least 1}}
  %0 = "glowgraph.local_response_norm"(%x) {size = 0, alpha = 1.0e-4 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

func.func @pad_count(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{pads [1, 1] must hold 2 x 2 entries (begins, then ends)}}
  %0 = "glowgraph.pad"(%x) {pads = array<i64: 1, 1>, value = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @pad_crop_everything(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{pads [0, -4, 0, 2] crop more than the input 2x3 holds}}
  %0 = "glowgraph.pad"(%x) {pads = array<i64: 0, -4, 0, 2>, value = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @pad_value_type(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{value 0 : i64 must be a f32 attribute like the elements it fills}}
  %0 = "glowgraph.pad"(%x) {pads = array<i64: 0, 1, 0, 1>, value = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @clip_integer(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  %0 = "glowgraph.clip"(%x) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// A filter in chunks of input channels [F/B, C/Cc, KH, KW, Cc, B] must cover the input's channels: 2 x 16 is not 64.
func.func @chunked_filter_channels(%x: tensor<1x9x9x64xf32>, %w: tensor<4x2x3x3x16x16xf32>, %b: tensor<64xf32>) -> tensor<1x7x7x64xf32> {
  // expected-error @+1 {{filter 4x2x3x3x16x16 (packed: 32 input channels) must have 64 channels (input channels / group)}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x9x9x64xf32>, tensor<4x2x3x3x16x16xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
  return %0 : tensor<1x7x7x64xf32>
}

// -----

// Packed layouts are for group 1 without dilation only.
func.func @chunked_filter_dilated(%x: tensor<1x9x9x64xf32>, %w: tensor<4x2x3x3x32x16xf32>, %b: tensor<64xf32>) -> tensor<1x5x5x64xf32> {
  // expected-error @+1 {{a packed filter 4x2x3x3x32x16 needs group 1 and no dilation}}
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 2>, group = 1} : (tensor<1x9x9x64xf32>, tensor<4x2x3x3x32x16xf32>, tensor<64xf32>) -> tensor<1x5x5x64xf32>
  return %0 : tensor<1x5x5x64xf32>
}
