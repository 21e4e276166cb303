#!/usr/bin/env bash
# mpi-sites on the emulated link: a plain MPI program (lp-mpi-where) runs across site-a and site-b;
# every rank must report the host name and network namespace of the site its placement puts it on,
# a token must go around the ring (messages between the sites), the caller's variables (-x, LONGPIPE_*,
# --preload) must reach every rank, a job that overruns --timeout is ended with nothing left behind,
# and bad options are clear errors.
# Usage: mpi_sites_test.sh MPI-SITES LP-MPI-WHERE   (run by ctest with LP_WAN_INSTANCE set)
set -euo pipefail

MPI_SITES=$1
WHERE=$2
: "${LP_WAN_INSTANCE:?run by ctest through longpipe_wan_test}"

# shellcheck source=../lib/itest_common.sh
source "$(dirname "$0")/../lib/itest_common.sh"

netns_inode() { stat -L -c %i "/var/run/netns/lp-$LP_WAN_INSTANCE-site-$1"; }
NETNS_A=$(netns_inode a)
NETNS_B=$(netns_inode b)

# expect_placement OUTPUT SITES: SITES is the site (a or b) of rank 0, 1, ... in order.
expect_placement() {
  local out=$1 sites=$2 size=${#2} rank site netns
  local count
  count=$(grep -c '^rank ' <<<"$out" || true)
  ((count == size)) || fail "expected $size rank lines, got $count: $out"
  for ((rank = 0; rank < size; rank++)); do
    site=${sites:rank:1}
    netns=NETNS_${site^^}
    grep -qE "^rank $rank size $size host site-$site netns ${!netns} ring $(((rank == 0) ? size : rank))( |$)" <<<"$out" ||
      fail "rank $rank is not on site-$site (netns ${!netns}) with the ring token: $out"
  done
}

out=$("$MPI_SITES" "$WHERE" 2>&1) || fail "one rank per site failed: $out"
expect_placement "$out" ab
out=$("$MPI_SITES" --ranks-per-site 2 "$WHERE" 2>&1) || fail "block placement failed: $out"
expect_placement "$out" aabb
out=$("$MPI_SITES" -n 3 --placement round-robin "$WHERE" 2>&1) || fail "round-robin placement failed: $out"
expect_placement "$out" ababab

# Environment: -x NAME=VALUE, -x NAME, every LONGPIPE_* and the preload reach every rank.
preload=$(ldd "$WHERE" | awk '$1 ~ /^libm\.so/ {print $3}')
[[ -n $preload ]] || preload=$(ldd "$WHERE" | awk '$1 ~ /^libc\.so/ {print $3}')
out=$(LONGPIPE_TEST_SETTING='two words' LP_SITES_FROM_CALLER=kept \
  "$MPI_SITES" -n 2 --preload "$preload" -x LP_SITES_GIVEN=value -x LP_SITES_FROM_CALLER "$WHERE" \
    LP_SITES_GIVEN LP_SITES_FROM_CALLER LONGPIPE_TEST_SETTING LD_PRELOAD 2>&1) || fail "environment run failed: $out"
expect_placement "$out" aabb
lines=$(grep -cxE "rank [0-3] .* LP_SITES_GIVEN=value LP_SITES_FROM_CALLER=kept LONGPIPE_TEST_SETTING=two words LD_PRELOAD=$(readlink -f "$preload")" <<<"$out" || true)
[[ $lines == 4 ]] || fail "variables missing in some ranks (4 lines expected, $lines): $out"
# The caller's LD_PRELOAD applies to the ranks, as --preload does.
out=$(LD_PRELOAD=$preload "$MPI_SITES" "$WHERE" LD_PRELOAD 2>&1) || fail "run with the caller's LD_PRELOAD failed: $out"
lines=$(grep -cE "^rank [01] .* LD_PRELOAD=$(readlink -f "$preload")$" <<<"$out" || true)
[[ $lines == 2 ]] || fail "the caller's LD_PRELOAD did not reach both ranks: $out"

# --timeout ends a job that hangs (here: never calls MPI at all), and nothing it started is left.
# The outer timeout is the hang guard: had --timeout not ended the job, it would kill mpi-sites
# (status 137), long before the job's sleep ends.
status=0
out=$(timeout -s KILL 60 "$MPI_SITES" -n 2 --timeout 3 sleep 120 2>&1) || status=$?
((status != 137)) || fail "--timeout 3 did not end the job: the hang guard killed mpi-sites after 60 s"
((status == 124)) || fail "a job past --timeout should exit 124, got $status: $out"
grep -q 'did not end within --timeout 3 s' <<<"$out" || fail "no timeout message: $out"
leftovers=$(grep -lsF "LP_MPI_SITES_RUN=/tmp/lp-mpi-sites-$LP_WAN_INSTANCE." /proc/[0-9]*/environ || true)
for environ in $leftovers; do
  pid=${environ#/proc/}; pid=${pid%/environ}
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || echo gone)
  [[ $state == Z || $state == gone ]] || fail "process $pid of an ended job is still alive: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
done
compgen -G "/tmp/lp-mpi-sites-$LP_WAN_INSTANCE.*" >/dev/null && fail "run directories left behind"

# A failing rank's exit status comes back.
if out=$("$MPI_SITES" false 2>&1); then fail "a failing program reported success: $out"; fi

# Bad options say what is wrong.
for bad in "--ranks-per-site 0|--ranks-per-site: '0' is not a number" \
           "--placement diagonal|--placement: 'diagonal' is not block or round-robin" \
           "--preload /no/such.so|preload library /no/such.so does not exist" \
           "-x 1BAD|-x: '1BAD' is not NAME or NAME=VALUE" \
           "--timeout soon|--timeout: 'soon' is not a whole number"; do
  args=${bad%%|*}
  message=${bad#*|}
  # shellcheck disable=SC2086  # the options are words without spaces
  if out=$("$MPI_SITES" $args "$WHERE" 2>&1); then fail "mpi-sites $args succeeded"; fi
  grep -qF -- "$message" <<<"$out" || fail "mpi-sites $args: unclear error: $out"
done
out=$(LP_WAN_INSTANCE=not-up-anywhere "$MPI_SITES" "$WHERE" 2>&1) && fail "a link that is not up was accepted"
grep -q 'is not up' <<<"$out" || fail "unclear error for a link that is not up: $out"

# --dry-run shows the recipe without running anything.
out=$("$MPI_SITES" --dry-run --mca btl tcp,vader,self "$WHERE" 2>&1)
for word in "--bind-to none" "--mca btl tcp,vader,self" "--mca btl_tcp_if_include 10.77.0.0/24" \
            "--mca oob_tcp_if_include 10.77.0.0/24" "mpi-rsh" "--allow-run-as-root" "--oversubscribe"; do
  grep -qF -- "$word" <<<"$out" || fail "--dry-run lacks '$word': $out"
done
grep -qF -- "--mca btl tcp,self" <<<"$out" && fail "--mca btl did not replace the default: $out"
echo "PASS: mpi-sites"
