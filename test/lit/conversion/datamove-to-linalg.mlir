// RUN: glow-opt %s --split-input-file --convert-glowir-to-linalg | FileCheck %s

// extract_tensor: a strided subview of the source (its layout spelled out, negative steps walk backwards),
// copied into dest; with unit steps the copy is an elementwise generic, which linalg-fuse-elementwise can fold into
// the op reading dest.

// CHECK-LABEL: func.func @extract_tensor
// CHECK-SAME:  (%[[X:.+]]: memref<4x6xf32>, %[[Y:.+]]: memref<2x3xf32>, %[[Z:.+]]: memref<1x6xf32>)
// CHECK:       %[[BOX:.+]] = memref.subview %[[X]][3, 5] [2, 3] [-2, -2] : memref<4x6xf32> to memref<2x3xf32, strided<[-12, -2], offset: 23>>
// CHECK:       linalg.copy {{.*}} ins(%[[BOX]] : memref<2x3xf32, strided<[-12, -2], offset: 23>>) outs(%[[Y]] : memref<2x3xf32>)
// CHECK:       %[[ROW:.+]] = memref.subview %[[X]][2, 0] [1, 6] [1, 1] : memref<4x6xf32> to memref<1x6xf32, strided<[6, 1], offset: 12>>
// CHECK:       linalg.generic {{.*}} ins(%[[ROW]] : {{.+}}) outs(%[[Z]] : memref<1x6xf32>)
func.func @extract_tensor() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4x6xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<1x6xf32>
  "glowir.extract_tensor"(%y, %x) {offsets = array<i64: 3, 5>, steps = array<i64: -2, -2>} : (memref<2x3xf32>, memref<4x6xf32>) -> ()
  "glowir.extract_tensor"(%z, %x) {offsets = array<i64: 2, 0>} : (memref<1x6xf32>, memref<4x6xf32>) -> ()
  return
}

// -----

// A box of a view: the subview composes with the view's offset and strides.

// CHECK-LABEL: func.func @extract_of_a_view
// CHECK:       %[[V:.+]] = memref.reinterpret_cast %{{.+}} to offset: [6], sizes: [3, 2], strides: [2, 1]
// CHECK:       memref.subview %[[V]][1, 1] [2, 1] [1, 1] : memref<3x2xf32, strided<[2, 1], offset: 6>> to memref<2x1xf32, strided<[2, 1], offset: 9>>
func.func @extract_of_a_view() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3x2xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x1xf32>
  %v = "glowir.tensor_view"(%x) {offsets = array<i64: 1, 0, 0>} : (memref<2x3x2xf32>) -> memref<3x2xf32>
  "glowir.extract_tensor"(%y, %v) {offsets = array<i64: 1, 1>} : (memref<2x1xf32>, memref<3x2xf32>) -> ()
  return
}

// -----

// insert_tensor: src copied into a subview of dest; booleans move as bytes.

