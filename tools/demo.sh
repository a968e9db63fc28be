#!/bin/sh
# make demo: warden chat with a recorded model (no API key needed) analysing
# a CSV in a jail, then a hostile program under `warden run`, and the audit
# of what the jails stopped.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
W=${WARDEN:-"$top/${BUILD:-build}/warden"}
# as root the chat's broker runs as the user warden: made here when missing
sh "$top/tools/broker-user.sh" || exit 1
# not under /tmp: inside the jail /tmp is a private tmpfs, so "../" would
# land there; under /var/tmp the parent is the jail's read-only root
tmp=$(mktemp -d /var/tmp/warden-demo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
ws="$tmp/project"
mkdir -p "$ws" "$tmp/home/.ssh" "$tmp/config" "$tmp/data"
log="$tmp/audit.jsonl"

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
	bold() { printf '\n\033[1m%s\033[0m\n' "$*"; }
	delay=15    # stream the recorded replies at a readable pace
else
	bold() { printf '\n== %s\n' "$*"; }
	delay=0
fi

# --- 1. chat -------------------------------------------------------------
cp "$top/examples/sales.csv" "$ws/"
bold "1. warden chat, with a recorded model (examples/demo.json: no API key, no network)"
echo "   \$ cd project && warden chat -y --model replay:examples/demo.json \"...\""
ask="There's a file sales.csv in this folder. Can you total the revenue per region and make me a bar chart of it?"
( cd "$ws" && HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" \
	exec "$W" chat -y --workspace "$ws" --audit-log "$log" --replay-delay "$delay" \
	--model "replay:$top/examples/demo.json" "$ask" )
rc=$?
[ "$rc" -eq 0 ] || { echo "demo: warden chat failed (exit $rc)" >&2; exit "$rc"; }

bold "2. The chart the code wrote is in the workspace:"
ls -l "$ws"/*.svg | sed 's/^/   /'
[ -s "$ws/revenue_by_region.svg" ] || { echo "demo: no chart was written" >&2; exit 1; }

session=$(grep '"event":"session_open"' "$log" | tail -1 | sed 's/.*"session":"\([0-9a-f]*\)".*/\1/')
bold "3. What the supervisor recorded for that chat (session $session):"
python3 - "$log" "$session" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("session") == sys.argv[2] and r.get("event") == "block_end":
        print("   block %d (%s): %s, exit %s, %d ms" % (r["block"], r["language"], r["reason"],
                                                   r["exit_code"], r["wall_ms"]))
PY
echo "   \$ warden audit --session $session --denied"
if grep '"event":"denied"' "$log" | grep -q "\"$session\""; then
	"$W" audit --audit-log "$log" --session "$session" --denied | sed 's/^/   /'
else
	echo "   (no denied system call: the connection failed inside the jail, which has no"
	echo "   network at all under the workspace profile; nothing left the machine)"
fi

# --- 2. a hostile program --------------------------------------------------
echo "-----BEGIN OPENSSH PRIVATE KEY----- (a demo secret)" > "$tmp/home/.ssh/id_ed25519"
cp "$top/examples/escape.py" "$ws/"
bold "4. A hostile program, as the same user, under warden run (profile: workspace, pids 64):"
echo "   \$ warden run --workspace project --pids 64 -- python3 escape.py"
HOME="$tmp/home" "$W" run --workspace "$ws" --pids 64 --audit-log "$log" \
	-- python3 escape.py "$tmp/home"
rc=$?
bold "5. What the supervisor saw (warden audit --denied):"
"$W" audit --audit-log "$log" --denied
if [ -e "$tmp/escaped" ] || [ -e /etc/cron.d/backdoor ]; then
	echo "demo: something escaped" >&2; exit 1
fi
[ "$rc" -eq 0 ] && bold "Every attempt was stopped, and nothing was left behind." || exit "$rc"
