/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_bind: how long the binding steps take (not a test). Prints the
 * median over many runs, in microseconds, of
 *   - loading a topology from XML (the DGX-2 export) and from this machine,
 *   - computing the mapping of 16 ranks on the DGX-2 (numa and cores),
 *   - applying a rank's binding to this process (te_bind_apply, and the raw
 *     hwloc cpubind + membind calls it makes).
 * Usage: bench_bind [TOPOLOGY.xml]   (default: the DGX-2 test topology)
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bind/bind.h"

#ifndef TE_TOPODIR
#error TE_TOPODIR must name tests/data/topologies
#endif

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void report(const char *what, double *v, int n)
{
	double min;

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	min = v[0];
	printf("%-48s median %9.1f us  (min %9.1f, %d runs)\n", what,
	       median(v, n), min, n);
}

int main(int argc, char **argv)
{
	char path[4096], err[512];
	const char *xml = argc > 1 ? argv[1] : NULL;
	static double t[5000];
	hwloc_topology_t topo, real;
	struct te_bind_request req;
	struct te_bind_result res;
	unsigned gpus[16];
	hwloc_bitmap_t cur;
	int i, n;

	if (!xml) {
		snprintf(path, sizeof(path), "%s/nvidiaDGX2.xml", TE_TOPODIR);
		xml = path;
	}

	n = 200;
	for (i = 0; i < n; i++) {
		double s = now_us();
		if (te_bind_topology_load(xml, &topo, err, sizeof(err))) {
			fprintf(stderr, "bench_bind: %s\n", err);
			return 1;
		}
		t[i] = now_us() - s;
		hwloc_topology_destroy(topo);
	}
	report("load topology from XML", t, n);

	n = 50;
	for (i = 0; i < n; i++) {
		double s = now_us();
		if (te_bind_topology_load(NULL, &real, err, sizeof(err))) {
			fprintf(stderr, "bench_bind: %s\n", err);
			return 1;
		}
		t[i] = now_us() - s;
		hwloc_topology_destroy(real);
	}
	report("load topology of this machine (cold plugins)", t, n);

	/* hwloc unloads its plugins with the last topology; keeping one
	 * alive shows the discovery alone. */
	te_bind_topology_load(xml, &topo, err, sizeof(err));
	for (i = 0; i < n; i++) {
		double s = now_us();
		if (te_bind_topology_load(NULL, &real, err, sizeof(err)))
			return 1;
		t[i] = now_us() - s;
		hwloc_topology_destroy(real);
	}
	hwloc_topology_destroy(topo);
	report("load topology of this machine (plugins loaded)", t, n);

	te_bind_topology_load(xml, &topo, err, sizeof(err));
	for (i = 0; i < 16; i++)
		gpus[i] = (unsigned)i;
	memset(&req, 0, sizeof(req));
	req.ntasks = 16;
	req.gpus = gpus;
	req.ngpus = 16;
	{
		static const enum te_bind_mode modes[] = {
			TE_BIND_MODE_NUMA,
			TE_BIND_MODE_CORES,
		};
		int m;

		for (m = 0; m < 2; m++) {
			char what[96];

			req.mode = modes[m];
			n = 2000;
			for (i = 0; i < n; i++) {
				double s = now_us();
				if (te_bind_compute(topo, &req, &res, err,
						    sizeof(err))) {
					fprintf(stderr, "bench_bind: %s\n",
						err);
					return 1;
				}
				t[i] = now_us() - s;
				te_bind_result_free(&res);
			}
			snprintf(what, sizeof(what),
				 "compute 16 ranks, 16 GPUs "
				 "(mode %s)",
				 te_bind_mode_name(req.mode));
			report(what, t, n);
		}
	}
	hwloc_topology_destroy(topo);

	/* Apply on this process: bind to the CPUs it already has, so that
	 * the measurement does not change where the benchmark runs. */
	te_bind_topology_load(NULL, &real, err, sizeof(err));
	cur = hwloc_bitmap_alloc();
	hwloc_get_cpubind(real, cur, HWLOC_CPUBIND_PROCESS);
	memset(&req, 0, sizeof(req));
	req.mode = TE_BIND_MODE_NUMA;
	req.ntasks = 1;
	req.allowed = cur;
	if (te_bind_compute(real, &req, &res, err, sizeof(err))) {
		fprintf(stderr, "bench_bind: %s\n", err);
		return 1;
	}
	n = 2000;
	for (i = 0; i < n; i++) {
		double s = now_us();
		int rc =
			te_bind_apply(real, &res.ranks[0], 1, err, sizeof(err));
		t[i] = now_us() - s;
		if (rc < 0) {
			fprintf(stderr, "bench_bind: %s\n", err);
			return 1;
		}
	}
	report(hwloc_bitmap_isincluded(hwloc_topology_get_allowed_nodeset(real),
				       res.ranks[0].nodeset)
		       ? "te_bind_apply (cpubind; one node: no membind)"
		       : "te_bind_apply (cpubind + membind)",
	       t, n);
	for (i = 0; i < n; i++) {
		double s = now_us();
		hwloc_set_cpubind(real, res.ranks[0].cpuset,
				  HWLOC_CPUBIND_PROCESS);
		hwloc_set_membind(
			real, res.ranks[0].nodeset, HWLOC_MEMBIND_BIND,
			HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET);
		t[i] = now_us() - s;
	}
	report("raw hwloc cpubind(PROCESS) + membind(THREAD)", t, n);
	/* leave the default memory policy behind */
	hwloc_set_membind(real, hwloc_topology_get_allowed_nodeset(real),
			  HWLOC_MEMBIND_DEFAULT,
			  HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET);
	te_bind_result_free(&res);
	hwloc_bitmap_free(cur);
	hwloc_topology_destroy(real);
	return 0;
}
