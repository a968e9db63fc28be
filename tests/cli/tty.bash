# Helpers for tests that run warden chat on a real terminal (tmux): the
# test sets $SOCK (its own tmux server) and $T (where the chat's exit
# status lands, $T/rc); its own start_chat starts the chat.  Every wait is
# bounded (60 s) and shows the screen when it gives up.

# the screen, wrapped lines joined, with 500 lines of history
screen() { tmux -L "$SOCK" capture-pane -p -J -S -500; }
keys() { tmux -L "$SOCK" send-keys "$@"; }

# wait_for TEXT [N]: until the screen shows TEXT (on at least N lines)
wait_for() {
	local n=${2:-1}
	for _ in $(seq 600); do
		[ "$(screen | grep -cF -- "$1")" -ge "$n" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for '$1' (x$n); the screen:"
	screen
	return 1
}

# wait_prompt N: until N prompts ("> " at the start of a line) were shown
wait_prompt() {
	for _ in $(seq 600); do
		[ "$(screen | grep -c '^>')" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for prompt number $1; the screen:"
	screen
	return 1
}

# wait_exit STATUS: until the chat has ended, with STATUS
wait_exit() {
	for _ in $(seq 600); do
		[ -s "$T/rc" ] && break
		sleep 0.1
	done
	[ "$(cat "$T/rc" 2>/dev/null)" = "$1" ] && return 0
	echo "warden did not exit with status $1 (rc: $(cat "$T/rc" 2>/dev/null)); the screen:"
	screen
	return 1
}
