#!/bin/sh
# make test-fresh: do the README's two commands work the first time on a
# fresh Debian 12 machine?  Builds a minimal bookworm root (mmdebstrap
# --variant=minbase, cached), and in a private copy of it, with the host's
# /proc, /sys and /dev bound in, clones this checkout's committed HEAD and
# runs `make demo` and then `WARDEN_MUST_WORK=1 make test` (what .ci/run
# runs) as root.  Ends with the inner run's "N passed, N failed" line and a
# verdict; exits non-zero when either command failed.  Root only.  Takes
# long: the packages of tools/deps.sh are installed in the copy every time
# (that is the point), then the whole test suite runs.
#
# The copy is entered with `unshare --mount --fork` and pivot_root, not
# chroot: the kernel refuses CLONE_NEWUSER to a chrooted process (clone(2),
# EPERM "in a chroot environment"), so in a chroot no jail starts, as root
# (the idmapped workspace) or not.  pivot_root makes the copy the root of
# the new mount namespace, as on a machine of its own.
#
# The cache holds the pristine minbase root only (a tarball), never one
# where the deps were installed; it is rebuilt when its recipe changes (the
# suite, the packages, the apt sources and options).  Each run unpacks it
# into a fresh directory, deleted at the end.
#
# Environment:
#   WARDEN_FRESH_CACHE    the cache directory (/var/cache/warden/test-fresh)
#   WARDEN_FRESH_SOURCES  the apt sources for the root, a .sources or .list
#                         file for bookworm (default: this machine's own,
#                         /etc/apt/sources.list.d/debian.sources or
#                         /etc/apt/sources.list)
#   WARDEN_FRESH_TIMEOUT  seconds the inner run may take (10800)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
me=test-fresh
say() { printf '%s: %s\n' "$me" "$*"; }
die() { printf '%s: %s\n' "$me" "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, mounts, pivot_root): run \`sudo make test-fresh\`"
head=$(git -C "$top" rev-parse --verify -q HEAD) ||
	die "$top is not a git checkout with a commit: test-fresh clones its HEAD"
start=$(date +%s)

SUITE=bookworm
VARIANT=minbase
# what the issue's reproduction installs on top of minbase: enough to clone
# the repository and run make, nothing of what tools/deps.sh installs
INCLUDE=git,make,ca-certificates,sudo
cache=${WARDEN_FRESH_CACHE:-/var/cache/warden/test-fresh}
timeout=${WARDEN_FRESH_TIMEOUT:-10800}

# --- the apt configuration: this machine's own mirror and options ----------
sources=${WARDEN_FRESH_SOURCES:-}
if [ -z "$sources" ]; then
	for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
		if [ -f "$f" ] && grep -q '^[^#]*bookworm' "$f"; then sources=$f; break; fi
	done
fi
[ -f "$sources" ] ||
	die "no apt sources for $SUITE on this machine (/etc/apt/sources.list.d/debian.sources, /etc/apt/sources.list): set WARDEN_FRESH_SOURCES=FILE (a .sources or .list file for $SUITE)"
grep -q "^[^#]*$SUITE" "$sources" || die "$sources names no $SUITE suite: set WARDEN_FRESH_SOURCES=FILE for $SUITE"
# apt options of this machine that decide whether the archive can be
# reached at all (a proxy; a mirror whose Release files are dated), carried
# into the root so that its own apt-get (tools/deps.sh) works the same way
aptopts=$(for key in Acquire::Check-Valid-Until Acquire::Check-Date Acquire::http::Proxy \
		Acquire::https::Proxy Acquire::Retries; do
	v=$(apt-config dump "$key" 2>/dev/null | sed -n "s|^$key \"\(.*\)\";\$|\1|p" | head -n 1)
	[ -n "$v" ] && printf '%s "%s";\n' "$key" "$v"
done)
# what the Debian installer writes and minbase lacks (netbase is not in it)
hosts='127.0.0.1	localhost
::1		localhost ip6-localhost ip6-loopback
ff02::1		ip6-allnodes
ff02::2		ip6-allrouters'

# --- cleanup, on every way out ---------------------------------------------
newtar='' optfile='' work='' root=''
# the processes still in the copy's mount namespace (a daemon a test left,
# or all of them when interrupted): this run made them
left_in_copy() {
	ns=$(cat "$work/mntns" 2>/dev/null)
	case $ns in "mnt:["*"]") ;; *) return 0 ;; esac
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && echo "${p#/proc/}"
	done
	return 0   # not the status of the last [ ]: the caller's loop tests it
}
# mounts under the copy in this (the host's) mount namespace: there must be none
mounts_in_work() {
	awk -v w="$work" '$5 == w || index($5, w "/") == 1 { print $5 }' /proc/self/mountinfo
}
cleanup() {
	[ -z "$newtar" ] || rm -f "$newtar"
	[ -z "$optfile" ] || rm -f "$optfile" "$optfile.rc"
	newtar='' optfile=''
	[ -n "$work" ] && [ -d "$work" ] || return 0
	n=0
	while pids=$(left_in_copy) && [ -n "$pids" ]; do
		[ "$n" = 0 ] && say "killing what the run left in the copy: $(echo "$pids" | tr '\n' ' ')"
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null
		n=$((n + 1))
		[ "$n" -le 100 ] || { say "processes $(echo "$pids" | tr '\n' ' ')do not end: leaving $work"; work=''; return 1; }
		sleep 0.1
	done
	# the run's pipeline (timeout, tee) ends with them; it writes $work/rc last
	wait
	if [ -n "$(mounts_in_work)" ]; then
		mounts_in_work | sort -r | while read -r m; do umount -l "$m"; done
		if [ -n "$(mounts_in_work)" ]; then
			say "mounts left under $work: $(mounts_in_work | tr '\n' ' ')- not removing it"
			work=''; return 1
		fi
		say "there were mounts under $work on the host (unmounted now): a bug of test-fresh"
		rm -rf --one-file-system "$work"; work=''; return 1
	fi
	rm -rf --one-file-system "$work"
	work=''
}
trap 'cleanup' EXIT
trap 'cleanup; say "interrupted (SIGINT): stopped and cleaned up"; exit 130' INT
trap 'cleanup; say "stopped by SIGTERM and cleaned up"; exit 143' TERM
trap 'cleanup; say "stopped by SIGHUP and cleaned up"; exit 129' HUP

