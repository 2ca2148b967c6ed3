/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The slurmstepd side's shared state (stepd_step.h): the settings resolved
 * and the step's facts gathered once per step, the task's failure text,
 * and the helpers every stepd_* file uses: the job's environment, the
 * step's GPU lists, a helper started detached beside the task. It calls
 * none of the stepd_* files nor slurmstepd.c: they call it. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/rankenv.h"
#include "util/runcap.h"
#include "slurm_compat.h"
#include "stepd_step.h"
#include "util/strutil.h"
#include "util/sysutil.h"

char te_stepd_err[TE_STEPD_ERR_MAX];

struct te_step te_step;

_Static_assert(TE_VALUE_SLOT_SIZE == TE_VALUE_MAX + 2,
	       "a value slot holds the longest value and one byte more");

/* spank_getenv copies into the caller's buffer (a value slot). A value too
 * long for it is reported as an over-long marker so that the parser
 * refuses it with a clear error. */
const char *te_stepd_getenv(void *ctx, const char *name)
{
	/* the encoded settings of an enclosing step (the batch script's)
	 * hold every setting: a buffer of their own */
	static char settings[TE_SETTINGS_ENV_MAX + 2];
	int whole = strcmp(name, TE_SETTINGS_ENV) == 0;
	char *buf = whole ? settings : te_value_slot();
	int size = whole ? (int)sizeof(settings) : TE_VALUE_SLOT_SIZE;
	spank_err_t rc;

	rc = spank_getenv((spank_t)ctx, name, buf, size);
	if (rc == ESPANK_SUCCESS)
		return buf;
	if (rc == ESPANK_NOSPACE) {
		memset(buf, 'x', (size_t)size - 1);
		buf[size - 1] = '\0';
		return buf;
	}
	return NULL;
}

void te_stepd_resolve(spank_t sp)
{
	struct te_config inherited;
	char err[TE_ERR_MAX];
	int have_inh;

	if (te_plug.resolved || te_stepd_err[0])
		return;
	if (!te_plug.policy_ok) {
		te_strlcpy(te_stepd_err, te_plug.policy_err,
			   sizeof(te_stepd_err));
		return;
	}
	have_inh = te_inherited_config(te_stepd_getenv, sp, &inherited) == 0;
	if (te_resolve(&te_plug.pol, (const char *const *)te_plug.opt,
		       te_stepd_getenv, sp, have_inh ? &inherited : NULL,
		       &te_plug.cfg, err, sizeof(err)) < 0) {
		te_strlcpy(te_stepd_err, err, sizeof(te_stepd_err));
		slurm_error(TE_PREFIX "%s", err);
		return;
	}
	te_plug.resolved = 1;
}

/* Slurm's name of this node, which reports give: the node_id-th host of
 * the step's node list. It is not always the host name (slurmd -N, several
 * slurmd per host, names a site gives its nodes), and the job's
 * SLURMD_NODENAME is the batch host's while slurmstepd prepares a step of
 * a batch job. The host name is the fallback. */
static void find_node_name(spank_t sp)
{
	const char *list = te_stepd_getenv(sp, "SLURM_STEP_NODELIST");
	te_hostlist_t hl;
	uint32_t i = 0;
	char *h;

	te_step.node[0] = te_step.slurm_node[0] = '\0';
	if (!list)
		list = te_stepd_getenv(sp, "SLURM_JOB_NODELIST");
	if (list && (hl = slurm_hostlist_create(list))) {
		while (!te_step.node[0] && (h = slurm_hostlist_shift(hl))) {
			if (i++ == te_step.node_id) {
				te_node_name_from(h, te_step.node,
						  sizeof(te_step.node));
				/* as slurmd's SLURMD_NODENAME, which the
				 * hang report compares with TRAINENV_TASK */
				if (te_word_valid(h, sizeof(te_step.slurm_node),
						  "-_."))
					te_strlcpy(te_step.slurm_node, h,
						   sizeof(te_step.slurm_node));
			}
			free(h);
		}
		slurm_hostlist_destroy(hl);
	}
	if (!te_step.node[0] || !strcmp(te_step.node, "unknown"))
		te_node_name(te_step.node, sizeof(te_step.node));
}

/* The address of rank 0's node as this node resolves it: an IP address, so
 * that every rank connects to the same place whatever its resolver does. */
static void find_master(spank_t sp)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL, *p;
	const char *list = te_stepd_getenv(sp, "SLURM_STEP_NODELIST");
	char host[256];
	int e;

	if (!list)
		list = te_stepd_getenv(sp, "SLURM_JOB_NODELIST");
	if (!list || te_hostlist_first(list, host, sizeof(host)) < 0) {
		te_snprintf(te_step.master_note, sizeof(te_step.master_note),
			    "cannot read the step's node list");
		return;
	}
	if ((e = getaddrinfo(host, NULL, &hints, &ai)) != 0) {
		te_snprintf(te_step.master_note, sizeof(te_step.master_note),
			    "cannot resolve %s: %s", host, gai_strerror(e));
		return;
	}
	/* IPv4 first: it is what most training stacks expect. */
	for (int fam = 0; fam < 2 && !te_step.master_addr[0]; fam++)
		for (p = ai; p; p = p->ai_next) {
			const void *a;

			if (fam == 0 && p->ai_family == AF_INET)
				a = &((struct sockaddr_in *)p->ai_addr)
					     ->sin_addr;
			else if (fam == 1 && p->ai_family == AF_INET6)
				a = &((struct sockaddr_in6 *)p->ai_addr)
					     ->sin6_addr;
			else
				continue;
			if (inet_ntop(p->ai_family, a, te_step.master_addr,
				      sizeof(te_step.master_addr)))
				break;
			te_step.master_addr[0] = '\0';
		}
	freeaddrinfo(ai);
	if (!te_step.master_addr[0])
		te_snprintf(te_step.master_note, sizeof(te_step.master_note),
			    "%s has no IP address", host);
}

