/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Goodput: a job's step records into training, initialisation and lost
 * time that add up to its wall time (goodput.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "report/goodput.h"
#include "util/jsonscan.h"
#include "util/strutil.h"
#include "util/textbuf.h"

struct seen {
	struct te_gp_step *st;
	int trainenv, job, step, start, end, passed, job_start, newest;
	int64_t start_ms, end_ms; /* "start_ms", "end_ms": srun's ms */
	int has_ms;		  /* bit 1: start_ms, bit 2: end_ms */
	const char *bad;	  /* the first field out of range */
};

/* "SECONDS[.FRACTION]" (what srun writes) into milliseconds; -1 for a
 * sign, an exponent or a time past TE_GP_SEC_MAX. */
static int seconds_ms(const char *s, int64_t *ms)
{
	int64_t sec = 0, frac = 0;
	int digits = 0, fdigits = 0;

	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		sec = sec * 10 + (*s - '0');
		if (sec >= TE_GP_SEC_MAX)
			return -1;
	}
	if (!digits)
		return -1;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, fdigits++)
			if (fdigits < 3)
				frac = frac * 10 + (*s - '0');
		if (!fdigits)
			return -1;
		for (; fdigits < 3; fdigits++)
			frac *= 10;
	}
	if (*s)
		return -1;
	*ms = sec * 1000 + frac;
	return 0;
}

static const char *const k_trainenv[] = { "trainenv", NULL };
static const char *const k_job[] = { "job", NULL };
static const char *const k_step[] = { "step", NULL };
static const char *const k_start[] = { "start", NULL };
static const char *const k_end[] = { "end", NULL };
static const char *const k_start_ms[] = { "start_ms", NULL };
static const char *const k_end_ms[] = { "end_ms", NULL };
static const char *const k_failed[] = { "failed_tasks", NULL };
static const char *const k_passed[] = { "launch", "passed", NULL };
static const char *const k_verdict[] = { "restart", "verdict", NULL };
static const char *const k_why[] = { "restart", "why", NULL };
static const char *const k_job_start[] = { "job_start", NULL };
static const char *const k_newest[] = { "checkpoint", "newest", NULL };

/* The node after "without " in srun's line: [A-Za-z0-9._-]+. */
static void without_node(const char *why, char *out, size_t len)
{
	const char *p = strstr(why, "without ");
	size_t i = 0;

	out[0] = '\0';
	if (!p)
		return;
	for (p += 8; i + 1 < len; p++, i++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' ||
		      *p == '-'))
			break;
		out[i] = *p;
	}
	/* a name cut by the buffer is not the node's */
	out[(i + 1 < len) ? i : 0] = '\0';
}

static void time_field(struct seen *s, const struct te_json_item *it,
		       const char *name, int64_t *ms, int *flag)
{
	if (it->type != TE_JSON_NUM || seconds_ms(it->text, ms) < 0)
		s->bad = name;
	*flag = 1;
}

/* "start_ms" or "end_ms": whole milliseconds, which win over the whole
 * seconds of "start" and "end" when both are there. */
static void ms_field(struct seen *s, const struct te_json_item *it, int start)
{
	uint64_t u;

	if (it->type != TE_JSON_NUM ||
	    te_parse_u64(it->text, (uint64_t)TE_GP_SEC_MAX * 1000, &u) < 0) {
		s->bad = start ? "start_ms" : "end_ms";
		return;
	}
	if (start)
		s->start_ms = (int64_t)u;
	else
		s->end_ms = (int64_t)u;
	s->has_ms |= start ? 1 : 2;
}

static void id_field(struct seen *s, const struct te_json_item *it,
		     const char *name, uint32_t *id, int *flag)
{
	uint64_t u;

	if (it->type != TE_JSON_NUM || te_parse_u64(it->text, UINT32_MAX, &u))
		s->bad = name;
	else
		*id = (uint32_t)u;
	*flag = 1;
}

static void verdict_field(struct seen *s, const struct te_json_item *it)
{
	static const char *const names[] = { "relaunch", "requeue", "stop" };
	unsigned i;

	if (it->type != TE_JSON_STR) {
		s->bad = "restart.verdict";
		return;
	}
	for (i = 0; i < 3; i++)
		if (!strcmp(it->text, names[i]))
			s->st->verdict =
				(enum te_gp_verdict)(TE_GP_RELAUNCH + i);
	/* a transient fault's relaunch (--train-transient) */
	if (!strcmp(it->text, "relaunch-same")) {
		s->st->verdict = TE_GP_RELAUNCH;
		s->st->same = 1;
	}
	if (s->st->verdict == TE_GP_NONE)
		s->bad = "restart.verdict";
}

