/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Recovery decisions (core/report/recovery.h): the node a failed step blames, the
 * requeue plan, the progress guard's state line and the time signal's due
 * time. Pure: srun's side (spank/srun_recovery.c) gathers the facts. */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report/recovery.h"
#include "util/strutil.h"

/* An exit report (not a stall, an end seen from outside, a restart or the
 * launch timeline) that is a failure. */
static int is_failure(const struct te_failrep *r)
{
	if (r->stalled || r->ended || r->resumed || r->launched)
		return 0;
	return r->signaled || r->value != 0;
}

static int earlier(const struct te_failrep *a, const struct te_failrep *b)
{
	if (!b)
		return 1;
	if (a->sec != b->sec)
		return a->sec < b->sec;
	if (a->usec != b->usec)
		return a->usec < b->usec;
	return a->rank < b->rank;
}

/* A node name is printed and goes into Slurm's excluded list: a word of
 * letters, digits, '-', '_' and '.' only. */
static int node_ok(const char *node)
{
	return node && te_word_valid(node, TE_NODE_MAX, "-_.") &&
	       strcmp(node, "unknown") != 0;
}

static void blame(struct te_fault *out, int kind, const char *node,
		  const char *fmt_why)
{
	out->kind = kind;
	te_strlcpy(out->node, node ? node : "", sizeof(out->node));
	te_strlcpy(out->why, fmt_why, sizeof(out->why));
}

const char *te_fault_verb(const struct te_fault *f)
{
	return f->slow ? "left out" : "failed";
}

void te_fault_find(const struct te_fault_facts *f, struct te_fault *out)
{
	const struct te_failrep *preflight = NULL, *sig = NULL, *prog = NULL;
	const struct te_failrep *stop = NULL;
	char why[200];
	size_t i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < f->nfails; i++) {
		const struct te_failrep *r = &f->fails[i];

		if (!is_failure(r) || !node_ok(r->node))
			continue;
		if (!r->signaled && r->value == TE_EXIT_NO_RESTART) {
			if (earlier(r, stop))
				stop = r;
		} else if (!r->signaled && r->value == TE_EXIT_NODE_FAULT) {
			if (earlier(r, preflight))
				preflight = r;
		} else if (r->signaled && r->value > 0 && r->value < 64 &&
			   (f->fault_signals & (1ULL << r->value))) {
			if (earlier(r, sig))
				sig = r;
		} else if (earlier(r, prog)) {
			prog = r;
		}
	}
	if (stop) {
		te_snprintf(why, sizeof(why),
			    "rank %u exited with code %d: the program asked "
			    "not to be restarted",
			    stop->rank, TE_EXIT_NO_RESTART);
		blame(out, TE_FAULT_STOP, stop->node, why);
		return;
	}
	if (node_ok(f->lost_node)) {
		blame(out, TE_FAULT_NODE, f->lost_node,
		      "Slurm lost the node (down or not responding)");
		out->lost = 1;
		return;
	}
	if (preflight) {
		te_snprintf(why, sizeof(why),
			    "rank %u failed its check before "
			    "training (exit code %d)",
			    preflight->rank, TE_EXIT_NODE_FAULT);
		blame(out, TE_FAULT_NODE, preflight->node, why);
		return;
	}
	if (sig) {
		const char *name = sigabbrev_np(sig->value);

		te_snprintf(why, sizeof(why), "rank %u was killed by SIG%s",
			    sig->rank, name ? name : "?");
		blame(out, TE_FAULT_NODE, sig->node, why);
		return;
	}
	/* the ranks' ends that follow are srun's own doing */
	if (node_ok(f->strag_node)) {
		blame(out, TE_FAULT_NODE, f->strag_node,
		      f->strag_why && f->strag_why[0] ? f->strag_why
						      : "straggler");
		out->slow = 1;
		return;
	}
	if (node_ok(f->hang_node)) {
		blame(out, TE_FAULT_NODE, f->hang_node,
		      "its ranks hung past the exit grace");
		return;
	}
	if (!prog)
		return;
	if (prog->signaled) {
		const char *name = sigabbrev_np(prog->value);

		te_snprintf(why, sizeof(why), "rank %u was killed by SIG%s",
			    prog->rank, name ? name : "?");
	} else {
		te_snprintf(why, sizeof(why), "rank %u exited with code %d",
			    prog->rank, prog->value);
	}
	blame(out, f->any ? TE_FAULT_NODE : TE_FAULT_PROGRAM, prog->node, why);
}

static int not_requeued(struct te_requeue_plan *plan, const char *why)
{
	te_snprintf(plan->line, sizeof(plan->line), "requeue: not requeued: %s",
		    why);
	plan->requeue = 0;
	return 0;
}

int te_requeue_decide(const struct te_requeue_facts *rf,
		      const struct te_fault *fault,
		      struct te_requeue_plan *plan)
{
	const char *exc = rf->excluded ? rf->excluded : "";
	uint32_t nexcl = rf->excluded_count;
	char why[TE_RECOVERY_LINE_MAX - 32];

