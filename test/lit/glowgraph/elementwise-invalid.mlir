// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @exp_of_integers(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  %0 = "glowgraph.exp"(%a) : (tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @neg_of_booleans(%a: tensor<2xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{operand #0 must have a numeric element type, got i1}}
  %0 = "glowgraph.neg"(%a) : (tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @pow_of_integers(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  %0 = "glowgraph.pow"(%a, %a) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @pow_operand_types_differ(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expected 'tensor<2xf32>' but got 'tensor<3xf32>'}}
  %0 = "glowgraph.pow"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @mod_bad_fmod(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{fmod must be 0 or 1, got 2}}
  %0 = "glowgraph.mod"(%a, %a) {fmod = 2} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @float_mod_needs_fmod(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{fmod 0 needs integer operands, got f32}}
  %0 = "glowgraph.mod"(%a, %a) {fmod = 0} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @mod_without_fmod(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{attribute "fmod" is expected but not provided}}
  %0 = "glowgraph.mod"(%a, %a) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @compare_result_not_bool(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{result type tensor<2xf32> does not match the inferred type tensor<2xi1>}}
  %0 = "glowgraph.cmp_eq"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @compare_types_differ(%a: tensor<2xf32>, %b: tensor<2xi64>) -> tensor<2xi1> {
  // expected-error @+1 {{expected 'tensor<2xf32>' but got 'tensor<2xi64>'}}
  %0 = "glowgraph.cmp_lt"(%a, %b) : (tensor<2xf32>, tensor<2xi64>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @ordering_of_booleans(%a: tensor<2xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{operand #0 must have a numeric element type, got i1}}
  %0 = "glowgraph.cmp_lte"(%a, %a) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @not_of_floats(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operand #0 must have an integer element type, got f32}}
  %0 = "glowgraph.not"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @and_of_floats(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operands must have an integer element type, got f32}}
  %0 = "glowgraph.and"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @select_float_condition(%c: tensor<2xf32>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operand #0 must have element type i1, got f32}}
  %0 = "glowgraph.select"(%c, %a, %a) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @select_condition_shape(%c: tensor<3xi1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{cond 3 must have the shape of the values 2}}
  %0 = "glowgraph.select"(%c, %a, %a) : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @cast_to_i4(%a: tensor<2xf32>) -> tensor<2xi4> {
  // expected-error @+1 {{target element type i4 is not one of f32, i32, i64, i1, f64, f16, bf16, i16, i8, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ}}
  %0 = "glowgraph.cast"(%a) {to = i4} : (tensor<2xf32>) -> tensor<2xi4>
  return %0 : tensor<2xi4>
}

// -----

func.func @cast_from_f8(%a: tensor<2xf8E3M4>) -> tensor<2xf32> {
  // expected-error @+1 {{operand element type f8E3M4 is not one of f32, i32, i64, i1, f64, f16, bf16, i16, i8, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ}}
  %0 = "glowgraph.cast"(%a) {to = f32} : (tensor<2xf8E3M4>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @cast_result_differs(%a: tensor<2xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{result type tensor<2xi32> does not match the inferred type tensor<2xi64>}}
  %0 = "glowgraph.cast"(%a) {to = i64} : (tensor<2xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @leaky_relu_of_integers(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  %0 = "glowgraph.leaky_relu"(%a) {alpha = 0.1 : f32} : (tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @leaky_relu_integer_alpha(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{expected base attribute 'builtin.float' but got 'builtin.integer'}}
  %0 = "glowgraph.leaky_relu"(%a) {alpha = 1 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @prelu_of_booleans(%a: tensor<2xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{operand #0 must have a numeric element type, got i1}}
  %0 = "glowgraph.prelu"(%a, %a) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @hard_sigmoid_without_beta(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{attribute "beta" is expected but not provided}}
  %0 = "glowgraph.hard_sigmoid"(%a) {alpha = 0.2 : f32} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @gelu_bad_approximation(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{approximate must be 'none' or 'tanh', got 'fast'}}
  %0 = "glowgraph.gelu"(%a) {approximate = "fast"} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @sin_of_integers(%a: tensor<2xi64>) -> tensor<2xi64> {
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  %0 = "glowgraph.sin"(%a) : (tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @shift_of_floats(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operands must have element type i32 or i64, got f32}}
  %0 = "glowgraph.shift_left"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @shift_of_mixed_types(%a: tensor<2xi64>, %b: tensor<2xi32>) -> tensor<2xi64> {
  // expected-error @+1 {{expected 'tensor<2xi64>' but got 'tensor<2xi32>'}}
  %0 = "glowgraph.shift_right"(%a, %b) : (tensor<2xi64>, tensor<2xi32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @xor_of_floats(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operands must have an integer element type, got f32}}
  %0 = "glowgraph.xor"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @xor_of_two_widths(%a: tensor<2xi32>, %b: tensor<2xi64>) -> tensor<2xi32> {
  // expected-error @+1 {{}}
  %0 = "glowgraph.xor"(%a, %b) : (tensor<2xi32>, tensor<2xi64>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @bitcast_of_another_width(%a: tensor<2xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{operand element type f32 and target i64 must have one width (32 and 64 bits)}}
  %0 = "glowgraph.bitcast"(%a) {to = i64} : (tensor<2xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @bitcast_of_bool(%a: tensor<2xi1>) -> tensor<2xi8> {
  // expected-error @+1 {{operand element type i1 is not one of f32, i32, f64, i64, f16, bf16, i16, i8, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ}}
  %0 = "glowgraph.bitcast"(%a) {to = i8} : (tensor<2xi1>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}
