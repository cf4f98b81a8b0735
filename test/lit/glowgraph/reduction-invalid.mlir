// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @axes_empty(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axes must not be empty}}
  %0 = "glowgraph.reduce_sum"(%x) {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @axes_unsorted(%x: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error @+1 {{axes [1, 0] must be strictly increasing}}
  %0 = "glowgraph.reduce_max"(%x) {axes = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @axes_repeated(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{axes [1, 1] must be strictly increasing}}
  %0 = "glowgraph.reduce_min"(%x) {axes = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2 (0 <= axis < 2)}}
  %0 = "glowgraph.reduce_prod"(%x) {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @negative_axis(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{axis -1 is out of range for rank 2 (0 <= axis < 2)}}
  %0 = "glowgraph.reduce_sum"(%x) {axes = array<i64: -1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduced_shape(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result type tensor<3xf32> does not match the inferred type tensor<2xf32>}}
  %0 = "glowgraph.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @bool_sum(%x: tensor<2x3xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{operand #0 must have a numeric element type, got i1}}
  %0 = "glowgraph.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x3xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @integer_mean(%x: tensor<2x3xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  %0 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 1>} : (tensor<2x3xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @integer_l2(%x: tensor<2x3xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  %0 = "glowgraph.reduce_l2"(%x) {axes = array<i64: 1>} : (tensor<2x3xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @reduce_without_axes(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{attribute "axes" is expected but not provided}}
  %0 = "glowgraph.reduce_sum"(%x) : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2 (0 <= axis < 2)}}
  %0 = "glowgraph.softmax"(%x) {axis = 2} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @log_softmax_integer(%x: tensor<2x3xi64>) -> tensor<2x3xi64> {
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  %0 = "glowgraph.log_softmax"(%x) {axis = 1} : (tensor<2x3xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

func.func @softmax_result_type(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{result type tensor<3x2xf32> does not match the inferred type tensor<2x3xf32>}}
  %0 = "glowgraph.softmax"(%x) {axis = 1} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{scale 4 f32 must be 3x4 f32: the input's dims from axis 1 on}}
  %0 = "glowgraph.layer_norm"(%x, %g, %b) {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @layer_norm_bias_type(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf64>) -> tensor<2x4xf32> {
  // expected-error @+1 {{bias 4 f64 must be 4 f32: the input's dims from axis 1 on}}
  %0 = "glowgraph.layer_norm"(%x, %g, %b) {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @layer_norm_epsilon_kind(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{expected base attribute 'builtin.float' but got 'builtin.integer'}}
  %0 = "glowgraph.layer_norm"(%x, %g, %g) {axis = 1, epsilon = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @batch_matmul_rank(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{lhs must have rank 3, got 3x4}}
  %0 = "glowgraph.batch_matmul"(%a, %b) : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @batch_matmul_batches(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{batch and inner dimensions and element types must agree: lhs 2x3x4 f32, rhs 3x4x5 f32}}
  %0 = "glowgraph.batch_matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

func.func @batch_matmul_inner(%a: tensor<2x3x4xf32>, %b: tensor<2x5x5xf32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{batch and inner dimensions and element types must agree: lhs 2x3x4 f32, rhs 2x5x5 f32}}
  %0 = "glowgraph.batch_matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<2x5x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

func.func @arg_max_result_type(%x: tensor<2x3xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{result type tensor<2xi32> does not match the inferred type tensor<2xi64>}}
  %0 = "glowgraph.arg_max"(%x) {axis = 1, select_last = 0} : (tensor<2x3xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @arg_max_select_last(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{select_last must be 0 or 1, got 2}}
  %0 = "glowgraph.arg_max"(%x) {axis = 1, select_last = 2} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @arg_max_axis(%x: tensor<2x3xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{axis -1 is out of range for rank 2 (0 <= axis < 2)}}
  %0 = "glowgraph.arg_max"(%x) {axis = -1, select_last = 0} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}
