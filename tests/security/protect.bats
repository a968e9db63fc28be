#!/usr/bin/env bats
# Issue 19, "Nothing planted, nothing leaked": a workspace that is a home
# directory or a git project.  The catalogs (warden policy show --catalog):
# what the host runs or trusts cannot be changed or created from a jail,
# credentials cannot be read, and warden's own files are never skipped.
# Everything is judged on the host, as root and as warden-test.
load ../helpers

setup() {
	common_setup
	H=$(mktemp -d /tmp/warden-home.XXXXXX)
	chmod 755 "$H"
	# a registry of placeholders of this test's own: another warden running
	# on the machine would otherwise hold their cleanup off
	export XDG_RUNTIME_DIR="$WS.run"
	mkdir -m 700 "$XDG_RUNTIME_DIR"
}
teardown() {
	rm -rf "$H" "$WS.run"
	common_teardown
}

check() { # SCENARIO VARIANT: tests/security/protect_check.py against $H
	# warden's once-per-user notes (supervisor/once.c) go to a state
	# directory of their own: in $H they landed in the placeholder of
	# ~/.local/state/warden, which the check took for the jail's doing
	run env WARDEN="$WARDEN" XDG_STATE_HOME="$WS.state" \
		python3 "$WARDEN_TOP/tests/security/protect_check.py" "$1" "$2" "$H"
	rm -rf "$WS.state"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "ok $1 $2"* ]]
}

@test "protect: a home workspace, every catalog entry existing: nothing changed, renamed, removed or read (issue 19)" {
	check home existing
}

@test "protect: a home workspace, every catalog entry missing: none can be created (issue 19)" {
	check home missing
}

@test "protect: a git project with a nested repository four levels down, entries existing (issue 19)" {
	check project existing
}

@test "protect: a git project with a nested repository, entries missing; the repository's parent cannot be moved (issue 19)" {
	check project missing
}

@test "protect: jailed code cannot plant a profile in ~/.config/warden that the next run would use (issue 19)" {
	[ ! -e "$H/.config/warden" ]
	run env HOME="$H" "$WARDEN" run --workspace "$H" -- sh -c \
		'mkdir -p .config/warden/profiles && echo "{\"name\":\"workspace\",\"filesystem\":{\"read_write\":[\"\$WORKSPACE\",\"/etc\"]}}" > .config/warden/profiles/workspace.json'
	echo "$output"
	[ "$status" -ne 0 ]
	[ ! -e "$H/.config/warden/profiles/workspace.json" ]
	# the next run's policy is the built-in one
	run env HOME="$H" "$WARDEN" policy show workspace
	[ "$status" -eq 0 ]
	[[ "$output" != *'"/etc"'* ]]
}

@test "protect: ~/.config/warden cannot be created while XDG_CONFIG_HOME points elsewhere: a run without it would read it (issue 19)" {
	[ ! -e "$H/.config/warden" ]
	run env HOME="$H" XDG_CONFIG_HOME="$WS.cfg" "$WARDEN" run --workspace "$H" -- sh -c \
		'mkdir -p .config/warden/profiles && echo "{\"name\":\"workspace\",\"filesystem\":{\"read_write\":[\"\$WORKSPACE\",\"/etc\"]}}" > .config/warden/profiles/workspace.json'
	echo "$output"
	[ "$status" -ne 0 ]
	[ ! -e "$H/.config/warden/profiles/workspace.json" ]
	run env HOME="$H" "$WARDEN" policy show workspace
	[ "$status" -eq 0 ]
	[[ "$output" != *'"/etc"'* ]]
}

