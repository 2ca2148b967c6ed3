/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NCCL's view in the hang report, the pure part (core/hang/stacks_nccl.c):
 * a rank's flight recorder variables read from an environment block in
 * pieces of any size, its pipe and dump paths, the records between the
 * nodes and the merger (round trips, bounds, hostile lines, duplicates,
 * a node's share of the output and its frleft line, an older merger
 * skipping them), the report's lines and the JSON fields (and the line
 * that says when they did not fit). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hang/flightrec.h"
#include "hang/ras.h"
#include "hang/stacks.h"
#include "hang/stacks_nccl.h"
#include "tap.h"
#include "util/strutil.h"

static struct te_hn_env env;

static void feed_block(const char *block, size_t len, size_t piece)
{
	size_t i;

	te_hn_env_init(&env);
	for (i = 0; i < len; i += piece)
		te_hn_env_feed(&env, block + i,
			       len - i < piece ? len - i : piece);
	te_hn_env_end(&env);
}

static void test_env(void)
{
	static const char block[] =
		"HOME=/home/u\0TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/d/fr_pipe_\0"
		"TORCH_NCCL_TRACE_BUFFER_SIZE=2000\0"
		"TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/d/nccl_trace_rank_\0"
		"NCCL_RAS_ADDR=127.0.0.9:28101\0"
		"TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/other/\0"
		"TORCH_FR_DUMP_TEMP_FILE=/d/fr_"; /* no NUL at its end */
	static char big[3 * TE_HN_PATH];
	size_t piece;
	int all = 1;

	for (piece = 1; piece <= sizeof(block); piece++) {
		feed_block(block, sizeof(block) - 1, piece);
		all &= !strcmp(env.pipe, "/d/fr_pipe_") &&
		       !strcmp(env.temp_fr, "/d/fr_") &&
		       !strcmp(env.temp_nccl, "/d/nccl_trace_rank_") &&
		       !strcmp(env.ras, "127.0.0.9:28101") &&
		       te_hn_env_buffer(&env) == 2000;
	}
	ok(all, "env: every piece size reads the same variables; the first "
		"of each counts; the last entry without its NUL too");
	feed_block("TORCH_FR_BUFFER_SIZE=0\0TORCH_NCCL_TRACE_BUFFER_SIZE=5", 54,
		   7);
	is_int(te_hn_env_buffer(&env), 0,
	       "env: TORCH_FR_BUFFER_SIZE wins over the older name (0)");
	feed_block("TORCH_FR_BUFFER_SIZE=12x\0", 25, 3);
	is_int(te_hn_env_buffer(&env), 0, "env: a buffer that is no number: 0");
	memcpy(big, "TORCH_NCCL_DEBUG_INFO_PIPE_FILE=", 32);
	memset(big + 32, 'a', sizeof(big) - 33);
	big[sizeof(big) - 1] = '\0';
	feed_block(big, sizeof(big), 100);
	is_str(env.pipe, "", "env: an entry past the bound is skipped");
	feed_block("TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/p\0", 35, 35);
	is_str(env.pipe, "/p", "env: after it, entries are read again");
}

