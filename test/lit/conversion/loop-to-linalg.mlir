// RUN: glow-opt %s --split-input-file --convert-glowir-to-linalg | FileCheck %s

// glowir.loop without a condition: scf.for over [0, max_trip) that first stores its iteration number into the
// counter; the body's instructions lowered inside it. step_slice and step_insert: a rank-reduced subview at the
// counter's value (clamped into the dim), copied from or into.
// CHECK-LABEL: func.func @for_loop
// CHECK-SAME:  (%[[XS:.+]]: memref<5x2xf32>, %[[YS:.+]]: memref<5x2xf32>)
// CHECK:       %[[I:.+]] = memref.alloc() {alignment = 64 : i64} : memref<i64>
// CHECK:       %[[X:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK:       %[[C5:.+]] = arith.constant 5 : index
// CHECK:       scf.for %[[IV:.+]] = %{{.+}} to %[[C5]] step %{{.+}} {
// CHECK-NEXT:    %[[N:.+]] = arith.index_cast %[[IV]] : index to i64
// CHECK-NEXT:    memref.store %[[N]], %[[I]][] : memref<i64>
// CHECK-NEXT:    %[[AT:.+]] = memref.load %[[I]][] : memref<i64>
// CHECK:         %[[MIN:.+]] = arith.minsi %[[AT]], %{{.+}} : i64
// CHECK:         %[[MAX:.+]] = arith.maxsi %[[MIN]], %{{.+}} : i64
// CHECK:         %[[K:.+]] = arith.index_cast %[[MAX]] : i64 to index
// CHECK:         %[[ROW:.+]] = memref.subview %[[XS]][%[[K]], 0] [1, 2] [1, 1] : memref<5x2xf32> to memref<2xf32, strided<[1], offset: ?>>
// CHECK:         linalg.copy {{.*}} ins(%[[ROW]] : memref<2xf32, strided<[1], offset: ?>>) outs(%[[X]] : memref<2xf32>)
// CHECK:         %[[OUT:.+]] = memref.subview %[[YS]][%{{.+}}, 0] [1, 2] [1, 1]
// CHECK:         linalg.copy {{.*}} ins(%[[X]] : memref<2xf32>) outs(%[[OUT]] : memref<2xf32, strided<[1], offset: ?>>)
// CHECK-NEXT:  }
func.func @for_loop() attributes {glowir.inputs = ["xs"], glowir.outputs = ["ys"]} {
  %xs = "glowir.weight_var"() {mutability = "mutable", name = "xs"} : () -> memref<5x2xf32>
  %ys = "glowir.weight_var"() {mutability = "mutable", name = "ys"} : () -> memref<5x2xf32>
  %i = "glowir.alloc_activation"() : () -> memref<i64>
  %c = "glowir.alloc_activation"() : () -> memref<i1>
  %x = "glowir.alloc_activation"() : () -> memref<2xf32>
  "glowir.loop"(%i, %c) ({
    "glowir.step_slice"(%x, %xs, %i) : (memref<2xf32>, memref<5x2xf32>, memref<i64>) -> ()
    "glowir.step_insert"(%ys, %x, %i) : (memref<5x2xf32>, memref<2xf32>, memref<i64>) -> ()
    gpu.yield
  }) {max_trip = 5 : i64, has_condition = 0 : i64} : (memref<i64>, memref<i1>) -> ()
  "glowir.dealloc_activation"(%x) : (memref<2xf32>) -> ()
  "glowir.dealloc_activation"(%c) : (memref<i1>) -> ()
  "glowir.dealloc_activation"(%i) : (memref<i64>) -> ()
  return
}

// -----

// With a condition: scf.while that tests the iteration number against max_trip and the condition's byte.
// CHECK-LABEL: func.func @while_loop
// CHECK:       %[[I:.+]] = memref.alloc() {alignment = 64 : i64} : memref<i64>
// CHECK:       %[[C:.+]] = memref.alloc() {alignment = 64 : i64} : memref<i8>
// CHECK:       %[[C0:.+]] = arith.constant 0 : index
// CHECK:       %[[C1:.+]] = arith.constant 1 : index
// CHECK:       %[[C7:.+]] = arith.constant 7 : index
// CHECK:       scf.while (%[[IV:.+]] = %[[C0]]) : (index) -> index {
// CHECK-NEXT:    %[[BELOW:.+]] = arith.cmpi slt, %[[IV]], %[[C7]] : index
// CHECK-NEXT:    %[[BYTE:.+]] = memref.load %[[C]][] : memref<i8>
// CHECK:         %[[HOLDS:.+]] = arith.cmpi ne, %[[BYTE]], %{{.+}} : i8
// CHECK-NEXT:    %[[GO:.+]] = arith.andi %[[BELOW]], %[[HOLDS]] : i1
// CHECK-NEXT:    scf.condition(%[[GO]]) %[[IV]] : index
// CHECK-NEXT:  } do {
// CHECK-NEXT:  ^bb0(%[[J:.+]]: index):
// CHECK-NEXT:    %[[N:.+]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:    memref.store %[[N]], %[[I]][] : memref<i64>
// CHECK-NEXT:    %[[NEXT:.+]] = arith.addi %[[J]], %[[C1]] : index
// CHECK-NEXT:    linalg.generic
// CHECK:         scf.yield %[[NEXT]] : index
func.func @while_loop() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<f32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<f32>
  %i = "glowir.alloc_activation"() : () -> memref<i64>
  %c = "glowir.alloc_activation"() : () -> memref<i1>
  "glowir.loop"(%i, %c) ({
    "glowir.element_cmp_lt"(%c, %y, %x) : (memref<i1>, memref<f32>, memref<f32>) -> ()
    gpu.yield
  }) {max_trip = 7 : i64, has_condition = 1 : i64} : (memref<i64>, memref<i1>) -> ()
  "glowir.dealloc_activation"(%c) : (memref<i1>) -> ()
  "glowir.dealloc_activation"(%i) : (memref<i64>) -> ()
  return
}
