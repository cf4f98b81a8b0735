// RUN: glow-opt %s --split-input-file -p 'builtin.module(linalg-fuse-elementwise)' | FileCheck %s

// A temporary read only by the next elementwise op: one generic, the temporary is not written.
// CHECK-LABEL: func.func @temporary(
// CHECK-SAME:  %[[X:[^:]+]]: memref<4x8xf32>, %[[Y:[^:]+]]: memref<4x8xf32>, %[[D:[^:]+]]: memref<4x8xf32>)
// CHECK:       %[[T:.+]] = memref.alloc
// CHECK-NEXT:  linalg.generic {{.+}} ins(%[[X]], %[[Y]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[D]] : memref<4x8xf32>)
// CHECK-NEXT:  ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK:       %[[E:.+]] = math.exp %[[A]]
// CHECK-NEXT:  %[[S:.+]] = arith.addf %[[E]], %[[B]]
// CHECK-NEXT:  linalg.yield %[[S]]
// CHECK-NOT:   linalg.generic
// CHECK:       memref.dealloc %[[T]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @temporary(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %d: memref<4x8xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x8xf32>) outs(%t : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%t, %y : memref<4x8xf32>, memref<4x8xf32>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<4x8xf32>
  return
}

// -----

// Updates of one buffer in place (a residual add, then a relu on its output operand): one generic; a chain of three
// is one generic too, and the per-channel bias is read through its broadcast map.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME:  %[[D:[^:]+]]: memref<2x4x8xf32>, %[[S:[^:]+]]: memref<2x4x8xf32>, %[[B:[^:]+]]: memref<8xf32>)
// CHECK-NEXT:  %[[ZERO:.+]] = arith.constant 0.0
// CHECK-NEXT:  linalg.generic {{.+}} ins(%[[D]], %[[S]], %[[B]] : {{.+}}) outs(%[[D]] : memref<2x4x8xf32>)
// CHECK-NEXT:  ^bb0(%[[A:.+]]: f32, %[[C:.+]]: f32, %[[BIAS:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:  %[[SUM:.+]] = arith.addf %[[A]], %[[C]]
// CHECK-NEXT:  %[[SHIFT:.+]] = arith.addf %[[SUM]], %[[BIAS]]
// CHECK-NEXT:  %[[R:.+]] = arith.maximumf %[[SHIFT]], %[[ZERO]]
// CHECK-NEXT:  linalg.yield %[[R]]
// CHECK-NOT:   linalg.generic
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d2)>
func.func @in_place(%d: memref<2x4x8xf32>, %s: memref<2x4x8xf32>, %b: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%d, %s : memref<2x4x8xf32>, memref<2x4x8xf32>) outs(%d : memref<2x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#ch, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b : memref<8xf32>) outs(%d : memref<2x4x8xf32>) {
  ^bb0(%bias: f32, %o: f32):
    %shift = arith.addf %o, %bias : f32
    linalg.yield %shift : f32
  }
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%d : memref<2x4x8xf32>) {
  ^bb0(%o: f32):
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A planned temporary (a view of the activations region) fuses; an output (a view of mutableWeight) read by the
// next op is not a temporary: it must still be written.
// CHECK-LABEL: func.func @planned(
// CHECK:       linalg.generic {{.+}} outs(%[[OUT:.+]] : memref<16xf32>)
// CHECK:       math.tanh
// CHECK-NEXT:  math.exp
// CHECK-NEXT:  linalg.yield
// CHECK:       linalg.generic {{.+}} ins(%[[OUT]] : memref<16xf32>)
// CHECK-NOT:   linalg.generic
#id1 = affine_map<(d0) -> (d0)>
func.func @planned(%cw: memref<64xi8>, %mw: memref<128xi8>, %act: memref<64xi8>) attributes {glowir.arguments = ["constantWeight", "mutableWeight", "activations"]} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %x = memref.view %cw[%c0][] : memref<64xi8> to memref<16xf32>
  %t = memref.view %act[%c0][] : memref<64xi8> to memref<16xf32>
  %out = memref.view %mw[%c0][] : memref<128xi8> to memref<16xf32>
  %out2 = memref.view %mw[%c64][] : memref<128xi8> to memref<16xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%t : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%t : memref<16xf32>) outs(%out : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%out : memref<16xf32>) outs(%out2 : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Negative: the temporary is read again later, so it must be written.
// CHECK-LABEL: func.func @read_again(
// CHECK-COUNT-3: linalg.generic
#id = affine_map<(d0) -> (d0)>
func.func @read_again(%x: memref<8xf32>, %d: memref<8xf32>, %e: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%t : memref<8xf32>) outs(%d : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%t : memref<8xf32>) outs(%e : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sqrt %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Negative: the second op reads the buffer the first wrote through a transposing map (element (i, j) would be read
// before the fused loop wrote it).
// CHECK-LABEL: func.func @transposed_read(
// CHECK-COUNT-2: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_read(%x: memref<4x4xf32>, %d: memref<4x4xf32>) {
  %t = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x4xf32>) outs(%t : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%t : memref<4x4xf32>) outs(%d : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %t : memref<4x4xf32>
  return
}

// -----

// The first op reads its input through a transposing map (an image's NCHW -> NHWC, as convert-glowir-to-linalg writes
// one onto few channels) and its result only goes on into a bordered buffer's interior: one loop from the image
// into the border, the transposed temporary not written.
// CHECK-LABEL: func.func @transpose_into_border(
// CHECK-SAME:  %[[X:[^:]+]]: memref<1x3x4x5xf32>, %[[P:[^:]+]]: memref<1x6x7x3xf32>)
// CHECK:       %[[IN:.+]] = memref.subview %[[P]][0, 1, 1, 0] [1, 4, 5, 3] [1, 1, 1, 1]
// CHECK-NEXT:  linalg.generic {indexing_maps = [#[[NCHW:.+]], #{{.+}}], {{.+}} ins(%[[X]] : memref<1x3x4x5xf32>) outs(%[[IN]] : memref<1x4x5x3xf32, strided<[126, 21, 3, 1], offset: 24>>)
// CHECK-NOT:   linalg.generic
#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @transpose_into_border(%x: memref<1x3x4x5xf32>, %p: memref<1x6x7x3xf32>) {
  %t = memref.alloc() : memref<1x4x5x3xf32>
  linalg.generic {indexing_maps = [#nchw, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x3x4x5xf32>) outs(%t : memref<1x4x5x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %in = memref.subview %p[0, 1, 1, 0] [1, 4, 5, 3] [1, 1, 1, 1] : memref<1x6x7x3xf32> to memref<1x4x5x3xf32, strided<[126, 21, 3, 1], offset: 24>>
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : memref<1x4x5x3xf32>) outs(%in : memref<1x4x5x3xf32, strided<[126, 21, 3, 1], offset: 24>>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %t : memref<1x4x5x3xf32>
  return
}

// -----

// Negative: different index spaces (a reduction, then an op over its 1-D result) and an op with memory effects
// between two elementwise ops keep their loops.
// CHECK-LABEL: func.func @not_elementwise(
// CHECK-COUNT-2: linalg.generic
// CHECK:       memref.copy
// CHECK:       linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>
func.func @not_elementwise(%x: memref<4x8xf32>, %r: memref<4xf32>, %d: memref<4xf32>, %e: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x8xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%r : memref<4xf32>) {
  ^bb0(%o: f32):
    %s = math.sqrt %o : f32
    linalg.yield %s : f32
  }
  memref.copy %r, %e : memref<4xf32> to memref<4xf32>
  linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%r : memref<4xf32>) {
  ^bb0(%o: f32):
    %s = math.exp %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Views through a reinterpret_cast (a glowir tensor_view) are followed to their bytes: a view overlapping the
// temporary in part blocks the fusion (the second op reads bytes the fused loop would not have written yet); a
// disjoint view does not.
// CHECK-LABEL: func.func @overlapping_view(
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @disjoint_view(
// CHECK:       linalg.generic
// CHECK-NOT:   linalg.generic
#id1 = affine_map<(d0) -> (d0)>
func.func @overlapping_view(%x: memref<8xf32>, %d: memref<8xf32>, %act: memref<64xi8>) attributes {glowir.arguments = ["x", "d", "activations"]} {
  %c0 = arith.constant 0 : index
  %t = memref.view %act[%c0][] : memref<64xi8> to memref<8xf32>
  %u = memref.view %act[%c0][] : memref<64xi8> to memref<16xf32>
  %v = memref.reinterpret_cast %u to offset: [4], sizes: [8], strides: [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%t, %v : memref<8xf32>, memref<8xf32, strided<[1], offset: 4>>) outs(%d : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  }
  return
}
func.func @disjoint_view(%x: memref<8xf32>, %d: memref<8xf32>, %act: memref<64xi8>) attributes {glowir.arguments = ["x", "d", "activations"]} {
  %c0 = arith.constant 0 : index
  %t = memref.view %act[%c0][] : memref<64xi8> to memref<8xf32>
  %u = memref.view %act[%c0][] : memref<64xi8> to memref<16xf32>
  %v = memref.reinterpret_cast %u to offset: [8], sizes: [8], strides: [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%t, %v : memref<8xf32>, memref<8xf32, strided<[1], offset: 8>>) outs(%d : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// SiLU, x * sigmoid(x): x read by both ops at the same map is one operand of the fused op.
// CHECK-LABEL: func.func @silu(
// CHECK-SAME:  %[[X:[^:]+]]: memref<4x8xf32>, %[[D:[^:]+]]: memref<4x8xf32>)
// CHECK:       linalg.generic {{.+}} ins(%[[X]] : memref<4x8xf32>) outs(%[[D]] : memref<4x8xf32>)
// CHECK-NEXT:  ^bb0(%[[A:.+]]: f32, %{{.+}}: f32):
// CHECK:       %[[E:.+]] = math.exp
// CHECK:       %[[S:.+]] = arith.divf
// CHECK-NEXT:  %[[Y:.+]] = arith.mulf %[[A]], %[[S]]
// CHECK-NEXT:  linalg.yield %[[Y]]
// CHECK-NOT:   linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @silu(%x: memref<4x8xf32>, %d: memref<4x8xf32>) {
  %t = memref.alloc() : memref<4x8xf32>
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x8xf32>) outs(%t : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %p = arith.addf %e, %one : f32
    %s = arith.divf %one, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %t : memref<4x8xf32>, memref<4x8xf32>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %y = arith.mulf %a, %s : f32
    linalg.yield %y : f32
  }
  memref.dealloc %t : memref<4x8xf32>
  return
}

// -----

// A chain that would read more than 16 distinct buffers (an average pool of 784 window positions lowered one update
// each would be such a chain) is cut: each fused op reads at most 16, so the cost of each fusion stays bounded. Here
// 20 in-place adds of 20 distinct inputs: the first 15 adds are one generic (15 inputs and d), the other 5 a second.
// CHECK-LABEL: func.func @long_chain(
// CHECK:       linalg.generic
// CHECK-COUNT-15: arith.addf
// CHECK-NEXT:  linalg.yield
// CHECK:       linalg.generic
// CHECK-COUNT-5: arith.addf
// CHECK-NEXT:  linalg.yield
// CHECK-NOT:   linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @long_chain(%d: memref<4x8xf32>, %x: memref<20x4x8xf32>) {
  %v0 = memref.subview %x[0, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 0>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v0 : memref<4x8xf32, strided<[8, 1], offset: 0>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v1 = memref.subview %x[1, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v1 : memref<4x8xf32, strided<[8, 1], offset: 32>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v2 = memref.subview %x[2, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 64>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v2 : memref<4x8xf32, strided<[8, 1], offset: 64>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v3 = memref.subview %x[3, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 96>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v3 : memref<4x8xf32, strided<[8, 1], offset: 96>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v4 = memref.subview %x[4, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 128>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v4 : memref<4x8xf32, strided<[8, 1], offset: 128>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v5 = memref.subview %x[5, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 160>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v5 : memref<4x8xf32, strided<[8, 1], offset: 160>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v6 = memref.subview %x[6, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 192>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v6 : memref<4x8xf32, strided<[8, 1], offset: 192>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v7 = memref.subview %x[7, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 224>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v7 : memref<4x8xf32, strided<[8, 1], offset: 224>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v8 = memref.subview %x[8, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 256>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v8 : memref<4x8xf32, strided<[8, 1], offset: 256>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v9 = memref.subview %x[9, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 288>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v9 : memref<4x8xf32, strided<[8, 1], offset: 288>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v10 = memref.subview %x[10, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 320>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v10 : memref<4x8xf32, strided<[8, 1], offset: 320>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v11 = memref.subview %x[11, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 352>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v11 : memref<4x8xf32, strided<[8, 1], offset: 352>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v12 = memref.subview %x[12, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 384>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v12 : memref<4x8xf32, strided<[8, 1], offset: 384>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v13 = memref.subview %x[13, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 416>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v13 : memref<4x8xf32, strided<[8, 1], offset: 416>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v14 = memref.subview %x[14, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 448>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v14 : memref<4x8xf32, strided<[8, 1], offset: 448>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v15 = memref.subview %x[15, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 480>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v15 : memref<4x8xf32, strided<[8, 1], offset: 480>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v16 = memref.subview %x[16, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 512>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v16 : memref<4x8xf32, strided<[8, 1], offset: 512>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v17 = memref.subview %x[17, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 544>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v17 : memref<4x8xf32, strided<[8, 1], offset: 544>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v18 = memref.subview %x[18, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 576>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v18 : memref<4x8xf32, strided<[8, 1], offset: 576>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  %v19 = memref.subview %x[19, 0, 0] [1, 4, 8] [1, 1, 1] : memref<20x4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 608>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v19 : memref<4x8xf32, strided<[8, 1], offset: 608>>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// In a loop's body too: a slice copied into a temporary (extract_tensor's elementwise copy) folds into its reader,
// which reads the columns where they are.
// CHECK-LABEL: func.func @slice_in_a_loop(
// CHECK:       scf.for
// CHECK-NEXT:    %[[COLS:.+]] = memref.subview %{{.+}}[0, 8] [4, 8] [1, 1]
// CHECK-NEXT:    linalg.generic {{.+}} ins(%[[COLS]] : memref<4x8xf32, strided<[16, 1], offset: 8>>) outs(%{{.+}} : memref<4x8xf32>)
// CHECK:         math.tanh
// CHECK-NOT:     linalg.generic
// CHECK:       }
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @slice_in_a_loop(%g: memref<4x16xf32>, %d: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %t = memref.alloc() : memref<4x8xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    %cols = memref.subview %g[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%cols : memref<4x8xf32, strided<[16, 1], offset: 8>>) outs(%t : memref<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    }
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%t : memref<4x8xf32>) outs(%d : memref<4x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %e = math.tanh %a : f32
      linalg.yield %e : f32
    }
  }
  memref.dealloc %t : memref<4x8xf32>
  return
}

// -----

// A gather reads its data inside its body, at a computed position: the cast after it fuses only where that data
// is disjoint from what the cast writes. Here the planned output (bytes 0-15) overlaps the data (bytes 0-31), which
// a fused loop would overwrite before a later iteration reads it; the second function's output lies after the data.
// CHECK-LABEL: func.func @gather_data_overlaps_the_output(
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @gather_data_disjoint(
// CHECK:       linalg.generic
// CHECK:       memref.load
// CHECK:       arith.truncf
// CHECK-NOT:   linalg.generic
#id2 = affine_map<(d0) -> (d0)>
func.func @gather_data_overlaps_the_output(%idx: memref<8xi64>, %act: memref<128xi8>) attributes {glowir.arguments = ["idx", "activations"]} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %data = memref.view %act[%c0][] : memref<128xi8> to memref<8xf32>
  %t = memref.view %act[%c64][] : memref<128xi8> to memref<8xf32>
  %d = memref.view %act[%c0][] : memref<128xi8> to memref<8xf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]} ins(%idx : memref<8xi64>) outs(%t : memref<8xf32>) {
  ^bb0(%j: i64, %o: f32):
    %i = arith.index_cast %j : i64 to index
    %v = memref.load %data[%i] : memref<8xf32>
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]} ins(%t : memref<8xf32>) outs(%d : memref<8xf16>) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  }
  return
}
func.func @gather_data_disjoint(%idx: memref<8xi64>, %act: memref<128xi8>) attributes {glowir.arguments = ["idx", "activations"]} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %data = memref.view %act[%c0][] : memref<128xi8> to memref<8xf32>
  %t = memref.view %act[%c64][] : memref<128xi8> to memref<8xf32>
  %d = memref.view %act[%c32][] : memref<128xi8> to memref<8xf16>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]} ins(%idx : memref<8xi64>) outs(%t : memref<8xf32>) {
  ^bb0(%j: i64, %o: f32):
    %i = arith.index_cast %j : i64 to index
    %v = memref.load %data[%i] : memref<8xf32>
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]} ins(%t : memref<8xf32>) outs(%d : memref<8xf16>) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  }
  return
}

// -----

// A clip as node lowering spells it: max with a splat of 0 written into the output, min with a splat of 6 in a
// temporary. Each fill folds into the generic after it as a scalar operand (the fills die there: the output is
// rewritten whole, the temporary read only there), and the two generics, now adjacent, fuse: one loop over x.
// CHECK-LABEL: func.func @clip_splats(
// CHECK-SAME:  %[[X:[^:]+]]: memref<4x8xf32>, %[[D:[^:]+]]: memref<4x8xf32>)
// CHECK-DAG:   %[[LO:.+]] = arith.constant 0.0
// CHECK-DAG:   %[[HI:.+]] = arith.constant 6.0
// CHECK-NOT:   linalg.fill
// CHECK:       linalg.generic {indexing_maps = [#{{.+}}, #[[SCALAR:.+]], #[[SCALAR]], #{{.+}}]
// CHECK-SAME:  ins(%[[X]], %[[LO]], %[[HI]] : memref<4x8xf32>, f32, f32) outs(%[[D]] : memref<4x8xf32>)
// CHECK:       arith.maximumf
// CHECK-NEXT:  arith.minimumf
// CHECK-NEXT:  linalg.yield
// CHECK-NOT:   linalg.generic
// CHECK-NOT:   linalg.fill
// CHECK:       return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @clip_splats(%x: memref<4x8xf32>, %d: memref<4x8xf32>) {
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 6.0 : f32
  %t = memref.alloc() : memref<4x8xf32>
  linalg.fill ins(%lo : f32) outs(%d : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %d : memref<4x8xf32>, memref<4x8xf32>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.maximumf %a, %b : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%hi : f32) outs(%t : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%d, %t : memref<4x8xf32>, memref<4x8xf32>) outs(%d : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.minimumf %a, %b : f32
    linalg.yield %r : f32
  }
  memref.dealloc %t : memref<4x8xf32>
  return
}

// -----

// Negative: the filled buffer is a function argument (no temporary: it is read after the function): both generics
// that read it read the scalar, the fill stays, and the generic before the fill does not fuse across it.
// CHECK-LABEL: func.func @fill_read_again(
// CHECK-SAME:  %[[X:[^:]+]]: memref<16xf32>, %[[S:[^:]+]]: memref<16xf32>, %[[D:[^:]+]]: memref<16xf32>, %[[E:[^:]+]]: memref<16xf32>)
// CHECK:       %[[ONE:.+]] = arith.constant 1.0
// CHECK:       linalg.generic {{.+}} ins(%[[X]] : memref<16xf32>) outs(%[[D]] : memref<16xf32>)
// CHECK:       linalg.fill ins(%[[ONE]] : f32) outs(%[[S]] : memref<16xf32>)
// CHECK:       linalg.generic {{.+}} ins(%[[D]], %[[ONE]] : memref<16xf32>, f32) outs(%[[D]] : memref<16xf32>)
// CHECK:       linalg.generic {{.+}} ins(%[[ONE]] : f32) outs(%[[E]] : memref<16xf32>)
#id1 = affine_map<(d0) -> (d0)>
func.func @fill_read_again(%x: memref<16xf32>, %s: memref<16xf32>, %d: memref<16xf32>, %e: memref<16xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%d : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%one : f32) outs(%s : memref<16xf32>)
  linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%d, %s : memref<16xf32>, memref<16xf32>) outs(%d : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%s : memref<16xf32>) outs(%e : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Negative: the generic reads the filled buffer through its output operand (an accumulation from the fill): the
// fill stays and the generic is unchanged.
// CHECK-LABEL: func.func @fill_then_accumulate(
// CHECK:       linalg.fill
// CHECK:       linalg.generic {{.+}} ins(%{{.+}} : memref<16xf32>) outs(%{{.+}} : memref<16xf32>)
// CHECK:       arith.addf
func.func @fill_then_accumulate(%x: memref<16xf32>, %d: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%d : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// One splat buffer read by two generics apart (the graph's CSE merged two splats of 6): both read the scalar, and the
// fill of the temporary goes.
// CHECK-LABEL: func.func @shared_splat(
// CHECK-SAME:  %[[X:[^:]+]]: memref<16xf32>, %[[D:[^:]+]]: memref<16xf32>, %[[E:[^:]+]]: memref<16xf32>)
// CHECK:       %[[SIX:.+]] = arith.constant 6.0
// CHECK-NOT:   linalg.fill
// CHECK:       linalg.generic {{.+}} ins(%[[X]], %[[SIX]] : memref<16xf32>, f32) outs(%[[D]] : memref<16xf32>)
// CHECK:       linalg.generic {{.+}} ins(%[[D]], %[[SIX]] : memref<16xf32>, f32) outs(%[[E]] : memref<16xf32>)
// CHECK-NOT:   linalg.fill
func.func @shared_splat(%x: memref<16xf32>, %d: memref<16xf32>, %e: memref<16xf32>) {
  %six = arith.constant 6.0 : f32
  %t = memref.alloc() : memref<16xf32>
  linalg.fill ins(%six : f32) outs(%t : memref<16xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %t : memref<16xf32>, memref<16xf32>) outs(%d : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.minimumf %a, %b : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%d, %t : memref<16xf32>, memref<16xf32>) outs(%e : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  }
  memref.dealloc %t : memref<16xf32>
  return
}

// -----

// Negative: a view of the filled buffer is written between the fill and the generic that reads it: the generic reads
// the buffer, and the fill stays.
// CHECK-LABEL: func.func @overwritten_between(
// CHECK:       linalg.fill
// CHECK:       linalg.copy
// CHECK:       linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : memref<16xf32>, memref<16xf32>)
func.func @overwritten_between(%x: memref<16xf32>, %y: memref<8xf32>, %d: memref<16xf32>) {
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<16xf32>
  linalg.fill ins(%one : f32) outs(%t : memref<16xf32>)
  %half = memref.subview %t[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  linalg.copy ins(%y : memref<8xf32>) outs(%half : memref<8xf32, strided<[1], offset: 8>>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %t : memref<16xf32>, memref<16xf32>) outs(%d : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  }
  memref.dealloc %t : memref<16xf32>
  return
}

// -----

// LeakyReLU as node lowering spells it: a compare and a multiply of x, each into a temporary, then a select of the
// two. The select takes the multiply right before it, then the compare, now right before the fused op: one loop.
// CHECK-LABEL: func.func @leaky_relu(
// CHECK-SAME:  %[[X:[^:]+]]: memref<16xf32>, %[[D:[^:]+]]: memref<16xf32>)
// CHECK:       linalg.generic {{.+}} outs(%[[D]] : memref<16xf32>)
// CHECK:       arith.cmpf olt
// CHECK:       arith.mulf
// CHECK:       arith.select
// CHECK-NOT:   linalg.generic
func.func @leaky_relu(%x: memref<16xf32>, %d: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %alpha = arith.constant 0.1 : f32
  %c = memref.alloc() : memref<16xi1>
  %m = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%c : memref<16xi1>) {
  ^bb0(%a: f32, %o: i1):
    %r = arith.cmpf olt, %a, %zero : f32
    linalg.yield %r : i1
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%m : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %alpha : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%c, %m, %x : memref<16xi1>, memref<16xf32>, memref<16xf32>) outs(%d : memref<16xf32>) {
  ^bb0(%p: i1, %b: f32, %a: f32, %o: f32):
    %r = arith.select %p, %b, %a : f32
    linalg.yield %r : f32
  }
  memref.dealloc %m : memref<16xf32>
  memref.dealloc %c : memref<16xi1>
  return
}

// -----

// Negative: a view of the filled buffer is read (not the buffer itself) before a generic rewrites the buffer whole:
// the fill stays, for the view's reader.
// CHECK-LABEL: func.func @view_read_before_rewrite(
// CHECK:       linalg.fill
// CHECK:       linalg.generic {{.+}} ins(%{{.+}} : memref<8xf32, strided<[1], offset: 8>>)
// CHECK:       linalg.generic
func.func @view_read_before_rewrite(%x: memref<16xf32>, %e: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<16xf32>
  linalg.fill ins(%one : f32) outs(%t : memref<16xf32>)
  %half = memref.subview %t[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%half : memref<8xf32, strided<[1], offset: 8>>) outs(%e : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%t : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  memref.dealloc %t : memref<16xf32>
  return
}

// -----

// GELU as node lowering spells it: erf(x * c) into a temporary T, x * 0.5 into D, T += 1, D *= T. No two neighbours
// are a chain; the first moves past the second (they share only x, which both read) into the third, the fourth takes
// that, then the second: one loop, T not written.
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME:  %[[X:[^:]+]]: memref<16xf32>, %[[D:[^:]+]]: memref<16xf32>)
// CHECK:       linalg.generic {{.+}} ins(%[[X]], %{{.+}}) outs(%[[D]] : memref<16xf32>)
// CHECK:       arith.mulf
// CHECK:       arith.mulf
// CHECK:       math.erf
// CHECK:       arith.addf
// CHECK:       arith.mulf
// CHECK-NOT:   linalg.generic
func.func @gelu(%x: memref<16xf32>, %d: memref<16xf32>) {
  %c = arith.constant 0.707106769 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %c : memref<16xf32>, f32) outs(%t : memref<16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = math.erf %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %half : memref<16xf32>, f32) outs(%d : memref<16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.mulf %a, %s : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t, %one : memref<16xf32>, f32) outs(%t : memref<16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%d, %t : memref<16xf32>, memref<16xf32>) outs(%d : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  }
  memref.dealloc %t : memref<16xf32>
  return
}

// -----

// Negative: the op in between writes the buffer the producer reads (x), so the producer may not move past it into
// the third, which reads its temporary: three loops stay.
// CHECK-LABEL: func.func @producer_input_written_between(
// CHECK:       linalg.generic
// CHECK:       math.erf
// CHECK:       linalg.generic
// CHECK:       arith.negf
// CHECK:       linalg.generic
// CHECK:       arith.addf
func.func @producer_input_written_between(%x: memref<16xf32>, %d: memref<16xf32>) {
  %c = arith.constant 0.707106769 : f32
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %c : memref<16xf32>, f32) outs(%t : memref<16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = math.erf %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%d : memref<16xf32>) outs(%x : memref<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t, %one : memref<16xf32>, f32) outs(%d : memref<16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  }
  memref.dealloc %t : memref<16xf32>
  return
}

// -----

// Negative: the op in between has two outputs, the second of them the buffer the producer reads (x): every output
// counts, so the producer stays before it and three loops remain.
// CHECK-LABEL: func.func @second_output_written_between(
// CHECK:       linalg.generic
// CHECK:       math.exp
// CHECK:       linalg.generic
// CHECK:       linalg.generic
// CHECK:       arith.negf
func.func @second_output_written_between(%x: memref<16xf32>, %s: memref<16xf32>, %a: memref<16xf32>,
                                         %d: memref<16xf32>) {
  %t = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<16xf32>) outs(%t : memref<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = math.exp %i : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : memref<16xf32>) outs(%a, %x : memref<16xf32>, memref<16xf32>) {
  ^bb0(%i: f32, %o: f32, %p: f32):
    linalg.yield %i, %i : f32, f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%t : memref<16xf32>) outs(%d : memref<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.negf %i : f32
    linalg.yield %r : f32
  }
  memref.dealloc %t : memref<16xf32>
  return
}
