# warden's persistent shell driver (supervisor/lang.h has the protocol).
# Run as `bash --noprofile --norc -c <this text>` inside the jail.  Reads
# "R <len>\n" + <len> bytes of code from fd 4, evals the block in this very
# shell (top level, not a function: variables, functions, options, traps and
# the working directory persist), and writes "D <status>\n" on fd 4, where
# <status> is the block's $?.  EOF on fd 4: exit 0.  `exit` in a block ends
# the session.  The driver's own variables are named __warden_*.
#
# Active line: while the block runs, a DEBUG trap writes "A <line>\n" (the
# block's line, 1-based, each change) to fd 62, a copy of fd 4 that only
# the block has (fd 4 itself stays closed for it, as before).  Functions
# and subshells do not run the trap (no functrace), so their lines are
# not reported; a DEBUG trap of the block's own is replaced at its end.
#
# Interrupts: pid 1 of a pid namespace ignores a signal it has no handler
# for, so SIGINT is trapped (the trap does nothing).  When SIGINT reaches the
# process group, the foreground command (sleep, python, ...) dies of it and
# returns 130, and the shell goes on with the rest of the block; a loop of
# builtins (`while :; do :; done`) is not stopped at all.  The supervisor
# kills the jail when a block outlives its grace period after the SIGINT.
trap ':' INT
__warden_bad() {
	builtin printf 'warden shell driver: %s\n' "$1" >&2
	builtin exit 2
}
# Reads exactly $__warden_len bytes of code: read -N and ${#...} count
# characters, and in the C locale a character is a byte.
__warden_read() {
	local LC_ALL=C IFS=
	builtin read -r -d '' -N "$__warden_len" __warden_code <&4
	[ "${#__warden_code}" -eq "$__warden_len" ]
}
__warden_al() {
	local n=$(($1 - __warden_base + 1))
	if ((n >= 1 && n != __warden_last)); then
		__warden_last=$n
		builtin printf "A %d\n" "$n" 2>/dev/null >&62
	fi
	return 0
}
while :; do
	__warden_hdr=
	IFS= builtin read -r -n 32 __warden_hdr <&4
	__warden_st=$?
	if [ "$__warden_st" -gt 128 ] && [ -z "$__warden_hdr" ]; then
		continue                 # a SIGINT between blocks: wait on
	fi
	if [ "$__warden_st" -ne 0 ]; then
		[ -z "$__warden_hdr" ] && builtin exit 0     # EOF
		__warden_bad 'fd 4 closed inside a frame header'
	fi
	case $__warden_hdr in
	'R 0') __warden_len=0 ;;
	R\ [1-9]|R\ [1-9][0-9]|R\ [1-9][0-9][0-9]|R\ [1-9][0-9][0-9][0-9]|R\ [1-9][0-9][0-9][0-9][0-9]|R\ [1-9][0-9][0-9][0-9][0-9][0-9]|R\ [1-9][0-9][0-9][0-9][0-9][0-9][0-9]|R\ [1-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9])
		__warden_len=${__warden_hdr#R } ;;
	*) __warden_bad 'bad frame header on fd 4' ;;
	esac
	__warden_code=
	[ "$__warden_len" -eq 0 ] || __warden_read || __warden_bad 'fd 4 closed inside a code block'
	# the block runs with stdin on /dev/null and without fd 4; its lines
	# are counted from this one (eval's LINENO is this line plus the
	# block's line minus 1), so the base, the trap and eval share it
	__warden_last=0
	__warden_base=$LINENO; builtin trap '[[ $BASH_COMMAND == __warden_* || $BASH_COMMAND == "builtin "[et]* ]] || __warden_al "$LINENO"' DEBUG; builtin eval "$__warden_code" </dev/null 62>&4 4<&-
	__warden_st=$?
	builtin trap - DEBUG
	builtin printf 'D %d\n' "$__warden_st" >&4 || builtin exit 3
done
