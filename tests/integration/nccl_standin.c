/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Stand-ins for the libraries trainenv-nccl.so sits between, to load the
 * shim where neither NCCL nor trainenv's own libtrainenv can run (t62: an
 * older Debian root). Built as libnccl.so.2: ncclCommInitRank succeeds and
 * says so on stdout. Built with -DTE_STANDIN_BARRIER as libtrainenv.so.0
 * (the shim loads it from its own directory): trainenv_barrier says it ran
 * and succeeds, or fails with STANDIN_BARRIER_FAIL=1. Only libc, so that it
 * builds and runs in any root. With -DTE_STANDIN_PROFILER (and
 * nccl_standin_prof.c, -ldl) its communicators and collectives drive a
 * profiler plugin as NCCL does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TE_STANDIN_BARRIER
int trainenv_barrier(double timeout_s, char *err, size_t errlen);

int trainenv_barrier(double timeout_s, char *err, size_t errlen)
{
	const char *fail = getenv("STANDIN_BARRIER_FAIL");

	printf("standin trainenv_barrier timeout=%g\n", timeout_s);
	fflush(stdout);
	if (fail && !strcmp(fail, "1")) {
		snprintf(err, errlen, "the stand-in barrier was told to fail");
		return -1;
	}
	return 0;
}
#else
#ifdef TE_STANDIN_PROFILER
#include "nccl_standin.h" /* built in the tree (tests/unit/pmix/) */
#else
#include "nccl.h" /* copied in as nccl.h (t40, t62) */
#endif

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
			      int rank)
{
	(void)id;
#ifdef TE_STANDIN_PROFILER
	*comm = standin_prof_comm(nranks, &id, rank);
#else
	*comm = NULL;
#endif
	printf("standin ncclCommInitRank rank=%d nranks=%d\n", rank, nranks);
	fflush(stdout);
	return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result)
{
	return result == ncclSuccess	   ? "no error"
	       : result == ncclSystemError ? "unhandled system error"
					   : "error";
}
#endif
