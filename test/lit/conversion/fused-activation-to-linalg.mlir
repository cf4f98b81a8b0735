// RUN: glow-opt %s --split-input-file --convert-glowir-to-linalg | FileCheck %s

// A fused relu runs in place on dest once the product is accumulated onto the bias.
// CHECK-LABEL: func.func @fully_connected_relu
// CHECK-SAME:  (%{{.+}}: memref<2x2xf32>, %{{.+}}: memref<2xf32>, %{{.+}}: memref<3x2xf32>, %[[Y:.+]]: memref<3x2xf32>)
// CHECK:       linalg.broadcast
// CHECK-NEXT:  linalg.matmul {{.*}} outs(%[[Y]] : memref<3x2xf32>)
// CHECK-NEXT:  linalg.generic {{.*}} outs(%[[Y]] : memref<3x2xf32>)
// CHECK-NEXT:  ^bb0(%[[V:.+]]: f32):
// CHECK-NEXT:    %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[R:.+]] = arith.maximumf %[[V]], %[[ZERO]] : f32
// CHECK-NEXT:    linalg.yield %[[R]]
func.func @fully_connected_relu() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %0 = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<2x2xf32>} : () -> memref<2x2xf32>
  %1 = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<-1.0> : tensor<2xf32>} : () -> memref<2xf32>
  %2 = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<3x2xf32>
  %3 = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<3x2xf32>
  "glowir.fully_connected"(%3, %2, %0, %1) {activation = "relu"} : (memref<3x2xf32>, memref<3x2xf32>, memref<2x2xf32>, memref<2xf32>) -> ()
  return
}

// -----

// A fused clip after the convolution: max with the lower bound, then min with the upper one, in place.
// CHECK-LABEL: func.func @conv_clip
// CHECK:       linalg.conv_2d_nhwc_hwcf
// CHECK-DAG:   %[[LO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:   %[[HI:.+]] = arith.constant 6.000000e+00 : f32
// CHECK:       linalg.generic
// CHECK:         %[[M:.+]] = arith.maximumf %{{.+}}, %[[LO]] : f32
// CHECK-NEXT:    %[[C:.+]] = arith.minimumf %[[M]], %[[HI]] : f32
// CHECK-NEXT:    linalg.yield %[[C]]
func.func @conv_clip() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %0 = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<1x1x1x2xf32>} : () -> memref<1x1x1x2xf32>
  %1 = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<0.0> : tensor<2xf32>} : () -> memref<2xf32>
  %2 = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x2x2x1xf32>
  %3 = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x2x2x2xf32>
  "glowir.conv2d"(%3, %2, %0, %1) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, activation = "clip", activation_min = 0.0 : f32, activation_max = 6.0 : f32} : (memref<1x2x2x2xf32>, memref<1x2x2x1xf32>, memref<1x1x1x2xf32>, memref<2xf32>) -> ()
  return
}
