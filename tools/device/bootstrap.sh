#!/usr/bin/env bash
# On the GPU machine: make what tools/device/carry.sh packed usable, then run a command.
#
#   bash <carry folder>/bootstrap.sh python -m mla_var3.kernel hopper_gemm_ws --check
#
# carry.sh copies this script into the folder it writes (default .device/). Here it
# 1. unpacks the installed site that carry.sh packed (site*.tar.xz: the CuTe DSL, and any
#    wheels carried with --with, installed and pruned on the CPU side) into
#    /tmp/mla_var3-site-<hash of those files>: once per machine and carry (under a lock, so
#    lanes started together on a two-GPU machine share one install), later calls reuse it;
# 2. restores the carried payload files (FlashMLA's library, cuTile cubins) at their
#    repository paths;
# 3. puts the repository and the site on PYTHONPATH, points CUTLASS_DIR at the carried
#    examples, keeps NVLink multicast off and Python unbuffered, and runs the command from
#    the repository root.
# Wrap the command in `timeout`: a kernel that deadlocks on an mbarrier holds the GPU until
# the whole call is killed.
set -euo pipefail
dev="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$dev")"
stamp="$(cat "$dev"/site*.tar.xz | md5sum | cut -c1-12)"
site="/tmp/mla_var3-site-$stamp"
# Under a lock: lanes started together (one per GPU) install once, and none reads a half-written
# site or payload file.
locked=""
if command -v flock >/dev/null; then exec 9>"$site.lock" && flock 9 && locked=1; fi
if [ ! -f "$site/.complete" ]; then
  rm -rf "$site" && mkdir -p "$site"
  for archive in "$dev"/site*.tar.xz; do tar -xJf "$archive" -C "$site"; done
  touch "$site/.complete"
fi
if [ -f "$dev/payload.tar.xz" ]; then tar -xJf "$dev/payload.tar.xz" -C "$root"; fi
if [ -n "$locked" ]; then flock -u 9; exec 9>&-; fi
# A --target site does not run the DSL's .pth file: add its package folder by hand.
export PYTHONPATH="$root:$site:$site/nvidia_cutlass_dsl/dsl_packages${PYTHONPATH:+:$PYTHONPATH}"
[ -d "$dev/cutlass" ] && export CUTLASS_DIR="$dev/cutlass"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
cd "$root"
exec "$@"
