#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Mixed versions as a rolling upgrade meets them (issue 33, item 2): the
# plugin and launch helper of the 0.1.0 release (main at 6d8a4cc, before
# the protocol check), built from this clone's history, against this
# build's, in both directions. This build's plugin with 0.1.0's
# trainenv-rdzv in its helper directory, and 0.1.0's plugin starting this
# build's trainenv-rdzv: the step is refused at once, no rank runs, and
# each task says one line naming its node, the helper's directory and both
# versions (0.1.0 as "no protocol"), never only "bad argument". This
# build's plugin and trainenv-rdzv with 0.1.0's trainenv-preflight, GPUs in
# the step: the same line names the preflight, and no GPU is blamed (it
# exits 2 with its usage on stderr, which the plugin's question
# --protocol-version then reads). Protocol 1
# against 2 is t57's. Skips in one line where the history is not there
# (a shallow clone, a tarball). 0.1.0's plugin only where it was made
# for, Slurm 22.05.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/trainenv.sh
. "$here/../lib/trainenv.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/pmix_common.sh
. "$here/../lib/pmix_common.sh"

te_build_init
old=6d8a4cce8f5c517fb0aaed7f51c5ce5dda653ed7 # the last 0.1.0
osrc=$TE_REAL_SRCDIR
obuild=$TE_REAL_BUILDDIR
if ! git -C "$osrc" cat-file -e "$old^{commit}" 2>/dev/null; then
	echo "1..0 # SKIP trainenv 0.1.0 (commit ${old:0:7}) is not in this clone's history (a shallow clone or a tarball): its plugin and helper cannot be built"
	exit 0
fi
te_require_mpi_pmix

# 0.1.0's trainenv.so and trainenv-rdzv, built once per commit and Slurm
# (the headers this build used: config.status's --with-slurm, and
# TE_SLURM_VERSION_NUMBER) under /var/tmp, which a release root has of
# its own. Only those two targets: about 50 s on 2 busy CPUs.
slurmnum=$(sed -n 's/^#define TE_SLURM_VERSION_NUMBER \([0-9]*\)$/\1/p' "$obuild/config.h")
withslurm=$(eval "set -- $("$obuild/config.status" --config)"; for a; do
	case $a in --with-slurm=*) printf '%s\n' "$a" ;; esac; done)
cache=/var/tmp/trainenv-release-${old:0:12}-slurm${slurmnum:-0}
# 0.1.0 was made for Slurm 22.05 alone (its package requires it) and its
# plugin does not build against 24.05 and later (hostlist_t became
# opaque): there only its helper is built, which needs no Slurm, and
# only this plugin meets it.
targets=(trainenv.la trainenv-rdzv trainenv-preflight)
files=(.libs/trainenv.so trainenv-rdzv trainenv-preflight)
if [ "${slurmnum:-0}" -ge $((0x160600)) ]; then
	targets=(trainenv-rdzv trainenv-preflight) files=(trainenv-rdzv trainenv-preflight)
	no_old_plugin="0.1.0's plugin was made for Slurm 22.05 alone and does not build against this one ($(printf '%d.%02d.%d' $((slurmnum >> 16)) $(((slurmnum >> 8) & 255)) $((slurmnum & 255)))): no such plugin can meet this helper here"
fi
build_old() {
	local d f
	for f in "${files[@]}"; do [ -f "$cache/${f##*/}" ] || break; done
	[ -f "$cache/${f##*/}" ] && return 0
	d=$(mktemp -d /var/tmp/trainenv-release-build.XXXXXX) || return 1
	# shellcheck disable=SC2086 # withslurm: zero or one word
	if git -C "$osrc" archive "$old" | tar x -C "$d" &&
		(cd "$d" && autoreconf -fi && ./configure --prefix=/usr/local $withslurm &&
			make -j"$(nproc)" "${targets[@]}") >"$d/build.log" 2>&1 &&
		mkdir -p "$cache.tmp" && (cd "$d" && cp "${files[@]}" "$cache.tmp/") &&
		rm -rf "$cache" && mv "$cache.tmp" "$cache"; then
		rm -rf "$d"
		return 0
	fi
	tail -20 "$d/build.log" | sed 's/^/# /'
	rm -rf "$d" "$cache.tmp"
	return 1
}

plan 17

(flock 9; build_old) 9>"$cache.lock"
ok $? "trainenv 0.1.0 (${old:0:7}) built from the clone's history ($cache)" ||
	bail_out "0.1.0 could not be built"
