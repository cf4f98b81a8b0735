// cpu-pack-conv-filters: constant conv2d filters with whole blocks of 32 output channels (more than one; else whole
// vectors, in blocks of one) and at least 16 input channels, 32 KiB or more in all, are laid out [F/B, KH, KW, C, B]
// at compile time; the convolution's result type stays.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-pack-conv-filters{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-pack-conv-filters{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-pack-conv-filters{target-cpu=alderlake target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=WIDE

// CHECK-LABEL: func.func @packed
// CHECK: %[[W:.+]] = "glowgraph.constant"() {value = dense<1.000000e+00> : tensor<2x3x3x16x32xf32>}
// CHECK: "glowgraph.conv2d"(%{{.+}}, %[[W]], %{{.+}}) {{.+}} : (tensor<1x8x8x16xf32>, tensor<2x3x3x16x32xf32>, tensor<64xf32>) -> tensor<1x6x6x64xf32>
func.func @packed(%x: tensor<1x8x8x16xf32>) -> tensor<1x6x6x64xf32> {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x16x64xf32>} : () -> tensor<3x3x16x64xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<64xf32>} : () -> tensor<64xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x16xf32>, tensor<3x3x16x64xf32>, tensor<64xf32>) -> tensor<1x6x6x64xf32>
  return %0 : tensor<1x6x6x64xf32>
}

// -----

// Negative: one block of 32, a filter known only at run time, fewer than 16 input channels, and a dilated
// convolution keep their HWCF filters.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tensor<{{[0-9]+}}x{{[0-9]+}}x{{[0-9]+}}x{{[0-9]+}}x32xf32>
// CHECK: return
func.func @kept(%x: tensor<1x8x8x16xf32>, %v: tensor<3x3x16x64xf32>, %y: tensor<1x8x8x8xf32>) -> (tensor<1x6x6x32xf32>, tensor<1x6x6x64xf32>, tensor<1x6x6x64xf32>, tensor<1x4x4x64xf32>) {
  %w32 = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x16x32xf32>} : () -> tensor<3x3x16x32xf32>
  %b32 = "glowgraph.constant"() {value = dense<0.5> : tensor<32xf32>} : () -> tensor<32xf32>
  %w8 = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x8x64xf32>} : () -> tensor<3x3x8x64xf32>
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x16x64xf32>} : () -> tensor<3x3x16x64xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<64xf32>} : () -> tensor<64xf32>
  %0 = "glowgraph.conv2d"(%x, %w32, %b32) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x16xf32>, tensor<3x3x16x32xf32>, tensor<32xf32>) -> tensor<1x6x6x32xf32>
  %1 = "glowgraph.conv2d"(%x, %v, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x16xf32>, tensor<3x3x16x64xf32>, tensor<64xf32>) -> tensor<1x6x6x64xf32>
  %2 = "glowgraph.conv2d"(%y, %w8, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x8xf32>, tensor<3x3x8x64xf32>, tensor<64xf32>) -> tensor<1x6x6x64xf32>
  %3 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 2>, group = 1} : (tensor<1x8x8x16xf32>, tensor<3x3x16x64xf32>, tensor<64xf32>) -> tensor<1x4x4x64xf32>
  return %0, %1, %2, %3 : tensor<1x6x6x32xf32>, tensor<1x6x6x64xf32>, tensor<1x6x6x64xf32>, tensor<1x4x4x64xf32>
}

// -----

// Negative: a filter under 32 KiB (1x1 16->96: 6 KiB) stays in L1 whole and keeps HWCF.
// CHECK-LABEL: func.func @small
// CHECK-NOT: x32xf32>
// CHECK: return
func.func @small(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x96xf32> {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x16x96xf32>} : () -> tensor<1x1x16x96xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<96xf32>} : () -> tensor<96xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x8x8x16xf32>, tensor<1x1x16x96xf32>, tensor<96xf32>) -> tensor<1x8x8x96xf32>
  return %0 : tensor<1x8x8x96xf32>
}

// -----

