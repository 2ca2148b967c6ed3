/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Restart inside the allocation (core/report/relaunch.h): spares, the
 * verdict at a failed step's end, srun's word to its shield and the
 * relaunched command line. Pure: spank/srun_relaunch.c gathers the facts
 * and spank/srun_hangup_relaunch.c starts srun again. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/relaunch.h"
#include "srun/srunargs.h"
#include "util/strutil.h"

static int parse_count(const char *s, uint64_t *out)
{
	return s && s[0] && te_parse_u64(s, 1000000, out) == 0 ? 0 : -1;
}

int te_spares_env(uint32_t spares, const char *job_nodes, const char *ntasks,
		  const char *per_node, struct te_spares_env *env)
{
	uint64_t n, t, p;

	memset(env, 0, sizeof(*env));
	if (!spares || parse_count(job_nodes, &n) < 0 || n == 0)
		return 0;
	if (spares >= n) {
		te_snprintf(
			env->line, sizeof(env->line),
			"--train-spares=%u leaves none of the job's %" PRIu64
			" nodes for the step: no node sits out",
			spares, n);
		return -1;
	}
	te_snprintf(env->nodes, sizeof(env->nodes), "%" PRIu64, n - spares);
	if (!ntasks)
		return 1; /* srun puts one task per node, or per its options */
	if (parse_count(ntasks, &t) < 0)
		return 1;
	/* the same tasks per node as the job asked for */
	if (per_node && parse_count(per_node, &p) == 0 && p > 0)
		t = p * (n - spares);
	else if (t % n == 0)
		t = t / n * (n - spares);
	else {
		te_snprintf(env->line, sizeof(env->line),
			    "--train-spares=%u: the job's %" PRIu64
			    " tasks do not divide over its %" PRIu64
			    " nodes: the step keeps %" PRIu64
			    " tasks on %" PRIu64 " nodes (give srun -n)",
			    spares, t, n, t, n - spares);
		return 1;
	}
	te_snprintf(env->ntasks, sizeof(env->ntasks), "%" PRIu64, t);
	return 1;
}

/* The nodes of list that exclude does not name. */
static uint32_t count_free(const char *list, const char *exclude)
{
	char name[TE_NODE_MAX];
	const char *p = list;
	uint32_t n = 0;

	while ((p = te_list_next(p, name, sizeof(name))))
		n += name[0] && !te_list_has(exclude, name);
	return n;
}

static int verdict(struct te_relaunch_plan *plan, int v, const char *fmt_line)
{
	plan->verdict = v;
	te_strlcpy(plan->line, fmt_line, sizeof(plan->line));
	return v;
}

int te_relaunch_decide(const struct te_relaunch_facts *f,
		       const struct te_fault *fault,
		       struct te_relaunch_plan *plan)
{
	const char *exc = f->excluded ? f->excluded : "";
	char line[TE_RECOVERY_LINE_MAX];
	uint32_t free_nodes;