static void test_paths(void)
{
	char pipe[256], dump[256], why[160];
	int rc;

	feed_block("X=1", 3, 3);
	rc = te_hn_fr_paths(&env, 3, pipe, sizeof(pipe), dump, sizeof(dump),
			    why, sizeof(why));
	ok(rc < 0 && strstr(why, "TORCH_NCCL_DEBUG_INFO_PIPE_FILE is not set"),
	   "paths: no pipe variable: no flight recorder, why (%s)", why);
	feed_block("TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/d/p_", 37, 37);
	rc = te_hn_fr_paths(&env, 3, pipe, sizeof(pipe), dump, sizeof(dump),
			    why, sizeof(why));
	ok(rc == 0 && !strcmp(pipe, "/d/p_3.pipe"),
	   "paths: the trace buffer unset (recent PyTorch's default is 2000): "
	   "the pipe is looked for (%s)",
	   pipe);
	feed_block("TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/d/p_\0"
		   "TORCH_NCCL_TRACE_BUFFER_SIZE=0",
		   68, 68);
	rc = te_hn_fr_paths(&env, 3, pipe, sizeof(pipe), dump, sizeof(dump),
			    why, sizeof(why));
	ok(rc < 0 && strstr(why, "TORCH_NCCL_TRACE_BUFFER_SIZE is 0"),
	   "paths: a trace buffer of 0: no flight recorder, why (%s)", why);
	feed_block("TORCH_NCCL_DEBUG_INFO_PIPE_FILE=/d/p_\0"
		   "TORCH_NCCL_TRACE_BUFFER_SIZE=20",
		   69, 69);
	rc = te_hn_fr_paths(&env, 3, pipe, sizeof(pipe), dump, sizeof(dump),
			    why, sizeof(why));
	ok(rc == 0 && !strcmp(pipe, "/d/p_3.pipe") &&
		   !strcmp(dump, TE_HN_TEMP_DEFAULT "3"),
	   "paths: PIPE<rank>.pipe, PyTorch's default dump (%s, %s)", pipe,
	   dump);
	rc = te_hn_fr_paths(&env, 12, pipe, sizeof(pipe), dump, sizeof(dump),
			    why, sizeof(why));
	ok(rc == 0 && !strcmp(pipe, "/d/p_12.pipe") &&
		   !strcmp(dump, "/tmp/nccl_trace_rank_12"),
	   "paths: as the rank sees them, no /proc/PID/root string (its root "
	   "is opened: te_proc_open) (%s)",
	   pipe);
	feed_block("TORCH_NCCL_DEBUG_INFO_PIPE_FILE=p_\0"
		   "TORCH_NCCL_TRACE_BUFFER_SIZE=20\0"
		   "TORCH_NCCL_DEBUG_INFO_TEMP_FILE=t_",
		   102, 5);
	rc = te_hn_fr_paths(&env, 0, pipe, sizeof(pipe), dump, sizeof(dump),
			    why, sizeof(why));
	ok(rc == 0 && !strcmp(pipe, "p_0.pipe") && !strcmp(dump, "t_0"),
	   "paths: relative ones stay relative (%s, %s)", pipe, dump);
	rc = te_hn_fr_paths(&env, -1, pipe, sizeof(pipe), dump, sizeof(dump),
			    why, sizeof(why));
	ok(rc < 0 && strstr(why, "rank is unknown"), "paths: no rank: why");
	rc = te_hn_fr_paths(&env, 1, pipe, 8, dump, sizeof(dump), why,
			    sizeof(why));
	ok(rc < 0 && !pipe[0] && strstr(why, "too long"),
	   "paths: too long for the buffer: refused, \"\"");
}

static void rank_at(struct te_fr_rank *r, int rank, int64_t seq,
		    enum te_fr_state st)
{
	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->status = TE_FR_OK;
	strcpy(r->version, "2.10");
	r->npos = 2;
	strcpy(r->pos[0].group, "0");
	strcpy(r->pos[0].desc, "default_pg");
	strcpy(r->pos[0].op, "all_reduce");
	r->pos[0].seq = seq;
	r->pos[0].state = st;
	strcpy(r->pos[1].group, "1");
	strcpy(r->pos[1].desc, "tp group %41 -");
	strcpy(r->pos[1].op, "broadcast");
	r->pos[1].seq = 77;
	r->pos[1].state = TE_FR_COMPLETED;
}

static char wire[1 << 20], text[1 << 16];

static size_t add_rank(size_t at, const struct te_fr_rank *r, int nccl, int has)
{
	long n = te_hn_fr_encode(wire + at, sizeof(wire) - at, r, nccl, has);

	return n > 0 ? at + (size_t)n : at;
}

