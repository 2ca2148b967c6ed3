/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nccl.h stand-in: the few declarations of NCCL's that nccl_probe.c uses,
 * for a root or machine without the CUDA toolkit (t62 copies it in as
 * nccl.h, next to nccl_standin.c's libnccl.so.2). */
#ifndef TE_NCCL_STANDIN_H
#define TE_NCCL_STANDIN_H

typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2
} ncclResult_t;
typedef struct ncclComm *ncclComm_t;
typedef struct {
	char internal[128];
} ncclUniqueId;

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
			      int rank);
const char *ncclGetErrorString(ncclResult_t result);

#endif
