"""What every command-line tool shares: one-line errors and exit codes."""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from typing import Callable

from ..errors import GlowError


def run_tool(name: str, main: Callable[[list[str]], int], argv: list[str] | None = None) -> int:
    """Run a tool's ``main``; a GlowError becomes ``name: error: ...`` and exit code 1, a warning (a model that
    declares a wrong shape) ``name: warning: ...``. An internal error is reported in one line too (set GLOW_DEBUG=1
    for the traceback)."""
    argv = sys.argv[1:] if argv is None else argv

    def one_line(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ARG001 - the hook's
        print(f"{name}: warning: {message}", file=sys.stderr)

    warnings.showwarning = one_line  # a model's own inconsistencies are the user's to read, not a stack location
    try:
        return main(argv)
    except GlowError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug in glow_mlir: still one line for the user
        if os.environ.get("GLOW_DEBUG"):
            traceback.print_exc()
        print(f"{name}: internal error: {type(e).__name__}: {e} (set GLOW_DEBUG=1 for a traceback)", file=sys.stderr)
        return 2


def exit_with(name: str, main: Callable[[list[str]], int]) -> None:
    """Entry point helper for console scripts."""
    sys.exit(run_tool(name, main))


def add_model_arguments(parser, several: bool = False) -> None:
    """The options every model tool shares (Glow spells them with one dash). With ``several``, ``-model`` may be
    repeated and ``args.model`` is a list."""
    if several:
        parser.add_argument("-model", "--model", required=True, action="append", metavar="M.onnx",
                            help="the ONNX model (repeatable where several models make sense)")
    else:
        parser.add_argument("-model", "--model", required=True, metavar="M.onnx", help="the ONNX model")
    parser.add_argument("--input-shape", "-onnx-define-symbol", action="append", default=[], metavar="NAME=DxD",
                        help="fix the shape of an input whose shape is dynamic (repeatable)")
    parser.add_argument("--no-optimize", action="store_true", help="skip the graph optimizer")
    parser.add_argument("--threads", type=_positive, metavar="N",
                        help="cores the kernels run on (default: every core this process may use; a bundle: 1)")
    parser.add_argument("--target-cpu", default="", metavar="CPU",
                        help="the CPU to generate code for, as LLVM names it (haswell, znver3, skylake-avx512, "
                             "neoverse-n1; `llc -mcpu=help` lists them); default (or native, host): this machine's. "
                             "The kernels' vectors and tiles follow it; code compiled to run here must suit this "
                             "machine")
    parser.add_argument("--target-triple", default="", metavar="TRIPLE",
                        help="the target triple (default: this machine's); another architecture is for bundles only")
    parser.add_argument("--no-cache", action="store_true",
                        help="compile every stage even if the compile cache ($GLOW_CACHE_DIR) holds the model")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress line on a terminal while a long compile runs")


def progress_line(args):
    """The progress line of the tool's compile (:mod:`glow_mlir.progress`): on a terminal, unless --quiet."""
    from ..progress import Progress

    models = args.model if isinstance(args.model, list) else [args.model]
    return Progress(", ".join(os.path.basename(m) for m in models), quiet=args.quiet)


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def model_options(args):
    """CompileOptions from parsed model arguments."""
    from ..api import CompileOptions
    from ..importer import parse_input_shapes

    return CompileOptions(input_shapes=parse_input_shapes(args.input_shape) or None, optimize=not args.no_optimize,
                          threads=args.threads, target_cpu=args.target_cpu, target_triple=args.target_triple)


def add_quantization_arguments(group) -> None:
    """The flags of a quantized compile (Glow's spellings): the profile, its schema and calibration, channelwise
    weights, the op types kept in float."""
    from ..quantization.params import CALIBRATIONS, SCHEMAS

    group.add_argument("--load-profile", "-load-profile", metavar="P.yaml",
                       help="quantize to int8 by a profile that glow-run --dump-profile wrote for this model (checked "
                            "against its graph)")
    group.add_argument("--quantization-schema", "-quantization-schema", default="asymmetric", choices=SCHEMAS,
                       help="how a range maps onto int8 (Glow's schemas; default asymmetric)")
    group.add_argument("--quantization-calibration", "-quantization-calibration", default="minmax",
                       choices=CALIBRATIONS, help="how the range is chosen from the profile's histogram (default "
                                                  "minmax)")
    group.add_argument("--enable-channelwise", "-enable-channelwise", action="store_true",
                       help="with --load-profile: one weight scale per output channel of convolutions and fully "
                            "connected layers (default: one per layer)")
    group.add_argument("--keep-original-precision-for-nodes", "-keep-original-precision-for-nodes", default="",
                       metavar="OP,OP", help="with --load-profile: ONNX op types left in float (e.g. Add,Softmax)")


def quantization_options(args):
    """The QuantizationOptions of --load-profile and the flags beside it (None without --load-profile)."""
    from ..errors import InputError
    from ..quantization.annotate import QuantizationOptions, keep_float_list
    from ..quantization.profile import Profile

    if not args.load_profile:
        if args.enable_channelwise or args.keep_original_precision_for_nodes:
            raise InputError("--enable-channelwise and --keep-original-precision-for-nodes go with --load-profile")
        return None
    return QuantizationOptions(Profile.load(args.load_profile), args.quantization_schema,
                               args.quantization_calibration, args.enable_channelwise,
                               keep_float_list(args.keep_original_precision_for_nodes))