@test "protect: an XDG_CONFIG_HOME inside the workspace, not the catalog's place, is protected too: no profile planted there (issue 19)" {
	run env HOME="$H" XDG_CONFIG_HOME="$H/conf" "$WARDEN" run --workspace "$H" -- sh -c \
		'mkdir -p conf/warden/profiles && echo "{\"name\":\"workspace\",\"filesystem\":{\"read_write\":[\"\$WORKSPACE\",\"/etc\"]}}" > conf/warden/profiles/workspace.json'
	echo "$output"
	[ "$status" -ne 0 ]
	[ ! -e "$H/conf/warden/profiles/workspace.json" ]
	run env HOME="$H" XDG_CONFIG_HOME="$H/conf" "$WARDEN" policy show workspace
	[ "$status" -eq 0 ]
	[[ "$output" != *'"/etc"'* ]]
}

@test "protect: an XDG_RUNTIME_DIR that is not the caller's own 0700 directory is passed over for the registry (sudo, su)" {
	mkdir -m 755 "$WS.rt"
	run env HOME="$H" XDG_RUNTIME_DIR="$WS.rt" "$WARDEN" run --quiet --workspace "$H" -- sh -c 'echo ran'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *ran* ]]
	[ ! -e "$WS.rt/warden" ]
	rmdir "$WS.rt"
}

@test "protect: a dotfile that links into the workspace cannot be changed through its target (issue 19)" {
	mkdir -p "$H/dotfiles"
	echo 'original bashrc' > "$H/dotfiles/bashrc"
	ln -s dotfiles/bashrc "$H/.bashrc"
	run env HOME="$H" "$WARDEN" run --workspace "$H" -- sh -c \
		'echo PWNED >> dotfiles/bashrc; echo PWNED >> .bashrc; rm -f .bashrc; ln -sf evil .bashrc; echo done'
	echo "$output"
	[ "$(cat "$H/dotfiles/bashrc")" = "original bashrc" ]
	[ "$(readlink "$H/.bashrc")" = dotfiles/bashrc ]
}

@test "protect: credentials in a home workspace are not readable: cat gets nothing (issue 19)" {
	mkdir -p "$H/.kube" "$H/.config/gh" "$H/.docker"
	echo 'kube-secret' > "$H/.kube/config"
	echo 'gh-secret' > "$H/.config/gh/hosts.yml"
	echo 'docker-secret' > "$H/.docker/config.json"
	echo 'npm-secret' > "$H/.npmrc"
	echo 'history-secret' > "$H/.bash_history"
	run env HOME="$H" "$WARDEN" run --workspace "$H" -- sh -c \
		'cat .kube/config .config/gh/hosts.yml .docker/config.json .npmrc .bash_history 2>&1; echo end'
	echo "$output"
	[[ "$output" == *end* ]]
	[[ "$output" != *secret* ]]
}

# Red team: credential files that were only hidden could be created when
# missing, and their tools run what they name: aws runs a profile's
# credential_process, kubectl a user's exec plugin, less the LESSOPEN of its
# lesskey file's #env, mysql its pager and the plugins of plugin-dir, psql
# the \! lines of .psqlrc, Jupyter the argv of a kernel spec in its data
# directory, Mercurial its hooks.  Each is planted by the jail, judged by the
# host: no file of the jail's is there afterwards (seen failing before: all
# seven were created).
@test "protect: a home workspace: config files whose tools run commands cannot be planted, credential ones included (red team)" {
	run env HOME="$H" "$WARDEN" run --workspace "$H" -- sh -c '
		for d in .aws .kube .local/share/jupyter/kernels/python3; do mkdir -p "$d" 2>/dev/null; done
		echo "[default]
credential_process = sh -c id" > .aws/config
		echo "users: [{name: u, user: {exec: {command: sh}}}]" > .kube/config
		echo "[client]
pager = sh -c id" > .my.cnf
		echo "#env
LESSOPEN=|sh -c id" > .lesskey
		echo "\\! id" > .psqlrc
		echo "{\"argv\": [\"sh\", \"-c\", \"id\"]}" > .local/share/jupyter/kernels/python3/kernel.json
		echo "[hooks]
pre-commit = sh -c id" > .hgrc
		echo done'
	echo "$output"
	[[ "$output" == *done* ]]
	local f
	for f in .aws/config .kube/config .my.cnf .lesskey .psqlrc \
	         .local/share/jupyter/kernels/python3/kernel.json .hgrc; do
		echo "$f"
		run ! grep -rqs 'id' "$H/$f"
	done
}

