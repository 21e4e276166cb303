#!/usr/bin/env bash
# cmake --install puts LongPipe where GNUInstallDirs says, into a fresh prefix: the library in its
# private folder under every name it goes by, the C API's header, longpipe-config, the installed
# longpipe command, the documents and examples, the manual pages;
# and the installed library exports only the interface (exported_symbols_test.py).
# Usage: install_test.sh BUILD_DIR LIBDIR INCLUDEDIR LIBEXECDIR DOCDIR MANDIR VERSION -- SYMBOL-TEST-ARGS...
# (the directories relative to the prefix; SYMBOL-TEST-ARGS without --library).
set -euo pipefail
BUILD=$1 LIBDIR=$2 INCLUDEDIR=$3 LIBEXECDIR=$4 DOCDIR=$5 MANDIR=$6 VERSION=$7
shift 7
[[ ${1:-} == -- ]] && shift
fail() { echo "install_test: $*" >&2; exit 1; }

PREFIX=$(mktemp -d)
trap 'rm -rf "$PREFIX"' EXIT
cmake --install "$BUILD" --prefix "$PREFIX" >"$PREFIX.log" 2>&1 || { cat "$PREFIX.log" >&2; rm -f "$PREFIX.log"; fail "cmake --install failed"; }
rm -f "$PREFIX.log"

major=${VERSION%%.*}
library=$PREFIX/$LIBDIR/longpipe/liblongpipe.so.$VERSION
[[ -f $library && ! -L $library ]] || fail "no $LIBDIR/longpipe/liblongpipe.so.$VERSION"
for name in liblongpipe.so.$major liblongpipe.so; do
  [[ -L $PREFIX/$LIBDIR/longpipe/$name && $(readlink -f "$PREFIX/$LIBDIR/longpipe/$name") == "$(readlink -f "$library")" ]] ||
    fail "$LIBDIR/longpipe/$name does not name liblongpipe.so.$VERSION"
done
[[ -f $PREFIX/$INCLUDEDIR/longpipe.h ]] || fail "no $INCLUDEDIR/longpipe.h"
[[ -x $PREFIX/$LIBEXECDIR/longpipe/longpipe-config ]] || fail "no $LIBEXECDIR/longpipe/longpipe-config"
"$PREFIX/$LIBEXECDIR/longpipe/longpipe-config" >/dev/null || fail "the installed longpipe-config does not run"
for doc in LICENSE README.md CHANGELOG.md; do
  [[ -f $PREFIX/$DOCDIR/$doc ]] || fail "no $DOCDIR/$doc"
done
MANPAGES=("$MANDIR/man1/longpipe.1.gz" "$MANDIR/man7/longpipe.7.gz" "$MANDIR/man8/longpiped.8.gz")
for page in "${MANPAGES[@]}"; do
  [[ -f $PREFIX/$page ]] || fail "no $page"
  zcat "$PREFIX/$page" | grep -q "^\.TH .*\"LongPipe $VERSION\"" || fail "$page does not carry the version $VERSION"
done
# `man longpipe` finds the installed page (man-db, where it is installed).
if command -v man >/dev/null; then
  [[ $(MANPATH=$PREFIX/$MANDIR man -w longpipe 2>/dev/null) == "$PREFIX/${MANPAGES[0]}" ]] ||
    fail "man -w longpipe does not find ${MANPAGES[0]}"
  [[ $(MANPATH=$PREFIX/$MANDIR man -w 7 longpipe 2>/dev/null) == "$PREFIX/${MANPAGES[1]}" ]] ||
    fail "man -w 7 longpipe does not find ${MANPAGES[1]}"
fi
# The installed command finds the library and longpipe-config relative to itself.
[[ -x $PREFIX/bin/longpipe ]] || fail "no bin/longpipe"
[[ $("$PREFIX/bin/longpipe" --version) == "longpipe $VERSION" ]] || fail "bin/longpipe --version"
"$PREFIX/bin/longpipe" config >/dev/null || fail "bin/longpipe config does not run the installed longpipe-config"
"$PREFIX/bin/longpipe" run --help | grep -qF "LD_PRELOAD=$PREFIX/$LIBDIR/longpipe/liblongpipe.so.$major" ||
  fail "bin/longpipe run does not preload $LIBDIR/longpipe/liblongpipe.so.$major"
# The dial library (jobs on private hosts) beside it, and the installed mpirun's use of it.
[[ -f $PREFIX/$LIBDIR/longpipe/liblongpipe-dial.so ]] || fail "no $LIBDIR/longpipe/liblongpipe-dial.so"
"$PREFIX/bin/longpipe" mpirun --help | grep -qF "$PREFIX/$LIBDIR/longpipe/liblongpipe-dial.so" ||
  fail "bin/longpipe mpirun does not name $LIBDIR/longpipe/liblongpipe-dial.so"
# The site gateway: its program and its systemd unit template.
[[ -x $PREFIX/sbin/longpiped ]] || fail "no sbin/longpiped"
"$PREFIX/sbin/longpiped" --help >/dev/null 2>&1 || fail "the installed longpiped does not run"
[[ -f $PREFIX/lib/systemd/system/longpiped@.service ]] || fail "no lib/systemd/system/longpiped@.service"
# Nothing else: a file installed by mistake (a test program, a static library) fails here.
unexpected=$(cd "$PREFIX" && find . \( -type f -o -type l \) | sed 's|^\./||' | grep -vxF \
  -e "$LIBDIR/longpipe/liblongpipe.so.$VERSION" -e "$LIBDIR/longpipe/liblongpipe.so.$major" \
  -e "$LIBDIR/longpipe/liblongpipe.so" -e "$LIBDIR/longpipe/liblongpipe-dial.so" -e "$INCLUDEDIR/longpipe.h" -e "$LIBEXECDIR/longpipe/longpipe-config" \
  -e "$DOCDIR/LICENSE" -e "$DOCDIR/README.md" -e "$DOCDIR/CHANGELOG.md" -e bin/longpipe \
  -e "$DOCDIR/examples/settings.conf" -e share/doc/longpiped/examples/site.conf \
  -e sbin/longpiped -e "lib/systemd/system/longpiped@.service" -e "${MANPAGES[0]}" -e "${MANPAGES[1]}" -e "${MANPAGES[2]}" || true)
[[ -z $unexpected ]] || fail "unexpected files installed: $unexpected"

"$(dirname "$0")/exported_symbols_test.py" --library "$library" "$@" || fail "the installed library exports more than its interface"
echo "install_test: the installed tree under a fresh prefix is complete, and its library exports only the interface"
