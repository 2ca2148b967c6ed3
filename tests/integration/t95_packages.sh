#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The packages administrators install (issue 16): builds the .debs with
# dpkg-buildpackage from a clean clone of this checkout's HEAD, checks them
# with lintian (no error), builds the RPM source and binary packages from
# trainenv.spec, installs the .debs, runs 2-node steps on the local cluster
# with the packaged plugin's path in plugstack.conf (the rank environment
# from the packaged helper, the packaged tool, Python module, libtrainenv
# and NCCL preload), then purges the packages and checks that nothing of
# them is left. The packages are purged at exit whatever happens; the test
# does not run when any of them is installed already (it would not leave
# the machine as it found it). One only removed, its configuration left
# (dpkg -l's "rc"), is not installed: the test runs, and its purge removes
# that configuration too.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source-path=SCRIPTDIR source=../lib/itest.sh
. "$here/../lib/itest.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/dpkg_state.sh
. "$here/../lib/dpkg_state.sh"

debs=(trainenv-slurm-plugin trainenv libtrainenv0 libtrainenv-dev python3-trainenv)
rpms=(trainenv trainenv-slurm-plugin trainenv-libs trainenv-devel python3-trainenv)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
plugin=/usr/lib/$multiarch/slurm-wlm/trainenv.so
preload=/usr/lib/$multiarch/trainenv/trainenv-nccl.so
libtrainenv=/usr/lib/$multiarch/libtrainenv.so.0
checkout=${TE_REAL_SRCDIR:-$(cd "$here/../.." && pwd -P)}
PY=/usr/bin/python3

