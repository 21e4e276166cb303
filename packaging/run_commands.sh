# run_commands.sh: `run` and `mpirun`, your own PVM or MPI program under LongPipe. One text for both
# commands that offer them: the checkout's ./longpipe sources it, and the installed longpipe
# (packaging/longpipe.in) has it copied in at configure time, so the two cannot drift.
#
# The including script sets, before calling lp_cmd_run or lp_cmd_mpirun:
#   LP_COMMAND       how the user calls it ("./longpipe" or "longpipe"), for the help texts
#   LIBRARY          liblongpipe.so's path
#   DIAL_LIBRARY     liblongpipe-dial.so's path (jobs on private hosts, libshim/dial)
#   LP_OWN_SETTINGS  LONGPIPE_* names that configure the command itself, not the library
# and defines lp_need_library (fails, or builds the library, when LIBRARY is missing) and die.

# The names of the LONGPIPE_* variables set now that configure the library.
library_settings() {
  local name
  for name in $(compgen -e); do
    [[ $name == LONGPIPE_* && " ${LP_OWN_SETTINGS:-} " != *" $name "* ]] && echo "$name"
  done
  return 0
}

# preload_list [EXISTING]: LongPipe's library first, then whatever EXISTING preloads (once).
preload_list() {
  local existing=${1:-}
  case " ${existing//:/ } " in
    *" $LIBRARY "*) echo "$existing" ;;
    *) echo "$LIBRARY${existing:+:$existing}" ;;
  esac
}

lp_cmd_run() {
  case ${1:-} in
    -h|--help|"")
      cat <<USAGE
Usage: $LP_COMMAND run PROGRAM [ARGS...]

Runs your own PVM program under LongPipe. PROGRAM starts with
  LD_PRELOAD=$LIBRARY
(in front of any LD_PRELOAD you have), and PVM_EXPORT gains LD_PRELOAD and every LONGPIPE_*
variable you set, so that the tasks it spawns with pvm_spawn, on any host of the virtual machine,
load LongPipe with the same settings. Nothing in the program changes: no header, no relinking.
Run it where you would run the program itself (a pvmd running). Settings are LONGPIPE_* variables
($LP_COMMAND config shows them). For an MPI program use $LP_COMMAND mpirun.

Example:  LONGPIPE_STATS=/tmp/lp-stats $LP_COMMAND run ./my-pvm-master --its-options
USAGE
      [[ -n ${1:-} ]]; return ;;
  esac
  lp_need_library
  local names=(LD_PRELOAD) name export_list=${PVM_EXPORT:-}
  mapfile -t -O 1 names < <(library_settings)
  for name in "${names[@]}"; do
    case ":$export_list:" in
      *":$name:"*) ;;
      *) export_list=${export_list:+$export_list:}$name ;;
    esac
  done
  LD_PRELOAD=$(preload_list "${LD_PRELOAD:-}") PVM_EXPORT=$export_list exec "$@"
}

lp_cmd_mpirun() {
  case ${1:-} in
    -h|--help|"")
      cat <<USAGE
Usage: $LP_COMMAND mpirun MPIRUN-ARGS...

Runs your own MPI program under LongPipe: the same as \`mpirun MPIRUN-ARGS...\`, plus
  -x LD_PRELOAD=$LIBRARY
(in front of a preload you pass with -x LD_PRELOAD=...) and -x NAME for every LONGPIPE_* variable
you set, so that every rank, on every host, loads LongPipe with your settings. mpirun itself runs
without the preload. Nothing in the program changes: no header, no relinking. Every host needs
LongPipe at the same place. As root, Open MPI needs --allow-run-as-root, as with mpirun.

Example:  LONGPIPE_STATS=/tmp/lp-stats $LP_COMMAND mpirun -np 8 --hostfile hosts ./my-mpi-program

Private hosts at several sites (libshim/dial/README.md): with LONGPIPE_SITE_ROUTES set (e.g.
S1=10.1.0.0/24@10.1.0.1,S2=10.2.0.0/24@10.2.0.1) and LONGPIPE_GATEWAY naming each host's site
gateway, mpirun, the orteds (through orte_launch_agent) and the ranks also load
$DIAL_LIBRARY, whose connect() reaches another site's hosts
through the gateways, and mpirun gets --mca reachable weighted, plm_rsh_no_tree_spawn 1 and
orte_launch_agent (unless you give them).
USAGE
      [[ -n ${1:-} ]]; return ;;
  esac
  lp_need_library
  command -v mpirun >/dev/null || die "mpirun not found (Debian package openmpi-bin)"
  # A preload passed with -x stays, behind LongPipe's; every other argument goes to mpirun as is.
  local args=() preload
  preload=$(preload_list "")
  while (($#)); do
    if [[ $1 == -x && $# -ge 2 && $2 == LD_PRELOAD=* ]]; then
      preload=$(preload_list "${2#LD_PRELOAD=}")
      shift 2
    elif [[ $1 == -x && $# -ge 2 && $2 == LD_PRELOAD ]]; then
      preload=$(preload_list "${LD_PRELOAD:-}")
      shift 2
    else
      args+=("$1")
      shift
    fi
  done
  local exports=(-x "LD_PRELOAD=$preload") name
  for name in $(library_settings); do
    exports+=(-x "$name")
  done
  # Only the ranks load the library (through -x), not mpirun.
  unset LD_PRELOAD
  if [[ -n ${LONGPIPE_SITE_ROUTES:-} ]]; then
    private_sites_mpirun "$preload" "${exports[@]:2}" -- "${args[@]}"
  fi
  exec mpirun "${exports[@]}" "${args[@]}"
}

# private_sites_mpirun RANK_PRELOAD EXPORT_ARGS... -- MPIRUN_ARGS...: mpirun for ranks on private
# hosts at several sites (LONGPIPE_SITE_ROUTES): mpirun, the orteds and the ranks load the dial
# library; the MCA parameters it needs are added unless the caller gives them.
private_sites_mpirun() {
  [[ -f $DIAL_LIBRARY ]] || die "LONGPIPE_SITE_ROUTES is set but the dial library is not at $DIAL_LIBRARY"
  local rank_preload=$1:$DIAL_LIBRARY
  shift
  local exports=()
  while [[ $1 != -- ]]; do exports+=("$1"); shift; done
  shift
  local gateway=${LONGPIPE_GATEWAY:-/etc/longpipe-site/gateway.sock} mca=() key value given
  local -A defaults=(
    [reachable]=weighted
    [plm_rsh_no_tree_spawn]=1
    [orte_launch_agent]="env LD_PRELOAD=$DIAL_LIBRARY LONGPIPE_SITE_ROUTES=$LONGPIPE_SITE_ROUTES LONGPIPE_GATEWAY=$gateway orted"
  )
  for key in reachable plm_rsh_no_tree_spawn orte_launch_agent; do
    given=0
    for value in "$@"; do [[ $value == "$key" ]] && given=1; done
    ((given)) || mca+=(--mca "$key" "${defaults[$key]}")
  done
  [[ -n ${LONGPIPE_GATEWAY:-} ]] || exports+=(-x LONGPIPE_GATEWAY)   # else it is among the caller's
  LONGPIPE_GATEWAY=$gateway LD_PRELOAD=$DIAL_LIBRARY exec mpirun -x "LD_PRELOAD=$rank_preload" \
    "${exports[@]}" "${mca[@]}" "$@"
}
