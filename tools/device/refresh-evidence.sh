#!/usr/bin/env bash
# On the GPU machine: re-verify the evidence and write the records as one archive under $OUT.
#
#   MLA_VAR3_GIT_SHA=<commit> bash tools/device/refresh-evidence.sh [CARRY] [verify flags...]
#
# CARRY is the folder tools/device/carry.sh wrote and the device call carried (default
# .device). This runs `python -m mla_var3.evidence verify --archive $OUT/evidence-<sha>.tar.gz`
# under CARRY/bootstrap.sh, with any further flags passed to verify as they are (e.g.
# `--only 'hopper_gemm_ws/*'`, `--timeout 120`), the whole call under `timeout` so it ends
# before the device call's limit. The copy of the tree there has no .git, so the commit comes
# in through MLA_VAR3_GIT_SHA. Back on this side:
#   python -m mla_var3.evidence import <the fetched archive> && python -m mla_var3.evidence gate
set -euo pipefail
die() { echo "refresh-evidence.sh: $*" >&2; exit 2; }

carry=".device"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then carry="$1"; shift; fi
[ -f "$carry/bootstrap.sh" ] || die "no $carry/bootstrap.sh: run tools/device/carry.sh on the CPU side and carry the folder"
[ -n "${MLA_VAR3_GIT_SHA:-}" ] || die "set MLA_VAR3_GIT_SHA to the commit the tree is at (git rev-parse HEAD on this side)"
[ -n "${OUT:-}" ] && [ -d "$OUT" ] || die "set OUT to an existing folder for the archive (the device machine sets it)"
archive="$OUT/evidence-${MLA_VAR3_GIT_SHA:0:12}.tar.gz"
timeout --kill-after=10 "${MLA_VAR3_REFRESH_TIMEOUT:-570}" \
  bash "$carry/bootstrap.sh" python -m mla_var3.evidence verify --archive "$archive" "$@"
echo "archive: $archive"
