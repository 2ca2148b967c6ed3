#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# trainenv health's NVLink and XID parts of the gpu check (TAP), against
# the stand-in NVML (tests/unit/fake_nvml.c): links down against the
# site's health_nvlink, no NVLink, a failing query; XIDs from a stand-in
# kernel log (--kmsg, records in /dev/kmsg's format) against the node's
# watermark (--state-dir): an XID 79 fails naming the GPU and its PCI
# address, the next run without new records passes, a new record fails
# again, an XID not in health_xid_fail passes with a note, user space's
# lines and junk are not XIDs, a watermark that is a link or writable by
# others is refused in one line, and /dev/kmsg itself is read.
# Environment: TE_BUILDDIR (default: the current directory).
set -u
build=${TE_BUILDDIR:-$PWD}
src=${TE_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd -P)}
tool=$build/trainenv
fake=$build/tests/unit/.libs/libfakenvml.so

# shellcheck source-path=SCRIPTDIR source=../lib/unit_check.sh
. "$src/tests/lib/unit_check.sh"

if [ ! -x "$tool" ] || [ ! -f "$fake" ]; then
	echo "1..0 # SKIP $tool or $fake is not built"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/nvml"
ln -s "$fake" "$tmp/nvml/libnvidia-ml.so.1"
has() { # TEXT: 0 when $out holds the line part TEXT
	printf '%s\n' "$out" | grep -qF -- "$1"
}
gpu() { # CONF ARGS...: the tool's output in $out, its status in $rc
	printf '%b' "$1" >"$tmp/nvml.conf"
	shift
	out=$(TE_FAKE_NVML_CONF=$tmp/nvml.conf "$tool" health health=gpu \
		"health_nvml=$tmp/nvml/libnvidia-ml.so.1" "$@" 2>&1)
	rc=$?
}

# NVLink (health_nvlink): the stand-in's GPUs have 18 links each.
gpu '* gpus 4\n* nvlinks 18\n' health_nvlink=18
check $((rc != 0)) "18 of 18 NVLink links up, 18 wanted: exit 0" "rc=$rc $out"
check "$(has 'gpu 3 healthy (ECC, retired pages, remapped rows; processes not checked: no job given; nvlink 18 of 18 up)'; echo $?)" \
	"... each GPU's line says how many links are up" "$out"
gpu '* gpus 4\n* nvlinks 18\n* nvlink_down 3 4\n* nvlink_down 3 9\n' health_nvlink=18
check $((rc != 1)) "2 links of GPU 3 down: exit 1" "rc=$rc $out"
check "$(has 'gpu    fail    gpu 3 nvlink 2 of 18 links down (links 4, 9; want 18 up)'; echo $?)" \
	"... the line names the GPU, the links and the count wanted" "$out"
check "$(printf '%s\n' "$out" | grep -c ' pass .*nvlink 18 of 18 up' | grep -qx 3; echo $?)" \
	"... the other 3 GPUs pass" "$out"
gpu '* gpus 4\n* nvlinks 18\n* nvlink_down 3 4\n' health_nvlink=17
check $((rc != 0)) "17 up, health_nvlink=17: exit 0" "rc=$rc $out"
gpu '* gpus 2\n* nvlinks 18\n* nvlink_down 1 0\n'
check $((rc != 0)) "a link down, health_nvlink not set: not checked, exit 0" "rc=$rc $out"
gpu '* gpus 2\n' health_nvlink=18
check "$([ $rc = 1 ] && has 'gpu 0 no NVLink (want 18 links up)'; echo $?)" \
	"no NVLink while the site wants 18: fails, saying so" "rc=$rc $out"
gpu '* gpus 2\n* nvlinks 12\n' health_nvlink=18
check "$(has 'gpu 1 nvlink 12 links up (want 18)'; echo $?)" \
	"12 links, 18 wanted: fails" "rc=$rc $out"
gpu '* gpus 2\n* nvlinks 18\n* nvlink_rc 1 15\n' health_nvlink=18
check "$(has 'gpu 1 NVLink unreadable (GPU is lost, 15)'; echo $?)" \
	"the NVLink query failing: fails, naming NVML's code" "rc=$rc $out"
gpu '* gpus 2\n' health_nvlink=19
check $((rc != 2)) "health_nvlink=19: exit 2" "rc=$rc $out"
check "$(has "health_nvlink: invalid value '19'; accepted: 0 (not checked) to 18"; echo $?)" \
	"... naming what is accepted" "$out"

