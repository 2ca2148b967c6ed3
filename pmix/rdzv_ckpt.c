/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launch's checkpoint probe (checkpoint-dir, docs/pmix.md): rank
 * 0's file with a random token, each node's look at the directory, and the
 * probe's way down the launch tree. Part of trainenv-rdzv (rdzv.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "launch/launch_verdict.h"
#include "rdzv_ckpt.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define CKPT_RETRY_MS 3000 /* NFS may cache "no such file" briefly */

static char ckpt_file[TE_RDZV_PATH_MAX + 96];

int te_rdzv_ckpt_write(struct te_pmix *p, const struct te_rdzv_opts *o,
		       char *err, size_t errlen)
{
	char token[TE_TOKEN_LEN + 1], name[96], val[TE_RDZV_TEXT_MAX];
	int fd;

	if (te_random_hex(token, sizeof(token), TE_TOKEN_LEN) < 0) {
		te_snprintf(val, sizeof(val), "error cannot make a token");
		goto put;
	}
	te_ckpt_probe_name(o->job, o->step, token, name, sizeof(name));
	if (te_snprintf(ckpt_file, sizeof(ckpt_file), "%s/%s", o->ckpt, name) <
	    0) {
		te_snprintf(val, sizeof(val), "error the path is too long");
		ckpt_file[0] = '\0';
		goto put;
	}
	/* 0600: the nodes read it as the job's user; nobody else need see
	 * the token (DIR may be shared) */
	fd = open(ckpt_file,
		  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		te_snprintf(val, sizeof(val), "error %s", strerror(errno));
		ckpt_file[0] = '\0';
		goto put;
	}
	{
		char line[TE_TOKEN_LEN + 2];
		ssize_t n;

		te_snprintf(line, sizeof(line), "%s\n", token);
		n = write(fd, line, strlen(line));
		if (close(fd) < 0 || n != (ssize_t)strlen(line)) {
			te_snprintf(val, sizeof(val), "error writing: %s",
				    strerror(errno));
			unlink(ckpt_file);
			ckpt_file[0] = '\0';
			goto put;
		}
	}
	te_snprintf(val, sizeof(val), "%s %s", name, token);
put:
	return te_pmix_put(p, "te.ckpt", val, err, errlen);
}

void te_rdzv_ckpt_remove(void)
{
	if (ckpt_file[0]) {
		unlink(ckpt_file);
		ckpt_file[0] = '\0';
	}
}

void te_rdzv_ckpt_node_check(const struct te_rdzv_opts *o, const char *info,
			     char *out, size_t len)
{
	char probe[TE_RDZV_PATH_MAX + 128], path[TE_RDZV_PATH_MAX + 160];
	char buf[64], probe_id[TE_TOKEN_LEN + 1];
	struct te_ckpt_probe rank0;
	int fd, tries;

	if (te_ckpt_probe_parse(info, &rank0, out, len) < 0)
		return;
	/* Writable from here. The name is random: DIR is shared with other
	 * users, who could make a predictable name first (the step would
	 * then fail) or put a link there. */
	if (te_random_hex(probe_id, sizeof(probe_id), TE_TOKEN_LEN) < 0) {
		te_snprintf(out, len, "cannot make a random file name");
		return;
	}
	te_snprintf(probe, sizeof(probe), "%s/.trainenv-probe-%lu.%lu-%s",
		    o->ckpt, o->job, o->step, probe_id);
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			te_snprintf(out, len, "no such directory");
		else
			te_snprintf(out, len, "cannot write there: %s",
				    strerror(e));
		return;
	}
	close(fd);
	unlink(probe);
	/* the same directory as rank 0's: its file, with its token */
	te_snprintf(path, sizeof(path), "%s/%s", o->ckpt, rank0.name);
	for (tries = 0;; tries++) {
		if (te_read_small(path, buf, sizeof(buf), TE_READ_NOFOLLOW) >=
		    0) {
			te_strlcpy(out, te_ckpt_probe_content(buf, rank0.token),
				   len);
			return;
		}
		if (tries * 500 >= CKPT_RETRY_MS)
			break;
		usleep(500000); /* network file systems cache lookups */
	}
	te_snprintf(out, len,
		    "rank 0's probe file is not there (another "
		    "directory with the same path: node-local storage?)");
}

int te_rdzv_ckpt_from_parent(struct te_pmix *p, struct te_barrier *b,
			     unsigned timeout, char *info, size_t len,
			     char *msg, size_t msglen)
{
	char err[TE_RDZV_TEXT_MAX], host[TE_HOST_MAX];
	int64_t up = te_barrier_parent(b);
	int timed_out;

	if (up < 0) {
		if (te_pmix_get(p, p->me.rank, "te.ckpt", 1, info, len) < 0)
			te_strlcpy(info, "error no probe file", len);
		return 0;
	}
	if (te_pmix_get_wait(p, (uint32_t)up, "te.ckpt", te_barrier_ms_left(b),
			     info, len, &timed_out, err, sizeof(err)) < 0) {
		if (te_pmix_host_of(p, (uint32_t)up, host, sizeof(host)) < 0)
			te_strlcpy(host, "?", sizeof(host));
		/* the parent may be waiting itself: it, or a node between it
		 * and rank 0, has not arrived (or rank 0 has given up) */
		if (timed_out && up == 0)
			te_snprintf(msg, msglen,
				    "barrier timed out after %u s: "
				    "rank 0 (node %s) did not pass on its "
				    "checkpoint probe (it did not arrive, or "
				    "stopped waiting)",
				    timeout, host);
		else if (timed_out)
			te_snprintf(
				msg, msglen,
				"barrier timed out after %u s: "
				"rank %lld (node %s), this node's parent in "
				"the launch tree, did not pass on rank 0's "
				"checkpoint probe (it, or a node between it "
				"and rank 0, did not arrive, or rank 0 "
				"stopped waiting)",
				timeout, (long long)up, host);
		else
			te_snprintf(
				msg, msglen,
				"checkpoint check: rank 0's "
				"probe did not come through rank %lld (node "
				"%s), this node's parent in the launch tree: "
				"%s",
				(long long)up, host, err);
		return -1;
	}
	if (te_barrier_has_children(b) &&
	    te_pmix_put(p, "te.ckpt", info, err, sizeof(err)) < 0)
		return te_err(msg, msglen, "checkpoint check: %s", err);
	return 0;
}
