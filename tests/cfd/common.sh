# Shell helpers shared by the CFD demo's integration tests (sourced, not run); the ones every
# integration test shares (fail, ...) come from tests/lib.
# shellcheck source=../lib/itest_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/itest_common.sh"

# check_pngs BIN_DIR OUT_DIR CONSUMER FRAMES: the consumer wrote FRAMES frame PNGs and a contact
# sheet, all of which decode and show the field (cfd-png-check), and its summary.json.
check_pngs() {
  local bin=$1 dir=$2/consumer-$3 frames=$4 written
  written=$(find "$dir" -maxdepth 1 -name 'frame-*.png' 2>/dev/null | wc -l)
  ((written == frames)) || fail "consumer $3 wrote $written PNGs, expected $frames"
  "$bin/cfd-png-check" "$dir"/frame-*.png "$dir/contact-sheet.png" >/dev/null || {
    "$bin/cfd-png-check" "$dir"/frame-*.png "$dir/contact-sheet.png"; fail "consumer $3: a PNG is unreadable or blank"; }
  [[ -s "$dir/summary.json" ]] || fail "consumer $3 wrote no summary.json"
}

# check_consumers_pngs BIN_DIR OUT_DIR RESULT_JSON CONSUMERS: check_pngs for every consumer, with
# the count of PNGs its summary in the producer's RESULT_JSON reports (check_result.py checks that
# count: one per frame received, or for a live display one per frame shown).
check_consumers_pngs() {
  local bin=$1 out=$2 result=$3 consumers=$4 i shown
  for ((i = 0; i < consumers; ++i)); do
    shown=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["consumers"][int(sys.argv[2])]["pngs_written"])' \
      "$result" "$i")
    check_pngs "$bin" "$out" "$i" "$shown"
  done
}

# The two-site tests (a link fixture's namespaces, apps/pvm-sites): PVM_SITES and WORK must be set.
# two_site_up LIBLONGPIPE: checks the library is there and starts the two-site virtual machine.
two_site_up() {
  [[ -f $1 ]] || fail "no LongPipe library at $1"
  "$PVM_SITES" up >"$WORK/pvm-sites-up.log" 2>&1 || { cat "$WORK/pvm-sites-up.log"; fail "pvm-sites up failed"; }
}

# two_site_down STATUS: halts the virtual machine; keeps WORK when STATUS is a failure, else removes it.
two_site_down() {
  "$PVM_SITES" down >/dev/null 2>&1 || echo "warning: pvm-sites down failed" >&2
  remove_work_unless_failed "$1"
}
