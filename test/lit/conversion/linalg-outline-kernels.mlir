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

// -----

// A convolution with its epilogue is one kernel: the bias broadcast before it (view ops between are pure), and the
// elementwise updates of its output after it (a residual add of another buffer, a relu). The ops keep their order;
// the call is where the last of them was.
// CHECK-LABEL: func.func private @epi_conv_2d_nhwc_hwcf
// CHECK-SAME:  (%[[BIAS:.+]]: memref<8xf32>, %[[Y:.+]]: memref<1x4x4x8xf32>, %[[X:.+]]: memref<1x6x6x8xf32>, %[[F:.+]]: memref<3x3x8x8xf32>, %[[S:.+]]: memref<1x4x4x8xf32>)
// CHECK-NEXT:  linalg.broadcast ins(%[[BIAS]] : memref<8xf32>) outs(%[[Y]] : memref<1x4x4x8xf32>)
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf {{.+}} ins(%[[X]], %[[F]] : {{.+}}) outs(%[[Y]] : memref<1x4x4x8xf32>)
// CHECK-NEXT:  linalg.generic {{.+}} ins(%[[Y]], %[[S]] : {{.+}}) outs(%[[Y]] : memref<1x4x4x8xf32>)
// CHECK:       linalg.generic {{.+}} outs(%[[Y]] : memref<1x4x4x8xf32>)
// CHECK:       return
// Negative: a copy between a relu and the convolution before it (it reads the output) ends the group; an update
// that reads the output through a non-identity map is not an epilogue.
// CHECK-LABEL: func.func private @epi_conv_2d_nhwc_hwcf_1
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT:  return
// CHECK-LABEL: func.func private @epi_copy
// CHECK-LABEL: func.func private @epi_generic
// CHECK-LABEL: func.func @epi(
// CHECK:       call @epi_conv_2d_nhwc_hwcf(
// CHECK-NEXT:  call @epi_conv_2d_nhwc_hwcf_1(
// CHECK-NEXT:  call @epi_copy(
// CHECK-NEXT:  call @epi_generic(
// CHECK-NEXT:  call @epi_generic_1(
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#flip = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
func.func @epi(%act: memref<4096xi8>, %x: memref<1x6x6x8xf32>, %f: memref<3x3x8x8xf32>, %b: memref<8xf32>, %s: memref<1x4x4x8xf32>, %e: memref<1x4x4x8xf32>) attributes {glowir.inputs = ["x"], glowir.outputs = ["s"], glowir.arguments = ["activations", "x", "f", "b", "s", "e"]} {
  %c0 = arith.constant 0 : index
  linalg.broadcast ins(%b : memref<8xf32>) outs(%e : memref<1x4x4x8xf32>) dimensions = [0, 1, 2]
  %y = memref.view %act[%c0][] : memref<4096xi8> to memref<1x4x4x8xf32>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : memref<1x6x6x8xf32>, memref<3x3x8x8xf32>) outs(%e : memref<1x4x4x8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%e, %s : memref<1x4x4x8xf32>, memref<1x4x4x8xf32>) outs(%e : memref<1x4x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : memref<1x4x4x8xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : memref<1x6x6x8xf32>, memref<3x3x8x8xf32>) outs(%y : memref<1x4x4x8xf32>)
  linalg.copy ins(%y : memref<1x4x4x8xf32>) outs(%s : memref<1x4x4x8xf32>)
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%y : memref<1x4x4x8xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#flip, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<1x4x4x8xf32>) outs(%y : memref<1x4x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// A residual add written onto the skip (mobilenet): the convolution's output is a temporary that dies at the add,
// so the epilogue moves to the skip buffer; the add is marked with the input that dies (glow.dead_input). A relu of
// the skip after it joins too.
// CHECK-LABEL: func.func private @skip_conv_2d_nhwc_hwcf(
// CHECK:       linalg.broadcast
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT:  linalg.generic {{.+}} outs(%[[S:.+]] : memref<1x4x4x8xf32>) attrs = {glow.dead_input = 1 : i64}
// CHECK:       linalg.generic {{.+}} outs(%[[S]] : memref<1x4x4x8xf32>)
// CHECK:       return
// Negative: the second convolution's output is read again after its add: it must be written, the add is a kernel
// of its own.
// CHECK-LABEL: func.func private @skip_conv_2d_nhwc_hwcf_1(
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT:  return
// CHECK-LABEL: func.func private @skip_generic(
// CHECK-NOT:   glow.dead_input
// CHECK-LABEL: func.func @skip(
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @skip(%act: memref<4096xi8>, %x: memref<1x4x4x8xf32>, %f: memref<1x1x8x8xf32>, %b: memref<8xf32>, %s: memref<1x4x4x8xf32>, %e: memref<1x4x4x8xf32>) attributes {glowir.inputs = ["x"], glowir.outputs = ["s", "e"], glowir.arguments = ["activations", "x", "f", "b", "s", "e"]} {
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %y = memref.view %act[%c0][] : memref<4096xi8> to memref<1x4x4x8xf32>
  linalg.broadcast ins(%b : memref<8xf32>) outs(%y : memref<1x4x4x8xf32>) dimensions = [0, 1, 2]
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : memref<1x4x4x8xf32>, memref<1x1x8x8xf32>) outs(%y : memref<1x4x4x8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %y : memref<1x4x4x8xf32>, memref<1x4x4x8xf32>) outs(%s : memref<1x4x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%s : memref<1x4x4x8xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  %z = memref.view %act[%c512][] : memref<4096xi8> to memref<1x4x4x8xf32>
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : memref<1x4x4x8xf32>, memref<1x1x8x8xf32>) outs(%z : memref<1x4x4x8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%e, %z : memref<1x4x4x8xf32>, memref<1x4x4x8xf32>) outs(%e : memref<1x4x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  }
  linalg.copy ins(%z : memref<1x4x4x8xf32>) outs(%s : memref<1x4x4x8xf32>)
  return
}

