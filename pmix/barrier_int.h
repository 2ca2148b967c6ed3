/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier's private header (pmix/barrier*.c): the state of one
 * barrier and what its files call of each other. The calls go one way,
 * down (tests/unit/test_layering.sh checks it on the objects):
 *   barrier.c            te_barrier_*: prepare, the wait loop that drives
 *                        the roles, the result. Start reading here.
 *   the roles            barrier_client.c (the link up to rank 0 or the
 *                        launch tree's parent: lookup, dial, read the
 *                        answer), barrier_coord.c (listen, read the
 *                        registrations and children's summaries, complete),
 *                        barrier_followers.c (the node's ranks this helper
 *                        stands for), barrier_tree.c (the launch tree's
 *                        shape, the summaries sent up, answers passed
 *                        down). A role never calls another role: what two
 *                        need is in the layers below.
 *   barrier_state.c      the shared state: the queue up and its flush,
 *                        the connections down, ranks' arrivals and
 *                        failures, the report of who is missing.
 *   barrier_session.c    the PMIx session, its callbacks, the loop's fds. */
#ifndef TE_BARRIER_INT_H
#define TE_BARRIER_INT_H

#include <stdint.h>
#include <sys/resource.h>

#include "barrier.h"
#include "coord_conns.h"
#include "launch/launch_tree.h"
#include "util/sysutil.h"

#define COORD_KEY_FMT "te.coord.%u"
#define COORD_FILE_FMT "%s/trainenv-coord.%u"
#define STATUS_WAIT_MS 1000 /* a rank's own deadline: ask rank 0 */
#define GET_AGAIN_MS 2000
#define PROBE_TRY_MS \
	500 /* the checkpoint directory's look: again */ /* a lookup PMIx has not answered: ask again */
/* rank 0 left: is our fence done anyway? Also how long a helper goes on
 * trying while every try is refused (nobody listens any more) */
#define GONE_GRACE_MS 3000
/* a subtree's progress goes up at most every hundredth of the deadline,
 * within these bounds */
#define TREE_SUM_MS 500
#define TREE_SUM_MAX_MS 3000
/* Are the waiting followers still there? Every 200 ms at first, then
 * less often (x1.5 per look, at most every 1 s): a node that waits long
 * for a late one (minutes, at thousands of nodes) should not spend its
 * CPU looking. */
#define ALIVE_CHECK_MS 200
#define ALIVE_CHECK_MAX_MS 1000
#define HELPER_GONE_WHY                                  \
	"its node's rendezvous helper went away before " \
	"every rank arrived"
#define TASK_GONE_WHY "its task ended while waiting at the barrier"

enum cstate {
	C_IDLE,	  /* not registered (yet) */
	C_LOOKUP, /* looking for rank 0's coordinator */
	C_CONNECTING,
	C_SENT,	   /* registered, waiting */
	C_DONE,	   /* rank 0 passed the barrier */
	C_GONE,	   /* rank 0's coordinator went away */
	C_UNREACH, /* found but cannot connect */
	C_RETRY,   /* refused or cut before an answer: tries again */
};

/* A child of this node in the launch tree (or, without the node's files,
 * one of this node's other tasks): its connection and summary. */
struct tree_kid {
	size_t conn; /* its registered connection, or (size_t)-1 */
	int has, told;
	struct te_tree_sum sum;
};

struct te_barrier {
	struct te_pmix *p;
	/* who this process answers to and who answers it: rank 0 for a
	 * later barrier, the parent's helper in the launch tree */
	int is_root, has_up;
	uint32_t up_rank;
	/* the launch tree (coordinated): barrier_tree.c */
	int tree;
	struct te_procmap map;
	unsigned k;
	size_t my_index, first_child, nchildren;
	uint32_t my_node;
	uint32_t *own;		  /* this node's ranks */
	unsigned char *own_state; /* 1: arrived */
	size_t nown, own_in;
	int64_t own_done_ms;
	struct tree_kid *kids; /* children, then the node's tasks */
	size_t nkids;
	size_t *conn_kid;	   /* [cc.cap] */
	struct te_tree_sum **pend; /* [cc.cap] a summary being read */
	/* this subtree, merged (the launch tree only: 10 KB that a later
	 * barrier need not clear) */
	struct te_tree_sum *sub;
	int sub_dirty, sent_final, asked_state;
	int leaving_asked; /* its own deadline: the report is for it */
	uint32_t sent_arrived, kids_arrived;
	size_t kids_final;
	int64_t next_sum;
	int sum_ms;
	int has_failure; /* the subtree's first failure */
	uint32_t f_rank;
	char f_host[TE_HOST_MAX];
	char f_why[TE_FAIL_TEXT_MAX + 1];
	char done_text[TE_COORD_TEXT_MAX + 1]; /* rank 0's ADDR PORT */
	const struct te_launch_checks *checks;
	double timeout_s;
	int coordinated;
	int close_early; /* te_barrier_opts.close_early, not done yet */
	unsigned seq;
	char tmpdir[512];
	char key[32];
	int64_t start, deadline;
	int lazy_ms;
	int epfd, wake[2];
	int fence_started;
	int collect;	     /* the fence carries data (see prepare) */
	int dirty;	     /* something put: commit before the fence */
	char coord_addr[64]; /* rank 0: where a lazy coordinator listens */
	int coord_due;	     /* rank 0: start the coordinator when slow */
	/* the local ranks this process stands for (their arrival files) */
	uint32_t *followers;
	unsigned char *follower_here; /* 1 arrived, 2 failed */
	size_t nfollowers, nfollowers_here;
	int64_t next_follower_check;
	int follower_wait;
	int listen_due; /* coordinated: te_barrier_start listens */
	int64_t next_alive_check;
	int alive_gap_ms;	  /* the current gap between two looks */
	int finishing;		  /* rank 0 answers everyone: closes are ours */
	struct te_coord_req node; /* this node's facts (coordinated) */
	/* the launch's checkpoint probe (te_barrier_opts.probe_check) */
	int (*probe_check)(void *arg, const char *probe, char *out, size_t len);
	void *probe_arg;
	int probe_have, probe_checked;
	int64_t probe_next; /* the look's next try (0: now) */
	char probe[TE_COORD_TEXT_MAX + 1];
	char self_failed[TE_FAIL_TEXT_MAX + 1]; /* this rank failed: why */
	/* rank 0, a rank failed before the barrier: every node is answered
	 * "abort" with the report, and the wait ends once every node has
	 * been told (or at the deadline) */
	int aborting;
	char abort_text[TE_COORD_TEXT_MAX + 1];
	size_t nhosts, ntold; /* children to tell, told */
	int hosts_known;
	/* rank 0 */
	int lfd;
	struct te_coord_info info; /* this process's coordinator */
	char coord_file[600];
	unsigned char *arrived;
	uint32_t narrived;
	struct te_coord_conns cc;	  /* the helpers and the strangers */
	unsigned test_cut, test_cut_done; /* test hook: to cut, cut */
	struct rlimit old_nofile;
	int nofile_raised;
	/* other ranks */
	/* the coordinator this process registers with (rank 0's, or the
	 * parent's in the launch tree): its own address and token */
	struct te_coord_info up_info;
	enum cstate cs;
	char rank0_host[TE_HOST_MAX];
	int rank0_local;
	int64_t next_lookup;
	int backoff;
	int get_pending;
	int64_t get_asked; /* this get started */
	int64_t get_since; /* unanswered gets started (0: none) */
	int cfd;
	char cbuf[TE_COORD_LINE_MAX + 1];
	size_t clen;
	char *out; /* lines queued for the coordinator */
	size_t outlen, outoff, outcap;
	int64_t gone_at;
	int refusing; /* every try since refused_since refused */
	int64_t refused_since, next_retry;
	int retry_ms;
	char unreach[200];
	char rank0_text[TE_COORD_TEXT_MAX + 1]; /* "fail"/"reject"/"state" */
	int got_fail, got_state, got_reject, got_abort;
};

#define TAG_WAKE 0
#define TAG_LISTEN 1
#define TAG_CLIENT 2
#define TAG_CONN 3	    /* + slot index */
#define NO_KID ((size_t)-1) /* a slot or rank that is no kid of ours */

/* Names: what a file gives the others starts with its file's prefix,
 * so that a call says which layer it goes to: te_bsess_ (barrier_session.c),
 * te_bstate_ (barrier_state.c), and for the roles te_bclient_, te_bcoord_,
 * te_bfollow_ and te_btree_; barrier.c's own are the te_barrier_* of
 * barrier.h. Nothing else in the tree starts with these. */

/* ================================================================ session
 * barrier_session.c */
void te_bsess_cb_attach(int wake_fd);
/* Forgets pending operations and the pipe: nothing is written to the fd
 * once this returns. */
void te_bsess_cb_detach(void);
int te_bsess_start_fence(int collect, char *err, size_t errlen);
int te_bsess_start_get(struct te_pmix *p, uint32_t rank, const char *key,
		       int refresh);
/* 1 when the PMIx_Get_nb of te_bsess_start_get has answered: its status,
 * and its value in text[0..len) */
int te_bsess_get_take(pmix_status_t *st, char *text, size_t len);
/* Sleeps until the fence's callback or ms milliseconds. */
void te_bsess_fence_sleep(int ms);
/* 1 when the fence is done, its status in *st */
int te_bsess_fence_state(pmix_status_t *st);
/* The session's epoll set and wake pipe (made once, drained of what an
 * abandoned operation left): 0, or -1 with errno. */
int te_bsess_loop_attach(int *epfd, int wake[2]);

/* ================================================================ state
 * barrier_state.c: what the roles share */
int te_bstate_ep_add(struct te_barrier *b, int fd, uint32_t events,
		     uint64_t tag);
/* why a rank failed, fit for the wire: printable ASCII, never empty */
void te_bstate_fail_text(char *dst, size_t size, const char *why);
/* Takes the first whole line (newline included) out of a connection's
 * buffer buf[0..*len) into line. 0: no whole line yet; 1: taken; -1:
 * taken, but it holds a NUL byte (no protocol line does). */
int te_bstate_take_line(char *buf, size_t *len,
			char line[TE_COORD_LINE_MAX + 1]);
/* A follower's failure file: its one line, cleaned. 0, or -1 when it is
 * not there or not this user's regular file. */
int te_bstate_read_failed_file(const char *path, char *why, size_t len);

/* The link up: lines queued for the parent (rank 0, or the launch tree's
 * parent), sent by te_bstate_up_flush; te_bstate_up_cut: the connection
 * failed or was cut (errno e, or 0: closed), try again or give up. */
void te_bstate_queue_text(struct te_barrier *b, const char *text);
void te_bstate_queue_arrived(struct te_barrier *b, uint32_t rank);
void te_bstate_queue_failed(struct te_barrier *b, uint32_t rank,
			    const char *why);
void te_bstate_up_flush(struct te_barrier *b);
void te_bstate_up_cut(struct te_barrier *b, int e);
/* The launch tree, not the root: a rank of the subtree failed (the first
 * one goes up); a child asked for the report (asked from above). */
void te_bstate_tree_failed(struct te_barrier *b, uint32_t rank,
			   const char *host, const char *why);
void te_bstate_tree_ask_state(struct te_barrier *b, size_t i);

/* The connections down (b->cc): which child a slot speaks for, close,
 * send, accept a burst (coord_conns.h), answer all and close them. */
int te_bstate_tree_conns_init(struct te_barrier *b);
void te_bstate_tree_conn_closed(struct te_barrier *b, size_t i);
void te_bstate_tree_told(struct te_barrier *b, size_t i);
void te_bstate_conn_close(struct te_barrier *b, size_t i);
void te_bstate_conn_send(struct te_barrier *b, size_t i, const char *line);
/* Aborting: the nodes (later barriers) or children (the launch tree)
 * that must be told before this process may end. */
void te_bstate_abort_hosts(struct te_barrier *b);
/* Aborting: answers one registered connection and closes it. */
void te_bstate_conn_abort(struct te_barrier *b, size_t i);
void te_bstate_conns_accept(struct te_barrier *b);
/* Sends line to every registered connection and closes them all. */
void te_bstate_conns_broadcast(struct te_barrier *b, const char *line);
/* The report a child asked for came from above (b->rank0_text). */
void te_bstate_tree_relay_state(struct te_barrier *b);

/* Arrivals and failures of ranks. te_bstate_own_pos: rank's place among
 * this node's ranks (the launch tree), or NO_KID. */
size_t te_bstate_own_pos(struct te_barrier *b, uint32_t rank);
void te_bstate_tree_own_arrived(struct te_barrier *b, uint32_t rank);
/* rank of host is here; its first arrival goes into the timeline */
void te_bstate_mark_arrived(struct te_barrier *b, uint32_t rank,
			    const char *host);
/* rank failed before the barrier. Rank 0: the first failure is the
 * report; every node registered so far is answered at once, the others
 * as soon as they register. The launch tree's other helpers: it goes up. */
void te_bstate_rank_failed(struct te_barrier *b, uint32_t rank,
			   const char *host, const char *why);

/* The report: the subtree's summary (merged now if anything changed),
 * and who is missing (the launch tree, or rank 0's arrivals). */
const struct te_tree_sum *te_bstate_tree_sum(struct te_barrier *b);
void te_bstate_tree_report(struct te_barrier *b, char *out, size_t len);
void te_bstate_missing_report(struct te_barrier *b, char *out, size_t len);

/* ================================================================ roles
 * Each uses only the layers above in this header, never another role. */

/* ---------------------------------------------------------------- coord */
int te_bcoord_start(struct te_barrier *b, const char *addr, char *err,
		    size_t errlen);
void te_bcoord_read(struct te_barrier *b, size_t i);
/* Rank 0, coordinated: every rank is here; the launch checks decide. */
void te_bcoord_complete(struct te_barrier *b, struct te_barrier_result *r);

/* ---------------------------------------------------------------- client */
const char *te_bclient_rank0_host(struct te_barrier *b);
/* Without the launch tree: this rank and its followers, queued. */
void te_bclient_queue_ranks(struct te_barrier *b);
/* Connects to the coordinator in b->up_info (the registration queued). */
void te_bclient_dial(struct te_barrier *b);
/* 1 when the coordinator's address is known: dial it now */
int te_bclient_lookup(struct te_barrier *b, int64_t now);
int te_bclient_get_done(struct te_barrier *b, int64_t now);
void te_bclient_io(struct te_barrier *b, uint32_t events);
/* At this rank's own deadline: ask rank 0 for the current report. */
void te_bclient_ask_status(struct te_barrier *b);

/* The launch's checkpoint probe (te_barrier_opts.probe_check): whether
 * this node's facts are whole (no probe to look with, or the look done);
 * the probe to registered connection i, once; the probe from above (or
 * rank 0's own) kept; once it is here, passed to the children and this
 * node's look run. */
int te_bstate_probe_ready(const struct te_barrier *b);
void te_bstate_probe_send(struct te_barrier *b, size_t i);
void te_bstate_probe_take(struct te_barrier *b, const char *text);
void te_bstate_probe_run(struct te_barrier *b, int64_t now);
/* At the deadline, no probe came from the parent: the line naming it
 * after head (1), or 0. */
int te_bstate_probe_missing(struct te_barrier *b, const char *head, char *msg,
			    size_t len);

/* ---------------------------------------------------------------- tree */
/* Where this helper sits in the launch tree: the process map, parent,
 * children, this node's ranks. followers: the node's other tasks leave
 * files (else they connect). 0, or -1 with a reason. */
int te_btree_setup(struct te_barrier *b, unsigned k, int followers, char *err,
		   size_t errlen);
void te_btree_self(struct te_barrier *b);
void te_btree_free(struct te_barrier *b);
int te_btree_complete(struct te_barrier *b);
/* Everything the parent must hear on a new connection. */
void te_btree_queue_registration(struct te_barrier *b);
int64_t te_btree_tick(struct te_barrier *b, int64_t now);
void te_btree_relay(struct te_barrier *b, enum te_coord_reply_kind k,
		    const char *text);

/* ---------------------------------------------------------------- followers */
void te_bfollow_check(struct te_barrier *b, int64_t now);
void te_bfollow_check_alive(struct te_barrier *b, int64_t now);

#endif
