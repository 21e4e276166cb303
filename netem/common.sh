# shellcheck shell=bash
# netem/common.sh: what netem/wan and netem/gateways share (sourced, not run): their messages, the
# liveness check of a process and stopping processes with a grace period. Each script sets PROGRAM
# (the prefix of its messages) and STOP_GRACE_TENTHS (how long its processes get to end).

die() { echo "$PROGRAM: $*" >&2; exit 2; }
say() { echo "$PROGRAM: $*" >&2; }

# True when PID exists and is not a zombie (PID 1 on these machines does not reap orphans).
# Shell built-ins only: on a loaded machine every fork costs tens of milliseconds, and these run in
# loops over processes.
is_running() {
  local stat
  read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
  stat=${stat##*) }  # the state follows the command name, which may contain spaces
  [[ ${stat%% *} != Z ]]
}

# stop_pids PID...: SIGTERM, wait STOP_GRACE_TENTHS tenths of a second, then SIGKILL what is left.
stop_pids() {
  (($#)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  local tenth pid alive
  for ((tenth = 0; tenth < STOP_GRACE_TENTHS; tenth++)); do
    alive=()
    for pid in "$@"; do
      is_running "$pid" && alive+=("$pid")
    done
    ((${#alive[@]})) || return 0
    sleep 0.1
  done
  say "processes ${alive[*]} ignored SIGTERM; killing them"
  kill -KILL "${alive[@]}" 2>/dev/null || true
}
