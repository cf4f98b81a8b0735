// RUN: glow-opt %s --split-input-file --glowir-plan-memory | FileCheck %s

// Weights go one after the other at 64-byte aligned offsets in their region (constants; inputs and outputs);
// activations whose allocation intervals do not meet share bytes: d reuses a's, c lives beside both.
// CHECK-LABEL: func.func @plan
// CHECK-SAME:  glowir.activations_size = 128 : i64, glowir.constant_weights_size = 80 : i64
// CHECK-SAME:  glowir.mutable_weights_size = 80 : i64
// CHECK-NEXT:  "glowir.weight_var"() {mutability = "const", name = "w", offset = 0 : i64
// CHECK-NEXT:  "glowir.weight_var"() {mutability = "const", name = "b", offset = 64 : i64
// CHECK-NEXT:  "glowir.weight_var"() {mutability = "mutable", name = "x", offset = 0 : i64}
// CHECK-NEXT:  "glowir.weight_var"() {mutability = "mutable", name = "y", offset = 64 : i64}
// CHECK-NEXT:  "glowir.alloc_activation"() {name = "a", offset = [[A:[0-9]+]] : i64}
// CHECK:       "glowir.alloc_activation"() {name = "c", offset = [[C:[0-9]+]] : i64}
// CHECK:       "glowir.alloc_activation"() {name = "d", offset = [[A]] : i64}
func.func @plan() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1.0> : tensor<10xf32>} : () -> memref<10xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<4xf32>} : () -> memref<4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<16xf32>
  "glowir.splat"(%a) {value = 1.0 : f32} : (memref<16xf32>) -> ()
  %c = "glowir.alloc_activation"() {name = "c"} : () -> memref<16xf32>
  "glowir.tanh"(%c, %a) : (memref<16xf32>, memref<16xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<16xf32>) -> ()
  %d = "glowir.alloc_activation"() {name = "d"} : () -> memref<16xf32>
  "glowir.sigmoid"(%d, %c) : (memref<16xf32>, memref<16xf32>) -> ()
  "glowir.dealloc_activation"(%c) : (memref<16xf32>) -> ()
  %v = "glowir.tensor_view"(%d) : (memref<16xf32>) -> memref<4x4xf32>
  %v0 = "glowir.tensor_view"(%v) : (memref<4x4xf32>) -> memref<4xf32>
  "glowir.element_add"(%y, %v0, %b) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%d) : (memref<16xf32>) -> ()
  return
}

// -----

// Negative: an activation never freed lives to the end, so nothing allocated after it reuses its bytes; odd sizes
// still start at aligned offsets. No weights: empty regions.
// CHECK-LABEL: func.func @never_freed
// CHECK-SAME:  glowir.activations_size = 69 : i64, glowir.constant_weights_size = 0 : i64
// CHECK-SAME:  glowir.mutable_weights_size = 0 : i64
// CHECK-NEXT:  "glowir.alloc_activation"() {name = "a", offset = 0 : i64}
// CHECK-NEXT:  "glowir.splat"
// CHECK-NEXT:  "glowir.alloc_activation"() {name = "b", offset = 64 : i64}
func.func @never_freed() attributes {glowir.inputs = [], glowir.outputs = []} {
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<3xf32>
  "glowir.splat"(%a) {value = 1.0 : f32} : (memref<3xf32>) -> ()
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<5xi8>
  "glowir.splat"(%b) {value = 1 : i8} : (memref<5xi8>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<5xi8>) -> ()
  return
}

// -----

// A kernel's scratch buffer (softmax's row statistics, 2 x f32) is placed with the activations, live at its
// instruction only: it cannot share a's bytes (a is read there) but may share those of c, freed before it.
// CHECK-LABEL: func.func @scratch
// CHECK-SAME:  glowir.activations_size = 88 : i64
// CHECK:       "glowir.alloc_activation"() {name = "c", offset = [[C:[0-9]+]] : i64}
// CHECK:       "glowir.alloc_activation"() {name = "a", offset = [[A:[0-9]+]] : i64}
// CHECK:       "glowir.softmax"(%{{.+}}, %{{.+}}) {axis = 1 : i64, scratch_offsets = array<i64: [[C]]>}
func.func @scratch() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3xf32>
  %c = "glowir.alloc_activation"() {name = "c"} : () -> memref<2x3xf32>
  "glowir.relu"(%c, %x) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<2x3xf32>
  "glowir.relu"(%a, %c) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.dealloc_activation"(%c) : (memref<2x3xf32>) -> ()
  "glowir.softmax"(%y, %a) {axis = 1 : i64} : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<2x3xf32>) -> ()
  return
}

// -----

