/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the pure part of the PMIx layer: the helper's pipe
 * protocol, the coordinator's wire lines and its rules for strangers, the
 * missing-rank and version reports, MASTER_PORT choice, the
 * NCCL_SOCKET_IFNAME syntax, the published data. Ends with a random-input
 * run of every parser (a small fuzz; the sanitizer build makes it
 * count). No Slurm, no PMIx. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/rdzv_core.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"
#include "flat_verdict.h"
#include "tap.h"

#define TOK "0123456789abcdef0123456789abcdef"
#define TOK2 "ffffffffffffffffffffffffffffffff"

static char err[512];

static int parse(const char *s, struct te_rdzv_result *r)
{
	err[0] = '\0';
	return te_rdzv_parse(s, strlen(s), r, err, sizeof(err));
}

static void test_proto(void)
{
	static struct te_rdzv_result r, r2;
	static char buf[TE_RDZV_OUT_MAX + 64];
	int i;

	is_int(parse("TRAINENV-RDZV 1\nMASTER_ADDR=10.0.0.1\nMASTER_PORT=23456\n"
		     "IFNAME=eth0\nCHECKPOINT_DIR=/shared/ck\nWARN=w1\nWARN=w2\nEND\n",
		     &r),
	       0, "a full helper output parses");
	is_str(r.master_addr, "10.0.0.1", "MASTER_ADDR");
	is_int(r.master_port, 23456, "MASTER_PORT");
	is_str(r.ifname, "eth0", "IFNAME");
	is_str(r.checkpoint_dir, "/shared/ck", "CHECKPOINT_DIR");
	is_int(r.nwarn, 2, "two warnings");
	is_str(r.warn[1], "w2", "warnings keep their order");
	ok(!r.failed, "no failure");
	is_int(parse("TRAINENV-RDZV 1\nMASTER_ADDR=fe80::1\nMASTER_PORT=1\nEND\n",
		     &r),
	       0, "an IPv6 address is accepted");
	is_int(parse("TRAINENV-RDZV 1\nERROR=barrier timed out: 5 of 6\nEND\n",
		     &r),
	       0, "ERROR parses");
	ok(r.failed && !r.quiet, "ERROR fails the task loudly");
	is_str(r.error, "barrier timed out: 5 of 6", "ERROR text");
	is_int(parse("TRAINENV-RDZV 1\nFAIL_QUIET=x\nEND\n", &r), 0,
	       "FAIL_QUIET parses");
	ok(r.failed && r.quiet, "FAIL_QUIET fails quietly");

	is_int(parse("", &r), -1, "empty output refused");
	like(err, "no output", "says so");
	is_int(parse("TRAINENV-RDZV 2\nEND\n", &r), -1, "other header refused");
	is_int(parse("TRAINENV-RDZV 1\nMASTER_PORT=1\n", &r), -1,
	       "missing END refused (helper died half-way)");
	like(err, "without END", "says the helper stopped");
	is_int(parse("TRAINENV-RDZV 1\nEND\nMASTER_PORT=1\n", &r), -1,
	       "text after END refused");
	is_int(parse("TRAINENV-RDZV 1\nEND", &r), -1,
	       "unterminated line refused");
	is_int(parse("TRAINENV-RDZV 1\nMASTER_ADDR=n1\nEND\n", &r), -1,
	       "a host name is not an address");
	is_int(parse("TRAINENV-RDZV 1\nMASTER_ADDR=127.0.0.1 \nEND\n", &r), -1,
	       "trailing blank in an address refused");
	is_int(parse("TRAINENV-RDZV 1\nMASTER_PORT=0\nEND\n", &r), -1,
	       "port 0 refused");
	is_int(parse("TRAINENV-RDZV 1\nMASTER_PORT=65536\nEND\n", &r), -1,
	       "port 65536 refused");
	is_int(parse("TRAINENV-RDZV 1\nMASTER_PORT=+1\nEND\n", &r), -1,
	       "signed port refused");
	is_int(parse("TRAINENV-RDZV 1\nMASTER_PORT=1\nMASTER_PORT=2\nEND\n",
		     &r),
	       -1, "a key twice refused");
	is_int(parse("TRAINENV-RDZV 1\nIFNAME=eth0;rm\nEND\n", &r), -1,
	       "odd interface name refused");
	is_int(parse("TRAINENV-RDZV 1\nIFNAME=abcdefghijklmnop\nEND\n", &r), -1,
	       "16-character interface name refused");
	is_int(parse("TRAINENV-RDZV 1\nCHECKPOINT_DIR=rel/dir\nEND\n", &r), -1,
	       "relative checkpoint dir refused");
	is_int(parse("TRAINENV-RDZV 1\nLD_PRELOAD=/x.so\nEND\n", &r), -1,
	       "unknown key refused");
	is_int(parse("TRAINENV-RDZV 1\nWARN=a\x01"
		     "b\nEND\n",
		     &r),
	       -1, "control character refused");
	is_int(parse("TRAINENV-RDZV 1\nERROR=a\nFAIL_QUIET=b\nEND\n", &r), -1,
	       "ERROR and FAIL_QUIET together refused");
	{
		static char s[4096];

		strcpy(s, "TRAINENV-RDZV 1\n");
		for (i = 0; i < 9; i++)
			strcat(s, "WARN=x\n");
		strcat(s, "END\n");
		is_int(parse(s, &r), -1, "nine warnings refused");
	}
	{
		char s[] = "TRAINENV-RDZV 1\nEND\n";

		s[3] = '\0';
		is_int(te_rdzv_parse(s, sizeof(s) - 1, &r, err, sizeof(err)),
		       -1, "NUL byte refused");
	}
	{
		static char s[TE_RDZV_LINE_MAX + 64];

		strcpy(s, "TRAINENV-RDZV 1\nWARN=");
		memset(s + strlen(s), 'a', TE_RDZV_LINE_MAX);
		strcat(s, "\nEND\n");
		is_int(parse(s, &r), -1, "over-long line refused");
	}
	{
		static char s[TE_RDZV_OUT_MAX + 2];

		memset(s, '\n', sizeof(s) - 1);
		is_int(te_rdzv_parse(s, sizeof(s) - 1, &r, err, sizeof(err)),
		       -1, "over-long output refused");
	}

	is_int(parse("TRAINENV-RDZV 1\nLAUNCH=24 3 20312 n1 n3\nEND\n", &r), 0,
	       "LAUNCH: rank 0's timeline");
	ok(r.has_launch && r.launch.nranks == 24 && r.launch.nnodes == 3 &&
		   r.launch.skew_ms == 20312 && !strcmp(r.launch.last, "n3"),
	   "  read");
	is_int(parse("TRAINENV-RDZV 1\nLAUNCH=24 3 1 n1\nEND\n", &r), -1,
	       "LAUNCH without its last node refused");
	is_int(parse("TRAINENV-RDZV 1\nLAUNCH=1 1 0 n1 n1\nLAUNCH=1 1 0 n1 n1\n"
		     "END\n",
		     &r),
	       -1, "LAUNCH twice refused");
	/* format -> parse round trip, hostile text cleaned */
	memset(&r, 0, sizeof(r));
	strcpy(r.master_addr, "10.1.2.3");
	r.master_port = 29500;
	strcpy(r.ifname, "ib0");
	strcpy(r.checkpoint_dir, "/ckpt");
	r.nwarn = 1;
	strcpy(r.warn[0], "bad\nline\x7f");
	r.failed = 1;
	strcpy(r.error, "e\r");
	r.has_launch = 1;
	r.launch.nranks = 6;
	r.launch.nnodes = 3;
	r.launch.skew_ms = 5;
	strcpy(r.launch.first, "a");
	strcpy(r.launch.last, "b");
	is_int(te_rdzv_format(&r, buf, sizeof(buf)), 0, "format");
	is_int(te_rdzv_parse(buf, strlen(buf), &r2, err, sizeof(err)), 0,
	       "what the helper writes, the plugin reads");
	is_str(r2.warn[0], "bad?line?", "control characters become '?'");
	is_str(r2.error, "e?", "error text cleaned");
	is_int(r2.master_port, 29500, "port survives the round trip");
	ok(r2.has_launch && r2.launch.nranks == 6 && r2.launch.skew_ms == 5 &&
		   !strcmp(r2.launch.first, "a"),
	   "the timeline survives it");
	is_int(te_rdzv_format(&r, buf, 20), -1,
	       "format into a short buffer fails");
}

