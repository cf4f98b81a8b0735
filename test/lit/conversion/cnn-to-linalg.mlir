// RUN: glow-opt %s --split-input-file --verify-diagnostics --convert-glowir-to-linalg | FileCheck %s

// Pads copy src into a scratch buffer (from the heap: this program's memory is not planned), as an elementwise
// generic first (right after whatever wrote src, so that linalg-outline-kernels may fuse it into that kernel), then
// fill its border alone with zeros (rows above and below, columns right: no left pad); the buffer is freed after the
// instruction. The bias is written into dest right before the convolution that accumulates onto it (the kernel
// takes the pair as one: see linalg-outline-kernels).
// CHECK-LABEL: func.func @conv_padded
// CHECK-SAME:  (%[[W:.+]]: memref<3x3x4x6xf32>, %[[B:.+]]: memref<6xf32>, %[[X:.+]]: memref<1x8x8x4xf32>, %[[Y:.+]]: memref<1x4x3x6xf32>)
// CHECK:       %[[P:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x10x10x4xf32>
// CHECK:       %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:       %[[IN:.+]] = memref.subview %[[P]][0, 1, 0, 0] [1, 8, 8, 4] [1, 1, 1, 1]
// CHECK:       linalg.generic {{.*}}ins(%[[X]] : memref<1x8x8x4xf32>) outs(%[[IN]] :
// CHECK-NEXT:  ^bb0(%[[V:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:    linalg.yield %[[V]] : f32
// CHECK:       %[[TOP:.+]] = memref.subview %[[P]][0, 0, 0, 0] [1, 1, 10, 4] [1, 1, 1, 1]
// CHECK:       linalg.fill ins(%[[ZERO]] : f32) outs(%[[TOP]] :
// CHECK:       %[[BOTTOM:.+]] = memref.subview %[[P]][0, 9, 0, 0] [1, 1, 10, 4] [1, 1, 1, 1]
// CHECK:       linalg.fill ins(%[[ZERO]] : f32) outs(%[[BOTTOM]] :
// CHECK:       %[[RIGHT:.+]] = memref.subview %[[P]][0, 1, 8, 0] [1, 8, 2, 4] [1, 1, 1, 1]
// CHECK:       linalg.fill ins(%[[ZERO]] : f32) outs(%[[RIGHT]] :
// CHECK-NOT:   linalg.fill
// CHECK-NEXT:  linalg.broadcast ins(%[[B]] : memref<6xf32>) outs(%[[Y]] : memref<1x4x3x6xf32>) dimensions = [0, 1, 2]
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[W]] : memref<1x10x10x4xf32>, memref<3x3x4x6xf32>) outs(%[[Y]] : memref<1x4x3x6xf32>)
// CHECK:       memref.dealloc %[[P]]
// CHECK-NEXT:  return
func.func @conv_padded() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<3x3x4x6xf32>} : () -> memref<3x3x4x6xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<6xf32>} : () -> memref<6xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x8x8x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x3x6xf32>
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 2>, dilations = array<i64: 1, 2>, group = 1} : (memref<1x4x3x6xf32>, memref<1x8x8x4xf32>, memref<3x3x4x6xf32>, memref<6xf32>) -> ()
  return
}

// -----

