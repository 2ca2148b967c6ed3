/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the gpu check's XIDs and NVLink key (core/health/
 * health_xid.c, health_xid_io.c): a /dev/kmsg record and the driver's XID
 * line parsed (and junk refused), the count against the watermark (since
 * the mark, a new boot, a restarted log, user space's lines not counted),
 * the results (which XIDs fail, the GPU named by its PCI address), the
 * site keys and a user refused them, and the watermark's file: made,
 * read, replaced, refused when a link or writable by others. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "health/health.h"
#include "tap.h"

#define BOOT "0f0e0d0c-1111-2222-3333-444455556666"
#define XID79 "4,101,6000,-;NVRM: Xid (PCI:0000:40:00): 79, pid=12, GPU has"

static void test_kmsg(void)
{
	struct te_kmsg_rec r;
	const char *rec = "6,1234,5678,-;hello world\n SUBSYSTEM=pci\n";

	is_int(te_kmsg_parse(rec, strlen(rec), &r), 0, "a record parses");
	is_int((long long)r.seq, 1234, "... its sequence number");
	is_int(r.prio, 6, "... its priority");
	is_int((int)r.msg_len, 11, "... the message's first line only");
	ok(!memcmp(r.msg, "hello world", 11), "... the message");
	rec = "4,77,99,c,caller=T12;msg";
	is_int(te_kmsg_parse(rec, strlen(rec), &r), 0,
	       "more fields before ';' (a later kernel's): parses");
	is_int((long long)r.seq, 77, "... seq 77");
	is_int(te_kmsg_parse("6,1,2;", 6, &r), 0,
	       "no flags, empty message: parses");
	is_int(te_kmsg_parse("", 0, &r), -1, "empty: junk");
	is_int(te_kmsg_parse("6,1,2,-", 7, &r), -1, "no ';': junk");
	is_int(te_kmsg_parse("6;msg", 5, &r), -1, "no sequence number: junk");
	is_int(te_kmsg_parse("x,1,2,-;m", 9, &r), -1,
	       "a priority not a number");
	is_int(te_kmsg_parse("6,-1,2,-;m", 10, &r), -1, "a negative seq: junk");
	is_int(te_kmsg_parse("6,99999999999999999999,2,-;m", 28, &r), -1,
	       "a seq past 2^62: junk");
	is_int(te_kmsg_parse("6,1,\n2,-;m", 10, &r), -1,
	       "';' only past the first line: junk");
	is_int(te_kmsg_parse("6,1\0,2,-;m", 10, &r), -1, "a NUL in the prefix");
}

static int xid(const char *msg, struct te_xid_event *ev)
{
	return te_xid_parse(msg, strlen(msg), ev);
}

static void test_xid_line(void)
{
	struct te_xid_event ev;

	is_int(xid("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, "
		   "GPU has fallen off the bus.",
		   &ev),
	       1, "the driver's XID 79 line parses");
	is_int(ev.xid, 79, "... XID 79");
	ok(ev.domain == 0 && ev.bus == 0x3b && ev.dev == 0, "... 0000:3b:00");
	is_int(xid("NVRM: Xid (0000:B3:1f.0): 13, Graphics Exception", &ev), 1,
	       "no 'PCI:', upper-case hex, a function: parses");
	ok(ev.bus == 0xb3 && ev.dev == 0x1f && ev.xid == 13, "... b3:1f, 13");
	is_int(xid("NVRM: Xid (PCI:0001:3b:00): 48", &ev), 1,
	       "XID at the line's end: parses");
	is_int(ev.domain, 1, "... domain 1");
	is_int(xid("x NVRM: Xid (PCI:0000:3b:00): 79, ...", &ev), 0,
	       "not at the message's start: not an XID");
	is_int(xid("NVRM: GPU at PCI:0000:3b:00: GPU-1234", &ev), 0,
	       "another NVRM line: not an XID");
	is_int(xid("NVRM: Xid (PCI:0000:3b:00) 79", &ev), 0, "no ':': no");
	is_int(xid("NVRM: Xid (PCI:0000:3b:00): 0, x", &ev), 0, "XID 0: no");
	is_int(xid("NVRM: Xid (PCI:0000:3b:00): 65536, x", &ev), 0,
	       "XID past 65535: no");
	is_int(xid("NVRM: Xid (PCI:0000:3b:00): 79x", &ev), 0,
	       "a number with letters after it: no");
	is_int(xid("NVRM: Xid (PCI:0000:3g:00): 79", &ev), 0,
	       "a bus that is not hex: no");
	is_int(xid("NVRM: Xid (PCI:0000:3b:20): 79", &ev), 0,
	       "a device past 31: no");
	is_int(xid("NVRM: Xid (PCI:123456789:3b:00): 79", &ev), 0,
	       "a domain of 9 digits: no");
	is_int(xid("NVRM: Xid (", &ev), 0, "cut short: no");
}

static void init(struct te_xid_scan *s, const char *boot, const char *mark)
{
	te_xid_scan_init(s, boot, mark, strlen(mark));
}

static void rec(struct te_xid_scan *s, const char *r)
{
	te_xid_scan_record(s, r, strlen(r));
}

static void test_scan(void)
{
	static struct te_xid_scan s;
	const struct te_xid_tally *t;
	const char *why;
	char mark[TE_XID_MARK_MAX];

	te_xid_scan_init(&s, BOOT, NULL, 0);
	rec(&s, "6,100,1,-;boot");
	rec(&s, XID79);
	rec(&s, "14,102,1,-;NVRM: Xid (PCI:0000:10:00): 79, from user space");
	rec(&s, "junk");
	t = te_xid_scan_tally(&s, &why);
	is_str(why, "no earlier check", "no mark: since boot");
	is_int(t->n, 1, "... one device (user space's line not counted)");
	is_int(t->dev[0].bus, 0x40, "... bus 40");
	is_int(s.junk, 1, "... the junk counted");
	is_int(s.records, 3, "... 3 records");
	te_xid_mark_text(&s, mark, sizeof(mark));
	is_str(mark, "TEXID1 " BOOT " 102\n", "the next mark: boot and seq");

	te_xid_scan_init(&s, BOOT, mark, strlen(mark));
	rec(&s, "6,100,1,-;boot");
	rec(&s, XID79);
	rec(&s, "6,102,1,-;x");
	t = te_xid_scan_tally(&s, &why);
	ok(!why && t->n == 0,
	   "the mark read back: nothing new, nothing counted");
	rec(&s, "3,103,1,-;NVRM: Xid (PCI:0000:40:00): 13, pid=1");
	rec(&s, "3,104,1,-;NVRM: Xid (PCI:0000:40:00): 79, pid=1");
	rec(&s, "3,105,1,-;NVRM: Xid (PCI:0000:40:00): 13, pid=1");
	t = te_xid_scan_tally(&s, &why);
	ok(!why && t->n == 1 && t->dev[0].count == 3,
	   "3 XIDs past the mark: counted");
	ok(t->dev[0].n_codes == 2 && t->dev[0].codes[0] == 13 &&
		   t->dev[0].codes[1] == 79,
	   "... 13 and 79, once each, as first seen");
	is_int(s.since_boot.dev[0].count, 4, "... 4 since boot");

	te_xid_scan_init(&s, "another-boot", mark, strlen(mark));
	rec(&s, XID79);
	t = te_xid_scan_tally(&s, &why);
	is_str(why, "a new boot", "another boot's mark: since boot");
	is_int(t->n, 1, "... its XID counted");
	init(&s, BOOT, "TEXID1 " BOOT " 5000\n");
	rec(&s, XID79);
	t = te_xid_scan_tally(&s, &why);
	is_str(why, "the kernel's log restarted",
	       "every record before the mark: since boot");
	is_int(t->n, 1, "... its XID counted");
	init(&s, BOOT, "TEXID1 " BOOT " x\n");
	is_str((te_xid_scan_tally(&s, &why), why), "the watermark was junk",
	       "a junk mark: since boot");
	init(&s, BOOT, "TEXID1 a/b 5\n");
	is_int(s.mark, 0, "a mark whose boot id is not a word: junk");
	init(&s, BOOT, "TEXID1 " BOOT " 90\n");
	rec(&s, "6,95,1,-;x");
	rec(&s, "6,99,1,-;x");
	is_int((long long)s.lost, 3, "a gap in the numbers: records lost");
}

static void test_tally_cap(void)
{
	static struct te_xid_scan s;
	const struct te_xid_tally *t;
	const char *why;
	char r[128];
	int i;

	te_xid_scan_init(&s, BOOT, NULL, 0);
	for (i = 0; i < TE_XID_DEVS_MAX + 3; i++) {
		snprintf(r, sizeof(r),
			 "3,%d,1,-;NVRM: Xid (PCI:0000:%02x:00): 79, x", i + 1,
			 i);
		rec(&s, r);
	}
	for (i = 0; i < TE_XID_CODES_MAX + 2; i++) {
		snprintf(r, sizeof(r),
			 "3,%d,1,-;NVRM: Xid (PCI:0000:00:00): %d, x", i + 100,
			 i + 1);
		rec(&s, r);
	}
	t = te_xid_scan_tally(&s, &why);
	is_int(t->n, TE_XID_DEVS_MAX, "devices past the cap are not kept");
	is_int(t->cut, 3, "... but counted");
	is_int(t->dev[0].n_codes, TE_XID_CODES_MAX, "codes past the cap");
	is_int(t->dev[0].codes_cut, 1, "... are marked cut");
}

static struct te_health_set set;

static void results(const struct te_xid_scan *s,
		    const struct te_health_policy *p)
{
	static const struct te_health_gpu_pci gpus[2] = { { 0, 0, 0x10, 0 },
							  { 3, 0, 0x40, 0 } };

	te_health_set_init(&set, "n1");
	te_xid_results(s, gpus, 2, p, &set);
}

static void test_results(void)
{
	static struct te_xid_scan s;
	struct te_health_policy p;
	char err[256];

	te_health_policy_init(&p);
	init(&s, BOOT, "TEXID1 " BOOT " 100\n");
	rec(&s, "6,101,1,-;x");
	results(&s, &p);
	is_str(set.r[0].text,
	       "gpu xid: none since the node's last check (kernel log "
	       "records 101 to 101)",
	       "no XID: one pass naming the records read");
	is_int(set.r[0].verdict, TE_HV_PASS, "... pass");
	rec(&s, "3,102,1,-;NVRM: Xid (PCI:0000:40:00): 13, pid=1");
	rec(&s, "3,103,1,-;NVRM: Xid (PCI:0000:40:00): 79, pid=1");
	rec(&s, "3,104,1,-;NVRM: Xid (PCI:0000:ab:00): 31, pid=1");
	results(&s, &p);
	is_int(set.n, 2, "two devices: two results");
	is_str(set.r[0].text,
	       "gpu 3 XID 79 (PCI:0000:40:00; 2 logged since the last check: "
	       "13, 79)",
	       "XID 79 (the default list) fails, the GPU named by its address");
	is_int(set.r[0].verdict, TE_HV_FAIL, "... fail");
	is_str(set.r[0].device, "gpu 3", "... device gpu 3");
	is_str(set.r[0].value, "XID 79", "... value XID 79");
	is_str(set.r[1].text,
	       "PCI:0000:ab:00 XID 31 (1 logged since the last check: 31; "
	       "none in health_xid_fail: not failed)",
	       "XID 31 on a device NVML does not show: passes, noted");
	is_int(set.r[1].verdict, TE_HV_PASS, "... pass");
	is_int(te_health_policy_parse(&p, "health_xid_fail=31", 18, "site", err,
				      sizeof(err)),
	       0, "health_xid_fail=31 parses");
	results(&s, &p);
	ok(set.r[0].verdict == TE_HV_PASS && set.r[1].verdict == TE_HV_FAIL,
	   "... then 31 fails and 79 does not");
	te_health_policy_parse(&p, "health_xid_fail=none", 20, "site", err,
			       sizeof(err));
	results(&s, &p);
	ok(set.r[0].verdict == TE_HV_PASS && set.r[1].verdict == TE_HV_PASS,
	   "health_xid_fail=none: no XID fails");
	te_health_policy_parse(&p, "health_xid_fail=default", 23, "site", err,
			       sizeof(err));
	ok(te_health_xid_fails(&p, 79) && te_health_xid_fails(&p, 48) &&
		   !te_health_xid_fails(&p, 13),
	   "health_xid_fail=default: 79 and 48 fail, 13 does not");
	s.bounded = 1;
	results(&s, &p);
	is_int(set.r[set.n - 1].verdict, TE_HV_ERROR,
	       "a log not read to its end: an error");
	like(set.r[set.n - 1].text,
	     "gpu xid: the kernel's log was not read to its end (stopped at",
	     "... saying so");
	s.bounded = 0;
	strcpy(s.err, "the watermark /x is a symbolic link: refused");
	results(&s, &p);
	is_int(set.n, 1, "could not read: one result");
	is_int(set.r[0].verdict, TE_HV_ERROR, "... an error (never drains)");
	is_str(set.r[0].text,
	       "gpu xid: the watermark /x is a symbolic link: refused",
	       "... saying why");
}

static int key(struct te_health_policy *p, const char *item)
{
	char err[512];

	return te_health_policy_parse(p, item, strlen(item), "site", err,
				      sizeof(err));
}

static void test_keys(void)
{
	struct te_health_policy site, user, out;
	char err[512];

	te_health_policy_init(&site);
	is_int(key(&site, "health_nvlink=18"), 0, "health_nvlink=18 parses");
	is_int(site.nvlink, 18, "... 18");
	is_int(key(&site, "health_nvlink=19"), -1, "health_nvlink=19 refused");
	is_int(key(&site, "health_xid=on"), 0, "health_xid=on parses");
	is_int(site.xid, 1, "... on");
	is_int(key(&site, "health_xid=yes"), -1, "health_xid=yes refused");
	is_int(key(&site, "health_xid_fail=79,79,48"), 0,
	       "health_xid_fail=79,79,48 parses");
	is_int(site.n_xid_fail, 2, "... each XID once");
	is_int(key(&site, "health_xid_fail=79,0"), -1, "XID 0 refused");
	is_int(key(&site, "health_xid_fail=1,2,3,4,5,6,7,8,9,10,11,12,13,14,"
			  "15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,"
			  "31,32,33"),
	       -1, "33 XIDs refused");
	is_int(te_health_policy_parse(&site, "health_xid=x", 12, "site", err,
				      sizeof(err)),
	       -1, "an error");
	like(err, "health_xid: invalid value 'x'; accepted: on, off",
	     "... naming the key and what is accepted");
	te_health_policy_parse(&site, "health_bogus=1", 14, "site", err,
			       sizeof(err));
	like(err, "health_nvlink, health_xid, health_xid_fail",
	     "an unknown key's error lists the new keys");
	te_health_policy_init(&user);
	key(&user, "health_nvlink=2");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user's health_nvlink: refused");
	is_str(err, "health_nvlink: only the site's policy sets it",
	       "... only the site's");
	te_health_policy_init(&user);
	key(&user, "health_xid=off");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user's health_xid=off: refused");
	te_health_policy_init(&user);
	key(&user, "health_xid_fail=none");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user's health_xid_fail: refused");
	te_health_policy_init(&user);
	key(&user, "health=gpu");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), 0,
	       "a user's other keys: merged");
	ok(out.nvlink == 18 && out.xid == 1 && out.n_xid_fail == 2,
	   "... the site's NVLink and XID keys kept");
}

