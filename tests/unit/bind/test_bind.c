/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the mapping core (core/bind/bind.c) on the stored topologies.
 *
 * Facts per topology (GPU bus ids in PCI order, their NUMA node and CPUs)
 * were read from the XML files with
 *   lstopo-no-graphics -i FILE -p --whole-io
 *   hwloc-calc -i FILE --physical-output --intersect pu numa:N
 * and are restated below, independently of the code under test. Then every
 * topology is run through every mode, SMT policy, task count, GPU list and
 * allowed set below and the results are checked against the properties
 * that bind.h promises (check_result()). Exact mappings are in the
 * .expected files of tests/data/bind (test_bind_preview).
 */
#include "config.h"

#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bind/bind.h"
#include "bind/cpulist.h"
#include "tap.h"

#ifndef TE_TOPODIR
#error TE_TOPODIR must name tests/data/topologies
#endif

struct gpu_fact {
	const char *busid;
	const char *numa; /* NUMA nodes of its locality */
	const char *cpus; /* CPUs of its locality */
};

struct topo_fact {
	const char *file;
	size_t ngpus;
	struct gpu_fact gpu[16];
	const char *not_gpus; /* display/NVIDIA devices that must be skipped */
};

static const struct topo_fact facts[] = {
	{ "nvidiaDGX2.xml",
	  16,
	  {
		  { "0000:34:00.0", "0", "0-1" },
		  { "0000:36:00.0", "0", "0-1" },
		  { "0000:39:00.0", "0", "0-1" },
		  { "0000:3b:00.0", "0", "0-1" },
		  { "0000:57:00.0", "0", "0-1" },
		  { "0000:59:00.0", "0", "0-1" },
		  { "0000:5c:00.0", "0", "0-1" },
		  { "0000:5e:00.0", "0", "0-1" },
		  { "0000:b7:00.0", "1", "24-25" },
		  { "0000:b9:00.0", "1", "24-25" },
		  { "0000:bc:00.0", "1", "24-25" },
		  { "0000:be:00.0", "1", "24-25" },
		  { "0000:e0:00.0", "1", "24-25" },
		  { "0000:e2:00.0", "1", "24-25" },
		  { "0000:e5:00.0", "1", "24-25" },
		  { "0000:e7:00.0", "1", "24-25" },
	  },
	  "12 NVSwitches (class 0680, one reading 0000)" },
	{ "24em64t-2n6c2t-pci.xml",
	  3,
	  {
		  { "0000:06:00.0", "0", "0,2,4,6,8,10,12,14,16,18,20,22" },
		  { "0000:11:00.0", "1", "1,3,5,7,9,11,13,15,17,19,21,23" },
		  { "0000:14:00.0", "1", "1,3,5,7,9,11,13,15,17,19,21,23" },
	  },
	  "ATI ES1000 VGA 01:03.0" },
	{ "32em64t-2n8c2t-pci-wholeio.xml",
	  3,
	  {
		  { "0000:03:00.0", "0", "0-7,16-23" },
		  { "0000:83:00.0", "1", "8-15,24-31" },
		  { "0000:84:00.0", "1", "8-15,24-31" },
	  },
	  "Matrox VGA 05:03.0, AMD VGA 84:00.1" },
	{ "96em64t-4n4d3ca2co-pci.xml",
	  0,
	  { { NULL, NULL, NULL } },
	  "ATI ES1000 VGA 01:00.0 with a \"card0\" GPU OS device" },
	{ "handmade-2p2c2t-nonuma-pci.xml",
	  3,
	  {
		  { "0000:01:00.0", "0", "0-7" },
		  { "0000:41:00.0", "0", "2-3,6-7" },
		  { "0000:81:00.0", "0", "0-1,4-5" },
	  },
	  "NVIDIA audio 41:00.1 and USB 41:00.2, ASPEED VGA 00:02.0" },
};
#define NFACTS (sizeof(facts) / sizeof(facts[0]))

static char err[512];

static hwloc_topology_t load(const char *file)
{
	char path[4096];
	hwloc_topology_t t = NULL;

	snprintf(path, sizeof(path), "%s/%s", TE_TOPODIR, file);
	if (te_bind_topology_load(path, &t, err, sizeof(err))) {
		printf("# load %s: %s\n", file, err);
		return NULL;
	}
	return t;
}

static const char *fmt(hwloc_const_bitmap_t s)
{
	static char bufs[4][4096];
	static int i;

	i = (i + 1) % 4;
	if (te_bind_format_set(s, bufs[i], sizeof(bufs[i])) < 0)
		snprintf(bufs[i], sizeof(bufs[i]), "?");
	return bufs[i];
}

static hwloc_bitmap_t parse_set(const char *list)
{
	static unsigned idx[65536];
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	size_t n, i;

	if (te_cpulist_parse(list, 100000, TE_CPULIST_INDEX_LIMIT, idx, 65536,
			     &n, err, sizeof(err)))
		return b;
	for (i = 0; i < n; i++)
		hwloc_bitmap_set(b, idx[i]);
	return b;
}

/* ------------------------------------------------------------------ facts */

static void test_topology_facts(void)
{
	DIR *d;
	struct dirent *e;
	size_t i, k;

	/* Every stored topology has facts, so none escapes the checks. */
	d = opendir(TE_TOPODIR);
	if (ok(d != NULL, "open %s", TE_TOPODIR)) {
		while ((e = readdir(d))) {
			size_t l = strlen(e->d_name);
			int found = 0;

			if (l < 4 || strcmp(e->d_name + l - 4, ".xml"))
				continue;
			for (i = 0; i < NFACTS; i++)
				found |= !strcmp(facts[i].file, e->d_name);
			ok(found, "%s has stated facts", e->d_name);
		}
		closedir(d);
	}

	for (i = 0; i < NFACTS; i++) {
		hwloc_topology_t t = load(facts[i].file);
		struct te_bind_gpus g;

		if (!ok(t != NULL, "%s loads", facts[i].file))
			continue;
		if (!ok(te_bind_gpus(t, &g, err, sizeof(err)) == 0,
			"%s: GPUs listed", facts[i].file)) {
			hwloc_topology_destroy(t);
			continue;
		}
		is_int(g.n, facts[i].ngpus, "%s: %zu GPUs (not: %s)",
		       facts[i].file, facts[i].ngpus, facts[i].not_gpus);
		for (k = 0; k < g.n && k < facts[i].ngpus; k++) {
			const struct gpu_fact *f = &facts[i].gpu[k];
			int same = !strcmp(g.gpu[k].busid, f->busid) &&
				   !strcmp(fmt(g.gpu[k].nodeset), f->numa) &&
				   !strcmp(fmt(g.gpu[k].cpuset), f->cpus) &&
				   g.gpu[k].vendor_id == 0x10de &&
				   (g.gpu[k].class_id >> 8) == 0x03;
			if (!ok(same, "%s: GPU %zu is %s, numa %s, cpus %s",
				facts[i].file, k, f->busid, f->numa, f->cpus))
				printf("#   got %s numa %s cpus %s\n",
				       g.gpu[k].busid, fmt(g.gpu[k].nodeset),
				       fmt(g.gpu[k].cpuset));
		}
		te_bind_gpus_free(&g);
		hwloc_topology_destroy(t);
	}
}

