// RUN: glow-opt %s --split-input-file --convert-glowir-to-linalg | FileCheck %s

// qconv2d, one output row at a time: the input rows the row's windows cover are copied into a scratch window
// ([1, 3, 6, 4]: three rows, the columns bordered) whose border is the zero point (-3); the bias broadcast into an
// int32 scratch of one output row, the named convolution on i8 operands (linalg sign-extends) over the window into
// it, then the requantization of each accumulator into the output row by its channel's fixed-point multiplier and
// shift (two constant tables: the channels differ), the 64-bit product rounded to nearest (ties up), plus the
// offset, clamped to [output_min, output_max]. The first and last output rows reach into the top and bottom pads
// (their window rows filled with the zero point), the two between are a loop copying three input rows.
// CHECK-LABEL: memref.global "private" constant @__glow_requant_shifts : memref<2xi32> = dense<[37, 36]>
// CHECK:       memref.global "private" constant @__glow_requant_multipliers : memref<2xi32> = dense<1374389504>
// CHECK-LABEL: func.func @qconv
// CHECK-SAME:  (%[[W:.+]]: memref<3x3x4x2xi8>, %[[B:.+]]: memref<2xi32>, %[[X:.+]]: memref<1x4x4x4xi8>, %[[Y:.+]]: memref<1x4x4x2xi8>)
// CHECK:       %[[P:.+]] = memref.alloc() {{.*}} : memref<1x3x6x4xi8>
// CHECK:       %[[A:.+]] = memref.alloc() {{.*}} : memref<1x1x4x2xi32>
// CHECK:       %[[PAD:.+]] = arith.constant -3 : i8
// CHECK:       linalg.fill ins(%[[PAD]] : i8) outs(%[[P]] : memref<1x3x6x4xi8>)
// the first output row: window row 0 is the top pad, rows 1 and 2 the input's rows 0 and 1 (positions as index
// values: one copy kernel serves every row)
// CHECK:       %[[W0:.+]] = memref.subview %[[P]][%{{.+}}, %[[K0:.+]], %{{.+}}, %{{.+}}] [1, 1, 4, 4]
// CHECK:       linalg.fill ins(%[[PAD]] : i8) outs(%[[W0]] : memref<1x1x4x4xi8, strided<[72, 24, 4, 1], offset: ?>>)
// CHECK:       %[[W1:.+]] = memref.subview %[[P]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 4, 4]
// CHECK:       %[[X0:.+]] = memref.subview %[[X]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 4, 4]
// CHECK:       linalg.copy {{.*}} ins(%[[X0]] : {{.*}}) outs(%[[W1]] : memref<1x1x4x4xi8, strided<[72, 24, 4, 1], offset: ?>>)
// CHECK:       linalg.copy
// CHECK:       linalg.broadcast ins(%[[B]] : memref<2xi32>) outs(%[[A]] : memref<1x1x4x2xi32>) dimensions = [0, 1, 2]
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[P]], %[[W]] : memref<1x3x6x4xi8>, memref<3x3x4x2xi8>) outs(%[[A]] : memref<1x1x4x2xi32>)
// CHECK:       linalg.generic {{.*}} ins(%[[A]], %{{.+}}, %{{.+}} : memref<1x1x4x2xi32>, memref<2xi32>, memref<2xi32>) outs(%{{.+}} : memref<1x1x4x2xi8, strided<[32, 8, 2, 1], offset: ?>>)
// CHECK:         arith.extsi {{.*}} : i32 to i64
// CHECK:         arith.muli
// CHECK:         arith.shli
// CHECK:         arith.addi
// CHECK-NEXT:    arith.shrsi
// CHECK:         arith.minsi
// CHECK:         arith.maxsi
// CHECK:         arith.trunci {{.*}} : i64 to i8
// output rows 1 and 2: three input rows copied whole into the window's interior columns
// CHECK:       scf.for %[[R:.+]] = %{{.+}} to %{{.+}} step
// CHECK:         %[[TOP:.+]] = arith.subi %[[R]], %{{.+}} : index
// CHECK:         %[[ROWS:.+]] = memref.subview %[[X]][%{{.+}}, %[[TOP]], 0, 0] [1, 3, 4, 4] [1, 1, 1, 1]
// CHECK:         linalg.copy {{.*}} ins(%[[ROWS]] : {{.*}}) outs(%{{.+}} : memref<1x3x4x4xi8, strided<[72, 24, 4, 1], offset: 4>>)
// CHECK:         linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[P]], %[[W]] : memref<1x3x6x4xi8>, memref<3x3x4x2xi8>) outs(%[[A]] : memref<1x1x4x2xi32>)
// CHECK:         %[[ROW:.+]] = memref.subview %[[Y]][%{{.+}}, %[[R]], 0, 0] [1, 1, 4, 2] [1, 1, 1, 1]
// CHECK:         linalg.generic {{.*}} outs(%[[ROW]] : memref<1x1x4x2xi8, strided<[32, 8, 2, 1], offset: ?>>)
// the last output row: window rows 0 and 1 the input's rows 2 and 3, row 2 the bottom pad
// CHECK:       linalg.copy
// CHECK:       linalg.copy
// CHECK:       linalg.fill ins(%[[PAD]] : i8) outs(%{{.+}} : memref<1x1x4x4xi8, strided<[72, 24, 4, 1], offset: ?>>)
// CHECK:       linalg.conv_2d_nhwc_hwcf
// CHECK:       memref.dealloc %[[P]]
// CHECK:       memref.dealloc %[[A]]
func.func @qconv() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<3> : tensor<3x3x4x2xi8>} : () -> memref<3x3x4x2xi8>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<[7, -7]> : tensor<2xi32>} : () -> memref<2xi32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x4x4x4xi8>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x2xi8>
  "glowir.qconv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1, input_offset = -3, multipliers = array<f32: 0.01, 0.02>, offset = 5, output_min = 5, output_max = 127} : (memref<1x4x4x2xi8>, memref<1x4x4x4xi8>, memref<3x3x4x2xi8>, memref<2xi32>) -> ()
  return
}

