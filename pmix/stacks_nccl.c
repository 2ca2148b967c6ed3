/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-stacks --local, NCCL's view (issue 36 item 3): before gdb, and
 * from the node's time for stacks (at most TE_HN_NODE_MS of it), each
 * local rank's PyTorch flight recorder is asked for a dump through its
 * pipe and the dumps read (core/hang/stacks_fr.c); the first node of the
 * collecting step also asks NCCL RAS, which answers for the whole job, at
 * the step's own NCCL_RAS_ADDR. What came goes to the merger as records
 * beside the stacks (core/hang/stacks_nccl.h). As the job's user. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hang/flightrec.h"
#include "hang/proctab.h"
#include "hang/ras.h"
#include "hang/stacks.h"
#include "hang/stacks_nccl.h"
#include "stacks_int.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define CHUNK (64 * 1024)
#define ENVIRON_MAX (16u * 1024 * 1024) /* of a rank's environment, read */
#define MAPS_MAX (16u * 1024 * 1024)	/* of its /proc/PID/maps, read */

static char chunk[CHUNK];

/* The rank's flight recorder and RAS variables (its whole environment,
 * read in pieces up to ENVIRON_MAX). */
static void read_env(int pid, struct te_hn_env *e)
{
	char path[64];
	size_t total = 0;
	ssize_t got;
	int fd;

	te_hn_env_init(e);
	te_snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return;
	while (total < ENVIRON_MAX && (got = read(fd, chunk, CHUNK)) > 0) {
		te_hn_env_feed(e, chunk, (size_t)got);
		total += (size_t)got;
	}
	close(fd);
	te_hn_env_end(e);
}

/* 1 when the process maps a libnccl (its memory map, read up to
 * MAPS_MAX): a rank that runs NCCL. */
static int maps_nccl(int pid)
{
	static const char lib[] = "/libnccl";
	const size_t keep = sizeof(lib) - 2;
	char path[64], *buf = chunk;
	size_t total = 0, have = 0;
	ssize_t got;
	int fd, found = 0;

	te_snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	while (!found && total < MAPS_MAX &&
	       (got = read(fd, buf + have, CHUNK - 1 - have)) > 0) {
		have += (size_t)got;
		total += (size_t)got;
		buf[have] = '\0';
		found = memmem(buf, have, lib, sizeof(lib) - 1) != NULL;
		/* a name across two reads: the last bytes go first */
		if (have > keep) {
			memmove(buf, buf + have - keep, keep);
			have = keep;
		}
	}
	close(fd);
	return found;
}

/* RAS, asked while PyTorch writes its dumps (te_fr_collect's between). */
struct ras_ask {
	int ask;
	char addr[TE_HN_RAS_ADDR];
	int outcome;
	char text[TE_HN_RAS_LINES * TE_HN_RAS_LINE];
};

/* /proc/net/tcp or tcp6 read whole up to this (about 200,000 sockets): a
 * cut text could leave out the one that takes the connection, so one too
 * long is no answer. */
#define TCP_TEXT_MAX (32u * 1024 * 1024)

/* RAS is not asked; why in the report's one line. */
static int ras_refused(struct ras_ask *ra, const char *why)
{
	ra->outcome = TE_RAS_FAILED;
	te_snprintf(ra->text, sizeof(ra->text), "NCCL RAS: not asked: %s %s\n",
		    ra->addr, why);
	return 1;
}

/* /proc/net/tcp and tcp6, each read whole up to TCP_TEXT_MAX, into tcp
 * (2 * TCP_TEXT_MAX + 4 bytes): the length; *big when one was longer. */
static size_t read_tcp(char *tcp, int *big)
{
	static const char *const files[] = { "/proc/net/tcp",
					     "/proc/net/tcp6" };
	size_t len = 0, i;
	ssize_t n;

	*big = 0;
	for (i = 0; i < 2; i++) {
		n = te_read_small(files[i], tcp + len, TCP_TEXT_MAX + 1,
				  TE_READ_WHOLE);
		if (n < 0 && errno == EFBIG)
			*big = 1;
		if (n <= 0)
			continue;
		len += (size_t)n;
		if (tcp[len - 1] != '\n') /* the next file's header apart */
			tcp[len++] = '\n';
	}
	return len;
}

/* 1 when another user's socket listens where the query to the step's RAS
 * address goes (it would answer with what it likes; a wildcard 0.0.0.0 or
 * :: takes the loopback address too), or when that cannot be seen: said
 * in the report's line, RAS not asked. Not found: asked (and the
 * connection looked at again, conn_ok). */