/* The DGX-2 XML names its GPUs nvml0..nvml15 (NVML's numbering): PCI order
 * must give the same numbering, which is the order Slurm uses. */
static void test_dgx2_nvml_order(void)
{
	hwloc_topology_t t = load("nvidiaDGX2.xml");
	struct te_bind_gpus g;
	size_t k;
	int bad = 0;

	if (!t || te_bind_gpus(t, &g, err, sizeof(err))) {
		ok(0, "DGX-2 loads");
		if (t)
			hwloc_topology_destroy(t);
		return;
	}
	for (k = 0; k < g.n; k++) {
		hwloc_obj_t os = g.gpu[k].pcidev->io_first_child;
		char want[32];

		snprintf(want, sizeof(want), "nvml%zu", k);
		while (os && (os->type != HWLOC_OBJ_OS_DEVICE || !os->name ||
			      strncmp(os->name, "nvml", 4)))
			os = os->next_sibling;
		if (!os || strcmp(os->name, want)) {
			bad++;
			printf("# GPU %zu %s: OS device %s\n", k,
			       g.gpu[k].busid, os ? os->name : "(none)");
		}
	}
	ok(g.n == 16 && bad == 0, "DGX-2: PCI order equals NVML order "
				  "(nvml0..nvml15)");
	te_bind_gpus_free(&g);
	hwloc_topology_destroy(t);
}

/* With every PCI device kept, NVIDIA's audio and USB functions are in the
 * topology and still not GPUs. */
static void test_non_gpu_nvidia_functions(void)
{
	char path[4096];
	hwloc_topology_t t;
	struct te_bind_gpus g;

	snprintf(path, sizeof(path), "%s/handmade-2p2c2t-nonuma-pci.xml",
		 TE_TOPODIR);
	hwloc_topology_init(&t);
	hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_set_xml(t, path) || hwloc_topology_load(t)) {
		ok(0, "handmade topology loads with all I/O");
		hwloc_topology_destroy(t);
		return;
	}
	ok(hwloc_get_pcidev_by_busid(t, 0, 0x41, 0, 1) != NULL &&
		   hwloc_get_pcidev_by_busid(t, 0, 0x41, 0, 2) != NULL &&
		   hwloc_get_pcidev_by_busid(t, 0, 0, 2, 0) != NULL,
	   "audio, USB and ASPEED devices present with KEEP_ALL");
	ok(te_bind_gpus(t, &g, err, sizeof(err)) == 0 && g.n == 3,
	   "only the 3 display-class NVIDIA functions are GPUs");
	te_bind_gpus_free(&g);
	hwloc_topology_destroy(t);
}

/* ------------------------------------------------------------------ properties */

static int has_note(const struct te_bind_rank *rk, const char *s)
{
	return strstr(rk->note, s) != NULL;
}

#define FAIL(...)                                 \
	do {                                      \
		if (fails++ < 3) {                \
			printf("#   %s: ", what); \
			printf(__VA_ARGS__);      \
			printf("\n");             \
		}                                 \
	} while (0)

static size_t block_of(size_t i, size_t items, size_t bins)
{
	size_t q = items / bins, m = items % bins;

	return i < m * (q + 1) ? i / (q + 1) : m + (i - m * (q + 1)) / q;
}

