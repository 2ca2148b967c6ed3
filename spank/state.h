/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin's state, shared by its files in every context: the settings
 * (policy, the user's option texts, the effective values) and where the
 * helpers are (state.c). It calls nothing of the plugin's files: any of
 * them may include it. */
#ifndef TE_STATE_H
#define TE_STATE_H

#include <stddef.h>
#include <slurm/spank.h>

#include "settings/settings.h"

#define TE_PREFIX "trainenv: "

/* The hang report's helper: srun starts it for the step (srun_exitwatch.c),
 * slurmstepd as a torchrun task's worker watcher (stepd_watch.c). */
#define TE_STACKS_HELPER "trainenv-stacks"

/* The job prolog's node health checks (jobprolog.c). */
#define TE_HEALTH_HELPER "trainenv-health"

struct te_plugin {
	spank_context_t ctx;
	struct te_policy pol;
	int policy_ok;		     /* plugstack arguments parsed */
	char policy_err[TE_ERR_MAX]; /* why not */
	char *opt[TE_S_COUNT];	     /* option texts given by the user */
	int explain;		     /* --train-explain */
	char *health_opt;	     /* --train-health (the job prolog's) */
	struct te_config cfg;	     /* effective settings */
	int resolved;
};

extern struct te_plugin te_plug; /* defined in state.c */

/* helper-dir/NAME: the helpers' path comes from the site policy or the
 * build (the package's libexec directory), never from anything the user
 * sets. 0, or -1 when it does not fit. */
int te_helper_path(const char *name, char *path, size_t len);

#endif
