/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the step's fence choice (core/launch/fence_choice.c): one table of
 * node count, TreeWidth, site key and SLURM_PMIX_FENCE against the value
 * srun sets and whether it warns; the messages; the job side's rule. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "launch/fence_choice.h"
#include "settings/settings.h"
#include "util/strutil.h"
#include "tap.h"

#define NO_SITE NULL

struct row {
	unsigned nnodes, width;
	const char *site; /* fence-tree-min-nodes text, NULL: unset */
	const char *env, *decided;
	const char *want; /* SLURM_PMIX_FENCE to set */
	int warns, kept;
	unsigned tree_min;
};

static const struct row rows[] = {
	/* auto: the tree from TreeWidth on, ring below */
	{ 3, 50, NO_SITE, NULL, NULL, "ring", 0, 0, 50 },
	{ 49, 50, NO_SITE, NULL, NULL, "ring", 0, 0, 50 },
	{ 50, 50, NO_SITE, NULL, NULL, "tree", 0, 0, 50 },
	{ 64, 50, NO_SITE, NULL, NULL, "tree", 0, 0, 50 },
	{ 1024, 50, "auto", NULL, NULL, "tree", 0, 0, 50 },
	{ 16, 16, NO_SITE, NULL, NULL, "tree", 0, 0, 16 }, /* 23.11 */
	{ 15, 16, NO_SITE, NULL, NULL, "ring", 0, 0, 16 },
	{ 2, 2, NO_SITE, NULL, NULL, "tree", 0, 0, 2 },
	{ 1, 1, NO_SITE, NULL, NULL, "tree", 0, 0, 1 },
	/* TreeWidth unknown: Slurm's default 50 */
	{ 49, 0, NO_SITE, NULL, NULL, "ring", 0, 0, 50 },
	{ 50, 0, NO_SITE, NULL, NULL, "tree", 0, 0, 50 },
	/* no node count known: never a tree */
	{ 0, 50, NO_SITE, NULL, NULL, "ring", 0, 0, 50 },
	/* the site: off, above TreeWidth, below it (raised, said once it
	 * mattered) */
	{ 64, 50, "off", NULL, NULL, "ring", 0, 0, 0 },
	{ 64, 50, "100", NULL, NULL, "ring", 0, 0, 100 },
	{ 100, 50, "100", NULL, NULL, "tree", 0, 0, 100 },
	{ 49, 50, "16", NULL, NULL, "ring", 1, 0, 50 },
	{ 16, 50, "16", NULL, NULL, "ring", 1, 0, 50 },
	{ 15, 50, "16", NULL, NULL, "ring", 0, 0, 50 },
	{ 50, 50, "16", NULL, NULL, "tree", 0, 0, 50 },
	{ 50, 50, "50", NULL, NULL, "tree", 0, 0, 50 },
	/* the user's ring: always kept, site or not */
	{ 3, 50, NO_SITE, "ring", NULL, "ring", 0, 1, 50 },
	{ 64, 50, NO_SITE, "ring", NULL, "ring", 0, 1, 50 },
	{ 64, 50, "auto", "ring", NULL, "ring", 0, 1, 50 },
	/* the user's tree or mixed: kept from TreeWidth on, ring below */
	{ 3, 50, NO_SITE, "tree", NULL, "ring", 1, 0, 50 },
	{ 49, 50, NO_SITE, "tree", NULL, "ring", 1, 0, 50 },
	{ 50, 50, NO_SITE, "tree", NULL, "tree", 0, 1, 50 },
	{ 64, 50, "off", "tree", NULL, "tree", 0, 1, 50 },
	{ 3, 50, NO_SITE, "mixed", NULL, "ring", 1, 0, 50 },
	{ 64, 50, NO_SITE, "mixed", NULL, "mixed", 0, 1, 50 },
	{ 49, 0, NO_SITE, "tree", NULL, "ring", 1, 0, 50 },
	/* Slurm's spelling only: anything else is replaced, with a warning */
	{ 3, 50, NO_SITE, "Tree", NULL, "ring", 1, 0, 50 },
	{ 64, 50, NO_SITE, "TREE", NULL, "tree", 1, 0, 50 },
	{ 64, 50, NO_SITE, "ring ", NULL, "tree", 1, 0, 50 },
	{ 3, 50, NO_SITE, "auto", NULL, "ring", 1, 0, 50 },
	{ 3, 50, "off", "garbage\x01\xff", NULL, "ring", 1, 0, 0 },
	/* empty: as unset, silently */
	{ 3, 50, NO_SITE, "", NULL, "ring", 0, 0, 50 },
	{ 64, 50, NO_SITE, "", NULL, "tree", 0, 0, 50 },
	/* trainenv's own value from an enclosing step: not the user's */
	{ 3, 50, NO_SITE, "tree", "tree", "ring", 0, 0, 50 },
	{ 64, 50, NO_SITE, "ring", "ring", "tree", 0, 0, 50 },
	{ 3, 50, NO_SITE, "tree", "ring", "ring", 1, 0, 50 },
	{ 64, 50, NO_SITE, "ring", "tree", "ring", 0, 1, 50 },
};

