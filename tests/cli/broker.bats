#!/usr/bin/env bats
# The broker's identity and directories, judged from outside: /proc, the
# files on the host.  As root the broker runs as its own system user
# (`warden`, design.md "Two executables"); as an ordinary user, as that
# user.  Either way its config and data are the XDG directories of the
# person who ran warden, handed over as fds.
load ../helpers

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-broker.XXXXXX)
	export HOME="$T/home" XDG_CONFIG_HOME="$T/config" XDG_DATA_HOME="$T/data"
	mkdir -p "$HOME"
	unset OPENAI_API_KEY ANTHROPIC_API_KEY
	cp "$WARDEN_TOP/examples/sales.csv" "$WS/"
}

teardown() {
	rm -rf "$T"
	common_teardown
}

# the uid the broker must run as
broker_uid() {
	if is_root; then id -u warden; else id -u; fi
}

replay_chat() {
	run timeout -k 5 120 "$WARDEN" chat -y --workspace "$WS" \
		--model "replay:$WARDEN_TOP/examples/demo.json" "Analyse sales.csv"
}

@test "broker: runs as its own user as root (not root, not nobody), else as the caller" {
	want=$(broker_uid)
	if is_root; then
		[ "$want" != 0 ]
		[ "$want" != "$(id -u nobody)" ]
	fi
	run env WARDEN="$WARDEN" EXPECT_BROKER_UID="$want" \
		python3 "$WARDEN_TOP/tests/cli/serve_client.py" broker_env --workspace "$WS"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok broker_env"* ]]
}

@test "broker: conversations land in the caller's XDG data dir, written by the broker" {
	# a checkout in a 0700 directory (e.g. /root/src): the replay file is
	# out of the broker user's reach by path
	chmod 700 "$T"
	replay_chat
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"30 rows; columns: date, region, product, units, revenue"* ]]
	f=$(ls "$XDG_DATA_HOME"/warden/conversations/*.json)
	[ -s "$f" ]
	[ "$(stat -c %u "$f")" = "$(broker_uid)" ]
	if is_root; then
		# created for the broker: root's, group warden, setgid, 2770
		[ "$(stat -c '%U %G %a' "$XDG_DATA_HOME/warden")" = "root warden 2770" ]
	fi
}

@test "broker: a data dir the broker user cannot write is an error naming it and the fix" {
	if ! is_root; then
		# as the caller the broker can write whatever the caller can
		mkdir -p "$XDG_DATA_HOME/warden"
		chmod 500 "$XDG_DATA_HOME/warden"
		replay_chat
		chmod 700 "$XDG_DATA_HOME/warden"
		[ "$status" -ne 0 ]
		[[ "$output" == *"$XDG_DATA_HOME/warden"* ]]
		return 0
	fi
	mkdir -p "$XDG_DATA_HOME/warden"
	chmod 700 "$XDG_DATA_HOME/warden"
	replay_chat
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"$XDG_DATA_HOME/warden"* ]]
	[[ "$output" == *"chgrp warden"* ]]
}

@test "broker: a missing broker user is an error with the command that creates it" {
	if ! is_root; then
		# not root: the broker runs as the caller, --broker-user is not used
		run timeout 60 "$WARDEN" serve --stdio --broker-user no-such-user-xyz </dev/null
		[ "$status" -eq 0 ]
		return 0
	fi
	run timeout 60 "$WARDEN" serve --stdio --broker-user no-such-user-xyz </dev/null
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *"useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin no-such-user-xyz"* ]]
}

@test "broker: as root its user cannot write the audit log's directory" {
	if ! is_root; then
		# the caller's audit log is under XDG_STATE_HOME, outside the
		# broker's Landlock rules: the next test
		run true
		return 0
	fi
	# the default audit log, so that /var/log/warden exists
	env -u WARDEN_AUDIT_LOG "$WARDEN" run --quiet --workspace "$WS" -- /bin/true
	[ -d /var/log/warden ]
	run setpriv --reuid warden --regid warden --clear-groups -- \
		sh -c 'echo x > /var/log/warden/broker-was-here'
	[ "$status" -ne 0 ]
	[ ! -e /var/log/warden/broker-was-here ]
}

@test "broker: a write outside its data dir is refused by Landlock (G19)" {
	# conversations/ is a link to a directory anyone may write: only the
	# broker's Landlock rules stand between it and the file
	mkdir -p "$XDG_DATA_HOME/warden" "$T/outside"
	chmod 1777 "$T/outside"
	chmod 755 "$T"
	if is_root; then
		chgrp warden "$XDG_DATA_HOME/warden"
		chmod 2770 "$XDG_DATA_HOME/warden"
	fi
	ln -s "$T/outside" "$XDG_DATA_HOME/warden/conversations"
	replay_chat
	echo "$output"
	[[ "$output" == *"ermission denied"* ]]
	[ -z "$(ls -A "$T/outside")" ]
}

@test "broker: a config.json the broker cannot read is an error naming it and the fix" {
	mkdir -p "$XDG_CONFIG_HOME/warden"
	echo '{"auto_run": true}' > "$XDG_CONFIG_HOME/warden/config.json"
	chmod 000 "$XDG_CONFIG_HOME/warden/config.json"
	replay_chat
	echo "$output"
	[ "$status" -eq 2 ]
	[[ "$output" == *"$XDG_CONFIG_HOME/warden/config.json"* ]]
	[[ "$output" == *"chmod g+r"* ]]
}

@test "broker: a data dir that is a symlink (planted by jailed code) is refused, nothing written where it leads (G192)" {
	mkdir -p "$T/elsewhere" "$XDG_DATA_HOME"
	ln -s "$T/elsewhere" "$XDG_DATA_HOME/warden"
	replay_chat
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"$XDG_DATA_HOME/warden"*symlink* ]]
	[ -z "$(ls -A "$T/elsewhere")" ]
}

@test "broker: a symlink on the way to the config dir is refused too (G192)" {
	mkdir -p "$T/realconfig"
	ln -s "$T/realconfig" "$XDG_CONFIG_HOME"
	replay_chat
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"$XDG_CONFIG_HOME"*symlink* ]]
	[ ! -e "$T/realconfig/warden" ]
}

@test "broker: a data dir owned by someone else is refused (G192)" {
	if is_root; then
		mkdir -p "$XDG_DATA_HOME/warden"
		chown nobody "$XDG_DATA_HOME/warden"
	else
		# only root can give a directory away; tests/run.sh's unprivileged
		# stage is a copy root made, so its include/warden is another's
		[ "$(stat -c %u "$WARDEN_TOP/include/warden")" != "$(id -u)" ] ||
			skip_unless_works "no directory named warden of another user here (tests/run.sh's stage has one)"
		export XDG_DATA_HOME="$WARDEN_TOP/include"
	fi
	replay_chat
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"$XDG_DATA_HOME/warden"*owned* ]]
}
