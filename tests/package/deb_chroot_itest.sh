#!/usr/bin/env bash
# The Debian package on a fresh Debian 12 root: `cpack -G DEB` in the build tree, a new root
# from Debian's packages (mmdebstrap: apt, a compiler and CMake, nothing of libtony's build
# dependencies), `apt-get install ./libtony_*.deb` there (dependencies from Debian), then
# `ytf-submit --version`, `ytf --help` and a find_package(tony) consumer built and run inside.
#
#   tests/package/deb_chroot_itest.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
if ((EUID != 0)) || ! command -v mmdebstrap >/dev/null; then
  echo "deb_chroot_itest: needs root and mmdebstrap (scripts/install-deps); skipped" >&2
  exit 77
fi
(cd "$build" && rm -f libtony_*.deb && cpack -G DEB >/dev/null)
deb=$(ls "$build"/libtony_*.deb)
echo "package: $deb ($(du -m "$deb" | cut -f1) MB)"

root=$(mktemp -d /tmp/libtony-deb-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
mirror=${TONY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
mmdebstrap --quiet --variant=apt --include=ca-certificates,cmake,g++,make bookworm "$root" \
  "$mirror"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/tmp/consumer"
cp "$deb" "$root/tmp/"
cp "$here/../consumer/main.cc" "$root/tmp/consumer/"
cat >"$root/tmp/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.22)
project(deb_consumer CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(tony 0.1 CONFIG REQUIRED)
add_executable(consumer main.cc)
target_link_libraries(consumer PRIVATE tony::tony)
CMAKE

in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
in_root apt-get update -qq
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "/tmp/${deb##*/}" >/dev/null
in_root ytf-submit --version
in_root ytf --help | sed -n 1p
in_root sh -c 'cmake -S /tmp/consumer -B /tmp/consumer/build >/dev/null &&
  cmake --build /tmp/consumer/build >/dev/null && /tmp/consumer/build/consumer'
test -f "$root/usr/share/tony/tony-runtime.tar.gz"
echo "deb_chroot_itest: installed, ran and built against on a fresh Debian 12 root"
