/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading NVML with dlopen and reading what the GPU health checks need
 * (see nvml_load.h). The signatures are NVML's C API (nvml.h), written
 * here with plain types: no NVIDIA header is needed to build. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvml_load.h"
#include "util/strutil.h"

#define GPUS_MAX 64

typedef void *nvml_dev;
/* nvmlProcessInfo_v2_t (the _v2 call's; _v3's before R535) */
struct nvml_proc {
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};

struct nvml {
	void *h;
	int (*init)(void);
	int (*shutdown)(void);
	int (*count)(unsigned int *);
	int (*handle)(unsigned int, nvml_dev *);
	int (*ecc)(nvml_dev, int, int, unsigned long long *);
	int (*retired)(nvml_dev, int *);
	int (*remap)(nvml_dev, unsigned int *, unsigned int *, unsigned int *,
		     unsigned int *);
	int (*procs)(nvml_dev, unsigned int *, void *);
	size_t proc_stride; /* the bytes of one entry procs writes */
	int (*nvlink)(nvml_dev, unsigned int, int *);
	int (*pci)(nvml_dev, void *);
};

/* Each symbol, or NULL (a call that is missing reads as rc 12). */
static void resolve(struct nvml *n)
{
	n->init = (int (*)(void))dlsym(n->h, "nvmlInit_v2");
	n->shutdown = (int (*)(void))dlsym(n->h, "nvmlShutdown");
	n->count =
		(int (*)(unsigned int *))dlsym(n->h, "nvmlDeviceGetCount_v2");
	n->handle = (int (*)(unsigned int, nvml_dev *))dlsym(
		n->h, "nvmlDeviceGetHandleByIndex_v2");
	n->ecc = (int (*)(nvml_dev, int, int, unsigned long long *))dlsym(
		n->h, "nvmlDeviceGetTotalEccErrors");
	n->retired = (int (*)(nvml_dev, int *))dlsym(
		n->h, "nvmlDeviceGetRetiredPagesPendingStatus");
	n->remap = (int (*)(
		nvml_dev, unsigned int *, unsigned int *, unsigned int *,
		unsigned int *))dlsym(n->h, "nvmlDeviceGetRemappedRows");
	/* _v2's nvmlProcessInfo_v2_t has kept its 24 bytes; _v3's entry
	 * grew to 32 (usedGpuCcProtectedMemory) in R535: read as 24-byte
	 * entries, its pids came out wrong and 32 processes overran the
	 * buffer. _v3 only where no _v2 is, into a buffer with room for
	 * 64 bytes an entry, read at the stride its driver writes. */
	n->procs = (int (*)(nvml_dev, unsigned int *, void *))dlsym(
		n->h, "nvmlDeviceGetComputeRunningProcesses_v2");
	n->proc_stride = sizeof(struct nvml_proc);
	n->nvlink = (int (*)(nvml_dev, unsigned int,
			     int *))dlsym(n->h, "nvmlDeviceGetNvLinkState");
	n->pci = (int (*)(nvml_dev, void *))dlsym(n->h,
						  "nvmlDeviceGetPciInfo_v3");
	if (!n->pci)
		n->pci = (int (*)(nvml_dev, void *))dlsym(
			n->h, "nvmlDeviceGetPciInfo_v2");
	if (!n->procs) {
		n->procs = (int (*)(nvml_dev, unsigned int *, void *))dlsym(
			n->h, "nvmlDeviceGetComputeRunningProcesses_v3");
		if (dlsym(n->h, "nvmlSystemGetConfComputeState"))
			n->proc_stride = 32; /* R535 and later */
	}
}

#define NVML_MISSING 12
#define PROC_ENTRY_MAX 64 /* room for a larger entry than any known */
#define MEMORY_ERROR_UNCORRECTED 1
#define VOLATILE_ECC 0

/* A process NVML listed that /proc no longer shows may have exited in
 * between: asked again, a pid NVML no longer lists is gone (not a
 * foreign process); one still listed stays (not in this node's /proc). */
