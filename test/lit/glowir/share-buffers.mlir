// RUN: glow-opt %s --split-input-file --glowir-share-buffers | FileCheck %s

// A chain of elementwise ops runs in one buffer: each intermediate dies where the next op reads it; the last one
// writes the output, which nothing touches meanwhile, so the whole chain runs in the output.
// CHECK-LABEL: func.func @chain
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK-NEXT:  %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NEXT:  "glowir.relu"(%[[Y]], %[[X]])
// CHECK-NEXT:  "glowir.sigmoid"(%[[Y]], %[[Y]])
// CHECK-NEXT:  "glowir.tanh"(%[[Y]], %[[Y]])
// CHECK-NEXT:  return
func.func @chain() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.sigmoid"(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  "glowir.tanh"(%y, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  return
}

// -----

// An input still read later cannot be overwritten: relu writes its own buffer b, and only at the add, where a and b
// both die, does b take y's memory. a cannot: y is written (by relu, as b) while a lives.
// CHECK-LABEL: func.func @input_read_later
// CHECK:       %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NEXT:  %[[A:.+]] = "glowir.alloc_activation"() {name = "a"}
// CHECK-NEXT:  "glowir.tanh"(%[[A]], %{{[0-9]+}})
// CHECK-NEXT:  "glowir.relu"(%[[Y]], %[[A]])
// CHECK-NEXT:  "glowir.element_add"(%[[Y]], %[[Y]], %[[A]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[A]])
func.func @input_read_later() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.tanh"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.relu"(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_add"(%y, %b, %a) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: ops without the elementwise trait read other positions of their inputs (matmul, transpose): no sharing
// even when the input dies there and the types match. Negative: inputs are read-only.
// CHECK-LABEL: func.func @not_elementwise
// CHECK:       %[[A:.+]] = "glowir.alloc_activation"() {name = "a"}
// CHECK-NEXT:  "glowir.relu"(%[[A]], %[[X:[0-9]+]])
// CHECK-NEXT:  %[[B:.+]] = "glowir.alloc_activation"() {name = "b"}
// CHECK-NEXT:  "glowir.transpose"(%[[B]], %[[A]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[A]])
// CHECK-NEXT:  "glowir.matmul"(%{{[0-9]+}}, %[[B]], %[[B]])
func.func @not_elementwise() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4x4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4x4xf32>
  "glowir.relu"(%a, %x) : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4x4xf32>
  "glowir.transpose"(%b, %a) {shuffle = array<i64: 1, 0>} : (memref<4x4xf32>, memref<4x4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4x4xf32>) -> ()
  "glowir.matmul"(%y, %b, %b) : (memref<4x4xf32>, memref<4x4xf32>, memref<4x4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4x4xf32>) -> ()
  return
}

// -----

// Negative: an elementwise op reading two overlapping, shifted ranges of a dying buffer may not write into either:
// it would read elements it already overwrote. The result goes to the output instead (b dies at the copy).
// CHECK-LABEL: func.func @shifted
// CHECK:       %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK:       %[[LO:.+]] = "glowir.tensor_view"
// CHECK-NEXT:  %[[HI:.+]] = "glowir.tensor_view"
// CHECK-NEXT:  "glowir.element_add"(%[[Y]], %[[LO]], %[[HI]])
func.func @shifted() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<8xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<8xf32>
  "glowir.relu"(%a, %x) : (memref<8xf32>, memref<8xf32>) -> ()
  %lo = "glowir.tensor_view"(%a) : (memref<8xf32>) -> memref<4xf32>
  %hi = "glowir.tensor_view"(%a) {offsets = array<i64: 2>} : (memref<8xf32>) -> memref<4xf32>
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.element_add"(%b, %lo, %hi) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<8xf32>) -> ()
  "glowir.copy"(%y, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: sigmoid's input a is read again after sigmoid's result b dies, so b may not take a's memory (it goes
// into the output y instead); a itself ends in z.
// CHECK-LABEL: func.func @read_after_the_life
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK-NEXT:  %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NEXT:  %[[Z:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "z"}
// CHECK-NEXT:  "glowir.relu"(%[[Z]], %[[X]])
// CHECK-NEXT:  "glowir.sigmoid"(%[[Y]], %[[Z]])
// CHECK-NEXT:  "glowir.tanh"(%[[Y]], %[[Y]])
// CHECK-NEXT:  "glowir.element_add"(%[[Z]], %[[Z]], %[[X]])
func.func @read_after_the_life() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.sigmoid"(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%y, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  "glowir.element_add"(%z, %a, %x) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: an output's value leaves the program, so a buffer born from it may not overwrite it.
// CHECK-LABEL: func.func @output_read_at_the_end
// CHECK:       %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NEXT:  %[[Z:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "z"}
// CHECK-NEXT:  "glowir.relu"(%[[Y]], %{{[0-9]+}})
// CHECK-NEXT:  "glowir.sigmoid"(%[[Z]], %[[Y]])
// CHECK-NEXT:  "glowir.tanh"(%[[Z]], %[[Z]])
func.func @output_read_at_the_end() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4xf32>
  "glowir.relu"(%y, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.sigmoid"(%b, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%z, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  return
}