	memset(plan, 0, sizeof(*plan));
	if (!rf->budget || fault->kind == TE_FAULT_NONE)
		return 0;
	if (fault->kind == TE_FAULT_STOP)
		return not_requeued(plan, fault->why);
	if (fault->kind == TE_FAULT_PROGRAM) {
		te_snprintf(why, sizeof(why),
			    "%s: the program's own error "
			    "(the site requeues node failures only)",
			    fault->why);
		return not_requeued(plan, why);
	}
	if (!rf->batch) {
		te_snprintf(why, sizeof(why),
			    "node %s failed (%s), but only a "
			    "batch job is requeued",
			    fault->node, fault->why);
		return not_requeued(plan, why);
	}
	if (!rf->requeue_allowed) {
		te_snprintf(why, sizeof(why),
			    "node %s failed (%s), but the job "
			    "may not be requeued (--no-requeue, or the "
			    "cluster's JobRequeue=0)",
			    fault->node, fault->why);
		return not_requeued(plan, why);
	}
	if (rf->restarts >= rf->budget) {
		te_snprintf(why, sizeof(why),
			    "node %s failed (%s), but the "
			    "restart budget is spent (%u of %llu restarts "
			    "done)",
			    fault->node, fault->why, rf->restarts,
			    (unsigned long long)rf->budget);
		return not_requeued(plan, why);
	}
	if (!te_list_has(exc, fault->node)) {
		if (te_snprintf(plan->exclude, sizeof(plan->exclude), "%s%s%s",
				exc, exc[0] ? "," : "", fault->node) < 0) {
			plan->exclude[0] = 0;
			te_snprintf(why, sizeof(why),
				    "node %s failed, but the "
				    "job's excluded node list is full",
				    fault->node);
			return not_requeued(plan, why);
		}
		nexcl++;
	} else {
		te_strlcpy(plan->exclude, exc, sizeof(plan->exclude));
	}
	if (rf->partition_nodes &&
	    (uint64_t)nexcl + rf->job_nodes > rf->partition_nodes) {
		te_snprintf(why, sizeof(why),
			    "node %s failed, but without the "
			    "%u excluded nodes its partition's %u nodes could "
			    "not hold the job's %u",
			    fault->node, nexcl, rf->partition_nodes,
			    rf->job_nodes);
		return not_requeued(plan, why);
	}
	plan->requeue = 1;
	te_snprintf(plan->line, sizeof(plan->line),
		    "requeue: node %s failed: "
		    "%s; the job is requeued without %s (restart %u of %llu%s)",
		    fault->node, fault->why, fault->node, rf->restarts + 1,
		    (unsigned long long)rf->budget,
		    rf->expedited ? "; Slurm's expedited requeue: no "
				    "credential window"
				  : "");
	return 1;
}

int te_progress_format(const struct te_progress *p, char *buf, size_t len)
{
	return te_snprintf(buf, len, "trainenv-progress 1 %u %u %lld %u\n",
			   p->job, p->restart, (long long)p->newest_ns,
			   p->stalls);
}

int te_progress_parse(const char *line, struct te_progress *p)
{
	unsigned job, restart, stalls;
	long long newest;
	int end = -1;

	memset(p, 0, sizeof(*p));
	if (!line || strlen(line) >= TE_PROGRESS_LINE_MAX)
		return -1;
	if (sscanf(line, "trainenv-progress 1 %10u %10u %19lld %10u%n", &job,
		   &restart, &newest, &stalls, &end) != 4 ||
	    end < 0 || (line[end] && strcmp(line + end, "\n")) || newest < 0)
		return -1;
	p->job = job;
	p->restart = restart;
	p->newest_ns = newest;
	p->stalls = stalls;
	return 0;
}

int te_progress_entry(const char *name, int is_dir, uint32_t owner, uint32_t me)
{
	if (!name || !name[0] || !strcmp(name, ".") || !strcmp(name, "..") ||
	    !strncmp(name, TE_OWN_FILE_PREFIX, strlen(TE_OWN_FILE_PREFIX)) ||
	    owner != me)
		return TE_PROGRESS_SKIP;
	return is_dir ? TE_PROGRESS_DESCEND : TE_PROGRESS_COUNT;
}

int te_progress_tmp_name(const char *hex, char *name, size_t len)
{
	size_t i;

	if (!hex || strlen(hex) != TE_PROGRESS_TMP_HEX)
		return -1;
	for (i = 0; i < TE_PROGRESS_TMP_HEX; i++)
		if (!strchr("0123456789abcdef", hex[i]))
			return -1;
	return te_snprintf(name, len, "%s.tmp-%s", TE_PROGRESS_FILE, hex);
}

uint32_t te_progress_next(const struct te_progress *prev, uint32_t job,
			  uint32_t restart, int64_t newest_ns,
			  struct te_progress *next)
{
	next->job = job;
	next->restart = restart;
	next->newest_ns = newest_ns;
	next->stalls = 0;
	/* only this job's earlier restart counts: a state another job left
	 * in a shared directory says nothing about this one */
	if (prev && prev->job == job && prev->restart < restart &&
	    newest_ns <= prev->newest_ns)
		next->stalls = prev->stalls + 1;
	return next->stalls;
}

int64_t te_time_signal_at(int64_t end_time, uint64_t secs_before)
{
	if (end_time <= 0 || secs_before > (uint64_t)INT64_MAX ||
	    end_time > INT64_MAX / 2)
		return 0;
	return end_time - (int64_t)secs_before;
}
