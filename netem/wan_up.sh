# shellcheck shell=bash
# netem/wan_up.sh: `netem/wan up` in its two-site mode, sourced by netem/wan: the profiles, the option
# parsing (lp-linkemu validates the link options) and the order of the set-up. The backends' parts
# are in netem/wan_link.sh and netem/wan_emulator.sh; --sites hands over to netem/sites.sh.

# --- profiles -------------------------------------------------------------------------------

profile_names() { awk '!/^[[:space:]]*(#|$)/ {print $1}' "$PROFILES" | paste -sd' '; }

# Prints "delay jitter loss rate" of a profile, or fails.
profile_values() {
  awk -v name="$1" '!/^[[:space:]]*(#|$)/ && $1 == name {print $2, $3, $4, $5; found=1} END {exit !found}' "$PROFILES"
}

# --- up -------------------------------------------------------------------------------------

up_usage() {
  cat <<EOF
Usage: netem/wan up [--profile NAME] [link options] [--backend auto|tc|tun] [--tune-hosts]
                    [--no-fast-open] [--instance NAME]

Brings the two sites and the link up (leftovers of a run that did not end cleanly are removed first).
  --profile NAME        one of: $(profile_names) (netem/profiles)
Link options (each direction; the -back forms set site b -> site a only; they override the profile):
  --delay MS            one-way delay, ms (0..60000)        --delay-back MS
  --jitter MS           normal jitter (std. dev.), ms        --jitter-back MS
  --loss PCT            random loss, percent (0..100)        --loss-back PCT
  --rate MBIT           rate, Mbit/s (0: unlimited)          --rate-back MBIT
  --burst-loss P,R[,B[,G]]  Gilbert-Elliott loss, percent: enter burst, leave burst, loss in
                        a burst (100), loss outside (0); replaces --loss   --burst-loss-back ...
  --queue SIZE          tail-drop queue before the rate limit: bdp (default: rate x RTT),
                        bytes (150000, 64K, 8M) or time at the link rate (100ms)
  --reorder             let jitter reorder packets (tun backend)
  --seed N              random seed of the tun emulator (reproducible loss)
Other:
  --backend B           auto (default: tc where kernel netem works, else tun), tc (kernel netem on
                        a router namespace), tun (LongPipe's user-space emulator, lp-linkemu)
  --tune-hosts          per-site tcp_rmem/tcp_wmem maxima to twice the bandwidth-delay product and
                        tcp_slow_start_after_idle=0 (default: the kernel's stock settings)
  --no-fast-open        leave net.ipv4.tcp_fastopen at the kernel's default (1: client only); by
                        default (and with --tune-hosts) both sites get $FAST_OPEN_SYSCTL (client and server):
                        TCP Fast Open between the sites
Without --profile and link options the link has no delay, loss or rate limit.
With --sites: N sites of a gateway and compute hosts each (netem/wan up --sites --help).
EOF
}

# Link options that are passed to lp-linkemu as they are (it validates them and names the option).
LINK_OPTIONS=(delay delay-back jitter jitter-back loss loss-back rate rate-back burst-loss burst-loss-back queue
  queue-back seed)

is_link_option() {
  local option
  for option in "${LINK_OPTIONS[@]}"; do [[ $1 == "$option" ]] && return 0; done
  return 1
}

cmd_up() {
  local argument
  for argument in "$@"; do
    [[ $argument == --sites ]] && { cmd_sites_up "$@"; return; }
  done
  local profile="" backend=auto tune_hosts=0 reorder=0 fast_open=1
  local -A link=()
  while (($#)); do
    case $1 in
      --tune-hosts) tune_hosts=1 ;;
      --no-fast-open) fast_open=0 ;;
      --reorder) reorder=1 ;;
      -h|--help) up_usage; return 0 ;;
      --*)
        [[ $1 == --profile || $1 == --backend || $1 == --instance ]] || is_link_option "${1#--}" ||
          die "unknown option '$1' (see netem/wan up --help)"
        (($# >= 2)) && [[ -n "$2" ]] || die "$1 needs a value (see netem/wan up --help)"
        case $1 in
          --profile) profile=$2 ;;
          --backend) backend=$2 ;;
          --instance) set_instance "$2" ;;
          *) link[${1#--}]=$2 ;;
        esac
        shift ;;
      *) die "unknown option '$1' (see netem/wan up --help)" ;;
    esac
    shift
  done
  case $backend in auto|tc|tun) ;; *) die "--backend: '$backend' is not one of auto, tc, tun" ;; esac
  if [[ -n "$profile" ]]; then
    local values
    values=$(profile_values "$profile") ||
      die "--profile: unknown profile '$profile' (known: $(profile_names); see $PROFILES)"
    local delay jitter loss rate
    read -r delay jitter loss rate <<<"$values"
    : "${link[delay]:=$delay}" "${link[jitter]:=$jitter}" "${link[loss]:=$loss}" "${link[rate]:=$rate}"
  fi
  require_root
  name_things

  # lp-linkemu's parser is the one place link options are validated, for both backends.
  [[ -x "$EMULATOR" ]] || die "the link emulator is not built: $EMULATOR (run ./longpipe build, or set LONGPIPE_BUILD_DIR)"
  local emulator_args=() option effective
  for option in "${LINK_OPTIONS[@]}"; do
    [[ -n "${link[$option]:-}" ]] && emulator_args+=("--$option" "${link[$option]}")
  done
  ((reorder)) && emulator_args+=(--reorder)
  effective=$("$EMULATOR" --validate "${emulator_args[@]}" 2>&1) || die "${effective#lp-linkemu: }"
  local -A eff=()
  local key value
  while IFS='=' read -r key value; do eff[$key]=$value; done <<<"$effective"

  if [[ $backend != tun ]]; then
    if kernel_has_netem; then
      backend=tc
    elif [[ $backend == tc ]]; then
      die "--backend: tc needs kernel netem, which this kernel lacks ('tc qdisc add ... netem' fails: $NETEM_PROBE_ERROR); use --backend tun or auto"
    else
      backend=tun
    fi
  fi
  tear_down

  mkdir -p "$STATE_DIR"
  UP_FINISHED=0
  trap 'if ((!UP_FINISHED)); then say "up failed; removing what it created"; tear_down; fi' EXIT
  local ns
  for ns in "$NS_A" "$NS_B"; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    mkdir -p "/etc/netns/$ns"
    printf '127.0.0.1\tlocalhost\n%s\tsite-a\n%s\tsite-b\n' "$SITE_A_ADDRESS" "$SITE_B_ADDRESS" >"/etc/netns/$ns/hosts"
  done
  if [[ $backend == tun ]]; then
    start_emulator "${emulator_args[@]}"
  else
    build_router eff
  fi
  ip -n "$NS_A" addr add "$SITE_A_ADDRESS/$SITE_PREFIX_LENGTH" dev "$LINK_DEVICE"
  ip -n "$NS_B" addr add "$SITE_B_ADDRESS/$SITE_PREFIX_LENGTH" dev "$LINK_DEVICE"
  for ns in "$NS_A" "$NS_B"; do
    ip -n "$ns" link set "$LINK_DEVICE" up
  done
  if [[ $backend == tun ]]; then
    # The emulator's own queue models the link's. The TUN device's transmit queue (500 packets by
    # default) is only where packets wait for the emulator to read them: a sender's unpaced burst of
    # a full window must not be dropped there first (measured: every retransmission of 16 KiB
    # bursts on geo was a TUN drop). So it holds as much as the direction it feeds.
    ip -n "$NS_A" link set "$LINK_DEVICE" txqueuelen "$(link_packets eff a_to_b)"
    ip -n "$NS_B" link set "$LINK_DEVICE" txqueuelen "$(link_packets eff b_to_a)"
  fi
  local tuning=stock
  ((tune_hosts)) && tuning=$(tune_hosts eff)
  local fast_open_state=off
  if ((fast_open)); then
    for ns in "$NS_A" "$NS_B"; do ip netns exec "$ns" sysctl -qw "net.ipv4.tcp_fastopen=$FAST_OPEN_SYSCTL"; done
    fast_open_state=on
  fi

  {
    echo "profile=${profile:-custom}"
    echo "backend=$backend"
    echo "hosts=$tuning"
    echo "fast_open=$fast_open_state"
    echo "$effective"
  } >"$STATE_DIR/config"
  UP_FINISHED=1
  say "up ($DESCRIPTION): $(describe_link "$STATE_DIR/config")"
}