static void test_coord(void)
{
	struct te_coord_req q = { .kind = TE_CQ_ARRIVED, .rank = 5 };
	struct te_coord_reply rep;
	struct te_coord_info ci, ci2;
	char line[TE_COORD_LINE_MAX + 8];

	strcpy(q.host, "n2");
	is_int(te_coord_req_format(line, sizeof(line), TOK, &q), 0,
	       "arrived line formats");
	is_str(line, "TEBAR1 " TOK " arrived 5 n2\n", "arrived wire form");
	memset(&q, 0, sizeof(q));
	is_int(te_coord_req_parse(line, TOK, 6, &q), 0, "arrived line parses");
	ok(q.kind == TE_CQ_ARRIVED && q.rank == 5 && !strcmp(q.host, "n2"),
	   "rank and host read back");
	is_int(te_coord_req_parse(line, TOK2, 6, &q), -1,
	       "wrong token refused");
	is_int(te_coord_req_parse(line, TOK, 5, &q), -1,
	       "rank >= size refused");
	is_int(te_coord_req_parse("TEBAR1 " TOK " status 3\n", TOK, 6, &q), 0,
	       "status parses");
	ok(q.kind == TE_CQ_STATUS && q.rank == 3, "status rank");
	is_int(te_coord_req_parse("TEBAR1 " TOK " status 3", TOK, 6, &q), 0,
	       "the newline is optional");
	is_int(te_coord_req_parse("TEBAR1 " TOK " status 3 x\n", TOK, 6, &q),
	       -1, "trailing word refused");
	is_int(te_coord_req_parse("TEBAR1 " TOK " arrived 3\n", TOK, 6, &q), -1,
	       "arrived without host refused");
	is_int(te_coord_req_parse("TEBAR1 " TOK " arrived 3 n/1\n", TOK, 6, &q),
	       -1, "host with '/' refused");
	is_int(te_coord_req_parse("TEBAR1 " TOK " arrived -1 n1\n", TOK, 6, &q),
	       -1, "negative rank refused");
	is_int(te_coord_req_parse("TEBAR1 " TOK " arrived 1 n1\nX", TOK, 6, &q),
	       -1, "text after the newline refused");
	is_int(te_coord_req_parse("TEBAR1  " TOK " arrived 1 n1\n", TOK, 6, &q),
	       -1, "double blank refused");
	is_int(te_coord_req_parse("TEBAR1 " TOK " leave 1\n", TOK, 6, &q), -1,
	       "unknown verb refused");
	is_int(te_coord_req_parse("TEBAR1 0123 arrived 1 n1\n", "0123", 6, &q),
	       -1, "short token never matches");
	is_int(te_coord_req_format(line, sizeof(line), "xyz", &q), -1,
	       "format refuses a bad token");

	/* a rank that failed before the barrier */
	memset(&q, 0, sizeof(q));
	q.kind = TE_CQ_FAILED;
	q.rank = 3;
	strcpy(q.host, "n2");
	strcpy(q.why, "preflight: GPU 0000:3b:00.0: cudaMalloc: out of memory");
	is_int(te_coord_req_format(line, sizeof(line), TOK, &q), 0,
	       "failed line formats");
	is_str(line,
	       "TEBAR1 " TOK " failed 3 n2 preflight: GPU 0000:3b:00.0: "
	       "cudaMalloc: out of memory\n",
	       "failed wire form");
	memset(&q, 0, sizeof(q));
	is_int(te_coord_req_parse(line, TOK, 6, &q), 0, "failed line parses");
	ok(q.kind == TE_CQ_FAILED && q.rank == 3 && !strcmp(q.host, "n2") &&
		   !strcmp(q.why,
			   "preflight: GPU 0000:3b:00.0: cudaMalloc: out of memory"),
	   "failed: rank, host and reason read back");
	is_int(te_coord_req_parse("TEBAR1 " TOK " failed 3 n2\n", TOK, 6, &q),
	       -1, "failed without a reason refused");
	is_int(te_coord_req_parse("TEBAR1 " TOK " failed 3 n2 a\tb\n", TOK, 6,
				  &q),
	       -1, "failed with a control character refused");
	is_int(te_coord_req_parse("TEBAR1 " TOK " failed 6 n2 x\n", TOK, 6, &q),
	       -1, "failed with rank >= size refused");
	is_int(te_coord_req_parse("TEBAR1 " TOK2 " failed 3 n2 x\n", TOK, 6,
				  &q),
	       -1, "failed with another token refused");
	{
		char longwhy[TE_FAIL_TEXT_MAX + 40];

		memset(longwhy, 'w', sizeof(longwhy) - 1);
		longwhy[sizeof(longwhy) - 1] = '\0';
		te_snprintf(line, sizeof(line), "TEBAR1 %s failed 3 n2 %s\n",
			    TOK, longwhy);
		is_int(te_coord_req_parse(line, TOK, 6, &q), -1,
		       "failed with a reason over %d characters refused",
		       TE_FAIL_TEXT_MAX);
		memset(&q, 0, sizeof(q));
		q.kind = TE_CQ_FAILED;
		q.rank = 1;
		strcpy(q.host, "n1");
		memcpy(q.why, longwhy, TE_FAIL_TEXT_MAX);
		q.why[TE_FAIL_TEXT_MAX] = '\0';
		is_int(te_coord_req_format(line, sizeof(line), TOK, &q), 0,
		       "the longest reason fits one line");
		ok(strlen(line) <= TE_COORD_LINE_MAX, "  (%zu bytes)",
		   strlen(line));
	}
	/* a node's facts carry the CUDA runtime's version */
	memset(&q, 0, sizeof(q));
	q.kind = TE_CQ_NODE;
	q.rank = 2;
	strcpy(q.host, "n2");
	strcpy(q.ver.trainenv, "0.1.0");
	strcpy(q.ver.nccl, "2.28.9");
	strcpy(q.ver.cuda, "13.0");
	strcpy(q.ver.cudart, "13.0");
	strcpy(q.ckpt, "-");
	is_int(te_coord_req_format(line, sizeof(line), TOK, &q), 0,
	       "node line formats");
	is_str(line,
	       "TEBAR1 " TOK " node 2 n2 trainenv=0.1.0 nccl=2.28.9 "
	       "cuda=13.0 cudart=13.0 ckpt=-\n",
	       "node wire form");
	memset(&q, 0, sizeof(q));
	ok(te_coord_req_parse(line, TOK, 6, &q) == 0 &&
		   !strcmp(q.ver.cudart, "13.0"),
	   "node line parses with the runtime");
	is_int(te_coord_req_parse("TEBAR1 " TOK " node 2 n2 trainenv=0.1.0 "
				  "nccl=2.28.9 cuda=13.0 ckpt=-\n",
				  TOK, 6, &q),
	       0, "an older node's line (no cudart=) parses");
	strcpy(q.ver.trainenv, "0123456789012345678901234567890");
	strcpy(q.ver.nccl, q.ver.trainenv);
	strcpy(q.ver.cuda, q.ver.trainenv);
	strcpy(q.ver.cudart, q.ver.trainenv);
	ok(te_coord_req_format(line, sizeof(line), TOK, &q) == 0 &&
		   te_coord_req_parse(line, TOK, 6, &q) == 0,
	   "four longest versions round-trip");
	te_failed_report(3, "n2",
			 "preflight: GPU 0000:3b:00.0: cudaMalloc: "
			 "out of memory",
			 line, sizeof(line));
	is_str(line,
	       "rank 3 (node n2) failed before the barrier: preflight: "
	       "GPU 0000:3b:00.0: cudaMalloc: out of memory",
	       "the report names rank, node and reason");
	te_failed_report(0, "bad host!", "x\ny", line, sizeof(line));
	is_str(line, "rank 0 (node ?) failed before the barrier: x?y",
	       "the report cleans what a peer sent");

	is_int(te_coord_reply_format(line, sizeof(line), TE_CR_FAIL,
				     "5 of 6 ranks arrived\nX"),
	       0, "fail formats");
	is_str(line, "TEBAR1 fail 5 of 6 ranks arrived?X\n",
	       "newline in text cannot split the line");
	is_int(te_coord_reply_parse(line, &rep), 0, "fail parses");
	ok(rep.kind == TE_CR_FAIL &&
		   !strcmp(rep.text, "5 of 6 ranks arrived?X"),
	   "fail text read back");
	is_int(te_coord_reply_parse("TEBAR1 done\n", &rep), 0, "done parses");
	ok(rep.kind == TE_CR_DONE, "done kind");
	is_int(te_coord_reply_parse("TEBAR1 done 10.0.0.1 29500\n", &rep), 0,
	       "done + text parses (the launch: rank 0's address)");
	is_str(rep.text, "10.0.0.1 29500", "done's text");
	is_int(te_coord_reply_parse("TEBAR1 done \x01\n", &rep), -1,
	       "done + unprintable text refused");
	is_int(te_coord_reply_parse("TEBAR1 state \n", &rep), -1,
	       "empty state refused");
	is_int(te_coord_reply_parse("TEBAR2 done\n", &rep), -1,
	       "other magic refused");
	is_int(te_coord_reply_format(line, sizeof(line), TE_CR_ABORT,
				     "rank 3 (node n2) failed before the "
				     "barrier: x"),
	       0, "abort formats");
	is_str(line,
	       "TEBAR1 abort rank 3 (node n2) failed before the barrier: x\n",
	       "abort wire form");
	is_int(te_coord_reply_parse(line, &rep), 0, "abort parses");
	ok(rep.kind == TE_CR_ABORT &&
		   !strncmp(rep.text, "rank 3 (node n2)", 16),
	   "abort report read back");
	is_int(te_coord_reply_parse("TEBAR1 abort\n", &rep), -1,
	       "abort without a report refused");
	/* the launch tree's checkpoint probe, passed down to children */
	is_int(te_coord_reply_format(line, sizeof(line), TE_CR_PROBE,
				     ".trainenv-ckpt-7.0-0123456789abcdef " TOK),
	       0, "probe formats");
	is_str(line,
	       "TEBAR1 probe .trainenv-ckpt-7.0-0123456789abcdef " TOK "\n",
	       "probe wire form");
	is_int(te_coord_reply_parse(line, &rep), 0, "probe parses");
	ok(rep.kind == TE_CR_PROBE &&
		   !strcmp(rep.text,
			   ".trainenv-ckpt-7.0-0123456789abcdef " TOK),
	   "probe read back");
	is_int(te_coord_reply_parse("TEBAR1 probe\n", &rep), -1,
	       "probe without its text refused");

	memset(&ci, 0, sizeof(ci));
	strcpy(ci.addr, "10.0.0.1");
	ci.port = 4242;
	strcpy(ci.token, TOK);
	is_int(te_coord_info_format(line, sizeof(line), &ci), 0,
	       "info formats");
	is_str(line, "10.0.0.1 4242 " TOK, "info wire form");
	is_int(te_coord_info_parse(line, &ci2), 0, "info parses");
	ok(ci2.port == 4242 && !strcmp(ci2.addr, "10.0.0.1") &&
		   !strcmp(ci2.token, TOK),
	   "info read back");
	is_int(te_coord_info_parse("fe80::1 1 " TOK, &ci2), 0,
	       "IPv6 info parses");
	is_int(te_coord_info_parse("n1 1 " TOK, &ci2), -1, "host name refused");
	is_int(te_coord_info_parse("10.0.0.1 0 " TOK, &ci2), -1,
	       "port 0 refused");
	is_int(te_coord_info_parse("10.0.0.1 1 " TOK " x", &ci2), -1,
	       "trailing word refused");
	is_int(te_coord_info_parse("10.0.0.1 1 " TOK "0", &ci2), -1,
	       "long token refused");
}