// For AVX2 blocks of 16 where the register tile is two vectors wide (OW 8: 4x16; OW 7: 4x16 and a last tile of 3x16),
// blocks of 8 where it is one, so that every filter line the tile reads is used whole; AVX-512 keeps 32.
// CHECK-LABEL: func.func @by_tile
// CHECK: tensor<2x3x3x32x32xf32>
// CHECK: tensor<2x3x3x32x32xf32>
// AVX2-LABEL: func.func @by_tile
// AVX2: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x10x10x32xf32>, tensor<4x3x3x32x16xf32>, tensor<64xf32>) -> tensor<1x8x8x64xf32>
// AVX2: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x9x9x32xf32>, tensor<4x3x3x32x16xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
func.func @by_tile(%x: tensor<1x10x10x32xf32>, %y: tensor<1x9x9x32xf32>) -> (tensor<1x8x8x64xf32>, tensor<1x7x7x64xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x32x64xf32>} : () -> tensor<3x3x32x64xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<64xf32>} : () -> tensor<64xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x10x10x32xf32>, tensor<3x3x32x64xf32>, tensor<64xf32>) -> tensor<1x8x8x64xf32>
  %1 = "glowgraph.conv2d"(%y, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x9x9x32xf32>, tensor<3x3x32x64xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
  return %0, %1 : tensor<1x8x8x64xf32>, tensor<1x7x7x64xf32>
}

// -----

// Filters that are whole vectors but no whole blocks pack in blocks of one vector: 208 = 13 x 16 on AVX-512 (13
// blocks of 16 on AVX2 too, its own block); 200 = 12.5 x 16 stays HWCF on AVX-512 and packs in 25 blocks of 8 on AVX2
// (tiles of pixels at 13x13 on haswell's 8-way L1: also in 2 chunks of 48 input channels, as @chunked below).
// CHECK-LABEL: func.func @one_vector_blocks
// CHECK: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x15x15x96xf32>, tensor<13x3x3x96x16xf32>, tensor<208xf32>) -> tensor<1x13x13x208xf32>
// CHECK: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x15x15x96xf32>, tensor<3x3x96x200xf32>, tensor<200xf32>) -> tensor<1x13x13x200xf32>
// AVX2-LABEL: func.func @one_vector_blocks
// AVX2: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x15x15x96xf32>, tensor<13x3x3x96x16xf32>, tensor<208xf32>) -> tensor<1x13x13x208xf32>
// AVX2: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x15x15x96xf32>, tensor<25x2x3x3x48x8xf32>, tensor<200xf32>) -> tensor<1x13x13x200xf32>
func.func @one_vector_blocks(%x: tensor<1x15x15x96xf32>) -> (tensor<1x13x13x208xf32>, tensor<1x13x13x200xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x96x208xf32>} : () -> tensor<3x3x96x208xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<208xf32>} : () -> tensor<208xf32>
  %v = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x96x200xf32>} : () -> tensor<3x3x96x200xf32>
  %c = "glowgraph.constant"() {value = dense<0.5> : tensor<200xf32>} : () -> tensor<200xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x15x15x96xf32>, tensor<3x3x96x208xf32>, tensor<208xf32>) -> tensor<1x13x13x208xf32>
  %1 = "glowgraph.conv2d"(%x, %v, %c) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x15x15x96xf32>, tensor<3x3x96x200xf32>, tensor<200xf32>) -> tensor<1x13x13x200xf32>
  return %0, %1 : tensor<1x13x13x208xf32>, tensor<1x13x13x200xf32>
}

// -----

// A block must stay in L2 (5/8 of it): one that would not is narrowed, down to one vector. 3x3x512 filters in blocks
// of 32 take 576 KiB, within skylake-avx512's 1 MiB L2; haswell's 256 KiB takes blocks of 8 (144 KiB), where 16
// (288 KiB) would not fit. A filter whose one-vector block would not fit either (3x3x2048: 576 KiB in blocks of 8,
// 1152 KiB in blocks of 16) keeps HWCF. (haswell's blocks of 8 for tiles of pixels at 7x7 come in 8 chunks of 64 input
// channels: @chunked below.)
// CHECK-LABEL: func.func @narrowed_to_l2
// CHECK: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x9x9x512xf32>, tensor<2x3x3x512x32xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
// CHECK: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x9x9x2048xf32>, tensor<3x3x2048x64xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
// AVX2-LABEL: func.func @narrowed_to_l2
// AVX2: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x9x9x512xf32>, tensor<8x8x3x3x64x8xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
// AVX2: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x9x9x2048xf32>, tensor<3x3x2048x64xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
func.func @narrowed_to_l2(%x: tensor<1x9x9x512xf32>, %y: tensor<1x9x9x2048xf32>) -> (tensor<1x7x7x64xf32>, tensor<1x7x7x64xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x512x64xf32>} : () -> tensor<3x3x512x64xf32>
  %v = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x2048x64xf32>} : () -> tensor<3x3x2048x64xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<64xf32>} : () -> tensor<64xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x9x9x512xf32>, tensor<3x3x512x64xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
  %1 = "glowgraph.conv2d"(%y, %v, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x9x9x2048xf32>, tensor<3x3x2048x64xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
  return %0, %1 : tensor<1x7x7x64xf32>, tensor<1x7x7x64xf32>
}

