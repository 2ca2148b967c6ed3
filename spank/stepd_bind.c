/* SPDX-License-Identifier: GPL-2.0-or-later */
/* GPU/NUMA binding in slurmstepd. The topology is loaded and the mapping of
 * every local rank computed once per step, in user_init, before slurmstepd
 * forks the tasks; each task then applies its own rank's binding in
 * task_init, just before exec, so every thread and first-touched page of
 * the program starts next to its GPU. A binding that cannot be done as asked
 * warns (and the task runs unbound) or fails the task, per bind-failure. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bind/bind.h"
#include "stepd_bind.h"
#include "state.h"
#include "util/strutil.h"
#include "util/sysutil.h"

static struct {
	int active;	      /* binding was asked for in this step */
	int mapped;	      /* the rank -> GPU mapping is wanted (binding
				   or the pre-flight) */
	int no_gpus;	      /* map only, and the step has no GPU here:
				   no topology was loaded */
	int ready;	      /* topology loaded and mapping computed */
	char err[TE_ERR_MAX]; /* why not */
	char note[2 * TE_BIND_NOTE_LEN];
	hwloc_topology_t topo;
	struct te_bind_request req;
	struct te_bind_result res;
	unsigned gpus[TE_BIND_MAX_GPUS];
	char gpu_list[1024]; /* the step's GPU env, to spot per-task views */
} bs;

static void gpu_env_key(const struct te_bind_gpu_env *e, char *buf, size_t len)
{
	te_snprintf(buf, len, "%s|%s|%s",
		    e->cuda_visible_devices ? e->cuda_visible_devices : "-",
		    e->slurm_step_gpus ? e->slurm_step_gpus : "-",
		    e->slurm_job_gpus ? e->slurm_job_gpus : "-");
}

static int compute(const struct te_bind_gpu_env *genv,
		   struct te_bind_result *res, char *err, size_t errlen)
{
	struct te_bind_gpus gpus = { 0, NULL };
	char note[TE_BIND_NOTE_LEN] = "";
	size_t n = 0;
	int rc = -1;

	if (te_bind_gpus(bs.topo, &gpus, err, errlen) < 0)
		return -1;
	if (te_bind_gpus_from_env(genv, gpus.n, bs.gpus, TE_BIND_MAX_GPUS, &n,
				  note, sizeof(note), err, errlen) < 0)
		goto out;
	bs.req.gpus = bs.gpus;
	bs.req.ngpus = n;
	memset(res, 0, sizeof(*res));
	if (te_bind_compute(bs.topo, &bs.req, res, err, errlen) < 0)
		goto out;
	te_snprintf(bs.note, sizeof(bs.note), "%s%s%s", note,
		    note[0] && res->note[0] ? "; " : "", res->note);
	rc = 0;
out:
	te_bind_gpus_free(&gpus);
	return rc;
}

/* A file or directory root trusts: owned by root, not writable by group
 * or others, of the expected kind. */
static int trusted(const struct stat *st, int dir)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH)) &&
	       (dir ? S_ISDIR(st->st_mode) : S_ISREG(st->st_mode));
}

static int boot_id(char *buf, size_t len)
{
	size_t i;

	if (te_read_small("/proc/sys/kernel/random/boot_id", buf, len, 0) <= 0)
		return -1;
	for (i = 0; buf[i]; i++)
		if (buf[i] == '\n')
			buf[i] = '\0';
		else if (!((buf[i] >= '0' && buf[i] <= '9') ||
			   (buf[i] >= 'a' && buf[i] <= 'f') || buf[i] == '-'))
			return -1;
	return buf[0] ? 0 : -1;
}

/* Exports topo into DIR (dfd, trusted) as name: written under a random
 * name, then renamed, so that a reader never sees half a file. */
