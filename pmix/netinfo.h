/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The node's network facts the rendezvous needs: the address other nodes
 * reach this node on, the interface that routes to an address, whether a
 * TCP port is free. Plain POSIX/Linux calls; no PMIx. */
#ifndef TE_NETINFO_H
#define TE_NETINFO_H

#include <stddef.h>
#include <stdint.h>

#define TE_ADDR_MAX 64
#define TE_IFNAME_MAX 16

/* The address this node publishes, never a loopback or IPv6 link-local
 * one, IPv4 preferred:
 *  1. pattern (NCCL_SOCKET_IFNAME syntax, e.g. "ib0", "^docker,lo") set:
 *     the first address of the first interface it selects;
 *  2. else the address the host name resolves to, when it belongs to an
 *     interface of this node;
 *  3. else the first address of an up interface, container bridges
 *     (docker*, virbr*, veth*, br-*, lxc*, cni*, flannel*) last.
 * Fills addr and ifname (the interface without an ":alias" suffix).
 * Returns 0, or -1 with a reason in err. */
int te_node_address(const char *pattern, char *addr, size_t addrlen,
		    char *ifname, size_t iflen, char *err, size_t errlen);

/* The interface that carries this node's traffic to dest (an IP address
 * in text form): the route's source address, looked up among the node's
 * interfaces. No packet is sent. Returns 0, or -1 with a reason. */
int te_route_ifname(const char *dest, char *ifname, size_t iflen, char *err,
		    size_t errlen);

/* 1 when a TCP listener could bind port now on every IPv4 and IPv6
 * address (SO_REUSEADDR, as PyTorch's TCPStore binds). */
int te_port_is_free(uint16_t port);

#endif
