#!/bin/sh
# Install what the cross-compiled bundle tests need on a Debian or Ubuntu host: a C cross compiler and C library for
# AArch64 Linux and QEMU's user-mode emulator to run the static runner built with them; the bare-metal Arm compiler
# with newlib and QEMU's system emulator for Cortex-M firmware (its mps2 boards). Needs root (or sudo).
#
#   examples/bundle/install-cross-tools.sh
#
# test/python/test_bundle_cross.py and test_bundle_cortex_m.py skip, saying which tool is missing, where these are
# absent.
set -eu
sudo=
if [ "$(id -u)" != 0 ]; then
  sudo=sudo
fi
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
