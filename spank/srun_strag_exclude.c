/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Leaving a straggler out at the next checkpoint, srun's side
 * (srun_strag_exclude.h). The listener's thread only decides and starts
 * the watch; the watch's own thread reads the checkpoint directory once a
 * second (in a child it waits for a bounded time: a hung file system
 * holds neither the listener nor srun's end) and ends the step as the
 * exit watchdog's term action does: SIGTERM, SIGKILL 10 s later. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "slurm_compat.h"

#include "srun_hangup_exec.h"
#include "srun_lines.h"
#include "srun_progress.h"
#include "srun_strag_exclude.h"
#include "srun_worker.h"
#include "state.h"
#include "report/recovery.h"
#include "straggler/strag_exclude.h"
#include "straggler/straggler.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define POLL_MS 1000
#define KILL_WAIT_MS 10000 /* SIGKILL after SIGTERM, as exit-action=term */

static struct {
	int on, decided;
	uint32_t job, step;
	struct te_srun_worker worker;
	char node[TE_STRAG_NODE_MAX];
	char why[sizeof(((struct te_fault *)0)->why)];
	char dir[TE_VALUE_MAX + 1];
	char cause[TE_STRAG_NODE_MAX + 96];
	int fired; /* atomic: the step is being ended */
	struct te_strag_excl_facts facts;
} sx = { .worker = TE_SRUN_WORKER_INIT };

void te_srun_strag_excl_init(uint32_t job, uint32_t step,
			     const struct te_strag_excl_facts *f)
{
	sx.facts = *f;
	sx.on = te_plug.cfg.v[TE_S_STRAGGLER_EXCLUDE].word ==
		TE_W_STRAG_EXCLUDE_CHECKPOINT;
	sx.job = job;
	sx.step = step;
}

static void end_step(void)
{
	te_snprintf(sx.cause, sizeof(sx.cause),
		    "srun ended the step to leave straggler %s out", sx.node);
	__atomic_store_n(&sx.fired, 1, __ATOMIC_RELEASE);
	te_recovery_say("straggler: a checkpoint in %s is newer than the "
			"naming of %s: srun ends step %u.%u to start it again "
			"without %s (SIGTERM, SIGKILL %d s later if it still "
			"runs)",
			sx.dir, sx.node, sx.job, sx.step, sx.node,
			KILL_WAIT_MS / 1000);
	/* a node whose ranks have all ended answers that the step is gone
	 * there: the others have the signal all the same */
	te_slurm_signal_step(sx.job, sx.step, SIGTERM);
	if (te_srun_worker_wait(&sx.worker, KILL_WAIT_MS))
		return; /* the step ended: srun's end stopped the watch */
	if (te_slurm_signal_step(sx.job, sx.step, SIGKILL) != 0)
		te_recovery_say("warning: straggler: step %u.%u still runs: "
				"SIGKILL: %s",
				sx.job, sx.step,
				slurm_strerror(te_slurm_errno()));
}

static void *watch(void *arg)
{
	struct te_strag_excl_watch w;

	(void)arg;
	te_strag_exclude_watch_init(&w);
	/* the first look at once: what is there at the naming is no newer
	 * checkpoint */
	do {
		int64_t newest =
			te_progress_newest_bounded(sx.dir, TE_PROGRESS_SCAN_MS);

		if (te_strag_exclude_due(&w, newest, te_now_ms() * 1000000LL)) {
			end_step();
			break;
		}
	} while (!te_srun_worker_wait(&sx.worker, POLL_MS));
	return NULL;
}

void te_srun_strag_excl_named(const char *node, const char *line)
{
	struct te_strag_excl_plan plan;

	if (!sx.on || sx.decided)
		return;
	sx.decided = 1; /* once a step, whichever node comes next */
	te_strag_exclude_decide(&sx.facts, node, &plan);
	te_recovery_say("%s", plan.line);
	if (!plan.exclude)
		return;
	te_strlcpy(sx.node, node, sizeof(sx.node));
	te_strag_exclude_why(line, sx.why, sizeof(sx.why));
	te_strlcpy(sx.dir, sx.facts.checkpoint_dir, sizeof(sx.dir));
	if (te_srun_worker_start(&sx.worker, watch, NULL) < 0)
		te_recovery_say("warning: straggler: %s is not excluded: the "
				"checkpoint watch cannot start: %s",
				node, strerror(errno));
}

const char *te_srun_strag_excl_ending(void)
{
	return __atomic_load_n(&sx.fired, __ATOMIC_ACQUIRE) ? sx.cause : NULL;
}

void te_srun_strag_excl_stop(void)
{
	te_srun_worker_stop(&sx.worker);
}

const char *te_srun_strag_excl_node(const char **why, const char **dir)
{
	if (!te_srun_strag_excl_ending())
		return NULL;
	if (why)
		*why = sx.why;
	if (dir)
		*dir = sx.dir;
	return sx.node;
}