static void test_wire(void)
{
	static struct te_fr_rank r, big;
	struct te_hn_view v;
	char small[64];
	const char *p;
	size_t at = 0, i, longest = 0;
	long n;
	int rc;

	rank_at(&r, 3, 1832, TE_FR_COMPLETED);
	at = add_rank(at, &r, 1, 1);
	te_fr_missing(&r, 5, "no dump within 10 s");
	at = add_rank(at, &r, 0, 1);
	rc = te_hn_collect(wire, at, 16, &v);
	ok(rc == 0 && v.nfr == 2 && v.bad == 0 && v.any_nccl && v.any_has,
	   "wire: two ranks back, nothing refused (%s)", v.bad_why);
	rank_at(&r, 3, 1832, TE_FR_COMPLETED);
	ok(v.nfr == 2 && v.fr[0].rank == 3 && v.fr[0].npos == 2 &&
		   !strcmp(v.fr[0].pos[1].desc, "tp group %41 -") &&
		   v.fr[0].pos[0].seq == 1832 &&
		   v.fr[0].pos[0].state == TE_FR_COMPLETED &&
		   !strcmp(v.fr[0].version, "2.10"),
	   "wire: a rank's groups round-trip (spaces, %% and '-' in text)");
	ok(v.nfr == 2 && v.fr[1].status == TE_FR_MISSING &&
		   !strcmp(v.fr[1].why, "no dump within 10 s"),
	   "wire: a missing rank keeps its reason");
	te_hn_view_free(&v);

	/* the longest record a rank can make stays within a line each */
	memset(&big, 0, sizeof(big));
	big.rank = 0x7fffffff;
	big.status = TE_FR_OK;
	memset(big.version, '%', sizeof(big.version) - 1);
	memset(big.why, ' ', sizeof(big.why) - 1);
	big.npos = TE_FR_GROUPS;
	big.groups_over = 99;
	for (i = 0; i < TE_FR_GROUPS; i++) {
		memset(big.pos[i].group, '%', TE_FR_NAME - 1);
		big.pos[i].group[0] = (char)('A' + i);
		memset(big.pos[i].desc, '&', TE_FR_NAME - 1);
		memset(big.pos[i].op, '"', TE_FR_OP - 1);
		big.pos[i].seq = INT64_MAX;
		big.pos[i].state = TE_FR_STARTED;
	}
	n = te_hn_fr_encode(wire, sizeof(wire), &big, 1, 1);
	for (p = wire; n > 0 && *p;) {
		size_t k = strcspn(p, "\n") + 1;

		longest = k > longest ? k : longest;
		p += k;
	}
	ok(n > 0 && longest <= TE_HN_LINE_MAX &&
		   longest <= TE_STACK_WIRE_SEND_MAX,
	   "wire: the longest fields give lines of at most %zu bytes (%zu)",
	   (size_t)TE_HN_LINE_MAX, longest);
	rc = te_hn_collect(wire, (size_t)n, 4, &v);
	ok(rc == 0 && v.nfr == 1 && v.fr[0].npos == TE_FR_GROUPS &&
		   v.fr[0].groups_over == 99 &&
		   v.fr[0].pos[15].group[0] == 'P' &&
		   v.fr[0].pos[15].seq == INT64_MAX,
	   "wire: and come back whole");
	te_hn_view_free(&v);
	n = te_hn_fr_encode(small, sizeof(small), &big, 1, 1);
	ok(n == -1 && small[0] == '\0', "wire: too small a buffer: -1, \"\"");
	rank_at(&r, -1, 1, TE_FR_STARTED);
	ok(te_hn_fr_encode(wire, sizeof(wire), &r, 0, 0) == -1,
	   "wire: a rank unknown is not sent");
}