/* The coordinator against strangers: who gets a slot, what is garbage,
 * when a helper stops trying. */
static void test_strangers(void)
{
	struct te_coord_req q = { .kind = TE_CQ_NODE, .rank = 2 };
	char line[TE_COORD_LINE_MAX + 8];
	size_t i, n;
	int ms, all = 1;

	is_int(te_coord_admit(5, 0, 64), TE_ADMIT,
	       "a free slot, pool empty: taken");
	is_int(te_coord_admit(5, 63, 64), TE_ADMIT,
	       "pool one short of full: taken");
	is_int(te_coord_admit(5, 64, 64), TE_ADMIT_EVICT,
	       "pool full: the oldest stranger goes, the newcomer is taken");
	is_int(te_coord_admit(0, 3, 64), TE_ADMIT_EVICT,
	       "no free slot but strangers in the pool: the oldest goes");
	is_int(te_coord_admit(0, 0, 64), TE_ADMIT_REFUSE,
	       "every slot a registered helper: the newcomer is refused, no helper pushed out");

	/* every prefix of every line a helper sends is fine */
	strcpy(q.host, "n2");
	strcpy(q.ver.trainenv, "0.1.0");
	strcpy(q.ver.nccl, "2.28.9");
	strcpy(q.ver.cuda, "none");
	strcpy(q.ver.cudart, "13.0");
	strcpy(q.ckpt, "ok");
	is_int(te_coord_req_format(line, sizeof(line), TOK, &q), 0,
	       "node line formats");
	n = strlen(line);
	strcpy(line + n, "TEBAR1 " TOK " arrived 3 n2\n"); /* two lines */
	for (i = 0; i <= strlen(line); i++)
		all &= te_coord_prefix_ok(line, i);
	ok(all, "every prefix of a helper's lines can begin a request");
	ok(te_coord_prefix_ok("TEBAR1 " TOK2 " x", 7 + 32 + 2),
	   "a wrong token of the right shape is left to the parser (no digit-by-digit oracle)");
	ok(!te_coord_prefix_ok("GET / HTTP/1.1\r\n", 5),
	   "HTTP: garbage at its first byte");
	ok(!te_coord_prefix_ok("TEBAR2", 6), "another magic: garbage");
	ok(!te_coord_prefix_ok("TEBAR1 0123X", 12),
	   "a non-hex token digit: garbage");
	ok(!te_coord_prefix_ok("TEBAR1 " TOK "x", 7 + 32 + 1),
	   "no space after 32 digits: garbage");
	ok(!te_coord_prefix_ok("TEBAR1 0123\n", 12),
	   "a line ending inside the token: garbage");
	ok(!te_coord_prefix_ok("TEBAR1 " TOK " st\001", 7 + 32 + 4),
	   "a control byte in the first line: garbage");
	ok(!te_coord_prefix_ok("TEBAR1 " TOK " st\0tus", 7 + 32 + 6),
	   "a NUL byte: garbage");
	ok(te_coord_prefix_ok("", 0), "nothing yet: not judged");

	is_int(te_coord_after_cut(0, 0, 100000, 3000), TE_CUT_RETRY,
	       "cut (reset, closed) before an answer: try again");
	is_int(te_coord_after_cut(1, 1000, 1000, 3000), TE_CUT_RETRY,
	       "a first refusal: try again");
	is_int(te_coord_after_cut(1, 1000, 3999, 3000), TE_CUT_RETRY,
	       "refused for less than the grace: try again");
	is_int(te_coord_after_cut(1, 1000, 4000, 3000), TE_CUT_GONE,
	       "refused for the whole grace: rank 0 has left");
	is_int(te_coord_retry_ms(0), 10, "the first pause is 10 ms");
	for (ms = 0, i = 0; i < 40; i++)
		ms = te_coord_retry_ms(ms);
	is_int(ms, 250, "the pause grows to 250 ms and stays there");
	is_int(te_coord_retry_ms(20), 40, "and doubles on the way");
}

