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
 * first. Listed first, trainenv prepares the task on the node. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "slurmstepd.h"
#include "strutil.h"

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
