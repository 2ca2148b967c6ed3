/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The memory of bad nodes (node_memory.h): a step record read, records
 * merged per (job, user), nodes judged over their newest jobs. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "report/node_memory.h"
#include "util/jsonscan.h"
#include "util/strutil.h"

int te_nm_node_name_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (i + 1 >= TE_NM_NODE_MAX ||
		    !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return i > 0;
}

/* What the reader saw of the fields trainenv nodes needs. */
struct seen {
	struct te_nm_record *r;
	int trainenv, job, end, first, first_object;
	const char *bad; /* the first field of a wrong type or value */
};

/* Strict decimal digits into an int64 (a fraction ignored: "12.5" is
 * 12); -1 for a sign, an exponent, or more than 18 digits. */
static int whole_seconds(const char *t, int64_t *out)
{
	size_t i;
	int64_t v = 0;

	for (i = 0; t[i] >= '0' && t[i] <= '9'; i++) {
		if (i >= 18)
			return -1;
		v = v * 10 + (t[i] - '0');
	}
	if (i == 0 || (t[i] && t[i] != '.') || strpbrk(t, "eE"))
		return -1;
	*out = v;
	return 0;
}

static void add_node(struct te_nm_record *r, const char *node)
{
	int k;

	for (k = 0; k < r->nnodes; k++)
		if (!strcmp(r->nodes[k], node))
			return;
	if (r->nnodes < TE_NM_REC_NODES)
		te_strlcpy(r->nodes[r->nnodes++], node, TE_NM_NODE_MAX);
}

static const char *const k_trainenv[] = { "trainenv", NULL };
static const char *const k_job[] = { "job", NULL };
static const char *const k_end[] = { "end", NULL };
static const char *const k_first[] = { "first_failure", NULL };
static const char *const k_first_node[] = { "first_failure", "node", NULL };
static const char *const k_first_time[] = { "first_failure", "time", NULL };
static const char *const k_launch_first[] = { "launch", "first_node", NULL };
static const char *const k_launch_last[] = { "launch", "last_node", NULL };

static int node_field(struct seen *s, const struct te_json_item *it,
		      const char *name)
{
	if (it->type == TE_JSON_NULL)
		return 0;
	if (it->type != TE_JSON_STR || it->cut ||
	    !te_nm_node_name_ok(it->text)) {
		s->bad = name;
		return -1;
	}
	add_node(s->r, it->text);
	return 0;
}

static void visit(const struct te_json_item *it, void *arg)
{
	struct seen *s = arg;
	uint64_t u;
	int64_t v;

	if (s->bad)
		return;
	/* a first failure without its node is none of srun's */
	if (it->depth >= 2 && !strcmp(it->path[0], "first_failure"))
		s->first = s->first_object = 1;
	if (te_json_at(it, k_trainenv)) {
		s->trainenv = it->type == TE_JSON_STR;
	} else if (te_json_at(it, k_job)) {
		if (it->type != TE_JSON_NUM ||
		    te_parse_u64(it->text, UINT32_MAX, &u) < 0 || u == 0)
			s->bad = "job";
		s->r->job = (uint32_t)u;
		s->job = 1;
	} else if (te_json_at(it, k_end)) {
		if (it->type != TE_JSON_NUM || whole_seconds(it->text, &v) < 0)
			s->bad = "end";
		else
			s->r->end = v;
		s->end = 1;
	} else if (te_json_at(it, k_first)) {
		/* a scalar there: only null (no failure) is one */
		if (it->type != TE_JSON_NULL)
			s->bad = "first_failure";
		s->first = 1;
	} else if (te_json_at(it, k_first_node)) {
		if (node_field(s, it, "first_failure.node") == 0 &&
		    it->type == TE_JSON_STR)
			te_strlcpy(s->r->first, it->text, TE_NM_NODE_MAX);
	} else if (te_json_at(it, k_first_time)) {
		if (it->type != TE_JSON_NUM ||
		    whole_seconds(it->text, &s->r->first_time) < 0)
			s->bad = "first_failure.time";
	} else if (te_json_at(it, k_launch_first)) {
		node_field(s, it, "launch.first_node");
	} else if (te_json_at(it, k_launch_last)) {
		node_field(s, it, "launch.last_node");
	}
}

