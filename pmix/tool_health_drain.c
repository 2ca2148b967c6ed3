/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv health --drain: the Slurm edge of a failing node's drain
 * (issue 34). Reads the controller's node list (sinfo), asks
 * core/health/health_drain.c whether this node drains (the switch, the
 * cap, another's reason), and drains it with scontrol; every child is
 * bounded in time. It only ever drains: never a resume. sinfo and
 * scontrol come from fixed directories (it runs as root: never from
 * PATH), or from the admin's --slurm-bin DIR. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "health/health.h"
#include "health/health_prolog.h"
#include "util/runcap.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "tool.h"

extern char **environ;

#define PREFIX "trainenv health: "
#define SLURM_MS (TE_DRAIN_SLURM_S * 1000) /* each sinfo or scontrol */
#define SINFO_TRIES 2			   /* a busy controller: once more */
_Static_assert(SINFO_TRIES + 1 <= TE_DRAIN_CONTROLLER_S / TE_DRAIN_SLURM_S,
	       "TE_DRAIN_CONTROLLER_S counts every controller call");
#define NODES_MAX 16384
#define LIST_MAX (8u << 20)

/* Where sinfo and scontrol are looked for without --slurm-bin: the
 * Slurm bindir configure was given (TE_SLURM_BINDIR), else these. */
#ifdef TE_SLURM_BINDIR
#define SLURM_DIRS TE_SLURM_BINDIR
#else
#define SLURM_DIRS "/usr/bin:/usr/local/bin"
#endif

/* When the program started (about main's start): the drain's deadlines
 * count from it, as slurmd's kill of HealthCheckProgram does. */
static int64_t start_ms;

__attribute__((constructor)) static void note_start(void)
{
	start_ms = te_now_ms();
}

int64_t te_tool_start_ms(void)
{
	return start_ms;
}

/* The directory --slurm-bin named (NULL: SLURM_DIRS). */
static const char *slurm_bin;

/* name's path in the first of dirs (':'-separated) that has it as an
 * executable file; 0, or -1. */
static int slurm_find(const char *dirs, const char *name, char *path,
		      size_t len)
{
	const char *d = dirs;
	struct stat st;

	while (*d) {
		size_t n = strcspn(d, ":");

		if (te_snprintf(path, len, "%.*s/%s", (int)n, d, name) == 0 &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(path, X_OK) == 0)
			return 0;
		d += n + (d[n] == ':');
	}
	return -1;
}

/* Runs a Slurm command, at most SLURM_MS; its output (stderr too with
 * TE_SPAWN_STDERR in flags) in buf. 0 when it exited 0 in time, else -1
 * with err. */
static int slurm_run_out(char *const argv[], unsigned flags, char *buf,
			 size_t cap, char *err, size_t errlen)
{
	const char *dirs = slurm_bin ? slurm_bin : SLURM_DIRS;
	char path[PATH_MAX], why[256];
	struct te_spawn_out so;

	buf[0] = '\0';
	if (slurm_find(dirs, argv[0], path, sizeof(path)) < 0)
		return te_err(err, errlen, "%s is not in %s%s", argv[0], dirs,
			      slurm_bin ? " (--slurm-bin)" : "");
	if (te_spawn_capture(path, argv, environ, SLURM_MS, flags, buf, cap,
			     &so, why, sizeof(why)) < 0)
		return te_err(err, errlen, "%s did not run: %s", argv[0], why);
	if (so.killed)
		return te_err(err, errlen, "%s gave no answer in %d s", argv[0],
			      SLURM_MS / 1000);
	if (so.too_long)
		return te_err(err, errlen, "%s wrote more than %zu bytes",
			      argv[0], cap - 1);
	if (!WIFEXITED(so.status) || WEXITSTATUS(so.status)) {
		char q[160];

		buf[strcspn(buf, "\n")] = '\0';
		te_quote(q, sizeof(q), buf);
		return te_err(err, errlen, "%s failed: '%s'", argv[0], q);
	}
	return 0;
}

static int slurm_run(char *const argv[], char *buf, size_t cap, char *err,
		     size_t errlen)
{
	return slurm_run_out(argv, TE_SPAWN_STDERR, buf, cap, err, errlen);
}

/* sinfo, once more when it fails or gives no answer (a controller busy
 * for a moment): at most SINFO_TRIES * SLURM_MS in all. */
static int sinfo_run(char *const argv[], char *buf, size_t cap, char *err,
		     size_t errlen)
{
	int i;

	for (i = 0; i < SINFO_TRIES; i++)
		if (slurm_run(argv, buf, cap, err, errlen) == 0)
			return 0;
	te_appendf(err, errlen, " (%d tries)", SINFO_TRIES);
	return -1;
}

/* The line of the first failing result: the reason's text; -1 when no
 * result failed (only errors: checks that could not decide). */
static int failing_line(const struct te_health_set *set, char *buf, size_t len)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (set->r[i].verdict == TE_HV_FAIL) {
			te_strlcpy(buf, set->r[i].text, len);
			return 0;
		}
	if (!set->cut_fail)
		return -1;
	te_snprintf(buf, len, "%d failed results past the %d listed",
		    set->cut_fail, TE_HEALTH_RESULTS_MAX);
	return 0;
}

