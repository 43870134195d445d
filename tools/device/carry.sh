#!/usr/bin/env bash
# Pack what a run on the offline GPU machine needs into one folder of this repository, small
# enough to travel with the working tree (64 MiB in all, tree included).
#
# The GPU machine (an H200; Python 3.12, CUDA 13 driver and toolkit, torch, numpy, no package
# index) receives a copy of the working tree plus the ignored paths a call names. It lacks the
# CuTe DSL, CUTLASS's examples and our peers' builds; this script packs them:
#
#   bash tools/device/carry.sh [--out DIR] [--with X]... [PROFILE]
#
#   PROFILE  cute (default): nvidia-cutlass-dsl 4.8.1 (~53 MB, see "What travels" below) and the
#                CUTLASS CuTe DSL examples that run on SM90/SM80 (Hopper, Ampere, the DSL
#                tutorials incl. the PDL one, helpers, and Blackwell's rmsnorm and reduce, which
#                run anywhere), ~1.2 MB.
#            mla: cute + the MLA peers: FlashMLA's library (third_party/flashmla) and the
#                cuTile cubins and cuda-tile wheel (build/cutile).
#            quack: the CuTe DSL + quack and apache-tvm-ffi (build/quack, the RMSNorm group's
#                peer) + only the examples the RMSNorm plans and the PDL tutorial (which needs
#                tvm-ffi) load (Blackwell's rmsnorm and reduce, the DSL tutorials, helpers, utils). torch-c-dlpack-ext is left out (quack's code does not
#                import it; tvm-ffi uses it only when present).
#   --out DIR    the folder to write, a direct child of the repository root (default .device);
#                it is added to .git/info/exclude, so a device call carries it by name.
#   --with X     one more payload (repeatable): NAME==VERSION is that package's wheel for
#                CPython 3.12 on x86-64 Linux, downloaded once and installed beside the DSL
#                (apache-tvm-ffi==0.1.15.post2 for the PDL tutorial plan); a *.whl is installed
#                there; any other file or folder (relative to the repo root) is restored at the
#                same path there (a FlashMLA .so, cubins, a compile cache), and the wheels inside
#                a carried folder are installed too.
#
# What travels. Every wheel is installed here (pip --target for CPython 3.12 on x86-64 Linux,
# as the GPU machine would) and packed as an installed site, so the GPU machine only unpacks:
#   site.tar.xz      the DSL's cu13 libraries (_cutlass_ir.cu13.so, libcute_dsl_runtime.so, the
#                    AOT header and static runtime), xz with the x86 filter: 52 MB of 237 MB.
#   site-py.tar.xz   the DSL's Python packages and every other wheel, installed and pruned
#                    (1.4 MB for the DSL alone, 3.4 MB with quack and tvm-ffi).
#   payload.tar.xz   the non-wheel payloads, restored at their repository paths.
# Pruned, as no run loads them (the `prune` list below): the DSL's AOT link stubs for aarch64
# and QNX targets; the DSL's standalone IKET profiler package `iket` (cutlass never imports it;
# its tracing ops live in cutlass._mlir.dialects.iket, which stays); tvm-ffi's vendored
# build sources (3rdparty/: libbacktrace's autotools tree, a dlpack copy also under include/);
# console scripts (bin/) and __pycache__. install_site fails if a kept library NEEDs a pruned
# one (tvm-ffi's core.so links libtvm_ffi_testing.so, so that stays). The shared libraries
# ship stripped already (no debug sections to drop).
#
# The first call on a machine downloads the wheels and repacks the cu13 library (about
# 10 minutes on two busy cores); both are cached in ${XDG_CACHE_HOME:-~/.cache}/mla_var3/device,
# so later calls take seconds. The script fails when the folder plus the tree would not fit in
# 64 MiB.
#
# On the GPU machine, from the repository root (the device call carries DIR):
#   bash DIR/bootstrap.sh python -m mla_var3.kernel hopper_gemm_ws --check
#   MLA_VAR3_GIT_SHA=<sha> bash tools/device/refresh-evidence.sh DIR   # the evidence, one archive
set -euo pipefail

die() { echo "carry.sh: $*" >&2; exit 2; }

root="$(git rev-parse --show-toplevel)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out_name=".device"
profile="cute"
payloads=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out_name="${2:?--out needs a folder name}"; shift 2 ;;
    --out=*) out_name="${1#--out=}"; shift ;;
    --with) payloads+=("${2:?--with needs a path}"); shift 2 ;;
    --with=*) payloads+=("${1#--with=}"); shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    cute|mla|quack) profile="$1"; shift ;;
    *) die "unknown argument '$1' (profiles: cute, mla, quack; see --help)" ;;
  esac