/* Checks the promises of bind.h on one result; returns failures. */
static int check_result(hwloc_topology_t t, const struct te_bind_gpus *g,
			const struct te_bind_request *req,
			const struct te_bind_result *res,
			const struct te_bind_result *numa_ref, const char *what)
{
	hwloc_bitmap_t allowed = hwloc_bitmap_dup(
		req->allowed ? req->allowed
			     : hwloc_topology_get_allowed_cpuset(t));
	hwloc_const_nodeset_t anodes = hwloc_topology_get_allowed_nodeset(t);
	hwloc_bitmap_t tmp = hwloc_bitmap_alloc(), u1 = hwloc_bitmap_alloc(),
		       u2 = hwloc_bitmap_alloc();
	unsigned *step = NULL, r, s;
	size_t i;
	int fails = 0;

	hwloc_bitmap_and(allowed, allowed,
			 hwloc_topology_get_allowed_cpuset(t));
	hwloc_bitmap_and(allowed, allowed, hwloc_get_root_obj(t)->cpuset);
	if (req->ngpus) {
		step = calloc(req->ngpus, sizeof(*step));
		memcpy(step, req->gpus, req->ngpus * sizeof(*step));
		for (i = 1; i < req->ngpus; i++) { /* insertion sort */
			unsigned v = step[i];
			size_t j = i;
			while (j && step[j - 1] > v) {
				step[j] = step[j - 1];
				j--;
			}
			step[j] = v;
		}
	}
	if (res->nranks != req->ntasks)
		FAIL("%u ranks for %u tasks", res->nranks, req->ntasks);

	for (r = 0; r < res->nranks; r++) {
		const struct te_bind_rank *rk = &res->ranks[r];
		char line[8192];

		if (rk->rank != r)
			FAIL("rank %u has number %u", r, rk->rank);
		if (hwloc_bitmap_iszero(rk->cpuset))
			FAIL("rank %u: empty CPU set", r);
		if (!hwloc_bitmap_isincluded(rk->cpuset, allowed))
			FAIL("rank %u: CPUs %s outside allowed %s", r,
			     fmt(rk->cpuset), fmt(allowed));
		if (hwloc_bitmap_iszero(rk->nodeset) ||
		    !hwloc_bitmap_isincluded(rk->nodeset, anodes))
			FAIL("rank %u: nodes %s", r, fmt(rk->nodeset));
		hwloc_cpuset_to_nodeset(t, rk->cpuset, tmp);
		hwloc_bitmap_and(tmp, tmp, anodes);
		if (!hwloc_bitmap_isequal(tmp, rk->nodeset) &&
		    !has_note(rk, "memory of"))
			FAIL("rank %u: nodes %s, CPUs %s are on %s", r,
			     fmt(rk->nodeset), fmt(rk->cpuset), fmt(tmp));
		if (strlen(rk->note) >= sizeof(rk->note) ||
		    strchr(rk->note, '\n'))
			FAIL("rank %u: note not one bounded line", r);
		if (te_bind_format_rank(rk, line, sizeof(line)) < 0 ||
		    strncmp(line, "rank ", 5))
			FAIL("rank %u: cannot format", r);

		/* GPU of the rank: r, or blocks when there are more ranks. */
		if (req->ngpus) {
			size_t j =
				req->ntasks <= req->ngpus
					? r
					: block_of(r, req->ntasks, req->ngpus);
			if (rk->gpu != (int)step[j] ||
			    strcmp(rk->busid, g->gpu[step[j]].busid))
				FAIL("rank %u: GPU %d (%s), want %u", r,
				     rk->gpu, rk->busid, step[j]);
		} else if (rk->gpu != -1 || rk->busid[0]) {
			FAIL("rank %u: GPU %d without GPUs", r, rk->gpu);
		}

		if (req->mode == TE_BIND_MODE_NONE) {
			if (rk->bind ||
			    !hwloc_bitmap_isequal(rk->cpuset, allowed))
				FAIL("rank %u: mode none binds", r);
			continue;
		}
		if (!rk->bind)
			FAIL("rank %u: not bound", r);

		/* SMT one: no two PUs of one core (unless threads were split,
		 * where the policy cannot apply). */
		if (req->smt == TE_BIND_SMT_ONE &&
		    !has_note(rk, "hardware thread") &&
		    !has_note(rk, "overlap")) {
			hwloc_obj_t c = NULL;
			while ((c = hwloc_get_next_obj_by_type(
					t, HWLOC_OBJ_CORE, c))) {
				hwloc_bitmap_and(tmp, c->cpuset, rk->cpuset);
				if (hwloc_bitmap_weight(tmp) > 1)
					FAIL("rank %u: core with PUs %s", r,
					     fmt(tmp));
			}
		}
		/* SMT all in cores mode: whole cores (their allowed PUs). */
		if (req->smt == TE_BIND_SMT_ALL &&
		    req->mode == TE_BIND_MODE_CORES &&
		    !has_note(rk, "hardware thread") &&
		    !has_note(rk, "overlap")) {
			hwloc_obj_t c = NULL;
			while ((c = hwloc_get_next_obj_by_type(
					t, HWLOC_OBJ_CORE, c))) {
				if (!hwloc_bitmap_intersects(c->cpuset,
							     rk->cpuset))
					continue;
				hwloc_bitmap_and(tmp, c->cpuset, allowed);
				if (!hwloc_bitmap_isincluded(tmp, rk->cpuset))
					FAIL("rank %u: part of core %s", r,
					     fmt(c->cpuset));
			}
		}
		/* numa mode with a GPU: its locality's allowed CPUs, unless
		 * it has none (then a note says where the CPUs come from). */
		if (req->mode == TE_BIND_MODE_NUMA && rk->gpu >= 0) {
			hwloc_bitmap_and(tmp, g->gpu[rk->gpu].cpuset, allowed);
			if (hwloc_bitmap_iszero(tmp)) {
				if (!has_note(rk, "no allowed CPU near GPU"))
					FAIL("rank %u: fallback without note",
					     r);
			} else if (req->smt == TE_BIND_SMT_ALL &&
				   !hwloc_bitmap_isequal(tmp, rk->cpuset)) {
				FAIL("rank %u: CPUs %s, GPU locality %s", r,
				     fmt(rk->cpuset), fmt(tmp));
			} else if (!hwloc_bitmap_isincluded(rk->cpuset, tmp)) {
				FAIL("rank %u: CPUs %s outside locality %s", r,
				     fmt(rk->cpuset), fmt(tmp));
			}
		}
		/* numa mode without GPU: whole allowed NUMA nodes. */
		if (req->mode == TE_BIND_MODE_NUMA && rk->gpu < 0 &&
		    req->smt == TE_BIND_SMT_ALL) {
			unsigned n;
			hwloc_bitmap_zero(tmp);
			hwloc_bitmap_foreach_begin(n, rk->nodeset)
			{
				hwloc_obj_t nn =
					hwloc_get_numanode_obj_by_os_index(t,
									   n);
				if (nn)
					hwloc_bitmap_or(tmp, tmp, nn->cpuset);
			}
			hwloc_bitmap_foreach_end();
			hwloc_bitmap_and(tmp, tmp, allowed);
			if (!hwloc_bitmap_isequal(tmp, rk->cpuset))
				FAIL("rank %u: CPUs %s, nodes %s hold %s", r,
				     fmt(rk->cpuset), fmt(rk->nodeset),
				     fmt(tmp));
		}
		/* cores mode: inside the same rank's numa-mode CPUs unless
		 * noted, and never overlapping another rank unless both say
		 * so. */
		if (req->mode == TE_BIND_MODE_CORES && numa_ref) {
			if (!hwloc_bitmap_isincluded(
				    rk->cpuset, numa_ref->ranks[r].cpuset) &&
			    !has_note(rk, "outside the GPU's locality"))
				FAIL("rank %u: cores %s outside numa set %s", r,
				     fmt(rk->cpuset),
				     fmt(numa_ref->ranks[r].cpuset));
			for (s = r + 1; s < res->nranks; s++)
				if (hwloc_bitmap_intersects(
					    rk->cpuset, res->ranks[s].cpuset) &&
				    !(has_note(rk, "overlap") &&
				      has_note(&res->ranks[s], "overlap")))
					FAIL("ranks %u and %u overlap: %s / %s",
					     r, s, fmt(rk->cpuset),
					     fmt(res->ranks[s].cpuset));
		}
	}
	/* cores mode (SMT all) uses exactly the CPUs numa mode uses. */
	if (req->mode == TE_BIND_MODE_CORES && numa_ref &&
	    req->smt == TE_BIND_SMT_ALL) {
		for (r = 0; r < res->nranks; r++) {
			hwloc_bitmap_or(u1, u1, res->ranks[r].cpuset);
			hwloc_bitmap_or(u2, u2, numa_ref->ranks[r].cpuset);
		}
		if (!hwloc_bitmap_isequal(u1, u2))
			FAIL("cores mode uses %s, numa mode %s", fmt(u1),
			     fmt(u2));
	}
	free(step);
	hwloc_bitmap_free(allowed);
	hwloc_bitmap_free(tmp);
	hwloc_bitmap_free(u1);
	hwloc_bitmap_free(u2);
	return fails;
}

