/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The step's fence algorithm (SLURM_PMIX_FENCE) from its node count, the
 * cluster's TreeWidth, the site key and the user's value; and whether the
 * job side may use a fence without data as a barrier. See fence_choice.h. */
#include "config.h"

#include <string.h>

#include "launch/fence_choice.h"
#include "util/strutil.h"

/* how much of a value Slurm does not know a warning repeats */
#define TE_FENCE_SHOW_MAX 32

const char *te_fence_name(enum te_fence_algo a)
{
	return a == TE_FENCE_TREE    ? "tree"
	       : a == TE_FENCE_MIXED ? "mixed"
				     : "ring";
}

/* Slurm's own spelling only (pmixp_info.c compares exactly): -1 unknown */
static int fence_parse(const char *s)
{
	if (!strcmp(s, "ring"))
		return TE_FENCE_RING;
	if (!strcmp(s, "tree"))
		return TE_FENCE_TREE;
	if (!strcmp(s, "mixed"))
		return TE_FENCE_MIXED;
	return -1;
}

/* The choice when nobody (usable) set the variable; writes why. */
static void choose_auto(const struct te_fence_in *in,
			struct te_fence_choice *out)
{
	const struct te_value *s = in->site;
	const char *where = s && s->set && s->origin[0] ? s->origin : "";
	unsigned w = out->tree_width;
	char from[96] = "";

	if (in->width_from && in->width_from[0])
		te_snprintf(from, sizeof(from), " (%s)", in->width_from);
	out->tree_min = w;
	if (s && s->set && s->word == TE_W_FENCE_TREE_OFF) {
		out->tree_min = 0;
		out->algo = TE_FENCE_RING;
		te_snprintf(out->why, sizeof(out->why),
			    "ring (the site's "
			    "fence-tree-min-nodes=off%s%s)",
			    where[0] ? ", " : "", where);
		return;
	}
	if (s && s->set && s->word == TE_W_VALUE && s->num > w) {
		out->tree_min = s->num > 0xffffffffu ? 0xffffffffu
						     : (unsigned)s->num;
		out->algo = in->nnodes >= out->tree_min ? TE_FENCE_TREE
							: TE_FENCE_RING;
		te_snprintf(out->why, sizeof(out->why),
			    "%s (%u nodes %s %u, "
			    "the site's fence-tree-min-nodes%s%s)",
			    te_fence_name(out->algo), in->nnodes,
			    out->algo == TE_FENCE_TREE ? ">=" : "<",
			    out->tree_min, where[0] ? ", " : "", where);
		return;
	}
	out->algo = in->nnodes >= w ? TE_FENCE_TREE : TE_FENCE_RING;
	if (out->algo == TE_FENCE_TREE)
		te_snprintf(out->why, sizeof(out->why),
			    "tree (%u nodes >= "
			    "TreeWidth %u%s: Slurm's tree fence is a job-wide "
			    "barrier there, and faster than the ring)",
			    in->nnodes, w, from);
	else
		te_snprintf(out->why, sizeof(out->why),
			    "ring (%u nodes < "
			    "TreeWidth %u%s: Slurm's tree fence would let each "
			    "node go on its own)",
			    in->nnodes, w, from);
	/* a site value below TreeWidth was raised: say so where it mattered */
	if (s && s->set && s->word == TE_W_VALUE && s->num < w &&
	    in->nnodes >= s->num && in->nnodes < w)
		te_snprintf(
			out->warn, sizeof(out->warn),
			"the site's "
			"fence-tree-min-nodes=%llu%s%s%s is below TreeWidth "
			"%u%s, where Slurm's tree fence is no job-wide "
			"barrier: this %u-node step uses ring",
			(unsigned long long)s->num, where[0] ? " (" : "", where,
			where[0] ? ")" : "", w, from, in->nnodes);
	if (s && s->set && s->word == TE_W_VALUE && s->num < w)
		te_appendf(out->why, sizeof(out->why),
			   "; the site's "
			   "fence-tree-min-nodes=%llu is raised to TreeWidth",
			   (unsigned long long)s->num);
}

void te_fence_choose(const struct te_fence_in *in, struct te_fence_choice *out)
{
	const char *env = in->env;
	char shown[TE_FENCE_SHOW_MAX + 8];
	int user;

	memset(out, 0, sizeof(*out));
	out->tree_width = in->tree_width ? in->tree_width
					 : TE_TREE_WIDTH_DEFAULT;
	/* trainenv's own value from an enclosing step is not the user's */
	if (env && (!env[0] || (in->decided && !strcmp(env, in->decided))))
		env = NULL;
	if (!env) {
		choose_auto(in, out);
		out->value = te_fence_name(out->algo);
		return;
	}
	user = fence_parse(env);
	if (user == TE_FENCE_RING ||
	    (user >= 0 && in->nnodes >= out->tree_width)) {
		out->algo = (enum te_fence_algo)user;
		out->value = te_fence_name(out->algo);
		out->kept = 1;
		out->tree_min = out->tree_width;
		if (user == TE_FENCE_RING)
			te_snprintf(out->why, sizeof(out->why),
				    "ring (%s=ring "
				    "from the environment, kept: a job-wide "
				    "barrier on any number of nodes)",
				    TE_FENCE_ENV);
		else
			te_snprintf(out->why, sizeof(out->why),
				    "%s (%s=%s "
				    "from the environment, kept: %u nodes >= "
				    "TreeWidth %u)",
				    out->value, TE_FENCE_ENV, out->value,
				    in->nnodes, out->tree_width);
		return;
	}
	choose_auto(in, out);
	out->value = te_fence_name(out->algo);
	out->warn[0] = '\0'; /* the user's value is what to talk about */
	if (user >= 0) {
		/* tree or mixed (whose fence without data is the tree) */
		te_snprintf(
			out->warn, sizeof(out->warn),
			"%s=%s ignored: "
			"Slurm's tree fence%s is no job-wide barrier on %u "
			"nodes (fewer than TreeWidth %u: each node would let "
			"its ranks go on their own); this step uses %s",
			TE_FENCE_ENV, env,
			user == TE_FENCE_MIXED ? " (mixed's fence without data)"
					       : "",
			in->nnodes, out->tree_width, out->value);
		te_appendf(out->why, sizeof(out->why), "; %s=%s ignored",
			   TE_FENCE_ENV, env);
		return;
	}
	te_clean_text(shown, sizeof(shown), env, TE_FENCE_SHOW_MAX);
	if (te_strnlen_cap(env, TE_FENCE_SHOW_MAX) > TE_FENCE_SHOW_MAX)
		te_appendf(shown, sizeof(shown), "...");
	te_snprintf(
		out->warn, sizeof(out->warn),
		"%s=%s ignored: Slurm knows "
		"ring, tree or mixed (it would run mixed); this step uses %s",
		TE_FENCE_ENV, shown, out->value);
	te_appendf(out->why, sizeof(out->why), "; %s=%s ignored", TE_FENCE_ENV,
		   shown);
}

int te_fence_nodata_barrier(const char *env, const char *decided)
{
	if (!env)
		return 0;
	if (!strcmp(env, "ring"))
		return 1;
	return (!strcmp(env, "tree") || !strcmp(env, "mixed")) && decided &&
	       !strcmp(env, decided);
}