done
case "$out_name" in */*|""|.|..) die "--out must be a folder name directly under the repository root, got '$out_name'" ;; esac
example_dirs=(cute/hopper cute/ampere cute/blackwell/kernel/rmsnorm cute/blackwell/kernel/reduce dsl_tutorials helpers utils)
case "$profile" in
  mla) payloads=(third_party/flashmla build/cutile "${payloads[@]}") ;;
  quack)
    quack_wheels=("$root"/build/quack/quack_kernels-*.whl "$root"/build/quack/apache_tvm_ffi-*.whl)
    for w in "${quack_wheels[@]}"; do [ -f "$w" ] || die "no quack/tvm-ffi wheel in build/quack (see mla_var3/kernel/external/reduction/quack)"; done
    payloads=("${quack_wheels[@]}" "${payloads[@]}")
    example_dirs=(cute/blackwell/kernel/rmsnorm cute/blackwell/kernel/reduce dsl_tutorials helpers utils) ;;
esac

DSL_VERSION="4.8.1"
BUDGET=$((64 * 1024 * 1024))
cache="${XDG_CACHE_HOME:-$HOME/.cache}/mla_var3/device"
out="$root/$out_name"
examples="${CUTLASS_DIR:-$root/third_party/cutlass}/examples/python/CuTeDSL"
[ -d "$examples" ] || die "no CUTLASS examples at $examples: run 'nox -s cutlass' or set CUTLASS_DIR"
for p in "${payloads[@]}"; do
  case "$p" in
    *==*) ;;
    *.whl) [ -f "$p" ] || [ -f "$root/$p" ] || die "wheel '$p' does not exist" ;;
    /*|../*) die "payload '$p' must be a path inside the repository, relative to its root" ;;
    *) [ -e "$root/$p" ] || die "payload '$p' does not exist under the repository root (build it first)" ;;
  esac
done

# Installed files no run loads (paths relative to the site; see "What travels" above).
prune=(
  nvidia_cutlass_dsl/cu13/lib/stubs
  nvidia_cutlass_dsl/dsl_packages/iket
  tvm_ffi/3rdparty
  bin
)
# xz for the packed sites: the x86 branch filter (call targets become absolute, so repeated
# calls compress) and a window over the whole library.
XZ_OPTS=(--x86 --lzma2=preset=9e,dict=256MiB -T1)

mkdir -p "$cache/wheels"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
grep -qxF "/$out_name/" "$root/.git/info/exclude" 2>/dev/null || echo "/$out_name/" >> "$root/.git/info/exclude"
rm -rf "$out" && mkdir -p "$out"
cp "$here/bootstrap.sh" "$out/bootstrap.sh"

# Wheels for the GPU machine's Python 3.12 on x86-64 Linux, into the cache (pip skips what is there).
cp312=(--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
       --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
cp312_wheels() { python3 -m pip download --quiet --no-deps "${cp312[@]}" --dest "$cache/wheels" "$@"; }
# install_site DIR WHEEL...: install the wheels into DIR as pip would there, then drop the pruned paths.
install_site() {
  local dir="$1"; shift
  python3 -m pip install --quiet --no-deps --no-index --no-compile --disable-pip-version-check \
    "${cp312[@]}" --target "$dir" "$@" 2>&1 | { grep -v "as the 'root' user" >&2 || true; }
  local p lib gone=()
  for p in "${prune[@]}"; do
    if [ -e "$dir/$p" ]; then
      while IFS= read -r lib; do gone+=("$lib"); done < <(find "$dir/$p" -name '*.so*' -printf '%f\n')
      rm -rf "${dir:?}/$p"
    fi
  done
  find "$dir" -name __pycache__ -type d -prune -exec rm -rf {} +
  [ ${#gone[@]} -gt 0 ] || return 0
  local needed
  needed="$(find "$dir" -name '*.so*' -type f -exec readelf -d {} + | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort -u)"
  for lib in "${gone[@]}"; do
    ! grep -qxF "$lib" <<<"$needed" || die "the prune list drops $lib, which a kept library links (NEEDED): keep it"
  done
}
# pack_site DIR FILE: DIR's content as a tar (sorted by name, owned by root), xz-compressed into FILE.
pack_site() {
  tar -C "$1" --sort=name --owner=0 --group=0 --numeric-owner -cf - . | xz "${XZ_OPTS[@]}" > "$2.part"
  mv "$2.part" "$2"
}

# 1. The CuTe DSL's cu13 libraries: installed and pruned each time (seconds), packed once per
#    machine (keyed by the installed file list and the xz options, so a change here repacks).
cp312_wheels "nvidia-cutlass-dsl==$DSL_VERSION" "nvidia-cutlass-dsl-libs-base==$DSL_VERSION" \
  "nvidia-cutlass-dsl-libs-core==$DSL_VERSION" "nvidia-cutlass-dsl-libs-cu13==$DSL_VERSION"
dsl_wheel() { ls "$cache/wheels/$1-$DSL_VERSION-"*.whl; }
install_site "$tmp/cu13" "$(dsl_wheel nvidia_cutlass_dsl_libs_cu13)"
key="$( (echo "${XZ_OPTS[*]}"; cd "$tmp/cu13" && find . -type f -printf '%p %s\n' | sort) | md5sum | cut -c1-8)"
big="$cache/cute-cu13-$DSL_VERSION-$key.tar.xz"
if [ ! -s "$big" ]; then
  echo "packing the CuTe DSL's cu13 libraries with xz (once per machine, about 10 minutes) ..."
  pack_site "$tmp/cu13" "$big"
fi
rm -rf "$tmp/cu13"
cp "$big" "$out/site.tar.xz"

# 2. CUTLASS's CuTe DSL examples that run on SM90/SM80, without notebooks, pictures or C++.
dst="$out/cutlass/examples/python/CuTeDSL"
for dir in "${example_dirs[@]}"; do
  [ -d "$examples/$dir" ] || die "CUTLASS examples lack $dir (is $examples at the pinned commit?)"
  mkdir -p "$dst/$dir"
  tar -C "$examples/$dir" -cf - --exclude='*.ipynb' --exclude='*.svg' --exclude='*.png' --exclude='*.cpp' . \
    | tar -C "$dst/$dir" -xf -
done
if [ -d "$dst/dsl_tutorials" ]; then
  [ -f "$dst/dsl_tutorials/programmatic_dependent_launch.py" ] || die "the PDL tutorial is missing from $examples"
fi

# 3. The DSL's Python wheels and the payloads' wheels, installed together into site-py.tar.xz;
#    every other payload restored at its repo-relative path from payload.tar.xz.
wheels=("$(dsl_wheel nvidia_cutlass_dsl)" "$(dsl_wheel nvidia_cutlass_dsl_libs_base)" "$(dsl_wheel nvidia_cutlass_dsl_libs_core)")
files=()
for p in "${payloads[@]}"; do
  case "$p" in
    *==*) cp312_wheels "$p" || die "no CPython 3.12 x86-64 Linux wheel of $p on the package index"
          name="${p%%==*}"; version="${p#*==}"
          wheel="$(ls "$cache/wheels/${name//-/_}-$version-"*.whl 2>/dev/null | head -1)"
          [ -n "$wheel" ] || die "pip downloaded no wheel named ${name//-/_}-$version-*.whl for $p"
          wheels+=("$wheel") ;;
    *.whl) if [ -f "$p" ]; then wheels+=("$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"); else wheels+=("$root/$p"); fi ;;
    *) files+=("$p")
       if [ -d "$root/$p" ]; then while IFS= read -r -d '' w; do wheels+=("$w"); done < <(find "$root/$p" -name '*.whl' -print0); fi ;;
  esac
done
install_site "$tmp/py" "${wheels[@]}"
pack_site "$tmp/py" "$out/site-py.tar.xz"
if [ ${#files[@]} -gt 0 ]; then
  # Wheels inside a carried folder are installed from site-py.tar.xz (above): not packed twice.
  tar -C "$root" --exclude='*.whl' -cf - "${files[@]}" | xz -9e -T1 > "$out/payload.tar.xz"
fi

printf '%s\n' "profile=$profile" "dsl=$DSL_VERSION" "payloads=${payloads[*]:-}" \
  "wheels=$(for w in "${wheels[@]}"; do basename "$w"; done | tr '\n' ' ')" > "$out/MANIFEST"
carry_bytes=$(du -sb "$out" | cut -f1)
tree_bytes=$(git -C "$root" ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
total=$((carry_bytes + tree_bytes))
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
echo "$out_name/ ready: profile $profile, $(mib "$carry_bytes") MiB + $(mib "$tree_bytes") MiB of tree = $(mib "$total") of 64 MiB ($(mib $((BUDGET - total))) MiB left for other carried paths)"
[ "$total" -le "$BUDGET" ] || die "$(mib "$total") MiB does not fit the 64 MiB that travel: drop a payload or large files from the tree"
echo "on the GPU machine (carry [\"$out_name\"]): bash $out_name/bootstrap.sh <command>"
