/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launch's checkpoint probe (checkpoint-dir, docs/pmix.md): rank
 * 0's file with a random token and each node's look at the directory (the
 * probe goes down the launch tree over its connections: pmix/barrier*.c).
 * Part of trainenv-rdzv (rdzv.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "health/health_storage.h"
#include "launch/launch_tree.h"
#include "launch/launch_verdict.h"
#include "rdzv_ckpt.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define CKPT_RETRY_MS 3000 /* NFS may cache "no such file" briefly */
#define CKPT_TRY_MS 500

static char ckpt_file[TE_RDZV_PATH_MAX + 96];

/* The storage check (health_storage.h): what the plugin asked, and this
 * node's outcome, "ok storage W R" or "storage: WHY" (state 1 or -1; 0:
 * not run yet). Written before the barrier, by the probe thread or the
 * barrier's loop, never both (rdzv.c joins the thread first). */
static struct te_storage_opts storage;
static int storage_state;
static char storage_text[TE_CKPT_TEXT_MAX + 1];

const struct te_storage_opts *te_rdzv_storage_load(void)
{
	static int loaded;
	const char *v = getenv(TE_STORAGE_ENV);

	if (loaded++)
		return &storage;
	if (te_storage_env_parse(v, &storage) < 0)
		fprintf(stderr,
			"trainenv: warning: %s: junk from the plugin, no "
			"storage check\n",
			TE_STORAGE_ENV);
	return &storage;
}

void te_rdzv_storage_run(const struct te_rdzv_opts *o)
{
	struct te_storage_run run = { .bytes = storage.bytes,
				      .delay_ms_mib = storage.delay_ms_mib };
	struct te_storage_result res;
	char id[TE_TOKEN_LEN + 1], name[128], why[200];

	if (!storage.bytes || !o->ckpt || storage_state)
		return;
	/* a random name, as the probe's: DIR may be shared with others */
	if (te_random_hex(id, sizeof(id), TE_TOKEN_LEN) < 0) {
		storage_state = -1;
		te_strlcpy(storage_text, "storage: cannot make a random name",
			   sizeof(storage_text));
		return;
	}
	te_snprintf(name, sizeof(name), ".trainenv-storage-%lu.%lu-%s", o->job,
		    o->step, id);
	run.deadline_ms = te_now_ms() + (int64_t)storage.bound_s * 1000;
	if (te_storage_measure(o->ckpt, name, &run, &res, why, sizeof(why)) <
	    0) {
		storage_state = -1;
		te_snprintf(storage_text, sizeof(storage_text), "storage: %s",
			    why);
		return;
	}
	storage_state = 1;
	te_snprintf(storage_text, sizeof(storage_text),
		    TE_CKPT_STORAGE_PREFIX "%llu %llu",
		    (unsigned long long)res.write_mbps,
		    (unsigned long long)res.read_mbps);
}

void te_rdzv_ckpt_write(const struct te_rdzv_opts *o, char *val, size_t len)
{
	char token[TE_TOKEN_LEN + 1], name[96];
	int fd;

	if (te_random_hex(token, sizeof(token), TE_TOKEN_LEN) < 0) {
		te_snprintf(val, len, "error cannot make a token");
		return;
	}
	te_ckpt_probe_name(o->job, o->step, token, name, sizeof(name));
	if (te_snprintf(ckpt_file, sizeof(ckpt_file), "%s/%s", o->ckpt, name) <
	    0) {
		te_snprintf(val, len, "error the path is too long");
		ckpt_file[0] = '\0';
		return;
	}
	/* 0600: the nodes read it as the job's user; nobody else need see
	 * the token (DIR may be shared) */
	fd = open(ckpt_file,
		  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		te_snprintf(val, len, "error %s", strerror(errno));
		ckpt_file[0] = '\0';
		return;
	}
	{
		char line[TE_TOKEN_LEN + 2];
		ssize_t n;

		te_snprintf(line, sizeof(line), "%s\n", token);
		n = write(fd, line, strlen(line));
		if (close(fd) < 0 || n != (ssize_t)strlen(line)) {
			te_snprintf(val, len, "error writing: %s",
				    strerror(errno));
			unlink(ckpt_file);
			ckpt_file[0] = '\0';
			return;
		}
	}
	te_snprintf(val, len, "%s %s", name, token);
}

void te_rdzv_ckpt_remove(void)
{
	if (ckpt_file[0]) {
		unlink(ckpt_file);
		ckpt_file[0] = '\0';
	}
}

/* Writable from here: 0, or 1 with out saying why not. */
static int node_writable(const struct te_rdzv_opts *o, char *out, size_t len)
{
	char probe[TE_RDZV_PATH_MAX + 128], probe_id[TE_TOKEN_LEN + 1];
	int fd;

	/* The name is random: DIR is shared with other users, who could make
	 * a predictable name first (the step would then fail) or put a link
	 * there. */
	if (te_random_hex(probe_id, sizeof(probe_id), TE_TOKEN_LEN) < 0) {
		te_snprintf(out, len, "cannot make a random file name");
		return 1;
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
		return 1;
	}
	close(fd);
	unlink(probe);
	return 0;
}

int te_rdzv_ckpt_node_try(const struct te_rdzv_opts *o, const char *info,
			  char *out, size_t len)
{
	static int tries = -1; /* reads of rank 0's file so far; -1: none */
	char path[TE_RDZV_PATH_MAX + 160], buf[64];
	struct te_ckpt_probe rank0;

	if (te_ckpt_probe_parse(info, &rank0, out, len) < 0)
		return 1;
	if (tries < 0 && node_writable(o, out, len))
		return 1;
	/* the same directory as rank 0's: its file, with its token */
	te_snprintf(path, sizeof(path), "%s/%s", o->ckpt, rank0.name);
	if (te_read_small(path, buf, sizeof(buf), TE_READ_NOFOLLOW) >= 0) {
		te_strlcpy(out, te_ckpt_probe_content(buf, rank0.token), len);
		tries = -1;
		if (storage.bytes && !strcmp(out, "ok")) {
			/* the lead's probe thread ran it before; a task's
			 * own helper (no private PMIx directory) here */
			te_rdzv_storage_run(o);
			te_strlcpy(out, storage_text, len);
		}
		return 1;
	}
	if (++tries * CKPT_TRY_MS >= CKPT_RETRY_MS) {
		te_snprintf(out, len,
			    "rank 0's probe file is not there (another "
			    "directory with the same path: node-local "
			    "storage?)");
		tries = -1;
		return 1;
	}
	return 0; /* network file systems cache lookups: again later */
}

int te_rdzv_ckpt_probe_check(void *opts, const char *probe, char *out,
			     size_t len)
{
	return te_rdzv_ckpt_node_try(opts, probe, out, len);
}
