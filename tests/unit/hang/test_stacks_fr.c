/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The flight recorder's dumps asked for and read on one node
 * (core/hang/stacks_fr.c, te_fr_collect), against stand-ins for PyTorch's
 * monitor thread (a child that makes its FIFO, waits for a byte and
 * writes a dump in pieces) and against what a job could leave in their
 * place: no pipe, a regular file, a link, a FIFO nobody reads, a reader
 * that never dumps, a stale dump, a dump that is a link, a hostile pickle
 * (refused, its code never run). All ranks are waited for at once, within
 * the deadline; no read begins past it, nor past the node's bytes. A rank
 * in a container (a child chrooted in a user namespace of its own): its
 * paths resolved in its root, where an absolute link or ".." would lead
 * the string "/proc/PID/root" + path to the node's files. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
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
#include "userns_child.h"
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

/* ---- the node's bounds: its time and its bytes (review L5) */

static struct te_fr_rank bout[4];
static struct te_fr_ask bask[4];
static int brd[4];

/* Four ranks with pipes that are read (by this process) and dumps that
 * come at once, in between(): all whole in the same look. */
static void quiet_ranks(void)
{
	int i;

	for (i = 0; i < 4; i++) {
		memset(&bask[i], 0, sizeof(bask[i]));
		te_fr_missing(&bout[i], -1, "not asked yet");
		bask[i].rank = 20 + i;
		bask[i].out = &bout[i];
		path_of(bask[i].pipe, sizeof(bask[i].pipe), "p_", 20 + i);
		path_of(bask[i].dump, sizeof(bask[i].dump), "d_", 20 + i);
		unlink(bask[i].dump);
		unlink(bask[i].pipe);
		if (mkfifo(bask[i].pipe, 0600) < 0 ||
		    (brd[i] = open(bask[i].pipe, O_RDONLY | O_NONBLOCK)) < 0) {
			printf("Bail out! no FIFO %s\n", bask[i].pipe);
			exit(1);
		}
	}
}

static void dumps_now(void *arg)
{
	int i, fd;

	(void)arg;
	for (i = 0; i < 4; i++) {
		fd = open(bask[i].dump, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, dump, dump_len) != (ssize_t)dump_len)
			exit(1);
		close(fd);
	}
}

static void quiet_end(void)
{
	int i;

	for (i = 0; i < 4; i++)
		close(brd[i]);
}

/* The real clock until the first dump is read, then 100 s later: the
 * reads that would follow come past the deadline. */
static int64_t jumping_clock(void)
{
	return te_now_ms() + (bout[0].status == TE_FR_OK ? 100000 : 0);
}

static void test_node_bounds(void)
{
	struct te_fr_opts o = { .timeout_ms = 3000, .between = dumps_now };
	int i, late = 1;

	quiet_ranks();
	o.clock = jumping_clock;
	te_fr_collect_opts(bask, 4, getuid(), &o);
	for (i = 1; i < 4; i++)
		late &= bout[i].status == TE_FR_MISSING &&
			strstr(bout[i].why, "time ran out") != NULL;
	ok(bout[0].status == TE_FR_OK && late,
	   "deadline: a dump whole in time, but reached only after the reads "
	   "before it took the node's time, is not read (%s; %s)",
	   bout[0].why, bout[1].why);
	quiet_end();

	quiet_ranks();
	o.clock = NULL;
	o.total_max = 2 * dump_len + dump_len / 2;
	te_fr_collect_opts(bask, 4, getuid(), &o);
	ok(bout[0].status == TE_FR_OK && bout[1].status == TE_FR_OK &&
		   bout[2].status == TE_FR_MISSING &&
		   strstr(bout[2].why, "the node's dumps are over") &&
		   bout[3].status == TE_FR_MISSING,
	   "bytes: the dumps past the node's total are not read (%s)",
	   bout[2].why);
	quiet_end();
	ok(TE_HN_NODE_DUMPS_MAX == 256u << 20 &&
		   TE_HN_NODE_DUMPS_MAX >= 2 * TE_HN_DUMP_MAX,
	   "bytes: 256 MiB a node (four dumps of the most one may be)");
}

/* ---- a rank in a container (review L1): its paths in its root */

