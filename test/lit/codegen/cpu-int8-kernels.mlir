// RUN: glow-opt %s --split-input-file -p 'builtin.module(convert-glowir-to-linalg,cpu-int8-kernels{target-cpu=znver4})' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(convert-glowir-to-linalg,cpu-int8-kernels{target-cpu=haswell})' | FileCheck %s --check-prefix=AVX2

// An int8 convolution on a packed filter (two blocks of 16 output channels, 3 input channels grown to 4 in the
// bordered scratch): loops over the image, the output rows and the pairs of filter blocks, one register tile of the
// row's 5 pixels x 2 blocks (10 accumulators, loaded from the bias-initialized int32 scratch), carried through the
// kh, kw and channel-group loops; per step two 64-byte filter loads and, per pixel, four input bytes read as
// unsigned (xor 0x80808080), broadcast, and two vpdpbusd; then the accumulators stored back. On an AVX2 target a
// filter packed for VNNI is not its layout: the tagged generic stays (it computes the same sums).
// CHECK-LABEL: func.func @qconv
// CHECK:       %[[BORDER:.+]] = memref.alloc() {{.*}} : memref<1x7x7x4xi8>
// CHECK:       %[[ACC:.+]] = memref.alloc() {{.*}} : memref<1x5x5x32xi32>
// CHECK:       linalg.broadcast
// CHECK:       %[[ACC5:.+]] = memref.expand_shape %[[ACC]] {{.*}} into memref<1x5x5x2x16xi32>
// CHECK:       %[[W:.+]] = memref.collapse_shape {{.*}} into memref<2x3x3x1x64xi8>
// CHECK-NOT:   linalg.generic
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK-COUNT-10: vector.load %[[ACC5]]{{.*}} : memref<1x5x5x2x16xi32>, vector<16xi32>
// CHECK:       scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       vector.load %[[W]]{{.*}} : memref<2x3x3x1x64xi8>, vector<64xi8>
// CHECK:       vector.load %[[W]]{{.*}} : memref<2x3x3x1x64xi8>, vector<64xi8>
// CHECK:       vector.load %[[BORDER]]{{.*}} : memref<1x7x7x4xi8>, vector<4xi8>
// CHECK:       arith.xori %{{.+}}, %c-2139062144_i32 : i32
// CHECK:       vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-COUNT-10: vector.store {{.*}}, %[[ACC5]]
// CHECK:       linalg.generic
// CHECK:       arith.shrsi
// AVX2-LABEL: func.func @qconv
// AVX2:        linalg.generic {{.*}} {glow.int8_conv = array<i64: 1, 1, 1, 1>
// AVX2-NOT:    llvm.call_intrinsic
func.func @qconv() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1> : tensor<2x3x3x1x16x4xi8>} : () -> memref<2x3x3x1x16x4xi8>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<7> : tensor<32xi32>} : () -> memref<32xi32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x5x5x3xi8>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x5x5x32xi8>
  "glowir.qconv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1, input_offset = -3, multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (memref<1x5x5x32xi8>, memref<1x5x5x3xi8>, memref<2x3x3x1x16x4xi8>, memref<32xi32>) -> ()
  return
}

// -----

// int16 pairs (an AVX2 target has 8 lanes, 16 registers): the input widened to int16 in its bordered scratch (channels grown to
// an even count), a register tile of 5 pixels x 2 blocks, per pixel an int16 pair broadcast and, per block,
// vpmaddwd then an add into the accumulator. On the VNNI target pairs are not its layout (it packs quads): the
// generic stays.
// AVX2-LABEL: func.func @pairs
// AVX2:        %[[BORDER:.+]] = memref.alloc() {{.*}} : memref<1x7x7x4xi16>
// AVX2:        linalg.copy {cast = #linalg.type_fn<cast_signed>} ins(%{{.+}} : memref<1x5x5x3xi8>)
// AVX2:        memref.collapse_shape {{.*}} into memref<4x3x3x2x16xi16>
// AVX2-COUNT-10: vector.load {{.*}} : memref<1x5x5x4x8xi32>, vector<8xi32>
// AVX2:        vector.load %[[BORDER]]{{.*}} : memref<1x7x7x4xi16>, vector<2xi16>
// AVX2:        vector.broadcast {{.*}} : i32 to vector<8xi32>
// AVX2:        llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"({{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// AVX2-NEXT:   arith.addi {{.*}} : vector<8xi32>
// CHECK-LABEL: func.func @pairs
// CHECK:       linalg.generic {{.*}} {glow.int8_conv = array<i64: 1, 1, 1, 1>
// CHECK-NOT:   llvm.call_intrinsic
func.func @pairs() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1> : tensor<4x3x3x2x8x2xi16>} : () -> memref<4x3x3x2x8x2xi16>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<7> : tensor<32xi32>} : () -> memref<32xi32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x5x5x3xi8>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x5x5x32xi8>
  "glowir.qconv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1, input_offset = -3, multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (memref<1x5x5x32xi8>, memref<1x5x5x3xi8>, memref<4x3x3x2x8x2xi16>, memref<32xi32>) -> ()
  return
}
