// RUN: glow-opt %s --split-input-file --convert-glowir-to-linalg | FileCheck %s

// glowir.if -> scf.if on the condition's byte, each branch's instructions lowered in its block.
// CHECK-LABEL: func.func @branches
// CHECK-SAME:  (%[[C:.+]]: memref<i8>, %[[X:.+]]: memref<2xf32>, %[[Y:.+]]: memref<2xf32>)
// CHECK:       %[[BYTE:.+]] = memref.load %[[C]][] : memref<i8>
// CHECK:       %[[HOLDS:.+]] = arith.cmpi ne, %[[BYTE]], %{{.+}} : i8
// CHECK-NEXT:  scf.if %[[HOLDS]] {
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[X]] : memref<2xf32>) outs(%[[Y]] : memref<2xf32>)
// CHECK:           arith.maximumf
// CHECK:       } else {
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[X]] : memref<2xf32>) outs(%[[Y]] : memref<2xf32>)
// CHECK:           arith.negf
// CHECK:       return
func.func @branches() attributes {glowir.inputs = ["c", "x"], glowir.outputs = ["y"]} {
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<i1>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2xf32>
  "glowir.if"(%c) ({
    "glowir.relu"(%y, %x) : (memref<2xf32>, memref<2xf32>) -> ()
    gpu.yield
  }, {
    "glowir.neg"(%y, %x) : (memref<2xf32>, memref<2xf32>) -> ()
    gpu.yield
  }) : (memref<i1>) -> ()
  return
}
