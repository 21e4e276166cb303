# shellcheck shell=bash
# An outage of the emulated link, as a rain fade or a handover: every packet arriving at either site
# is dropped (a tc ingress BPF program, tests/core/outage_drop.bpf.c), so nothing is answered and
# nothing refused, and TCP's retransmissions back off as on a real path. (Stopping the emulator
# would not do: the packets it did not read wait in the TUN queues and arrive, stale, the moment it
# continues.) Needs WAN (netem/wan), WORK and fail (itest_common.sh); OUTAGE_ON is "yes" while an
# outage is on (the caller sets it "" first), for its clean-up to end it.

LINK_OUTAGE_PROGRAM="$(cd "$(dirname "${BASH_SOURCE[0]}")/../core" && pwd)/outage_drop.bpf.c"

# Builds the filter (outage_begin does if nobody did): call it early where the outage's timing matters.
outage_filter() {
  clang -O2 -target bpf -c "$LINK_OUTAGE_PROGRAM" -o "$WORK/outage_drop.o" ||
    fail "cannot build the outage filter (Debian package clang)"
}
outage_begin() {
  local site
  [[ -f $WORK/outage_drop.o ]] || outage_filter
  OUTAGE_ON=yes
  for site in a b; do
    "$WAN" exec $site tc qdisc add dev lpwan0 clsact
    "$WAN" exec $site tc filter add dev lpwan0 ingress bpf da obj "$WORK/outage_drop.o" sec classifier ||
      fail "cannot attach the outage filter in site $site"
  done
}
outage_end() {
  local site
  for site in a b; do "$WAN" exec $site tc qdisc del dev lpwan0 clsact 2>/dev/null || true; done
  OUTAGE_ON=""
}
