/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health in the job prolog (issue 34, item 2): the site's health
 * items as plugstack.conf gives them, the prolog's own keys, the user's
 * --train-health text, what the prolog does with a node's results, and
 * the per-job verdict file the job's steps read. Pure. */
#ifndef TE_HEALTH_PROLOG_H
#define TE_HEALTH_PROLOG_H

#include <stddef.h>

#include "health/health.h"

/* ------------------------------------------------------- the site's items */

#define TE_HEALTH_ITEMS_MAX 2048

/* The site's health keys come as plugstack.conf or a conf= file gave
 * them (core/settings keeps them as "KEY=VALUE" items separated by one
 * blank): te_health_site_load below checks and reads them. */

/* ----------------------------------------------------- the prolog's keys */

/* What a node that fails a check with action drain does to the job's
 * start: it is drained and the prolog passes, leaving a verdict for the
 * job's steps (verdict, the default), or it is drained and the prolog
 * fails, so Slurm requeues the job held or cancels it (fail). */
enum te_health_on_fail {
	TE_HOF_VERDICT,
	TE_HOF_FAIL
};

/* The most the prolog's helper spends on the controller for a drain:
 * sinfo twice and scontrol, 10 s each, then the cap's second look (a
 * second, sinfo, scontrol). The plugin's wait and the helper's deadline
 * both count it. */
#define TE_HEALTH_PROLOG_DRAIN_S 51

#define TE_HEALTH_ROOT_MAX 200
struct te_health_prolog_policy {
	enum te_health_on_fail on_fail;
	/* health_test_root=DIR: a stand-in sysfs tree for tests, "%n" the
	 * node's name; a site key only (plugstack.conf, root's), never the
	 * job's environment. "": /sys. */
	char test_root[TE_HEALTH_ROOT_MAX];
};

void te_health_prolog_init(struct te_health_prolog_policy *p);
/* health_on_fail=fail|verdict, health_test_root=DIR (absolute, no "..",
 * letters, digits, '/', '-', '_', '.', and "%n"): 1, 0 (not one), -1. */
int te_health_prolog_set(struct te_health_prolog_policy *p, const char *key,
			 const char *val, const char *where, char *err,
			 size_t errlen);

/* The site's items back into the three policies (each initialised
 * first). 0, or -1 with err. */
int te_health_site_load(const char *items, struct te_health_policy *hp,
			struct te_drain_policy *dp,
			struct te_health_prolog_policy *pp, char *err,
			size_t errlen);

/* DIR with each "%n" replaced by node: 0, or -1 (too long). */
int te_health_root_for(const char *tmpl, const char *node, char *out,
		       size_t len);

/* ------------------------------------------------------- the user's text */

/* --train-health=ITEM[;ITEM...]: an item is a list of checks ("ib,gpu",
 * added to the site's) or KEY=VALUE, KEY a health key with or without
 * its "health_" ("ib_rate=400", "gpu_action=exclude"). Into user (a
 * policy the caller initialised). 0, or -1 with err naming the option. */
#define TE_HEALTH_OPTION "--train-health"
int te_health_user_parse(struct te_health_policy *user, const char *text,
			 char *err, size_t errlen);

/* ----------------------------------------------------- the job's policy */

/* A job's node health policies: the site's (with its drain and prolog
 * keys), the user's --train-health as parsed, and the two merged (the
 * site's made stricter by the user's). */
struct te_health_job_policy {
	struct te_health_policy site, user, merged;
	struct te_drain_policy drain;
	struct te_health_prolog_policy prolog;
};
/* From the site's items (NULL: none) and the user's text (NULL or "":
 * none). 0; -1 with err when the site's items are bad (nothing in jp is
 * usable); -2 with err when the user's text does not parse or would
 * weaken the site's: the user's is then empty and merged the site's. The
 * one reading of both for srun, the prolog, the step and the launch. */
