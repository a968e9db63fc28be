#!/usr/bin/env bats
# `warden run` on a real terminal (script(1) gives it a pty): escape
# sequences from the jail are neutralised on a stream that is a terminal,
# judged per stream; --raw, pipes and files get the bytes unchanged.
# Finding 8 of the red-team review: jailed output could retitle the
# window, rewrite the screen or set the clipboard (OSC 52).
load ../helpers

setup() {
	common_setup
	# title (OSC 0), clipboard (OSC 52), clear screen (CSI 2J), and an
	# OSC split across two writes, hence two reads; UTF-8 around them
	cat > "$WS/esc.sh" <<-'SH'
	printf 'a\033]0;pwned-title\007b\n'
	printf '\033]52;c;cHduZWQ=\007\n'
	printf '\033[2Jcleared\n'
	printf 'caf\303\251 \342\202\254 \360\237\230\200 \033'
	sleep 0.2
	printf ']0;split-title\007end\n'
	printf 'err\033]0;stderr-title\007\n' >&2
	SH
}
teardown() { rm -f "$WS.out" "$WS.err"; common_teardown; }

# on_tty CMD...: run CMD (a shell command line) with a pty as its terminal;
# what the terminal received is in $output
on_tty() {
	run script -qfec "$*" /dev/null
	echo "status $status: $output" | cat -v
}

no_esc() { [[ "$1" != *$'\e'* ]] && [[ "$1" != *$'\a'* ]]; }

@test "run on a terminal: OSC and CSI sequences from the jail arrive neutralised" {
	on_tty "'$WARDEN' run --workspace '$WS' -- /bin/sh ./esc.sh"
	[ "$status" -eq 0 ]
	no_esc "$output"
	[[ "$output" == *'a^[]0;pwned-title^Gb'* ]]
	[[ "$output" == *'^[]52;c;cHduZWQ=^G'* ]]
	[[ "$output" == *'^[[2Jcleared'* ]]
	[[ "$output" == *'^[]0;split-title^Gend'* ]]
	[[ "$output" == *'err^[]0;stderr-title^G'* ]]
	# UTF-8 intact
	[[ "$output" == *'café € 😀 '* ]]
}

@test "run on a terminal with --raw: the bytes pass unchanged" {
	on_tty "'$WARDEN' run --raw --workspace '$WS' -- /bin/sh ./esc.sh"
	[ "$status" -eq 0 ]
	[[ "$output" == *$'a\e]0;pwned-title\ab'* ]]
	[[ "$output" == *$'\e]52;c;cHduZWQ=\a'* ]]
	[[ "$output" == *$'\e]0;split-title\aend'* ]]
}

@test "run: each stream is judged on its own (terminal vs file)" {
	on_tty "'$WARDEN' run --workspace '$WS' -- /bin/sh ./esc.sh 2>'$WS.err'"
	[ "$status" -eq 0 ]
	no_esc "$output"
	# (unprivileged, warden's own warnings about rlimit fallbacks follow)
	grep -q $'^err\e]0;stderr-title\a$' "$WS.err"
	on_tty "'$WARDEN' run --workspace '$WS' -- /bin/sh ./esc.sh >'$WS.out'"
	[ "$status" -eq 0 ]
	no_esc "$output"
	[[ "$output" == *'err^[]0;stderr-title^G'* ]]
	grep -q $'a\e]0;pwned-title\ab' "$WS.out"
}

@test "run into a pipe: output passes unchanged" {
	run "$WARDEN" run --workspace "$WS" -- /bin/sh ./esc.sh
	[ "$status" -eq 0 ]
	[[ "$output" == *$'a\e]0;pwned-title\ab'* ]]
	[[ "$output" == *$'\e]0;split-title\aend'* ]]
}
