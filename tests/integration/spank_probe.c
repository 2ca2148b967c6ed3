/* A minimal SPANK plugin used by t00_cluster.sh to show that a rewrite of
 * plugstack.conf is seen by the next step: in task_init it sets
 * TE_SPANK_PROBE in the task's environment to the value of its
 * "value=..." argument (default "set"). Not part of trainenv. */
#include <string.h>
#include <slurm/spank.h>

SPANK_PLUGIN(te_spank_probe, 1);

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	const char *value = "set";
	int i;

	for (i = 0; i < ac; i++) {
		if (strncmp(av[i], "value=", 6) == 0) {
			value = av[i] + 6;
		} else {
			slurm_error("te_spank_probe: unknown argument '%s' (accepted: value=STRING)",
				    av[i]);
			return ESPANK_BAD_ARG;
		}
	}
	if (spank_setenv(sp, "TE_SPANK_PROBE", value, 1) != ESPANK_SUCCESS) {
		slurm_error("te_spank_probe: spank_setenv(TE_SPANK_PROBE) failed");
		return ESPANK_ERROR;
	}
	return ESPANK_SUCCESS;
}
