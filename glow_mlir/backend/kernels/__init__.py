"""CPU kernels: schedules for the heavy linalg ops, one module per kernel family, each with a tile table by shape
class (and a way to cover shapes the tiles do not divide).

- :mod:`.matmul`: ``linalg.matmul`` / ``linalg.batch_matmul`` (glowir's matmul, fully_connected, batch_matmul).
- :mod:`.conv`: ``linalg.conv_2d_nhwc_hwcf`` (glowir's conv2d with one group).
- :mod:`.pixel_tiles`: a convolution on a packed filter with short output rows, in register tiles of output pixels
  that cross the rows (loops of vector FMAs, built directly).
- :mod:`.vectorize`: every other linalg op on memrefs, vectorized on its innermost dim (``cpu-vectorize-rest``).
- :mod:`.approx`: f32 exp, erf and tanh as polynomials (``cpu-approximate-math``).
- :mod:`.epilogue`: either of them with the bias that initializes its output and the elementwise updates after it
  (activation, residual add), fused into its loop nest.
- :mod:`.forward_transfers`: a vector read of what a vector write just before it stored takes the written vector
  (``cpu-forward-transfers``: a fused kernel's accumulators start from its bias in registers).

:mod:`.passes` applies them in the codegen pipeline (``cpu-tile-kernels``, ``cpu-vectorize-rest``,
``cpu-approximate-math``, ``cpu-lower-vectors``, ``cpu-fma-contract``); :mod:`.transform` holds the transform-dialect
helpers they share.
"""
