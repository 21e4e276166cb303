# shellcheck shell=bash
# netem/sites.sh: the multi-site mode of netem/wan (sourced by it, not run): N emulated sites, each a
# small LAN of one gateway host and K compute hosts, joined through a core router namespace by one
# emulated access link per site. See netem/README.md ("Multi-site mode"). Uses netem/wan's helpers
# (die, say, profile_values, stop_pids, link_packets, ...) and its names (NS_PREFIX, STATE_DIR).

SITES_MAX=32                    # sites per instance (site S owns 10.S.0.0/24 and 172.31.0.S)
SITES_HOSTS_MAX=50              # compute hosts per site (10.S.0.11 ... 10.S.0.60)
SITES_CORE_NET=172.31.0         # gateways' addresses towards the core: 172.31.0.S/24
SITES_LAN_BRIDGE=lan0           # the site LAN's bridge in the gateway host (address 10.S.0.1/24)
SITES_HOST_DEVICE=eth0          # a compute host's LAN interface
SITES_DEFAULT_OPEN_PORT=7447    # the one port the firewall opens on each gateway towards the core
SITES_FIREWALL_TABLE=longpipe   # the gateway hosts' nftables table (inet family)

# Names of one instance: <prefix>-core, <prefix>-s<S>-gw, <prefix>-s<S>-h<K>.
sites_core_ns() { echo "$NS_PREFIX-core"; }
sites_gw_ns() { echo "$NS_PREFIX-s$1-gw"; }
sites_host_ns() { echo "$NS_PREFIX-s$1-h$2"; }
sites_access_device() { echo "lpacc$1"; }   # the access link's TUN device, in the gateway and the core
sites_host_address() { echo "10.$1.0.$((10 + $2))"; }

# Every namespace of this instance's multi-site mode that exists now (also after a crash).
sites_namespaces() {
  local path name
  for path in /var/run/netns/"$NS_PREFIX"-*; do
    name=${path##*/}
    [[ -e $path && $name =~ ^$NS_PREFIX-(core|s[0-9]+-gw|s[0-9]+-h[0-9]+)$ ]] && echo "$name"
  done
  return 0
}

# Live emulators of this instance's access links: by PID file, and any whose command line names the
# core namespace (the state directory may be gone after a crash).
sites_emulator_pids() {
  local core pid file
  core=$(sites_core_ns)
  {
    for file in "$STATE_DIR"/emulator-s*.pid; do
      [[ -r $file ]] || continue
      pid=$(cat "$file")
      is_live_emulator "$pid" && echo "$pid"
    done
    emulators_naming "$core"
  } | sort -u
}

# Removes every emulator, process, namespace and /etc/netns entry of the multi-site mode. Called by
# netem/wan's tear_down, so `down` and both kinds of `up` clear it.
sites_tear_down() {
  local pids ns
  mapfile -t pids < <(sites_emulator_pids)
  stop_pids "${pids[@]}"
  for ns in $(sites_namespaces); do
    mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null)
    stop_pids "${pids[@]}"
    ip netns delete "$ns" 2>/dev/null || ip netns delete "$ns"
  done
  for ns in /etc/netns/"$NS_PREFIX"-core /etc/netns/"$NS_PREFIX"-s[0-9]*-gw /etc/netns/"$NS_PREFIX"-s[0-9]*-h[0-9]*; do
    [[ -e $ns && $(basename "$ns") =~ ^$NS_PREFIX-(core|s[0-9]+-gw|s[0-9]+-h[0-9]+)$ ]] && rm -rf "$ns"
  done
  return 0
}

# --- up -------------------------------------------------------------------------------------

sites_up_usage() {
  cat <<EOF
Usage: netem/wan up --sites SITE[,SITE...] [--hosts K] [--open-port PORT | --no-firewall]
                    [--no-fast-open] [--instance NAME]

N sites, each a LAN of a gateway host and K compute hosts, joined through a core router. Site S
(1, 2, ... in the order given): gateway s<S>-gw (172.31.0.S towards the core, 10.S.0.1 on the LAN),
compute hosts s<S>-h1.. (10.S.0.11, 10.S.0.12, ...) with no route off their LAN.
  --sites LIST      one entry per site: PROFILE[:OPTION=VALUE...], PROFILE one of
                    $(profile_names); OPTION a link option of netem/wan up
                    (delay, jitter, loss, rate, queue, seed, burst-loss with '/' for ',' and their
                    -back forms) overriding the profile. The site's access link: gateway -> core
                    is the forward direction, core -> gateway the back one. E.g.
                    --sites geo,transatlantic,thin   or   --sites geo:delay=15,thin:delay=10:loss=1
  --hosts K         compute hosts per site (default 2, at most $SITES_HOSTS_MAX)
  --open-port PORT  the one TCP/UDP port each gateway accepts from the core (default $SITES_DEFAULT_OPEN_PORT);
                    ICMP and replies to the gateway's own connections pass, other ports are refused
  --no-firewall     no firewall: every port of a gateway is reachable from the core
  --no-fast-open    leave net.ipv4.tcp_fastopen at the kernel's default in every host
EOF
}

