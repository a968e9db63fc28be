#!/usr/bin/env bats
# The Debian package (issue 13), built the Debian way from a copy of the
# source tree, installed on this machine with dpkg -i, used, and purged.
# Root only: tests/run.sh runs it in the root pass, never in the
# unprivileged one.  Slow (a full build): about half a minute.
load ../helpers

setup() {
	common_setup
	T=$(mktemp -d /tmp/warden-deb.XXXXXX)
	OURS=0
}

teardown() {
	if [ "$OURS" = 1 ] && dpkg -s warden >/dev/null 2>&1; then
		dpkg --purge warden >/dev/null 2>&1
	fi
	rm -rf "$T"
	common_teardown
}

@test "debian: dpkg-buildpackage builds warden; dpkg -i installs a working warden; purge removes it" {
	is_root || { skip_unless_works "building and installing the package needs root"; return; }
	command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
		{ skip_unless_works "dpkg-dev and debhelper are not installed (tools/deps.sh)"; return; }
	# never replace or remove an installation this test did not make
	run dpkg -s warden
	[ "$status" -ne 0 ] || { echo "a warden package is installed already: dpkg --purge warden first"; return 1; }
	src="$T/warden-0.1.0"
	mkdir -p "$src"
	(cd "$WARDEN_TOP" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 cp --parents -t "$src")
	[ -x "$src/debian/rules" ]
	run bash -c "cd '$src' && dpkg-buildpackage -us -uc -b 2>&1"
	echo "$output" | tail -30
	[ "$status" -eq 0 ]
	deb="$T/warden_0.1.0_$(dpkg --print-architecture).deb"
	[ -f "$deb" ]
	OURS=1
	run dpkg -i "$deb"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -x /usr/bin/warden ]
	[ -x /usr/libexec/warden/warden-broker ]
	[ -x /usr/libexec/warden/warden-egress ]
	# the broker's system user: no shell, no home (postinst, or tests/run.sh before it)
	run getent passwd warden
	[ "$status" -eq 0 ]
	[[ "$output" == *":/nonexistent:/usr/sbin/nologin" ]]
	run /usr/bin/warden doctor
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" =~ broker\ user\ +ok ]]
	[[ "$output" =~ warden\ run\ true\ +ok ]]
	run /usr/bin/warden run --quiet --workspace "$WS" -- true
	[ "$status" -eq 0 ]
	run /usr/bin/warden run --quiet --workspace "$WS" -- sh -c 'echo packaged > out'
	[ "$status" -eq 0 ]
	[ "$(cat "$WS/out")" = packaged ]
	# the installed broker is found: serve --stdio opens a session and runs blocks
	run env WARDEN=/usr/bin/warden \
		python3 "$WARDEN_TOP/tests/cli/serve_client.py" python_state --workspace "$WS"
	echo "$output"
	[ "$status" -eq 0 ]
	# the man pages are where man finds them; the examples are not compressed
	[ "$(man -w warden-policy.5)" = /usr/share/man/man5/warden-policy.5.gz ]
	[ -f /usr/share/doc/warden/examples/demo.json ]
	# the documentation README.md points to, uncompressed (issue 20)
	[ -f /usr/share/doc/warden/README.md ]
	[ -f /usr/share/doc/warden/docs/policy.md ]
	[ ! -e /usr/share/doc/warden/.install-dirs ]
	# the systemd user units, naming the packaged warden, pass verify
	[ -f /usr/lib/systemd/user/warden.socket ]
	grep -q '^ExecStart=/usr/bin/warden serve --listen systemd ' /usr/lib/systemd/user/warden.service
	mkdir -p "$T/rt"
	chmod 700 "$T/rt"
	run env XDG_RUNTIME_DIR="$T/rt" systemd-analyze verify --user \
		/usr/lib/systemd/user/warden.socket /usr/lib/systemd/user/warden.service
	echo "$output"
	[ "$status" -eq 0 ]
	run dpkg --purge warden
	echo "$output"
	[ "$status" -eq 0 ]
	OURS=0
	[ ! -e /usr/bin/warden ]
	[ ! -e /usr/libexec/warden ]
	[ ! -e /usr/share/doc/warden ]
	[ ! -e /usr/lib/systemd/user/warden.service ]
	run dpkg -s warden
	[ "$status" -ne 0 ]
}
