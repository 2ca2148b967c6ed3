/* trainenv's view of a step's processes on one node: /proc stat lines and
 * environment blocks parsed, and the process that stands for each rank
 * picked (see proctab.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "proctab.h"
#include "strutil.h"

int te_proc_stat_parse(const char *line, struct te_proc *p)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')');
	unsigned long long v[19];
	char *end;
	int i;

	if (!open || !close || close < open || close[1] != ' ')
		return -1;
	p->pid = (int)strtol(line, &end, 10);
	if (end == line || p->pid <= 0)
		return -1;
	te_strlcpy(p->comm, "", sizeof(p->comm));
	if ((size_t)(close - open - 1) < sizeof(p->comm)) {
		memcpy(p->comm, open + 1, (size_t)(close - open - 1));
		p->comm[close - open - 1] = '\0';
	}
	line = close + 2;
	if (!*line || line[1] != ' ')
		return -1;
	p->state = line[0];
	line += 2;
	/* ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime (fields 4 to 15, needed), cutime cstime
	 * priority nice num_threads itrealvalue starttime (to 22) */
	p->start = 0;
	for (i = 0; i < 19; i++) {
		if (i >= 12 && (*line == '\0' || *line == '\n'))
			break;
		if (*line < '0' || *line > '9') {
			/* tpgid may be -1; priority and nice negative */
			if (!((i == 4 || i == 14 || i == 15) && *line == '-'))
				return -1;
		}
		v[i] = strtoull(line, &end, 10);
		if (end == line || (*end != ' ' && *end != '\n' && *end))
			return -1;
		line = end;
		while (*line == ' ')
			line++;
	}
	p->ppid = (int)v[0];
	p->cpu_ticks = v[10] + v[11];
	if (i == 19)
		p->start = v[18];
	return 0;
}

/* The value of NAME= in the block, or NULL. */
static const char *env_value(const char *env, size_t len, const char *name,
			     size_t *vlen)
{
	size_t nl = strlen(name), i = 0;

	while (i < len) {
		const char *e = env + i;
		const char *z = memchr(e, '\0', len - i);
		size_t el = z ? (size_t)(z - e) : len - i;

		if (el > nl && !memcmp(e, name, nl) && e[nl] == '=') {
			*vlen = el - nl - 1;
			return e + nl + 1;
		}
		i += el + 1;
	}
	return NULL;
}

static long env_num(const char *env, size_t len, const char *name)
{
	char buf[24];
	size_t vl;
	const char *v = env_value(env, len, name, &vl);
	uint64_t n;

	if (!v || vl == 0 || vl >= sizeof(buf))
		return -1;
	memcpy(buf, v, vl);
	buf[vl] = '\0';
	if (te_parse_u64(buf, 0x7fffffff, &n) < 0)
		return -1;
	return (long)n;
}

void te_proc_environ_parse(const char *env, size_t len, struct te_proc *p)
{
	const char *v;
	size_t vl;

	p->job = env_num(env, len, "SLURM_JOB_ID");
	p->step = env_num(env, len, "SLURM_STEP_ID");
	p->procid = env_num(env, len, "SLURM_PROCID");
	p->rank = env_num(env, len, "RANK");
	p->elastic = env_value(env, len, "TORCHELASTIC_RUN_ID", &vl) != NULL;
	v = env_value(env, len, "TRAINENV_LAUNCHER", &vl);
	p->agent = v && vl >= 8 && !memcmp(v, "torchrun", 8);
	p->node[0] = '\0';
	v = env_value(env, len, "SLURMD_NODENAME", &vl);
	if (v && vl < sizeof(p->node) && !memchr(v, '/', vl)) {
		memcpy(p->node, v, vl);
		p->node[vl] = '\0';
	}
}

int te_proc_is_python(const char *exe)
{
	const char *b = strrchr(exe, '/');

	b = b ? b + 1 : exe;
	if (strncmp(b, "python", 6))
		return 0;
	for (b += 6; *b; b++)
		if (!((*b >= '0' && *b <= '9') || *b == '.' || *b == 'd' ||
		      *b == 'm'))
			return 0;
	return 1;
}

static int of_step(const struct te_proc *p, long job, long step)
{
	return p->job == job && p->step == step;
}

static int by_rank(const void *a, const void *b)
{
	const struct te_rank_proc *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Index of pid among the step's processes, or -1. */
static int find_pid(const struct te_proc *t, size_t n, long job, long step,
		    int pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].pid == pid && of_step(&t[i], job, step))
			return (int)i;
	return -1;
}

/* 1 when t[i] descends from t[root] within the step (depth-bounded: a
 * table is a snapshot, its parent links may loop). */
static int under(const struct te_proc *t, size_t n, long job, long step,
		 size_t i, size_t root)
{
	int k, cur = (int)i;

	for (k = 0; k < 64 && cur >= 0; k++) {
		if ((size_t)cur == root)
			return 1;
		cur = find_pid(t, n, job, step, t[cur].ppid);
	}
	return 0;
}

size_t te_proc_pick_ranks(const struct te_proc *t, size_t n, long job,
			  long step, struct te_rank_proc *out, size_t max)
{
	size_t i, j, k = 0;

	for (i = 0; i < n && k < max; i++) {
		int workers = 0, depth, best = -1, best_depth = 1 << 30;

		if (!of_step(&t[i], job, step) ||
		    find_pid(t, n, job, step, t[i].ppid) >= 0)
			continue;	/* not a task: its parent is the step's */
		for (j = 0; j < n && k < max; j++) {
			int up;

			if (j == i || !of_step(&t[j], job, step) ||
			    !t[j].elastic || t[j].rank < 0 ||
			    !under(t, n, job, step, j, i))
				continue;
			/* a worker's own children (data loaders) inherit
			 * its RANK: the worker stands for them */
			up = find_pid(t, n, job, step, t[j].ppid);
			if (up >= 0 && t[up].elastic && t[up].rank == t[j].rank)
				continue;
			out[k].rank = t[j].rank;
			out[k++].idx = (int)j;
			workers++;
		}
		if (workers || t[i].agent)
			continue;	/* an agent stands for no rank */
		/* the shallowest Python process of the task's tree */
		for (j = 0; j < n; j++) {
			int cur = (int)j;

			if (!of_step(&t[j], job, step) || !t[j].is_python)
				continue;
			for (depth = 0; depth < 64 && cur >= 0 &&
			     (size_t)cur != i; depth++)
				cur = find_pid(t, n, job, step, t[cur].ppid);
			if (cur >= 0 && (size_t)cur == i && depth < best_depth) {
				best = (int)j;
				best_depth = depth;
			}
		}
		out[k].rank = t[i].procid;
		out[k++].idx = best >= 0 ? best : (int)i;
	}
	qsort(out, k, sizeof(out[0]), by_rank);
	return k;
}