static void test_ras_wire(void)
{
	struct te_hn_view v;
	char lines[8192], longline[1000];
	long n;
	int i;

	lines[0] = '\0';
	for (i = 0; i < 14; i++)
		te_appendf(lines, sizeof(lines), "NCCL RAS: line %d\n", i);
	n = te_hn_ras_encode(wire, sizeof(wire), TE_RAS_ANSWERED, lines);
	ok(n > 0 && te_hn_collect(wire, (size_t)n, 8, &v) == 0 &&
		   v.nras == TE_HN_RAS_LINES &&
		   v.ras_outcome == TE_RAS_ANSWERED &&
		   !strcmp(v.ras[11], "NCCL RAS: line 11"),
	   "ras: at most %d lines, the outcome kept", TE_HN_RAS_LINES);
	te_hn_view_free(&v);
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	memcpy(longline, "NCCL RAS: ", 10);
	longline[500] = '\t';
	n = te_hn_ras_encode(wire, sizeof(wire), TE_RAS_DEADLINE, longline);
	ok(n > 0 && (size_t)n <= TE_HN_LINE_MAX &&
		   te_hn_collect(wire, (size_t)n, 8, &v) == 0 && v.nras == 1 &&
		   strlen(v.ras[0]) == TE_HN_RAS_LINE - 1 &&
		   v.ras_outcome == TE_RAS_DEADLINE,
	   "ras: a long line is cut to %d bytes, one record line",
	   TE_HN_RAS_LINE - 1);
	te_hn_view_free(&v);
	n = te_hn_ras_encode(wire, sizeof(wire), 99, "NCCL RAS: x\n");
	ok(n > 0 && strstr(wire, "outcome=failed"),
	   "ras: an outcome out of range is sent as failed");
	ok(te_hn_ras_encode(wire, 20, TE_RAS_ANSWERED, "NCCL RAS: x\n") == -1,
	   "ras: too small a buffer: -1");
}

static void test_hostile(void)
{
	static const char *const bad[] = {
		"TE-STACK1 fr rank=1 nccl=1 has=1 status=ok version=- over=0",
		"TE-STACK1 fr rank=1 nccl=1 has=1 status=ok version=- over=0 "
		"why=- x=1",
		"TE-STACK1 fr rank=-1 nccl=1 has=1 status=ok version=- over=0 "
		"why=-",
		"TE-STACK1 fr rank=2147483648 nccl=0 has=0 status=ok version=- "
		"over=0 why=-",
		"TE-STACK1 fr rank=1 nccl=2 has=1 status=ok version=- over=0 "
		"why=-",
		"TE-STACK1 fr rank=1 nccl=1 has=1 status=good version=- over=0 "
		"why=-",
		"TE-STACK1 fr rank=1 nccl=1 has=1 status=ok version=%ZZ over=0 "
		"why=-",
		"TE-STACK1 fr rank=1 nccl=1 has=1 status=ok version=%0A over=0 "
		"why=-",
		"TE-STACK1 fr rank=1 nccl=1 has=1 status=ok "
		"version=01234567890123456 over=0 why=-",
		"TE-STACK1 fr rank=1  nccl=1 has=1 status=ok version=- over=0 "
		"why=-",
		"TE-STACK1 fr why=- rank=1 nccl=1 has=1 status=ok version=- "
		"over=0",
		"TE-STACK1 frpos rank=1 group=0 desc=- op=x seq=1 "
		"state=started",
		"TE-STACK1 ras outcome=maybe text=x",
		"TE-STACK1 ras outcome=answered text=-",
	};
	struct te_hn_view v;
	size_t i, at = 0, ok_all = 1;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		te_hn_collect(bad[i], strlen(bad[i]), 8, &v);
		if (v.bad != 1 || v.nfr || v.nras) {
			printf("# not refused: %s\n", bad[i]);
			ok_all = 0;
		}
		te_hn_view_free(&v);
	}
	ok(ok_all, "hostile: %zu malformed lines each refused, nothing kept",
	   i);
	/* a frpos for another rank, past the bound, with a bad state */
	at = (size_t)snprintf(
		wire, sizeof(wire),
		"TE-STACK1 fr rank=1 nccl=0 has=1 status=ok version=- over=0 "
		"why=-\n"
		"TE-STACK1 frpos rank=2 group=0 desc=- op=x seq=1 state=started\n"
		"TE-STACK1 frpos rank=1 group=0 desc=- op=x seq=1 state=odd\n"
		"TE-STACK1 frpos rank=1 group=- desc=- op=x seq=1 state=started\n"
		"TE-STACK1 frpos rank=1 group=0 desc=- op=x seq=-2 state=started\n");
	for (i = 0; i < TE_FR_GROUPS + 1; i++)
		at += (size_t)snprintf(wire + at, sizeof(wire) - at,
				       "TE-STACK1 frpos rank=1 group=g%zu "
				       "desc=- op=x seq=%zu state=started\n",
				       i, i);
	te_hn_collect(wire, at, 8, &v);
	ok(v.nfr == 1 && v.fr[0].npos == TE_FR_GROUPS && v.bad == 5,
	   "hostile: another rank's, a bad state, no group, a seq below -1 "
	   "and a 17th group refused (%zu refused)",
	   v.bad);
	te_hn_view_free(&v);
	/* NUL, an over-long line, lines of other kinds */
	memset(wire, 'a', 3000);
	memcpy(wire, "TE-STACK1 fr rank=1", 19);
	memcpy(wire + 3000, "\nTE-STACK1 ras outcome=absent te\0t=x\n", 37);
	at = 3037;
	at += (size_t)snprintf(wire + at, sizeof(wire) - at,
			       "TE-STACK1 proc rank=1\nend\nTE-STACK1 fry x\n");
	te_hn_collect(wire, at, 8, &v);
	ok(v.bad == 2 && v.nfr == 0 && v.nras == 0,
	   "hostile: an over-long line and a NUL refused; other kinds "
	   "skipped (%zu)",
	   v.bad);
	te_hn_view_free(&v);
}