// -----

// On an 8-way L1 (haswell: 32 KiB) the nine taps of a 3x3 block outnumber the ways: where the tiles of pixels take
// the convolution (OW 14) the filter is also cut into chunks of 32 input channels, [F/B, C/32, 3, 3, 32, B] (18 KiB
// a chunk); the row tiles at OW 28 keep whole blocks. Negative: a 12-way L1 (alderlake, 48 KiB) and AVX-512's blocks
// of 32 (a chunk of 32 channels would not fit 32 KiB) keep whole blocks.
// AVX2-LABEL: func.func @chunked
// AVX2: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x14x14x64xf32>, tensor<4x2x3x3x32x16xf32>, tensor<64xf32>) -> tensor<1x14x14x64xf32>
// AVX2: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x28x28x64xf32>, tensor<4x3x3x64x16xf32>, tensor<64xf32>) -> tensor<1x28x28x64xf32>
// WIDE-LABEL: func.func @chunked
// WIDE: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x14x14x64xf32>, tensor<4x3x3x64x16xf32>, tensor<64xf32>) -> tensor<1x14x14x64xf32>
// WIDE: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} : (tensor<1x28x28x64xf32>, tensor<4x3x3x64x16xf32>, tensor<64xf32>) -> tensor<1x28x28x64xf32>
// CHECK-LABEL: func.func @chunked
// CHECK-COUNT-2: tensor<2x3x3x64x32xf32>, tensor<64xf32>
func.func @chunked(%x: tensor<1x14x14x64xf32>, %y: tensor<1x28x28x64xf32>) -> (tensor<1x14x14x64xf32>, tensor<1x28x28x64xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x64x64xf32>} : () -> tensor<3x3x64x64xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<64xf32>} : () -> tensor<64xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x14x14x64xf32>, tensor<3x3x64x64xf32>, tensor<64xf32>) -> tensor<1x14x14x64xf32>
  %1 = "glowgraph.conv2d"(%y, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x28x28x64xf32>, tensor<3x3x64x64xf32>, tensor<64xf32>) -> tensor<1x28x28x64xf32>
  return %0, %1 : tensor<1x14x14x64xf32>, tensor<1x28x28x64xf32>
}

// -----

// Output channels half a vector short of whole filter blocks (on AVX-512 120 of 128, blocks of 32; on AVX2 60 of 64,
// blocks of 16) are computed padded with zero filters and zero biases, packed, the activation kept, and the first F
// channels sliced out; F no more than half a vector short of a block only (AVX-512 pads 60 by 4 too).
// CHECK-LABEL: func.func @padded_to_blocks
// CHECK: %[[C:.+]] = "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {activation = "relu", {{.+}}} : (tensor<1x15x15x64xf32>, tensor<4x3x3x64x32xf32>, tensor<128xf32>) -> tensor<1x13x13x128xf32>
// CHECK: "glowgraph.slice"(%[[C]]) {sizes = array<i64: 1, 13, 13, 120>, starts = array<i64: 0, 0, 0, 0>} : (tensor<1x13x13x128xf32>) -> tensor<1x13x13x120xf32>
// CHECK: %[[D:.+]] = "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} -> tensor<1x13x13x64xf32>
// CHECK: "glowgraph.slice"(%[[D]]) {sizes = array<i64: 1, 13, 13, 60>, {{.+}}} : (tensor<1x13x13x64xf32>) -> tensor<1x13x13x60xf32>
// AVX2-LABEL: func.func @padded_to_blocks
// AVX2: "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {activation = "relu", {{.+}}} : (tensor<1x15x15x64xf32>, tensor<15x3x3x64x8xf32>, tensor<120xf32>) -> tensor<1x13x13x120xf32>
// AVX2-NOT: tensor<1x13x13x128xf32>
// AVX2: %[[D:.+]] = "glowgraph.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}) {{.+}} -> tensor<1x13x13x64xf32>
// AVX2: "glowgraph.slice"(%[[D]]) {sizes = array<i64: 1, 13, 13, 60>, {{.+}}} : (tensor<1x13x13x64xf32>) -> tensor<1x13x13x60xf32>
func.func @padded_to_blocks(%x: tensor<1x15x15x64xf32>) -> (tensor<1x13x13x120xf32>, tensor<1x13x13x60xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x64x120xf32>} : () -> tensor<3x3x64x120xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<120xf32>} : () -> tensor<120xf32>
  %v = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x64x60xf32>} : () -> tensor<3x3x64x60xf32>
  %c = "glowgraph.constant"() {value = dense<0.5> : tensor<60xf32>} : () -> tensor<60xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, activation = "relu"} : (tensor<1x15x15x64xf32>, tensor<3x3x64x120xf32>, tensor<120xf32>) -> tensor<1x13x13x120xf32>
  %1 = "glowgraph.conv2d"(%x, %v, %c) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x15x15x64xf32>, tensor<3x3x64x60xf32>, tensor<60xf32>) -> tensor<1x13x13x60xf32>
  return %0, %1 : tensor<1x13x13x120xf32>, tensor<1x13x13x60xf32>
}

