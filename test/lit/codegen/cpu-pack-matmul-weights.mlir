// cpu-pack-matmul-weights: the constant weights [K, N] of a fully_connected or matmul whose tile class wants B in
// column panels (AVX2: 8 rows or more, N more than one panel of 16) are laid out [N/16, K, 16] at compile time; the
// node's result type stays, or where N is no whole panels the node is padded to them and its product sliced; weights of
// less than a panel and no whole vectors are padded to whole vectors where their tiles cost less so.
// RUN: glow-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(cpu-pack-matmul-weights{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s
// RUN: glow-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(cpu-pack-matmul-weights{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX512

// CHECK-LABEL: func.func @packed
// CHECK: %[[W:.+]] = "glowgraph.constant"() {value = dense<1.000000e+00> : tensor<4x32x16xf32>}
// CHECK: "glowgraph.fully_connected"(%{{.+}}, %[[W]], %{{.+}}) : (tensor<64x32xf32>, tensor<4x32x16xf32>, tensor<64xf32>) -> tensor<64x64xf32>
// CHECK: %[[V:.+]] = "glowgraph.constant"() {value = dense<2.000000e+00> : tensor<4x32x16xf32>}
// CHECK: "glowgraph.matmul"(%{{.+}}, %[[V]]) : (tensor<64x32xf32>, tensor<4x32x16xf32>) -> tensor<64x64xf32>
// AVX512-LABEL: func.func @packed
// AVX512-NOT: x{{[0-9]+}}x16xf32>
// AVX512: return
func.func @packed(%x: tensor<64x32xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<32x64xf32>} : () -> tensor<32x64xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<64xf32>} : () -> tensor<64xf32>
  %v = "glowgraph.constant"() {value = dense<2.0> : tensor<32x64xf32>} : () -> tensor<32x64xf32>
  %0 = "glowgraph.fully_connected"(%x, %w, %b) : (tensor<64x32xf32>, tensor<32x64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
  %1 = "glowgraph.matmul"(%x, %v) : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  return %0, %1 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Negative: weights known only at run time, fewer than 8 rows (a matrix-vector tile reads B's rows as they are),
// N of no whole panels that padding would grow by more than an eighth (40), and a single panel (16) keep [K, N].
// CHECK-LABEL: func.func @kept
// CHECK-NOT: x{{[0-9]+}}x16xf32>
// CHECK: return
func.func @kept(%x: tensor<64x32xf32>, %s: tensor<4x32xf32>, %v: tensor<32x64xf32>) -> (tensor<64x64xf32>, tensor<4x64xf32>, tensor<64x40xf32>, tensor<64x16xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<32x64xf32>} : () -> tensor<32x64xf32>
  %w40 = "glowgraph.constant"() {value = dense<1.0> : tensor<32x40xf32>} : () -> tensor<32x40xf32>
  %w16 = "glowgraph.constant"() {value = dense<1.0> : tensor<32x16xf32>} : () -> tensor<32x16xf32>
  %0 = "glowgraph.matmul"(%x, %v) : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %1 = "glowgraph.matmul"(%s, %w) : (tensor<4x32xf32>, tensor<32x64xf32>) -> tensor<4x64xf32>
  %2 = "glowgraph.matmul"(%x, %w40) : (tensor<64x32xf32>, tensor<32x40xf32>) -> tensor<64x40xf32>
  %3 = "glowgraph.matmul"(%x, %w16) : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %0, %1, %2, %3 : tensor<64x64xf32>, tensor<4x64xf32>, tensor<64x40xf32>, tensor<64x16xf32>
}

// -----

// One row (batch 1): the row class packs too, in panels of its register tile's width (AVX2 64, AVX-512 128), so that
// a tile streams one contiguous run of B. N = 1000 is no whole number of panels: the weights are padded with zero
// columns to 1024, the bias with zeros, and the product sliced back to 1000 columns.
// CHECK-LABEL: func.func @one_row
// CHECK: "glowgraph.fully_connected"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x64xf32>, tensor<4x64x64xf32>, tensor<256xf32>) -> tensor<1x256xf32>
// CHECK: %[[WIDE:.+]] = "glowgraph.fully_connected"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x64xf32>, tensor<16x64x64xf32>, tensor<1024xf32>) -> tensor<1x1024xf32>
// CHECK: "glowgraph.slice"(%[[WIDE]]) {sizes = array<i64: 1, 1000>, starts = array<i64: 0, 0>} : (tensor<1x1024xf32>) -> tensor<1x1000xf32>
// AVX512-LABEL: func.func @one_row
// AVX512: "glowgraph.fully_connected"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x64xf32>, tensor<2x64x128xf32>, tensor<256xf32>) -> tensor<1x256xf32>
// AVX512: %[[WIDE:.+]] = "glowgraph.fully_connected"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<1x64xf32>, tensor<8x64x128xf32>, tensor<1024xf32>) -> tensor<1x1024xf32>
// AVX512: "glowgraph.slice"(%[[WIDE]]) {sizes = array<i64: 1, 1000>, starts = array<i64: 0, 0>} : (tensor<1x1024xf32>) -> tensor<1x1000xf32>
func.func @one_row(%x: tensor<1x64xf32>) -> (tensor<1x256xf32>, tensor<1x1000xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<64x256xf32>} : () -> tensor<64x256xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<256xf32>} : () -> tensor<256xf32>
  %v = "glowgraph.constant"() {value = dense<1.0> : tensor<64x1000xf32>} : () -> tensor<64x1000xf32>
  %c = "glowgraph.constant"() {value = dense<0.5> : tensor<1000xf32>} : () -> tensor<1000xf32>
  %0 = "glowgraph.fully_connected"(%x, %w, %b) : (tensor<1x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<1x256xf32>
  %1 = "glowgraph.fully_connected"(%x, %v, %c) : (tensor<1x64xf32>, tensor<64x1000xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  return %0, %1 : tensor<1x256xf32>, tensor<1x1000xf32>
}

// -----

// Padded to whole panels: 60 columns are 4 panels of 16 (AVX2) or 2 of 32 (AVX-512) less 4; the weights' padding
// columns and the bias's padding are zeros, the fused activation stays on the padded node, a matmul pads the same.
// CHECK-LABEL: func.func @padded
// CHECK: %[[W:.+]] = "glowgraph.constant"() {value = dense<{{\[\[\[1\.000000e\+00(, 1\.000000e\+00){15}\]\], \[\[1\.000000e\+00(, 1\.000000e\+00){15}\]\], \[\[1\.000000e\+00(, 1\.000000e\+00){15}\]\], \[\[1\.000000e\+00(, 1\.000000e\+00){11}(, 0\.000000e\+00){4}\]\]\]}}> : tensor<4x1x16xf32>}
// CHECK: %[[B:.+]] = "glowgraph.constant"() {value = dense<{{\[5\.000000e-01(, 5\.000000e-01){59}(, 0\.000000e\+00){4}\]}}> : tensor<64xf32>}
// CHECK: %[[FC:.+]] = "glowgraph.fully_connected"(%{{.+}}, %[[W]], %[[B]]) {activation = "relu"} : (tensor<64x1xf32>, tensor<4x1x16xf32>, tensor<64xf32>) -> tensor<64x64xf32>
// CHECK: "glowgraph.slice"(%[[FC]]) {sizes = array<i64: 64, 60>, starts = array<i64: 0, 0>} : (tensor<64x64xf32>) -> tensor<64x60xf32>
// CHECK: %[[MM:.+]] = "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<64x1xf32>, tensor<4x1x16xf32>) -> tensor<64x64xf32>
// CHECK: "glowgraph.slice"(%[[MM]]) {sizes = array<i64: 64, 60>, starts = array<i64: 0, 0>} : (tensor<64x64xf32>) -> tensor<64x60xf32>
// AVX512-LABEL: func.func @padded
// AVX512: "glowgraph.fully_connected"(%{{.+}}, %{{.+}}, %{{.+}}) {activation = "relu"} : (tensor<64x1xf32>, tensor<2x1x32xf32>, tensor<64xf32>) -> tensor<64x64xf32>
// AVX512: "glowgraph.slice"
// AVX512: "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<64x1xf32>, tensor<2x1x32xf32>) -> tensor<64x64xf32>
// AVX512: "glowgraph.slice"
func.func @padded(%x: tensor<64x1xf32>) -> (tensor<64x60xf32>, tensor<64x60xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<1x60xf32>} : () -> tensor<1x60xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<60xf32>} : () -> tensor<60xf32>
  %0 = "glowgraph.fully_connected"(%x, %w, %b) {activation = "relu"} : (tensor<64x1xf32>, tensor<1x60xf32>, tensor<60xf32>) -> tensor<64x60xf32>
  %1 = "glowgraph.matmul"(%x, %w) : (tensor<64x1xf32>, tensor<1x60xf32>) -> tensor<64x60xf32>
  return %0, %1 : tensor<64x60xf32>, tensor<64x60xf32>
}

