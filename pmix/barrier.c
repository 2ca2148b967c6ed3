/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PMIx barrier, the top of its files: prepare (the coordinator at once
 * for the launch, lazily for later barriers), the wait loop with its
 * deadline that drives the roles, and the result and its message. See
 * barrier.h, and barrier_int.h for the layers below. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "barrier_int.h"
#include "launch/fence_choice.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"

int te_barrier_lazy_ms(double timeout_s)
{
	double ms = timeout_s * 100.0; /* a tenth of the timeout */

	if (ms < 100)
		ms = 100;
	if (ms > 2000)
		ms = 2000;
	return (int)ms;
}

/* The barrier's settings from o: its deadline, who it answers to, this
 * node's facts (the launch), the coordinator's key, the private
 * directory. */
static void prepare_init(struct te_barrier *b, struct te_pmix *p,
			 const struct te_barrier_opts *o)
{
	b->p = p;
	b->lfd = b->cfd = b->epfd = -1;
	b->wake[0] = b->wake[1] = -1;
	b->timeout_s = o->timeout_s;
	b->coordinated = o->coordinated;
	b->close_early = o->coordinated && o->close_early;
	b->seq = o->seq;
	b->start = te_now_ms();
	b->deadline = b->start + (int64_t)(o->timeout_s * 1000.0);
	/* launch: register at once (the coordinator decides); later
	 * barriers: only when the fence is slow */
	b->lazy_ms = o->coordinated ? 0 : te_barrier_lazy_ms(o->timeout_s);
	b->checks = o->checks;
	b->is_root = p->me.rank == 0;
	b->has_up = !b->is_root;
	b->up_rank = 0;
	if (o->done_text)
		te_strlcpy(b->done_text, o->done_text, sizeof(b->done_text));
	b->test_cut = o->test_cut;
	b->probe_check = o->coordinated ? o->probe_check : NULL;
	b->probe_arg = o->probe_arg;
	if (b->probe_check && o->probe)
		te_bstate_probe_take(b, o->probe);
	if (o->coordinated) {
		b->node = o->node;
		b->node.kind = TE_CQ_NODE;
		b->node.rank = p->me.rank;
		te_strlcpy(b->node.host, p->host, sizeof(b->node.host));
		if (o->failed)
			te_bstate_fail_text(b->self_failed,
					    sizeof(b->self_failed), o->failed);
	}
	te_snprintf(b->key, sizeof(b->key), COORD_KEY_FMT, o->seq);
	if (o->tmpdir && (o->tmpdir_ok || te_private_dir_ok(o->tmpdir)))
		te_strlcpy(b->tmpdir, o->tmpdir, sizeof(b->tmpdir));
}

/* The node's other ranks this process stands for (their arrival files:
 * only with the private directory). 0, or -1 with err. */
static int prepare_followers(struct te_barrier *b,
			     const struct te_barrier_opts *o, char *err,
			     size_t errlen)
{
	size_t i;

	if (!o->nfollowers || !b->tmpdir[0])
		return 0;
	b->followers = calloc(o->nfollowers, sizeof(*b->followers));
	b->follower_here = calloc(o->nfollowers, 1);
	if (!b->followers || !b->follower_here) {
		te_snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < o->nfollowers; i++)
		if (o->followers[i] < b->p->size &&
		    o->followers[i] != b->p->me.rank)
			b->followers[b->nfollowers++] = o->followers[i];
	return 0;
}

