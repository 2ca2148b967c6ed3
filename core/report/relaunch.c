/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Restart inside the allocation (core/report/relaunch.h): spares, the
 * verdict at a failed step's end, srun's word to its shield and the
 * relaunched command line. Pure: spank/srun_relaunch.c gathers the facts
 * and spank/srun_hangup_relaunch.c starts srun again. */
#include "config.h"

#include <inttypes.h>
#include <signal.h>
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

/* settings/value.c refuses these codes in --train-transient by number */
_Static_assert(TE_EXIT_NODE_FAULT == 75 && TE_EXIT_NO_RESTART == 93,
	       "the codes --train-transient reserves");

/* An exit report (not a stall, a torchrun end or restart, the launch
 * timeline, a health verdict) of a rank that failed. */
static int is_exit_failure(const struct te_failrep *r)
{
	if (r->stalled || r->ended || r->resumed || r->launched || r->health)
		return 0;
	return r->signaled || r->value != 0;
}

static int before(const struct te_failrep *a, const struct te_failrep *b)
{
	if (a->sec != b->sec)
		return a->sec < b->sec;
	if (a->usec != b->usec)
		return a->usec < b->usec;
	return a->rank < b->rank;
}

int te_transient_fault(const struct te_failrep *fails, size_t n,
		       const char *codes, const struct te_failrep **first)
{
	const struct te_failrep *f0 = NULL;
	char code[16];
	size_t i;

	*first = NULL;
	if (!codes || !codes[0])
		return 0;
	for (i = 0; i < n; i++)
		if (is_exit_failure(&fails[i]) && !fails[i].by_trainenv &&
		    (!f0 || before(&fails[i], f0)))
			f0 = &fails[i];
	if (!f0)
		return 0;
	for (i = 0; i < n; i++) {
		const struct te_failrep *r = &fails[i];

		if (!is_exit_failure(r) || r->by_trainenv)
			continue;
		/* the step being ended after its first failure */
		if (r != f0 && r->signaled &&
		    (r->value == SIGKILL || r->value == SIGTERM) &&
		    before(f0, r))
			continue;
		te_snprintf(code, sizeof(code), "%d", r->value);
		if (r->signaled || !te_list_has(codes, code))
			return 0;
	}
	*first = f0;
	return 1;
}

/* A transient fault: the step starts again on the same nodes, in the
 * budget, where its shield can. */
static int same_nodes(const struct te_relaunch_facts *f,
		      const struct te_failrep *r, struct te_relaunch_plan *plan)
{
	char line[TE_RECOVERY_LINE_MAX], what[96];

	te_snprintf(what, sizeof(what),
		    "rank %u exited with code %d, listed as transient "
		    "(--train-transient)",
		    r->rank, r->value);
	if (f->restarts >= f->budget) {
		te_snprintf(line, sizeof(line),
			    "relaunch: not relaunched: %s, but the restart "
			    "budget is spent (%u of %" PRIu64 " restarts done)",
			    what, f->restarts, f->budget);
		return verdict(plan, TE_VERDICT_STOP, line);
	}
	if (f->no_shield || !f->step_nodes || !f->step_tasks ||
	    te_strlcpy(plan->exclude, f->excluded ? f->excluded : "",
		       sizeof(plan->exclude)) >= sizeof(plan->exclude)) {
		te_snprintf(line, sizeof(line),
			    "relaunch: not relaunched: %s, but %s", what,
			    f->no_shield ? f->no_shield
					 : "the step's nodes are not known");
		plan->exclude[0] = '\0';
		return verdict(plan, TE_VERDICT_REQUEUE, line);
	}
	plan->nodes = f->step_nodes;
	plan->tasks = f->step_tasks;
	te_snprintf(line, sizeof(line),
		    "relaunch: %s: the step starts again on the same nodes "
		    "(restart %u of %" PRIu64 ")",
		    what, f->restarts + 1, f->budget);
	return verdict(plan, TE_VERDICT_RELAUNCH_SAME, line);
}

uint32_t te_relaunch_shrink_to(int shrink, uint32_t step_nodes,
			       uint32_t step_tasks, uint32_t free_nodes)
{
	if (!shrink || !step_nodes || !free_nodes || free_nodes >= step_nodes ||
	    step_tasks % step_nodes)
		return 0;
	return free_nodes;
}

/* A node's fault with spares: the step starts again without the node, a
 * spare in its place (or on the nodes left, --train-shrink). */
