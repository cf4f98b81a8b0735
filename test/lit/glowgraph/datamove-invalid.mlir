// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = "glowgraph.concat"(%a, %b) {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{shapes 2x3 and 3x3 differ on another dimension than axis 1}}
  %0 = "glowgraph.concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_element_types(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{operands have element types f32 and i32}}
  %0 = "glowgraph.concat"(%a, %b) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @concat_result(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result type tensor<4xf32> does not match the inferred type tensor<5xf32>}}
  %0 = "glowgraph.concat"(%a, %b) {axis = 0 : i64} : (tensor<2xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Data movement carries f32, i64, i32 and i1 only.
func.func @unsupported_element_type(%a: tensor<2xf64>) -> tensor<1xf64> {
  // expected-error @+1 {{operand #0 has element type f64; data movement takes f32, i64, i32, i1}}
  %0 = "glowgraph.slice"(%a) {starts = array<i64: 0>, sizes = array<i64: 1>} : (tensor<2xf64>) -> tensor<1xf64>
  return %0 : tensor<1xf64>
}

// -----

func.func @slice_past_the_end(%a: tensor<4x6xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{dimension 1: 3 elements from 4 by steps of 1 leave 0..5}}
  %0 = "glowgraph.slice"(%a) {starts = array<i64: 0, 4>, sizes = array<i64: 2, 3>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_backwards_past_the_start(%a: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{dimension 0: 3 elements from 2 by steps of -2 leave 0..3}}
  %0 = "glowgraph.slice"(%a) {starts = array<i64: 2>, sizes = array<i64: 3>, steps = array<i64: -2>} : (tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @slice_zero_step(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dimension 0: the step is 0}}
  %0 = "glowgraph.slice"(%a) {starts = array<i64: 0>, sizes = array<i64: 2>, steps = array<i64: 0>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_rank(%a: tensor<4x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{starts [0] must have one entry per dimension (2)}}
  %0 = "glowgraph.slice"(%a) {starts = array<i64: 0>, sizes = array<i64: 2>} : (tensor<4x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_missing_sizes(%a: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{attribute "sizes" is expected but not provided}}
  %0 = "glowgraph.slice"(%a) {starts = array<i64: 0>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @gather_float_indices(%d: tensor<5x4xf32>, %i: tensor<2xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{indices must be i32 or i64, got f32}}
  %0 = "glowgraph.gather"(%d, %i) {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @gather_axis(%d: tensor<5x4xf32>, %i: tensor<2xi64>) -> tensor<2x4xf32> {
  // expected-error @+1 {{axis -1 is out of range for rank 2}}
  %0 = "glowgraph.gather"(%d, %i) {axis = -1 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @gather_result(%d: tensor<5x4xf32>, %i: tensor<2x3xi64>) -> tensor<6x4xf32> {
  // expected-error @+1 {{result type tensor<6x4xf32> does not match the inferred type tensor<2x3x4xf32>}}
  %0 = "glowgraph.gather"(%d, %i) {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

func.func @scatter_nd_updates(%d: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{updates 2x4 f32 must be 2x3 f32: the indices' dims but the last, then the data's dims from 1 on}}
  %0 = "glowgraph.scatter_nd"(%d, %i, %u) {reduction = "none"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_too_many_index_entries(%d: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{indices 2x3 must have rank 1 or more and a last dim of at most the data's rank 2}}
  %0 = "glowgraph.scatter_nd"(%d, %i, %u) {reduction = "none"} : (tensor<4x3xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_nd_reduction(%d: tensor<4xf32>, %i: tensor<1x1xi64>, %u: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduction must be one of none, add, mul, max, min, got 'sum'}}
  %0 = "glowgraph.scatter_nd"(%d, %i, %u) {reduction = "sum"} : (tensor<4xf32>, tensor<1x1xi64>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @scatter_nd_bool_add(%d: tensor<4xi1>, %i: tensor<1x1xi64>, %u: tensor<1xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{reduction 'add' needs numeric data, got i1}}
  %0 = "glowgraph.scatter_nd"(%d, %i, %u) {reduction = "add"} : (tensor<4xi1>, tensor<1x1xi64>, tensor<1xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
