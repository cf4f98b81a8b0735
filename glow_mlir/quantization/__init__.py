"""Int8 quantization, in Glow's steps.

1. Profiling (:mod:`.profile`; ``glow_mlir.profile``, ``glow-run --dump-profile``): the float model is compiled
   with every float value of its graph made an output, run on a calibration set, and each value's range and
   histogram is recorded in a profile keyed by its ONNX name, with a hash of the graph it belongs to.
2. Parameters from a profile (:mod:`.params`): the range a calibration method keeps of a value's histogram, the
   scale and offset a schema maps it to, the fixed-point multiplier that rescales an accumulator.
3. Quantized compilation from a profile (:mod:`.annotate`; ``glow_mlir.compile(model, profile=P, ...)``,
   ``glow-run``/``glow-compile --load-profile``): the parameters of each value are put on the optimized graph, then
   glowgraph-quantize makes int8 nodes (dialects/quantized.py) of the nodes it can and glowgraph-fold-quantize
   removes the quantize/dequantize pairs between them.
"""
