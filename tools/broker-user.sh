#!/bin/sh
# As root, warden chat and warden serve run their broker as the system user
# `warden` (docs/design.md, "Two executables"), and stop naming the useradd
# command below while it is missing (supervisor/broker.c).  make demo and
# make test create it here, as root, the way the Debian package's postinst
# does on install; as anyone else nothing is needed and nothing is done.
set -u
[ "$(id -u)" = 0 ] || exit 0
id warden >/dev/null 2>&1 && exit 0
echo "warden: creating the system user warden, the broker's user when warden runs as root"
useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin warden || {
	echo "warden: could not create the user warden: run \`useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin warden\`" >&2
	exit 1
}