# --- the pristine root, cached --------------------------------------------
recipe=$(printf 'v1 %s %s %s\n%s\n%s\n%s\n' "$SUITE" "$VARIANT" "$INCLUDE" "$aptopts" "$hosts" \
	"$(cat "$sources")")
key=$(printf '%s' "$recipe" | sha256sum | cut -c1-16)
tarball="$cache/root-$key.tar"
mkdir -p "$cache" || die "cannot create the cache directory $cache (WARDEN_FRESH_CACHE)"
if [ -f "$tarball" ]; then
	say "the pristine $SUITE $VARIANT root: $tarball (cached)"
else
	if ! command -v mmdebstrap >/dev/null; then
		say "installing mmdebstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null ||
			die "apt-get install mmdebstrap failed: install it and run again"
	fi
	say "building the pristine $SUITE $VARIANT root (+$INCLUDE) into $tarball"
	newtar="$cache/.building.$$.tar"
	optfile="$cache/.building.$$.aptopts"
	printf '%s\n' "$aptopts" >"$optfile"
	# shellcheck disable=SC2016
	{ HOSTS="$hosts" mmdebstrap --quiet --variant="$VARIANT" --include="$INCLUDE" \
		--aptopt="$optfile" --customize-hook='printf "%s\n" "$HOSTS" > "$1/etc/hosts"' \
		--format=tar "$SUITE" "$newtar" "$sources" 2>&1; echo $? >"$optfile.rc"; } | sed "s/^/$me: mmdebstrap: /"
	rc=$(cat "$optfile.rc" 2>/dev/null || echo 255)
	rm -f "$optfile" "$optfile.rc"
	optfile=
	[ "$rc" = 0 ] || { rm -f "$newtar"; die "mmdebstrap failed with status $rc (output above)"; }
	mv -f "$newtar" "$tarball" || die "cannot store $tarball"
	newtar=
	for old in "$cache"/root-*.tar; do   # roots of an older recipe
		[ "$old" = "$tarball" ] || rm -f "$old"
	done
fi

