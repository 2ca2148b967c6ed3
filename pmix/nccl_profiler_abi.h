/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL's profiler plugin interface, as far as trainenv's profiler plugin
 * (nccl_profiler.c) uses it: the structures NCCL looks up by the symbols
 * ncclProfiler_v3, _v4 and _v5, and the parts of the event descriptors and
 * state arguments the plugin reads. Written from NCCL's sources
 * (src/include/plugin/nccl_profiler.h, profiler/profiler_v3.h to _v7.h,
 * src/plugin/profiler.cc and profiler/profiler_v3.cc to _v5.cc of
 * github.com/NVIDIA/nccl), not copied; nccl.h is not needed to build.
 *
 * What NCCL does with a plugin (verified in src/plugin/profiler.cc): it
 * dlopens NCCL_PROFILER_PLUGIN (a path, or NAME for
 * libnccl-profiler-NAME.so; "none" for no plugin), looks up the newest
 * ncclProfiler_vN it knows first, down to _v1, and calls init once per
 * communicator with an int it shares among all communicators
 * (eActivationMask: the plugin sets which events it wants). It starts a
 * collective's event on the thread that enqueues it, with seqNumber the
 * communicator's count of that collective function (one count per
 * function: all_reduce #5 and all_gather #5 are two collectives), and
 * stops it once the kernel is launched. The proxy thread then starts one
 * kernel channel event per channel the collective runs on, whose parentObj
 * is the collective's handle, and stops it when the channel is done. A
 * NULL handle from startEvent is never passed back.
 *
 * The versions, which NCCL releases use them, and what was verified:
 * - v3 (NCCL 2.25, the first with kernel channel events): init has no
 *   communicator arguments; the collective's descriptor carries the
 *   communicator's name and commHash; a kernel channel event has no GPU
 *   timestamps (its time is the host's, between start and stop). Layout
 *   from profiler_v3.h; a newer NCCL that falls back to a v3 plugin passes
 *   commHash 0 (profiler_v3.cc), but every NCCL that knows v4 or v5 finds
 *   this plugin's v5 or v4 first.
 * - v4 (NCCL 2.26 and 2.27): init gets the communicator (name, commHash,
 *   nodes, ranks, rank); commHash leaves the descriptor; kernel channel
 *   events carry the GPU's globaltimer at start (descriptor) and at stop
 *   (state ncclProfilerKernelChStop, 22). Layout from profiler_v4.h and
 *   NCCL's v4 adapter.
 * - v5 (NCCL 2.28): init takes the communicator id second; the event type
 *   is 64 bits wide; API events (group, collective, p2p API, kernel launch)
 *   are added and are started whenever collective events are on (the
 *   plugin gives them no handle); collective and kernel channel fields as
 *   v4. Layout from profiler_v5.h.
 * - v6 and v7 (NCCL 2.29 on) add copy-engine and kernel phase events and
 *   fields at the end of the collective's descriptor; this plugin does not
 *   claim them: such NCCL loads ncclProfiler_v5 through its own v5 adapter
 *   (profiler_v5.cc of the newest tree), which passes collective and
 *   kernel channel events with their timestamps unchanged.
 * The release numbers are those of NCCL's release notes; the layouts and
 * the calls were read in the sources above, not run against a real NCCL
 * here (tests/unit/pmix/test_nccl_profiler drives the plugin the way these
 * sources do). The calls (who starts a kernel channel, its parent, the
 * stop's state) were read in trees with v4 and later; that NCCL 2.25 gives
 * a v3 kernel channel its collective as parent is assumed from its
 * header's "parentObj" and not seen in its own tree. */
#ifndef TE_NCCL_PROFILER_ABI_H
#define TE_NCCL_PROFILER_ABI_H

#include <stdint.h>

/* ncclResult_t is a C enum: an int across the interface. */
typedef int te_nccl_result_t;
#define TE_NCCL_SUCCESS 0
#define TE_NCCL_INVALID_ARGUMENT 4

/* NCCL's logger (ncclDebugLogger_t); the plugin never calls it. */
typedef void (*te_nccl_logger_t)(int level, unsigned long flags,
				 const char *file, int line, const char *fmt,
				 ...);

/* Event types: bits, the same in every version. */
enum {
	TE_NCCL_EV_GROUP = 1 << 0,
	TE_NCCL_EV_COLL = 1 << 1,
	TE_NCCL_EV_P2P = 1 << 2,
	TE_NCCL_EV_PROXY_OP = 1 << 3,
	TE_NCCL_EV_PROXY_STEP = 1 << 4,
	TE_NCCL_EV_PROXY_CTRL = 1 << 5,
	TE_NCCL_EV_KERNEL_CH = 1 << 6,
	TE_NCCL_EV_NET_PLUGIN = 1 << 7,
	/* v5 on */
	TE_NCCL_EV_GROUP_API = 1 << 8,
	TE_NCCL_EV_COLL_API = 1 << 9,
	TE_NCCL_EV_P2P_API = 1 << 10,
	TE_NCCL_EV_KERNEL_LAUNCH = 1 << 11,
};

/* The state a kernel channel's stop is recorded with (v4 on); the states
 * are a C enum, an int across the interface. */
#define TE_NCCL_STATE_KERNEL_CH_STOP 22

/* The descriptor: type, parent, rank, then a union whose members all
 * start at the same offset (24 on LP64: each member holds a pointer or a
 * 64-bit field). Only the members the plugin reads are written out; NCCL's
 * union has more (p2p, proxy, net plugin, API events), and the plugin
 * never writes to a descriptor. */
struct te_nccl_descr_v3 {
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			const char *name; /* the communicator's */
			uint64_t commHash;
			uint64_t seqNumber;
			const char *func; /* "AllReduce", ... */
		} coll;
		struct {
			uint8_t channelId;
		} kernelCh;
	};
};

