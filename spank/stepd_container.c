/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: trainenv and container plugins (pyxis). pyxis
 * moves the task into its container from its own task_init, and SPANK
 * runs the plugins' task_init in plugstack.conf order. Listed after pyxis,
 * trainenv would run in the container, where its helpers (rendezvous,
 * pre-flight, watchers) and its NCCL preload library do not exist, and
 * pyxis would already have copied the container's environment over the
 * task's. So trainenv notes the task's mount namespace and root directory
 * in task_init_privileged (every plugin's runs before any task_init, and
 * after Slurm's own job container, job_container/tmpfs, joined the task to
 * the job's namespace), and task_init refuses to go on when a plugin has
 * changed both since: one line tells the administrator to list trainenv
 * first. Listed first, trainenv prepares the task on the node, its enroot
 * hook (etc/enroot-hook.sh.in) keeps what it decided in the container's
 * environment, and for a step that pyxis runs in a container the node's
 * first task starts trainenv-container (pmix/container_tool.c), which
 * compares what the program sees with what trainenv decided. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/barrier_proxy.h"
#include "util/runcap.h"
#include "stepd_container.h"
#include "stepd_step.h"
#include "util/strutil.h"
#include "launch/version.h"

struct te_fsid {
	int have;
	dev_t dev;
	ino_t ino;
};

/* As Slurm prepared the task: its mount namespace and its root. */
static struct te_fsid slurm_mnt, slurm_root;

static void note(const char *path, struct te_fsid *id)
{
	struct stat st;

	id->have = stat(path, &st) == 0;
	if (id->have) {
		id->dev = st.st_dev;
		id->ino = st.st_ino;
	}
}

/* 1: path is still what id noted; 0: something else; -1: unknown. */
static int same(const char *path, const struct te_fsid *id)
{
	struct stat st;

	if (!id->have || stat(path, &st) < 0)
		return -1;
	return st.st_dev == id->dev && st.st_ino == id->ino;
}

void te_stepd_container_note(void)
{
	note("/proc/self/ns/mnt", &slurm_mnt);
	note("/", &slurm_root);
}

int te_stepd_container_check(void)
{
	/* Both: a plugin that only unshares the mount namespace (a private
	 * /tmp) keeps the node's root, and trainenv's paths with it. */
	if (same("/proc/self/ns/mnt", &slurm_mnt) != 0 ||
	    same("/", &slurm_root) != 0)
		return 0;
	return te_err(te_stepd_err, sizeof(te_stepd_err),
		      "this task is already in a container (another mount "
		      "namespace and root than slurmstepd gave it): a plugin "
		      "listed before trainenv in plugstack.conf, such as "
		      "pyxis, entered it, and trainenv's helpers and settings "
		      "must come first; list trainenv's line before that "
		      "plugin's (for plugstack.conf.d: 00-trainenv.conf)");
}

/* pyxis will put this task in a container: its --container-image or
 * --container-name option was given (SPANK finds another plugin's option
 * by its name) or their PYXIS_CONTAINER_* defaults are in the job's
 * environment (pyxis 0.17 and later read them). */
int te_stepd_container_coming(spank_t sp)
{
	static const char *const opts[] = { "container-image",
					    "container-name" };
	static const char *const envs[] = { "PYXIS_CONTAINER_IMAGE",
					    "PYXIS_CONTAINER_NAME" };
	size_t i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		struct spank_option o = { .name = (char *)opts[i],
					  .has_arg = 1 };
		char *arg = NULL;

		if (spank_option_getopt(sp, &o, &arg) == ESPANK_SUCCESS)
			return 1;
		if (te_stepd_getenv(sp, envs[i]))
			return 1;
	}
	return 0;
}

int te_stepd_oci_step(spank_t sp)
{
	const char *v = te_stepd_getenv(sp, "SLURM_CONTAINER");

	return v && *v; /* as srun tests it (srun.c) */
}

/* The container helper's path, or -1 with why in te_stepd_err. */
static int helper(char *path, size_t len)
{
	if (te_helper_path(TE_CONTAINER_HELPER, path, len) < 0) {
		errno = ENAMETOOLONG;
		return te_err(te_stepd_err, sizeof(te_stepd_err),
			      "cannot run "
			      "%s: helper-dir is too long",
			      TE_CONTAINER_HELPER);
	}
	if (access(path, X_OK) < 0)
		return te_err(te_stepd_err, sizeof(te_stepd_err),
			      "cannot run "
			      "%s: %s (helper-dir)",
			      path, strerror(errno));
	return 0;
}