/* The first result that could not decide, for the line saying why the
 * node is not drained. */
static const char *first_error(const struct te_health_set *set)
{
	int i;

	for (i = 0; i < set->n; i++)
		if (set->r[i].verdict == TE_HV_ERROR)
			return set->r[i].text;
	return "results past those listed";
}

/* scontrol update NodeName=NAME State=DRAIN Reason=REASON. */
static int drain_node(const char *name, const char *reason, char *err,
		      size_t errlen)
{
	char nodearg[TE_HEALTH_NODE_MAX + 16],
		reasonarg[TE_DRAIN_REASON_MAX + 16];
	char out[4096];
	char *argv[] = { (char *)"scontrol",	(char *)"update", nodearg,
			 (char *)"State=DRAIN", reasonarg,	  NULL };

	te_snprintf(nodearg, sizeof(nodearg), "NodeName=%s", name);
	te_snprintf(reasonarg, sizeof(reasonarg), "Reason=%s", reason);
	return slurm_run(argv, out, sizeof(out), err, errlen);
}

/* After this node drained itself: the list read again, and the drain
 * undone (State=UNDRAIN: trainenv's own drain of a moment ago, never
 * another's, never a resume) when nodes that failed at the same moment
 * took the cap first (te_drain_keep). Only when the list and the undo
 * fit before deadline_ms. 1 (drained), 0 (undone). */
static int recheck(const struct te_drain_policy *pol, const char *name,
		   int64_t deadline_ms, struct te_drain_node *nodes, char *list)
{
	char *sinfo[] = { (char *)"sinfo",
			  (char *)"-h",
			  (char *)"-N",
			  (char *)"-o",
			  (char *)"%N %n %T %H %E",
			  NULL };
	char nodearg[TE_HEALTH_NODE_MAX + 16], out[4096], err[512];
	char *undrain[] = { (char *)"scontrol", (char *)"update", nodearg,
			    (char *)"State=UNDRAIN", NULL };
	int n;

	/* the others' drains reach the controller within about a second */
	if (te_now_ms() + 1000 + 2 * SLURM_MS > deadline_ms) {
		fprintf(stderr,
			PREFIX "%s: the cap not checked again (no time left "
			       "for the controller)\n",
			name);
		return 1;
	}
	usleep(1000 * 1000);
	if (slurm_run(sinfo, list, LIST_MAX, err, sizeof(err)) < 0 ||
	    (n = te_drain_parse_nodes(list, nodes, NODES_MAX, err,
				      sizeof(err))) < 0) {
		fprintf(stderr, PREFIX "%s: the cap not checked again: %s\n",
			name, err);
		return 1;
	}
	if (te_drain_keep(pol, name, nodes, n, (long long)time(NULL)))
		return 1;
	te_snprintf(nodearg, sizeof(nodearg), "NodeName=%s", name);
	if (slurm_run(undrain, out, sizeof(out), err, sizeof(err)) < 0) {
		fprintf(stderr,
			PREFIX "%s: over the cap (nodes that failed at the "
			       "same moment drained first), but its drain "
			       "could not be undone: %s\n",
			name, err);
		return 1;
	}
	fprintf(stderr,
		PREFIX "%s: drain undone: nodes that failed at the same "
		       "moment reached the cap first (health_drain_max=%u%s)\n",
		name, pol->max, pol->max_is_pct ? "%" : "");
	return 0;
}

int te_health_drain(const struct te_health_set *set,
		    const struct te_drain_policy *pol, const char *self,
		    const char *bin)
{
	char line[TE_HEALTH_TEXT_MAX];

	if (failing_line(set, line, sizeof(line)) < 0) {
		/* an error is no proof against the node: a user exhausting
		 * its pids, fds or memory must not drain it */
		fprintf(stderr,
			PREFIX "%s not drained: no check failed; %d could not "
			       "decide ('%s')\n",
			self, te_health_set_failed(set), first_error(set));
		return 0;
	}
	/* slurmd kills HealthCheckProgram at 60 s: the cap's second look
	 * only when it fits in what is left of TE_DRAIN_BUDGET_S */
	return te_health_drain_line(line, pol, self, bin,
				    start_ms + TE_DRAIN_BUDGET_S * 1000) < 0
		       ? -1
		       : 0;
}