/* hosts for the summary: ranks 0-3 on n1, 4-7 on n2, 8-9 on n3 */
static int calls;
static int fake_host(void *ctx, uint32_t rank, char *host, size_t len)
{
	calls++;
	if (rank == 99)
		return -1;
	te_snprintf(host, len, "n%u", rank < 4 ? 1 : rank < 8 ? 2 : 3);
	return 0;
}

static void test_missing(void)
{
	unsigned char a[10];
	char out[1000], small[120];
	static unsigned char big[5000];
	uint32_t i;

	memset(a, 1, sizeof(a));
	te_missing_summary(10, a, fake_host, NULL, out, sizeof(out));
	is_str(out, "10 of 10 ranks arrived", "all there");
	a[5] = 0;
	calls = 0;
	te_missing_summary(10, a, fake_host, NULL, out, sizeof(out));
	is_str(out, "9 of 10 ranks arrived; missing: rank 5 (node n2)",
	       "one rank missing");
	memset(a, 1, sizeof(a));
	a[2] = a[3] = a[4] = a[5] = a[9] = 0;
	te_missing_summary(10, a, fake_host, NULL, out, sizeof(out));
	is_str(out,
	       "5 of 10 ranks arrived; missing: ranks 2-3 (node n1), "
	       "ranks 4-5 (node n2), rank 9 (node n3)",
	       "ranges split at node boundaries");
	memset(a, 0, sizeof(a));
	a[0] = 1;
	te_missing_summary(10, a, NULL, NULL, out, sizeof(out));
	is_str(out, "1 of 10 ranks arrived; missing: ranks 1-9 (node ?)",
	       "no host lookup: '?'");
	memset(a, 0, sizeof(a));
	te_missing_summary(10, a, fake_host, NULL, small, sizeof(small));
	like(small, "0 of 10 ranks arrived; missing: ranks 0-3 (node n1)",
	     "a short buffer keeps the start");
	like(small, "more ranks", "and counts the rest");
	ok(strlen(small) < sizeof(small), "never overflows");
	/* every other rank missing out of 5000: bounded output and lookups */
	for (i = 0; i < 5000; i++)
		big[i] = i & 1;
	calls = 0;
	te_missing_summary(5000, big, fake_host, NULL, out, sizeof(out));
	like(out,
	     "2500 of 5000 ranks arrived; missing: rank 0 (node n1), rank 2",
	     "many gaps listed");
	like(out, "more ranks", "many gaps counted");
	ok(calls <= TE_MISSING_HOSTS_MAX, "host lookups bounded (%d)", calls);
	te_missing_summary(10, a, fake_host, NULL, out, 1);
	is_str(out, "", "a one-byte buffer gets an empty string");
}

