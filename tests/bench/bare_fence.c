/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bare_fence ITERS [collect]: the baseline of bench_pmix.sh. ITERS PMIx
 * fences in one long-lived process after 10 of warm-up; rank 0 prints
 * "median_us mean_us" per fence. With "collect" every rank puts a small
 * value and the fence collects data (what trainenv's barrier does when
 * srun did not choose the fence: Slurm 22.05's fence without data is a
 * job-wide barrier only under the ring, or the tree from TreeWidth nodes
 * on, see docs/pmix.md). The fence is SLURM_PMIX_FENCE's, whoever set it
 * (bench_pmix.sh, bench_fence.sh). */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 100,
	    collect = argc > 2 && !strcmp(argv[2], "collect"), i;
	pmix_proc_t me;
	pmix_info_t info;
	bool t = true;
	double *dt;

	if (iters < 1 || !(dt = calloc((size_t)iters, sizeof(*dt))))
		return 2;
	if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
		return 1;
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
	for (i = -10; i < iters; i++) {
		double t0;

		if (collect) {
			pmix_value_t v = { .type = PMIX_STRING,
					   .data.string = "1" };
			char key[32];

			snprintf(key, sizeof(key), "bench.%d", i);
			PMIx_Put(PMIX_GLOBAL, key, &v);
			PMIx_Commit();
		}
		t0 = now_us();
		if (PMIx_Fence(NULL, 0, collect ? &info : NULL,
			       collect ? 1 : 0) != PMIX_SUCCESS) {
			fprintf(stderr, "fence failed\n");
			PMIx_Finalize(NULL, 0);
			return 1;
		}
		if (i >= 0)
			dt[i] = now_us() - t0;
	}
	print_stats(dt, iters, me.rank == 0);
	PMIx_Finalize(NULL, 0);
	return 0;
}