int te_health_drain_line(const char *line, const struct te_drain_policy *pol,
			 const char *self, const char *bin, int64_t deadline_ms)
{
	static struct te_drain_node nodes[NODES_MAX];
	static char list[LIST_MAX];
	char *argv[] = { (char *)"sinfo",
			 (char *)"-h",
			 (char *)"-N",
			 (char *)"-o",
			 (char *)"%N %n %T %H %E",
			 NULL };
	char reason[TE_DRAIN_REASON_MAX], name[TE_HEALTH_NODE_MAX];
	char why[512], err[512];
	const struct te_drain_node *me;
	enum te_drain_decision d;
	int n;

	slurm_bin = bin;
	te_drain_reason(line, reason, sizeof(reason));
	if (!pol->on) {
		te_drain_decide(pol, self, NULL, 0, 0, reason, why,
				sizeof(why));
		fprintf(stderr, PREFIX "%s\n", why);
		return 0;
	}
	if (sinfo_run(argv, list, sizeof(list), err, sizeof(err)) < 0 ||
	    (n = te_drain_parse_nodes(list, nodes, NODES_MAX, err,
				      sizeof(err))) < 0) {
		fprintf(stderr, PREFIX "%s not drained: %s\n", self, err);
		return -1;
	}
	d = te_drain_decide(pol, self, nodes, n, (long long)time(NULL), reason,
			    why, sizeof(why));
	if (d != TE_DRAIN_DO) {
		fprintf(stderr, PREFIX "%s\n", why);
		return d == TE_DRAIN_UNKNOWN ? -1 : 0;
	}
	me = te_drain_find(nodes, n, self);
	te_strlcpy(name, me->name, sizeof(name));
	if (drain_node(name, reason, err, sizeof(err)) < 0) {
		fprintf(stderr, PREFIX "%s not drained: %s\n", name, err);
		return -1;
	}
	fprintf(stderr, PREFIX "%s\n", why);
	return recheck(pol, name, deadline_ms, nodes, list);
}

#define COMMENT_TRIES 3

/* squeue's admin_comment field of job into buf: 0, or -1 with err. */
static int comment_read(const char *job, char *buf, size_t cap, char *err,
			size_t errlen)
{
	char field[48];
	char *argv[] = {
		(char *)"squeue", (char *)"-h", (char *)"-j", (char *)job,
		(char *)"-O",	  field,	NULL
	};

	te_snprintf(field, sizeof(field), "admin_comment:%d",
		    TE_HEALTH_COMMENT_READ);
	/* stdout alone: a warning squeue prints is never written back */
	return slurm_run_out(argv, 0, buf, cap, err, errlen);
}

int te_health_comment_job(const char *job, const char *node, const char *line,
			  const char *bin, int64_t deadline_ms)
{
	static char cur[TE_HEALTH_COMMENT_READ + 256];
	char next[TE_HEALTH_COMMENT_MAX + 1], jobarg[48],
		arg[TE_HEALTH_COMMENT_MAX + 16], err[512];
	char *argv[] = { (char *)"scontrol", (char *)"update", jobarg, arg,
			 NULL };
	int i, rc = 1;

	slurm_bin = bin;
	te_snprintf(jobarg, sizeof(jobarg), "JobId=%s", job);
	/* read, add and write; then read again: another node failing at the
	 * same moment may have written over this one's entry */
	for (i = 0; i < COMMENT_TRIES; i++) {
		if (te_now_ms() + 2 * SLURM_MS > deadline_ms) {
			te_snprintf(err, sizeof(err), "no time left");
			break;
		}
		if (comment_read(job, cur, sizeof(cur), err, sizeof(err)) < 0)
			break;
		rc = te_health_comment_compose(cur, node, line, next,
					       sizeof(next));
		if (rc <= 0)
			break;
		te_snprintf(arg, sizeof(arg), "AdminComment=%s", next);
		if (slurm_run(argv, cur, sizeof(cur), err, sizeof(err)) < 0)
			break;
		/* a moment for a concurrent writer to finish */
		usleep((useconds_t)(50000 + (te_now_ms() % 250) * 1000));
	}
	if (rc == 0)
		return 0;
	if (rc < 0)
		te_snprintf(err, sizeof(err),
			    "it is full (%d bytes, %d of trainenv's nodes)",
			    TE_HEALTH_COMMENT_MAX, TE_HEALTH_COMMENT_NODES);
	fprintf(stderr, PREFIX "job %s: %s not noted in its AdminComment: %s\n",
		job, node,
		i == COMMENT_TRIES ? "written, not seen again" : err);
	return i == COMMENT_TRIES ? 0 : -1;
}