# XIDs: GPU 3 of the stand-in is at PCI 0000:40:00.
state=$tmp/state
log=$tmp/kmsg
xid() { # CONF ARGS...: gpu with health_xid=on over $log and $state
	local conf=$1
	shift
	gpu "$conf" health_xid=on --kmsg "$log" --state-dir "$state" "$@"
}
cat >"$log" <<'EOF'
6,100,5000000,-;Linux version 6.1.0
 SUBSYSTEM=pci
 DEVICE=+pci:0000:40:00.0
4,101,6000000,-;NVRM: Xid (PCI:0000:40:00): 79, pid=1234, name=python, GPU has fallen off the bus.
EOF
xid '* gpus 4\n'
check $((rc != 1)) "an XID 79 in the log: exit 1" "rc=$rc $out"
check "$(has 'gpu    fail    gpu 3 XID 79 (PCI:0000:40:00; 1 logged since boot: 79)'; echo $?)" \
	"... naming the GPU, its PCI address and the XID" "$out"
check "$([ -d "$state" ] && [ "$(stat -c %a "$state")" = 755 ]; echo $?)" \
	"... the state dir made 0755" "$(ls -ld "$state")"
check "$(grep -qE '^TEXID1 [0-9a-f-]+ 101$' "$state/health-xid.seq"; echo $?)" \
	"... the watermark holds the boot and the last record, 101" "$(cat "$state/health-xid.seq")"
xid '* gpus 4\n'
check $((rc != 0)) "run again without new records: exit 0 (the watermark)" "rc=$rc $out"
check "$(has "gpu xid: none since the node's last check (kernel log records 100 to 101)"; echo $?)" \
	"... saying none since the last check" "$out"
echo '3,102,7000000,-;NVRM: Xid (PCI:0000:40:00): 48, pid=1, DBE (double bit error)' >>"$log"
xid '* gpus 4\n'
check "$([ $rc = 1 ] && has 'gpu 3 XID 48 (PCI:0000:40:00; 1 logged since the last check: 48)'; echo $?)" \
	"a new record with XID 48: fails again, only the new XID" "rc=$rc $out"
xid '* gpus 4\n'
check $((rc != 0)) "... and passes after it" "rc=$rc $out"
echo '3,103,7000001,-;NVRM: Xid (PCI:0000:40:00): 13, Graphics SM Warp Exception' >>"$log"
xid '* gpus 4\n'
check "$([ $rc = 0 ] && has 'gpu    pass    gpu 3 XID 13 (PCI:0000:40:00; 1 logged since the last check: 13; none in health_xid_fail: not failed)'; echo $?)" \
	"XID 13 (not in the default list): passes with a note" "rc=$rc $out"
echo '3,104,7000002,-;NVRM: Xid (PCI:0000:40:00): 13, again' >>"$log"
xid '* gpus 4\n' health_xid_fail=13,31
check "$([ $rc = 1 ] && has 'gpu 3 XID 13'; echo $?)" \
	"... with health_xid_fail=13,31: fails" "rc=$rc $out"
echo '3,105,7000003,-;NVRM: Xid (PCI:0000:ab:00): 79, pid=1, GPU has fallen off the bus.' >>"$log"
xid '* gpus 4\n'
check "$([ $rc = 1 ] && has 'gpu    fail    PCI:0000:ab:00 XID 79 (1 logged since the last check: 79)'; echo $?)" \
	"an XID of a device NVML does not show: fails naming its PCI address" "rc=$rc $out"
echo '3,106,7000004,-;NVRM: Xid (PCI:0000:40:00): 79, pid=1' >>"$log"
xid '* init 9\n'
check "$([ $rc = 1 ] && has 'PCI:0000:40:00 XID 79'; echo $?)" \
	"the driver not loaded: the XID still fails, named by PCI address" "rc=$rc $out"
{
	echo '14,107,7000005,-;NVRM: Xid (PCI:0000:40:00): 79, written from user space'
	printf '3,108,1,-;NVRM: Xid (PCI:0000:40:00): 7\001 9\n'
	head -c 20000 /dev/urandom | tr -d '\n' | tr '\0' x
	echo
	echo 'not a record'
	echo '3,99999999999999999999999,1,-;NVRM: Xid (PCI:0000:40:00): 79'
	printf '3,109,1,-;NVRM: Xid (PCI:0000:40:00): \n'
	echo '6,110,1,-;done'
} >>"$log"
xid '* gpus 4\n'
check $((rc != 0)) "user space's line, junk, binary, an over-long line: no XID, exit 0" "rc=$rc $out"
check "$(grep -q ' 110$' "$state/health-xid.seq"; echo $?)" \
	"... the watermark moved on past them (110)" "$(cat "$state/health-xid.seq")"