static void site_value(const char *text, struct te_value *v)
{
	char err[TE_ERR_MAX];

	memset(v, 0, sizeof(*v));
	if (!text)
		return;
	if (te_value_parse(TE_S_FENCE_TREE_MIN_NODES, text, 0, v, err,
			   sizeof(err)) < 0)
		printf("# %s: %s\n", text, err);
	te_strlcpy(v->origin, "plugstack.conf argument 2", sizeof(v->origin));
	v->src = TE_SRC_ADMIN;
}

static void table(void)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct te_value site;
		struct te_fence_in in = { .nnodes = r->nnodes,
					  .tree_width = r->width,
					  .width_from = "slurm.conf",
					  .env = r->env,
					  .decided = r->decided };
		struct te_fence_choice c;
		char name[160], env[16];

		site_value(r->site, &site);
		in.site = r->site ? &site : NULL;
		te_clean_text(env, sizeof(env), r->env ? r->env : "(unset)",
			      12);
		te_snprintf(name, sizeof(name),
			    "%u nodes, TreeWidth %u, site "
			    "%s, %s=%s%s%s",
			    r->nnodes, r->width, r->site ? r->site : "-",
			    TE_FENCE_ENV, env, r->decided ? ", decided " : "",
			    r->decided ? r->decided : "");
		te_fence_choose(&in, &c);
		is_str(c.value, r->want, "%s: %s", name, r->want);
		is_int(c.warn[0] != '\0', r->warns, "%s: %s", name,
		       r->warns ? "warns" : "no warning");
		is_int(c.kept, r->kept, "%s: %s", name,
		       r->kept ? "the user's value kept" : "trainenv's value");
		is_int(c.tree_min, r->tree_min, "%s: tree from %u nodes", name,
		       r->tree_min);
		ok(c.why[0] && strncmp(c.why, c.value, strlen(c.value)) == 0,
		   "%s: the explanation starts with the fence", name);
		ok(te_is_printable(c.why, sizeof(c.why)) &&
			   te_is_printable(c.warn, sizeof(c.warn)),
		   "%s: printable text", name);
	}
}

