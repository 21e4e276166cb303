#!/usr/bin/env bash
# packages_test.sh's part inside a private mount namespace (run as root by unshare --mount):
# hides the checkout, overlays /usr, /etc and /var, installs the packages, runs the programs as
# RUN_AS across the link, purges the packages and checks that nothing of them is left.
# Usage: in_clean_root.sh WORK RUN_AS ANCHOR_A NS_A HIDDEN-DIR...
set -euo pipefail
WORK=$1 RUN_AS=$2 ANCHOR_A=$3 NS_A=$4
shift 4
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "== $*" >&2; }
trap 'echo "FAIL: in_clean_root.sh, line $LINENO: $BASH_COMMAND" >&2' ERR

for dir in "$@"; do
  mount -t tmpfs -o size=1m,mode=755 lp-hidden "$dir"
done
for dir in /usr /etc /var; do
  mkdir -p "$WORK/overlay$dir/upper" "$WORK/overlay$dir/work"
  mount -t overlay overlay -o "lowerdir=$dir,upperdir=$WORK/overlay$dir/upper,workdir=$WORK/overlay$dir/work" "$dir"
done
# Host names as inside the sites (site-a, site-b).
mount --bind "/etc/netns/$NS_A/hosts" /etc/hosts

for dir in "$@"; do
  [[ -z $(ls -A "$dir") ]] || fail "$dir is not hidden"