// -----

// Negative: padding 40 columns to 48 (AVX2) or 64 (AVX-512) would add more than one column in eight, and a
// fully_connected whose bias is known only at run time keeps [K, N] (its bias cannot be padded at compile time).
// CHECK-LABEL: func.func @not_padded
// CHECK-NOT: glowgraph.slice
// CHECK: "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<64x32xf32>, tensor<32x40xf32>) -> tensor<64x40xf32>
// CHECK: "glowgraph.fully_connected"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<64x32xf32>, tensor<32x60xf32>, tensor<60xf32>) -> tensor<64x60xf32>
// CHECK-NOT: glowgraph.slice
// AVX512-LABEL: func.func @not_padded
// AVX512-NOT: glowgraph.slice
// AVX512: return
func.func @not_padded(%x: tensor<64x32xf32>, %b: tensor<60xf32>) -> (tensor<64x40xf32>, tensor<64x60xf32>) {
  %w40 = "glowgraph.constant"() {value = dense<1.0> : tensor<32x40xf32>} : () -> tensor<32x40xf32>
  %w60 = "glowgraph.constant"() {value = dense<1.0> : tensor<32x60xf32>} : () -> tensor<32x60xf32>
  %0 = "glowgraph.matmul"(%x, %w40) : (tensor<64x32xf32>, tensor<32x40xf32>) -> tensor<64x40xf32>
  %1 = "glowgraph.fully_connected"(%x, %w60, %b) : (tensor<64x32xf32>, tensor<32x60xf32>, tensor<60xf32>) -> tensor<64x60xf32>
  return %0, %1 : tensor<64x40xf32>, tensor<64x60xf32>
}

