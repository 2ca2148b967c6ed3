/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's side of restart inside the allocation (--train-spares,
 * --train-transient): a step started without a node count leaves the
 * spares out; at a failed step's end srun decides
 * (core/report/relaunch.c) and, for a relaunch, notes it in the job's
 * comment and gives its hang-up shield the word to start srun again
 * without the node, or on the same nodes (srun_hangup_relaunch.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurm_compat.h"

#include "report/dumpdir.h"
#include "report/goodput_read.h"
#include "report/relaunch.h"
#include "srun/srunargs.h"
#include "srun_hangup.h"
#include "failrep_net.h"
#include "srun_exitwatch.h"
#include "srun_hangup_exec.h"
#include "srun_lines.h"
#include "srun_relaunch.h"
#include "state.h"
#include "util/strutil.h"

/* srun's environment for -N and -n, changed before srun reads it and put
 * back once it has (the tasks see the job's own values). */
static const char *const count_vars[4] = { "SLURM_JOB_NUM_NODES",
					   "SLURM_NNODES", "SLURM_NTASKS",
					   "SLURM_NPROCS" };
static struct {
	int changed;
	char saved[4][32];
	int had[4];
	int on;		     /* relaunches: spares, or transient codes */
	uint32_t spares;     /* --train-spares, 0: off */
	uint32_t step_nodes; /* this step's */
	uint32_t step_tasks;
	uint32_t restarts;		/* before this step, both kinds */
	char excluded[TE_EXCLUDE_MAX];	/* the relaunches' */
	char step_list[TE_EXCLUDE_MAX]; /* this step's nodes (Slurm's
					   ranged form when too long) */
	char no_shield[200];		/* why srun cannot start again */
	uint32_t here; /* relaunches its shield counted (TE_RELAUNCH_COUNT_ENV) */
	uint32_t first; /* the step's task count in its first run, 0: this */
	uint32_t spares_left; /* the job's nodes neither the step's nor left
				 out, at init */
	int in_shell; /* started by the batch script or salloc's shell */
} rl;

/* How sbatch's and salloc's SPANK options reach the job's environment:
 * srun reads SLURM_SPANK_ before the name (salloc's shell and the batch
 * script have that form). */
#define TE_SPARES_SPANK_ENV "_SLURM_SPANK_OPTION_trainenv_train_spares"

static const char *own_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

/* Not inside a step's task: no SLURM_STEP_ID, or from 26.05 on the batch
 * step's or the interactive step's own id (-5, -6: SLURM_BATCH_SCRIPT and
 * SLURM_INTERACTIVE_STEP as an int, or as Slurm's unsigned). */
static int in_batch_or_shell(void)
{
	static const char *const ids[] = { "-5", "-6", "4294967291",
					   "4294967290" };
	const char *v = getenv("SLURM_STEP_ID");
	size_t i;

	if (!v)
		return 1;
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (!strcmp(v, ids[i]))
			return 1;
	return 0;
}

/* What a relaunched srun was given by its shield, taken out of the
 * environment the tasks get. */
static uint32_t take_relaunch_env(void)
{
	const char *c = getenv(TE_RELAUNCH_COUNT_ENV);
	const char *x = getenv(TE_RELAUNCH_EXCLUDED_ENV);
	const char *f = getenv(TE_RELAUNCH_FIRST_ENV);
	uint64_t n = 0, first;

	/* only from the shield that started this srun, never the user's */
	if (!te_hup_marker_valid() || !c || te_parse_u64(c, 1000000, &n) < 0)
		n = 0;
	if (te_hup_marker_valid() && x && te_relaunch_nodes_ok(x))
		te_strlcpy(rl.excluded, x, sizeof(rl.excluded));
	if (te_hup_marker_valid() && n && f &&
	    te_parse_u64(f, 100000000, &first) == 0)
		rl.first = (uint32_t)first;
	unsetenv(TE_RELAUNCH_FIRST_ENV);
	unsetenv(TE_RELAUNCH_COUNT_ENV);
	unsetenv(TE_RELAUNCH_EXCLUDED_ENV);
	return (uint32_t)n;
}

/* The job's --train-spares as srun will resolve it, before srun has read
 * its options: sbatch's or salloc's option reaches srun as SPANK's
 * variable (salloc's shell) or in the batch step's settings; the site's
 * default and enforced value apply. 0: none. */
static uint32_t job_spares(void)
{
	static struct te_config inh, cfg;
	const char *opt[TE_S_COUNT] = { 0 };
	const struct te_value *v;
	char err[TE_ERR_MAX];
	int have_inh;

	if (!te_plug.policy_ok)
		return 0;
	have_inh = te_inherited_config(own_getenv, NULL, &inh) == 0;
	opt[TE_S_SPARES] = getenv("SLURM_SPANK_" TE_SPARES_SPANK_ENV);
	if (!opt[TE_S_SPARES])
		opt[TE_S_SPARES] = getenv(TE_SPARES_SPANK_ENV);
	/* the batch step's settings, where the variable is not there */
	if (!opt[TE_S_SPARES] && have_inh && inh.v[TE_S_SPARES].set &&
	    inh.v[TE_S_SPARES].src == TE_SRC_OPTION)
		opt[TE_S_SPARES] = inh.v[TE_S_SPARES].text;
	if (te_resolve(&te_plug.pol, opt, own_getenv, NULL,
		       have_inh ? &inh : NULL, &cfg, err, sizeof(err)) < 0)
		return 0; /* said by srun once it has read its options */
	v = &cfg.v[TE_S_SPARES];
	if (cfg.v[TE_S_TRAIN].word != TE_W_ON)
		return 0; /* trainenv off for this srun */
	return v->set && v->word == TE_W_VALUE ? (uint32_t)v->num : 0;
}

void te_relaunch_srun_early(void)
{
	struct te_spares_env e;
	uint32_t spares;
	int i, r;

	/* before srun copies its environment: never the tasks' */
	rl.here = take_relaunch_env();
	/* before srun sets SLURM_STEP_ID for its own step */
	rl.in_shell = in_batch_or_shell();
	/* the batch script's or salloc's srun, not one inside a step */
	if (!getenv("SLURM_JOB_ID") || !rl.in_shell || !(spares = job_spares()))
		return;
	r = te_spares_env(spares, getenv("SLURM_JOB_NUM_NODES"),
			  getenv("SLURM_NTASKS"),
			  getenv("SLURM_NTASKS_PER_NODE"), &e);
	if (e.line[0])
		fprintf(stderr, TE_PREFIX "warning: %s\n", e.line);
	if (r <= 0)
		return;
	for (i = 0; i < 4; i++) {
		const char *old = getenv(count_vars[i]);

		rl.had[i] = old && strlen(old) < sizeof(rl.saved[i]);
		if (rl.had[i])
			te_strlcpy(rl.saved[i], old, sizeof(rl.saved[i]));
	}
	setenv(count_vars[0], e.nodes, 1);
	setenv(count_vars[1], e.nodes, 1);
	if (e.ntasks[0] && rl.had[2])
		setenv(count_vars[2], e.ntasks, 1);
	if (e.ntasks[0] && rl.had[3])
		setenv(count_vars[3], e.ntasks, 1);
	rl.changed = 1;
}

void te_relaunch_srun_restore(void)
{
	int i;

	if (!rl.changed)
		return;
	rl.changed = 0;
	for (i = 0; i < 4; i++)
		if (rl.had[i])
			setenv(count_vars[i], rl.saved[i], 1);
		else
			unsetenv(count_vars[i]);
}

void te_relaunch_no_shield(const char *why)
{
	te_strlcpy(rl.no_shield, why, sizeof(rl.no_shield));
}

int te_relaunch_spares(void)
{
	const struct te_value *v = &te_plug.cfg.v[TE_S_SPARES];

	return v->set && v->word == TE_W_VALUE ? (int)v->num : 0;
}

/* --train-transient's codes, or NULL. */
static const char *transient_codes(void)
{
	const struct te_value *v = &te_plug.cfg.v[TE_S_TRANSIENT];

	return v->set && v->word == TE_W_VALUE && v->text[0] ? v->text : NULL;
}

int te_relaunch_on(void)
{
	return te_relaunch_spares() > 0 || transient_codes() != NULL;
}

uint64_t te_relaunch_budget(void)
{
	int k = te_relaunch_spares();

	return k > 0 ? (uint64_t)k : 1;
}

/* The step's node and task counts and its nodes (expanded), from
 * slurmctld. 0, or -1. */
static int step_load(uint32_t job, uint32_t step, char *nodes, size_t len)
{
	job_step_info_response_msg_t *resp = NULL;
	int rc = -1;

	if (te_slurm_load_step(job, step, &resp) == 0 && resp &&
	    resp->job_step_count >= 1) {
		const job_step_info_t *s = &resp->job_steps[0];

		rl.step_tasks = s->num_tasks;
		rl.step_nodes = te_expand_nodes(s->nodes, nodes, len);
		if (s->nodes && strlen(s->nodes) < len)
			te_strlcpy(nodes, s->nodes, len); /* Slurm's form */
		rc = rl.step_nodes ? 0 : -1;
	}
	if (resp)
		slurm_free_job_step_info_response_msg(resp);
	return rc;
}

/* The nodes of the job that neither the step nor a relaunch uses, in
 * Slurm's ranged form ("none" when it cannot say). */
static void spare_list(const char *job_nodes, const char *step_nodes, char *out,
		       size_t len)
{
	te_hostlist_t job = slurm_hostlist_create(job_nodes);
	te_hostlist_t in = slurm_hostlist_create(step_nodes);
	te_hostlist_t left = slurm_hostlist_create(NULL);
	char *h;

	te_strlcpy(out, "none", len);
	if (job && in && left) {
		while ((h = slurm_hostlist_shift(job))) {
			if (slurm_hostlist_find(in, h) < 0 &&
			    !te_list_has(rl.excluded, h))
				slurm_hostlist_push_host(left, h);
			free(h);
		}
		rl.spares_left = (uint32_t)slurm_hostlist_count(left);
		if (slurm_hostlist_count(left) > 0 &&
		    slurm_hostlist_ranged_string(left, len, out) < 0)
			te_strlcpy(out, "many", len);
	}
	if (job)
		slurm_hostlist_destroy(job);
	if (in)
		slurm_hostlist_destroy(in);
	if (left)
		slurm_hostlist_destroy(left);
}

/* The job's nodes now less the nodes relaunches left out and node: what
 * a relaunch has (counted on Slurm's hostlists, whatever the size). */
static uint32_t free_nodes(const job_info_t *j, const char *node)
{
	te_hostlist_t hl = slurm_hostlist_create(j->nodes);
	char name[TE_NODE_MAX];
	const char *p = rl.excluded;
	int n;

	if (!hl)
		return 0;
	n = slurm_hostlist_count(hl);
	while ((p = te_list_next(p, name, sizeof(name))))
		n -= name[0] && slurm_hostlist_find(hl, name) >= 0;
	if (!te_list_has(rl.excluded, node))
		n -= slurm_hostlist_find(hl, node) >= 0;
	slurm_hostlist_destroy(hl);
	return n > 0 ? (uint32_t)n : 0;
}

/* Why srun's own command line cannot be run again without a node, or
 * NULL. */
static const char *not_relaunchable(void)
{
	char **argv = NULL;
	int argc = te_srun_argv(&argv), i, cmd = te_srun_command(argc, argv);
	const char *x = te_srun_option_value(argc, argv, "exclude");
	const char *m = te_srun_option_value(argc, argv, "distribution");

	for (i = 1; i < argc && (cmd < 0 || i < cmd); i++)
		if (!strcmp(argv[i], ":"))
			return "a heterogeneous step is not started again";
	if (x && strchr(x, '/'))
		return "the step's --exclude names a file, which a relaunch "
		       "cannot add to";
	if (te_srun_asks(argc, argv, "nodefile") ||
	    (m && !strncmp(m, "arbitrary", 9)))
		return "the step names its nodes (--nodefile, "
		       "--distribution=arbitrary), which a relaunch cannot "
		       "keep";
	if (te_srun_asks(argc, argv, "nodelist"))
		return "the step names its nodes (--nodelist), which a "
		       "relaunch without one of them cannot keep";
	if (te_srun_asks(argc, argv, "relative"))
		return "the step places itself in the job (--relative), "
		       "which a relaunch cannot keep";
	return NULL;
}

void te_relaunch_srun_init(const job_info_t *j, uint32_t step,
			   const char *job_excluded)
{
	char spares[TE_EXCLUDE_MAX], all[TE_EXCLUDE_MAX], num[16];
	char *step_nodes = rl.step_list;
	uint32_t here, noted;

	rl.spares = (uint32_t)te_relaunch_spares();
	rl.on = te_relaunch_on();
	if (!rl.on)
		return;
	if (!rl.in_shell)
		te_relaunch_no_shield("an srun inside a step is not started "
				      "again");
	else if (not_relaunchable())
		te_relaunch_no_shield(not_relaunchable());
	here = rl.here;
	noted = te_relaunch_comment_count(j->comment);
	/* the comment keeps earlier runs' relaunches; the shield's count
	 * (requeues included) stands in where it could not be written */
	rl.restarts = j->restart_cnt + noted > here ? j->restart_cnt + noted
						    : here;
	te_snprintf(num, sizeof(num), "%u", rl.restarts);
	setenv("TRAINENV_RESTART", num, 1);
	te_snprintf(all, sizeof(all), "%s%s%s", job_excluded,
		    job_excluded[0] && rl.excluded[0] ? "," : "", rl.excluded);
	if (all[0])
		setenv("TRAINENV_EXCLUDED_NODES", all, 1);
	if (step_load(j->job_id, step, step_nodes, sizeof(rl.step_list)) < 0) {
		fprintf(stderr,
			TE_PREFIX "warning: --train-spares: cannot read step "
				  "%u.%u from slurmctld (%s): no relaunch "
				  "for this step\n",
			j->job_id, step, slurm_strerror(te_slurm_errno()));
		rl.spares = 0;
		rl.on = 0;
		return;
	}
	/* the first run's, from the shield (a relaunch on fewer nodes
	 * has fewer tasks), else this one's */
	if (!rl.first)
		rl.first = rl.step_tasks;
	te_snprintf(num, sizeof(num), "%u", rl.first);
	setenv(TE_FIRST_WORLD_SIZE_ENV, num, 1);
	spare_list(j->nodes, step_nodes, spares, sizeof(spares));
	if (here && !rl.excluded[0])
		te_recovery_say("relaunch: restart %u: the step runs again on "
				"the same nodes",
				rl.restarts);
	else if (here)
		te_recovery_say("relaunch: restart %u: the step runs without "
				"%s; spares left: %s",
				rl.restarts, rl.excluded,
				spares[0] ? spares : "none");
	else if (te_plug.explain && rl.spares)
		te_recovery_say("spares: %s sit%s out of this step "
				"(--train-spares=%u); a step that fails "
				"because of a node starts again with a spare "
				"in its place",
				spares[0] ? spares : "no node",
				strchr(spares, ',') ? "" : "s", rl.spares);
}

void te_relaunch_excl_facts(struct te_strag_excl_facts *f)
{
	const struct te_value *rq = &te_plug.cfg.v[TE_S_REQUEUE];
	const struct te_value *ck = &te_plug.cfg.v[TE_S_CHECKPOINT_DIR];

	memset(f, 0, sizeof(*f));
	f->spares = rl.on ? rl.spares : 0;
	f->spares_left = rl.spares_left;
	f->restarts = rl.restarts;
	/* one budget for both kinds of restart (te_recovery_srun_decide) */
	f->budget = rq->set && rq->word == TE_W_VALUE ? rq->num
						      : te_relaunch_budget();
	f->checkpoint_dir = ck->set && ck->word == TE_W_VALUE ? ck->text : NULL;
	/* the relaunch's rule, with the named node left out of the step's */
	if (rl.step_nodes)
		f->shrink_nodes = te_relaunch_shrink_to(
			te_plug.cfg.v[TE_S_SHRINK].word == TE_W_YES,
			rl.step_nodes, rl.step_tasks, rl.step_nodes - 1);
	f->no_shield = rl.no_shield[0] ? rl.no_shield
		       : te_hup_word_fd() >= 0
			       ? NULL
			       : "srun runs without its hang-up "
				 "shield";
}

const char *te_relaunch_step_nodes(void)
{
	return rl.on ? rl.step_list : "";
}

uint32_t te_relaunch_excluded_add(char *list, size_t len)
{
	char name[TE_NODE_MAX];
	const char *p = rl.excluded;
	uint32_t n = 0;

	while ((p = te_list_next(p, name, sizeof(name))))
		if (name[0] && !te_list_has(list, name) &&
		    te_appendf(list, len, "%s%s", list[0] ? "," : "", name) ==
			    0)
			n++;
	return n;
}

/* The relaunch in the job's comment: the count survives a requeue. node
 * NULL: on the same nodes. */
static void comment_note(const job_info_t *j, uint32_t restart,
			 const char *node)
{
	char comment[TE_RELAUNCH_COMMENT_MAX + 1];
	job_desc_msg_t d;

	if (te_relaunch_comment_add(j->comment, restart, node, comment,
				    sizeof(comment)) < 0)
		return;
	slurm_init_job_desc_msg(&d);
	te_slurm_job_desc_set_job(&d, j->job_id);
	d.comment = comment;
	if (slurm_update_job(&d) != 0)
		te_recovery_say("warning: relaunch: the job's comment was not "
				"updated: %s",
				slurm_strerror(te_slurm_errno()));
}

/* The job is ending: scancel, its time limit, a node failure Slurm ends it
 * for; NULL while it runs. */
static const char *job_ending(const job_info_t *j)
{
	switch (j->job_state & JOB_STATE_BASE) {
	case JOB_RUNNING:
		return j->job_state & JOB_COMPLETING ? "the job is ending"
						     : NULL;
	case JOB_CANCELLED:
		return "the job was cancelled";
	case JOB_TIMEOUT:
		return "the job reached its time limit";
	default:
		return "the job is ending";
	}
}

int te_relaunch_srun_decide(const struct te_fault *fault, const job_info_t *j,
			    uint64_t budget, struct te_relaunch_plan *plan)
{
	static struct te_failrep fails[TE_FAILREP_KEEP];
	struct te_relaunch_facts f = { 0 };
	int fd = te_hup_word_fd(), n;

	memset(plan, 0, sizeof(*plan));
	if (!rl.on)
		return TE_VERDICT_NONE;
	f.spares = rl.spares;
	f.budget = budget;
	f.restarts = rl.restarts;
	/* a reason said at init wins over the shield */
	f.no_shield = rl.no_shield[0] ? rl.no_shield
		      : fd >= 0	      ? NULL
				      : "srun runs without its hang-up shield";
	f.ending = job_ending(j);
	f.job_nodes = NULL; /* counted on hostlists: any size */
	f.free_nodes = free_nodes(j, fault->node);
	f.excluded = rl.excluded;
	f.step_nodes = rl.step_nodes;
	f.step_tasks = rl.step_tasks;
	f.shrink = te_plug.cfg.v[TE_S_SHRINK].word == TE_W_YES;
	f.transient = transient_codes();
	n = te_failrep_list(fails, TE_FAILREP_KEEP);
	f.fails = fails;
	f.nfails = n > 0 ? (size_t)n : 0;
	f.hung = te_exitwatch_hang_node() != NULL;
	te_relaunch_decide(&f, fault, plan);
	if (plan->verdict != TE_VERDICT_NONE)
		te_recovery_say("%s", plan->line);
	return plan->verdict;
}

int te_relaunch_srun_act(const struct te_relaunch_plan *plan,
			 const struct te_fault *fault, const job_info_t *j)
{
	struct te_relaunch_word w;
	char line[TE_RELAUNCH_WORD_MAX];
	ssize_t n;

	w.restart = rl.restarts + 1;
	w.nodes = plan->nodes;
	w.tasks = plan->tasks;
	w.first = rl.first ? rl.first : rl.step_tasks;
	/* Slurm keeps a step whose node was lost until that node reports
	 * its end, which it never does: the new step shares its nodes */
	w.overlap = plan->verdict == TE_VERDICT_RELAUNCH && fault->lost;
	te_strlcpy(w.exclude, plan->exclude, sizeof(w.exclude));
	if (te_relaunch_word_format(&w, line, sizeof(line)) < 0 ||
	    (n = write(te_hup_word_fd(), line, strlen(line))) !=
		    (ssize_t)strlen(line)) {
		te_recovery_say("relaunch: not relaunched: srun could not "
				"tell its shield");
		return -1;
	}
	/* once it is under way */
	comment_note(j, w.restart,
		     plan->verdict == TE_VERDICT_RELAUNCH ? fault->node : NULL);
	return 0;
}

void te_relaunch_srun_goodput(uint32_t job, const char *record_dir,
			      const char *verdict)
{
	static char out[8192];
	struct te_gp_reading rd = { 0 };
	struct te_gp_summary sum;
	char name[16], path[TE_DUMP_DIR_PATH_MAX], why[TE_ERR_MAX];
	int dfd;

	/* after a relaunched step that ends the chain of relaunches
	 * ("relaunch", "relaunch-same") */
	if (!rl.on || !rl.here || !record_dir ||
	    (verdict && !strncmp(verdict, "relaunch", 8)))
		return;
	te_snprintf(name, sizeof(name), "%u", job);
	dfd = te_dump_dir_open(record_dir, name, getuid(), path, sizeof(path),
			       why, sizeof(why));
	if (dfd >= 0) { /* an O_PATH descriptor: one to read the entries */
		int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		close(dfd);
		dfd = rfd;
	}
	rd.steps = dfd >= 0 ? calloc(TE_GP_STEPS_MAX, sizeof(*rd.steps)) : NULL;
	if (!rd.steps) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	if (te_gp_read_job(dfd, job, getuid(), &rd, NULL, NULL) == 0 && rd.n &&
	    te_gp_summarize(rd.steps, rd.n, &sum) == 0 &&
	    te_gp_text(rd.steps, rd.n, &sum, out, sizeof(out)) == 0) {
		out[strcspn(out, "\n")] = '\0'; /* the job's line */
		te_recovery_say("goodput: %s (trainenv record %u --dir %s)",
				out, job, record_dir);
	}
	free(rd.steps);
}
