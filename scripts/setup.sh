#!/usr/bin/env bash
# Install what ridr-kit needs from Debian 12, only what is missing.
# Idempotent; needs root (or sudo) and apt-get.  Usage: scripts/setup.sh [--kernel]
#   --kernel  also the kernel-backport tool chain (sources, coccinelle, qemu).
# redis-tools (redis-cli, redis-benchmark) drives the example server in its
# tests; redis-server is only the reference row of scripts/server_load.sh,
# which starts its own instance on a loopback port and stops it.
set -euo pipefail

# linux-source-6.1 (+ xz-utils to unpack it): the benchmarks' kernel
# baselines, Linux 6.1's IDR, XArray and maple tree, are built from its
# tarball (third_party/linux_6_1/); without it they are left out.
BASE_PKGS=(bazel-bootstrap gcc g++ binutils libc6-dev liburcu-dev
	   libcriterion-dev pkg-config python3 gnuplot-nox valgrind
	   linux-source-6.1 xz-utils redis-tools redis-server)
KERNEL_PKGS=(linux-source-6.1 linux-source-6.12 coccinelle qemu-system-x86
	     busybox-static bc bison flex libelf-dev libssl-dev cpio xz-utils
	     kmod ccache perl make git sparse)

want=("${BASE_PKGS[@]}")
if [[ "${1:-}" == "--kernel" ]]; then
	want+=("${KERNEL_PKGS[@]}")
fi

missing=()
for p in "${want[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
if ((${#missing[@]} == 0)); then
	echo "setup: all ${#want[@]} required Debian packages are installed" >&2
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "setup: missing packages (${missing[*]}) and no apt-get: this needs Debian 12" >&2
	exit 1
fi
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=(sudo)
	else
		echo "setup: missing packages (${missing[*]}); run as root to install them" >&2
		exit 1
	fi
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q >&2
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
