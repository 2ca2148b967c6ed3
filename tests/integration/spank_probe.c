/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A minimal SPANK plugin used by the integration tests. t00_cluster.sh
 * shows with it that a rewrite of plugstack.conf is seen by the next step:
 * in task_init it sets TE_SPANK_PROBE in the task's environment to the
 * value of its "value=..." argument (default "set"). With
 * "pmix-dir-mode=OCTAL" (t50) it gives the step's PMIx directory (the job
 * user's) that mode in task_init, before trainenv's task_init when listed
 * first, as Slurm releases without the CVE-2023-41914 fix make it (0770).
 * Not part of trainenv. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <slurm/spank.h>

SPANK_PLUGIN(te_spank_probe, 1);

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	const char *value = "set";
	int i;

	for (i = 0; i < ac; i++) {
		if (strncmp(av[i], "value=", 6) == 0) {
			value = av[i] + 6;
		} else if (strncmp(av[i], "pmix-dir-mode=", 14) == 0) {
			char dir[4096];

			if (spank_getenv(sp, "PMIX_SERVER_TMPDIR", dir,
					 sizeof(dir)) != ESPANK_SUCCESS ||
			    chmod(dir, (mode_t)strtoul(av[i] + 14, NULL, 8))) {
				slurm_error(
					"te_spank_probe: cannot chmod the PMIx directory");
				return ESPANK_ERROR;
			}
		} else {
			slurm_error(
				"te_spank_probe: unknown argument '%s' (accepted: value=STRING, pmix-dir-mode=OCTAL)",
				av[i]);
			return ESPANK_BAD_ARG;
		}
	}
	if (spank_setenv(sp, "TE_SPANK_PROBE", value, 1) != ESPANK_SUCCESS) {
		slurm_error(
			"te_spank_probe: spank_setenv(TE_SPANK_PROBE) failed");
		return ESPANK_ERROR;
	}
	return ESPANK_SUCCESS;
}