// -----

// Negative: more than half a vector short of a block (AVX-512 72 and 40 of 96 and 64: 24 channels), a bias known
// only at run time, a grouped convolution, one whose output an elementwise op reads (a residual add, which would
// leave the convolution's loops), and a stem of 3 input channels (27 multiply-adds an output element, too few to pay
// for the copy of the sliced output) keep their output channels.
// CHECK-LABEL: func.func @not_padded
// CHECK-NOT: glowgraph.slice
// CHECK: return
// AVX2-LABEL: func.func @not_padded
// AVX2-NOT: glowgraph.slice
// AVX2: return
func.func @not_padded(%x: tensor<1x15x15x64xf32>, %b: tensor<60xf32>, %s: tensor<1x13x13x60xf32>, %rgb: tensor<1x15x15x3xf32>) -> (tensor<1x13x13x72xf32>, tensor<1x13x13x40xf32>, tensor<1x13x13x60xf32>, tensor<1x13x13x60xf32>, tensor<1x13x13x60xf32>, tensor<1x13x13x120xf32>) {
  %w72 = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x64x72xf32>} : () -> tensor<3x3x64x72xf32>
  %b72 = "glowgraph.constant"() {value = dense<0.5> : tensor<72xf32>} : () -> tensor<72xf32>
  %w40 = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x64x40xf32>} : () -> tensor<3x3x64x40xf32>
  %b40 = "glowgraph.constant"() {value = dense<0.5> : tensor<40xf32>} : () -> tensor<40xf32>
  %w60 = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x64x60xf32>} : () -> tensor<3x3x64x60xf32>
  %g60 = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x16x60xf32>} : () -> tensor<3x3x16x60xf32>
  %c60 = "glowgraph.constant"() {value = dense<0.5> : tensor<60xf32>} : () -> tensor<60xf32>
  %0 = "glowgraph.conv2d"(%x, %w72, %b72) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x15x15x64xf32>, tensor<3x3x64x72xf32>, tensor<72xf32>) -> tensor<1x13x13x72xf32>
  %1 = "glowgraph.conv2d"(%x, %w40, %b40) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x15x15x64xf32>, tensor<3x3x64x40xf32>, tensor<40xf32>) -> tensor<1x13x13x40xf32>
  %2 = "glowgraph.conv2d"(%x, %w60, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x15x15x64xf32>, tensor<3x3x64x60xf32>, tensor<60xf32>) -> tensor<1x13x13x60xf32>
  %3 = "glowgraph.conv2d"(%x, %g60, %c60) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4} : (tensor<1x15x15x64xf32>, tensor<3x3x16x60xf32>, tensor<60xf32>) -> tensor<1x13x13x60xf32>
  %4 = "glowgraph.conv2d"(%x, %w60, %c60) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x15x15x64xf32>, tensor<3x3x64x60xf32>, tensor<60xf32>) -> tensor<1x13x13x60xf32>
  %5 = "glowgraph.add"(%4, %s) : (tensor<1x13x13x60xf32>, tensor<1x13x13x60xf32>) -> tensor<1x13x13x60xf32>
  %w120 = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x3x120xf32>} : () -> tensor<3x3x3x120xf32>
  %b120 = "glowgraph.constant"() {value = dense<0.5> : tensor<120xf32>} : () -> tensor<120xf32>
  %6 = "glowgraph.conv2d"(%rgb, %w120, %b120) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x15x15x3xf32>, tensor<3x3x3x120xf32>, tensor<120xf32>) -> tensor<1x13x13x120xf32>
  return %0, %1, %2, %3, %5, %6 : tensor<1x13x13x72xf32>, tensor<1x13x13x40xf32>, tensor<1x13x13x60xf32>, tensor<1x13x13x60xf32>, tensor<1x13x13x60xf32>, tensor<1x13x13x120xf32>
}
