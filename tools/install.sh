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
# install lists the directories it had to create in DOC/.install-dirs, so
# that uninstall removes those too once they are empty (and no other:
# /usr/local/libexec made by install goes, one that was there stays);
# debian/rules drops that list from the package, where dpkg owns the
# directories.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$top/$BUILD" ;; esac
ZSHCOMPDIR=${ZSHCOMPDIR:-$PREFIX/share/zsh/site-functions}
# systemd's user units (systemd.unit(5): /usr/lib/systemd/user, and
# /usr/local/lib/systemd/user for PREFIX=/usr/local)
USERUNITDIR=${USERUNITDIR:-$PREFIX/lib/systemd/user}
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
	# the documentation, laid out as in the tree: README.md's links work
	echo "0644 $top/README.md $DOC/README.md"
	echo "0644 $top/SECURITY.md $DOC/SECURITY.md"
	for f in "$top"/docs/*.md; do
		echo "0644 $f $DOC/docs/${f##*/}"
	done
	# warden.service names the installed warden: made from its .in here
	echo "0644 $top/systemd/warden.service.in $USERUNITDIR/warden.service"
	echo "0644 $top/systemd/warden.socket $USERUNITDIR/warden.socket"
}

# directories that are warden's alone: removed by uninstall when empty
own_dirs="$PREFIX/libexec/warden $DOC/examples $DOC/docs $DOC"
record="$DOC/.install-dirs"

# The directories of a list (one a line), deepest first.
deepest_first() {
	awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-
}

case ${1:-} in
install)
	made=$(mktemp)
	trap 'rm -f "$made"' EXIT
	manifest | while read -r mode src dst; do
		[ -f "$src" ] || { echo "tools/install.sh: $src is missing: run make first" >&2; exit 1; }
		d=$(dirname "$DESTDIR$dst")
		while [ ! -d "$d" ]; do
			echo "${d#"$DESTDIR"}" >> "$made"
			d=$(dirname "$d")
		done
		case $src in
		*.in)
			tmp=$(mktemp)
			sed "s|@BINDIR@|$PREFIX/bin|g" "$src" > "$tmp"
			install -D -m "$mode" "$tmp" "$DESTDIR$dst"
			rm -f "$tmp" ;;
		*)
			install -D -m "$mode" "$src" "$DESTDIR$dst" ;;
		esac
		echo "installed $DESTDIR$dst"
	done
	# with what an earlier install made (a reinstall makes nothing new)
	if [ -f "$DESTDIR$record" ]; then cat "$DESTDIR$record" >> "$made"; fi
	sort -u "$made" > "$DESTDIR$record"
	chmod 0644 "$DESTDIR$record" ;;
uninstall)
	found=0
	manifest | { while read -r mode src dst; do
		if [ -e "$DESTDIR$dst" ] || [ -L "$DESTDIR$dst" ]; then
			rm -f "$DESTDIR$dst"
			echo "removed $DESTDIR$dst"
			found=1
		fi
	done; [ "$found" = 1 ]; } && found=1
	dirs=$(for d in $own_dirs; do echo "$d"; done
	       if [ -f "$DESTDIR$record" ]; then cat "$DESTDIR$record"; fi)
	if [ -f "$DESTDIR$record" ]; then rm -f "$DESTDIR$record"; found=1; fi
	printf '%s\n' "$dirs" | deepest_first | while read -r d; do
		if [ -n "$d" ] && [ -d "$DESTDIR$d" ] && rmdir "$DESTDIR$d" 2>/dev/null; then
			echo "removed $DESTDIR$d/"
		fi
	done
	[ "$found" = 1 ] || echo "nothing of warden's is installed under $DESTDIR$PREFIX" ;;
list)
	manifest | while read -r mode src dst; do echo "$dst"; done ;;
*)
	echo "usage: tools/install.sh install|uninstall|list" >&2
	exit 2 ;;
esac
