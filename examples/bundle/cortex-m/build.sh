#!/bin/sh
# Build the example runner (../main.c) for one network of a glow_mlir bundle as Cortex-M firmware that runs under
# semihosting (QEMU's mps2-an386 board: a Cortex-M4F; mps2-an500 for cortex-m7, mps3-an547 for cortex-m55, whose
# memory map its own linker script gives), its weights compiled into flash.
#
#   build.sh DIR NAME [--entry ENTRY] [--cpu cortex-m4] [--weights-in-object] [-o OUTPUT.elf]
#
# DIR holds NAME.o, NAME.h and ENTRY.weights.txt (glow-compile -model M.onnx --emit-bundle DIR --network-name NAME
# --target-triple thumbv7em-none-eabihf --target-cpu cortex-m4 --emit-weights-txt), or with --weights-in-object an
# object that holds its weights itself (glow-compile ... --weights-in-object). Run it with
#   qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
#     -semihosting-config enable=on,target=native,arg=runner,arg=INPUT.bin,arg=--out,arg=DIR -kernel OUTPUT.elf
# (input and output files are the host's, read and written through semihosting). Needs gcc-arm-none-eabi and
# libnewlib-arm-none-eabi (install-cross-tools.sh).
set -eu
if [ $# -lt 2 ]; then
  sed -n '3,14p' "$0" >&2
  exit 2
fi
dir=$1
name=$2
shift 2
entry=$name
cpu=cortex-m4
weights=
out=
while [ $# -gt 0 ]; do
  case $1 in
    --entry) entry=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    --weights-in-object) weights=-DBUNDLE_OBJECT_WEIGHTS; shift ;;
    -o) out=$2; shift 2 ;;
    *) echo "build.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
out=${out:-$dir/${entry}_firmware.elf}
weights=${weights:-"-DBUNDLE_WEIGHTS_TXT=\"$entry.weights.txt\""}
prefix=$(printf '%s' "$entry" | tr '[:lower:]' '[:upper:]')
here=$(cd "$(dirname "$0")" && pwd)
script=mps2-an386.ld
case $cpu in
  cortex-m4) arch="-mcpu=cortex-m4 -mfpu=fpv4-sp-d16" ;;
  cortex-m7) arch="-mcpu=cortex-m7 -mfpu=fpv5-d16" ;;
  cortex-m33) arch="-mcpu=cortex-m33 -mfpu=fpv5-sp-d16" ;;
  cortex-m55) arch="-mcpu=cortex-m55"; script=mps3-an547.ld ;;
  *) echo "build.sh: unknown --cpu '$cpu' (cortex-m4, cortex-m7, cortex-m33, cortex-m55)" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086  # $arch is several words, $weights one
${CC:-arm-none-eabi-gcc} $arch -mthumb -mfloat-abi=hard -std=c11 -O2 -Wall -Wextra -Werror -ffunction-sections \
  -I "$dir" -DBUNDLE_HEADER="\"$name.h\"" -DBUNDLE_ENTRY="$entry" -DBUNDLE_PREFIX="$prefix" \
  "$weights" -DBUNDLE_STATIC_REGIONS --specs=rdimon.specs -nostartfiles -T "$here/$script" \
  -Wl,--gc-sections "$here/startup.c" "$here/../main.c" "$dir/$name.o" -lm -o "$out"
echo "$out"
