#!/bin/sh
# Install what the cross-compiled bundle tests need on a Debian or Ubuntu host: a C cross compiler and C library for
# AArch64 Linux, and QEMU's user-mode emulator to run the static runner built with them. Needs root (or sudo).
#
#   examples/bundle/install-cross-tools.sh
#
# test/python/test_bundle_cross.py skips, saying which tool is missing, where these are absent.
set -eu
sudo=
if [ "$(id -u)" != 0 ]; then
  sudo=sudo
fi
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
