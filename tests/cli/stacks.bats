#!/usr/bin/env bats
# Real stacks under the default `workspace` profile (issue 12): Debian's
# numpy, pandas and matplotlib plot to a file, a virtualenv in the
# workspace installs and runs, node finds its global modules, R runs and
# plots, and "KEY+" profiles add to what they inherit.  Every jail is real;
# what a program produced is judged on the host (the PNG's signature, its
# IHDR size, files in the workspace).  The packages come from tools/deps.sh.
load ../helpers

setup() { common_setup; }
teardown() {
	rm -rf "$WS.extra" "$WS.policy.json"
	common_teardown
}

need() { # need FILE WHAT: the package is installed, or skip (a failure under MUST_WORK)
	[ -e "$1" ] || skip_unless_works "$2 is not installed (tools/deps.sh installs it)"
}

# png_is FILE WIDTH HEIGHT: a PNG of that size, judged from its bytes
png_is() {
	[ -f "$1" ] || { echo "no $1"; return 1; }
	local sig w h
	sig=$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')
	[ "$sig" = 89504e470d0a1a0a ] || { echo "$1 is not a PNG: $sig"; return 1; }
	w=$(od -An -tx1 -j16 -N4 "$1" | tr -d ' \n')
	h=$(od -An -tx1 -j20 -N4 "$1" | tr -d ' \n')
	[ "$((16#$w))x$((16#$h))" = "$2x$3" ] || { echo "$1 is $((16#$w))x$((16#$h))"; return 1; }
	[ "$(stat -c %s "$1")" -gt 1000 ] || { echo "$1 is too small to hold a plot"; return 1; }
}

# matplotlib warns on stderr when its font cache takes over 5 s to build
# (a loaded machine): that line says nothing about the jail, so it is the
# one line allowed
stderr_clean() {
	local rest
	rest=$(grep -v 'Matplotlib is building the font cache' <<<"$stderr" || true)
	[ -z "$rest" ] || { echo "stderr: $rest"; return 1; }
}

@test "stacks: numpy, pandas and matplotlib plot to a PNG in the workspace, with nothing on stderr" {
	need /usr/lib/python3/dist-packages/matplotlib python3-matplotlib
	need /usr/lib/python3/dist-packages/pandas python3-pandas
	cat > "$WS/plot.py" <<'EOF'
import numpy as np
import pandas as pd
import matplotlib
import matplotlib.pyplot as plt
df = pd.DataFrame({"x": np.arange(10), "y": np.arange(10) ** 2})
fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
df.plot(x="x", y="y", ax=ax, title="squares")
fig.savefig("plot.png")
print(matplotlib.get_backend(), int(df.y.sum()))
EOF
	run --separate-stderr "$WARDEN" run --quiet --workspace "$WS" -- /usr/bin/python3 plot.py
	echo "stdout: $output"
	echo "stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "agg 285" ]
	stderr_clean
	png_is "$WS/plot.png" 400 300
	# the files opened for it are read-only (G150): judged on the host
	local before
	before=$(stat -c %s:%Y /etc/matplotlibrc)
	wrun --quiet -- /bin/sh -c 'echo x >> /etc/matplotlibrc || exit 3; touch /etc/fonts/x || exit 4'
	echo "$output"
	[ "$status" -eq 3 ]
	# (as root the jail's uid is not the files' owner: EACCES comes first)
	[[ "$output" == *"Read-only file system"* || "$output" == *"Permission denied"* ]]
	[ "$(stat -c %s:%Y /etc/matplotlibrc)" = "$before" ]
	[ ! -e /etc/fonts/x ]
	# fontconfig's view in the jail: the host's fonts, no complaint
	run --separate-stderr "$WARDEN" run --quiet --workspace "$WS" -- /usr/bin/fc-match sans
	echo "$output $stderr"
	[ "$status" -eq 0 ]
	[ -n "$output" ]
	[ -z "$stderr" ]
}

