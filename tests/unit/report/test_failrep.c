/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The failure report's pure parts: SrunPortRange values and their lookup in
 * slurm.conf text, and the decisions srun's listener takes about the
 * connections any user may open to its port (issue 11). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "report/failrep.h"
#include "srun/portrange.h"
#include "tap.h"

#define TOKEN "0123456789abcdef0123456789abcdef"

static int range(const char *s, unsigned *lo, unsigned *hi, char *err)
{
	uint16_t l = 0, h = 0;
	int rc = te_port_range_parse(s, &l, &h, err, 160);

	*lo = l;
	*hi = h;
	return rc;
}

static void test_port_range(void)
{
	static const char *const bad[] = {
		"",
		"-",
		"60001",
		"60001-",
		"-60001",
		"0-10",
		"10-0",
		"20-10",
		"1-65536",
		"99999-100000",
		"a-b",
		"1 0-20",
		"10--20",
		"+10-20",
		"10-20x",
		"10-2 0",
		"0x10-0x20",
		"10,20",
		"1000000000000000000000-2",
		NULL,
	};
	char err[160];
	unsigned lo, hi;
	int i;

	is_int(range("60001-63000", &lo, &hi, err), 0, "60001-63000 parses");
	ok(lo == 60001 && hi == 63000, "to 60001..63000");
	is_int(range("  20100-20199 \r\n", &lo, &hi, err), 0,
	       "blanks and a line end around it are allowed");
	ok(lo == 20100 && hi == 20199, "to 20100..20199");
	is_int(range("1-65535", &lo, &hi, err), 0, "the widest range");
	is_int(range("7-7", &lo, &hi, err), 0, "one port");
	for (i = 0; bad[i]; i++) {
		err[0] = '\0';
		is_int(range(bad[i], &lo, &hi, err), -1, "refused: '%s'",
		       bad[i]);
		ok(strstr(err, "SrunPortRange") != NULL, "  and said why: %s",
		   err);
	}
	is_int(range(NULL, &lo, &hi, err), -1, "no value: refused");
	range("abc\033[2J-1", &lo, &hi, err);
	ok(!strchr(err, '\033'), "a control character is not echoed: %s", err);
}

static int conf(const char *text, char *out, size_t outlen)
{
	return te_slurmconf_value(text, strlen(text), "SrunPortRange", out,
				  outlen);
}

static void test_slurmconf(void)
{
	char v[64];

	is_int(conf("ClusterName=x\nSrunPortRange=60001-63000\n", v, sizeof(v)),
	       1, "found");
	is_str(v, "60001-63000", "its value");
	is_int(conf("srunportrange=1-2 # comment\n", v, sizeof(v)), 1,
	       "the key is case-insensitive, a comment ends the value");
	is_str(v, "1-2", "its value without the comment");
	is_int(conf("SrunPortRange=1-2\n  SrunPortRange=3-4", v, sizeof(v)), 1,
	       "a later line wins, no final newline needed");
	is_str(v, "3-4", "the later value");
	is_int(conf("#SrunPortRange=1-2\nSrunPortRangeX=3-4\nX=SrunPortRange=5\n",
		    v, sizeof(v)),
	       0, "comments and other keys are not it");
	is_int(conf("SrunPortRange=1-2\r\n", v, sizeof(v)), 1, "CRLF lines");
	is_str(v, "1-2", "without the CR");
	is_int(conf("SrunPortRange=\n", v, sizeof(v)), 1,
	       "an empty value is found");
	is_str(v, "", "(and then refused by the parser)");
	is_int(conf("SrunPortRange=123456789", v, 4), -1, "a value too long");
	is_int(te_slurmconf_value("SrunPortRange=1-2", 5, "SrunPortRange", v,
				  sizeof(v)),
	       0, "the length bounds the text");
	is_int(conf("", v, sizeof(v)), 0, "empty text");
}

static int reports;
static struct te_failrep last;

static void count(const struct te_failrep *r, void *ctx)
{
	(void)ctx;
	reports++;
	last = *r;
}

static int feed(struct te_failrep_conn *c, const char *s)
{
	size_t n = strlen(s);

	if (n > TE_FAILREP_LINE_MAX - c->got)
		n = TE_FAILREP_LINE_MAX - c->got;
	memcpy(c->buf + c->got, s, n);
	c->got += n;
	return te_failrep_conn_take(c, TOKEN, count, NULL);
}

