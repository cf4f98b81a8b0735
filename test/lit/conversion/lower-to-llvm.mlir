// The codegen half of lower-to-llvm: a glowir program through the CODEGEN pipeline (glow_mlir/passes/pipelines.py)
// to the LLVM dialect, ready for the ExecutionEngine.
// RUN: glow-opt %s -p 'builtin.module(convert-glowir-to-linalg,func.func(convert-linalg-to-loops),func.func(canonicalize,cse),expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)' | FileCheck %s

// CHECK-NOT:   glowir.{{[a-z_]+}}"
// CHECK-NOT:   linalg.
// CHECK-NOT:   memref.
// CHECK-DAG:   llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-DAG:   llvm.func @free(!llvm.ptr)
// A memref argument expands to (allocated, aligned, offset, sizes..., strides...).
// CHECK-LABEL: llvm.func @program(
// CHECK-SAME:  %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64, %{{.+}}: i64,
// CHECK-SAME:  glowir.arguments = ["weights", "bias", "input_1", "output_1", "flag", "flag_t", "scale"]
// CHECK:       llvm.call @malloc
// CHECK:       llvm.intr.tanh
// CHECK:       llvm.intr.exp
// CHECK:       llvm.call @free
// Booleans are bytes: no i1 load or store is left.
// CHECK-NOT:   llvm.load {{.+}} -> i1
// CHECK-NOT:   llvm.store {{.+}} : i1
// The C interface takes one descriptor pointer per weight var.
// CHECK-LABEL: llvm.func @_mlir_ciface_program(
// CHECK-SAME:  %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK:       llvm.call @program(
func.func @program() attributes {glowir.inputs = ["input_1", "flag", "scale"], glowir.outputs = ["output_1", "flag_t"]} {
  %0 = "glowir.weight_var"() {mutability = "const", name = "weights", value = dense<0.5> : tensor<10x5xf32>} : () -> memref<10x5xf32>
  %1 = "glowir.weight_var"() {mutability = "const", name = "bias", value = dense<1.0> : tensor<5xf32>} : () -> memref<5xf32>
  %2 = "glowir.weight_var"() {mutability = "mutable", name = "input_1"} : () -> memref<3x10xf32>
  %3 = "glowir.weight_var"() {mutability = "mutable", name = "output_1"} : () -> memref<3x5xf32>
  %4 = "glowir.weight_var"() {mutability = "mutable", name = "flag"} : () -> memref<2x3xi1>
  %5 = "glowir.weight_var"() {mutability = "mutable", name = "flag_t"} : () -> memref<3x2xi1>
  %6 = "glowir.weight_var"() {mutability = "mutable", name = "scale"} : () -> memref<f32>
  %7 = "glowir.alloc_activation"() {name = "fc"} : () -> memref<3x5xf32>
  "glowir.fully_connected"(%7, %2, %0, %1) : (memref<3x5xf32>, memref<3x10xf32>, memref<10x5xf32>, memref<5xf32>) -> ()
  %8 = "glowir.tensor_view"(%7) {offsets = array<i64: 1, 0>} : (memref<3x5xf32>) -> memref<2x5xf32>
  "glowir.tanh"(%8, %8) : (memref<2x5xf32>, memref<2x5xf32>) -> ()
  %9 = "glowir.alloc_activation"() {name = "scale_b"} : () -> memref<3x5xf32>
  "glowir.broadcast"(%9, %6) {shape = array<i64: 3, 5>} : (memref<3x5xf32>, memref<f32>) -> ()
  "glowir.element_mul"(%7, %7, %9) : (memref<3x5xf32>, memref<3x5xf32>, memref<3x5xf32>) -> ()
  "glowir.dealloc_activation"(%9) : (memref<3x5xf32>) -> ()
  "glowir.sigmoid"(%3, %7) : (memref<3x5xf32>, memref<3x5xf32>) -> ()
  "glowir.dealloc_activation"(%7) : (memref<3x5xf32>) -> ()
  "glowir.transpose"(%5, %4) {shuffle = array<i64: 1, 0>} : (memref<3x2xi1>, memref<2x3xi1>) -> ()
  return
}