int te_nm_record_parse(const char *s, size_t n, struct te_nm_record *r,
		       char *err, size_t errlen)
{
	static const struct te_nm_record zero;
	struct seen seen = { .r = r };
	char why[96];

	*r = zero;
	if (n > TE_NM_RECORD_MAX)
		return te_err(err, errlen, "larger than %d bytes",
			      TE_NM_RECORD_MAX);
	if (te_json_scan(s, n, visit, &seen, why, sizeof(why)) < 0)
		return te_err(err, errlen, "not JSON: %s", why);
	if (!seen.trainenv || !seen.job || !seen.end || !seen.first)
		return te_err(err, errlen,
			      "not a step record (no trainenv, job, end or "
			      "first_failure)");
	if (seen.bad)
		return te_err(err, errlen, "%s: not what a record holds",
			      seen.bad);
	if (r->first[0] == '\0' && seen.first_object)
		return te_err(err, errlen, "first_failure: no node");
	/* the failed node is one the job ran on */
	if (r->first[0])
		add_node(r, r->first);
	return 0;
}

void te_nm_init(struct te_nm *m, struct te_nm_job *jobs, size_t cap)
{
	m->jobs = jobs;
	m->cap = cap;
	m->njobs = 0;
}

int te_nm_add(struct te_nm *m, uint32_t uid, const struct te_nm_record *r,
	      int64_t now)
{
	struct te_nm_job *j;
	int k;

	if (r->end > now + TE_NM_FUTURE_S)
		return 1;
	if (m->njobs >= m->cap)
		return -1;
	j = &m->jobs[m->njobs++];
	memset(j, 0, sizeof(*j));
	j->uid = uid;
	j->job = r->job;
	j->end = r->end;
	te_strlcpy(j->first, r->first, sizeof(j->first));
	j->first_time = r->first_time;
	for (k = 0; k < r->nnodes; k++)
		te_strlcpy(j->nodes[j->nnodes++], r->nodes[k], TE_NM_NODE_MAX);
	return 0;
}

static int by_job(const void *a, const void *b)
{
	const struct te_nm_job *x = a, *y = b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return 0;
}

/* One (job, user) from its records: the latest end, the earliest first
 * failure, the nodes of all (at most TE_NM_JOB_NODES). */
static void merge_job(struct te_nm_job *to, const struct te_nm_job *from)
{
	int k, l;

	if (from->end > to->end)
		to->end = from->end;
	if (from->first[0] &&
	    (!to->first[0] || from->first_time < to->first_time)) {
		te_strlcpy(to->first, from->first, sizeof(to->first));
		to->first_time = from->first_time;
	}
	for (k = 0; k < from->nnodes; k++) {
		for (l = 0; l < to->nnodes; l++)
			if (!strcmp(to->nodes[l], from->nodes[k]))
				break;
		if (l == to->nnodes && to->nnodes < TE_NM_JOB_NODES)
			te_strlcpy(to->nodes[to->nnodes++], from->nodes[k],
				   TE_NM_NODE_MAX);
	}
}

static void merge_jobs(struct te_nm *m)
{
	size_t i, out = 0;

	if (!m->njobs)
		return;
	qsort(m->jobs, m->njobs, sizeof(*m->jobs), by_job);
	for (i = 1; i < m->njobs; i++) {
		if (by_job(&m->jobs[out], &m->jobs[i]) == 0)
			merge_job(&m->jobs[out], &m->jobs[i]);
		else
			m->jobs[++out] = m->jobs[i];
	}
	m->njobs = out + 1;
}