# At exit, whatever happened: purge those of our packages dpkg knows
# (installed or not: their configuration too).
# shellcheck disable=SC2317 # called by te_on_exit
_pkg_purge() {
	local p left=()
	for p in "${debs[@]}"; do
		te_dpkg_known "$p" >/dev/null && left+=("$p")
	done
	[ ${#left[@]} -eq 0 ] || dpkg --purge "${left[@]}" 2>&1 | sed 's/^/# exit: /'
}

if ! head=$(git -C "$checkout" rev-parse --verify -q HEAD 2>/dev/null); then
	echo "1..0 # SKIP $checkout is not a git checkout: the packages are built from a clean clone of HEAD"
	exit 0
fi
installed=() leftover=()
for p in "${debs[@]}"; do
	st=$(te_dpkg_known "$p") || continue
	if te_dpkg_installed "$p"; then
		installed+=("$p ($st)")
	else
		leftover+=("$p ($st)")
	fi
done
if [ ${#installed[@]} -gt 0 ]; then
	echo "1..0 # SKIP trainenv packages are already installed on this machine (${installed[*]}): this test installs and purges its own"
	exit 0
fi
for t in dpkg-buildpackage dh lintian rpmbuild rpmspec; do
	command -v "$t" >/dev/null || bail_out "$t is missing: run tests/deps.sh (debhelper, lintian, rpm)"
done

plan 39
[ ${#leftover[@]} -eq 0 ] ||
	diag "not installed but known to dpkg, purged at the end: ${leftover[*]}"

work=$(mktemp -d /var/tmp/te-pkg.XXXXXX) || bail_out "no work directory"
# The clone, its build and the logs: kept when something failed.
# shellcheck disable=SC2016 # expanded at exit
te_on_exit '[ "$_te_failed" -eq 0 ] && rm -rf "$work" || echo "# packaging logs kept in $work"'
trap _te_exit EXIT
trap '_te_signal INT 2' INT
trap '_te_signal TERM 15' TERM

# ---------------------------------------------------------------- .debs
diag "building the packages of HEAD ($head) of $checkout (uncommitted changes are not in them)"
git clone -q --no-checkout "$checkout" "$work/trainenv" && git -C "$work/trainenv" checkout -q "$head"
ok $? "a clean clone of HEAD" || bail_out "cannot clone $checkout"
(cd "$work/trainenv" && apt-get build-dep -s . >"$work/build-dep.log" 2>&1)
ok $? "apt-get build-dep . reads the build dependencies" || diag "$(tail -5 "$work/build-dep.log")"
like "$(cat "$work/build-dep.log")" "^0 upgraded, 0 newly installed" \
	"every build dependency is installed (tests/deps.sh installs them)"
# Without this run's trees in the environment: the package's make check
# (test_slurm_releases.sh) would build the staged tree (TE_BUILDDIR) instead
# of its own, as no packager's machine has.
te_seconds env -u TE_SRCDIR -u TE_BUILDDIR -u TE_STAGE -u TE_REAL_SRCDIR \
	-u TE_REAL_BUILDDIR -C "$work/trainenv" DEB_BUILD_OPTIONS=parallel=2 \
	nice dpkg-buildpackage -us -uc -b >"$work/dpkg-buildpackage.log" 2>&1
ok $? "dpkg-buildpackage -us -uc -b builds (${TE_SECONDS}s, unit tests included)" ||
	bail_out "dpkg-buildpackage failed: $(tail -20 "$work/dpkg-buildpackage.log")"
files=()
for p in "${debs[@]}"; do files+=("$work/${p}_"*"_$(dpkg --print-architecture).deb"); done
n=0
for f in "${files[@]}"; do [ -f "$f" ] && n=$((n + 1)); done
is "$n" "${#debs[@]}" "one .deb for each of ${debs[*]}"

deb_of() { local f; for f in "${files[@]}"; do case ${f##*/} in "$1"_*) echo "$f" ;; esac; done; }
contents=$(dpkg-deb -c "$(deb_of trainenv-slurm-plugin)" | awk '{ print $6 }')
like "$contents" "^\.$plugin\$" "the plugin package puts trainenv.so where Debian's Slurm loads plugins ($plugin)"
contents=$(dpkg-deb -c "$(deb_of trainenv)" | awk '{ print $6 }')
like "$contents" "^\./usr/libexec/trainenv/trainenv-rdzv\$" "the trainenv package holds the helpers"
like "$contents" "^\.$preload\$" "and the NCCL preload library, in a private directory"
like "$contents" '^\./etc/enroot/hooks\.d/99-trainenv\.sh$' "and trainenv's enroot hook"
fstab=$(dpkg-deb --fsys-tarfile "$(deb_of trainenv)" | tar -xO ./etc/enroot/mounts.d/99-trainenv.fstab 2>&1 | grep -v '^#')
is "$fstab" "${preload%/*} ${preload%/*} none x-create=dir,bind,ro,nosuid,nodev,private 0 -1" \
	"and its enroot mount entry binds the preload library's directory into containers"
pyfstab=$(dpkg-deb --fsys-tarfile "$(deb_of python3-trainenv)" | tar -xO ./etc/enroot/mounts.d/99-trainenv-python.fstab 2>&1 | grep -v '^#')
is "$pyfstab" "/usr/lib/python3/dist-packages/trainenv /usr/lib/python3/dist-packages/trainenv none x-create=dir,bind,ro,nosuid,nodev,private 0 -1" \
	"python3-trainenv's enroot mount entry binds the module into containers"
slurm_mm=$(dpkg-query -W -f='${Version}' slurmd 2>/dev/null | cut -d. -f1-2)
dep=$(dpkg-deb -f "$(deb_of trainenv-slurm-plugin)" Depends)
like "$dep" "slurm-wlm-basic-plugins \(>= ${slurm_mm}~\), slurm-wlm-basic-plugins \(<< " \
	"the plugin depends on the Slurm release it was built for ($slurm_mm)"
out=$(lintian --pedantic -I "$work"/trainenv_*.changes 2>&1)
ok "$(grep -c '^E: ' <<<"$out")" "lintian reports no error"
diag "lintian: $(grep -cE '^W: ' <<<"$out") warnings, $(grep -cE '^[IP]: ' <<<"$out") notes"
tags=$(grep -E '^[EWIP]: ' <<<"$out") && diag "$tags"

# ---------------------------------------------------------------- RPM
mkdir -p "$work/rpm/SOURCES"
version=$(sed -n 's/^Version: *//p' "$work/trainenv/trainenv.spec")
git -C "$work/trainenv" archive --prefix="trainenv-$version/" HEAD | xz >"$work/rpm/SOURCES/trainenv-$version.tar.xz"
rpmbuild --define "_topdir $work/rpm" -bs "$work/trainenv/trainenv.spec" >"$work/rpm.log" 2>&1
ok $? "rpmbuild -bs builds the source RPM from trainenv.spec" || diag "$(tail -10 "$work/rpm.log")"
out=$(rpmspec -q --qf '%{name}\n' "$work/trainenv/trainenv.spec" 2>/dev/null | sort | tr '\n' ' ')
is "$out" "$(printf '%s\n' "${rpms[@]}" | sort | tr '\n' ' ')" "the spec has the same split: ${rpms[*]}"
out=$(rpmspec -q --requires "$work/trainenv/trainenv.spec" 2>/dev/null)
like "$out" "^slurm\(x86-64\) >= $slurm_mm\$" "the RPM plugin requires the Slurm release of the headers ($slurm_mm)"
# Debian has no RPM database of the build dependencies: --nodeps builds
# the binary packages with Debian's, which proves %build, %install and %files.
te_seconds nice rpmbuild --define "_topdir $work/rpm" --define "debug_package %{nil}" --nodeps \
	--nocheck -bb "$work/trainenv/trainenv.spec" >>"$work/rpm.log" 2>&1
ok $? "rpmbuild -bb --nodeps builds the binary RPMs (${TE_SECONDS}s)" || diag "$(tail -10 "$work/rpm.log")"
out=$(rpm -qpl "$work"/rpm/RPMS/*/trainenv-slurm-plugin-*.rpm 2>/dev/null)
like "$out" "^/usr/lib64/slurm/trainenv.so\$" "the RPM plugin goes where SchedMD's Slurm RPMs load plugins"

# ---------------------------------------------------------------- install
cluster_up --nodes 2 || bail_out "no cluster"
te_on_exit _pkg_purge
dpkg -i "${files[@]}" >"$work/dpkg-i.log" 2>&1
ok $? "dpkg -i installs the five packages" || bail_out "$(tail -20 "$work/dpkg-i.log")"
owned=$(dpkg -L "${debs[@]}" 2>/dev/null | sort -u)

set_plugstack "required $plugin"
# shellcheck disable=SC2016 # expanded in the tasks
show='echo "$SLURM_PROCID $(hostname) RANK=$RANK WORLD_SIZE=$WORLD_SIZE LOCAL_RANK=$LOCAL_RANK MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT"'
# The packaged plugin, tool, module and preload in PMIx steps (not
# indented: the Python programs below are in quotes).
if te_no_mpi_pmix; then
	skip "$TE_WHY" 14
else
out=$(te_srun -t 60 --mpi=pmix -N2 -w n1,n2 --ntasks-per-node=2 bash -c "$show" 2>&1)
ok $? "a 2-node PMIx step runs with the packaged plugin" || diag "$out"
is "$(grep -c 'RANK=' <<<"$out")" 4 "four tasks report" || diag "$out"
is "$(awk '{ print $1 "=" substr($3, 6) }' <<<"$out" | sort | tr '\n' ' ')" "0=0 1=1 2=2 3=3 " \
	"RANK is each task's rank"
is "$(grep -o 'WORLD_SIZE=[^ ]*' <<<"$out" | sort -u)" "WORLD_SIZE=4" "WORLD_SIZE is 4 everywhere"
is "$(awk '{ print $2, $5 }' <<<"$out" | sort | tr '\n' ' ')" \
	"n1 LOCAL_RANK=0 n1 LOCAL_RANK=1 n2 LOCAL_RANK=0 n2 LOCAL_RANK=1 " "LOCAL_RANK counts on each node"
addr=$(cluster_exec n1 getent ahostsv4 n1 | awk 'NR == 1 { print $1 }')
is "$(grep -o 'MASTER_ADDR=[^ ]*' <<<"$out" | sort -u)" "MASTER_ADDR=$addr" \
	"MASTER_ADDR is rank 0's node's address ($addr) for every rank"
port=$(grep -o 'MASTER_PORT=[0-9]*' <<<"$out" | sort -u)
[ "$(wc -l <<<"$port")" = 1 ] && [ "${port#*=}" -ge 20000 ] && [ "${port#*=}" -le 29999 ]
ok $? "one MASTER_PORT for all, in the default range ($port)"

out=$(te_srun -t 60 --mpi=pmix -N2 --ntasks-per-node=1 --train-nccl-heartbeat=600 \
	sh -c 'command -v trainenv; trainenv env' 2>&1)
ok $? "the packaged trainenv env runs in the tasks" || diag "$out"
is "$(grep -c '^/usr/bin/trainenv$' <<<"$out")" 2 "from /usr/bin on both nodes"
is "$(grep -cE '^nccl-heartbeat += 600 +\(option: --train-nccl-heartbeat\)' <<<"$out")" 2 "and reports the user's option"

out=$(te_srun -t 60 --mpi=pmix -N2 --ntasks-per-node=1 env -u PYTHONPATH -u TRAINENV_LIBRARY "$PY" -c '
import trainenv
trainenv.barrier(timeout=30)
print("barrier passed", trainenv.__file__, trainenv.version())' 2>&1)
is "$(grep -c "^barrier passed /usr/lib/python3/dist-packages/trainenv/__init__.py " <<<"$out")" 2 \
	"the packaged Python module runs the job-wide barrier through libtrainenv on both nodes" || diag "$out"

# The preload library loads libtrainenv from LIBDIR (it is not beside it):
# a call of NCCL's entry point runs the barrier, then finds no real NCCL.
out=$(te_srun -t 60 --mpi=pmix -N2 --ntasks-per-node=1 --train-barrier=first-collective \
	env -u PYTHONPATH "$PY" -c '
import ctypes, os
print("preload=" + os.environ.get("LD_PRELOAD", ""))
rc = ctypes.CDLL(None).ncclCommInitAll(ctypes.byref(ctypes.c_void_p()), 1, None)
maps = open("/proc/self/maps").read()
print("rc=%d" % rc, "libtrainenv=" + ("'"$libtrainenv"'" in maps and "mapped" or "absent"))' 2>&1)
is "$(grep -c "^preload=$preload\$" <<<"$out")" 2 "--train-barrier=first-collective preloads the packaged $preload" || diag "$out"
is "$(grep -c '^rc=2 libtrainenv=mapped$' <<<"$out")" 2 \
	"its barrier loads the packaged libtrainenv and passes on both nodes (then no NCCL: ncclSystemError)" || diag "$out"
is "$(grep -c 'ncclCommInitAll: not found in any library loaded after trainenv-nccl.so' <<<"$out")" 2 \
	"and it says NCCL is not loaded, not that the barrier failed"
fi

# ---------------------------------------------------------------- purge
set_plugstack
dpkg --purge "${debs[@]}" >"$work/purge.log" 2>&1
ok $? "dpkg --purge removes the five packages" || diag "$(cat "$work/purge.log")"
remains=$(for p in "${debs[@]}"; do st=$(te_dpkg_known "$p") && echo "$p $st"; done)
is "$remains" "" "dpkg knows none of them any more (not even their configuration)"
remains=$(while read -r f; do
	[ -n "$f" ] && [ ! -d "$f" ] && { [ -e "$f" ] || [ -L "$f" ]; } && echo "$f"
done <<<"$owned")
is "$remains" "" "none of their files is left"
remains=$(ls -d /usr/libexec/trainenv "/usr/lib/$multiarch/trainenv" /usr/include/trainenv \
	/usr/lib/python3/dist-packages/trainenv /usr/share/doc/trainenv* 2>/dev/null)
is "$remains" "" "nor their directories (the byte code of the module included)"
ldconfig -p | grep -q libtrainenv
ok $((!$?)) "the dynamic linker's cache no longer has libtrainenv"
out=$(te_srun -t 60 -N2 hostname 2>&1)
ok $? "the cluster runs steps after the purge" || diag "$out"

done_testing
