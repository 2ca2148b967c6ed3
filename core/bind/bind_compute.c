/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bind: the mapping of a node's ranks to GPUs, CPUs and memory
 * (te_bind_compute; the policy is documented in bind.h). */
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
		      hwloc_const_cpuset_t allowed, struct te_bind_domain *d)
{
	hwloc_obj_t o = g->locality;
	hwloc_bitmap_t numa_cpus = hwloc_bitmap_alloc();
	char name[64];
	unsigned i;

	if (!numa_cpus)
		return -1;
	if (o == hwloc_get_root_obj(topo)) {
		te_bind_note_add(d->note, sizeof(d->note),
				 "GPU %s has no NUMA "
				 "locality: using the whole machine",
				 g->busid);
	} else {
		/* Is the locality smaller than its NUMA node(s)? Then the
		 * topology has no NUMA node for it (no NUMA info). */
		hwloc_bitmap_foreach_begin(i, o->nodeset)
		{
			hwloc_obj_t nn =
				hwloc_get_numanode_obj_by_os_index(topo, i);
			if (nn)
				hwloc_bitmap_or(numa_cpus, numa_cpus,
						nn->cpuset);
		}
		hwloc_bitmap_foreach_end();
		if (!hwloc_bitmap_isequal(numa_cpus, o->cpuset) &&
		    hwloc_bitmap_isincluded(o->cpuset, numa_cpus)) {
			obj_name(o, name, sizeof(name));
			te_bind_note_add(d->note, sizeof(d->note),
					 "GPU %s has no NUMA "
					 "node of its own: using its %s",
					 g->busid, name);
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
		te_bind_note_add(d->note, sizeof(d->note),
				 "no allowed CPU near GPU %s "
				 "(%s): using the allowed CPUs of %s",
				 g->busid, name, name2);
	}
	return 0;
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
				snprintf(err, errlen,
					 "GPU index %u is out of "
					 "range: this node has %zu GPUs "
					 "(0-%zu)",
					 step[i], node_gpus, node_gpus - 1);
			else
				snprintf(err, errlen,
					 "GPU index %u is out of "
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
			hwloc_const_cpuset_t allowed,
			struct te_bind_domain **domp, size_t *ndomp,
			size_t *rank_dom, char *note, size_t notelen)
{
	int nnodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	hwloc_bitmap_t *node_cpus = NULL, seen = hwloc_bitmap_alloc();
	struct te_bind_domain *dom = NULL;
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
		if (hwloc_bitmap_iszero(c) ||
		    hwloc_bitmap_intersects(c, seen)) {
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
	te_bind_note_add(note, notelen,
			 "no GPU: %u rank%s over %zu NUMA node%s", ntasks,
			 ntasks > 1 ? "s" : "", n, n > 1 ? "s" : "");
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

/* What te_bind_compute's steps share. A step returns 0, STEP_FAIL with
 * err set, or STEP_OOM. */
struct compute {
	hwloc_topology_t topo;
	const struct te_bind_request *req;
	struct te_bind_result *out;
	struct te_bind_gpus gpus;
	unsigned *step; /* the step's GPUs, sorted */
	hwloc_bitmap_t allowed;
	struct te_bind_domain *dom;
	size_t ndom, *rank_dom;
	char *err;
	size_t errlen;
};
#define STEP_FAIL (-1)
#define STEP_OOM (-2)

static int check_request(hwloc_topology_t topo,
			 const struct te_bind_request *req, char *err,
			 size_t errlen)
{
	if (!topo || !req) {
		snprintf(err, errlen, "internal error: no topology or request");
		return -1;
	}
	if (req->ntasks < 1 || req->ntasks > TE_BIND_MAX_TASKS) {
		snprintf(err, errlen,
			 "number of tasks on the node must be "
			 "1 to %d, not %u",
			 TE_BIND_MAX_TASKS, req->ntasks);
		return -1;
	}
	if (req->ngpus > TE_BIND_MAX_GPUS || (req->ngpus && !req->gpus)) {
		snprintf(err, errlen,
			 "step GPU list must hold 0 to %d "
			 "indexes, not %zu",
			 TE_BIND_MAX_GPUS, req->ngpus);
		return -1;
	}
	if (req->mode != TE_BIND_MODE_NONE && req->mode != TE_BIND_MODE_NUMA &&
	    req->mode != TE_BIND_MODE_CORES) {
		snprintf(err, errlen, "unknown binding mode %d",
			 (int)req->mode);
		return -1;
	}
	if (req->smt != TE_BIND_SMT_ALL && req->smt != TE_BIND_SMT_ONE) {
		snprintf(err, errlen, "unknown SMT policy %d", (int)req->smt);
		return -1;
	}
	return 0;
}

/* The CPUs the ranks may have: the request's, within the topology's. */
static int compute_allowed(struct compute *c)
{
	hwloc_topology_t topo = c->topo;
	char buf[128], b2[128];

	c->allowed = hwloc_bitmap_dup(
		c->req->allowed ? c->req->allowed
				: hwloc_topology_get_allowed_cpuset(topo));
	if (!c->allowed)
		return STEP_OOM;
	hwloc_bitmap_and(c->allowed, c->allowed,
			 hwloc_topology_get_allowed_cpuset(topo));
	hwloc_bitmap_and(c->allowed, c->allowed,
			 hwloc_get_root_obj(topo)->cpuset);
	if (hwloc_bitmap_iszero(c->allowed)) {
		snprintf(
			c->err, c->errlen,
			"no allowed CPU is in this topology "
			"(allowed %s, topology %s)",
			c->req->allowed ? te_bind_set_str(c->req->allowed, buf,
							  sizeof(buf))
					: "-",
			te_bind_set_str(hwloc_topology_get_allowed_cpuset(topo),
					b2, sizeof(b2)));
		return STEP_FAIL;
	}
	return 0;
}

/* The node's GPUs, and the step's among them, checked and sorted. */
static int compute_gpus(struct compute *c)
{
	if (te_bind_gpus(c->topo, &c->gpus, c->err, c->errlen))
		return STEP_FAIL;
	if (c->req->ngpus) {
		c->step = calloc(c->req->ngpus, sizeof(*c->step));
		if (!c->step)
			return STEP_OOM;
		if (step_gpus(c->req, c->gpus.n, c->step, c->err, c->errlen))
			return STEP_FAIL;
	}
	return 0;
}

/* The result's ranks, not yet placed, and their domain indexes. */
static int alloc_ranks(struct compute *c)
{
	struct te_bind_result *out = c->out;
	unsigned r;

	out->ranks = calloc(c->req->ntasks, sizeof(*out->ranks));
	c->rank_dom = calloc(c->req->ntasks, sizeof(*c->rank_dom));
	if (!out->ranks || !c->rank_dom)
		return STEP_OOM;
	out->nranks = c->req->ntasks;
	for (r = 0; r < c->req->ntasks; r++) {
		out->ranks[r].rank = r;
		out->ranks[r].gpu = -1;
		out->ranks[r].cpuset = hwloc_bitmap_alloc();
		out->ranks[r].nodeset = hwloc_bitmap_alloc();
		if (!out->ranks[r].cpuset || !out->ranks[r].nodeset)
			return STEP_OOM;
	}
	return 0;
}

/* With GPUs: a domain per step GPU, ranks in blocks over them. */
static int gpu_domains(struct compute *c)
{
	const struct te_bind_request *req = c->req;
	struct te_bind_result *out = c->out;
	size_t ndom = req->ngpus, i;
	char buf[256];
	unsigned r;

	c->ndom = ndom;
	c->dom = calloc(ndom, sizeof(*c->dom));
	if (!c->dom)
		return STEP_OOM;
	for (i = 0; i < ndom; i++) {
		c->dom[i].cpus = hwloc_bitmap_alloc();
		if (!c->dom[i].cpus ||
		    gpu_domain(c->topo, &c->gpus.gpu[c->step[i]], c->allowed,
			       &c->dom[i]))
			return STEP_OOM;
	}
	for (r = 0; r < req->ntasks; r++) {
		size_t j = req->ntasks <= ndom ? r
					       : block_of(r, req->ntasks, ndom);
		c->rank_dom[r] = j;
		out->ranks[r].gpu = (int)c->step[j];
		memcpy(out->ranks[r].busid, c->gpus.gpu[c->step[j]].busid,
		       sizeof(out->ranks[r].busid));
	}
	if (req->ntasks < ndom) {
		te_cpulist_format(c->step + req->ntasks, ndom - req->ntasks,
				  buf, sizeof(buf));
		te_bind_note_add(out->note, sizeof(out->note),
				 "%u rank%s for "
				 "%zu GPUs: GPU%s %s unused",
				 req->ntasks, req->ntasks > 1 ? "s" : "", ndom,
				 ndom - req->ntasks > 1 ? "s" : "", buf);
	} else if (req->ntasks > ndom) {
		te_bind_note_add(out->note, sizeof(out->note),
				 "%u ranks for "
				 "%zu GPU%s: consecutive ranks share a GPU",
				 req->ntasks, ndom, ndom > 1 ? "s" : "");
	}
	return 0;
}

/* The domains and each rank's: the step's GPUs, or the NUMA nodes. */
static int compute_domains(struct compute *c)
{
	char buf[128];
	int nd;

	if (c->req->ngpus)
		return gpu_domains(c);
	nd = numa_domains(c->topo, c->req->ntasks, c->allowed, &c->dom,
			  &c->ndom, c->rank_dom, c->out->note,
			  sizeof(c->out->note));
	if (nd == -2) {
		snprintf(c->err, c->errlen,
			 "no NUMA node of the topology holds "
			 "an allowed CPU (%s)",
			 te_bind_set_str(c->allowed, buf, sizeof(buf)));
		return STEP_FAIL;
	}
	return nd ? STEP_OOM : 0;
}

/* Each rank's CPUs by the mode: all allowed, its domain, or its cores. */
static int place_ranks(struct compute *c)
{
	const struct te_bind_request *req = c->req;
	unsigned r;

	for (r = 0; r < req->ntasks; r++) {
		struct te_bind_rank *rk = &c->out->ranks[r];
		const struct te_bind_domain *d = &c->dom[c->rank_dom[r]];

		if (d->note[0])
			te_bind_note_add(rk->note, sizeof(rk->note), "%s",
					 d->note);
		rk->bind = req->mode != TE_BIND_MODE_NONE;
		if (req->mode == TE_BIND_MODE_NONE) {
			hwloc_bitmap_copy(rk->cpuset, c->allowed);
		} else if (req->mode == TE_BIND_MODE_NUMA) {
			hwloc_bitmap_copy(rk->cpuset, d->cpus);
			if (req->smt == TE_BIND_SMT_ONE)
				te_bind_smt_one(c->topo, rk->cpuset);
		}
	}
	if (req->mode == TE_BIND_MODE_CORES &&
	    te_bind_cores_mode(c->topo, req, c->dom, c->ndom, c->rank_dom,
			       c->out->ranks))
		return STEP_OOM;
	return 0;
}

/* Each rank's CPUs checked, and its memory: the NUMA nodes of its CPUs. */
static int rank_memory(struct compute *c)
{
	hwloc_const_nodeset_t allowed_nodes =
		hwloc_topology_get_allowed_nodeset(c->topo);
	char buf[64];
	unsigned r;

	for (r = 0; r < c->req->ntasks; r++) {
		struct te_bind_rank *rk = &c->out->ranks[r];

		/* Defensive: the policy never yields these, and a rank must
		 * never leave the allowed set or end up unbound. */
		hwloc_bitmap_and(rk->cpuset, rk->cpuset, c->allowed);
		if (hwloc_bitmap_iszero(rk->cpuset)) {
			snprintf(c->err, c->errlen,
				 "internal error: rank %u "
				 "got no CPU",
				 r);
			return STEP_FAIL;
		}
		hwloc_cpuset_to_nodeset(c->topo, rk->cpuset, rk->nodeset);
		hwloc_bitmap_and(rk->nodeset, rk->nodeset, allowed_nodes);
		if (hwloc_bitmap_iszero(rk->nodeset)) {
			hwloc_bitmap_copy(rk->nodeset, allowed_nodes);
			te_bind_note_add(
				rk->note, sizeof(rk->note),
				"memory of the "
				"rank's NUMA node is not allowed: using "
				"allowed nodes %s",
				te_bind_set_str(allowed_nodes, buf,
						sizeof(buf)));
		}
	}
	return 0;
}

int te_bind_compute(hwloc_topology_t topo, const struct te_bind_request *req,
		    struct te_bind_result *out, char *err, size_t errlen)
{
	struct compute c = { .topo = topo,
			     .req = req,
			     .out = out,
			     .gpus = { 0, NULL },
			     .err = err,
			     .errlen = errlen };
	size_t i;
	int rc;

	if (!out) {
		snprintf(err, errlen, "internal error: no result");
		return -1;
	}
	memset(out, 0, sizeof(*out));
	if (check_request(topo, req, err, errlen))
		return -1;

	rc = compute_allowed(&c);
	if (!rc)
		rc = compute_gpus(&c);
	if (!rc)
		rc = alloc_ranks(&c);
	if (!rc)
		rc = compute_domains(&c);
	if (!rc)
		rc = place_ranks(&c);
	if (!rc)
		rc = rank_memory(&c);
	if (rc == STEP_OOM)
		snprintf(err, errlen,
			 "out of memory computing the binding "
			 "of %u tasks",
			 req->ntasks);
	if (rc)
		te_bind_result_free(out);
	if (c.dom) {
		for (i = 0; i < c.ndom; i++)
			hwloc_bitmap_free(c.dom[i].cpus);
		free(c.dom);
	}
	free(c.rank_dom);
	free(c.step);
	te_bind_gpus_free(&c.gpus);
	hwloc_bitmap_free(c.allowed);
	return rc ? -1 : 0;
}