static void test_conn_take(void)
{
	struct te_failrep_conn c = { .fd = 5 };
	struct te_failrep r = { .rank = 3,
				.local_rank = 1,
				.node = "n2",
				.value = 7,
				.sec = 1700000000,
				.usec = 5 };
	char line[TE_FAILREP_LINE_MAX], two[2 * TE_FAILREP_LINE_MAX];
	char big[TE_FAILREP_LINE_MAX + 8];
	size_t half;

	te_failrep_format(line, sizeof(line), TOKEN, &r);
	half = strlen(line) / 2;
	memcpy(two, line, half);
	two[half] = '\0';
	is_int(feed(&c, two), 0, "half a report: wait for the rest");
	is_int(reports, 0, "  nothing yet");
	ok(!c.authed, "  not yet a sender");
	is_int(feed(&c, line + half), 0, "the rest");
	is_int(reports, 1, "  one report");
	ok(c.authed && last.rank == 3 && last.value == 7,
	   "  a sender, rank 3 code 7");
	is_int((int)c.got, 0, "  nothing left over");
	snprintf(two, sizeof(two), "%s%s", line, line);
	is_int(feed(&c, two), 0, "two reports in one read");
	is_int(reports, 3, "  both taken");

	memset(&c, 0, sizeof(c));
	is_int(feed(&c, "GET / HTTP/1.0\n"), -1,
	       "garbage: the connection goes");
	memset(&c, 0, sizeof(c));
	te_failrep_format(line, sizeof(line),
			  "ffffffffffffffffffffffffffffffff", &r);
	is_int(feed(&c, line), -1, "a report with another token goes");
	ok(!c.authed, "  and never counted as a sender");
	memset(&c, 0, sizeof(c));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	is_int(feed(&c, big), -1, "a line with no end goes");
	memset(&c, 0, sizeof(c));
	memcpy(c.buf, "TRAINENV\0", 9);
	c.got = 9;
	is_int(te_failrep_conn_take(&c, TOKEN, count, NULL), -1,
	       "a NUL byte goes");
	is_int(reports, 3, "no report from any of them");
}

