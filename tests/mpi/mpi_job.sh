# mpi_job.sh (sourced by run_front_end.sh and run_collectives.sh): how the MPI front end's tests
# start a job, with or without LD_PRELOAD=liblongpipe.so.
# Needs LIBRARY (liblongpipe.so), ROOT (the source tree), MODE (local|two-site), RUN_SECONDS, fail().

# A sanitizer build of the library needs its runtime loaded first (the MPI programs are not
# instrumented); leaks inside Open MPI are not LongPipe's to judge. Under TSan a reported race
# fails the run (exit status 66) and its report goes to the run's stderr.
SANITIZER_RUNTIME=$(ldd "$LIBRARY" | awk '/lib(asan|tsan)/ {print $3}')
PRELOAD=$LIBRARY
SANITIZER_ENV=()
if [[ -n $SANITIZER_RUNTIME ]]; then
  PRELOAD="$SANITIZER_RUNTIME $LIBRARY"
  export ASAN_OPTIONS=detect_leaks=0  # the test programs are instrumented too in that build
  export TSAN_OPTIONS=${TSAN_OPTIONS:-exitcode=66 report_signal_unsafe=0}
  SANITIZER_ENV=(-x ASAN_OPTIONS -x TSAN_OPTIONS)
fi
unset LD_PRELOAD

# mpi_job PRELOAD(yes|no) RANKS [NAME=VALUE]... -- PROGRAM ARGS...: the job's status; its output is
# the caller's to redirect. local: mpirun on this host; two-site: apps/mpi-sites, block placement,
# RANKS / 2 per site (it passes LONGPIPE_* and -x on, and the preload to the ranks only).
mpi_job() {
  local preload=$1 ranks=$2
  shift 2
  local env_args=()
  env_args+=("${SANITIZER_ENV[@]}")
  while [[ $1 != -- ]]; do
    env_args+=(-x "$1")
    shift
  done
  shift
  case $MODE in
    local)
      [[ $preload == yes ]] && env_args+=(-x "LD_PRELOAD=$PRELOAD")
      timeout --kill-after=10 "$RUN_SECONDS" mpirun --allow-run-as-root --oversubscribe -np "$ranks" \
        "${env_args[@]}" "$@" </dev/null
      ;;
    two-site)
      [[ $preload == yes ]] && env_args+=(--preload "${SANITIZER_RUNTIME:+$SANITIZER_RUNTIME:}$LIBRARY")
      "$ROOT/apps/mpi-sites/mpi-sites" -n $((ranks / 2)) --timeout "$RUN_SECONDS" "${env_args[@]}" -- "$@" </dev/null
      ;;
  esac
}
