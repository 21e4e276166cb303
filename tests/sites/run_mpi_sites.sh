#!/usr/bin/env bash
# run_mpi_sites.sh SCENARIO: Open MPI jobs whose ranks sit on the private compute hosts of the three
# sites (netem/wan up --sites ... --hosts 2, firewall on; netem/gateways up), launched and wired up
# through the gateways alone by apps/mpi-sites/mpi-private (liblongpipe-dial.so in mpirun, the
# orteds and the ranks). Each job's transcript must equal the same program's on one host, each
# gateway's counters must show the job's streams, and the core router's counters (nftables) must
# show that every packet between sites during the job was gateway to gateway on the open port.
#
#   open-mpi    mpi_exchange, 6 ranks (one per compute host of sites 1-3), Open MPI alone: its
#               out-of-band network, PMIx wire-up and TCP BTL cross the sites through the gateways
#   longpipe    mpi_exchange, 6 ranks on the same hosts, with liblongpipe.so: LongPipe's engine
#               carries the inter-site MPI traffic, its collectives are two-level
#   command     mpi_collectives (two-level collectives on split and reordered communicators), 6
#               ranks, started with `./longpipe mpirun` in s1-h1 with LONGPIPE_SITE_ROUTES set: the
#               command itself loads the dial library into mpirun, the orteds and the ranks
#   two-site-16 mpi_exchange, 16 ranks, 4 on each compute host of sites 1 and 2, with liblongpipe.so
#
# Environment: LP_DIAL (liblongpipe-dial.so), LONGPIPE_LIBRARY (liblongpipe.so), MPI_EXCHANGE,
# MPI_COLLECTIVES (the test programs), LP_GATEWAYS (netem/gateways), LP_WAN_INSTANCE,
# LONGPIPE_WAN, SITES_OPEN_PORT.
set -euo pipefail

SCENARIO=${1:?usage: run_mpi_sites.sh open-mpi|longpipe|command|two-site-16}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"

DIAL=${LP_DIAL:?LP_DIAL must name liblongpipe-dial.so}
LIBRARY=${LONGPIPE_LIBRARY:?LONGPIPE_LIBRARY must name liblongpipe.so}
EXCHANGE=${MPI_EXCHANGE:?MPI_EXCHANGE must name mpi_exchange}
COLLECTIVES=${MPI_COLLECTIVES:?MPI_COLLECTIVES must name mpi_collectives}
GATEWAYS=${LP_GATEWAYS:?LP_GATEWAYS must name netem/gateways}
INSTANCE=${LP_WAN_INSTANCE:?LP_WAN_INSTANCE must name the fixture instance}
OPEN_PORT=${SITES_OPEN_PORT:?SITES_OPEN_PORT must name the firewall open port}
MPI_PRIVATE=$ROOT/apps/mpi-sites/mpi-private
readonly JOB_SECONDS=45                       # one job's limit; more is a hang
readonly COUNT_TABLE=lp_mpi_sites_count       # the core router's counting table (inet family)
CORE_NS=lp-$INSTANCE-core

unset LD_PRELOAD LONGPIPE_GATEWAY
WORK=$(mktemp -d /tmp/lp-mpi-sites-test.XXXXXX)
# The job's key: every rank's engine needs the same one.
(umask 077 && openssl rand -hex 32 >"$WORK/job.key")
export LONGPIPE_KEY_FILE=$WORK/job.key
# shellcheck source=../../apps/mpi-sites/job_processes.sh
source "$ROOT/apps/mpi-sites/job_processes.sh"   # end_run: the command scenario's processes
# shellcheck disable=SC2034  # read by end_run
TERM_GRACE_SECONDS=3
RUN_TAG=""
remove_counters() { ip netns exec "$CORE_NS" nft delete table inet "$COUNT_TABLE" 2>/dev/null || true; }
finish() {
  local status=$?
  remove_counters
  # mpi-private ends its job's processes itself (also on timeout); a job still running here was
  # started by a failed step: end it through its own clean-up.
  [[ -n ${JOB_PID:-} ]] && kill -TERM "$JOB_PID" 2>/dev/null && wait "$JOB_PID" 2>/dev/null
  [[ -n $RUN_TAG ]] && end_run "$RUN_TAG"
  remove_work_unless_failed "$status"
  exit "$status"
}
trap finish EXIT

