/* bind: the mapping of a node's ranks to GPUs, CPUs and memory
 * (te_bind_compute; the policy is documented in bind.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bind/bind.h"
#include "bind/bind_int.h"
#include "bind/cpulist.h"

/* ------------------------------------------------------------------ compute */

/* A set of CPUs that one or more ranks are placed in, before any split. */
struct domain {
	hwloc_bitmap_t cpus;	/* already intersected with the allowed CPUs */
	char note[TE_BIND_NOTE_LEN];
	size_t group;		/* union-find parent, then group id */
};

static size_t find_root(struct domain *d, size_t i)
{
	while (d[i].group != i) {
		d[i].group = d[d[i].group].group;
		i = d[i].group;
	}
	return i;
}

/* Blocked distribution of `items` things over `bins` bins (items >= bins):
 * the first items % bins bins get one more. Returns the bin of item i. */
static size_t block_of(size_t i, size_t items, size_t bins)
{
	size_t q = items / bins, m = items % bins;

	if (i < m * (q + 1))
		return i / (q + 1);
	return m + (i - m * (q + 1)) / q;
}

static void obj_name(const struct hwloc_obj *o, char *buf, size_t len)
{
	if (o->os_index != HWLOC_UNKNOWN_INDEX && o->type != HWLOC_OBJ_GROUP)
		snprintf(buf, len, "%s P#%u", hwloc_obj_type_string(o->type),
			 o->os_index);
	else
		snprintf(buf, len, "%s L#%u", hwloc_obj_type_string(o->type),
			 o->logical_index);
}

/* Domain of a GPU: its locality intersected with the allowed CPUs, or of
 * the nearest ancestor with allowed CPUs (see CPU DOMAIN in bind.h). */
static int gpu_domain(hwloc_topology_t topo, const struct te_bind_gpu *g,
		      hwloc_const_cpuset_t allowed, struct domain *d)
{
	hwloc_obj_t o = g->locality;
	hwloc_bitmap_t numa_cpus = hwloc_bitmap_alloc();
	char name[64];
	unsigned i;

	if (!numa_cpus)
		return -1;
	if (o == hwloc_get_root_obj(topo)) {
		te_bind_note_add(d->note, sizeof(d->note), "GPU %s has no NUMA "
			 "locality: using the whole machine", g->busid);
	} else {
		/* Is the locality smaller than its NUMA node(s)? Then the
		 * topology has no NUMA node for it (no NUMA info). */
		hwloc_bitmap_foreach_begin(i, o->nodeset) {
			hwloc_obj_t nn = hwloc_get_numanode_obj_by_os_index(topo, i);
			if (nn)
				hwloc_bitmap_or(numa_cpus, numa_cpus, nn->cpuset);
		} hwloc_bitmap_foreach_end();
		if (!hwloc_bitmap_isequal(numa_cpus, o->cpuset) &&
		    hwloc_bitmap_isincluded(o->cpuset, numa_cpus)) {
			obj_name(o, name, sizeof(name));
			te_bind_note_add(d->note, sizeof(d->note), "GPU %s has no NUMA "
				 "node of its own: using its %s", g->busid, name);
		}
	}
	hwloc_bitmap_free(numa_cpus);

	hwloc_bitmap_and(d->cpus, o->cpuset, allowed);
	if (hwloc_bitmap_iszero(d->cpus)) {
		hwloc_obj_t first = o;
		char name2[64];

		while (o->parent && hwloc_bitmap_iszero(d->cpus)) {
			o = o->parent;
			hwloc_bitmap_and(d->cpus, o->cpuset, allowed);
		}
		obj_name(first, name, sizeof(name));
		obj_name(o, name2, sizeof(name2));
		te_bind_note_add(d->note, sizeof(d->note), "no allowed CPU near GPU %s "
			 "(%s): using the allowed CPUs of %s", g->busid, name,
			 name2);
	}
	return 0;
}

