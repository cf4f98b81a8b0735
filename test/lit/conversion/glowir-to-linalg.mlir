// RUN: glow-opt %s --split-input-file --verify-diagnostics --convert-glowir-to-linalg | FileCheck %s

// Weight vars become arguments in declaration order; FullyConnected writes the bias into dest, then the matmul
// accumulates onto it.

// CHECK-LABEL: func.func @fully_connected
// CHECK-SAME:  (%[[W:.+]]: memref<10x5xf32>, %[[B:.+]]: memref<5xf32>, %[[X:.+]]: memref<3x10xf32>, %[[Y:.+]]: memref<3x5xf32>)
// CHECK-SAME:  glowir.arguments = ["weights", "bias", "input_1", "output_1"]
// CHECK-SAME:  glowir.inputs = ["input_1"], glowir.outputs = ["output_1"], llvm.emit_c_interface
// CHECK-NOT:   glowir.
// CHECK:       %[[FC:.+]] = memref.alloc() {alignment = 64 : i64} : memref<3x5xf32>
// CHECK:       linalg.broadcast ins(%[[B]] : memref<5xf32>) outs(%[[FC]] : memref<3x5xf32>) dimensions = [0]
// CHECK:       linalg.matmul ins(%[[X]], %[[W]] : memref<3x10xf32>, memref<10x5xf32>) outs(%[[FC]] : memref<3x5xf32>)
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[FC]] : memref<3x5xf32>) outs(%[[Y]] : memref<3x5xf32>)
// CHECK:       %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:       %[[NEG:.+]] = arith.negf
// CHECK:       %[[EXP:.+]] = math.exp %[[NEG]]
// CHECK:       %[[DEN:.+]] = arith.addf %[[ONE]], %[[EXP]]
// CHECK:       %[[SIG:.+]] = arith.divf %[[ONE]], %[[DEN]]
// CHECK:       linalg.yield %[[SIG]]
// CHECK:       memref.dealloc %[[FC]] : memref<3x5xf32>
// CHECK-NEXT:  return
func.func @fully_connected() attributes {glowir.inputs = ["input_1"], glowir.outputs = ["output_1"]} {
  %0 = "glowir.weight_var"() {mutability = "const", name = "weights", value = dense<0.5> : tensor<10x5xf32>} : () -> memref<10x5xf32>
  %1 = "glowir.weight_var"() {mutability = "const", name = "bias", value = dense<1.0> : tensor<5xf32>} : () -> memref<5xf32>
  %2 = "glowir.weight_var"() {mutability = "mutable", name = "input_1"} : () -> memref<3x10xf32>
  %3 = "glowir.weight_var"() {mutability = "mutable", name = "output_1"} : () -> memref<3x5xf32>
  %4 = "glowir.alloc_activation"() {name = "fc"} : () -> memref<3x5xf32>
  "glowir.fully_connected"(%4, %2, %0, %1) : (memref<3x5xf32>, memref<3x10xf32>, memref<10x5xf32>, memref<5xf32>) -> ()
  "glowir.sigmoid"(%3, %4) : (memref<3x5xf32>, memref<3x5xf32>) -> ()
  "glowir.dealloc_activation"(%4) : (memref<3x5xf32>) -> ()
  return
}

// -----

