# Shared by tests/cli/*.bats and tests/security/*.bats.
#   $WARDEN        the warden binary under test
#   $WARDEN_PROBES the static security probes
#   $WARDEN_UNPRIV 1 when this run is the unprivileged pass
#   $WS            a fresh workspace per test (removed in teardown)
bats_require_minimum_version 1.5.0  # for `run !`
WARDEN=${WARDEN:-$BATS_TEST_DIRNAME/../../build/warden}
WARDEN_PROBES=${WARDEN_PROBES:-$BATS_TEST_DIRNAME/../../build/probes}
WARDEN_TOP=${WARDEN_TOP:-$BATS_TEST_DIRNAME/../..}

common_setup() {
	WS=$(mktemp -d /tmp/warden-ws.XXXXXX)
	AUDIT="$WS.audit.jsonl"
	export WARDEN_AUDIT_LOG="$AUDIT"
}

common_teardown() {
	rm -rf "$WS" "$AUDIT"
}

# skip, unless WARDEN_MUST_WORK=1 where a skip would hide a missing feature
skip_unless_works() {
	if [ "${WARDEN_MUST_WORK:-0}" = 1 ]; then
		echo "required under WARDEN_MUST_WORK=1: $*" >&2
		return 1
	fi
	skip "$*"
}

is_root() { [ "$(id -u)" = 0 ]; }

# host processes whose command line contains $1, one line each (read from
# /proc directly, so a zombie or a renamed process is seen as well)
procs_matching() {
	local f a
	for f in /proc/[0-9]*/cmdline; do
		mapfile -d '' a 2>/dev/null < "$f" || continue
		[[ "${a[*]}" == *"$1"* ]] && echo "${f%/cmdline}: ${a[*]}"
	done
	return 0
}

# not_as_root WHAT: for the fallback branch of a test.  As root warden always
# has a writable cgroup, so a fallback there is a failure, not an accepted
# alternative; unprivileged (no delegation) it is the expected path.
not_as_root() {
	if is_root; then
		echo "as root, $* must not happen: warden has a cgroup here"
		return 1
	fi
}

# run warden in a jail with the workspace $WS; extra warden options first:
#   wrun [--opt ...] -- prog args
wrun() { run "$WARDEN" run --workspace "$WS" "$@"; }

# fake_llm < SCRIPT: tests/fakes/llm_server.py playing SCRIPT (JSON) in the
# background, its requests logged to $T/req.log; sets FAKE_PID and PORT
# (the caller's teardown kills FAKE_PID).  Needs $T, a private directory.
fake_llm() {
	cat > "$T/script.json"
	python3 "$WARDEN_TOP/tests/fakes/llm_server.py" "$T/script.json" --log "$T/req.log" \
		--idle 120 > "$T/port" 2> "$T/fake.err" &
	FAKE_PID=$!
	for _ in $(seq 200); do
		[ -s "$T/port" ] && break
		sleep 0.05
	done
	PORT=$(head -1 "$T/port")
	[ -n "$PORT" ]
}