static void drop_gone(const struct nvml *n, nvml_dev d, struct te_health_gpu *g,
		      unsigned char *buf)
{
	unsigned int count = TE_HEALTH_GPU_PROCS_MAX, i, j;
	int k, kept = 0, missing = 0;

	for (k = 0; k < g->n_procs; k++)
		missing |= g->procs[k].uid < 0;
	if (!missing)
		return;
	memset(buf, 0, TE_HEALTH_GPU_PROCS_MAX * PROC_ENTRY_MAX);
	if (n->procs(d, &count, buf))
		return; /* as it was: each fails */
	if (count > TE_HEALTH_GPU_PROCS_MAX)
		count = TE_HEALTH_GPU_PROCS_MAX;
	for (k = 0; k < g->n_procs; k++) {
		int listed = g->procs[k].uid >= 0;

		for (i = 0; i < count && !listed; i++) {
			struct nvml_proc p;

			memcpy(&p, buf + (size_t)i * n->proc_stride, sizeof(p));
			listed = p.pid == g->procs[k].pid;
		}
		if (listed)
			g->procs[kept++] = g->procs[k];
	}
	for (j = (unsigned)kept; j < (unsigned)g->n_procs; j++)
		memset(&g->procs[j], 0, sizeof(g->procs[j]));
	g->n_procs = kept;
}

/* The processes holding memory on d, owners read from /proc. */
static void read_procs(const struct nvml *n, nvml_dev d,
		       struct te_health_gpu *g)
{
	static unsigned char buf[TE_HEALTH_GPU_PROCS_MAX * PROC_ENTRY_MAX];
	unsigned int count = TE_HEALTH_GPU_PROCS_MAX, i;

	memset(buf, 0, sizeof(buf));
	g->procs_rc = n->procs ? n->procs(d, &count, buf) : NVML_MISSING;
	if (g->procs_rc)
		return;
	if (count > TE_HEALTH_GPU_PROCS_MAX)
		count = TE_HEALTH_GPU_PROCS_MAX;
	for (i = 0; i < count; i++) {
		struct te_health_gpu_proc *q = &g->procs[g->n_procs++];
		struct nvml_proc p;

		memcpy(&p, buf + (size_t)i * n->proc_stride, sizeof(p));
		q->pid = p.pid;
		q->mem_bytes = p.used;
		te_health_proc_owner("/proc", q->pid, &q->uid, q->comm,
				     sizeof(q->comm));
		q->mps = te_health_proc_is_mps("/proc", q->pid);
	}
	drop_gone(n, d, g, buf);
}

/* Each NVLink link of d (0 to 17) when the site wants links up: a link
 * NVML calls not supported or an invalid argument is not there. */
static void read_links(const struct nvml *n, nvml_dev d,
		       struct te_health_gpu *g)
{
	unsigned link;
	int active, rc;

	if (!g->links_want)
		return;
	if (!n->nvlink) {
		g->links_rc = NVML_MISSING;
		return;
	}
	for (link = 0; link < TE_HEALTH_NVLINK_MAX; link++) {
		active = 0;
		rc = n->nvlink(d, link, &active);
		if (rc == TE_NVML_NOT_SUPPORTED ||
		    rc == TE_NVML_INVALID_ARGUMENT)
			continue;
		if (rc) {
			g->links_rc = rc;
			return;
		}
		g->n_links_seen++;
		if (active)
			g->n_links_up++;
		else
			g->links_down |= 1ul << link;
	}
}

static void read_gpu(const struct nvml *n, unsigned index,
		     struct te_health_gpu *g)
{
	unsigned int pending = 0, failed = 0, corr = 0, unc = 0;
	nvml_dev d = NULL;

	unsigned want = g->links_want;