// Grouped (2 groups of 2 channels into 3 filters, relu): an scf.for over the groups, each step that group's slice of
// the bias broadcast into its slice of dest, the named convolution of its channel slices of src, filter and dest
// (views at offsets 2 g and 3 g, known at run time), and the relu on its slice: what the kernel fuses as one.
// CHECK-LABEL: func.func @grouped
// CHECK-SAME:  (%[[W:.+]]: memref<1x1x2x6xf32>, %[[B:.+]]: memref<6xf32>, %[[X:.+]]: memref<1x8x8x4xf32>, %[[Y:.+]]: memref<1x4x4x6xf32>)
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   linalg.broadcast
// CHECK:       scf.for %[[G:.+]] = %{{.+}} to %c2 step
// CHECK:       %[[XS:.+]] = memref.subview %[[X]][0, 0, 0, %{{.+}}] [1, 8, 8, 2] [1, 1, 1, 1] : memref<1x8x8x4xf32> to memref<1x8x8x2xf32, strided<[256, 32, 4, 1], offset: ?>>
// CHECK:       %[[WS:.+]] = memref.subview %[[W]][0, 0, 0, %{{.+}}] [1, 1, 2, 3] [1, 1, 1, 1]
// CHECK:       %[[YS:.+]] = memref.subview %[[Y]][0, 0, 0, %{{.+}}] [1, 4, 4, 3] [1, 1, 1, 1]
// CHECK:       %[[BS:.+]] = memref.subview %[[B]][%{{.+}}] [3] [1]
// CHECK:       linalg.broadcast ins(%[[BS]] : {{.+}}) outs(%[[YS]] :
// CHECK:       linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[XS]], %[[WS]] : {{.+}}) outs(%[[YS]] :
// CHECK:       linalg.generic {{.+}} outs(%[[YS]] :
// CHECK:       arith.maximumf
// CHECK:       linalg.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  }
// CHECK-NEXT:  return
func.func @grouped() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<1x1x2x6xf32>} : () -> memref<1x1x2x6xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<6xf32>} : () -> memref<6xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x8x8x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x6xf32>
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2, activation = "relu"} : (memref<1x4x4x6xf32>, memref<1x8x8x4xf32>, memref<1x1x2x6xf32>, memref<6xf32>) -> ()
  return
}

// -----

// Depthwise: the filter [KH, KW, 1, C] viewed as [KH, KW, C]; with a channel multiplier M, as [KH, KW, C, M] with
// dest viewed as [N, OH, OW, C, M]. No pads: src is read in place.
// CHECK-LABEL: func.func @depthwise
// CHECK-SAME:  (%[[W:.+]]: memref<3x3x1x4xf32>, %[[W2:.+]]: memref<3x3x1x8xf32>, %{{.+}}: memref<4xf32>, %{{.+}}: memref<8xf32>, %[[X:.+]]: memref<1x5x5x4xf32>, %[[Y:.+]]: memref<1x3x3x4xf32>, %[[Z:.+]]: memref<1x3x3x8xf32>)
// CHECK-NOT:   memref.alloc
// CHECK:       %[[HWC:.+]] = memref.collapse_shape %[[W]] {{\[}}[0], [1], [2, 3]] : memref<3x3x1x4xf32> into memref<3x3x4xf32>
// CHECK:       linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[X]], %[[HWC]] : memref<1x5x5x4xf32>, memref<3x3x4xf32>) outs(%[[Y]] : memref<1x3x3x4xf32>)
// CHECK:       %[[HWC2:.+]] = memref.collapse_shape %[[W2]]
// CHECK:       %[[HWCM:.+]] = memref.expand_shape %[[HWC2]] {{\[}}[0], [1], [2, 3]] output_shape [3, 3, 4, 2]
// CHECK:       %[[Z5:.+]] = memref.expand_shape %[[Z]] {{\[}}[0], [1], [2], [3, 4]] output_shape [1, 3, 3, 4, 2]
// CHECK:       linalg.depthwise_conv_2d_nhwc_hwcm {{.*}} ins(%[[X]], %[[HWCM]] : memref<1x5x5x4xf32>, memref<3x3x4x2xf32>) outs(%[[Z5]] : memref<1x3x3x4x2xf32>)
func.func @depthwise() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<3x3x1x4xf32>} : () -> memref<3x3x1x4xf32>
  %w2 = "glowir.weight_var"() {mutability = "const", name = "w2", value = dense<0.5> : tensor<3x3x1x8xf32>} : () -> memref<3x3x1x8xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<4xf32>} : () -> memref<4xf32>
  %b2 = "glowir.weight_var"() {mutability = "const", name = "b2", value = dense<1.0> : tensor<8xf32>} : () -> memref<8xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x5x5x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x3x3x4xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<1x3x3x8xf32>
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4} : (memref<1x3x3x4xf32>, memref<1x5x5x4xf32>, memref<3x3x1x4xf32>, memref<4xf32>) -> ()
  "glowir.conv2d"(%z, %x, %w2, %b2) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4} : (memref<1x3x3x8xf32>, memref<1x5x5x4xf32>, memref<3x3x1x8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// Max pooling: src in a border of -inf (four strips).
// CHECK-LABEL: func.func @max
// CHECK-SAME:  (%[[X:.+]]: memref<1x5x5x3xf32>, %[[Y:.+]]: memref<1x3x3x3xf32>)
// CHECK:       %[[P:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x7x7x3xf32>
// CHECK:       %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK:       memref.subview %[[P]][0, 1, 1, 0] [1, 5, 5, 3] [1, 1, 1, 1]
// CHECK:       linalg.generic
// CHECK:       linalg.yield
// CHECK-COUNT-4: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.+}} : memref<1x{{[15]}}x{{[157]}}x3xf32, strided
// Then dest is the max of the 9 window positions' strided views (stride 2), one elementwise op that writes dest once.
// CHECK:       %[[V0:.+]] = memref.subview %[[P]][0, 0, 0, 0] [1, 3, 3, 3] [1, 2, 2, 1]
// CHECK:       %[[V1:.+]] = memref.subview %[[P]][0, 0, 1, 0] [1, 3, 3, 3] [1, 2, 2, 1]
// CHECK:       %[[V8:.+]] = memref.subview %[[P]][0, 2, 2, 0] [1, 3, 3, 3] [1, 2, 2, 1]
// CHECK:       linalg.generic {{.*}} ins(%[[V0]], %[[V1]], {{.*}}, %[[V8]] : {{.*}}) outs(%[[Y]] : memref<1x3x3x3xf32>)
// CHECK-COUNT-8: arith.maximumf
// CHECK-NOT:   arith.maximumf
// CHECK-NOT:   linalg.copy
// CHECK-NOT:   linalg.pooling
// CHECK:       memref.dealloc %[[P]]
func.func @max() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x5x5x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x3x3x3xf32>
  "glowir.max_pool"(%y, %x) {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = 0} : (memref<1x3x3x3xf32>, memref<1x5x5x3xf32>) -> ()
  return
}

