// RUN: glow-opt %s | FileCheck %s
// RUN: glow-opt %s | glow-opt | FileCheck %s

// Every elementwise instruction, @out first, parses, verifies and prints back unchanged.
// CHECK-LABEL: func.func @instructions
// CHECK: %[[X:.+]] = "glowir.alloc_activation"() {name = "x"} : () -> memref<4xf32>
// CHECK: %[[F:.+]] = "glowir.alloc_activation"() {name = "f"} : () -> memref<4xf32>
// CHECK: %[[I:.+]] = "glowir.alloc_activation"() {name = "i"} : () -> memref<4xi64>
// CHECK: %[[J:.+]] = "glowir.alloc_activation"() {name = "j"} : () -> memref<4xi32>
// CHECK: %[[B:.+]] = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xi1>
// CHECK: "glowir.exp"(%[[F]], %[[X]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK: "glowir.log"(%[[F]], %[[F]])
// CHECK: "glowir.sqrt"(%[[F]], %[[F]])
// CHECK: "glowir.erf"(%[[F]], %[[F]])
// CHECK: "glowir.floor"(%[[F]], %[[F]])
// CHECK: "glowir.ceil"(%[[F]], %[[F]])
// CHECK: "glowir.neg"(%[[I]], %[[I]]) : (memref<4xi64>, memref<4xi64>) -> ()
// CHECK: "glowir.abs"(%[[F]], %[[F]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK: "glowir.element_pow"(%[[F]], %[[X]], %[[F]]) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
// CHECK: "glowir.element_mod"(%[[I]], %[[I]], %[[I]]) {fmod = 0 : i64} : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
// CHECK: "glowir.element_shift_left"(%[[I]], %[[I]], %[[I]]) : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
// CHECK: "glowir.element_shift_right"(%[[J]], %[[J]], %[[J]]) : (memref<4xi32>, memref<4xi32>, memref<4xi32>) -> ()
// CHECK: "glowir.element_cmp_eq"(%[[B]], %[[X]], %[[F]]) : (memref<4xi1>, memref<4xf32>, memref<4xf32>) -> ()
// CHECK: "glowir.element_cmp_lt"(%[[B]], %[[I]], %[[I]]) : (memref<4xi1>, memref<4xi64>, memref<4xi64>) -> ()
// CHECK: "glowir.element_cmp_lte"(%[[B]], %[[X]], %[[F]])
// CHECK: "glowir.not"(%[[B]], %[[B]]) : (memref<4xi1>, memref<4xi1>) -> ()
// CHECK: "glowir.element_and"(%[[B]], %[[B]], %[[B]]) : (memref<4xi1>, memref<4xi1>, memref<4xi1>) -> ()
// CHECK: "glowir.element_or"(%[[B]], %[[B]], %[[B]])
// CHECK: "glowir.element_select"(%[[F]], %[[B]], %[[X]], %[[F]]) : (memref<4xf32>, memref<4xi1>, memref<4xf32>, memref<4xf32>) -> ()
// CHECK: "glowir.cast"(%[[J]], %[[F]]) {to = i32} : (memref<4xi32>, memref<4xf32>) -> ()
// CHECK: "glowir.cast"(%[[B]], %[[J]]) {to = i1} : (memref<4xi1>, memref<4xi32>) -> ()
func.func @instructions() {
  %x = "glowir.alloc_activation"() {name = "x"} : () -> memref<4xf32>
  %f = "glowir.alloc_activation"() {name = "f"} : () -> memref<4xf32>
  %i = "glowir.alloc_activation"() {name = "i"} : () -> memref<4xi64>
  %j = "glowir.alloc_activation"() {name = "j"} : () -> memref<4xi32>
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xi1>
  "glowir.exp"(%f, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.log"(%f, %f) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.sqrt"(%f, %f) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.erf"(%f, %f) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.floor"(%f, %f) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.ceil"(%f, %f) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.neg"(%i, %i) : (memref<4xi64>, memref<4xi64>) -> ()
  "glowir.abs"(%f, %f) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_pow"(%f, %x, %f) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_mod"(%i, %i, %i) {fmod = 0} : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_shift_left"(%i, %i, %i) : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_shift_right"(%j, %j, %j) : (memref<4xi32>, memref<4xi32>, memref<4xi32>) -> ()
  "glowir.element_cmp_eq"(%b, %x, %f) : (memref<4xi1>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_cmp_lt"(%b, %i, %i) : (memref<4xi1>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_cmp_lte"(%b, %x, %f) : (memref<4xi1>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.not"(%b, %b) : (memref<4xi1>, memref<4xi1>) -> ()
  "glowir.element_and"(%b, %b, %b) : (memref<4xi1>, memref<4xi1>, memref<4xi1>) -> ()
  "glowir.element_or"(%b, %b, %b) : (memref<4xi1>, memref<4xi1>, memref<4xi1>) -> ()
  "glowir.element_select"(%f, %b, %x, %f) : (memref<4xf32>, memref<4xi1>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.cast"(%j, %f) {to = i32} : (memref<4xi32>, memref<4xf32>) -> ()
  "glowir.cast"(%b, %j) {to = i1} : (memref<4xi1>, memref<4xi32>) -> ()
  return
}

// CHECK-LABEL: func.func @trig_instructions
// CHECK: "glowir.sin"(%[[T:.+]], %[[T]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK: "glowir.atanh"(%[[T]], %[[T]])
// CHECK: "glowir.round"(%[[T]], %[[T]])
func.func @trig_instructions() {
  %t = "glowir.alloc_activation"() : () -> memref<4xf32>
  "glowir.sin"(%t, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.atanh"(%t, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.round"(%t, %t) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%t) : (memref<4xf32>) -> ()
  return
}