// A convolution's bordered copy of its input lives from the convolution right before when that one writes the input
// (its kernel may write the copy itself): it may not take the bytes of t, which that convolution reads.
// CHECK-LABEL: func.func @bordered
// CHECK:       "glowir.alloc_activation"() {name = "t", offset = 0 : i64}
// CHECK:       "glowir.alloc_activation"() {name = "a", offset = 2304 : i64}
// CHECK:       "glowir.conv2d"({{.+}} pads = array<i64: 1, 1, 1, 1>, scratch_offsets = array<i64: 1152>
func.func @bordered() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<3x3x8x8xf32>} : () -> memref<3x3x8x8xf32>
  %v = "glowir.weight_var"() {mutability = "const", name = "v", value = dense<0.5> : tensor<3x3x8x8xf32>} : () -> memref<3x3x8x8xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<8xf32>} : () -> memref<8xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x6x6x8xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x8xf32>
  %t = "glowir.alloc_activation"() {name = "t"} : () -> memref<1x6x6x8xf32>
  "glowir.relu"(%t, %x) : (memref<1x6x6x8xf32>, memref<1x6x6x8xf32>) -> ()
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<1x4x4x8xf32>
  "glowir.conv2d"(%a, %t, %v, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x8xf32>, memref<1x6x6x8xf32>, memref<3x3x8x8xf32>, memref<8xf32>) -> ()
  "glowir.dealloc_activation"(%t) : (memref<1x6x6x8xf32>) -> ()
  "glowir.conv2d"(%y, %a, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x8xf32>, memref<1x4x4x8xf32>, memref<3x3x8x8xf32>, memref<8xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<1x4x4x8xf32>) -> ()
  return
}

// -----

// Negative: written by a pooling (no kernel that takes the copy), or by a convolution with another instruction
// between them: the copy lives at the convolution only and reuses the bytes of t, dead by then.
// CHECK-LABEL: func.func @pool_before
// CHECK:       "glowir.alloc_activation"() {name = "t", offset = 0 : i64}
// CHECK:       "glowir.conv2d"({{.+}} scratch_offsets = array<i64: 0>
// CHECK-LABEL: func.func @not_right_before
// CHECK:       "glowir.alloc_activation"() {name = "t", offset = 0 : i64}
// CHECK:       "glowir.conv2d"({{.+}} pads = array<i64: 1, 1, 1, 1>, scratch_offsets = array<i64: 0>
func.func @pool_before() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<3x3x8x8xf32>} : () -> memref<3x3x8x8xf32>
  %v = "glowir.weight_var"() {mutability = "const", name = "v", value = dense<0.5> : tensor<3x3x8x8xf32>} : () -> memref<3x3x8x8xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<8xf32>} : () -> memref<8xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x6x6x8xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x8xf32>
  %t = "glowir.alloc_activation"() {name = "t"} : () -> memref<1x6x6x8xf32>
  "glowir.relu"(%t, %x) : (memref<1x6x6x8xf32>, memref<1x6x6x8xf32>) -> ()
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<1x4x4x8xf32>
  "glowir.avg_pool"(%a, %t) {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 0, count_include_pad = 0} : (memref<1x4x4x8xf32>, memref<1x6x6x8xf32>) -> ()
  "glowir.dealloc_activation"(%t) : (memref<1x6x6x8xf32>) -> ()
  "glowir.conv2d"(%y, %a, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x8xf32>, memref<1x4x4x8xf32>, memref<3x3x8x8xf32>, memref<8xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<1x4x4x8xf32>) -> ()
  return
}

func.func @not_right_before() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<3x3x8x8xf32>} : () -> memref<3x3x8x8xf32>
  %v = "glowir.weight_var"() {mutability = "const", name = "v", value = dense<0.5> : tensor<3x3x8x8xf32>} : () -> memref<3x3x8x8xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<8xf32>} : () -> memref<8xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x6x6x8xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x4x4x8xf32>
  %t = "glowir.alloc_activation"() {name = "t"} : () -> memref<1x6x6x8xf32>
  "glowir.relu"(%t, %x) : (memref<1x6x6x8xf32>, memref<1x6x6x8xf32>) -> ()
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<1x4x4x8xf32>
  "glowir.conv2d"(%a, %t, %v, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x8xf32>, memref<1x6x6x8xf32>, memref<3x3x8x8xf32>, memref<8xf32>) -> ()
  "glowir.dealloc_activation"(%t) : (memref<1x6x6x8xf32>) -> ()
  "glowir.splat"(%y) {value = 0.0 : f32} : (memref<1x4x4x8xf32>) -> ()
  "glowir.conv2d"(%y, %a, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x8xf32>, memref<1x4x4x8xf32>, memref<3x3x8x8xf32>, memref<8xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<1x4x4x8xf32>) -> ()
  return
}
