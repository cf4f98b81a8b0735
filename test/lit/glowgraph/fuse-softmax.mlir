// RUN: glow-opt %s --split-input-file --glowgraph-fuse-softmax | FileCheck %s

// exp, a keepdims sum (reshape) broadcast back, and a division: a softmax along the summed axis.
// CHECK-LABEL: func.func @spelled_out
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[S:.+]] = "glowgraph.softmax"(%[[X]]) {axis = 1 : i64}
// CHECK-NEXT: return %[[S]]
func.func @spelled_out(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "glowgraph.exp"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.reduce_sum"(%0) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %2 = "glowgraph.reshape"(%1) {shape = array<i64: 2, 1>} : (tensor<2xf32>) -> tensor<2x1xf32>
  %3 = "glowgraph.broadcast"(%2) {shape = array<i64: 2, 3>} : (tensor<2x1xf32>) -> tensor<2x3xf32>
  %4 = "glowgraph.div"(%0, %3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %4 : tensor<2x3xf32>
}

// -----

// With the maximum subtracted first (along the same axis), the softmax reads x itself.
// CHECK-LABEL: func.func @max_subtracted
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[S:.+]] = "glowgraph.softmax"(%[[X]]) {axis = 0 : i64}
// CHECK-NEXT: return %[[S]]
func.func @max_subtracted(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %m = "glowgraph.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  %mb = "glowgraph.broadcast"(%m) {shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %d = "glowgraph.sub"(%x, %mb) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = "glowgraph.exp"(%d) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.reduce_sum"(%0) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  %2 = "glowgraph.broadcast"(%1) {shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %3 = "glowgraph.div"(%0, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// Negative: a sum over two axes, a sum of another tensor, and an exp with a third user stay.
// CHECK-LABEL: func.func @not_softmax
// CHECK-NOT: "glowgraph.softmax"
// CHECK-COUNT-3: "glowgraph.div"
func.func @not_softmax(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "glowgraph.exp"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.reduce_sum"(%0) {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  %2 = "glowgraph.broadcast"(%1) {shape = array<i64: 2, 3>} : (tensor<f32>) -> tensor<2x3xf32>
  %3 = "glowgraph.div"(%0, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "glowgraph.reduce_sum"(%y) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %5 = "glowgraph.reshape"(%4) {shape = array<i64: 2, 1>} : (tensor<2xf32>) -> tensor<2x1xf32>
  %6 = "glowgraph.broadcast"(%5) {shape = array<i64: 2, 3>} : (tensor<2x1xf32>) -> tensor<2x3xf32>
  %7 = "glowgraph.div"(%0, %6) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = "glowgraph.exp"(%y) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = "glowgraph.reduce_sum"(%8) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  %10 = "glowgraph.reshape"(%9) {shape = array<i64: 2, 1>} : (tensor<2xf32>) -> tensor<2x1xf32>
  %11 = "glowgraph.broadcast"(%10) {shape = array<i64: 2, 3>} : (tensor<2x1xf32>) -> tensor<2x3xf32>
  %12 = "glowgraph.div"(%8, %11) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %3, %7, %12, %8 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
