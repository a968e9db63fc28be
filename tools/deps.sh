#!/bin/sh
# Installs the build and test dependencies that are missing (as root), or
# prints the exact command to run (as anyone else).  Debian 12 package names.
set -u
PKGS="gcc make pkg-config libc6-dev libseccomp-dev libcap-dev libjson-c-dev \
libnl-3-dev libnl-route-3-dev libc-ares-dev libcurl4-openssl-dev nettle-dev libedit-dev libcmocka-dev bats \
python3 nodejs ruby perl tmux clang bubblewrap hyperfine util-linux iproute2 passwd \
procps time bsdutils findutils man-db groff-base bash-completion zsh \
dpkg-dev debhelper fakeroot build-essential adduser git \
python3-venv python3-numpy python3-pandas python3-matplotlib r-base-core python3-nbformat \
python3-pip curl openssl python3-pil libopenblas0-pthread"
# Tests use: pgrep (procps), /usr/bin/time (time), script (bsdutils), runuser,
# setsid and unshare (util-linux), useradd (passwd), tmux, python3, node,
# ruby and perl (the language drivers), find (findutils); install.bats:
# man and groff (man-db, groff-base), bash-completion, zsh; tests/package/
# debian.bats: dpkg-buildpackage (dpkg-dev, debhelper, fakeroot, and
# build-essential, which it checks for as an implicit build dependency),
# the package's own dependency adduser (dpkg -i installs none), git;
# tests/cli/stacks.bats: Debian's data stack under the workspace profile
# (python3-venv, python3-numpy, python3-pandas, python3-matplotlib), and
# R (r-base-core) for the R driver in drivers.bats and stacks.bats.
# chat.bats: python3-nbformat (validates the notebook %jupyter writes).
# tests/cli/net.bats and bench/proxy.py: curl, pip (python3-pip) and a test
# certificate (openssl) as clients of the egress proxy.
# rich.bats: python3-matplotlib, python3-pil, python3-pandas (the jail's
# /usr/bin/python3 plots, shows and displays through them).
# libopenblas0-pthread: the BLAS a fresh Debian's numpy gets (apt prefers it
# for python3-pythran); stacks.bats imports numpy under strict's memory
# limit with it, as users will.
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# tests/cli/mcp_inspector.bats installs the MCP Inspector with npm.  Debian
# packages npm apart from nodejs; NodeSource's nodejs carries its own npm
# and conflicts with Debian's, so the package is asked for only when no npm
# command exists (asking for it there would replace that nodejs).
command -v npm >/dev/null 2>&1 || missing="$missing npm"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "warden: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || { echo "warden: apt-get update failed" >&2; exit 1; }
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
		echo "warden: apt-get install$missing failed" >&2; exit 1; }
else
	echo "warden: missing packages:$missing" >&2
	echo "warden: run: sudo apt-get install -y$missing" >&2
	exit 1
fi