static void test_bounds(void)
{
	static struct te_fr_rank r;
	struct te_hn_view v;
	size_t at = 0;
	int i, order = 1;

	for (i = 9; i >= 0; i--) {
		rank_at(&r, i % 5, 100 + i, TE_FR_STARTED);
		at = add_rank(at, &r, 0, 1);
	}
	te_hn_collect(wire, at, 1000, &v);
	for (i = 0; i < (int)v.nfr; i++)
		order &= v.fr[i].rank == i && v.fr[i].pos[0].seq == 105 + i;
	ok(v.nfr == 5 && order && v.bad == 0,
	   "bounds: a rank sent twice: the first kept, ranks in order");
	te_hn_view_free(&v);
	te_hn_collect(wire, at, 3, &v);
	ok(v.nfr == 3 && v.fr_cut == 7 && v.bad == 0,
	   "bounds: past max ranks, the rest counted and their groups "
	   "skipped (%zu cut, %zu refused)",
	   v.fr_cut, v.bad);
	te_hn_view_free(&v);
	te_hn_collect(wire, at, 0, &v);
	ok(v.nfr == 0 && v.fr_cut == 10, "bounds: max 0 keeps none");
	te_hn_view_free(&v);
	ok(te_hn_collect(NULL, 5, 3, &v) == 0 && v.nfr == 0 &&
		   v.ras_outcome == -1,
	   "bounds: no buffer: nothing");
}

/* A node's records within its share of the output (te_hn_fr_emit): the
 * ranks past it counted in one frleft line, which the merger adds up and
 * the report says; all nodes' records together a quarter of the output's
 * 64 MiB at most, whatever the node count. */
static char emitted[1 << 20];
static size_t nemitted, nemits;

static void emit_to(const char *rec, size_t len, void *arg)
{
	(void)arg;
	if (nemitted + len <= sizeof(emitted)) {
		memcpy(emitted + nemitted, rec, len);
		nemitted += len;
	}
	nemits++;
}

