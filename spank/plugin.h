/* State shared by the plugin's files. plugin.c owns SPANK_PLUGIN() and every
 * slurm_spank_* callback and only dispatches on the context: srun.c is srun,
 * alloc.c is sbatch/salloc, slurmstepd.c is slurmstepd.
 * SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TE_PLUGIN_H
#define TE_PLUGIN_H

#include <slurm/spank.h>

#include "settings/settings.h"

#define TE_PREFIX "trainenv: "

struct te_plugin {
	spank_context_t ctx;
	struct te_policy pol;
	int policy_ok;			/* plugstack arguments parsed */
	char policy_err[TE_ERR_MAX];	/* why not */
	char *opt[TE_S_COUNT];		/* option texts given by the user */
	int explain;			/* --train-explain */
	struct te_config cfg;		/* effective settings */
	int resolved;
};

extern struct te_plugin te_plug;	/* defined in options.c */

/* options.c */
int te_options_register(spank_t sp);
void te_options_free(void);
void te_print_help(void);
int te_helper_path(const char *name, char *path, size_t len);

/* Per context: 0 or -1 as SPANK wants. */
int te_srun_post_opt(spank_t sp);
int te_srun_user_init(spank_t sp);
int te_srun_exit(spank_t sp);
int te_alloc_post_opt(spank_t sp);
int te_stepd_post_opt(spank_t sp);
int te_stepd_user_init(spank_t sp);
int te_stepd_task_init_priv(spank_t sp);
int te_stepd_task_init(spank_t sp);
int te_stepd_task_exit(spank_t sp);
int te_stepd_exit(spank_t sp);

#endif