// -----

// A convolution on a packed filter (the blocked generic of convert-glowir-to-linalg) writes its output viewed as
// [N, OH, OW, F/B, B]: its bias broadcast and relu write the view's source, and join it. The view is rebuilt inside
// the kernel from the buffer the kernel takes (one argument for both).
// CHECK-LABEL: func.func private @packed_generic(
// CHECK-SAME:  %[[BIAS:[^:]+]]: memref<64xf32>, %[[Y:[^:]+]]: memref<1x4x4x64xf32>, %[[X:[^:]+]]: memref<1x4x4x16xf32>, %[[F:[^:]+]]: memref<2x1x1x16x32xf32>)
// CHECK:       %[[V:.+]] = memref.expand_shape %[[Y]] {{\[}}[0], [1], [2], [3, 4]]
// CHECK:       linalg.broadcast ins(%[[BIAS]] : memref<64xf32>) outs(%[[Y]] : memref<1x4x4x64xf32>)
// CHECK-NEXT:  linalg.generic {{.+}} ins(%[[X]], %[[F]] : {{.+}}) outs(%[[V]] : memref<1x4x4x2x32xf32>) attrs = {glow.blocked_conv
// CHECK-NEXT:  ^bb0
// CHECK:       linalg.generic {{.+}} outs(%[[Y]] : memref<1x4x4x64xf32>)
// CHECK:       return
// CHECK-LABEL: func.func @packed(
// CHECK:       call @packed_generic(
// CHECK-NEXT:  call @packed_copy(
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#src = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d2 + d6, d7)>
#flt = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>
#dst = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @packed(%act: memref<8192xi8>, %x: memref<1x4x4x16xf32>, %f: memref<2x1x1x16x32xf32>, %b: memref<64xf32>, %s: memref<1x4x4x64xf32>) attributes {glowir.inputs = ["x"], glowir.outputs = ["s"], glowir.arguments = ["activations", "x", "f", "b", "s"]} {
  %c0 = arith.constant 0 : index
  %y = memref.view %act[%c0][] : memref<8192xi8> to memref<1x4x4x64xf32>
  linalg.broadcast ins(%b : memref<64xf32>) outs(%y : memref<1x4x4x64xf32>) dimensions = [0, 1, 2]
  %v = memref.expand_shape %y [[0], [1], [2], [3, 4]] output_shape [1, 4, 4, 2, 32] : memref<1x4x4x64xf32> into memref<1x4x4x2x32xf32>
  linalg.generic {indexing_maps = [#src, #flt, #dst], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %f : memref<1x4x4x16xf32>, memref<2x1x1x16x32xf32>) outs(%v : memref<1x4x4x2x32xf32>) attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%a: f32, %w: f32, %o: f32):
    %m = arith.mulf %a, %w : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%y : memref<1x4x4x64xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%y : memref<1x4x4x64xf32>) outs(%s : memref<1x4x4x64xf32>)
  return
}