static int without_node(const struct te_relaunch_facts *f,
			const struct te_fault *fault,
			struct te_relaunch_plan *plan)
{
	const char *exc = f->excluded ? f->excluded : "";
	char line[TE_RECOVERY_LINE_MAX];
	uint32_t free_nodes;

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
	if (te_relaunch_shrink_to(f->shrink, f->step_nodes, f->step_tasks,
				  free_nodes)) {
		plan->nodes = free_nodes;
		plan->tasks = f->step_tasks / f->step_nodes * free_nodes;
		te_snprintf(line, sizeof(line),
			    "relaunch: node %s %s: %s; no spare is left: "
			    "the step starts again in this allocation without "
			    "%s, on the %u node%s left with %u tasks "
			    "(--train-shrink; restart %u of %" PRIu64 ")",
			    fault->node, te_fault_verb(fault), fault->why,
			    fault->node, plan->nodes,
			    plan->nodes == 1 ? "" : "s", plan->tasks,
			    f->restarts + 1, f->budget);
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
		    "relaunch: node %s %s: %s; the step starts again in "
		    "this allocation without %s, on %u nodes with %u tasks "
		    "(restart %u of %" PRIu64 ")",
		    fault->node, te_fault_verb(fault), fault->why, fault->node,
		    f->step_nodes, f->step_tasks, f->restarts + 1, f->budget);
	return verdict(plan, TE_VERDICT_RELAUNCH, line);
}

int te_relaunch_decide(const struct te_relaunch_facts *f,
		       const struct te_fault *fault,
		       struct te_relaunch_plan *plan)
{
	int transient = f->transient && f->transient[0];
	const struct te_failrep *first;
	char line[TE_RECOVERY_LINE_MAX];

	memset(plan, 0, sizeof(*plan));
	if ((!f->spares && !transient) || fault->kind == TE_FAULT_NONE)
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
	/* a lost or hung node is the node's fault, whatever the codes */
	if (transient && !fault->lost && !f->hung &&
	    te_transient_fault(f->fails, f->nfails, f->transient, &first))
		return same_nodes(f, first, plan);
	if (fault->kind == TE_FAULT_PROGRAM) {
		te_snprintf(line, sizeof(line),
			    "relaunch: not relaunched: %s: the program's own "
			    "error (%s)",
			    fault->why,
			    transient ? "not a node's fault, and not every "
					"failed rank exited with a code "
					"--train-transient lists"
				      : "the site restarts node failures only");
		return verdict(plan, TE_VERDICT_STOP, line);
	}
	if (!f->spares)
		return TE_VERDICT_NONE; /* a node's fault: the requeue's */
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
	return without_node(f, fault, plan);
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
	if ((w->exclude[0] && !te_relaunch_nodes_ok(w->exclude)) || !w->nodes ||
	    !w->tasks)
		return -1;
	return te_snprintf(buf, len, "relaunch 1 %u %u %u %d %u %s\n",
			   w->restart, w->nodes, w->tasks, w->overlap ? 1 : 0,
			   w->first, w->exclude[0] ? w->exclude : "-");
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
	if (!strcmp(w->exclude, "-"))
		w->exclude[0] = '\0'; /* none */
	else if (!te_relaunch_nodes_ok(w->exclude))
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
	int cmd = te_srun_command(argc, argv), i, n = 0, nopt = 0;
	size_t at = 0;
	char *opt[5];

	if (cmd < 1)
		return -1;
	/* each option in turn: no --exclude for a relaunch on the same
	 * nodes that no relaunch before left any out (the user's own stays
	 * in argv), --overlap only for a lost node's step */
	for (i = w->exclude[0] ? 0 : 1; i < (w->overlap ? 5 : 4); i++) {
		int k;

		opt[nopt++] = buf + at;
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

/* The length of one comment entry at p, just after the tag: "N without
 * NODE" or "N on the same nodes"; 0 when p holds neither. */
static size_t comment_entry(const char *p)
{
	size_t d = strspn(p, "0123456789"), k;

	if (!d || d > 9)
		return 0;
	if (!strncmp(p + d, TE_RELAUNCH_COMMENT_SAME,
		     strlen(TE_RELAUNCH_COMMENT_SAME)))
		return d + strlen(TE_RELAUNCH_COMMENT_SAME);
	if (strncmp(p + d, " without ", 9))
		return 0;
	k = strspn(p + d + 9, "abcdefghijklmnopqrstuvwxyz"
			      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");
	return k ? d + 9 + k : 0;
}

uint32_t te_relaunch_comment_count(const char *comment)
{
	const char *p = comment;
	uint32_t n = 0;

	while (p && (p = strstr(p, TE_RELAUNCH_COMMENT_TAG))) {
		p += strlen(TE_RELAUNCH_COMMENT_TAG);
		n += comment_entry(p) > 0;
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

	if (!one_printable_line(c) ||
	    (node && (!te_relaunch_nodes_ok(node) || strchr(node, ','))))
		return -1;
	if (te_snprintf(out, cap, "%s%s%s%u%s%s", c, c[0] ? "; " : "",
			TE_RELAUNCH_COMMENT_TAG, restart,
			node ? " without " : TE_RELAUNCH_COMMENT_SAME,
			node ? node : "") < 0)
		return -1;
	return 1;
}