# Red team: what the desktop session and the terminal run at the next
# login or window was in no catalog: PipeWire's context.exec (every login
# on Debian 12's desktops), i3's, sway's and Hyprland's exec lines, the shell
# kitty and Alacritty start, WezTerm's Lua, and dconf's database (GNOME's
# custom keybindings and GNOME Terminal's custom command).  Seen failing
# before: every one was created.
@test "protect: a home workspace: session and terminal configs cannot be planted (red team)" {
	run env HOME="$H" "$WARDEN" run --workspace "$H" -- sh -c '
		for d in .config/pipewire/pipewire.conf.d .config/i3 .i3 .config/sway .config/hypr \
		         .config/kitty .config/alacritty .config/wezterm .config/dconf; do
			mkdir -p "$d" 2>/dev/null
		done
		echo "context.exec = [ { path = \"/bin/sh\" args = \"-c id\" } ]" > .config/pipewire/pipewire.conf.d/x.conf
		for f in .config/i3/config .i3/config .config/sway/config; do echo "exec sh -c id" > "$f"; done
		echo "exec-once = sh -c id" > .config/hypr/hyprland.conf
		echo "shell sh -c id" > .config/kitty/kitty.conf
		printf "[terminal.shell]\nprogram = \"sh\"\nargs = [\"-c\", \"id\"]\n" > .config/alacritty/alacritty.toml
		echo "os.execute(\"id\")" > .config/wezterm/wezterm.lua
		echo "os.execute(\"id\")" > .wezterm.lua
		echo "custom-command=id" > .config/dconf/user
		echo done'
	echo "$output"
	[[ "$output" == *done* ]]
	local f
	for f in .config/pipewire/pipewire.conf.d/x.conf .config/i3/config .i3/config .config/sway/config \
	         .config/hypr/hyprland.conf .config/kitty/kitty.conf .config/alacritty/alacritty.toml \
	         .config/wezterm/wezterm.lua .wezterm.lua .config/dconf/user; do
		echo "$f"
		run ! grep -qs 'id' "$H/$f"
	done
}

# Red team: what interactive tools and shells run when they start, in
# files no catalog had: direnv's direnvrc and lib/ (sourced for every
# .envrc it loads), starship's custom modules (a command at every prompt),
# TPM's plugins (tmux.conf runs ~/.tmux/plugins/tpm/tpm), irb's and pry's
# Ruby, pdb's commands, sqlite3's .shell, Julia's startup.jl, mutt's
# backticks, Fedora's ~/.bashrc.d, zsh's usual ZDOTDIR and frameworks
# (prezto, zinit, oh-my-bash, bash-it), nushell, xonsh, PowerShell, SBCL,
# GHCi and Octave.  An existing ~/.tmux (TPM installed) is changed in
# place, the others are created.  Seen failing before: every one landed
# (irb and pdb checked to run theirs on this machine).
@test "protect: a home workspace: interactive tools' start files cannot be planted (red team)" {
	mkdir -p "$H/.tmux/plugins/tpm"
	printf '#!/bin/sh\n' > "$H/.tmux/plugins/tpm/tpm"
	local files=(.config/direnv/direnvrc .config/direnv/lib/x.sh .direnvrc .config/starship.toml
		.tmux/plugins/tpm/tpm .irbrc .pryrc .pdbrc .sqliterc .julia/config/startup.jl
		.muttrc .mutt/muttrc .config/mutt/muttrc .bashrc.d/x.sh .config/zsh/.zshrc
		.zprezto/init.zsh .local/share/zinit/zinit.git/zinit.zsh .oh-my-bash/oh-my-bash.sh
		.bash_it/bash_it.sh .config/nushell/config.nu .xonshrc .config/xonsh/rc.xsh
		.config/powershell/Microsoft.PowerShell_profile.ps1 .sbclrc .ghci .octaverc)
	run env HOME="$H" "$WARDEN" run --workspace "$H" -- sh -c '
		for f in "$@"; do
			mkdir -p "$(dirname "$f")" 2>/dev/null
			echo "sh -c id # planted" > "$f" 2>/dev/null && echo "planted $f"
		done
		echo done' sh "${files[@]}"
	echo "$output"
	[[ "$output" == *done* ]]
	[[ "$output" != *planted* ]]
	local f
	for f in "${files[@]}"; do
		echo "$f"
		run ! grep -rqs 'planted' "$H/$f"
	done
}

