/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-preflight: checks one GPU with the CUDA runtime before the
 * training program starts (--train-preflight). The plugin's task_init runs
 * it as the job user, with the task's environment, for the rank's GPU
 * (the binding's rank -> GPU mapping), and reads its result from the pipe
 * on stdout (core/launch/preflight_proto.h); it kills it after
 * TE_PF_TIMEOUT_S seconds.
 *
 *   trainenv-preflight --gpu BUSID [--test-fail TEXT]
 *
 * The runtime is loaded with dlopen (pmix/cudart_load.c), never linked:
 * the program needs only libc and libdl. It selects the GPU by its PCI bus
 * id, creates the context (cudaFree(0)), allocates a small buffer, sets it,
 * synchronizes, reads the free memory and frees the buffer. Any failing
 * call ends the check with that call's name and cudaGetErrorString(); the
 * calls that mean "no usable CUDA on this node" (no runtime, no driver,
 * no device) give RESULT=unavailable instead of fail.
 *
 * --test-fail TEXT (the plugin passes it only with the site policy
 * test-hooks=on): report a failure of cudaMalloc with TEXT, without
 * touching a GPU; for trainenv's tests on machines without one. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cudart_load.h"
#include "launch/preflight_proto.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "launch/version.h"

#define BUF_BYTES (1u << 20)
#define CUDA_ERR_MEMORY_ALLOCATION 2

/* The few runtime calls the check makes (cuda_runtime_api.h; cudaError_t
 * is an int-sized enum). */
typedef int cuda_err;
struct cudart {
	cuda_err (*runtime_version)(int *);
	cuda_err (*driver_version)(int *);
	cuda_err (*device_by_busid)(int *, const char *);
	cuda_err (*set_device)(int);
	cuda_err (*cfree)(void *);
	cuda_err (*cmalloc)(void **, size_t);
	cuda_err (*cmemset)(void *, int, size_t);
	cuda_err (*synchronize)(void);
	cuda_err (*mem_info)(size_t *, size_t *);
	const char *(*error_string)(cuda_err);
};

static struct te_pf_result res;
static int64_t t0;

static unsigned elapsed_ms(void)
{
	return (unsigned)(te_now_ms() - t0);
}

static int emit(int fd)
{
	static char out[TE_PF_OUT_MAX];

	res.ms = elapsed_ms();
	if (te_pf_format(&res, out, sizeof(out)) < 0)
		return 1;
	return te_write_all(fd, out, strlen(out)) < 0;
}

static void set_error(const char *call, int code, const char *text)
{
	te_strlcpy(res.call, call, sizeof(res.call));
	res.code = code;
	te_strlcpy(res.error, text && *text ? text : "unknown error",
		   sizeof(res.error));
}

/* A CUDA call failed: its name and the runtime's words for the error. */
static void cuda_failed(const struct cudart *c, const char *call, cuda_err e)
{
	const char *s = c->error_string ? c->error_string(e) : NULL;
	char text[TE_PF_ERROR_MAX + 1];

	if (s)
		te_snprintf(text, sizeof(text), "%s", s);
	else
		te_snprintf(text, sizeof(text), "CUDA error %d", e);
	set_error(call, e, text);
	res.status = te_pf_classify(call, e);
}

#define LOAD(field, name)                                      \
	do {                                                   \
		*(void **)(&c->field) = dlsym(h, name);        \
		if (!c->field) {                               \
			set_error("dlsym", -1,                 \
				  name " is missing from the " \
				       "CUDA runtime");        \
			return -1;                             \
		}                                              \
	} while (0)

static int load_calls(void *h, struct cudart *c)
{
	LOAD(runtime_version, "cudaRuntimeGetVersion");
	LOAD(driver_version, "cudaDriverGetVersion");
	LOAD(device_by_busid, "cudaDeviceGetByPCIBusId");
	LOAD(set_device, "cudaSetDevice");
	LOAD(cfree, "cudaFree");
	LOAD(cmalloc, "cudaMalloc");
	LOAD(cmemset, "cudaMemset");
	LOAD(synchronize, "cudaDeviceSynchronize");
	LOAD(mem_info, "cudaMemGetInfo");
	LOAD(error_string, "cudaGetErrorString");
	return 0;
}

/* The check proper: 0 when the GPU works. */
static int check(const struct cudart *c, const char *busid)
{
	size_t free_b = 0, total_b = 0;
	void *p = NULL;
	cuda_err e;
	int dev = -1;

	if ((e = c->device_by_busid(&dev, busid)) != 0) {
		cuda_failed(c, "cudaDeviceGetByPCIBusId", e);
		return -1;
	}
	if ((e = c->set_device(dev)) != 0) {
		cuda_failed(c, "cudaSetDevice", e);
		return -1;
	}
	if ((e = c->cfree(NULL)) != 0) { /* creates the context */
		cuda_failed(c, "cudaFree", e);
		return -1;
	}
	if ((e = c->cmalloc(&p, BUF_BYTES)) != 0) {
		cuda_failed(c, "cudaMalloc", e);
		return -1;
	}
	if ((e = c->cmemset(p, 0xa5, BUF_BYTES)) != 0) {
		cuda_failed(c, "cudaMemset", e);
		c->cfree(p);
		return -1;
	}
	if ((e = c->synchronize()) != 0) {
		cuda_failed(c, "cudaDeviceSynchronize", e);
		c->cfree(p);
		return -1;
	}
	if ((e = c->mem_info(&free_b, &total_b)) != 0) {
		cuda_failed(c, "cudaMemGetInfo", e);
		c->cfree(p);
		return -1;
	}
	if ((e = c->cfree(p)) != 0) {
		cuda_failed(c, "cudaFree", e);
		return -1;
	}
	res.free = free_b;
	res.total = total_b;
	res.have_mem = 1;
	res.status = TE_PF_OK;
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: trainenv-preflight --gpu BUSID "
		"[--test-fail TEXT]\n  BUSID: the GPU's PCI bus id, e.g. "
		"0000:3b:00.0 (nvidia-smi --query-gpu=pci.bus_id)\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *busid = NULL, *test_fail = NULL;
	struct cudart c;
	char err[TE_PF_ERROR_MAX + 1];
	void *h;
	int i, out;

	t0 = te_now_ms();
	if ((i = te_protocol_args(&argc, &argv)) >= 0)
		return i;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--gpu") && i + 1 < argc)
			busid = argv[++i];
		else if (!strcmp(argv[i], "--test-fail") && i + 1 < argc)
			test_fail = argv[++i];
		else
			return usage();
	}
	if (!busid || !te_pf_busid_valid(busid))
		return usage();
	/* The result goes to the pipe; anything CUDA itself prints goes to
	 * stderr, so that it cannot garble the result. */
	out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (out < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		return 1;
	memset(&res, 0, sizeof(res));
	memset(&c, 0, sizeof(c));
	res.code = -1;
	te_strlcpy(res.gpu, busid, sizeof(res.gpu));

	h = te_cudart_open(res.library, sizeof(res.library), err, sizeof(err));
	if (!h && !test_fail) {
		set_error("dlopen", -1, err);
		res.status = TE_PF_UNAVAILABLE;
		return emit(out);
	}
	if (h && load_calls(h, &c) < 0 && !test_fail) {
		res.status = TE_PF_UNAVAILABLE;
		return emit(out);
	}
	if (c.runtime_version && c.runtime_version(&res.runtime) != 0)
		res.runtime = 0;
	if (c.driver_version && c.driver_version(&res.driver) != 0)
		res.driver = 0;
	if (test_fail) {
		char text[TE_PF_ERROR_MAX + 1];

		te_snprintf(text, sizeof(text), "%s", test_fail);
		set_error("cudaMalloc", CUDA_ERR_MEMORY_ALLOCATION, text);
		res.status = TE_PF_FAILED;
		return emit(out);
	}
	check(&c, busid);
	return emit(out);
}