static void test_node_share(void)
{
	static struct te_fr_rank fr[TE_STACK_NODE_RANKS];
	static unsigned char flags[TE_STACK_NODE_RANKS];
	const size_t k = TE_STACK_NODE_RANKS;
	struct te_hn_view v;
	size_t i, j, share, fit = 1, last;
	unsigned long nn;
	char line[64];
	long left;

	for (nn = 1, fit = 1; nn <= 16384; nn = nn * 3 + 1) {
		share = te_hn_node_share(nn);
		fit &= share <= TE_HN_NODE_RECORDS_MAX &&
		       share >= TE_HN_LINE_MAX &&
		       (nn > TE_HN_NODES_RECORDS_MAX / TE_HN_LINE_MAX ||
			share * nn <= TE_HN_NODES_RECORDS_MAX);
	}
	ok(fit && te_hn_node_share(0) == TE_HN_NODE_RECORDS_MAX &&
		   te_hn_node_share(1) == TE_HN_NODE_RECORDS_MAX &&
		   te_hn_node_share(256) == 64 * 1024,
	   "share: 256 KiB a node, and all nodes' 16 MiB at most (a quarter "
	   "of the output's cap)");
	/* 1024 ranks of a node, each in 16 groups with the longest names */
	for (i = 0; i < k; i++) {
		memset(&fr[i], 0, sizeof(fr[i]));
		fr[i].rank = (int)i;
		fr[i].status = TE_FR_OK;
		memset(fr[i].version, '%', sizeof(fr[i].version) - 1);
		memset(fr[i].why, '%', sizeof(fr[i].why) - 1);
		fr[i].npos = TE_FR_GROUPS;
		for (j = 0; j < TE_FR_GROUPS; j++) {
			memset(fr[i].pos[j].group, '%', TE_FR_NAME - 1);
			memset(fr[i].pos[j].desc, '%', TE_FR_NAME - 1);
			memset(fr[i].pos[j].op, '%', TE_FR_OP - 1);
			fr[i].pos[j].seq = INT64_MAX;
		}
		flags[i] = 3;
	}
	nemitted = nemits = 0;
	left = te_hn_fr_emit(fr, flags, k, TE_HN_NODE_RECORDS_MAX, emit_to,
			     NULL);
	last = nemitted;
	while (last > 1 && emitted[last - 2] != '\n')
		last--;
	te_snprintf(line, sizeof(line), "TE-STACK1 frleft ranks=%ld\n", left);
	ok(left > 0 && (size_t)left < k &&
		   nemitted <= TE_HN_NODE_RECORDS_MAX + strlen(line) &&
		   !strcmp(emitted + last - 1, line) &&
		   nemits == k - (size_t)left + 1,
	   "emit: 1024 ranks of long groups: %zu bytes within 256 KiB, %ld "
	   "ranks left out in one last line",
	   nemitted, left);
	te_hn_collect(emitted, nemitted, 4096, &v);
	ok(v.bad == 0 && v.nfr + v.fr_left == k && v.fr_left == (size_t)left,
	   "emit: the merger gets every rank, kept or counted (%zu + %zu, %s)",
	   v.nfr, v.fr_left, v.bad_why);
	te_hn_report_text(&v, text, sizeof(text));
	te_snprintf(line, sizeof(line), "%ld ranks left out by their nodes",
		    left);
	like(text, line, "emit: the report says how many were left out");
	te_hn_view_free(&v);
	nemitted = nemits = 0;
	fr[1].rank = -1;
	left = te_hn_fr_emit(fr, flags, 3, TE_HN_NODE_RECORDS_MAX, emit_to,
			     NULL);
	emitted[nemitted] = '\0';
	ok(left == 0 && nemits == 2 && !strstr(emitted, "frleft"),
	   "emit: all fit: no frleft line (a rank < 0 skipped)");
	fr[1].rank = 1;
	{
		static const char bad[] =
			"TE-STACK1 frleft ranks=5\nTE-STACK1 frleft ranks=0\n"
			"TE-STACK1 frleft ranks=x\n"
			"TE-STACK1 frleft ranks=1 more=1\n"
			"TE-STACK1 frleft ranks=1000001\n"
			"TE-STACK1 frleft ranks=999\n";

		te_hn_collect(bad, sizeof(bad) - 1, 100, &v);
	}
	{
		/* every rank of a node left out: its frleft line alone
		 * still shows in the report */
		static const char only[] = "TE-STACK1 frleft ranks=7\n";
		struct te_hn_view w;

		te_hn_collect(only, sizeof(only) - 1, 100, &w);
		te_hn_report_text(&w, text, sizeof(text));
		ok(te_hn_shown(&w) &&
			   strstr(text, "flight recorder: 7 ranks left out "
					"by their nodes"),
		   "emit: a node's frleft line alone: the report says it");
		te_hn_view_free(&w);
		te_hn_collect(only, sizeof(only) - 1, 5, &w);
		te_hn_report_text(&w, text, sizeof(text));
		ok(strstr(text, "5 ranks left out") != NULL,
		   "emit: never more left out than the merger keeps");
		te_hn_view_free(&w);
	}
	ok(v.bad == 4 && v.fr_left == 100,
	   "frleft: bad counts refused, the sum at most max (%zu, %zu bad)",
	   v.fr_left, v.bad);
	te_hn_view_free(&v);
	ok(te_hn_left_encode(line, sizeof(line), 0) == -1 && !line[0] &&
		   te_hn_left_encode(line, 8, 3) == -1,
	   "frleft: 0 ranks or a small buffer: -1");
}

