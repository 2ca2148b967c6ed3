/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv barrier [--timeout S]: the job-wide barrier from a shell, e.g.
 * `srun --mpi=pmix sh -c 'trainenv barrier && exec python train.py'` or
 * before torchrun. Same barrier as libtrainenv's (it calls it). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings/settings.h"
#include "tool.h"
#include "trainenv/trainenv.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trainenv barrier [--timeout SECONDS]\n\n"
		"Waits until every rank of this Slurm step has reached the "
		"barrier, at most\nSECONDS (default: the step's "
		"--train-barrier value, else %llu). Exits 0 when\nall arrived, "
		"1 with one line saying which ranks and nodes are missing, 2 "
		"on\nbad usage. Needs srun --mpi=pmix. One process per rank; "
		"see trainenv(8).\n",
		(unsigned long long)te_setting_builtin_num(TE_S_BARRIER));
}

int te_tool_barrier(int argc, char **argv)
{
	char err[TRAINENV_ERR_MAX], *end;
	double timeout = 0;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strncmp(a, "--timeout=", 10))
			v = a + 10;
		else if ((!strcmp(a, "--timeout") || !strcmp(a, "-t")) &&
			 i + 1 < argc)
			v = argv[++i];
		if (!v) {
			fprintf(stderr,
				"trainenv barrier: unexpected argument "
				"'%.64s'\n",
				a);
			usage(stderr);
			return 2;
		}
		timeout = strtod(v, &end);
		if (end == v || *end || !(timeout > 0) ||
		    timeout > (double)te_setting_max(TE_S_BARRIER)) {
			fprintf(stderr,
				"trainenv barrier: --timeout: '%.32s' "
				"is not a number of seconds in (0, %llu]\n",
				v,
				(unsigned long long)te_setting_max(
					TE_S_BARRIER));
			return 2;
		}
	}
	if (trainenv_barrier(timeout, err, sizeof(err)) < 0) {
		fprintf(stderr, "trainenv barrier: %s\n", err);
		return 1;
	}
	return 0;
}
