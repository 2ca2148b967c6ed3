/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The restricted pickle reader (core/util/pickle.c) and the flight
 * recorder's extract and report lines (core/hang/flightrec.c), on dumps
 * written at test time by tests/unit/hang/fr_dumps.py: as
 * torch::jit::Pickler writes them and as Python's pickle does (protocols 2,
 * 4, 5); a hostile pickle is refused and runs nothing; cut, oversized,
 * deep, memo-abusing and every single-byte corruption of a valid dump end
 * in 0 or a one-line refusal, in bounded time. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hang/flightrec.h"
#include "tap.h"
#include "util/pickle.h"
#include "util/runcap.h"
#include "util/strutil.h"

extern char **environ;

static char dir[256], marker[300], py[256];

static unsigned char *slurp(const char *name, size_t *len)
{
	char path[512];
	unsigned char *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Runs python3 with args; 0 when it exited 0 within 60 s. */
static int run_py(char *const args[])
{
	char out[4096], err[160];
	struct te_spawn_out o;

	if (te_spawn_capture(py, args, environ, 60000, TE_SPAWN_STDERR, out,
			     sizeof(out), &o, err, sizeof(err)) < 0)
		return -1;
	if (o.killed || !WIFEXITED(o.status) || WEXITSTATUS(o.status)) {
		printf("# python3: %s\n", out);
		return -1;
	}
	return 0;
}

static int make_dumps(void)
{
	char script[512];
	char *args[] = { py, script, dir, marker, NULL };

	snprintf(script, sizeof(script), "%s/fr_dumps.py", TE_FRDIR);
	return run_py(args);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_bytes(const void *p, size_t n, const struct te_pk_limits *lim,
		       char *err, size_t errlen)
{
	struct te_pk_doc d;
	int rc = te_pk_parse(p, n, lim, &d, err, errlen);

	if (rc == 0)
		te_pk_free(&d);
	return rc;
}

#define PK(s) (const unsigned char *)(s), sizeof(s) - 1

static const char EXPECT[] =
	"flight recorder: rank 4 is at all_reduce #1832 (completed) of group "
	"0 (default_pg), all others at #1833\n"
	"flight recorder: all 8 ranks of group 1 (tp) are at broadcast #77 "
	"(completed)\n";

/* The 8 ranks' dumps of one format: each rank's place and the report. */
static void check_hang(const char *fmt)
{
	struct te_fr_rank r[8];
	char name[64], out[2048];
	unsigned char *buf;
	size_t len;
	int i, good = 0;

	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "hang.%d.%s", i, fmt);
		buf = slurp(name, &len);
		if (!buf) {
			te_fr_missing(&r[i], i, "no file");
			continue;
		}
		good += te_fr_extract(buf, len, NULL, i, &r[i]) == 0 &&
			r[i].status == TE_FR_OK && r[i].npos == 2;
		free(buf);
	}
	is_int(good, 8, "%s: 8 dumps read, 2 groups each", fmt);
	is_str(r[4].pos[1].group, "0", "%s: rank 4's group 0", fmt);
	is_str(r[4].pos[1].desc, "default_pg", "%s: its description", fmt);
	is_str(r[4].pos[1].op, "all_reduce", "%s: profiling_name's op", fmt);
	is_int(r[4].pos[1].seq, 1832, "%s: rank 4 at #1832", fmt);
	is_int(r[4].pos[1].state, TE_FR_COMPLETED, "%s: completed", fmt);
	is_int(r[0].pos[1].seq, 1833, "%s: rank 0 at #1833", fmt);
	ok(r[0].pos[1].state == TE_FR_STARTED &&
		   !strcmp(r[0].pos[1].op, "all_reduce"),
	   "%s: rank 0's p2p send after it is left out", fmt);
	is_str(r[0].version, "2.10", "%s: the dump's version", fmt);
	is_int(te_fr_report(r, 8, out, sizeof(out)), 0, "%s: report fits", fmt);
	is_str(out, EXPECT, "%s: the report names rank 4 behind", fmt);
}

