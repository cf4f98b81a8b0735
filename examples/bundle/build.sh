#!/bin/sh
# Build the example runner (main.c) for one network of a glow_mlir bundle.
#
#   build.sh DIR NAME [--entry ENTRY] [--embed] [-o OUTPUT]
#
# DIR holds NAME.o and NAME.h (glow-compile -model M.onnx --emit-bundle DIR --network-name NAME). ENTRY is the
# network to run (default NAME; a bundle of several models has one per model). With --embed the weights are compiled
# in from ENTRY.weights.txt (glow-compile ... --emit-weights-txt) instead of read from ENTRY.weights.bin at run time.
# OUTPUT defaults to DIR/ENTRY_runner. CC picks the compiler (default cc).
set -eu
if [ $# -lt 2 ]; then
  sed -n '3,9p' "$0" >&2
  exit 2
fi
dir=$1
name=$2
shift 2
entry=$name
embed=
out=
while [ $# -gt 0 ]; do
  case $1 in
    --entry) entry=$2; shift 2 ;;
    --embed) embed=1; shift ;;
    -o) out=$2; shift 2 ;;
    *) echo "build.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
out=${out:-$dir/${entry}_runner}
prefix=$(printf '%s' "$entry" | tr '[:lower:]' '[:upper:]')
here=$(cd "$(dirname "$0")" && pwd)
weights=
if [ -n "$embed" ]; then
  weights="-DBUNDLE_WEIGHTS_TXT=\"$entry.weights.txt\""
fi
# shellcheck disable=SC2086  # $weights is one word or none
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -I "$dir" -DBUNDLE_HEADER="\"$name.h\"" -DBUNDLE_ENTRY="$entry" \
  -DBUNDLE_PREFIX="$prefix" $weights "$here/main.c" "$dir/$name.o" -lm -lpthread -o "$out"
echo "$out"