static void test_versions(void)
{
	struct te_nodever v[6] = {
		{ "n1", "2.28.9" }, { "n1", "2.28.9" }, { "n2", "2.28.9" },
		{ "n3", "2.27.3" }, { "n3", "2.27.3" }, { "n4", "2.28.9" },
	};
	struct te_versions ver, ver2;
	char out[512], buf[128];
	static struct te_nodever many[40];
	static char hosts[40][8], vers[40][8];
	int i;

	is_int(te_version_summary("NCCL", v, 3, out, sizeof(out)), 1,
	       "one version: no mismatch");
	is_str(out, "", "nothing written");
	is_int(te_version_summary("NCCL", v, 6, out, sizeof(out)), 2,
	       "two versions");
	is_str(out,
	       "NCCL differs across nodes: 2.28.9 on n1, n2, n4; 2.27.3 on n3",
	       "each node named once, grouped by version");
	is_int(te_version_summary("NCCL", v, 0, out, sizeof(out)), 0,
	       "no input");
	{
		struct te_nodever why[4] = {
			{ "n2", "not there" },
			{ "n3", "not there" },
			{ "n2", "not there" },
			{ "n4", "cannot write" },
		};

		is_int(te_group_by_value(why, 4, 1, out, sizeof(out)), 2,
		       "two reasons");
		is_str(out, "n2, n3: not there; n4: cannot write",
		       "hosts first, each once");
		is_int(te_group_by_value(why, 4, 1, NULL, 0), 2,
		       "counting without a buffer");
	}
	for (i = 0; i < 40; i++) {
		snprintf(hosts[i], sizeof(hosts[i]), "h%d", i);
		snprintf(vers[i], sizeof(vers[i]), "%d", i < 12 ? 1 : i);
		many[i].host = hosts[i];
		many[i].ver = vers[i];
	}
	is_int(te_version_summary("CUDA", many, 40, out, sizeof(out)), 29,
	       "29 distinct versions counted");
	like(out, "1 on h0, h1, h2, h3, h4, h5, h6, h7 and 4 more nodes",
	     "long host lists are cut");
	like(out, "and 13 more versions", "versions beyond the limit counted");

	memset(&ver, 0, sizeof(ver));
	strcpy(ver.trainenv, "0.1.0");
	strcpy(ver.nccl, "2.28.9");
	strcpy(ver.cuda, "none");
	is_int(te_versions_format(buf, sizeof(buf), &ver), -1,
	       "versions format needs the runtime's version");
	strcpy(ver.cudart, "13.0");
	is_int(te_versions_format(buf, sizeof(buf), &ver), 0,
	       "versions format");
	is_str(buf, "trainenv=0.1.0 nccl=2.28.9 cuda=none cudart=13.0",
	       "versions wire form");
	is_int(te_versions_parse(buf, &ver2), 0, "versions parse");
	is_str(ver2.nccl, "2.28.9", "nccl read back");
	is_str(ver2.cudart, "13.0", "CUDA runtime read back");
	is_int(te_versions_parse("trainenv=0.1.0 nccl=2.28.9 cuda=12.4", &ver2),
	       0, "an older node's versions (no cudart=) parse");
	is_str(ver2.cudart, "none", "  its runtime counts as none");
	is_int(te_versions_parse("trainenv=0.1.0 nccl=2.28.9 cuda=12.4 cudart=",
				 &ver2),
	       -1, "an empty runtime version refused");
	is_int(te_versions_parse("trainenv=0.1.0 nccl=2.28.9 cuda=12.4 "
				 "cudart=13.0 ",
				 &ver2),
	       -1, "a trailing blank refused");
	is_int(te_versions_parse("trainenv=0.1.0 nccl=2.28.9", &ver2), -1,
	       "missing field refused");
	is_int(te_versions_parse("trainenv=0.1.0 nccl=2 8 cuda=1", &ver2), -1,
	       "blank in a version refused");
	is_int(te_versions_parse("trainenv=0.1.0 nccl=2;x cuda=1", &ver2), -1,
	       "odd character refused");
	is_int(te_versions_parse("trainenv=0.1.0 nccl=2 cuda=1 x=1", &ver2), -1,
	       "extra field refused");
	/* the protocol (issue 26): last, 1..1000000, one spelling */
	ver.protocol = 1;
	is_int(te_versions_format(buf, sizeof(buf), &ver), 0,
	       "versions with a protocol format");
	is_str(buf,
	       "trainenv=0.1.0 nccl=2.28.9 cuda=none cudart=13.0 protocol=1",
	       "  protocol=N comes last");
	is_int(te_versions_parse(buf, &ver2), 0, "  and parses");
	is_int(ver2.protocol, 1, "  protocol read back");
	is_int(te_versions_parse("trainenv=0.1.0 nccl=2 cuda=1 cudart=1",
				 &ver2),
	       0, "no protocol= (trainenv 0.1.0) parses");
	is_int(ver2.protocol, 0, "  as protocol 0");
	ver.protocol = -1;
	is_int(te_versions_format(buf, sizeof(buf), &ver), -1,
	       "a negative protocol is not formatted");
	ver.protocol = TE_PROTOCOL_NUM_MAX + 1;
	is_int(te_versions_format(buf, sizeof(buf), &ver), -1,
	       "nor one past the largest");
	{
		static const char *const bad[] = {
			"protocol=0",	    "protocol=01",
			"protocol=",	    "protocol=1 ",
			"protocol=1x",	    "protocol=-1",
			"protocol=1000001", "protocol=99999999999999999999",
			"proto=1",	    "protocol=1 protocol=1",
		};
		char line[160];

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			te_snprintf(line, sizeof(line),
				    "trainenv=0.1.0 nccl=2 "
				    "cuda=1 cudart=1 %s",
				    bad[k]);
			is_int(te_versions_parse(line, &ver2), -1,
			       "'%s' refused", bad[k]);
		}
		is_int(te_versions_parse("trainenv=0.1.0 nccl=2 cuda=1 "
					 "cudart=1 protocol=1000000",
					 &ver2),
		       0, "protocol=1000000 taken");
	}
	strcpy(ver.nccl, "a b");
	is_int(te_versions_format(buf, sizeof(buf), &ver), -1,
	       "format refuses a bad version word");

	te_nccl_version_text(22809, buf, sizeof(buf));
	is_str(buf, "2.28.9", "NCCL 2.28.9 code");
	te_nccl_version_text(2804, buf, sizeof(buf));
	is_str(buf, "2.8.4", "old NCCL code scheme");
	te_nccl_version_text(0, buf, sizeof(buf));
	is_str(buf, "none", "no NCCL");
	te_cuda_version_text(12040, buf, sizeof(buf));
	is_str(buf, "12.4", "CUDA driver 12.4");
	te_cuda_version_text(13000, buf, sizeof(buf));
	is_str(buf, "13.0", "CUDA driver 13.0");
}