static void check_old_and_mixed(void)
{
	struct te_fr_rank r[8];
	char name[64], out[2048];
	unsigned char *buf;
	size_t len;
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "old.%d.torch", i);
		buf = slurp(name, &len);
		ok(buf && te_fr_extract(buf, len, NULL, i, &r[i]) == 0,
		   "version 1.4 dump of rank %d read", i);
		free(buf);
	}
	te_fr_report(r, 2, out, sizeof(out));
	is_str(out,
	       "flight recorder: rank 1 is at all_reduce #9 (completed) of "
	       "group 0, rank 0 at #10\n",
	       "version 1.4: seq_id and pg_id, rank 1 behind");
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name),
			 i == 7 ? "hostile.p2" : "hang.%d.p4", i);
		buf = i == 6 ? NULL : slurp(name, &len);
		if (buf)
			te_fr_extract(buf, len, NULL, i, &r[i]);
		else
			te_fr_missing(&r[i], i, "no dump in 10 s");
		free(buf);
	}
	is_int(r[7].status, TE_FR_REFUSED, "the hostile dump is refused");
	te_fr_report(r, 8, out, sizeof(out));
	like(out, "rank 4 is at all_reduce #1832 (completed) of group 0",
	     "with a rank missing and one refused, rank 4 still named");
	like(out, "all 6 ranks of group 1 (tp)", "6 ranks counted in group 1");
	like(out,
	     "flight recorder: no dump from rank 6 (no dump in 10 s); dump "
	     "of rank 7 refused (byte ",
	     "one line names the missing and the refused rank");
	like(out, "GLOBAL (0x63) refused: it names or calls Python code)\n",
	     "with the reader's reason");
	is_int(te_fr_report(r, 0, out, sizeof(out)), 0, "no rank: one line");
	is_str(out, "flight recorder: no dump to read\n", "says so");
	ok(te_fr_report(r, 8, out, 40) < 0 && strlen(out) < 40,
	   "a small buffer: cut, terminated, -1");
}

static void check_hostile(void)
{
	static const char *const names[] = { "hostile.p2", "hostile.p4" };
	char err[200], *args[] = { py, (char *)"-c", NULL, NULL, NULL };
	char code[] = "import pickle,sys; pickle.loads(open(sys.argv[1],'rb')"
		      ".read())";
	char path[512];
	unsigned char *buf;
	size_t len, i;

	for (i = 0; i < 2; i++) {
		buf = slurp(names[i], &len);
		ok(buf && parse_bytes(buf, len, NULL, err, sizeof(err)) < 0,
		   "%s refused", names[i]);
		like(err,
		     i ? "STACK_GLOBAL (0x93) refused"
		       : "GLOBAL (0x63) refused",
		     "%s: names the opcode", names[i]);
		free(buf);
	}
	ok(access(marker, F_OK) < 0, "nothing ran: the marker file is absent");
	/* The control: Python's own pickle.loads does run it. */
	snprintf(path, sizeof(path), "%s/hostile.p2", dir);
	args[2] = code;
	args[3] = path;
	ok(run_py(args) == 0 && access(marker, F_OK) == 0,
	   "control: pickle.loads of the same bytes creates the marker");
	unlink(marker);
}