// -----

// Average pooling where every window counts alike: the sum divided by one constant. A window of more than 9
// positions (here 4x4, a global pool) is one reduction over a [N, OH, OW, KH, KW, C] window view of src, not 16 updates.
// CHECK-DAG:   #[[ID6:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-DAG:   #[[OUT6:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-LABEL: func.func @avg_uniform
// CHECK-SAME:  (%[[X:.+]]: memref<1x4x4x3xf32>, %[[Y:.+]]: memref<1x1x1x3xf32>)
// CHECK-NOT:   memref.alloc()
// CHECK:       %[[N:.+]] = arith.constant 1.600000e+01 : f32
// CHECK:       %[[W:.+]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [1, 1, 1, 4, 4, 3], strides: [48, 12, 3, 12, 3, 1]
// CHECK:       linalg.fill ins(%{{.+}} : f32) outs(%[[Y]] : memref<1x1x1x3xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[ID6]], #[[OUT6]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:  ins(%[[W]] : {{.*}}) outs(%[[Y]] : memref<1x1x1x3xf32>)
// CHECK:       arith.addf
// CHECK-NOT:   arith.addf
// CHECK:       linalg.generic {{.*}} outs(%[[Y]] : memref<1x1x1x3xf32>)
// CHECK:       arith.divf %{{.+}}, %[[N]] : f32
func.func @avg_uniform() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x4x4x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x1x1x3xf32>
  "glowir.avg_pool"(%y, %x) {kernels = array<i64: 4, 4>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 0, count_include_pad = 0} : (memref<1x1x1x3xf32>, memref<1x4x4x3xf32>) -> ()
  return
}

// -----

// A 3x3 average where every window counts alike (count_include_pad): the sum and its division by 9 in the one
// elementwise op over the positions' views.
// CHECK-LABEL: func.func @avg_small_uniform
// CHECK:       %[[NINE:.+]] = arith.constant 9.000000e+00 : f32
// CHECK:       linalg.generic {{.*}} outs(%{{.+}} : memref<1x3x3x3xf32>)
// CHECK-COUNT-8: arith.addf
// CHECK-NEXT:  arith.divf %{{.+}}, %[[NINE]] : f32
// CHECK-NEXT:  linalg.yield
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @avg_small_uniform() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x5x5x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x3x3x3xf32>
  "glowir.avg_pool"(%y, %x) {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = 0, count_include_pad = 1} : (memref<1x3x3x3xf32>, memref<1x5x5x3xf32>) -> ()
  return
}

