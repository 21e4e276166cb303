# shellcheck shell=bash
# netem/gateways_run.sh: the gateway processes of netem/gateways, sourced by it: asking a gateway,
# starting and stopping one site's, `up` (configs, site paths, every gateway) and `down`, which
# also cleans up after a crash. Uses netem/common.sh (is_running, stop_pids), netem/gateways_layout.sh
# and netem/gateways_config.sh.

# Live processes started for this instance's gateways (tagged in their environment), also after a
# crash that lost the PID files.
tagged_pids() {
  local environ pid
  for environ in $(grep -lsxzF "LP_GATEWAYS_STATE=$STATE_DIR" /proc/[0-9]*/environ 2>/dev/null); do
    pid=${environ#/proc/}; pid=${pid%/environ}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    is_running "$pid" && echo "$pid"
  done
  return 0
}

# ask SOCKET REQUEST: one request line, the whole answer on stdout; fails when nobody answers.
ask() {
  /usr/bin/python3 - "$1" "$2" "$ASK_SECONDS" <<'PY'
import socket, sys
path, request, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(seconds)
    s.connect(path)
    s.sendall(("LONGPIPE-GATEWAY/1 " + request + "\n").encode())
    answer = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        answer += chunk
except OSError as error:
    sys.exit(f"{path}: {error}")
sys.stdout.write(answer.decode(errors="replace"))
PY
}

# --- one site -------------------------------------------------------------------------------

# start_site DIR SITE: starts the site's gateway in its namespace and waits until it answers SITE.
start_site() {
  local dir=$1 site=$2 socket daemon
  daemon=$(cat "$STATE_DIR/daemon")
  socket=$(socket_path "$dir" "$site")
  rm -f "$socket"
  LP_GATEWAYS_STATE=$STATE_DIR setsid "$WAN" "${WAN_ARGS[@]}" exec "${SITE_HOSTS[$site]}" "$daemon" --config "$dir/$site.conf" --foreground \
    </dev/null >>"$dir/$site.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$STATE_DIR/$site.pid"
  local deadline=$((SECONDS + START_SECONDS)) answer=""
  while ((SECONDS < deadline)); do
    is_running "$pid" || die "the gateway of site ${SITE_NAMES[$site]} exited: $(tail -n 5 "$dir/$site.log")"
    if [[ -S $socket ]] && answer=$(ask "$socket" SITE 2>/dev/null) && [[ $answer == "OK ${SITE_NAMES[$site]}" ]]; then
      return 0
    fi
    sleep 0.1
  done
  die "the gateway of site ${SITE_NAMES[$site]} did not answer SITE on $socket within $START_SECONDS s (answer '${answer}'): $(tail -n 5 "$dir/$site.log")"
}

stop_site() {
  local site=$1 pid
  pid=$(cat "$STATE_DIR/$site.pid" 2>/dev/null || true)
  [[ -n $pid ]] && is_running "$pid" && stop_pids "$pid"
  rm -f "$STATE_DIR/$site.pid"
}

# --- down -----------------------------------------------------------------------------------

# Removes everything an earlier `up` of this instance made, whether it finished or crashed.
tear_down() {
  local file site pids dir entry
  for file in "$STATE_DIR"/*.pid; do
    [[ -e $file ]] || continue
    site=${file##*/}; stop_site "${site%.pid}"
  done
  mapfile -t pids < <(tagged_pids)
  stop_pids "${pids[@]}"
  dir=$(recorded_dir)
  if [[ -n $dir ]]; then
    for file in "$dir"/*.sock; do [[ -S $file ]] && rm -f "$file"; done
  fi
  for entry in $(site_path_entries); do rm -rf "$entry"; done
  # The shared mount point stays while another instance's sites still use it.
  if ! compgen -G "/etc/netns/*/${SITE_DIR##*/}" >/dev/null; then rmdir "$SITE_DIR" 2>/dev/null || true; fi
  remove_paths
  rm -rf "$STATE_DIR"
}

cmd_down() {
  (($# == 0)) || die "down takes no options (but --instance before the command)"
  require_root
  tear_down
  say "down ($DESCRIPTION)"
}

# --- up -------------------------------------------------------------------------------------

cmd_up() {
  local dir="" daemon=$BUILD/daemon/longpiped
  ENGINE_SETTINGS=()
  STREAM_WINDOW=""
  local dial_out_args=() relay_args=() relay
  DIAL_OUT=() RELAYS=()
  while (($#)); do
    case $1 in
      --dir|--daemon|--engine|--stream-window|--dial-out|--relay)
        (($# >= 2)) && [[ -n $2 ]] || die "$1 needs a value"
        case $1 in
          --dir) dir=$2 ;;
          --daemon) daemon=$2 ;;
          --engine) [[ $2 =~ ^LONGPIPE_[A-Z0-9_]+=[^[:space:]]*$ ]] || die "--engine: '$2' is not LONGPIPE_NAME=VALUE"
                    ENGINE_SETTINGS+=("$2") ;;
          --stream-window) STREAM_WINDOW=$2 ;;
          --dial-out) dial_out_args+=("$2") ;;
          --relay) [[ $2 =~ ^[^,]+,[^,]+,[^,]+$ ]] || die "--relay: '$2' is not SITE,SITE,VIA"; relay_args+=("$2") ;;
        esac
        shift ;;
      -h|--help) usage; return 0 ;;
      *) die "up: unknown option '$1' (see netem/gateways --help)" ;;
    esac
    shift
  done
  require_root
  [[ -x $daemon ]] || die "longpiped is not built: $daemon (cmake --build build --target longpiped, or --daemon PATH)"
  sites_layout
  for relay in "${dial_out_args[@]}"; do mapfile -t -O "${#DIAL_OUT[@]}" DIAL_OUT < <(parse_site_list "$relay"); done
  for relay in "${relay_args[@]}"; do RELAYS+=("$(parse_site_list "$relay" | tr '\n' ' ' | sed 's/ $//')"); done
  for relay in "${dial_out_args[@]}" "${relay_args[@]}"; do parse_site_list "$relay" >/dev/null; done  # dies on a bad name
  check_paths
  "$WAN" "${WAN_ARGS[@]}" exec "${SITE_HOSTS[${SITE_KEYS[0]}]}" true 2>/dev/null ||
    die "the link ($DESCRIPTION) is not up: run netem/wan up first"
  [[ -n $dir ]] || dir=$BUILD/gateways/${STATE_DIR##*/}
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  local site socket
  for site in "${SITE_KEYS[@]}"; do
    socket=$(socket_path "$dir" "$site")
    ((${#socket} <= MAX_SOCKET_PATH)) || die "--dir: the socket path $socket is longer than $MAX_SOCKET_PATH bytes"
  done
  tear_down
  mkdir -p "$STATE_DIR"
  echo "$dir" >"$STATE_DIR/dir"
  readlink -f "$daemon" >"$STATE_DIR/daemon"
  save_layout
  save_paths
  UP_FINISHED=0
  trap 'if ((!UP_FINISHED)); then say "up failed; removing what it started"; tear_down; fi' EXIT

  (umask 077 && openssl rand -hex 32 >"$dir/federation.key")
  for site in "${SITE_KEYS[@]}"; do
    write_config "$dir" "$site"
    local check
    check=$("$daemon" --check --config "$dir/$site.conf" 2>&1) || die "longpiped --check refused $dir/$site.conf: $check"
    : >"$dir/$site.log"
  done
  # Each site's view of SITE_DIR (see above); created before any process of the sites needs it.
  mkdir -p "$SITE_DIR"
  local ns listening=()
  for site in "${SITE_KEYS[@]}"; do
    for ns in $(site_namespaces "$site"); do
      mkdir -p "/etc/netns/$ns/${SITE_DIR##*/}"
      ln -sfn "$(socket_path "$dir" "$site")" "/etc/netns/$ns/${SITE_DIR##*/}/${GATEWAY_PATH##*/}"
    done
  done
  apply_paths
  for site in "${SITE_KEYS[@]}"; do
    start_site "$dir" "$site"
    listening+=("${SITE_NAMES[$site]} (${SITE_ADDRESSES[$site]}:$GATEWAY_PORT)")
  done
  UP_FINISHED=1
  say "up ($DESCRIPTION): gateways ${listening[*]}; in a site LONGPIPE_GATEWAY=$GATEWAY_PATH; files in $dir"
}
