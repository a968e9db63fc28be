#!/usr/bin/env bats
# Rich output (issue 12) through `warden serve --stdio`: images, HTML, the
# running line and a final expression's value, played by rich_client.py
# against the real supervisor, broker and jails.
load ../helpers

setup() {
	common_setup
	CFG="$WS.config"
	mkdir -p "$CFG/warden/profiles"
	printf '%s\n' '{"name":"flood","extends":"workspace","limits":{"output":"64K"}}' \
		> "$CFG/warden/profiles/flood.json"
	# matplotlib reads /etc/matplotlibrc, which the default profile does not
	# bind (issue 12, item 4: the stacks branch changes that)
	printf '%s\n' '{"name":"mpl","extends":"workspace","filesystem":{"read_only":["/usr","/etc/alternatives","/etc/matplotlibrc","/etc/fonts"],"optional":["/etc/alternatives","/etc/matplotlibrc","/etc/fonts"]}}' \
		> "$CFG/warden/profiles/mpl.json"
	# R reads /etc/R (the stacks branch adds it to the default profile)
	printf '%s\n' '{"name":"rstack","extends":"workspace","filesystem":{"read_only":["/usr","/etc/alternatives","/etc/R"],"optional":["/etc/alternatives","/etc/R"]}}' \
		> "$CFG/warden/profiles/rstack.json"
}
teardown() {
	rm -rf "$CFG"
	common_teardown
}

# rich_client SCENARIO [warden serve options]
rich_client() {
	run env WARDEN="$WARDEN" XDG_CONFIG_HOME="$CFG" \
		python3 "$WARDEN_TOP/tests/cli/rich_client.py" "$1" --workspace "$WS" "${@:2}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ok $1"* ]]
}

need_py() {
	/usr/bin/python3 -c "import $1" 2>/dev/null || skip_unless_works "/usr/bin/python3 has no $1 (tools/deps.sh installs it)"
}

@test "rich: a matplotlib figure comes back as a PNG image message (plt.show and left open)" {
	need_py matplotlib
	rich_client matplotlib --allow-profile mpl --profile mpl
}

@test "rich: PIL Image.show(), a final image and display() of a JPEG come back as images" {
	need_py PIL
	rich_client pil
}

@test "rich: _repr_html_ comes back as an html message" {
	rich_client html
}

@test "rich: a pandas DataFrame comes back as html and as text" {
	need_py pandas
	rich_client pandas
}

@test "rich: python, javascript and shell stream active lines 1,2,3 then null" {
	rich_client lines
}

@test "rich: a final expression's value is shown in python, javascript and ruby" {
	rich_client final
}

@test "rich: an R block's final visible value is shown, an invisible one is not" {
	command -v Rscript >/dev/null || skip_unless_works "no Rscript (tools/deps.sh installs r-base-core)"
	rich_client final_r
}

@test "rich: forged and oversized M/A frames on the control fd are bounded and harmless" {
	rich_client hostile --allow-profile flood --profile flood
}

# Issue 18: three mutations of supervisor/rich.c survived the test above.
@test "rich: a block's images together stay within the output limit (G140)" {
	rich_client image_budget --allow-profile flood --profile flood
}

@test "rich: an image announced past 1 GiB breaks only its jail (G140)" {
	rich_client len_cap --allow-profile flood --profile flood
}

@test "rich: at most 100,000 active lines per block (G140)" {
	rich_client line_cap
}
