// RUN: glow-opt %s --split-input-file --glowgraph-constant-fold --glowgraph-dce | FileCheck %s

// The reductions of a constant fold with their numpy semantics (each feeds an add, so it is worth folding).
// x = [[1, 2, 3], [4, 5, 6]]: sums over dim 1 [6, 15], max over dim 0 [4, 5, 6], min over both 1, products over
// dim 1 [6, 120], means over dim 1 [2, 5]; the L2 norm of [[3, 4]] over dim 1 is [5].
// CHECK-LABEL: func.func @reductions
// CHECK-DAG: "glowgraph.constant"() {value = dense<[6.000000e+00, 1.500000e+01]> : tensor<2xf32>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<[4.000000e+00, 5.000000e+00, 6.000000e+00]> : tensor<3xf32>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<[6, 120]> : tensor<2xi64>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<[2.000000e+00, 5.000000e+00]> : tensor<2xf32>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<5.000000e+00> : tensor<1xf32>}
// CHECK-NOT: "glowgraph.reduce
func.func @reductions(%a: tensor<2xf32>, %b: tensor<3xf32>, %c: tensor<f32>, %d: tensor<2xi64>, %e: tensor<1xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<2xi64>, tensor<2xf32>, tensor<1xf32>) {
  %x = "glowgraph.constant"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %i = "glowgraph.constant"() {value = dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
  %y = "glowgraph.constant"() {value = dense<[[3.0, 4.0]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %0 = "glowgraph.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %1 = "glowgraph.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  %2 = "glowgraph.reduce_min"(%x) {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  %3 = "glowgraph.reduce_prod"(%i) {axes = array<i64: 1>} : (tensor<2x3xi64>) -> tensor<2xi64>
  %4 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %5 = "glowgraph.reduce_l2"(%y) {axes = array<i64: 1>} : (tensor<1x2xf32>) -> tensor<1xf32>
  %r0 = "glowgraph.add"(%0, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r1 = "glowgraph.add"(%1, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r2 = "glowgraph.add"(%2, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r3 = "glowgraph.add"(%3, %d) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %r4 = "glowgraph.add"(%4, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r5 = "glowgraph.add"(%5, %e) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  return %r0, %r1, %r2, %r3, %r4, %r5 : tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<2xi64>, tensor<2xf32>, tensor<1xf32>
}

// -----

// ArgMax of [[1, 3, 3], [2, 0, 2]] along dim 1: the first maxima [1, 0], the last ones [2, 2].
// CHECK-LABEL: func.func @arg_max
// CHECK-DAG: "glowgraph.constant"() {value = dense<[1, 0]> : tensor<2xi64>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<2> : tensor<2xi64>}
// CHECK-NOT: "glowgraph.arg_max"
func.func @arg_max(%a: tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>) {
  %x = "glowgraph.constant"() {value = dense<[[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = "glowgraph.arg_max"(%x) {axis = 1, select_last = 0} : (tensor<2x3xf32>) -> tensor<2xi64>
  %1 = "glowgraph.arg_max"(%x) {axis = 1, select_last = 1} : (tensor<2x3xf32>) -> tensor<2xi64>
  %r0 = "glowgraph.add"(%0, %a) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %r1 = "glowgraph.add"(%1, %a) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %r0, %r1 : tensor<2xi64>, tensor<2xi64>
}

// -----

// Equal entries in a row share the probability: [[0, 0], [5, 5]] gives 0.5 everywhere and log(0.5) for
// LogSoftmax. LayerNorm of [[1, 3]] (epsilon 0): (x - 2) / 1 = [-1, 1], times 2 plus 1 = [-1, 3].
// BatchMatMul [[[1, 2]]] x [[[3], [4]]] = [[[11]]].
// CHECK-LABEL: func.func @normalizations
// CHECK-DAG: "glowgraph.constant"() {value = dense<5.000000e-01> : tensor<2x2xf32>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<-0.693147{{[0-9]*}}> : tensor<2x2xf32>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<{{\[\[}}-1.000000e+00, 3.000000e+00]]> : tensor<1x2xf32>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<1.100000e+01> : tensor<1x1x1xf32>}
// CHECK-NOT: "glowgraph.softmax"
// CHECK-NOT: "glowgraph.log_softmax"
// CHECK-NOT: "glowgraph.layer_norm"
// CHECK-NOT: "glowgraph.batch_matmul"
func.func @normalizations(%a: tensor<2x2xf32>, %b: tensor<1x2xf32>, %c: tensor<1x1x1xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<1x1x1xf32>) {
  %x = "glowgraph.constant"() {value = dense<[[0.0, 0.0], [5.0, 5.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %y = "glowgraph.constant"() {value = dense<[[1.0, 3.0]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %g = "glowgraph.constant"() {value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %h = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %l = "glowgraph.constant"() {value = dense<[[[1.0, 2.0]]]> : tensor<1x1x2xf32>} : () -> tensor<1x1x2xf32>
  %r = "glowgraph.constant"() {value = dense<[[[3.0], [4.0]]]> : tensor<1x2x1xf32>} : () -> tensor<1x2x1xf32>
  %0 = "glowgraph.softmax"(%x) {axis = 1} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.log_softmax"(%x) {axis = 1} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.layer_norm"(%y, %g, %h) {axis = 1, epsilon = 0.0 : f32} : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  %3 = "glowgraph.batch_matmul"(%l, %r) : (tensor<1x1x2xf32>, tensor<1x2x1xf32>) -> tensor<1x1x1xf32>
  %r0 = "glowgraph.add"(%0, %a) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r1 = "glowgraph.add"(%1, %a) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r2 = "glowgraph.add"(%2, %b) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %r3 = "glowgraph.add"(%3, %c) : (tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  return %r0, %r1, %r2, %r3 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<1x1x1xf32>
}

// -----

// The max and min of an empty set fold to the lowest and highest values of the type, as the kernels' fills give
// (regression: numpy's max and min raise on an empty set, which failed the pass).
// CHECK-LABEL: func.func @empty_extremes
// CHECK-DAG: "glowgraph.constant"() {value = dense<0xFF800000> : tensor<2x4xf32>}
// CHECK-DAG: "glowgraph.constant"() {value = dense<9223372036854775807> : tensor<2xi64>}
// CHECK-NOT: "glowgraph.reduce
func.func @empty_extremes(%a: tensor<2x4xf32>, %b: tensor<2xi64>) -> (tensor<2x4xf32>, tensor<2xi64>) {
  %x = "glowgraph.constant"() {value = dense<> : tensor<2x0x4xf32>} : () -> tensor<2x0x4xf32>
  %i = "glowgraph.constant"() {value = dense<> : tensor<2x0xi64>} : () -> tensor<2x0xi64>
  %0 = "glowgraph.reduce_max"(%x) {axes = array<i64: 1>} : (tensor<2x0x4xf32>) -> tensor<2x4xf32>
  %1 = "glowgraph.reduce_min"(%i) {axes = array<i64: 1>} : (tensor<2x0xi64>) -> tensor<2xi64>
  %r0 = "glowgraph.add"(%0, %a) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %r1 = "glowgraph.add"(%1, %b) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %r0, %r1 : tensor<2x4xf32>, tensor<2xi64>
}