@test "stacks: a plot from a python session through warden serve" {
	need /usr/lib/python3/dist-packages/matplotlib python3-matplotlib
	need /usr/lib/python3/dist-packages/pandas python3-pandas
	run env WARDEN="$WARDEN" python3 "$WARDEN_TOP/tests/cli/stacks_client.py" python_plot \
		--workspace "$WS"
	echo "$output"
	[ "$status" -eq 0 ]
	png_is "$WS/session-plot.png" 400 300
}

@test "stacks: a virtualenv in the workspace: created, pip installs into it, its python runs" {
	need /usr/lib/python3.11/ensurepip python3-venv
	mkdir "$WS/hello"
	printf 'from setuptools import setup\nsetup(name="hello", version="1.0", py_modules=["hello"])\n' \
		> "$WS/hello/setup.py"
	echo 'def hi(): return "hi from hello"' > "$WS/hello/hello.py"
	wrun --quiet -- /bin/sh -c '/usr/bin/python3 -m venv "$PWD/venv" &&
		venv/bin/pip install -q --no-index --no-build-isolation --disable-pip-version-check ./hello &&
		venv/bin/python -c "import sys, hello; print(sys.prefix); print(hello.hi())"'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"$WS/venv"$'\n'"hi from hello"* ]]
	# on the host: the venv and what pip put in it
	[ -f "$WS/venv/pyvenv.cfg" ]
	[ -x "$WS/venv/bin/pip" ]
	ls "$WS"/venv/lib/python3*/site-packages/hello.py
}