static int busy[70000];
static int tries;
static int fake_free(void *ctx, uint16_t port)
{
	tries++;
	return !busy[port];
}

static void test_ports(void)
{
	memset(busy, 0, sizeof(busy));
	is_int(te_port_pick(23456, 20000, 29999, 1000, fake_free, NULL), 23456,
	       "the deterministic port when free");
	busy[23456] = busy[23457] = 1;
	is_int(te_port_pick(23456, 20000, 29999, 1000, fake_free, NULL), 23458,
	       "probes onward past busy ports");
	busy[29999] = 1;
	is_int(te_port_pick(29999, 20000, 29999, 1000, fake_free, NULL), 20000,
	       "wraps inside the range");
	is_int(te_port_pick(5, 20000, 29999, 1000, fake_free, NULL), 20000,
	       "a start outside the range starts at the low end");
	memset(busy, 1, sizeof(busy));
	tries = 0;
	is_int(te_port_pick(20000, 20000, 20009, 1000, fake_free, NULL), 0,
	       "all busy: 0");
	is_int(tries, 10, "each port of a small range tried once");
	tries = 0;
	te_port_pick(20000, 1024, 65535, 1000, fake_free, NULL);
	is_int(tries, 1000, "tries bounded");
	is_int(te_port_pick(1, 10, 5, 10, fake_free, NULL), 0, "lo > hi: 0");
}

