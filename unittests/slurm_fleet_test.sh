#!/bin/bash
# The fleet scripts on a real Slurm (scripts/slurm/, README "Auditing a fleet"): a single-node cluster
# of this machine (scripts/slurm-fixture) runs an array of audits of a reference device and the
# aggregation after them; every task's result is there, and exactly the planted outlier (a result
# whose profile differs in one parameter) is flagged. The health check passes against a task's
# result and, against the outlier's, fails and drains the node. Skipped (77), saying why, where the
# cluster cannot start (not root, no slurm-wlm or munge).
#
#   unittests/slurm_fleet_test.sh SOURCE_DIR BINARY
set -uo pipefail
src=$1
bin=$2
work=$(mktemp -d)
cluster="$work/cluster"
results="$work/results"
cleanup() {
  "$src/scripts/slurm-fixture" stop "$cluster"
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$results"/*.out "$cluster"/log/slurmctld.log; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done
  exit 1
}

line=$("$src/scripts/slurm-fixture" start "$cluster")
status=$?
[ $status -eq 77 ] && { echo "skipped: the Slurm fixture cannot start here (above)"; exit 77; }
[ $status -eq 0 ] || fail "slurm-fixture exited $status"
export "${line?}"
export PATH="$PATH:/usr/sbin"
export GPUPARANOIA="$bin"
node=$(hostname -s)

# The planted outlier: a node whose binary32 multiplier rounds to nearest instead of chopping.
mkdir -p "$results"
"$bin" run --device ref:ati-r520 --suite scalar --quick --seed 1 --json "$work/r520.json" >/dev/null ||
  fail "the audit to plant from"
python3 - "$work/r520.json" "$results/planted.json" <<'EOF' || fail "planting"
import json, sys
doc = json.load(open(sys.argv[1]))
doc["host"]["hostname"] = "planted"
doc["profile"]["scalar"]["binary32"]["mul"]["rounding"] = "rne"
json.dump(doc, open(sys.argv[2], "w"))
EOF

submitted=$("$src/scripts/slurm/submit" "$results" 3 --device ref:ati-r520 --suite scalar --quick --seed 1) ||
  fail "submit: $submitted"
echo "$submitted"
fleet_job=$(echo "$submitted" | sed -n 's/.*fleet: job \([0-9]*\).*/\1/p')
[ -n "$fleet_job" ] || fail "no job id in: $submitted"
for _ in $(seq 1 300); do
  state=$(scontrol show job "$fleet_job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) break ;; esac
  sleep 1
done
echo "aggregation job $fleet_job: $state"
[ "$state" = FAILED ] || fail "the aggregation should fail on the outlier (exit 1), not end $state"

for task in 0 1 2; do
  [ -f "$results/$node-$task/ref-ati-r520.json" ] || fail "task $task wrote no result ($(ls "$results"))"
done
[ -f "$results/fleet.txt" ] && [ -f "$results/fleet.md" ] || fail "no fleet report"
cat "$results/fleet.txt"
report=$("$bin" fleet "$results" --json)
[ $? -eq 1 ] || fail "fleet should exit 1 on the outlier"
python3 - "$report" <<'EOF' || fail "fleet's account: $report"
import json, sys
r = json.loads(sys.argv[1])
assert r["results"] == 4, r["results"]
outliers = [o for g in r["groups"] for o in g["outliers"]]
assert len(outliers) == 1, outliers
o = outliers[0]
assert o["file"].endswith("planted.json") and o["device"] == "planted ref:ati-r520", o
assert o["differences"][0]["where"] == "profile.scalar.binary32.mul.rounding", o["differences"]
# and its profile contradicts its own findings, which the planting left as they were
assert any("contradicts scalar.mul." in d["device"] for d in o["differences"]), o["differences"]
EOF

# The health check: as recorded against a task's result; against the outlier's, the node drains.
GPUPARANOIA_REFERENCE="$results/$node-0/ref-ati-r520.json" GPUPARANOIA_SECONDS=1 \
  "$src/scripts/slurm/healthcheck" --device ref:ati-r520 || fail "the health check against a task's result"
sinfo -h -o '%t' | grep -q '^idle' || fail "the node left idle after a passing check"
GPUPARANOIA_REFERENCE="$results/planted.json" GPUPARANOIA_SECONDS=1 \
  "$src/scripts/slurm/healthcheck" --device ref:ati-r520
[ $? -eq 1 ] || fail "the health check against the outlier should exit 1"
sinfo -h -o '%t %E' | grep -q '^drain.*gpuparanoia check failed' || fail "the node is not drained: $(sinfo -h -o '%t %E')"
echo "ok: 3 tasks, 1 planted outlier flagged, the failing health check drained the node"
