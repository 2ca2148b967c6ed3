/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pipe protocol between the rendezvous helper (trainenv-rdzv, a PMIx
 * client run as the job user) and the plugin's task_init, which reads it.
 *
 * The helper writes, on its stdout (a pipe), nothing but:
 *
 *   TRAINENV-RDZV 1
 *   KEY=VALUE            zero or more, keys below
 *   END
 *
 * Keys (each at most once, except WARN):
 *   MASTER_ADDR=A        rank 0's address (IPv4 or IPv6 text form)
 *   MASTER_PORT=N        1..65535, verified free on rank 0's host
 *   IFNAME=NAME          interface carrying the route to MASTER_ADDR
 *   CHECKPOINT_DIR=DIR   verified to be one shared directory
 *   WARN=TEXT            a warning this task prints (at most 8)
 *   LAUNCH=R N MS F L    rank 0: the launch barrier passed with R ranks on
 *                        N nodes, the last node L MS ms after the first F
 *                        (core/launch/launch_timeline.h)
 *   ERROR=TEXT           the task fails and prints TEXT
 *   FAIL_QUIET=TEXT      the task fails; TEXT goes to the node's log only
 *                        (another rank prints the job-wide report)
 *
 * The reader treats the helper's output as hostile: one bounded buffer,
 * printable ASCII values, known keys only, a value check per key, the END
 * line required (a helper that died half-way is not believed). Pure code:
 * unit-tested and fuzzed. */
#ifndef TE_RDZV_PROTO_H
#define TE_RDZV_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "launch/launch_timeline.h"

#define TE_RDZV_HEADER "TRAINENV-RDZV 1"
#define TE_RDZV_OUT_MAX 16384 /* whole output */
#define TE_RDZV_LINE_MAX 1100 /* one line, newline excluded */
#define TE_RDZV_TEXT_MAX 1000 /* WARN/ERROR text */
#define TE_RDZV_WARN_MAX 8
#define TE_RDZV_ADDR_MAX 64   /* INET6_ADDRSTRLEN is 46 */
#define TE_RDZV_IFNAME_MAX 16 /* IFNAMSIZ */
#define TE_RDZV_PATH_MAX 1024

struct te_rdzv_result {
	char master_addr[TE_RDZV_ADDR_MAX]; /* "" when absent */
	uint16_t master_port;		    /* 0 when absent */
	char ifname[TE_RDZV_IFNAME_MAX];
	char checkpoint_dir[TE_RDZV_PATH_MAX];
	int nwarn;
	char warn[TE_RDZV_WARN_MAX][TE_RDZV_TEXT_MAX + 1];
	int failed; /* ERROR or FAIL_QUIET seen */
	int quiet;  /* FAIL_QUIET */
	char error[TE_RDZV_TEXT_MAX + 1];
	int has_launch; /* LAUNCH seen */
	struct te_launch_skew launch;
};

/* Parses the helper's whole output [buf, buf+len). Returns 0 and fills r,
 * or -1 with one line in err saying what was wrong. */
int te_rdzv_parse(const char *buf, size_t len, struct te_rdzv_result *r,
		  char *err, size_t errlen);

/* Helper side: writes r in the wire form into buf. Text that is not
 * printable ASCII is replaced by '?', over-long text is cut. Returns 0, or
 * -1 when buf is too small. */
int te_rdzv_format(const struct te_rdzv_result *r, char *buf, size_t len);

/* Copies text into dst as a protocol-safe value: printable ASCII only
 * ('?' for anything else), at most TE_RDZV_TEXT_MAX characters. */
void te_rdzv_clean_text(char *dst, size_t size, const char *text);

/* 1 when dir is a directory owned by this user and not writable by
 * others: safe for the files the ranks of one node exchange (the step's
 * PMIx directory, PMIX_SERVER_TMPDIR). */
int te_private_dir_ok(const char *dir);

/* Files in that directory: a task's arrival at the launch barrier (in a
 * directory of their own: the node's waiting tasks watch the directory
 * for the result, and would wake at every other task's arrival), and the
 * node's rendezvous result its first task leaves for the others. */
#define TE_ARRIVED_DIR "trainenv-arrived"
#define TE_ARRIVED_FMT "%s/" TE_ARRIVED_DIR "/%u"
#define TE_NODE_RESULT "trainenv-node.out"
/* held locked by the node's first task while it waits for its helper */
#define TE_LEAD_LOCK "trainenv-lead.lock"
/* A task that failed before the barrier leaves this instead of its
 * arrival file: one line, why (printable ASCII, at most
 * TE_FAILED_TEXT_MAX bytes); the node's helper tells rank 0. */
#define TE_FAILED_FMT "%s/trainenv-failed.%u"
#define TE_FAILED_TEXT_MAX 600

/* Leaves r as the node's result in dir (TE_NODE_RESULT, replaced whole).
 * Returns 0 or -1. */
int te_rdzv_write_node_result(const char *dir, const struct te_rdzv_result *r);

/* Test hooks (honoured only with the site policy test-hooks=on): a value
 * per node, "HOST:VALUE,HOST:VALUE" (TRAINENV_TEST_DELAY=n3:20). The value
 * for node, copied into buf, or NULL. */
const char *te_hook_value(const char *spec, const char *node, char *buf,
			  size_t len);

/* 1 when s is a valid interface name: 1-15 of [A-Za-z0-9_.@-]. */
int te_ifname_valid(const char *s);

#endif