/* The list SCALARS of fr_dumps.py, read back. */
static void check_scalars(const char *name)
{
	static const int64_t ints[] = { -1,	   255,		  256,
					65536,	   -2147483648LL, 1LL << 40,
					INT64_MIN, INT64_MAX };
	struct te_pk_doc d;
	char err[160];
	unsigned char *buf;
	size_t len, i, n;
	uint32_t it;
	int64_t v;
	double f;
	int b, good = 0;
	const char *s;

	buf = slurp(name, &len);
	if (!ok(buf && te_pk_parse(buf, len, NULL, &d, err, sizeof(err)) == 0,
		"%s read", name)) {
		free(buf);
		return;
	}
	it = te_pk_first(&d, d.root);
	for (i = 0; i < 8; i++, it = te_pk_next(&d, it))
		good += te_pk_int(&d, te_pk_item_val(&d, it), &v) == 0 &&
			v == ints[i];
	is_int(good, 8, "%s: 8 integers, 1 to 8 bytes, both signs", name);
	ok(te_pk_float(&d, te_pk_item_val(&d, it), &f) == 0 && f == 1.5,
	   "%s: a float", name);
	it = te_pk_next(&d, it);
	ok(te_pk_bool(&d, te_pk_item_val(&d, it), &b) == 0 && b == 1 &&
		   te_pk_bool(&d, te_pk_item_val(&d, te_pk_next(&d, it)), &b) ==
			   0 &&
		   b == 0,
	   "%s: True, False", name);
	it = te_pk_next(&d, te_pk_next(&d, it));
	ok(te_pk_item_val(&d, it) != TE_PK_NOVAL &&
		   te_pk_kind_of(&d, te_pk_item_val(&d, it)) == TE_PK_NONE,
	   "%s: None", name);
	it = te_pk_next(&d, it);
	ok(te_pk_bytes(&d, te_pk_item_val(&d, it), &s, &n) == 0 && n == 5 &&
		   !memcmp(s,
			   "\xc3\xbc"
			   "n\xc3\xaf",
			   5),
	   "%s: a str in UTF-8", name);
	it = te_pk_next(&d, it);
	ok(te_pk_kind_of(&d, te_pk_item_val(&d, it)) == TE_PK_TUPLE &&
		   te_pk_len(&d, te_pk_item_val(&d, it)) == 2,
	   "%s: a tuple of 2", name);
	it = te_pk_next(&d, it);
	ok(te_pk_len(&d, te_pk_get(&d, te_pk_item_val(&d, it), "k")) == 2 &&
		   te_pk_get(&d, te_pk_item_val(&d, it), "x") == TE_PK_NOVAL,
	   "%s: a dict's key found, another not", name);
	is_int(te_pk_len(&d, d.root), 15, "%s: 15 items", name);
	te_pk_free(&d);
	free(buf);
}

static void check_refused_opcodes(void)
{
	static const char code_ops[] = "cRbioPQ\x81\x82\x83\x84\x92\x93";
	unsigned char p[8] = { 0x80, 2, 0, 'N', 'N', 'N', '.', 0 };
	char err[200];
	size_t i;
	int good = 0;

	for (i = 0; i < sizeof(code_ops) - 1; i++) {
		p[2] = (unsigned char)code_ops[i];
		good += parse_bytes(p, 7, NULL, err, sizeof(err)) < 0 &&
			strstr(err, "names or calls Python code") &&
			!strncmp(err, "byte 2: opcode ", 15);
	}
	is_int(good, (int)sizeof(code_ops) - 1,
	       "GLOBAL STACK_GLOBAL REDUCE BUILD INST OBJ NEWOBJ(_EX) PERSID "
	       "BINPERSID EXT1/2/4: refused as code, at their byte");
	p[2] = 0xff;
	ok(parse_bytes(p, 7, NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "unknown opcode 0xff"),
	   "an unknown opcode: refused");
	p[2] = 0x8f;
	ok(parse_bytes(p, 7, NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "EMPTY_SET (0x8f) refused: not needed"),
	   "a set: refused as not plain data");
	ok(parse_bytes(PK("(lp0\n."), NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "protocol 2 to 5"),
	   "protocol 0: refused");
	ok(parse_bytes(PK("\x80\x06N."), NULL, err, sizeof(err)) < 0,
	   "protocol 6: refused");
	ok(parse_bytes(PK("\x80\x02NN."), NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "exactly one value"),
	   "two values at STOP: refused");
	ok(parse_bytes(PK("\x80\x02N.garbage"), NULL, err, sizeof(err)) == 0,
	   "bytes after STOP are not read");
}

