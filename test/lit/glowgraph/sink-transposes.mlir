// RUN: glow-opt %s --split-input-file --glowgraph-sink-transposes | FileCheck %s

// Transpose(Transpose(x)) -> x when the shuffles compose to the identity.
// CHECK-LABEL: func.func @cancel
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x4x5xf32>)
// CHECK-NOT: "glowgraph.transpose"
// CHECK: return %[[X]]
func.func @cancel(%x: tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 0, 2, 3, 1>} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
  %1 = "glowgraph.transpose"(%0) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
  return %1 : tensor<1x3x4x5xf32>
}

// -----

// Otherwise the two merge into one transpose with the composed shuffle.
// CHECK-LABEL: func.func @merge
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.+]] = "glowgraph.transpose"(%[[X]]) {shuffle = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NOT: "glowgraph.transpose"
// CHECK: return %[[T]]
func.func @merge(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %1 = "glowgraph.transpose"(%0) {shuffle = array<i64: 2, 1, 0>} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  return %1 : tensor<4x2x3xf32>
}

// -----

// The importer's conv -> relu -> conv pattern: the NHWC -> NCHW transpose sinks below the relu and meets its inverse.
// CHECK-LABEL: func.func @between_nhwc_nodes
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x5x3xf32>)
// CHECK-NEXT: %[[R:.+]] = "glowgraph.relu"(%[[X]]) : (tensor<1x4x5x3xf32>) -> tensor<1x4x5x3xf32>
// CHECK-NEXT: return %[[R]]
func.func @between_nhwc_nodes(%x: tensor<1x4x5x3xf32>) -> tensor<1x4x5x3xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
  %1 = "glowgraph.relu"(%0) : (tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32>
  %2 = "glowgraph.transpose"(%1) {shuffle = array<i64: 0, 2, 3, 1>} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
  return %2 : tensor<1x4x5x3xf32>
}

// -----

