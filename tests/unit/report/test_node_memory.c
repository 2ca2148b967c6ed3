/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the memory of bad nodes (core/report/node_memory.c): the
 * step record as srun writes it read back, hostile records refused, and
 * the judgement: distinct users, one count per (job, user), the newest
 * jobs only, forged ends, worst first. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "report/node_memory.h"
#include "report/steprecord.h"
#include "tap.h"

#define NOW 1700100000

static struct te_nm_job jobs[256];
static struct te_nm m;

/* A record as srun writes it (te_step_record_json): job, end, the first
 * failure on node fail (NULL: none) at time t, launch's first and last
 * nodes (NULL: no launch timeline). */
static void record(char *buf, size_t len, uint32_t job, int64_t end,
		   const char *fail, int64_t t, const char *lfirst,
		   const char *llast)
{
	struct te_failrep f = { .rank = 1, .signaled = 1, .value = 7, .sec = t };
	struct te_launch_skew skew = { .nranks = 4, .nnodes = 2 };
	struct te_step_record r = { .job = job, .end_sec = end };

	if (fail) {
		snprintf(f.node, sizeof(f.node), "%s", fail);
		r.first = &f;
		r.nfailed = 1;
	}
	if (lfirst) {
		snprintf(skew.first, sizeof(skew.first), "%s", lfirst);
		snprintf(skew.last, sizeof(skew.last), "%s", llast);
		r.launch = &skew;
	}
	if (te_step_record_json(buf, len, &r) < 0)
		buf[0] = '\0';
}

