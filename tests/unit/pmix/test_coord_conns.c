/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the barrier coordinator's connection table
 * (pmix/coord_conns.c) with real loopback sockets: strangers live in a
 * bounded pool and the oldest is dropped for a newcomer, a registered
 * helper is never pushed out, the pool's deadline, a full table, and out
 * of descriptors (a low RLIMIT_NOFILE): a stranger's descriptor is taken
 * for the newcomer, or the listener is left alone for a while, with the
 * CPU time of a second of that measured against a loop that keeps
 * polling the listener. No Slurm, no PMIx. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "coord_conns.h"
#include "tap.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int listener(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 256) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

/* A connection to the listener (the handshake is done by the kernel). */
static int dial(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* 1 when the other side closed fd's connection (within a second). */
static int peer_closed(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char c;
	ssize_t n;

	if (poll(&pf, 1, 1000) <= 0)
		return 0;
	n = recv(fd, &c, 1, MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno == ECONNRESET);
}

static int peer_open(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

/* Accepts until one attempt gives something else than TE_CC_AGAIN. */
static enum te_cc_accept take(struct te_coord_conns *t, int lfd, size_t *slot)
{
	enum te_cc_accept a;
	int i;

	for (i = 0; i < 8; i++)
		if ((a = te_cc_accept(t, lfd, now_ms(), slot)) != TE_CC_AGAIN)
			return a;
	return a;
}

static void test_pool(void)
{
	struct te_coord_conns t;
	uint16_t port;
	int lfd = listener(&port), s[4], flood[20], h, i, all;
	size_t slot, hslot = 0, maxpool = 0;

	ok(lfd >= 0, "a loopback listener");
	is_int(te_cc_init(&t, 2, 4), 0,
	       "a table of 2 helpers' slots and a pool of 4");
	for (i = 0, all = 1; i < 4; i++) {
		s[i] = dial(port);
		all &= take(&t, lfd, &slot) == TE_CC_NEW;
	}
	ok(all, "4 strangers are taken into the pool");
	is_int(t.npool, 4, "the pool is full");
	h = dial(port);
	is_int(take(&t, lfd, &hslot), TE_CC_NEW,
	       "a helper's connection is taken with the pool full");
	is_int(t.evicted, 1, "by dropping one stranger");
	ok(peer_closed(s[0]), "the oldest one");
	ok(peer_open(s[1]) && peer_open(s[3]), "the younger strangers stay");
	te_cc_registered(&t, hslot);
	is_int(t.npool, 3, "the helper, registered, leaves the pool");
	for (i = 0, all = 1; i < 20; i++) {
		flood[i] = dial(port);
		all &= take(&t, lfd, &slot) == TE_CC_NEW;
		if (t.npool > maxpool)
			maxpool = t.npool;
	}
	ok(all, "a flood of 20 strangers: each is taken");
	is_int(maxpool, 4, "the pool never holds more than 4");
	is_int(t.evicted, 1 + 3 + 16,
	       "each newcomer past the pool's size drops the oldest");
	ok(t.c[hslot].fd >= 0 && t.c[hslot].registered && peer_open(h),
	   "the registered helper is never pushed out");
	is_int(te_cc_next_due(&t), t.c[t.oldest].since + TE_COORD_UNAUTH_MS,
	       "the next thing due: the oldest stranger's deadline");
	is_int(te_cc_reap(&t, t.c[t.oldest].since + TE_COORD_UNAUTH_MS - 1), 0,
	       "before their deadline no stranger is dropped");
	is_int(te_cc_reap(&t, now_ms() + TE_COORD_UNAUTH_MS), 4,
	       "at their deadline (TE_COORD_UNAUTH_MS) all 4 are");
	ok(peer_closed(flood[19]),
	   "the youngest stranger sees its connection closed");
	ok(peer_open(h), "the helper is still connected");
	ok(te_cc_next_due(&t) == INT64_MAX,
	   "nothing due with no stranger left");
	te_cc_release(&t, hslot);
	ok(peer_closed(h), "a released helper's connection is closed");
	is_int(t.nfree, t.cap, "every slot is free again");
	for (i = 0; i < 4; i++)
		close(s[i]);
	for (i = 0; i < 20; i++)
		close(flood[i]);
	close(h);
	te_cc_free(&t);
	close(lfd);
}

static void test_full(void)
{
	struct te_coord_conns t;
	uint16_t port;
	int lfd = listener(&port), c[3], i;
	size_t slot;

	te_cc_init(&t, 1, 1);
	for (i = 0; i < 2; i++) {
		c[i] = dial(port);
		take(&t, lfd, &slot);
		te_cc_registered(&t, slot);
	}
	c[2] = dial(port);
	is_int(te_cc_accept(&t, lfd, now_ms(), &slot), TE_CC_AGAIN,
	       "every slot a registered helper: a newcomer is not taken");
	is_int(t.refused, 1, "it is counted as refused");
	ok(peer_closed(c[2]), "and its connection closed");
	ok(peer_open(c[0]) && peer_open(c[1]), "the registered helpers stay");
	is_int(te_cc_accept(&t, lfd, now_ms(), &slot), TE_CC_NONE,
	       "nothing left waiting");
	for (i = 0; i < 3; i++)
		close(c[i]);
	te_cc_free(&t);
	close(lfd);
}

static int lowest_free_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static void count_new(void *ctx, size_t slot)
{
	(void)slot;
	(*(int *)ctx)++;
}

static void test_no_descriptors(void)
{
	struct te_coord_conns t;
	struct rlimit old, low;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 }, evs[8];
	uint16_t port;
	int lfd = listener(&port), ep = epoll_create1(EPOLL_CLOEXEC);
	int c[6], i, turns = 0, naive = 0, got = 0, news = 0;
	size_t slot, first = 0;
	int64_t end;
	double cpu;

	getrlimit(RLIMIT_NOFILE, &old);
	te_cc_init(&t, 4, 4);
	c[0] = dial(port);
	take(&t, lfd, &first);	/* a stranger in the pool */
	for (i = 1; i < 6; i++) /* five more waiting */
		c[i] = dial(port);
	low = old;
	low.rlim_cur = (rlim_t)lowest_free_fd();
	ok(setrlimit(RLIMIT_NOFILE, &low) == 0 && lowest_free_fd() < 0,
	   "RLIMIT_NOFILE lowered to the descriptors in use");

	/* a stranger's descriptor for the newcomer */
	is_int(te_cc_accept(&t, lfd, now_ms(), &slot), TE_CC_AGAIN,
	       "out of descriptors with a stranger in the pool: try again");
	is_int(t.evicted, 1, "the stranger was dropped");
	ok(peer_closed(c[0]), "its connection closed");
	is_int(te_cc_accept(&t, lfd, now_ms(), &slot), TE_CC_NEW,
	       "the newcomer is taken on its descriptor");
	te_cc_registered(&t, slot); /* now a helper: no stranger left */

	/* nothing to drop: the listener leaves the poll set */
	end = now_ms();
	is_int(te_cc_accept(&t, lfd, end, &slot), TE_CC_PAUSE,
	       "out of descriptors, no stranger: pause the listener");
	is_int(te_cc_next_due(&t), end + TE_LISTEN_PAUSE_MS,
	       "for TE_LISTEN_PAUSE_MS");
	is_int(te_cc_accept_error(EMFILE), TE_CC_PAUSE, "EMFILE pauses");
	is_int(te_cc_accept_error(ENFILE), TE_CC_PAUSE, "ENFILE pauses");
	is_int(te_cc_accept_error(ENOBUFS), TE_CC_PAUSE, "ENOBUFS pauses");
	is_int(te_cc_accept_error(ECONNABORTED), TE_CC_AGAIN,
	       "ECONNABORTED: the next one");
	is_int(te_cc_accept_error(EAGAIN), TE_CC_NONE,
	       "EAGAIN: nothing waiting");

	/* a second of the coordinator's loop (pmix/barrier.c) with four
	 * connections waiting that cannot be taken */
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	t.paused_until = 0;
	cpu = cpu_s();
	end = now_ms() + 1000;
	while (now_ms() < end) {
		int64_t now = now_ms(), due = te_cc_tick(&t, lfd, ep, 1, now);
		int64_t wait = due - now < end - now ? due - now : end - now;
		int n;

		n = epoll_wait(ep, evs, 8, wait < 0 ? 0 : (int)wait);
		for (i = 0; i < n; i++)
			if (evs[i].data.u64 == 1)
				te_cc_accept_burst(&t, lfd, ep, now_ms(),
						   count_new, &news);
		turns++;
	}
	cpu = cpu_s() - cpu;
	ok(cpu < 0.2,
	   "the coordinator's loop, 1 s out of descriptors: %.3f s of CPU",
	   cpu);
	ok(turns <= 1000 / TE_LISTEN_PAUSE_MS * 3,
	   "%d turns of its loop (the listener is polled every %d ms)", turns,
	   TE_LISTEN_PAUSE_MS);
	is_int(news, 0, "nothing could be taken");

	/* what it would be without the pause: the listener stays readable */
	epoll_ctl(ep, EPOLL_CTL_DEL, lfd, NULL);
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	end = now_ms() + 100;
	while (now_ms() < end && naive < 1000000) {
		if (epoll_wait(ep, evs, 8, 100) > 0 &&
		    accept4(lfd, NULL, NULL, SOCK_NONBLOCK) < 0 &&
		    errno == EMFILE)
			naive++;
	}
	epoll_ctl(ep, EPOLL_CTL_DEL, lfd, NULL);
	ok(naive > 10 * turns,
	   "the measure can fail: polling the listener without a pause spins (%d turns in 0.1 s)",
	   naive);

	/* descriptors again: the waiting ones are taken */
	setrlimit(RLIMIT_NOFILE, &old);
	t.paused_until = now_ms(); /* due now: the tick puts it back */
	end = now_ms() + 2000;
	while (now_ms() < end && got < 4) {
		int64_t now = now_ms(), due = te_cc_tick(&t, lfd, ep, 1, now);
		int n = epoll_wait(ep, evs, 8,
				   due - now > 100 ? 100 : (int)(due - now));

		for (i = 0; i < n; i++)
			if (evs[i].data.u64 == 1)
				te_cc_accept_burst(&t, lfd, ep, now_ms(),
						   count_new, &got);
	}
	is_int(got, 4,
	       "with descriptors back, the 4 waiting connections are taken");
	for (i = 0; i < 6; i++)
		close(c[i]);
	te_cc_free(&t);
	close(ep);
	close(lfd);
}

int main(void)
{
	test_pool();
	test_full();
	test_no_descriptors();
	return tap_done();
}