/* Deterministic pseudo-random numbers. */
static unsigned long long rng = 0x2545f4914f6cdd1dull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (unsigned)(rng % n) : 0;
}

enum {
	AL_ALL,
	AL_EVEN,
	AL_PKG0,
	AL_RANDOM,
	AL_ONE,
	AL_UPPER,
	AL_N
};
static const char *const al_name[AL_N] = {
	"all CPUs",   "even PUs", "package 0",
	"random 30%", "last PU",  "upper half",
};

static hwloc_bitmap_t make_allowed(hwloc_topology_t t, int kind)
{
	hwloc_const_cpuset_t all = hwloc_get_root_obj(t)->cpuset;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	int last = hwloc_bitmap_last(all), i;
	hwloc_obj_t pkg;

	switch (kind) {
	case AL_ALL:
		hwloc_bitmap_free(b);
		return NULL;
	case AL_EVEN:
		for (i = 0; i <= last; i += 2)
			hwloc_bitmap_set(b, (unsigned)i);
		break;
	case AL_PKG0:
		pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
		hwloc_bitmap_copy(b, pkg ? pkg->cpuset : all);
		break;
	case AL_RANDOM:
		for (i = 0; i <= last; i++)
			if (rnd(10) < 3)
				hwloc_bitmap_set(b, (unsigned)i);
		hwloc_bitmap_set(b, (unsigned)last);
		break;
	case AL_ONE:
		hwloc_bitmap_set(b, (unsigned)last);
		break;
	case AL_UPPER:
		hwloc_bitmap_set_range(b, (unsigned)(last / 2), last);
		break;
	}
	hwloc_bitmap_and(b, b, all);
	return b;
}

static void test_properties(void)
{
	static const enum te_bind_mode modes[] = {
		TE_BIND_MODE_NONE,
		TE_BIND_MODE_NUMA,
		TE_BIND_MODE_CORES,
	};
	size_t f;

	for (f = 0; f < NFACTS; f++) {
		hwloc_topology_t t = load(facts[f].file);
		struct te_bind_gpus g;
		int al;

		if (!t || te_bind_gpus(t, &g, err, sizeof(err))) {
			ok(0, "%s loads", facts[f].file);
			if (t)
				hwloc_topology_destroy(t);
			continue;
		}
		for (al = 0; al < AL_N; al++) {
			hwloc_bitmap_t allowed = make_allowed(t, al);
			unsigned lists[5][TE_BIND_MAX_GPUS];
			size_t nl[5] = { 0 }, li, k;
			int fails = 0, runs = 0;

			/* all, first half, every other, the last one, none */
			for (k = 0; k < g.n; k++) {
				lists[0][nl[0]++] = (unsigned)k;
				if (k < (g.n + 1) / 2)
					lists[1][nl[1]++] = (unsigned)k;
				if (k % 2)
					lists[2][nl[2]++] = (unsigned)k;
			}
			if (g.n)
				lists[3][nl[3]++] = (unsigned)(g.n - 1);
			for (li = 0; li < 5; li++) {
				unsigned ngpu = (unsigned)nl[li], tasks[12],
					 nt = 0, ti;
				size_t m, smt;

				if (li < 4 && ngpu == 0)
					continue;
				tasks[nt++] = 1;
				tasks[nt++] = 2;
				tasks[nt++] = 3;
				tasks[nt++] = 7;
				tasks[nt++] = 100;
				if (ngpu > 1) {
					tasks[nt++] = ngpu - 1;
					tasks[nt++] = ngpu;
					tasks[nt++] = ngpu + 1;
					tasks[nt++] = 2 * ngpu;
					tasks[nt++] = 2 * ngpu + 1;
					tasks[nt++] = 3 * ngpu;
				}
				for (ti = 0; ti < nt; ti++)
					for (smt = 0; smt < 2; smt++) {
						struct te_bind_result numa_ref;
						struct te_bind_request req;
						int have_ref;

						memset(&req, 0, sizeof(req));
						req.smt = smt ? TE_BIND_SMT_ONE
							      : TE_BIND_SMT_ALL;
						req.ntasks = tasks[ti];
						req.gpus = lists[li];
						req.ngpus = ngpu;
						req.allowed = allowed;
						/* Reference for cores mode: numa mode with
					 * every thread (a thread split ignores the
					 * SMT policy). */
						req.mode = TE_BIND_MODE_NUMA;
						req.smt = TE_BIND_SMT_ALL;
						have_ref =
							te_bind_compute(
								t, &req,
								&numa_ref, err,
								sizeof(err)) ==
							0;
						req.smt = smt ? TE_BIND_SMT_ONE
							      : TE_BIND_SMT_ALL;
						for (m = 0; m < 3; m++) {
							struct te_bind_result
								res;
							char what[256];

							req.mode = modes[m];
							snprintf(
								what,
								sizeof(what),
								"%s %s smt %s, %u tasks, "
								"%u GPUs (list %zu)",
								al_name[al],
								te_bind_mode_name(
									req.mode),
								te_bind_smt_name(
									req.smt),
								req.ntasks,
								ngpu, li);
							runs++;
							if (te_bind_compute(
								    t, &req,
								    &res, err,
								    sizeof(err))) {
								if (fails++ < 3)
									printf("#   %s: %s\n",
									       what,
									       err);
								continue;
							}
							fails += check_result(
								t, &g, &req,
								&res,
								have_ref
									? &numa_ref
									: NULL,
								what);
							te_bind_result_free(
								&res);
						}
						if (have_ref)
							te_bind_result_free(
								&numa_ref);
					}
			}
			ok(fails == 0, "%s, %s: %d mappings keep every promise",
			   facts[f].file, al_name[al], runs);
			hwloc_bitmap_free(allowed);
		}
		te_bind_gpus_free(&g);
		hwloc_topology_destroy(t);
	}
}

/* ------------------------------------------------------------------ specific cases */

static int compute(hwloc_topology_t t, enum te_bind_mode mode,
		   enum te_bind_smt smt, unsigned ntasks, const char *gpus,
		   const char *allowed, struct te_bind_result *res)
{
	unsigned idx[TE_BIND_MAX_GPUS];
	size_t n = 0;
	struct te_bind_request req;
	hwloc_bitmap_t al = allowed ? parse_set(allowed) : NULL;
	int rc;

	if (gpus && te_cpulist_parse(gpus, 1000, 1000, idx, TE_BIND_MAX_GPUS,
				     &n, err, sizeof(err)))
		return -1;
	memset(&req, 0, sizeof(req));
	req.mode = mode;
	req.smt = smt;
	req.ntasks = ntasks;
	req.gpus = idx;
	req.ngpus = n;
	req.allowed = al;
	rc = te_bind_compute(t, &req, res, err, sizeof(err));
	hwloc_bitmap_free(al);
	return rc;
}