/* Keeps, of every core that set touches, its lowest-numbered PU in set. */
static void smt_one(hwloc_topology_t topo, hwloc_bitmap_t set)
{
	hwloc_obj_t core = NULL;

	while ((core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core))) {
		int pu = -1;

		if (!hwloc_bitmap_intersects(core->cpuset, set))
			continue;
		while ((pu = hwloc_bitmap_next(core->cpuset, pu)) >= 0)
			if (hwloc_bitmap_isset(set, (unsigned)pu))
				break;
		hwloc_bitmap_andnot(set, set, core->cpuset);
		if (pu >= 0)
			hwloc_bitmap_set(set, (unsigned)pu);
	}
}

/* Objects that group PUs into cores, or the PUs when cores are unknown. */
static hwloc_obj_type_t core_type(hwloc_topology_t topo)
{
	return hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ?
		HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

void te_bind_result_free(struct te_bind_result *res)
{
	unsigned r;

	if (!res)
		return;
	if (res->ranks) {
		for (r = 0; r < res->nranks; r++) {
			hwloc_bitmap_free(res->ranks[r].cpuset);
			hwloc_bitmap_free(res->ranks[r].nodeset);
		}
		free(res->ranks);
	}
	res->ranks = NULL;
	res->nranks = 0;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* Checks and sorts the step's GPU indexes (node indexes, PCI order). */
static int step_gpus(const struct te_bind_request *req, size_t node_gpus,
		     unsigned *step, char *err, size_t errlen)
{
	size_t i;

	memcpy(step, req->gpus, req->ngpus * sizeof(*step));
	qsort(step, req->ngpus, sizeof(*step), cmp_unsigned);
	for (i = 0; i < req->ngpus; i++) {
		if (step[i] >= node_gpus) {
			if (node_gpus)
				snprintf(err, errlen, "GPU index %u is out of "
					 "range: this node has %zu GPUs "
					 "(0-%zu)", step[i], node_gpus,
					 node_gpus - 1);
			else
				snprintf(err, errlen, "GPU index %u is out of "
					 "range: this node has no NVIDIA GPU",
					 step[i]);
			return -1;
		}
		if (i && step[i] == step[i - 1]) {
			snprintf(err, errlen, "GPU index %u is listed twice",
				 step[i]);
			return -1;
		}
	}
	return 0;
}

/* No GPU: one domain per rank (blocks of whole NUMA nodes) or per NUMA
 * node (blocks of ranks). */
static int numa_domains(hwloc_topology_t topo, unsigned ntasks,
			hwloc_const_cpuset_t allowed, struct domain **domp,
			size_t *ndomp, size_t *rank_dom, char *note,
			size_t notelen)
{
	int nnodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	hwloc_bitmap_t *node_cpus = NULL, seen = hwloc_bitmap_alloc();
	struct domain *dom = NULL;
	size_t n = 0, ndom, r, i;
	int k, rc = -1;

	if (!seen || nnodes <= 0)
		goto out;
	node_cpus = calloc((size_t)nnodes, sizeof(*node_cpus));
	if (!node_cpus)
		goto out;
	for (k = 0; k < nnodes; k++) {
		hwloc_obj_t nn = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
						       (unsigned)k);
		hwloc_bitmap_t c;

		if (!nn)
			continue;
		c = hwloc_bitmap_alloc();
		if (!c)
			goto out;
		hwloc_bitmap_and(c, nn->cpuset, allowed);
		/* CPU-less memory (HBM, CXL) reports its neighbours' CPUs: it
		 * must not take ranks away from them. */
		if (hwloc_bitmap_iszero(c) || hwloc_bitmap_intersects(c, seen)) {
			hwloc_bitmap_free(c);
			continue;
		}
		hwloc_bitmap_or(seen, seen, c);
		node_cpus[n++] = c;
	}
	if (n == 0) {
		/* hwloc puts every PU under a NUMA node, so this means an
		 * inconsistent topology rather than a policy case. */
		rc = -2;
		goto out;
	}
	ndom = ntasks <= n ? ntasks : n;
	dom = calloc(ndom, sizeof(*dom));
	if (!dom)
		goto out;
	for (i = 0; i < ndom; i++) {
		dom[i].cpus = hwloc_bitmap_alloc();
		if (!dom[i].cpus)
			goto out;
	}
	if (ntasks <= n) {
		for (i = 0; i < n; i++) {
			r = block_of(i, n, ntasks);
			hwloc_bitmap_or(dom[r].cpus, dom[r].cpus, node_cpus[i]);
		}
		for (r = 0; r < ntasks; r++)
			rank_dom[r] = r;
	} else {
		for (i = 0; i < n; i++)
			hwloc_bitmap_copy(dom[i].cpus, node_cpus[i]);
		for (r = 0; r < ntasks; r++)
			rank_dom[r] = block_of(r, ntasks, n);
	}
	te_bind_note_add(note, notelen, "no GPU: %u rank%s over %zu NUMA node%s",
		 ntasks, ntasks > 1 ? "s" : "", n, n > 1 ? "s" : "");
	*domp = dom;
	*ndomp = ndom;
	dom = NULL;
	rc = 0;
out:
	if (dom) {
		for (i = 0; i < ndom; i++)
			hwloc_bitmap_free(dom[i].cpus);
		free(dom);
	}
	if (node_cpus) {
		for (i = 0; i < n; i++)
			hwloc_bitmap_free(node_cpus[i]);
		free(node_cpus);
	}
	hwloc_bitmap_free(seen);
	return rc;
}

struct split_order {
	int weight;		/* CPUs in the rank's own domain */
	size_t pos;		/* position of the rank in the group */
};

static int split_order_cmp(const void *a, const void *b)
{
	const struct split_order *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/*
 * Cores mode for one group of k ranks sharing pool (see CORES MODE SPLIT).
 * Units (cores, or PUs when cores are too few) get a capacity and ranks a
 * demand: blocks by position in the group. Ranks with the smallest domains
 * choose first and take free units inside their own domain before any
 * other, in topology order. When all domains are equal (the usual case:
 * GPUs of one NUMA node) this is exactly the block split in rank order;
 * when a machine-wide GPU shares the pool with package-local ones, the
 * package-local ranks still get their own package's cores.
 */
static int split_group(hwloc_topology_t topo, const struct te_bind_request *req,
		       hwloc_const_cpuset_t pool, const unsigned *members,
		       size_t k, struct te_bind_rank *ranks,
		       const struct domain *dom, const size_t *rank_dom)
{
	hwloc_obj_type_t ut = core_type(topo);
	int ncores = hwloc_get_nbobjs_by_type(topo, ut);
	int npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	size_t cap_units, c = 0, i, j, first_free = 0;
	hwloc_obj_t *units = NULL, o = NULL;
	size_t *cap = NULL, *demand = NULL;
	struct split_order *order = NULL;
	int by_pu = 0, overlap = 0, rc = -1;

	if (ncores <= 0 || npus <= 0)
		return -1;
	cap_units = (size_t)(ncores > npus ? ncores : npus);
	units = calloc(cap_units, sizeof(*units));
	cap = calloc(cap_units, sizeof(*cap));
	demand = calloc(k, sizeof(*demand));
	order = calloc(k, sizeof(*order));
	if (!units || !cap || !demand || !order)
		goto out;

	while ((o = hwloc_get_next_obj_by_type(topo, ut, o)) && c < cap_units)
		if (hwloc_bitmap_intersects(o->cpuset, pool))
			units[c++] = o;
	if (c < k) {
		/* Fewer cores than ranks: hardware threads, in topology order
		 * so that the threads of one core go to neighbouring ranks. */
		by_pu = 1;
		c = 0;
		o = NULL;
		while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, o)) &&
		       c < cap_units)
			if (hwloc_bitmap_isset(pool, o->os_index))
				units[c++] = o;
		if (c == 0)
			goto out;
		overlap = c < k;
	}
	if (!overlap) {
		for (j = 0; j < c; j++)
			cap[j] = 1;
		for (i = 0; i < k; i++)
			demand[i] = (i + 1) * c / k - i * c / k;
	} else {
		for (i = 0; i < k; i++) {
			cap[i * c / k]++;
			demand[i] = 1;
		}
	}
	for (i = 0; i < k; i++) {
		order[i].weight = hwloc_bitmap_weight(dom[rank_dom[members[i]]].cpus);
		order[i].pos = i;
	}
	qsort(order, k, sizeof(*order), split_order_cmp);

	for (i = 0; i < k; i++) {
		size_t pos = order[i].pos, need = demand[pos];
		struct te_bind_rank *rk = &ranks[members[pos]];
		hwloc_const_cpuset_t own = dom[rank_dom[members[pos]]].cpus;
		int pass, outside = 0;

		hwloc_bitmap_zero(rk->cpuset);
		while (first_free < c && cap[first_free] == 0)
			first_free++;
		for (pass = 0; pass < 2 && need; pass++) {
			for (j = first_free; j < c && need; j++) {
				if (!cap[j] || (pass == 0 &&
				    !hwloc_bitmap_intersects(units[j]->cpuset, own)))
					continue;
				hwloc_bitmap_or(rk->cpuset, rk->cpuset,
						units[j]->cpuset);
				cap[j]--;
				need--;
				outside |= pass;
			}
		}
		hwloc_bitmap_and(rk->cpuset, rk->cpuset, pool);
		if (!by_pu && req->smt == TE_BIND_SMT_ONE)
			smt_one(topo, rk->cpuset);
		if (overlap)
			te_bind_note_add(rk->note, sizeof(rk->note), "%zu ranks share "
				 "%zu CPU%s: CPUs overlap", k, c,
				 c > 1 ? "s" : "");
		else if (by_pu)
			te_bind_note_add(rk->note, sizeof(rk->note), "%zu ranks share "
				 "fewer cores: split by hardware thread", k);
		if (outside)
			te_bind_note_add(rk->note, sizeof(rk->note), "some CPUs are "
				 "outside the GPU's locality");
	}
	rc = 0;
