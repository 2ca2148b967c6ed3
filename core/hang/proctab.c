/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv's view of a step's processes on one node: /proc stat lines and
 * environment blocks parsed, and the process that stands for each rank
 * picked (see proctab.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hang/proctab.h"
#include "launch/rankenv.h"
#include "util/strutil.h"

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

/* "JOB STEP PROCID NODE" (TRAINENV_TASK) v[0..vl) into p, whole or not at
 * all: four fields, one space between each, numbers within int, the node a
 * word of letters, digits and "-_.". 0, or -1 when malformed. */
static int task_value(const char *v, size_t vl, struct te_proc *p)
{
	char buf[24 * 3 + sizeof(p->node)], *f[4], *s = buf;
	long num[3];
	uint64_t n;
	int i;

	if (vl >= sizeof(buf))
		return -1;
	memcpy(buf, v, vl);
	buf[vl] = '\0';
	for (i = 0; i < 4; i++) {
		f[i] = s;
		s = i < 3 ? strchr(s, ' ') : NULL;
		if (i < 3 && !s)
			return -1;
		if (s)
			*s++ = '\0';
	}
	if (!te_word_valid(f[3], sizeof(p->node), "-_."))
		return -1;
	for (i = 0; i < 3; i++) {
		if (!f[i][0] || te_parse_u64(f[i], 0x7fffffff, &n) < 0)
			return -1;
		num[i] = (long)n;
	}
	p->job = num[0];
	p->step = num[1];
	p->procid = num[2];
	strcpy(p->node, f[3]);
	return 0;
}

void te_proc_environ_parse(const char *env, size_t len, struct te_proc *p)
{
	const char *v;
	size_t vl;

	p->job = env_num(env, len, "SLURM_JOB_ID");
	p->step = env_num(env, len, "SLURM_STEP_ID");
	p->procid = env_num(env, len, "SLURM_PROCID");
	p->rank = env_num(env, len, "RANK");
	p->world = env_num(env, len, "WORLD_SIZE");
	p->elastic = env_value(env, len, "TORCHELASTIC_RUN_ID", &vl) != NULL;
	v = env_value(env, len, "TRAINENV_LAUNCHER", &vl);
	p->agent = v && vl >= 8 && !memcmp(v, "torchrun", 8);
	p->node[0] = '\0';
	v = env_value(env, len, "SLURMD_NODENAME", &vl);
	if (v && vl < sizeof(p->node) && !memchr(v, '/', vl)) {
		memcpy(p->node, v, vl);
		p->node[vl] = '\0';
	}
	/* without Slurm's variables (apptainer exec --cleanenv): trainenv's
	 * own, which Apptainer keeps */
	if (p->job < 0 && (v = env_value(env, len, TE_TASK_ENV, &vl)))
		(void)task_value(v, vl, p);
}

/* What te_proc_environ_parse reads (a bit each in te_env_pick.seen). */
static const char *const picked[] = {
	"SLURM_JOB_ID=",      "SLURM_STEP_ID=",
	"SLURM_PROCID=",      "RANK=",
	"WORLD_SIZE=",	      "TORCHELASTIC_RUN_ID=",
	"TRAINENV_LAUNCHER=", "SLURMD_NODENAME=",
	TE_TASK_ENV "="
};

void te_env_pick_init(struct te_env_pick *s)
{
	memset(s, 0, sizeof(*s));
}

static void pick_entry(void *ctx, const char *entry, size_t len)
{
	struct te_env_pick *s = ctx;
	size_t i;

	for (i = 0; i < sizeof(picked) / sizeof(picked[0]); i++) {
		size_t k = strlen(picked[i]);

		if (len < k || memcmp(entry, picked[i], k))
			continue;
		if (!(s->seen & (1u << i)) &&
		    s->outlen + len + 1 <= sizeof(s->out)) {
			memcpy(s->out + s->outlen, entry, len);
			s->outlen += len;
			s->out[s->outlen++] = '\0';
			s->seen |= 1u << i;
		}
		return;
	}
}

void te_env_pick_feed(struct te_env_pick *s, const char *buf, size_t n)
{
	te_nul_entries_feed(&s->split, s->cur, sizeof(s->cur), buf, n,
			    pick_entry, s);
}

void te_env_pick_end(struct te_env_pick *s)
{
	te_nul_entries_end(&s->split, s->cur, pick_entry, s);
}

int te_proc_stepd_title(const char *cmd, size_t len, long *job, long *step)
{
	static const char pre[] = "slurmstepd: [";
	char buf[48], *dot, *end;
	size_t k = strnlen(cmd, len);
	uint64_t j, st;

	/* the title is one argument: up to the first NUL */
	if (k <= sizeof(pre) - 1 || k >= sizeof(buf) ||
	    memcmp(cmd, pre, sizeof(pre) - 1) || cmd[k - 1] != ']')
		return -1;
	memcpy(buf, cmd + sizeof(pre) - 1, k - sizeof(pre));
	buf[k - sizeof(pre)] = '\0';
	dot = strchr(buf, '.');
	if (!dot)
		return -1;
	*dot = '\0';
	end = dot + 1;
	if (te_parse_u64(buf, 0x7fffffff, &j) < 0 ||
	    te_parse_u64(end, 0x7fffffff, &st) < 0)
		return -1;
	*job = (long)j;
	*step = (long)st;
	return 0;
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

struct pid_idx {
	int pid;
	int i;
};

static int by_pid(const void *a, const void *b)
{
	const struct pid_idx *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The step's process with pid in the sorted index, or -1 (the first in
 * table order when a snapshot holds a pid twice). */
static int find(const struct pid_idx *ix, size_t m, int pid)
{
	size_t lo = 0, hi = m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m && ix[lo].pid == pid ? ix[lo].i : -1;
}

#define DEPTH_MAX 64 /* a table is a snapshot: parent links may loop */

size_t te_proc_pick_ranks(const struct te_proc *t, size_t n, long job,
			  long step, struct te_rank_proc *out, size_t max)
{
	struct pid_idx *ix = calloc(n ? n : 1, sizeof(*ix));
	int *up = calloc(n ? n : 1, sizeof(*up));     /* parent, -1 */
	int *root = calloc(n ? n : 1, sizeof(*root)); /* its task, -1 */
	int *depth = calloc(n ? n : 1, sizeof(*depth));
	int *best = calloc(n ? n : 1, sizeof(*best)); /* per task */
	int *workers = calloc(n ? n : 1, sizeof(*workers));
	size_t i, m = 0, k = 0;

	if (!ix || !up || !root || !depth || !best || !workers)
		goto out;
	for (i = 0; i < n; i++)
		if (of_step(&t[i], job, step)) {
			ix[m].pid = t[i].pid;
			ix[m++].i = (int)i;
		}
	qsort(ix, m, sizeof(*ix), by_pid);
	for (i = 0; i < n; i++) {
		up[i] = of_step(&t[i], job, step) ? find(ix, m, t[i].ppid) : -1;
		best[i] = -1;
	}
	/* each process's task: the top of its chain within the step, when
	 * that is a child of the step's slurmstepd (or of a parent not
	 * looked at) */
	for (i = 0; i < n; i++) {
		int cur = (int)i, d = 0;

		root[i] = -1;
		if (!of_step(&t[i], job, step))
			continue;
		while (up[cur] >= 0 && d < DEPTH_MAX) {
			cur = up[cur];
			d++;
		}
		if (up[cur] >= 0)
			continue; /* a loop, or too deep */
		if (t[cur].parent_kind == TE_PARENT_OTHER ||
		    (t[cur].parent_kind == TE_PARENT_STEPD &&
		     (t[cur].stepd_job != job || t[cur].stepd_step != step)))
			continue; /* an orphan, and what is under it */
		root[i] = cur;
		depth[i] = d;
	}
	/* torchrun's workers (not their own children: data loaders inherit
	 * RANK, the worker stands for them); else the task's shallowest
	 * Python process, the first in table order */
	for (i = 0; i < n; i++) {
		int r = root[i], p = up[i];

		if (r < 0 || (size_t)r == i)
			continue;
		if (t[i].elastic && t[i].rank >= 0) {
			if (p >= 0 && t[p].elastic && t[p].rank == t[i].rank)
				continue;
			workers[r]++;
		} else if (t[i].is_python &&
			   (best[r] < 0 || depth[i] < depth[best[r]])) {
			best[r] = (int)i;
		}
	}
	for (i = 0; i < n && k < max; i++) {
		int r = root[i], p = up[i];

		if (r == (int)i && !workers[i] && !t[i].agent) {
			/* a task: itself, or its shallowest Python process
			 * (an agent whose workers are gone stands for none) */
			out[k].rank = t[i].procid;
			out[k++].idx = t[i].is_python || best[i] < 0 ? (int)i
								     : best[i];
		} else if (r >= 0 && r != (int)i && workers[r] &&
			   t[i].elastic && t[i].rank >= 0 &&
			   !(p >= 0 && t[p].elastic &&
			     t[p].rank == t[i].rank)) {
			out[k].rank = t[i].rank; /* a worker */
			out[k++].idx = (int)i;
		}
	}
	qsort(out, k, sizeof(out[0]), by_rank);
out:
	free(ix);
	free(up);
	free(root);
	free(depth);
	free(best);
	free(workers);
	return k;
}