static void visit(const struct te_json_item *it, void *arg)
{
	struct seen *s = arg;
	struct te_gp_step *st = s->st;

	if (s->bad)
		return;
	/* an object there, whatever it holds, is a failure */
	if (it->depth >= 2 && !strcmp(it->path[0], "first_failure"))
		st->failed = 1;
	if (te_json_at(it, k_trainenv))
		s->trainenv = it->type == TE_JSON_STR;
	else if (te_json_at(it, k_job))
		id_field(s, it, "job", &st->job, &s->job);
	else if (te_json_at(it, k_step))
		id_field(s, it, "step", &st->step, &s->step);
	else if (te_json_at(it, k_start))
		time_field(s, it, "start", &st->start_ms, &s->start);
	else if (te_json_at(it, k_end))
		time_field(s, it, "end", &st->end_ms, &s->end);
	else if (te_json_at(it, k_start_ms) || te_json_at(it, k_end_ms))
		ms_field(s, it, te_json_at(it, k_start_ms));
	else if (te_json_at(it, k_passed) && it->type != TE_JSON_NULL)
		time_field(s, it, "launch.passed", &st->barrier_ms, &s->passed);
	else if (te_json_at(it, k_failed))
		st->failed |= it->type == TE_JSON_NUM && strcmp(it->text, "0");
	else if (te_json_at(it, k_verdict))
		verdict_field(s, it);
	else if (te_json_at(it, k_why) && it->type == TE_JSON_STR)
		without_node(it->text, st->without, sizeof(st->without));
	else if (te_json_at(it, k_job_start))
		time_field(s, it, "job_start", &st->job_start_ms,
			   &s->job_start);
	else if (te_json_at(it, k_newest) && it->type == TE_JSON_NULL)
		st->checkpoint_known = 2;
	else if (te_json_at(it, k_newest))
		time_field(s, it, "checkpoint.newest", &st->checkpoint_ms,
			   &s->newest);
}

int te_gp_record_parse(const char *s, size_t n, struct te_gp_step *st,
		       char *err, size_t errlen)
{
	static const struct te_gp_step zero;
	struct seen seen = { .st = st };
	char why[96];

	*st = zero;
	if (n > TE_GP_RECORD_MAX)
		return te_err(err, errlen, "larger than %d bytes",
			      TE_GP_RECORD_MAX);
	if (te_json_scan(s, n, visit, &seen, why, sizeof(why)) < 0)
		return te_err(err, errlen, "not JSON: %s", why);
	if (!seen.trainenv || !seen.job || !seen.step || !seen.start ||
	    !seen.end)
		return te_err(
			err, errlen,
			"not a step record (no trainenv, job, step, start "
			"or end)");
	if (seen.bad)
		return te_err(err, errlen, "%s: not what a record holds",
			      seen.bad);
	if (seen.has_ms == 3 && seen.end_ms >= seen.start_ms) {
		st->start_ms = seen.start_ms;
		st->end_ms = seen.end_ms;
	}
	if (st->end_ms < st->start_ms)
		return te_err(err, errlen, "end before start");
	st->barrier_known = seen.passed;
	/* a pass outside the step is none of this step's */
	if (!seen.passed || st->barrier_ms < st->start_ms ||
	    st->barrier_ms > st->end_ms) {
		st->barrier_ms = st->start_ms;
		st->barrier_known = 0;
	}
	if (st->verdict == TE_GP_RELAUNCH || st->verdict == TE_GP_REQUEUE)
		st->failed = 1;
	if (st->verdict != TE_GP_RELAUNCH && st->verdict != TE_GP_REQUEUE)
		st->without[0] = '\0';
	/* a job start after its step's is none of this run's */
	st->job_start_known = seen.job_start &&
			      st->job_start_ms <= st->start_ms;
	if (seen.newest)
		st->checkpoint_known = 1;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct te_gp_step *x = a, *y = b;

	if (x->start_ms != y->start_ms)
		return x->start_ms < y->start_ms ? -1 : 1;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return 0;
}

static void add_node(struct te_gp_summary *sum, const char *node)
{
	unsigned i;

	if (!node[0])
		return;
	for (i = 0; i < sum->nnodes; i++)
		if (!strcmp(sum->nodes[i], node))
			return;
	if (sum->nnodes < TE_GP_NODES_MAX)
		te_strlcpy(sum->nodes[sum->nnodes++], node, TE_GP_NODE_MAX);
	else
		sum->nodes_more++;
}

