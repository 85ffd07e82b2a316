#!/usr/bin/env bash
# install-deps.sh - install what pipe needs to build and test, with
# apt-get, only when something is missing.  Needs root (or sudo) and
# Debian's archive; does nothing when everything is present.
set -u
pkgs=(gcc g++ make pkg-config binutils libc6-dev
      libzstd-dev liblzma-dev zlib1g-dev libelf-dev libdw-dev libxxhash-dev
      libdebuginfod-dev debuginfod
      libiberty-dev python3 jq procps linux-perf util-linux zstd xz-utils time
      libc6-dbg
      libprotobuf-c-dev protobuf-c-compiler golang-go clang libclang-rt-14-dev
      hotspot)
# libc6-dbg: libc's own symbols (static functions too) from its debug
# file, so reports of libc addresses name the same functions everywhere
# (e2e 3012's expected text holds them);
# xz-utils makes the MiniDebugInfo fixture (tests/fixtures, fx_inline_mini);
# hotspot brings perfparser, which e2e 4005 checks our perf.data against;
# it is a Qt and KDE program: about a hundred libraries (measured on
# Debian 12 with the rest of this list installed: 104 packages, 26 MB to
# download, 114 MB installed), no recommended packages (see below)
# one dpkg-query for the whole list (one a package cost a second of a
# loaded machine's make test): a package is there when its status is
# "install ok installed" (a name it does not know, it names on stderr)
declare -A have=()
while read -r name want ok status; do
	[ "$ok $status" = "ok installed" ] && have[$name]=1
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${pkgs[@]}" 2>/dev/null)
missing=()
for p in "${pkgs[@]}"; do
	[ -n "${have[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing build dependencies: ${missing[*]}"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || { echo "pipe: apt-get update failed" >&2; exit 1; }
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
	{ echo "pipe: cannot install: ${missing[*]}" >&2
	  echo "hint: install them with apt-get, then run make again" >&2; exit 1; }
