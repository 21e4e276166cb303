# shellcheck shell=bash
# netem/wan_link.sh: the two-site link of netem/wan, sourced by it: the kernel netem backend (a
# router namespace between the sites), the sizes both backends derive from the link's values, the
# hosts' TCP tuning and the one-line description `up` and `status` print. The link's values come as
# the name of an associative array of lp-linkemu --validate's effective values (a_to_b_delay_ms, ...).

# Sets NETEM_PROBE_ERROR and fails when `tc qdisc add ... netem` does not work (in a scratch namespace).
kernel_has_netem() {
  NETEM_PROBE_ERROR=""
  namespace_exists "$NS_PROBE" && ip netns delete "$NS_PROBE"
  ip netns add "$NS_PROBE" || return 1
  local status=0
  NETEM_PROBE_ERROR=$(tc -n "$NS_PROBE" qdisc add dev lo root netem delay 1ms 2>&1) || status=1
  ip netns delete "$NS_PROBE"
  NETEM_PROBE_ERROR=$(echo "$NETEM_PROBE_ERROR" | head -n 1)
  return $status
}

# build_router EFFECTIVE-ARRAY-NAME: site A -- router -- site B over veth, kernel netem on the router's
# egress towards each site (delay on the router, never on the sending host: see PLATFORM.md).
build_router() {
  local -n effective_link=$1
  ip netns add "$NS_ROUTER"
  ip -n "$NS_ROUTER" link set lo up
  ip -n "$NS_ROUTER" link add bridge0 type bridge
  ip -n "$NS_ROUTER" link set bridge0 up
  local site ns port direction
  for site in a b; do
    ns=$NS_A port=to-site-a
    [[ $site == b ]] && ns=$NS_B port=to-site-b
    ip -n "$ns" link add "$LINK_DEVICE" type veth peer name "$port" netns "$NS_ROUTER"
    ip -n "$NS_ROUTER" link set "$port" master bridge0 up
    # Loss and rate must act on real packets, not 64 KB GSO/GRO super-packets.
    ip netns exec "$ns" ethtool -K "$LINK_DEVICE" gso off tso off gro off >/dev/null 2>&1 || true
    ip netns exec "$NS_ROUTER" ethtool -K "$port" gso off tso off gro off >/dev/null 2>&1 || true
  done
  # Packets leaving the router towards site b travel a->b, and the other way round.
  for direction in a_to_b b_to_a; do
    port=to-site-b
    [[ $direction == b_to_a ]] && port=to-site-a
    # shellcheck disable=SC2046
    tc -n "$NS_ROUTER" qdisc add dev "$port" root netem $(netem_arguments effective_link "$direction")
  done
}

# link_packets EFFECTIVE-ARRAY-NAME DIRECTION: how many packets one direction of the link holds:
# the bandwidth-delay product in flight plus its queue (at least 1000).
link_packets() {
  local -n e=$1
  local d=$2
  awk -v rate="${e[${d}_rate_mbit]}" -v delay="${e[${d}_delay_ms]}" -v queue="${e[${d}_queue_bytes]}" -v mtu="$PACKET_BYTES" \
    'BEGIN { if (rate == 0) rate = 10000; n = (rate * 1e6 / 8 * delay / 1000 + queue) / mtu; print (n < 1000 ? 1000 : int(n) + 1) }'
}

# netem_arguments EFFECTIVE-ARRAY-NAME DIRECTION: the netem options of one direction. Its limit (in
# packets) covers everything the link holds: the bandwidth-delay product in flight plus the queue.
netem_arguments() {
  local -n e=$1
  local d=$2
  local args=(delay "${e[${d}_delay_ms]}ms")
  [[ ${e[${d}_jitter_ms]} != 0 ]] && args+=("${e[${d}_jitter_ms]}ms" distribution normal)
  if [[ -n ${e[${d}_burst_loss]} ]]; then
    local p r bad good
    IFS=, read -r p r bad good <<<"${e[${d}_burst_loss]}"
    # netem's gemodel takes p, r, 1-h (loss in bad) and 1-k (loss in good).
    args+=(loss gemodel "$p%" "$r%" "$bad%" "$good%")
  elif [[ ${e[${d}_loss_pct]} != 0 ]]; then
    args+=(loss random "${e[${d}_loss_pct]}%")
  fi
  local rate=${e[${d}_rate_mbit]}
  [[ $rate != 0 ]] && args+=(rate "${rate}mbit")
  args+=(limit "$(link_packets "$1" "$d")")
  echo "${args[@]}"
}

# tune_hosts EFFECTIVE-ARRAY-NAME: raises both sites' TCP buffer maxima to twice the bandwidth-delay
# product (the kernel charges packet overhead to the buffers, so a window of one BDP needs about two)
# and keeps the congestion window across idle periods. Prints what it set.
tune_hosts() {
  local -n e=$1
  local buffer ns
  buffer=$(awk -v a="${e[a_to_b_rate_mbit]}" -v b="${e[b_to_a_rate_mbit]}" -v unlimited="$UNLIMITED_RATE_FOR_TUNING" \
    -v rtt_ms="${e[a_to_b_delay_ms]}" -v back_ms="${e[b_to_a_delay_ms]}" \
    'BEGIN { r = (a > b ? a : b); if (a == 0 || b == 0) r = unlimited; print int(2 * r * 1e6 / 8 * (rtt_ms + back_ms) / 1000) }')
  for ns in "$NS_A" "$NS_B"; do
    local rmem_max wmem_max
    read -r _ _ rmem_max < <(ip netns exec "$ns" sysctl -n net.ipv4.tcp_rmem)
    read -r _ _ wmem_max < <(ip netns exec "$ns" sysctl -n net.ipv4.tcp_wmem)
    ((buffer > rmem_max)) && rmem_max=$buffer
    ((buffer > wmem_max)) && wmem_max=$buffer
    ip netns exec "$ns" sysctl -qw "net.ipv4.tcp_rmem=4096 131072 $rmem_max" "net.ipv4.tcp_wmem=4096 16384 $wmem_max" \
      net.ipv4.tcp_slow_start_after_idle=0
  done
  echo "tuned (tcp_rmem max $rmem_max, tcp_wmem max $wmem_max, tcp_slow_start_after_idle 0)"
}

# One line describing the link from a config file.
describe_link() {
  awk -F= '{v[$1] = $2}
    function dir(p,   s) {
      s = v[p "_delay_ms"] " ms"
      if (v[p "_jitter_ms"] != 0) s = s " +/- " v[p "_jitter_ms"] " ms"
      s = s ", " (v[p "_rate_mbit"] == 0 ? "unlimited" : v[p "_rate_mbit"] " Mbit/s")
      if (v[p "_burst_loss"] != "") s = s ", burst loss " v[p "_burst_loss"]
      else if (v[p "_loss_pct"] != 0) s = s ", " v[p "_loss_pct"] " % loss"
      if (v[p "_rate_mbit"] != 0) s = s ", queue " v[p "_queue_bytes"] " B"
      return s
    }
    END { printf "profile %s, backend %s; a->b %s; b->a %s; hosts %s; TCP Fast Open %s\n", v["profile"], v["backend"], dir("a_to_b"), dir("b_to_a"), v["hosts"], (v["fast_open"] == "" ? "off" : v["fast_open"]) }' "$1"
}
