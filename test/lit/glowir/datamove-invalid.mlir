// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @extract_past_the_end() {
  %x = "glowir.alloc_activation"() : () -> memref<4x6xf32>
  %d = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  // expected-error @+1 {{dimension 0: 2 elements from 3 by steps of 1 leave 0..3}}
  "glowir.extract_tensor"(%d, %x) {offsets = array<i64: 3, 0>} : (memref<2x3xf32>, memref<4x6xf32>) -> ()
  return
}

// -----

func.func @extract_element_type() {
  %x = "glowir.alloc_activation"() : () -> memref<4xi32>
  %d = "glowir.alloc_activation"() : () -> memref<2xf32>
  // expected-error @+1 {{dest element type f32 differs from the source's i32}}
  "glowir.extract_tensor"(%d, %x) {offsets = array<i64: 0>} : (memref<2xf32>, memref<4xi32>) -> ()
  return
}

// -----

func.func @insert_past_the_end() {
  %x = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  %d = "glowir.alloc_activation"() : () -> memref<4x4xf32>
  // expected-error @+1 {{dimension 1: 3 elements from 2 by steps of 1 leave 0..3}}
  "glowir.insert_tensor"(%d, %x) {offsets = array<i64: 0, 2>} : (memref<4x4xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

func.func @insert_rank() {
  %x = "glowir.alloc_activation"() : () -> memref<6xf32>
  %d = "glowir.alloc_activation"() : () -> memref<4x4xf32>
  // expected-error @+1 {{source 6 and dest 4x4 have different ranks}}
  "glowir.insert_tensor"(%d, %x) {offsets = array<i64: 0, 0>} : (memref<4x4xf32>, memref<6xf32>) -> ()
  return
}

// -----

func.func @insert_missing_offsets() {
  %x = "glowir.alloc_activation"() : () -> memref<2xf32>
  %d = "glowir.alloc_activation"() : () -> memref<4xf32>
  // expected-error @+1 {{attribute "offsets" is expected but not provided}}
  "glowir.insert_tensor"(%d, %x) : (memref<4xf32>, memref<2xf32>) -> ()
  return
}

// -----

func.func @gather_out_shape() {
  %x = "glowir.alloc_activation"() : () -> memref<4x6xf32>
  %i = "glowir.alloc_activation"() : () -> memref<2xi64>
  %d = "glowir.alloc_activation"() : () -> memref<2x4xf32>
  // expected-error @+1 {{@out buffer memref<2x4xf32> does not match the type memref<2x6xf32> computed from the @in operands}}
  "glowir.gather"(%d, %x, %i) {axis = 0 : i64} : (memref<2x4xf32>, memref<4x6xf32>, memref<2xi64>) -> ()
  return
}

// -----

func.func @scatter_nd_out_shape() {
  %x = "glowir.alloc_activation"() : () -> memref<4x6xf32>
  %i = "glowir.alloc_activation"() : () -> memref<2x1xi64>
  %u = "glowir.alloc_activation"() : () -> memref<2x6xf32>
  %d = "glowir.alloc_activation"() : () -> memref<4x5xf32>
  // expected-error @+1 {{@out buffer memref<4x5xf32> does not match the type memref<4x6xf32> computed from the @in operands}}
  "glowir.scatter_nd"(%d, %x, %i, %u) {reduction = "add"} : (memref<4x5xf32>, memref<4x6xf32>, memref<2x1xi64>, memref<2x6xf32>) -> ()
  return
}
