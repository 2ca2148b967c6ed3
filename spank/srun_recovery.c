/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's recovery (srun_recovery.h): --train-requeue requeues a batch job without the node a
 * failed step blames, --train-time-signal signals the step's tasks before
 * the job's time limit. Asks slurmctld as the job's owner through the
 * libslurm srun already holds (no scontrol in the user's environment);
 * core/report/recovery.c decides. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slurm_compat.h"

#include "srun_exitwatch.h"
#include "failrep_net.h"
#include "srun_hangup.h"
#include "state.h"
#include "report/recovery.h"
#include "report/relaunch.h"
#include "srun_lines.h"
#include "srun_progress.h"
#include "srun_recovery.h"
#include "srun_relaunch.h"
#include "srun_worker.h"
#include "srun_strag_exclude.h"
#include "srun/srunargs.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define say te_recovery_say

static struct {
	uint32_t job, step;
	int requeue; /* --train-requeue is a number */
	int spares;  /* relaunches: --train-spares or --train-transient */
	int sig;     /* the time signal, 0: none */
	uint64_t sig_secs;
	int64_t sig_due_ms; /* monotonic, 0: not armed */
	int save_sig;	    /* --train-spares: the time signal, sent at a
			       node's fault to the ranks still running */
	int save_sent;
	char save_node[TE_NODE_MAX];
	int64_t job_start; /* the job's start, when it was read */
} rc;

static int job_load(uint32_t job, job_info_msg_t **msg)
{
	*msg = NULL;
	if (te_slurm_load_job(msg, job, SHOW_DETAIL) != 0 || !*msg ||
	    (*msg)->record_count < 1) {
		if (*msg)
			slurm_free_job_info_msg(*msg);
		*msg = NULL;
		return -1;
	}
	return 0;
}

/* The job's own --signal (srun's option or SLURM_SIGNAL) wins over a time
 * signal that is not the user's own option nor enforced. Slurm 22.05 does
 * not show a batch job's --signal to srun: sbatch's plugin side marks it. */
static int job_has_own_signal(void)
{
	char **argv = NULL;
	int argc = te_srun_argv(&argv);

	return getenv("SLURM_SIGNAL") || getenv(TE_JOB_SIGNAL_ENV) ||
	       te_srun_asks_signal(argc, argv);
}

static void timesig_arm(const job_info_t *j)
{
	const struct te_value *v = &te_plug.cfg.v[TE_S_TIME_SIGNAL];
	int64_t at, now = time(NULL);
	char when[32], what[96];
	struct tm tm;
	time_t t;

	if (!v->set || v->word != TE_W_VALUE)
		return;
	if (job_has_own_signal() && v->src != TE_SRC_OPTION &&
	    v->src != TE_SRC_ENFORCED) {
		if (te_plug.explain)
			say("time-signal: not armed: the job has its own "
			    "--signal");
		return;
	}
	/* "save now" before a relaunch without the node, any time limit */
	if (te_relaunch_spares() > 0)
		rc.save_sig = (int)v->num2;
	at = te_time_signal_at(j->end_time, v->num);
	if (!at || j->time_limit == INFINITE || j->time_limit == NO_VAL)
		return; /* no time limit: nothing to warn of */
	rc.sig = (int)v->num2;
	rc.sig_secs = v->num;
	rc.sig_due_ms = te_now_ms() + (at > now ? (at - now) * 1000 : 0);
	if (te_plug.explain) {
		t = (time_t)at;
		if (!localtime_r(&t, &tm) ||
		    !strftime(when, sizeof(when), "%H:%M:%S", &tm))
			te_strlcpy(when, "?", sizeof(when));
		te_snprintf(what, sizeof(what), "SIG%s to every task at %s",
			    sigabbrev_np(rc.sig) ? sigabbrev_np(rc.sig) : "?",
			    when);
		say("time-signal: %s, %s s before the job's time limit", what,
		    v->text[0] ? strchr(v->text, '@') + 1 : "?");
	}
}

/* The time signal's own thread: it asks slurmctld (the job's end time may
 * have moved, then the signal), which the failure listener's thread never
 * does (a slow slurmctld would hold the reports up). */
static struct te_srun_worker timer = TE_SRUN_WORKER_INIT;

static void timesig_fire(int64_t now_ms);

/* A node failed while other ranks run: they get the time signal now, to
 * save before the step starts again (--train-spares). */
static void save_fire(void)
{
	const char *name = sigabbrev_np(rc.save_sig);

	/* a node whose tasks ended answers that the step is gone there:
	 * the others have the signal all the same */
	int rc_sig =
		te_slurm_signal_step(rc.job, rc.step, (uint16_t)rc.save_sig);

	say("relaunch: node %s failed: SIG%s sent to the step's tasks still "
	    "running, to save before the step starts again%s%s%s",
	    rc.save_node, name ? name : "?", rc_sig ? " (Slurm: " : "",
	    rc_sig ? slurm_strerror(te_slurm_errno()) : "", rc_sig ? ")" : "");
}

static void *timesig_thread(void *arg)
{
	char c;

	(void)arg;
	while (rc.sig_due_ms || rc.save_sig) {
		int64_t now = te_now_ms(), wait = 60000;

		if (rc.sig_due_ms && now >= rc.sig_due_ms) {
			timesig_fire(now);
			continue;
		}
		if (rc.sig_due_ms && rc.sig_due_ms - now < wait)
			wait = rc.sig_due_ms - now;
		if (!te_srun_worker_wait(&timer, (int)wait))
			continue;
		if (read(timer.wake[0], &c, 1) != 1)
			break; /* srun ends */
		save_fire();
	}
	return NULL;
}

/* The listener's word of a failed task (its thread): a node's fault, the
 * first, wakes the timer to send the "save now" signal. */
static void failure_seen(const struct te_failrep *r)
{
	const struct te_value *sigs = &te_plug.cfg.v[TE_S_REQUEUE_SIGNALS];
	uint64_t listed = sigs->word == TE_W_VALUE ? sigs->num : 0;
	int node_fault = r->signaled ? r->value > 0 && r->value < 64 &&
					       (listed & (1ULL << r->value))
				     : r->value == TE_EXIT_NODE_FAULT;
	ssize_t n;

	if (!rc.save_sig || rc.save_sent || !node_fault || r->by_trainenv)
		return;
	rc.save_sent = 1;
	te_strlcpy(rc.save_node, r->node, sizeof(rc.save_node));
	n = write(timer.wake[1], "s", 1);
	(void)n; /* a full pipe: a wake-up is already there */
}

static void timesig_start(void)
{
	if (!rc.sig_due_ms && !rc.save_sig)
		return;
	if (te_srun_worker_start(&timer, timesig_thread, NULL) < 0) {
		say("warning: --train-time-signal: cannot start its timer: %s",
		    strerror(errno));
		rc.sig_due_ms = 0;
		rc.save_sig = 0;
		return;
	}
	if (rc.save_sig)
		te_failrep_on_failure(failure_seen);
}

/* srun's end: the timer stops (a signal being sent is sent first). */
static void timesig_stop(void)
{
	te_srun_worker_stop(&timer);
}

int te_recovery_srun_init(spank_t sp, uint32_t job, uint32_t step)
{
	const struct te_value *rq = &te_plug.cfg.v[TE_S_REQUEUE];
	const struct te_value *ts = &te_plug.cfg.v[TE_S_TIME_SIGNAL];
	job_info_msg_t *msg;
	const job_info_t *j;
	char buf[TE_EXCLUDE_MAX], num[16];

	(void)sp;
	rc.job = job;
	rc.step = step;
	rc.requeue = rq->set && rq->word == TE_W_VALUE;
	rc.spares = te_relaunch_on(); /* spares, or --train-transient */
	if (!rc.requeue && !rc.spares && !(ts->set && ts->word == TE_W_VALUE))
		return 0;
	if (job_load(job, &msg) < 0) {
		fprintf(stderr,
			TE_PREFIX "warning: cannot read job %u from "
				  "slurmctld (%s): no %s for this step\n",
			job, slurm_strerror(te_slurm_errno()),
			rc.spares    ? (te_relaunch_spares() > 0
						? "--train-spares"
						: "--train-transient")
			: rc.requeue ? "--train-requeue"
				     : "--train-time-signal");
		rc.requeue = rc.spares = 0;
		return 0;
	}
	j = &msg->job_array[0];
	rc.job_start = (int64_t)j->start_time;
	if (rc.requeue && !rc.spares) {
		te_snprintf(num, sizeof(num), "%u", (unsigned)j->restart_cnt);
		/* srun's environment goes to the tasks (SPANK's setenv is
		 * for slurmstepd only) */
		setenv("TRAINENV_RESTART", num, 1);
		te_expand_nodes(j->exc_nodes, buf, sizeof(buf));
		if (buf[0])
			setenv("TRAINENV_EXCLUDED_NODES", buf, 1);
		/* the line said at the requeue went into the output of the
		 * run before (gone unless --open-mode=append): say it again */
		if (j->restart_cnt && step == 0)
			say("restart %s of this job; excluded nodes: %s", num,
			    buf[0] ? buf : "none");
	}
	if (rc.spares) {
		te_expand_nodes(j->exc_nodes, buf, sizeof(buf));
		te_relaunch_srun_init(j, step, buf);
		if (j->restart_cnt && step == 0)
			say("restart %u of this job; excluded nodes: %s",
			    (unsigned)j->restart_cnt, buf[0] ? buf : "none");
	}
	timesig_arm(j);
	slurm_free_job_info_msg(msg);
	timesig_start();
	return rc.requeue || rc.spares;
}

static void timesig_fire(int64_t now_ms)
{
	job_info_msg_t *msg;
	int64_t at, now = time(NULL);
	const char *name = sigabbrev_np(rc.sig);

	rc.sig_due_ms = 0;
	/* the limit may have moved (scontrol update TimeLimit) */
	if (job_load(rc.job, &msg) == 0) {
		at = te_time_signal_at(msg->job_array[0].end_time, rc.sig_secs);
		slurm_free_job_info_msg(msg);
		if (at > now) {
			rc.sig_due_ms = now_ms + (at - now) * 1000;
			return;
		}
	}
	if (te_slurm_signal_step(rc.job, rc.step, (uint16_t)rc.sig) != 0) {
		say("warning: time-signal: could not signal the step's tasks: "
		    "%s",
		    slurm_strerror(te_slurm_errno()));
		return;
	}
	say("time-signal: sent SIG%s to the step's tasks, %llu s before the "
	    "job's time limit",
	    name ? name : "?", (unsigned long long)rc.sig_secs);
}

/* The first node of the job, or of the step, that Slurm sees down or not
 * responding: a node lost during the step (a job with --no-kill no longer
 * has it). */
static void lost_node(const job_info_t *j, char *out, size_t len)
{
	node_info_msg_t *nodes = NULL;
	te_hostlist_t hl;
	uint32_t i;
	const char *step = te_relaunch_step_nodes();

	out[0] = 0;
	if (!j->nodes || slurm_load_node(0, &nodes, SHOW_ALL) != 0 || !nodes)
		return;
	/* with spares, the step's own nodes: an idle spare that is down is
	 * not this step's fault */
	hl = slurm_hostlist_create(step[0] ? step : j->nodes);
	for (i = 0; hl && i < nodes->record_count && !out[0]; i++) {
		const node_info_t *n = &nodes->node_array[i];
		uint32_t base = n->node_state & NODE_STATE_BASE;

		if (!n->name || slurm_hostlist_find(hl, n->name) < 0)
			continue;
		if (base == NODE_STATE_DOWN ||
		    (n->node_state & NODE_STATE_NO_RESPOND))
			te_strlcpy(out, n->name, len);
	}
	if (hl)
		slurm_hostlist_destroy(hl);
	slurm_free_node_info_msg(nodes);
}

static uint32_t partition_nodes(const char *part)
{
	partition_info_msg_t *pm = NULL;
	uint32_t i, n = 0;
	size_t len = part ? strcspn(part, ",") : 0;

	if (!len || slurm_load_partitions(0, &pm, SHOW_ALL) != 0 || !pm)
		return 0;
	for (i = 0; i < pm->record_count; i++)
		if (pm->partition_array[i].name &&
		    strlen(pm->partition_array[i].name) == len &&
		    !strncmp(pm->partition_array[i].name, part, len))
			n = pm->partition_array[i].total_nodes;
	slurm_free_partition_info_msg(pm);
	return n;
}

/* Test hook (test-hooks=on only): TRAINENV_TEST_REQUEUE_PAUSE=S (1 to 9
 * seconds) pauses srun right after the requeue, so that t82 can look at
 * the job in the moment between the requeue and its exclusion. */
static void te_test_requeue_pause(void)
{
	const char *v = getenv("TRAINENV_TEST_REQUEUE_PAUSE");

	if (te_plug.cfg.v[TE_S_TEST_HOOKS].word != TE_W_ON || !v ||
	    v[0] < '1' || v[0] > '9' || v[1])
		return;
	sleep((unsigned)(v[0] - '0'));
}

/* Requeue without the node, with no moment in which the job could start
 * again on it: Slurm takes a new excluded list only while the job is
 * pending, so the job is requeued held (JOB_REQUEUE_HOLD: a user hold,
 * which its owner may release), gets its excluded list, then is released
 * (priority INFINITE, as scontrol release does). A refused exclusion still
 * releases the job: held, it would wait for a person. The batch script
 * (srun's parent) is being ended meanwhile: KillWait bounds all this. */
static int requeue_without(uint32_t job, const char *exclude, char *why,
			   size_t len)
{
	job_desc_msg_t d;
	int tries, excluded = 0, e = 0;

	if (te_slurm_requeue(job, JOB_REQUEUE_HOLD) != 0)
		return te_err(why, len, "Slurm refused the requeue: %s",
			      slurm_strerror(te_slurm_errno()));
	te_test_requeue_pause();
	slurm_init_job_desc_msg(&d);
	te_slurm_job_desc_set_job(&d, job);
	d.exc_nodes = (char *)exclude;
	for (tries = 0; tries < 20 && !excluded; tries++) {
		if (slurm_update_job(&d) == 0)
			excluded = 1;
		else if ((e = te_slurm_errno()) != ESLURM_JOB_NOT_PENDING)
			break;
		else
			usleep(100 * 1000); /* 2 s at most */
	}
	slurm_init_job_desc_msg(&d);
	te_slurm_job_desc_set_job(&d, job);
	d.priority = INFINITE;
	if (slurm_update_job(&d) != 0)
		return te_err(why, len,
			      "the job was requeued held%s, but Slurm "
			      "refused to release it: %s; release it with "
			      "scontrol release %u",
			      excluded ? " without "
					 "the node"
				       : "",
			      slurm_strerror(te_slurm_errno()), job);
	if (!excluded)
		return te_err(why, len,
			      "the job was requeued, but Slurm "
			      "refused to exclude %s: %s",
			      exclude, slurm_strerror(e));
	return 0;
}

/* What te_recovery_srun_decide found, for te_recovery_srun_act. */
static struct {
	job_info_msg_t *msg;
	struct te_fault fault;
	int relaunch; /* TE_VERDICT_* */
	struct te_relaunch_plan rplan;
	int requeue; /* the requeue plan is to be carried out */
	struct te_requeue_plan qplan;
	const char *verdict; /* for the step's record */
	char why[TE_RECOVERY_LINE_MAX];
} dc;

/* The facts of the step's end, and the fault they blame; 0, or -1 when
 * there is nothing to decide (said where it matters). */
static int fault_of_step(struct te_failrep *fails, size_t n)
{
	struct te_fault_facts ff = { 0 };
	char lost[TE_NODE_MAX];

	ff.fails = fails;
	ff.nfails = te_failrep_list(fails, n);
	ff.hang_node = te_exitwatch_hang_node();
	ff.strag_node = te_srun_strag_excl_node(&ff.strag_why, NULL);
	ff.fault_signals = te_plug.cfg.v[TE_S_REQUEUE_SIGNALS].word ==
					   TE_W_VALUE
				   ? te_plug.cfg.v[TE_S_REQUEUE_SIGNALS].num
				   : 0;
	ff.any = te_plug.cfg.v[TE_S_REQUEUE_ON].word == TE_W_REQUEUE_ON_ANY;
	if (!ff.nfails && !ff.hang_node && !ff.strag_node)
		return -1; /* the step did not fail */
	if (job_load(rc.job, &dc.msg) < 0) {
		say("requeue: not requeued: cannot read the job from slurmctld: "
		    "%s",
		    slurm_strerror(te_slurm_errno()));
		return -1;
	}
	lost_node(&dc.msg->job_array[0], lost, sizeof(lost));
	ff.lost_node = lost[0] ? lost : NULL;
	te_fault_find(&ff, &dc.fault);
	return 0;
}

static void verdict_note(const char *verdict, const char *line)
{
	dc.verdict = verdict;
	te_strlcpy(dc.why, line, sizeof(dc.why));
}

/* Slurm's expedited requeue (25.11+: sbatch --requeue=expedite, with
 * SlurmctldParameters=enable_expedited_requeue). trainenv's own requeue
 * (requeue_without) works on such a job as on any other: Slurm marks a
 * job "expediting" (and refuses its owner's updates, the exclusion among
 * them) only when a node fails or the batch script exits non-zero, not at
 * a requeue asked for; the requeued job is eligible at once (26.05.3
 * job_mgr.c, batch_requeue_fini). */
static int job_expedited(const job_info_t *j)
{
#ifdef EXPEDITED_REQUEUE
	return (j->bitflags & EXPEDITED_REQUEUE) != 0;
#else
	(void)j;
	return 0;
#endif
}

/* The requeue's plan (or why not), when the relaunch left it the step. */
static void requeue_decide(const job_info_t *j)
{
	const struct te_value *rq = &te_plug.cfg.v[TE_S_REQUEUE];
	struct te_requeue_facts rf = { 0 };
	char excl[TE_EXCLUDE_MAX];

	rf.batch = j->batch_flag != 0;
	rf.requeue_allowed = j->requeue != 0;
	rf.budget = rq->num;
	rf.restarts = j->restart_cnt +
		      (rc.spares ? te_relaunch_comment_count(j->comment) : 0);
	rf.excluded_count = te_expand_nodes(j->exc_nodes, excl, sizeof(excl));
	/* and the nodes this job's relaunches left out */
	rf.excluded_count += te_relaunch_excluded_add(excl, sizeof(excl));
	rf.excluded = excl;
	rf.job_nodes = j->num_nodes;
	rf.partition_nodes = partition_nodes(j->partition);
	rf.expedited = job_expedited(j);
	dc.requeue = te_requeue_decide(&rf, &dc.fault, &dc.qplan);
	if (dc.qplan.line[0])
		say("%s", dc.qplan.line);
	if (dc.qplan.line[0])
		verdict_note(dc.requeue ? "requeue" : "stop", dc.qplan.line);
}

int64_t te_recovery_job_start(void)
{
	const char *v = getenv("SLURM_JOB_START_TIME");
	uint64_t u;

	if (rc.job_start > 0)
		return rc.job_start;
	return v && te_parse_u64(v, (uint64_t)INT32_MAX * 4, &u) == 0
		       ? (int64_t)u
		       : 0;
}

const char *te_recovery_srun_decide(const char **why)
{
	static struct te_failrep fails[TE_FAILREP_KEEP];
	const struct te_value *rq = &te_plug.cfg.v[TE_S_REQUEUE];
	uint64_t budget;

	te_failrep_on_failure(NULL);
	timesig_stop();
	rc.sig_due_ms = 0;
	memset(&dc, 0, sizeof(dc));
	*why = NULL;
	if ((!rc.requeue && !rc.spares) ||
	    fault_of_step(fails, TE_FAILREP_KEEP) < 0)
		return NULL;
	/* one budget for both kinds of restart: --train-requeue's, else
	 * one per spare (else 1) */
	budget = rc.requeue ? rq->num : te_relaunch_budget();
	dc.relaunch = te_relaunch_srun_decide(&dc.fault, &dc.msg->job_array[0],
					      budget, &dc.rplan);
	if (dc.relaunch == TE_VERDICT_RELAUNCH)
		verdict_note("relaunch", dc.rplan.line);
	else if (dc.relaunch == TE_VERDICT_RELAUNCH_SAME)
		verdict_note("relaunch-same", dc.rplan.line);
	else if (dc.relaunch == TE_VERDICT_STOP)
		verdict_note("stop", dc.rplan.line);
	else if (rc.requeue)
		requeue_decide(&dc.msg->job_array[0]);
	else if (dc.relaunch == TE_VERDICT_REQUEUE)
		verdict_note("stop", dc.rplan.line); /* no requeue asked */
	/* trainenv stops, but Slurm's expedited requeue does not: a batch
	 * script that exits non-zero puts the job back in the queue, held
	 * when no epilog failed (job_mgr.c, _set_job_requeue_exit_value) */
	if (dc.verdict && !strcmp(dc.verdict, "stop") &&
	    job_expedited(&dc.msg->job_array[0]) &&
	    dc.msg->job_array[0].batch_flag)
		say("requeue: Slurm's expedited requeue (--requeue=expedite) "
		    "requeues this job, held, when the batch script exits "
		    "non-zero: `scancel %u` ends it",
		    rc.job);
	*why = dc.verdict ? dc.why : NULL;
	return dc.verdict;
}

void te_recovery_srun_act(void)
{
	const job_info_t *j;
	char why[TE_ERR_MAX];
	sigset_t all, old;

	if (!dc.msg)
		return;
	j = &dc.msg->job_array[0];
	if (dc.relaunch == TE_VERDICT_RELAUNCH ||
	    dc.relaunch == TE_VERDICT_RELAUNCH_SAME)
		te_relaunch_srun_act(&dc.rplan, &dc.fault, j);
	if (dc.requeue && te_progress_srun_stops(j)) {
		slurm_free_job_info_msg(dc.msg);
		_exit(TE_EXIT_NO_PROGRESS);
	}
	if (dc.requeue) {
		/* the requeue ends the batch script, srun's parent: this
		 * thread at least takes no signal before the node is
		 * excluded (a few ms) */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (requeue_without(rc.job, dc.qplan.exclude, why,
				    sizeof(why)) < 0)
			say("requeue: %s", why);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	slurm_free_job_info_msg(dc.msg);
	dc.msg = NULL;
}
