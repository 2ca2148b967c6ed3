/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The flight recorder's dumps asked for and read on one node
 * (core/hang/stacks_fr.c, te_fr_collect), against stand-ins for PyTorch's
 * monitor thread (a child that makes its FIFO, waits for a byte and
 * writes a dump in pieces) and against what a job could leave in their
 * place: no pipe, a regular file, a link, a FIFO nobody reads, a reader
 * that never dumps, a stale dump, a dump that is a link, a hostile pickle
 * (refused, its code never run). All ranks are waited for at once, within
 * the deadline. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hang/flightrec.h"
#include "hang/stacks_nccl.h"
#include "tap.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define RANKS 10

static char dir[256], marker[320];
static unsigned char dump[4096], hostile[256];
static size_t dump_len, hostile_len;

/* ---- pickles as torch::jit::Pickler writes them (PROTO 2, no GLOBAL) */

static size_t p_str(unsigned char *o, const char *s)
{
	uint32_t n = (uint32_t)strlen(s);

	o[0] = 'X';
	memcpy(o + 1, &n, 4); /* little-endian hosts only (as the CI's) */
	memcpy(o + 5, s, n);
	return 5 + n;
}

static size_t p_int(unsigned char *o, int32_t v)
{
	o[0] = 'J';
	memcpy(o + 1, &v, 4);
	return 5;
}

/* {"version":"2.10","entries":[{"collective_seq_id":seq,"process_group":
 * ("0","default_pg"),"profiling_name":"nccl:all_reduce","state":..}]} */
static size_t make_dump(unsigned char *o, int32_t seq, const char *state)
{
	size_t n = 0;

	memcpy(o, "\x80\x02}(", 4);
	n = 4;
	n += p_str(o + n, "version");
	n += p_str(o + n, "2.10");
	n += p_str(o + n, "entries");
	o[n++] = ']';
	o[n++] = '(';
	o[n++] = '}';
	o[n++] = '(';
	n += p_str(o + n, "collective_seq_id");
	n += p_int(o + n, seq);
	n += p_str(o + n, "process_group");
	n += p_str(o + n, "0");
	n += p_str(o + n, "default_pg");
	o[n++] = 0x86; /* TUPLE2 */
	n += p_str(o + n, "profiling_name");
	n += p_str(o + n, "nccl:all_reduce");
	n += p_str(o + n, "state");
	n += p_str(o + n, state);
	o[n++] = 'u';
	o[n++] = 'e';
	o[n++] = 'u';
	o[n++] = '.';
	return n;
}

/* os.system("touch MARKER") the way pickle writes it at protocol 2 */
static size_t make_hostile(unsigned char *o)
{
	char cmd[400];
	size_t n;

	snprintf(cmd, sizeof(cmd), "touch %s", marker);
	memcpy(o,
	       "\x80\x02"
	       "cposix\nsystem\n",
	       16);
	n = 16;
	n += p_str(o + n, cmd);
	o[n++] = 0x85; /* TUPLE1 */
	o[n++] = 'R';
	o[n++] = '.';
	return n;
}

static void path_of(char *out, size_t len, const char *what, int rank)
{
	snprintf(out, len, "%s/%s%d%s", dir, what, rank,
		 !strcmp(what, "p_") ? ".pipe" : "");
}

/* PyTorch's monitor thread, as a child: its FIFO made and opened
 * O_RDONLY|O_NONBLOCK (as DumpPipe), then on a byte the dump written in
 * two pieces 150 ms apart (answer 0: never; 2: a link to rank 0's dump
 * in its place). */
static pid_t monitor(int rank, const unsigned char *d, size_t len, int answer,
		     int ready_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		char pipe[300], out[300], b;
		struct pollfd p;
		int fd, w;

		path_of(pipe, sizeof(pipe), "p_", rank);
		path_of(out, sizeof(out), "d_", rank);
		unlink(pipe);
		if (mkfifo(pipe, 0600) < 0)
			_exit(2);
		fd = open(pipe, O_RDONLY | O_NONBLOCK);
		if (write(ready_fd, "r", 1) != 1)
			_exit(2);
		p.fd = fd;
		p.events = POLLIN;
		for (;;) {
			if (poll(&p, 1, 100) == 1 && read(fd, &b, 1) == 1)
				break;
		}
		if (!answer)
			pause();
		poll(NULL, 0, 200); /* the monitor's poll interval */
		if (answer == 2) {
			path_of(pipe, sizeof(pipe), "d_", 0);
			_exit(symlink(pipe, out) < 0 ? 3 : 0);
		}
		w = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (w < 0 || write(w, d, len / 2) < 0)
			_exit(3);
		poll(NULL, 0, 150);
		if (write(w, d + len / 2, len - len / 2) < 0)
			_exit(3);
		close(w);
		_exit(0);
	}
	return pid;
}

static int calls;
static void between(void *arg)
{
	(void)arg;
	calls++;
}

