// RUN: glow-opt %s --split-input-file | FileCheck %s
// RUN: glow-opt %s --split-input-file | glow-opt --split-input-file | FileCheck %s

// Float math nodes parse, verify and print back unchanged.
// CHECK-LABEL: func.func @float_math
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[Y:.+]]: tensor<2x3xf32>)
// CHECK: %[[EXP:.+]] = "glowgraph.exp"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[LOG:.+]] = "glowgraph.log"(%[[EXP]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[SQRT:.+]] = "glowgraph.sqrt"(%[[LOG]])
// CHECK: %[[ERF:.+]] = "glowgraph.erf"(%[[SQRT]])
// CHECK: %[[FLOOR:.+]] = "glowgraph.floor"(%[[ERF]])
// CHECK: %[[CEIL:.+]] = "glowgraph.ceil"(%[[FLOOR]])
// CHECK: %[[NEG:.+]] = "glowgraph.neg"(%[[CEIL]])
// CHECK: %[[ABS:.+]] = "glowgraph.abs"(%[[NEG]])
// CHECK: %[[POW:.+]] = "glowgraph.pow"(%[[ABS]], %[[Y]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "glowgraph.mod"(%[[POW]], %[[Y]]) {fmod = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @float_math(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "glowgraph.exp"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.log"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "glowgraph.sqrt"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "glowgraph.erf"(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "glowgraph.floor"(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = "glowgraph.ceil"(%4) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = "glowgraph.neg"(%5) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = "glowgraph.abs"(%6) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = "glowgraph.pow"(%7, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = "glowgraph.mod"(%8, %y) {fmod = 1} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %9 : tensor<2x3xf32>
}

// -----

// Integer math: neg, abs and both kinds of mod.
// CHECK-LABEL: func.func @int_math
// CHECK: "glowgraph.neg"(%{{.+}}) : (tensor<4xi64>) -> tensor<4xi64>
// CHECK: "glowgraph.abs"(%{{.+}}) : (tensor<4xi64>) -> tensor<4xi64>
// CHECK: "glowgraph.mod"(%{{.+}}, %{{.+}}) {fmod = 0 : i64} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK: "glowgraph.mod"(%{{.+}}, %{{.+}}) {fmod = 1 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
func.func @int_math(%a: tensor<4xi64>, %b: tensor<4xi32>) -> (tensor<4xi64>, tensor<4xi32>) {
  %0 = "glowgraph.neg"(%a) : (tensor<4xi64>) -> tensor<4xi64>
  %1 = "glowgraph.abs"(%0) : (tensor<4xi64>) -> tensor<4xi64>
  %2 = "glowgraph.mod"(%1, %a) {fmod = 0} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %3 = "glowgraph.mod"(%b, %b) {fmod = 1} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %2, %3 : tensor<4xi64>, tensor<4xi32>
}

// -----

// Comparisons give i1 tensors; logic and select take them.
// CHECK-LABEL: func.func @compare_and_select
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>, %[[I:.+]]: tensor<4xi64>, %[[B:.+]]: tensor<4xi1>)
// CHECK: %[[EQ:.+]] = "glowgraph.cmp_eq"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK: %[[LT:.+]] = "glowgraph.cmp_lt"(%[[I]], %[[I]]) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
// CHECK: %[[LTE:.+]] = "glowgraph.cmp_lte"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK: %[[BEQ:.+]] = "glowgraph.cmp_eq"(%[[B]], %[[LT]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK: %[[NOT:.+]] = "glowgraph.not"(%[[EQ]]) : (tensor<4xi1>) -> tensor<4xi1>
// CHECK: %[[AND:.+]] = "glowgraph.and"(%[[NOT]], %[[LTE]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK: %[[OR:.+]] = "glowgraph.or"(%[[AND]], %[[BEQ]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK: "glowgraph.select"(%[[OR]], %[[X]], %[[Y]]) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @compare_and_select(%x: tensor<4xf32>, %y: tensor<4xf32>, %i: tensor<4xi64>, %b: tensor<4xi1>) -> tensor<4xf32> {
  %0 = "glowgraph.cmp_eq"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = "glowgraph.cmp_lt"(%i, %i) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
  %2 = "glowgraph.cmp_lte"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = "glowgraph.cmp_eq"(%b, %1) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %4 = "glowgraph.not"(%0) : (tensor<4xi1>) -> tensor<4xi1>
  %5 = "glowgraph.and"(%4, %2) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %6 = "glowgraph.or"(%5, %3) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %7 = "glowgraph.select"(%6, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %7 : tensor<4xf32>
}