/* An older merger (te_stack_merge) reads the stacks and skips these
 * records, whichever way they are interleaved. */
static void test_old_merger(void)
{
	static struct te_proc_stack ps;
	static struct te_fr_rank r;
	static char rec[8192];
	struct te_proc_stack *procs = NULL;
	size_t at = 0;
	long n;
	int left = 0;

	te_stack_init(&ps);
	ps.rank = 3;
	ps.pid = 77;
	strcpy(ps.node, "n2");
	te_stack_add_thread(&ps, 77);
	te_stack_add_frame(&ps, TE_FRAME_PY, "train", 5, "t.py", 4, 9, "", 0,
			   0);
	rank_at(&r, 3, 5, TE_FR_STARTED);
	at = add_rank(at, &r, 1, 1);
	n = te_hn_ras_encode(wire + at, sizeof(wire) - at, TE_RAS_ANSWERED,
			     "NCCL RAS: rank 3 missing\n");
	at += n > 0 ? (size_t)n : 0;
	te_stack_wire_encode(rec, sizeof(rec), &ps);
	memcpy(wire + at, rec, strlen(rec));
	at += strlen(rec);
	at = add_rank(at, &r, 1, 1);
	n = te_hn_left_encode(wire + at, sizeof(wire) - at, 7);
	at += n > 0 ? (size_t)n : 0;
	n = te_stack_merge(wire, at, 4, 2, &procs, &left);
	ok(n == 1 && procs[0].rank == 3 && procs[0].nframes == 1 && !left,
	   "old merger: the stack read, the new records skipped");
	free(procs);
}

static void view_of(struct te_hn_view *v, int ras, int has)
{
	static struct te_fr_rank r;
	size_t at = 0;
	int i;
	long n;

	for (i = 0; i < 4; i++) {
		rank_at(&r, i, i == 3 ? 1832 : 1833,
			i == 3 ? TE_FR_COMPLETED : TE_FR_STARTED);
		if (!has)
			te_fr_missing(&r, i, "no flight recorder");
		at = add_rank(at, &r, 0, has);
	}
	if (ras >= 0) {
		n = te_hn_ras_encode(wire + at, sizeof(wire) - at, ras,
				     ras == TE_RAS_ABSENT
					     ? "NCCL RAS: no answer at x\n"
					     : "NCCL RAS: rank 3 missing\n"
					       "NCCL RAS: 2 timeouts\n");
		at += n > 0 ? (size_t)n : 0;
	}
	te_hn_collect(wire, at, 64, v);
}

