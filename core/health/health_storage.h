/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health's storage check (issue 34): the checkpoint directory
 * written, fsynced and read back from every node as the job's user, the
 * site's and the user's keys for it, and the verdict that names a node
 * whose throughput is below the site's fraction of the other nodes'
 * median. The keys and the verdict are pure (health_storage.c); the
 * measure does the I/O (health_storage_io.c). */
#ifndef TE_HEALTH_STORAGE_H
#define TE_HEALTH_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "health/health.h"

/* health_storage=SIZE: bytes each node writes, K, M or G (binary)
 * suffixed; 0 or off: no storage check. At least 1 MiB (one chunk), at
 * most 4 GiB (a check is no benchmark). */
#define TE_STORAGE_SIZE_MIN (1ULL << 20)
#define TE_STORAGE_SIZE_MAX (4ULL << 30)
/* health_storage_fraction=F, 0 < F < 1 in thousandths. */
#define TE_STORAGE_FRACTION_DEFAULT 500
/* The test hook's delay per MiB written, at most (ms). */
#define TE_STORAGE_DELAY_MAX 10000

/* "64M", "1G", "1048576", "0", "off": 0 with *bytes (0: off), or -1
 * (junk, below TE_STORAGE_SIZE_MIN, above TE_STORAGE_SIZE_MAX). */
int te_storage_size_parse(const char *s, uint64_t *bytes);
/* "0.5", "0.25", "0.125": 0 with *permille (1 to 999), or -1 (not 0.D
 * with one to three digits, or 0). */
int te_storage_fraction_parse(const char *s, unsigned *permille);
/* "64 MiB", "1 GiB", "1536 KiB": a size for the lines. */
void te_storage_size_text(uint64_t bytes, char *buf, size_t len);

/* The storage keys (te_health_policy_set calls it): 1 when key is one of
 * health_storage=SIZE, health_storage_fraction=F, health_storage_action=
 * warn|exclude, health_test_storage_delay=NODE:MS (the tests' hook: MS
 * milliseconds slept per MiB written on node NODE; the site's alone),
 * applied; 0 when not one; -1 with err. */
int te_health_storage_key_set(struct te_health_policy *p, const char *key,
			      const char *val, const char *where, char *err,
			      size_t errlen);
/* A user's storage keys merged into out (the site's merged so far): the
 * user may turn the check on, write more, ask a higher fraction or
 * exclude instead of warn; less than the site's is refused (-1, err
 * naming the key, the site's value and what is accepted) unless the site
 * allows weaker keys; the test hook is the site's alone. 0, or -1. */
int te_health_storage_merge(const struct te_health_policy *site,
			    const struct te_health_policy *user,
			    struct te_health_policy *out, char *err,
			    size_t errlen);

/* One node's figures as its helper sent them. have 0: none (a node whose
 * helper is older, or whose check failed and said so on its own). MB/s
 * are 10^6 bytes a second, write counting the fsync. */
struct te_storage_figure {
	char host[64];
	int have;
	uint64_t write_mbps, read_mbps;
};

/* The verdict over every node's figures: a node whose write or read
 * throughput is below permille/1000 of the median of the other nodes'
 * figures (the nodes with figures; of an even count the lower of the two
 * middle ones) is named, one line each, '\n' after each, into out:
 * "node n2: checkpoint directory DIR: write 9 MB/s, below 0.5 of the
 * other nodes' median (240 MB/s)". At most max_lines lines, then "and N
 * more nodes below the fraction". One node with figures (or none): no
 * comparison. Returns the number of nodes named, or -1 (out of memory:
 * out says so). */
long te_storage_slow_nodes(const struct te_storage_figure *f, size_t n,
			   unsigned permille, const char *dir,
			   unsigned max_lines, char *out, size_t len);

/* ---------------------------------------------------------------- helper */

/* What the plugin tells trainenv-rdzv (TRAINENV_HEALTH_STORAGE, always
 * set by the plugin in the helper's environment, so that the job's own
 * value never counts): "BYTES PERMILLE ACTION BOUND_S DELAY_MS", ACTION
 * 0 warn, 1 exclude; DELAY_MS the test hook's for this node. */
#define TE_STORAGE_ENV "TRAINENV_HEALTH_STORAGE"
struct te_storage_opts {
	uint64_t bytes; /* 0: no storage check */
	unsigned permille;
	int exclude;
	unsigned bound_s;
	unsigned delay_ms_mib;
};
/* The job's storage check from the site's health items and the user's
 * --train-health (NULL: none) on node: the merged policy's; a text that
 * does not load or merge gives no check (the prolog and srun say why). */
void te_storage_opts_for(const char *site_items, const char *user,
			 const char *node, struct te_storage_opts *o);
/* "NAME=VALUE" for the helper's environment. 0, or -1 (too small). */
int te_storage_env_format(const struct te_storage_opts *o, char *buf,
			  size_t len);
/* The value (NULL: not set, no check). 0, or -1 (junk: no check). */
int te_storage_env_parse(const char *val, struct te_storage_opts *o);

/* ---------------------------------------------------------------- I/O */

struct te_storage_run {
	uint64_t bytes;	       /* to write, then read back */
	int64_t deadline_ms;   /* te_now_ms() time to give up at */
	unsigned delay_ms_mib; /* the test hook: slept per MiB written */
};

struct te_storage_result {
	uint64_t done; /* bytes written (all of them when it passed) */
	int64_t write_ms, read_ms;
	uint64_t write_mbps, read_mbps;
};

/* Writes run->bytes to a new file DIR/NAME (O_CREAT|O_EXCL|O_NOFOLLOW,
 * 0600) in 1 MiB chunks, fsyncs it, drops it from the page cache where
 * the kernel allows (posix_fadvise DONTNEED), reads it back comparing
 * every chunk, and unlinks it, however it ended. The clock is read
 * between chunks: past the deadline it stops. 0 with the figures, or -1
 * with why: "did not finish 64 MiB in 10 s (wrote 12 MiB)", "cannot
 * write there: Permission denied", "read back differs at MiB 3". */
int te_storage_measure(const char *dir, const char *name,
		       const struct te_storage_run *run,
		       struct te_storage_result *res, char *why, size_t len);

#endif