	memset(g, 0, sizeof(*g));
	g->index = index;
	g->links_want = want;
	g->handle_rc = n->handle ? n->handle(index, &d) : NVML_MISSING;
	if (g->handle_rc)
		return;
	g->ecc_rc = n->ecc ? n->ecc(d, MEMORY_ERROR_UNCORRECTED, VOLATILE_ECC,
				    &g->ecc_uncorrected)
			   : NVML_MISSING;
	g->retired_rc = n->retired ? n->retired(d, &g->retired_pending)
				   : NVML_MISSING;
	g->remap_rc = n->remap ? n->remap(d, &corr, &unc, &pending, &failed)
			       : NVML_MISSING;
	g->remap_uncorrectable = unc;
	g->remap_pending = pending;
	g->remap_failed = failed;
	read_links(n, d, g);
	read_procs(n, d, g);
}

/* The PCI address of each GPU NVML shows (nvmlPciInfo_t: domain, bus and
 * device after the 16-byte legacy id), for naming the GPU of an XID;
 * their number in *npci. */
static void read_pci(const struct nvml *n, unsigned visible,
		     struct te_health_gpu_pci *pci, int *npci)
{
	unsigned char info[256];
	unsigned int i, v[3];
	nvml_dev d;

	*npci = 0;
	if (!n->pci || !n->handle)
		return;
	for (i = 0; i < visible && i < GPUS_MAX; i++) {
		memset(info, 0, sizeof(info));
		if (n->handle(i, &d) || n->pci(d, info))
			continue;
		memcpy(v, info + 16, sizeof(v));
		pci[*npci] = (struct te_health_gpu_pci){ i, v[0], v[1], v[2] };
		(*npci)++;
	}
}

/* The GPUs the site says the node has (health_gpu_count; 0: not said),
 * for this check's run (one per child process). */
static unsigned site_expect;

/* No NVML here: not applicable without job GPUs or the site's count,
 * else a failure (a GPU node whose driver failed must not pass). */
static void absent(int ngpus, const char *why, struct te_health_set *out)
{
	if (ngpus)
		te_health_add(out, "gpu", "", "", TE_HV_FAIL,
			      "gpu: the job has GPUs but %s", why);
	else if (site_expect)
		te_health_add(out, "gpu", "", "", TE_HV_FAIL,
			      "gpu: the site expects %u GPUs "
			      "(health_gpu_count) but %s",
			      site_expect, why);
	else
		te_health_add(out, "gpu", "", "", TE_HV_NA,
			      "gpu: not applicable: %s", why);
}

/* Where NVML is looked for when the site names no library: the
 * distributions' fixed directories, never LD_LIBRARY_PATH (root would
 * run the constructor of a library a user put there). */
static const char *const nvml_dirs[] = { "/usr/lib/x86_64-linux-gnu",
					 "/usr/lib/aarch64-linux-gnu",
					 "/usr/lib64", "/usr/lib", NULL };

/* path is a file root (or the caller) owns that no one else may write,
 * in a directory alike: 1, else 0 with why. */
static int trusted(const char *path, char *why, size_t len)
{
	char real[PATH_MAX], *slash;
	struct stat st;
	uid_t me = getuid();

	if (!realpath(path, real) || stat(real, &st) < 0) {
		te_snprintf(why, len, "%s", strerror(errno));
		return 0;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != me) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		te_snprintf(why, len,
			    "not a regular file of root's that only its owner "
			    "may write");
		return 0;
	}
	slash = strrchr(real, '/');
	if (slash == real)
		slash++;
	*slash = '\0';
	if (stat(real, &st) < 0 || (st.st_uid != 0 && st.st_uid != me) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		te_snprintf(why, len, "its directory is writable by others");
		return 0;
	}
	return 1;
}

/* NVML's library into path: the site's (lib), else the first of the
 * fixed directories' that exists. 0, or -1 with the result added. */
static int nvml_find(const char *lib, int ngpus, char *path, size_t len,
		     struct te_health_set *out)
{
	char why[128];
	int i;

