/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: --train-straggler loads trainenv's NCCL profiler
 * plugin into the rank (NCCL_PROFILER_PLUGIN, a path: NCCL dlopens it at
 * the first communicator); the plugin sends srun the rank's waits
 * (pmix/nccl_profiler_send.c) and reads its window from
 * TRAINENV_STRAGGLER_WINDOW, which the settings' export sets. A process
 * loads one profiler plugin: a job's own stays (srun said that trainenv's
 * steps aside). Nothing is done in an OCI or Apptainer container, whose
 * image does not hold the library (srun said that too); a pyxis container
 * has it at the node's path (etc/enroot-mounts.fstab.in). */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "state.h"
#include "stepd_step.h"
#include "stepd_straggler.h"
#include "util/strutil.h"

#define PLUGIN_FILE "libnccl-profiler-trainenv.so"

void te_stepd_straggler_env(spank_t sp, int in_container)
{
	const char *own = te_stepd_getenv(sp, "NCCL_PROFILER_PLUGIN");
	char lib[TE_VALUE_MAX + sizeof(PLUGIN_FILE) + 2];

	if (te_plug.cfg.v[TE_S_STRAGGLER].word != TE_W_VALUE || in_container ||
	    (own && *own))
		return;
	if (te_stepd_lib_file(PLUGIN_FILE, lib, sizeof(lib)) < 0) {
		slurm_info(TE_PREFIX "straggler: %s is not readable: no "
				     "straggler data from this node",
			   lib);
		return;
	}
	/* unset or empty (NCCL: no plugin), both trainenv's to set */
	spank_setenv(sp, "NCCL_PROFILER_PLUGIN", lib, 1);
}
