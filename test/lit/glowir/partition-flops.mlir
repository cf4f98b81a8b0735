// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowir-plan-memory,glowir-partition{partitions=2})' | FileCheck %s

// A convolution's FLOPs are 2 * MACs whatever its filter's layout: 2 * (1x4x4x8 outputs) * (3 * 3 * 4 products) =
// 9216, from the HWCF filter [3, 3, 4, 8] and from the same filter packed in blocks of 4 output channels,
// [2, 3, 3, 4, 4] (not 2 * 3 * 3 * 4, the dims before the last, which counts each block's products once more).
// CHECK-LABEL: func.func @hwcf_p0
// CHECK-SAME:  glowir.partition_flops = 9216 : i64
// CHECK-LABEL: func.func @hwcf_p1
// CHECK-SAME:  glowir.partition_flops = 128 : i64
func.func @hwcf() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1.0> : tensor<3x3x4x8xf32>} : () -> memref<3x3x4x8xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<0.0> : tensor<8xf32>} : () -> memref<8xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x4x4x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x8xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<1x4x4x8xf32>
  "glowir.conv2d"(%a, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x8xf32>, memref<1x4x4x4xf32>, memref<3x3x4x8xf32>, memref<8xf32>) -> ()
  "glowir.relu"(%y, %a) : (memref<1x4x4x8xf32>, memref<1x4x4x8xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<1x4x4x8xf32>) -> ()
  return
}

// -----

// CHECK-LABEL: func.func @packed_p0
// CHECK-SAME:  glowir.partition_flops = 9216 : i64
// CHECK-LABEL: func.func @packed_p1
// CHECK-SAME:  glowir.partition_flops = 128 : i64
func.func @packed() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1.0> : tensor<2x3x3x4x4xf32>} : () -> memref<2x3x3x4x4xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<0.0> : tensor<8xf32>} : () -> memref<8xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x4x4x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x8xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<1x4x4x8xf32>
  "glowir.conv2d"(%a, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x8xf32>, memref<1x4x4x4xf32>, memref<2x3x3x4x4xf32>, memref<8xf32>) -> ()
  "glowir.relu"(%y, %a) : (memref<1x4x4x8xf32>, memref<1x4x4x8xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<1x4x4x8xf32>) -> ()
  return
}

// -----

// In chunks of 2 input channels too, [2, 2, 3, 3, 2, 4] (blocks, chunks, KH, KW, Cc, B): the same 9216.
// CHECK-LABEL: func.func @chunked_p0
// CHECK-SAME:  glowir.partition_flops = 9216 : i64
// CHECK-LABEL: func.func @chunked_p1
// CHECK-SAME:  glowir.partition_flops = 128 : i64
func.func @chunked() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1.0> : tensor<2x2x3x3x2x4xf32>} : () -> memref<2x2x3x3x2x4xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<0.0> : tensor<8xf32>} : () -> memref<8xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x4x4x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x8xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<1x4x4x8xf32>
  "glowir.conv2d"(%a, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x8xf32>, memref<1x4x4x4xf32>, memref<2x2x3x3x2x4xf32>, memref<8xf32>) -> ()
  "glowir.relu"(%y, %a) : (memref<1x4x4x8xf32>, memref<1x4x4x8xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<1x4x4x8xf32>) -> ()
  return
}