out:
	free(units);
	free(cap);
	free(demand);
	free(order);
	return rc;
}

static int cores_mode(hwloc_topology_t topo, const struct te_bind_request *req,
		      struct domain *dom, size_t ndom, const size_t *rank_dom,
		      struct te_bind_rank *ranks)
{
	hwloc_bitmap_t pool = hwloc_bitmap_alloc();
	unsigned *members = calloc(req->ntasks, sizeof(*members));
	size_t i, j, g;
	int rc = -1;

	if (!pool || !members)
		goto out;
	for (i = 0; i < ndom; i++)
		dom[i].group = i;
	for (i = 0; i < ndom; i++)
		for (j = i + 1; j < ndom; j++)
			if (hwloc_bitmap_intersects(dom[i].cpus, dom[j].cpus)) {
				size_t a = find_root(dom, i), b = find_root(dom, j);
				/* the smaller index stays the root */
				if (a < b)
					dom[b].group = a;
				else if (b < a)
					dom[a].group = b;
			}
	for (g = 0; g < ndom; g++) {
		size_t k = 0;
		unsigned r;

		if (find_root(dom, g) != g)
			continue;
		hwloc_bitmap_zero(pool);
		for (i = 0; i < ndom; i++)
			if (find_root(dom, i) == g)
				hwloc_bitmap_or(pool, pool, dom[i].cpus);
		for (r = 0; r < req->ntasks; r++)
			if (find_root(dom, rank_dom[r]) == g)
				members[k++] = r;
		if (k && split_group(topo, req, pool, members, k, ranks,
					 dom, rank_dom))
			goto out;
	}
	rc = 0;
out:
	hwloc_bitmap_free(pool);
	free(members);
	return rc;
}

