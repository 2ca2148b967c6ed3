/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: trainenv's decisions for Apptainer and Singularity.
 * A task may run its program in an Apptainer container (srun apptainer
 * exec IMAGE python train.py), where the image's ENV overrides the task's
 * variables and --cleanenv drops them. So once task_init has set
 * everything, each variable trainenv decided (core/container/container_env.h:
 * te_cenv_decided, the same list the pyxis hook keeps) and trainenv's own
 * TRAINENV_* variables get an APPTAINERENV_ and a SINGULARITYENV_ copy
 * with the task's value (core/container/apptainer_env.h), which Apptainer applies
 * inside the container whatever those say. A copy of the user's own
 * variable (one trainenv did not decide) is never made; a copy the user
 * had for a decided one is replaced, like the variable itself. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "stepd_apptainer.h"
#include "container/apptainer_env.h"
#include "container/container_env.h"
#include "launch/preflight_proto.h"
#include "launch/rankenv.h"
#include "stepd_step.h"
#include "util/strutil.h"
#include "launch/version.h"

/* trainenv's own variables in a task that the program reads (set by
 * slurmstepd.c, stepd_rdzv.c, stepd_preflight.c; a requeued job's by
 * srun_recovery.c, which a program resuming from its checkpoint reads). */
static const char *const own[] = {
	TE_SETTINGS_ENV,
	TE_RANK_VARS_ENV,
	TE_LAUNCHER_ENV,
	"TRAINENV_BIND",
	"TRAINENV_CHECKPOINT_DIR",
	TE_PF_ENV,
	"TRAINENV_BARRIER_TIMEOUT",
	TE_TASK_ENV,
	TE_PROTOCOL_ENV,
	"TRAINENV_RESTART",
	"TRAINENV_EXCLUDED_NODES",
};
#define NOWN (sizeof(own) / sizeof(own[0]))

void te_stepd_apptainer_env(spank_t sp, uint32_t local_id)
{
	static struct te_cenv d;
	static struct te_appt_out out;
	/* te_stepd_getenv's buffers are reused: the values are copied; its
	 * over-long marker (one byte more than a value may have) does not
	 * fit, and the variable is left out */
	static char vals[NOWN][TE_VALUE_MAX + 1];
	static char settings[TE_SETTINGS_ENV_MAX + 1];
	const char *names[TE_CENV_MAX + NOWN], *values[TE_CENV_MAX + NOWN];
	char err[TE_ERR_MAX];
	size_t n = 0, i;
	int rc;

	if (te_cenv_decided(te_stepd_getenv, sp, &d, err, sizeof(err)) < 0) {
		if (local_id == 0)
			slurm_info(TE_PREFIX "no APPTAINERENV_ copies: %s",
				   err);
		return;
	}
	for (i = 0; i < (size_t)d.n; i++) {
		names[n] = d.v[i].name;
		values[n++] = d.v[i].has_value ? d.v[i].value : NULL;
	}
	for (i = 0; i < NOWN; i++) {
		char *buf = i == 0 ? settings : vals[i];
		size_t cap = i == 0 ? sizeof(settings) : sizeof(vals[i]);
		const char *v = te_stepd_getenv(sp, own[i]);

		names[n] = own[i];
		values[n++] = v && te_strlcpy(buf, v, cap) < cap ? buf : NULL;
	}
	te_appt_env(names, values, n, &out);
	for (i = 0; i < (size_t)out.n; i++) {
		rc = spank_setenv(sp, out.v[i].name, out.v[i].value, 1);
		if (rc != ESPANK_SUCCESS && local_id == 0)
			slurm_info(TE_PREFIX "cannot set %s: %s", out.v[i].name,
				   spank_strerror(rc));
	}
}
