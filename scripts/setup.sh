#!/usr/bin/env bash
# Installs the Debian packages shardscope needs (only the missing ones) and configures + builds a tree.
# Usage: scripts/setup.sh [release|asan|bench|fuzz]   (prints the build directory on the last line)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flavour="${1:-release}"

package_lists=("$root/scripts/debian-packages.txt")
[ "$flavour" = bench ] && package_lists+=("$root/scripts/bench-packages.txt")
mapfile -t wanted < <(cat "${package_lists[@]}" | grep -v '^\s*#' | sed '/^\s*$/d')
missing=()
for package in "${wanted[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "shardscope: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "shardscope: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=300 update -q >&2
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=300 install -y -q \
    --no-install-recommends "${missing[@]}" >&2
fi

# Line tables only (-g1): stack traces and sanitizer reports keep file:line, while full DWARF would make
# every translation unit about 40 % slower to compile and the links much larger (measured on the pybind11
# units, which dominate the build).
case "$flavour" in
  release) build_dir="$root/build"; extra=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG") ;;
  asan) build_dir="$root/build-asan"; extra=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g1" -DSHARDSCOPE_SANITIZE=ON) ;;
  # -O2: the level the test suite builds and checks warnings at (GCC 12 -O3 adds false positives).
  bench) build_dir="$root/build-bench"; extra=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DSHARDSCOPE_BUILD_BENCHMARKS=ON) ;;
  # The libFuzzer harnesses: their own small project (tests/fuzz), only the core sources they reach, built
  # with clang (libFuzzer is clang's).
  fuzz) build_dir="$root/build-fuzz"; source_dir="$root/tests/fuzz"; extra=(-DCMAKE_CXX_COMPILER=clang++-14) ;;
  *) echo "shardscope: unknown build flavour '$flavour' (release, asan, bench or fuzz)" >&2; exit 2 ;;
esac
# Two cores and plenty of memory: keep both busy.
# ccache keys on paths relative to the checkout, so a second clone (CI's, or a user's fresh one) reuses
# what an earlier build of the same sources compiled.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
cmake -S "${source_dir:-$root}" -B "$build_dir" -G Ninja "${extra[@]}" >&2
cmake --build "$build_dir" --parallel "$(nproc)" >&2
# Editors read the main build's compile commands, not the fuzz harnesses' clang ones.
[ "$flavour" = fuzz ] || ln -sf "$build_dir/compile_commands.json" "$root/compile_commands.json" 2>/dev/null || true
echo "$build_dir"