static int held_by_other(struct ras_ask *ra)
{
	char *tcp = malloc(2 * (size_t)TCP_TEXT_MAX + 4), why[96];
	size_t len;
	long uid = -1;
	int big, found;

	if (!tcp)
		return ras_refused(ra, "could not be checked (out of memory)");
	len = read_tcp(tcp, &big);
	found = len ? te_ras_listener_uid(tcp, len, ra->addr, &uid) : 0;
	free(tcp);
	if (found == 1 && uid != (long)getuid()) {
		te_snprintf(why, sizeof(why),
			    "is held by another user (uid %ld), not this job's",
			    uid);
		return ras_refused(ra, why);
	}
	if (big) /* a listener of this job's in the part read may not be the
		    one that takes the connection */
		return ras_refused(ra, "could not be checked: who listens "
				       "there is past the 32 MiB of "
				       "/proc/net/tcp read");
	return 0;
}

/* te_ras_query_checked's look at the connection before the request is
 * sent: another user's listener may have bound the address between
 * held_by_other's look and the connect. The socket that took it (its
 * server side in /proc/net/tcp{,6}, which carries the uid of its listener
 * or, once accepted, of the process that accepted it: te_ras_conn_uid)
 * must be this job's user's: 1; else 0 with why. Not found at once (our
 * ACK may not have reached the server yet), looked again a few times. */
static int conn_ok(int fd, void *arg, char *why, size_t whylen)
{
	struct sockaddr_storage server, client;
	socklen_t sl = sizeof(server), cl = sizeof(client);
	char *tcp;
	long uid = -1;
	int big = 0, found = 0, i;

	(void)arg;
	if (getpeername(fd, (struct sockaddr *)&server, &sl) < 0 ||
	    getsockname(fd, (struct sockaddr *)&client, &cl) < 0) {
		te_snprintf(why, whylen,
			    "could not be checked: the connection's "
			    "addresses (%s)",
			    strerror(errno));
		return 0;
	}
	tcp = malloc(2 * (size_t)TCP_TEXT_MAX + 4);
	if (!tcp) {
		te_snprintf(why, whylen,
			    "could not be checked (out of memory)");
		return 0;
	}
	for (i = 0; i < 5 && found != 1 && !big; i++) {
		size_t len;

		if (i)
			usleep(2000u * (unsigned)i);
		len = read_tcp(tcp, &big);
		found = te_ras_conn_uid(tcp, len, (struct sockaddr *)&server,
					(struct sockaddr *)&client, &uid);
	}
	free(tcp);
	if (found == 1 && uid == (long)getuid())
		return 1;
	if (found == 1)
		te_snprintf(why, whylen,
			    "is held by another user (uid %ld), not this "
			    "job's: its socket took the connection",
			    uid);
	else if (big)
		te_snprintf(why, whylen,
			    "could not be checked: the connection is past "
			    "the 32 MiB of /proc/net/tcp read");
	else
		te_snprintf(why, whylen,
			    "could not be checked: the connection's other "
			    "end is not in /proc/net/tcp");
	return 0;
}

static void ask_ras(void *arg)
{
	struct ras_ask *ra = arg;
	struct te_ras_status *st;
	char why[160];

	if (!ra->ask)
		return;
	st = malloc(sizeof(*st));
	if (!st) {
		ra->outcome = TE_RAS_FAILED;
		te_snprintf(ra->text, sizeof(ra->text),
			    "NCCL RAS: not asked: out of memory\n");
		return;
	}
	if (held_by_other(ra)) {
		free(st);
		return;
	}
	if (te_ras_query_checked(ra->addr, TE_HN_RAS_MS, conn_ok, NULL, why,
				 sizeof(why), st) == 1) {
		free(st);
		ras_refused(ra, why);
		return;
	}
	ra->outcome = (int)st->outcome;
	te_ras_format(st, ra->addr, TE_HN_RAS_LINES, ra->text,
		      sizeof(ra->text));
	free(st);
}

/* rec[0..len) tagged on stdout (a record that cannot be tagged is left
 * out: each of its lines is within the bound, so none is). */
static void send_lines(const char *rec, size_t len, unsigned tag)
{
	static char tagged[2 * TE_STACK_RECORD_MAX];
	long n;

	if (!len)
		return;
	n = te_stack_wire_tag(tagged, sizeof(tagged), rec, len, tag);
	if (n > 0)
		fwrite(tagged, 1, (size_t)n, stdout);
}

/* This collector is on the first node of the collecting step. */
static int first_node(unsigned tag)
{
	const char *id = getenv("SLURM_NODEID");

	return id ? !strcmp(id, "0") : tag == 0;
}

/* With the trace buffer left to the release's default, only the pipe
 * tells whether PyTorch runs a flight recorder (it makes the pipe when its
 * buffer is above 0): 1 when it is there (or the buffer was set), else 0
 * with why. Looked for in the rank's root (a container's link never leads
 * to the node's files); its kind and owner are checked when it is opened. */