/* The line's kinds: an exit, a signal, and a rank's stalled heartbeat. */
static void test_line_kinds(void)
{
	struct te_failrep r = { .rank = 12,
				.local_rank = 3,
				.node = "n4",
				.value = 31,
				.sec = 1700000000,
				.usec = 250000 };
	struct te_failrep back;
	char line[TE_FAILREP_LINE_MAX], text[256];

	r.stalled = 1;
	is_int(te_failrep_format(line, sizeof(line), TOKEN, &r), 0,
	       "a stall formats");
	like(line, " 12 3 n4 stall 31 0 1700000000 250000\n",
	     "  as 'stall AGE'");
	ok(te_failrep_parse(line, TOKEN, &back) == 0 && back.stalled &&
		   !back.signaled && back.value == 31 && back.rank == 12,
	   "  and parses back as a stall of 31 s");
	te_failrep_describe(&back, 0, NULL, text, sizeof(text));
	like(text, "rank 12 (node n4, local rank 3) sent no heartbeat for 31 s",
	     "  described as a heartbeat that stopped");
	r.stalled = 0;
	r.value = 0;
	te_failrep_format(line, sizeof(line), TOKEN, &r);
	ok(te_failrep_parse(line, TOKEN, &back) == 0 && !back.stalled &&
		   !back.signaled && back.value == 0,
	   "an exit with code 0 (exit-grace's first exit) parses");
	snprintf(line, sizeof(line),
		 "TRAINENV-FAIL1 %s 1 0 n1 stall %d 0 1 0\n", TOKEN,
		 TE_FAILREP_STALL_MAX + 1);
	is_int(te_failrep_parse(line, TOKEN, &back), -1,
	       "a stall older than the bound is refused");
	r.ended = 1;
	te_failrep_format(line, sizeof(line), TOKEN, &r);
	ok(te_failrep_parse(line, TOKEN, &back) == 0 && back.ended &&
		   !back.stalled && strstr(line, " ended 0 "),
	   "a torchrun worker's end ('ended') parses back");
	te_failrep_describe(&back, 0, NULL, text, sizeof(text));
	like(text, "rank 12 (node n4, local rank 3) ended (a torchrun worker)",
	     "  described as a worker's end");
	r.ended = 0;
	r.resumed = 1;
	te_failrep_format(line, sizeof(line), TOKEN, &r);
	ok(te_failrep_parse(line, TOKEN, &back) == 0 && back.resumed &&
		   !back.ended && strstr(line, " resumed 0 "),
	   "workers back after a restart ('resumed') parse back");
	r.resumed = 0;
	{ /* rank 0's helper: the launch timeline for the record */
		struct te_failrep l = { .launched = 1,
					.node = "n1",
					.sec = 1700000000,
					.usec = 7,
					.launch = { .nranks = 24,
						    .nnodes = 3,
						    .first = "n1",
						    .last = "n3",
						    .skew_ms = 20312 } };

		is_int(te_failrep_format(line, sizeof(line), TOKEN, &l), 0,
		       "a launch timeline formats");
		like(line,
		     " 0 0 n1 barrier 0 0 1700000000 7 24 3 20312 n1 n3\n",
		     "  as 'barrier' with RANKS NODES SKEW FIRST LAST");
		ok(te_failrep_parse(line, TOKEN, &back) == 0 && back.launched &&
			   !back.signaled && !back.stalled &&
			   back.launch.nranks == 24 &&
			   back.launch.nnodes == 3 &&
			   back.launch.skew_ms == 20312 &&
			   !strcmp(back.launch.first, "n1") &&
			   !strcmp(back.launch.last, "n3"),
		   "  and parses back");
		te_failrep_describe(&back, 0, NULL, text, sizeof(text));
		is_str(text,
		       "barrier: 24 ranks on 3 nodes; the last, n3, "
		       "arrived 20.3 s after the first",
		       "  described");
		snprintf(line, sizeof(line),
			 "TRAINENV-FAIL1 %s 0 0 n1 barrier "
			 "0 0 1 0\n",
			 TOKEN);
		is_int(te_failrep_parse(line, TOKEN, &back), -1,
		       "  'barrier' without its timeline is refused");
		snprintf(line, sizeof(line),
			 "TRAINENV-FAIL1 %s 0 0 n1 barrier "
			 "5 0 1 0 24 3 1 n1 n3\n",
			 TOKEN);
		is_int(te_failrep_parse(line, TOKEN, &back), -1,
		       "  'barrier' with a status is refused");
		snprintf(line, sizeof(line),
			 "TRAINENV-FAIL1 %s 0 0 n1 barrier "
			 "0 0 1 0 24 3 1 n1 n3 more\n",
			 TOKEN);
		is_int(te_failrep_parse(line, TOKEN, &back), -1,
		       "  'barrier' with more after it is refused");
		snprintf(line, sizeof(line),
			 "TRAINENV-FAIL1 %s 0 0 n1 barrier "
			 "0 0 1 0 24 3 1 n1 n;3\n",
			 TOKEN);
		is_int(te_failrep_parse(line, TOKEN, &back), -1,
		       "  'barrier' naming a bad host is refused");
		l.launch.skew_ms = -3;
		is_int(te_failrep_format(line, sizeof(line), TOKEN, &l), -1,
		       "  a negative skew is not sent");
	}
	snprintf(line, sizeof(line), "TRAINENV-FAIL1 %s 1 0 n1 ended 3 0 1 0\n",
		 TOKEN);
	is_int(te_failrep_parse(line, TOKEN, &back), -1,
	       "'ended' with a status is refused (it has none)");
	snprintf(line, sizeof(line), "TRAINENV-FAIL1 %s 1 0 n1 hang 3 0 1 0\n",
		 TOKEN);
	is_int(te_failrep_parse(line, TOKEN, &back), -1,
	       "an unknown kind is refused");
	snprintf(line, sizeof(line),
		 "TRAINENV-FAIL1 %s 1 0 n1 signal 200 0 1 0\n", TOKEN);
	is_int(te_failrep_parse(line, TOKEN, &back), -1,
	       "a signal past 128 is still refused");
}

