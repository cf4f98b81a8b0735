// RUN: glow-opt %s --split-input-file --glowgraph-constant-fold --glowgraph-dce | FileCheck %s

// An integer and boolean chain folds in one sweep: mod (divisor's sign), comparisons, logic, select and cast.
// [-7, 9, 4] mod [3, -4, 4] = [2, -3, 0]; < 0: [F, T, F]; == 0: [F, F, T]; or: [F, T, T]; not: [T, F, F].
// CHECK-LABEL: func.func @int_bool_chain
// CHECK-SAME:  (%[[X:.+]]: tensor<3xi64>)
// CHECK-DAG:   %[[ONEHOT:.+]] = "glowgraph.constant"() {value = dense<[1, 0, 0]> : tensor<3xi64>}
// CHECK-DAG:   %[[PICKED:.+]] = "glowgraph.constant"() {value = dense<[3, 9, 4]> : tensor<3xi64>}
// CHECK:       %[[M:.+]] = "glowgraph.mul"(%[[X]], %[[ONEHOT]])
// CHECK:       %[[R:.+]] = "glowgraph.add"(%[[M]], %[[PICKED]])
// CHECK-NEXT:  return %[[R]]
func.func @int_bool_chain(%x: tensor<3xi64>) -> tensor<3xi64> {
  %a = "glowgraph.constant"() {value = dense<[-7, 9, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %b = "glowgraph.constant"() {value = dense<[3, -4, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %z = "glowgraph.splat"() {value = 0 : i64} : () -> tensor<3xi64>
  %m = "glowgraph.mod"(%a, %b) {fmod = 0} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %lt = "glowgraph.cmp_lt"(%m, %z) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %eq = "glowgraph.cmp_eq"(%m, %z) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
  %or = "glowgraph.or"(%lt, %eq) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %not = "glowgraph.not"(%or) : (tensor<3xi1>) -> tensor<3xi1>
  %onehot = "glowgraph.cast"(%not) {to = i64} : (tensor<3xi1>) -> tensor<3xi64>
  %picked = "glowgraph.select"(%or, %a, %b) : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %0 = "glowgraph.mul"(%x, %onehot) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = "glowgraph.add"(%0, %picked) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %1 : tensor<3xi64>
}

// -----

// Shape math as exporters write it: a dim cast to float, its square root, back to an integer (truncating).
// CHECK-LABEL: func.func @shape_math
// CHECK:       %[[C:.+]] = "glowgraph.constant"() {value = dense<8> : tensor<1xi64>}
// CHECK:       "glowgraph.mul"(%{{.+}}, %[[C]])
func.func @shape_math(%x: tensor<1xi64>) -> tensor<1xi64> {
  %d = "glowgraph.constant"() {value = dense<80> : tensor<1xi64>} : () -> tensor<1xi64>
  %f = "glowgraph.cast"(%d) {to = f32} : (tensor<1xi64>) -> tensor<1xf32>
  %s = "glowgraph.sqrt"(%f) : (tensor<1xf32>) -> tensor<1xf32>
  %i = "glowgraph.cast"(%s) {to = i64} : (tensor<1xf32>) -> tensor<1xi64>
  %0 = "glowgraph.mul"(%x, %i) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %0 : tensor<1xi64>
}

// -----

// Float activations fold too (their evaluate rows); the folded gelu is 0 at 0 and x at large x.
// CHECK-LABEL: func.func @activation
// CHECK:       %[[C:.+]] = "glowgraph.constant"() {value = dense<[0.000000e+00, 1.000000e+01]> : tensor<2xf32>}
// CHECK:       "glowgraph.add"(%{{.+}}, %[[C]])
func.func @activation(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = "glowgraph.constant"() {value = dense<[0.0, 10.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %g = "glowgraph.gelu"(%c) {approximate = "none"} : (tensor<2xf32>) -> tensor<2xf32>
  %0 = "glowgraph.add"(%x, %g) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Negative: a comparison of a non-constant stays, and so does everything after it.
// CHECK-LABEL: func.func @not_constant
// CHECK:       "glowgraph.cmp_lt"
// CHECK:       "glowgraph.not"
func.func @not_constant(%x: tensor<2xf32>) -> tensor<2xi1> {
  %c = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.cmp_lt"(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %1 = "glowgraph.not"(%0) : (tensor<2xi1>) -> tensor<2xi1>
  return %1 : tensor<2xi1>
}

// -----

// Shifts fold as ONNX BitShift defines them on signed integers: a left shift wraps, a right shift is arithmetic,
// and a negative amount or one of the width or more leaves the sign extension alone.
// [1, -8, 5, -5] << [3, 1, 64, -1] = [8, -16, 0, 0]; >> [3, 1, 64, -1] = [0, -4, 0, -1].
// CHECK-LABEL: func.func @shifts
// CHECK-DAG:   "glowgraph.constant"() {value = dense<[8, -16, 0, 0]> : tensor<4xi64>}
// CHECK-DAG:   "glowgraph.constant"() {value = dense<[0, -4, 0, -1]> : tensor<4xi64>}
// CHECK-NOT:   glowgraph.shift
func.func @shifts(%x: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %a = "glowgraph.constant"() {value = dense<[1, -8, 5, -5]> : tensor<4xi64>} : () -> tensor<4xi64>
  %b = "glowgraph.constant"() {value = dense<[3, 1, 64, -1]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "glowgraph.shift_left"(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = "glowgraph.shift_right"(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = "glowgraph.add"(%x, %0) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %3 = "glowgraph.add"(%x, %1) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %2, %3 : tensor<4xi64>, tensor<4xi64>
}

// -----

// A bitcast of a constant folds: 1.0 is 0x3F800000 = 1065353216, -2.0 is 0xC0000000 = -1073741824.
// CHECK-LABEL: func.func @bitcast
// CHECK:       "glowgraph.constant"() {value = dense<[1065353216, -1073741824]> : tensor<2xi32>}
// CHECK-NOT:   glowgraph.bitcast
func.func @bitcast(%x: tensor<2xi32>) -> tensor<2xi32> {
  %c = "glowgraph.constant"() {value = dense<[1.0, -2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = "glowgraph.bitcast"(%c) {to = i32} : (tensor<2xf32>) -> tensor<2xi32>
  %0 = "glowgraph.add"(%x, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
