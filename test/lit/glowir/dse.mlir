// RUN: glow-opt %s --split-input-file --glowir-dse | FileCheck %s

// A store nothing reads goes, and so does the store only it read (one sweep, last first).
// CHECK-LABEL: func.func @never_read
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK-NEXT:  %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NEXT:  %[[A:.+]] = "glowir.alloc_activation"() {name = "a"}
// CHECK-NEXT:  %[[B:.+]] = "glowir.alloc_activation"() {name = "b"}
// CHECK-NEXT:  "glowir.sigmoid"(%[[Y]], %[[X]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[A]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[B]])
// CHECK-NEXT:  return
func.func @never_read() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.sigmoid"(%y, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  return
}

// -----

// A store overwritten whole before any read goes, even into an output.
// CHECK-LABEL: func.func @overwritten
// CHECK-NOT:   value = 1.000000e+00
// CHECK:       "glowir.splat"(%{{.+}}) {value = 2.000000e+00 : f32}
// CHECK-NEXT:  return
func.func @overwritten() attributes {glowir.inputs = [], glowir.outputs = ["y"]} {
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  "glowir.splat"(%y) {value = 1.0 : f32} : (memref<4xf32>) -> ()
  "glowir.splat"(%y) {value = 2.0 : f32} : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: a write into an output stays although nothing reads it here; its value leaves the program.
// Negative: an instruction that reads the buffer it overwrites keeps the store before it.
// CHECK-LABEL: func.func @kept
// CHECK:       "glowir.splat"(%[[A:[0-9]+]]) {value = 1.000000e+00 : f32}
// CHECK-NEXT:  "glowir.relu"(%[[A]], %[[A]])
// CHECK-NEXT:  "glowir.copy"(%{{[0-9]+}}, %[[A]])
func.func @kept() attributes {glowir.inputs = [], glowir.outputs = ["y"]} {
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.splat"(%a) {value = 1.0 : f32} : (memref<4xf32>) -> ()
  "glowir.relu"(%a, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.copy"(%y, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: an overwrite of half the buffer (through a view) does not kill the store of the whole buffer.
// CHECK-LABEL: func.func @partial_overwrite
// CHECK:       %[[A:.+]] = "glowir.alloc_activation"() {name = "a"}
// CHECK-NEXT:  "glowir.splat"(%[[A]]) {value = 1.000000e+00 : f32}
// CHECK:       "glowir.splat"(%{{.+}}) {value = 2.000000e+00 : f32}
// CHECK-NEXT:  "glowir.copy"
func.func @partial_overwrite() attributes {glowir.inputs = [], glowir.outputs = ["y"]} {
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<2x4xf32>
  "glowir.splat"(%a) {value = 1.0 : f32} : (memref<2x4xf32>) -> ()
  %hi = "glowir.tensor_view"(%a) {offsets = array<i64: 1, 0>} : (memref<2x4xf32>) -> memref<4xf32>
  "glowir.splat"(%hi) {value = 2.0 : f32} : (memref<4xf32>) -> ()
  "glowir.copy"(%y, %a) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<2x4xf32>) -> ()
  return
}

// -----

// Negative: a read through a view of the same range keeps the store.
// CHECK-LABEL: func.func @read_through_view
// CHECK:       "glowir.relu"
// CHECK-NEXT:  %[[V:.+]] = "glowir.tensor_view"
// CHECK-NEXT:  "glowir.tanh"(%{{.+}}, %[[V]])
func.func @read_through_view() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<6xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<2x3xf32>
  "glowir.relu"(%a, %x) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  %v = "glowir.tensor_view"(%a) : (memref<2x3xf32>) -> memref<6xf32>
  "glowir.tanh"(%y, %v) : (memref<6xf32>, memref<6xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<2x3xf32>) -> ()
  return
}