# --- a private copy, entered ----------------------------------------------
work=$(mktemp -d /var/tmp/warden-fresh.XXXXXX) || die "mktemp failed"
root="$work/root"
log="$cache/last-run.log"
say "unpacking a private copy into $root"
mkdir "$root" || die "cannot create $root"
tar -C "$root" --numeric-owner --xattrs --xattrs-include='*' -xpf "$tarball" ||
	die "cannot unpack $tarball into $root"
# the network as this machine has it now (mmdebstrap copied it at build time)
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
# and the certificate authorities this machine's administrator added (a
# site's TLS-inspecting proxy): a machine on this network needs them too,
# or npm and pip see a self-signed chain.  update-ca-certificates runs
# inside, before anything else
localca=0
for c in /usr/local/share/ca-certificates/*.crt; do
	[ -f "$c" ] || continue
	mkdir -p "$root/usr/local/share/ca-certificates" &&
		cp "$c" "$root/usr/local/share/ca-certificates/" && localca=$((localca + 1))
done
[ "$localca" = 0 ] || say "carrying this machine's $localca local certificate authorities into the copy"
# HEAD as a bundle: the clone inside gets exactly the committed tree
git -C "$top" bundle create -q "$root/root/warden.bundle" HEAD ||
	die "git bundle create of $top's HEAD failed"
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then
	say "note: $top has uncommitted changes: they are not tested, HEAD $head is"
fi

# Run inside: a fresh clone, then the README's two commands as root, with
# the environment of a login shell (env -i: nothing of this caller's).
# shellcheck disable=SC2016
inner='set -u
if [ -n "$(ls /usr/local/share/ca-certificates/ 2>/dev/null)" ]; then
	update-ca-certificates >/dev/null
	# Node keeps its own list unless told: what such a site sets for it
	export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi
cd /root && git -c advice.detachedHead=false clone -q /root/warden.bundle warden && cd warden || exit 1
echo "test-fresh: HEAD $(git log --oneline -1)"
echo "test-fresh: == make demo"
t0=$(date +%s); make demo; demo=$?
t1=$(date +%s)
echo "test-fresh: == WARDEN_MUST_WORK=1 make test"
WARDEN_MUST_WORK=1 make test; tests=$?
t2=$(date +%s)
echo "test-fresh: make demo exited $demo after $((t1 - t0)) s (with the packages), make test exited $tests after $((t2 - t1)) s"
[ "$demo" = 0 ] && [ "$tests" = 0 ]'
# In the new mount namespace (unshare makes its mounts private: none of
# them reaches the host's, and they end with it): the copy bound onto
# itself, so that it is a mount; /proc, and /sys and /dev recursively
# (/sys/fs/cgroup; /dev/pts, /dev/shm, /dev/mqueue); then pivot_root into
# it and detach the old root.  Its namespace is noted first, for cleanup.
# shellcheck disable=SC2016
enter='set -e
readlink /proc/self/ns/mnt >"$2/mntns"
mount --bind "$1" "$1"
for d in proc sys dev; do mount --rbind "/$d" "$1/$d"; done
cd "$1"
pivot_root . .
umount -l .
cd /
exec /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${3:-dumb}" \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c "$4"'
say "running make demo, then WARDEN_MUST_WORK=1 make test, in $root (log: $log)"
# In the background and waited for, so that an INT or TERM runs the trap at
# once (its cleanup ends everything in the copy's namespace); timeout ends
# a hang the same way, by its own process group.
{ timeout -k 30 "$timeout" unshare --mount --fork --kill-child \
	sh -c "$enter" enter "$root" "$work" "${TERM:-}" "$inner" 2>&1
  echo $? >"$work/rc"; } | tee "$log" &
wait $!
rc=$(cat "$work/rc" 2>/dev/null || echo 255)

summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
cleanup || rc=1
mins=$((($(date +%s) - start + 59) / 60))
echo
say "HEAD $head, $mins min in all"
say "inner run: ${summary:-no \"N passed, N failed\" line: make test did not finish}"
if [ "$rc" = 0 ] && [ -n "$summary" ]; then
	say "ok: make demo and make test work the first time on a fresh $SUITE root"
	exit 0
fi
say "FAILED (exit status $rc): the output above, also in $log"
exit 1
