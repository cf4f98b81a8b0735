// cpu-tile-kernels: a convolution whose row of 28 output columns ends in a narrower register tile (6 + 6 + 6 + 6 + 4)
// has that last tile peeled and its function canonicalized, in the middle of the schedule; only the functions of the
// peeled loops are, so that the kernels scheduled after it (here a 1x1 convolution's image-row islands writing a
// bordered buffer's interior, in another function) are still as cpu-tile-kernels tagged them. Canonicalized before
// their own schedule ran, those islands were left untiled and vectorized whole (vector<28x8x16xf32>: 6-12 MB of LLVM
// IR per kernel and minutes of compile in light_resnet50's AVX2 code).
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=znver3 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s

// The peeled convolution (3x3/2 on a filter in chunks of 32 channels: an island per chunk) keeps its six-column
// tiles and gets a static four-column one; the row islands after it get their 4x16 register tiles.
// CHECK-LABEL: func.func private @peeled_conv(
// CHECK-COUNT-10: vector.contract {{.+}} into vector<1x1x16xf32>
// CHECK-LABEL: func.func private @row_island_after(
// CHECK-NOT: vector<28x8x16
// CHECK: arith.mulf {{.+}} : vector<4x1x16x1xf32>
// CHECK-NOT: vector<28x8x16
// CHECK: return

#map = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d2 + d6, d7)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7 * 32 + d8)>
#map5 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d3, d7, d5, d6, d8, d4)>
#map6 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
#map7 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7)>
#map8 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 + d5, d2 + d6, d7 * 32 + d8)>
module {
  func.func private @peeled_conv(%arg0: memref<128xf32>, %arg1: memref<1x28x28x128xf32>, %arg2: memref<1x58x58x128xf32>, %arg3: memref<8x4x3x3x32x16xf32>) {
    %expand_shape = memref.expand_shape %arg1 [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 8, 16] : memref<1x28x28x128xf32> into memref<1x28x28x8x16xf32>
    linalg.broadcast ins(%arg0 : memref<128xf32>) outs(%arg1 : memref<1x28x28x128xf32>) dimensions = [0, 1, 2] 
    linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%arg2, %arg3 : memref<1x58x58x128xf32>, memref<8x4x3x3x32x16xf32>) outs(%expand_shape : memref<1x28x28x8x16xf32>) attrs =  {glow.blocked_conv = array<i64: 2, 2>} {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.mulf %in, %in_0 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%arg1 : memref<1x28x28x128xf32>) {
    ^bb0(%out: f32):
      %cst = arith.constant 0.000000e+00 : f32
      %0 = arith.maximumf %out, %cst : f32
      linalg.yield %0 : f32
    }
    return
  }
  func.func private @row_island_after(%arg0: memref<128xf32>, %arg1: memref<1x28x28x128xf32>, %arg2: memref<1x28x28x512xf32>, %arg3: memref<8x1x1x512x16xf32>, %arg4: memref<1x28x28x128xf32, strided<[115200, 3840, 128, 1], offset: 3968>>) {
    %expand_shape = memref.expand_shape %arg1 [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 8, 16] : memref<1x28x28x128xf32> into memref<1x28x28x8x16xf32>
    linalg.broadcast ins(%arg0 : memref<128xf32>) outs(%arg1 : memref<1x28x28x128xf32>) dimensions = [0, 1, 2] 
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg2, %arg3 : memref<1x28x28x512xf32>, memref<8x1x1x512x16xf32>) outs(%expand_shape : memref<1x28x28x8x16xf32>) attrs =  {glow.blocked_conv = array<i64: 1, 1>} {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.mulf %in, %in_0 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%arg1 : memref<1x28x28x128xf32>) {
    ^bb0(%out: f32):
      %cst = arith.constant 0.000000e+00 : f32
      %0 = arith.maximumf %out, %cst : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : memref<1x28x28x128xf32>) outs(%arg4 : memref<1x28x28x128xf32, strided<[115200, 3840, 128, 1], offset: 3968>>) attrs =  {glow.dead_input = 0 : i64} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    return
  }
}

// -----

// The other order (row islands first): both tiled, as before.
// CHECK-LABEL: func.func private @row_island_first(
// CHECK-NOT: vector<28x8x16
// CHECK: arith.mulf {{.+}} : vector<4x1x16x1xf32>
// CHECK-LABEL: func.func private @peeled_conv_last(
// CHECK-COUNT-10: vector.contract {{.+}} into vector<1x1x16xf32>

#map = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d2 + d6, d7)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7 * 32 + d8)>
#map5 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d3, d7, d5, d6, d8, d4)>
#map6 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
#map7 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7)>
#map8 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 + d5, d2 + d6, d7 * 32 + d8)>
module {
  func.func private @row_island_first(%arg0: memref<128xf32>, %arg1: memref<1x28x28x128xf32>, %arg2: memref<1x28x28x512xf32>, %arg3: memref<8x1x1x512x16xf32>, %arg4: memref<1x28x28x128xf32, strided<[115200, 3840, 128, 1], offset: 3968>>) {
    %expand_shape = memref.expand_shape %arg1 [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 8, 16] : memref<1x28x28x128xf32> into memref<1x28x28x8x16xf32>
    linalg.broadcast ins(%arg0 : memref<128xf32>) outs(%arg1 : memref<1x28x28x128xf32>) dimensions = [0, 1, 2] 
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg2, %arg3 : memref<1x28x28x512xf32>, memref<8x1x1x512x16xf32>) outs(%expand_shape : memref<1x28x28x8x16xf32>) attrs =  {glow.blocked_conv = array<i64: 1, 1>} {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.mulf %in, %in_0 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%arg1 : memref<1x28x28x128xf32>) {
    ^bb0(%out: f32):
      %cst = arith.constant 0.000000e+00 : f32
      %0 = arith.maximumf %out, %cst : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1 : memref<1x28x28x128xf32>) outs(%arg4 : memref<1x28x28x128xf32, strided<[115200, 3840, 128, 1], offset: 3968>>) attrs =  {glow.dead_input = 0 : i64} {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    return
  }
  func.func private @peeled_conv_last(%arg0: memref<128xf32>, %arg1: memref<1x28x28x128xf32>, %arg2: memref<1x58x58x128xf32>, %arg3: memref<8x4x3x3x32x16xf32>) {
    %expand_shape = memref.expand_shape %arg1 [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 8, 16] : memref<1x28x28x128xf32> into memref<1x28x28x8x16xf32>
    linalg.broadcast ins(%arg0 : memref<128xf32>) outs(%arg1 : memref<1x28x28x128xf32>) dimensions = [0, 1, 2] 
    linalg.generic {indexing_maps = [#map4, #map5, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%arg2, %arg3 : memref<1x58x58x128xf32>, memref<8x4x3x3x32x16xf32>) outs(%expand_shape : memref<1x28x28x8x16xf32>) attrs =  {glow.blocked_conv = array<i64: 2, 2>} {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.mulf %in, %in_0 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    linalg.generic {indexing_maps = [#map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%arg1 : memref<1x28x28x128xf32>) {
    ^bb0(%out: f32):
      %cst = arith.constant 0.000000e+00 : f32
      %0 = arith.maximumf %out, %cst : f32
      linalg.yield %0 : f32
    }
    return
  }
}