static char croot[300], host_dump[400], clamped_dump[400];
static unsigned char dump2[4096];
static size_t dump2_len;

/* the node's dump (seq 1833) and the root's, where ".." stops (seq 77) */
static void both_dumps(void *arg)
{
	int fd;

	(void)arg;
	fd = open(host_dump, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, dump, dump_len) != (ssize_t)dump_len)
		exit(1);
	close(fd);
	fd = open(clamped_dump, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, dump2, dump2_len) != (ssize_t)dump2_len)
		exit(1);
	close(fd);
}

static void test_container(void)
{
	static struct te_fr_rank cout[2];
	static struct te_fr_ask cask[2];
	char p[400], b;
	int host_rd, in_rd;
	pid_t pid;

	/* DIR/host: the node's; DIR/croot: the image, whose /tmp is an
	 * absolute link to DIR/host (as an image's /tmp -> /home/user) */
	snprintf(croot, sizeof(croot), "%s/croot", dir);
	snprintf(p, sizeof(p), "%s/host", dir);
	mkdir(p, 0700);
	mkdir(croot, 0700);
	snprintf(p, sizeof(p), "%s/croot/host", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/croot/d", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/croot/tmp", dir);
	snprintf(host_dump, sizeof(host_dump), "%s/host", dir);
	if (symlink(host_dump, p) < 0)
		return;
	snprintf(host_dump, sizeof(host_dump), "%s/host/d_1", dir);
	snprintf(clamped_dump, sizeof(clamped_dump), "%s/croot/host/d_1", dir);
	dump2_len = make_dump(dump2, 77, "scheduled");
	/* the node's FIFO, behind the image's /tmp, read here */
	snprintf(p, sizeof(p), "%s/host/p_0.pipe", dir);
	if (mkfifo(p, 0600) < 0 ||
	    (host_rd = open(p, O_RDONLY | O_NONBLOCK)) < 0)
		return;
	/* the rank's own FIFO in the image */
	snprintf(p, sizeof(p), "%s/croot/d/p_1.pipe", dir);
	if (mkfifo(p, 0600) < 0 || (in_rd = open(p, O_RDONLY | O_NONBLOCK)) < 0)
		return;
	pid = te_test_userns_child(croot, "/");
	if (pid < 0) {
		tap_skip("no user namespace to chroot a rank in here: the "
			 "container's paths need one");
		tap_skip("no user namespace to chroot a rank in here");
		close(host_rd);
		close(in_rd);
		return;
	}
	te_fr_missing(&cout[0], -1, "");
	te_fr_missing(&cout[1], -1, "");
	cask[0] = (struct te_fr_ask){ .pid = pid, .rank = 0, .out = &cout[0] };
	cask[1] = (struct te_fr_ask){ .pid = pid, .rank = 1, .out = &cout[1] };
	strcpy(cask[0].pipe, "/tmp/p_0.pipe");
	strcpy(cask[0].dump, "/tmp/d_0");
	strcpy(cask[1].pipe, "/d/p_1.pipe");
	/* ".." past the image's root: the string /proc/PID/root/d/../../
	 * host/d_1 would climb out of it to DIR/host/d_1 */
	strcpy(cask[1].dump, "/d/../../host/d_1");
	te_fr_collect(cask, 2, getuid(), 2000, both_dumps, NULL);
	ok(read(host_rd, &b, 1) != 1 && cout[0].status == TE_FR_MISSING &&
		   (strstr(cout[0].why, "no flight recorder pipe") ||
		    strstr(cout[0].why, "Too many levels")),
	   "container: an absolute link in the image is resolved in it (a "
	   "loop when DIR is under /tmp): the node's FIFO it names gets no "
	   "byte (%s)",
	   cout[0].why);
	ok(read(in_rd, &b, 1) == 1 && cout[1].status == TE_FR_OK &&
		   cout[1].npos == 1 && cout[1].pos[0].seq == 77,
	   "container: \"..\" stops at the image's root: its dump read, not "
	   "the node's (seq %lld, %s)",
	   cout[1].npos ? (long long)cout[1].pos[0].seq : -1LL, cout[1].why);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(host_rd);
	close(in_rd);
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
	test_node_bounds();
	test_container();
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
