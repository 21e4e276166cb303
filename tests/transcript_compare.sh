# Sourced by the transcript tests (tests/pvm/run_comparison.sh, tests/mpi/transcripts.sh), which
# define WORK, fail and say. compare PLAIN LONGPIPE [NORMALIZE]: the same transcript with and
# without LongPipe ($WORK/NAME.out, after NORMALIZE, a sed program).
compare() {
  local plain=$1 longpipe=$2 normalize=${3:-}
  if ! diff <(sed -e "$normalize" "$WORK/$plain.out") <(sed -e "$normalize" "$WORK/$longpipe.out") >"$WORK/diff"; then
    cat "$WORK/diff" >&2
    fail "$longpipe differs from $plain"
  fi
  say "$longpipe matches $plain ($(wc -l <"$WORK/$plain.out") lines)"
}