static void count_step(struct te_gp_summary *sum, const struct te_gp_step *s,
		       const struct te_gp_step *prev)
{
	sum->nsteps++;
	sum->failures += s->failed != 0;
	sum->relaunches += s->verdict == TE_GP_RELAUNCH;
	sum->requeues += s->verdict == TE_GP_REQUEUE;
	sum->stops += s->verdict == TE_GP_STOP;
	sum->barriers_known += s->barrier_known != 0;
	/* a requeued job's steps start again from 0 */
	if (prev && s->step <= prev->step)
		sum->runs++;
	add_node(sum, s->without);
}

/* A failed step's training after the newest checkpoint (all of it when
 * the directory had none) is to be done again: moved from its training
 * to the lost time. */
static void redo(struct te_gp_step *s, struct te_gp_summary *sum)
{
	int64_t from = s->end_ms - s->train_ms; /* its training's start */

	s->redo_ms = 0;
	if (!s->failed || !s->checkpoint_known)
		return;
	sum->checkpoints_known++;
	if (s->checkpoint_known == 1 && s->checkpoint_ms > from)
		from = s->checkpoint_ms;
	if (from >= s->end_ms)
		return;
	s->redo_ms = s->end_ms - from;
	s->train_ms -= s->redo_ms;
	sum->lost_ms += s->redo_ms;
	sum->redo_ms += s->redo_ms;
}

/* The wall time [job start, last end] is walked once with t, the end
 * of what is already counted: a gap before a step's start is lost when
 * the step that ended at t failed, other when not; a step's own time
 * after t is initialisation up to its barrier's pass, training after.
 * Every millisecond counts once, so
 *   wall = training + initialisation + lost + other
 * holds exactly. */
int te_gp_summarize(struct te_gp_step *steps, size_t n,
		    struct te_gp_summary *sum)
{
	struct te_gp_step *last;
	int64_t t, gap;
	size_t i;

	memset(sum, 0, sizeof(*sum));
	if (n == 0 || n > TE_GP_STEPS_MAX)
		return -1;
	qsort(steps, n, sizeof(*steps), by_start);
	sum->job = steps[0].job;
	sum->runs = 1;
	sum->first_start_ms = steps[0].start_ms;
	for (i = 0; i < n; i++)
		if (steps[i].job_start_known &&
		    steps[i].job_start_ms < sum->first_start_ms)
			sum->first_start_ms = steps[i].job_start_ms;
	/* before the first step: the batch script's own start */
	sum->before_ms = steps[0].start_ms - sum->first_start_ms;
	sum->other_ms = sum->before_ms;
	t = steps[0].start_ms;
	last = &steps[0];
	for (i = 0; i < n; i++) {
		struct te_gp_step *s = &steps[i];

		count_step(sum, s, i ? &steps[i - 1] : NULL);
		s->init_ms = s->train_ms = s->gap_ms = s->recover_ms = 0;
		s->redo_ms = 0;
		s->has_next = i + 1 < n;
		if (s->start_ms > t) {
			gap = s->start_ms - t;
			last->gap_ms += gap;
			if (last->failed)
				sum->lost_ms += gap;
			else
				sum->other_ms += gap;
			t = s->start_ms;
		}
		if (s->end_ms <= t)
			continue; /* inside time already counted */
		if (s->barrier_ms > t) {
			s->init_ms = s->barrier_ms - t;
			s->train_ms = s->end_ms - s->barrier_ms;
		} else {
			s->train_ms = s->end_ms - t;
		}
		redo(s, sum);
		sum->init_ms += s->init_ms;
		sum->train_ms += s->train_ms;
		t = s->end_ms;
		last = s;
	}
	for (i = 0; i + 1 < n; i++)
		if (steps[i].failed &&
		    steps[i + 1].barrier_ms > steps[i].end_ms)
			steps[i].recover_ms =
				steps[i + 1].barrier_ms - steps[i].end_ms;
	sum->last_end_ms = t;
	sum->wall_ms = t - sum->first_start_ms;
	return 0;
}

/* ms as seconds with three decimals ("12.300"). */
static const char *secs(char *buf, size_t len, int64_t ms)
{
	te_snprintf(buf, len, "%lld.%03lld", (long long)(ms / 1000),
		    (long long)(ms % 1000));
	return buf;
}

static const char *plural(unsigned n, const char *many)
{
	return n == 1 ? "" : many;
}

