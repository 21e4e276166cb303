#!/usr/bin/env bash
# sites_exec_preloaded.sh PVM_SITES SITE LIBRARY CMD [ARGS...]
# Runs CMD on an emulated site (a or b) through apps/pvm-sites with LIBRARY (liblongpipe.so)
# preloaded into it and into every task it spawns, in any build. A sanitizer build of the library
# needs the ASan (or TSan) runtime it links loaded FIRST (also into programs that are not instrumented, such
# as Debian's), which `pvm-sites exec --preload` (one library) cannot say: the list then goes in
# through LD_PRELOAD inside the site, and PVM_EXPORT passes it (with the options) on to spawned
# tasks. Leak reports from libpvm3 are not LongPipe's to judge (detect_leaks=0 unless set).
# Variables set with `env NAME=VALUE CMD` after LIBRARY stay CMD's own (not exported to tasks).
set -euo pipefail
(($# >= 4)) || { echo "usage: $0 PVM_SITES SITE LIBRARY CMD [ARGS...]" >&2; exit 2; }
sites=$1 site=$2 library=$3
shift 3
runtime=$(ldd "$library" | awk '/lib(asan|tsan)/ {print $3}')
if [[ -z $runtime ]]; then
  exec "$sites" exec "$site" --preload "$library" "$@"
fi
export PVM_EXPORT=${PVM_EXPORT:+$PVM_EXPORT:}LD_PRELOAD:ASAN_OPTIONS:TSAN_OPTIONS ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
exec "$sites" exec "$site" env LD_PRELOAD="$runtime $(readlink -f "$library")" "$@"
