#!/usr/bin/env bash
# On the GPU machine: run a queue of verify/profile/test items in order under one deadline, then pack
# every record the queue made (and any made earlier in the same evidence folder) into one archive.
#
#   MLA_VAR3_GIT_SHA=<commit> bash tools/device/run-queue.sh CARRY SECONDS ITEM...
#
# CARRY: the folder tools/device/carry.sh wrote (e.g. .device-mla). SECONDS: the budget for the whole
# queue; an item starts only with more than 25 s left and is killed when the budget runs out, so the
# archive is always written before the device call's limit. An ITEM is
#   <glob>                      python -m mla_var3.evidence verify --force --only <glob>
#   ncu:<glob> | sanitize:<glob> | annotation:<glob>
#                               a profile section of a run record already in the evidence folder
#                               (verify the record earlier in the same queue: profile skips targets
#                               without one)
#   ncu@<regex>:<glob>          ncu on the launch matching <regex> (profile --kernel-regex), for a
#                               kernel whose plan's ncu_kernel_regex does not name it
#   pytest:<test files>         the GPU tests of those files (pytest -m gpu, 150 s at most)
# Environment: MLA_VAR3_EVIDENCE_DIR (default /tmp/evidence-queue; it persists on a warm machine, so
# a second call's archive holds the first call's records too), CHECK_JOBS (verify --check-jobs, 3).
# Writes $OUT/queue.log (each item, its start, time left and exit status), $OUT/gpus.txt and
# $OUT/evidence-<sha>.tar.gz. Back on this side: python -m mla_var3.evidence import <archive>.
set -uo pipefail
die() { echo "run-queue.sh: $*" >&2; exit 2; }

[ $# -ge 3 ] || die "usage: MLA_VAR3_GIT_SHA=<commit> bash tools/device/run-queue.sh CARRY SECONDS ITEM..."
carry=$1 budget=$2
shift 2
[ -f "$carry/bootstrap.sh" ] || die "no $carry/bootstrap.sh: run tools/device/carry.sh on the CPU side and carry the folder"
[[ "$budget" =~ ^[0-9]+$ ]] || die "SECONDS must be a whole number of seconds, got '$budget'"
[ -n "${MLA_VAR3_GIT_SHA:-}" ] || die "set MLA_VAR3_GIT_SHA to the commit the tree is at (git rev-parse HEAD on this side)"
[ -n "${OUT:-}" ] && [ -d "$OUT" ] || die "set OUT to an existing folder for the archive (the device machine sets it)"

export MLA_VAR3_EVIDENCE_DIR=${MLA_VAR3_EVIDENCE_DIR:-/tmp/evidence-queue}
mkdir -p "$MLA_VAR3_EVIDENCE_DIR"
deadline=$(($(date +%s) + budget))
log="$OUT/queue.log"
nvidia-smi --query-gpu=index,uuid,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
  --format=csv > "$OUT/gpus.txt" 2>&1
bash "$carry/bootstrap.sh" true >> "$log" 2>&1  # unpack once, outside any item's time limit
set -f  # items are globs for verify, not for the shell
for item in "$@"; do
  left=$((deadline - $(date +%s)))
  if [ "$left" -le 25 ]; then echo "=== skipped (no time left): $item" >> "$log"; continue; fi
  echo "=== $item ($left s left) $(date -u +%T)" >> "$log"
  case "$item" in
    ncu@*:*)
      regex=${item#ncu@}
      cmd=(python -m mla_var3.evidence profile --prof-type ncu --timeout 150 --kernel-regex "${regex%%:*}" --only "${item#*:}") ;;
    ncu:*|sanitize:*|annotation:*)
      cmd=(python -m mla_var3.evidence profile --prof-type "${item%%:*}" --timeout 150 --only "${item#*:}") ;;
    pytest:*)
      cmd=(timeout -k 5 150 python -m pytest -q -p no:cacheprovider -m gpu ${item#pytest:}) ;;
    *)
      cmd=(python -m mla_var3.evidence verify --force --timeout 150 --check-jobs "${CHECK_JOBS:-3}" --only "$item") ;;
  esac
  timeout --kill-after=5 $((left - 15)) bash "$carry/bootstrap.sh" "${cmd[@]}" >> "$log" 2>&1
  echo "=== exit $? $(date -u +%T)" >> "$log"
done
bash "$carry/bootstrap.sh" python -m mla_var3.evidence export "$OUT/evidence-${MLA_VAR3_GIT_SHA:0:12}.tar.gz" >> "$log" 2>&1