/* Adds one record of user uid; te_nm_add's answer (-2: not parsed). */
static int add(uint32_t uid, uint32_t job, int64_t end, const char *fail,
	       int64_t t, const char *lfirst, const char *llast)
{
	char buf[4096], err[160];
	struct te_nm_record r;

	record(buf, sizeof(buf), job, end, fail, t, lfirst, llast);
	if (te_nm_record_parse(buf, strlen(buf), &r, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return -2;
	}
	return te_nm_add(&m, uid, &r, NOW);
}

static void parse(void)
{
	char buf[4096], err[160];
	struct te_nm_record r;

	record(buf, sizeof(buf), 77, NOW - 5, "n3", NOW - 9, "n1", "n2");
	is_int(te_nm_record_parse(buf, strlen(buf), &r, err, sizeof(err)), 0,
	       "srun's record is read");
	is_int(r.job, 77, "... its job");
	is_int(r.end, NOW - 5, "... its end");
	is_str(r.first, "n3", "... its first failure's node");
	is_int(r.first_time, NOW - 9, "... and time (whole seconds)");
	is_int(r.nnodes, 3, "... the nodes it names: n3, n1, n2");
	is_str(r.nodes[0], "n3", "... the failed one first");
	record(buf, sizeof(buf), 78, NOW, NULL, 0, "n1", "n1");
	is_int(te_nm_record_parse(buf, strlen(buf), &r, err, sizeof(err)), 0,
	       "a record without a failure is read");
	is_str(r.first, "", "... no first failure");
	is_int(r.nnodes, 1, "... n1 named once");
	record(buf, sizeof(buf), 79, NOW, NULL, 0, NULL, NULL);
	is_int(te_nm_record_parse(buf, strlen(buf), &r, err, sizeof(err)), 0,
	       "a record without a launch timeline is read");
	is_int(r.nnodes, 0, "... it names no node");
}

static void refuse(const char *text, const char *why, const char *name)
{
	char err[160] = "";
	struct te_nm_record r;
	int rc = te_nm_record_parse(text, strlen(text), &r, err, sizeof(err));

	ok(rc == -1 && strstr(err, why) && !strchr(err, '\n'),
	   "refused: %s (%s)", name, err);
}

#define HEAD "{\"trainenv\":\"1\",\"end\":5,"
static void hostile(void)
{
	static char huge[TE_NM_RECORD_MAX + 2];
	char err[160];
	struct te_nm_record r;

	refuse("junk", "not JSON", "junk");
	refuse("[1,2]", "not a step record", "an array");
	refuse(HEAD "\"first_failure\":null}", "not a step record", "no job");
	refuse("{\"job\":1,\"end\":5,\"first_failure\":null}",
	       "not a step record", "no trainenv field");
	refuse(HEAD "\"job\":0,\"first_failure\":null}", "job", "job 0");
	refuse(HEAD "\"job\":\"7\",\"first_failure\":null}", "job",
	       "job a string");
	refuse(HEAD "\"job\":4294967296,\"first_failure\":null}", "job",
	       "job past 32 bits");
	refuse(HEAD "\"job\":-3,\"first_failure\":null}", "job", "job < 0");
	refuse("{\"trainenv\":\"1\",\"end\":-5,\"job\":1,\"first_failure\":"
	       "null}",
	       "end", "end < 0");
	refuse(HEAD "\"job\":1,\"first_failure\":{\"node\":\"n1 n2\"}}",
	       "first_failure.node", "a node with a space");
	refuse(HEAD "\"job\":1,\"first_failure\":{\"node\":\"../etc\"}}",
	       "first_failure.node", "a node with a slash");
	refuse(HEAD "\"job\":1,\"first_failure\":{\"node\":\"\"}}",
	       "first_failure.node", "an empty node");
	refuse(HEAD "\"job\":1,\"first_failure\":{\"node\":\"n\\n1\"}}",
	       "first_failure.node", "a node with a newline");
	refuse(HEAD
	       "\"job\":1,\"first_failure\":{\"node\":"
	       "\"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
	       "\"}}",
	       "first_failure.node", "a 64-byte node");
	refuse(HEAD "\"job\":1,\"first_failure\":{\"node\":7}}",
	       "first_failure.node", "a node a number");
	refuse(HEAD "\"job\":1,\"first_failure\":3}", "first_failure",
	       "first_failure a number");
	refuse(HEAD "\"job\":1,\"first_failure\":{\"rank\":1}}", "no node",
	       "first_failure without a node");
	refuse(HEAD "\"job\":1,\"first_failure\":null,\"launch\":"
		    "{\"first_node\":\"a;b\"}}",
	       "launch.first_node", "launch's node not a name");
	refuse(HEAD "\"job\":1,\"first_failure\":{\"node\":\"n1\",\"time\":"
		    "1e9}}",
	       "first_failure.time", "a time with an exponent");
	memset(huge, ' ', sizeof(huge) - 1);
	memcpy(huge, HEAD "\"job\":1,\"first_failure\":null}",
	       strlen(HEAD "\"job\":1,\"first_failure\":null}"));
	is_int(te_nm_record_parse(huge, TE_NM_RECORD_MAX + 1, &r, err,
				  sizeof(err)),
	       -1, "a record over %d bytes: refused", TE_NM_RECORD_MAX);
	is_int(te_nm_record_parse(huge, TE_NM_RECORD_MAX, &r, err, sizeof(err)),
	       0, "... one of %d bytes (white space after it) is read",
	       TE_NM_RECORD_MAX);
}

static long judge(unsigned users, unsigned last, unsigned fails,
		  struct te_nm_node *out, size_t max)
{
	struct te_nm_opts o = { users, last, fails };

	return te_nm_judge(&m, &o, out, max);
}

static void judgement(void)
{
	struct te_nm_node out[8];
	char line[200];
	int i, rc = 0;

	/* n17: the first failure of jobs of 3 users, among 10 jobs */
	te_nm_init(&m, jobs, 256);
	rc |= add(1001, 1, NOW - 100, "n17", NOW - 150, "n17", "n2");
	rc |= add(1002, 2, NOW - 90, "n17", NOW - 95, "n1", "n17");
	rc |= add(1003, 3, NOW - 80, "n17", NOW - 85, "n17", "n17");
	for (i = 0; i < 7; i++)
		rc |= add(1004, 10 + i, NOW - 70 + i, NULL, 0, "n17", "n1");
	is_int(rc, 0, "10 jobs on n17 added");
	is_int(judge(2, 10, 2, out, 8), 1, "one node implicated");
	te_nm_line(&out[0], line, sizeof(line));
	is_str(line,
	       "n17: first failure in 3 of the last 10 jobs on it, 3 users",
	       "... n17, its line");
	is_int(judge(4, 10, 2, out, 8), 0, "--min-users 4: none (3 users)");
	is_int(judge(2, 10, 4, out, 8), 0,
	       "--min-failures 4: none (3 failures)");
	/* the newest 7 are clean: the failures fall out of a window of 7 */
	is_int(judge(2, 7, 1, out, 8), 0,
	       "--last 7: none (its 7 newest clean)");
	is_int(judge(2, 8, 1, out, 8), 0,
	       "--last 8: none (1 failure, of 1 user, among them)");
	is_int(judge(2, 9, 1, out, 8), 1, "--last 9: n17 (2 users)");
	te_nm_line(&out[0], line, sizeof(line));
	is_str(line,
	       "n17: first failure in 2 of the last 9 jobs on it, 2 users",
	       "... its line");
}

static void forged(void)
{
	struct te_nm_node out[8];
	char line[200];
	int i, rc = 0;

	/* one user, 50 jobs, each naming n5 */
	te_nm_init(&m, jobs, 256);
	for (i = 0; i < 50; i++)
		rc |= add(1001, 100 + i, NOW - i, "n5", NOW - i, NULL, NULL);
	is_int(rc, 0, "50 forged jobs of one user added");
	is_int(judge(2, 10, 2, out, 8), 0,
	       "one user's records never implicate");
	is_int(judge(1, 10, 2, out, 8), 1, "... unless --min-users 1");
	te_nm_line(&out[0], line, sizeof(line));
	is_str(line,
	       "n5: first failure in 10 of the last 10 jobs on it, 1 user",
	       "... then its line");

	/* one (job, user) counts once however many records say it */
	te_nm_init(&m, jobs, 256);
	for (i = 0; i < 5; i++)
		rc |= add(1001, 9, NOW - i, "n8", NOW - 10 - i, NULL, NULL);
	rc |= add(1002, 9, NOW, "n8", NOW - 3, NULL, NULL);
	is_int(rc, 0, "5 records of job 9 by 1001, one by 1002");
	is_int(judge(2, 10, 2, out, 8), 1, "n8 implicated (2 users)");
	is_int(out[0].failures, 2, "... 2 failures: (9, 1001) counted once");
	is_int(out[0].jobs, 2, "... in 2 jobs");
	is_int(judge(2, 10, 3, out, 8), 0, "--min-failures 3: none");

	/* ends in the future would stay among the newest forever */
	te_nm_init(&m, jobs, 256);
	is_int(add(1001, 1, NOW + TE_NM_FUTURE_S + 1, "n1", NOW, NULL, NULL), 1,
	       "an end more than a day ahead: left out");
	is_int(add(1001, 1, NOW + TE_NM_FUTURE_S, "n1", NOW, NULL, NULL), 0,
	       "an end a day ahead: taken");
	te_nm_init(&m, jobs, 2);
	add(1001, 1, NOW, NULL, 0, NULL, NULL);
	add(1001, 2, NOW, NULL, 0, NULL, NULL);
	is_int(add(1001, 3, NOW, NULL, 0, NULL, NULL), -1,
	       "past the caller's cap: -1");
}

static void order(void)
{
	struct te_nm_node out[8];
	char line[200];
	struct te_buf b;
	char js[200];
	int rc = 0;

	/* a job's steps: the earliest first failure is the job's */
	te_nm_init(&m, jobs, 256);
	rc |= add(1001, 20, NOW, "n1", NOW - 50, NULL, NULL);
	rc |= add(1001, 20, NOW - 1, "n2", NOW - 60, NULL, NULL);
	rc |= add(1002, 21, NOW, "n2", NOW - 5, NULL, NULL);
	is_int(rc, 0, "job 20's two steps failed on n1, then earlier on n2");
	is_int(judge(2, 10, 2, out, 8), 1, "one node implicated");
	is_str(out[0].node, "n2", "... n2, job 20's earliest failure");
	is_int(out[0].jobs, 2, "... seen in 2 jobs (n1 is job 20's too)");

	/* worst first: more users first */
	te_nm_init(&m, jobs, 256);
	rc |= add(1001, 1, NOW, "nb", NOW, NULL, NULL);
	rc |= add(1002, 2, NOW, "nb", NOW, NULL, NULL);
	rc |= add(1001, 3, NOW, "na", NOW, NULL, NULL);
	rc |= add(1002, 4, NOW, "na", NOW, NULL, NULL);
	rc |= add(1003, 5, NOW, "na", NOW, NULL, NULL);
	is_int(rc, 0, "na: 3 users, nb: 2");
	is_int(judge(2, 10, 2, out, 8), 2, "two implicated");
	is_str(out[0].node, "na", "... na (3 users) first");
	is_str(out[1].node, "nb", "... nb second");
	is_int(judge(2, 10, 2, out, 1), 2, "out of room for one: still 2");
	is_str(out[0].node, "na", "... the worst kept");
	out[0].jobs = out[0].users = out[0].failures = 1;
	te_nm_line(&out[0], line, sizeof(line));
	is_str(line, "na: first failure in 1 of the last 1 job on it, 1 user",
	       "the line in the singular");
	te_buf_init(&b, js, sizeof(js));
	is_int(te_nm_json(&out[0], &b), 0, "the node as JSON");
	is_str(js, "{\"node\":\"na\",\"failures\":1,\"jobs\":1,\"users\":1}",
	       "... its fields");
}

int main(void)
{
	parse();
	hostile();
	judgement();
	forged();
	order();
	return tap_done();
}
