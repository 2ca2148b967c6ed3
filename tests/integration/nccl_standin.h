/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nccl.h stand-in: the few declarations of NCCL's that nccl_probe.c uses,
 * for a root or machine without the CUDA toolkit (t62 copies it in as
 * nccl.h, next to nccl_standin.c's libnccl.so.2); with
 * -DTE_STANDIN_PROFILER, the collectives of nccl_standin_prof.c too. */
#ifndef TE_NCCL_STANDIN_H
#define TE_NCCL_STANDIN_H

#include <stddef.h>

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

#ifdef TE_STANDIN_PROFILER
/* nccl_standin_prof.c: collectives that drive NCCL_PROFILER_PLUGIN (the
 * datatype, op and stream are not looked at). */
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			   int datatype, int op, ncclComm_t comm, void *stream);
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t count,
			   int datatype, ncclComm_t comm, void *stream);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
/* The communicator ncclCommInitRank gives, with the plugin's context. */
ncclComm_t standin_prof_comm(int nranks, const ncclUniqueId *id, int rank);
#endif

#endif
