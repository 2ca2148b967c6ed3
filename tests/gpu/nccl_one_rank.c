/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A one-rank NCCL job on a real GPU: the first communicator creation goes
 * through trainenv-nccl.so when it is in LD_PRELOAD (the job-wide barrier
 * of --train-barrier=first-collective runs right before it), then ITERS
 * all_reduces of one float (1 by default), timed. With TE_GPU_PROF_LIB
 * naming trainenv's NCCL profiler plugin (the one NCCL_PROFILER_PLUGIN
 * loads), it then asks the plugin, as its sender does, what it counted.
 * With TE_GPU_HOLD_S it waits that long after the loop with the
 * communicator open (NCCL RAS answers meanwhile: run_on_gpu.sh asks it).
 * Prints one line per step; exit 0 when NCCL worked. Built by
 * run_on_gpu.sh against the CUDA toolkit's headers and libraries.
 * Usage: nccl_one_rank [DEVICE [ITERS]] */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* the plugin's take and its structs (-I pmix -I core) */
#include "nccl_profiler.h"

#define CUDA(call)                                               \
	do {                                                     \
		cudaError_t e_ = (call);                         \
		if (e_ != cudaSuccess) {                         \
			printf("nccl_one_rank: %s: %s\n", #call, \
			       cudaGetErrorString(e_));          \
			return 1;                                \
		}                                                \
	} while (0)
#define NCCL(call)                                               \
	do {                                                     \
		ncclResult_t r_ = (call);                        \
		if (r_ != ncclSuccess) {                         \
			printf("nccl_one_rank: %s: %s\n", #call, \
			       ncclGetErrorString(r_));          \
			return 1;                                \
		}                                                \
	} while (0)

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* What the plugin NCCL loaded counted (nothing when it is not loaded). */
static void profiler_report(void)
{
	const char *lib = getenv("TE_GPU_PROF_LIB");
	struct te_nprof_comm c[16];
	struct te_nprof_counts k = { 0 };
	void *h;
	te_nprof_take_fn take;
	size_t n, i;

	if (!lib)
		return;
	h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		printf("nccl_one_rank: profiler: not loaded by NCCL (%s)\n",
		       dlerror());
		return;
	}
	take = (te_nprof_take_fn)dlsym(h, TE_NPROF_TAKE_SYMBOL);
	if (!take) {
		printf("nccl_one_rank: profiler: no take symbol\n");
		return;
	}
	n = take(c, 16, &k);
	printf("nccl_one_rank: profiler: %zu communicators, %llu kernel "
	       "channels, %llu untimed, %llu refused\n",
	       n, (unsigned long long)k.channels, (unsigned long long)k.untimed,
	       (unsigned long long)k.refused);
	for (i = 0; i < n; i++)
		printf("nccl_one_rank: profiler: communicator %016llx rank "
		       "%d of %d: %llu collectives, wait mean %llu ns, median "
		       "%llu ns\n",
		       (unsigned long long)c[i].st.comm_hash, c[i].rank,
		       c[i].nranks, (unsigned long long)c[i].st.count,
		       (unsigned long long)c[i].st.mean_ns,
		       (unsigned long long)c[i].st.median_ns);
}

int main(int argc, char **argv)
{
	int dev = argc > 1 ? atoi(argv[1]) : 0, version = 0;
	int iters = argc > 2 ? atoi(argv[2]) : 1, i;
	const char *hold = getenv("TE_GPU_HOLD_S");
	float one = 1.0f, got = 0.0f, *buf;
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t s;
	double t0;

	if (iters < 1)
		iters = 1;
	CUDA(cudaSetDevice(dev));
	CUDA(cudaStreamCreate(&s));
	CUDA(cudaMalloc((void **)&buf, sizeof(float)));
	NCCL(ncclGetVersion(&version));
	NCCL(ncclGetUniqueId(&id));
	NCCL(ncclCommInitRank(&comm, 1, id, 0));
	printf("nccl_one_rank: NCCL %d: communicator of 1 rank on device %d\n",
	       version, dev);
	/* one warm-up, then the timed loop, one float each */
	CUDA(cudaMemcpy(buf, &one, sizeof(one), cudaMemcpyHostToDevice));
	NCCL(ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s));
	CUDA(cudaStreamSynchronize(s));
	t0 = now_us();
	for (i = 0; i < iters; i++) {
		NCCL(ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s));
		CUDA(cudaStreamSynchronize(s));
	}
	printf("nccl_one_rank: %d all_reduces in %.0f us: %.2f us each\n",
	       iters, now_us() - t0, (now_us() - t0) / iters);
	CUDA(cudaMemcpy(&got, buf, sizeof(got), cudaMemcpyDeviceToHost));
	printf("nccl_one_rank: all_reduce of 1.0 over 1 rank = %.1f\n", got);
	profiler_report();
	if (hold && atoi(hold) > 0) {
		printf("nccl_one_rank: holding the communicator %d s\n",
		       atoi(hold));
		fflush(stdout);
		sleep((unsigned)atoi(hold));
	}
	NCCL(ncclCommDestroy(comm));
	CUDA(cudaFree(buf));
	return got == 1.0f ? 0 : 1;
}