/* v4: commHash and name left the collective's descriptor. */
struct te_nccl_descr_v4 {
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			uint64_t seqNumber;
			const char *func;
		} coll;
		struct {
			uint8_t channelId;
			uint64_t pTimer; /* the GPU's globaltimer at start, ns */
		} kernelCh;
	};
};

/* v5: the type is 64 bits wide; the same collective and kernel channel
 * members as v4 (the collective's has parentGroup further on). */
struct te_nccl_descr_v5 {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			uint64_t seqNumber;
			const char *func;
		} coll;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
	};
};

/* recordEventState's arguments (a union of 8-byte members); v3 has no
 * kernel channel state. */
union te_nccl_state_args {
	struct {
		uint64_t pTimer; /* the GPU's globaltimer at stop, ns */
	} kernelCh;
	uint64_t other; /* proxy steps' sizes, counts, net plugin data */
};

#define TE_NCCL_PROFILER_COMMON(descr)                                        \
	te_nccl_result_t (*startEvent)(void *context, void **eHandle,         \
				       descr *eDescr);                        \
	te_nccl_result_t (*stopEvent)(void *eHandle);                         \
	te_nccl_result_t (*recordEventState)(void *eHandle, int eState,       \
					     union te_nccl_state_args *args); \
	te_nccl_result_t (*finalize)(void *context)

struct te_nccl_profiler_v3 {
	const char *name;
	te_nccl_result_t (*init)(void **context, int *eActivationMask);
	TE_NCCL_PROFILER_COMMON(struct te_nccl_descr_v3);
};

struct te_nccl_profiler_v4 {
	const char *name;
	te_nccl_result_t (*init)(void **context, int *eActivationMask,
				 const char *commName, uint64_t commHash,
				 int nNodes, int nranks, int rank,
				 te_nccl_logger_t logfn);
	TE_NCCL_PROFILER_COMMON(struct te_nccl_descr_v4);
};

struct te_nccl_profiler_v5 {
	const char *name;
	te_nccl_result_t (*init)(void **context, uint64_t commId,
				 int *eActivationMask, const char *commName,
				 int nNodes, int nranks, int rank,
				 te_nccl_logger_t logfn);
	TE_NCCL_PROFILER_COMMON(struct te_nccl_descr_v5);
};

#endif