static void check_bounds(void)
{
	struct te_pk_limits lim;
	unsigned char deep[300];
	char err[200];
	size_t i;

	ok(parse_bytes(PK("\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\x7fx."),
		       NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "longer than the bound"),
	   "BINUNICODE8 of 2^63 bytes: refused before any read");
	ok(parse_bytes(PK("\x80\x02X\xff\xff\xff\xff"
			  "abc."),
		       NULL, err, sizeof(err)) < 0,
	   "BINUNICODE of 4 GiB in 11 bytes: refused");
	ok(parse_bytes(PK("\x80\x02\x8c\xc8"
			  "abc"),
		       NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "(cut)"),
	   "SHORT_BINUNICODE longer than what is left: cut");
	ok(parse_bytes(PK("\x80\x02\x8a\x09\1\2\3\4\5\6\7\x08\x09."), NULL, err,
		       sizeof(err)) < 0 &&
		   strstr(err, "wider than 64 bits"),
	   "LONG1 of 9 bytes: refused");
	ok(parse_bytes(PK("\x80\x04\x95\xff\xff\xff\xff\0\0\0\0N."), NULL, err,
		       sizeof(err)) < 0,
	   "a FRAME longer than the pickle: refused");
	memcpy(deep, "\x80\x02", 2);
	memset(deep + 2, ']', 100);
	memset(deep + 102, 'a', 99);
	deep[201] = '.';
	ok(parse_bytes(deep, 202, NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "nested deeper"),
	   "100 lists in each other: refused at depth 32");
	deep[2] = 'N';
	memset(deep + 3, 0x85, 100);
	deep[103] = '.';
	ok(parse_bytes(deep, 104, NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "nested deeper"),
	   "100 TUPLE1 on one value (no stack growth): refused too");
	memset(deep + 2, '(', 100);
	ok(parse_bytes(deep, 104, NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "open MARKs"),
	   "100 MARKs: refused at 64");
	ok(parse_bytes(PK("\x80\x02N\x72\xff\xff\xff\xff."), NULL, err,
		       sizeof(err)) < 0 &&
		   strstr(err, "memo index over"),
	   "LONG_BINPUT 2^32-1: refused, nothing allocated for it");
	ok(parse_bytes(PK("\x80\x02h\x05."), NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "never set"),
	   "BINGET of an unset memo slot: refused");
	ok(parse_bytes(PK("\x80\x02]q\x00h\x00"
			  "a."),
		       NULL, err, sizeof(err)) == 0,
	   "a list holding itself (memo): read, nothing walks it");
	memcpy(deep, "\x80\x02]q\x00", 5);
	for (i = 0; i < 40; i++)
		memcpy(deep + 5 + 3 * i,
		       "h\x00"
		       "a",
		       3);
	deep[125] = '.';
	ok(parse_bytes(deep, 126, NULL, err, sizeof(err)) < 0,
	   "a list appended to itself 40 times: refused by depth");
	ok(parse_bytes(PK("\x80\x02}K\x01K\x02s]K\x03s."), NULL, err,
		       sizeof(err)) < 0 &&
		   strstr(err, "as a dict key"),
	   "a list as a dict key: refused as Python does");
	ok(parse_bytes(PK("\x80\x02Na."), NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "underflow"),
	   "APPEND with no list: underflow");
	ok(parse_bytes(PK("\x80\x02N(a."), NULL, err, sizeof(err)) < 0 &&
		   strstr(err, "underflow"),
	   "no reach below a MARK");
	te_pk_limits_default(&lim);
	lim.max_stack = 10;
	memset(deep + 2, 'N', 20);
	ok(parse_bytes(deep, 23, &lim, err, sizeof(err)) < 0 &&
		   strstr(err, "stack deeper"),
	   "11 values on a stack of 10: refused");
	lim.max_stack = 1000;
	lim.max_input = 10;
	ok(parse_bytes(deep, 23, &lim, err, sizeof(err)) < 0 &&
		   strstr(err, "23 bytes: over the bound of 10"),
	   "input over its bound: refused unread");
	lim.max_input = 1000;
	lim.max_values = 5;
	ok(parse_bytes(deep, 23, &lim, err, sizeof(err)) < 0 &&
		   strstr(err, "more values"),
	   "values over their bound: refused");
	lim.max_values = 1000;
	lim.max_memo = 4;
	memcpy(deep, "\x80\x04N\x94\x94\x94\x94\x94.", 10);
	ok(parse_bytes(deep, 10, &lim, err, sizeof(err)) < 0 &&
		   strstr(err, "memo index over"),
	   "MEMOIZE past the memo's bound: refused");
}

