# job_processes.sh: sourced by mpi-sites and mpi-private. Every process of a job carries
# LP_MPI_SITES_RUN=<run dir> in its environment (mpirun's environment reaches the orteds and the
# ranks); these functions find and end them by PID. TERM_GRACE_SECONDS: how long leftovers get
# after SIGTERM before SIGKILL.

# PIDs of live (not zombie) processes started for run directory $1.
run_pids() {
  local environ pid
  # Zombies have no readable environment: grep skips them (-s).
  for environ in $(grep -lsxzF "LP_MPI_SITES_RUN=$1" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${environ#/proc/}; pid=${pid%/environ}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    is_alive "$pid" && echo "$pid"
  done
  return 0
}

# A zombie counts as gone: PID 1 does not reap orphans on these machines.
is_alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}

# end_run DIR: ends every process still carrying the run's tag (SIGTERM, then SIGKILL), removes DIR.
end_run() {
  local dir=$1 pids deadline
  pids=$(run_pids "$dir")
  if [[ -n $pids ]]; then
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    deadline=$((SECONDS + TERM_GRACE_SECONDS))
    while [[ -n $(run_pids "$dir") ]] && ((SECONDS < deadline)); do sleep 0.2; done
    pids=$(run_pids "$dir")
    # shellcheck disable=SC2086
    [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
  fi
  rm -rf "$dir"
}