// -----

// qfully_connected with one multiplier: the bias broadcast over the rows, linalg.matmul on i8 into i32, the
// requantization with constants; quantize, dequantize and qadd are elementwise generics in float32 (roundeven, the
// offset, the clamp in float before the conversion to i8).
// CHECK-LABEL: func.func @qfc
// CHECK:       %[[A:.+]] = memref.alloc() {{.*}} : memref<2x3xi32>
// CHECK:       linalg.broadcast ins(%{{.+}} : memref<3xi32>) outs(%[[A]] : memref<2x3xi32>) dimensions = [0]
// CHECK-NEXT:  linalg.matmul ins(%{{.+}}, %{{.+}} : memref<2x4xi8>, memref<4x3xi8>) outs(%[[A]] : memref<2x3xi32>)
// CHECK:       arith.constant 1717986944 : i32
// CHECK:       arith.constant 34 : i32
// CHECK:       linalg.generic {{.*}} ins(%[[A]] : memref<2x3xi32>)
// CHECK:       linalg.generic
// CHECK:         arith.divf
// CHECK:         math.roundeven
// CHECK:         arith.minnumf
// CHECK:         arith.maxnumf
// CHECK:         arith.fptosi {{.*}} : f32 to i8
// CHECK:       linalg.generic
// CHECK:         arith.extsi {{.*}} : i8 to i32
// CHECK:         arith.sitofp
// CHECK:         arith.mulf
func.func @qfc() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1> : tensor<4x3xi8>} : () -> memref<4x3xi8>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<2> : tensor<3xi32>} : () -> memref<3xi32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x4xi8>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3xf32>
  %q = "glowir.alloc_activation"() : () -> memref<2x3xi8>
  %r = "glowir.alloc_activation"() : () -> memref<2x3xi8>
  "glowir.qfully_connected"(%q, %x, %w, %b) {multipliers = array<f32: 0.1>, offset = 0, output_min = -128, output_max = 127} : (memref<2x3xi8>, memref<2x4xi8>, memref<4x3xi8>, memref<3xi32>) -> ()
  %f = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  "glowir.dequantize"(%f, %q) {scale = 0.5 : f32, offset = 1} : (memref<2x3xf32>, memref<2x3xi8>) -> ()
  "glowir.quantize"(%r, %f) {scale = 0.25 : f32, offset = -2} : (memref<2x3xi8>, memref<2x3xf32>) -> ()
  "glowir.dequantize"(%y, %r) {scale = 0.25 : f32, offset = -2} : (memref<2x3xf32>, memref<2x3xi8>) -> ()
  "glowir.dealloc_activation"(%f) : (memref<2x3xf32>) -> ()
  "glowir.dealloc_activation"(%r) : (memref<2x3xi8>) -> ()
  "glowir.dealloc_activation"(%q) : (memref<2x3xi8>) -> ()
  return
}

// -----