// -----

// Less than a panel and no whole vectors (a 10-class head): padded with zero columns to whole vectors (16 on both ISAs:
// one tile of two ymm or one zmm, not tiles of 8 and 2 columns), unpacked, the bias with zeros, the product sliced.
// CHECK-LABEL: func.func @ten_classes
// CHECK: %[[W:.+]] = "glowgraph.constant"() {value = dense<"0x{{((0000803F){10}(00000000){6})+}}"> : tensor<64x16xf32>}
// CHECK: %[[B:.+]] = "glowgraph.constant"() {value = dense<{{\[5\.000000e-01(, 5\.000000e-01){9}(, 0\.000000e\+00){6}\]}}> : tensor<16xf32>}
// CHECK: %[[FC:.+]] = "glowgraph.fully_connected"(%{{.+}}, %[[W]], %[[B]]) : (tensor<64x64xf32>, tensor<64x16xf32>, tensor<16xf32>) -> tensor<64x16xf32>
// CHECK: "glowgraph.slice"(%[[FC]]) {sizes = array<i64: 64, 10>, starts = array<i64: 0, 0>} : (tensor<64x16xf32>) -> tensor<64x10xf32>
// CHECK: %[[ROW:.+]] = "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<1x64xf32>, tensor<64x16xf32>) -> tensor<1x16xf32>
// CHECK: "glowgraph.slice"(%[[ROW]]) {sizes = array<i64: 1, 10>, starts = array<i64: 0, 0>} : (tensor<1x16xf32>) -> tensor<1x10xf32>
// AVX512-LABEL: func.func @ten_classes
// AVX512: "glowgraph.fully_connected"(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<64x64xf32>, tensor<64x16xf32>, tensor<16xf32>) -> tensor<64x16xf32>
// AVX512: "glowgraph.slice"
// AVX512: "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<1x64xf32>, tensor<64x16xf32>) -> tensor<1x16xf32>
// AVX512: "glowgraph.slice"
func.func @ten_classes(%x: tensor<64x64xf32>, %r: tensor<1x64xf32>) -> (tensor<64x10xf32>, tensor<1x10xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<64x10xf32>} : () -> tensor<64x10xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<10xf32>} : () -> tensor<10xf32>
  %0 = "glowgraph.fully_connected"(%x, %w, %b) : (tensor<64x64xf32>, tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
  %1 = "glowgraph.matmul"(%r, %w) : (tensor<1x64xf32>, tensor<64x10xf32>) -> tensor<1x10xf32>
  return %0, %1 : tensor<64x10xf32>, tensor<1x10xf32>
}