// Unary(Transpose(x)) -> Transpose(Unary(x)), down a chain in one go; attributes (clip's bounds) are kept.
// CHECK-LABEL: func.func @unary_chain
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[S:.+]] = "glowgraph.sigmoid"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[C:.+]] = "glowgraph.clip"(%[[S]]) {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"(%[[C]]) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: return %[[T]]
func.func @unary_chain(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.sigmoid"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %2 = "glowgraph.clip"(%1) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}

// -----

// Binary(Transpose(a), Transpose(b)) -> Transpose(Binary(a, b)) for one shuffle.
// CHECK-LABEL: func.func @binary_same_shuffle
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[S:.+]] = "glowgraph.add"(%[[A]], %[[B]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"(%[[S]]) {shuffle = array<i64: 1, 0>}
// CHECK-NEXT: return %[[T]]
func.func @binary_same_shuffle(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.transpose"(%b) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = "glowgraph.add"(%0, %1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}

// -----

// The same transpose on both sides counts as one shuffle.
// CHECK-LABEL: func.func @binary_one_transpose_twice
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[M:.+]] = "glowgraph.mul"(%[[A]], %[[A]])
// CHECK-NEXT: "glowgraph.transpose"(%[[M]])
func.func @binary_one_transpose_twice(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.mul"(%0, %0) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// A splat operand becomes a splat of the untransposed shape (either side).
// CHECK-LABEL: func.func @binary_splat
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[S:.+]] = "glowgraph.splat"() {value = 2.000000e+00 : f32} : () -> tensor<2x3xf32>
// CHECK-NEXT: %[[D:.+]] = "glowgraph.sub"(%[[S]], %[[A]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"(%[[D]]) {shuffle = array<i64: 1, 0>}
// CHECK-NEXT: return %[[T]]
func.func @binary_splat(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %s = "glowgraph.splat"() {value = 2.0 : f32} : () -> tensor<3x2xf32>
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.sub"(%s, %0) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// A constant operand is transposed back at compile time.
// CHECK-LABEL: func.func @binary_constant
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>)
// CHECK: %[[C:.+]] = "glowgraph.constant"() {value = dense<{{\[}}[1.000000e+00, 3.000000e+00, 5.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>}
// CHECK-NEXT: %[[S:.+]] = "glowgraph.add"(%[[A]], %[[C]])
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"(%[[S]]) {shuffle = array<i64: 1, 0>}
// CHECK-NEXT: return %[[T]]
func.func @binary_constant(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %c = "glowgraph.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.add"(%0, %c) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}

// -----

// Negative: a transpose with another user stays where it is (sinking it would add a transpose).
// CHECK-LABEL: func.func @shared_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"(%[[X]])
// CHECK-NEXT: %[[R:.+]] = "glowgraph.relu"(%[[T]])
// CHECK-NEXT: return %[[T]], %[[R]]
func.func @shared_transpose(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.relu"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0, %1 : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// Negative: different shuffles, or a plain tensor on the other side, do not sink.
// CHECK-LABEL: func.func @binary_mismatch
// CHECK-COUNT-2: "glowgraph.transpose"
// CHECK-NEXT: "glowgraph.add"
// CHECK-NEXT: "glowgraph.transpose"
// CHECK-NEXT: "glowgraph.mul"
// CHECK-NEXT: return
func.func @binary_mismatch(%a: tensor<2x2x2xf32>, %b: tensor<2x2x2xf32>, %c: tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x2x2xf32>) {
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 1, 0, 2>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %1 = "glowgraph.transpose"(%b) {shuffle = array<i64: 0, 2, 1>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %2 = "glowgraph.add"(%0, %1) : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %3 = "glowgraph.transpose"(%b) {shuffle = array<i64: 2, 1, 0>} : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %4 = "glowgraph.mul"(%3, %c) : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  return %2, %4 : tensor<2x2x2xf32>, tensor<2x2x2xf32>
}

// -----

// Negative: nodes that are not elementwise (matmul, reshape, conv2d) keep their transposed operands.
// CHECK-LABEL: func.func @not_elementwise
// CHECK: %[[T:.+]] = "glowgraph.transpose"
// CHECK-NEXT: "glowgraph.matmul"(%[[T]], %[[T]])
// CHECK-NEXT: "glowgraph.reshape"(%[[T]])
func.func @not_elementwise(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<4xf32>) {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.matmul"(%0, %0) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.reshape"(%0) {shape = array<i64: 4>} : (tensor<2x2xf32>) -> tensor<4xf32>
  return %1, %2 : tensor<2x2xf32>, tensor<4xf32>
}

// -----

// A batch norm in NCHW between the layout transposes sinks: its channel axis becomes the NHWC one, the pair cancels.
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x3x4xf32>
// CHECK-NOT: "glowgraph.transpose"
// CHECK: "glowgraph.batch_norm"(%[[X]], {{.*}}) {channel_axis = 3 : i64
// CHECK-NOT: "glowgraph.transpose"
func.func @batch_norm(%x: tensor<1x2x3x4xf32>, %p: tensor<4xf32>) -> tensor<1x2x3x4xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %1 = "glowgraph.batch_norm"(%0, %p, %p, %p, %p) {channel_axis = 1, epsilon = 1.0e-5 : f32} : (tensor<1x4x2x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x3xf32>
  %2 = "glowgraph.transpose"(%1) {shuffle = array<i64: 0, 2, 3, 1>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x3x4xf32>
  return %2 : tensor<1x2x3x4xf32>
}

// -----

// A pad sinks with its pads moved to the dims they pad before the transpose.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x3x4xf32>)
// CHECK-NEXT: %[[P:.+]] = "glowgraph.pad"(%[[X]]) {pads = array<i64: 0, 1, 2, 0, 0, 3, 4, 0>
// CHECK-NEXT: "glowgraph.slice"(%[[P]])
func.func @pad(%x: tensor<1x2x3x4xf32>) -> tensor<1x5x9x4xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %1 = "glowgraph.pad"(%0) {pads = array<i64: 0, 0, 1, 2, 0, 0, 3, 4>, value = 0.0 : f32} : (tensor<1x4x2x3xf32>) -> tensor<1x4x6x9xf32>
  %2 = "glowgraph.transpose"(%1) {shuffle = array<i64: 0, 2, 3, 1>} : (tensor<1x4x6x9xf32>) -> tensor<1x6x9x4xf32>
  %3 = "glowgraph.slice"(%2) {starts = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 5, 9, 4>} : (tensor<1x6x9x4xf32>) -> tensor<1x5x9x4xf32>
  return %3 : tensor<1x5x9x4xf32>
}

// -----

// A concat of two transposes alike sinks: the NCHW channel concat becomes an NHWC one.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<1x2x2x3xf32>, %[[B:.+]]: tensor<1x2x2x5xf32>)
// CHECK: %[[C:.+]] = "glowgraph.concat"(%[[A]], %[[B]]) {axis = 3 : i64}
// CHECK-NEXT: %[[R:.+]] = "glowgraph.relu"(%[[C]])
// CHECK-NEXT: return %[[R]]
func.func @concat(%a: tensor<1x2x2x3xf32>, %b: tensor<1x2x2x5xf32>) -> tensor<1x2x2x8xf32> {
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x2x2x3xf32>) -> tensor<1x3x2x2xf32>
  %1 = "glowgraph.transpose"(%b) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x2x2x5xf32>) -> tensor<1x5x2x2xf32>
  %2 = "glowgraph.concat"(%0, %1) {axis = 1} : (tensor<1x3x2x2xf32>, tensor<1x5x2x2xf32>) -> tensor<1x8x2x2xf32>
  %3 = "glowgraph.transpose"(%2) {shuffle = array<i64: 0, 2, 3, 1>} : (tensor<1x8x2x2xf32>) -> tensor<1x2x2x8xf32>
  %4 = "glowgraph.relu"(%3) : (tensor<1x2x2x8xf32>) -> tensor<1x2x2x8xf32>
  return %4 : tensor<1x2x2x8xf32>
}

// -----

// Negative: a concat of one transposed and one plain tensor keeps its transpose.
// CHECK-LABEL: func.func @concat_mixed
// CHECK: %[[T:.+]] = "glowgraph.transpose"
// CHECK: "glowgraph.concat"(%[[T]],
func.func @concat_mixed(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<6x2xf32> {
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.slice"(%b) {starts = array<i64: 0, 0>, sizes = array<i64: 3, 2>} : (tensor<3x3xf32>) -> tensor<3x2xf32>
  %2 = "glowgraph.concat"(%0, %1) {axis = 0} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  return %2 : tensor<6x2xf32>
}

// -----

// A transpose that only moves dims of size 1 is a reshape (a view); one that moves data is not.
// CHECK-LABEL: func.func @no_data_moved
// CHECK: "glowgraph.reshape"(%{{.+}}) {shape = array<i64: 2, 1, 1, 8>}
// CHECK: "glowgraph.transpose"(%{{.+}}) {shuffle = array<i64: 1, 0, 2>}
func.func @no_data_moved(%x: tensor<2x8x1x1xf32>, %y: tensor<2x3x1xf32>) -> (tensor<2x1x1x8xf32>, tensor<3x2x1xf32>) {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 0, 2, 3, 1>} : (tensor<2x8x1x1xf32>) -> tensor<2x1x1x8xf32>
  %1 = "glowgraph.transpose"(%y) {shuffle = array<i64: 1, 0, 2>} : (tensor<2x3x1xf32>) -> tensor<3x2x1xf32>
  return %0, %1 : tensor<2x1x1x8xf32>, tensor<3x2x1xf32>
}

// -----

// A chain of transposes and reshapes holding two transposes or more permutes whole factors of the input's dims: one
// transpose of the input viewed in those factors does it. ShuffleNet's channel shuffle between NHWC convolutions
// (to NCHW, [N, G, C/G, H, W], swap G and C/G, back) is a transpose of each pixel's channels viewed [G, C/G].
// CHECK-LABEL: func.func @channel_shuffle
// CHECK-SAME:  (%[[X:.+]]: tensor<1x56x56x112xf32>)
// CHECK:       %[[V:.+]] = "glowgraph.reshape"(%[[X]]) {shape = array<i64: 3136, 4, 28>}
// CHECK:       %[[T:.+]] = "glowgraph.transpose"(%[[V]]) {shuffle = array<i64: 0, 2, 1>} : (tensor<3136x4x28xf32>) -> tensor<3136x28x4xf32>
// CHECK:       %[[R:.+]] = "glowgraph.reshape"(%[[T]]) {shape = array<i64: 1, 56, 56, 112>}
// CHECK-NOT:   glowgraph.transpose
// CHECK:       return %[[R]]
func.func @channel_shuffle(%x: tensor<1x56x56x112xf32>) -> tensor<1x56x56x112xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x56x56x112xf32>) -> tensor<1x112x56x56xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 1, 4, 28, 56, 56>} : (tensor<1x112x56x56xf32>) -> tensor<1x4x28x56x56xf32>
  %2 = "glowgraph.transpose"(%1) {shuffle = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x4x28x56x56xf32>) -> tensor<1x28x4x56x56xf32>
  %3 = "glowgraph.reshape"(%2) {shape = array<i64: 1, 112, 56, 56>} : (tensor<1x28x4x56x56xf32>) -> tensor<1x112x56x56xf32>
  %4 = "glowgraph.transpose"(%3) {shuffle = array<i64: 0, 2, 3, 1>} : (tensor<1x112x56x56xf32>) -> tensor<1x56x56x112xf32>
  return %4 : tensor<1x56x56x112xf32>
}

