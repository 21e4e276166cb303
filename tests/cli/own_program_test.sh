#!/usr/bin/env bash
# `./longpipe run` and `./longpipe mpirun` on the emulated link: your own PVM or MPI program under
# LongPipe without LD_PRELOAD or -x. The PVM probe and the task it spawns on site-b, and the MPI
# ranks on both sites, must all see LD_PRELOAD naming LongPipe's library (in front of a preload of
# their own) and the LONGPIPE_* settings of the caller; PVM_EXPORT must name them.
# Usage: own_program_test.sh ROOT LIBLONGPIPE PVM-ENVIRONMENT-PROBE LP-MPI-WHERE  (ctest sets LP_WAN_INSTANCE)
set -euo pipefail

ROOT=$1
LIB=$2
PROBE=$3
WHERE=$4
: "${LP_WAN_INSTANCE:?run by ctest through longpipe_wan_test}"
: "${LONGPIPE_WAN:?run by ctest through longpipe_wan_test}"
LONGPIPE=$ROOT/longpipe
PVM_SITES=$ROOT/apps/pvm-sites/pvm-sites

# shellcheck source=../lib/itest_common.sh
source "$(dirname "$0")/../lib/itest_common.sh"
trap '"$PVM_SITES" down >/dev/null 2>&1 || true' EXIT

# `longpipe` finds the library in LONGPIPE_BUILD_DIR (ctest's build tree), where LIB is.
[[ $(readlink -f "$LONGPIPE_BUILD_DIR/libshim/liblongpipe.so") == "$(readlink -f "$LIB")" ]] ||
  fail "LONGPIPE_BUILD_DIR ($LONGPIPE_BUILD_DIR) does not hold $LIB"
# A preload of the program's own, which must stay (behind LongPipe's): the C library, harmless twice.
OWN=$(ldd "$PROBE" | awk '$1 ~ /^libc\.so/ {print $3}')
[[ -f $OWN ]] || fail "no libc found in ldd $PROBE"
EXPECTED_PRELOAD="$LIB:$OWN"

for command in run mpirun; do
  "$LONGPIPE" "$command" --help | grep -q "^Usage: ./longpipe $command " || fail "longpipe $command --help"
  if "$LONGPIPE" "$command" >/dev/null 2>&1; then fail "longpipe $command without a program succeeded"; fi
done
"$LONGPIPE" --help | grep -q 'run PROGRAM ARGS' || fail "longpipe --help does not list run"

# --- longpipe run: a PVM program and the task it spawns on site-b ---
"$PVM_SITES" up
# PVM_EXPORT is unset so that only `longpipe run` can have set it.
out=$(LONGPIPE_BANDWIDTH=155 LONGPIPE_TEST_SETTING='two words' \
  "$PVM_SITES" exec a env -u PVM_EXPORT LD_PRELOAD="$OWN" "$LONGPIPE" run "$PROBE" site-b \
    LD_PRELOAD LONGPIPE_BANDWIDTH LONGPIPE_TEST_SETTING PVM_EXPORT 2>&1) || fail "longpipe run failed: $out"
master=$(grep '^master ' <<<"$out") || fail "no master line: $out"
child=$(grep '^child ' <<<"$out") || fail "no line from the spawned task: $out"
settings="LD_PRELOAD=$EXPECTED_PRELOAD LONGPIPE_BANDWIDTH=155 LONGPIPE_TEST_SETTING=two words"
[[ $master == "master host site-a $settings PVM_EXPORT="* ]] || fail "the PVM program's environment: $master"
[[ $child == "child host site-b $settings PVM_EXPORT="* ]] || fail "the spawned task's environment: $child"
export_list=${master##*PVM_EXPORT=}
for name in LD_PRELOAD LONGPIPE_BANDWIDTH LONGPIPE_TEST_SETTING; do
  [[ ":$export_list:" == *":$name:"* ]] || fail "PVM_EXPORT lacks $name: $export_list"
done
for name in LONGPIPE_WAN LONGPIPE_BUILD_DIR; do
  [[ ":$export_list:" != *":$name:"* ]] || fail "PVM_EXPORT names the tools' own $name: $export_list"
done
"$PVM_SITES" down

# --- longpipe mpirun: one rank on each site (mpirun in site-a, mpi-rsh reaching site-b) ---
out=$(LONGPIPE_BANDWIDTH=155 "$LONGPIPE_WAN" exec a "$LONGPIPE" mpirun --allow-run-as-root --oversubscribe \
  --bind-to none --host site-a,site-b -np 2 --mca plm_rsh_agent "$ROOT/apps/mpi-sites/mpi-rsh" \
  --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
  -x LD_PRELOAD="$OWN" "$WHERE" LD_PRELOAD LONGPIPE_BANDWIDTH 2>&1) || fail "longpipe mpirun failed: $out"
grep -qE "^rank 0 size 2 host site-a .* LD_PRELOAD=$EXPECTED_PRELOAD LONGPIPE_BANDWIDTH=155$" <<<"$out" ||
  fail "rank 0 (site-a) lacks the preload or the setting: $out"
grep -qE "^rank 1 size 2 host site-b .* LD_PRELOAD=$EXPECTED_PRELOAD LONGPIPE_BANDWIDTH=155$" <<<"$out" ||
  fail "rank 1 (site-b) lacks the preload or the setting: $out"
# Without -x LD_PRELOAD of its own, a rank preloads LongPipe alone.
out=$("$LONGPIPE_WAN" exec a "$LONGPIPE" mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 \
  --mca btl self "$WHERE" LD_PRELOAD 2>&1) || fail "longpipe mpirun -np 1 failed: $out"
grep -qE "^rank 0 size 1 host site-a .* LD_PRELOAD=$LIB$" <<<"$out" || fail "LD_PRELOAD is not LongPipe's alone: $out"
echo "PASS: longpipe run and longpipe mpirun"
