#!/usr/bin/env bats
# The installed layout (issue 13): `make install DESTDIR=... PREFIX=/usr`
# puts the broker where the installed warden finds it, and what it installs
# works from there: a jail, a serve session, the replay chat, the man pages
# and the completions.  Where the Makefile is present (the run from the top
# directory) the test uses `make install`/`make uninstall` on the binaries
# already built in $WARDEN's directory; in the unprivileged pass, whose
# staged copy has no Makefile, it uses tools/install.sh, the list that both
# make targets run.
load ../helpers

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-install.XXXXXX)
	chmod 755 "$T"
	D="$T/root"
	BUILDDIR=$(cd "$(dirname "$WARDEN")" && pwd)
	unset WARDEN_BROKER WARDEN_EGRESS
	export HOME="$T/home" XDG_CONFIG_HOME="$T/config" XDG_DATA_HOME="$T/data"
	mkdir -p "$HOME"
}

teardown() {
	rm -rf "$T"
	common_teardown
}

# do_install install|uninstall: into $D with PREFIX=/usr
do_install() {
	if [ -f "$WARDEN_TOP/Makefile" ]; then
		make -s -C "$WARDEN_TOP" --no-print-directory BUILD="$BUILDDIR" \
			DESTDIR="$D" PREFIX=/usr "$1"
	else
		DESTDIR="$D" PREFIX=/usr BUILD="$BUILDDIR" sh "$WARDEN_TOP/tools/install.sh" "$1"
	fi
}

EXPECTED="usr/bin/warden
usr/libexec/warden/warden-broker
usr/libexec/warden/warden-egress
usr/share/bash-completion/completions/warden
usr/share/doc/warden/examples/config.json
usr/share/doc/warden/examples/data.json
usr/share/doc/warden/examples/demo.json
usr/share/doc/warden/examples/sales.csv
usr/share/man/man1/warden-audit.1
usr/share/man/man1/warden-chat.1
usr/share/man/man1/warden-doctor.1
usr/share/man/man1/warden-policy.1
usr/share/man/man1/warden-run.1
usr/share/man/man1/warden-serve.1
usr/share/man/man1/warden.1
usr/share/man/man5/warden-policy.5
usr/share/zsh/site-functions/_warden"

@test "install: puts warden, its broker and egress proxy, man pages, completions and examples under PREFIX" {
	run do_install install
	echo "$output"
	[ "$status" -eq 0 ]
	run bash -c "cd '$D' && find . -type f -o -type l | sed 's|^\./||' | LC_ALL=C sort"
	echo "$output"
	[ "$output" = "$EXPECTED" ]
	[ -x "$D/usr/bin/warden" ]
	[ -x "$D/usr/libexec/warden/warden-broker" ]
	# what was installed is what was built, not a rebuild
	cmp "$BUILDDIR/warden" "$D/usr/bin/warden"
	cmp "$BUILDDIR/warden-broker" "$D/usr/libexec/warden/warden-broker"
	cmp "$BUILDDIR/warden-egress" "$D/usr/libexec/warden/warden-egress"
}

@test "install: uninstall removes exactly what install put there" {
	mkdir -p "$D/usr/bin" "$D/usr/share/man/man1" "$D/usr/share/doc/other"
	echo keep > "$D/usr/bin/other"
	echo keep > "$D/usr/share/man/man1/other.1"
	echo keep > "$D/usr/share/doc/other/README"
	do_install install
	[ -x "$D/usr/libexec/warden/warden-broker" ]
	run do_install uninstall
	[ "$status" -eq 0 ]
	run bash -c "cd '$D' && find . -type f | sed 's|^\./||' | LC_ALL=C sort"
	echo "$output"
	[ "$output" = "usr/bin/other
usr/share/doc/other/README
usr/share/man/man1/other.1" ]
	# warden's own directories are gone, shared ones stay
	[ ! -e "$D/usr/libexec/warden" ]
	[ ! -e "$D/usr/share/doc/warden" ]
	[ -d "$D/usr/bin" ]
	[ -d "$D/usr/share/man/man1" ]
}

@test "install: the installed warden runs a jail and finds its broker and egress proxy in PREFIX/libexec/warden" {
	do_install install
	[ ! -e "$D/usr/bin/warden-broker" ]
	run "$D/usr/bin/warden" run --quiet --workspace "$WS" -- sh -c 'echo from-the-jail > out; echo done'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = done ]
	[ "$(cat "$WS/out")" = from-the-jail ]
	# serve --stdio starts the broker: open a session, run blocks in it
	run env WARDEN="$D/usr/bin/warden" \
		python3 "$WARDEN_TOP/tests/cli/serve_client.py" python_state --workspace "$WS"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok python_state"* ]]
	# network mode proxy starts the installed egress proxy (libexec/warden)
	run "$D/usr/bin/warden" run --quiet --workspace "$WS" --net proxy -- \
		sh -c 'curl -sS -i http://not-allowed.warden.test/ | head -n 1'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
}