// -----

// A large strided, dilated and padded max window: the window view repeats the bordered buffer's strides (rows of
// 9 x 3 elements): y step 2 rows, x step 2 columns, window rows and columns 2 apart (dilation 2).
// CHECK-LABEL: func.func @max_large
// CHECK:       %[[P:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x9x9x3xf32>
// CHECK:       %[[W:.+]] = memref.reinterpret_cast %[[P]] to offset: [0], sizes: [1, 2, 2, 4, 4, 3], strides: [243, 54, 6, 54, 6, 1]
// CHECK:       linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<1x2x2x3xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[W]] : {{.*}}) outs(%{{.+}} : memref<1x2x2x3xf32>)
// CHECK:       arith.maximumf
// CHECK-NOT:   arith.maximumf
// CHECK:       memref.dealloc %[[P]]
func.func @max_large() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x7x7x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x2x2x3xf32>
  "glowir.max_pool"(%y, %x) {kernels = array<i64: 4, 4>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 2>, ceil_mode = 0} : (memref<1x2x2x3xf32>, memref<1x7x7x3xf32>) -> ()
  return
}

// -----

// ceil_mode windows that overhang count fewer elements: a constant [OH, OW] map of the counts divides the sums.
// CHECK:       memref.global "private" constant @[[COUNTS:.+]] : memref<3x3xf32> = dense<{{\[}}[4.000000e+00, 4.000000e+00, 2.000000e+00], [4.000000e+00, 4.000000e+00, 2.000000e+00], [2.000000e+00, 2.000000e+00, 1.000000e+00]]>
// CHECK-LABEL: func.func @avg
// CHECK-SAME:  (%[[X:.+]]: memref<1x5x5x3xf32>, %[[Y:.+]]: memref<1x3x3x3xf32>)
// CHECK:       %[[P:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x6x6x3xf32>
// CHECK:       memref.subview %[[P]][0, 0, 0, 0] [1, 3, 3, 3] [1, 2, 2, 1]
// CHECK:       linalg.generic {{.*}}outs(%[[Y]] :
// CHECK-COUNT-3: arith.addf
// CHECK-NOT:   arith.divf
// CHECK:       %[[C:.+]] = memref.get_global @[[COUNTS]] : memref<3x3xf32>
// CHECK:       linalg.generic {{.*}} ins(%[[C]] : memref<3x3xf32>) outs(%[[Y]] : memref<1x3x3x3xf32>)
// CHECK-NEXT:  ^bb0(%[[COUNT:.+]]: f32, %[[SUM:.+]]: f32):
// CHECK-NEXT:  arith.divf %[[SUM]], %[[COUNT]] : f32
func.func @avg() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x5x5x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x3x3x3xf32>
  "glowir.avg_pool"(%y, %x) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 1, count_include_pad = 0} : (memref<1x3x3x3xf32>, memref<1x5x5x3xf32>) -> ()
  return
}

// -----

