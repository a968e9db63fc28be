#!/usr/bin/env bats
# Who the jail is on the host (SECURITY.md G30-G34, docs/design.md "Ids").
# As root, jailed code must never act as host uid 0: each jail has its own
# unprivileged host uid/gid from a dedicated range, files it makes in the
# workspace belong to the workspace's owner (an idmapped mount), and no call
# may set the setuid or setgid bit (the seccomp filter, in every mode).
load ../helpers

setup() {
	common_setup
	JAILS=()
}

teardown() {
	local f
	# release every jail still waiting, then wait for it
	for f in "$WS"/*.ready "$WS"/*.count; do [ -e "$f" ] && touch "$f.go"; done
	for f in "${JAILS[@]}"; do wait "$f" 2>/dev/null || true; done
	rm -rf "$WS.ro" "$WS.json" "$WS.policy.json" "$WS.u"
	common_teardown
}

# As an ordinary user the jail maps to the caller (docs/design.md "Ids"):
# the root-only tests check that instead, never skip.
me() { id -u; }

# wait_for FILE: until it exists (the jail writes it), at most about 30 s
wait_for() {
	local i
	for i in $(seq 1 1500); do
		[ -s "$1" ] && return 0
		sleep 0.02
	done
	echo "timed out waiting for $1"
	return 1
}

# start_hold NAME: a jail running `idprobe hold NAME.ready` in the background
start_hold() {
	[ -e "$WS/idprobe" ] || cp "$WARDEN_PROBES/idprobe" "$WS/"
	"$WARDEN" run --quiet --timeout 60s --workspace "$WS" -- ./idprobe hold "$1.ready" &
	JAILS+=("$!")
	wait_for "$WS/$1.ready"
}

# host_pid_of ARGS...: the host pid of the process whose argv is exactly ARGS
host_pid_of() {
	local f a want="$*"
	for f in /proc/[0-9]*/cmdline; do
		mapfile -d '' a 2>/dev/null < "$f" || continue
		[ "${a[*]}" = "$want" ] && { f=${f%/cmdline}; echo "${f#/proc/}"; return 0; }
	done
	echo "no process runs '$want'" >&2
	return 1
}

# status_ids PID: "uid-line|gid-line|groups-line" from /proc/PID/status
status_ids() {
	awk '/^Uid:/ {u=$2" "$3" "$4" "$5} /^Gid:/ {g=$2" "$3" "$4" "$5}
	     /^Groups:/ {$1=""; s=$0} END {print u "|" g "|" s}' "/proc/$1/status"
}

# --- setuid and setgid bits (every mode) -------------------------------------

@test "identity: a setuid/setgid copy of a program in the workspace is refused (EPERM) and never appears on the host" {
	wrun --json "$WS.json" -- /bin/sh -c 'cp /usr/bin/id suid-id; chmod 4755 suid-id'
	[ "$status" -ne 0 ]
	[[ "$output" == *"Operation not permitted"* ]]
	wrun -- /bin/sh -c 'cp /usr/bin/id sgid-id; chmod 2755 sgid-id; chmod g+s .'
	[ "$status" -ne 0 ]
	wrun -- /usr/bin/install -m 4755 /usr/bin/id installed-id
	[ "$status" -ne 0 ]
	wrun -- /usr/bin/python3 -c 'import os; os.close(os.open("py-id", os.O_CREAT | os.O_WRONLY, 0o6755))'
	[ "$status" -ne 0 ]
	[[ "$output" == *"PermissionError"* ]]
	run find "$WS" -perm /6000
	[ "$status" -eq 0 ]
	[ -z "$output" ] || { echo "set-id files on the host: $output"; false; }
	# the denial is audited like any other
	grep -Eq '"event": *"denied".*"syscall": *"(fchmodat|fchmodat2|chmod)"' "$AUDIT" ||
		{ echo "no denied chmod in the audit log:"; cat "$AUDIT"; false; }
}

