/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier coordinator's connection table: helpers' slots, the pool of
 * unauthenticated connections, an accept that never spins (coord_conns.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coord_conns.h"

int te_cc_init(struct te_coord_conns *t, size_t helpers, size_t pool_max)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	t->oldest = t->newest = TE_NO_CONN;
	t->pool_max = pool_max ? pool_max : 1;
	t->cap = helpers + t->pool_max;
	t->c = calloc(t->cap, sizeof(*t->c));
	t->free_slots = calloc(t->cap, sizeof(*t->free_slots));
	if (!t->c || !t->free_slots) {
		te_cc_free(t);
		return -1;
	}
	for (i = 0; i < t->cap; i++) {
		t->c[i].fd = -1;
		t->free_slots[i] = t->cap - 1 - i; /* slot 0 first */
	}
	t->nfree = t->cap;
	return 0;
}

void te_cc_free(struct te_coord_conns *t)
{
	size_t i;

	for (i = 0; t->c && i < t->cap; i++)
		if (t->c[i].fd >= 0)
			close(t->c[i].fd);
	free(t->c);
	free(t->free_slots);
	memset(t, 0, sizeof(*t));
	t->oldest = t->newest = TE_NO_CONN;
}

static void pool_unlink(struct te_coord_conns *t, size_t i)
{
	struct te_coord_conn *c = &t->c[i];

	if (c->older != TE_NO_CONN)
		t->c[c->older].newer = c->newer;
	else
		t->oldest = c->newer;
	if (c->newer != TE_NO_CONN)
		t->c[c->newer].older = c->older;
	else
		t->newest = c->older;
	c->older = c->newer = TE_NO_CONN;
	t->npool--;
}

void te_cc_release(struct te_coord_conns *t, size_t i)
{
	struct te_coord_conn *c;

	if (i >= t->cap || t->c[i].fd < 0)
		return;
	c = &t->c[i];
	if (!c->registered)
		pool_unlink(t, i);
	close(c->fd); /* also leaves any epoll set */
	c->fd = -1;
	t->free_slots[t->nfree++] = i;
}

void te_cc_registered(struct te_coord_conns *t, size_t i)
{
	if (i >= t->cap || t->c[i].fd < 0 || t->c[i].registered)
		return;
	pool_unlink(t, i);
	t->c[i].registered = 1;
}

static void evict_oldest(struct te_coord_conns *t)
{
	if (t->oldest == TE_NO_CONN)
		return;
	te_cc_release(t, t->oldest);
	t->evicted++;
}

enum te_cc_accept te_cc_accept_error(int e)
{
	switch (e) {
	case EAGAIN:
#if EWOULDBLOCK != EAGAIN
	case EWOULDBLOCK:
#endif
		return TE_CC_NONE;
	/* this connection's trouble, not the listener's (accept(2)) */
	case EINTR:
	case ECONNABORTED:
	case EPROTO:
	case EPERM:
	case ENETDOWN:
	case ENOPROTOOPT:
	case EHOSTDOWN:
	case ENONET:
	case EHOSTUNREACH:
	case EOPNOTSUPP:
	case ENETUNREACH:
		return TE_CC_AGAIN;
	default:
		/* EMFILE, ENFILE, ENOBUFS, ENOMEM, and what should never
		 * happen: the listener stays readable, so polling it again
		 * at once would spin */
		return TE_CC_PAUSE;
	}
}

enum te_cc_accept te_cc_accept(struct te_coord_conns *t, int lfd, int64_t now,
			       size_t *slot)
{
	struct te_coord_conn *c;
	size_t i;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0) {
		int e = errno;
		enum te_cc_accept a = te_cc_accept_error(e);

		if (a != TE_CC_PAUSE)
			return a;
		if ((e == EMFILE || e == ENFILE) && t->npool) {
			/* a stranger's descriptor for the one waiting */
			evict_oldest(t);
			return TE_CC_AGAIN;
		}
		t->paused_until = now + TE_LISTEN_PAUSE_MS;
		return TE_CC_PAUSE;
	}
	switch (te_coord_admit(t->nfree, t->npool, t->pool_max)) {
	case TE_ADMIT_REFUSE:
		close(fd);
		t->refused++;
		return TE_CC_AGAIN;
	case TE_ADMIT_EVICT:
		evict_oldest(t);
		break;
	default:
		break;
	}
	if (!t->nfree) { /* cannot happen after the admission */
		close(fd);
		t->refused++;
		return TE_CC_AGAIN;
	}
	i = t->free_slots[--t->nfree];
	c = &t->c[i];
	c->fd = fd;
	c->len = 0;
	c->since = now;
	c->registered = 0;
	c->host[0] = '\0';
	c->has_rank = 0;
	c->leaving = 0;
	c->wants_state = 0;
	c->probe_sent = 0;
	c->newer = TE_NO_CONN;
	c->older = t->newest;
	if (t->newest != TE_NO_CONN)
		t->c[t->newest].newer = i;
	else
		t->oldest = i;
	t->newest = i;
	t->npool++;
	*slot = i;
	return TE_CC_NEW;
}

int te_cc_resume_due(struct te_coord_conns *t, int64_t now)
{
	if (!t->paused_until || now < t->paused_until)
		return 0;
	t->paused_until = 0;
	return 1;
}

size_t te_cc_reap(struct te_coord_conns *t, int64_t now)
{
	size_t n = 0;

	while (t->c && t->oldest != TE_NO_CONN &&
	       now - t->c[t->oldest].since >= TE_COORD_UNAUTH_MS) {
		te_cc_release(t, t->oldest);
		t->expired++;
		n++;
	}
	return n;
}

int64_t te_cc_next_due(const struct te_coord_conns *t)
{
	int64_t due = INT64_MAX;

	if (t->c && t->oldest != TE_NO_CONN)
		due = t->c[t->oldest].since + TE_COORD_UNAUTH_MS;
	if (t->paused_until && t->paused_until < due)
		due = t->paused_until;
	return due;
}

void te_cc_accept_burst(struct te_coord_conns *t, int lfd, int epfd,
			int64_t now, void (*on_new)(void *ctx, size_t slot),
			void *ctx)
{
	int n;

	for (n = 0; n < TE_ACCEPT_BURST; n++) {
		size_t i;

		switch (te_cc_accept(t, lfd, now, &i)) {
		case TE_CC_NEW:
			on_new(ctx, i);
			break;
		case TE_CC_AGAIN:
			break;
		case TE_CC_PAUSE:
			/* the listener stays readable: out of the poll set
			 * for a while, or the loop would spin */
			epoll_ctl(epfd, EPOLL_CTL_DEL, lfd, NULL);
			return;
		default:
			return;
		}
	}
}

int64_t te_cc_tick(struct te_coord_conns *t, int lfd, int epfd,
		   uint64_t listen_tag, int64_t now)
{
	te_cc_reap(t, now);
	if (te_cc_resume_due(t, now)) {
		struct epoll_event ev = { .events = EPOLLIN,
					  .data.u64 = listen_tag };

		epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
	}
	return te_cc_next_due(t);
}
