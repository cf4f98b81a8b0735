// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @compare_writes_bool() {
  %a = "glowir.alloc_activation"() : () -> memref<4xf32>
  // expected-error @+1 {{@out buffer memref<4xf32> does not match the type memref<4xi1> computed from the @in operands}}
  "glowir.element_cmp_lt"(%a, %a, %a) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

func.func @exp_of_integers() {
  %a = "glowir.alloc_activation"() : () -> memref<4xi64>
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  "glowir.exp"(%a, %a) : (memref<4xi64>, memref<4xi64>) -> ()
  return
}

// -----

func.func @float_mod_needs_fmod() {
  %a = "glowir.alloc_activation"() : () -> memref<4xf32>
  // expected-error @+1 {{fmod 0 needs integer operands, got f32}}
  "glowir.element_mod"(%a, %a, %a) {fmod = 0} : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

func.func @select_condition_not_bool() {
  %a = "glowir.alloc_activation"() : () -> memref<4xf32>
  // expected-error @+1 {{operand #0 must have element type i1, got f32}}
  "glowir.element_select"(%a, %a, %a, %a) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

func.func @cast_dest_differs_from_to() {
  %a = "glowir.alloc_activation"() : () -> memref<4xf32>
  %d = "glowir.alloc_activation"() : () -> memref<4xi32>
  // expected-error @+1 {{@out buffer memref<4xi32> does not match the type memref<4xi64> computed from the @in operands}}
  "glowir.cast"(%d, %a) {to = i64} : (memref<4xi32>, memref<4xf32>) -> ()
  return
}

// -----

func.func @not_of_floats() {
  %a = "glowir.alloc_activation"() : () -> memref<4xf32>
  // expected-error @+1 {{operand #0 must have an integer element type, got f32}}
  "glowir.not"(%a, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

func.func @round_of_integers() {
  %a = "glowir.alloc_activation"() : () -> memref<4xi64>
  // expected-error @+1 {{must have a float element type, got i64}}
  "glowir.round"(%a, %a) : (memref<4xi64>, memref<4xi64>) -> ()
  return
}

// -----

func.func @shift_of_floats() {
  %a = "glowir.alloc_activation"() : () -> memref<4xf32>
  // expected-error @+1 {{operands must have element type i32 or i64, got f32}}
  "glowir.element_shift_right"(%a, %a, %a) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  return
}