	memset(plan, 0, sizeof(*plan));
	if (!f->spares || fault->kind == TE_FAULT_NONE)
		return TE_VERDICT_NONE;
	if (fault->kind == TE_FAULT_STOP) {
		te_snprintf(line, sizeof(line), "relaunch: stopped: %s",
			    fault->why);
		return verdict(plan, TE_VERDICT_STOP, line);
	}
	if (f->ending) {
		te_snprintf(line, sizeof(line), "relaunch: stopped: %s",
			    f->ending);
		return verdict(plan, TE_VERDICT_STOP, line);
	}
	if (fault->kind == TE_FAULT_PROGRAM) {
		te_snprintf(line, sizeof(line),
			    "relaunch: not relaunched: %s: the program's own "
			    "error (the site restarts node failures only)",
			    fault->why);
		return verdict(plan, TE_VERDICT_STOP, line);
	}
	if (f->restarts >= f->budget) {
		te_snprintf(line, sizeof(line),
			    "relaunch: not relaunched: node %s failed (%s), "
			    "but the restart budget is spent (%u of %" PRIu64
			    " restarts done)",
			    fault->node, fault->why, f->restarts, f->budget);
		return verdict(plan, TE_VERDICT_STOP, line);
	}
	if (f->no_shield) {
		te_snprintf(line, sizeof(line),
			    "relaunch: not relaunched: node %s failed (%s), "
			    "but %s",
			    fault->node, fault->why, f->no_shield);
		return verdict(plan, TE_VERDICT_REQUEUE, line);
	}
	if (te_snprintf(plan->exclude, sizeof(plan->exclude), "%s%s%s", exc,
			exc[0] && !te_list_has(exc, fault->node) ? "," : "",
			te_list_has(exc, fault->node) ? "" : fault->node) < 0) {
		te_snprintf(line, sizeof(line),
			    "relaunch: not relaunched: node %s failed, but "
			    "the list of nodes left out is full",
			    fault->node);
		plan->exclude[0] = '\0';
		return verdict(plan, TE_VERDICT_REQUEUE, line);
	}
	free_nodes = f->job_nodes ? count_free(f->job_nodes, plan->exclude)
				  : f->free_nodes;
	plan->nodes = f->step_nodes;
	plan->tasks = f->step_tasks;
	if (f->shrink && f->step_nodes && free_nodes < f->step_nodes &&
	    free_nodes > 0 && f->step_tasks % f->step_nodes == 0) {
		plan->nodes = free_nodes;
		plan->tasks = f->step_tasks / f->step_nodes * free_nodes;
		te_snprintf(line, sizeof(line),
			    "relaunch: node %s failed: %s; no spare is left: "
			    "the step starts again in this allocation without "
			    "%s, on the %u nodes left with %u tasks "
			    "(--train-shrink; restart %u of %" PRIu64 ")",
			    fault->node, fault->why, fault->node, plan->nodes,
			    plan->tasks, f->restarts + 1, f->budget);
		return verdict(plan, TE_VERDICT_RELAUNCH, line);
	}
	if (!f->step_nodes || free_nodes < f->step_nodes) {
		te_snprintf(line, sizeof(line),
			    "relaunch: not relaunched: node %s failed (%s), "
			    "but no spare node is left (%u of the job's nodes "
			    "free for a step of %u)",
			    fault->node, fault->why, free_nodes, f->step_nodes);
		plan->exclude[0] = '\0';
		return verdict(plan, TE_VERDICT_REQUEUE, line);
	}
	te_snprintf(line, sizeof(line),
		    "relaunch: node %s failed: %s; the step starts again in "
		    "this allocation without %s, on %u nodes with %u tasks "
		    "(restart %u of %" PRIu64 ")",
		    fault->node, fault->why, fault->node, f->step_nodes,
		    f->step_tasks, f->restarts + 1, f->budget);
	return verdict(plan, TE_VERDICT_RELAUNCH, line);
}

int te_relaunch_nodes_ok(const char *s)
{
	size_t i;

	if (!s[0] || s[0] == ',')
		return 0;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("-_.,", s[i])) ||
		    (s[i] == ',' && (s[i + 1] == ',' || !s[i + 1])))
			return 0;
	return 1;
}

int te_relaunch_word_format(const struct te_relaunch_word *w, char *buf,
			    size_t len)
{
	if (!te_relaunch_nodes_ok(w->exclude) || !w->nodes || !w->tasks)
		return -1;
	return te_snprintf(buf, len, "relaunch 1 %u %u %u %d %u %s\n",
			   w->restart, w->nodes, w->tasks, w->overlap ? 1 : 0,
			   w->first, w->exclude);
}