# Red team: a hidden credential or history file that did not exist yet
# could be created by the jail -- as a hard link to a file of its own.  A
# tool that later writes the secret in place (an append to ~/.netrc, a
# shell's history) wrote it into the jail's file too, which the next jail
# (or the same session's) read, though ~/.netrc itself was hidden.  Seen
# failing before: the links were made, and the second jail printed the
# password.
@test "protect: a home workspace: a missing hidden file cannot be planted as a link to the jail's own (red team)" {
	run env HOME="$H" "$WARDEN" run --workspace "$H" -- sh -c '
		echo > notes
		mkdir -p .gem 2>/dev/null
		for f in .netrc .pgpass .bash_history .python_history .gem/credentials; do
			ln notes "$f" 2>/dev/null && echo "linked $f"
		done
		echo done'
	echo "$output"
	[[ "$output" == *done* ]]
	[[ "$output" != *linked* ]]
	[ "$(stat -c %h "$H/notes")" -eq 1 ]
	# the host's tool writes a password once the placeholder is gone (the
	# cleaner waits 2 s, jail/protect.c); the next jail reads its own file
	for _ in $(seq 100); do
		[ -L "$H/.netrc" ] || break
		sleep 0.1
	done
	[ ! -L "$H/.netrc" ]
	printf 'machine api.example.org login ann password s3cr3t\n' >> "$H/.netrc"
	run env HOME="$H" "$WARDEN" run --workspace "$H" -- sh -c 'cat notes .netrc; echo done'
	echo "$output"
	[[ "$output" == *done* ]]
	[[ "$output" != *s3cr3t* ]]
}

# The person's own ~/.cargo and ~/.m2 are protected, so nothing can be
# created in them: their missing credential files need no placeholder, and
# get none (a symlink to /dev/null/... in the person's cargo home while a
# jail runs).  Seen failing before: ~/.cargo/credentials.toml and
# ~/.cargo/credentials stood there, placeholders inside a read-only bind.
@test "protect: a home workspace: no placeholder is made inside a protected directory that exists" {
	mkdir -p "$H/.cargo/bin" "$H/.m2/repository"
	env HOME="$H" "$WARDEN" run --workspace "$H" -- sh -c '
		echo > ready
		while [ ! -e go ]; do sleep 0.1; done' > "$WS.out" 2>&1 &
	pid=$!
	for _ in $(seq 300); do
		[ -e "$H/ready" ] && break
		sleep 0.1
	done
	[ -e "$H/ready" ]
	# while the jail runs, the host's directories hold only the person's own
	ls -A "$H/.cargo" "$H/.m2" > "$WS.ls"
	touch "$H/go"
	wait "$pid"
	cat "$WS.out" "$WS.ls"
	run grep -c -e credentials -e settings "$WS.ls"
	[ "$output" = 0 ]
	run grep -c -x -e bin -e repository "$WS.ls"
	[ "$output" = 2 ]
	rm -f "$WS.out" "$WS.ls"
}

