/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health's storage check, the measure (health_storage.h): one file
 * written in chunks, fsynced, dropped from the page cache, read back and
 * compared, within a deadline read between chunks. Runs as the job's
 * user in trainenv-rdzv. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "health/health_storage.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define CHUNK (1u << 20)

/* The chunk's content: its index in every 8 bytes, so that a chunk read
 * from the wrong place differs. */
static void fill(unsigned char *buf, uint64_t index)
{
	size_t i;

	for (i = 0; i + sizeof(index) <= CHUNK; i += sizeof(index))
		memcpy(buf + i, &index, sizeof(index));
}

static void sleep_ms(unsigned ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* "did not finish 64 MiB in 10 s (wrote 12 MiB)". -1. */
static int late(const struct te_storage_run *run, int64_t start,
		const char *what, uint64_t done, char *why, size_t len)
{
	char size[32], got[32];

	te_storage_size_text(run->bytes, size, sizeof(size));
	te_storage_size_text(done, got, sizeof(got));
	te_snprintf(why, len, "did not finish %s in %lld s (%s %s)", size,
		    (long long)((run->deadline_ms - start + 999) / 1000), what,
		    got);
	return -1;
}

/* Full writes of the chunks and fsync. 0, or -1 with why. */
static int write_all(int fd, const struct te_storage_run *run, int64_t start,
		     unsigned char *buf, struct te_storage_result *res,
		     char *why, size_t len)
{
	uint64_t i;

	for (i = 0; res->done < run->bytes; i++) {
		size_t want = run->bytes - res->done < CHUNK
				      ? (size_t)(run->bytes - res->done)
				      : CHUNK;
		size_t off = 0;

		if (te_now_ms() >= run->deadline_ms)
			return late(run, start, "wrote", res->done, why, len);
		fill(buf, i);
		while (off < want) {
			ssize_t n = write(fd, buf + off, want - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return te_err(why, len, "writing: %s",
					      n < 0 ? strerror(errno)
						    : "no space written");
			off += (size_t)n;
		}
		res->done += want;
		if (run->delay_ms_mib)
			sleep_ms(run->delay_ms_mib);
	}
	if (fsync(fd) < 0)
		return te_err(why, len, "fsync: %s", strerror(errno));
	return 0;
}

/* Reads the file back and compares. 0, or -1 with why. */
static int read_all(int fd, const struct te_storage_run *run, int64_t start,
		    unsigned char *buf, unsigned char *want_buf, char *why,
		    size_t len)
{
	uint64_t got = 0, i;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return te_err(why, len, "seek: %s", strerror(errno));
	for (i = 0; got < run->bytes; i++) {
		size_t want = run->bytes - got < CHUNK
				      ? (size_t)(run->bytes - got)
				      : CHUNK;
		size_t off = 0;

		if (te_now_ms() >= run->deadline_ms)
			return late(run, start, "read back", got, why, len);
		while (off < want) {
			ssize_t n = read(fd, buf + off, want - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return te_err(why, len, "reading back: %s",
					      n < 0 ? strerror(errno)
						    : "the file is short");
			off += (size_t)n;
		}
		fill(want_buf, i);
		if (memcmp(buf, want_buf, want))
			return te_err(why, len, "read back differs at MiB %llu",
				      (unsigned long long)i);
		got += want;
	}
	return 0;
}

static uint64_t mbps(uint64_t bytes, int64_t ms)
{
	return bytes / 1000 / (uint64_t)(ms > 0 ? ms : 1);
}

int te_storage_measure(const char *dir, const char *name,
		       const struct te_storage_run *run,
		       struct te_storage_result *res, char *why, size_t len)
{
	char path[4096];
	unsigned char *buf = NULL, *want = NULL;
	int64_t start = te_now_ms(), t1;
	int fd = -1, rc = -1;

	memset(res, 0, sizeof(*res));
	if (te_snprintf(path, sizeof(path), "%s/%s", dir, name) < 0)
		return te_err(why, len, "the path is too long");
	if (!(buf = malloc(CHUNK)) || !(want = malloc(CHUNK))) {
		te_err(why, len, "out of memory");
		goto out;
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		te_err(why, len, "cannot write there: %s", strerror(errno));
		goto out;
	}
	/* the name goes at once, the descriptor measures: a helper killed
	 * mid-measure (its bound, scancel, a requeue) leaves no file of up to
	 * 4 GiB in a shared directory (review F1; NFS keeps a hidden name
	 * until the close its death makes) */
	unlink(path);
	if (write_all(fd, run, start, buf, res, why, len) < 0)
		goto out;
	t1 = te_now_ms();
	res->write_ms = t1 - start;
#ifdef POSIX_FADV_DONTNEED
	/* written and synced: the read should come from storage, not from
	 * this node's page cache (a hint; NFS may keep it) */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
#endif
	if (read_all(fd, run, start, buf, want, why, len) < 0)
		goto out;
	res->read_ms = te_now_ms() - t1;
	res->write_mbps = mbps(run->bytes, res->write_ms);
	res->read_mbps = mbps(run->bytes, res->read_ms);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(want);
	return rc;
}