static void test_dgx2(void)
{
	hwloc_topology_t t = load("nvidiaDGX2.xml");
	struct te_bind_result res;
	unsigned r;
	int good = 1;

	if (!ok(t != NULL, "DGX-2 loads"))
		return;
	/* GPUs 0-7 local to NUMA node 0 (PUs 0-1), 8-15 to node 1 (24-25). */
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 16, "0-15", NULL,
		   &res) == 0,
	   "DGX-2: 16 ranks, 16 GPUs");
	for (r = 0; r < res.nranks; r++)
		good &= !strcmp(fmt(res.ranks[r].nodeset), r < 8 ? "0" : "1") &&
			!strcmp(fmt(res.ranks[r].cpuset),
				r < 8 ? "0-1" : "24-25") &&
			res.ranks[r].gpu == (int)r;
	ok(good,
	   "DGX-2: ranks 0-7 on node 0 (PUs 0-1), 8-15 on node 1 (24-25)");
	te_bind_result_free(&res);

	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 2, "12,3", NULL,
		   &res) == 0,
	   "DGX-2: unsorted step list");
	is_str(res.ranks[0].busid, "0000:3b:00.0", "lowest step GPU to rank 0");
	is_str(res.ranks[1].busid, "0000:e0:00.0", "next to rank 1");
	te_bind_result_free(&res);

	ok(compute(t, TE_BIND_MODE_CORES, TE_BIND_SMT_ALL, 16, "0-15", NULL,
		   &res) == 0,
	   "DGX-2 cores mode: 16 ranks on 4 PUs");
	like(res.ranks[0].note, "8 ranks share 2 CPUs: CPUs overlap",
	     "DGX-2 cores mode: overlap is noted");
	te_bind_result_free(&res);

	ok(compute(t, TE_BIND_MODE_CORES, TE_BIND_SMT_ALL, 2, "0-15",
		   "0-1,24-25", &res) == 0,
	   "DGX-2: 2 ranks on node 0's 2 cores");
	is_str(fmt(res.ranks[0].cpuset), "0", "rank 0: core 0");
	is_str(fmt(res.ranks[1].cpuset), "1", "rank 1: core 1, no overlap");
	is_str(res.ranks[0].note, "", "no note when nothing is unusual");
	like(res.note, "2 ranks for 16 GPUs: GPUs 2-15 unused",
	     "unused GPUs noted");
	te_bind_result_free(&res);

	/* Allowed CPUs partly outside the topology are ignored. */
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 1, "0",
		   "0-1,2-23,1000", &res) == 0 &&
		   !strcmp(fmt(res.ranks[0].cpuset), "0-1"),
	   "CPUs unknown to the topology are ignored");
	te_bind_result_free(&res);
	hwloc_topology_destroy(t);
}

static void test_24em64t(void)
{
	hwloc_topology_t t = load("24em64t-2n6c2t-pci.xml");
	struct te_bind_result res;

	if (!ok(t != NULL, "24em64t loads"))
		return;
	ok(compute(t, TE_BIND_MODE_CORES, TE_BIND_SMT_ALL, 3, "0-2", NULL,
		   &res) == 0,
	   "24em64t cores mode");
	is_str(fmt(res.ranks[0].cpuset), "0,2,4,6,8,10,12,14,16,18,20,22",
	       "rank 0 alone on node 0");
	is_str(fmt(res.ranks[1].cpuset), "1,3,5,13,15,17",
	       "rank 1: first 3 cores of node 1 with their SMT siblings");
	is_str(fmt(res.ranks[2].cpuset), "7,9,11,19,21,23",
	       "rank 2: last 3 cores of node 1");
	te_bind_result_free(&res);

	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ONE, 1, "0", NULL, &res) ==
		   0,
	   "24em64t numa, smt one");
	is_str(fmt(res.ranks[0].cpuset), "0,2,4,6,8,10",
	       "one PU per core of node 0");
	te_bind_result_free(&res);

	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 1, "0",
		   "1,3,5,7,9,11,13,15,17,19,21,23", &res) == 0,
	   "GPU whose node has no allowed CPU");
	is_str(fmt(res.ranks[0].cpuset), "1,3,5,7,9,11,13,15,17,19,21,23",
	       "falls back to the allowed CPUs");
	is_str(fmt(res.ranks[0].nodeset), "1", "and their node");
	like(res.ranks[0].note,
	     "no allowed CPU near GPU 0000:06:00.0 "
	     "(Package P#0): using the allowed CPUs of Machine P#0",
	     "fallback noted");
	te_bind_result_free(&res);

	/* 24 ranks on 12 cores of 2 threads: split by hardware thread. */
	ok(compute(t, TE_BIND_MODE_CORES, TE_BIND_SMT_ONE, 24, "0-2", NULL,
		   &res) == 0,
	   "24 ranks, 24 PUs");
	like(res.ranks[0].note, "split by hardware thread",
	     "thread split noted");
	is_int(hwloc_bitmap_weight(res.ranks[0].cpuset), 1, "one PU per rank");
	te_bind_result_free(&res);

	/* 4096 ranks (the limit) on 24 PUs. */
	ok(compute(t, TE_BIND_MODE_CORES, TE_BIND_SMT_ALL, TE_BIND_MAX_TASKS,
		   "0-2", NULL, &res) == 0 &&
		   res.nranks == TE_BIND_MAX_TASKS &&
		   !hwloc_bitmap_iszero(
			   res.ranks[TE_BIND_MAX_TASKS - 1].cpuset),
	   "%d ranks (the limit) computed", TE_BIND_MAX_TASKS);
	te_bind_result_free(&res);
	hwloc_topology_destroy(t);
}

