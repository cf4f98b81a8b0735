// RUN: glow-opt %s --split-input-file | FileCheck %s
// RUN: glow-opt %s --split-input-file | glow-opt --split-input-file | FileCheck %s

// Data movement nodes parse, verify and print back unchanged (generic form).

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x5xf32>, %[[I:.+]]: tensor<4x1xi64>, %[[J:.+]]: tensor<4x2xi64>)
// CHECK: "glowgraph.concat"(%[[A]], %[[B]]) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK: "glowgraph.concat"(%[[I]], %[[J]]) {axis = 1 : i64} : (tensor<4x1xi64>, tensor<4x2xi64>) -> tensor<4x3xi64>
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %i: tensor<4x1xi64>, %j: tensor<4x2xi64>) -> (tensor<2x8xf32>, tensor<4x3xi64>) {
  %0 = "glowgraph.concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %1 = "glowgraph.concat"(%i, %j) {axis = 1 : i64} : (tensor<4x1xi64>, tensor<4x2xi64>) -> tensor<4x3xi64>
  return %0, %1 : tensor<2x8xf32>, tensor<4x3xi64>
}

// -----

// A slice is a strided box: steps may be left out (all 1) or be negative (walking backwards).
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.+]]: tensor<4x6xf32>, %[[M:.+]]: tensor<5xi1>)
// CHECK: "glowgraph.slice"(%[[X]]) {sizes = array<i64: 2, 3>, starts = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
// CHECK: "glowgraph.slice"(%[[X]]) {sizes = array<i64: 2, 3>, starts = array<i64: 3, 5>, steps = array<i64: -2, -2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
// CHECK: "glowgraph.slice"(%[[M]]) {sizes = array<i64: 2>, starts = array<i64: 0>, steps = array<i64: 4>} : (tensor<5xi1>) -> tensor<2xi1>
func.func @slice(%x: tensor<4x6xf32>, %m: tensor<5xi1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xi1>) {
  %0 = "glowgraph.slice"(%x) {starts = array<i64: 1, 2>, sizes = array<i64: 2, 3>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.slice"(%x) {starts = array<i64: 3, 5>, sizes = array<i64: 2, 3>, steps = array<i64: -2, -2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  %2 = "glowgraph.slice"(%m) {starts = array<i64: 0>, sizes = array<i64: 2>, steps = array<i64: 4>} : (tensor<5xi1>) -> tensor<2xi1>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xi1>
}

// -----

// Gather: data dims before the axis, the indices' dims, then data dims after the axis; i64 or i32 indices.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[D:.+]]: tensor<5x4xf32>, %[[I:.+]]: tensor<2x3xi64>, %[[J:.+]]: tensor<i32>, %[[T:.+]]: tensor<3x2xi32>)
// CHECK: "glowgraph.gather"(%[[D]], %[[I]]) {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK: "glowgraph.gather"(%[[D]], %[[I]]) {axis = 1 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<5x2x3xf32>
// CHECK: "glowgraph.gather"(%[[D]], %[[J]]) {axis = 1 : i64} : (tensor<5x4xf32>, tensor<i32>) -> tensor<5xf32>
// CHECK: "glowgraph.gather"(%[[T]], %[[J]]) {axis = 0 : i64} : (tensor<3x2xi32>, tensor<i32>) -> tensor<2xi32>
func.func @gather(%d: tensor<5x4xf32>, %i: tensor<2x3xi64>, %j: tensor<i32>, %t: tensor<3x2xi32>) -> (tensor<2x3x4xf32>, tensor<5x2x3xf32>, tensor<5xf32>, tensor<2xi32>) {
  %0 = "glowgraph.gather"(%d, %i) {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = "glowgraph.gather"(%d, %i) {axis = 1 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<5x2x3xf32>
  %2 = "glowgraph.gather"(%d, %j) {axis = 1 : i64} : (tensor<5x4xf32>, tensor<i32>) -> tensor<5xf32>
  %3 = "glowgraph.gather"(%t, %j) {axis = 0 : i64} : (tensor<3x2xi32>, tensor<i32>) -> tensor<2xi32>
  return %0, %1, %2, %3 : tensor<2x3x4xf32>, tensor<5x2x3xf32>, tensor<5xf32>, tensor<2xi32>
}

// -----

// ScatterND: indices [..., k] address data's first k dims; updates have the indices' dims but the last, then the
// data's dims from k on; the result has the data's type. i1 data takes reduction none.
// CHECK-LABEL: func.func @scatter_nd
// CHECK-SAME: (%[[D:.+]]: tensor<4x3xf32>, %[[I:.+]]: tensor<2x1xi64>, %[[U:.+]]: tensor<2x3xf32>, %[[E:.+]]: tensor<2x2xi32>, %[[V:.+]]: tensor<2xf32>, %[[M:.+]]: tensor<4x3xi1>, %[[W:.+]]: tensor<2x3xi1>)
// CHECK: "glowgraph.scatter_nd"(%[[D]], %[[I]], %[[U]]) {reduction = "none"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK: "glowgraph.scatter_nd"(%[[D]], %[[E]], %[[V]]) {reduction = "max"} : (tensor<4x3xf32>, tensor<2x2xi32>, tensor<2xf32>) -> tensor<4x3xf32>
// CHECK: "glowgraph.scatter_nd"(%[[M]], %[[I]], %[[W]]) {reduction = "none"} : (tensor<4x3xi1>, tensor<2x1xi64>, tensor<2x3xi1>) -> tensor<4x3xi1>
func.func @scatter_nd(%d: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>, %e: tensor<2x2xi32>, %v: tensor<2xf32>, %m: tensor<4x3xi1>, %w: tensor<2x3xi1>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xi1>) {
  %0 = "glowgraph.scatter_nd"(%d, %i, %u) {reduction = "none"} : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %1 = "glowgraph.scatter_nd"(%d, %e, %v) {reduction = "max"} : (tensor<4x3xf32>, tensor<2x2xi32>, tensor<2xf32>) -> tensor<4x3xf32>
  %2 = "glowgraph.scatter_nd"(%m, %i, %w) {reduction = "none"} : (tensor<4x3xi1>, tensor<2x1xi64>, tensor<2x3xi1>) -> tensor<4x3xi1>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xi1>
}

// -----

// Constant folding evaluates the data movement nodes like numpy (negative gather indices count from the end).
// RUN: glow-opt %s --split-input-file --glowgraph-constant-fold | FileCheck %s --check-prefix=FOLD
// FOLD-LABEL: func.func @fold
// FOLD-DAG: "glowgraph.constant"() {value = dense<[1, 2, 3, 4, 5]> : tensor<5xi64>}
// FOLD-DAG: "glowgraph.constant"() {value = dense<[4, 2]> : tensor<2xi64>}
// FOLD-DAG: "glowgraph.constant"() {value = dense<[5, 1]> : tensor<2xi64>}
func.func @fold(%x: tensor<5xi64>, %y: tensor<2xi64>) -> (tensor<5xi64>, tensor<2xi64>, tensor<2xi64>) {
  %a = "glowgraph.constant"() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %b = "glowgraph.constant"() {value = dense<[4, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %i = "glowgraph.constant"() {value = dense<[-2, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "glowgraph.concat"(%a, %b) {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<5xi64>
  %1 = "glowgraph.gather"(%0, %i) {axis = 0 : i64} : (tensor<5xi64>, tensor<2xi64>) -> tensor<2xi64>
  %2 = "glowgraph.slice"(%0) {starts = array<i64: 4>, sizes = array<i64: 2>, steps = array<i64: -4>} : (tensor<5xi64>) -> tensor<2xi64>
  %3 = "glowgraph.add"(%x, %0) : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  %4 = "glowgraph.add"(%y, %1) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %5 = "glowgraph.add"(%y, %2) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %3, %4, %5 : tensor<5xi64>, tensor<2xi64>, tensor<2xi64>
}

// -----

// Folding a scatter_nd applies the updates in order: a negative index counts from the end, a later write wins,
// an index outside its dim writes nothing.
// FOLD-LABEL: func.func @fold_scatter
// FOLD: "glowgraph.constant"() {value = dense<[7, 2, 9, 4]> : tensor<4xi64>}
func.func @fold_scatter(%x: tensor<4xi64>) -> tensor<4xi64> {
  %d = "glowgraph.constant"() {value = dense<[1, 2, 3, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %i = "glowgraph.constant"() {value = dense<[[0], [-2], [2], [4]]> : tensor<4x1xi64>} : () -> tensor<4x1xi64>
  %u = "glowgraph.constant"() {value = dense<[7, 8, 9, 10]> : tensor<4xi64>} : () -> tensor<4xi64>
  %0 = "glowgraph.scatter_nd"(%d, %i, %u) {reduction = "none"} : (tensor<4xi64>, tensor<4x1xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = "glowgraph.add"(%x, %0) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %1 : tensor<4xi64>
}
