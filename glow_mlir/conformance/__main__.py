"""``python -m glow_mlir.conformance``: see the package docstring."""

import sys

from . import main

sys.exit(main(sys.argv[1:]))