# Counters in the core router's forward hook: gateway to gateway on the open port, everything else.
install_counters() {
  remove_counters
  ip netns exec "$CORE_NS" nft -f - <<EOF
table inet $COUNT_TABLE {
  counter gateways { }
  counter other { }
  chain forward {
    type filter hook forward priority -10; policy accept;
    ip saddr 172.31.0.0/24 ip daddr 172.31.0.0/24 meta l4proto tcp th dport $OPEN_PORT counter name gateways accept
    ip saddr 172.31.0.0/24 ip daddr 172.31.0.0/24 meta l4proto tcp th sport $OPEN_PORT counter name gateways accept
    counter name other accept
  }
}
EOF
}

counter() {
  ip netns exec "$CORE_NS" nft list counter inet "$COUNT_TABLE" "$1" | awk '/packets/ {for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1)}'
}

# gateway_streams: each gateway's count of streams opened so far, as "S1=n S2=n S3=n".
gateway_streams() {
  "$GATEWAYS" status --json >"$WORK/gateways.json" || fail "netem/gateways status: the gateways are not up"
  /usr/bin/python3 -c '
import json, sys
statuses = json.load(open(sys.argv[1]))
print(" ".join("%s=%d" % (site, status.get("streams_opened", 0)) for site, status in sorted(statuses.items())))' "$WORK/gateways.json"
}

# reference NAME PROGRAM RANKS ARGS...: the program on one compute host (s1-h1), Open MPI alone.
reference() {
  local name=$1 program=$2 ranks=$3
  shift 3
  "$WAN" exec s1-h1 timeout "$JOB_SECONDS" mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" \
    --mca btl tcp,vader,self "$program" "$@" >"$WORK/$name.reference" 2>"$WORK/$name.reference.err" ||
    fail "$name on one host failed: $(tail -n 5 "$WORK/$name.reference.err")"
}

# across NAME MPI-PRIVATE-ARGS... -- PROGRAM ARGS...: the job across the sites; its transcript must
# equal the reference's, and the job must leave no process behind.
across() {
  local name=$1 status=0 started=$SECONDS
  shift
  LP_WAN_INSTANCE=$INSTANCE "$MPI_PRIVATE" --dial "$DIAL" --timeout "$JOB_SECONDS" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null &
  JOB_PID=$!
  wait "$JOB_PID" || status=$?
  JOB_PID=""
  ((status != 124)) || fail "$name across the sites did not end within $JOB_SECONDS s: $(tail -n 15 "$WORK/$name.err")"
  ((status == 0)) || fail "$name across the sites exited with status $status: $(tail -n 15 "$WORK/$name.err")"
  diff -u "$WORK/$name.reference" "$WORK/$name.out" >"$WORK/$name.diff" ||
    fail "$name: the transcript across the sites differs from the one-host run: $(head -n 20 "$WORK/$name.diff")"
  pgrep -f "lp-mpi-private-$INSTANCE" >/dev/null && fail "$name: a process of the job outlived it"
  say "$name: transcript equal to the one-host run ($(wc -l <"$WORK/$name.out") lines, $((SECONDS - started)) s)"
}

# check_crossing BEFORE: the gateways opened streams at every site since BEFORE, and the core saw
# only gateway-to-gateway packets on the open port.
check_crossing() {
  local before=$1 after gateways other
  after=$(gateway_streams)
  gateways=$(counter gateways) other=$(counter other)
  say "gateways' streams opened: before $before, after $after; core: $gateways gateway packets, $other others"
  ((other == 0)) || fail "$other packets between sites were not gateway to gateway on port $OPEN_PORT: $(ip netns exec "$CORE_NS" nft list table inet "$COUNT_TABLE")"
  ((gateways > 0)) || fail "no packet crossed the core between gateways: the job did not use them"
  /usr/bin/python3 - "$before" "$after" "$2" <<'PY' || fail "not every site's gateway opened streams for the job (before: $before, after: $after)"
import sys
before = dict(x.split("=") for x in sys.argv[1].split())
after = dict(x.split("=") for x in sys.argv[2].split())
for site in sys.argv[3].split(","):
    assert int(after[site]) > int(before[site]), site
PY
}

