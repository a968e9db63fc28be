#!/usr/bin/env bats
# The installed layout (issue 13): `make install DESTDIR=... PREFIX=/usr`
# puts the broker where the installed warden finds it, and what it installs
# works from there: a jail, a serve session, the replay chat, the man pages
# and the completions.  Where the build is there with its objects (the run
# from the top directory) the test uses `make install`/`make uninstall` on
# the binaries already built in $WARDEN's directory; in the unprivileged
# pass, whose staged copy has the binaries only, it uses tools/install.sh,
# the list that both make targets run.
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
	if [ -f "$WARDEN_TOP/Makefile" ] && [ -f "$BUILDDIR/libwarden.a" ]; then
		make -s -C "$WARDEN_TOP" --no-print-directory BUILD="$BUILDDIR" \
			DESTDIR="$D" PREFIX=/usr "$1"
	else
		DESTDIR="$D" PREFIX=/usr BUILD="$BUILDDIR" sh "$WARDEN_TOP/tools/install.sh" "$1"
	fi
}

EXPECTED="usr/bin/warden
usr/lib/systemd/user/warden.service
usr/lib/systemd/user/warden.socket
usr/libexec/warden/warden-broker
usr/libexec/warden/warden-egress
usr/share/bash-completion/completions/warden
usr/share/doc/warden/.install-dirs
usr/share/doc/warden/README.md
usr/share/doc/warden/SECURITY.md
usr/share/doc/warden/docs/chat.md
usr/share/doc/warden/docs/design.md
usr/share/doc/warden/docs/learn.md
usr/share/doc/warden/docs/mcp.md
usr/share/doc/warden/docs/policy.md
usr/share/doc/warden/docs/serve.md
usr/share/doc/warden/examples/config.json
usr/share/doc/warden/examples/data.json
usr/share/doc/warden/examples/demo.json
usr/share/doc/warden/examples/sales.csv
usr/share/man/man1/warden-audit.1
usr/share/man/man1/warden-chat.1
usr/share/man/man1/warden-doctor.1
usr/share/man/man1/warden-mcp.1
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

# Issue 20 (10): the README points to docs/, which nothing installed.  The
# documentation goes to share/doc/warden as in the tree, so every link of
# the installed README (and of the man pages to docs/) leads to a file.
@test "install: the documentation the README and the man pages point to is installed" {
	do_install install
	doc="$D/usr/share/doc/warden"
	cmp "$WARDEN_TOP/README.md" "$doc/README.md"
	n=0
	for link in $(grep -o '](\(docs/[a-z]*\.md\|SECURITY\.md\)' "$doc/README.md" | sed 's/^](//' | sort -u); do
		echo "README links to $link"
		[ -f "$doc/$link" ]
		n=$((n + 1))
	done
	[ "$n" -ge 5 ]
	for link in $(grep -ho 'docs/[a-z]*\.md' "$D"/usr/share/man/man1/*.1 | sort -u); do
		echo "a man page names $link"
		[ -f "$doc/$link" ]
	done
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
	# warden's own directories are gone, and those install made (libexec,
	# the completions' and man5); the ones that were there stay
	[ ! -e "$D/usr/libexec" ]
	[ ! -e "$D/usr/share/doc/warden" ]
	[ ! -e "$D/usr/share/man/man5" ]
	[ ! -e "$D/usr/share/bash-completion" ]
	[ -d "$D/usr/bin" ]
	[ -d "$D/usr/share/man/man1" ]
	[ -d "$D/usr/share/doc/other" ]
}

# Issue 20 (10): make uninstall printed nothing and left the empty
# directories install had made.  It says what it removes, and into an
# empty DESTDIR leaves it empty; a second uninstall says there was nothing.
@test "install: uninstall says what it removes and leaves no directory install made" {
	do_install install
	run do_install uninstall
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"removed $D/usr/bin/warden"* ]]
	[[ "$output" == *"removed $D/usr/libexec/warden/warden-broker"* ]]
	[[ "$output" == *"removed $D/usr/libexec/"* ]]
	run find "$D"
	echo "$output"
	[ "$output" = "$D" ]
	run do_install uninstall
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"nothing of warden's is installed under $D/usr"* ]]
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
	# issue 20 (9): without a key, the hint names the installed recording
	run env -u OPENAI_API_KEY "$D/usr/bin/warden" chat --workspace "$WS" hello
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"try --model replay:$ex/demo.json"* ]]
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
	[ "$n" -eq 9 ]
}

@test "install: each command's man page names every option of its --help, warden(1) every command" {
	do_install install
	w="$D/usr/bin/warden" man1="$D/usr/share/man/man1"
	for cmd in run chat serve mcp policy audit doctor; do
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

# Issue 20 (10): `--resume <TAB>` completed the files of the current
# directory, not the saved conversations ($XDG_DATA_HOME/warden/
# conversations, the names --resume takes), newest first.
@test "install: --resume completes the saved conversations, bash and zsh" {
	do_install install
	conv="$XDG_DATA_HOME/warden/conversations"
	mkdir -p "$conv"
	echo '[]' > "$conv/2031-01-01-older.json"
	echo '[]' > "$conv/2031-01-02-newer.json"
	touch -d '2031-01-01' "$conv/2031-01-01-older.json"
	touch -d '2031-01-02' "$conv/2031-01-02-newer.json"
	echo '{}' > "$WS/not-a-conversation.json"
	comp="$D/usr/share/bash-completion/completions/warden"
	run env PATH="$D/usr/bin:$PATH" bash -c '
		cd "$2"; source "$1"; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _warden
		echo "[${COMPREPLY[*]}]"' _ "$comp" "$WS" warden chat --resume ""
	echo "$output"
	[ "$output" = "[2031-01-02-newer.json 2031-01-01-older.json]" ]
	run env PATH="$D/usr/bin:$PATH" bash -c '
		cd "$2"; source "$1"; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _warden
		echo "[${COMPREPLY[*]}]"' _ "$comp" "$WS" warden --resume 2031-01-01
	[ "$output" = "[2031-01-01-older.json]" ]
	# a path is still a file
	run env PATH="$D/usr/bin:$PATH" bash -c '
		cd "$2"; source "$1"; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _warden
		echo "[${COMPREPLY[*]}]"' _ "$comp" "$WS" warden chat --resume ./not
	[ "$output" = "[./not-a-conversation.json]" ]
	# zsh: the same list, from the same directory
	zcomp="$D/usr/share/zsh/site-functions/_warden"
	grep -q "'--resume\[continue a saved conversation\]::conversation:_warden_conversations'" "$zcomp"
	run zsh -fc 'source "$1" >/dev/null 2>&1; _warden_conversation_names' _ "$zcomp"
	echo "$output"
	[ "${lines[0]}" = 2031-01-02-newer.json ]
	[ "${lines[1]}" = 2031-01-01-older.json ]
}

@test "install: the zsh completion parses and offers every command" {
	do_install install
	comp="$D/usr/share/zsh/site-functions/_warden"
	[ "$(head -1 "$comp")" = "#compdef warden" ]
	run zsh -n "$comp"
	echo "$output"
	[ "$status" -eq 0 ]
	for cmd in chat serve mcp run policy audit doctor version help; do
		grep -q "'$cmd:" "$comp"
	done
}
