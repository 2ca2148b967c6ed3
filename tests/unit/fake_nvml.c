/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A stand-in for NVML (libnvidia-ml.so.1) on machines without a GPU: the
 * calls the GPU health check makes (pmix/nvml_load.c), answering as
 * healthy GPUs would, with faults per node read from the file
 * TE_FAKE_NVML_CONF names, one per line "NODE WHAT [ARGS]" (NODE this
 * host's short name, or '*'):
 *   gpus N              N GPUs (default 4)
 *   ecc GPU COUNT       volatile uncorrectable ECC errors
 *   retired GPU         retired pages pending
 *   remap_pending GPU   remapped rows pending
 *   remap_failed GPU    a row remapping failed
 *   unsupported GPU     retired pages and remapped rows: not supported
 *   lost GPU            its handle: GPU is lost (15)
 *   proc GPU PID MIB    a process holding memory
 *   init RC             nvmlInit_v2 returns RC
 *   hang                nvmlInit_v2 never returns
 *   vanish GPU PID      PID is listed by the first process query only
 *                       (a process that exits meanwhile)
 *   stride32            _v3 writes R535's 32-byte entries (with
 *                       usedGpuCcProtectedMemory); _v2 keeps 24 bytes
 *   nvlinks N           N NVLink links per GPU, all active (default 0:
 *                       no NVLink, every link "not supported")
 *   nvlink_down GPU L   link L of GPU is not active
 *   nvlink_rc GPU RC    nvmlDeviceGetNvLinkState returns RC for GPU
 * Each GPU's PCI address is 0000:(GPU + 1) * 16:00 (gpu 3: 0000:40:00).
 * Without TE_FAKE_NVML_CONF (the job prolog's helper runs with a fixed
 * environment), the file fake_nvml.conf in the directory this library was
 * loaded from. Tests name it with the site key health_nvml. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define GPUS 16
#define PROCS 40

struct fake_proc {
	unsigned int pid;
	unsigned long long used;
	unsigned int gi, ci;
};

static struct {
	unsigned gpus;
	unsigned long long ecc[GPUS];
	int retired[GPUS], remap_pending[GPUS], remap_failed[GPUS];
	int unsupported[GPUS], lost[GPUS];
	int nprocs[GPUS];
	struct fake_proc procs[GPUS][PROCS];
	int init_rc, hang, stride32;
	unsigned nvlinks;
	unsigned long nvlink_down[GPUS];
	int nvlink_rc[GPUS];
	unsigned vanish[GPUS]; /* a pid listed once only; 0: none */
	int queries[GPUS];
} st;

EXPORT int nvmlInit_v2(void);
EXPORT int nvmlShutdown(void);
EXPORT int nvmlDeviceGetCount_v2(unsigned int *n);
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d);
EXPORT int nvmlDeviceGetTotalEccErrors(void *d, int type, int counter,
				       unsigned long long *n);
EXPORT int nvmlDeviceGetRetiredPagesPendingStatus(void *d, int *pending);
EXPORT int nvmlDeviceGetRemappedRows(void *d, unsigned int *corr,
				     unsigned int *unc, unsigned int *pending,
				     unsigned int *failed);
EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned int *n,
						   void *p);
EXPORT int nvmlDeviceGetComputeRunningProcesses_v2(void *d, unsigned int *n,
						   void *p);
EXPORT int nvmlDeviceGetNvLinkState(void *d, unsigned int link, int *active);
EXPORT int nvmlDeviceGetPciInfo_v3(void *d, void *info);

/* One line of the file, if it is for this node. */
static void conf_line(const char *line, const char *node)
{
	char who[64], what[32];
	unsigned g = 0, a = 0, b = 0;
	int n = sscanf(line, "%63s %31s %u %u %u", who, what, &g, &a, &b);

	if (n < 2 || (strcmp(who, "*") && strcmp(who, node)))
		return;
	if (!strcmp(what, "hang")) {
		st.hang = 1;
		return;
	}
	if (!strcmp(what, "stride32")) {
		st.stride32 = 1;
		return;
	}
	if (!strcmp(what, "gpus") && n >= 3)
		st.gpus = g;
	if (!strcmp(what, "init") && n >= 3)
		st.init_rc = (int)g;
	if (!strcmp(what, "nvlinks") && n >= 3)
		st.nvlinks = g;
	if (g >= GPUS || n < 3)
		return;
	if (!strcmp(what, "ecc") && n >= 4)
		st.ecc[g] = a;
	else if (!strcmp(what, "retired"))
		st.retired[g] = 1;
	else if (!strcmp(what, "remap_pending"))
		st.remap_pending[g] = 1;
	else if (!strcmp(what, "remap_failed"))
		st.remap_failed[g] = 1;
	else if (!strcmp(what, "unsupported"))
		st.unsupported[g] = 1;
	else if (!strcmp(what, "vanish") && n >= 4)
		st.vanish[g] = a;
	else if (!strcmp(what, "lost"))
		st.lost[g] = 1;
	else if (!strcmp(what, "nvlink_down") && n >= 4 && a < 64)
		st.nvlink_down[g] |= 1ul << a;
	else if (!strcmp(what, "nvlink_rc") && n >= 4)
		st.nvlink_rc[g] = (int)a;
	else if (!strcmp(what, "proc") && n >= 5 && st.nprocs[g] < PROCS) {
		st.procs[g][st.nprocs[g]].pid = a;
		st.procs[g][st.nprocs[g]++].used = (unsigned long long)b << 20;
	}
}