# sites_parse_spec SPEC: prints lp-linkemu's arguments for one --sites entry (profile, then overrides).
sites_parse_spec() {
  local spec=$1 profile values delay jitter loss rate item key value
  local -a items
  IFS=: read -r -a items <<<"$spec"
  profile=${items[0]:-}
  values=$(profile_values "$profile") ||
    die "--sites: unknown profile '$profile' in '$spec' (known: $(profile_names); see $PROFILES)"
  read -r delay jitter loss rate <<<"$values"
  local -A link=([delay]=$delay [jitter]=$jitter [loss]=$loss [rate]=$rate)
  for item in "${items[@]:1}"; do
    [[ $item == *=* ]] || die "--sites: '$item' in '$spec' is not OPTION=VALUE"
    key=${item%%=*} value=${item#*=}
    is_link_option "$key" || die "--sites: unknown link option '$key' in '$spec' (see netem/wan up --help)"
    link[$key]=${value//\//,}
  done
  for key in "${LINK_OPTIONS[@]}"; do
    [[ -n "${link[$key]:-}" ]] && printf -- '--%s\n%s\n' "$key" "${link[$key]}"
  done
  return 0
}

cmd_sites_up() {
  local sites_list="" hosts=2 open_port=$SITES_DEFAULT_OPEN_PORT firewall=1 fast_open=1 argument
  for argument in "$@"; do
    [[ $argument == -h || $argument == --help ]] && { sites_up_usage; return 0; }
  done
  while (($#)); do
    case $1 in
      --no-firewall) firewall=0 ;;
      --no-fast-open) fast_open=0 ;;
      --sites|--hosts|--open-port|--instance)
        (($# >= 2)) && [[ -n "$2" ]] || die "$1 needs a value (see netem/wan up --sites --help)"
        case $1 in
          --sites) sites_list=$2 ;;
          --hosts) hosts=$2 ;;
          --open-port) open_port=$2 ;;
          --instance) set_instance "$2" ;;
        esac
        shift ;;
      *) die "unknown option '$1' with --sites (see netem/wan up --sites --help)" ;;
    esac
    shift
  done
  [[ $hosts =~ ^[0-9]+$ ]] && ((hosts <= SITES_HOSTS_MAX)) || die "--hosts: '$hosts' is not a number in [0, $SITES_HOSTS_MAX]"
  [[ $open_port =~ ^[0-9]+$ ]] && ((open_port >= 1 && open_port <= 65535)) || die "--open-port: '$open_port' is not a port in [1, 65535]"
  local -a specs
  IFS=, read -r -a specs <<<"$sites_list"
  ((${#specs[@]} >= 1 && ${#specs[@]} <= SITES_MAX)) || die "--sites: give 1 to $SITES_MAX sites, comma-separated"
  require_root
  name_things
  ((!firewall)) || command -v nft >/dev/null ||
    die "the gateways' firewall needs nft (Debian package nftables; ./longpipe build installs it), or use --no-firewall"
  [[ -x "$EMULATOR" ]] || die "the link emulator is not built: $EMULATOR (run ./longpipe build, or set LONGPIPE_BUILD_DIR)"

  # Every site's link is validated by lp-linkemu's parser before anything is touched.
  local -a site_args site_effective
  local i args effective
  for i in "${!specs[@]}"; do
    args=$(sites_parse_spec "${specs[$i]}") || exit 2
    local -a arg_list=()
    mapfile -t arg_list <<<"$args"
    effective=$("$EMULATOR" --validate "${arg_list[@]}" 2>&1) || die "site $((i + 1)) ('${specs[$i]}'): ${effective#lp-linkemu: }"
    site_args[i]=$args
    site_effective[i]=$effective
  done

  tear_down
  mkdir -p "$STATE_DIR"
  UP_FINISHED=0
  trap 'if ((!UP_FINISHED)); then say "up failed; removing what it created"; tear_down; fi' EXIT
  local core site k gw ns device
  core=$(sites_core_ns)
  ip netns add "$core"
  ip -n "$core" link set lo up
  ip netns exec "$core" sysctl -qw net.ipv4.ip_forward=1
  for i in "${!specs[@]}"; do
    site=$((i + 1))
    gw=$(sites_gw_ns "$site")
    ip netns add "$gw"
    ip -n "$gw" link set lo up
    ip -n "$gw" link add "$SITES_LAN_BRIDGE" type bridge
    ip -n "$gw" addr add "10.$site.0.1/24" dev "$SITES_LAN_BRIDGE"
    ip -n "$gw" link set "$SITES_LAN_BRIDGE" up
    for ((k = 1; k <= hosts; k++)); do
      ns=$(sites_host_ns "$site" "$k")
      ip netns add "$ns"
      ip -n "$ns" link set lo up
      ip -n "$gw" link add "h$k" type veth peer name "$SITES_HOST_DEVICE" netns "$ns"
      ip -n "$gw" link set "h$k" master "$SITES_LAN_BRIDGE" up
      ip -n "$ns" addr add "$(sites_host_address "$site" "$k")/24" dev "$SITES_HOST_DEVICE"
      ip -n "$ns" link set "$SITES_HOST_DEVICE" up
    done
    local -a arg_list=()
    mapfile -t arg_list <<<"${site_args[i]}"
    sites_start_emulator "$site" "$gw" "$core" "${arg_list[@]}"
    device=$(sites_access_device "$site")
    local -A eff=()
    local key value
    while IFS='=' read -r key value; do eff[$key]=$value; done <<<"${site_effective[i]}"
    ip -n "$gw" addr add "$SITES_CORE_NET.$site/24" dev "$device"
    ip -n "$gw" link set "$device" txqueuelen "$(link_packets eff a_to_b)" up
    ip -n "$core" link set "$device" txqueuelen "$(link_packets eff b_to_a)" up
    ip -n "$core" route add "$SITES_CORE_NET.$site/32" dev "$device"
    ((firewall)) && sites_firewall "$gw" "$device" "$open_port"
  done
  sites_write_hosts_files "${#specs[@]}" "$hosts"
  if ((fast_open)); then
    for ns in $(sites_namespaces); do ip netns exec "$ns" sysctl -qw "net.ipv4.tcp_fastopen=$FAST_OPEN_SYSCTL"; done
  fi

  {
    echo "mode=sites"
    echo "sites=${#specs[@]}"
    echo "hosts=$hosts"
    echo "firewall=$( ((firewall)) && echo "$open_port" || echo off)"
    echo "fast_open=$( ((fast_open)) && echo on || echo off)"
    for i in "${!specs[@]}"; do
      echo "s$((i + 1)).spec=${specs[$i]}"
      sed "s/^/s$((i + 1))./" <<<"${site_effective[i]}"
    done
  } >"$STATE_DIR/sites"
  UP_FINISHED=1
  say "up ($DESCRIPTION): ${#specs[@]} sites x $hosts compute hosts, firewall $( ((firewall)) && echo "port $open_port only" || echo off) (netem/wan status)"
}

# sites_start_emulator SITE GW-NS CORE-NS LINK-ARGS...: the access link's lp-linkemu (netem/wan_emulator.sh).
sites_start_emulator() {
  local site=$1 gw=$2 core=$3
  shift 3
  launch_emulator "the emulator of site $site's access link" "$gw" "$core" "$(sites_access_device "$site")" \
    "emulator-s$site" "$@"
}

# sites_firewall GW-NS DEVICE PORT: from the core (the access link) a gateway accepts only PORT (TCP
# and UDP), ICMP, and packets of connections it opened; other TCP gets a reset, other UDP an ICMP
# error, so that a closed port fails at once. Its LAN is not filtered.
sites_firewall() {
  local gw=$1 device=$2 port=$3
  ip netns exec "$gw" nft -f - <<EOF
table inet $SITES_FIREWALL_TABLE {
  chain input {
    type filter hook input priority 0; policy accept;
    iifname != "$device" accept
    ct state established,related accept
    meta l4proto { icmp, icmpv6 } accept
    tcp dport $port accept
    udp dport $port accept
    meta l4proto tcp reject with tcp reset
    reject with icmpx type admin-prohibited
  }
}
EOF
}

# /etc/netns/<ns>/hosts: a gateway knows every gateway (172.31.0.T) and its own LAN; a compute host
# knows its own LAN only (its gateway as s<S>-gw at 10.S.0.1).
sites_write_hosts_files() {
  local count=$1 hosts=$2 site other k ns lan
  for ((site = 1; site <= count; site++)); do
    lan=$(for ((k = 1; k <= hosts; k++)); do printf '%s\ts%s-h%s\n' "$(sites_host_address "$site" "$k")" "$site" "$k"; done)
    ns=$(sites_gw_ns "$site")
    mkdir -p "/etc/netns/$ns"
    {
      printf '127.0.0.1\tlocalhost\n'
      for ((other = 1; other <= count; other++)); do printf '%s.%s\ts%s-gw\n' "$SITES_CORE_NET" "$other" "$other"; done
      printf '10.%s.0.1\ts%s-gw-lan\n' "$site" "$site"
      [[ -z $lan ]] || echo "$lan"
    } >"/etc/netns/$ns/hosts"
    for ((k = 1; k <= hosts; k++)); do
      ns=$(sites_host_ns "$site" "$k")
      mkdir -p "/etc/netns/$ns"
      printf '127.0.0.1\tlocalhost\n10.%s.0.1\ts%s-gw\n%s\n' "$site" "$site" "$lan" >"/etc/netns/$ns/hosts"
    done
  done
}

# --- status ---------------------------------------------------------------------------------

# sites_value KEY: one value of the state file.
sites_value() { awk -F= -v k="$1" '$1 == k {sub(/^[^=]*=/, ""); print; exit}' "$STATE_DIR/sites"; }

# One direction of an access link, from the state file: "270 ms, 155 Mbit/s, 1 % loss".
sites_direction() {
  awk -F= -v p="$1" '{v[$1] = substr($0, length($1) + 2)}
    END {
      s = v[p "_delay_ms"] " ms"
      if (v[p "_jitter_ms"] != 0) s = s " +/- " v[p "_jitter_ms"] " ms"
      s = s ", " (v[p "_rate_mbit"] == 0 ? "unlimited" : v[p "_rate_mbit"] " Mbit/s")
      if (v[p "_burst_loss"] != "") s = s ", burst loss " v[p "_burst_loss"]
      else if (v[p "_loss_pct"] != 0) s = s ", " v[p "_loss_pct"] " % loss"
      print s
    }' "$STATE_DIR/sites"
}

cmd_sites_status() {
  local count hosts firewall site k ns gw device pid state core
  count=$(sites_value sites) hosts=$(sites_value hosts) firewall=$(sites_value firewall)
  core=$(sites_core_ns)
  echo "sites: up ($DESCRIPTION): $count sites x $hosts compute hosts, core router $core"
  if [[ $firewall == off ]]; then
    echo "firewall: off (every port of a gateway is reachable from the core)"
  else
    echo "firewall: each gateway accepts only port $firewall (TCP, UDP) and ICMP from the core"
  fi
  for ((site = 1; site <= count; site++)); do
    gw=$(sites_gw_ns "$site") device=$(sites_access_device "$site")
    pid=$(cat "$STATE_DIR/emulator-s$site.pid" 2>/dev/null || echo "?")
    state=dead
    is_live_emulator "$pid" && state=running
    echo "site $site: profile $(sites_value "s$site.spec")"
    echo "  access link $device (lp-linkemu pid $pid, $state): gateway->core $(sites_direction "s$site.a_to_b"); core->gateway $(sites_direction "s$site.b_to_a")"
    if [[ -r $STATE_DIR/stats-s$site ]]; then
      awk -F= '{v[$1] = $2}
        END { split("a_to_b b_to_a", d, " "); split("gateway->core core->gateway", n, " ")
          for (i = 1; i <= 2; i++) printf "    %s: forwarded %d packets (%d bytes), dropped by loss %d, by queue %d\n",
            n[i], v[d[i] "_forwarded_packets"], v[d[i] "_forwarded_bytes"], v[d[i] "_dropped_by_loss"], v[d[i] "_dropped_by_queue"] }' \
        "$STATE_DIR/stats-s$site"
    fi
    echo "  gateway  s$site-gw  $gw  $SITES_CORE_NET.$site ($device, towards the core)  10.$site.0.1 ($SITES_LAN_BRIDGE)$(namespace_exists "$gw" || echo "  MISSING")"
    for ((k = 1; k <= hosts; k++)); do
      ns=$(sites_host_ns "$site" "$k")
      echo "  host     s$site-h$k  $ns  $(sites_host_address "$site" "$k") ($SITES_HOST_DEVICE)$(namespace_exists "$ns" || echo "  MISSING")"
    done
  done
}

# --- exec -----------------------------------------------------------------------------------

# sites_exec HOST CMD...: HOST is s<S>-gw, s<S>-h<K> or core; the host name is HOST.
sites_exec() {
  local host=$1 ns
  shift
  case $host in
    core) ns=$(sites_core_ns) ;;
    s[0-9]*-gw|s[0-9]*-h[0-9]*) ns=$NS_PREFIX-$host ;;
    *) die "site must be 'a' or 'b' (two sites), or a host s<S>-gw, s<S>-h<K> or core (--sites), not '$host'" ;;
  esac
  (($#)) || die "no command given (netem/wan exec HOST CMD...)"
  namespace_exists "$ns" || die "namespace $ns does not exist: no host $host in $DESCRIPTION (netem/wan status)"
  exec ip netns exec "$ns" unshare --uts -- sh -c 'hostname "$1" && shift && exec "$@"' sh "$host" "$@"
}
