/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bind: cores mode, the split of each group of ranks that share CPUs
 * among them (see CORES MODE SPLIT in bind.h), and the one-PU-per-core
 * filter (smt=one) of every mode. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "bind/bind.h"
#include "bind/bind_int.h"

/* Keeps, of every core that set touches, its lowest-numbered PU in set. */
void te_bind_smt_one(hwloc_topology_t topo, hwloc_bitmap_t set)
{
	hwloc_obj_t core = NULL;

	while ((core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE,
						  core))) {
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

static size_t find_root(struct te_bind_domain *d, size_t i)
{
	while (d[i].group != i) {
		d[i].group = d[d[i].group].group;
		i = d[i].group;
	}
	return i;
}

/* Objects that group PUs into cores, or the PUs when cores are unknown. */
static hwloc_obj_type_t core_type(hwloc_topology_t topo)
{
	return hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0
		       ? HWLOC_OBJ_CORE
		       : HWLOC_OBJ_PU;
}

struct split_order {
	int weight; /* CPUs in the rank's own domain */
	size_t pos; /* position of the rank in the group */
};

static int split_order_cmp(const void *a, const void *b)
{
	const struct split_order *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* One group's split (split_group): the units that the pool touches, how
 * many ranks each may take and how many each rank needs. */
struct split {
	hwloc_obj_t *units;
	size_t c;	      /* units found */
	size_t *cap, *demand; /* [c] and [k] */
	size_t first_free;    /* no free unit before it */
	int by_pu, overlap;
};

/* The units of pool: its cores, or hardware threads when they are fewer
 * than k. 0, or -1 when the pool holds no PU. */
static int split_units(hwloc_topology_t topo, hwloc_const_cpuset_t pool,
		       size_t k, size_t cap_units, struct split *s)
{
	hwloc_obj_type_t ut = core_type(topo);
	hwloc_obj_t o = NULL;

	while ((o = hwloc_get_next_obj_by_type(topo, ut, o)) &&
	       s->c < cap_units)
		if (hwloc_bitmap_intersects(o->cpuset, pool))
			s->units[s->c++] = o;
	if (s->c < k) {
		/* Fewer cores than ranks: hardware threads, in topology order
		 * so that the threads of one core go to neighbouring ranks. */
		s->by_pu = 1;
		s->c = 0;
		o = NULL;
		while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU,
						       o)) &&
		       s->c < cap_units)
			if (hwloc_bitmap_isset(pool, o->os_index))
				s->units[s->c++] = o;
		if (s->c == 0)
			return -1;
		s->overlap = s->c < k;
	}
	return 0;
}

/* Capacities of the units and demands of the k ranks: blocks by position
 * in the group. */
static void split_blocks(struct split *s, size_t k)
{
	size_t i, j, c = s->c;

	if (!s->overlap) {
		for (j = 0; j < c; j++)
			s->cap[j] = 1;
		for (i = 0; i < k; i++)
			s->demand[i] = (i + 1) * c / k - i * c / k;
	} else {
		for (i = 0; i < k; i++) {
			s->cap[i * c / k]++;
			s->demand[i] = 1;
		}
	}
}

/* The rank at pos in the group takes its demand of free units, those
 * inside its own domain first. */
static void split_take(hwloc_topology_t topo, const struct te_bind_request *req,
		       hwloc_const_cpuset_t pool, size_t k, struct split *s,
		       size_t pos, struct te_bind_rank *rk,
		       hwloc_const_cpuset_t own)
{
	size_t need = s->demand[pos], j, c = s->c;
	int pass, outside = 0;

	hwloc_bitmap_zero(rk->cpuset);
	while (s->first_free < c && s->cap[s->first_free] == 0)
		s->first_free++;
	for (pass = 0; pass < 2 && need; pass++) {
		for (j = s->first_free; j < c && need; j++) {
			if (!s->cap[j] ||
			    (pass == 0 && !hwloc_bitmap_intersects(
						  s->units[j]->cpuset, own)))
				continue;
			hwloc_bitmap_or(rk->cpuset, rk->cpuset,
					s->units[j]->cpuset);
			s->cap[j]--;
			need--;
			outside |= pass;
		}
	}
	hwloc_bitmap_and(rk->cpuset, rk->cpuset, pool);
	if (!s->by_pu && req->smt == TE_BIND_SMT_ONE)
		te_bind_smt_one(topo, rk->cpuset);
	if (s->overlap)
		te_bind_note_add(rk->note, sizeof(rk->note),
				 "%zu ranks share "
				 "%zu CPU%s: CPUs overlap",
				 k, c, c > 1 ? "s" : "");
	else if (s->by_pu)
		te_bind_note_add(rk->note, sizeof(rk->note),
				 "%zu ranks share "
				 "fewer cores: split by hardware thread",
				 k);
	if (outside)
		te_bind_note_add(rk->note, sizeof(rk->note),
				 "some CPUs are "
				 "outside the GPU's locality");
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
		       const struct te_bind_domain *dom, const size_t *rank_dom)
{
	int ncores = hwloc_get_nbobjs_by_type(topo, core_type(topo));
	int npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	struct split s = { 0 };
	struct split_order *order = NULL;
	size_t cap_units, i;
	int rc = -1;

	if (ncores <= 0 || npus <= 0)
		return -1;
	cap_units = (size_t)(ncores > npus ? ncores : npus);
	s.units = calloc(cap_units, sizeof(*s.units));
	s.cap = calloc(cap_units, sizeof(*s.cap));
	s.demand = calloc(k, sizeof(*s.demand));
	order = calloc(k, sizeof(*order));
	if (!s.units || !s.cap || !s.demand || !order)
		goto out;
	if (split_units(topo, pool, k, cap_units, &s))
		goto out;
	split_blocks(&s, k);
	for (i = 0; i < k; i++) {
		order[i].weight =
			hwloc_bitmap_weight(dom[rank_dom[members[i]]].cpus);
		order[i].pos = i;
	}
	qsort(order, k, sizeof(*order), split_order_cmp);

	for (i = 0; i < k; i++) {
		size_t pos = order[i].pos;

		split_take(topo, req, pool, k, &s, pos, &ranks[members[pos]],
			   dom[rank_dom[members[pos]]].cpus);
	}
	rc = 0;
out:
	free(s.units);
	free(s.cap);
	free(s.demand);
	free(order);
	return rc;
}

int te_bind_cores_mode(hwloc_topology_t topo, const struct te_bind_request *req,
		       struct te_bind_domain *dom, size_t ndom,
		       const size_t *rank_dom, struct te_bind_rank *ranks)
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
				size_t a = find_root(dom, i),
				       b = find_root(dom, j);
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
		if (k && split_group(topo, req, pool, members, k, ranks, dom,
				     rank_dom))
			goto out;
	}
	rc = 0;
out:
	hwloc_bitmap_free(pool);
	free(members);
	return rc;
}