/* A node a job was seen on. */
struct seen_on {
	const char *node;
	const struct te_nm_job *job;
};

/* By node, then newest first (by end, then job id, then user). */
static int by_node_newest(const void *a, const void *b)
{
	const struct seen_on *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	if (c)
		return c;
	if (x->job->end != y->job->end)
		return x->job->end > y->job->end ? -1 : 1;
	if (x->job->job != y->job->job)
		return x->job->job > y->job->job ? -1 : 1;
	return x->job->uid < y->job->uid ? -1 : x->job->uid > y->job->uid;
}

static int worst_first(const void *a, const void *b)
{
	const struct te_nm_node *x = a, *y = b;

	if (x->users != y->users)
		return x->users > y->users ? -1 : 1;
	if (x->failures != y->failures)
		return x->failures > y->failures ? -1 : 1;
	if (x->jobs != y->jobs)
		return x->jobs < y->jobs ? -1 : 1;
	return strcmp(x->node, y->node);
}

/* The verdict on one node over its group g[0..n) (newest first). */
static void judge_node(const struct seen_on *g, size_t n,
		       const struct te_nm_opts *o, struct te_nm_node *v)
{
	size_t i, k;

	memset(v, 0, sizeof(*v));
	te_strlcpy(v->node, g[0].node, sizeof(v->node));
	for (i = 0; i < n && i < o->last; i++) {
		v->jobs++;
		if (strcmp(g[i].job->first, v->node) != 0)
			continue;
		v->failures++;
		for (k = 0; k < i; k++)
			if (!strcmp(g[k].job->first, v->node) &&
			    g[k].job->uid == g[i].job->uid)
				break;
		if (k == i)
			v->users++;
	}
}

long te_nm_judge(struct te_nm *m, const struct te_nm_opts *o,
		 struct te_nm_node *out, size_t max)
{
	struct seen_on *all;
	struct te_nm_node *bad;
	size_t i, n = 0, from, nbad = 0;
	int k;

	merge_jobs(m);
	for (i = 0; i < m->njobs; i++)
		n += (size_t)m->jobs[i].nnodes;
	all = calloc(n ? n : 1, sizeof(*all));
	bad = calloc(n ? n : 1, sizeof(*bad));
	if (!all || !bad) {
		free(all);
		free(bad);
		return -1;
	}
	n = 0;
	for (i = 0; i < m->njobs; i++)
		for (k = 0; k < m->jobs[i].nnodes; k++) {
			all[n].node = m->jobs[i].nodes[k];
			all[n++].job = &m->jobs[i];
		}
	qsort(all, n, sizeof(*all), by_node_newest);
	for (from = 0; from < n; from = i) {
		for (i = from + 1;
		     i < n && !strcmp(all[i].node, all[from].node); i++)
			;
		judge_node(all + from, i - from, o, &bad[nbad]);
		if (bad[nbad].failures >= o->min_failures &&
		    bad[nbad].users >= o->min_users)
			nbad++;
	}
	qsort(bad, nbad, sizeof(*bad), worst_first);
	memcpy(out, bad, (nbad < max ? nbad : max) * sizeof(*bad));
	free(all);
	free(bad);
	return (long)nbad;
}

void te_nm_line(const struct te_nm_node *n, char *buf, size_t len)
{
	te_snprintf(buf, len,
		    "%s: first failure in %u of the last %u job%s on it, "
		    "%u user%s",
		    n->node, n->failures, n->jobs, n->jobs == 1 ? "" : "s",
		    n->users, n->users == 1 ? "" : "s");
}

int te_nm_json(const struct te_nm_node *n, struct te_buf *b)
{
	te_buf_printf(b, "{\"node\":");
	te_buf_json_str(b, n->node);
	return te_buf_printf(b, ",\"failures\":%u,\"jobs\":%u,\"users\":%u}",
			     n->failures, n->jobs, n->users);
}
