// RUN: glow-opt %s | FileCheck %s
// RUN: glow-opt %s | glow-opt | FileCheck %s

// Data movement instructions: extract_tensor reads a strided box (steps default to 1), insert_tensor writes one
// (its dest is @inout: the rest of it is kept), gather reads data at the indices.
// CHECK-LABEL: func.func @program
// CHECK: %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4x6xf32>
// CHECK: %[[I:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<2xi32>
// CHECK: %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4x9xf32>
// CHECK: %[[G:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "g"} : () -> memref<2x6xf32>
// CHECK: %[[B:.+]] = "glowir.alloc_activation"() {name = "box"} : () -> memref<2x3xf32>
// CHECK: "glowir.extract_tensor"(%[[B]], %[[X]]) {offsets = array<i64: 3, 5>, steps = array<i64: -2, -2>} : (memref<2x3xf32>, memref<4x6xf32>) -> ()
// CHECK: "glowir.extract_tensor"(%[[B]], %[[X]]) {offsets = array<i64: 0, 1>} : (memref<2x3xf32>, memref<4x6xf32>) -> ()
// CHECK: "glowir.insert_tensor"(%[[Y]], %[[X]]) {offsets = array<i64: 0, 0>} : (memref<4x9xf32>, memref<4x6xf32>) -> ()
// CHECK: "glowir.insert_tensor"(%[[Y]], %[[B]]) {offsets = array<i64: 2, 6>} : (memref<4x9xf32>, memref<2x3xf32>) -> ()
// CHECK: "glowir.gather"(%[[G]], %[[X]], %[[I]]) {axis = 0 : i64} : (memref<2x6xf32>, memref<4x6xf32>, memref<2xi32>) -> ()
func.func @program() attributes {glowir.inputs = ["x", "i"], glowir.outputs = ["y", "g"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4x6xf32>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<2xi32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4x9xf32>
  %g = "glowir.weight_var"() {mutability = "mutable", name = "g"} : () -> memref<2x6xf32>
  %b = "glowir.alloc_activation"() {name = "box"} : () -> memref<2x3xf32>
  "glowir.extract_tensor"(%b, %x) {offsets = array<i64: 3, 5>, steps = array<i64: -2, -2>} : (memref<2x3xf32>, memref<4x6xf32>) -> ()
  "glowir.extract_tensor"(%b, %x) {offsets = array<i64: 0, 1>} : (memref<2x3xf32>, memref<4x6xf32>) -> ()
  "glowir.insert_tensor"(%y, %x) {offsets = array<i64: 0, 0>} : (memref<4x9xf32>, memref<4x6xf32>) -> ()
  "glowir.insert_tensor"(%y, %b) {offsets = array<i64: 2, 6>} : (memref<4x9xf32>, memref<2x3xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<2x3xf32>) -> ()
  "glowir.gather"(%g, %x, %i) {axis = 0 : i64} : (memref<2x6xf32>, memref<4x6xf32>, memref<2xi32>) -> ()
  return
}

// scatter_nd writes dest whole: data copied, then the updates at the indices (@out, not @inout).
// CHECK-LABEL: func.func @scatter
// CHECK: %[[D:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "d"} : () -> memref<4x6xf32>
// CHECK: %[[I:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<2x1xi32>
// CHECK: %[[U:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "u"} : () -> memref<2x6xf32>
// CHECK: %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4x6xf32>
// CHECK: "glowir.scatter_nd"(%[[Y]], %[[D]], %[[I]], %[[U]]) {reduction = "mul"} : (memref<4x6xf32>, memref<4x6xf32>, memref<2x1xi32>, memref<2x6xf32>) -> ()
func.func @scatter() attributes {glowir.inputs = ["d", "i", "u"], glowir.outputs = ["y"]} {
  %d = "glowir.weight_var"() {mutability = "mutable", name = "d"} : () -> memref<4x6xf32>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<2x1xi32>
  %u = "glowir.weight_var"() {mutability = "mutable", name = "u"} : () -> memref<2x6xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4x6xf32>
  "glowir.scatter_nd"(%y, %d, %i, %u) {reduction = "mul"} : (memref<4x6xf32>, memref<4x6xf32>, memref<2x1xi32>, memref<2x6xf32>) -> ()
  return
}
