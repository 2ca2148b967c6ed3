/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helper's launch decisions (core/launch/launch_verdict.c, core/launch/rdzv_args.c):
 * rank 0's verdict over the nodes' facts, a node against rank 0 without the
 * barrier, the checkpoint probe, and the helper's command line. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/launch_verdict.h"
#include "launch/rdzv_args.h"
#include "util/strutil.h"
#include "flat_verdict.h"
#include "tap.h"

/* Under AddressSanitizer (the sanitizer build, t90) an impossible calloc
 * returns NULL as it does without, instead of aborting. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

#define TOKEN "0123456789abcdef0123456789abcdef"
#define NMAX 200
#define SET(field, text) te_strlcpy(field, text, sizeof(field))

static struct te_coord_req nodes[NMAX];

/* n nodes n1..nN, all with the same versions and checkpoint fact */
static void set_nodes(size_t n, const char *ckpt)
{
	size_t i;

	memset(nodes, 0, sizeof(nodes));
	for (i = 0; i < n; i++) {
		nodes[i].kind = TE_CQ_NODE;
		nodes[i].rank = (uint32_t)(i * 4);
		snprintf(nodes[i].host, sizeof(nodes[i].host), "n%zu", i + 1);
		SET(nodes[i].ver.trainenv, "0.1.0");
		SET(nodes[i].ver.nccl, "2.28.9");
		SET(nodes[i].ver.cuda, "12.4");
		SET(nodes[i].ver.cudart, "13.0");
		SET(nodes[i].ckpt, ckpt);
	}
}

static int judge(int vcheck, const char *ckpt, size_t n, char *text, size_t len)
{
	struct te_launch_checks c = { .vcheck = vcheck,
				      .ckpt = ckpt,
				      .rank0_host = "n1" };

	memset(text, 'x', len - 1); /* stale text must not survive */
	text[len - 1] = '\0';
	return te_launch_verdict(&c, nodes, n, text, len);
}

static void test_agree(void)
{
	char text[1024];
	int m;

	for (m = TE_W_VCHECK_WARN; m <= TE_W_VCHECK_OFF; m++) {
		set_nodes(3, "-");
		is_int(judge(m, NULL, 3, text, sizeof(text)), TE_VERDICT_OK,
		       "vcheck %d: three nodes that agree pass", m);
		is_str(text, "", "  with no text");
	}
	set_nodes(1, "ok");
	is_int(judge(TE_W_VCHECK_FAIL, "/ckpt", 1, text, sizeof(text)),
	       TE_VERDICT_OK, "one node with its checkpoint dir ok passes");
	is_str(text, "", "  with no text");
	set_nodes(NMAX, "ok");
	is_int(judge(TE_W_VCHECK_FAIL, "/ckpt", NMAX, text, sizeof(text)),
	       TE_VERDICT_OK, "%d nodes that agree pass", NMAX);
	is_int(judge(TE_W_VCHECK_FAIL, "/ckpt", 0, text, sizeof(text)),
	       TE_VERDICT_OK, "no node at all: nothing to judge");
	is_str(text, "", "  with no text");
	set_nodes(3, "no such directory");
	is_int(judge(TE_W_VCHECK_WARN, NULL, 3, text, sizeof(text)),
	       TE_VERDICT_OK,
	       "without a checkpoint dir, no node's checkpoint fact is read");
	/* a count no memory can hold: calloc fails before a node is read */
	is_int(judge(TE_W_VCHECK_FAIL, "/ckpt", SIZE_MAX / 4, text,
		     sizeof(text)),
	       TE_VERDICT_WARN, "out of memory: a warning, never a rejection");
	is_str(text, "launch checks: out of memory", "  saying so");
}

