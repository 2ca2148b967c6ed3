#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A real multi-node Slurm cluster on one machine, for trainenv's integration
# tests, its demo and developers.
#
# One munged (own key and socket), one slurmctld in the root network namespace
# on a bridge address, and N slurmd, each in its own network, mount and UTS
# namespace: a veth into the bridge, no default route, its own host name, its
# own /tmp, /dev/shm and SlurmdSpoolDir, a hosts file naming every node.
# DIR/shared is the same directory on every node ("shared storage").
# Everything (config, state, logs, pids) lives in DIR; names, addresses and
# ports are derived from an instance id so that several clusters can run side
# by side. See tests/cluster/README.md.
#
# Usage:
#   cluster.sh start [--nodes N] [--dir DIR] [--id HEX4] [--plugstack FILE]
#                    [--cpus N] [--timeout SECS] [--keep-on-failure]
#                    [--hide PATH]... [--configless [--login]]
#   cluster.sh stop [--dir DIR]
#   cluster.sh status [--dir DIR]
#   cluster.sh env [--dir DIR]                 print export lines for clients
#   cluster.sh exec [--dir DIR] NODE CMD...    run CMD inside node NODE
#   cluster.sh plugstack [--dir DIR] [LINE...] rewrite plugstack.conf atomically
#   cluster.sh slurmd [--dir DIR] NODE start|stop|kill
#   cluster.sh logs [--dir DIR]                list the log files
# DIR defaults to $TE_CLUSTER_DIR, else to /var/tmp/trainenv-cluster-<hash of
# this checkout's path>.
#
# The nodes never see this checkout: each node mounts an empty tmpfs over
# its path (and over every --hide PATH, e.g. a build tree elsewhere), so a
# plugin, helper or script that a node would read from the checkout fails
# in the tests as it would on a real cluster (private /tmp, mode-700 homes).
# What nodes read is staged under DIR or /var/tmp (tests/lib/stage.sh).
#
# --configless: slurmctld ships the configuration (enable_configless): every
# slurmd starts with --conf-server and no slurm.conf (DIR/etc and
# /etc/slurm are hidden on the nodes); plugstack.conf lies beside
# slurm.conf, so that it is shipped too, and `plugstack` then reconfigures
# and waits for every node's copy. --login adds node "login", which runs
# only sackd (Slurm 23.11 and later): the user's srun, sbatch and salloc run
# there (`exec login ...`) on the configuration sackd caches in its /run.
set -uo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
repo_root=$(cd "$(dirname "$self")/../.." && pwd -P)
prog="cluster.sh"

die() { echo "$prog: $*" >&2; exit 1; }
say() { echo "$prog: $*" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.2f", e - s }'; }

default_dir() {
	local h
	h=$(printf '%s' "$repo_root" | sha256sum | cut -c1-8)
	echo "/var/tmp/trainenv-cluster-$h"
}

# ------------------------------------------------------------ pid records
# DIR/pids holds "ROLE PID STARTTIME" per process started. The start time
# (field 22 of /proc/PID/stat) guards against killing a recycled pid.
proc_starttime() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	# shellcheck disable=SC2086
	set -- $stat
	echo "${20}"
}

record_pid() { # ROLE PID
	local st
	st=$(proc_starttime "$2") || st=0
	echo "$1 $2 $st" >>"$DIR/pids"
}

# True when the recorded process is still the one we started.
pid_is_ours() { # PID STARTTIME
	local st
	st=$(proc_starttime "$1") || return 1
	[ "$st" = "$2" ] && pid_alive "$1"
}

# Alive and not a zombie: a daemon whose parent (this script) has exited is
# reaped by pid 1, which may take a while, and kill -0 succeeds on a zombie.
pid_alive() { # PID
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat:0:1}" != Z ]
}

# DIR/created lists "KIND NAME" for each bridge, veth and netns this
# instance created; stop removes only those, so a start that lost a race for
# a name never removes what another instance owns.
record_created() { echo "$1 $2" >>"$DIR/created"; }

pid_of() { # ROLE: the newest live pid recorded for ROLE
	local role pid st found=""
	[ -f "$DIR/pids" ] || return 1
	while read -r role pid st; do
		[ "$role" = "$1" ] && pid_is_ours "$pid" "$st" && found=$pid
	done <"$DIR/pids"
	[ -n "$found" ] && echo "$found"
}