int te_stepd_container_proxy(spank_t sp, int required)
{
	char path[TE_VALUE_MAX + 32], proto[12], fdtext[TE_BPROXY_FD_VALUE_MAX];
	char *argv[8], **env = NULL, **env2;
	int k = 0, sv[2], rc;

	if (helper(path, sizeof(path)) < 0)
		goto failed;
	if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env) {
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "cannot read "
			    "the task's environment for the barrier proxy");
		goto failed;
	}
	te_snprintf(proto, sizeof(proto), "%d", te_protocol_version());
	argv[k++] = (char *)TE_CONTAINER_HELPER;
	argv[k++] = (char *)"--protocol-say";
	argv[k++] = proto;
	argv[k++] = (char *)"barrier-proxy";
	argv[k++] = (char *)"--fd";
	argv[k++] = (char *)"3";
	argv[k] = NULL;
	/* the task's own rank and PMIx server, not the user's preloads, and
	 * never taken for a rank */
	env2 = te_stepd_env_not_a_rank(env, "LD_PRELOAD=");
	if (!env2 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "cannot make "
			    "the barrier proxy's socket: %s",
			    env2 ? strerror(errno) : "out of memory");
		free(env2);
		goto failed;
	}
	rc = te_stepd_spawn_detached(path, argv, env2, sv[1], 1);
	/* the task's end survives its exec: the program inherits it */
	if (rc == 0 && fcntl(sv[0], F_SETFD, 0) < 0)
		rc = -1;
	if (rc < 0) /* errno first: free and close may change it */
		te_snprintf(te_stepd_err, sizeof(te_stepd_err),
			    "cannot start "
			    "the barrier proxy %s: %s",
			    path, strerror(errno));
	free(env2);
	close(sv[1]);
	if (rc < 0) {
		close(sv[0]);
		goto failed;
	}
	te_bproxy_fd_value(sv[0], fdtext, sizeof(fdtext));
	spank_setenv(sp, TE_BPROXY_FD_ENV, fdtext, 1);
	return 0;
failed:
	if (!required) {
		fprintf(stderr,
			TE_PREFIX "warning: %s; trainenv.barrier() "
				  "cannot run in this container\n",
			te_stepd_err);
		fflush(stderr);
	}
	return -1;
}

void te_stepd_container_watch(spank_t sp, uint32_t local_id, uint32_t global_id)
{
	char **env2;
	char path[TE_VALUE_MAX + 32], exe[4096], spid[16], rank[16];
	char *argv[16], **env = NULL, proto[12];
	ssize_t n;
	int k = 0, p[2];

	if (local_id != 0)
		return; /* one per node: the node's first task */
	if (helper(path, sizeof(path)) < 0) {
		fprintf(stderr,
			TE_PREFIX
			"warning: %s; what the container "
			"changes in the tasks' environment is not checked\n",
			te_stepd_err);
		fflush(stderr);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS ||
	    !env)
		return;
	exe[n] = '\0';
	te_snprintf(spid, sizeof(spid), "%d", (int)getpid());
	te_snprintf(rank, sizeof(rank), "%u", global_id);
	/* a check of another protocol says so on the task's stderr, which it
	 * keeps, and stops: nobody waits for its answer */
	te_snprintf(proto, sizeof(proto), "%d", te_protocol_version());
	argv[k++] = (char *)TE_CONTAINER_HELPER;
	argv[k++] = (char *)"--protocol-say";
	argv[k++] = proto;
	argv[k++] = (char *)"check";
	argv[k++] = spid;
	argv[k++] = (char *)"--before";
	argv[k++] = exe;
	argv[k++] = (char *)"--fd";
	argv[k++] = (char *)"3";
	argv[k++] = (char *)"--rank";
	argv[k++] = rank;
	argv[k++] = (char *)"--node";
	argv[k++] = te_step.node;
	if (te_plug.explain && global_id == 0)
		argv[k++] = (char *)"--explain";
	argv[k] = NULL;
	env2 = te_stepd_env_not_a_rank(env, NULL);
	/* The task keeps the write end, close-on-exec: the check reads end
	 * of file the moment the task executes its program. */
	if (!env2 || pipe2(p, O_CLOEXEC) < 0) {
		free(env2);
		return;
	}
	te_stepd_spawn_detached(path, argv, env2, p[0], 1);
	close(p[0]);
	free(env2);
}