@test "protect: a profile drops a catalog entry only by naming it; .git is then writable (issue 19)" {
	git init -q "$WS"
	printf '%s\n' '{"name":"gitrw","extends":"workspace","filesystem":{"unprotect":[".git"]}}' > "$WS.json"
	run "$WARDEN" run --policy "$WS.json" --workspace "$WS" -- sh -c 'echo x > .git/hooks/note'
	echo "$output"
	[ "$status" -eq 0 ]
	[ -f "$WS/.git/hooks/note" ]
	run "$WARDEN" run --workspace "$WS" -- sh -c 'echo x > .git/hooks/note2'
	[ "$status" -ne 0 ]
	[ ! -e "$WS/.git/hooks/note2" ]
	printf '%s\n' '{"name":"bad","extends":"workspace","filesystem":{"unprotect":[".gitt"]}}' > "$WS.json"
	run "$WARDEN" run --policy "$WS.json" --workspace "$WS" -- true
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *"$WS.json:1:"*'".gitt"'*"not an entry"* ]]
	rm -f "$WS.json"
}

@test "protect: a profile's own protect list is read-only and cannot be created (issue 19)" {
	echo deploy > "$WS/deploy.sh"
	printf '%s\n' '{"name":"p","extends":"workspace","filesystem":{"protect+":["$WORKSPACE/deploy.sh","$WORKSPACE/ci/run"]}}' > "$WS.json"
	run "$WARDEN" run --policy "$WS.json" --workspace "$WS" -- sh -c 'echo x >> deploy.sh; mkdir -p ci; echo x > ci/run; echo done'
	echo "$output"
	[[ "$output" == *done* ]]
	[ "$(cat "$WS/deploy.sh")" = deploy ]
	[ ! -f "$WS/ci/run" ]
	rm -f "$WS.json"
}

@test "protect: placeholders are gone from the host once warden is done (issue 19)" {
	# warden's own notes said once per user (supervisor/once.c) go to the
	# state directory, which is not a placeholder: kept out of the home
	run env HOME="$H" XDG_STATE_HOME="$WS.state" "$WARDEN" run --workspace "$H" -- true
	rm -rf "$WS.state"
	[ "$status" -eq 0 ]
	# the cleaner waits 2 s (jail/protect.c CLEAN_DELAY_MS) for back-to-back runs
	for _ in $(seq 100); do
		left=$(find "$H" -mindepth 1 -maxdepth 3 \( -type l -o -type d \) | wc -l)
		[ "$left" -eq 0 ] && break
		sleep 0.1
	done
	find "$H" -mindepth 1 | head
	[ "$(find "$H" -mindepth 1 | wc -l)" -eq 0 ]
}

@test "protect: policy show --catalog lists both catalogs, and SECURITY.md's table is the same (issue 19)" {
	run "$WARDEN" policy show --catalog
	[ "$status" -eq 0 ]
	[[ "$output" == *"~/.bashrc"*protected* ]]
	[[ "$output" == *"~/.kube"*hidden* ]]
	run "$WARDEN" policy show --catalog --markdown
	[ "$status" -eq 0 ]
	echo "$output" > "$WS.md"
	sed -n '/^<!-- catalog: begin/,/^<!-- catalog: end/p' "$WARDEN_TOP/SECURITY.md" | sed '1d;$d' > "$WS.sec"
	diff "$WS.md" "$WS.sec"
	rm -f "$WS.md" "$WS.sec"
}

@test "protect: warden run and warden chat say once what is protected when the workspace holds the home (issue 19)" {
	run env HOME="$H" "$WARDEN" run --workspace "$H" -- true
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'home directory is in the workspace' <<<"$output")" -eq 1 ]
	[[ "$output" == *"policy show --catalog"* ]]
	run "$WARDEN" run --workspace "$WS" -- true
	[[ "$output" != *"home directory"* ]]
	cp "$WARDEN_TOP/examples/sales.csv" "$H/"
	run env HOME="$H" XDG_CONFIG_HOME="$WS.cfg" XDG_DATA_HOME="$WS.data" timeout -k 5 120 \
		"$WARDEN" chat -y --workspace "$H" --model "replay:$WARDEN_TOP/examples/demo.json" "Analyse sales.csv"
	echo "$output"
	rm -rf "$WS.cfg" "$WS.data"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'home directory is in the workspace' <<<"$output")" -eq 1 ]
}