static void test_no_gpu(void)
{
	hwloc_topology_t t = load("96em64t-4n4d3ca2co-pci.xml");
	struct te_bind_result res;
	unsigned r;
	int good = 1;

	if (!ok(t != NULL, "96em64t loads"))
		return;
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 4, NULL, NULL,
		   &res) == 0,
	   "no GPU, 4 ranks");
	for (r = 0; r < 4; r++) {
		char want[32];
		snprintf(want, sizeof(want), "%u-%u", 24 * r, 24 * r + 23);
		good &= res.ranks[r].gpu == -1 &&
			!strcmp(fmt(res.ranks[r].cpuset), want) &&
			hwloc_bitmap_first(res.ranks[r].nodeset) == (int)r;
	}
	ok(good, "no GPU: rank r on NUMA node r (PUs 24r..24r+23)");
	like(res.note, "no GPU: 4 ranks over 4 NUMA nodes", "no-GPU note");
	te_bind_result_free(&res);

	ok(compute(t, TE_BIND_MODE_CORES, TE_BIND_SMT_ALL, 96, NULL, NULL,
		   &res) == 0,
	   "no GPU, 96 ranks, cores mode");
	for (r = 0, good = 1; r < 96; r++)
		good &= hwloc_bitmap_weight(res.ranks[r].cpuset) == 1;
	ok(good, "one PU each");
	te_bind_result_free(&res);

	ok(compute(t, TE_BIND_MODE_CORES, TE_BIND_SMT_ALL, 97, NULL, NULL,
		   &res) == 0,
	   "no GPU, 97 ranks on 96 PUs");
	like(res.ranks[0].note, "25 ranks share 24 CPUs: CPUs overlap",
	     "overlap noted");
	te_bind_result_free(&res);

	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 1, "0", NULL, &res) ==
		   -1,
	   "GPU index on a node without GPU refused");
	like(err, "this node has no NVIDIA GPU", "and why");
	hwloc_topology_destroy(t);
}

static void test_compute_errors(void)
{
	hwloc_topology_t t = load("nvidiaDGX2.xml");
	struct te_bind_result res;
	struct te_bind_request req;
	unsigned idx[TE_BIND_MAX_GPUS + 1];

	if (!ok(t != NULL, "DGX-2 loads"))
		return;
	memset(idx, 0, sizeof(idx));
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 0, "0", NULL, &res) ==
		   -1,
	   "0 tasks refused");
	like(err, "must be 1 to 4096, not 0", "0 tasks: why");
	ok(res.ranks == NULL && res.nranks == 0, "failed result is empty");
	te_bind_result_free(&res);
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, TE_BIND_MAX_TASKS + 1,
		   "0", NULL, &res) == -1,
	   "too many tasks refused");
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 1, "16", NULL,
		   &res) == -1,
	   "GPU 16 of 16 refused");
	like(err, "GPU index 16 is out of range: this node has 16 GPUs (0-15)",
	     "out of range: why");
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 1, "0", "2-23",
		   &res) == -1,
	   "allowed set outside the topology refused");
	like(err,
	     "no allowed CPU is in this topology (allowed 2-23, "
	     "topology 0-1,24-25)",
	     "allowed outside: why");

	memset(&req, 0, sizeof(req));
	req.ntasks = 1;
	req.gpus = idx;
	req.ngpus = 2; /* 0,0 */
	ok(te_bind_compute(t, &req, &res, err, sizeof(err)) == -1,
	   "GPU listed twice refused");
	like(err, "GPU index 0 is listed twice", "twice: why");
	req.ngpus = TE_BIND_MAX_GPUS + 1;
	ok(te_bind_compute(t, &req, &res, err, sizeof(err)) == -1,
	   "too many GPUs refused");
	req.ngpus = 1;
	req.gpus = NULL;
	ok(te_bind_compute(t, &req, &res, err, sizeof(err)) == -1,
	   "GPU count without list refused");
	req.gpus = idx;
	req.mode = (enum te_bind_mode)7;
	ok(te_bind_compute(t, &req, &res, err, sizeof(err)) == -1,
	   "unknown mode refused");
	req.mode = TE_BIND_MODE_NUMA;
	req.smt = (enum te_bind_smt)9;
	ok(te_bind_compute(t, &req, &res, err, sizeof(err)) == -1,
	   "unknown SMT policy refused");
	ok(te_bind_compute(NULL, &req, &res, err, sizeof(err)) == -1 &&
		   te_bind_compute(t, NULL, &res, err, sizeof(err)) == -1 &&
		   te_bind_compute(t, &req, NULL, err, sizeof(err)) == -1,
	   "NULL arguments refused");
	te_bind_result_free(NULL);
	hwloc_topology_destroy(t);
}

/* The topology's own allowed sets (a cgroup on a real node) bound every
 * request, even one that asks for more. */
static void test_topology_allowed(void)
{
	hwloc_topology_t t = load("24em64t-2n6c2t-pci.xml");
	hwloc_bitmap_t cpus = parse_set("1,3,5,7,9,11,13,15,17,19,21,23");
	hwloc_bitmap_t nodes = parse_set("1");
	struct te_bind_result res;
	int rc;

	if (!ok(t != NULL, "24em64t loads"))
		goto out;
	rc = hwloc_topology_allow(t, cpus, nodes, HWLOC_ALLOW_FLAG_CUSTOM);
	if (!ok(rc == 0, "cgroup-like restriction to node 1"))
		goto out;
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 1, "0", NULL, &res) ==
		   0,
	   "GPU 0 with only node 1 allowed");
	is_str(fmt(res.ranks[0].cpuset), "1,3,5,7,9,11,13,15,17,19,21,23",
	       "topology's allowed CPUs used when none are given");
	te_bind_result_free(&res);
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 1, "0", "0-23",
		   &res) == 0,
	   "request asking for all CPUs");
	is_str(fmt(res.ranks[0].cpuset), "1,3,5,7,9,11,13,15,17,19,21,23",
	       "still bounded by the topology's allowed CPUs");
	te_bind_result_free(&res);

	/* CPUs of node 0 allowed, memory of node 0 not. */
	hwloc_bitmap_fill(cpus);
	ok(hwloc_topology_allow(t, cpus, nodes, HWLOC_ALLOW_FLAG_CUSTOM) == 0,
	   "all CPUs, node 1 memory only");
	ok(compute(t, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 1, "0", NULL, &res) ==
		   0,
	   "GPU 0 with node 0 memory not allowed");
	is_str(fmt(res.ranks[0].cpuset), "0,2,4,6,8,10,12,14,16,18,20,22",
	       "CPUs near the GPU");
	is_str(fmt(res.ranks[0].nodeset), "1", "memory on the allowed node");
	like(res.ranks[0].note,
	     "memory of the rank's NUMA node is not "
	     "allowed: using allowed nodes 1",
	     "memory fallback noted");
	te_bind_result_free(&res);
out:
	hwloc_bitmap_free(cpus);
	hwloc_bitmap_free(nodes);
	if (t)
		hwloc_topology_destroy(t);
}

/* ------------------------------------------------------------------ env */