/* The queue of lines for the parent. 0, or -1 with err. */
static int prepare_queue(struct te_barrier *b, char *err, size_t errlen)
{
	/* a summary is a few lines; failures and status at most one each */
	b->outcap = (b->nfollowers + 4 +
		     (b->tree ? TE_TREE_VGROUPS_MAX + TE_TREE_CGROUPS_MAX + 4
			      : 0)) *
		    TE_COORD_LINE_MAX;
	b->out = malloc(b->outcap);
	if (!b->out) {
		te_snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static int fence_nodata = -1;

/* Whether the fence carries data, and (a later barrier that collects)
 * this rank's value put. 0, or -1 with err. */
static int prepare_fence(struct te_barrier *b, const struct te_barrier_opts *o,
			 char *err, size_t errlen)
{
	/* On Slurm 22.05 (verified with OpenPMIx 4.2.2) a fence without data
	 * takes Slurm's tree algorithm unless the ring one is forced, and the
	 * tree fence is a job-wide barrier only on at least TreeWidth nodes
	 * (below, every node lets its own ranks go). srun sets
	 * SLURM_PMIX_FENCE for the step (ring, or tree from TreeWidth on)
	 * and says so in TRAINENV_FENCE: then a fence without data is a
	 * barrier (and 4x faster than one with data). Otherwise every rank
	 * puts a value and the fence collects it, which Slurm's default runs
	 * as a ring (core/launch/fence_choice.h). */
	if (fence_nodata < 0) /* the step's setting: looked at once */
		fence_nodata = te_fence_nodata_barrier(
			getenv(TE_FENCE_ENV), getenv(TE_FENCE_DECIDED_ENV));
	b->collect = !fence_nodata;
	if (!o->coordinated && b->collect) {
		char key[32];

		te_snprintf(key, sizeof(key), "te.here.%u", o->seq);
		if (te_pmix_put(b->p, key, "1", err, errlen) < 0)
			return -1;
		b->dirty = 1;
	}
	return 0;
}

/* Whether this process listens, and when. 0, or -1 with err. */
static int prepare_listen(struct te_barrier *b, const struct te_barrier_opts *o,
			  char *err, size_t errlen)
{
	/* the launch tree: every helper with children listens */
	if (!(b->tree ? b->is_root || b->nkids : b->p->me.rank == 0))
		return 0;
	if (!o->addr || !o->addr[0] ||
	    te_strlcpy(b->coord_addr, o->addr, sizeof(b->coord_addr)) >=
		    sizeof(b->coord_addr)) {
		te_snprintf(err, errlen,
			    "rank 0 has no address for "
			    "the barrier coordinator");
		return -1;
	}
	/* The launch needs it at once (or at te_barrier_start); a
	 * later barrier only when its fence is slow (the fast path
	 * stays a bare fence). */
	if (o->coordinated)
		b->listen_due = 1;
	else
		b->coord_due = 1;
	return 0;
}

struct te_barrier *te_barrier_prepare(struct te_pmix *p,
				      const struct te_barrier_opts *o,
				      char *err, size_t errlen)
{
	struct te_barrier *b = calloc(1, sizeof(*b));

	if (!b) {
		te_snprintf(err, errlen, "out of memory");
		return NULL;
	}
	prepare_init(b, p, o);
	if (prepare_followers(b, o, err, errlen) < 0 ||
	    (o->coordinated &&
	     te_btree_setup(b, o->tree_width, b->nfollowers > 0, err, errlen) <
		     0) ||
	    prepare_queue(b, err, errlen) < 0 ||
	    prepare_fence(b, o, err, errlen) < 0 ||
	    prepare_listen(b, o, err, errlen) < 0 ||
	    (!o->defer_start && te_barrier_start(b, err, errlen) < 0)) {
		te_barrier_free(b);
		return NULL;
	}
	return b;
}

int te_barrier_start(struct te_barrier *b, char *err, size_t errlen)
{
	if (b->listen_due) {
		b->listen_due = 0;
		if (te_bcoord_start(b, b->coord_addr, err, errlen) < 0)
			return -1;
		b->dirty = 1;
	}
	if (b->tree)
		te_btree_self(b);
	te_bstate_probe_run(b, te_now_ms()); /* rank 0's own probe */
	return 0;
}

int te_barrier_commit(struct te_barrier *b, char *err, size_t errlen)
{
	if (te_pmix_commit(b->p, err, errlen) < 0)
		return -1;
	b->dirty = 0;
	return 0;
}

void te_barrier_free(struct te_barrier *b)
{
	if (!b)
		return;
	te_bsess_cb_detach();
	te_cc_free(&b->cc);
	if (b->lfd >= 0)
		close(b->lfd);
	if (b->cfd >= 0)
		close(b->cfd);
	/* epfd and wake are the session's (te_bsess_loop_attach) */
	if (b->coord_file[0])
		unlink(b->coord_file);
	if (b->nofile_raised)
		setrlimit(RLIMIT_NOFILE, &b->old_nofile);
	free(b->arrived);
	te_btree_free(b);
	free(b->followers);
	free(b->follower_here);
	free(b->out);
	free(b);
}

/* A new connection to the parent (rank 0, or the launch tree's parent)
 * starts from nothing: what it must hear is queued whole, then dialled.
 * The launch tree: the subtree's summary and its first failure; otherwise
 * this rank and the ranks it stands for. */
static void register_up(struct te_barrier *b)
{
	b->outlen = b->outoff = 0;
	b->clen = 0;
	if (b->tree)
		te_btree_queue_registration(b);
	else
		te_bclient_queue_ranks(b);
	te_bclient_dial(b);
}

static void timeout_msg(struct te_barrier *b, char *msg, size_t len)
{
	char head[64];

	te_snprintf(head, sizeof(head), "barrier timed out after %g s",
		    b->timeout_s);
	if (b->is_root) {
		char text[TE_COORD_TEXT_MAX + 1];
		int64_t silent = te_pmix_server_silent_ms(b->p);

		te_bstate_missing_report(b, text, sizeof(text));
		if (silent) /* the others could not learn our address */
			te_snprintf(
				msg, len,
				"%s: %s (this node's PMIx server "
				"has not taken rank 0's address for %.0f s: "
				"ranks on other nodes could not find rank 0)",
				head, text, (double)silent / 1000.0);
		else
			te_snprintf(msg, len, "%s: %s", head, text);
		return;
	}
	if (b->got_fail || b->got_state) {
		te_snprintf(msg, len, "%s: %s", head, b->rank0_text);
		return;
	}
	if (te_bstate_probe_missing(b, head, msg, len))
		return;
	switch (b->cs) {
	case C_LOOKUP:
		if (b->get_pending) {
			te_snprintf(msg, len,
				    "%s: rank %u (node %s) could not "
				    "be found: PMIx gave no address for it in "
				    "%.0f s (it has not arrived, has left, or "
				    "its node's PMIx server is not answering)",
				    head, b->up_rank, te_bclient_rank0_host(b),
				    (double)(te_now_ms() - b->get_since) /
					    1000.0);
			return;
		}
		/* fall through */
	case C_IDLE:
		te_snprintf(msg, len, "%s: rank %u (node %s) did not arrive",
			    head, b->up_rank, te_bclient_rank0_host(b));
		return;
	case C_RETRY:
		if (b->refusing) /* nobody listens any more */
			goto gone;
		/* fall through */
	case C_UNREACH:
		te_snprintf(msg, len, "%s: rank %u (node %s) arrived, but %s",
			    head, b->up_rank, te_bclient_rank0_host(b),
			    b->unreach);
		return;
	case C_GONE:
gone:
		te_snprintf(msg, len,
			    "%s: rank %u (node %s) stopped waiting "
			    "(its deadline passed or it failed) before every "
			    "rank arrived",
			    head, b->up_rank, te_bclient_rank0_host(b));
		return;
	default:
		te_snprintf(msg, len,
			    "%s: rank %u (node %s) did not say who "
			    "is missing",
			    head, b->up_rank, te_bclient_rank0_host(b));
	}
}

/* What one turn of te_barrier_wait's loop found, before it waits:
 * nothing yet (wait), look again at once, or the end of the wait, with
 * the children answered already (finished) or not (end). */
enum turn {
	T_WAIT,
	T_AGAIN,
	T_END,
	T_FINISHED
};

/* The loop's fds and callbacks, and what was put committed. 0, or -1
 * with r->msg. */
static int wait_setup(struct te_barrier *b, struct te_barrier_result *r)
{
	char err[TE_MSG_MAX];

	te_bsess_loop_attach(&b->epfd, b->wake);
	if (b->epfd < 0 || (b->lfd >= 0 && te_bstate_ep_add(b, b->lfd, EPOLLIN,
							    TAG_LISTEN) < 0)) {
		te_snprintf(r->msg, sizeof(r->msg), "barrier: %s",
			    strerror(errno));
		return -1;
	}
	te_bsess_cb_attach(b->wake[1]);
	if (b->dirty && te_barrier_commit(b, err, sizeof(err)) < 0) {
		te_snprintf(r->msg, sizeof(r->msg), "barrier: %s", err);
		return -1;
	}
	return 0;
}

/* The PMIx fence (later barriers), once this process and the ranks it
 * stands for are all here, and its outcome. */
static enum turn fence_turn(struct te_barrier *b, struct te_barrier_result *r)
{
	char err[TE_MSG_MAX];
	pmix_status_t st;

	if (!b->coordinated && !b->fence_started &&
	    b->nfollowers_here == b->nfollowers) {
		if (te_bsess_start_fence(b->collect, err, sizeof(err)) < 0) {
			te_snprintf(r->msg, sizeof(r->msg), "barrier: %s", err);
			return T_END;
		}
		b->fence_started = 1;
	}
	if (b->fence_started && te_bsess_fence_state(&st)) {
		if (st == PMIX_SUCCESS)
			r->ok = 1;
		else
			te_snprintf(r->msg, sizeof(r->msg),
				    "barrier: "
				    "the fence failed: %s",
				    PMIx_Error_string(st));
		return T_END;
	}
	return T_WAIT;
}

/* Answers "abort" to every registered connection, the last ones
 * accepted first. */
static void abort_registered(struct te_barrier *b)
{
	size_t c;

	te_bstate_conns_accept(b);
	for (c = 0; c < b->cc.cap; c++)
		if (b->cc.c[c].fd >= 0 && b->cc.c[c].registered)
			te_bstate_conn_abort(b, c);
}

/* Aborting: the end once every node is told, or at the deadline. Rank 0,
 * coordinated: the launch checks once every rank is here. */
static enum turn root_turn(struct te_barrier *b, struct te_barrier_result *r,
			   int64_t now)
{
	if (b->aborting) {
		/* every node told, or the deadline: the step fails */
		if ((b->hosts_known && b->ntold >= b->nhosts) ||
		    now >= b->deadline) {
			abort_registered(b);
			r->aborted = 1;
			te_strlcpy(r->msg, b->abort_text, sizeof(r->msg));
			return T_FINISHED;
		}
	} else if (b->coordinated && b->is_root &&
		   (b->tree ? te_btree_complete(b)
			    : b->narrived == b->p->size)) {
		te_bcoord_complete(b, r);
		return T_FINISHED;
	}
	return T_WAIT;
}

/* What came from above: done, abort, reject or fail; passed down the
 * launch tree. */
static enum turn answer_turn(struct te_barrier *b, struct te_barrier_result *r)
{
	if (b->coordinated && b->cs == C_DONE) {
		r->ok = 1;
		te_strlcpy(r->done_text, b->done_text, sizeof(r->done_text));
		te_btree_relay(b, TE_CR_DONE, b->done_text);
		return T_FINISHED;
	}
	if (b->got_abort && b->tree && b->lfd >= 0) {
		/* this node's children hear it, then it ends */
		if (!b->aborting) {
			b->aborting = 1;
			te_strlcpy(b->abort_text, b->rank0_text,
				   sizeof(b->abort_text));
			te_bstate_abort_hosts(b);
			abort_registered(b);
			return T_AGAIN;
		}
	} else if (b->got_abort) {
		r->aborted = 1;
		te_strlcpy(r->msg, b->rank0_text, sizeof(r->msg));
		return T_END;
	}
	if (b->got_reject) {
		r->rejected = 1;
		te_strlcpy(r->msg, b->rank0_text, sizeof(r->msg));
		te_btree_relay(b, TE_CR_REJECT, b->rank0_text);
		return T_FINISHED;
	}
	if (b->got_fail && !b->aborting) {
		timeout_msg(b, r->msg, sizeof(r->msg));
		te_btree_relay(b, TE_CR_FAIL, b->rank0_text);
		return T_FINISHED;
	}
	return T_WAIT;
}

/* This process's deadline, and the parent gone for good. */
static enum turn deadline_turn(struct te_barrier *b,
			       struct te_barrier_result *r, int64_t now)
{
	if (now >= b->deadline && !b->aborting) {
		if (b->has_up)
			te_bclient_ask_status(b);
		timeout_msg(b, r->msg, sizeof(r->msg));
		return T_END;
	}
	if (b->cs == C_GONE && now - b->gone_at >= GONE_GRACE_MS) {
		te_snprintf(r->msg, sizeof(r->msg),
			    "barrier failed "
			    "after %.1f s: rank %u (node %s) stopped "
			    "waiting (its deadline passed or it failed) "
			    "before every rank arrived",
			    (double)(now - b->start) / 1000.0, b->up_rank,
			    te_bclient_rank0_host(b));
		return T_END;
	}
	return T_WAIT;
}

/* Rank 0, a later barrier: the fence is slow; others will look for us. */
static enum turn lazy_coord_turn(struct te_barrier *b,
				 struct te_barrier_result *r, int64_t now)
{
	char err[TE_MSG_MAX];

	if (b->coord_due && now - b->start >= b->lazy_ms / 2) {
		b->coord_due = 0;
		if (te_bcoord_start(b, b->coord_addr, err, sizeof(err)) < 0 ||
		    te_pmix_commit(b->p, err, sizeof(err)) < 0)
			goto fail;
		if (te_bstate_ep_add(b, b->lfd, EPOLLIN, TAG_LISTEN) < 0) {
			/* epoll_ctl's errno: ep_add writes no message */
			te_snprintf(err, sizeof(err), "%s", strerror(errno));
			goto fail;
		}
	}
	return T_WAIT;
fail:
	te_snprintf(r->msg, sizeof(r->msg), "barrier: %s", err);
	return T_END;
}

/* One turn's look at everything that may end the wait, in this order. */
static enum turn wait_turn(struct te_barrier *b, struct te_barrier_result *r,
			   int64_t now)
{
	enum turn t;

	if ((t = fence_turn(b, r)) != T_WAIT ||
	    (t = root_turn(b, r, now)) != T_WAIT ||
	    (t = answer_turn(b, r)) != T_WAIT ||
	    (t = deadline_turn(b, r, now)) != T_WAIT)
		return t;
	return lazy_coord_turn(b, r, now);
}

/* The link up (not rank 0): look for the parent after lazy_ms, dial it
 * once found, dial again after a refusal. wait: when this is due next. */
static void drive_up(struct te_barrier *b, int64_t now, int64_t *wait)
{
	if (b->cs == C_IDLE && now - b->start >= b->lazy_ms)
		b->cs = C_LOOKUP;
	if (b->cs == C_LOOKUP) {
		if (b->get_pending && te_bclient_get_done(b, now))
			register_up(b);
		if (b->cs == C_LOOKUP && te_bclient_lookup(b, now))
			register_up(b);
	}
	if (b->cs == C_RETRY && now >= b->next_retry)
		register_up(b);
	if (b->cs == C_IDLE)
		*wait = b->start + b->lazy_ms - now;
	else if (b->cs == C_LOOKUP && !b->get_pending)
		*wait = b->next_lookup - now;
	else if (b->cs == C_RETRY)
		*wait = b->next_retry - now;
}

/* The link up driven, the tree's and the listener's timers run; how long
 * the turn may sleep: until the next thing due, 1 ms to 1 s. */
static int64_t wait_ms(struct te_barrier *b, int64_t now)
{
	int64_t wait = 1000;

	if (b->coord_due)
		wait = b->start + b->lazy_ms / 2 - now;
	if (b->probe_have && !b->probe_checked)
		wait = b->probe_next - now;
	if (b->has_up)
		drive_up(b, now, &wait);
	if (b->tree && b->has_up) {
		int64_t due = te_btree_tick(b, now);

		if (due != INT64_MAX && wait > due - now)
			wait = due - now;
	}
	if (b->lfd >= 0) {
		/* strangers' deadlines, the listener's pause */
		int64_t due =
			te_cc_tick(&b->cc, b->lfd, b->epfd, TAG_LISTEN, now);

		if (wait > due - now)
			wait = due - now;
	}
	if (b->nfollowers_here < b->nfollowers &&
	    wait > b->next_follower_check - now)
		wait = b->next_follower_check - now;
	if (b->coordinated && b->nfollowers && wait > b->next_alive_check - now)
		wait = b->next_alive_check - now;
	if (wait > b->deadline - now)
		wait = b->deadline - now;
	if (b->cs == C_GONE && wait > b->gone_at + GONE_GRACE_MS - now)
		wait = b->gone_at + GONE_GRACE_MS - now;
	if (wait < 1)
		wait = 1;
	if (wait > 1000)
		wait = 1000;
	return wait;
}

/* te_barrier_opts.close_early: a leaf below rank 0 whose registration is
 * all sent finalizes its session now (on the worker thread). */
static void close_early(struct te_barrier *b)
{
	if (!b->close_early || b->is_root || b->lfd >= 0 || b->cs != C_SENT ||
	    b->outlen > 0 || b->get_pending)
		return;
	b->close_early = 0;
	/* what a late message may name: cached while PMIx is there */
	te_bclient_rank0_host(b);
	te_pmix_close_start(b->p);
}

/* What epoll_wait returned: the wake pipe, the listener, the link up,
 * the connections down. */
static void wait_events(struct te_barrier *b, const struct epoll_event *ev,
			int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uint64_t tag = ev[i].data.u64;

		if (tag == TAG_WAKE) {
			char buf[64];

			/* one read: what is left wakes the next
			 * epoll_wait (level-triggered) */
			if (read(b->wake[0], buf, sizeof(buf)) < 0) {
				/* EAGAIN: a wake already drained */
			}
		} else if (tag == TAG_LISTEN) {
			te_bstate_conns_accept(b);
		} else if (tag == TAG_CLIENT) {
			if (b->cfd >= 0)
				te_bclient_io(b, ev[i].events);
		} else if (tag - TAG_CONN < b->cc.cap &&
			   b->cc.c[tag - TAG_CONN].fd >= 0) {
			te_bcoord_read(b, (size_t)(tag - TAG_CONN));
		}
	}
}

/* The wait ended without answering the connections down: they hear
 * "done", or "fail" with who is missing. */
static void answer_down(struct te_barrier *b, const struct te_barrier_result *r)
{
	char line[TE_COORD_LINE_MAX], text[TE_COORD_TEXT_MAX + 1];

	if (r->ok)
		te_coord_reply_format(line, sizeof(line), TE_CR_DONE, "");
	else {
		if (b->is_root)
			te_bstate_missing_report(b, text, sizeof(text));
		else if (b->got_state || b->got_fail)
			te_strlcpy(text, b->rank0_text, sizeof(text));
		else /* what this node says, without its head */
			te_strlcpy(text,
				   strstr(r->msg, ": ")
					   ? strstr(r->msg, ": ") + 2
					   : r->msg,
				   sizeof(text));
		te_coord_reply_format(line, sizeof(line), TE_CR_FAIL, text);
	}
	/* take the last registrations before answering */
	te_bstate_conns_accept(b);
	te_bstate_conns_broadcast(b, line);
}

int te_barrier_wait(struct te_barrier *b, struct te_barrier_result *r)
{
	int finished = 0;

	memset(r, 0, sizeof(*r));
	if (wait_setup(b, r) < 0) {
		te_barrier_free(b);
		return -1;
	}
	for (;;) {
		struct epoll_event ev[64];
		int64_t now = te_now_ms(), wait;
		enum turn t;

		te_bstate_probe_run(b, now); /* it came from above */
		if (b->nfollowers)
			te_bfollow_check(b, now);
		te_bfollow_check_alive(b, now);
		t = wait_turn(b, r, now);
		if (t == T_AGAIN)
			continue;
		if (t != T_WAIT) {
			finished = t == T_FINISHED;
			break;
		}
		wait = wait_ms(b, now);
		/* nothing but the fence to wait for (a later barrier before
		 * it is slow): no descriptor to watch */
		if (b->fence_started && !b->coordinated && b->lfd < 0 &&
		    b->cfd < 0 && !b->nfollowers && !b->aborting &&
		    !b->get_pending) {
			te_bsess_fence_sleep((int)wait);
			continue;
		}
		wait_events(b, ev, epoll_wait(b->epfd, ev, 64, (int)wait));
		close_early(b);
	}
	if (b->lfd >= 0 && !finished)
		answer_down(b, r);
	r->reporter = b->is_root;
	r->test_cut = b->test_cut_done;
	te_barrier_free(b);
	return r->ok ? 0 : -1;
}
