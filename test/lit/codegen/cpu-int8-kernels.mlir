// RUN: glow-opt %s --split-input-file -p 'builtin.module(convert-glowir-to-linalg,cpu-int8-kernels{target-cpu=znver4})' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(convert-glowir-to-linalg,cpu-int8-kernels{target-cpu=haswell})' | FileCheck %s --check-prefix=AVX2
// On 2 threads the output rows are the tasks of an scf.forall, a contiguous run of rows each (3 of 5 rows, then 2);
// below parallel-flops the convolution stays on the calling thread.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(convert-glowir-to-linalg,cpu-int8-kernels{target-cpu=znver4 threads=2})' | FileCheck %s --check-prefix=TASKS
// RUN: glow-opt %s --split-input-file -p 'builtin.module(convert-glowir-to-linalg,cpu-int8-kernels{target-cpu=znver4 threads=2 parallel-flops=100000000})' | FileCheck %s --check-prefix=SERIAL

// An int8 convolution on a packed filter (two blocks of 16 output channels, 3 input channels grown to 4 in the
// bordered scratch): loops over the image, the output rows and the pairs of filter blocks, one register tile of the
// row's 5 pixels x 2 blocks (10 accumulators, each starting from its block's bias), carried through the kh, kw and
// channel-group loops; per step two 64-byte filter loads and, per pixel, four input bytes read as unsigned (xor
// 0x80808080), broadcast, and two vpdpbusd. The epilogue requantizes in registers: the even and odd 32-bit lanes
// as 64-bit lanes (sign-extended in place / shifted down), one 64-bit product each, the rounding term added, the
// per-lane right shift, the halves joined, clamped, offset and narrowed to 16 bytes stored into the int8 output.
// The int32 buffer, its bias broadcast and the requantization generic are gone. On an AVX2 target a filter packed
// for VNNI is not its layout: the tagged generic stays (it computes the same sums).
// TASKS-LABEL: func.func @qconv
// TASKS:       scf.forall (%[[T:.+]]) in (2)
// TASKS:         %[[FIRST:.+]] = arith.muli %[[T]], %c3
// TASKS:         %[[END:.+]] = arith.addi %[[FIRST]], %c3
// TASKS:         %[[LAST:.+]] = arith.minui %[[END]], %c5
// TASKS:         scf.for %{{.+}} = %[[FIRST]] to %[[LAST]]
// TASKS:           llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// SERIAL-LABEL: func.func @qconv
// SERIAL-NOT:   scf.forall
// SERIAL:       return
// CHECK-LABEL: func.func @qconv
// CHECK-SAME:  %[[B:[a-z0-9]+]]: memref<32xi32>, %{{.+}}: memref<1x5x5x3xi8>, %[[Y:[a-z0-9]+]]: memref<1x5x5x32xi8>
// CHECK:       %[[BORDER:.+]] = memref.alloc() {{.*}} : memref<1x7x7x4xi8>
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   linalg.broadcast
// CHECK:       %[[W:.+]] = memref.collapse_shape {{.*}} into memref<2x3x3x1x64xi8>
// CHECK-NOT:   linalg.generic
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK-COUNT-2: vector.load %[[B]]{{.*}} : memref<32xi32>, vector<16xi32>
// CHECK:       scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       vector.load %[[W]]{{.*}} : memref<2x3x3x1x64xi8>, vector<64xi8>
// CHECK:       vector.load %[[W]]{{.*}} : memref<2x3x3x1x64xi8>, vector<64xi8>
// CHECK:       vector.load %[[BORDER]]{{.*}} : memref<1x7x7x4xi8>, vector<4xi8>
// CHECK:       arith.xori %{{.+}}, %c-2139062144_i32 : i32
// CHECK:       vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK:       vector.bitcast {{.*}} : vector<16xi32> to vector<8xi64>
// CHECK:       arith.muli {{.*}} : vector<8xi64>
// CHECK:       arith.addi {{.*}} : vector<8xi64>
// CHECK-NEXT:  arith.shrui {{.*}} : vector<8xi64>
// CHECK-NEXT:  arith.subi {{.*}} : vector<8xi64>
// CHECK:       arith.trunci {{.*}} : vector<16xi32> to vector<16xi8>
// CHECK-NEXT:  vector.store {{.*}}, %[[Y]]{{.*}} : memref<1x5x5x32xi8>, vector<16xi8>
// CHECK-NOT:   linalg.generic
// CHECK:       return
// AVX2-LABEL: func.func @qconv
// AVX2:        linalg.generic {{.*}} {glow.int8_conv = array<i64: 1, 1, 1, 1>
// AVX2:        linalg.generic {{.*}} {glow.int8_requant = array<i64: 0, -128, 127, 37>
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
// AVX2-NOT:    memref.alloc
// AVX2:        vector.load %[[BORDER]]{{.*}} : memref<1x7x7x4xi16>, vector<2xi16>
// AVX2:        vector.broadcast {{.*}} : i32 to vector<8xi32>
// AVX2:        llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"({{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// AVX2-NEXT:   arith.addi {{.*}} : vector<8xi32>
// AVX2:        arith.muli {{.*}} : vector<4xi64>
// AVX2:        vector.store {{.*}} : memref<1x5x5x32xi8>, vector<8xi8>
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

// -----

// A depthwise convolution on a filter in tap quads, 48 channels: chunks of 32 (ymm) and 16 (xmm) channels. Per chunk
// its weights put in quad order once per output row, then per output pixel four accumulators; per filter row the
// four taps loaded (one 32-byte vector each), interleaved by bytes then by 16-bit pairs (lane j of vector k: the
// four taps of channel 16 L + 4 k + j), four vpdpbusd; the sums put back in channel order, the bias added,
// requantized, stored 16 channels at a time. The int32 buffer is gone. An AVX2 target keeps the generic.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT:   memref.alloc() {{.*}} : memref<1x4x4x48xi32>
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       vector.load {{.*}} : memref<3x1x192xi8>, vector<128xi8>
// CHECK:       scf.for
// CHECK:       vector.load {{.*}} : memref<1x6x7x48xi8>, vector<32xi8>
// CHECK:       vector.shuffle {{.*}} : vector<32xi8>, vector<32xi8>
// CHECK:       vector.shuffle {{.*}} : vector<16xi16>, vector<16xi16>
// CHECK:       llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// CHECK:       vector.store {{.*}} : memref<1x4x4x48xi8>, vector<16xi8>
// CHECK:       vector.load {{.*}} : memref<3x1x192xi8>, vector<64xi8>
// CHECK:       llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.128"
// CHECK-NOT:   linalg.generic
// AVX2-LABEL: func.func @depthwise
// AVX2:        linalg.generic {{.*}} {glow.int8_depthwise = array<i64: 1, 1, 1, 1>
func.func @depthwise() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1> : tensor<3x1x1x48x4xi8>} : () -> memref<3x1x1x48x4xi8>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<3> : tensor<48xi32>} : () -> memref<48xi32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x4x4x48xi8>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x48xi8>
  "glowir.qconv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 2>, dilations = array<i64: 1, 1>, group = 48, input_offset = 0, multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (memref<1x4x4x48xi8>, memref<1x4x4x48xi8>, memref<3x1x1x48x4xi8>, memref<48xi32>) -> ()
  return
}
