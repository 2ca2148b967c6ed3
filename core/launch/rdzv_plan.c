/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv launch rendezvous planning: a task's role at launch and the
 * helper's command line (see rdzv_plan.h); spank/stepd_rdzv.c carries them
 * out. */
#include "config.h"

#include <string.h>

#include "launch/rdzv_plan.h"
#include "util/strutil.h"
#include "launch/version.h"

enum te_rdzv_role te_rdzv_wanted(const struct te_config *cfg, int has_pmix)
{
	if (cfg->v[TE_S_RDZV].word == TE_W_RDZV_COMPUTED)
		return TE_RDZV_SKIP;
	if (!has_pmix)
		return cfg->v[TE_S_RDZV].word == TE_W_RDZV_PMIX
			       ? TE_RDZV_NO_PMIX
			       : TE_RDZV_SKIP;
	return TE_RDZV_RUN_HELPER;
}

void te_rdzv_plan_make(const struct te_config *cfg,
		       const struct te_rdzv_facts *f, struct te_rdzv_plan *p)
{
	const struct te_value *barrier = &cfg->v[TE_S_BARRIER];
	int ckpt = cfg->v[TE_S_CHECKPOINT_DIR].set;
	unsigned long secs;

	memset(p, 0, sizeof(*p));
	secs = barrier->word == TE_W_VALUE ? (unsigned long)barrier->num : 0;
	p->barrier_secs = secs;
	p->barrier_mode = secs > 0 || ckpt;
	/* The helper keeps its own deadlines; this one only catches a helper
	 * that is stuck (killing a PMIx client makes Slurm end the step). */
	p->timeout_ms =
		(int)(te_setting_barrier_s(cfg, NULL) + (ckpt ? 15 : 0) + 20) *
		1000;
	p->skew_warn_ms = -1;
	if (p->barrier_mode && f->explain)
		p->skew_warn_ms = 0;
	else if (p->barrier_mode &&
		 cfg->v[TE_S_BARRIER_SKEW_WARN].word == TE_W_VALUE)
		p->skew_warn_ms =
			(long)cfg->v[TE_S_BARRIER_SKEW_WARN].num * 1000;
	p->role = te_rdzv_wanted(cfg, f->has_pmix);
	if (p->role != TE_RDZV_RUN_HELPER)
		return;
	if (f->nodes_files && f->local_id != 0) {
		p->role = f->failed ? TE_RDZV_FOLLOW_FAILED : TE_RDZV_FOLLOW;
	} else if (f->failed && !p->barrier_mode && !f->nodes_files) {
		/* without a barrier nobody waits for this task: only the
		 * node's other tasks need its helper */
		p->role = TE_RDZV_FAIL_ALONE;
	} else {
		p->lead = f->nodes_files;
		p->pass_failed = f->failed && p->barrier_mode;
	}
}

int te_end_step_wait_ms(int64_t on_node_ms)
{
	if (on_node_ms < 0)
		on_node_ms = 0;
	return on_node_ms >= TE_END_STEP_SETTLE_MS
		       ? 0
		       : (int)(TE_END_STEP_SETTLE_MS - on_node_ms);
}

void te_rdzv_helper_argv(const struct te_rdzv_plan *p, const char *helper_name,
			 uint32_t job_id, uint32_t step_id, const char *failed,
			 struct te_rdzv_argv *out)
{
	char **argv = out->argv;
	int n = 0;

	te_snprintf(out->job, sizeof(out->job), "%u", job_id);
	te_snprintf(out->step, sizeof(out->step), "%u", step_id);
	/* first, whatever the helper's protocol: one of another protocol
	 * answers with its own and stops (core/launch/version.h) */
	te_snprintf(out->proto, sizeof(out->proto), "%d",
		    te_protocol_version());
	argv[n++] = (char *)helper_name;
	argv[n++] = (char *)"--protocol";
	argv[n++] = out->proto;
	argv[n++] = (char *)"--job";
	argv[n++] = out->job;
	argv[n++] = (char *)"--step";
	argv[n++] = out->step;
	if (p->lead)
		argv[n++] = (char *)"--lead";
	if (p->pass_failed && failed) {
		argv[n++] = (char *)"--failed";
		argv[n++] = (char *)failed;
	}
	argv[n] = NULL;
}
