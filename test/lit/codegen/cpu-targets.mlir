// The target drives the kernels' vectors and register tiles (glow_mlir/backend/kernels/isa.py): the same matmul,
// convolution and elementwise op for an AVX2 CPU (16 ymm registers of 8 lanes), two AVX-512 CPUs (32 zmm of 16), an
// AArch64 NEON CPU (32 q registers of 4) and a Cortex-M55 with Helium (8 q registers of 4). Only emitted: nothing
// here runs.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu},cpu-vectorize-rest{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu},cpu-vectorize-rest{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX512
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=znver4 target-triple=x86_64-unknown-linux-gnu},cpu-vectorize-rest{target-cpu=znver4 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX512
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=neoverse-n1 target-triple=aarch64-linux-gnu},cpu-vectorize-rest{target-cpu=neoverse-n1 target-triple=aarch64-linux-gnu})' | FileCheck %s --check-prefix=NEON
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=cortex-m55 target-triple=thumbv8.1m.main-none-eabihf},cpu-vectorize-rest{target-cpu=cortex-m55 target-triple=thumbv8.1m.main-none-eabihf})' | FileCheck %s --check-prefix=MVE
// RUN: not glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=pentium9 target-triple=x86_64-unknown-linux-gnu})' 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=i686 target-triple=x86_64-unknown-linux-gnu})' 2>&1 | FileCheck %s --check-prefix=ERR32

// A matmul's register tile: AVX2 6x16 (12 ymm accumulators, 2 rows of B, a broadcast: 15 of 16 registers); AVX-512
// 8x32 (16 zmm accumulators); NEON 6x16 (24 q accumulators, 4 rows of B, a broadcast: 29 of 32).
// AVX2-LABEL: func.func @matmul(
// AVX2:       vector.contract {{.+}} vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX2-NOT:   vector<8x32xf32>
// AVX512-LABEL: func.func @matmul(
// AVX512:     vector.contract {{.+}} vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// NEON-LABEL: func.func @matmul(
// NEON:       vector.contract {{.+}} vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// MVE-LABEL:  func.func @matmul(
// MVE:        vector.contract {{.+}} vector<6x1xf32>, vector<1x4xf32> into vector<6x4xf32>
// ERR:        unknown target CPU 'pentium9' for x86_64-unknown-linux-gnu: the valid names are LLVM's (`llc -mtriple=x86_64-unknown-linux-gnu -mcpu=help`
// ERR32:      target CPU 'i686' cannot run x86_64-unknown-linux-gnu code: 64-bit code requested on a subtarget that doesn't support it
// ERR32-NOT:  LLVM ERROR
func.func @matmul(%a: memref<120x64xf32>, %b: memref<64x64xf32>, %c: memref<120x64xf32>) {
  linalg.matmul ins(%a, %b : memref<120x64xf32>, memref<64x64xf32>) outs(%c : memref<120x64xf32>)
  return
}

// -----

// A 3x3 convolution with 7 output columns: AVX2 takes tiles of 4 columns of 16 filters (8 ymm accumulators: 7 x 16
// would spill), the row's last tile the 3 columns left (peeled off, static); AVX-512 7 columns of 32 filters (14
// zmm, dividing the row); NEON 4 and 3 columns of 16 filters (16 and 12 q accumulators); Helium 4 and 3 columns of 4
// (within its 8 registers). No narrower tile runs alone where it cannot keep the FMA pipes busy.
// AVX2-LABEL: func.func @conv(
// AVX2:       vector.contract {{.+}} vector<1x4x1xf32>, vector<1x16xf32> into vector<1x4x16xf32>
// AVX2:       vector.contract {{.+}} vector<1x3x1xf32>, vector<1x16xf32> into vector<1x3x16xf32>
// AVX2-NOT:   vector<1x7x
// AVX512-LABEL: func.func @conv(
// AVX512:     vector.contract {{.+}} vector<1x7x1xf32>, vector<1x32xf32> into vector<1x7x32xf32>
// AVX512-NOT: vector<1x3x
// NEON-LABEL: func.func @conv(
// NEON:       vector.contract {{.+}} vector<1x4x1xf32>, vector<1x16xf32> into vector<1x4x16xf32>
// NEON:       vector.contract {{.+}} vector<1x3x1xf32>, vector<1x16xf32> into vector<1x3x16xf32>
// MVE-LABEL:  func.func @conv(
// MVE:        vector.contract {{.+}} vector<1x4x1xf32>, vector<1x4xf32> into vector<1x4x4xf32>
// MVE:        vector.contract {{.+}} vector<1x3x1xf32>, vector<1x4xf32> into vector<1x3x4xf32>
func.func @conv(%x: memref<1x9x9x64xf32>, %f: memref<3x3x64x32xf32>, %y: memref<1x7x7x32xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f : memref<1x9x9x64xf32>, memref<3x3x64x32xf32>) outs(%y : memref<1x7x7x32xf32>)
  return
}

// -----

// An elementwise op whose rows (100) no wider vector divides: one register of the target's lanes at a time (masked
// where the lanes do not divide 100: AVX2's 8 and AVX-512's 16; NEON's 4 do).
// AVX2-LABEL: func.func @add(
// AVX2:       vector.maskedload {{.+}} vector<8xi1>, vector<8xf32> into vector<8xf32>
// AVX2:       arith.addf {{.+}} : vector<8xf32>
// AVX512-LABEL: func.func @add(
// AVX512:     vector.maskedload {{.+}} vector<16xi1>, vector<16xf32> into vector<16xf32>
// AVX512:     arith.addf {{.+}} : vector<16xf32>
// NEON-LABEL: func.func @add(
// NEON:       vector.load {{.+}} vector<4xf32>
// NEON:       arith.addf {{.+}} : vector<4xf32>
// MVE-LABEL:  func.func @add(
// MVE:        vector.load {{.+}} vector<4xf32>
// MVE:        arith.addf {{.+}} : vector<4xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @add(%a: memref<4x100xf32>, %b: memref<4x100xf32>, %c: memref<4x100xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<4x100xf32>, memref<4x100xf32>) outs(%c : memref<4x100xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}