static void test_versions(void)
{
	char text[1024];

	set_nodes(3, "-");
	SET(nodes[2].ver.nccl, "2.27.3");
	is_int(judge(TE_W_VCHECK_WARN, NULL, 3, text, sizeof(text)),
	       TE_VERDICT_WARN, "an NCCL mismatch under warn: a warning");
	is_str(text,
	       "version mismatch: NCCL differs across nodes: 2.28.9 on "
	       "n1, n2; 2.27.3 on n3",
	       "  naming each version's nodes");
	is_int(judge(TE_W_VCHECK_FAIL, NULL, 3, text, sizeof(text)),
	       TE_VERDICT_REJECT, "the same under fail: rejected");
	is_str(text,
	       "version mismatch (version-check=fail): NCCL differs "
	       "across nodes: 2.28.9 on n1, n2; 2.27.3 on n3",
	       "  saying version-check=fail");
	is_int(judge(TE_W_VCHECK_OFF, NULL, 3, text, sizeof(text)),
	       TE_VERDICT_OK, "the same under off: passes");
	is_str(text, "", "  silently");

	SET(nodes[0].ver.trainenv, "0.2.0");
	SET(nodes[1].ver.cuda, "12.2");
	SET(nodes[1].ver.cudart, "none");
	is_int(judge(TE_W_VCHECK_WARN, NULL, 3, text, sizeof(text)),
	       TE_VERDICT_WARN, "four components differ: one warning");
	is_str(text,
	       "version mismatch: trainenv differs across nodes: 0.2.0 "
	       "on n1; 0.1.0 on n2, n3; NCCL differs across nodes: 2.28.9 on "
	       "n1, n2; 2.27.3 on n3; CUDA driver differs across nodes: 12.4 "
	       "on n1, n3; 12.2 on n2; CUDA runtime differs across nodes: "
	       "13.0 on n1, n3; none on n2",
	       "  in order: trainenv, NCCL, CUDA driver, CUDA runtime");

	set_nodes(2, "-");
	nodes[1].ver.cudart[0] = '\0';
	is_int(judge(TE_W_VCHECK_WARN, NULL, 2, text, sizeof(text)),
	       TE_VERDICT_WARN, "an empty version differs from a known one");
	is_str(text,
	       "version mismatch: CUDA runtime differs across nodes: "
	       "13.0 on n1;  on n2",
	       "  and is shown empty");
	set_nodes(2, "-");
	nodes[0].ver.nccl[0] = nodes[1].ver.nccl[0] = '\0';
	is_int(judge(TE_W_VCHECK_FAIL, NULL, 2, text, sizeof(text)),
	       TE_VERDICT_OK, "two empty versions agree");

	set_nodes(NMAX, "-");
	SET(nodes[NMAX - 1].ver.nccl, "2.27.3");
	is_int(judge(TE_W_VCHECK_WARN, NULL, NMAX, text, sizeof(text)),
	       TE_VERDICT_WARN, "%d nodes, the last one differs", NMAX);
	is_str(text,
	       "version mismatch: NCCL differs across nodes: 2.28.9 on "
	       "n1, n2, n3, n4, n5, n6, n7, n8 and 191 more nodes; 2.27.3 on "
	       "n200",
	       "  the long host list is cut and counted");
	is_int(judge(TE_W_VCHECK_FAIL, NULL, NMAX, text, 40), TE_VERDICT_REJECT,
	       "a small text buffer: still rejected");
	is_int((int)strlen(text), 39, "  the text is cut to the buffer");
	ok(!strncmp(text, "version mismatch (version-check=fail): ", 39),
	   "  keeping its beginning");
}

