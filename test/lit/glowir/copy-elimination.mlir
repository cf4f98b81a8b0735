// RUN: glow-opt %s --split-input-file --glowir-copy-elimination | FileCheck %s

// Forward: a dies at the copy, so its producer writes the output directly; a's alloc and dealloc go.
// CHECK-LABEL: func.func @forward
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK-NEXT:  %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NEXT:  "glowir.relu"(%[[Y]], %[[X]])
// CHECK-NEXT:  return
func.func @forward() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.copy"(%y, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// Forward through a reshape: the copy reads a view of a, so a is stored in the output under a's own shape.
// CHECK-LABEL: func.func @forward_view
// CHECK:       %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<12xf32>
// CHECK-NEXT:  %[[V:.+]] = "glowir.tensor_view"(%[[Y]]) : (memref<12xf32>) -> memref<2x6xf32>
// CHECK-NEXT:  "glowir.relu"(%[[V]], %{{[0-9]+}})
// CHECK-NEXT:  return
func.func @forward_view() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x6xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<12xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<2x6xf32>
  "glowir.relu"(%a, %x) : (memref<2x6xf32>, memref<2x6xf32>) -> ()
  %v = "glowir.tensor_view"(%a) : (memref<2x6xf32>) -> memref<12xf32>
  "glowir.copy"(%y, %v) : (memref<12xf32>, memref<12xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<2x6xf32>) -> ()
  return
}

// -----

// Backward: b is born at the copy and only read after it, and x never changes: b's readers read x.
// The same holds for a constant source.
// CHECK-LABEL: func.func @backward
// CHECK:       %[[W:.+]] = "glowir.weight_var"() {mutability = "const", name = "w"
// CHECK-NEXT:  %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK-NEXT:  %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NEXT:  %[[Z:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "z"}
// CHECK-NEXT:  "glowir.tanh"(%[[Y]], %[[X]])
// CHECK-NEXT:  "glowir.element_add"(%[[Z]], %[[X]], %[[W]])
// CHECK-NEXT:  return
func.func @backward() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<2.0> : tensor<4xf32>} : () -> memref<4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4xf32>
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.copy"(%b, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  %c = "glowir.alloc_activation"() {name = "c"} : () -> memref<4xf32>
  "glowir.copy"(%c, %w) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%y, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_add"(%z, %b, %c) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%c) : (memref<4xf32>) -> ()
  return
}

// -----

// Between two activations: a dies at the copy, so its producer writes b, which lives on (written in place
// included); the merged buffer is freed where b was.
// CHECK-LABEL: func.func @activations
// CHECK:       %[[A:.+]] = "glowir.alloc_activation"() {name = "b"}
// CHECK-NEXT:  "glowir.relu"(%[[A]], %{{[0-9]+}})
// CHECK-NEXT:  "glowir.tanh"(%[[A]], %[[A]])
// CHECK-NEXT:  "glowir.sigmoid"(%{{[0-9]+}}, %[[A]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[A]])
// CHECK-NEXT:  return
func.func @activations() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.copy"(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  "glowir.tanh"(%b, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.sigmoid"(%y, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: the output is read while a lives (z = sigmoid(y) between a's producer and the copy): the producer of a
// must not write y early. Negative: an output that is an input is copied (inputs are read-only).
// CHECK-LABEL: func.func @output_busy
// CHECK:       "glowir.tanh"(%[[A:[0-9]+]], %{{[0-9]+}})
// CHECK-NEXT:  "glowir.sigmoid"
// CHECK-NEXT:  "glowir.copy"(%{{[0-9]+}}, %[[A]])
// CHECK:       "glowir.copy"
func.func @output_busy() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z", "w"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4xf32>
  %w = "glowir.weight_var"() {mutability = "mutable", name = "w"} : () -> memref<4xf32>
  "glowir.relu"(%y, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.tanh"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.sigmoid"(%z, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.copy"(%y, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  "glowir.copy"(%w, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// Negative: the source is written (in place) while the copy is still read, and read after: both must stay.
// CHECK-LABEL: func.func @source_changes
// CHECK:       "glowir.copy"(%[[A:[0-9]+]], %[[B:[0-9]+]])
// CHECK-NEXT:  "glowir.tanh"(%[[B]], %[[B]])
// CHECK-NEXT:  "glowir.element_add"(%{{[0-9]+}}, %[[A]], %[[B]])
func.func @source_changes() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.relu"(%b, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.copy"(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%b, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_add"(%y, %a, %b) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  return
}
