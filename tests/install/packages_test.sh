#!/usr/bin/env bash
# The Debian packages, installed on a machine without the checkout, run an unmodified PVM program
# and an unmodified MPI program across the emulated link for a user who is not root, and leave
# nothing behind when purged.
#
# 1. cpack makes liblongpipe, longpipe and longpiped from the build tree; lintian reports no error.
# 2. A private mount namespace hides the checkout and the build tree (an empty tmpfs over each) and
#    puts a throw-away overlay over /usr, /etc and /var: dpkg -i there changes nothing outside the
#    namespace, even if the test dies (debootstrap would need a mirror; there is no network).
# 3. As the user nobody, in site-a's network namespace: `longpipe run /usr/bin/master1` (Debian's
#    pvm-examples) with a pvmd on each site, and `longpipe mpirun ... /usr/bin/NPopenmpi`
#    (netpipe-openmpi), one rank per site. Entering site-b's namespace needs CAP_SYS_ADMIN, which
#    nobody lacks: the remote-shell agent that PVM and Open MPI call to start their daemons on
#    site-b (as ssh would on a real host) is a copy of nsenter with that file capability; what it
#    starts runs as nobody with no capability.
# 4. dpkg --purge removes every file the packages installed.
# Usage: packages_test.sh SOURCE_DIR BUILD_DIR   (ctest sets LP_WAN_INSTANCE and LONGPIPE_WAN)
set -euo pipefail
SOURCE=$(readlink -f "$1") BUILD=$(readlink -f "$2")
: "${LONGPIPE_WAN:?run by ctest through longpipe_wan_test}"
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"
[[ $(id -u) == 0 ]] || fail "needs root (namespaces, dpkg)"
RUN_AS=nobody

WORK=$(mktemp -d /tmp/lp-install-test.XXXXXX)
chmod 755 "$WORK"
cleanup_first() {
  # The user's daemons (pvmds, orteds) and the namespace anchors: every process of $RUN_AS whose
  # environment names this test's folder, by PID.
  local environ pid
  for environ in $(grep -lsF "$WORK" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${environ#/proc/}; pid=${pid%/environ}
    [[ $pid != "$$" ]] && kill -9 "$pid" 2>/dev/null || true
  done
}
trap 'status=$?; itest_cleanup; exit $status' EXIT

# --- 1. packages and lintian ---
started=$SECONDS
(cd "$BUILD" && cpack -G DEB -B "$WORK/debs" >"$WORK/cpack.log" 2>&1) || { cat "$WORK/cpack.log" >&2; fail "cpack failed"; }
mapfile -t DEBS < <(ls "$WORK"/debs/*.deb)
((${#DEBS[@]} == 3)) || fail "cpack made ${#DEBS[@]} packages, not 3: ${DEBS[*]}"
say "packages in $((SECONDS - started)) s: ${DEBS[*]##*/}"
started=$SECONDS
lintian --tag-display-limit 0 "${DEBS[@]}" >"$WORK/lintian.txt" 2>&1 || true
grep -v '^running with root privileges' "$WORK/lintian.txt" >&2 || true
! grep -q '^E: ' "$WORK/lintian.txt" || fail "lintian reports errors"
say "lintian in $((SECONDS - started)) s: $(grep -c '^W: ' "$WORK/lintian.txt" || true) warning(s), no error"

# --- the sites, entered by nobody ---
mkdir -p "$WORK/home" "$WORK/pvm-a" "$WORK/pvm-b" "$WORK/bin"
chown "$RUN_AS" "$WORK/home" "$WORK/pvm-a" "$WORK/pvm-b"
# One process per site that holds its network and UTS namespaces, owned by nobody so that nobody
# may name them (/proc/PID/ns).
for site in a b; do
  "$LONGPIPE_WAN" exec "$site" setpriv --reuid="$RUN_AS" --regid=nogroup --clear-groups \
    env LP_INSTALL_TEST="$WORK" sleep 900 &
  PIDS+=($!)
done
ANCHOR_A=${PIDS[0]} ANCHOR_B=${PIDS[1]}
for _ in $(seq 50); do
  [[ $(cat "/proc/$ANCHOR_B/comm" 2>/dev/null) == sleep && $(cat "/proc/$ANCHOR_A/comm" 2>/dev/null) == sleep ]] && break
  sleep 0.1
done
NS_A=$(ip netns identify "$ANCHOR_A")
[[ -n $NS_A && -f /etc/netns/$NS_A/hosts ]] || fail "site-a's namespace ($NS_A) has no hosts file"
cp /usr/bin/nsenter "$WORK/bin/nsenter"
setcap cap_sys_admin+ep "$WORK/bin/nsenter" || fail "setcap on a copy of nsenter failed"
cat >"$WORK/bin/site-rsh" <<AGENT
#!/bin/sh
# The remote shell of PVM (PVM_RSH) and Open MPI (plm_rsh_agent): HOST [-l USER] [-n] COMMAND.
host=\$1
shift
while [ "\$1" = -l ] || [ "\$1" = -n ]; do
  [ "\$1" = -l ] && shift
  shift
done
case \$host in
  site-a) anchor=$ANCHOR_A site=a ;;
  site-b) anchor=$ANCHOR_B site=b ;;
  *) echo "site-rsh: unknown host \$host" >&2; exit 1 ;;
esac
exec "$WORK/bin/nsenter" -t "\$anchor" --net --uts -- env PVM_TMP="$WORK/pvm-\$site" sh -c "\$*"
AGENT
chmod 755 "$WORK/bin/site-rsh"
printf '* ep=/usr/bin\nsite-a\n&site-b\n' >"$WORK/hostfile"
cp "$HERE/in_clean_root.sh" "$WORK/bin/in_clean_root.sh"

# --- 2-4. in a private mount namespace without the checkout ---
hide=("$SOURCE")
[[ $BUILD == "$SOURCE"/* ]] || hide+=("$BUILD")
started=$SECONDS
unshare --mount --propagation private -- "$WORK/bin/in_clean_root.sh" "$WORK" "$RUN_AS" "$ANCHOR_A" "$NS_A" \
  "${hide[@]}" || fail "the installed packages failed (above)"
say "install, runs and purge in $((SECONDS - started)) s"
pass "the packages install without the checkout, run PVM and MPI programs as $RUN_AS across the link, and purge cleanly"