static void job_line(struct te_buf *b, const struct te_gp_summary *sum)
{
	char w[32], tr[32], in[32], lo[32], ot[32], rd[32];
	unsigned i;

	te_buf_printf(b, "job %u: %u step%s (%u failed), %u relaunch%s",
		      sum->job, sum->nsteps, plural(sum->nsteps, "s"),
		      sum->failures, sum->relaunches,
		      plural(sum->relaunches, "es"));
	for (i = 0; i < sum->nnodes; i++)
		te_buf_printf(b, "%s%s", i ? ", " : " (without ",
			      sum->nodes[i]);
	if (sum->nodes_more)
		te_buf_printf(b, " and %u more", sum->nodes_more);
	te_buf_printf(b, "%s, %u requeue%s, %u stop%s; ",
		      sum->nnodes ? ")" : "", sum->requeues,
		      plural(sum->requeues, "s"), sum->stops,
		      plural(sum->stops, "s"));
	te_buf_printf(b,
		      "wall %s s = training %s s + initialisation %s s + lost "
		      "%s s",
		      secs(w, sizeof(w), sum->wall_ms),
		      secs(tr, sizeof(tr), sum->train_ms),
		      secs(in, sizeof(in), sum->init_ms),
		      secs(lo, sizeof(lo), sum->lost_ms));
	if (sum->checkpoints_known)
		te_buf_printf(b,
			      " (%s s of it training after the newest "
			      "checkpoint)",
			      secs(rd, sizeof(rd), sum->redo_ms));
	te_buf_printf(b, " + other %s s; ",
		      secs(ot, sizeof(ot), sum->other_ms));
	if (sum->wall_ms > 0)
		te_buf_printf(
			b, "training %lld%% of the wall time\n",
			(long long)((sum->train_ms * 100 + sum->wall_ms / 2) /
				    sum->wall_ms));
	else
		te_buf_printf(b, "no wall time to share\n");
}

#define FAILURE_LINES_MAX 64

/* "; 12.000 s of its training after the newest checkpoint is lost" */
static void redo_text(struct te_buf *b, const struct te_gp_step *s)
{
	char r[32];

	if (s->checkpoint_known == 2)
		te_buf_printf(b,
			      "; its checkpoint directory had no checkpoint: "
			      "its %s s of training are lost",
			      secs(r, sizeof(r), s->redo_ms));
	else if (s->checkpoint_known == 1)
		te_buf_printf(b,
			      "; %s s of its training after the newest "
			      "checkpoint are lost",
			      secs(r, sizeof(r), s->redo_ms));
}

static void failure_lines(struct te_buf *b, const struct te_gp_step *steps,
			  size_t n)
{
	static const char *const verdicts[] = { "no restart verdict",
						"relaunch", "requeue", "stop" };
	char g[32], r[32];
	unsigned shown = 0, more = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct te_gp_step *s = &steps[i];

		if (!s->failed)
			continue;
		if (shown++ >= FAILURE_LINES_MAX) {
			more++;
			continue;
		}
		te_buf_printf(b, "failure of step %u (%s%s%s%s): ", s->step,
			      verdicts[s->verdict],
			      s->without[0] ? " without " : "", s->without,
			      s->same ? " on the same nodes" : "");
		if (!s->has_next) {
			te_buf_printf(b, "no step after it in the records");
			redo_text(b, s);
			te_buf_printf(b, "\n");
			continue;
		}
		te_buf_printf(b,
			      "%s s from its end to step %u's start, %s s to "
			      "its launch barrier's pass%s",
			      secs(g, sizeof(g), s->gap_ms), steps[i + 1].step,
			      secs(r, sizeof(r), s->recover_ms),
			      steps[i + 1].barrier_known ? ""
							 : " (not recorded: "
							   "its start)");
		redo_text(b, s);
		te_buf_printf(b, "\n");
	}
	if (more)
		te_buf_printf(b, "and %u more failures\n", more);
}

int te_gp_text(const struct te_gp_step *steps, size_t n,
	       const struct te_gp_summary *sum, char *buf, size_t len)
{
	struct te_buf b;

	te_buf_init(&b, buf, len);
	job_line(&b, sum);
	failure_lines(&b, steps, n);
	if (sum->barriers_known < sum->nsteps)
		te_buf_printf(&b,
			      "note: %u of %u steps do not record when their "
			      "launch barrier passed: their initialisation "
			      "counts as training\n",
			      sum->nsteps - sum->barriers_known, sum->nsteps);
	if (sum->runs > 1 || sum->requeues)
		te_buf_printf(
			&b,
			"note: the job was requeued (%u runs seen): a new "
			"run's steps start again from 0 and its records "
			"replace the earlier run's of the same step "
			"ids; these figures cover the records left\n",
			sum->runs);
	return b.cut ? -1 : 0;
}