/* Every prefix and every single-byte change of a valid dump: read, or
 * refused with one line, and reported; all of it in bounded time. */
static void check_corruption(const char *name)
{
	static const unsigned char with[] = { 0x00, 0xff, 'c', 'R', '(',
					      'h',  0x8d, 'X', ']', 'u' };
	static struct te_fr_rank r;
	char err[200], out[4096];
	unsigned char *buf, *copy;
	size_t len, i, j, runs = 0, bad = 0, cut_ok = 0;
	double t0 = now();

	buf = slurp(name, &len);
	copy = buf ? malloc(len) : NULL;
	if (!ok(copy != NULL, "%s read for corruption", name)) {
		free(buf);
		return;
	}
	for (i = 0; i < len; i++) {
		cut_ok += parse_bytes(buf, i, NULL, err, sizeof(err)) < 0;
		for (j = 0; j < sizeof(with) + 2; j++) {
			memcpy(copy, buf, len);
			copy[i] = j < sizeof(with)    ? with[j]
				  : j == sizeof(with) ? buf[i] ^ 0x01
						      : buf[i] ^ 0x80;
			if (te_fr_extract(copy, len, NULL, 0, &r) < 0 &&
			    (!r.why[0] || strchr(r.why, '\n')))
				bad++;
			bad += te_fr_report(&r, 1, out, sizeof(out)) < 0;
			runs++;
		}
	}
	is_int(cut_ok, len, "%s: every one of its %zu prefixes refused", name,
	       len);
	is_int(bad, 0,
	       "%s: %zu corruptions, each read or refused in one line, and "
	       "reported",
	       name, runs);
	ok(now() - t0 < 20, "%s: all of it in %.2f s", name, now() - t0);
	free(buf);
	free(copy);
}

/* One dict of many keys repeated by the memo as every entry: reading it
 * is bounded (entries read and keys per entry), not entries x keys. */
static void check_work_bound(void)
{
	static struct te_fr_rank r;
	size_t n = 0, i, keys[] = { 1000, 60 };
	unsigned char *p = malloc(1 << 20);
	double t0;
	int k, rc;

	for (k = 0; p && k < 2; k++) {
		n = 0;
		memcpy(p + n, "\x80\x02}(X\x07\0\0\0entries](}(", 20);
		n += 20;
		for (i = 0; i < keys[k]; i++) {
			memcpy(p + n, "M", 1);
			p[n + 1] = (unsigned char)i;
			p[n + 2] = (unsigned char)(i >> 8);
			p[n + 3] = 'N';
			n += 4;
		}
		memcpy(p + n, "uq\0", 3);
		n += 3;
		for (i = 1; i < 300000; i++, n += 2)
			memcpy(p + n, "h\0", 2);
		memcpy(p + n, "eu.", 3);
		n += 3;
		t0 = now();
		rc = te_fr_extract(p, n, NULL, 0, &r);
		t0 = now() - t0;
		ok(rc == 0 && r.status == TE_FR_EMPTY && t0 < 2,
		   "300,000 entries, one dict of %zu keys: read in %.2f s",
		   keys[k], t0);
	}
	free(p);
}

static void set_pos(struct te_fr_rank *r, int rank, int64_t seq, const char *op,
		    enum te_fr_state state)
{
	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->npos = 1;
	te_strlcpy(r->pos[0].group, "3", sizeof(r->pos[0].group));
	te_strlcpy(r->pos[0].desc, "dp", sizeof(r->pos[0].desc));
	te_strlcpy(r->pos[0].op, op, sizeof(r->pos[0].op));
	r->pos[0].seq = seq;
	r->pos[0].state = state;
}