int te_bind_compute(hwloc_topology_t topo, const struct te_bind_request *req,
		    struct te_bind_result *out, char *err, size_t errlen)
{
	struct te_bind_gpus gpus = { 0, NULL };
	struct domain *dom = NULL;
	size_t ndom = 0, *rank_dom = NULL, i;
	unsigned *step = NULL, r;
	hwloc_bitmap_t allowed = NULL;
	hwloc_const_nodeset_t allowed_nodes;
	char buf[256];
	int rc = -1;

	if (!out) {
		snprintf(err, errlen, "internal error: no result");
		return -1;
	}
	memset(out, 0, sizeof(*out));
	if (!topo || !req) {
		snprintf(err, errlen, "internal error: no topology or request");
		return -1;
	}
	if (req->ntasks < 1 || req->ntasks > TE_BIND_MAX_TASKS) {
		snprintf(err, errlen, "number of tasks on the node must be "
			 "1 to %d, not %u", TE_BIND_MAX_TASKS, req->ntasks);
		return -1;
	}
	if (req->ngpus > TE_BIND_MAX_GPUS || (req->ngpus && !req->gpus)) {
		snprintf(err, errlen, "step GPU list must hold 0 to %d "
			 "indexes, not %zu", TE_BIND_MAX_GPUS, req->ngpus);
		return -1;
	}
	if (req->mode != TE_BIND_MODE_NONE && req->mode != TE_BIND_MODE_NUMA &&
	    req->mode != TE_BIND_MODE_CORES) {
		snprintf(err, errlen, "unknown binding mode %d", (int)req->mode);
		return -1;
	}
	if (req->smt != TE_BIND_SMT_ALL && req->smt != TE_BIND_SMT_ONE) {
		snprintf(err, errlen, "unknown SMT policy %d", (int)req->smt);
		return -1;
	}

