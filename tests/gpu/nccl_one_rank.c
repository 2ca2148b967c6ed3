/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A one-rank NCCL job on a real GPU: the first communicator creation goes
 * through trainenv-nccl.so when it is in LD_PRELOAD (the job-wide barrier
 * of --train-barrier=first-collective runs right before it), then one
 * all_reduce of one float. Prints one line per step; exit 0 when NCCL
 * worked. Built by run_on_gpu.sh against the CUDA toolkit's headers and
 * libraries. */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(int argc, char **argv)
{
	int dev = argc > 1 ? atoi(argv[1]) : 0, version = 0;
	float one = 1.0f, got = 0.0f, *buf;
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t s;

	CUDA(cudaSetDevice(dev));
	CUDA(cudaStreamCreate(&s));
	CUDA(cudaMalloc((void **)&buf, sizeof(float)));
	CUDA(cudaMemcpy(buf, &one, sizeof(one), cudaMemcpyHostToDevice));
	NCCL(ncclGetVersion(&version));
	NCCL(ncclGetUniqueId(&id));
	NCCL(ncclCommInitRank(&comm, 1, id, 0));
	printf("nccl_one_rank: NCCL %d: communicator of 1 rank on device %d\n",
	       version, dev);
	NCCL(ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s));
	CUDA(cudaStreamSynchronize(s));
	CUDA(cudaMemcpy(&got, buf, sizeof(got), cudaMemcpyDeviceToHost));
	printf("nccl_one_rank: all_reduce of 1.0 over 1 rank = %.1f\n", got);
	NCCL(ncclCommDestroy(comm));
	CUDA(cudaFree(buf));
	return got == 1.0f ? 0 : 1;
}