static void test_ckpt(void)
{
	char text[1024];

	set_nodes(4, "ok");
	SET(nodes[2].ckpt, "rank 0's probe file is not there");
	SET(nodes[3].ckpt, "no such directory");
	is_int(judge(TE_W_VCHECK_WARN, "/scratch/ck", 4, text, sizeof(text)),
	       TE_VERDICT_REJECT, "a node without rank 0's file: rejected");
	is_str(text,
	       "checkpoint dir /scratch/ck is not one shared directory "
	       "writable from every node (rank 0 is on n1): n3: rank 0's probe "
	       "file is not there; n4: no such directory",
	       "  naming each node's reason");
	SET(nodes[3].ckpt, nodes[2].ckpt);
	judge(TE_W_VCHECK_WARN, "/scratch/ck", 4, text, sizeof(text));
	like(text,
	     "(rank 0 is on n1): n3, n4: rank 0's probe file is not "
	     "there",
	     "nodes with the same reason are grouped");
	is_int(judge(TE_W_VCHECK_OFF, "/scratch/ck", 4, text, sizeof(text)),
	       TE_VERDICT_REJECT, "version-check=off does not turn it off");

	set_nodes(3, "ok");
	SET(nodes[1].ckpt, "cannot write there: Read-only file system");
	SET(nodes[0].ckpt, "rank0 Permission denied");
	is_int(judge(TE_W_VCHECK_WARN, "/ck", 3, text, sizeof(text)),
	       TE_VERDICT_REJECT, "rank 0 cannot write there: rejected");
	is_str(text,
	       "checkpoint dir /ck: rank 0 (node n1) cannot write "
	       "there: Permission denied",
	       "  rank 0's reason comes before the other nodes'");
	set_nodes(2, "rank0 ");
	judge(TE_W_VCHECK_WARN, "/ck", 2, text, sizeof(text));
	is_str(text,
	       "checkpoint dir /ck: rank 0 (node n1) cannot write "
	       "there: ",
	       "an empty reason from rank 0");
	set_nodes(2, "");
	is_int(judge(TE_W_VCHECK_WARN, "/ck", 2, text, sizeof(text)),
	       TE_VERDICT_REJECT, "an empty checkpoint fact is not ok");
	set_nodes(2, "-");
	is_int(judge(TE_W_VCHECK_WARN, "/ck", 2, text, sizeof(text)),
	       TE_VERDICT_REJECT, "nor is \"-\" (not checked) with a dir set");

	/* both: the checkpoint first, the versions after it under fail */
	set_nodes(2, "ok");
	SET(nodes[1].ckpt, "no such directory");
	SET(nodes[1].ver.nccl, "2.27.3");
	is_int(judge(TE_W_VCHECK_FAIL, "/ck", 2, text, sizeof(text)),
	       TE_VERDICT_REJECT, "a bad dir and a mismatch under fail");
	is_str(text,
	       "checkpoint dir /ck is not one shared directory writable "
	       "from every node (rank 0 is on n1): n2: no such directory; "
	       "version mismatch: NCCL differs across nodes: 2.28.9 on n1; "
	       "2.27.3 on n2",
	       "  both are said");
	is_int(judge(TE_W_VCHECK_WARN, "/ck", 2, text, sizeof(text)),
	       TE_VERDICT_REJECT, "a bad dir and a mismatch under warn");
	is_str(text,
	       "checkpoint dir /ck is not one shared directory writable "
	       "from every node (rank 0 is on n1): n2: no such directory",
	       "  only the dir is said");
}

static void test_rank0(void)
{
	struct te_versions a = { "0.1.0", "2.28.9", "12.4", "13.0", 0 }, b = a;
	char text[1024];
	static const char *const want =
		"version mismatch: node n2 has "
		"trainenv 0.1.0, NCCL 2.27.3, CUDA driver 12.4, CUDA runtime "
		"13.0; rank 0's node n1 has trainenv 0.1.0, NCCL 2.28.9, CUDA "
		"driver 12.4, CUDA runtime 13.0 (without --train-barrier each "
		"node is only compared with rank 0's)";

	ok(te_versions_equal(&a, &b), "equal versions are equal");
	strcpy(text, "stale");
	is_int(te_rank0_versions_verdict(TE_W_VCHECK_FAIL, "n2", &b, "n1", &a,
					 text, sizeof(text)),
	       TE_VERDICT_OK, "a node that agrees with rank 0: fine");
	is_str(text, "", "  with no text");
	SET(b.nccl, "2.27.3");
	ok(!te_versions_equal(&a, &b), "another NCCL: not equal");
	is_int(te_rank0_versions_verdict(TE_W_VCHECK_WARN, "n2", &b, "n1", &a,
					 text, sizeof(text)),
	       TE_VERDICT_WARN, "against rank 0 under warn: a warning");
	is_str(text, want, "  naming both nodes' versions");
	is_int(te_rank0_versions_verdict(TE_W_VCHECK_FAIL, "n2", &b, "n1", &a,
					 text, sizeof(text)),
	       TE_VERDICT_REJECT, "under fail: rejected");
	is_str(text, want, "  with the same text");
	is_int(te_rank0_versions_verdict(TE_W_VCHECK_OFF, "n2", &b, "n1", &a,
					 text, sizeof(text)),
	       TE_VERDICT_OK, "under off: fine");
	b = a;
	SET(b.trainenv, "0.2.0");
	ok(!te_versions_equal(&a, &b), "another trainenv: not equal");
	b = a;
	SET(b.cuda, "12.2");
	ok(!te_versions_equal(&a, &b), "another CUDA driver: not equal");
	b = a;
	b.cudart[0] = '\0';
	ok(!te_versions_equal(&a, &b), "an empty CUDA runtime: not equal");
	is_int(te_rank0_versions_verdict(TE_W_VCHECK_WARN, "n2", &b, "?", &a,
					 text, sizeof(text)),
	       TE_VERDICT_WARN, "rank 0's host unknown");
	like(text, "CUDA runtime ; rank 0's node ? has", "  said as it is");

	/* a node without a GPU: its NCCL and CUDA are not compared */
	b = a;
	SET(b.nccl, TE_VER_NOGPU);
	SET(b.cuda, TE_VER_NOGPU);
	SET(b.cudart, TE_VER_NOGPU);
	ok(te_versions_equal(&a, &b) && te_versions_equal(&b, &a),
	   "a node without a GPU agrees with one with a GPU, either way");
	is_int(te_rank0_versions_verdict(TE_W_VCHECK_FAIL, "n2", &b, "n1", &a,
					 text, sizeof(text)),
	       TE_VERDICT_OK, "  against rank 0 under fail: fine");
	SET(b.trainenv, "0.2.0");
	ok(!te_versions_equal(&a, &b), "  but its trainenv is still compared");

	/* another protocol (issue 26): rejected whatever vcheck says */
	b = a;
	a.protocol = 1;
	b.protocol = 2;
	SET(b.trainenv, "1.0.0");
	ok(!te_versions_equal(&a, &b), "another protocol: not equal");
	is_int(te_rank0_versions_verdict(TE_W_VCHECK_OFF, "n2", &b, "n1", &a,
					 text, sizeof(text)),
	       TE_VERDICT_REJECT,
	       "another protocol than rank 0's under off: rejected");
	is_str(text,
	       "node n2 speaks protocol 2 (trainenv 1.0.0), rank 0's node "
	       "n1 protocol 1 (trainenv 0.1.0): install the same trainenv on "
	       "every node (plugin, helpers and libtrainenv)",
	       "  one line naming both nodes, protocols and versions");
	b = a;
	b.protocol = 0;
	ok(!te_versions_equal(&a, &b),
	   "no protocol (0.1.0) against 1: not equal");
	a.protocol = 0;
	ok(!te_version_compared(TE_VER_NOGPU) && te_version_compared("none") &&
		   te_version_compared("2.28.9"),
	   "nogpu is the one value left out");
	ok(te_version_word_valid(TE_VER_NOGPU), "and a valid version word");
}

