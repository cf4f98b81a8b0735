// cpu-spread-conv-inputs: a glowir conv2d on a packed filter whose register tiles of whole output rows would read
// input pixels that share an L1 set, where a copy with pixels one cache line longer pays (conv.blocked_plan's
// spread), gets glow.spread_channels = 16; before glowir-plan-memory, which places its bordered input, now 16
// channels wider a pixel, in the activations region: the kernel reads that buffer and copies nothing at run time.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-spread-conv-inputs{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-spread-conv-inputs{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-spread-conv-inputs{target-cpu=alderlake target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=WAYS12
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-spread-conv-inputs{threads=16 parallel-flops=1000000 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=THREADS
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-spread-conv-inputs{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu},glowir-plan-memory,convert-glowir-to-linalg)' | FileCheck %s --check-prefix=PLANNED

// AVX-512 (blocks of 32 filters, tiles of two whole rows of 7) on an 8-way L1: 3x3 stride 2 from 256 channels puts
// the 14 pixels of a tile 2 KiB apart, two to a set. 12 ways hold them: no spread there. AVX2 takes no tiles of whole
// rows on blocks of 32 (four vectors a pixel): nothing to spread. On sixteen threads each keeps 7 MFLOP of it, enough
// for tiles of whole rows (WHOLE_ROW_THREAD_FLOPS). Planned, the bordered input is a view of the activations of 272
// channels a pixel; the convolution reads its first 256.
// CHECK-LABEL: func.func @stride_2_from_256
// CHECK:       "glowir.conv2d"({{.+}}) {dilations = array<i64: 1, 1>, glow.spread_channels = 16 : i64, group = 1 : i64
// AVX2-LABEL:  func.func @stride_2_from_256
// AVX2-NOT:    glow.spread_channels
// AVX2:        return
// WAYS12-LABEL: func.func @stride_2_from_256
// WAYS12-NOT:  glow.spread_channels
// WAYS12:      return
// THREADS-LABEL: func.func @stride_2_from_256
// THREADS:     glow.spread_channels = 16
// PLANNED-LABEL: func.func @stride_2_from_256
// PLANNED:     %[[WIDE:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<{{[0-9]+}}xi8> to memref<1x16x16x272xf32>
// PLANNED:     %[[INPUT:.+]] = memref.subview %[[WIDE]][0, 0, 0, 0] [1, 16, 16, 256] [1, 1, 1, 1]
// PLANNED-SAME: to memref<1x16x16x256xf32, strided<[69632, 4352, 272, 1]>>
// PLANNED:     memref.subview %[[INPUT]][0, 1, 1, 0] [1, 14, 14, 256] [1, 1, 1, 1]
// PLANNED:     linalg.generic {{.+}} ins(%[[INPUT]], %{{.+}} : memref<1x16x16x256xf32, strided<[69632, 4352, 272, 1]>>, memref<16x3x3x256x32xf32>) {{.+}}glow.blocked_conv
// PLANNED-NOT: memref.alloc
// PLANNED:     return
func.func @stride_2_from_256() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<16x3x3x256x32xf32>} : () -> memref<16x3x3x256x32xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<512xf32>} : () -> memref<512xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x14x14x256xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x7x7x512xf32>
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x7x7x512xf32>, memref<1x14x14x256xf32>, memref<16x3x3x256x32xf32>, memref<512xf32>) -> ()
  return
}

// -----

// AVX2 (8 ways): 512 -> 256 on blocks of one vector (8) in chunks of 64 input channels, tiles of two whole rows: its
// pixels 4 KiB apart, all 14 in one set. AVX-512 takes no tiles of pixels on blocks of half a vector.
// CHECK-LABEL: func.func @chunked_from_512
// CHECK-NOT:   glow.spread_channels
// CHECK:       return
// AVX2-LABEL:  func.func @chunked_from_512
// AVX2:        "glowir.conv2d"({{.+}}) {dilations = array<i64: 1, 1>, glow.spread_channels = 16 : i64
func.func @chunked_from_512() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<32x8x3x3x64x8xf32>} : () -> memref<32x8x3x3x64x8xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<256xf32>} : () -> memref<256xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x14x14x512xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x7x7x256xf32>
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x7x7x256xf32>, memref<1x14x14x512xf32>, memref<32x8x3x3x64x8xf32>, memref<256xf32>) -> ()
  return
}

// -----

// A pointwise convolution from 1024 channels at 7x7, no border: tiles of two whole rows over a spread copy beat the
// matmul of its pixels on AVX-512. On sixteen threads a thread's 3 MFLOP (of 51) is too little for whole rows: the row
// tiles read the input as it is, no copy. Planned, the copy is a scratch buffer of its own.
// CHECK-LABEL: func.func @pointwise_unpadded
// CHECK:       glow.spread_channels = 16
// THREADS-LABEL: func.func @pointwise_unpadded
// THREADS-NOT: glow.spread_channels
// THREADS:     return
// PLANNED-LABEL: func.func @pointwise_unpadded
// PLANNED:     %[[WIDE:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<{{[0-9]+}}xi8> to memref<1x7x7x1040xf32>
// PLANNED:     %[[INPUT:.+]] = memref.subview %[[WIDE]][0, 0, 0, 0] [1, 7, 7, 1024] [1, 1, 1, 1]
// PLANNED:     linalg.generic {{.+}} outs(%{{.+}} : memref<1x7x7x1024xf32, strided<[50960, 7280, 1040, 1]>>)
// PLANNED:     linalg.generic {{.+}} ins(%[[INPUT]], %{{.+}} : memref<1x7x7x1024xf32, strided<[50960, 7280, 1040, 1]>>, memref<16x1x1x1024x32xf32>) {{.+}}glow.blocked_conv
// PLANNED-NOT: memref.alloc
// PLANNED:     return
func.func @pointwise_unpadded() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<16x1x1x1024x32xf32>} : () -> memref<16x1x1x1024x32xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<512xf32>} : () -> memref<512xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x7x7x1024xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x7x7x512xf32>
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x7x7x512xf32>, memref<1x7x7x1024xf32>, memref<16x1x1x1024x32xf32>, memref<512xf32>) -> ()
  return
}

// -----

// Negative: a filter the packing left HWCF (its kernel is the row tiles of linalg's named convolution), and a packed
// one whose input pixels 1 KiB apart spread over the sets as they are (its mark from an earlier decision removed).
// CHECK-LABEL: func.func @not_spread
// CHECK-NOT:   glow.spread_channels
// CHECK:       return
// AVX2-LABEL:  func.func @not_spread
// AVX2-NOT:    glow.spread_channels
// AVX2:        return
func.func @not_spread() attributes {glowir.inputs = ["x", "z"], glowir.outputs = ["y", "u"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<3x3x512x512xf32>} : () -> memref<3x3x512x512xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<512xf32>} : () -> memref<512xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x14x14x512xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x7x7x512xf32>
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x7x7x512xf32>, memref<1x14x14x512xf32>, memref<3x3x512x512xf32>, memref<512xf32>) -> ()
  %v = "glowir.weight_var"() {mutability = "const", name = "v", value = dense<0.5> : tensor<16x3x3x128x32xf32>} : () -> memref<16x3x3x128x32xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<1x14x14x128xf32>
  %u = "glowir.weight_var"() {mutability = "mutable", name = "u"} : () -> memref<1x7x7x512xf32>
  "glowir.conv2d"(%u, %z, %v, %b) {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1, glow.spread_channels = 16} : (memref<1x7x7x512xf32>, memref<1x14x14x128xf32>, memref<16x3x3x128x32xf32>, memref<512xf32>) -> ()
  return
}
