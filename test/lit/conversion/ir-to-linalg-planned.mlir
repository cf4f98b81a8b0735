// RUN: glow-opt %s --split-input-file --verify-diagnostics --convert-glowir-to-linalg | FileCheck %s

// A planned program takes Glow's three regions; every weight var and activation is a view of its region at its
// offset, and deallocs vanish (the plan already reuses the memory). Booleans are stored as bytes.
// CHECK-LABEL: func.func @planned
// CHECK-SAME:  (%[[CONST:.+]]: memref<80xi8>, %[[MUT:.+]]: memref<132xi8>, %[[ACT:.+]]: memref<128xi8>)
// CHECK-SAME:  glowir.arguments = ["constantWeight", "mutableWeight", "activations"]
// CHECK:       %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:  %[[W:.+]] = memref.view %[[CONST]][%[[C0]]][] : memref<80xi8> to memref<10xf32>
// CHECK-NEXT:  %[[C64:.+]] = arith.constant 64 : index
// CHECK-NEXT:  %[[B:.+]] = memref.view %[[CONST]][%[[C64]]][] : memref<80xi8> to memref<4xf32>
// CHECK:       %[[X:.+]] = memref.view %[[MUT]][%{{.+}}][] : memref<132xi8> to memref<4xf32>
// CHECK:       %[[F:.+]] = memref.view %[[MUT]][%{{.+}}][] : memref<132xi8> to memref<4xi8>
// CHECK:       %[[A:.+]] = memref.view %[[ACT]][%{{.+}}][] : memref<128xi8> to memref<4xf32>
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[X]], %[[B]] : memref<4xf32>, memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK:       %[[T:.+]] = memref.view %[[ACT]][%{{.+}}][] : memref<128xi8> to memref<4xi8>
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   memref.dealloc
// CHECK:       return
func.func @planned() attributes {glowir.activations_size = 128 : i64, glowir.constant_weights_size = 80 : i64, glowir.inputs = ["x"], glowir.mutable_weights_size = 132 : i64, glowir.outputs = ["y", "flag"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", offset = 0 : i64, value = dense<1.0> : tensor<10xf32>} : () -> memref<10xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", offset = 64 : i64, value = dense<1.0> : tensor<4xf32>} : () -> memref<4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x", offset = 0 : i64} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y", offset = 64 : i64} : () -> memref<2xf32>
  %f = "glowir.weight_var"() {mutability = "mutable", name = "flag", offset = 128 : i64} : () -> memref<4xi1>
  %a = "glowir.alloc_activation"() {name = "a", offset = 0 : i64} : () -> memref<4xf32>
  "glowir.element_add"(%a, %x, %b) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  %t = "glowir.alloc_activation"() {name = "t", offset = 64 : i64} : () -> memref<4xi1>
  "glowir.splat"(%t) {value = true} : (memref<4xi1>) -> ()
  "glowir.copy"(%f, %t) : (memref<4xi1>, memref<4xi1>) -> ()
  "glowir.dealloc_activation"(%t) : (memref<4xi1>) -> ()
  %v = "glowir.tensor_view"(%a) : (memref<4xf32>) -> memref<2xf32>
  "glowir.copy"(%y, %v) : (memref<2xf32>, memref<2xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// Scratch buffers of a planned program are views of the activations region at the instruction's scratch_offsets:
// nothing comes from the heap.
// CHECK-LABEL: func.func @planned_scratch
// CHECK-SAME:  (%{{.+}}: memref<0xi8>, %{{.+}}: memref<128xi8>, %[[ACT:.+]]: memref<64xi8>)
// CHECK:       %[[STAT:.+]] = memref.view %[[ACT]][%{{.+}}][] : memref<64xi8> to memref<2xf32>
// CHECK:       linalg.generic {{.+}} outs(%[[STAT]] : memref<2xf32>)
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   memref.dealloc
// CHECK:       return
func.func @planned_scratch() attributes {glowir.activations_size = 64 : i64, glowir.constant_weights_size = 0 : i64, glowir.inputs = ["x"], glowir.mutable_weights_size = 128 : i64, glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x", offset = 0 : i64} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y", offset = 64 : i64} : () -> memref<2x3xf32>
  "glowir.softmax"(%y, %x) {axis = 1 : i64, scratch_offsets = array<i64: 0>} : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

func.func @scratch_not_planned() attributes {glowir.activations_size = 64 : i64, glowir.constant_weights_size = 0 : i64, glowir.inputs = ["x"], glowir.mutable_weights_size = 128 : i64, glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x", offset = 0 : i64} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y", offset = 64 : i64} : () -> memref<2x3xf32>
  // expected-error @below {{'glowir.softmax' takes 1 scratch buffer(s) but its 'scratch_offsets' gives 0 offset(s) although the function's memory is planned}}
  "glowir.softmax"(%y, %x) {axis = 1 : i64} : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

func.func @scratch_outside() attributes {glowir.activations_size = 64 : i64, glowir.constant_weights_size = 0 : i64, glowir.inputs = ["x"], glowir.mutable_weights_size = 128 : i64, glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x", offset = 0 : i64} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y", offset = 64 : i64} : () -> memref<2x3xf32>
  // expected-error @below {{'glowir.softmax' has a scratch buffer at offset 64 that does not fit the 64-byte activations region}}
  "glowir.softmax"(%y, %x) {axis = 1 : i64, scratch_offsets = array<i64: 64>} : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

func.func @missing_offset() attributes {glowir.activations_size = 64 : i64, glowir.constant_weights_size = 0 : i64, glowir.inputs = [], glowir.mutable_weights_size = 0 : i64, glowir.outputs = []} {
  // expected-error @below {{'glowir.alloc_activation' has no 'offset' although the function's memory is planned}}
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.splat"(%a) {value = 1.0 : f32} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @past_the_region() attributes {glowir.activations_size = 64 : i64, glowir.constant_weights_size = 0 : i64, glowir.inputs = [], glowir.mutable_weights_size = 0 : i64, glowir.outputs = []} {
  // expected-error @below {{'glowir.alloc_activation' at offset 64 does not fit the 64-byte activations region at a 64-byte aligned offset}}
  %a = "glowir.alloc_activation"() {name = "a", offset = 64 : i64} : () -> memref<4xf32>
  "glowir.splat"(%a) {value = 1.0 : f32} : (memref<4xf32>) -> ()
  return
}

// -----

func.func @misaligned() attributes {glowir.activations_size = 64 : i64, glowir.constant_weights_size = 0 : i64, glowir.inputs = [], glowir.mutable_weights_size = 0 : i64, glowir.outputs = []} {
  // expected-error @below {{'glowir.alloc_activation' at offset 4 does not fit the 64-byte activations region at a 64-byte aligned offset}}
  %a = "glowir.alloc_activation"() {name = "a", offset = 4 : i64} : () -> memref<4xf32>
  "glowir.splat"(%a) {value = 1.0 : f32} : (memref<4xf32>) -> ()
  return
}

// -----

// expected-error @below {{glowir program @half_planned gives some region sizes but not all}}
func.func @half_planned() attributes {glowir.activations_size = 64 : i64, glowir.inputs = [], glowir.outputs = []} {
  return
}
