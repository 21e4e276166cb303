# shellcheck shell=bash
# netem/wan_status.sh: `netem/wan status`, sourced by netem/wan: the two-site link's configuration,
# the hosts' TCP settings, a measured round trip and the emulator's counters (or netem's), or the
# multi-site mode's view (netem/sites.sh).

# --- status ---------------------------------------------------------------------------------

cmd_status() {
  while (($#)); do
    case $1 in
      --instance) (($# >= 2)) || die "--instance needs a value"; set_instance "$2"; shift ;;
      -h|--help)
        cat <<'EOF'
Usage: netem/wan status [--instance NAME]

Prints the link's profile, backend and host tuning, the round trip measured with a few pings
from site a to site b, and the emulator's counters per direction (forwarded, dropped by loss,
dropped by the queue) with its CPU time. Exit status 1 when the link is not up.
In multi-site mode (up --sites): every site's access link with its profile and counters, and every
gateway and compute host with its namespace and addresses.
EOF
        return 0 ;;
      *) die "status: unknown option '$1' (see netem/wan status --help)" ;;
    esac
    shift
  done
  require_root
  name_things
  if [[ -r "$STATE_DIR/sites" ]] && namespace_exists "$(sites_core_ns)"; then
    cmd_sites_status
    return
  fi
  if [[ ! -r "$STATE_DIR/config" ]] || ! namespace_exists "$NS_A"; then
    echo "link: down ($DESCRIPTION)"
    return 1
  fi
  echo "link: up ($DESCRIPTION), namespaces $NS_A ($SITE_A_ADDRESS) and $NS_B ($SITE_B_ADDRESS)"
  echo "config: $(describe_link "$STATE_DIR/config")"
  local ns
  for ns in "$NS_A" "$NS_B"; do
    echo "hosts $ns: tcp_rmem $(ip netns exec "$ns" sysctl -n net.ipv4.tcp_rmem | tr '\t' ' '), tcp_wmem $(ip netns exec "$ns" sysctl -n net.ipv4.tcp_wmem | tr '\t' ' '), tcp_slow_start_after_idle $(ip netns exec "$ns" sysctl -n net.ipv4.tcp_slow_start_after_idle), tcp_fastopen $(ip netns exec "$ns" sysctl -n net.ipv4.tcp_fastopen)"
  done
  local rtt
  rtt=$(ip netns exec "$NS_A" ping -n -q -c 3 -i 0.2 -W 3 "$SITE_B_ADDRESS" 2>&1 | grep -E '^(rtt|round-trip)' || true)
  rtt=${rtt#*= }
  echo "measured rtt (3 pings a->b, min/avg/max/mdev): ${rtt%%, pipe*}"
  local backend
  backend=$(awk -F= '$1 == "backend" {print $2}' "$STATE_DIR/config")
  if [[ $backend == tun ]]; then
    local pid state=dead
    pid=$(cat "$STATE_DIR/emulator.pid" 2>/dev/null || echo "?")
    is_live_emulator "$pid" && state=running
    echo "emulator: pid $pid, $state"
    if [[ -r "$STATE_DIR/stats" ]]; then
      awk -F= '{v[$1] = $2}
        END {
          printf "emulator cpu: %.2f s user + %.2f s system in %.0f s (%.1f %%); scheduling %s\n", v["cpu_user_s"], v["cpu_system_s"], v["uptime_s"],
            (v["uptime_s"] >= 1 ? 100 * (v["cpu_user_s"] + v["cpu_system_s"]) / v["uptime_s"] : 0),
            (v["realtime_priority"] > 0 ? "SCHED_FIFO " v["realtime_priority"] : "normal")
          split("a_to_b b_to_a", d, " ")
          for (i = 1; i <= 2; i++) { p = d[i]
            printf "%s: forwarded %d packets (%d bytes), dropped by loss %d, dropped by queue %d, write errors %d, queued %d bytes\n",
              p, v[p "_forwarded_packets"], v[p "_forwarded_bytes"], v[p "_dropped_by_loss"], v[p "_dropped_by_queue"], v[p "_write_errors"], v[p "_queued_bytes"] }
        }' "$STATE_DIR/stats"
    fi
  else
    tc -n "$NS_ROUTER" -s qdisc show
  fi
}
