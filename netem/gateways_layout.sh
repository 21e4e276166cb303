# shellcheck shell=bash
# netem/gateways_layout.sh: which sites netem/gateways serves and where, sourced by it: the two-site
# layout, or the multi-site one read from netem/wan's state; the layout `up` records for the other
# commands; the namespaces and /etc/netns entries of a site; the gateways' directory and sockets.

# site_key SITE: the key (a, b, s1, s2, ...) of a site of the layout in use.
site_key() {
  local key
  case $1 in
    a|site-a|A) key=a ;;
    b|site-b|B) key=b ;;
    [sS][0-9]*|[0-9]*) key=s${1#[sS]}; key=${key%-gw} ;;
    *) key=$1 ;;
  esac
  [[ -n ${SITE_NAMES[$key]:-} ]] || die "no site '$1' here (sites: ${SITE_KEYS[*]})"
  echo "$key"
}

# sites_layout: the multi-site layout from netem/wan's state, when the instance is in that mode
# (site count, open port); the two-site layout stays otherwise.
sites_layout() {
  [[ -r $WAN_SITES_STATE && -e /var/run/netns/$PREFIX-core ]] || return 0
  local count port site
  count=$(awk -F= '$1 == "sites" {print $2}' "$WAN_SITES_STATE")
  port=$(awk -F= '$1 == "firewall" {print $2}' "$WAN_SITES_STATE")
  [[ $count =~ ^[0-9]+$ ]] || die "netem/wan's state $WAN_SITES_STATE names no site count"
  [[ $port =~ ^[0-9]+$ ]] || port=$SITES_DEFAULT_OPEN_PORT   # firewall off: every port is open
  SITE_NAMES=() SITE_ADDRESSES=() SITE_HOSTS=() SITE_KEYS=()
  for ((site = 1; site <= count; site++)); do
    SITE_KEYS+=("s$site")
    SITE_NAMES[s$site]=S$site
    SITE_ADDRESSES[s$site]=$SITES_CORE_NET.$site
    SITE_HOSTS[s$site]=s$site-gw
  done
  GATEWAY_PORT=$port
}

# The layout `up` recorded (read by the other commands), and its writer.
save_layout() {
  local key
  {
    echo "port $GATEWAY_PORT"
    for key in "${SITE_KEYS[@]}"; do echo "site $key ${SITE_NAMES[$key]} ${SITE_ADDRESSES[$key]} ${SITE_HOSTS[$key]}"; done
  } >"$STATE_DIR/layout"
}
load_layout() {
  [[ -r $STATE_DIR/layout ]] || return 0
  local kind key name address host
  SITE_NAMES=() SITE_ADDRESSES=() SITE_HOSTS=() SITE_KEYS=()
  while read -r kind key name address host; do
    case $kind in
      port) GATEWAY_PORT=$key ;;
      site) SITE_KEYS+=("$key") SITE_NAMES[$key]=$name SITE_ADDRESSES[$key]=$address SITE_HOSTS[$key]=$host ;;
    esac
  done <"$STATE_DIR/layout"
}

# site_namespaces KEY: every namespace of a site (a two-site site, or a gateway host and its
# compute hosts), each of which gets the site path.
site_namespaces() {
  local key=$1 path
  case $key in
    a|b) echo "$PREFIX-site-$key" ;;
    *) for path in /var/run/netns/"$PREFIX-$key"-gw /var/run/netns/"$PREFIX-$key"-h[0-9]*; do
         [[ -e $path && ${path##*/} =~ ^$PREFIX-$key-(gw|h[0-9]+)$ ]] && echo "${path##*/}"
       done ;;
  esac
  return 0
}

# Every /etc/netns entry holding this instance's site path (both modes, also after a crash).
site_path_entries() {
  local entry ns
  for entry in /etc/netns/"$PREFIX"-*/"${SITE_DIR##*/}"; do
    ns=${entry%/*}; ns=${ns##*/}
    [[ -e $entry && $ns =~ ^$PREFIX-(site-[ab]|s[0-9]+-gw|s[0-9]+-h[0-9]+)$ ]] && echo "$entry"
  done
  return 0
}

# The directory of the running gateways (recorded by `up`), or nothing.
recorded_dir() { cat "$STATE_DIR/dir" 2>/dev/null || true; }

socket_path() { echo "$1/$2.sock"; }