int main(void)
{
	static struct te_fr_rank out[RANKS];
	static struct te_fr_ask ask[RANKS];
	pid_t kids[5];
	int ready[2], i, fd;
	char b, path[300], path2[300];
	struct stat st;
	int64_t t0, took;

	snprintf(dir, sizeof(dir), "%s/te-fr.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir) || pipe(ready) < 0) {
		printf("Bail out! no temporary directory\n");
		return 1;
	}
	snprintf(marker, sizeof(marker), "%s/MARKER", dir);
	dump_len = make_dump(dump, 1833, "started");
	hostile_len = make_hostile(hostile);
	{
		struct te_fr_rank r;

		ok(te_fr_extract(dump, dump_len, NULL, 0, &r) == 0 &&
			   r.npos == 1 && r.pos[0].seq == 1833,
		   "the test's dump reads as PyTorch's");
	}
	for (i = 0; i < RANKS; i++) {
		ask[i].rank = i;
		ask[i].out = &out[i];
		path_of(ask[i].pipe, sizeof(ask[i].pipe), "p_", i);
		path_of(ask[i].dump, sizeof(ask[i].dump), "d_", i);
	}
	/* 0, 1: answer with a dump; 5: reads, never dumps; 6: a hostile one */
	kids[0] = monitor(0, dump, dump_len, 1, ready[1]);
	kids[1] = monitor(1, dump, dump_len, 1, ready[1]);
	kids[2] = monitor(5, dump, dump_len, 0, ready[1]);
	kids[3] = monitor(6, hostile, hostile_len, 1, ready[1]);
	kids[4] = monitor(9, dump, dump_len, 2, ready[1]);
	for (i = 0; i < 5; i++)
		if (read(ready[0], &b, 1) != 1)
			return 1;
	/* 1: a stale dump from before is there */
	path_of(path, sizeof(path), "d_", 1);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	if (fd < 0 || write(fd, "stale", 5) != 5)
		return 1;
	close(fd);
	/* 2: no pipe at all (nothing made) */
	/* 3: a regular file where the pipe should be */
	path_of(path, sizeof(path), "p_", 3);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	close(fd);
	/* 4: a FIFO nobody reads */
	path_of(path, sizeof(path), "p_", 4);
	mkfifo(path, 0600);
	/* 7: the pipe is a link to rank 0's FIFO */
	path_of(path, sizeof(path), "p_", 0);
	path_of(path2, sizeof(path2), "p_", 7);
	if (symlink(path, path2) < 0)
		return 1;
	/* 8: a directory where the pipe should be */
	path_of(path, sizeof(path), "p_", 8);
	mkdir(path, 0700);
	/* 9: its dump comes as a link (to rank 0's) */

	t0 = te_now_ms();
	te_fr_collect(ask, RANKS, getuid(), 2000, between, NULL);
	took = te_now_ms() - t0;
	ok(took < 2600, "all ranks at once, within the 2 s deadline (%lld ms)",
	   (long long)took);
	is_int(calls, 1, "the callback runs once, after the bytes");
	ok(out[0].status == TE_FR_OK && out[0].rank == 0 && out[0].npos == 1 &&
		   out[0].pos[0].seq == 1833 &&
		   !strcmp(out[0].pos[0].op, "all_reduce") &&
		   out[0].pos[0].state == TE_FR_STARTED,
	   "rank 0: its dump, written in two pieces, read whole (%s)",
	   out[0].why);
	ok(out[1].status == TE_FR_OK && out[1].npos == 1,
	   "rank 1: the new dump, not the stale one before it (%s)",
	   out[1].why);
	ok(out[2].status == TE_FR_MISSING &&
		   strstr(out[2].why, "no flight recorder pipe"),
	   "rank 2: no pipe: missing (%s)", out[2].why);
	path_of(path, sizeof(path), "p_", 3);
	ok(out[3].status == TE_FR_MISSING && strstr(out[3].why, "not a FIFO") &&
		   stat(path, &st) == 0 && st.st_size == 0,
	   "rank 3: a regular file as the pipe: not written to (%s)",
	   out[3].why);
	ok(out[4].status == TE_FR_MISSING && strstr(out[4].why, "no reader"),
	   "rank 4: a FIFO without a reader: never waited on (%s)", out[4].why);
	ok(out[5].status == TE_FR_MISSING &&
		   strstr(out[5].why, "no dump within 2 s"),
	   "rank 5: no dump in time: missing (%s)", out[5].why);
	ok(out[6].status == TE_FR_REFUSED && access(marker, F_OK) < 0 &&
		   errno == ENOENT,
	   "rank 6: a hostile pickle refused, its code not run (%s)",
	   out[6].why);
	ok(out[7].status == TE_FR_MISSING && strstr(out[7].why, "not a FIFO"),
	   "rank 7: a link as the pipe: not followed (%s)", out[7].why);
	ok(out[8].status == TE_FR_MISSING && strstr(out[8].why, "not a FIFO"),
	   "rank 8: a directory as the pipe: not used (%s)", out[8].why);
	ok(out[9].status == TE_FR_MISSING &&
		   strstr(out[9].why, "its dump: Too many levels"),
	   "rank 9: a dump that is a link: not followed (%s)", out[9].why);

	for (i = 0; i < 5; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	/* nothing to ask: no wait */
	t0 = te_now_ms();
	calls = 0;
	te_fr_collect(ask, 1, getuid(), 0, between, NULL);
	ok(te_now_ms() - t0 < 500 && calls == 1 &&
		   out[0].status == TE_FR_MISSING,
	   "deadline 0: no wait, the callback still runs (%s)", out[0].why);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return tap_done();
}
