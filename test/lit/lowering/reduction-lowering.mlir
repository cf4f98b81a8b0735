// RUN: glow-opt %s --split-input-file --glowgraph-lower | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-lower{keep=reduce_mean,softmax,log_softmax,layer_norm,reduce_l2})' | FileCheck %s --check-prefix=KEEP

// ReduceMean(x) -> Div(ReduceSum(x), Splat(n)): n counts the elements summed into each result.
// CHECK-LABEL: func.func @mean
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[S:.+]] = "glowgraph.reduce_sum"(%[[X]]) {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK: %[[N:.+]] = "glowgraph.splat"() {value = 8.000000e+00 : f32} : () -> tensor<3xf32>
// CHECK: %[[M:.+]] = "glowgraph.div"(%[[S]], %[[N]])
// CHECK: return %[[M]]
// KEEP-LABEL: func.func @mean
// KEEP: "glowgraph.reduce_mean"
// KEEP-NOT: "glowgraph.reduce_sum"
func.func @mean(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// The mean of every element is a scalar divided by a scalar splat.
// CHECK-LABEL: func.func @mean_all
// CHECK: %[[S:.+]] = "glowgraph.reduce_sum"(%{{.+}}) {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
// CHECK: %[[N:.+]] = "glowgraph.splat"() {value = 6.000000e+00 : f32} : () -> tensor<f32>
// CHECK: "glowgraph.div"(%[[S]], %[[N]]) : (tensor<f32>, tensor<f32>) -> tensor<f32>
func.func @mean_all(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// ReduceL2(x) -> Sqrt(ReduceSum(Mul(x, x))).
// CHECK-LABEL: func.func @l2
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[SQ:.+]] = "glowgraph.mul"(%[[X]], %[[X]])
// CHECK: %[[S:.+]] = "glowgraph.reduce_sum"(%[[SQ]]) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK: %[[R:.+]] = "glowgraph.sqrt"(%[[S]])
// CHECK: return %[[R]]
// KEEP-LABEL: func.func @l2
// KEEP: "glowgraph.reduce_l2"
// KEEP-NOT: "glowgraph.sqrt"
func.func @l2(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = "glowgraph.reduce_l2"(%x) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Softmax along a middle axis: the max and the sum are reduced along it, reshaped to keep it as 1, broadcast back.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[M:.+]] = "glowgraph.reduce_max"(%[[X]]) {axes = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[MK:.+]] = "glowgraph.reshape"(%[[M]]) {shape = array<i64: 2, 1, 4>}
// CHECK: %[[MB:.+]] = "glowgraph.broadcast"(%[[MK]]) {shape = array<i64: 2, 3, 4>}
// CHECK: %[[D:.+]] = "glowgraph.sub"(%[[X]], %[[MB]])
// CHECK: %[[E:.+]] = "glowgraph.exp"(%[[D]])
// CHECK: %[[S:.+]] = "glowgraph.reduce_sum"(%[[E]]) {axes = array<i64: 1>}
// CHECK: %[[SK:.+]] = "glowgraph.reshape"(%[[S]]) {shape = array<i64: 2, 1, 4>}
// CHECK: %[[SB:.+]] = "glowgraph.broadcast"(%[[SK]]) {shape = array<i64: 2, 3, 4>}
// CHECK: %[[Y:.+]] = "glowgraph.div"(%[[E]], %[[SB]])
// CHECK: return %[[Y]]
// KEEP-LABEL: func.func @softmax
// KEEP: "glowgraph.softmax"
// KEEP-NOT: "glowgraph.exp"
func.func @softmax(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "glowgraph.softmax"(%x) {axis = 1} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// LogSoftmax: one log per row of the summed exponentials.
// CHECK-LABEL: func.func @log_softmax
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK: %[[M:.+]] = "glowgraph.reduce_max"(%[[X]]) {axes = array<i64: 1>}
// CHECK: %[[MB:.+]] = "glowgraph.broadcast"
// CHECK: %[[D:.+]] = "glowgraph.sub"(%[[X]], %[[MB]])
// CHECK: %[[E:.+]] = "glowgraph.exp"(%[[D]])
// CHECK: %[[S:.+]] = "glowgraph.reduce_sum"(%[[E]]) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
// CHECK: %[[L:.+]] = "glowgraph.log"(%[[S]]) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[LK:.+]] = "glowgraph.reshape"(%[[L]]) {shape = array<i64: 2, 1>}
// CHECK: %[[LB:.+]] = "glowgraph.broadcast"(%[[LK]]) {shape = array<i64: 2, 3>}
// CHECK: %[[Y:.+]] = "glowgraph.sub"(%[[D]], %[[LB]])
// CHECK: return %[[Y]]
// KEEP-LABEL: func.func @log_softmax
// KEEP: "glowgraph.log_softmax"
// KEEP-NOT: "glowgraph.log"(
func.func @log_softmax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "glowgraph.log_softmax"(%x) {axis = 1} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A vector's softmax: its statistics are scalars, reshaped to 1 element and broadcast.
// CHECK-LABEL: func.func @softmax_vector
// CHECK: %[[M:.+]] = "glowgraph.reduce_max"(%{{.+}}) {axes = array<i64: 0>} : (tensor<5xf32>) -> tensor<f32>
// CHECK: %[[MK:.+]] = "glowgraph.reshape"(%[[M]]) {shape = array<i64: 1>} : (tensor<f32>) -> tensor<1xf32>
// CHECK: "glowgraph.broadcast"(%[[MK]]) {shape = array<i64: 5>} : (tensor<1xf32>) -> tensor<5xf32>
func.func @softmax_vector(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "glowgraph.softmax"(%x) {axis = 0} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// LayerNorm: mean, variance of x - mean, normalize, then scale and bias broadcast over the leading dims.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>, %[[G:.+]]: tensor<3x4xf32>, %[[B:.+]]: tensor<3x4xf32>)
// CHECK: %[[S:.+]] = "glowgraph.reduce_sum"(%[[X]]) {axes = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2xf32>
// CHECK: %[[N:.+]] = "glowgraph.splat"() {value = 1.200000e+01 : f32} : () -> tensor<2xf32>
// CHECK: %[[MEAN:.+]] = "glowgraph.div"(%[[S]], %[[N]])
// CHECK: %[[MK:.+]] = "glowgraph.reshape"(%[[MEAN]]) {shape = array<i64: 2, 1, 1>}
// CHECK: %[[MB:.+]] = "glowgraph.broadcast"(%[[MK]]) {shape = array<i64: 2, 3, 4>}
// CHECK: %[[D:.+]] = "glowgraph.sub"(%[[X]], %[[MB]])
// CHECK: %[[SQ:.+]] = "glowgraph.mul"(%[[D]], %[[D]])
// CHECK: %[[SS:.+]] = "glowgraph.reduce_sum"(%[[SQ]]) {axes = array<i64: 1, 2>}
// CHECK: %[[N2:.+]] = "glowgraph.splat"() {value = 1.200000e+01 : f32}
// CHECK: %[[VAR:.+]] = "glowgraph.div"(%[[SS]], %[[N2]])
// CHECK: %[[EPS:.+]] = "glowgraph.splat"() {value = 9.99999974E-6 : f32} : () -> tensor<2xf32>
// CHECK: %[[VE:.+]] = "glowgraph.add"(%[[VAR]], %[[EPS]])
// CHECK: %[[STD:.+]] = "glowgraph.sqrt"(%[[VE]])
// CHECK: %[[SK:.+]] = "glowgraph.reshape"(%[[STD]]) {shape = array<i64: 2, 1, 1>}
// CHECK: %[[SB:.+]] = "glowgraph.broadcast"(%[[SK]]) {shape = array<i64: 2, 3, 4>}
// CHECK: %[[NORM:.+]] = "glowgraph.div"(%[[D]], %[[SB]])
// CHECK: %[[GB:.+]] = "glowgraph.broadcast"(%[[G]]) {shape = array<i64: 2, 3, 4>} : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[BB:.+]] = "glowgraph.broadcast"(%[[B]]) {shape = array<i64: 2, 3, 4>}
// CHECK: %[[SC:.+]] = "glowgraph.mul"(%[[NORM]], %[[GB]])
// CHECK: %[[Y:.+]] = "glowgraph.add"(%[[SC]], %[[BB]])
// CHECK: return %[[Y]]
// KEEP-LABEL: func.func @layer_norm
// KEEP: "glowgraph.layer_norm"
// KEEP-NOT: "glowgraph.sqrt"
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "glowgraph.layer_norm"(%x, %g, %b) {axis = 1, epsilon = 1.0e-5 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// LayerNorm over every dim: scale and bias already have the input's shape, no broadcast.
// CHECK-LABEL: func.func @layer_norm_all
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[G:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>)
// CHECK: %[[NORM:.+]] = "glowgraph.div"(%{{.+}}, %{{.+}}) : (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT: %[[SC:.+]] = "glowgraph.mul"(%[[NORM]], %[[G]])
// CHECK-NEXT: "glowgraph.add"(%[[SC]], %[[B]])
func.func @layer_norm_all(%x: tensor<2x3xf32>, %g: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "glowgraph.layer_norm"(%x, %g, %b) {axis = 0, epsilon = 1.0e-5 : f32} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Negative: the other reductions are primitives, left as they are.
// CHECK-LABEL: func.func @primitives
// KEEP-LABEL: func.func @primitives
// CHECK: "glowgraph.reduce_sum"
// CHECK: "glowgraph.reduce_max"
// CHECK: "glowgraph.arg_max"
// CHECK: "glowgraph.batch_matmul"
// CHECK-NOT: "glowgraph.div"
func.func @primitives(%x: tensor<2x3x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2x3xi64>, tensor<2x3x3xf32>) {
  %0 = "glowgraph.reduce_sum"(%x) {axes = array<i64: 1, 2>} : (tensor<2x3x3xf32>) -> tensor<2xf32>
  %1 = "glowgraph.reduce_max"(%x) {axes = array<i64: 1, 2>} : (tensor<2x3x3xf32>) -> tensor<2xf32>
  %2 = "glowgraph.arg_max"(%x) {axis = 2, select_last = 0} : (tensor<2x3x3xf32>) -> tensor<2x3xi64>
  %3 = "glowgraph.batch_matmul"(%x, %x) : (tensor<2x3x3xf32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2x3xi64>, tensor<2x3x3xf32>
}