static void save_cached(int dfd, const char *name, hwloc_topology_t topo)
{
	char tmp[64], rnd[17], *xml = NULL;
	int fd, xml_len = 0, ok;
	size_t done = 0;

	if (te_random_hex(rnd, sizeof(rnd), 16) < 0)
		return;
	te_snprintf(tmp, sizeof(tmp), ".topology-%s", rnd);
	if (hwloc_topology_export_xmlbuffer(topo, &xml, &xml_len, 0) < 0)
		return;
	fd = openat(dfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		goto out;
	/* the length hwloc gives counts the final NUL */
	while (xml_len > 0 && done < (size_t)xml_len - 1) {
		ssize_t n = write(fd, xml + done, (size_t)xml_len - 1 - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	ok = xml_len > 0 && done == (size_t)xml_len - 1 &&
	     fchmod(fd, 0644) == 0;
	if (close(fd) < 0 || !ok || renameat(dfd, tmp, dfd, name) < 0)
		unlinkat(dfd, tmp, 0);
out:
	hwloc_free_xmlbuffer(topo, xml);
}

/* Discovery reads every PCI device's config space (about 2 ms each on a
 * virtual machine, a few ms for a whole node on bare metal): once per boot
 * is enough. The first step after a boot exports what it discovered to
 * DIR/topology-BOOTID.xml; later steps read that (a fraction of a ms) and
 * then apply their own cgroup's restrictions. Only root writes or trusts
 * the cache; anything odd about it means plain discovery. The directory
 * and the file are opened without following links and checked through
 * their descriptors, and the file is read from the descriptor that was
 * checked: nothing can be swapped in between. */
static int load_cached(const char *dir, hwloc_topology_t *topo, char *err,
		       size_t errlen)
{
	char id[64], name[96], path[TE_VALUE_MAX + 96];
	struct stat st;
	int dfd, fd;

	if (geteuid() != 0 || boot_id(id, sizeof(id)) < 0 ||
	    te_snprintf(name, sizeof(name), "topology-%s.xml", id) < 0 ||
	    te_snprintf(path, sizeof(path), "%s/%s", dir, name) < 0)
		return te_bind_topology_load(NULL, topo, err, errlen);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return te_bind_topology_load(NULL, topo, err, errlen);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return te_bind_topology_load(NULL, topo, err, errlen);
	if (fstat(dfd, &st) < 0 || !trusted(&st, 1)) {
		close(dfd);
		return te_bind_topology_load(NULL, topo, err, errlen);
	}
	fd = openat(dfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && trusted(&st, 0) &&
	    st.st_size < 64 * 1024 * 1024 &&
	    te_bind_topology_load_local_fd(fd, path, topo, err, errlen) == 0) {
		close(fd);
		close(dfd);
		/* The XML carries the exporting step's allowed CPUs: use
		 * this process's own restrictions instead. */
		if (hwloc_topology_allow(*topo, NULL, NULL,
					 HWLOC_ALLOW_FLAG_LOCAL_RESTRICTIONS) ==
		    0)
			return 0;
		hwloc_topology_destroy(*topo);
		*topo = NULL;
		return te_bind_topology_load(NULL, topo, err, errlen);
	}
	if (fd >= 0)
		close(fd);
	if (te_bind_topology_load(NULL, topo, err, errlen) < 0) {
		close(dfd);
		return -1;
	}
	save_cached(dfd, name, *topo);
	close(dfd);
	return 0;
}

void te_bindstep_init(const struct te_config *cfg, uint32_t local_tasks,
		      const struct te_bind_gpu_env *genv)
{
	const struct te_value *topo_xml = &cfg->v[TE_S_BIND_TOPOLOGY];
	int bind = cfg->v[TE_S_BIND].word == TE_W_BIND_NUMA ||
		   cfg->v[TE_S_BIND].word == TE_W_BIND_CORES;
	int rc;

	memset(&bs, 0, sizeof(bs));
	/* the pre-flight needs each rank's GPU even without binding */
	if (!bind && cfg->v[TE_S_PREFLIGHT].word != TE_W_PREFLIGHT_ON &&
	    cfg->v[TE_S_PREFLIGHT].word != TE_W_PREFLIGHT_VERBOSE)
		return; /* none */
	bs.active = bind;
	bs.mapped = 1;
	bs.req.mode = !bind ? TE_BIND_MODE_NONE
		      : cfg->v[TE_S_BIND].word == TE_W_BIND_NUMA
			      ? TE_BIND_MODE_NUMA
			      : TE_BIND_MODE_CORES;
	bs.req.smt = cfg->v[TE_S_BIND_SMT].word == TE_W_BIND_SMT_ONE
			     ? TE_BIND_SMT_ONE
			     : TE_BIND_SMT_ALL;
	bs.req.ntasks = local_tasks ? local_tasks : 1;
	if (local_tasks > TE_BIND_MAX_TASKS) {
		te_snprintf(bs.err, sizeof(bs.err),
			    "%u tasks on this node: "
			    "binding handles at most %d",
			    local_tasks, TE_BIND_MAX_TASKS);
		return;
	}
	if (!bind) {
		unsigned idx[TE_BIND_MAX_GPUS];
		char note[TE_BIND_NOTE_LEN];
		size_t n = 0;

		/* Map only, and no GPU in the step's list: nothing to map,
		 * and the topology is not worth loading. */
		if (te_bind_gpus_from_env(genv, 0, idx, TE_BIND_MAX_GPUS, &n,
					  note, sizeof(note), bs.err,
					  sizeof(bs.err)) == 0 &&
		    n == 0) {
			gpu_env_key(genv, bs.gpu_list, sizeof(bs.gpu_list));
			bs.no_gpus = 1;
			return;
		}
		bs.err[0] = '\0';
	}
	if (topo_xml->set)
		rc = te_bind_topology_load_local_xml(topo_xml->text, &bs.topo,
						     bs.err, sizeof(bs.err));
	else if (cfg->v[TE_S_TOPOLOGY_CACHE].set &&
		 cfg->v[TE_S_TOPOLOGY_CACHE].word == TE_W_VALUE)
		rc = load_cached(cfg->v[TE_S_TOPOLOGY_CACHE].text, &bs.topo,
				 bs.err, sizeof(bs.err));
	else
		rc = te_bind_topology_load(NULL, &bs.topo, bs.err,
					   sizeof(bs.err));
	if (rc < 0)
		return;
	gpu_env_key(genv, bs.gpu_list, sizeof(bs.gpu_list));
	if (compute(genv, &bs.res, bs.err, sizeof(bs.err)) < 0)
		return;
	bs.ready = 1;
}

int te_bindstep_active(void)
{
	return bs.active;
}

int te_bindstep_gpu(uint32_t local_id, const struct te_bind_gpu_env *genv,
		    char *busid, size_t len, char *err, size_t errlen)
{
	struct te_bind_result mine;
	const struct te_bind_result *res = &bs.res;
	char key[sizeof(bs.gpu_list)];
	int rc = -1;

	if (len)
		busid[0] = '\0';
	if (!bs.mapped)
		return te_err(err, errlen,
			      "the rank -> GPU mapping was not "
			      "computed for this step");
	gpu_env_key(genv, key, sizeof(key));
	if (bs.no_gpus) {
		if (!strcmp(key, bs.gpu_list))
			return 0;
		return te_err(err, errlen,
			      "this task's GPU list (%s) differs "
			      "from the step's, which has none",
			      key);
	}
	if (!bs.ready)
		return te_err(err, errlen, "%s", bs.err);
	memset(&mine, 0, sizeof(mine));
	/* a task with its own GPU view (srun --gpu-bind) maps from it */
	if (strcmp(key, bs.gpu_list) != 0) {
		if (compute(genv, &mine, err, errlen) < 0)
			goto out;
		res = &mine;
	}
	if (local_id >= res->nranks) {
		te_snprintf(err, errlen,
			    "local rank %u outside the %u "
			    "computed",
			    local_id, res->nranks);
		goto out;
	}
	rc = res->ranks[local_id].gpu >= 0 && res->ranks[local_id].busid[0];
	if (rc && te_strlcpy(busid, res->ranks[local_id].busid, len) >= len) {
		te_snprintf(err, errlen, "PCI bus id too long");
		rc = -1;
	}
out:
	te_bind_result_free(&mine);
	return rc;
}

int te_bindstep_task(uint32_t local_id, uint32_t global_id,
		     const struct te_bind_gpu_env *genv, int own_gpus,
		     int verbose, struct te_bindstep_out *out)
{
	struct te_bind_result mine;
	const struct te_bind_result *res = &bs.res;
	char key[sizeof(bs.gpu_list)], line[512];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!bs.active)
		return 0;
	if (!bs.ready)
		return te_err(out->msg, sizeof(out->msg),
			      "cannot bind rank %u: "
			      "%s",
			      global_id, bs.err);
	memset(&mine, 0, sizeof(mine));
	/* A task whose GPU view differs from the step's (srun --gpu-bind)
	 * maps from its own view; the topology is not loaded again. */
	gpu_env_key(genv, key, sizeof(key));
	if (strcmp(key, bs.gpu_list) != 0) {
		if (compute(genv, &mine, out->msg, sizeof(out->msg)) < 0) {
			te_bind_result_free(&mine);
			return -1;
		}
		res = &mine;
	}
	if (local_id >= res->nranks) {
		te_snprintf(out->msg, sizeof(out->msg),
			    "local rank %u outside "
			    "the %u computed",
			    local_id, res->nranks);
		te_bind_result_free(&mine);
		return -1;
	}
	{
		const struct te_bind_rank *r = &res->ranks[local_id];
		char cpus[256], nodes[128];

		te_bind_format_set(r->cpuset, cpus, sizeof(cpus));
		te_bind_format_set(r->nodeset, nodes, sizeof(nodes));
		te_snprintf(out->summary, sizeof(out->summary),
			    "gpu=%s numa=%s cpus=%s",
			    r->busid[0] ? r->busid : "none", nodes, cpus);
		if (own_gpus && r->gpu >= 0) {
			size_t pos;

			/* CUDA numbers the GPUs it can see: with the step's
			 * node indexes in CUDA_VISIBLE_DEVICES the rank's is
			 * its node index, with device cgroups (indexes
			 * 0..n-1) its position among the step's GPUs. */
			for (pos = 0; pos < bs.req.ngpus; pos++)
				if ((int)bs.gpus[pos] == r->gpu)
					break;
			if (genv->slurm_step_gpus &&
			    genv->cuda_visible_devices &&
			    strcmp(genv->slurm_step_gpus,
				   genv->cuda_visible_devices) != 0)
				te_snprintf(out->visible, sizeof(out->visible),
					    "%zu", pos);
			else
				te_snprintf(out->visible, sizeof(out->visible),
					    "%d", r->gpu);
		}
		rc = te_bind_apply(bs.topo, r, 1, out->msg, sizeof(out->msg));
		if (verbose && te_bind_format_rank(r, line, sizeof(line)) > 0)
			te_snprintf(
				out->verbose, sizeof(out->verbose),
				"bind: rank %u (local %u): %s%s%s", global_id,
				local_id,
				strchr(line, ' ')
					? strchr(strchr(line, ' ') + 1, ' ') + 1
					: line,
				(r->note[0] || bs.note[0]) ? " -- " : "",
				r->note[0] ? r->note : bs.note);
	}
	te_bind_result_free(&mine);
	if (rc < 0) {
		char m[TE_ERR_MAX];

		te_snprintf(m, sizeof(m), "cannot bind rank %u: %s", global_id,
			    out->msg);
		te_strlcpy(out->msg, m, sizeof(out->msg));
		return -1;
	}
	if (rc == 1) {
		char m[TE_ERR_MAX];

		/* CPUs bound, memory not: worth saying, not failing. */
		te_snprintf(m, sizeof(m), "rank %u: memory not bound: %s",
			    global_id, out->msg);
		te_strlcpy(out->msg, m, sizeof(out->msg));
		out->warn_only = 1;
	} else {
		out->msg[0] = '\0';
	}
	return 0;
}