static char dir[64];

static void put(const char *name, const char *text, mode_t mode)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(path, mode);
}

static void test_io(void)
{
	static struct te_xid_scan s;
	char state[96], kmsg[96], path[128], err[160], buf[256];
	struct stat st;
	FILE *f;
	int i;

	strcpy(dir, "/tmp/te-xid-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(kmsg, sizeof(kmsg), "%s/kmsg", dir);
	put("kmsg", "6,10,1,-;boot\n SUBSYSTEM=pci\n" XID79 "\n", 0644);
	te_xid_read(kmsg, state, &s);
	is_str(s.err, "", "no state dir: made, no error");
	ok(stat(state, &st) == 0 && (st.st_mode & 0777) == 0755,
	   "... the dir is 0755");
	ok(s.records == 2 && s.junk == 0,
	   "2 records (a continuation line skipped)");
	is_int(s.since_boot.n, 1, "... the XID counted");
	is_int(te_xid_commit(state, &s, err, sizeof(err)), 0, "committed");
	snprintf(path, sizeof(path), "%s/" TE_XID_MARK_FILE, state);
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644,
	   "... the mark is a 0644 file");
	te_xid_read(kmsg, state, &s);
	ok(s.mark && s.mark_seq == 101 && s.since_mark.n == 0,
	   "read again: the mark at 101, nothing new");
	unlink(path);
	snprintf(buf, sizeof(buf), "%s/elsewhere", dir);
	put("elsewhere", "TEXID1 x 1\n", 0644);
	if (symlink(buf, path) < 0)
		perror("symlink");
	te_xid_read(kmsg, state, &s);
	like(s.err, "is a symbolic link: refused", "a linked mark: refused");
	unlink(path);
	put("state/" TE_XID_MARK_FILE, "TEXID1 x 1\n", 0666);
	te_xid_read(kmsg, state, &s);
	like(s.err, "only its owner may write: refused",
	     "a mark others may write: refused");
	unlink(path);
	chmod(state, 0777);
	te_xid_read(kmsg, state, &s);
	like(s.err, "is not a directory of root's", "a dir others may write");
	chmod(state, 0755);
	f = fopen(kmsg, "w");
	for (i = 0; f && i < 3 * TE_KMSG_RECORD_MAX; i++)
		fputc('x', f);
	if (f) {
		fputs("tail\n" XID79 "\n", f);
		fclose(f);
	}
	te_xid_read(kmsg, state, &s);
	ok(s.junk == 1 && s.records == 1 && s.since_boot.n == 1,
	   "an over-long line: one junk, the next record read");
	snprintf(path, sizeof(path), "%s/none", dir);
	te_xid_read(path, state, &s);
	like(s.err, "cannot be read", "a log that is not there: an error");
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		printf("# could not remove %s\n", dir);
}

int main(void)
{
	test_kmsg();
	test_xid_line();
	test_scan();
	test_tally_cap();
	test_results();
	test_keys();
	test_io();
	return tap_done();
}
