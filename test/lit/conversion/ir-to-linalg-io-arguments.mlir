// RUN: glow-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(convert-glowir-to-linalg{io-arguments=true})' | FileCheck %s

// With io-arguments a planned program takes the constantWeight and activations regions, then each input and output
// as a buffer of its own in declaration order (the in-process runtime hands over the caller's arrays): there is no
// mutableWeight region, and only the constants and activations are views at their offsets.
// CHECK-LABEL: func.func @io
// CHECK-SAME:  (%[[CONST:.+]]: memref<64xi8>, %[[ACT:.+]]: memref<64xi8>, %[[X:.+]]: memref<4xf32>, %[[Y:.+]]: memref<2xf32>, %[[F:.+]]: memref<4xi8>)
// CHECK-SAME:  glowir.arguments = ["constantWeight", "activations", "x", "y", "flag"]
// CHECK:       %[[B:.+]] = memref.view %[[CONST]][%{{.+}}][] : memref<64xi8> to memref<4xf32>
// CHECK:       %[[A:.+]] = memref.view %[[ACT]][%{{.+}}][] : memref<64xi8> to memref<4xf32>
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[X]], %[[B]] : memref<4xf32>, memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK:       linalg.fill {{.+}} outs(%[[F]] : memref<4xi8>)
// CHECK:       linalg.copy {{.+}} outs(%[[Y]] : memref<2xf32>)
// CHECK-NOT:   memref.alloc
// CHECK:       return
func.func @io() attributes {glowir.activations_size = 64 : i64, glowir.constant_weights_size = 64 : i64, glowir.inputs = ["x"], glowir.mutable_weights_size = 192 : i64, glowir.outputs = ["y", "flag"]} {
  %b = "glowir.weight_var"() {mutability = "const", name = "b", offset = 0 : i64, value = dense<1.0> : tensor<4xf32>} : () -> memref<4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x", offset = 0 : i64} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y", offset = 64 : i64} : () -> memref<2xf32>
  %f = "glowir.weight_var"() {mutability = "mutable", name = "flag", offset = 128 : i64} : () -> memref<4xi1>
  %a = "glowir.alloc_activation"() {name = "a", offset = 0 : i64} : () -> memref<4xf32>
  "glowir.element_add"(%a, %x, %b) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.splat"(%f) {value = true} : (memref<4xi1>) -> ()
  %v = "glowir.tensor_view"(%a) : (memref<4xf32>) -> memref<2xf32>
  "glowir.copy"(%y, %v) : (memref<2xf32>, memref<2xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// A program that is not planned keeps its own form: one argument per weight var, consts included.
// CHECK-LABEL: func.func @not_planned
// CHECK-SAME:  (%{{.+}}: memref<4xf32>, %{{.+}}: memref<4xf32>, %{{.+}}: memref<4xf32>)
// CHECK-SAME:  glowir.arguments = ["b", "x", "y"]
func.func @not_planned() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<4xf32>} : () -> memref<4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  "glowir.element_add"(%y, %x, %b) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// The caller's input arrays are handed over as they are: a program that writes an input is refused, naming it.
func.func @writes_input() attributes {glowir.activations_size = 0 : i64, glowir.constant_weights_size = 0 : i64, glowir.inputs = ["x"], glowir.mutable_weights_size = 128 : i64, glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x", offset = 0 : i64} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y", offset = 64 : i64} : () -> memref<4xf32>
  // expected-error @below {{glowir program @writes_input writes its input 'x' ('glowir.relu'): inputs are read-only, so that they can be the caller's buffers}}
  "glowir.relu"(%x, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.copy"(%y, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}
