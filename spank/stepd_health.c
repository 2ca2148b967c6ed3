/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: reads the verdict the job prolog's health checks
 * left for this job on this node (root's file under /run/trainenv/health,
 * trainenv-health's), so that a step on a node the checks kept out of the
 * job fails at once, as a node fault, and --train-requeue (or a relaunch)
 * goes on without the node; and runs the user's own checks
 * (--train-health) as the user (trainenv-health --step). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "health/health_prolog.h"
#include "util/runcap.h"
#include "state.h"
#include "stepd_health.h"
#include "stepd_step.h"
#include "util/strutil.h"

/* 1 and the verdict's first failure (and the node's name) when the job
 * prolog left one against this node for the job; else 0. */
static int read_verdict(const char **node_out, char *first, size_t firstlen)
{
	char path[256], buf[TE_HEALTH_VERDICT_MAX], node[TE_HEALTH_NODE_MAX];
	char err[128];
	struct stat st;
	ssize_t got;
	int fd;

	/* slurmstepd's own name for its node (it sets SLURMD_NODENAME in its
	 * environment from slurmd's configuration), as the prolog used: not
	 * the step's node list, which a user's own launch could shape
	 * (review finding 7) */
	const char *me = getenv("SLURMD_NODENAME");

	if (!me || !te_word_valid(me, TE_HEALTH_NODE_MAX, "-_."))
		me = te_step.slurm_node;
	if (!me[0])
		return 0;
	if (te_health_verdict_path(te_step.job_id, me, path, sizeof(path)) < 0)
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	/* root's regular file, written by trainenv-health, nobody else's */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022)) {
		close(fd);
		return 0;
	}
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	if (te_health_verdict_decode(buf, (size_t)got, node, sizeof(node),
				     first, firstlen, err, sizeof(err)) != 1)
		return 0;
	*node_out = me;
	return 1;
}

/* trainenv-health --step's bound past the checks' own (health_timeout):
 * to start, and to be killed with its children */
#define USER_SLACK_S 5

int te_stepd_health_verdict(char *line, size_t linelen, char *why,
			    size_t whylen)
{
	char first[TE_HEALTH_TEXT_MAX + 16];
	const char *me;

	if (!read_verdict(&me, first, sizeof(first)))
		return 0;
	te_snprintf(line, linelen,
		    "node %s: left out of this job by the job prolog's health "
		    "checks: %s",
		    me, first);
	te_snprintf(why, whylen, "node %s failed its health checks (%s)", me,
		    first);
	return -1;
}

int te_stepd_health_reason(char *reason, size_t len)
{
	char first[TE_HEALTH_TEXT_MAX + 16];
	const char *me;

	if (!read_verdict(&me, first, sizeof(first)))
		return 0;
	te_strlcpy(reason, first, len);
	return 1;
}

/* The user's checks' output: the first "exclude TEXT" into first (1), or
 * 0; each "warn TEXT" and any other line said on the task's stderr. */
static int user_output(char *buf, const char *node, char *first,
		       size_t firstlen)
{
	char *save = NULL, *l, clean[TE_HEALTH_TEXT_MAX + 64];
	int out = 0;

	for (l = strtok_r(buf, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		te_clean_text(clean, sizeof(clean), l, sizeof(clean) - 1);
		if (!strncmp(clean, "exclude ", 8)) {
			if (!out++)
				te_strlcpy(first, clean + 8, firstlen);
			continue;
		}
		fprintf(stderr, TE_PREFIX "warning: node %s: %s: %s\n", node,
			TE_HEALTH_OPTION,
			strncmp(clean, "warn ", 5) ? clean : clean + 5);
	}
	return out > 0;
}

int te_stepd_health_user(char *line, size_t linelen, char *why, size_t whylen)
{
	static char out[4096];
	struct te_health_policy site;
	struct te_drain_policy dp;
	struct te_health_prolog_policy pp;
	struct te_spawn_out so;
	char path[TE_VALUE_MAX + 32], err[TE_ERR_MAX],
		first[TE_HEALTH_TEXT_MAX];
	char *env[] = { (char *)"PATH=/usr/bin:/bin", NULL };
	char *argv[] = {
		(char *)TE_HEALTH_HELPER, (char *)"--step", (char *)"--site",
		te_plug.pol.health.items, (char *)"--user", te_plug.health_opt,
		(char *)"--node",	  te_step.node,	    NULL
	};

	if (!te_plug.health_opt || !te_plug.health_opt[0])
		return 0;
	if (te_health_site_load(te_plug.pol.health.items, &site, &dp, &pp, err,
				sizeof(err)) < 0)
		return 0; /* said where the keys were read */
	if (te_helper_path(TE_HEALTH_HELPER, path, sizeof(path)) < 0 ||
	    te_spawn_capture(path, argv, env,
			     (int)(site.timeout_s + USER_SLACK_S) * 1000,
			     TE_SPAWN_STDERR, out, sizeof(out), &so, err,
			     sizeof(err)) < 0) {
		fprintf(stderr,
			TE_PREFIX "warning: node %s: %s not checked: %s\n",
			te_step.node, TE_HEALTH_OPTION,
			err[0] ? err : "helper-dir is too long");
		return 0;
	}
	if (so.killed) {
		fprintf(stderr,
			TE_PREFIX "warning: node %s: %s not checked: no answer "
				  "in %u s\n",
			te_step.node, TE_HEALTH_OPTION,
			site.timeout_s + USER_SLACK_S);
		return 0;
	}
	if (!user_output(out, te_step.node, first, sizeof(first)) ||
	    !WIFEXITED(so.status) || WEXITSTATUS(so.status) != 1)
		return 0;
	te_snprintf(line, linelen,
		    "node %s: left out of this step by the user's health "
		    "checks (%s): %s",
		    te_step.node, TE_HEALTH_OPTION, first);
	te_snprintf(why, whylen, "node %s failed the user's health checks (%s)",
		    te_step.node, first);
	return -1;
}