void te_stepd_gather(spank_t sp)
{
	const char *s;

	if (te_step.have)
		return;
	te_step.have = 1;
	te_step.since_ms = te_now_ms();
	spank_get_item(sp, S_JOB_ID, &te_step.job_id);
	spank_get_item(sp, S_JOB_STEPID, &te_step.step_id);
	spank_get_item(sp, S_JOB_NNODES, &te_step.nnodes);
	spank_get_item(sp, S_JOB_NODEID, &te_step.node_id);
	spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &te_step.ntasks);
	spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &te_step.local_tasks);
	if (spank_get_item(sp, S_JOB_ARGV, &te_step.argc, &te_step.argv) !=
	    ESPANK_SUCCESS)
		te_step.argc = 0;
	/* srun tells an external launcher's step (its daemons are no
	 * ranks: the launcher starts those) apart from a step of ranks */
	s = te_stepd_getenv(sp, TE_STEP_KIND_ENV);
	te_step.launcher_daemons = s && !strcmp(s, TE_STEP_KIND_EXTERNAL);
	te_step.batch = te_step.step_id == SLURM_BATCH_SCRIPT ||
			te_step.step_id == SLURM_EXTERN_CONT ||
			te_step.launcher_daemons;
	find_node_name(sp);
	if (!te_step.batch)
		find_master(sp);

	if (!te_step.launcher_daemons &&
	    (s = te_stepd_getenv(sp, TE_FAILREP_ENV)) &&
	    te_failrep_env_parse(s, &te_step.report_port, te_step.report_token,
				 sizeof(te_step.report_token)) == 0 &&
	    (s = te_stepd_getenv(sp, "SLURM_SRUN_COMM_HOST")) &&
	    te_strlcpy(te_step.report_host, s, sizeof(te_step.report_host)) <
		    sizeof(te_step.report_host))
		te_step.report = 1;
	te_step.report_health = te_failrep_kind_wanted(
		te_stepd_getenv(sp, TE_FAILREP_KINDS_ENV),
		TE_FAILREP_KIND_HEALTH);
}

void te_stepd_gpu_env(spank_t sp, struct te_bind_gpu_env *e, char bufs[3][1024])
{
	static const char *const names[3] = { "CUDA_VISIBLE_DEVICES",
					      "SLURM_STEP_GPUS",
					      "SLURM_JOB_GPUS" };
	const char **dst[3] = { &e->cuda_visible_devices, &e->slurm_step_gpus,
				&e->slurm_job_gpus };
	int i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < 3; i++) {
		spank_err_t rc = spank_getenv(sp, names[i], bufs[i], 1024);

		/* An over-long list is junk: let the parser refuse it. */
		if (rc == ESPANK_NOSPACE)
			te_strlcpy(bufs[i], "too-long", 1024);
		*dst[i] = (rc == ESPANK_SUCCESS || rc == ESPANK_NOSPACE)
				  ? bufs[i]
				  : NULL;
	}
	e->in_slurm = 1;
}

/* The task's environment without SLURM_JOB_ID, SLURM_STEP_ID and
 * TRAINENV_TASK (the hang report's three ways to a task), for a
 * process trainenv starts beside the task (the torchrun watcher, the
 * container check, the barrier proxy): it is not one of the step's ranks
 * when the hang report looks for them. */
char **te_stepd_env_not_a_rank(char **env, const char *also)
{
	const char *const ids[] = { "SLURM_JOB_ID=", "SLURM_STEP_ID=",
				    TE_TASK_ENV "=", also, NULL };

	return te_env_without_dup(env, ids, NULL);
}

int te_stepd_spawn_detached(const char *path, char *const argv[],
			    char *const env[], int fd, int keep_stderr)
{
	int st[2], keep = fd >= 0 ? 4 : 3, e = 0;
	pid_t pid;

	/* the grandchild's exec or its errno: close-on-exec, at a number
	 * of its own past the descriptors the helper keeps */
	if (pipe2(st, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(st[0]);
		close(st[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		pid_t g;

		close(st[0]);
		setsid();
		g = fork();
		if (g != 0) {
			e = errno;
			if (g < 0 && write(st[1], &e, sizeof(e)) < 0)
				_exit(1);
			_exit(0);
		}
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			if (!keep_stderr)
				dup2(null, 2);
		}
		if (fd == 3)
			fcntl(3, F_SETFD, 0);
		else if (fd >= 0 && dup2(fd, 3) < 0)
			_exit(127);
		if (st[1] != keep && (dup3(st[1], keep, O_CLOEXEC) < 0))
			_exit(127);
		close_range(keep + 1, ~0U, 0);
		execve(path, argv, env);
		e = errno;
		if (write(keep, &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(st[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* end of file: the helper runs (its exec closed the pipe) */
	while (read(st[0], &e, sizeof(e)) < 0 && errno == EINTR)
		;
	close(st[0]);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

int te_stepd_lib_file(const char *file, char *out, size_t len)
{
	const struct te_value *dir = &te_plug.cfg.v[TE_S_LIB_DIR];

	if (te_snprintf(out, len, "%s/%s", dir->set ? dir->text : TE_PKGLIBDIR,
			file) < 0)
		return -2;
	return access(out, R_OK) < 0 ? -1 : 0;
}