/* The report's lines on positions made here: several places behind, a
 * type mismatch, a kernel not started, more places than shown. */
static void check_report_lines(void)
{
	static struct te_fr_rank r[16];
	char out[4096];
	int i;

	for (i = 0; i < 16; i++)
		set_pos(&r[i], i, 50, "all_reduce", TE_FR_STARTED);
	set_pos(&r[9], 9, 49, "all_reduce", TE_FR_COMPLETED);
	set_pos(&r[10], 10, 49, "all_reduce", TE_FR_COMPLETED);
	set_pos(&r[12], 12, 47, "broadcast", TE_FR_COMPLETED);
	te_fr_report(r, 16, out, sizeof(out));
	is_str(out,
	       "flight recorder: rank 12 is at broadcast #47 (completed), ranks "
	       "9-10 at all_reduce #49 (completed) of group 3 (dp), all others "
	       "at all_reduce #50\n",
	       "two places behind, sorted by seq; the majority's op said as "
	       "the ops differ");
	set_pos(&r[9], 9, 50, "all_gather", TE_FR_STARTED);
	set_pos(&r[10], 10, 50, "all_reduce", TE_FR_SCHEDULED);
	set_pos(&r[12], 12, 50, "all_reduce", TE_FR_STARTED);
	te_fr_report(r, 16, out, sizeof(out));
	is_str(out,
	       "flight recorder: rank 9 is at all_gather #50, rank 10 at "
	       "all_reduce #50 (not started) of group 3 (dp), all others at "
	       "all_reduce #50\n",
	       "a mismatch at the same seq, and a kernel not started");
	for (i = 0; i < 6; i++)
		set_pos(&r[i], i, 40 + i, "all_reduce", TE_FR_COMPLETED);
	r[15].groups_over = 2;
	te_fr_report(r, 16, out, sizeof(out));
	like(out,
	     "rank 3 at all_reduce #43 (completed), 4 more ranks elsewhere of ",
	     "past 4 places: the rest counted");
	like(out,
	     "\nflight recorder: more than 16 groups in the dump of rank 15: "
	     "the others left out\n",
	     "a dump of more groups than kept: said");
	set_pos(&r[0], 0, 7, "barrier", TE_FR_STARTED);
	set_pos(&r[1], 1, 8, "barrier", TE_FR_STARTED);
	te_fr_report(r, 2, out, sizeof(out));
	is_str(out,
	       "flight recorder: rank 0 is at barrier #7 of group 3 (dp), rank 1 "
	       "at #8\n",
	       "two ranks apart: the one behind is named first");
	r[0].status = TE_FR_EMPTY;
	te_fr_report(r, 2, out, sizeof(out));
	is_str(out,
	       "flight recorder: rank 1 of group 3 (dp) is at barrier #8\n"
	       "flight recorder: no collectives in the dump of rank 0\n",
	       "one rank in a group; an empty dump said");
}

int main(void)
{
	static const char *const fmts[] = { "torch", "p2", "p4", "p5" };
	size_t i;

	if (te_find_program("python3", py, sizeof(py)) < 0) {
		printf("1..0 # SKIP no python3 to write the dumps\n");
		return 0;
	}
	snprintf(dir, sizeof(dir), "/tmp/te-frtest.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(marker, sizeof(marker), "%s/MARKER", dir);
	if (!ok(make_dumps() == 0, "fr_dumps.py wrote the dumps"))
		return 1;
	for (i = 0; i < 4; i++)
		check_hang(fmts[i]);
	check_old_and_mixed();
	check_hostile();
	check_scalars("scalars.p2");
	check_scalars("scalars.p4");
	check_scalars("scalars.p5");
	check_refused_opcodes();
	check_bounds();
	check_corruption("hang.0.torch");
	check_corruption("hang.0.p4");
	check_work_bound();
	check_report_lines();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