static void test_rank_list(void)
{
	uint32_t r[8];

	is_int(te_rank_list_parse("0,1,2,3", 8, r, 8), 4, "local peers parse");
	ok(r[0] == 0 && r[3] == 3, "in order");
	is_int(te_rank_list_parse("5", 8, r, 8), 1, "one peer");
	is_int(te_rank_list_parse("", 8, r, 8), -1, "empty refused");
	is_int(te_rank_list_parse("1,,2", 8, r, 8), -1, "empty item refused");
	is_int(te_rank_list_parse("1,8", 8, r, 8), -1, "rank >= size refused");
	is_int(te_rank_list_parse("1,2,", 8, r, 8), -1,
	       "trailing comma refused");
	is_int(te_rank_list_parse("0,1,2", 8, r, 2), -1,
	       "more than max refused");
	is_int(te_rank_list_parse("-1", 8, r, 8), -1, "negative refused");
}

static void test_hooks(void)
{
	char buf[16];

	is_str(te_hook_value("n3:20", "n3", buf, sizeof(buf)), "20",
	       "hook for the node");
	is_str(te_hook_value("n1:5,n3:20", "n3", buf, sizeof(buf)), "20",
	       "second item");
	ok(te_hook_value("n1:5,n3:20", "n2", buf, sizeof(buf)) == NULL,
	   "no item for n2");
	ok(te_hook_value("n13:5", "n1", buf, sizeof(buf)) == NULL,
	   "n1 is not a prefix match of n13");
	ok(te_hook_value("n1:", "n1", buf, sizeof(buf)) == NULL,
	   "empty value ignored");
	ok(te_hook_value("n1:12345678901234567890", "n1", buf, sizeof(buf)) ==
		   NULL,
	   "over-long value ignored");
	ok(te_hook_value(NULL, "n1", buf, sizeof(buf)) == NULL, "unset");
}