static void test_gpus_from_env(void)
{
	static const struct {
		const char *cvd, *ssg, *sjg;
		int in_slurm, rc;
		const char *want; /* indexes, or error/note substring */
		const char *note;
	} cases[] = {
		/* ConstrainDevices=yes: relative CVD, node indexes in SSG */
		{ "0,1", "4,6", NULL, 1, 0, "4,6", "" },
		/* ConstrainDevices=no: both the same */
		{ "4,6", "4,6", "0-7", 1, 0, "4,6", "" },
		{ "0", "3,5", NULL, 1, 0, "3,5",
		  "lists 1 GPU, SLURM_STEP_GPUS 2" },
		/* batch script: SLURM_JOB_GPUS with CVD */
		{ "0,1", NULL, "2,3", 1, 0, "2-3",
		  "SLURM_JOB_GPUS (batch step)" },
		/* srun --gres=none in a GPU job: only SLURM_JOB_GPUS left */
		{ NULL, NULL, "2,3", 1, 0, "",
		  "no GPU allocated to this step" },
		{ NULL, NULL, NULL, 1, 0, "", "no GPU allocated" },
		{ "", "0,1", NULL, 1, 0, "", "CUDA_VISIBLE_DEVICES is empty" },
		{ "2,3", NULL, NULL, 0, 0, "2-3", "taken as node-wide" },
		{ NULL, NULL, NULL, 0, 0, "0-3", "all 4 GPUs of the node" },
		{ " 1,2\n", NULL, NULL, 0, 0, "1-2", "node-wide" },
		{ NULL, "3", NULL, 1, 0, "3", "" },
		{ "MIG-0f2e1d", "0", NULL, 1, -1, "UUID or MIG instance",
		  NULL },
		{ "GPU-8e2a", "0", NULL, 1, -1, "UUID or MIG instance", NULL },
		{ "0,GPU-8e2a", NULL, NULL, 0, -1, "UUID or MIG", NULL },
		{ "NoDevFiles", NULL, NULL, 1, -1,
		  "is not a list of GPU indexes", NULL },
		{ "0,1", "0,x", NULL, 1, -1, "SLURM_STEP_GPUS is not a list",
		  NULL },
		{ "0", NULL, "0,,1", 1, -1, "SLURM_JOB_GPUS is not a list",
		  NULL },
		{ "0-300", NULL, NULL, 0, -1, "more than 256", NULL },
		{ "1,1", NULL, NULL, 0, -1, "listed twice", NULL },
		{ "\x1b[31m", NULL, NULL, 0, -1, "CUDA_VISIBLE_DEVICES=?[31m",
		  NULL },
	};
	unsigned idx[TE_BIND_MAX_GPUS];
	char note[TE_BIND_NOTE_LEN], got[1024], big[9000];
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct te_bind_gpu_env env = {
			cases[i].cvd,
			cases[i].ssg,
			cases[i].sjg,
			cases[i].in_slurm,
		};
		int rc = te_bind_gpus_from_env(&env, 4, idx, TE_BIND_MAX_GPUS,
					       &n, note, sizeof(note), err,
					       sizeof(err));
		if (!ok(rc == cases[i].rc, "env case %zu: status %d", i,
			cases[i].rc))
			printf("#   %s\n", rc ? err : note);
		if (rc == 0) {
			te_cpulist_format(idx, n, got, sizeof(got));
			is_str(got, cases[i].want, "env case %zu: GPUs", i);
			if (cases[i].note[0])
				like(note, cases[i].note, "env case %zu: note",
				     i);
			else
				is_str(note, "", "env case %zu: no note", i);
		} else {
			like(err, cases[i].want, "env case %zu: reason", i);
			ok(!strchr(err, '\n') && !strchr(err, '\x1b'),
			   "env case %zu: reason is one clean line", i);
		}
	}
	/* A hostile, very long value: bounded message, no crash. */
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	{
		struct te_bind_gpu_env env = { big, NULL, NULL, 0 };
		ok(te_bind_gpus_from_env(&env, 4, idx, TE_BIND_MAX_GPUS, &n,
					 note, sizeof(note), err,
					 sizeof(err)) == -1 &&
			   strlen(err) < 300,
		   "9000-byte CUDA_VISIBLE_DEVICES refused "
		   "with a short message");
		env.cuda_visible_devices = NULL;
		env.slurm_step_gpus = big;
		ok(te_bind_gpus_from_env(&env, 4, idx, TE_BIND_MAX_GPUS, &n,
					 note, sizeof(note), err,
					 sizeof(err)) == -1,
		   "9000-byte SLURM_STEP_GPUS refused");
		like(err, "longer than 4096", "length named");
	}
	{
		struct te_bind_gpu_env env = { NULL, NULL, NULL, 0 };
		ok(te_bind_gpus_from_env(&env, 0, idx, 2, &n, note,
					 sizeof(note), err, sizeof(err)) == 0 &&
			   n == 0 && note[0] == '\0',
		   "outside Slurm on a node without GPU: none, no note");
		ok(te_bind_gpus_from_env(&env, 4, idx, 2, &n, note,
					 sizeof(note), err, sizeof(err)) == -1,
		   "all GPUs of the node must fit the caller's array");
		ok(te_bind_gpus_from_env(NULL, 4, idx, 2, &n, note,
					 sizeof(note), err, sizeof(err)) == -1,
		   "NULL env refused");
	}
}

/* ------------------------------------------------------------------ misc */

static void test_names_and_format(void)
{
	enum te_bind_mode m;
	enum te_bind_smt s;
	struct te_bind_rank rk;
	char buf[128];

	ok(te_bind_mode_parse("cores", &m) == 0 && m == TE_BIND_MODE_CORES &&
		   te_bind_mode_parse("numa", &m) == 0 &&
		   m == TE_BIND_MODE_NUMA &&
		   te_bind_mode_parse("none", &m) == 0 &&
		   m == TE_BIND_MODE_NONE,
	   "mode names parse");
	ok(te_bind_mode_parse("Cores", &m) && te_bind_mode_parse("", &m) &&
		   te_bind_mode_parse(NULL, &m),
	   "other mode names refused");
	ok(te_bind_smt_parse("one", &s) == 0 && s == TE_BIND_SMT_ONE &&
		   te_bind_smt_parse("all", &s) == 0 && s == TE_BIND_SMT_ALL &&
		   te_bind_smt_parse("two", &s),
	   "SMT policy names");
	is_str(te_bind_mode_name(TE_BIND_MODE_CORES), "cores", "mode name");
	is_str(te_bind_smt_name(TE_BIND_SMT_ONE), "one", "SMT name");

	memset(&rk, 0, sizeof(rk));
	rk.rank = 3;
	rk.gpu = -1;
	rk.cpuset = parse_set("0-5,24-29");
	rk.nodeset = parse_set("0");
	ok(te_bind_format_rank(&rk, buf, sizeof(buf)) > 0, "format a rank");
	is_str(buf, "rank 3 gpu none numa 0 cpus 0-5,24-29",
	       "line without GPU");
	rk.gpu = 3;
	snprintf(rk.busid, sizeof(rk.busid), "0000:3b:00.0");
	te_bind_format_rank(&rk, buf, sizeof(buf));
	is_str(buf, "rank 3 gpu 0000:3b:00.0 numa 0 cpus 0-5,24-29",
	       "line with GPU");
	is_int(te_bind_format_rank(&rk, buf, 20), -1, "short buffer refused");
	is_str(buf, "", "short buffer left empty");
	is_int(te_bind_format_rank(&rk, buf, 45), -1, "one byte short");
	is_int(te_bind_format_rank(&rk, buf, 46), 45, "exact fit");
	hwloc_bitmap_fill(rk.cpuset);
	is_int(te_bind_format_rank(&rk, buf, sizeof(buf)), -1,
	       "infinite set refused");
	hwloc_bitmap_free(rk.cpuset);
	hwloc_bitmap_free(rk.nodeset);
}

