# shellcheck shell=bash
# netem/wan_emulator.sh: the user-space link emulator (lp-linkemu) of netem/wan's tun backend, sourced
# by netem/wan: starting it, and finding the processes of an instance, also after a crash that lost
# the PID file. Uses netem/common.sh (is_running) and netem/wan's names (NS_A, NS_B, STATE_DIR).

# True when PID is a live (not zombie) lp-linkemu.
is_live_emulator() {
  local comm
  read -r comm 2>/dev/null <"/proc/$1/comm" || return 1
  [[ $comm == lp-linkemu ]] && is_running "$1"
}

# Live lp-linkemu processes whose command line names namespace $1 (one grep over /proc, not a
# process per PID).
emulators_naming() {
  local file pid
  for file in $(grep -lxs lp-linkemu /proc/[0-9]*/comm); do
    pid=${file#/proc/} pid=${pid%/comm}
    is_live_emulator "$pid" || continue
    tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "$1" && echo "$pid"
  done
  return 0
}

# Emulators serving this instance: the one in the PID file, plus any whose command line names our
# namespace (found if the state directory was lost in a crash).
instance_emulator_pids() {
  local pid_file=$STATE_DIR/emulator.pid pid
  {
    if [[ -r $pid_file ]]; then
      pid=$(cat "$pid_file")
      is_live_emulator "$pid" && echo "$pid"
    fi
    emulators_naming "$NS_A"
  } | sort -u
}

# launch_emulator WHAT NETNS-A NETNS-B TUN-NAME FILE LINK-ARGS...: starts lp-linkemu in its own session
# between the two namespaces, with STATE_DIR/FILE.log, .pid and the stats file STATE_DIR/stats<rest of
# FILE after "emulator">, and waits until its TUN devices exist (its stats file appears). The two-site
# link (FILE emulator) and each access link of the multi-site mode (emulator-s<S>, netem/sites.sh)
# start theirs this way.
launch_emulator() {
  local what=$1 netns_a=$2 netns_b=$3 tun=$4 files=$5
  shift 5
  local log=$STATE_DIR/$files.log stats=$STATE_DIR/stats${files#emulator}
  setsid "$EMULATOR" --netns-a "$netns_a" --netns-b "$netns_b" --tun-name "$tun" --stats-file "$stats" \
    --realtime-priority "$EMULATOR_REALTIME_PRIORITY" "$@" \
    </dev/null >"$log" 2>&1 &
  local pid=$!
  echo "$pid" >"$STATE_DIR/$files.pid"
  local tenth
  for ((tenth = 0; tenth < EMULATOR_START_SECONDS * 10; tenth++)); do
    [[ -e "$stats" ]] && return 0
    is_running "$pid" || break
    sleep 0.1
  done
  die "$what did not start: $(tail -n 3 "$log" 2>/dev/null)"
}

start_emulator() { launch_emulator "the link emulator" "$NS_A" "$NS_B" "$LINK_DEVICE" emulator "$@"; }