static int pipe_made(const struct te_hn_env *e, int pid, const char *pipe,
		     char *why, size_t whylen)
{
	struct stat st;

	if (te_hn_env_buffer(e) > 0)
		return 1;
	if (te_proc_lstat(pid, pipe, &st) == 0 && S_ISFIFO(st.st_mode))
		return 1;
	te_err(why, whylen,
	       "no flight recorder pipe (PyTorch makes it when its trace "
	       "buffer is above 0: --train-nccl-trace-buffer)");
	return 0;
}

/* The node's step counts nodes (the collecting step's, one collector
 * each): the records' share of the output is cut by it. */
static unsigned long step_nodes(void)
{
	long n = te_env_long("SLURM_STEP_NUM_NODES", -1);

	if (n <= 0)
		n = te_env_long("SLURM_NNODES", 1);
	return n > 0 ? (unsigned long)n : 1;
}

static void emit_rec(const char *rec, size_t len, void *arg)
{
	send_lines(rec, len, *(const unsigned *)arg);
}

/* A rank's flight recorder and its pipe, from its environment: 1 with its
 * ask filled, or 0 with fr missing. */
static int rank_asks(const struct te_hn_env *env, const struct te_proc *p,
		     long rank, struct te_fr_ask *a, struct te_fr_rank *fr)
{
	char why[160];

	if (te_hn_fr_paths(env, rank, a->pipe, sizeof(a->pipe), a->dump,
			   sizeof(a->dump), why, sizeof(why)) < 0 ||
	    !pipe_made(env, p->pid, a->pipe, why, sizeof(why))) {
		te_fr_missing(fr, rank >= 0 ? (int)rank : -1, why);
		return 0;
	}
	a->pid = p->pid;
	a->rank = (int)rank;
	a->out = fr;
	return 1;
}

void te_stacks_nccl(long job, long step, uid_t uid, const struct te_proc *t,
		    const struct te_rank_proc *r, size_t k, unsigned tag)
{
	static struct te_hn_env env;
	static struct ras_ask ra;
	static char rec[TE_STACK_RECORD_MAX];
	struct te_fr_rank *fr = calloc(k ? k : 1, sizeof(*fr));
	struct te_fr_ask *ask = calloc(k ? k : 1, sizeof(*ask));
	unsigned char *flags = calloc(k ? k : 1, 1); /* 1 nccl, 2 has */
	/* one time for all of it: the look at each rank's environment and
	 * paths (a walk in its root on kernels without openat2, a stalled
	 * mount) as well as the dumps */
	int64_t deadline = te_now_ms() + TE_HN_NODE_MS;
	size_t i, nask = 0;
	long n;

	if (!fr || !ask || !flags)
		goto out;
	memset(&ra, 0, sizeof(ra));
	ra.ask = first_node(tag);
	for (i = 0; i < k; i++) {
		const struct te_proc *p = &t[r[i].idx];

		if (te_now_ms() >= deadline) {
			te_fr_missing(&fr[i],
				      r[i].rank >= 0 ? (int)r[i].rank : -1,
				      "not looked at: the node's time for "
				      "NCCL's view ran out before this rank");
			continue;
		}
		read_env(p->pid, &env);
		if (!ra.addr[0] && env.ras[0])
			te_strlcpy(ra.addr, env.ras, sizeof(ra.addr));
		if (rank_asks(&env, p, r[i].rank, &ask[nask], &fr[i])) {
			flags[i] = 2;
			nask++;
			continue;
		}
		/* Its memory map only when the environment and the pipe show
		 * no flight recorder: has alone shows NCCL's view, and
		 * /proc/PID/maps takes the rank's mmap lock, which a rank
		 * hung in the driver may hold (this read has no deadline). A
		 * rank of NCCL without a flight recorder still says so. */
		flags[i] = (unsigned char)maps_nccl(p->pid);
	}
	/* the step's own address (its ranks' environment: the job may have
	 * set one), never another step's */
	if (ra.ask && !ra.addr[0] &&
	    te_ras_addr_pick((uint32_t)job, (uint32_t)step, 0, 0, ra.addr,
			     sizeof(ra.addr)) < 0)
		ra.ask = 0;
	n = deadline - te_now_ms();
	if (nask && n > 0) {
		te_fr_collect(ask, nask, uid, (int)n, ask_ras, &ra);
	} else {
		for (i = 0; i < nask; i++)
			te_fr_missing(ask[i].out, ask[i].rank,
				      "not asked: the node's time for NCCL's "
				      "view ran out");
		ask_ras(&ra);
	}
	/* the ranks' records within the node's share of the output (then
	 * one line for the rest): the stacks, sent after them, and all
	 * nodes' NCCL records together stay a quarter of the output's cap */
	te_hn_fr_emit(fr, flags, k, te_hn_node_share(step_nodes()), emit_rec,
		      &tag);
	if (ra.ask &&
	    (n = te_hn_ras_encode(rec, sizeof(rec), ra.outcome, ra.text)) > 0)
		send_lines(rec, (size_t)n, tag);
	fflush(stdout);
out:
	free(fr);
	free(ask);
	free(flags);
}