# The watermark: another boot's, or one past the log's end, starts over.
boot=$(cat /proc/sys/kernel/random/boot_id)
echo "TEXID1 00000000-0000-0000-0000-000000000000 110" >"$state/health-xid.seq"
xid '* gpus 4\n'
check "$([ $rc = 1 ] && has 'gpu 3 XID 79 (PCI:0000:40:00; 5 logged since boot: 79, 48, 13)'; echo $?)" \
	"another boot's watermark: every XID since boot counts" "rc=$rc $out"
echo "TEXID1 $boot 900" >"$state/health-xid.seq"
xid '* gpus 4\n'
check "$([ $rc = 1 ] && has 'logged since boot'; echo $?)" \
	"a watermark past the log's end (restarted): since boot" "rc=$rc $out"
rm -f "$state/health-xid.seq"
echo "TEXID1 $boot 1" >"$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$state/health-xid.seq"
xid '* gpus 4\n'
check "$([ $rc = 1 ] && [ "$(printf '%s\n' "$out" | grep -c 'xid')" = 1 ] && has "gpu    error   gpu xid: the watermark $state/health-xid.seq is a symbolic link: refused"; echo $?)" \
	"a watermark that is a symbolic link: refused in one line" "rc=$rc $out"
check "$([ -L "$state/health-xid.seq" ] && grep -qx "TEXID1 $boot 1" "$tmp/elsewhere"; echo $?)" \
	"... neither it nor its target written" "$(ls -l "$state")"
rm -f "$state/health-xid.seq"
echo "TEXID1 $boot 1" >"$state/health-xid.seq"
chmod 0666 "$state/health-xid.seq"
xid '* gpus 4\n'
check "$(has 'only its owner may write: refused'; echo $?)" \
	"a watermark others may write: refused" "rc=$rc $out"
rm -f "$state/health-xid.seq"
# The bound: a log of more records than a check reads (262144) is an
# error saying so, not a pass.
awk 'BEGIN { for (i = 1; i <= 270000; i++) printf "6,%d,1,-;x\n", i }' >"$tmp/big"
t0=$(date +%s%N)
gpu '* gpus 4\n' health_xid=on --kmsg "$tmp/big" --state-dir "$state"
ms=$((($(date +%s%N) - t0) / 1000000))
check "$([ $rc = 1 ] && has "gpu    error   gpu xid: the kernel's log was not read to its end (stopped at"; echo $?)" \
	"a log past the bound: an error saying so (${ms} ms)" "rc=$rc $out"
rm -f "$state/health-xid.seq"
out=$("$tool" health health=gpu health_xid=on --kmsg "$tmp/none" 2>&1)
check $(($? != 2)) "--kmsg that is not there: exit 2" "$out"
out=$("$tool" health health=gpu health_xid=on --state-dir relative 2>&1)
check $(($? != 2)) "--state-dir not absolute: exit 2" "$out"
out=$(TE_KMSG=$log "$tool" health --help 2>&1)
check "$(has '--kmsg FILE'; echo $?)" "--help names --kmsg" "$out"

# /dev/kmsg itself (root, or dmesg_restrict=0): read to its end at once.
if [ -r /dev/kmsg ] && dd if=/dev/kmsg of=/dev/null bs=8192 count=1 iflag=nonblock status=none 2>/dev/null; then
	t0=$(date +%s%N)
	gpu '* gpus 4\n' health_xid=on --state-dir "$tmp/state2"
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "$(has 'gpu xid: none since boot (no earlier check; kernel log records' || has ' XID '; echo $?)" \
		"/dev/kmsg read (${ms} ms), a first check counts since boot" "$out"
	gpu '* gpus 4\n' health_xid=on --state-dir "$tmp/state2"
	check "$(has "since the node's last check" || has 'since the last check'; echo $?)" \
		"... the second, since the last check" "$out"
else
	n=$((n + 2))
	echo "ok $((n - 1)) # SKIP /dev/kmsg cannot be read here (not root)"
	echo "ok $n # SKIP /dev/kmsg cannot be read here (not root)"
fi
echo "1..$n"
[ "$failed" = 0 ]
