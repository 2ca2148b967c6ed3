/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PMIx side of the PMIx layer: a client session, and the job-wide
 * barrier with a deadline and a report of who did not arrive. Used by the
 * rendezvous helper (trainenv-rdzv, the launch barrier) and by libtrainenv
 * (the application barrier, also behind `trainenv barrier` and the Python
 * module). Never linked into the SPANK plugin: PMIx client calls must not
 * run in slurmstepd or in a task before exec (docs/design.md section 3).
 *
 * The barrier is a PMIx fence (with or without data collection) that this
 * side waits for with its own deadline; Slurm's server may wait longer.
 * PMIx cannot tell who has arrived, so rank 0 also runs a small TCP
 * coordinator: its address and a random token are published over PMIx
 * (and, for rank 0's node, in a file in the step's PMIx temporary
 * directory); a rank whose fence has not completed after a short delay
 * registers with it ("arrived RANK HOST") and keeps the connection. The
 * fast path (everyone there at once) is a plain fence: no TCP at all.
 * At rank 0's deadline the coordinator sends its report to every
 * registered rank; a rank whose own deadline comes first asks for the
 * current report. See docs/pmix.md. */
#ifndef TE_BARRIER_H
#define TE_BARRIER_H

#include <stddef.h>
#include <stdint.h>

#include <pmix.h>

#include "launch/launch_timeline.h"
#include "launch/launch_verdict.h"
#include "launch/rdzv_core.h"

#define TE_MSG_MAX 1200

#define TE_LOCAL_PEERS_MAX 4096

struct te_pmix {
	pmix_proc_t me;
	uint32_t size;
	char host[TE_HOST_MAX]; /* this rank's node as PMIx names it */
	int open;
	uint32_t local_peers[TE_LOCAL_PEERS_MAX]; /* ranks on this node */
	int nlocal;				  /* -1: unknown */
	int64_t commit_slow_since; /* a commit the server has not answered */
	int closing; /* te_pmix_close_start asked the worker to finalize */
};

/* PMIx_Init, the job size and this rank's host. 0, or -1 with a reason. */
int te_pmix_open(struct te_pmix *p, char *err, size_t errlen);
/* PMIx_Finalize. Always call it: Slurm's PMIx server kills the whole step
 * when a client goes away without it. After a commit the server left
 * unanswered, it is waited for half a second and then finishes by itself
 * (a later te_pmix_open fails while it has not). */
void te_pmix_close(struct te_pmix *p);
/* PMIx_Finalize started on the worker thread, not waited for: for a
 * process that needs PMIx no more but still waits for something else
 * (te_barrier_opts.close_early). te_pmix_close then waits for it, as long
 * as it waits for any finalize. Nothing may call PMIx after this. */
void te_pmix_close_start(struct te_pmix *p);

int te_pmix_host_of(struct te_pmix *p, uint32_t rank, char *host, size_t len);
int te_pmix_put(struct te_pmix *p, const char *key, const char *val, char *err,
		size_t errlen);
/* PMIx_Commit. When the server does not answer within half a second the
 * commit goes on by itself and this returns 0: the caller's deadline
 * stands (see te_pmix_server_silent_ms). */
int te_pmix_commit(struct te_pmix *p, char *err, size_t errlen);
/* How long this node's PMIx server has left a commit of ours unanswered
 * (0: it answered, or nothing asked). */
int64_t te_pmix_server_silent_ms(struct te_pmix *p);
/* A string another rank put. immediate: only what this node already has
 * (after a fence that collected data); never waits. 0 or -1. */
int te_pmix_get(struct te_pmix *p, uint32_t rank, const char *key,
		int immediate, char *out, size_t len);
/* Waits for a string rank put, at most timeout_ms (direct modex: the
 * server asks rank's node). 0, or -1 with a reason (err) and *timed_out. */
int te_pmix_get_wait(struct te_pmix *p, uint32_t rank, const char *key,
		     int timeout_ms, char *out, size_t len, int *timed_out,
		     char *err, size_t errlen);
