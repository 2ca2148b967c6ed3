/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The node's network facts: its address, routes, free ports (netinfo.h). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netinfo.h"
#include "launch/rdzv_core.h"
#include "util/strutil.h"

static int usable(const struct ifaddrs *a)
{
	if (!a->ifa_addr || !(a->ifa_flags & IFF_UP) ||
	    (a->ifa_flags & IFF_LOOPBACK))
		return 0;
	if (a->ifa_addr->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)a->ifa_addr;

		return (ntohl(s->sin_addr.s_addr) >> 24) != 127;
	}
	if (a->ifa_addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)a->ifa_addr;

		return !IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr) &&
		       !IN6_IS_ADDR_LOOPBACK(&s->sin6_addr);
	}
	return 0;
}

static void base_ifname(const char *name, char *out, size_t len)
{
	const char *colon = strchr(name, ':');
	size_t l = colon ? (size_t)(colon - name) : strlen(name);

	if (l >= len)
		l = len - 1;
	memcpy(out, name, l);
	out[l] = '\0';
}

static int to_text(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *a =
		sa->sa_family == AF_INET
			? (const void *)&(
				  (const struct sockaddr_in *)(const void *)sa)
				  ->sin_addr
			: (const void *)&(
				  (const struct sockaddr_in6 *)(const void *)sa)
				  ->sin6_addr;

	return inet_ntop(sa->sa_family, a, buf, (socklen_t)len) ? 0 : -1;
}

static int same_addr(const struct sockaddr *x, const struct sockaddr *y)
{
	if (x->sa_family != y->sa_family)
		return 0;
	if (x->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)x)
			       ->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)(const void *)y)
			       ->sin_addr.s_addr;
	return !memcmp(
		&((const struct sockaddr_in6 *)(const void *)x)->sin6_addr,
		&((const struct sockaddr_in6 *)(const void *)y)->sin6_addr,
		sizeof(struct in6_addr));
}

static int container_bridge(const char *name)
{
	static const char *const pfx[] = { "docker", "virbr", "veth",	 "br-",
					   "lxc",    "cni",   "flannel", NULL };
	int i;

	for (i = 0; pfx[i]; i++)
		if (!strncmp(name, pfx[i], strlen(pfx[i])))
			return 1;
	return 0;
}

static int pick(const struct ifaddrs *a, char *addr, size_t addrlen,
		char *ifname, size_t iflen)
{
	if (to_text(a->ifa_addr, addr, addrlen) < 0)
		return -1;
	base_ifname(a->ifa_name, ifname, iflen);
	return 0;
}

int te_node_address(const char *pattern, char *addr, size_t addrlen,
		    char *ifname, size_t iflen, char *err, size_t errlen)
{
	struct ifaddrs *ifs = NULL, *a;
	int rc = -1, fam, pass;

	if (getifaddrs(&ifs) < 0)
		return te_err(err, errlen, "getifaddrs: %s", strerror(errno));
	if (pattern && *pattern) {
		for (fam = 0; fam < 2 && rc < 0; fam++)
			for (a = ifs; a && rc < 0; a = a->ifa_next) {
				char base[TE_IFNAME_MAX];

				if (!usable(a) ||
				    a->ifa_addr->sa_family !=
					    (fam ? AF_INET6 : AF_INET))
					continue;
				base_ifname(a->ifa_name, base, sizeof(base));
				if (te_ifname_match(pattern, base))
					rc = pick(a, addr, addrlen, ifname,
						  iflen);
			}
		if (rc < 0)
			te_snprintf(err, errlen,
				    "no up interface with an "
				    "address matches '%.64s'",
				    pattern);
		freeifaddrs(ifs);
		return rc;
	}
	{
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
		struct addrinfo *ai = NULL, *p;
		char host[256];

		if (gethostname(host, sizeof(host)) == 0 &&
		    (host[sizeof(host) - 1] = '\0',
		     getaddrinfo(host, NULL, &hints, &ai) == 0)) {
			for (fam = 0; fam < 2 && rc < 0; fam++)
				for (p = ai; p && rc < 0; p = p->ai_next) {
					if (p->ai_family !=
					    (fam ? AF_INET6 : AF_INET))
						continue;
					for (a = ifs; a && rc < 0;
					     a = a->ifa_next)
						if (usable(a) &&
						    same_addr(a->ifa_addr,
							      p->ai_addr))
							rc = pick(a, addr,
								  addrlen,
								  ifname,
								  iflen);
				}
			freeaddrinfo(ai);
		}
	}
	for (pass = 0; pass < 4 && rc < 0; pass++) {
		int want6 = pass & 1, bridges = pass >> 1;

		for (a = ifs; a && rc < 0; a = a->ifa_next)
			if (usable(a) &&
			    a->ifa_addr->sa_family ==
				    (want6 ? AF_INET6 : AF_INET) &&
			    container_bridge(a->ifa_name) == bridges)
				rc = pick(a, addr, addrlen, ifname, iflen);
	}
	if (rc < 0)
		te_snprintf(err, errlen,
			    "this node has no up interface with a "
			    "non-loopback address");
	freeifaddrs(ifs);
	return rc;
}

int te_route_ifname(const char *dest, char *ifname, size_t iflen, char *err,
		    size_t errlen)
{
	struct sockaddr_storage ss = { 0 }, local = { 0 };
	socklen_t sl, ll = sizeof(local);
	struct ifaddrs *ifs = NULL, *a;
	int fd, rc = -1;

	if (inet_pton(AF_INET, dest, &((struct sockaddr_in *)&ss)->sin_addr) ==
	    1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(9);
		sl = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, dest,
			     &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(9);
		sl = sizeof(struct sockaddr_in6);
	} else {
		return te_err(err, errlen, "'%.64s' is not an IP address",
			      dest);
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return te_err(err, errlen, "socket: %s", strerror(errno));
	/* connect() on a UDP socket only picks the route */
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 ||
	    getsockname(fd, (struct sockaddr *)&local, &ll) < 0) {
		te_snprintf(err, errlen, "no route to %.64s: %s", dest,
			    strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (getifaddrs(&ifs) < 0)
		return te_err(err, errlen, "getifaddrs: %s", strerror(errno));
	for (a = ifs; a && rc < 0; a = a->ifa_next)
		if (a->ifa_addr &&
		    same_addr(a->ifa_addr, (struct sockaddr *)&local)) {
			base_ifname(a->ifa_name, ifname, iflen);
			rc = 0;
		}
	freeifaddrs(ifs);
	if (rc < 0)
		te_snprintf(err, errlen,
			    "the route to %.64s uses an address "
			    "of no interface",
			    dest);
	return rc;
}

static int try_bind(int family, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	int fd, one = 1, rc;

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno == EAFNOSUPPORT ? 1 : 0; /* no IPv6: fine */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

		/* IPv6 alone: IPv4 is tried apart */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		sl = sizeof(*s);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		sl = sizeof(*s);
	}
	rc = bind(fd, (struct sockaddr *)&ss, sl) == 0 && listen(fd, 1) == 0;
	close(fd);
	return rc;
}

int te_port_is_free(uint16_t port)
{
	return port && try_bind(AF_INET, port) && try_bind(AF_INET6, port);
}