# exchange_job RANKS GATEWAYS MPI-PRIVATE-ARGS...: mpi_exchange on one host, then across the sites
# with MPI-PRIVATE-ARGS under the core's counters; GATEWAYS (S1,S2,...) must all carry streams.
exchange_job() {
  local ranks=$1 gateways=$2 before
  shift 2
  reference exchange "$EXCHANGE" "$ranks"
  install_counters
  before=$(gateway_streams)
  across exchange "$@" -- "$EXCHANGE"
  check_crossing "$before" "$gateways"
}

scenario_open_mpi() {
  exchange_job 6 S1,S2,S3 --sites 1,2,3 --hosts 2 --preload ""
  pass "open-mpi: 6 ranks on the private hosts of 3 sites, Open MPI's runtime and TCP BTL through the gateways; transcript as on one host; only gateway-to-gateway packets on port $OPEN_PORT crossed"
}

scenario_longpipe() {
  exchange_job 6 S1,S2,S3 --sites 1,2,3 --hosts 2 --preload "$LIBRARY"
  pass "longpipe: point-to-point and two-level collectives, 6 ranks on 3 sites with LongPipe, transcript as on one host; only gateway-to-gateway packets crossed"
}

scenario_two_site_16() {
  exchange_job 16 S1,S2 --sites 1,2 --hosts 2 -n 4 --preload "$LIBRARY"
  pass "two-site-16: 16 ranks on 2 sites (4 per host) with LongPipe, transcript as on one host; only gateway-to-gateway packets crossed"
}

# ./longpipe mpirun in s1-h1, as a user on a private host would run it (a hostfile of the site
# hosts, the rsh agent, the routes); its processes carry LP_MPI_SITES_RUN for the clean-up.
scenario_command() {
  local sites=0,0,1,1,2,2 status=0 routes=""
  mkdir "$WORK/markers.reference" "$WORK/markers"
  reference collectives "$COLLECTIVES" 6 "$sites" "$WORK/markers.reference"
  printf 's%d-h%d slots=1\n' 1 1 1 2 2 1 2 2 3 1 3 2 >"$WORK/hostfile"
  for site in 1 2 3; do routes+=${routes:+,}S$site=10.$site.0.0/24@10.$site.0.1; done
  install_counters
  local before
  before=$(gateway_streams)
  RUN_TAG=$WORK/run
  mkdir "$RUN_TAG"
  LP_MPI_SITES_RUN=$RUN_TAG LONGPIPE_SITE_ROUTES=$routes LONGPIPE_MPI_SITES=$sites LONGPIPE_WAN=$WAN \
    LONGPIPE_BUILD_DIR=$(dirname "$(dirname "$LIBRARY")") \
    "$WAN" exec s1-h1 timeout "$JOB_SECONDS" "$ROOT/longpipe" mpirun --allow-run-as-root --oversubscribe \
    --bind-to none --hostfile "$WORK/hostfile" -np 6 --map-by slot --mca plm_rsh_agent "$ROOT/apps/mpi-sites/mpi-rsh" \
    --mca oob_tcp_if_include 10.0.0.0/8 --mca btl_tcp_if_include 10.0.0.0/8 --mca btl tcp,vader,self \
    "$COLLECTIVES" "$sites" "$WORK/markers" >"$WORK/collectives.out" 2>"$WORK/collectives.err" </dev/null || status=$?
  end_run "$RUN_TAG"
  RUN_TAG=""
  ((status == 0)) || fail "./longpipe mpirun across the sites exited with status $status: $(tail -n 15 "$WORK/collectives.err")"
  # A floating-point sum's rounding depends on the reduction's order: those lines are apart
  # (tests/mpi/collectives.c); every other line must be the same.
  diff -u <(grep -v '^order-sensitive' "$WORK/collectives.reference") <(grep -v '^order-sensitive' "$WORK/collectives.out") \
    >"$WORK/collectives.diff" ||
    fail "collectives: the transcript across the sites differs from the one-host run: $(head -n 20 "$WORK/collectives.diff")"
  grep -q . "$WORK/collectives.out" || fail "collectives: no transcript"
  check_crossing "$before" S1,S2,S3
  pass "command: ./longpipe mpirun with LONGPIPE_SITE_ROUTES, two-level collectives on 6 ranks of 3 sites, transcript as on one host; only gateway-to-gateway packets crossed"
}

case $SCENARIO in
  open-mpi) scenario_open_mpi ;;
  longpipe) scenario_longpipe ;;
  command) scenario_command ;;
  two-site-16) scenario_two_site_16 ;;
  *) fail "unknown scenario '$SCENARIO'" ;;
esac
