/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: reads the verdict the job prolog's health checks
 * left for this job on this node (root's file under /run/trainenv/health,
 * trainenv-health's), so that a step on a node the checks kept out of the
 * job fails at once, as a node fault, and --train-requeue (or a relaunch)
 * goes on without the node. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "health/health_prolog.h"
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
