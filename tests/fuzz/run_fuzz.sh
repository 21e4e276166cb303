#!/usr/bin/env bash
# run_fuzz.sh BUILD_FUZZ_DIR TARGET [--seconds N] [--runs N] [--seed N] [-- libFuzzer options...]
# Fuzzes one target of a fuzz build tree (LONGPIPE_FUZZ=ON) from its seed corpus: new inputs go to
# BUILD_FUZZ_DIR/fuzz-corpus/TARGET (never into the repository), a crash's input to
# BUILD_FUZZ_DIR/fuzz-artifacts/TARGET/. --seed N makes the run repeatable, as ctest's is: a fixed
# random seed and a fresh working corpus (BUILD_FUZZ_DIR/fuzz-corpus-seeded/TARGET, emptied first)
# instead of the one earlier runs grew. Prints one summary line:
#   fuzz TARGET: N executions in S s, no crash       (exit 0)  or  ... CRASH (exit 1)
set -euo pipefail

HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
BUILD=${1:?usage: run_fuzz.sh BUILD_FUZZ_DIR TARGET [--seconds N] [--runs N]}
TARGET=${2:?usage: run_fuzz.sh BUILD_FUZZ_DIR TARGET [--seconds N] [--runs N]}
shift 2
SECONDS_LIMIT=60
RUNS=-1            # libFuzzer: -1 = no limit on executions
MAX_INPUT=1024     # bytes: a few frames, an image of many fragments
RSS_LIMIT_MB=1024  # a shared 2-core machine: an input that needs more is a bug
HANG_SECONDS=60    # one input running this long is a hang (generous: the machine is shared and busy)
SEED=0             # libFuzzer: 0 = a random seed
EXTRA=()
while (($#)); do
  case $1 in
    --seconds) SECONDS_LIMIT=${2:?--seconds needs a value}; shift ;;
    --runs) RUNS=${2:?--runs needs a value}; SECONDS_LIMIT=0; shift ;;
    --seed) SEED=${2:?--seed needs a value}; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "run_fuzz.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
[[ $SECONDS_LIMIT =~ ^[0-9]+$ && $RUNS =~ ^-?[0-9]+$ && $SEED =~ ^[0-9]+$ ]] ||
  { echo "run_fuzz.sh: --seconds, --runs and --seed take integers" >&2; exit 2; }

# The ARQ's input is a list of operations, each one costly under the sanitizers: ~150 of them
# reach every state (windows of 1..64) at several times the executions per second.
[[ $TARGET != arq ]] || MAX_INPUT=384
BINARY=$BUILD/tests/fuzz/fuzz-$TARGET
SEEDS=$HERE/corpus/$TARGET
[[ -x $BINARY ]] || { echo "run_fuzz.sh: no fuzz target '$TARGET' in $BUILD (built with LONGPIPE_FUZZ=ON?)" >&2; exit 2; }
WORK=$BUILD/fuzz-corpus/$TARGET
if ((SEED != 0)); then
  WORK=$BUILD/fuzz-corpus-seeded/$TARGET
  rm -rf "$WORK"
fi
ARTIFACTS=$BUILD/fuzz-artifacts/$TARGET
mkdir -p "$WORK" "$ARTIFACTS"
LOG=$BUILD/fuzz-$TARGET.log

status=0
"$BINARY" -max_total_time="$SECONDS_LIMIT" -runs="$RUNS" -max_len=$MAX_INPUT -rss_limit_mb=$RSS_LIMIT_MB \
  -timeout=$HANG_SECONDS -seed=$SEED -print_final_stats=1 -artifact_prefix="$ARTIFACTS/" "${EXTRA[@]}" "$WORK" "$SEEDS" \
  >"$LOG" 2>&1 || status=$?
executions=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$LOG" | grep -oE '[0-9]+$' || echo 0)
elapsed=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$LOG" | grep -oE 'in [0-9]+' | grep -oE '[0-9]+' || echo '?')
if ((status == 0)); then
  echo "fuzz $TARGET: $executions executions in $elapsed s, no crash or sanitizer report (log: $LOG)"
else
  tail -n 40 "$LOG" >&2
  echo "fuzz $TARGET: CRASH after $executions executions (exit $status); input saved in $ARTIFACTS/ (log: $LOG)"
  exit 1
fi