int te_health_job_policy(const char *site_items, const char *user_text,
			 struct te_health_job_policy *jp, char *err,
			 size_t errlen);

/* The checks a user's --train-health names or makes stricter, run as the
 * user in the step (trainenv-health --step) rather than as root in the
 * job prolog, which runs the site's alone: merged (te_health_policy_merge
 * of site and user) cut to the InfiniBand, Ethernet and GPU checks the
 * user's text touches (a check named, a threshold or an action given).
 * What needs root or is the node's, not the job's, stays with the prolog:
 * the hook, the XIDs (/dev/kmsg), the node's GPU count (a job's cgroup
 * shows only its GPUs), the storage check (the launch's). 1 when a check
 * is left to run, else 0. */
int te_health_step_policy(const struct te_health_policy *site,
			  const struct te_health_policy *user,
			  const struct te_health_policy *merged,
			  struct te_health_policy *out);

/* --------------------------------------------------------- the decision */

/* What the prolog does with a node's results under the job's policy
 * (te_health_action_for for each failed or erred result). */
struct te_health_prolog_outcome {
	int n_drain, n_exclude, n_warn;
	char drain_line[TE_HEALTH_TEXT_MAX];   /* the first to drain for */
	char exclude_line[TE_HEALTH_TEXT_MAX]; /* the first failure that
						* keeps the node out */
};
void te_health_prolog_decide(const struct te_health_set *set,
			     const struct te_health_policy *site,
			     const struct te_health_policy *merged,
			     struct te_health_prolog_outcome *o);

/* ------------------------------------------------------- the verdict file */

/* The verdict the prolog leaves for the job's steps on a node it keeps
 * out of the job (root's file, /run/trainenv/health/job.JOBID):
 *   trainenv-health-verdict 1
 *   node NAME
 *   ACTION TEXT          (one line per failure: drain or exclude)
 * Encoding cleans every field to printable ASCII. */
#define TE_HEALTH_VERDICT_MAX 4096
#define TE_HEALTH_VERDICT_DIR "/run/trainenv/health"
/* The verdict's path for job on node (the prolog writes it, the step
 * reads it, the epilog removes it): 0, or -1 (did not fit). */
int te_health_verdict_path(unsigned long job, const char *node, char *path,
			   size_t len);
int te_health_verdict_encode(const char *node, const struct te_health_set *set,
			     const struct te_health_policy *site,
			     const struct te_health_policy *merged, char *buf,
			     size_t len);
/* The file's text (hostile: any bytes, any length up to len): 1 with the
 * node and the first failure's line ("ACTION TEXT"), 0 when it names no
 * failure, -1 with err when it is not a verdict. */
int te_health_verdict_decode(const char *buf, size_t len, char *node,
			     size_t nodelen, char *line, size_t linelen,
			     char *err, size_t errlen);

/* ------------------------------------------------ the job's AdminComment */

/* The prolog notes a node it keeps out of the job in the job's
 * AdminComment (root's field: users cannot forge it; scontrol show job and
 * sacct show it after the job): "trainenv: NODE: ACTION TEXT", entries
 * joined by "; ", the site's own text kept in front. Slurm has no append,
 * so each node reads, adds and writes, then reads again (nodes failing at
 * once may overwrite each other). */
#define TE_HEALTH_COMMENT_MAX 1000 /* the whole comment */
#define TE_HEALTH_COMMENT_NODES \
	8 /* trainenv's entries; the drain
					   reasons name the rest */
#define TE_HEALTH_COMMENT_READ \
	4096 /* squeue's field width: a value that
					   fills it was cut */
/* current: squeue's admin_comment field (trailing blanks, "(null)": no
 * comment). 1 with the comment to write in out; 0 when node's entry is
 * there already; -1 when there is no room (too long, cut, or as many
 * entries as TE_HEALTH_COMMENT_NODES) or current is not one printable
 * line (never written back). */
int te_health_comment_compose(const char *current, const char *node,
			      const char *line, char *out, size_t len);

#endif