static void test_probe(void)
{
	struct te_ckpt_probe p;
	char out[128], name[96];
	static const char *const bad[] = {
		"",
		"x",
		".trainenv-ckpt-1.0-0123456789abcdef",
		"other-name " TOKEN,
		".trainenv-ckpt-1/0 " TOKEN,
		".trainenv-ckpt-1.0-01234 0123456789ABCDEF0123456789abcdef",
		".trainenv-ckpt-1.0-01234 " TOKEN "0",
		".trainenv-ckpt-1.0-01234 0123456789abcdef",
		"error",
		NULL,
	};
	static const char *const other[] = {
		"",
		"\n",
		TOKEN "\n\n",
		TOKEN " ",
		TOKEN "0",
		"0" TOKEN,
		"0123456789abcdef0123456789abcdee\n",
		"0123456789abcdef",
		NULL,
	};
	int i;

	is_int(te_ckpt_probe_name(7, 2, TOKEN, name, sizeof(name)), 0,
	       "the probe file's name");
	is_str(name, ".trainenv-ckpt-7.2-0123456789abcdef",
	       "  holds job, step and 16 digits of the token");
	is_int(te_ckpt_probe_name(4294967295ul, 4294967295ul, TOKEN, name, 20),
	       -1, "a name that does not fit: -1");

	is_int(te_ckpt_probe_parse(".trainenv-ckpt-7.2-0123456789abcdef " TOKEN,
				   &p, out, sizeof(out)),
	       0, "rank 0's value parses");
	is_str(p.name, ".trainenv-ckpt-7.2-0123456789abcdef", "  the name");
	is_str(p.token, TOKEN, "  the token");
	is_int(te_ckpt_probe_parse("error Read-only file system", &p, out,
				   sizeof(out)),
	       -1, "rank 0's error");
	is_str(out, "rank0 Read-only file system", "  becomes rank0 REASON");
	te_ckpt_probe_parse("error ", &p, out, sizeof(out));
	is_str(out, "rank0 ", "an empty error stays rank 0's");
	for (i = 0; bad[i]; i++) {
		out[0] = '\0';
		is_int(te_ckpt_probe_parse(bad[i], &p, out, sizeof(out)), -1,
		       "refused: '%s'", bad[i]);
		is_str(out, "rank 0's checkpoint file name is unreadable",
		       "  said so");
	}

	is_str(te_ckpt_probe_content(TOKEN "\n", TOKEN), "ok",
	       "the token and a newline: ok");
	is_str(te_ckpt_probe_content(TOKEN, TOKEN), "ok",
	       "the token alone: ok");
	for (i = 0; other[i]; i++)
		is_str(te_ckpt_probe_content(other[i], TOKEN),
		       "rank 0's probe file has other content there (another "
		       "directory?)",
		       "other content %d", i);
}