static void test_conn_policy(void)
{
	struct te_failrep_conn t[4];
	int i;

	for (i = 0; i < 4; i++)
		t[i] = (struct te_failrep_conn){ .fd = -1 };
	is_int(te_failrep_conn_slot(t, 4), 0, "an empty table: the first slot");
	for (i = 0; i < 4; i++)
		t[i] = (struct te_failrep_conn){ .fd = 10 + i,
						 .since = 100 - i };
	is_int(te_failrep_conn_slot(t, 4), 3,
	       "full of strangers: the oldest goes");
	t[3].authed = 1;
	is_int(te_failrep_conn_slot(t, 4), 2,
	       "never a sender: the oldest stranger");
	t[1].fd = -1;
	is_int(te_failrep_conn_slot(t, 4), 1, "a free slot first");
	for (i = 0; i < 4; i++)
		t[i] = (struct te_failrep_conn){ .fd = 10 + i, .authed = 1 };
	is_int(te_failrep_conn_slot(t, 4), -1, "all senders: none pushed out");

	t[0] = (struct te_failrep_conn){ .fd = 1, .since = 1000 };
	ok(!te_failrep_conn_expired(&t[0], 1000 + TE_FAILREP_CONN_MS - 1),
	   "a stranger just inside its time");
	ok(te_failrep_conn_expired(&t[0], 1000 + TE_FAILREP_CONN_MS),
	   "a stranger at its deadline: dropped");
	t[0].authed = 1;
	ok(!te_failrep_conn_expired(&t[0], 1000 + TE_FAILREP_CONN_MS),
	   "a sender gets longer");
	ok(te_failrep_conn_expired(&t[0], 1000 + TE_FAILREP_AUTHED_MS),
	   "but not for ever");
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

/* Issue 25, item 0: a rank trainenv's own signal ended is no "first
 * failure"; the line says trainenv ended the step, and why. */
static void test_describe_ended(void)
{
	struct te_failrep r = { .rank = 1,
				.local_rank = 0,
				.node = "n2",
				.signaled = 1,
				.value = 15,
				.sec = 1700000000 };
	const char *first = ": the first failure of this step";
	const char *why = "rank 3 on n2 sent no heartbeat for 10 s "
			  "(--train-stall=10)";
	char text[512], want[256];

	te_failrep_describe(&r, 1, why, text, sizeof(text));
	ok(!strncmp(text,
		    "rank 1 (node n2, local rank 0) was killed by signal "
		    "15 (SIGTERM) at ",
		    68) &&
		   ends_with(text, first),
	   "a SIGTERM of its own is the first failure: %s", text);
	r.by_trainenv = 1;
	te_failrep_describe(&r, 1, why, text, sizeof(text));
	snprintf(want, sizeof(want), ": trainenv ended the step: %s", why);
	ok(ends_with(text, want) && !strstr(text, "first failure"),
	   "trainenv's SIGTERM: 'trainenv ended the step' and why, never "
	   "'the first failure': %s",
	   text);
	te_failrep_describe(&r, 0, NULL, text, sizeof(text));
	ok(ends_with(text, ": trainenv ended the step"),
	   "  without a reason: the words alone");
	r.stalled = 1;
	r.signaled = 0;
	r.value = 10;
	r.by_trainenv = 0;
	te_failrep_describe(&r, 1, NULL, text, sizeof(text));
	ok(!strncmp(text,
		    "rank 1 (node n2, local rank 0) sent no heartbeat "
		    "for 10 s at ",
		    61) &&
		   ends_with(text, first),
	   "a stall can be the first failure: %s", text);
}

/* The report sender's owner (spank/stepd_failrep_send.c, contain_spank):
 * a later process of the same pid, or a descriptor that is no longer the
 * sender's socket, is not the owner. */
/* The job prolog's verdict on a node (a "health" line): sent only when
 * srun says it reads them; its reason is bounded printable text. */
static void test_health_line(void)
{
	struct te_failrep h = { .health = 1,
				.rank = 5,
				.local_rank = 1,
				.node = "n2",
				.sec = 1700000000,
				.usec = 7,
				.text = "exclude ib mlx5_0 port 1 state DOWN" };
	struct te_failrep back;
	char line[TE_FAILREP_LINE_MAX], text[512], big[400];

	is_int(te_failrep_format(line, sizeof(line), TOKEN, &h), 0,
	       "a health line formats");
	like(line,
	     " 5 1 n2 health 0 0 1700000000 7 exclude ib mlx5_0 port 1 "
	     "state DOWN\n",
	     "  as 'health 0 0 TIME REASON', the reason last");
	ok(te_failrep_parse(line, TOKEN, &back) == 0 && back.health &&
		   !back.launched && !back.signaled && back.value == 0 &&
		   !strcmp(back.text, h.text) && !strcmp(back.node, "n2"),
	   "  and parses back with its reason whole");
	te_failrep_describe(&back, 0, NULL, text, sizeof(text));
	is_str(text,
	       "node n2: left out of this job by the job prolog's health "
	       "checks: exclude ib mlx5_0 port 1 state DOWN",
	       "  described as the node's verdict");
	{ /* after "TRAINENV-FAIL1 TOKEN 5 1 n2 health ": refused */
		static const struct {
			const char *rest, *what;
		} bad[] = {
			{ "0 0 1 0 a\tb", "a reason with a control character" },
			{ "0 0 1 0 r\xc3\xa9",
			  "a reason with bytes past ASCII" },
			{ "0 0 1 0", "a health line without a reason" },
			{ "75 0 1 0 x", "a health line with a status" },
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(line, sizeof(line),
				 "TRAINENV-FAIL1 %s 5 1 n2 health %s\n", TOKEN,
				 bad[i].rest);
			is_int(te_failrep_parse(line, TOKEN, &back), -1,
			       "%s is refused", bad[i].what);
		}
	}
	memset(big, 'a', sizeof(big) - 1);
	big[TE_FAILREP_TEXT_MAX + 1] = '\0';
	snprintf(line, sizeof(line),
		 "TRAINENV-FAIL1 %s 5 1 n2 health 0 0 1 0 %s\n", TOKEN, big);
	is_int(te_failrep_parse(line, TOKEN, &back), -1,
	       "a reason past TE_FAILREP_TEXT_MAX is refused");
	big[TE_FAILREP_TEXT_MAX] = '\0';
	snprintf(line, sizeof(line),
		 "TRAINENV-FAIL1 %s 5 1 n2 health 0 0 1 0 %s\n", TOKEN, big);
	ok(te_failrep_parse(line, TOKEN, &back) == 0 &&
		   strlen(back.text) == TE_FAILREP_TEXT_MAX,
	   "  one of exactly TE_FAILREP_TEXT_MAX parses");
	h.text[0] = '\0';
	is_int(te_failrep_format(line, sizeof(line), TOKEN, &h), -1,
	       "an empty reason does not format");
	ok(te_failrep_kind_wanted("health", "health") &&
		   te_failrep_kind_wanted("x,health", "health") &&
		   te_failrep_kind_wanted("health,y", "health") &&
		   !te_failrep_kind_wanted("healthy", "health") &&
		   !te_failrep_kind_wanted("", "health") &&
		   !te_failrep_kind_wanted(NULL, "health"),
	   "srun's kinds: a comma list of whole words");
}

/* The step watch's line (a "steptime" line, rank 0's heartbeat thread):
 * sent only when srun says it reads them (TE_FAILREP_KINDS_READ). */
static void test_steptime_line(void)
{
	struct te_failrep t = {
		.steptime = 1,
		.rank = 0,
		.node = "n1",
		.sec = 1700000000,
		.text = "step time: rank 0's steps took 1.840 s over "
			"the last 3 windows, 2.30x its median of "
			"0.800 s (site threshold +50%)"
	};
	struct te_failrep back;
	char line[TE_FAILREP_LINE_MAX], text[512];

	is_int(te_failrep_format(line, sizeof(line), TOKEN, &t), 0,
	       "a steptime line formats");
	like(line, " 0 0 n1 steptime 0 0 1700000000 0 step time: rank 0's",
	     "  as 'steptime 0 0 TIME LINE'");
	ok(te_failrep_parse(line, TOKEN, &back) == 0 && back.steptime &&
		   !back.health && !back.stalled && back.value == 0 &&
		   !strcmp(back.text, t.text),
	   "  and parses back whole");
	te_failrep_describe(&back, 0, NULL, text, sizeof(text));
	is_str(text, t.text, "  described as its own line");
	snprintf(line, sizeof(line),
		 "TRAINENV-FAIL1 %s 0 0 n1 steptime 3 0 1 0 x\n", TOKEN);
	is_int(te_failrep_parse(line, TOKEN, &back), -1,
	       "a steptime line with a status is refused");
	snprintf(line, sizeof(line),
		 "TRAINENV-FAIL1 %s 0 0 n1 steptime 0 0 1 0 a\x01b\n", TOKEN);
	is_int(te_failrep_parse(line, TOKEN, &back), -1,
	       "a steptime line with a control character is refused");
	ok(te_failrep_kind_wanted(TE_FAILREP_KINDS_READ,
				  TE_FAILREP_KIND_STEPTIME) &&
		   te_failrep_kind_wanted(TE_FAILREP_KINDS_READ,
					  TE_FAILREP_KIND_HEALTH),
	   "this srun reads both kinds");
}

/* A rank's straggler summary (trainenv's NCCL profiler plugin in each
 * rank): a "straggler" line, sent only to an srun that reads them. */
static void test_straggler_line(void)
{
	struct te_failrep t = {
		.straggler = 1,
		.rank = 5,
		.local_rank = 1,
		.node = "n2",
		.sec = 1700000000,
		.text = "strag 1 3 n2 3f2a9c0d12345678 all_reduce 1 "
			"5:120:2000:1900"
	};
	struct te_failrep back;
	char line[TE_FAILREP_LINE_MAX], text[512];

	is_int(te_failrep_format(line, sizeof(line), TOKEN, &t), 0,
	       "a straggler line formats");
	like(line, " 5 1 n2 straggler 0 0 1700000000 0 strag 1 3 n2 ",
	     "  as 'straggler 0 0 TIME LINE'");
	ok(te_failrep_parse(line, TOKEN, &back) == 0 && back.straggler &&
		   !back.steptime && !back.health && back.rank == 5 &&
		   !strcmp(back.text, t.text),
	   "  and parses back whole");
	te_failrep_describe(&back, 0, NULL, text, sizeof(text));
	is_str(text, t.text, "  described as its text");
	snprintf(line, sizeof(line),
		 "TRAINENV-FAIL1 %s 0 0 n1 straggler 0 1 1 0 x\n", TOKEN);
	is_int(te_failrep_parse(line, TOKEN, &back), -1,
	       "a straggler line with a core flag is refused");
	snprintf(line, sizeof(line),
		 "TRAINENV-FAIL1 %s 0 0 n1 straggler 0 0 1 0\n", TOKEN);
	is_int(te_failrep_parse(line, TOKEN, &back), -1,
	       "a straggler line without its text is refused");
	t.text[0] = '\0';
	is_int(te_failrep_format(line, sizeof(line), TOKEN, &t), -1,
	       "an empty one is not sent");
	ok(te_failrep_kind_wanted(TE_FAILREP_KINDS_READ,
				  TE_FAILREP_KIND_STRAGGLER),
	   "this srun reads them");
}

static void test_sender_owner(void)
{
	struct te_failrep_owner was, now;
	int sv[2], other[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, other) < 0) {
		ok(0, "socketpair: %s", strerror(errno));
		return;
	}
	is_int(te_failrep_owner_of(&was, (long)getpid(), sv[0]), 0,
	       "owner: this process's start time is read");
	te_failrep_owner_of(&now, (long)getpid(), sv[0]);
	ok(te_failrep_owner_same(&was, &now),
	   "owner: the same process and descriptor: the sender is ours");
	now.start = was.start + 1;
	ok(!te_failrep_owner_same(&was, &now),
	   "owner: the same pid started later (a reused pid): not ours");
	te_failrep_owner_of(&now, (long)getpid(), other[0]);
	ok(!te_failrep_owner_same(&was, &now),
	   "owner: the same process, but its descriptor is another "
	   "socket: not ours");
	te_failrep_owner_of(&now, (long)getpid(), 0);
	ok(!te_failrep_owner_same(&was, &now),
	   "owner: the descriptor is no socket: not ours");
	te_failrep_owner_of(&now, (long)getppid(), sv[0]);
	ok(!te_failrep_owner_same(&was, &now), "owner: another pid: not ours");
	te_failrep_owner_of(&was, (long)getpid(), -1);
	te_failrep_owner_of(&now, (long)getpid(), -1);
	ok(te_failrep_owner_same(&was, &now),
	   "owner: no descriptor (the sender could not start): still the "
	   "same process's");
	is_int(te_failrep_owner_of(&was, 0, -1), -1,
	       "owner: no such process: its start time is unknown");
	ok(!te_failrep_owner_same(&was, &was),
	   "owner: an unknown start time is never the owner");
	close(sv[0]);
	close(sv[1]);
	close(other[0]);
	close(other[1]);
}

int main(void)
{
	test_describe_ended();
	test_port_range();
	test_slurmconf();
	test_conn_take();
	test_line_kinds();
	test_health_line();
	test_steptime_line();
	test_straggler_line();
	test_conn_policy();
	test_sender_owner();
	return tap_done();
}
