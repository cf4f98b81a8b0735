// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @operand_types_differ(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expects different type than prior uses}}
  %0 = "glowgraph.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @wrong_result_type(%a: tensor<3x10xf32>, %w: tensor<10x5xf32>) -> tensor<3x6xf32> {
  // expected-error @+1 {{result type tensor<3x6xf32> does not match the inferred type tensor<3x5xf32>}}
  %0 = "glowgraph.matmul"(%a, %w) : (tensor<3x10xf32>, tensor<10x5xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @inner_dims(%a: tensor<3x10xf32>, %w: tensor<9x5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{inner dimensions differ: lhs 3x10, rhs 9x5}}
  %0 = "glowgraph.matmul"(%a, %w) : (tensor<3x10xf32>, tensor<9x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @float_only(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  %0 = "glowgraph.sigmoid"(%a) : (tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @bad_reshape(%a: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{cannot reshape 2x3 into 7: element counts differ}}
  %0 = "glowgraph.reshape"(%a) {shape = array<i64: 7>} : (tensor<2x3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @bad_permutation(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{shuffle [0, 0] is not a permutation of the 2 dimensions}}
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @missing_attribute(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{attribute "shuffle" is expected but not provided}}
  %0 = "glowgraph.transpose"(%a) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @bad_broadcast(%a: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{cannot broadcast 3 to 2x4}}
  %0 = "glowgraph.broadcast"(%a) {shape = array<i64: 2, 4>} : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @memref_operand(%a: memref<2xf32>) {
  // expected-error @+1 {{expected base type 'builtin.tensor' but got 'builtin.memref'}}
  %0 = "glowgraph.relu"(%a) : (memref<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @fc_bias(%x: tensor<3x10xf32>, %w: tensor<10x5xf32>, %b: tensor<4xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{shapes do not agree: input 3x10, weights 10x5, bias 4}}
  %0 = "glowgraph.fully_connected"(%x, %w, %b) : (tensor<3x10xf32>, tensor<10x5xf32>, tensor<4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