/* fake_nvml.conf beside this library (dladdr: the path it was loaded
 * from), into buf; NULL when unknown. */
static const char *conf_beside(char *buf, size_t len)
{
	Dl_info info;
	const char *slash;

	if (!dladdr((void *)conf_beside, &info) || !info.dli_fname ||
	    !(slash = strrchr(info.dli_fname, '/')))
		return NULL;
	if (snprintf(buf, len, "%.*s/fake_nvml.conf",
		     (int)(slash - info.dli_fname), info.dli_fname) >= (int)len)
		return NULL;
	return buf;
}

int nvmlInit_v2(void)
{
	static char beside[4096];
	const char *path = getenv("TE_FAKE_NVML_CONF");
	char node[64] = "", line[256], *dot;
	FILE *f;

	if (!path)
		path = conf_beside(beside, sizeof(beside));
	memset(&st, 0, sizeof(st));
	st.gpus = 4;
	gethostname(node, sizeof(node) - 1);
	if ((dot = strchr(node, '.')))
		*dot = '\0';
	f = path ? fopen(path, "r") : NULL;
	while (f && fgets(line, sizeof(line), f))
		conf_line(line, node);
	if (f)
		fclose(f);
	while (st.hang)
		pause();
	return st.init_rc;
}

int nvmlShutdown(void)
{
	return 0;
}

int nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = st.gpus;
	return 0;
}

/* A handle is its index + 1 (never NULL). */
static unsigned gpu_of(void *d)
{
	return (unsigned)((unsigned long)d - 1);
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d)
{
	if (i >= st.gpus || i >= GPUS)
		return 2;
	if (st.lost[i])
		return 15;
	*d = (void *)(unsigned long)(i + 1);
	return 0;
}

int nvmlDeviceGetTotalEccErrors(void *d, int type, int counter,
				unsigned long long *n)
{
	if (type != 1 || counter != 0)
		return 2; /* only volatile uncorrected is asked */
	*n = st.ecc[gpu_of(d)];
	return 0;
}

int nvmlDeviceGetRetiredPagesPendingStatus(void *d, int *pending)
{
	if (st.unsupported[gpu_of(d)])
		return 3;
	*pending = st.retired[gpu_of(d)];
	return 0;
}

int nvmlDeviceGetRemappedRows(void *d, unsigned int *corr, unsigned int *unc,
			      unsigned int *pending, unsigned int *failed)
{
	unsigned g = gpu_of(d);

	if (st.unsupported[g])
		return 3;
	*corr = 0;
	*unc = st.remap_pending[g] || st.remap_failed[g];
	*pending = (unsigned)st.remap_pending[g];
	*failed = (unsigned)st.remap_failed[g];
	return 0;
}

/* The processes of d as entries of stride bytes (24: nvmlProcessInfo_v2_t;
 * 32: R535's nvmlProcessInfo_t, usedGpuCcProtectedMemory last). */
static int procs(void *d, unsigned int *n, void *p, size_t stride)
{
	unsigned g = gpu_of(d), k = 0;
	int i, later = st.queries[g]++ > 0;

	if ((unsigned)st.nprocs[g] > *n) {
		*n = (unsigned)st.nprocs[g];
		return 7;
	}
	for (i = 0; i < st.nprocs[g]; i++) {
		if (later && st.vanish[g] && st.procs[g][i].pid == st.vanish[g])
			continue;
		memset((char *)p + stride * (size_t)k, 0, stride);
		memcpy((char *)p + stride * (size_t)k++, &st.procs[g][i],
		       sizeof(st.procs[g][i]));
	}
	*n = k;
	return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned int *n, void *p)
{
	return procs(d, n, p, st.stride32 ? 32 : sizeof(struct fake_proc));
}

int nvmlDeviceGetComputeRunningProcesses_v2(void *d, unsigned int *n, void *p)
{
	return procs(d, n, p, sizeof(struct fake_proc));
}

/* NVML_NVLINK_MAX_LINKS is 18: past it, or past this GPU's links, an
 * invalid argument or not supported, as NVML answers. */
int nvmlDeviceGetNvLinkState(void *d, unsigned int link, int *active)
{
	unsigned g = gpu_of(d);

	if (st.nvlink_rc[g])
		return st.nvlink_rc[g];
	if (link >= 18)
		return 2;
	if (link >= st.nvlinks)
		return 3;
	*active = !(st.nvlink_down[g] & (1ul << link));
	return 0;
}

/* nvmlPciInfo_t: busIdLegacy[16], domain, bus, device, pciDeviceId,
 * pciSubSystemId, busId[32]. */
int nvmlDeviceGetPciInfo_v3(void *d, void *info)
{
	unsigned g = gpu_of(d), v[3] = { 0, (g + 1) * 16, 0 };
	char *p = info;

	memset(p, 0, 68);
	/* at most 3 digits (GPUS x 16): the compiler sees it fits */
	snprintf(p, 16, "0000:%02x:00.0", v[1] & 0xfffu);
	memcpy(p + 16, v, sizeof(v));
	snprintf(p + 36, 32, "00000000:%02X:00.0", v[1]);
	return 0;
}