// -----

// Casts between f32, i32, i64 and i1 keep the shape.
// CHECK-LABEL: func.func @casts
// CHECK: "glowgraph.cast"(%{{.+}}) {to = i64} : (tensor<2x2xf32>) -> tensor<2x2xi64>
// CHECK: "glowgraph.cast"(%{{.+}}) {to = i32} : (tensor<2x2xi64>) -> tensor<2x2xi32>
// CHECK: "glowgraph.cast"(%{{.+}}) {to = i1} : (tensor<2x2xi32>) -> tensor<2x2xi1>
// CHECK: "glowgraph.cast"(%{{.+}}) {to = f32} : (tensor<2x2xi1>) -> tensor<2x2xf32>
func.func @casts(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "glowgraph.cast"(%x) {to = i64} : (tensor<2x2xf32>) -> tensor<2x2xi64>
  %1 = "glowgraph.cast"(%0) {to = i32} : (tensor<2x2xi64>) -> tensor<2x2xi32>
  %2 = "glowgraph.cast"(%1) {to = i1} : (tensor<2x2xi32>) -> tensor<2x2xi1>
  %3 = "glowgraph.cast"(%2) {to = f32} : (tensor<2x2xi1>) -> tensor<2x2xf32>
  return %3 : tensor<2x2xf32>
}

// -----