static void test_report(void)
{
	struct te_hn_view v;
	char json[4096], why[200];
	int n;

	view_of(&v, TE_RAS_ABSENT, 0);
	n = te_hn_report_text(&v, text, sizeof(text));
	ok(n == 0 && !text[0] && !te_hn_shown(&v),
	   "report: no NCCL, no recorder, nothing listens: not a word");
	strcpy(json, "{\"groups\":[],\"more_groups\":0}\n");
	ok(te_hn_report_json(&v, json, sizeof(json), why, sizeof(why)) == 0 &&
		   !strcmp(json, "{\"groups\":[],\"more_groups\":0}\n"),
	   "report: and the JSON as it was");
	te_hn_view_free(&v);

	view_of(&v, TE_RAS_ANSWERED, 1);
	n = te_hn_report_text(&v, text, sizeof(text));
	ok(n == 4 && !strncmp(text,
			      "trainenv: hang: NCCL RAS: rank 3 missing\n"
			      "trainenv: hang: NCCL RAS: 2 timeouts\n"
			      "trainenv: hang: flight recorder: rank 3 ",
			      110),
	   "report: RAS's lines first, then the flight recorder's");
	like(text, "rank 3 is at all_reduce #1832",
	     "report: the rank behind named with its collective");
	n = te_hn_report_text(&v, text, 60);
	ok(n == 1 &&
		   !strcmp(text, "trainenv: hang: NCCL RAS: rank 3 missing\n"),
	   "report: a small buffer holds whole lines only");
	strcpy(json, "{\"groups\":[],\"more_groups\":0}\n");
	ok(te_hn_report_json(&v, json, sizeof(json), why, sizeof(why)) == 0 &&
		   !why[0] &&
		   !strncmp(json,
			    "{\"groups\":[],\"more_groups\":0,\"nccl_ras\":{"
			    "\"outcome\":\"answered\",\"lines\":[\"NCCL RAS: "
			    "rank 3 missing\",",
			    98) &&
		   strstr(json, "\"flight_recorder\":{\"lines\":[\"flight "
				"recorder: rank 3 is at all_reduce #1832") &&
		   strstr(json, "{\"rank\":3,\"status\":\"ok\",\"version\":"
				"\"2.10\",\"why\":\"\",\"groups\":[{\"group\":"
				"\"0\",\"desc\":\"default_pg\",\"op\":"
				"\"all_reduce\",\"seq\":1832,\"state\":"
				"\"completed\"}") &&
		   strstr(json, "\"ranks_left_out\":0}}\n"),
	   "report: the JSON's fields before its last brace");
	strcpy(json, "{\"groups\":[],\"more_groups\":0}\n");
	ok(te_hn_report_json(&v, json, 200, why, sizeof(why)) == -1 &&
		   !strcmp(json, "{\"groups\":[],\"more_groups\":0}\n"),
	   "report: JSON fields that do not fit: -1, the JSON as it was");
	ok(!strncmp(why,
		    "the JSON report lacks nccl_ras and flight_recorder: they "
		    "did not fit",
		    67) &&
		   !strchr(why, '\n'),
	   "report: and one line for stderr says the JSON lacks them (%s)",
	   why);
	strcpy(json, "[1,2]");
	ok(te_hn_report_json(&v, json, sizeof(json), why, sizeof(why)) == -1 &&
		   strstr(why, "lacks nccl_ras and flight_recorder: the "
			       "report is no object"),
	   "report: not an object: -1, why (%s)", why);
	strcpy(json, "{}");
	ok(te_hn_report_json(&v, json, sizeof(json), NULL, 0) == 0 &&
		   strstr(json, "nccl_ras"),
	   "report: why may be NULL");
	te_hn_view_free(&v);

	view_of(&v, -1, 1);
	te_hn_report_text(&v, text, sizeof(text));
	like(text, "trainenv: hang: NCCL RAS: not asked",
	     "report: no RAS record: one line says so");
	te_hn_view_free(&v);
	view_of(&v, TE_RAS_ABSENT, 1);
	n = te_hn_report_text(&v, text, sizeof(text));
	ok(n == 3 && !strncmp(text, "trainenv: hang: NCCL RAS: no answer", 35),
	   "report: RAS absent: one line, and the flight recorder's");
	te_hn_view_free(&v);
	view_of(&v, TE_RAS_ABSENT, 0);
	v.any_nccl = 1;
	n = te_hn_report_text(&v, text, sizeof(text));
	ok(n == 2 && strstr(text, "flight recorder: no dump from ranks 0-3 "
				  "(no flight recorder)"),
	   "report: NCCL without a recorder: one line each");
	te_hn_view_free(&v);
}

int main(void)
{
	test_env();
	test_paths();
	test_wire();
	test_ras_wire();
	test_hostile();
	test_bounds();
	test_node_share();
	test_old_merger();
	test_report();
	return tap_done();
}
