/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A stand-in for a training program's first NCCL calls: each rank creates
 * two communicators with the real libnccl (this machine has no GPU, so
 * NCCL's own call fails after the barrier: that is expected). The rank in
 * PROBE_LATE_RANK starts PROBE_LATE_SECONDS late (after every other rank
 * has begun its barrier, where TRAINENV_NCCL_TRACE shows it); the rank in
 * PROBE_SKIP_RANK never calls NCCL (it exits after PROBE_SKIP_SECONDS,
 * default at once). Linked against
 * libnccl.so so that the calls go through the dynamic linker, as they do
 * from PyTorch. */
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : dflt;
}

/* Wait until the trace holds a barrier-start of every other rank (at most
 * 120 s). Without it the late rank's sleep is measured from its own start,
 * and on a busy machine the other nodes' containers may start later than
 * that by more than the sleep: the "late" rank then is not the last. */
static void wait_for_others(int world)
{
	const char *path = getenv("TRAINENV_NCCL_TRACE");
	char line[256];
	int tries, n = 0;

	if (!path || !*path)
		return;
	for (tries = 0; tries < 1200; tries++) {
		FILE *f = fopen(path, "r");

		n = 0;
		if (f) {
			while (fgets(line, sizeof(line), f))
				if (strstr(line, " barrier-start "))
					n++;
			fclose(f);
		}
		if (n >= world - 1)
			return;
		usleep(100000);
	}
	fprintf(stderr,
		"probe: only %d of the other %d ranks began the barrier in 120 s\n",
		n, world - 1);
}

int main(void)
{
	int rank = env_int("RANK", 0), world = env_int("WORLD_SIZE", 1);
	ncclUniqueId id;
	ncclComm_t comm;
	ncclResult_t r;

	if (rank == env_int("PROBE_SKIP_RANK", -1)) {
		printf("rank %d skips NCCL\n", rank);
		fflush(stdout);
		sleep((unsigned)env_int("PROBE_SKIP_SECONDS", 0));
		return 0;
	}
	if (rank == env_int("PROBE_LATE_RANK", -1)) {
		wait_for_others(world);
		sleep((unsigned)env_int("PROBE_LATE_SECONDS", 0));
	}
	memset(&id, 0, sizeof(id));
	r = ncclCommInitRank(&comm, world, id, rank);
	printf("rank %d first ncclCommInitRank: %d (%s)\n", rank, (int)r,
	       ncclGetErrorString(r));
	r = ncclCommInitRank(&comm, world, id, rank);
	printf("rank %d second ncclCommInitRank: %d (%s)\n", rank, (int)r,
	       ncclGetErrorString(r));
	fflush(stdout);
	return 0;
}