// -----

// Negative: a 1x1 convolution of the skip %s added onto %s. Its output dies at the add, but the add may not move the
// chain onto %s: the convolution reads %s, and a later tile would read what an earlier one wrote. The add stays a
// kernel of its own.
// CHECK-LABEL: func.func private @reads_skip_conv_2d_nhwc_hwcf(
// CHECK:       linalg.broadcast
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT:  return
// CHECK-LABEL: func.func private @reads_skip_generic(
// CHECK-NOT:   glow.dead_input
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @reads_skip(%act: memref<4096xi8>, %f: memref<1x1x8x8xf32>, %b: memref<8xf32>, %s: memref<1x4x4x8xf32>) attributes {glowir.inputs = ["s"], glowir.outputs = ["s"], glowir.arguments = ["activations", "f", "b", "s"]} {
  %c0 = arith.constant 0 : index
  %y = memref.view %act[%c0][] : memref<4096xi8> to memref<1x4x4x8xf32>
  linalg.broadcast ins(%b : memref<8xf32>) outs(%y : memref<1x4x4x8xf32>) dimensions = [0, 1, 2]
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%s, %f : memref<1x4x4x8xf32>, memref<1x1x8x8xf32>) outs(%y : memref<1x4x4x8xf32>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %y : memref<1x4x4x8xf32>, memref<1x4x4x8xf32>) outs(%s : memref<1x4x4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A padded convolution's input copied into its bordered buffer right after the convolution that wrote it: the copy
// (an elementwise generic) is the last update of that convolution's kernel and moves the chain onto the interior of
// the bordered buffer (the strided subview %in), so the first output %y is never written.
// CHECK-LABEL: func.func private @border_conv_2d_nhwc_hwcf(
// CHECK:       linalg.broadcast
// CHECK-NEXT:  linalg.conv_2d_nhwc_hwcf
// CHECK:       linalg.generic {{.+}} outs(%{{.+}} : memref<1x4x4x8xf32, strided<[288, 48, 8, 1], offset: 56>>) attrs = {glow.dead_input = 0 : i64}
// CHECK-LABEL: func.func @border(
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @border(%act: memref<8192xi8>, %x: memref<1x4x4x8xf32>, %f: memref<1x1x8x8xf32>, %b: memref<8xf32>) attributes {glowir.inputs = ["x"], glowir.outputs = [], glowir.arguments = ["activations", "x", "f", "b"]} {
  %c0 = arith.constant 0 : index
  %c2048 = arith.constant 2048 : index
  %y = memref.view %act[%c0][] : memref<8192xi8> to memref<1x4x4x8xf32>
  %p = memref.view %act[%c2048][] : memref<8192xi8> to memref<1x6x6x8xf32>
  linalg.broadcast ins(%b : memref<8xf32>) outs(%y : memref<1x4x4x8xf32>) dimensions = [0, 1, 2]
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : memref<1x4x4x8xf32>, memref<1x1x8x8xf32>) outs(%y : memref<1x4x4x8xf32>)
  %in = memref.subview %p[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : memref<1x6x6x8xf32> to memref<1x4x4x8xf32, strided<[288, 48, 8, 1], offset: 56>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<1x4x4x8xf32>) outs(%in : memref<1x4x4x8xf32, strided<[288, 48, 8, 1], offset: 56>>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

// Negative: in a partition of a program (glowir.partition) no activation is known to die (a later partition may read
// %y): the copy stays a kernel of its own.
// CHECK-LABEL: func.func private @part_conv_2d_nhwc_hwcf(
// CHECK:       linalg.conv_2d_nhwc_hwcf
// CHECK-NEXT:  return
// CHECK-LABEL: func.func private @part_generic(
// CHECK-NOT:   glow.dead_input
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @part(%act: memref<8192xi8>, %x: memref<1x4x4x8xf32>, %f: memref<1x1x8x8xf32>, %b: memref<8xf32>) attributes {glowir.inputs = ["x"], glowir.outputs = [], glowir.arguments = ["activations", "x", "f", "b"], glowir.partition = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c2048 = arith.constant 2048 : index
  %y = memref.view %act[%c0][] : memref<8192xi8> to memref<1x4x4x8xf32>
  %p = memref.view %act[%c2048][] : memref<8192xi8> to memref<1x6x6x8xf32>
  linalg.broadcast ins(%b : memref<8xf32>) outs(%y : memref<1x4x4x8xf32>) dimensions = [0, 1, 2]
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f : memref<1x4x4x8xf32>, memref<1x1x8x8xf32>) outs(%y : memref<1x4x4x8xf32>)
  %in = memref.subview %p[0, 1, 1, 0] [1, 4, 4, 8] [1, 1, 1, 1] : memref<1x6x6x8xf32> to memref<1x4x4x8xf32, strided<[288, 48, 8, 1], offset: 56>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y : memref<1x4x4x8xf32>) outs(%in : memref<1x4x4x8xf32, strided<[288, 48, 8, 1], offset: 56>>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  return
}

// -----

// The body of a program's loop holds kernels too: each of its linalg ops becomes a call inside the loop, an operand
// made there (the step's subview) passed as an argument.
// CHECK-LABEL: func.func private @looped_copy
// CHECK-SAME:  (%{{.+}}: memref<2xf32, strided<[1], offset: ?>>, %{{.+}}: memref<2xf32>)
// CHECK-LABEL: func.func @looped
// CHECK:       scf.for %[[IV:.+]] =
// CHECK-NEXT:    %[[ROW:.+]] = memref.subview %{{.+}}[%[[IV]], 0] [1, 2] [1, 1]
// CHECK-NEXT:    call @looped_copy(%[[ROW]], %{{.+}})
// CHECK-NEXT:  }
// CHECK-NOT:   linalg.
func.func @looped(%xs: memref<5x2xf32>, %x: memref<2xf32>) attributes {glowir.inputs = ["xs"], glowir.outputs = ["x"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  scf.for %iv = %c0 to %c5 step %c1 {
    %row = memref.subview %xs[%iv, 0] [1, 2] [1, 1] : memref<5x2xf32> to memref<2xf32, strided<[1], offset: ?>>
    linalg.copy ins(%row : memref<2xf32, strided<[1], offset: ?>>) outs(%x : memref<2xf32>)
  }
  return
}

// -----

// A buffer that only one kernel uses, allocated before it and freed right after it (here a matmul's accumulators
// moved into an int8 output by its epilogue; an int8 convolution's int32 accumulators alike), moves into the kernel
// with its views, its alloc and its dealloc: the program keeps only the call. A buffer a later op reads stays in
// the program.
// CHECK-LABEL: func.func private @private_buffer_matmul
// CHECK-SAME:  (%{{.+}}: i32, %{{.+}}: memref<2x3xi32>, %{{.+}}: memref<3x4xi32>, %{{.+}}: memref<2x4xi8>)
// CHECK:       %[[A:.+]] = memref.alloc() : memref<2x4xi32>
// CHECK:       memref.expand_shape %[[A]]
// CHECK:       linalg.fill
// CHECK:       linalg.matmul
// CHECK:       linalg.generic
// CHECK:       memref.dealloc %[[A]]
// CHECK-LABEL: func.func @private_buffer
// CHECK-NEXT:  arith.constant
// CHECK-NEXT:  call @private_buffer_matmul
// CHECK-NEXT:  %[[KEPT:.+]] = memref.alloc() : memref<2x4xi32>
// CHECK:       call @{{.+}}(%{{.+}}, %[[KEPT]])
// CHECK:       call @{{.+}}(%[[KEPT]], %{{.+}})
// CHECK:       memref.dealloc %[[KEPT]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @private_buffer(%x: memref<2x3xi32>, %w: memref<3x4xi32>, %y: memref<2x4xi8>, %z: memref<2x4xi32>) attributes {glowir.inputs = [], glowir.outputs = ["y", "z"]} {
  %zero = arith.constant 0 : i32
  %a = memref.alloc() : memref<2x4xi32>
  %v = memref.expand_shape %a [[0], [1, 2]] output_shape [2, 2, 2] : memref<2x4xi32> into memref<2x2x2xi32>
  linalg.fill ins(%zero : i32) outs(%a : memref<2x4xi32>)
  linalg.matmul ins(%x, %w : memref<2x3xi32>, memref<3x4xi32>) outs(%a : memref<2x4xi32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : memref<2x4xi32>) outs(%y : memref<2x4xi8>) {
  ^bb0(%e: i32, %o: i8):
    %t = arith.trunci %e : i32 to i8
    linalg.yield %t : i8
  }
  memref.dealloc %a : memref<2x4xi32>
  %k = memref.alloc() : memref<2x4xi32>
  linalg.fill ins(%zero : i32) outs(%k : memref<2x4xi32>)
  linalg.copy ins(%k : memref<2x4xi32>) outs(%z : memref<2x4xi32>)
  memref.dealloc %k : memref<2x4xi32>
  return
}

// -----

// A constant table read (memref.get_global) between a convolution and its epilogue does not split them: the
// requantization of a depthwise convolution's accumulators, reading its per-channel tables, is one kernel with it.
// CHECK-LABEL: func.func private @table_between_depthwise_conv_2d_nhwc_hwc
// CHECK:       linalg.broadcast
// CHECK:       linalg.depthwise_conv_2d_nhwc_hwc
// CHECK:       linalg.generic
// CHECK-LABEL: func.func @table_between
// CHECK:       call @table_between_depthwise_conv_2d_nhwc_hwc
// CHECK-NOT:   call
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>
memref.global "private" constant @table : memref<4xi32> = dense<3>
func.func @table_between(%x: memref<1x4x4x4xi8>, %w: memref<3x3x4xi8>, %b: memref<4xi32>, %y: memref<1x2x2x4xi8>) attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %a = memref.alloc() : memref<1x2x2x4xi32>
  linalg.broadcast ins(%b : memref<4xi32>) outs(%a : memref<1x2x2x4xi32>) dimensions = [0, 1, 2]
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x4x4x4xi8>, memref<3x3x4xi8>) outs(%a : memref<1x2x2x4xi32>)
  %t = memref.get_global @table : memref<4xi32>
  linalg.generic {indexing_maps = [#id4, #ch, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a, %t : memref<1x2x2x4xi32>, memref<4xi32>) outs(%y : memref<1x2x2x4xi8>) {
  ^bb0(%e: i32, %m: i32, %o: i8):
    %p = arith.muli %e, %m : i32
    %q = arith.trunci %p : i32 to i8
    linalg.yield %q : i8
  }
  memref.dealloc %a : memref<1x2x2x4xi32>
  return
}