// qconv2d on a filter packed for the int8 kernel (rank 6): no scratch accumulator in the memory plan; an int32
// buffer of its own (alloc ... dealloc around it), the bias broadcast into it, the convolution as a generic tagged
// glow.int8_conv over its [N, OH, OW, F/L, L] view, and the requantization from per-channel tables (one multiplier:
// the same value for every channel) tagged glow.int8_requant with (offset, min, max, smallest right shift). The CPU
// kernel (cpu-int8-kernels) replaces the four.
// CHECK-LABEL: func.func @packed
// CHECK:       %[[M:.+]] = memref.get_global @__glow_requant_multipliers{{.*}} : memref<16xi32>
// CHECK:       %[[S:.+]] = memref.get_global @__glow_requant_shifts{{.*}} : memref<16xi32>
// CHECK:       %[[A:.+]] = memref.alloc() {{.*}} : memref<1x3x3x16xi32>
// CHECK:       linalg.broadcast ins(%{{.+}} : memref<16xi32>) outs(%[[A]] : memref<1x3x3x16xi32>)
// CHECK:       %[[A5:.+]] = memref.expand_shape %[[A]] {{.*}} into memref<1x3x3x1x16xi32>
// CHECK:       linalg.generic {{.*}} outs(%[[A5]] : memref<1x3x3x1x16xi32>) attrs = {glow.int8_conv = array<i64: 1, 1, 1, 1>}
// CHECK:       linalg.generic {{.*}} ins(%[[A]], %[[M]], %[[S]] : {{.*}}) outs(%{{.+}} : memref<1x3x3x16xi8>) attrs = {glow.int8_requant = array<i64: 2, -128, 127, 37>}
// CHECK:       memref.dealloc %[[A]]
// CHECK-NOT:   linalg.conv_2d_nhwc_hwcf
func.func @packed() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1> : tensor<1x1x1x1x16x4xi8>} : () -> memref<1x1x1x1x16x4xi8>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<3> : tensor<16xi32>} : () -> memref<16xi32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x3x3x4xi8>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x3x3x16xi8>
  "glowir.qconv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, input_offset = 0, multipliers = array<f32: 0.01>, offset = 2, output_min = -128, output_max = 127} : (memref<1x3x3x16xi8>, memref<1x3x3x4xi8>, memref<1x1x1x1x16x4xi8>, memref<16xi32>) -> ()
  return
}

// -----

// qconv2d on a depthwise filter in tap quads (rank 5): the input copied into its bordered scratch with its sign bit
// flipped (read as unsigned: x + 128), the border the zero point's code so read (-3 + 128 = 125); an int32 buffer of
// its own, the bias broadcast into it, the sums as a generic over (n, oh, ow, c, kh, quad, tap) tagged
// glow.int8_depthwise (the input column ow + 4 quad + tap), the requantization tagged glow.int8_requant.
// CHECK-LABEL: func.func @depthwise
// CHECK:       %[[P:.+]] = memref.alloc() {{.*}} : memref<1x5x6x16xi8>
// CHECK:       arith.constant 125 : i8
// CHECK:       linalg.fill
// CHECK:       %[[IN:.+]] = memref.subview %[[P]][0, 1, 1, 0] [1, 3, 3, 16]
// CHECK:       linalg.generic {{.*}} outs(%[[IN]]
// CHECK:         arith.xori {{.*}} : i8
// CHECK:       %[[A:.+]] = memref.alloc() {{.*}} : memref<1x3x3x16xi32>
// CHECK:       linalg.broadcast ins(%{{.+}} : memref<16xi32>) outs(%[[A]] : memref<1x3x3x16xi32>)
// CHECK:       linalg.generic {{.*}} ins(%[[P]], %{{.+}} : memref<1x5x6x16xi8>, memref<3x1x1x16x4xi8>) outs(%[[A]] : memref<1x3x3x16xi32>) attrs = {glow.int8_depthwise = array<i64: 1, 1, 1, 1>}
// CHECK:         arith.extui {{.*}} : i8 to i32
// CHECK:         arith.extsi {{.*}} : i8 to i32
// CHECK:       linalg.generic {{.*}} ins(%[[A]], {{.*}}) outs(%{{.+}} : memref<1x3x3x16xi8>) attrs = {glow.int8_requant
// CHECK:       memref.dealloc %[[A]]
func.func @depthwise() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1> : tensor<3x1x1x16x4xi8>} : () -> memref<3x1x1x16x4xi8>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<3> : tensor<16xi32>} : () -> memref<16xi32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x3x3x16xi8>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x3x3x16xi8>
  "glowir.qconv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 2>, dilations = array<i64: 1, 1>, group = 16, input_offset = -3, multipliers = array<f32: 0.01>, offset = 2, output_min = -128, output_max = 127} : (memref<1x3x3x16xi8>, memref<1x3x3x16xi8>, memref<3x1x1x16x4xi8>, memref<16xi32>) -> ()
  return
}