/* ---------------------------------------------------------------- args */

/* The options point into argv, as in the helper, whose argv lives as
 * long as the process: the copy outlives the call (static). */
static int parse(const char *line, struct te_rdzv_opts *o, char *err)
{
	static char copy[1024];
	char *argv[32], *save = NULL, *w;
	int argc = 0;

	SET(copy, line);
	argv[argc++] = "trainenv-rdzv";
	for (w = strtok_r(copy, " ", &save); w && argc < 31;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	err[0] = '\0';
	return te_rdzv_args_parse(argc, argv, o, err, 160);
}

static void test_args(void)
{
	struct te_rdzv_opts o;
	char err[160];
	static const char *const bad[][2] = {
		{ "--nope", "--nope" },
		{ "--job", "--job" },
		{ "--job x", "--job" },
		{ "--job -1", "--job" },
		{ "--job 4294967296", "--job" },
		{ "--step 1e3", "--step" },
		{ "--failed", "--failed" },
		{ "--job 1 --lead extra", "extra" },
		{ "--lead=1", "--lead=1" },
		/* protocol 1's settings flags: settings come from
		 * TRAINENV_SETTINGS now, never from the command line */
		{ "--port-start 20011", "--port-start" },
		{ "--port-range 20000-29999", "--port-range" },
		{ "--barrier 300", "--barrier" },
		{ "--wait 5", "--wait" },
		{ "--version-check warn", "--version-check" },
		{ "--checkpoint-dir /ck", "--checkpoint-dir" },
		{ "--tree-width 16", "--tree-width" },
		{ "--ifname", "--ifname" },
		{ "--test-hooks", "--test-hooks" },
		{ "--record", "--record" },
		{ "--job 1 --step 0 --barrier 60", "--barrier" },
	};
	size_t i;

	is_int(parse("", &o, err), 0, "no argument: nothing set");
	ok(!o.job && !o.step && !o.lead && !o.failed && !o.barrier &&
		   !o.port_start && !o.ckpt,
	   "  job 0, step 0, no settings yet");
	is_int(parse("--job 4294967295 --step 3 --lead --failed gone", &o, err),
	       0, "every option");
	ok(o.job == 4294967295ul && o.step == 3 && o.lead,
	   "  each value is taken");
	is_str(o.failed, "gone", "  the failure text");
	ok(o.failed == o.failed_text, "  held in the options");

	{
		char *argv[] = { "trainenv-rdzv", "--failed", "bad\001text\n",
				 NULL };

		is_int(te_rdzv_args_parse(3, argv, &o, err, sizeof(err)), 0,
		       "a failure text with control characters");
		is_str(o.failed, "bad?text?", "  is cleaned");
	}
	{
		char *argv[] = { "trainenv-rdzv", "--failed", NULL, NULL };
		char long_text[2000];

		memset(long_text, 'a', sizeof(long_text) - 1);
		long_text[sizeof(long_text) - 1] = '\0';
		argv[2] = long_text;
		is_int(te_rdzv_args_parse(3, argv, &o, err, sizeof(err)), 0,
		       "a long failure text");
		ok(strlen(o.failed) < sizeof(o.failed_text), "  is cut (%zu)",
		   strlen(o.failed));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[80];

		snprintf(want, sizeof(want), "bad argument '%s'", bad[i][1]);
		is_int(parse(bad[i][0], &o, err), -1, "refused: %s", bad[i][0]);
		is_str(err, want, "  naming %s", bad[i][1]);
	}
	parse("--a-very-long-unknown-option-name-that-goes-on-and-on", &o, err);
	is_str(err, "bad argument '--a-very-long-unknown-option-name-that-g'",
	       "a long word is cut to 40 characters");
}

int main(void)
{
	test_agree();
	test_versions();
	test_ckpt();
	test_rank0();
	test_probe();
	test_args();
	return tap_done();
}