	if (lib && lib[0]) {
		te_strlcpy(path, lib, len);
	} else {
		for (i = 0; nvml_dirs[i]; i++) {
			te_snprintf(path, len, "%s/libnvidia-ml.so.1",
				    nvml_dirs[i]);
			if (access(path, F_OK) == 0)
				break;
		}
		if (!nvml_dirs[i]) {
			absent(ngpus, "no NVML (libnvidia-ml.so.1)", out);
			return -1;
		}
	}
	if (!trusted(path, why, sizeof(why))) {
		te_health_add(out, "gpu", "", "", TE_HV_FAIL,
			      "gpu: libnvidia-ml.so.1 cannot be loaded: "
			      "%.100s: %s",
			      path, why);
		return -1;
	}
	return 0;
}

/* Loads and initialises NVML into n; 0, or -1 with the result added. */
static int nvml_open(struct nvml *n, const char *lib, int ngpus,
		     struct te_health_set *out)
{
	char path[PATH_MAX];
	const char *e;
	int rc;

	memset(n, 0, sizeof(*n));
	if (nvml_find(lib, ngpus, path, sizeof(path), out) < 0)
		return -1;
	n->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!n->h) {
		e = dlerror();
		te_health_add(out, "gpu", "", "", TE_HV_FAIL,
			      "gpu: libnvidia-ml.so.1 cannot be loaded: %.120s",
			      e ? e : "?");
		return -1;
	}
	resolve(n);
	if (!n->init || !n->count) {
		te_health_add(out, "gpu", "", "", TE_HV_FAIL,
			      "gpu: libnvidia-ml.so.1 has no nvmlInit_v2 or "
			      "nvmlDeviceGetCount_v2: not NVML");
		return -1;
	}
	rc = n->init();
	if (rc == 9) {
		absent(ngpus, "the NVIDIA driver is not loaded", out);
		return -1;
	}
	if (rc) {
		te_health_add(out, "gpu", "", "", TE_HV_FAIL,
			      "gpu: nvmlInit failed (%s, %d)",
			      te_health_nvml_rc_text(rc), rc);
		return -1;
	}
	return 0;
}

void te_nvml_check(const char *lib, const unsigned *gpus, int ngpus,
		   unsigned expect, unsigned nvlink, long allowed_uid,
		   struct te_health_gpu_pci *pci, int *npci,
		   struct te_health_set *out)
{
	static struct te_health_gpu g[GPUS_MAX];
	struct nvml n;
	unsigned int visible = 0, i, want;
	int rc;

	site_expect = expect;
	if (npci)
		*npci = 0;
	if (nvml_open(&n, lib, ngpus, out) < 0)
		return; /* the handle stays: the child exits soon */
	rc = n.count(&visible);
	if (rc) {
		te_health_add(out, "gpu", "", "", TE_HV_FAIL,
			      "gpu: nvmlDeviceGetCount failed (%s, %d)",
			      te_health_nvml_rc_text(rc), rc);
		return;
	}
	if (expect && visible < expect)
		te_health_add(out, "gpu", "", "missing", TE_HV_FAIL,
			      "gpu: %u GPUs visible, the site expects %u "
			      "(health_gpu_count)",
			      visible, expect);
	if (!ngpus && !visible) {
		if (!expect)
			absent(0, "NVML shows no GPU", out);
		return;
	}
	want = ngpus ? (unsigned)ngpus : visible;
	if (want > GPUS_MAX)
		want = GPUS_MAX;
	for (i = 0; i < want; i++) {
		unsigned index = ngpus ? gpus[i] : i;

		memset(&g[i], 0, sizeof(g[i]));
		g[i].index = index;
		g[i].links_want = nvlink;
		if (index < visible)
			read_gpu(&n, index, &g[i]);
	}
	te_health_gpu_results(g, (int)want, visible, allowed_uid, out);
	if (pci && npci)
		read_pci(&n, visible, pci, npci);
	if (n.shutdown)
		n.shutdown();
}