// -----

// 20 columns: AVX2 runs them as tiles of 16 and 4 columns, no dearer than 16 and 8, and keeps them; AVX-512 pads them
// to 32 (one tile of two zmm, not tiles of 16 and 4). One column stays on both (a single vector either way), and 10
// columns of a reduction shorter than 64 (the FMAs saved no share of the call).
// CHECK-LABEL: func.func @twenty
// CHECK-NOT: glowgraph.slice
// CHECK: "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<64x64xf32>, tensor<64x20xf32>) -> tensor<64x20xf32>
// CHECK: "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<64x64xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
// CHECK: "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<64x32xf32>, tensor<32x10xf32>) -> tensor<64x10xf32>
// CHECK-NOT: glowgraph.slice
// AVX512-LABEL: func.func @twenty
// AVX512: %[[WIDE:.+]] = "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
// AVX512: "glowgraph.slice"(%[[WIDE]]) {sizes = array<i64: 64, 20>, starts = array<i64: 0, 0>} : (tensor<64x32xf32>) -> tensor<64x20xf32>
// AVX512: "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<64x64xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
// AVX512: "glowgraph.matmul"(%{{.+}}, %{{.+}}) : (tensor<64x32xf32>, tensor<32x10xf32>) -> tensor<64x10xf32>
// AVX512-NOT: glowgraph.slice
func.func @twenty(%x: tensor<64x64xf32>, %s: tensor<64x32xf32>) -> (tensor<64x20xf32>, tensor<64x1xf32>, tensor<64x10xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<64x20xf32>} : () -> tensor<64x20xf32>
  %v = "glowgraph.constant"() {value = dense<1.0> : tensor<64x1xf32>} : () -> tensor<64x1xf32>
  %u = "glowgraph.constant"() {value = dense<1.0> : tensor<32x10xf32>} : () -> tensor<32x10xf32>
  %0 = "glowgraph.matmul"(%x, %w) : (tensor<64x64xf32>, tensor<64x20xf32>) -> tensor<64x20xf32>
  %1 = "glowgraph.matmul"(%x, %v) : (tensor<64x64xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
  %2 = "glowgraph.matmul"(%s, %u) : (tensor<64x32xf32>, tensor<32x10xf32>) -> tensor<64x10xf32>
  return %0, %1, %2 : tensor<64x20xf32>, tensor<64x1xf32>, tensor<64x10xf32>
}

// -----

// Invalid: packed weights of 2 panels of 16 give 32 columns, not the 64 of the result type.
func.func @invalid(%x: tensor<64x32xf32>, %w: tensor<2x32x16xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{result type tensor<64x64xf32> does not match the inferred type tensor<64x32xf32>}}
  %0 = "glowgraph.matmul"(%x, %w) : (tensor<64x32xf32>, tensor<2x32x16xf32>) -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