// -----

// A chain whose transposes undo each other through a split: no transpose left, the reshapes are views.
// CHECK-LABEL: func.func @split_between_inverse_transposes
// CHECK-NOT:   glowgraph.transpose
// CHECK:       return
func.func @split_between_inverse_transposes(%x: tensor<2x12x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 2, 0, 1>} : (tensor<2x12x5xf32>) -> tensor<5x2x12xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 5, 2, 3, 4>} : (tensor<5x2x12xf32>) -> tensor<5x2x3x4xf32>
  %2 = "glowgraph.transpose"(%1) {shuffle = array<i64: 1, 2, 3, 0>} : (tensor<5x2x3x4xf32>) -> tensor<2x3x4x5xf32>
  return %2 : tensor<2x3x4x5xf32>
}

// -----

// Negative: a reshape that cuts a factor unevenly ([2, 3] read as [3, 2]) is no permutation of whole factors, and a
// chain whose middle value has another user stops there: both transposes of each stay.
// CHECK-LABEL: func.func @kept
// CHECK:       "glowgraph.transpose"(%arg0)
// CHECK-NEXT:  "glowgraph.reshape"
// CHECK-NEXT:  "glowgraph.transpose"
// CHECK-NEXT:  "glowgraph.transpose"(%arg1)
// CHECK-NEXT:  "glowgraph.reshape"
// CHECK-NEXT:  "glowgraph.transpose"
// CHECK-NEXT:  return
func.func @kept(%x: tensor<2x3x4xf32>, %y: tensor<4x6xf32>) -> (tensor<4x2x3xf32>, tensor<6x4xf32>, tensor<4x6xf32>) {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 4, 3, 2>} : (tensor<4x2x3xf32>) -> tensor<4x3x2xf32>
  %2 = "glowgraph.transpose"(%1) {shuffle = array<i64: 0, 2, 1>} : (tensor<4x3x2xf32>) -> tensor<4x2x3xf32>
  %3 = "glowgraph.transpose"(%y) {shuffle = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %4 = "glowgraph.reshape"(%3) {shape = array<i64: 6, 4>} : (tensor<6x4xf32>) -> tensor<6x4xf32>
  %5 = "glowgraph.transpose"(%4) {shuffle = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  return %2, %3, %5 : tensor<4x2x3xf32>, tensor<6x4xf32>, tensor<4x6xf32>
}

// -----

// A transpose shared by elementwise nodes that meet again (SiLU: x * sigmoid(x)) between two NHWC nodes: the
// region runs on the untransposed x, one transpose after the mul meets its inverse, and none is left.
// CHECK-LABEL: func.func @silu_between_nhwc_nodes
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x5x3xf32>)
// CHECK-NEXT: %[[S:.+]] = "glowgraph.sigmoid"(%[[X]]) : (tensor<1x4x5x3xf32>) -> tensor<1x4x5x3xf32>
// CHECK-NEXT: %[[M:.+]] = "glowgraph.mul"(%[[X]], %[[S]]) : (tensor<1x4x5x3xf32>, tensor<1x4x5x3xf32>) -> tensor<1x4x5x3xf32>
// CHECK-NEXT: return %[[M]]
func.func @silu_between_nhwc_nodes(%x: tensor<1x4x5x3xf32>) -> tensor<1x4x5x3xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x4x5x3xf32>) -> tensor<1x3x4x5xf32>
  %1 = "glowgraph.sigmoid"(%0) : (tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32>
  %2 = "glowgraph.mul"(%0, %1) : (tensor<1x3x4x5xf32>, tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32>
  %3 = "glowgraph.transpose"(%2) {shuffle = array<i64: 0, 2, 3, 1>} : (tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32>
  return %3 : tensor<1x4x5x3xf32>
}

// -----

// Hard swish as the importer spells it (x * hard_sigmoid(x)), then an add of a splat inside the region: the splat is
// rebuilt in x's layout, one transpose is left after the add.
// CHECK-LABEL: func.func @region_with_splat
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[H:.+]] = "glowgraph.hard_sigmoid"(%[[X]]) {{.+}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[M:.+]] = "glowgraph.mul"(%[[X]], %[[H]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[C:.+]] = "glowgraph.splat"() {value = 1.000000e+00 : f32} : () -> tensor<2x3xf32>
// CHECK-NEXT: %[[A:.+]] = "glowgraph.add"(%[[M]], %[[C]]) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"(%[[A]]) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: return %[[T]]
func.func @region_with_splat(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.hard_sigmoid"(%0) {alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %2 = "glowgraph.mul"(%0, %1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %3 = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<3x2xf32>
  %4 = "glowgraph.add"(%2, %3) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %4 : tensor<3x2xf32>
}

// -----

// Negative: the branches never meet (two results leave the region): sinking would add a transpose.
// CHECK-LABEL: func.func @two_exits
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"
// CHECK-NEXT: "glowgraph.sigmoid"(%[[T]])
// CHECK-NEXT: "glowgraph.tanh"(%[[T]])
// CHECK-NOT: "glowgraph.transpose"
func.func @two_exits(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.sigmoid"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %2 = "glowgraph.tanh"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %1, %2 : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// Negative: the region reads a tensor from outside it (not the transpose, not a constant): nothing moves.
// CHECK-LABEL: func.func @outside_operand
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"
// CHECK-NEXT: %[[S:.+]] = "glowgraph.sigmoid"(%[[T]])
// CHECK-NEXT: %[[A:.+]] = "glowgraph.add"(%[[T]], %{{.+}})
// CHECK-NEXT: "glowgraph.mul"(%[[A]], %[[S]])
func.func @outside_operand(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.sigmoid"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %2 = "glowgraph.add"(%0, %y) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %3 = "glowgraph.mul"(%2, %1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %3 : tensor<3x2xf32>
}

// -----

// A splat that two members of the region share is rebuilt once, before the first of them in the block.
// CHECK-LABEL: func.func @shared_splat_in_region
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[S:.+]] = "glowgraph.splat"() {value = 1.000000e+00 : f32} : () -> tensor<2x3xf32>
// CHECK-NEXT: %[[A:.+]] = "glowgraph.add"(%[[X]], %[[S]])
// CHECK-NEXT: %[[B:.+]] = "glowgraph.mul"(%[[X]], %[[S]])
// CHECK-NEXT: %[[M:.+]] = "glowgraph.mul"(%[[A]], %[[B]])
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"(%[[M]])
// CHECK-NEXT: return %[[T]]
func.func @shared_splat_in_region(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %s = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<3x2xf32>
  %a = "glowgraph.add"(%0, %s) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %b = "glowgraph.mul"(%0, %s) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %m = "glowgraph.mul"(%a, %b) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %m : tensor<3x2xf32>
}

// -----

// Negative: an unused node reads the node where the branches meet (it comes after it): nothing moves.
// CHECK-LABEL: func.func @unused_reader_of_the_exit
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"
// CHECK-NEXT: %[[S:.+]] = "glowgraph.sigmoid"(%[[T]])
// CHECK-NEXT: %[[M:.+]] = "glowgraph.mul"(%[[T]], %[[S]])
// CHECK-NEXT: "glowgraph.tanh"(%[[M]])
// CHECK-NEXT: return %[[M]]
func.func @unused_reader_of_the_exit(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.sigmoid"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %2 = "glowgraph.mul"(%0, %1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %3 = "glowgraph.tanh"(%2) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}

// -----

// Negative: an unused node after the meeting node reads the transpose: nothing moves (and the sweep meets no erased
// node).
// CHECK-LABEL: func.func @unused_reader_after_the_exit
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"
// CHECK-NEXT: %[[S:.+]] = "glowgraph.sigmoid"(%[[T]])
// CHECK-NEXT: %[[M:.+]] = "glowgraph.mul"(%[[T]], %[[S]])
// CHECK-NEXT: "glowgraph.tanh"(%[[T]])
// CHECK-NEXT: return %[[M]]
func.func @unused_reader_after_the_exit(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.sigmoid"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  %2 = "glowgraph.mul"(%0, %1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %3 = "glowgraph.tanh"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %2 : tensor<3x2xf32>
}