// High-level activations (node lowering expands them) with their attributes.
// CHECK-LABEL: func.func @activations
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[S:.+]]: tensor<2x3xf32>)
// CHECK: "glowgraph.leaky_relu"(%[[X]]) {alpha = 1.000000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "glowgraph.prelu"(%{{.+}}, %[[S]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "glowgraph.elu"(%{{.+}}) {alpha = 1.000000e+00 : f32}
// CHECK: "glowgraph.hard_sigmoid"(%{{.+}}) {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32}
// CHECK: "glowgraph.softplus"(%{{.+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: "glowgraph.gelu"(%{{.+}}) {approximate = "none"}
// CHECK: "glowgraph.gelu"(%{{.+}}) {approximate = "tanh"}
func.func @activations(%x: tensor<2x3xf32>, %s: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "glowgraph.leaky_relu"(%x) {alpha = 0.1 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.prelu"(%0, %s) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "glowgraph.elu"(%1) {alpha = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "glowgraph.hard_sigmoid"(%2) {alpha = 0.2 : f32, beta = 0.5 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "glowgraph.softplus"(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = "glowgraph.gelu"(%4) {approximate = "none"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = "glowgraph.gelu"(%5) {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %6 : tensor<2x3xf32>
}

// -----

// PRelu takes integers too (ONNX allows them).
// CHECK-LABEL: func.func @int_prelu
// CHECK: "glowgraph.prelu"(%{{.+}}, %{{.+}}) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
func.func @int_prelu(%x: tensor<3xi64>) -> tensor<3xi64> {
  %0 = "glowgraph.prelu"(%x, %x) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// Trigonometric, hyperbolic and rounding nodes (floats only).
// CHECK-LABEL: func.func @trig_math
// CHECK: "glowgraph.sin"
// CHECK: "glowgraph.cos"
// CHECK: "glowgraph.tan"
// CHECK: "glowgraph.asin"
// CHECK: "glowgraph.acos"
// CHECK: "glowgraph.atan"
// CHECK: "glowgraph.sinh"
// CHECK: "glowgraph.cosh"
// CHECK: "glowgraph.asinh"
// CHECK: "glowgraph.acosh"
// CHECK: "glowgraph.atanh"
// CHECK: "glowgraph.round"(%{{.+}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @trig_math(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "glowgraph.sin"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.cos"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "glowgraph.tan"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "glowgraph.asin"(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "glowgraph.acos"(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = "glowgraph.atan"(%4) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = "glowgraph.sinh"(%5) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = "glowgraph.cosh"(%6) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = "glowgraph.asinh"(%7) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = "glowgraph.acosh"(%8) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = "glowgraph.atanh"(%9) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = "glowgraph.round"(%10) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %11 : tensor<2x3xf32>
}

// -----

// Shifts take i32 or i64 operands of one type.
// CHECK-LABEL: func.func @shifts
// CHECK-SAME: (%[[A:.+]]: tensor<4xi64>, %[[B:.+]]: tensor<2x3xi32>)
// CHECK: "glowgraph.shift_left"(%[[A]], %[[A]]) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK: "glowgraph.shift_right"(%[[B]], %[[B]]) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
func.func @shifts(%a: tensor<4xi64>, %b: tensor<2x3xi32>) -> (tensor<4xi64>, tensor<2x3xi32>) {
  %0 = "glowgraph.shift_left"(%a, %a) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = "glowgraph.shift_right"(%b, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0, %1 : tensor<4xi64>, tensor<2x3xi32>
}

// -----

// Bitwise ops take integers of any width (on i1 they are the logical ops); cast reaches the narrow integers.
// CHECK-LABEL: func.func @bitwise
// CHECK-SAME: (%[[A:.+]]: tensor<4xi32>, %[[B:.+]]: tensor<4xi64>)
// CHECK: "glowgraph.and"(%[[A]], %[[A]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK: "glowgraph.or"(%[[B]], %[[B]]) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// CHECK: "glowgraph.xor"(%[[A]], %[[A]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK: "glowgraph.not"(%[[B]]) : (tensor<4xi64>) -> tensor<4xi64>
// CHECK: "glowgraph.cast"(%[[A]]) {to = i8} : (tensor<4xi32>) -> tensor<4xi8>
func.func @bitwise(%a: tensor<4xi32>, %b: tensor<4xi64>) -> (tensor<4xi32>, tensor<4xi64>, tensor<4xi32>, tensor<4xi64>, tensor<4xi8>) {
  %0 = "glowgraph.and"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "glowgraph.or"(%b, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = "glowgraph.xor"(%a, %a) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = "glowgraph.not"(%b) : (tensor<4xi64>) -> tensor<4xi64>
  %4 = "glowgraph.cast"(%a) {to = i8} : (tensor<4xi32>) -> tensor<4xi8>
  return %0, %1, %2, %3, %4 : tensor<4xi32>, tensor<4xi64>, tensor<4xi32>, tensor<4xi64>, tensor<4xi8>
}

// -----

// bitcast reads each element's bits as a type of the same width, floats and integers, the narrow storage types too.
// CHECK-LABEL: func.func @bitcast
// CHECK: "glowgraph.bitcast"(%{{.+}}) {to = i32} : (tensor<4xf32>) -> tensor<4xi32>
// CHECK: "glowgraph.bitcast"(%{{.+}}) {to = bf16} : (tensor<4xi16>) -> tensor<4xbf16>
// CHECK: "glowgraph.bitcast"(%{{.+}}) {to = i8} : (tensor<4xf8E5M2>) -> tensor<4xi8>
func.func @bitcast(%a: tensor<4xf32>, %b: tensor<4xi16>, %c: tensor<4xf8E5M2>) -> (tensor<4xi32>, tensor<4xbf16>, tensor<4xi8>) {
  %0 = "glowgraph.bitcast"(%a) {to = i32} : (tensor<4xf32>) -> tensor<4xi32>
  %1 = "glowgraph.bitcast"(%b) {to = bf16} : (tensor<4xi16>) -> tensor<4xbf16>
  %2 = "glowgraph.bitcast"(%c) {to = i8} : (tensor<4xf8E5M2>) -> tensor<4xi8>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xbf16>, tensor<4xi8>
}
