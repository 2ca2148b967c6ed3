/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmd's job prolog and epilog (SPANK job_prolog, job_epilog; as root,
 * on each node of the job): the node health checks the site's health keys
 * name, run by trainenv-health (the checks
 * in children abandoned at their bound, the drain with its guards, the
 * verdict file for the job's steps), and the verdict's removal at the
 * job's end. Nothing here waits past the helper's bound. The user's own
 * checks (--train-health) run as the user in each task of a step
 * (stepd_health.c), not here as root. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "jobprolog.h"
#include "state.h"
#include "health/health_prolog.h"
#include "util/runcap.h"
#include "util/strutil.h"

/* the helper's exit statuses (pmix/tool_health_prolog.c) */
#define HELPER_PASS 0
#define HELPER_VERDICT 1
#define HELPER_DRAINED_FAIL 3

#define OUT_MAX 8192

/* helper-dir/trainenv-health: the site's helper-dir (no job here: the
 * policy's default is the whole answer) or the package's libexec. */
static int helper_path(char *path, size_t len)
{
	const struct te_value *d = &te_plug.pol.def[TE_S_HELPER_DIR];

	return te_snprintf(path, len, "%s/%s",
			   d->set ? d->text : TE_PKGLIBEXECDIR,
			   TE_HEALTH_HELPER);
}

/* Each line the helper wrote, into slurmd's log. */
static void log_lines(char *out, int failed)
{
	char *save = NULL, *l;

	for (l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (failed)
			slurm_error(TE_PREFIX "%s", l);
		else
			slurm_info(TE_PREFIX "%s", l);
}

/* The helper's bound: its checks' (the site's health_timeout), the
 * controller's calls for a drain and the cap's second look
 * (TE_HEALTH_PROLOG_DRAIN_S), and
 * 5 s to start and write. */
static int helper_bound_ms(void)
{
	static struct te_health_policy hp;
	static struct te_drain_policy dp;
	static struct te_health_prolog_policy pp;
	char err[TE_ERR_MAX];

	if (te_health_site_load(te_plug.pol.health.items, &hp, &dp, &pp, err,
				sizeof(err)) < 0)
		hp.timeout_s = TE_HEALTH_TIMEOUT_DEFAULT;
	return (int)(hp.timeout_s + TE_HEALTH_PROLOG_DRAIN_S + 5) * 1000;
}

struct prolog_args {
	char job[16], uid[16], node[TE_HEALTH_NODE_MAX], gpus[256];
	char *argv[20];
};

static int prolog_argv(spank_t sp, struct prolog_args *a)
{
	uint32_t job = 0;
	uid_t uid = 0;
	const char *node = getenv("SLURMD_NODENAME");
	const char *gpus = getenv("SLURM_JOB_GPUS");
	int n = 0;

	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
		return -1;
	te_snprintf(a->job, sizeof(a->job), "%u", job);
	te_snprintf(a->uid, sizeof(a->uid), "%u", (unsigned)uid);
	a->argv[n++] = (char *)TE_HEALTH_HELPER;
	a->argv[n++] = (char *)"--prolog";
	a->argv[n++] = (char *)"--job";
	a->argv[n++] = a->job;
	a->argv[n++] = (char *)"--allow-uid";
	a->argv[n++] = a->uid;
	a->argv[n++] = (char *)"--site";
	a->argv[n++] = te_plug.pol.health.items;
	if (node && te_word_valid(node, sizeof(a->node), "-_.")) {
		te_strlcpy(a->node, node, sizeof(a->node));
		a->argv[n++] = (char *)"--node";
		a->argv[n++] = a->node;
	}
	/* slurmd's, for the job's GRES: "0,1,3" */
	if (gpus && gpus[0] && strlen(gpus) < sizeof(a->gpus) &&
	    strspn(gpus, "0123456789,") == strlen(gpus)) {
		te_strlcpy(a->gpus, gpus, sizeof(a->gpus));
		a->argv[n++] = (char *)"--gpus";
		a->argv[n++] = a->gpus;
	}
	a->argv[n] = NULL;
	return 0;
}

int te_job_prolog(spank_t sp)
{
	static struct prolog_args a;
	static char out[OUT_MAX];
	static char conf[TE_VALUE_MAX + 16];
	char *envp[] = { (char *)"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL,
			 NULL };
	const char *slurm_conf = getenv("SLURM_CONF");
	char path[TE_VALUE_MAX + 32], err[TE_ERR_MAX];
	struct te_spawn_out so;
	int code;

	if (!te_plug.policy_ok) {
		/* said by slurm_spank_init; never a prolog failure (it
		 * would drain the node for a configuration error) */
		return 0;
	}
	if (!te_plug.pol.health.n)
		return 0;
	/* slurmd's, in the prolog's environment: where sinfo and scontrol
	 * find the controller for a drain (configless, or not /etc/slurm) */
	if (slurm_conf && slurm_conf[0] == '/' &&
	    te_is_printable(slurm_conf, TE_VALUE_MAX)) {
		te_snprintf(conf, sizeof(conf), "SLURM_CONF=%s", slurm_conf);
		envp[1] = conf;
	}
	if (helper_path(path, sizeof(path)) < 0 || prolog_argv(sp, &a) < 0) {
		slurm_error(TE_PREFIX "health checks not run: cannot read the "
				      "job's id or the helper's path");
		return 0;
	}
	if (te_spawn_capture(path, a.argv, envp, helper_bound_ms(),
			     TE_SPAWN_STDERR, out, sizeof(out), &so, err,
			     sizeof(err)) < 0) {
		slurm_error(TE_PREFIX "health checks not run: %s: %s", path,
			    err);
		return 0;
	}
	if (so.killed || !WIFEXITED(so.status)) {
		log_lines(out, 1);
		slurm_error(TE_PREFIX "health checks of job %s: %s; the node "
				      "is not judged",
			    a.job,
			    so.killed ? "no answer within the bound (killed)"
				      : "the helper died");
		return 0;
	}
	code = WEXITSTATUS(so.status);
	log_lines(out, code != HELPER_PASS);
	if (code == HELPER_DRAINED_FAIL)
		return -1; /* drained by trainenv; Slurm requeues the job */
	if (code != HELPER_PASS && code != HELPER_VERDICT)
		slurm_error(TE_PREFIX "health checks of job %s: the helper "
				      "exited with status %d; the node is not "
				      "judged",
			    a.job, code);
	return 0;
}

int te_job_epilog(spank_t sp)
{
	const char *node = getenv("SLURMD_NODENAME");
	char path[128 + TE_HEALTH_NODE_MAX];
	uint32_t job = 0;

	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || !node ||
	    !te_word_valid(node, TE_HEALTH_NODE_MAX, "-_."))
		return 0;
	te_health_verdict_path(job, node, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		slurm_info(TE_PREFIX "cannot remove %s: %s", path,
			   strerror(errno));
	return 0;
}
