#!/bin/sh
# make demo: a hostile program in a jail, then the audit of what it tried.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
W=${WARDEN:-"$top/${BUILD:-build}/warden"}
# not under /tmp: inside the jail /tmp is a private tmpfs, so "../" would
# land there; under /var/tmp the parent is the jail's read-only root
tmp=$(mktemp -d /var/tmp/warden-demo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
ws="$tmp/project"
mkdir -p "$ws" "$tmp/home/.ssh"
echo "-----BEGIN OPENSSH PRIVATE KEY----- (a demo secret)" > "$tmp/home/.ssh/id_ed25519"
cp "$top/examples/escape.py" "$ws/"
log="$tmp/audit.jsonl"

bold() { printf '\033[1m%s\033[0m\n' "$*"; }
bold "1. Outside the jail, the secret is readable:"
echo "   \$ cat $tmp/home/.ssh/id_ed25519"
sed 's/^/   /' "$tmp/home/.ssh/id_ed25519"
echo
bold "2. The same user runs LLM-written code under warden (profile: workspace, pids 64):"
echo "   \$ warden run --workspace $ws --pids 64 -- python3 escape.py"
HOME="$tmp/home" "$W" run --workspace "$ws" --pids 64 --audit-log "$log" \
	--json "$tmp/summary.json" -- python3 escape.py "$tmp/home"
rc=$?
echo
bold "3. What the supervisor saw (warden audit --denied):"
"$W" audit --audit-log "$log" --denied
echo
bold "4. The run's summary (--json):"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("   reason=%s exit=%s wall=%sms denied=%s" % (s["reason"], s["exit_status"], s["wall_ms"], ", ".join("%s x%d" % (d["name"], d["count"]) for d in s["denied_syscalls"])))' "$tmp/summary.json"
echo
if [ -e "$tmp/escaped" ] || [ -e /etc/cron.d/backdoor ]; then
	echo "demo: something escaped" >&2; exit 1
fi
[ "$rc" -eq 0 ] && bold "Every attempt was stopped, and nothing was left behind." || exit "$rc"