int te_relaunch_word_parse(const char *line, struct te_relaunch_word *w)
{
	uint64_t v[5];
	const char *p;
	size_t n;
	int i;

	memset(w, 0, sizeof(*w));
	if (!line ||
	    te_strnlen_cap(line, TE_RELAUNCH_WORD_MAX) >=
		    TE_RELAUNCH_WORD_MAX ||
	    strncmp(line, "relaunch 1 ", 11) != 0)
		return -1;
	p = line + 11;
	/* five numbers, each digits only, one blank after each */
	for (i = 0; i < 5; i++) {
		const char *sp = strchr(p, ' ');
		size_t k = sp ? (size_t)(sp - p) : 0;
		char num[12];

		if (!k || k >= sizeof(num))
			return -1;
		memcpy(num, p, k);
		num[k] = '\0';
		if (te_parse_u64(num, 1000000000, &v[i]) < 0)
			return -1;
		p = sp + 1;
	}
	if (!v[1] || !v[2] || v[1] > 1000000 || v[2] > 100000000 || v[3] > 1)
		return -1;
	n = strlen(p);
	if (n < 2 || p[n - 1] != '\n' || n - 1 >= sizeof(w->exclude))
		return -1;
	memcpy(w->exclude, p, n - 1);
	w->exclude[n - 1] = '\0';
	if (!te_relaunch_nodes_ok(w->exclude))
		return -1;
	w->restart = (uint32_t)v[0];
	w->nodes = (uint32_t)v[1];
	w->tasks = (uint32_t)v[2];
	w->overlap = (int)v[3];
	w->first = (uint32_t)v[4];
	return 0;
}

int te_relaunch_argv(int argc, char *const *argv,
		     const struct te_relaunch_word *w, char **out, char *buf,
		     size_t len)
{
	const char *own = te_srun_option_value(argc, argv, "exclude");
	int cmd = te_srun_command(argc, argv), i, n = 0;
	int nopt = w->overlap ? 5 : 4;
	size_t at = 0;
	char *opt[5];

	if (cmd < 1)
		return -1;
	for (i = 0; i < nopt; i++) {
		int k;

		opt[i] = buf + at;
		k = i == 0 ? te_snprintf(buf + at, len - at, "--exclude=%s%s%s",
					 own && own[0] ? own : "",
					 own && own[0] ? "," : "", w->exclude)
		    : i == 1 ? te_snprintf(buf + at, len - at, "--nodes=%u",
					   w->nodes)
		    : i == 2 ? te_snprintf(buf + at, len - at, "--ntasks=%u",
					   w->tasks)
		    /* the failed step's output stays in srun's -o FILE */
		    : i == 3 ? te_snprintf(buf + at, len - at,
					   "--open-mode=append")
			     : te_snprintf(buf + at, len - at, "--overlap");
		if (at >= len || k < 0)
			return -1;
		at += strlen(buf + at) + 1;
	}
	/* before the command, or before the "--" that precedes it: the
	 * last of an option wins in srun, so these win over the user's */
	if (cmd >= 2 && !strcmp(argv[cmd - 1], "--"))
		cmd--;
	for (i = 0; i < cmd; i++)
		out[n++] = argv[i];
	for (i = 0; i < nopt; i++)
		out[n++] = opt[i];
	for (i = cmd; i < argc; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	return n;
}

uint32_t te_relaunch_comment_count(const char *comment)
{
	const char *p = comment;
	uint32_t n = 0;

	while (p && (p = strstr(p, TE_RELAUNCH_COMMENT_TAG))) {
		n++;
		p += strlen(TE_RELAUNCH_COMMENT_TAG);
	}
	return n;
}

static int one_printable_line(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

int te_relaunch_comment_add(const char *comment, uint32_t restart,
			    const char *node, char *out, size_t len)
{
	const char *c = comment && strcmp(comment, "(null)") ? comment : "";
	size_t cap = len < TE_RELAUNCH_COMMENT_MAX + 1
			     ? len
			     : TE_RELAUNCH_COMMENT_MAX + 1;

	if (!one_printable_line(c) || !te_relaunch_nodes_ok(node) ||
	    strchr(node, ','))
		return -1;
	if (te_snprintf(out, cap, "%s%s%s%u without %s", c, c[0] ? "; " : "",
			TE_RELAUNCH_COMMENT_TAG, restart, node) < 0)
		return -1;
	return 1;
}
