#!/usr/bin/env bash
# Proof that the suite does not depend on a quiet machine: a fresh clone of this repository's
# HEAD, `npm ci`, two CPU hogs beside it (started and stopped by pid), `npm test` three times in a
# row. Prints each run's time and result; exits non-zero unless all three are green.
#   scripts/test-under-load.sh [git ref, default HEAD]    (PHASEBRIDGE_TEST_SLOWDOWN is passed on)
# Heavy on purpose: it keeps both cores busy for the length of three full runs.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
ref="${1:-HEAD}"
work="$(mktemp -d "${TMPDIR:-/tmp}/pb-under-load-XXXXXX")"
# mktemp makes it 0700: the tests that run the CLI as another user (a home they cannot enter)
# must still reach the checkout, as they do in a CI clone.
chmod 755 "$work"
hogs=()

cleanup() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null || true; done
  # The clone goes; the logs and JSON reports of the runs stay for reading.
  rm -rf "$work/phasebridge"
  echo "under-load: logs in $work"
}
trap cleanup EXIT INT TERM

echo "under-load: cloning $repo ($ref) into $work/phasebridge"
git clone --quiet --no-local "$repo" "$work/phasebridge"
cd "$work/phasebridge"
git checkout --quiet "$(git -C "$repo" rev-parse "$ref")"
echo "under-load: npm ci"
npm ci --no-audit --no-fund >"$work/npm-ci.log" 2>&1 || { tail -30 "$work/npm-ci.log"; exit 1; }
# As .ci/run does: with CI=true the real-CLI tests require the pinned agent CLIs.
node scripts/install-agent-clis.mjs >>"$work/npm-ci.log" 2>&1 || { tail -30 "$work/npm-ci.log"; exit 1; }

for _ in 1 2; do
  node -e 'for (;;) {}' &
  hogs+=("$!")
done
echo "under-load: CPU hogs running, pids ${hogs[*]} ($(nproc) cores)"

results=()
status=0
for run in 1 2 3; do
  start=$(date +%s)
  if npm test -- --reporter=default --reporter=json --outputFile="$work/run-$run.json" \
    >"$work/run-$run.log" 2>&1; then
    result=green
  else
    result=red
    status=1
  fi
  secs=$(( $(date +%s) - start ))
  summary=$(node -e "const r=require('$work/run-$run.json');console.log(r.numPassedTests+' passed, '+r.numFailedTests+' failed, '+(r.numPendingTests+r.numTodoTests)+' skipped')" 2>/dev/null || echo 'no JSON report')
  line="run $run: $result in ${secs} s ($summary)"
  echo "under-load: $line"
  results+=("$line")
  if [ "$result" = red ]; then
    echo "under-load: failures of run $run:"
    grep -E '(FAIL|✗|×) ' "$work/run-$run.log" | head -40 || true
  fi
done

echo "under-load: summary (2 CPU hogs beside each run)"
printf '  %s\n' "${results[@]}"
exit "$status"
