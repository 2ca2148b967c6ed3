/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scale simulation's watch on one process (bench_scale.c): how many
 * connections it holds, from its descriptors in /proc/PID/fd (sockets)
 * less the listening ones (asked of the kernel with sock_diag, which
 * answers only the few listening sockets, not every connection). */
#include <dirent.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sim_conns.h"

/* The inodes of every listening TCP socket (IPv4 and IPv6) into ino[0..n),
 * at most cap. Returns n, or -1. */
static int listening_inodes(unsigned long *ino, int cap)
{
	int fam, n = 0;

	for (fam = 0; fam < 2; fam++) {
		struct {
			struct nlmsghdr nh;
			struct inet_diag_req_v2 r;
		} req = {
			.nh = { .nlmsg_len = sizeof(req),
				.nlmsg_type = SOCK_DIAG_BY_FAMILY,
				.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
			.r = { .sdiag_family = fam ? AF_INET6 : AF_INET,
			       .sdiag_protocol = IPPROTO_TCP,
			       .idiag_states = 1u << TCP_LISTEN },
		};
		static char buf[65536];
		int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
				NETLINK_SOCK_DIAG),
		    done = 0;

		if (fd < 0)
			return -1;
		if (send(fd, &req, sizeof(req), 0) < 0) {
			close(fd);
			return -1;
		}
		while (!done) {
			ssize_t len = recv(fd, buf, sizeof(buf), 0);
			struct nlmsghdr *h = (struct nlmsghdr *)buf;

			if (len <= 0)
				break;
			for (; NLMSG_OK(h, (size_t)len);
			     h = NLMSG_NEXT(h, len)) {
				struct inet_diag_msg *m = NLMSG_DATA(h);

				if (h->nlmsg_type == NLMSG_DONE ||
				    h->nlmsg_type == NLMSG_ERROR) {
					done = 1;
					break;
				}
				if (n < cap)
					ino[n++] = m->idiag_inode;
			}
		}
		close(fd);
	}
	return n;
}

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a,
		      y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

int sim_conns_sample(struct sim_conns *c, pid_t pid)
{
	char path[64], link[64], name[340];
	struct dirent *d;
	DIR *dir;
	int nsock = 0, i;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		unsigned long ino;
		ssize_t l;

		if (d->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "%s/%s", path, d->d_name);
		l = readlink(name, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) != 1)
			continue;
		if (nsock == c->cap) {
			int cap = c->cap ? c->cap * 2 : 1024;
			unsigned long *p =
				realloc(c->ino, (size_t)cap * sizeof(*p));

			if (!p)
				break;
			c->ino = p;
			c->cap = cap;
		}
		c->ino[nsock++] = ino;
	}
	closedir(dir);
	c->samples++;
	/* only a count above the best so far needs the listeners taken out */
	if (nsock > c->max_conns) {
		unsigned long lis[256];
		int nl = listening_inodes(lis, 256), conns = nsock;

		qsort(c->ino, (size_t)nsock, sizeof(*c->ino), cmp_ul);
		for (i = 0; i < nl; i++)
			if (bsearch(&lis[i], c->ino, (size_t)nsock,
				    sizeof(*c->ino), cmp_ul))
				conns--;
		if (nl < 0)
			conns = nsock; /* no sock_diag: count them all */
		c->diag_ok = nl >= 0;
		if (conns > c->max_conns)
			c->max_conns = conns;
	}
	return nsock;
}

void sim_conns_free(struct sim_conns *c)
{
	free(c->ino);
	c->ino = NULL;
	c->cap = 0;
}