@test "install: the installed chat replays the installed demo with the example config" {
	do_install install
	ex="$D/usr/share/doc/warden/examples"
	mkdir -p "$XDG_CONFIG_HOME/warden/profiles"
	cp "$ex/config.json" "$XDG_CONFIG_HOME/warden/"
	cp "$ex/data.json" "$XDG_CONFIG_HOME/warden/profiles/"
	chmod -R a+rX "$XDG_CONFIG_HOME"
	cp "$ex/sales.csv" "$WS/"
	run "$D/usr/bin/warden" policy list
	[[ "$output" == *"data       $XDG_CONFIG_HOME/warden/profiles/data.json"* ]]
	# chat profile "data" of the example config picks the example profile
	run timeout -k 5 120 "$D/usr/bin/warden" chat --profile data -y --workspace "$WS" \
		--model "replay:$ex/demo.json" go
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"sandbox profile: data"* ]]
	[[ "$output" == *"30 rows; columns: date, region, product, units, revenue"* ]]
	grep -q '<svg' "$WS/revenue_by_region.svg"
}

@test "install: every man page renders without warnings" {
	do_install install
	n=0
	for page in "$D"/usr/share/man/man[15]/*; do
		run bash -c "LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l -P cat '$page' 2>&1 >/dev/null"
		echo "$page: $output"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		run bash -c "groff -man -ww -z '$page' 2>&1"
		echo "$page: $output"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
		run bash -c "LC_ALL=C.UTF-8 MANWIDTH=80 man -l -P cat '$page'"
		[[ "$output" == *NAME*SYNOPSIS*DESCRIPTION*"SEE ALSO"* ]]
		n=$((n + 1))
	done
	[ "$n" -eq 8 ]
}

@test "install: each command's man page names every option of its --help, warden(1) every command" {
	do_install install
	w="$D/usr/bin/warden" man1="$D/usr/share/man/man1"
	for cmd in run chat serve policy audit doctor; do
		opts=$("$w" "$cmd" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
		[ -n "$opts" ] || [ "$cmd" = policy ] || [ "$cmd" = doctor ]
		for o in $opts; do
			grep -qF -- "$(printf '%s' "$o" | sed 's/-/\\-/g')" "$man1/warden-$cmd.1" ||
				{ echo "warden-$cmd.1 does not describe $o"; return 1; }
		done
		grep -qF "warden\\-$cmd (1)" "$man1/warden.1" || { echo "warden.1 does not name warden-$cmd(1)"; return 1; }
	done
	for word in check show list; do grep -q "^.B.* $word" "$man1/warden-policy.1"; done
}

@test "install: bash completion completes commands, options and profile names" {
	do_install install
	mkdir -p "$XDG_CONFIG_HOME/warden/profiles"
	cp "$D/usr/share/doc/warden/examples/data.json" "$XDG_CONFIG_HOME/warden/profiles/"
	comp="$D/usr/share/bash-completion/completions/warden"
	# complete WORDS...: what <TAB> offers after the words (the last is being typed)
	run env PATH="$D/usr/bin:$PATH" bash -c '
		source "$1"; shift
		complete -p warden
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _warden
		echo "[${COMPREPLY[*]}]"' _ "$comp" warden r
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "complete -F _warden warden" ]
	[ "${lines[1]}" = "[run]" ]
	run env PATH="$D/usr/bin:$PATH" bash -c '
		source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _warden
		echo "[${COMPREPLY[*]}]"' _ "$comp" warden run --profile ""
	echo "$output"
	[ "$output" = "[data network strict workspace]" ]
	run env PATH="$D/usr/bin:$PATH" bash -c '
		source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _warden
		echo "[${COMPREPLY[*]}]"' _ "$comp" warden serve --allow-w
	[ "$output" = "[--allow-workspace]" ]
	# bash-completion's loader finds it by the command's name
	[ "$(basename "$comp")" = warden ]
}

@test "install: the zsh completion parses and offers every command" {
	do_install install
	comp="$D/usr/share/zsh/site-functions/_warden"
	[ "$(head -1 "$comp")" = "#compdef warden" ]
	run zsh -n "$comp"
	echo "$output"
	[ "$status" -eq 0 ]
	for cmd in chat serve run policy audit doctor version help; do
		grep -q "'$cmd:" "$comp"
	done
}
