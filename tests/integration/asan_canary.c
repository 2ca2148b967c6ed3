/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A SPANK plugin with a deliberate heap overflow in task_init, built with
 * AddressSanitizer by t90_sanitizers.sh as the positive control: it proves
 * that a memory error in a plugin inside slurmstepd is caught and written
 * where the test looks. Never part of trainenv. */
#include <slurm/spank.h>
#include <stdlib.h>
#include <string.h>

SPANK_PLUGIN(te_asan_canary, 1);

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	volatile char *p = malloc(8);

	if (!p)
		return 0;
	p[8] = 'x'; /* one past the end: ASan must report it */
	free((void *)p);
	return 0;
}