struct te_barrier_opts {
	double timeout_s;   /* the deadline, from the call */
	unsigned seq;	    /* 0: the launch barrier; 1, 2, ...: later */
	const char *tmpdir; /* node-local, private to the job (may be NULL) */
	int tmpdir_ok;	    /* the caller found tmpdir te_private_dir_ok */
	const char *addr;   /* rank 0: the address the others reach it on */
	/* 0: a PMIx fence decides (later barriers: every rank is a PMIx
	 * client); 1: rank 0's coordinator decides, when every rank has
	 * registered (the launch, where one process per node stands for
	 * the node's ranks: Slurm 22.05 cannot fence a subset of ranks) */
	int coordinated;
	/* the node's other ranks this process stands for: each says it is
	 * here with a file tmpdir/trainenv-arrived/RANK */
	const uint32_t *followers;
	size_t nfollowers;
	/* coordinated: this node's facts for rank 0 (versions, checkpoint) */
	struct te_coord_req node;
	/* coordinated: this process's own rank failed before the barrier
	 * (why, printable ASCII); NULL when it did not. Rank 0 is told (a
	 * follower says so with a file tmpdir/trainenv-failed.RANK), answers
	 * every node at once with the report, and the step fails. */
	const char *failed;
	/* coordinated: the launch tree's width (children per helper), the
	 * checks rank 0 judges once every rank is there, and what rank 0's
	 * "done" carries down to every node (its MASTER_ADDR PORT) */
	unsigned tree_width;
	const struct te_launch_checks *checks;
	const char *done_text;
	/* coordinated: te_barrier_prepare neither listens nor counts this
	 * rank as arrived; te_barrier_start does (what the children must
	 * fetch can be put in between, and nobody can connect before) */
	int defer_start;
	/* coordinated, a helper below rank 0 with no children in the launch
	 * tree: once its registration is sent it needs PMIx no more (the
	 * answer, a retry, rank 0's probe all come over its connection),
	 * so its session is finalized then (te_pmix_close_start), beside
	 * the wait for the answer instead of after it, on the launch's
	 * critical path. The caller closes the session after the wait as
	 * ever; p->closing says whether PMIx may still be called. */
	int close_early;
	/* test hook, rank 0: its coordinator cuts the first test_cut
	 * connections it accepts, as a flood of strangers could (the
	 * helpers must try again) */
	unsigned test_cut;
	/* coordinated, checkpoint-dir: this node's look at the directory
	 * with rank 0's probe, which comes down the launch tree over the
	 * children's connections (not through PMIx: a parent's put would
	 * wait for its own parent, level after level). probe: rank 0's own
	 * ("NAME TOKEN" or "error REASON"); the others get it from their
	 * parent. probe_check writes "ok" or what is wrong into out and
	 * returns 1, or returns 0 to be called again half a second later (a
	 * network file system slow to show rank 0's file); it first runs
	 * once the probe is passed on to this node's children. */
	int (*probe_check)(void *arg, const char *probe, char *out, size_t len);
	void *probe_arg;
	const char *probe;
};

struct te_barrier_result {
	int ok;		       /* every rank arrived and nothing was rejected */
	int rejected;	       /* coordinated: a launch check failed */
	int aborted;	       /* coordinated: a rank failed before the
				   barrier; msg is rank 0's report */
	int reporter;	       /* rank 0: prints msg/warn for the job */
	char msg[TE_MSG_MAX];  /* why not ok, in one line */
	char warn[TE_MSG_MAX]; /* rank 0: the verdict's warning */
	unsigned test_cut;     /* rank 0: connections the test hook cut */
	char done_text[TE_COORD_TEXT_MAX + 1]; /* coordinated, ok: rank 0's */
	/* rank 0, coordinated, ok: when each node arrived */
	int has_launch;
	struct te_launch_skew launch;
};

struct te_barrier;

/* Before the commit: rank 0 starts its coordinator and puts its address.
 * Returns a barrier to wait on, or NULL with a reason in err. */
struct te_barrier *te_barrier_prepare(struct te_pmix *p,
				      const struct te_barrier_opts *o,
				      char *err, size_t errlen);

/* Commits and waits. 0: every rank arrived (r->ok); -1: r->msg says why,
 * in one line ("barrier timed out after 10 s: 5 of 6 ranks arrived;
 * missing: rank 3 (node n2)"), or r->rejected. Frees b. */
int te_barrier_wait(struct te_barrier *b, struct te_barrier_result *r);

/* After te_barrier_prepare with defer_start: listens (a helper with
 * children; its address is put, to be committed) and counts this rank as
 * arrived. 0, or -1 with a reason. */
int te_barrier_start(struct te_barrier *b, char *err, size_t errlen);
/* Commits what this process put (the wait then need not). 0 or -1. */
int te_barrier_commit(struct te_barrier *b, char *err, size_t errlen);

/* Frees a prepared barrier that is not waited on. */
void te_barrier_free(struct te_barrier *b);

/* After this process closed its PMIx session (te_pmix_close): says so in
 * the node's private directory and waits, at most timeout_ms, until every
 * rank of this node has closed its session of generation gen too.
 *
 * Why: when a client's connection goes away, OpenPMIx's server (4.2)
 * removes that rank from every fence still pending on the node and lets
 * the fence finish without it. A rank that has passed the barrier and
 * starts its next fence (MPI_Init, the next barrier) while another rank's
 * previous session is still closing would otherwise be released without
 * that rank (seen: back-to-back `trainenv barrier` commands drifted apart
 * by whole barriers). 0 when all closed, -1 on timeout. */
int te_local_quiesce(const struct te_pmix *p, const char *tmpdir, unsigned gen,
		     int timeout_ms);

/* The delay before a rank registers with the coordinator. */
int te_barrier_lazy_ms(double timeout_s);

#endif