// MatMul zeroes dest first: linalg.matmul accumulates.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:  (%[[A:.+]]: memref<2x3xf32>, %[[B:.+]]: memref<3x4xf32>, %[[C:.+]]: memref<2x4xf32>)
// CHECK:       %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:       linalg.fill ins(%[[ZERO]] : f32) outs(%[[C]] : memref<2x4xf32>)
// CHECK:       linalg.matmul ins(%[[A]], %[[B]] : memref<2x3xf32>, memref<3x4xf32>) outs(%[[C]] : memref<2x4xf32>)
func.func @matmul() attributes {glowir.inputs = ["a", "b"], glowir.outputs = ["c"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2x3xf32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<3x4xf32>
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<2x4xf32>
  "glowir.matmul"(%c, %a, %b) : (memref<2x4xf32>, memref<2x3xf32>, memref<3x4xf32>) -> ()
  return
}

// -----

// Float elementwise: one identity-mapped generic per instruction, the arith float op in its body.

// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @elementwise_float
// CHECK-SAME:  (%[[A:.+]]: memref<2x3xf32>, %[[B:.+]]: memref<2x3xf32>, %[[C:.+]]: memref<2x3xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:  ins(%[[A]], %[[B]] : memref<2x3xf32>, memref<2x3xf32>) outs(%[[C]] : memref<2x3xf32>)
// CHECK-NEXT:  ^bb0(%[[L:.+]]: f32, %[[R:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:  %[[SUM:.+]] = arith.addf %[[L]], %[[R]] : f32
// CHECK-NEXT:  linalg.yield %[[SUM]] : f32
// CHECK:       arith.subf
// CHECK:       arith.mulf
// CHECK:       arith.divf
// CHECK:       arith.maximumf
// CHECK:       arith.minimumf
func.func @elementwise_float() attributes {glowir.inputs = ["a", "b"], glowir.outputs = ["c"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2x3xf32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<2x3xf32>
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<2x3xf32>
  "glowir.element_add"(%c, %a, %b) : (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.element_sub"(%c, %c, %b) : (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.element_mul"(%c, %c, %b) : (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.element_div"(%c, %c, %b) : (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.element_max"(%c, %c, %b) : (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.element_min"(%c, %c, %b) : (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

// Integer elementwise uses the signed arith ops.

// CHECK-LABEL: func.func @elementwise_int
// CHECK:       arith.addi {{.+}} : i64
// CHECK:       arith.subi {{.+}} : i64
// CHECK:       arith.muli {{.+}} : i64
// CHECK:       arith.divsi {{.+}} : i64
// CHECK:       arith.maxsi {{.+}} : i64
// CHECK:       arith.minsi {{.+}} : i64
func.func @elementwise_int() attributes {glowir.inputs = ["a", "b"], glowir.outputs = ["c"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<4xi64>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<4xi64>
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<4xi64>
  "glowir.element_add"(%c, %a, %b) : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_sub"(%c, %c, %b) : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_mul"(%c, %c, %b) : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_div"(%c, %c, %b) : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_max"(%c, %c, %b) : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_min"(%c, %c, %b) : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  return
}

// -----

// Unary activations, in place (src == dest is fine for an identity-mapped generic).

// CHECK-LABEL: func.func @unary
// CHECK-SAME:  (%[[X:.+]]: memref<8xf32>)
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[X]] : memref<8xf32>) outs(%[[X]] : memref<8xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:  %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %[[RELU:.+]] = arith.maximumf %[[IN]], %[[ZERO]] : f32
// CHECK-NEXT:  linalg.yield %[[RELU]] : f32
// CHECK:       linalg.generic
// CHECK:       %[[TANH:.+]] = math.tanh %{{.+}} : f32
// CHECK-NEXT:  linalg.yield %[[TANH]] : f32
func.func @unary() attributes {glowir.inputs = ["x"], glowir.outputs = []} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<8xf32>
  "glowir.relu"(%x, %x) : (memref<8xf32>, memref<8xf32>) -> ()
  "glowir.tanh"(%x, %x) : (memref<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

// BatchedAdd reads the slice without the batch dim.

// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[SLICE:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @batched_add
// CHECK-SAME:  (%[[S:.+]]: memref<3x4xf32>, %[[X:.+]]: memref<2x3x4xf32>, %[[Y:.+]]: memref<2x3x4xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[SLICE]], #[[ID]]]
// CHECK-SAME:  ins(%[[X]], %[[S]] : memref<2x3x4xf32>, memref<3x4xf32>) outs(%[[Y]] : memref<2x3x4xf32>)
// CHECK:       arith.addf
func.func @batched_add() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %s = "glowir.weight_var"() {mutability = "const", name = "s", value = dense<2.0> : tensor<3x4xf32>} : () -> memref<3x4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3x4xf32>
  "glowir.batched_add"(%y, %x, %s) : (memref<2x3x4xf32>, memref<2x3x4xf32>, memref<3x4xf32>) -> ()
  return
}

// -----

// Data movement: transpose, broadcast (dims align right, size-1 dims read index 0), copy, splat. The transpose
// [2, 0, 1] keeps dims 0 and 1 together: it moves [6, 4] to [4, 6] on collapsed views of both buffers.

// CHECK-DAG:   #[[BCAST:.+]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @movement
// CHECK-SAME:  (%[[X:.+]]: memref<2x3x4xf32>, %[[R:.+]]: memref<1x4xf32>, %[[T:.+]]: memref<4x2x3xf32>, %[[B:.+]]: memref<2x3x4xf32>, %[[C:.+]]: memref<2x3x4xf32>)
// CHECK:       %[[XC:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : memref<2x3x4xf32> into memref<6x4xf32>
// CHECK:       %[[TC:.+]] = memref.collapse_shape %[[T]] {{\[}}[0], [1, 2]] : memref<4x2x3xf32> into memref<4x6xf32>
// CHECK:       linalg.transpose ins(%[[XC]] : memref<6x4xf32>) outs(%[[TC]] : memref<4x6xf32>) permutation = [1, 0]
// CHECK:       linalg.generic {indexing_maps = [#[[BCAST]], #[[ID]]]
// CHECK-SAME:  ins(%[[R]] : memref<1x4xf32>) outs(%[[B]] : memref<2x3x4xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:  linalg.yield %[[IN]] : f32
// CHECK:       linalg.copy {{.*}}ins(%[[X]] : memref<2x3x4xf32>) outs(%[[C]] : memref<2x3x4xf32>)
// CHECK:       %[[V:.+]] = arith.constant 2.500000e+00 : f32
// CHECK:       linalg.fill ins(%[[V]] : f32) outs(%[[B]] : memref<2x3x4xf32>)
func.func @movement() attributes {glowir.inputs = ["x", "r"], glowir.outputs = ["t", "b", "c"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3x4xf32>
  %r = "glowir.weight_var"() {mutability = "mutable", name = "r"} : () -> memref<1x4xf32>
  %t = "glowir.weight_var"() {mutability = "mutable", name = "t"} : () -> memref<4x2x3xf32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<2x3x4xf32>
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<2x3x4xf32>
  "glowir.transpose"(%t, %x) {shuffle = array<i64: 2, 0, 1>} : (memref<4x2x3xf32>, memref<2x3x4xf32>) -> ()
  "glowir.broadcast"(%b, %r) {shape = array<i64: 2, 3, 4>} : (memref<2x3x4xf32>, memref<1x4xf32>) -> ()
  "glowir.copy"(%c, %x) : (memref<2x3x4xf32>, memref<2x3x4xf32>) -> ()
  "glowir.splat"(%b) {value = 2.5 : f32} : (memref<2x3x4xf32>) -> ()
  return
}

// -----

// NCHW -> NHWC keeps H and W together: [1, 16, 15] -> [1, 15, 16]. A transpose that reverses every dim keeps none
// together and stays as it is.
// CHECK-LABEL: func.func @transposes
// CHECK-SAME:  (%[[X:.+]]: memref<1x16x3x5xf32>, %[[A:.+]]: memref<2x3x4xf32>, %[[Y:.+]]: memref<1x3x5x16xf32>, %[[B:.+]]: memref<4x3x2xf32>)
// CHECK:       %[[XC:.+]] = memref.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : memref<1x16x3x5xf32> into memref<1x16x15xf32>
// CHECK:       %[[YC:.+]] = memref.collapse_shape %[[Y]] {{\[}}[0], [1, 2], [3]] : memref<1x3x5x16xf32> into memref<1x15x16xf32>
// CHECK:       linalg.transpose ins(%[[XC]] : memref<1x16x15xf32>) outs(%[[YC]] : memref<1x15x16xf32>) permutation = [0, 2, 1]
// CHECK-NOT:   memref.collapse_shape
// CHECK:       linalg.transpose ins(%[[A]] : memref<2x3x4xf32>) outs(%[[B]] : memref<4x3x2xf32>) permutation = [2, 1, 0]
func.func @transposes() attributes {glowir.inputs = ["x", "a"], glowir.outputs = ["y", "b"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x16x3x5xf32>
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2x3x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x3x5x16xf32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<4x3x2xf32>
  "glowir.transpose"(%y, %x) {shuffle = array<i64: 0, 2, 3, 1>} : (memref<1x3x5x16xf32>, memref<1x16x3x5xf32>) -> ()
  "glowir.transpose"(%b, %a) {shuffle = array<i64: 2, 1, 0>} : (memref<4x3x2xf32>, memref<2x3x4xf32>) -> ()
  return
}

// -----

// NCHW -> NHWC of 3 channels interleaves rows into pixels: an elementwise copy over the buffers as they are, reading
// the input through the permutation (which linalg-fuse-elementwise can join to a copy after it). Negative: NHWC ->
// NCHW onto 5 columns reads the input's innermost dim into the output's innermost: collapsed, a linalg.transpose.
// CHECK:       #[[NCHW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-LABEL: func.func @interleaving_transpose
// CHECK-SAME:  (%[[X:.+]]: memref<1x3x4x5xf32>, %[[Y:.+]]: memref<1x4x5x3xf32>, %[[Z:.+]]: memref<1x3x4x5xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[NCHW]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : memref<1x3x4x5xf32>) outs(%[[Y]] : memref<1x4x5x3xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:    linalg.yield %[[IN]] : f32
// CHECK:       linalg.transpose
func.func @interleaving_transpose() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x3x4x5xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x5x3xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<1x3x4x5xf32>
  "glowir.transpose"(%y, %x) {shuffle = array<i64: 0, 2, 3, 1>} : (memref<1x4x5x3xf32>, memref<1x3x4x5xf32>) -> ()
  "glowir.transpose"(%z, %y) {shuffle = array<i64: 0, 3, 1, 2>} : (memref<1x3x4x5xf32>, memref<1x4x5x3xf32>) -> ()
  return
}

// -----

// Views: a reshape keeps the identity layout; an offset view is strided, and a view of it adds its offset.

// CHECK-LABEL: func.func @views
// CHECK-SAME:  (%[[X:.+]]: memref<4x6xf32>, %[[Y:.+]]: memref<3xf32>)
// CHECK:       %[[FLAT:.+]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [24], strides: [1] : memref<4x6xf32> to memref<24xf32>
// CHECK:       %[[ROWS:.+]] = memref.reinterpret_cast %[[X]] to offset: [12], sizes: [2, 6], strides: [6, 1] : memref<4x6xf32> to memref<2x6xf32, strided<[6, 1], offset: 12>>
// CHECK:       %[[PART:.+]] = memref.reinterpret_cast %[[ROWS]] to offset: [14], sizes: [3], strides: [1] : memref<2x6xf32, strided<[6, 1], offset: 12>> to memref<3xf32, strided<[1], offset: 14>>
// CHECK:       linalg.copy {{.*}}ins(%[[PART]] : memref<3xf32, strided<[1], offset: 14>>) outs(%[[Y]] : memref<3xf32>)
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[FLAT]] : memref<24xf32>) outs(%[[FLAT]] : memref<24xf32>)
func.func @views() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4x6xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<3xf32>
  %flat = "glowir.tensor_view"(%x) : (memref<4x6xf32>) -> memref<24xf32>
  %rows = "glowir.tensor_view"(%x) {offsets = array<i64: 2, 0>} : (memref<4x6xf32>) -> memref<2x6xf32>
  %part = "glowir.tensor_view"(%rows) {offsets = array<i64: 0, 2>} : (memref<2x6xf32>) -> memref<3xf32>
  "glowir.copy"(%y, %part) : (memref<3xf32>, memref<3xf32>) -> ()
  "glowir.relu"(%flat, %flat) : (memref<24xf32>, memref<24xf32>) -> ()
  return
}

// -----

// Scalars are 0-d memrefs: empty index space, maps with no results.

// CHECK-DAG:   #[[SCALAR:.+]] = affine_map<() -> ()>
// CHECK-DAG:   #[[TO3:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @scalars
// CHECK-SAME:  (%[[A:.+]]: memref<f32>, %[[B:.+]]: memref<f32>, %[[V:.+]]: memref<3xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[SCALAR]], #[[SCALAR]], #[[SCALAR]]], iterator_types = []}
// CHECK-SAME:  ins(%[[A]], %[[A]] : memref<f32>, memref<f32>) outs(%[[B]] : memref<f32>)
// CHECK:       linalg.generic {indexing_maps = [#[[TO3]], #{{.+}}], iterator_types = ["parallel"]}
// CHECK-SAME:  ins(%[[B]] : memref<f32>) outs(%[[V]] : memref<3xf32>)
func.func @scalars() attributes {glowir.inputs = ["a"], glowir.outputs = ["b", "v"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<f32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<f32>
  %v = "glowir.weight_var"() {mutability = "mutable", name = "v"} : () -> memref<3xf32>
  "glowir.element_mul"(%b, %a, %a) : (memref<f32>, memref<f32>, memref<f32>) -> ()
  "glowir.broadcast"(%v, %b) {shape = array<i64: 3>} : (memref<3xf32>, memref<f32>) -> ()
  return
}

// -----

// Booleans are stored a byte per element (numpy's layout; LLVM's memref lowering has no sub-byte loads).

// CHECK-LABEL: func.func @booleans
// CHECK-SAME:  (%[[X:.+]]: memref<2x3xi8>, %[[Y:.+]]: memref<3x2xi8>)
// CHECK:       %[[T:.+]] = memref.alloc() {alignment = 64 : i64} : memref<3x2xi8>
// CHECK:       linalg.generic {{.*}} ins(%[[X]] : memref<2x3xi8>) outs(%[[T]] : memref<3x2xi8>)
// CHECK:       %[[TRUE:.+]] = arith.constant 1 : i8
// CHECK:       linalg.fill ins(%[[TRUE]] : i8) outs(%[[Y]] : memref<3x2xi8>)
func.func @booleans() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xi1>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<3x2xi1>
  %t = "glowir.alloc_activation"() {name = "t"} : () -> memref<3x2xi1>
  "glowir.transpose"(%t, %x) {shuffle = array<i64: 1, 0>} : (memref<3x2xi1>, memref<2x3xi1>) -> ()
  "glowir.splat"(%y) {value = true} : (memref<3x2xi1>) -> ()
  "glowir.copy"(%y, %t) : (memref<3x2xi1>, memref<3x2xi1>) -> ()
  "glowir.dealloc_activation"(%t) : (memref<3x2xi1>) -> ()
  return
}

// -----

func.func @bool_arithmetic() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xi1>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xi1>
  // expected-error @below {{'glowir.element_add' has no lowering for i1 buffers}}
  "glowir.element_add"(%y, %x, %x) : (memref<4xi1>, memref<4xi1>, memref<4xi1>) -> ()
  return
}

// -----

func.func @free_a_weight() attributes {glowir.inputs = ["x"], glowir.outputs = []} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  // expected-error @below {{'glowir.dealloc_activation' frees a buffer that alloc_activation did not make}}
  "glowir.dealloc_activation"(%x) : (memref<4xf32>) -> ()
  return
}

// -----

func.func @fractional_splat() attributes {glowir.inputs = [], glowir.outputs = ["y"]} {
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xi64>
  // expected-error @below {{'glowir.splat' op value 5.000000e-01 : f32 must be a i64 attribute like the elements it fills}}
  "glowir.splat"(%y) {value = 0.5 : f32} : (memref<4xi64>) -> ()
  return
}

// -----

// expected-error @below {{glowir program @has_arguments takes no arguments}}
func.func @has_arguments(%arg0: memref<4xf32>) attributes {glowir.inputs = [], glowir.outputs = []} {
  %y = "glowir.alloc_activation"() {name = "y"} : () -> memref<4xf32>
  "glowir.copy"(%y, %arg0) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%y) : (memref<4xf32>) -> ()
  return
}

// -----

// A glowir op outside a function's body is never converted: declared legality reports it.

// expected-error @below {{'glowir.alloc_activation' was left unconverted}}
%stray = "glowir.alloc_activation"() {name = "stray"} : () -> memref<4xf32>

// -----

// Weights packed in column panels [N/P, K, P] (cpu-pack-matmul-weights): the bias broadcast, then one generic over
// (m, panel, column, k) on dest viewed [M, N/P, P], tagged for the CPU matmul kernel.

// CHECK-LABEL: func.func @fully_connected_packed
// CHECK-SAME:  (%[[W:.+]]: memref<2x10x4xf32>, %[[B:.+]]: memref<8xf32>, %[[X:.+]]: memref<3x10xf32>, %[[Y:.+]]: memref<3x8xf32>)
// CHECK:       linalg.broadcast ins(%[[B]] : memref<8xf32>) outs(%[[Y]] : memref<3x8xf32>) dimensions = [0]
// CHECK:       %[[YV:.+]] = memref.expand_shape %[[Y]] {{\[\[}}0], [1, 2]] output_shape [3, 2, 4]
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[X]], %[[W]] : memref<3x10xf32>, memref<2x10x4xf32>) outs(%[[YV]] : memref<3x2x4xf32>)
// CHECK-SAME:  glow.packed_matmul
// CHECK-NOT:   linalg.matmul
// CHECK:       return
func.func @fully_connected_packed() attributes {glowir.inputs = ["input_1"], glowir.outputs = ["output_1"]} {
  %0 = "glowir.weight_var"() {mutability = "const", name = "weights", value = dense<0.5> : tensor<2x10x4xf32>} : () -> memref<2x10x4xf32>
  %1 = "glowir.weight_var"() {mutability = "const", name = "bias", value = dense<1.0> : tensor<8xf32>} : () -> memref<8xf32>
  %2 = "glowir.weight_var"() {mutability = "mutable", name = "input_1"} : () -> memref<3x10xf32>
  %3 = "glowir.weight_var"() {mutability = "mutable", name = "output_1"} : () -> memref<3x8xf32>
  "glowir.fully_connected"(%3, %2, %0, %1) : (memref<3x8xf32>, memref<3x10xf32>, memref<2x10x4xf32>, memref<8xf32>) -> ()
  return
}