static void test_ifname(void)
{
	ok(te_ifname_match(NULL, "eth0"), "no pattern selects all");
	ok(te_ifname_match("eth", "eth0"), "prefix match");
	ok(!te_ifname_match("eth", "ib0"), "prefix mismatch");
	ok(te_ifname_match("ib,eth", "eth1"), "list");
	ok(!te_ifname_match("^docker,lo", "docker0"), "exclusion");
	ok(te_ifname_match("^docker,lo", "eth0"), "exclusion lets others in");
	ok(te_ifname_match("=eth0", "eth0"), "exact");
	ok(!te_ifname_match("=eth0", "eth01"), "exact is not a prefix");
	ok(!te_ifname_match("^=eth0", "eth0"), "exact exclusion");
	ok(te_ifname_match("^=eth0", "eth01"), "exact exclusion of another");
	ok(!te_ifname_match(",", "eth0"), "empty entries match nothing");
	ok(te_ifname_valid("eth0") && te_ifname_valid("ib0.8001") &&
		   !te_ifname_valid("") && !te_ifname_valid("a b") &&
		   !te_ifname_valid("eth0:1"),
	   "interface name syntax");
	ok(te_host_valid("n1") && te_host_valid("gpu-01.cluster") &&
		   !te_host_valid("") && !te_host_valid("a b") &&
		   !te_host_valid("a\nb"),
	   "host name syntax");
	ok(te_token_valid(TOK) &&
		   !te_token_valid("ABCDEF0123456789abcdef0123456789") &&
		   !te_token_valid(TOK "0") && !te_token_valid("0"),
	   "token syntax");
}

/* Random and mutated inputs into every parser: none may crash, read out
 * of bounds (the sanitizer build checks), or accept a line that does not
 * round-trip. */
static void test_fuzz(void)
{
	static const char *const seeds[] = {
		"TRAINENV-RDZV 1\nMASTER_ADDR=10.0.0.1\nMASTER_PORT=23456\nEND\n",
		"TEBAR1 " TOK " arrived 5 n2\n",
		"TEBAR1 fail 5 of 6 ranks arrived\n",
		"10.0.0.1 4242 " TOK,
		"trainenv=0.1.0 nccl=2.28.9 cuda=none cudart=13.0",
	};
	static struct te_rdzv_result r;
	static char buf[2048];
	unsigned seed = 12345;
	int i, accepted = 0, bad = 0;

	for (i = 0; i < 200000; i++) {
		const char *s = seeds[i % 5];
		size_t len = strlen(s), j, nmut;
		struct te_coord_req q;
		struct te_coord_reply rep;
		struct te_coord_info ci;
		struct te_versions v;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, s, len);
		seed = seed * 1103515245u + 12345u;
		nmut = 1 + (seed >> 16) % 4;
		for (j = 0; j < nmut; j++) {
			seed = seed * 1103515245u + 12345u;
			buf[(seed >> 8) % len] = (char)(seed >> 24);
		}
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 20) % 8 == 0)
			len = (seed >> 8) % (len + 1); /* truncation */
		buf[len] = '\0';
		switch (i % 5) {
		case 0:
			if (te_rdzv_parse(buf, len, &r, err, sizeof(err)) ==
			    0) {
				accepted++;
				if (r.master_addr[0] &&
				    strchr(r.master_addr, '\n'))
					bad++;
			}
			break;
		case 1:
			if (strlen(buf) == len &&
			    te_coord_req_parse(buf, TOK, 100, &q) == 0) {
				accepted++;
				if (q.rank >= 100 || (q.kind == TE_CQ_ARRIVED &&
						      !te_host_valid(q.host)))
					bad++;
				/* what the coordinator takes is never
				 * dropped early as garbage */
				if (!te_coord_prefix_ok(buf, len))
					bad++;
			}
			break;
		case 2:
			if (strlen(buf) == len &&
			    te_coord_reply_parse(buf, &rep) == 0) {
				accepted++;
				if (!te_is_printable(rep.text,
						     TE_COORD_TEXT_MAX))
					bad++;
			}
			break;
		case 3:
			if (strlen(buf) == len &&
			    te_coord_info_parse(buf, &ci) == 0) {
				accepted++;
				if (!te_token_valid(ci.token) || !ci.port)
					bad++;
			}
			break;
		default:
			if (strlen(buf) == len &&
			    te_versions_parse(buf, &v) == 0) {
				accepted++;
				if (!te_version_word_valid(v.nccl))
					bad++;
			}
		}
	}
	ok(accepted > 0, "the fuzz loop accepted some mutants (%d)", accepted);
	is_int(bad, 0, "every accepted mutant is well-formed");
}

int main(void)
{
	test_proto();
	test_coord();
	test_strangers();
	test_missing();
	test_versions();
	test_ports();
	test_rank_list();
	test_hooks();
	test_ifname();
	test_fuzz();
	return tap_done();
}