cluster_up --nodes 3
ok $? "cluster is up" || bail_out "no cluster"
ver=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$obuild/config.h")
proto=$(sed -n 's/^#define TE_PROTOCOL_VERSION \([0-9]*\)$/\1/p' "$osrc/core/launch/version.h")
mkdir -p "$TE_WORK/old"
(cd "$cache" && cp "${files[@]##*/}" "$TE_WORK/old/")
chmod 755 "$TE_WORK/old" "$TE_WORK/old/trainenv-rdzv" "$TE_WORK/old/trainenv-preflight"
is "$("$TE_WORK/old/trainenv-rdzv" --protocol "$proto" | sed -n 2p)" \
	"ERROR=trainenv-rdzv: bad argument '--protocol'" \
	"  0.1.0's helper refuses --protocol as any unknown word"
none='no protocol \(trainenv 0\.1\.0, before the protocol check\)'
now="protocol $proto \(trainenv ${ver//./\\.}\)"
advice='install the same trainenv on every node \(plugin, helpers and libtrainenv\)'

# This build's plugin, 0.1.0's helper on every node.
set_plugstack "required $plugin helper-dir=$TE_WORK/old test-hooks=on"
refused_step 60 15 "this plugin, 0.1.0's helper: the step is refused at once"
want="^trainenv: error: node (n[1-3]): trainenv-rdzv in ${TE_WORK//./\\.}/old speaks $none, the plugin $now: $advice\$"
is "$(count_lines "$out" "$want")" 6 "  each of the 6 tasks says the one line naming both versions" || diag "$out"
is "$(printf '%s\n' "$out" | sed -nE "s|$want|\1|p" | sort -u | tr '\n' ' ')" "n1 n2 n3 " "  naming its node"
is "$(count_lines "$out" "bad argument|killed|skips the PMIx")" 0 "  no 'bad argument', kill or hint to skip the rendezvous"
diag "$(printf '%s\n' "$out" | grep -m1 'trainenv: error')"

# This build's plugin and trainenv-rdzv, 0.1.0's trainenv-preflight on
# every node, GPUs in the step (fake ones in this machine's topology, as
# t61's): 0.1.0's check refuses --protocol with its usage on stderr and
# exit 2, and the plugin asks it --protocol-version to name it.
mkdir -p "$TE_WORK/oldpf"
cp "$TE_WORK/old/trainenv-preflight" "$TE_WORK/oldpf/"
ln -s "$(dirname "$helper")/trainenv-rdzv" "$TE_WORK/oldpf/trainenv-rdzv"
chmod 755 "$TE_WORK/oldpf"
if ! { lstopo-no-graphics --of xml --whole-io - >"$TE_WORK/here.xml" 2>/dev/null &&
	"$here/../lib/add_gpus.py" "$TE_WORK/here.xml" "$TE_WORK/gpus.xml" 2; }; then
	bail_out "no topology with fake GPUs (hwloc's lstopo-no-graphics)"
fi
set_plugstack "required $plugin helper-dir=$TE_WORK/oldpf test-hooks=on bind-topology=$TE_WORK/gpus.xml"
CUDA_VISIBLE_DEVICES=0,1 refused_step 60 15 "this plugin, 0.1.0's trainenv-preflight: the step is refused at once" \
	--train-preflight=on
want="^trainenv: error: node (n[1-3]): trainenv-preflight in ${TE_WORK//./\\.}/oldpf speaks $none, the plugin $now: $advice\$"
is "$(count_lines "$out" "$want")" 6 "  each of the 6 tasks says the one line naming 0.1.0's preflight" || diag "$out"
is "$(count_lines "$out" "exited with status")" 0 "  not taken for a GPU's failure ('the check ... exited with status 2')"
diag "$(printf '%s\n' "$out" | grep -m1 'trainenv: error')"

# 0.1.0's plugin, this build's helper on every node.
if [ -n "${no_old_plugin:-}" ]; then
	skip "$no_old_plugin" 5
	exit 0
fi
chmod 644 "$TE_WORK/old/trainenv.so"
set_plugstack "required $TE_WORK/old/trainenv.so helper-dir=$(dirname "$helper") test-hooks=on"
refused_step 60 15 "0.1.0's plugin, this helper: the step is refused at once"
dir=$(dirname "$helper")
want="^trainenv: error: node (n[1-3]): trainenv-rdzv in ${dir//./\\.} speaks $now, the plugin $none: $advice\$"
is "$(count_lines "$out" "$want")" 6 "  each of the 6 tasks says the one line naming both versions" || diag "$out"
is "$(printf '%s\n' "$out" | sed -nE "s|$want|\1|p" | sort -u | tr '\n' ' ')" "n1 n2 n3 " "  naming its node"
is "$(count_lines "$out" "bad argument|killed|skips the PMIx")" 0 "  no 'bad argument', kill or hint to skip the rendezvous"
diag "$(printf '%s\n' "$out" | grep -m1 'trainenv: error')"
