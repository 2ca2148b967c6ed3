#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv's demo, from a fresh Debian 12 machine, as root:
#   tests/demo.sh
# Installs what is missing (Debian packages), builds trainenv in _build/,
# starts a local 3-node Slurm cluster with the plugin and a sample site
# policy (etc/trainenv.conf.example), runs a 3-node x 2-rank PyTorch gloo
# DDP training job through it (etc/examples/ddp_gloo.py: no rendezvous code)
# with --train-explain, shows what trainenv set, and tears everything down.
# Exits non-zero when anything fails; the cluster is always stopped.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)

section() { printf '\n==== %s\n' "$*"; }
fail() { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "run as root (the local cluster needs namespaces and daemons)"

section "Dependencies (Debian packages)"
tests/deps.sh

section "Build (in _build/)"
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi >/dev/null
fi
mkdir -p _build
(
	cd _build
	if [ ! -f Makefile ] || [ ../configure -nt Makefile ]; then
		../configure --prefix=/usr/local >/dev/null
	fi
	make -j"$(nproc)" >/dev/null
)
[ -f _build/.libs/trainenv.so ] || fail "the build did not produce _build/.libs/trainenv.so"

section "A local Slurm cluster: 3 nodes, trainenv in plugstack.conf"
# Not under /tmp (every node has a private /tmp) nor in the checkout (user
# nobody cannot read a mode-700 home, and the nodes do not see it): the
# plugin, its helpers and the example are staged into the cluster's own
# directory, as an admin installs them on every node.
dir=$(mktemp -d /var/tmp/trainenv-demo.XXXXXX)
chmod 755 "$dir"
ok=0
cleanup() {
	section "Tear down"
	"$top/tests/cluster/cluster.sh" stop --dir "$dir" || true
	if [ "$ok" = 1 ]; then
		rm -rf "$dir"
	else
		echo "logs kept in $dir/log"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
tests/lib/stage.sh "$top" "$top/_build" "$dir/stage"
plugin=$dir/stage/build/.libs/trainenv.so
echo "plugin: $plugin (staged from $top/_build)"
tests/cluster/cluster.sh start --dir "$dir" --nodes 3 --hide "$top"
# shellcheck disable=SC1091
. "$dir/env.sh"
# The site policy: a root-owned file nobody else may write.
install -m 644 etc/trainenv.conf.example "$dir/etc/trainenv.conf"
tests/cluster/cluster.sh plugstack --dir "$dir" "required $plugin conf=$dir/etc/trainenv.conf"
echo "plugstack.conf:"
sed 's/^/    /' "$dir/etc/plugstack.conf"
echo "site policy ($dir/etc/trainenv.conf, comments left out):"
grep -v '^\s*\(#\|$\)' "$dir/etc/trainenv.conf" | sed 's/^/    /'
echo "srun --help now lists $(srun --help | grep -c '\[trainenv\]') trainenv options; srun --train=help describes them."

section "The training job: srun -N3 --ntasks-per-node=2 --train-explain python3 ddp_gloo.py"
work=$dir/shared/demo
mkdir -p "$work"
cp "$dir/stage/src/etc/examples/ddp_gloo.py" "$work/"
cd "$work"
# Rank 0 also prints a few of the variables trainenv gave it, then every
# rank runs the unchanged example.
# shellcheck disable=SC2016 # for the tasks' shell
show_env='if [ "$RANK" = 0 ]; then env | grep -E "^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|NODE_RANK|MASTER_ADDR|MASTER_PORT|TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC|TORCH_NCCL_ASYNC_ERROR_HANDLING|DEEPSPEED_TIMEOUT)=" | sort | sed "s/^/rank 0 environment: /"; m=$(grep SigIgn /proc/self/status | cut -f2); [ $(( 0x$m & 1 )) = 1 ] && echo "rank 0 starts with SIGHUP ignored (SigIgn $m)"; fi; exec /usr/bin/python3 ddp_gloo.py'
set +e
out=$(timeout -k 10 300 srun -N3 --ntasks-per-node=2 --train-explain sh -c "$show_env" 2>&1)
rc=$?
set -e
printf '%s\n' "$out" | grep -E '^trainenv: ' || true
echo
printf '%s\n' "$out" | grep -E '^rank 0 ' || true
echo
printf '%s\n' "$out" | grep -E '^rank [0-9]+/[0-9]+ on ' | sort -n -k2 || true

section "Result"
n=$(printf '%s\n' "$out" | grep -cE '^rank [0-5]/6 on .*all_reduce sum 15 \(expected 15\), weights equal on all ranks after a DDP step: True$' || true)
if [ "$rc" -ne 0 ] || [ "$n" -ne 6 ]; then
	echo "the job FAILED (srun exit status $rc, $n of 6 ranks right); its whole output:"
	printf '%s\n' "$out" | sed 's/^/    /'
	exit 1
fi
echo "the job succeeded: 6 ranks on 3 nodes met without rendezvous code (trainenv set"
echo "RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), the all_reduce summed to 15 and a"
echo "DDP step left the same weights on every rank."
ok=1
