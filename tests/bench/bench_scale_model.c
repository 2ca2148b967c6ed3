/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scale benchmark's model (tests/bench/bench_scale.sh): turns the
 * per-hop costs the simulation measured into datacenter latencies, for
 * the launch rendezvous+barrier of trainenv's helpers and for the
 * application barrier (a PMIx fence, Slurm's ring or tree algorithm).
 *
 * Reads the simulation's lines ("nodes=N ranks_per_node=P all_done_ms=X
 * rank0_cpu_s=Y rank0_rss_mb=Z max_conns=C") on stdin; the line for
 * nodes=1 is the baseline (rank 0's helper with no other node). Measures
 * here: a parent's own cost per child when it fans a small message out
 * (one send on each of 50 connected loopback TCP sockets; median of 5
 * medians). Stated constants (docs/pmix.md,
 * "Scale"), each can be changed on the command line:
 *   --latency-us L     one-way latency between two nodes (10)
 *   --dmodex-us D      a node serving one direct-modex request (1000)
 *   --stepd-us S       a slurmstepd handling one fence message (20)
 *   --tree-width W     Slurm's TreeWidth (50)
 *   --at N             also model N nodes (repeatable; 8192 always)
 * --measure prints s ("s_us=X") and exits; --s-us X takes it instead of
 * measuring (bench_scale.sh measures it before the simulation loads the
 * machine). */
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 32

struct size {
	unsigned nodes, ppn;
	double done_ms, cpu_s, rss_mb;
	int conns;
};

static double L = 10, D = 1000, S = 20; /* microseconds */
static unsigned W = 50;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* A parent's own cost per child when it fans one small message out to
 * many (Slurm's tree fence sends its children the result without waiting
 * for them, PMIXP_MSG_FAN_OUT with direct connections): one 64-byte send
 * on each of 50 connected loopback TCP sockets, the median per send of
 * 400 rounds; the receivers read between rounds, untimed. On loopback the
 * kernel also runs the receiving side of each message in the sender's
 * send, so this is more than a NIC's send costs. */
static double fanout_send_us(void)
{
	enum {
		FANOUT = 50,
		N = 400
	};
	static double per[N];
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	char buf[64] = { 0 };
	int l = socket(AF_INET, SOCK_STREAM, 0), tx[FANOUT], rx[FANOUT],
	    one = 1;
	int i, j, opened = 0;
	double rc = -1;

	if (l < 0 || bind(l, (struct sockaddr *)&a, al) < 0 ||
	    listen(l, FANOUT) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) < 0)
		goto out;
	for (; opened < FANOUT; opened++) {
		tx[opened] = socket(AF_INET, SOCK_STREAM, 0);
		rx[opened] = -1;
		if (tx[opened] < 0 ||
		    connect(tx[opened], (struct sockaddr *)&a, al) < 0 ||
		    (rx[opened] = accept(l, NULL, NULL)) < 0) {
			opened++; /* close what this one opened */
			goto out;
		}
		setsockopt(tx[opened], IPPROTO_TCP, TCP_NODELAY, &one,
			   sizeof(one));
	}
	for (i = -40; i < N; i++) { /* 40 rounds of warm-up */
		double t = now_us();

		for (j = 0; j < FANOUT; j++)
			if (send(tx[j], buf, sizeof(buf), 0) != sizeof(buf))
				goto out;
		if (i >= 0)
			per[i] = (now_us() - t) / FANOUT;
		for (j = 0; j < FANOUT; j++)
			if (recv(rx[j], buf, sizeof(buf), MSG_WAITALL) !=
			    sizeof(buf))
				goto out;
	}
	qsort(per, N, sizeof(per[0]), cmp_d);
	rc = per[N / 2];
out:
	for (j = 0; j < opened; j++) {
		if (tx[j] >= 0)
			close(tx[j]);
		if (rx[j] >= 0)
			close(rx[j]);
	}
	if (l >= 0)
		close(l);
	return rc;
}

/* The median of 5 measures (one process waking another on the same CPU
 * or on another differs by up to 5x here). */
static double median5(double (*measure)(void))
{
	double v[5];
	int i;

	for (i = 0; i < 5; i++)
		if ((v[i] = measure()) < 0)
			return -1; /* the host refused a socket */
	qsort(v, 5, sizeof(v[0]), cmp_d);
	return v[2];
}

/* Levels below the root of a tree where each node has up to w children
 * (Slurm's reverse tree fills them the same way: src/common/reverse_tree.c
 * computes the same depth): the fewest d with w + w^2 + ... + w^d >= n-1. */
static unsigned tree_depth(unsigned n, unsigned w)
{
	double reach = 0, level = 1;
	unsigned d = 0;

	if (n <= 1)
		return 0;
	if (w <= 1)
		return n - 1;
	while (reach < n - 1) {
		level *= w;
		reach += level;
		d++;
	}
	return d;
}

/* The launch of the helpers, from the moment every node's helper has put
 * its data: each node fetches its contact's address (the contact serves
 * its k requests one at a time: k*D, and a round trip), connects (1.5
 * round trips), and the registrations go up d levels and the release down
 * (each level: a parent's work on its k children, c per child, and one
 * hop each way). */
static double launch_us(unsigned k, unsigned d, double c_us)
{
	return k * D + 2 * L + 3 * L + d * (2 * L + k * c_us);
}

/* With a checkpoint directory rank 0's probe goes down the tree over the
 * connections the children made to register: each parent sends it to its
 * k children as soon as it has it (k sends of s, one hop), before its own
 * look at the directory, so the d levels add d*(k*s + L). (Before, each
 * helper fetched it from its parent by direct modex, and a parent put it
 * only once it had it: (d-1)*(k*D + 2L) more, level by level.) */
static double launch_ckpt_us(unsigned k, unsigned d, double c_us, double s_us)
{
	return launch_us(k, d, c_us) + d * (k * s_us + L);
}

/* Slurm's fences (src/plugins/mpi/pmix): the ring passes one message
 * around every node; the tree gathers up and fans out down a reverse
 * tree of width W, each parent handling up to W messages each way. */
static double ring_us(unsigned n)
{
	return (n - 1) * (L + S);
}

static double tree_us(unsigned n, double s_us)
{
	unsigned d = tree_depth(n, W);

	return d * (L + W * S) + d * (W * s_us + L + S);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: bench_scale_model [--latency-us L] [--dmodex-us D] "
		"[--stepd-us S] [--tree-width W] [--at N]... [--s-us X] < lines\n"
		"       bench_scale_model --measure\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct size sz[MAX_SIZES];
	unsigned at[MAX_SIZES], nat = 0, n = 0, i, j;
	double base = -1, s_us = -1, c_last = 0;
	int star = 1, width = 0;
	char line[512];

	for (i = 1; i < (unsigned)argc; i++) {
		const char *v = i + 1 < (unsigned)argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--measure")) {
			double m = median5(fanout_send_us);

			if (m < 0) {
				fprintf(stderr, "bench_scale_model: cannot "
						"measure over loopback TCP\n");
				return 1;
			}
			printf("s_us=%.2f\n", m);
			return 0;
		}
		if (!v)
			return usage();
		if (!strcmp(argv[i], "--s-us"))
			s_us = atof(v);
		else if (!strcmp(argv[i], "--latency-us"))
			L = atof(v);
		else if (!strcmp(argv[i], "--dmodex-us"))
			D = atof(v);
		else if (!strcmp(argv[i], "--stepd-us"))
			S = atof(v);
		else if (!strcmp(argv[i], "--tree-width") && atoi(v) > 1)
			W = (unsigned)atoi(v);
		else if (!strcmp(argv[i], "--at") && atoi(v) > 1 &&
			 nat < MAX_SIZES - 1)
			at[nat++] = (unsigned)atoi(v);
		else
			return usage();
		i++;
	}
	while (n < MAX_SIZES && fgets(line, sizeof(line), stdin)) {
		struct size *s = &sz[n];

		if (sscanf(line,
			   "nodes=%u ranks_per_node=%u all_done_ms=%lf "
			   "rank0_cpu_s=%lf rank0_rss_mb=%lf max_conns=%d",
			   &s->nodes, &s->ppn, &s->done_ms, &s->cpu_s,
			   &s->rss_mb, &s->conns) != 6)
			continue;
		if (s->nodes == 1) {
			base = s->cpu_s;
			continue;
		}
		if (s->conns != (int)s->nodes - 1)
			star = 0;
		if (s->conns > width)
			width = s->conns;
		n++;
	}
	if (base < 0 || !n) {
		fprintf(stderr,
			"bench_scale_model: need the nodes=1 baseline and "
			"at least one larger size on stdin\n");
		return 1;
	}
	if (s_us < 0 && (s_us = median5(fanout_send_us)) < 0) {
		fprintf(stderr, "bench_scale_model: cannot measure over "
				"loopback TCP\n");
		return 1;
	}
	printf("model: constants L=%g us one-way between nodes, D=%g us per "
	       "direct-modex request served, S=%g us per fence message at a "
	       "slurmstepd, TreeWidth W=%u\n",
	       L, D, S, W);
	printf("model: measured s=%.1f us per small message a parent fans out "
	       "(one send on each of 50 loopback TCP sockets); rank 0's helper "
	       "alone %.4f s CPU\n",
	       s_us, base);
	printf("model: helpers' shape: %s\n",
	       star ? "star (rank 0 held N-1 "
		      "connections at every size)"
		    : "tree");
	if (!star)
		printf("model: tree width k=%d (the most connections rank 0 held)\n",
		       width);
	for (i = 0; i < n; i++) {
		unsigned k = (unsigned)sz[i].conns;
		double c = k ? (sz[i].cpu_s - base) * 1e6 / k : 0;

		if (c < 0)
			c = 0;
		printf("model: nodes=%u c=%.1f us of rank 0's CPU per node it "
		       "serves (%d)\n",
		       sz[i].nodes, c, sz[i].conns);
		c_last = c;
	}
	/* the sizes measured, and those asked for (8192 always) */
	for (i = 0; i < n; i++)
		at[nat++] = sz[i].nodes;
	at[nat++] = 8192;
	qsort(at, nat, sizeof(at[0]), cmp_u);
	for (i = 0; i < nat; i++) {
		unsigned N = at[i], k, d;
		double c = c_last;

		for (j = 0; j < i; j++)
			if (at[j] == N)
				break;
		if (j < i)
			continue; /* said already */
		for (j = 0; j < n; j++)
			if (sz[j].nodes == N && sz[j].conns > 0)
				c = (sz[j].cpu_s - base) * 1e6 / sz[j].conns;
		if (c < 0)
			c = 0;
		k = star		      ? N - 1
		    : (unsigned)width < N - 1 ? (unsigned)width
					      : N - 1;
		d = star ? 1 : tree_depth(N, k);
		printf("model: nodes=%u launch_ms=%.1f (k=%u d=%u) "
		       "launch_with_checkpoint_dir_ms=%.1f app_barrier_ring_ms=%.1f "
		       "app_barrier_tree_ms=%.2f (depth %u)\n",
		       N, launch_us(k, d, c) / 1e3, k, d,
		       launch_ckpt_us(k, d, c, s_us) / 1e3, ring_us(N) / 1e3,
		       tree_us(N, s_us) / 1e3, tree_depth(N, W));
	}
	return 0;
}
