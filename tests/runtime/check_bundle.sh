#!/usr/bin/env bash
# Proves the runtime bundle starts on a node with none of libtony's build dependencies: unpacks
# it into an empty root holding nothing but glibc, and runs every binary in it with --version
# under chroot.
#
#   check_bundle.sh tony-runtime.tar.gz
set -euo pipefail
bundle=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root/lib64" "$root/lib/x86_64-linux-gnu" "$root/app" "$root/proc"
# glibc only: the loader and glibc's own libraries.
for lib in ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 \
           libresolv.so.2; do
  # No early exit in awk: ldconfig would die of SIGPIPE and pipefail would end the script.
  src=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ && !found {print $NF; found = 1}')
  [ -n "$src" ] && cp -L "$src" "$root/lib/x86_64-linux-gnu/$lib"
done
cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
tar -xzf "$bundle" -C "$root/app"

# /proc as on any node: the loader finds $ORIGIN (the bundle's lib/) through /proc/self/exe.
# A private mount namespace keeps the bind mount from outliving the check.
run_chroot() {
  local userns=()
  [ "$(id -u)" -eq 0 ] || userns=(--user --map-root-user)
  unshare "${userns[@]}" --mount sh -c 'mount --bind /proc "$0/proc" && exec chroot "$0" "$@"' \
    "$root" "$@"
}

status=0
for bin in "$root"/app/bin/*; do
  name=$(basename "$bin")
  if out=$(run_chroot "/app/bin/$name" --version 2>&1); then
    echo "ok: $name starts with only glibc present: $out"
  else
    echo "FAILED: $name does not start with only glibc present:"
    echo "$out"
    status=1
  fi
done
libs=$(ls "$root/app/lib" | wc -l)
size=$(du -sh "$bundle" | cut -f1)
echo "bundle: $size, $libs shared libraries"
exit $status