# Sends TERM to the given pids, waits up to SECS, then KILLs what is left.
kill_pids() { # SECS PID...
	local secs=$1 p deadline left named=()
	shift
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	deadline=$(( $(date +%s) + secs ))
	while :; do
		left=()
		for p in "$@"; do pid_alive "$p" && left+=("$p"); done
		[ ${#left[@]} -eq 0 ] && return 0
		[ "$(date +%s)" -ge "$deadline" ] && break
		sleep 0.1
	done
	for p in "${left[@]}"; do
		named+=("$p($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-60))")
	done
	say "still alive after ${secs}s, sending KILL: ${named[*]}"
	kill -KILL "${left[@]}" 2>/dev/null
	sleep 0.2
}

# ------------------------------------------------------------ instance
# Everything that must be unique per instance is derived from a 16-bit id:
#   bridge te<id>br, veths te<id>v<i>, netns te<id>-n<i>,
#   subnet 10.<128 + id/256 % 64>.<id % 256>.0/24 (.1 controller, .10+i node i),
#   SlurmctldPort 7000 + 2 * (id % 8000), SlurmdPort one above.
load_instance() {
	[ -f "$DIR/instance" ] || return 1
	CONFIGLESS=0 LOGIN=0 # an instance file older than these
	# shellcheck disable=SC1091
	. "$DIR/instance"
}

derive_instance() { # ID NODES
	local id=$1 n=$2 h
	h=$((16#$id))
	ID=$id
	NODES=$n
	BRIDGE="te${id}br"
	NETNS_PREFIX="te${id}-"
	VETH_PREFIX="te${id}v"
	NET="10.$((128 + (h >> 8) % 64)).$((h & 255))"
	CTLD_ADDR="$NET.1"
	CTLD_PORT=$((7000 + 2 * (h % 8000)))
	SLURMD_PORT=$((CTLD_PORT + 1))
}

node_addr() { # NODE: nI at .(10+I), the login node at .9
	if [ "$1" = login ]; then echo "$NET.9"; else echo "$NET.$((10 + ${1#n}))"; fi
}
# The nodes start brings up: n1..nN, then the login node when there is one.
all_nodes() {
	local i
	for ((i = 1; i <= NODES; i++)); do echo "n$i"; done
	[ "${LOGIN:-0}" = 1 ] && echo login
	return 0
}
node_netns() { echo "${NETNS_PREFIX}$1"; }

write_instance() {
	cat >"$DIR/instance" <<-EOF
	# written by cluster.sh start; read by stop/status/env/exec
	ID=$ID
	NODES=$NODES
	BRIDGE=$BRIDGE
	NETNS_PREFIX=$NETNS_PREFIX
	VETH_PREFIX=$VETH_PREFIX
	NET=$NET
	CTLD_ADDR=$CTLD_ADDR
	CTLD_PORT=$CTLD_PORT
	SLURMD_PORT=$SLURMD_PORT
	CPUS=$CPUS
	CONFIGLESS=$CONFIGLESS
	LOGIN=$LOGIN
	EOF
}

# Fills BUSY with what keeps the derived instance from starting (its bridge,
# namespaces, veths, subnet or port is taken); true when there is any.
instance_busy() {
	local i
	BUSY=()
	local -n busy=BUSY
	ip link show "$BRIDGE" >/dev/null 2>&1 && busy+=("bridge $BRIDGE exists")
	for i in $(all_nodes); do
		[ -e "/run/netns/$(node_netns "$i")" ] &&
			busy+=("netns $(node_netns "$i") exists")
		ip link show "${VETH_PREFIX}${i#n}" >/dev/null 2>&1 &&
			busy+=("link ${VETH_PREFIX}${i#n} exists")
	done
	if ip -4 -o addr show | awk '{ print $4 }' | grep -q "^${NET//./\\.}\\."; then
		busy+=("an address in $NET.0/24 is in use")
	fi
	# Any route that covers the subnet, other than the default one.
	if ip -4 route show match "$NET.0/24" | grep -vq '^default'; then
		busy+=("a route covers $NET.0/24")
	fi
	if [ -n "$(ss -Hltn "sport = :$CTLD_PORT" 2>/dev/null)" ]; then
		busy+=("TCP port $CTLD_PORT is in use")
	fi
	[ ${#busy[@]} -gt 0 ]
}

# ------------------------------------------------------------ config
write_slurm_conf() {
	local host i
	host=$(hostname -s)
	{
	cat <<-EOF
	# Written by tests/cluster/cluster.sh for instance $ID. Do not edit: the
	# next start rewrites it.
	ClusterName=te$ID
	# slurmctld refuses a name that is not its own host name; it listens on
	# every address, clients and nodes reach it on the bridge address.
	SlurmctldHost=$host($CTLD_ADDR)
	SlurmctldPort=$CTLD_PORT
	SlurmdPort=$SLURMD_PORT
	SlurmUser=root
	SlurmdUser=root
	AuthType=auth/munge
	CredType=cred/munge
	AuthInfo=socket=$DIR/munge/munge.socket
	StateSaveLocation=$DIR/ctld
	SlurmctldPidFile=$DIR/run/slurmctld.pid
	SlurmctldLogFile=$DIR/log/slurmctld.log
	SlurmctldDebug=info
	# The same path on every node; each node binds its own directory over it
	# (the pmix server socket path ignores %n and would collide).
	SlurmdSpoolDir=$DIR/spool
	SlurmdPidFile=$DIR/run/slurmd.%n.pid
	SlurmdLogFile=$DIR/log/slurmd.%n.log
	SlurmdDebug=info
	ProctrackType=proctrack/linuxproc
	# task/none: the nodes claim more CPUs than exist (below), so no Slurm
	# binding; trainenv binds in task_init anyway.
	TaskPlugin=task/none
	SwitchType=switch/none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core
	MpiDefault=none
	EOF
	# Configless: no PlugStackConfig, so that every daemon and client reads
	# plugstack.conf beside its slurm.conf, the copy slurmctld shipped
	# (an absolute path would be read as it is, on every node).
	if [ "$CONFIGLESS" = 1 ]; then
		echo "SlurmctldParameters=enable_configless"
	else
		echo "PlugStackConfig=$DIR/etc/plugstack.conf"
	fi
	cat <<-EOF
	TmpFS=/tmp
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	JobCompType=jobcomp/none
	MailProg=/bin/true
	ReturnToService=2
	SlurmdTimeout=30
	MessageTimeout=10
	KillWait=5
	InactiveLimit=0
	# Tests submit jobs back to back: schedule a batch job at once (default:
	# up to 3 s later, and "sbatch --wait" then polls again only 8 s later),
	# and run the main scheduling loop every second (default 60 s) so that a
	# job queued behind a completing one starts soon.
	SchedulerParameters=batch_sched_delay=0,sched_interval=1
	# Every node claims $CPUS CPUs whatever the machine has: slurmd reports the
	# real count and config_overrides makes slurmctld trust this file instead
	# of marking the node INVALID. So "srun -N3 -n24" needs no -O.
	# TE_SLURMD_PARAMS adds to it (contain_spank, t27).
	SlurmdParameters=config_overrides${TE_SLURMD_PARAMS:+,$TE_SLURMD_PARAMS}
	EOF
	# TE_SLURM_CONF_EXTRA: more lines, as they are (a test's own cluster).
	[ -n "${TE_SLURM_CONF_EXTRA:-}" ] && printf '%s\n' "$TE_SLURM_CONF_EXTRA"
	for ((i = 1; i <= NODES; i++)); do
		echo "NodeName=n$i NodeAddr=$(node_addr "n$i") NodeHostname=n$i CPUs=$CPUS State=UNKNOWN"
	done
	# FORCE:4 lets up to four jobs share a CPU, so a test that leaves a job
	# running does not block the next one.
	echo "PartitionName=test Nodes=n[1-$NODES] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4"
	} >"$DIR/etc/slurm.conf"
}

write_hosts() {
	local i
	{
		echo "127.0.0.1 localhost"
		echo "::1 localhost ip6-localhost ip6-loopback"
		echo "$CTLD_ADDR $(hostname -s) te-ctld"
		for i in $(all_nodes); do
			echo "$(node_addr "$i") $i"
		done
	} >"$DIR/etc/hosts"
}

write_env() {
	cat >"$DIR/env.sh" <<-EOF
	export SLURM_CONF=$DIR/etc/slurm.conf
	export TE_CLUSTER_DIR=$DIR
	export TE_CLUSTER_NODES=$NODES
	export TE_CLUSTER_NET=$NET
	EOF
	# A login node: where clients run in a configless cluster (exec login)
	[ "$LOGIN" = 1 ] && echo "export TE_CLUSTER_LOGIN=login" >>"$DIR/env.sh"
	return 0
}

# Writes plugstack.conf through a temporary file and a rename, so that a
# step never reads a half-written file.
write_plugstack() { # LINE...
	local tmp
	tmp=$(mktemp "$DIR/etc/.plugstack.XXXXXX") || die "cannot write in $DIR/etc"
	if [ $# -gt 0 ]; then printf '%s\n' "$@" >"$tmp"; fi
	chmod 644 "$tmp"
	mv -f "$tmp" "$DIR/etc/plugstack.conf"
}

# ------------------------------------------------------------ daemons
# Every daemon starts with all signals at their defaults (env
# --default-signal), as under systemd: started with & from a script it would
# have SIGINT and SIGQUIT ignored (and SIGHUP under nohup), and Slurm 26.05's
# tasks start with the dispositions slurmd was started with (verified:
# SigIgn 0x6 in every task of a sid cluster, 0 with this).
start_munged() {
	local deadline
	install -d -m 0755 "$DIR/munge"
	mungekey --create --bits=1024 --keyfile="$DIR/munge/munge.key" --force \
		>/dev/null 2>&1 || die "mungekey failed"
	chmod 0400 "$DIR/munge/munge.key"
	# -F: stays in the foreground so that $! is munged itself (it then logs to
	# stderr, munged.out). --force: a socket left by a killed munged is no
	# reason to fail.
	env --default-signal setsid munged -F --force \
		--socket="$DIR/munge/munge.socket" \
		--key-file="$DIR/munge/munge.key" \
		--pid-file="$DIR/munge/munged.pid" \
		--seed-file="$DIR/munge/munged.seed" \
		</dev/null >>"$DIR/log/munged.out" 2>&1 9>&- &
	record_pid munged $!
	deadline=$(( $(date +%s) + 10 ))
	until [ -S "$DIR/munge/munge.socket" ]; do
		pid_alive $! || fail_start "munged exited" "$DIR/log/munged.out"
		[ "$(date +%s)" -ge "$deadline" ] && fail_start "munged socket did not appear in 10s" "$DIR/log/munged.out"
		sleep 0.05
	done
	munge -n -S "$DIR/munge/munge.socket" | unmunge -S "$DIR/munge/munge.socket" >/dev/null 2>&1 ||
		fail_start "munge round trip on $DIR/munge/munge.socket failed" "$DIR/log/munged.out"
}

start_network() {
	ip link add "$BRIDGE" type bridge 2>/dev/null ||
		fail_start "cannot create bridge $BRIDGE (taken by another instance? pass --id)"
	record_created link "$BRIDGE"
	ip addr add "$CTLD_ADDR/24" dev "$BRIDGE" || fail_start "cannot address $BRIDGE"
	ip link set "$BRIDGE" up || fail_start "cannot bring $BRIDGE up"
}

# A node is a network namespace plus an "anchor" process that owns the
# node's mount and UTS namespaces (private /tmp, /dev/shm, spool, hosts file,
# host name). slurmd and `exec` enter the anchor's namespaces, so a node
# stays a node when its slurmd is stopped or killed by a test.
start_node() { # NODE
	local node=$1 ns veth anchor deadline
	ns=$(node_netns "$node")
	veth="${VETH_PREFIX}${node#n}"
	ip netns add "$ns" || fail_start "cannot create netns $ns"
	record_created netns "$ns"
	ip link add "$veth" type veth peer name eth0 netns "$ns" ||
		fail_start "cannot create veth $veth"
	record_created link "$veth"
	if ! { ip link set "$veth" master "$BRIDGE" up &&
		ip -n "$ns" addr add "$(node_addr "$node")/24" dev eth0 &&
		ip -n "$ns" link set eth0 up &&
		ip -n "$ns" link set lo up; }; then
		fail_start "cannot set up the network of $node"
	fi
	# No default route: the node reaches the bridge subnet and nothing else.
	install -d -m 0755 "$DIR/nodes/$node/spool" "$DIR/nodes/$node/run"
	install -d -m 1777 "$DIR/nodes/$node/tmp"
	rm -f "$DIR/run/$node.ready"
	# nsenter --net, not `ip netns exec`: the latter remounts /sys, which
	# hides /sys/fs/cgroup, and slurmd then refuses to start.
	env --default-signal setsid nsenter --net="/run/netns/$ns" \
		unshare --mount --uts --propagation private \
		bash "$self" _node_anchor "$DIR" "$node" \
		</dev/null >>"$DIR/log/anchor.$node.log" 2>&1 9>&- &
	anchor=$!
	record_pid "anchor.$node" "$anchor"
	deadline=$(( $(date +%s) + 10 ))
	until [ -e "$DIR/run/$node.ready" ]; do
		pid_alive "$anchor" || fail_start "$node: namespace setup failed" "$DIR/log/anchor.$node.log"
		[ "$(date +%s)" -ge "$deadline" ] && fail_start "$node: namespace setup took over 10s" "$DIR/log/anchor.$node.log"
		sleep 0.05
	done
	if [ "$node" = login ]; then start_sackd; else start_slurmd "$node"; fi
}

# TE_SLURMD_ENV="VAR=VALUE ..." is added to slurmd's environment only (and
# so to every slurmstepd it starts), e.g. to preload a sanitizer runtime.
start_slurmd() { # NODE
	local node=$1 anchor
	local -a extra=()
	anchor=$(pid_of "anchor.$node") || fail_start "$node: its namespace anchor is gone"
	# shellcheck disable=SC2206 # VAR=VALUE words, split on blanks
	[ -n "${TE_SLURMD_ENV:-}" ] && extra=($TE_SLURMD_ENV)
	# --root --wd: entering a mount namespace resets the root and working
	# directories to the namespace's; keep the anchor's (its root may be a
	# chroot: tests/releases/enter.sh; its working directory is /).
	# Configless: the node has no slurm.conf; slurmd fetches it from
	# slurmctld into its spool's conf-cache (and links /run/slurm/conf).
	local -a conf=(-f "$DIR/etc/slurm.conf")
	[ "$CONFIGLESS" = 1 ] && conf=(--conf-server "$CTLD_ADDR:$CTLD_PORT")
	env --default-signal setsid nsenter --target "$anchor" --net --mount --uts --root --wd \
		env "${extra[@]}" slurmd -D -N "$node" "${conf[@]}" \
		</dev/null >>"$DIR/log/slurmd.$node.out" 2>&1 9>&- &
	record_pid "slurmd.$node" $!
}

# The login node's only daemon: sackd fetches the configuration from
# slurmctld into /run/slurm/conf (the node's own /run, DIR/nodes/login/run
# from outside), where srun, sbatch and salloc look when neither SLURM_CONF
# nor /etc/slurm/slurm.conf is there, and takes slurmctld's updates. With
# -D (26.05 has it) it stays in the foreground; 24.11's has no -D
# and always forks into the background (and a reconfiguration may start it
# anew): the sackd recorded is the one found in the node's network
# namespace. Waits (10 s) for slurm.conf and plugstack.conf there.
start_sackd() {
	local anchor fg=() deadline pid sackd cache=$DIR/nodes/login/run/slurm/conf
	anchor=$(pid_of anchor.login) || fail_start "login: its namespace anchor is gone"
	# By its full path, as systemd starts it: 26.05's sackd starts itself
	# anew on a reconfiguration with execv(argv[0]), and "sackd" alone
	# failed there ("fatal: execv() failed: No such file or directory").
	sackd=$(command -v sackd) || fail_start "--login needs sackd (Slurm 23.11 and later)"
	"$sackd" -h 2>&1 | grep -q '^ *-D ' && fg=(-D)
	# systemd makes it (RuntimeDirectory=slurm); sackd fails without it
	install -d -m 0755 "$DIR/nodes/login/run/slurm"
	env --default-signal setsid nsenter --target "$anchor" --net --mount --uts --root --wd \
		"$sackd" "${fg[@]}" --conf-server "$CTLD_ADDR:$CTLD_PORT" \
		</dev/null >>"$DIR/log/sackd.login.out" 2>&1 9>&- &
	deadline=$(( $(date +%s) + 10 ))
	until [ -s "$cache/slurm.conf" ] && [ -e "$cache/plugstack.conf" ] &&
		pid=$(sackd_pid); do
		sleep 0.1
		sackd_pid >/dev/null || fail_start "sackd exited" "$DIR/log/sackd.login.out"
		[ "$(date +%s)" -ge "$deadline" ] &&
			fail_start "sackd wrote no configuration in $cache within 10s" "$DIR/log/sackd.login.out"
	done
	record_pid sackd.login "$pid"
}

# The pid of the sackd running in the login node's network namespace.
sackd_pid() {
	local p
	for p in $(ip netns pids "$(node_netns login)" 2>/dev/null); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = sackd ] && { echo "$p"; return 0; }
	done
	return 1
}

# Runs inside the node's new mount and UTS namespaces (via start_node).
node_anchor() { # DIR NODE
	local dir=$1 node=$2 CONFIGLESS=0
	# shellcheck disable=SC1091
	. "$dir/instance"
	set -e
	hostname "$node"
	mount --bind "$dir/nodes/$node/tmp" /tmp
	mount --bind "$dir/nodes/$node/spool" "$dir/spool"
	mount -t tmpfs -o mode=1777,size=25% "shm-$node" /dev/shm
	mount --bind "$dir/etc/hosts" /etc/hosts
	# Configless: no slurm.conf on the node, as on a real one: the
	# cluster's etc/ (the hosts file is bound already) and /etc/slurm are
	# empty here, and /run is the node's own (slurmd's /run/slurm/conf
	# link, sackd's cache: never another node's).
	# Before its first fetch a daemon knows no AuthInfo: munge's default
	# socket leads to the cluster's munged, as a node's own munged would.
	if [ "$CONFIGLESS" = 1 ]; then
		install -d -m 0755 "$dir/nodes/$node/run/munge"
		ln -sfn "$dir/munge/munge.socket" "$dir/nodes/$node/run/munge/munge.socket.2"
		mount --bind "$dir/nodes/$node/run" /run
		mount -t tmpfs -o mode=0755,size=4k "etc-$node" "$dir/etc"
		[ ! -d /etc/slurm ] || mount -t tmpfs -o mode=0755,size=4k "slurm-$node" /etc/slurm
	fi
	# The checkout (and the paths of --hide): gone for the node. A path the
	# node does not see anyway (under its own /tmp) needs nothing.
	local hidden
	while IFS= read -r hidden; do
		[ -d "$hidden" ] || continue
		mount -t tmpfs -o mode=0555,size=4k "hidden-$node" "$hidden"
	done <"$dir/hide"
	touch "$dir/run/$node.ready"
	set +e
	# slurmd and `exec` start here (nsenter --wd), never in the hidden checkout.
	cd /
	# Sleeps until stop kills it; the mounts vanish with the namespace.
	exec sleep infinity
}

# With a login node, slurmctld reads the cluster's hosts file (its own mount
# namespace): it resolves the host name srun gives, "login", to answer srun
# (the job's end, a step's cancel), as a site's controller resolves its login
# nodes. Without it each lookup failed only after 10 s of retries (no DNS
# here), and meanwhile srun's cancel of a step was lost.
start_slurmctld() {
	local -a ns=()
	# shellcheck disable=SC2016 # expanded by that sh
	[ "$LOGIN" = 1 ] && ns=(unshare --mount --propagation private
		sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$DIR/etc/hosts")
	env --default-signal setsid "${ns[@]}" slurmctld -D -c -f "$DIR/etc/slurm.conf" \
		</dev/null >>"$DIR/log/slurmctld.out" 2>&1 9>&- &
	record_pid slurmctld $!
}

show_log() { # FILE...
	local f
	for f in "$@"; do
		[ -s "$f" ] || continue
		echo "---- last lines of $f" >&2
		tail -n 25 "$f" >&2
	done
}

# Called on any failure during start: report, then clean up (unless
# --keep-on-failure), keep the logs.
fail_start() { # MESSAGE [LOG...]
	local msg=$1
	shift
	say "start failed: $msg"
	show_log "$@"
	if [ "${KEEP_ON_FAILURE:-0}" = 1 ]; then
		say "left running for inspection (--keep-on-failure); clean up with: $prog stop --dir $DIR"
	else
		do_stop >/dev/null 2>&1
		say "cleaned up; logs kept in $DIR/log"
	fi
	exit 1
}

wait_all_idle() { # SECS
	local secs=$1 deadline states bad node st pid
	deadline=$(( $(date +%s) + secs ))
	while :; do
		states=$(SLURM_CONF="$DIR/etc/slurm.conf" timeout 10 sinfo -h -N -o '%N %T' 2>&1)
		if [ "$(echo "$states" | grep -c ' idle$')" -eq "$NODES" ]; then
			return 0
		fi
		[ "$(date +%s)" -ge "$deadline" ] && break
		pid=$(pid_of slurmctld) || fail_start "slurmctld exited" "$DIR/log/slurmctld.out" "$DIR/log/slurmctld.log"
		sleep 0.1
	done
	say "nodes not idle after ${secs}s:"
	printf '    %s\n' "$states" >&2
	bad=("$DIR/log/slurmctld.log")
	for ((node = 1; node <= NODES; node++)); do
		st=$(echo "$states" | awk -v n="n$node" '$1 == n { print $2 }')
		if [ "$st" != idle ]; then
			pid_of "slurmd.n$node" >/dev/null || say "slurmd of n$node is not running"
			bad+=("$DIR/log/slurmd.n$node.out" "$DIR/log/slurmd.n$node.log")
		fi
	done
	fail_start "timeout waiting for all nodes idle" "${bad[@]}"
}

# ------------------------------------------------------------ commands
cmd_start() {
	local nodes=3 id="" plugstack="" timeout_s=60 t0 i real p
	local -a hide=("$repo_root")
	CPUS=8
	KEEP_ON_FAILURE=0
	CONFIGLESS=0
	LOGIN=0
	while [ $# -gt 0 ]; do
		case $1 in
		--nodes) nodes=${2:?--nodes needs a number}; shift 2 ;;
		--id) id=${2:?--id needs 4 hex digits}; shift 2 ;;
		--plugstack) plugstack=${2:?--plugstack needs a file}; shift 2 ;;
		--cpus) CPUS=${2:?--cpus needs a number}; shift 2 ;;
		--timeout) timeout_s=${2:?--timeout needs seconds}; shift 2 ;;
		--keep-on-failure) KEEP_ON_FAILURE=1; shift ;;
		--hide) hide+=("${2:?--hide needs a directory}"); shift 2 ;;
		--configless) CONFIGLESS=1; shift ;;
		--login) LOGIN=1; shift ;;
		*) die "start: unknown argument '$1' (see the header of $self)" ;;
		esac
	done
	if ! [[ $nodes =~ ^[0-9]+$ ]] || [ "$nodes" -lt 1 ] || [ "$nodes" -gt 200 ]; then
		die "--nodes must be 1..200, got '$nodes'"
	fi
	if ! [[ $CPUS =~ ^[0-9]+$ ]] || [ "$CPUS" -lt 1 ]; then
		die "--cpus must be a positive number, got '$CPUS'"
	fi
	[ -z "$plugstack" ] || [ -r "$plugstack" ] || die "--plugstack: cannot read '$plugstack'"
	[ "$LOGIN" = 0 ] || [ "$CONFIGLESS" = 1 ] || die "--login needs --configless (sackd fetches the configuration)"
	[ "$(id -u)" -eq 0 ] || die "must run as root (namespaces, bridge, daemons)"
	local tool
	for tool in slurmctld slurmd sinfo munged mungekey nsenter unshare ip ss; do
		command -v "$tool" >/dev/null || die "$tool not found: run tests/deps.sh"
	done

	mkdir -p "$DIR" || die "cannot create $DIR"
	real=$(cd "$DIR" && pwd -P)
	case $real/ in
	/tmp/*) die "DIR must not be under /tmp: every node has a private /tmp ($real)" ;;
	/dev/shm/*) die "DIR must not be under /dev/shm: every node has a private /dev/shm ($real)" ;;
	esac
	# Unix socket paths (munge, slurmstepd, pmix under the spool) are limited
	# to 107 bytes.
	[ ${#real} -le 60 ] || die "DIR path is too long for Unix sockets (${#real} > 60 chars): $real"
	DIR=$real
	for ((i = 0; i < ${#hide[@]}; i++)); do
		p=$(cd "${hide[i]}" 2>/dev/null && pwd -P) || die "--hide: no directory '${hide[i]}'"
		[ "$p" != / ] || die "--hide: not /"
		case $DIR/ in
		"$p"/*) die "DIR must not be inside $p: the nodes do not see it (use a directory under /var/tmp)" ;;
		esac
		hide[i]=$p
	done
	# Clients and jobs of any user read slurm.conf and reach the munge socket.
	chmod 755 "$DIR"

	exec 9>"$DIR/.lock"
	flock -n 9 || die "another cluster.sh is starting or stopping $DIR"

	if load_instance; then
		if any_recorded_alive; then
			die "a cluster is already running in $DIR (stop it: $prog stop --dir $DIR)"
		fi
		say "cleaning up what a previous start left in $DIR"
		do_stop >/dev/null 2>&1
	fi

	if [ -n "$id" ]; then
		[[ $id =~ ^[0-9a-f]{4}$ ]] || die "--id must be 4 lower-case hex digits, got '$id'"
		derive_instance "$id" "$nodes"
		if instance_busy; then
			say "instance id $ID is busy:"
			printf '    %s\n' "${BUSY[@]}" >&2
			die "another cluster (or something else) uses it; pick another --id"
		fi
	else
		# The id comes from DIR; when it is taken, the next ones are tried.
		id=$(printf '%s' "$DIR" | sha256sum | cut -c1-4)
		for ((i = 0; ; i++)); do
			derive_instance "$id" "$nodes"
			instance_busy || break
			say "instance id $ID is busy (${BUSY[0]}), trying the next one"
			[ "$i" -lt 15 ] || die "16 instance ids from $(printf '%s' "$DIR" | sha256sum | cut -c1-4) on are busy; pass --id"
			id=$(printf '%04x' $(( (16#$id + 1) % 65536 )))
		done
	fi

	t0=$(now)
	rm -rf "$DIR/ctld" "$DIR/spool" "$DIR/nodes" "$DIR/run" "$DIR/log" "$DIR/pids" "$DIR/created"
	install -d -m 0755 "$DIR/etc" "$DIR/ctld" "$DIR/spool" "$DIR/nodes" "$DIR/run" "$DIR/log"
	install -d -m 1777 "$DIR/shared"
	: >"$DIR/pids"
	: >"$DIR/created"
	printf '%s\n' "${hide[@]}" >"$DIR/hide"
	write_instance
	trap 'fail_start "interrupted"' INT TERM HUP

	write_slurm_conf
	write_hosts
	if [ -n "$plugstack" ]; then
		cp "$plugstack" "$DIR/etc/plugstack.conf.new" && mv -f "$DIR/etc/plugstack.conf.new" "$DIR/etc/plugstack.conf"
	else
		write_plugstack
	fi
	write_env

	start_munged
	start_network
	start_slurmctld
	for i in $(all_nodes); do
		start_node "$i"
	done
	wait_all_idle "$timeout_s"
	trap - INT TERM HUP
	local mode=""
	[ "$CONFIGLESS" = 1 ] && mode="; configless"
	[ "$LOGIN" = 1 ] && mode="$mode, login node (sackd)"
	echo "cluster $ID: $NODES nodes idle in $(elapsed "$t0") s (start to all-idle); controller $CTLD_ADDR:$CTLD_PORT; $(slurmd -V 2>&1)$mode"
	echo "clients: . $DIR/env.sh   (or: eval \"\$($self env --dir $DIR)\")"
}

any_recorded_alive() {
	local role pid st
	[ -f "$DIR/pids" ] || return 1
	while read -r role pid st; do
		pid_is_ours "$pid" "$st" && return 0
	done <"$DIR/pids"
	return 1
}

# Kills what start recorded and everything left in the nodes' network
# namespaces (slurmstepd, tasks, `exec` commands), removes the namespaces,
# veths and bridge. Safe to run twice, and after a failed start.
do_stop() {
	local pids=() role pid st kind name netns=() links=() i
	load_instance || return 0
	if [ -f "$DIR/pids" ]; then
		while read -r role pid st; do
			pid_is_ours "$pid" "$st" && pids+=("$pid")
		done <"$DIR/pids"
	fi
	if [ -f "$DIR/created" ]; then
		while read -r kind name; do
			case $kind in
			netns) netns+=("$name") ;;
			link) links+=("$name") ;;
			esac
		done <"$DIR/created"
	fi
	for name in "${netns[@]}"; do
		[ -e "/run/netns/$name" ] || continue
		for pid in $(ip netns pids "$name" 2>/dev/null); do
			pids+=("$pid")
		done
	done
	kill_pids 10 "${pids[@]}"
	for name in "${netns[@]}"; do
		[ -e "/run/netns/$name" ] && ip netns del "$name"
	done
	# Deleting a namespace removes its veth ends; the bridge goes last.
	for ((i = ${#links[@]} - 1; i >= 0; i--)); do
		ip link show "${links[i]}" >/dev/null 2>&1 && ip link del "${links[i]}"
	done
	rm -f "$DIR/instance" "$DIR/created" "$DIR/munge/munge.socket" "$DIR"/run/*.ready
	return 0
}

cmd_stop() {
	[ $# -eq 0 ] || die "stop: unknown argument '$1'"
	[ -d "$DIR" ] || { echo "no cluster in $DIR"; return 0; }
	DIR=$(cd "$DIR" && pwd -P)
	exec 9>"$DIR/.lock"
	flock -w 30 9 || die "another cluster.sh holds $DIR/.lock"
	if ! [ -f "$DIR/instance" ]; then
		echo "no cluster running in $DIR"
		return 0
	fi
	local t0 id
	t0=$(now)
	load_instance
	id=$ID
	do_stop
	echo "cluster $id stopped in $(elapsed "$t0") s; logs in $DIR/log"
}

require_running() {
	load_instance || die "no cluster in $DIR (start one: $prog start --dir $DIR)"
}

cmd_status() {
	require_running
	local role pid st
	echo "dir:        $DIR"
	echo "instance:   $ID  bridge $BRIDGE  subnet $NET.0/24  slurmctld $CTLD_ADDR:$CTLD_PORT"
	echo "processes:"
	while read -r role pid st; do
		if pid_is_ours "$pid" "$st"; then echo "  $role $pid running"; else echo "  $role $pid gone"; fi
	done <"$DIR/pids"
	echo "nodes:"
	SLURM_CONF="$DIR/etc/slurm.conf" timeout 10 sinfo -N -o '  %N %T %c' 2>&1
}

cmd_env() {
	require_running
	sed -n 's/^export /export /p' "$DIR/env.sh"
}

cmd_exec() {
	require_running
	[ $# -ge 2 ] || die "exec: usage: exec NODE CMD..."
	local node=$1 anchor
	shift
	anchor=$(pid_of "anchor.$node") || die "exec: no node '$node' running in $DIR"
	# Entering a mount namespace resets the working directory to /: go back
	# to the caller's when the node sees it.
	# shellcheck disable=SC2016
	exec nsenter --target "$anchor" --net --mount --uts --root --wd \
		env TE_EXEC_PWD="$PWD" bash -c 'cd "$TE_EXEC_PWD" 2>/dev/null || cd /; exec "$@"' bash "$@"
}

cmd_plugstack() {
	require_running
	write_plugstack "$@"
	[ "$CONFIGLESS" = 1 ] && configless_push plugstack.conf
	return 0
}

# Configless: the nodes and sackd read their own copies, which slurmctld
# sends on `scontrol reconfigure`. Waits (30 s) until every running slurmd's
# copy (its spool's conf-cache) and sackd's are FILE as DIR/etc has it.
configless_push() { # FILE
	local f=$1 want deadline node copy stale
	want=$(cat "$DIR/etc/$f")
	SLURM_CONF="$DIR/etc/slurm.conf" timeout 30 scontrol reconfigure ||
		die "scontrol reconfigure failed"
	deadline=$(( $(date +%s) + 30 ))
	while :; do
		stale=()
		for node in $(all_nodes); do
			if [ "$node" = login ]; then
				copy=$DIR/nodes/login/run/slurm/conf/$f
			else
				pid_of "slurmd.$node" >/dev/null || continue
				copy=$DIR/nodes/$node/spool/conf-cache/$f
			fi
			[ "$(cat "$copy" 2>/dev/null)" = "$want" ] || stale+=("$node")
		done
		[ ${#stale[@]} -eq 0 ] && return 0
		[ "$(date +%s)" -ge "$deadline" ] &&
			die "configless: $f did not reach ${stale[*]} within 30 s of scontrol reconfigure"
		sleep 0.1
	done
}

cmd_slurmd() {
	require_running
	[ $# -eq 2 ] || die "slurmd: usage: slurmd NODE start|stop|kill"
	local node=$1 pid
	pid_of "anchor.$node" >/dev/null || die "slurmd: no node '$node' running in $DIR"
	[ "$node" != login ] || die "slurmd: the login node runs no slurmd"
	case $2 in
	start)
		pid_of "slurmd.$node" >/dev/null && die "slurmd of $node is already running"
		start_slurmd "$node"
		echo "slurmd of $node started (pid $(pid_of "slurmd.$node"))" ;;
	stop)
		pid=$(pid_of "slurmd.$node") || die "slurmd of $node is not running"
		kill_pids 10 "$pid" ;;
	kill)
		pid=$(pid_of "slurmd.$node") || die "slurmd of $node is not running"
		kill -KILL "$pid" ;;
	*) die "slurmd: unknown action '$2' (start, stop or kill)" ;;
	esac
}

cmd_logs() {
	require_running
	ls -1 "$DIR"/log/*
}

# ------------------------------------------------------------ main
[ $# -ge 1 ] || die "usage: $prog start|stop|status|env|exec|plugstack|slurmd|logs [--dir DIR] ..."
cmd=$1
shift
if [ "$cmd" = _node_anchor ]; then
	node_anchor "$@"
	exit 1
fi
DIR=${TE_CLUSTER_DIR:-$(default_dir)}
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--dir) DIR=${2:?--dir needs a directory}; shift 2 ;;
	--dir=*) DIR=${1#--dir=}; shift ;;
	--) shift; args+=("$@"); break ;;
	*)
		# exec and plugstack pass the rest through untouched
		if [ "$cmd" = exec ] || [ "$cmd" = plugstack ]; then args+=("$@"); break; fi
		args+=("$1"); shift ;;
	esac
done
if [ "$cmd" != start ] && [ -d "$DIR" ]; then DIR=$(cd "$DIR" && pwd -P); fi

case $cmd in
start) cmd_start "${args[@]}" ;;
stop) cmd_stop "${args[@]}" ;;
status) cmd_status "${args[@]}" ;;
env) cmd_env "${args[@]}" ;;
exec) cmd_exec "${args[@]}" ;;
plugstack) cmd_plugstack "${args[@]}" ;;
slurmd) cmd_slurmd "${args[@]}" ;;
logs) cmd_logs "${args[@]}" ;;
*) die "unknown command '$cmd' (start|stop|status|env|exec|plugstack|slurmd|logs)" ;;
esac