static void test_load_errors(void)
{
	hwloc_topology_t t;
	char path[8192], tmpl[] = "/tmp/te-bind-junk-XXXXXX";
	int fd;

	ok(te_bind_topology_load("/nonexistent/x.xml", &t, err, sizeof(err)) ==
			   -1 &&
		   t == NULL,
	   "missing file refused");
	like(err, "/nonexistent/x.xml", "file named");
	ok(te_bind_topology_load("", &t, err, sizeof(err)) == -1,
	   "empty file name refused");
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	ok(te_bind_topology_load(path, &t, err, sizeof(err)) == -1,
	   "over-long file name refused");
	fd = mkstemp(tmpl);
	if (fd >= 0) {
		ok(write(fd, "<not hwloc>\n", 12) == 12, "junk file written");
		close(fd);
		ok(te_bind_topology_load(tmpl, &t, err, sizeof(err)) == -1,
		   "junk XML refused");
		unlink(tmpl);
	}
	ok(te_bind_topology_load(NULL, NULL, err, sizeof(err)) == -1,
	   "NULL output refused");
}

/* ------------------------------------------------------------------ apply */

static void test_apply(void)
{
	hwloc_topology_t xml = load("24em64t-2n6c2t-pci.xml"), real = NULL;
	struct te_bind_result res;
	struct te_bind_rank bogus;
	hwloc_bitmap_t cur = hwloc_bitmap_alloc();
	int st;
	pid_t pid;

	if (xml && compute(xml, TE_BIND_MODE_NUMA, TE_BIND_SMT_ALL, 1, "0",
			   NULL, &res) == 0) {
		ok(te_bind_apply(xml, &res.ranks[0], 1, err, sizeof(err)) == -1,
		   "applying an XML topology refused");
		like(err, "not discovered on this machine", "XML: why");
		te_bind_result_free(&res);
		ok(compute(xml, TE_BIND_MODE_NONE, TE_BIND_SMT_ALL, 1, "0",
			   NULL, &res) == 0 &&
			   te_bind_apply(xml, &res.ranks[0], 1, err,
					 sizeof(err)) == 0,
		   "mode none applies nothing, whatever the topology");
		te_bind_result_free(&res);
	}
	if (xml)
		hwloc_topology_destroy(xml);

	if (te_bind_topology_load(NULL, &real, err, sizeof(err))) {
		tap_skip("this machine's topology cannot be loaded");
		hwloc_bitmap_free(cur);
		return;
	}
	hwloc_get_cpubind(real, cur, HWLOC_CPUBIND_PROCESS);
	{
		struct te_bind_request req;
		unsigned last;

		memset(&req, 0, sizeof(req));
		req.mode = TE_BIND_MODE_CORES;
		req.allowed = cur;
		req.ntasks = (unsigned)hwloc_bitmap_weight(cur);
		if (req.ntasks < 1)
			req.ntasks = 1;
		if (req.ntasks > 64)
			req.ntasks = 64;
		last = req.ntasks - 1;
		ok(te_bind_compute(real, &req, &res, err, sizeof(err)) == 0,
		   "compute on this machine (%u ranks)", req.ntasks);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			cpu_set_t set;
			hwloc_bitmap_t got = hwloc_bitmap_alloc();
			int c, rc = te_bind_apply(real, &res.ranks[last], 1,
						  err, sizeof(err));

			if (rc != 0)
				_exit(10);
			CPU_ZERO(&set);
			if (sched_getaffinity(0, sizeof(set), &set))
				_exit(11);
			for (c = 0; c < CPU_SETSIZE; c++)
				if (CPU_ISSET(c, &set))
					hwloc_bitmap_set(got, (unsigned)c);
			_exit(hwloc_bitmap_isequal(got, res.ranks[last].cpuset)
				      ? 0
				      : 12);
		}
		ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
			   WEXITSTATUS(st) == 0,
		   "child bound to rank %u's CPUs %s "
		   "(sched_getaffinity agrees)",
		   last, fmt(res.ranks[last].cpuset));
		te_bind_result_free(&res);
	}

	/* A CPU the machine does not have: nothing bound, clear error. */
	memset(&bogus, 0, sizeof(bogus));
	bogus.bind = 1;
	bogus.rank = 5;
	bogus.cpuset = parse_set("100000");
	bogus.nodeset = parse_set("0");
	pid = fork();
	if (pid == 0)
		_exit(te_bind_apply(real, &bogus, 1, err, sizeof(err)) == -1 &&
				      strstr(err,
					     "cannot bind rank 5 to CPUs 100000")
			      ? 0
			      : 1);
	ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		   WEXITSTATUS(st) == 0,
	   "binding to a missing CPU fails cleanly");
	hwloc_bitmap_zero(bogus.cpuset);
	ok(te_bind_apply(real, &bogus, 1, err, sizeof(err)) == -1,
	   "empty CPU set refused");
	ok(te_bind_apply(real, NULL, 1, err, sizeof(err)) == -1,
	   "NULL rank refused");
	hwloc_bitmap_free(bogus.cpuset);
	hwloc_bitmap_free(bogus.nodeset);
	hwloc_bitmap_free(cur);
	hwloc_topology_destroy(real);
}

int main(void)
{
	test_topology_facts();
	test_dgx2_nvml_order();
	test_non_gpu_nvidia_functions();
	test_properties();
	test_dgx2();
	test_24em64t();
	test_no_gpu();
	test_compute_errors();
	test_topology_allowed();
	test_gpus_from_env();
	test_names_and_format();
	test_load_errors();
	test_apply();
	return tap_done();
}