// LRN: squares in a zero-bordered channel scratch buffer, window sums by a reduction generic into a second one, then
// the normalization.
// CHECK-DAG:   #[[SHIFT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3 + d4)>
// CHECK-DAG:   #[[WIN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
// CHECK-LABEL: func.func @lrn
// CHECK-SAME:  (%[[X:.+]]: memref<1x2x2x3xf32>, %[[Y:.+]]: memref<1x2x2x3xf32>)
// CHECK:       %[[SQ:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x2x5xf32>
// CHECK:       %[[SUMS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x2x3xf32>
// CHECK:       %[[MID:.+]] = memref.subview %[[SQ]][0, 0, 0, 1] [1, 2, 2, 3] [1, 1, 1, 1]
// CHECK:       linalg.generic {{.*}} ins(%[[X]] : memref<1x2x2x3xf32>) outs(%[[MID]] :
// CHECK:       %[[W:.+]] = memref.alloca() : memref<3xf32>
// CHECK:       linalg.generic {indexing_maps = [#[[SHIFT]], #[[WIN]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[SQ]], %[[W]] : memref<1x2x2x5xf32>, memref<3xf32>) outs(%[[SUMS]] : memref<1x2x2x3xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[X]], %[[SUMS]] : memref<1x2x2x3xf32>, memref<1x2x2x3xf32>) outs(%[[Y]] : memref<1x2x2x3xf32>)
// CHECK:       math.powf
// CHECK:       arith.divf
// CHECK:       memref.dealloc %[[SQ]]
// CHECK-NEXT:  memref.dealloc %[[SUMS]]
func.func @lrn() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x2x2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x2x2x3xf32>
  "glowir.local_response_norm"(%y, %x) {size = 3, alpha = 1.0e-4 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (memref<1x2x2x3xf32>, memref<1x2x2x3xf32>) -> ()
  return
}

// -----

// Pad: dest filled with the value, then src (cropped by the negative pad) copied into dest's interior.
// CHECK-LABEL: func.func @pad
// CHECK-SAME:  (%[[X:.+]]: memref<2x3xf32>, %[[Y:.+]]: memref<3x4xf32>)
// CHECK:       %[[V:.+]] = arith.constant 2.500000e+00 : f32
// CHECK:       linalg.fill ins(%[[V]] : f32) outs(%[[Y]] : memref<3x4xf32>)
// CHECK:       %[[SRC:.+]] = memref.subview %[[X]][0, 1] [2, 2] [1, 1]
// CHECK:       %[[DST:.+]] = memref.subview %[[Y]][1, 0] [2, 2] [1, 1]
// CHECK:       linalg.copy {{.*}}ins(%[[SRC]] : {{.*}}) outs(%[[DST]] :
func.func @pad() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<3x4xf32>
  "glowir.pad"(%y, %x) {pads = array<i64: 1, -1, 0, 2>, value = 2.5 : f32} : (memref<3x4xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

// A filter packed in blocks of 16 output channels and chunks of 32 input channels, [F/B, C/Cc, KH, KW, Cc, B]
// (cpu-pack-conv-filters on an 8-way L1): one generic over (n, oh, ow, j, b, kh, kw, q, c) on dest viewed
// [N, OH, OW, F/B, B], reading input channel q x 32 + c, tagged with its strides (the CPU kernel's blocked convolution).
// CHECK-DAG:   #[[SRC:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7 * 32 + d8)>
// CHECK-DAG:   #[[FILT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d3, d7, d5, d6, d8, d4)>
// CHECK-DAG:   #[[DEST:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @conv_chunked
// CHECK-SAME:  (%[[W:.+]]: memref<4x2x3x3x32x16xf32>, %[[B:.+]]: memref<64xf32>, %[[X:.+]]: memref<1x9x9x64xf32>, %[[Y:.+]]: memref<1x4x4x64xf32>)
// CHECK:       linalg.broadcast ins(%[[B]] : memref<64xf32>) outs(%[[Y]] : memref<1x4x4x64xf32>)
// CHECK-NEXT:  %[[Y5:.+]] = memref.expand_shape %[[Y]] {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 4, 4, 4, 16]
// CHECK-NEXT:  linalg.generic {indexing_maps = [#[[SRC]], #[[FILT]], #[[DEST]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%[[X]], %[[W]] : memref<1x9x9x64xf32>, memref<4x2x3x3x32x16xf32>) outs(%[[Y5]] : memref<1x4x4x4x16xf32>) attrs = {glow.blocked_conv = array<i64: 2, 2>}
// CHECK:       return
func.func @conv_chunked() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<4x2x3x3x32x16xf32>} : () -> memref<4x2x3x3x32x16xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<64xf32>} : () -> memref<64xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x9x9x64xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x64xf32>
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x64xf32>, memref<1x9x9x64xf32>, memref<4x2x3x3x32x16xf32>, memref<64xf32>) -> ()
  return
}
