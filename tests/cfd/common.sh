# Shell helpers shared by the CFD demo's integration tests (sourced, not run).

fail() { echo "FAIL: $*" >&2; exit 1; }

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