// CHECK-LABEL: func.func @insert_tensor
// CHECK-SAME:  (%[[A:.+]]: memref<2x3xi8>, %[[B:.+]]: memref<2x1xi8>, %[[Y:.+]]: memref<2x4xi8>)
// CHECK:       %[[LEFT:.+]] = memref.subview %[[Y]][0, 0] [2, 3] [1, 1] : memref<2x4xi8> to memref<2x3xi8, strided<[4, 1]>>
// CHECK:       linalg.copy {{.*}} ins(%[[A]] : memref<2x3xi8>) outs(%[[LEFT]] : memref<2x3xi8, strided<[4, 1]>>)
// CHECK:       %[[RIGHT:.+]] = memref.subview %[[Y]][0, 3] [2, 1] [1, 1] : memref<2x4xi8> to memref<2x1xi8, strided<[4, 1], offset: 3>>
// CHECK:       linalg.copy {{.*}} ins(%[[B]] : memref<2x1xi8>) outs(%[[RIGHT]] : memref<2x1xi8, strided<[4, 1], offset: 3>>)
func.func @insert_tensor() attributes {glowir.inputs = ["a", "b"], glowir.outputs = ["y"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2x3xi1>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<2x1xi1>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x4xi1>
  "glowir.insert_tensor"(%y, %a) {offsets = array<i64: 0, 0>} : (memref<2x4xi1>, memref<2x3xi1>) -> ()
  "glowir.insert_tensor"(%y, %b) {offsets = array<i64: 0, 3>} : (memref<2x4xi1>, memref<2x1xi1>) -> ()
  return
}

// -----

// gather: a generic over dest that reads the index at dest's indices dims, makes a negative one count from the
// end, clamps it into the axis, and loads data at it.

// CHECK-DAG:   #[[IDX:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gather
// CHECK-SAME:  (%[[D:.+]]: memref<5x4xf32>, %[[I:.+]]: memref<2x3xi32>, %[[Y:.+]]: memref<5x2x3xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[IDX]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:  ins(%[[I]] : memref<2x3xi32>) outs(%[[Y]] : memref<5x2x3xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: i32, %{{.+}}: f32):
// CHECK-DAG:   %[[N:.+]] = arith.constant 4 : index
// CHECK-DAG:   %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-DAG:   %[[LAST:.+]] = arith.constant 3 : index
// CHECK:       %[[CAST:.+]] = arith.index_cast %[[IN]] : i32 to index
// CHECK:       %[[NEG:.+]] = arith.cmpi slt, %[[CAST]], %[[ZERO]] : index
// CHECK:       %[[WRAP:.+]] = arith.addi %[[CAST]], %[[N]] : index
// CHECK:       %[[SEL:.+]] = arith.select %[[NEG]], %[[WRAP]], %[[CAST]] : index
// CHECK:       %[[LO:.+]] = arith.maxsi %[[SEL]], %[[ZERO]] : index
// CHECK:       %[[K:.+]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK:       %[[D0:.+]] = linalg.index 0 : index
// CHECK:       %[[V:.+]] = memref.load %[[D]][%[[D0]], %[[K]]] : memref<5x4xf32>
// CHECK:       linalg.yield %[[V]] : f32
func.func @gather() attributes {glowir.inputs = ["d", "i"], glowir.outputs = ["y"]} {
  %d = "glowir.weight_var"() {mutability = "mutable", name = "d"} : () -> memref<5x4xf32>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<2x3xi32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<5x2x3xf32>
  "glowir.gather"(%y, %d, %i) {axis = 1 : i64} : (memref<5x2x3xf32>, memref<5x4xf32>, memref<2x3xi32>) -> ()
  return
}

// -----

// A scalar index: the index map has no results.

// CHECK-DAG:   #[[NONE:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @gather_scalar_index
// CHECK:       linalg.generic {indexing_maps = [#[[NONE]], #{{.+}}]
// CHECK:       memref.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<3x4xi64>
func.func @gather_scalar_index() attributes {glowir.inputs = ["d", "i"], glowir.outputs = ["y"]} {
  %d = "glowir.weight_var"() {mutability = "mutable", name = "d"} : () -> memref<3x4xi64>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<i64>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xi64>
  "glowir.gather"(%y, %d, %i) {axis = 0 : i64} : (memref<4xi64>, memref<3x4xi64>, memref<i64>) -> ()
  return
}

// -----

// scatter_nd: dest = data (a copy), then loops, not a linalg op (two updates may land on one element): for each
// index row, its entries made non-negative (i < 0: i + n) and checked inside their dims with one unsigned compare;
// inside, the slice of updates combined with dest (reduction add on floats: addf) element by element.

// CHECK-LABEL: func.func @scatter_nd
// CHECK-SAME:  (%[[D:.+]]: memref<4x3xf32>, %[[I:.+]]: memref<2x1xi64>, %[[U:.+]]: memref<2x3xf32>, %[[Y:.+]]: memref<4x3xf32>)
// CHECK:       linalg.copy {{.*}} ins(%[[D]] : memref<4x3xf32>) outs(%[[Y]] : memref<4x3xf32>)
// CHECK:       scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK-DAG:   %[[N:.+]] = arith.constant 4 : index
// CHECK:       %[[RAW:.+]] = memref.load %[[I]][%[[J]], %{{.+}}] : memref<2x1xi64>
// CHECK:       %[[CAST:.+]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK:       %[[NEG:.+]] = arith.cmpi slt, %[[CAST]], %{{.+}} : index
// CHECK:       %[[WRAP:.+]] = arith.addi %[[CAST]], %[[N]] : index
// CHECK:       %[[AT:.+]] = arith.select %[[NEG]], %[[WRAP]], %[[CAST]] : index
// CHECK:       %[[IN:.+]] = arith.cmpi ult, %[[AT]], %[[N]] : index
// CHECK:       %[[OK:.+]] = arith.andi %{{.+}}, %[[IN]] : i1
// CHECK:       scf.if %[[OK]] {
// CHECK:       scf.for %[[C:.+]] = %{{.+}} to %{{.+}} step
// CHECK:       %[[OLD:.+]] = memref.load %[[Y]][%[[AT]], %[[C]]] : memref<4x3xf32>
// CHECK:       %[[NEW:.+]] = memref.load %[[U]][%[[J]], %[[C]]] : memref<2x3xf32>
// CHECK:       %[[SUM:.+]] = arith.addf %[[OLD]], %[[NEW]] : f32
// CHECK:       memref.store %[[SUM]], %[[Y]][%[[AT]], %[[C]]] : memref<4x3xf32>
func.func @scatter_nd() attributes {glowir.inputs = ["d", "i", "u"], glowir.outputs = ["y"]} {
  %d = "glowir.weight_var"() {mutability = "mutable", name = "d"} : () -> memref<4x3xf32>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<2x1xi64>
  %u = "glowir.weight_var"() {mutability = "mutable", name = "u"} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4x3xf32>
  "glowir.scatter_nd"(%y, %d, %i, %u) {reduction = "add"} : (memref<4x3xf32>, memref<4x3xf32>, memref<2x1xi64>, memref<2x3xf32>) -> ()
  return
}

// -----

// Integer data and full coordinates (k = rank): max is maxsi, no loop over a slice.

// CHECK-LABEL: func.func @scatter_nd_elements
// CHECK:       scf.for
// CHECK:       scf.if
// CHECK-NOT:   scf.for
// CHECK:       arith.maxsi %{{.+}}, %{{.+}} : i32
// CHECK:       memref.store
func.func @scatter_nd_elements() attributes {glowir.inputs = ["d", "i", "u"], glowir.outputs = ["y"]} {
  %d = "glowir.weight_var"() {mutability = "mutable", name = "d"} : () -> memref<4x3xi32>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<5x2xi32>
  %u = "glowir.weight_var"() {mutability = "mutable", name = "u"} : () -> memref<5xi32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4x3xi32>
  "glowir.scatter_nd"(%y, %d, %i, %u) {reduction = "max"} : (memref<4x3xi32>, memref<4x3xi32>, memref<5x2xi32>, memref<5xi32>) -> ()
  return
}