@test "stacks: node finds its global modules" {
	local d m mod="" dir=""
	for d in /usr/local/lib/node_modules /usr/lib/node_modules /usr/share/nodejs; do
		for m in "$d"/*/package.json; do
			[ -f "$m" ] || continue
			mod=$(basename "$(dirname "$m")") dir=$d
			break 2
		done
	done
	[ -n "$mod" ] || skip_unless_works "no global node module on this host"
	wrun --quiet -- node -e 'console.log(require.resolve(process.argv[1] + "/package.json"))' "$mod"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "$dir/$mod/package.json" ]
}

@test "stacks: R runs and plots to a PNG in the workspace, with nothing on stderr" {
	need /usr/bin/Rscript r-base-core
	run --separate-stderr "$WARDEN" run --quiet --workspace "$WS" -- /usr/bin/Rscript -e \
		'png("r.png", width = 400, height = 300); plot((1:10)^2); invisible(dev.off()); cat(sum(1:10), "\n")'
	echo "stdout: $output"
	echo "stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "55 " ]
	[ -z "$stderr" ]
	png_is "$WS/r.png" 400 300
}

@test "stacks: an R session through warden serve keeps its state and plots" {
	need /usr/bin/Rscript r-base-core
	mkdir "$WS/sub"
	run env WARDEN="$WARDEN" python3 "$WARDEN_TOP/tests/cli/stacks_client.py" r_session \
		--workspace "$WS"
	echo "$output"
	[ "$status" -eq 0 ]
	png_is "$WS/r-plot.png" 400 300
}

@test "stacks: languages without a driver (java, powershell) are refused with the available ones" {
	need /usr/bin/Rscript r-base-core
	run env WARDEN="$WARDEN" python3 "$WARDEN_TOP/tests/cli/stacks_client.py" refused \
		--workspace "$WS"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "stacks: read_only+ adds a path to the inherited profile; policy show prints the merged list" {
	mkdir -m 0755 "$WS.extra"
	echo data > "$WS.extra/data"
	chmod 0644 "$WS.extra/data"
	printf '{\n  "name": "plus",\n  "extends": "workspace",\n  "filesystem": {\n    "read_only+": ["%s"],\n    "optional+": ["%s"]\n  },\n  "env": {"set+": {"MPLBACKEND": "Agg"}}\n}\n' \
		"$WS.extra" "$WS.extra" > "$WS.policy.json"
	run "$WARDEN" policy show "$WS.policy.json"
	echo "$output"
	[ "$status" -eq 0 ]
	run python3 -c 'import json, sys
p = json.loads(sys.argv[1]); fs = p["filesystem"]
assert fs["read_only"][0] == "/usr" and fs["read_only"][-1] == sys.argv[2], fs["read_only"]
assert "/etc/matplotlibrc" in fs["read_only"] and sys.argv[2] in fs["optional"], fs
assert not any(k.endswith("+") for s in p.values() if isinstance(s, dict) for k in s), p
assert p["env"]["set"]["MPLBACKEND"] == "Agg" and p["env"]["set"]["PATH"], p["env"]
print("merged")' "$output" "$WS.extra"
	echo "$output"
	[ "$output" = merged ]
	# in a jail: the added path is there and read-only, the inherited ones too
	wrun --quiet --policy "$WS.policy.json" -- /bin/sh -c \
		"cat '$WS.extra/data'; echo \$MPLBACKEND; test -r /etc/matplotlibrc && echo rc; echo x > '$WS.extra/data'"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == data$'\n'Agg$'\n'rc$'\n'*"Read-only file system"* ]]
	[ "$(cat "$WS.extra/data")" = data ]
}

@test "stacks: misused \"KEY+\" is an error at FILE:LINE:COL" {
	printf '{\n  "extends": "workspace",\n  "filesystem": {\n    "read_only": ["/usr"],\n    "read_only+": ["/opt"]\n  }\n}\n' > "$WS.policy.json"
	run "$WARDEN" policy check "$WS.policy.json"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == "$WS.policy.json:5:5: both \"read_only\" and \"read_only+\" in \"filesystem\";"* ]]
	printf '{\n  "limits": {"memory+": "2G"}\n}\n' > "$WS.policy.json"
	run "$WARDEN" policy check "$WS.policy.json"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == "$WS.policy.json:2:14: \"memory\" is not a list or a map"* ]]
}

@test "stacks: in chat, a java block is refused with the available languages, the model is told, R runs" {
	need /usr/bin/Rscript r-base-core
	local T port fake
	T=$(mktemp -d /tmp/warden-stacks.XXXXXX)
	chmod 755 "$T"
	mkdir -p "$T/home"
	cat > "$T/script.json" <<'JSON'
[{"text": "Trying Java.", "tool_call": {"language": "java", "code": "System.out.println(1);"}},
 {"text": "Then R.", "tool_call": {"language": "r", "code": "cat(6 * 7, '\\n')"}},
 {"text": "Done."}]
JSON
	python3 "$WARDEN_TOP/tests/fakes/llm_server.py" "$T/script.json" --log "$T/req.log" \
		--idle 120 > "$T/port" 2> "$T/fake.err" &
	fake=$!
	for _ in $(seq 200); do
		[ -s "$T/port" ] && break
		sleep 0.05
	done
	port=$(head -1 "$T/port")
	run env -u OPENAI_API_KEY HOME="$T/home" XDG_CONFIG_HOME="$T/config" XDG_DATA_HOME="$T/data" \
		timeout -k 5 120 "$WARDEN" chat -y --workspace "$WS" --model openai/fake \
		--api-base "http://127.0.0.1:$port/v1" --api-key sk-stacks "hi"
	kill "$fake" 2>/dev/null || true
	wait "$fake" 2>/dev/null || true
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *'unknown language "java"; available: python, '*', r'* ]]
	[[ "$output" == *$'\n42 \n'* ]]
	# the model got the refusal as the block's result
	run python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["n"] == 2:
        print(r["body"]["messages"][-1]["content"])' "$T/req.log"
	rm -rf "$T"
	echo "$output"
	[[ "$output" == *'unknown language "java"; available: '*'ruby, r'* ]]
}

@test "stacks: under strict, with HOME in the read-only workspace, matplotlib imports without a warning" {
	need /usr/lib/python3/dist-packages/matplotlib python3-matplotlib
	run --separate-stderr env HOME="$WS" "$WARDEN" run --quiet --profile strict --workspace "$WS" -- \
		/usr/bin/python3 -c 'import os, matplotlib.pyplot; print(os.environ["HOME"], os.environ["MPLCONFIGDIR"])'
	echo "stdout: $output"
	echo "stderr: $stderr"
	[ "$status" -eq 0 ]
	[ "$output" = "$WS /tmp/matplotlib" ]
	stderr_clean
}
