#!/bin/sh
# What `make install` puts where, and what `make uninstall` removes: one
# list, so that uninstall removes exactly what install put there.
#
#   tools/install.sh install|uninstall|list
#
# Variables (from make or the environment): DESTDIR, PREFIX (/usr/local),
# BUILD (build: where warden, warden-broker and warden-egress were built),
# ZSHCOMPDIR.  The broker and the egress proxy go to PREFIX/libexec/warden/:
# warden finds them there relative to its own path
# (BINDIR/../libexec/warden/warden-broker, supervisor/broker.c; the same for
# warden-egress, supervisor/egress_start.c), so bin and libexec must stay
# siblings under PREFIX.  Nothing here creates users: the Debian package's
# postinst creates the user `warden` that both run as when warden runs as
# root (docs/design.md, "Two executables" and "the egress proxy's process").
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$top/$BUILD" ;; esac
ZSHCOMPDIR=${ZSHCOMPDIR:-$PREFIX/share/zsh/site-functions}
MAN=$PREFIX/share/man
DOC=$PREFIX/share/doc/warden

# MODE SOURCE DESTINATION, one file a line
manifest() {
	echo "0755 $BUILD/warden $PREFIX/bin/warden"
	echo "0755 $BUILD/warden-broker $PREFIX/libexec/warden/warden-broker"
	echo "0755 $BUILD/warden-egress $PREFIX/libexec/warden/warden-egress"
	for page in "$top"/man/*.[15]; do
		echo "0644 $page $MAN/man${page##*.}/${page##*/}"
	done
	echo "0644 $top/completion/warden.bash $PREFIX/share/bash-completion/completions/warden"
	echo "0644 $top/completion/_warden $ZSHCOMPDIR/_warden"
	echo "0644 $top/examples/config.json $DOC/examples/config.json"
	echo "0644 $top/examples/data.json $DOC/examples/data.json"
	echo "0644 $top/examples/demo.json $DOC/examples/demo.json"
	echo "0644 $top/examples/sales.csv $DOC/examples/sales.csv"
}

# directories that are warden's alone: removed by uninstall when empty
own_dirs="$PREFIX/libexec/warden $DOC/examples $DOC"

case ${1:-} in
install)
	manifest | while read -r mode src dst; do
		[ -f "$src" ] || { echo "tools/install.sh: $src is missing: run make first" >&2; exit 1; }
		install -D -m "$mode" "$src" "$DESTDIR$dst"
		echo "installed $DESTDIR$dst"
	done ;;
uninstall)
	manifest | while read -r mode src dst; do
		rm -f "$DESTDIR$dst"
	done
	for d in $own_dirs; do
		[ -d "$DESTDIR$d" ] && rmdir "$DESTDIR$d" 2>/dev/null || true
	done ;;
list)
	manifest | while read -r mode src dst; do echo "$dst"; done ;;
*)
	echo "usage: tools/install.sh install|uninstall|list" >&2
	exit 2 ;;
esac