@test "identity: every call that sets a mode refuses S_ISUID/S_ISGID; openat2 is ENOSYS (setid_bits)" {
	cp "$WARDEN_PROBES/setid_bits" "$WS/"
	wrun -- ./setid_bits
	echo "status $status: $output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"setid_bits: BLOCKED"* ]]
	run find "$WS" -perm /6000
	[ -z "$output" ]
}

# --- host ids (as root) --------------------------------------------------------

@test "identity: as root, the jail's processes have a non-zero host uid and gid and no groups" {
	start_hold a
	local pid ids
	pid=$(host_pid_of ./idprobe hold a.ready)
	ids=$(status_ids "$pid")
	echo "host ids of the jail's pid $pid: $ids"
	local uids=${ids%%|*} rest=${ids#*|}
	local gids=${rest%%|*} groups=${rest#*|}
	if ! is_root; then   # the caller maps to itself
		[ "$uids" = "$(me) $(me) $(me) $(me)" ]
		touch "$WS/a.ready.go"
		return 0
	fi
	for u in $uids $gids; do [ "$u" -ne 0 ]; done
	[ -z "${groups// /}" ]
	touch "$WS/a.ready.go"
}

# Issue 18: root here has no supplementary groups, so the test above passed
# with the slot helper's setgroups removed.  Started by a warden that has
# groups 4 and 27 (setpriv), the jail's init and program still have none.
# An ordinary caller cannot give itself groups, and its jail is itself: its
# program has exactly the caller's groups, nothing more.
@test "identity: as root, a jail of a warden that has supplementary groups has none (G175)" {
	local run=("$WARDEN") wpid init prog p
	is_root && run=(setpriv --groups 4,27 "$WARDEN")
	cp "$WARDEN_PROBES/idprobe" "$WS/"
	"${run[@]}" run --quiet --timeout 60s --workspace "$WS" -- ./idprobe hold g.ready &
	wpid=$!
	JAILS+=("$wpid")
	wait_for "$WS/g.ready"
	prog=$(host_pid_of ./idprobe hold g.ready)
	init=$(awk '/^PPid:/ {print $2}' "/proc/$prog/status")
	echo "warden $wpid, init $init, program $prog"
	for p in "$wpid" "$init" "$prog"; do echo "$p: $(status_ids "$p")"; done
	if ! is_root; then
		[ "$(status_ids "$prog" | cut -d'|' -f3)" = "$(status_ids $$ | cut -d'|' -f3)" ]
		touch "$WS/g.ready.go"
		return 0
	fi
	# the control: warden itself runs with the groups
	[ "$(status_ids "$wpid" | cut -d'|' -f3)" = " 4 27" ]
	[ "$(awk '/^PPid:/ {print $2}' "/proc/$init/status")" = "$wpid" ]
	for p in "$init" "$prog"; do
		[ -z "$(status_ids "$p" | cut -d'|' -f3 | tr -d ' ')" ]
	done
	touch "$WS/g.ready.go"
}

@test "identity: as root, two concurrent jails have different host uids" {
	start_hold a
	start_hold b
	local ua ub
	ua=$(status_ids "$(host_pid_of ./idprobe hold a.ready)")
	ub=$(status_ids "$(host_pid_of ./idprobe hold b.ready)")
	echo "a: $ua  b: $ub"
	if ! is_root; then   # both are the caller
		[ "${ua%% *}" = "$(me)" ]
		[ "${ub%% *}" = "$(me)" ]
		return 0
	fi
	[ "${ua%% *}" -ne 0 ]
	[ "${ub%% *}" -ne 0 ]
	[ "${ua%% *}" != "${ub%% *}" ]
	# gids too
	local ga=${ua#*|} gb=${ub#*|}
	[ "${ga%% *}" != "${gb%% *}" ]
}

@test "identity: the jail's user namespace is a child of the host's, owned by the jail's host uid, and its init never had another" {
	start_hold own
	local prog init
	prog=$(host_pid_of ./idprobe hold own.ready)
	init=$(awk '/^PPid:/ {print $2}' "/proc/$prog/status")
	echo "program $prog, init $init"
	# init is pid 1 of the jail; as root it is seen to share the program's
	# user namespace (an ordinary caller may not read a non-dumpable
	# process's namespace links: the program's serve for both)
	[ "$(awk '/^NSpid:/ {print $NF}' "/proc/$init/status")" = 1 ]
	if is_root; then
		[ "$(readlink "/proc/$init/ns/user")" = "$(readlink "/proc/$prog/ns/user")" ]
	fi
	# From the host: the owner that the kernel recorded when the namespace
	# was made (the euid of the process that called clone3), its parent
	# namespace, and init's ids now (it never changes them: uid 0 inside).
	run python3 -c 'import fcntl, os, struct, sys
fd = os.open("/proc/%s/ns/user" % sys.argv[1], os.O_RDONLY)
owner = struct.unpack("I", fcntl.ioctl(fd, 0xb704, b"\0" * 4))[0]   # NS_GET_OWNER_UID
parent = fcntl.ioctl(fd, 0xb702)                                    # NS_GET_PARENT
host = os.stat("/proc/self/ns/user")
p = os.fstat(parent)
print(owner, "parent-is-host" if (p.st_dev, p.st_ino) == (host.st_dev, host.st_ino) else "parent-is-other")' "$prog"
	echo "owner, parent: $output"
	[ "$status" -eq 0 ]
	local owner=${output%% *} where=${output#* }
	[ "$where" = parent-is-host ]
	local ids uids gids groups
	ids=$(status_ids "$init")
	echo "init's host ids: $ids"
	uids=${ids%%|*}; gids=${ids#*|}; groups=${gids#*|}; gids=${gids%%|*}
	if is_root; then
		# the slot's uid, never 0: the process that made the namespace
		# had already dropped to it, and so did every id init was born with
		[ "$owner" -ne 0 ]
		[ "$uids" = "$owner $owner $owner $owner" ]
		local g=${gids%% *}
		[ "$g" -ne 0 ]
		[ "$gids" = "$g $g $g $g" ]
		[ -z "${groups// /}" ]
	else
		[ "$owner" = "$(me)" ]
		[ "$uids" = "$(me) $(me) $(me) $(me)" ]
	fi
	touch "$WS/own.ready.go"
}

@test "identity: as root, a jail that exhausts a per-user quota (inotify instances) leaves other jails and root unaffected" {
	cp "$WARDEN_PROBES/idprobe" "$WS/"
	"$WARDEN" run --quiet --timeout 60s --workspace "$WS" -- ./idprobe inotify hog.count &
	JAILS+=("$!")
	wait_for "$WS/hog.count"
	echo "the hog took: $(cat "$WS/hog.count")"
	[[ "$(cat "$WS/hog.count")" == *EMFILE* ]]
	if ! is_root; then   # the jail counts against its caller, as documented
		run "$WARDEN_PROBES/idprobe" inotify1
		echo "caller: $output"
		[ "$status" -eq 1 ]
		[[ "$output" == *EMFILE* ]]
		touch "$WS/hog.count.go"
		return 0
	fi
	# another jail, and root on the host, can still take one
	wrun -- ./idprobe inotify1
	[ "$status" -eq 0 ]
	run "$WARDEN_PROBES/idprobe" inotify1
	echo "root: $output"
	[ "$status" -eq 0 ]
	touch "$WS/hog.count.go"
}

# --- the workspace's owner (as root) ------------------------------------------

@test "identity: as root, files made in a root-owned workspace belong to root; the jail sees them as its own" {
	# as an ordinary user the workspace is the caller's, and so are its files
	local owner
	owner=$(stat -c %u:%g "$WS")
	[ "$owner" = "$(id -u):$(id -g)" ]
	wrun --quiet -- /bin/sh -c 'echo hi > made; mkdir d; echo x > d/f; stat -c %u made; test -O .'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(stat -c %u:%g "$WS/made")" = "$owner" ]
	[ "$(stat -c %u:%g "$WS/d")" = "$owner" ]
	[ "$(stat -c %u:%g "$WS/d/f")" = "$owner" ]
	[ "$(cat "$WS/d/f")" = x ]
}

@test "identity: as root, files made in a workspace owned by warden-test belong to warden-test" {
	id warden-test >/dev/null 2>&1 || skip_unless_works "no user warden-test"
	local owner
	owner=$(id -u warden-test):$(id -g warden-test)
	echo old > "$WS/old"
	if is_root; then chown -R "$owner" "$WS"; fi
	# as an ordinary user this is warden-test's own workspace
	[ "$(stat -c %u:%g "$WS")" = "$owner" ]
	wrun --quiet -- /bin/sh -c 'echo hi > made; mkdir d; echo x > d/f; echo more >> old; test -O .'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(stat -c %u:%g "$WS/made")" = "$owner" ]
	[ "$(stat -c %u:%g "$WS/d/f")" = "$owner" ]
	[ "$(stat -c %u:%g "$WS/old")" = "$owner" ]
	[ "$(tail -n 1 "$WS/old")" = more ]
}

@test "identity: as root, a 0600 root-owned file under a read-only bind is unreadable" {
	if ! is_root; then   # root's files under the default binds are foreign to the caller too
		[ -d /etc/ssl/private ] || skip_unless_works "no /etc/ssl/private"
		wrun --quiet -- /bin/ls /etc/ssl/private
		[ "$status" -ne 0 ]
		return 0
	fi
	mkdir -m 0755 "$WS.ro"
	echo secret > "$WS.ro/secret"
	chmod 0600 "$WS.ro/secret"
	echo public > "$WS.ro/public"
	chmod 0644 "$WS.ro/public"
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); p["name"] = "ro-secret"
p["filesystem"]["read_only"].append(sys.argv[2])
json.dump(p, open(sys.argv[3], "w"))' "$WARDEN_TOP/policy/profiles/workspace.json" "$WS.ro" "$WS.policy.json"
	wrun --quiet --policy "$WS.policy.json" -- /bin/cat "$WS.ro/public"
	[ "$status" -eq 0 ]
	[ "$output" = public ]
	wrun --quiet --policy "$WS.policy.json" -- /bin/cat "$WS.ro/secret"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Permission denied"* ]]
	# and /etc/shadow-like files of the default binds: /etc/ssl/private
	if [ -d /etc/ssl/private ]; then
		wrun --quiet -- /bin/ls /etc/ssl/private
		[ "$status" -ne 0 ]
	fi
}

@test "identity: as root, a read-write bind on a filesystem that cannot be idmapped fails naming the path" {
	# /proc cannot be bound at all; /sys (sysfs) has no idmapped mounts
	[ -d /sys/kernel ] || skip_unless_works "no /sys"
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); p["name"] = "rw-sysfs"
p["filesystem"]["read_write"].append("/sys/kernel")
json.dump(p, open(sys.argv[2], "w"))' "$WARDEN_TOP/policy/profiles/workspace.json" "$WS.policy.json"
	if ! is_root; then   # no idmap as an ordinary user: the bind is the caller's view of it
		wrun --policy "$WS.policy.json" -- /bin/sh -c 'echo 1 > /sys/kernel/warden-test'
		[ "$status" -ne 0 ]
		return 0
	fi
	wrun --policy "$WS.policy.json" -- /bin/true
	echo "$output"
	[ "$status" -eq 125 ]
	[[ "$output" == *"/sys/kernel"* ]]
	[[ "$output" == *"idmap"* ]]
}

@test "identity: doctor reports the identity mode" {
	run "$WARDEN" doctor
	echo "$output"
	if is_root; then
		[[ "$output" == *"identity"*"host uid"* ]]
	else
		[[ "$output" == *"identity"*"caller"* ]]
	fi
}
