// RUN: glow-opt %s --split-input-file --linalg-outline-kernels | FileCheck %s

// Each linalg op of a program becomes a call to a private noinline kernel, identical ops sharing one: the op's
// operands are arguments (so fills of one shape share a kernel whatever their value); a constant its body captures
// is cloned into the kernel.
// CHECK-LABEL: func.func private @prog_fill
// CHECK-SAME:  (%[[V:.+]]: f32, %[[B:.+]]: memref<4xf32>) attributes {passthrough = ["noinline"]}
// CHECK-NEXT:  linalg.fill ins(%[[V]] : f32) outs(%[[B]] : memref<4xf32>)
// CHECK-NEXT:  return
// CHECK-LABEL: func.func private @prog_fill_1
// CHECK-SAME:  (%{{.+}}: f32, %{{.+}}: memref<8xf32>)
// CHECK-LABEL: func.func private @prog_generic
// CHECK-SAME:  (%[[IN:.+]]: memref<4xf32>, %[[OUT:.+]]: memref<4xf32>)
// CHECK-NEXT:  %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:  linalg.generic {{.*}} ins(%[[IN]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK:       arith.mulf %{{.+}}, %[[TWO]]
// CHECK-LABEL: func.func private @prog_copy
// CHECK-LABEL: func.func @prog
// CHECK-SAME:  (%[[A:.+]]: memref<4xf32>, %[[B:.+]]: memref<4xf32>, %[[C:.+]]: memref<8xf32>)
// CHECK-NOT:   linalg.
// CHECK:       %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:  call @prog_fill(%[[ZERO]], %[[B]]) : (f32, memref<4xf32>) -> ()
// CHECK-NEXT:  call @prog_fill(%[[TWO]], %[[A]]) : (f32, memref<4xf32>) -> ()
// CHECK-NEXT:  call @prog_fill_1(%[[ZERO]], %[[C]]) : (f32, memref<8xf32>) -> ()
// CHECK-NEXT:  %[[T:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:  call @prog_generic(%[[A]], %[[T]])
// CHECK-NEXT:  call @prog_copy(%[[T]], %[[B]])
// CHECK-NEXT:  memref.dealloc %[[T]]
// Negative: a function that is not a program keeps its linalg ops.
// CHECK-LABEL: func.func @not_a_program
// CHECK:       linalg.fill
// CHECK-NOT:   call

#id = affine_map<(d0) -> (d0)>
func.func @prog(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<8xf32>) attributes {glowir.inputs = ["a"], glowir.outputs = ["b", "c"]} {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<4xf32>)
  linalg.fill ins(%two : f32) outs(%a : memref<4xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<8xf32>)
  %t = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %two : f32
    linalg.yield %m : f32
  }
  linalg.copy ins(%t : memref<4xf32>) outs(%b : memref<4xf32>)
  memref.dealloc %t : memref<4xf32>
  return
}
func.func @not_a_program(%a: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%a : memref<4xf32>)
  return
}

// -----

// The programs of a module share kernels (the partitions of one network): the second program calls the first's
// fill; a kernel only it has is named after it.
// CHECK-LABEL: func.func private @part0_fill
// CHECK-LABEL: func.func @part0
// CHECK:       call @part0_fill
// CHECK-LABEL: func.func private @part1_copy
// CHECK-LABEL: func.func @part1
// CHECK:       call @part0_fill
// CHECK-NEXT:  call @part1_copy
// CHECK-NOT:   func.func private
func.func @part0(%a: memref<4xf32>, %b: memref<4xf32>) attributes {glowir.inputs = ["a"], glowir.outputs = ["b"]} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%b : memref<4xf32>)
  return
}
func.func @part1(%a: memref<4xf32>, %b: memref<4xf32>) attributes {glowir.inputs = ["a"], glowir.outputs = ["b"]} {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%b : memref<4xf32>)
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