done
dpkg -i "$WORK"/debs/*.deb >"$WORK/dpkg-install.log" 2>&1 || { cat "$WORK/dpkg-install.log" >&2; fail "dpkg -i failed"; }
for deb in "$WORK"/debs/*.deb; do
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }'
done >"$WORK/files"
[[ $(command -v longpipe) == /usr/bin/longpipe ]] || fail "longpipe is not /usr/bin/longpipe on PATH"
[[ $(man -w longpipe) == /usr/share/man/man1/longpipe.1.gz ]] || fail "man longpipe: $(man -w longpipe 2>&1)"
[[ $(man -w 7 longpipe) == /usr/share/man/man7/longpipe.7.gz ]] || fail "man 7 longpipe: $(man -w 7 longpipe 2>&1)"
[[ $(man -w longpiped) == /usr/share/man/man8/longpiped.8.gz ]] || fail "man longpiped: $(man -w longpiped 2>&1)"
/usr/sbin/longpiped --help >/dev/null 2>&1 || fail "longpiped --help"

# as_user_on_site_a CMD...: CMD as RUN_AS in site-a's network and UTS namespaces, from its home,
# with a login's plain environment (no LD_PRELOAD, no LONGPIPE_*).
as_user_on_site_a() {
  nsenter -t "$ANCHOR_A" --net --uts -- setpriv --reuid="$RUN_AS" --regid=nogroup --clear-groups \
    env -i HOME="$WORK/home" USER="$RUN_AS" LOGNAME="$RUN_AS" PATH=/usr/bin:/bin LP_INSTALL_TEST="$WORK" \
    PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_TMP="$WORK/pvm-a" PVM_RSH="$WORK/bin/site-rsh" \
    sh -c 'cd "$HOME" && exec "$@"' sh "$@"
}
as_user_on_site_a longpipe --version | grep -qx "longpipe [0-9.]*" || fail "longpipe --version as $RUN_AS"
as_user_on_site_a longpipe config >/dev/null || fail "longpipe config as $RUN_AS"

# --- PVM: a pvmd on each site, master1 and its slave1 tasks spread over both ---
as_user_on_site_a pvmd "$WORK/hostfile" </dev/null >"$WORK/pvmd.log" 2>&1 &
for _ in $(seq 100); do
  [[ -s $WORK/pvm-a/pvmd.$(id -u "$RUN_AS") ]] && break
  sleep 0.1
done
added=$(printf 'add site-b\nconf\nquit\n' | as_user_on_site_a timeout 60 pvm 2>&1) || true
grep -q '1 successful' <<<"$added" || { cat "$WORK/pvmd.log" >&2; fail "the pvmd on site-b did not start: $added"; }
status=0
as_user_on_site_a timeout 120 env LONGPIPE_STATS="$WORK/home/pvm.stats" longpipe run /usr/bin/master1 \
  >"$WORK/master1.out" 2>"$WORK/master1.err" || status=$?
printf 'halt\n' | as_user_on_site_a timeout 20 pvm >/dev/null 2>&1 || true
((status == 0)) || { cat "$WORK/master1.out" "$WORK/master1.err" >&2; fail "longpipe run master1 exited with $status"; }
cat "$WORK/master1.out" >&2
# Each of the 6 slave1 tasks answers; master1 prints what it got beside what it expects.
[[ $(grep -c '^I got' "$WORK/master1.out") == 6 ]] || fail "master1 did not hear from its 6 tasks"
awk '/^I got/ { got = $3; expected = $NF; sub(/\)$/, "", expected); if (got != expected) bad = 1 } END { exit bad }' \
  "$WORK/master1.out" || fail "master1 got results other than it expected"
sent=$(grep -o '"messages_sent":[0-9]*' "$WORK/home/pvm.stats" 2>/dev/null | awk -F: '{s += $2} END {print s + 0}')
received=$(grep -o '"messages_received":[0-9]*' "$WORK/home/pvm.stats" 2>/dev/null | awk -F: '{s += $2} END {print s + 0}')
((sent + received > 0)) || fail "master1's LongPipe sessions carried no message (statistics: $WORK/home/pvm.stats)"
say "PVM: master1 under the installed longpipe run, LongPipe carried $sent message(s) out, $received in"

# --- MPI: NetPIPE, one rank per site, without --allow-run-as-root ---
status=0
as_user_on_site_a timeout 120 env LONGPIPE_STATS="$WORK/home/mpi.stats.%r" LONGPIPE_RTT=20 \
  longpipe mpirun --host site-a,site-b -np 2 --mca plm_rsh_agent "$WORK/bin/site-rsh" \
  --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
  /usr/bin/NPopenmpi -i -n 5 -u 65536 -p 0 -z >"$WORK/netpipe.out" 2>"$WORK/netpipe.err" || status=$?
((status == 0)) || { cat "$WORK/netpipe.out" "$WORK/netpipe.err" >&2; fail "longpipe mpirun NPopenmpi exited with $status"; }
passed=$(grep -c 'Integrity check passed$' "$WORK/netpipe.err" || true)
((passed == 28)) || { cat "$WORK/netpipe.err" >&2; fail "NetPIPE: $passed sizes passed the integrity check, not 28"; }
sent=$(grep -o '"messages_sent":[0-9]*' "$WORK/home/mpi.stats.0" 2>/dev/null | awk -F: '{s += $2} END {print s + 0}')
((sent >= 140)) || fail "rank 0's LongPipe sessions sent $sent message(s), not the ping-pong's 140"
say "MPI: NPopenmpi under the installed longpipe mpirun, 28 sizes intact, rank 0 sent $sent message(s) over LongPipe"

# --- purge: nothing of the packages is left ---
dpkg --purge longpipe longpiped liblongpipe >"$WORK/dpkg-purge.log" 2>&1 || { cat "$WORK/dpkg-purge.log" >&2; fail "dpkg --purge failed"; }
left=$(while read -r file; do if [[ -e $file || -L $file ]]; then echo "$file"; fi; done <"$WORK/files")
[[ -z $left ]] || fail "left behind after dpkg --purge: $left"
for package in liblongpipe longpipe longpiped; do
  ! dpkg-query -W "$package" >/dev/null 2>&1 || fail "dpkg still knows $package"
done
for folder in /usr/lib/x86_64-linux-gnu/longpipe /usr/libexec/longpipe /usr/share/doc/longpipe /usr/share/doc/liblongpipe /usr/share/doc/longpiped; do
  [[ ! -e $folder ]] || fail "$folder is left after dpkg --purge"
done
say "purged: none of the $(wc -l <"$WORK/files") installed files is left"