static void messages(void)
{
	struct te_fence_in in = { .nnodes = 3,
				  .tree_width = 50,
				  .width_from = "slurm.conf",
				  .env = "tree" };
	struct te_fence_choice c;
	struct te_value site;
	char big[300];

	te_fence_choose(&in, &c);
	is_str(c.warn,
	       "SLURM_PMIX_FENCE=tree ignored: Slurm's tree fence is "
	       "no job-wide barrier on 3 nodes (fewer than TreeWidth 50: each "
	       "node would let its ranks go on their own); this step uses ring",
	       "tree below TreeWidth: the warning names the variable, the "
	       "nodes and TreeWidth");
	like(c.why, "ring (3 nodes < TreeWidth 50 (slurm.conf)",
	     "explained: ring, nodes below TreeWidth and where it was read");
	like(c.why, "SLURM_PMIX_FENCE=tree ignored", "explained: ignored");

	in.env = "mixed";
	te_fence_choose(&in, &c);
	like(c.warn,
	     "SLURM_PMIX_FENCE=mixed ignored: Slurm's tree fence "
	     "(mixed's fence without data) is no job-wide barrier on 3 nodes",
	     "mixed below TreeWidth: says why mixed is no barrier");

	in.env = NULL;
	in.nnodes = 52;
	te_fence_choose(&in, &c);
	is_str(c.why,
	       "tree (52 nodes >= TreeWidth 50 (slurm.conf): Slurm's "
	       "tree fence is a job-wide barrier there, and faster than the "
	       "ring)",
	       "tree: explained");

	in.width_from = NULL;
	in.tree_width = 0;
	in.nnodes = 3;
	te_fence_choose(&in, &c);
	is_str(c.why,
	       "ring (3 nodes < TreeWidth 50: Slurm's tree fence would "
	       "let each node go on its own)",
	       "TreeWidth unknown: 50, no source");

	site_value("16", &site);
	in.site = &site;
	in.nnodes = 20;
	in.width_from = "slurmctld";
	in.tree_width = 50;
	te_fence_choose(&in, &c);
	is_str(c.warn,
	       "the site's fence-tree-min-nodes=16 (plugstack.conf "
	       "argument 2) is below TreeWidth 50 (slurmctld), where Slurm's "
	       "tree fence is no job-wide barrier: this 20-node step uses ring",
	       "a site value below TreeWidth: raised, with a message");
	like(c.why, "fence-tree-min-nodes=16 is raised to TreeWidth",
	     "explained: raised");

	site_value("off", &site);
	te_fence_choose(&in, &c);
	is_str(c.why,
	       "ring (the site's fence-tree-min-nodes=off, "
	       "plugstack.conf argument 2)",
	       "site off: explained");

	site_value("100", &site);
	in.nnodes = 64;
	te_fence_choose(&in, &c);
	is_str(c.why,
	       "ring (64 nodes < 100, the site's fence-tree-min-nodes, "
	       "plugstack.conf argument 2)",
	       "site above TreeWidth: explained");

	/* a long hostile value: cut, cleaned */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[5] = '\n';
	in.site = NULL;
	in.nnodes = 3;
	in.env = big;
	te_fence_choose(&in, &c);
	like(c.warn,
	     "SLURM_PMIX_FENCE=xxxxx?xxxxxxxxxxxxxxxxxxxxxxxxxx... "
	     "ignored: Slurm knows ring, tree or mixed (it would run mixed); "
	     "this step uses ring",
	     "a value Slurm does not know: cut to 32 "
	     "bytes, control bytes shown as ?");
	ok(strlen(c.warn) < 200, "the warning stays short");
}

static void job_side(void)
{
	ok(te_fence_nodata_barrier("ring", NULL), "ring: a fence without "
						  "data is a barrier");
	ok(te_fence_nodata_barrier("ring", "tree"), "ring whoever set it");
	ok(te_fence_nodata_barrier("tree", "tree"), "a tree trainenv chose "
						    "or checked: a barrier");
	ok(te_fence_nodata_barrier("mixed", "mixed"), "a mixed trainenv "
						      "checked: a barrier");
	ok(!te_fence_nodata_barrier("tree", NULL), "a tree nobody checked: "
						   "not trusted");
	ok(!te_fence_nodata_barrier("tree", "ring"),
	   "a tree set after "
	   "trainenv's choice: not trusted");
	ok(!te_fence_nodata_barrier(NULL, NULL), "unset (Slurm's mixed): "
						 "the fence must carry data");
	ok(!te_fence_nodata_barrier(NULL, "tree"), "unset, whatever "
						   "TRAINENV_FENCE says");
	ok(!te_fence_nodata_barrier("garbage", "garbage"),
	   "a value Slurm "
	   "does not know (mixed runs): not trusted");
	ok(!te_fence_nodata_barrier("", ""), "empty: not trusted");
	is_str(te_fence_name(TE_FENCE_RING), "ring", "names: ring");
	is_str(te_fence_name(TE_FENCE_TREE), "tree", "names: tree");
	is_str(te_fence_name(TE_FENCE_MIXED), "mixed", "names: mixed");
}

int main(void)
{
	table();
	messages();
	job_side();
	return tap_done();
}