	allowed = hwloc_bitmap_dup(req->allowed ? req->allowed :
				   hwloc_topology_get_allowed_cpuset(topo));
	if (!allowed)
		goto oom;
	hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_allowed_cpuset(topo));
	hwloc_bitmap_and(allowed, allowed, hwloc_get_root_obj(topo)->cpuset);
	if (hwloc_bitmap_iszero(allowed)) {
		char b2[128];
		snprintf(err, errlen, "no allowed CPU is in this topology "
			 "(allowed %s, topology %s)",
			 req->allowed ? te_bind_set_str(req->allowed, buf, 128) : "-",
			 te_bind_set_str(hwloc_topology_get_allowed_cpuset(topo), b2,
				 sizeof(b2)));
		goto fail;
	}
	allowed_nodes = hwloc_topology_get_allowed_nodeset(topo);

	if (te_bind_gpus(topo, &gpus, err, errlen))
		goto fail;
	if (req->ngpus) {
		step = calloc(req->ngpus, sizeof(*step));
		if (!step)
			goto oom;
		if (step_gpus(req, gpus.n, step, err, errlen))
			goto fail;
	}

	out->ranks = calloc(req->ntasks, sizeof(*out->ranks));
	rank_dom = calloc(req->ntasks, sizeof(*rank_dom));
	if (!out->ranks || !rank_dom)
		goto oom;
	out->nranks = req->ntasks;
	for (r = 0; r < req->ntasks; r++) {
		out->ranks[r].rank = r;
		out->ranks[r].gpu = -1;
		out->ranks[r].cpuset = hwloc_bitmap_alloc();
		out->ranks[r].nodeset = hwloc_bitmap_alloc();
		if (!out->ranks[r].cpuset || !out->ranks[r].nodeset)
			goto oom;
	}

	if (req->ngpus) {
		ndom = req->ngpus;
		dom = calloc(ndom, sizeof(*dom));
		if (!dom)
			goto oom;
		for (i = 0; i < ndom; i++) {
			dom[i].cpus = hwloc_bitmap_alloc();
			if (!dom[i].cpus ||
			    gpu_domain(topo, &gpus.gpu[step[i]], allowed, &dom[i]))
				goto oom;
		}
		for (r = 0; r < req->ntasks; r++) {
			size_t j = req->ntasks <= ndom ? r :
				block_of(r, req->ntasks, ndom);
			rank_dom[r] = j;
			out->ranks[r].gpu = (int)step[j];
			memcpy(out->ranks[r].busid, gpus.gpu[step[j]].busid,
			       sizeof(out->ranks[r].busid));
		}
		if (req->ntasks < ndom) {
			te_cpulist_format(step + req->ntasks,
					  ndom - req->ntasks, buf, sizeof(buf));
			te_bind_note_add(out->note, sizeof(out->note), "%u rank%s for "
				 "%zu GPUs: GPU%s %s unused", req->ntasks,
				 req->ntasks > 1 ? "s" : "", ndom,
				 ndom - req->ntasks > 1 ? "s" : "", buf);
		} else if (req->ntasks > ndom) {
			te_bind_note_add(out->note, sizeof(out->note), "%u ranks for "
				 "%zu GPU%s: consecutive ranks share a GPU",
				 req->ntasks, ndom, ndom > 1 ? "s" : "");
		}
	} else {
		int nd = numa_domains(topo, req->ntasks, allowed, &dom, &ndom,
				      rank_dom, out->note, sizeof(out->note));
		if (nd == -2) {
			snprintf(err, errlen, "no NUMA node of the topology holds "
				 "an allowed CPU (%s)", te_bind_set_str(allowed, buf, 128));
			goto fail;
		}
		if (nd)
			goto oom;
	}

	for (r = 0; r < req->ntasks; r++) {
		struct te_bind_rank *rk = &out->ranks[r];

		if (dom[rank_dom[r]].note[0])
			te_bind_note_add(rk->note, sizeof(rk->note), "%s",
				 dom[rank_dom[r]].note);
		rk->bind = req->mode != TE_BIND_MODE_NONE;
		if (req->mode == TE_BIND_MODE_NONE) {
			hwloc_bitmap_copy(rk->cpuset, allowed);
		} else if (req->mode == TE_BIND_MODE_NUMA) {
			hwloc_bitmap_copy(rk->cpuset, dom[rank_dom[r]].cpus);
			if (req->smt == TE_BIND_SMT_ONE)
				smt_one(topo, rk->cpuset);
		}
	}
	if (req->mode == TE_BIND_MODE_CORES &&
	    cores_mode(topo, req, dom, ndom, rank_dom, out->ranks))
		goto oom;

	for (r = 0; r < req->ntasks; r++) {
		struct te_bind_rank *rk = &out->ranks[r];

		/* Defensive: the policy never yields these, and a rank must
		 * never leave the allowed set or end up unbound. */
		hwloc_bitmap_and(rk->cpuset, rk->cpuset, allowed);
		if (hwloc_bitmap_iszero(rk->cpuset)) {
			snprintf(err, errlen, "internal error: rank %u got no "
				 "CPU", r);
			goto fail;
		}
		hwloc_cpuset_to_nodeset(topo, rk->cpuset, rk->nodeset);
		hwloc_bitmap_and(rk->nodeset, rk->nodeset, allowed_nodes);
		if (hwloc_bitmap_iszero(rk->nodeset)) {
			hwloc_bitmap_copy(rk->nodeset, allowed_nodes);
			te_bind_note_add(rk->note, sizeof(rk->note), "memory of the "
				 "rank's NUMA node is not allowed: using "
				 "allowed nodes %s",
				 te_bind_set_str(allowed_nodes, buf, 64));
		}
	}
	rc = 0;
	goto done;
oom:
	snprintf(err, errlen, "out of memory computing the binding of %u "
		 "tasks", req->ntasks);
fail:
	te_bind_result_free(out);
done:
	if (dom) {
		for (i = 0; i < ndom; i++)
			hwloc_bitmap_free(dom[i].cpus);
		free(dom);
	}
	free(rank_dom);
	free(step);
	te_bind_gpus_free(&gpus);
	hwloc_bitmap_free(allowed);
	return rc;
}

