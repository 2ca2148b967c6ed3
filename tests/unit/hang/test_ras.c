/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NCCL RAS in the hang report (core/hang/ras.c, ras_client.c): the request,
 * the reader on replies as NCCL 2.24 to 2.30 print them (src/ras/
 * client_support.cc), hostile replies, the report's lines, the per-step
 * address, and the client against the stand-in server
 * (tests/integration/ras_standin.c) on loopback: a missing rank named,
 * silence ended by the deadline, nothing listening in one line. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../integration/ras_replies.h"
#include "hang/ras.h"
#include "tap.h"
#include "util/sysutil.h"

#ifndef TE_RAS_STANDIN
#define TE_RAS_STANDIN "tests/integration/ras_standin"
#endif

static struct te_ras_status st;
static char out[8192];

/* The client never looks a name up (NSS or DNS, no deadline): this
 * program's getaddrinfo, which the library would call instead of libc's,
 * counts and fails. */
static int gai_calls;
int getaddrinfo(const char *node, const char *service,
		const struct addrinfo *hints, struct addrinfo **res)
{
	(void)node;
	(void)service;
	(void)hints;
	*res = NULL;
	gai_calls++;
	return EAI_FAIL;
}

/* what the client reads: the handshake's answers, then the report */
#define HEAD "SERVER PROTOCOL 2\nOK\n" TE_RAS_REPLY_HEAD

static const char r_ok[] = HEAD TE_RAS_REPLY_OK;
static const char r_missing[] = HEAD TE_RAS_REPLY_MISSING;

static int parse(const char *s)
{
	memset(&st, 0, sizeof(st));
	st.outcome = TE_RAS_ANSWERED;
	te_ras_parse(s, strlen(s), &st);
	return te_ras_format(&st, "127.0.0.2:28100", 20, out, sizeof(out));
}

/* The /proc/net/tcp samples below hold addresses as a little-endian
 * machine's kernel writes them: 1, or 0 with the skip said. */
static int sample_fits(void)
{
	int le = 1;

	if (*(char *)&le)
		return 1;
	tap_skip("the sample is a little-endian machine's");
	return 0;
}

static void t_request(void)
{
	char b[96];

	is_int(te_ras_request(b, sizeof(b), 5), 0, "request fits");
	is_str(b, "CLIENT PROTOCOL 2\nTIMEOUT 5\nVERBOSE STATUS\n",
	       "request: handshake, TIMEOUT, VERBOSE STATUS");
	te_ras_request(b, sizeof(b), 0);
	like(b, "TIMEOUT 1\n", "TIMEOUT 0 (RAS: none at all) becomes 1");
	te_ras_request(b, sizeof(b), 99999);
	like(b, "TIMEOUT 3600\n", "TIMEOUT bounded at an hour");
	is_int(te_ras_request(b, 10, 5), -1, "request: too small a buffer");
}

static void t_ok(void)
{
	is_int(parse(r_ok), 1, "all well: one line");
	is_str(out,
	       "NCCL RAS (NCCL 2.30.7): 3 communicators, every rank answered, no errors\n",
	       "all well: the line");
	ok(st.answered && st.protocol == 2 && st.table && st.finished,
	   "all well: handshake, table, Warnings seen");
	is_int(st.ngroups, 2, "all well: two groups");
	is_int(st.groups[1].ranks_per_comm, 4, "group 1: 4 ranks per comm");
	is_str(st.groups[0].status, "RUNNING", "group 0 RUNNING");
}

/* A hostile reply's counts: two groups of LONG_MAX communicators are
 * summed without overflow (UBSan in t90's sanitizer build), a negative
 * count is no row of the table. */
static void t_huge_counts(void)
{
	static const char huge[] = HEAD
		"    0  9223372036854775807  1  1  1  1   RUNNING  OK\n"
		"    1  9223372036854775807  1  1  1  1   RUNNING  OK\n"
		"\nErrors\n======\n\nWarnings\n========\n\n";
	static const char negative[] = HEAD
		"    0  -5  1  1  1  1   RUNNING  OK\n"
		"\nErrors\n======\n\nWarnings\n========\n\n";

	parse(huge);
	is_int(st.ngroups, 2, "huge counts: two rows");
	like(out, "9223372036854775807 communicators, every rank answered",
	     "huge counts: the sum saturates at LONG_MAX");
	parse(negative);
	is_int(st.ngroups, 0, "a negative count: not a row of the table");
}

static void t_missing(void)
{
	int n = parse(r_missing);

	is_int(st.nblocks, 3, "missing: three blocks");
	is_int(st.blocks[1].kind, TE_RAS_COMM_MISSING, "block 1: comm missing");
	is_str(st.blocks[1].hash, "cf264af53edbe986", "its hash");
	is_str(st.blocks[1].comm, "#0-0", "its id");
	is_int(st.blocks[1].nranks, 8, "its size from the table");
	is_int(st.blocks[1].count, 1, "1 rank missing");
	is_int(st.blocks[1].who[0].rank, 4, "rank 4");
	is_int(st.blocks[1].who[0].pid, 41235, "its pid");
	is_str(st.blocks[1].who[0].node, "10.0.0.2", "its node");
	is_str(st.blocks[1].who[0].gpu, "0", "its GPU");
	is_int(n, 3, "missing: three lines");
	is_str(out,
	       "NCCL RAS: process 41235 on node 10.0.0.2 (GPU 0) sent no communicator data\n"
	       "NCCL RAS: communicator cf264af53edbe986 (8 ranks): rank 4 missing (GPU 0, process 41235 on node 10.0.0.2)\n"
	       "NCCL RAS: 2 communication timeouts while RAS gathered data (a process may be stuck)\n",
	       "missing: the lines");
}

static void t_variants(void)
{
	parse(HEAD
	      "    0         1         2       3-4        16        16   RUNNING  INCOMPLETE\n"
	      "\nErrors\n======\n\n#0-0 (cf264af53edbe986) INCOMPLETE\n"
	      "  Missing communicator data from 3 ranks\n"
	      "  The missing ranks: 3,5,9\n\nWarnings\n========\n\n");
	is_int(st.blocks[0].nwho, 3, "2.24: 'The missing ranks: 3,5,9'");
	is_int(st.blocks[0].who[2].rank, 9, "2.24: rank 9");
	like(out, "(16 ranks): rank 5 missing\n", "2.24: rank 5 missing line");

	parse(HEAD
	      "    0         1         2         4         8         8   RUNNING  INCOMPLETE,ERROR\n"
	      "\nErrors\n======\n\nDEAD\n"
	      "  1 job process is considered dead (unreachable via the RAS network)\n"
	      "  Process 77 on node 10.0.0.3 managing GPUs 0,1\n\n"
	      "#0-0 (9e17999afaa87dbb) ERROR\n  Asynchronous errors on 2 ranks\n"
	      "  2 ranks reported remote process exited or there was a network error\n"
	      "  Rank 1 -- GPU 1 managed by process 5123 on node 10.0.0.1\n"
	      "  Rank 6 -- [process information not found]\n\n"
	      "#0-0 (9e17999afaa87dbb) ERROR\n  Initialization error on 1 rank\n"
	      "  Rank 2 reported unhandled cuda error -- GPU 2 (NVML 5) managed by process 9 on node n3\n\n"
	      "Warnings\n========\n\n");
	is_int(st.blocks[0].kind, TE_RAS_PROC_DEAD, "DEAD block");
	is_int(st.blocks[0].count, 1, "1 dead process");
	is_str(st.blocks[0].who[0].gpu, "0,1", "dead process's GPUs");
	like(out,
	     "NCCL RAS: process 77 on node 10.0.0.3 (GPU 0,1) is considered dead",
	     "dead: the line");
	is_int(st.blocks[1].count, 2, "2 ranks with errors");
	like(out,
	     "rank 1 reported remote process exited or there was a network error (GPU 1, process 5123 on node 10.0.0.1)",
	     "error: rank 1 named with its error");
	like(out,
	     "rank 6 reported remote process exited or there was a network error\n",
	     "error: rank without process information");
	is_int(st.blocks[1].who[1].pid, -1, "no process information: pid -1");
	like(out,
	     "rank 2 reported unhandled cuda error (GPU 2 (NVML 5), process 9 on node n3)",
	     "error: 'Rank R reported E -- ...'");

	/* the sample of NCCL's documentation (docs/.../ras.rst) */
	parse(HEAD
	      "    0         1         4         8        32        32   RUNNING  MISMATCH\n"
	      "\nErrors\n======\n\nWarnings\n========\n\n"
	      "#0-0 (27a079b828ff1a75) MISMATCH\n"
	      "  Communicator ranks have different collective operation counts\n"
	      "  26 ranks have launched up to operation 6650\n"
	      "  6 ranks have launched up to operation 6649\n"
	      "  Rank 0 -- GPU 0 managed by process 483072 on node 172.16.64.210\n"
	      "  Rank 2 -- GPU 2 managed by process 483074 on node 172.16.64.210\n\n"
	      "  Communicator ranks have different status\n"
	      "  Rank 4 has status FINALIZE -- GPU 4 managed by process 483076 on node 172.16.64.210\n\n");
	is_int(st.nblocks, 1, "mismatch: one block over its parts");
	is_int(st.blocks[0].nwho, 3, "mismatch: three ranks named");
	is_str(st.blocks[0].who[0].what, "launched up to operation 6649",
	       "mismatch: rank 0 behind");
	is_str(st.blocks[0].who[2].what, "status FINALIZE",
	       "mismatch: 'Rank R has status S'");
	like(out,
	     "(32 ranks): rank 0 launched up to operation 6649 (GPU 0, process 483072 on node 172.16.64.210)",
	     "mismatch: the line");

	parse(HEAD
	      "    0         1         8         8        64        64   RUNNING  INCOMPLETE\n"
	      "\nErrors\n======\n\nINCOMPLETE\n"
	      "  Missing communicator data from 40 job processes\n\n"
	      "#0-0 (00000000000abcde) INCOMPLETE\n"
	      "  Missing communicator data from 40 ranks\n\nWarnings\n========\n\n");
	like(out,
	     "NCCL RAS: 40 job processes sent no communicator data (RAS did not name them)\n",
	     "unnamed processes: a count");
	like(out, "(64 ranks): 40 ranks missing (RAS did not name them)\n",
	     "unnamed ranks: a count");

	parse(HEAD
	      "No communicator data collected!\n\nErrors\n======\n\nWarnings\n========\n\n");
	is_str(out, "NCCL RAS (NCCL 2.30.7): no communicators\n",
	       "no communicators: one line");
	parse(HEAD
	      "    0         1         2         4         8         8   RUNNING  MISMATCH\n"
	      "\nErrors\n======\n\nWarnings\n========\n\n");
	like(out, "1 communicator of 8 ranks: RUNNING, MISMATCH",
	     "a bad group without details: its row");
}

static void t_partial(void)
{
	memset(&st, 0, sizeof(st));
	st.outcome = TE_RAS_DEADLINE;
	te_ras_parse(HEAD, strlen(HEAD) - 200, &st);
	te_ras_format(&st, "127.0.0.2:28100", 20, out, sizeof(out));
	is_str(out,
	       "NCCL RAS (NCCL 2.30.7): answered at 127.0.0.2:28100 but the deadline came before it had the communicators' data\n",
	       "cut before the table: one line");
	memset(&st, 0, sizeof(st));
	st.outcome = TE_RAS_DEADLINE;
	te_ras_parse(r_missing, strlen(r_missing) - 40, &st);
	te_ras_format(&st, "a", 20, out, sizeof(out));
	like(out, "rank 4 missing", "cut after the blocks: still named");
	like(out,
	     "NCCL RAS: the reply was cut (by the deadline): it may say more\n",
	     "cut: said");
	parse("SERVER PROTOCOL 2\nERROR: Invalid timeout value x\n");
	like(out,
	     "the reply ended before it had the communicators' data: ERROR: Invalid timeout value x",
	     "RAS's ERROR line shown");
	parse("{\n  \"nccl_version\": \"2.29.1\",\n");
	ok(st.json, "JSON seen");
	is_str(out,
	       "NCCL RAS: the reply at 127.0.0.2:28100 was JSON, not read\n",
	       "JSON: one line");
	parse("SSH-2.0-OpenSSH_9.6\r\n");
	is_str(out,
	       "NCCL RAS: what answered at 127.0.0.2:28100 is not NCCL RAS\n",
	       "not RAS: one line");
}

static void t_hostile(void)
{
	static char big[TE_RAS_REPLY_MAX + 4096];
	size_t i, n, bad = 0;
	char b[600];

	/* every prefix of a real reply, and every byte replaced */
	for (n = 0; n <= strlen(r_missing); n++) {
		memset(&st, 0, sizeof(st));
		te_ras_parse(r_missing, n, &st);
		te_ras_format(&st, "x", 8, out, sizeof(out));
		bad += st.nblocks > TE_RAS_BLOCKS || strlen(out) >= sizeof(out);
	}
	is_int(bad, 0, "every prefix of a reply: in bounds");
	memcpy(big, r_missing, sizeof(r_missing));
	for (i = 0; i < sizeof(r_missing) - 1; i += 3) {
		char c = big[i];

		big[i] = (char)(i % 2 ? 0 : 0xff);
		memset(&st, 0, sizeof(st));
		te_ras_parse(big, sizeof(r_missing) - 1, &st);
		bad += te_ras_format(&st, "x", 8, out, sizeof(out)) > 8;
		big[i] = c;
	}
	is_int(bad, 0, "NUL and 0xff bytes anywhere: at most 8 lines");

	parse(HEAD
	      "    0         1         2         4         8         8   RUNNING  INCOMPLETE\n"
	      "\nErrors\n======\n\n#0-0 (c\001f) INCOMPLETE\n"
	      "  Missing communicator data from 99999999999 ranks\n"
	      "  Rank 1234567890 -- GPU 0 managed by process 1 on node n\n"
	      "  Rank -3 -- GPU 0 managed by process 1 on node n\n"
	      "  Rank 7 -- GPU 0 managed by process 99999999999 on node \033[31mred\n"
	      "Warnings\n========\n\n");
	is_int(st.blocks[0].count, -1, "a count of 11 digits: unknown");
	is_int(st.blocks[0].nwho, 1,
	       "ranks of 10 digits or negative: left out");
	is_int(st.blocks[0].who[0].pid, -1, "a pid of 11 digits: unknown");
	is_str(st.blocks[0].who[0].node, "?[31mred",
	       "escape sequences cleaned");
	is_str(st.blocks[0].hash, "c?f", "hash cleaned");

	memset(b, 'A', sizeof(b) - 1);
	b[sizeof(b) - 1] = 0;
	memcpy(b, "NCCL version ", 13);
	parse(b);
	is_int(strlen(st.version), sizeof(st.version) - 1,
	       "a long version: cut");

	/* more than the cap, more blocks, more names than kept */
	memset(big, ' ', sizeof(big));
	n = (size_t)sprintf(big, "%sErrors\n", HEAD);
	for (i = 0; i < 40; i++)
		n += (size_t)sprintf(big + n, "#0-%zu (ab) INCOMPLETE\n", i);
	big[n] = ' ';
	memset(&st, 0, sizeof(st));
	te_ras_parse(big, sizeof(big), &st);
	ok(st.capped, "over 256 KiB: capped");
	ok(st.blocks_cut && st.nblocks == TE_RAS_BLOCKS,
	   "40 blocks: 32 kept, cut said");
	{
		char many[8192] = HEAD
			"    0         1         2         4        64        64   RUNNING  INCOMPLETE\n"
			"Errors\n#0-0 (ab) INCOMPLETE\n";
		for (i = 0; i < 40; i++)
			sprintf(many + strlen(many),
				"  Rank %zu -- GPU 0 managed by process %zu on node n\n",
				i, i);
		parse(many);
		ok(st.blocks[0].who_cut && st.blocks[0].nwho == TE_RAS_NAMED,
		   "40 ranks named: 16 kept, cut said");
		is_int(te_ras_format(&st, "a", 5, out, sizeof(out)), 5,
		       "at most 5 lines");
		like(out, "rank 3 missing", "4 ranks shown");
		like(out, "NCCL RAS: 13 more lines left out\n",
		     "then how many were left out");
		ok(te_ras_format(&st, "a", 50, out, 200) >= 1 &&
			   strlen(out) < 200 && out[strlen(out) - 1] == '\n',
		   "a small buffer: whole lines only");
		is_int(te_ras_format(&st, "a", 0, out, sizeof(out)), 0,
		       "0 lines asked: none");
	}
}

static void t_outcomes(void)
{
	memset(&st, 0, sizeof(st));
	st.outcome = TE_RAS_ABSENT;
	is_int(te_ras_format(&st, "127.0.0.9:28100", 8, out, sizeof(out)), 1,
	       "absent: one line");
	like(out, "NCCL RAS: no answer at 127.0.0.9:28100 (nothing listens",
	     "absent: the line");
	st.outcome = TE_RAS_SILENT;
	te_ras_format(&st, "a", 8, out, sizeof(out));
	like(out, "not a byte before the deadline", "silent: the line");
	st.outcome = TE_RAS_NOT_LOOPBACK;
	te_ras_format(&st, "10.0.0.1:28028", 8, out, sizeof(out));
	like(out, "not asked: 10.0.0.1:28028 is not a loopback address",
	     "not loopback: the line");
	st.outcome = TE_RAS_FAILED;
	st.err = EPERM;
	te_ras_format(&st, "a", 8, out, sizeof(out));
	like(out, "could not ask a: ", "failed: the line");
}

static void t_addr(void)
{
	char a[32], b[32], h[64];
	uint16_t port = 0;

	is_int(te_ras_addr_pick(0, 0, 0, 0, a, sizeof(a)), 0, "pick: job 0");
	is_str(a, "127.0.0.2:28100", "job 0 step 0: 127.0.0.2, the first port");
	te_ras_addr_pick(1234567, 3, 0, 0, a, sizeof(a));
	is_str(a, "127.18.214.137:28103", "job 1234567 step 3");
	te_ras_addr_pick(1234567, 4, 0, 0, b, sizeof(b));
	ok(strcmp(a, b) != 0, "two steps of a job: two addresses");
	te_ras_addr_pick(1234568, 3, 0, 0, b, sizeof(b));
	ok(strcmp(a, b) != 0, "two jobs' step 3: two addresses");
	te_ras_addr_pick(16777212, 0, 0, 0, a, sizeof(a));
	is_str(a, "127.255.255.254:28100", "the highest: never .255.255.255");
	te_ras_addr_pick(16777213, 256, 0, 0, a, sizeof(a));
	is_str(a, "127.0.0.2:28100", "job + 16777213 and step + 256 wrap");
	te_ras_addr_pick(7, 0xfffffffbu, 30000, 30009, a, sizeof(a));
	is_str(a, "127.0.0.9:30001", "the batch step, a range of 10");
	is_int(te_ras_addr_pick(1, 1, 30000, 29999, a, sizeof(a)), -1,
	       "pick: an inverted range");
	is_int(te_ras_addr_pick(1, 1, 1, 65536, a, sizeof(a)), -1,
	       "pick: a port above 65535");
	is_int(te_ras_addr_pick(1, 1, 0, 0, a, 8), -1, "pick: out too small");

	is_int(te_ras_addr_split("127.18.214.137:28103", h, sizeof(h), &port),
	       0, "split: 127/8");
	ok(strcmp(h, "127.18.214.137") == 0 && port == 28103,
	   "split: host and port");
	is_int(te_ras_addr_split("localhost:28028", h, sizeof(h), &port), 0,
	       "split: localhost");
	is_int(te_ras_addr_split("[::1]:28028", h, sizeof(h), &port), 0,
	       "split: [::1]");
	is_str(h, "::1", "split: the IPv6 host");
	is_int(te_ras_addr_split("10.0.0.1:28028", h, sizeof(h), &port), -1,
	       "split: another host refused");
	is_int(te_ras_addr_split("[::2]:28028", h, sizeof(h), &port), -1,
	       "split: another IPv6 host refused");
	is_int(te_ras_addr_split("node1:28028", h, sizeof(h), &port), -2,
	       "split: a name refused, as a name (-2)");
	is_int(te_ras_addr_split("[ip6-localhost]:28028", h, sizeof(h), &port),
	       -2, "split: a bracketed name, as a name (-2)");
	is_int(te_ras_addr_split("127.0.0.1", h, sizeof(h), &port), -1,
	       "split: no port");
	is_int(te_ras_addr_split("127.0.0.1:0", h, sizeof(h), &port), -1,
	       "split: port 0");
	is_int(te_ras_addr_split("127.0.0.1:65536", h, sizeof(h), &port), -1,
	       "split: port 65536");
	is_int(te_ras_addr_split("127.0.0.1:+80", h, sizeof(h), &port), -1,
	       "split: a signed port");
	is_int(te_ras_addr_split("::1:28028", h, sizeof(h), &port), -1,
	       "split: IPv6 without brackets");
	is_int(te_ras_addr_split("", h, sizeof(h), &port), -1, "split: empty");
}

/* ---- the client against the stand-in ---- */

static pid_t standin(const char *host, const char *mode, int *port)
{
	int p[2];
	pid_t pid;
	char line[64] = "";
	FILE *f;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(TE_RAS_STANDIN, "ras_standin", host, "0", mode, "20",
		      (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	if (!f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "port %d", port) != 1) {
		if (f)
			fclose(f);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	fclose(f);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Queries a stand-in of mode at host: the lines; *ms the time taken. */
static int ask(const char *host, const char *mode, int timeout_ms, int64_t *ms)
{
	char addr[96];
	int port, n;
	int64_t t0;
	pid_t pid = standin(host, mode, &port);

	if (pid < 0)
		return -1;
	snprintf(addr, sizeof(addr), "%s:%d", host, port);
	t0 = te_now_ms();
	te_ras_query(addr, timeout_ms, &st);
	*ms = te_now_ms() - t0;
	n = te_ras_format(&st, addr, 8, out, sizeof(out));
	stop(pid);
	return n;
}

/* A user's NCCL_RAS_ADDR: "localhost" without a lookup, a name not at
 * all (one line says why). */
static void t_names(void)
{
	int64_t ms, t0;
	char addr[64];
	int port, n;
	pid_t pid = standin("127.0.0.1", "missing", &port);

	if (pid < 0) {
		ok(0, "the stand-in did not start");
		return;
	}
	gai_calls = 0;
	snprintf(addr, sizeof(addr), "localhost:%d", port);
	te_ras_query(addr, 5000, &st);
	te_ras_format(&st, addr, 8, out, sizeof(out));
	stop(pid);
	ok(st.outcome == TE_RAS_ANSWERED && strstr(out, "rank 4 missing") &&
		   gai_calls == 0,
	   "localhost: 127.0.0.1 asked, no name looked up (%d lookups)",
	   gai_calls);
	t0 = te_now_ms();
	te_ras_query("ras-host.example:28028", 5000, &st);
	ms = te_now_ms() - t0;
	n = te_ras_format(&st, "ras-host.example:28028", 8, out, sizeof(out));
	ok(st.outcome == TE_RAS_NOT_LOOPBACK && gai_calls == 0 && ms < 500,
	   "a host name: not asked, not looked up, at once (%lld ms)",
	   (long long)ms);
	ok(n == 1 &&
		   strstr(out, "ras-host.example:28028 names a host, not "
			       "a numeric address") &&
		   strstr(out, "DNS has no deadline") && strlen(out) < 300,
	   "a host name: one line says why (%s)", out);
}

static void t_client(void)
{
	int64_t ms;
	char addr[64];
	int fd, n;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);

	if (access(TE_RAS_STANDIN, X_OK) != 0) {
		tap_skip("the stand-in is not built (" TE_RAS_STANDIN ")");
		return;
	}
	n = ask("127.0.0.1", "missing", 5000, &ms);
	is_int(st.outcome, TE_RAS_ANSWERED, "missing: RAS answered and closed");
	is_int(n, 3, "missing: three lines");
	like(out,
	     "NCCL RAS: communicator cf264af53edbe986 (8 ranks): rank 4 missing (GPU 0, process 41235 on node 10.0.0.2)\n",
	     "missing: rank 4 named");
	n = ask("127.0.0.1", "ok", 5000, &ms);
	ok(n == 1 && strstr(out, "every rank answered"), "ok: one line");
	ask("127.0.0.1", "old", 5000, &ms);
	like(out, "rank 4 missing", "2.24's text: rank 4 named");
	ask("127.0.0.1", "dead", 5000, &ms);
	like(out, "process 41236 on node 10.0.0.2 (GPU 1) is considered dead",
	     "dead: the process named");
	ask("127.0.0.1", "mismatch", 5000, &ms);
	like(out, "rank 4 launched up to operation 6649",
	     "mismatch: rank 4 behind");

	n = ask("127.0.0.1", "silent", 600, &ms);
	is_int(st.outcome, TE_RAS_SILENT, "silent: SILENT");
	ok(ms >= 550 && ms < 3000, "silent: ends at the deadline (%lld ms)",
	   (long long)ms);
	is_int(n, 1, "silent: one line");
	ask("127.0.0.1", "drip", 700, &ms);
	is_int(st.outcome, TE_RAS_DEADLINE, "drip: cut by the deadline");
	ok(ms >= 650 && ms < 3000, "drip: ends at the deadline (%lld ms)",
	   (long long)ms);
	like(out, "the deadline came", "drip: said");
	ask("127.0.0.1", "garbage", 5000, &ms);
	like(out, "is not NCCL RAS", "garbage: not RAS, one line");
	ask("127.0.0.1", "big", 5000, &ms);
	is_int(st.outcome, TE_RAS_CAPPED, "over 256 KiB: capped");
	ask("::1", "missing", 5000, &ms);
	ok(st.outcome != TE_RAS_ANSWERED || strstr(out, "rank 4 missing"),
	   "[::1] (where the host has IPv6): rank 4 named");

	/* a picked address: Linux answers for all of 127/8 */
	te_ras_addr_pick(1234567, 3, 0, 0, addr, sizeof(addr));
	*strchr(addr, ':') = 0;
	ask(addr, "missing", 5000, &ms);
	like(out, "rank 4 missing",
	     "a picked 127.A.B.C address binds and answers");

	/* nothing listens: a port bound then closed */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(fd, (struct sockaddr *)&sa, &sl);
	close(fd);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sa.sin_port));
	is_int(te_ras_query(addr, 2000, &st), 0, "absent: not an error");
	is_int(st.outcome, TE_RAS_ABSENT, "absent: ABSENT");
	is_int(te_ras_format(&st, addr, 8, out, sizeof(out)), 1,
	       "absent: one line");
	is_int(te_ras_query("10.1.2.3:28028", 2000, &st), 0,
	       "another host: not an error");
	is_int(st.outcome, TE_RAS_NOT_LOOPBACK, "another host: not asked");
	te_ras_format(&st, "10.1.2.3:28028", 8, out, sizeof(out));
	like(out, "is not a loopback address", "another host: said so");
	t_names();
}

/* Who listens on the step's RAS address (/proc/net/tcp, as Linux writes
 * it on a little-endian machine: the address's bytes as a native word). */
static void t_owner(void)
{
	static const char tcp[] =
		"  sl  local_address rem_address   st tx_queue rx_queue tr "
		"tm->when retrnsmt   uid  timeout inode\n"
		"   0: 0300007F:6DC4 00000000:0000 0A 00000000:00000000 "
		"00:00000000 00000000  1001        0 4242 1 0000 100 0 0 10 0\n"
		"   1: 0400007F:6DC4 0400007F:9C40 01 00000000:00000000 "
		"00:00000000 00000000     0        0 4243 1 0000 100 0 0 10 0\n"
		"   2: 0400007F:6DC4 00000000:0000 0A 00000000:00000000 "
		"00:00000000 00000000     0        0 4244 1 0000 100 0 0 10 0\n";
	long uid = -1;

	if (!sample_fits())
		return;
	ok(te_ras_listener_uid(tcp, sizeof(tcp) - 1, "127.0.0.3:28100", &uid) ==
			   1 &&
		   uid == 1001,
	   "owner: 127.0.0.3:28100 listened on by uid 1001 (%ld)", uid);
	uid = -1;
	ok(te_ras_listener_uid(tcp, sizeof(tcp) - 1, "127.0.0.4:28100", &uid) ==
			   1 &&
		   uid == 0,
	   "owner: a connected socket on the port is no listener; the "
	   "listener's uid 0 (%ld)",
	   uid);
	is_int(te_ras_listener_uid(tcp, sizeof(tcp) - 1, "127.0.0.5:28100",
				   &uid),
	       0, "owner: nobody listens on 127.0.0.5:28100");
	is_int(te_ras_listener_uid(tcp, sizeof(tcp) - 1, "host:28100", &uid),
	       -1, "owner: not a loopback address: -1");
	is_int(te_ras_listener_uid(tcp, 40, "127.0.0.3:28100", &uid), 0,
	       "owner: a cut text: nothing read past its end");
}

#define L4(a, port, uid)                                           \
	"   0: " a ":" port " 00000000:0000 0A 00000000:00000000 " \
	"00:00000000 00000000  " uid "        0 4242 1 0000 100 0 0 10 0\n"
#define L6(a, port, uid)                                                 \
	"   0: " a ":" port " 00000000000000000000000000000000:0000 0A " \
	"00000000:00000000 00:00000000 00000000  " uid                   \
	"        0 4245 1 0000 100 0 0 10 0\n"
#define ANY6 "00000000000000000000000000000000"

/* Who gets the query where no socket has the very address: a wildcard
 * (0.0.0.0, or :: which takes IPv4 too) of another user's answers it, so
 * it is the listener that counts; tcp and tcp6 together; localhost and
 * [::1] looked up too (te_ras_query dials 127.0.0.1, then ::1). */
static void t_owner_wild(void)
{
	static const char tcp[] =
		"  sl  local_address rem_address   st tx_queue rx_queue tr "
		"tm->when retrnsmt   uid  timeout inode\n" L4("00000000",
							      "6DC5", "2000")
			L4("0300007F", "6DC5",
			   "1001") "  sl  local_address "
				   "remote_address st\n" L6(ANY6, "6DC6", "3000") L6(
					   "00000000000000000000000001000000",
					   "6DC7", "1001")
					   L6("0000000000000000FFFF00000300007F",
					      "6DC8", "4000")
						   L6(ANY6, "6DC7", "3000");
	struct {
		const char *addr;
		int rc;
		long uid;
		const char *what;
	} c[] = {
		{ "127.0.0.3:28101", 1, 1001, "its very address over 0.0.0.0" },
		{ "127.0.0.9:28101", 1, 2000, "0.0.0.0 takes 127.0.0.9" },
		{ "127.0.0.9:28102", 1, 3000, ":: takes 127.0.0.9 too" },
		{ "localhost:28101", 1, 2000, "localhost: 127.0.0.1's" },
		{ "[::1]:28103", 1, 1001, "[::1]: ::1 over ::" },
		{ "localhost:28103", 1, 3000,
		  "localhost: ::, dialed as 127.0.0.1 first" },
		{ "127.0.0.3:28104", 1, 4000, "::ffff:127.0.0.3" },
		{ "127.0.0.9:28105", 0, -1, "nobody on the port" },
		{ "[::2]:28103", -1, -1, "[::2]: not loopback" },
	};
	size_t i;

	if (!sample_fits())
		return;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		long uid = -1;
		int rc = te_ras_listener_uid(tcp, sizeof(tcp) - 1, c[i].addr,
					     &uid);

		ok(rc == c[i].rc && uid == c[i].uid,
		   "owner: %s: %s (%d, uid %ld)", c[i].addr, c[i].what, rc,
		   uid);
	}
}

/* One /proc/net/tcp{,6} line: local, remote, state, uid. */
#define CL(l, r, st, uid)                               \
	"   1: " l " " r " " st                         \
	" 00000000:00000000 00:00000000 00000000  " uid \
	"        0 4300 1 0000 100 0 0 10 0\n"
#define SRV4 "0200007F:6DC4" /* 127.0.0.2:28100 */
#define CLI4 "0100007F:9C40" /* 127.0.0.1:40000 */
#define M4(a) "0000000000000000FFFF0000" a
#define LO6 "00000000000000000000000001000000"

static struct sockaddr_storage sa4(const char *a, unsigned port, int mapped)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	char m[64];

	memset(&ss, 0, sizeof(ss));
	if (mapped || strchr(a, ':')) {
		snprintf(m, sizeof(m), "%s%s", mapped ? "::ffff:" : "", a);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, m, &s6->sin6_addr);
	} else {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, a, &s4->sin_addr);
	}
	return ss;
}

/* Whose socket took a connection (te_ras_conn_uid): its server side, the
 * entry with the server's address local and the client's remote. */
static void t_conn(void)
{
	static const char tcp[] = "  sl  local_address rem_address   st\n" CL(
		CLI4, SRV4, "01", "1000") /* the client's own side */
		CL(SRV4, "00000000:0000", "0A", "1000") /* a listener */
		CL(SRV4, CLI4, "01", "1001")		/* the server's side */
		CL("0200007F:6DC5", "0100007F:9C41", "06", "0") /* TIME_WAIT */
		CL("0200007F:6DC5", "0100007F:9C41", "0A", "1000")
			CL("0200007F:6DC6", "0100007F:9C42", "03",
			   "1003") /* SYN_RECV */
		CL(M4("0300007F") ":6DC4", M4("0100007F") ":9C40", "01",
		   "1002") /* IPv4 on a :: listener */
		CL(LO6 ":6DC4", LO6 ":9C43", "01", "1004")
			CL("0200007F:6DC7", "0100007F:9C44", "01", "1005")
				CL("0200007F:6DC7", "0100007F:9C44", "01",
				   "1006") /* two answers */
		"garbage\n\x01\xff:  \n   9: 0200007F:6DC8 0100007F:9C45 01 "
		"00000000:00000000 00:00000000 00000000  -5 0 0\n"
		"   9: 0200007F:6DC9 0100007F:9C46 01 00000000:00000000 "
		"00:00000000 00000000  1007 " /* over the 256-byte line */
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
		"   9: 0200007F:6DCA 0100007F:9C47 01 00000000:00000000 "
		"00:00000000 00000000  1008 0 0"; /* no '\n' at the end */
	struct {
		const char *srv, *cli;
		unsigned sp, cp;
		int mapped, rc;
		long uid;
		const char *what;
	} c[] = {
		{ "127.0.0.2", "127.0.0.1", 28100, 40000, 0, 1, 1001,
		  "IPv4: the server's side, not the client's own" },
		{ "127.0.0.2", "127.0.0.1", 28100, 40000, 1, 1, 1001,
		  "::ffff:A sockaddrs match an IPv4 entry" },
		{ "127.0.0.3", "127.0.0.1", 28100, 40000, 0, 1, 1002,
		  "IPv4 on a :: listener: its ::ffff: entry in tcp6" },
		{ "::1", "::1", 28100, 40003, 0, 1, 1004, "::1" },
		{ "127.0.0.2", "127.0.0.1", 28101, 40001, 0, 0, -1,
		  "LISTEN and TIME_WAIT are not it" },
		{ "127.0.0.2", "127.0.0.1", 28102, 40002, 0, 1, 1003,
		  "SYN_RECV: the listener's request" },
		{ "127.0.0.2", "127.0.0.1", 28103, 40004, 0, 0, -1,
		  "two entries, two uids: no answer" },
		{ "127.0.0.2", "127.0.0.1", 28100, 40009, 0, 0, -1,
		  "another client port: not found" },
		{ "127.0.0.2", "127.0.0.1", 28104, 40005, 0, 0, -1,
		  "a negative uid: not taken" },
		{ "127.0.0.2", "127.0.0.1", 28105, 40006, 0, 0, -1,
		  "a line over the bound: not read" },
		{ "127.0.0.2", "127.0.0.1", 28106, 40007, 0, 1, 1008,
		  "the last line without its '\\n'" },
	};
	struct sockaddr_storage a, b;
	struct sockaddr un = { .sa_family = AF_UNIX };
	long uid = -1;
	size_t i;

	if (!sample_fits())
		return;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int rc;

		a = sa4(c[i].srv, c[i].sp, c[i].mapped);
		b = sa4(c[i].cli, c[i].cp, c[i].mapped);
		uid = -1;
		rc = te_ras_conn_uid(tcp, sizeof(tcp) - 1,
				     (struct sockaddr *)&a,
				     (struct sockaddr *)&b, &uid);
		ok(rc == c[i].rc && uid == c[i].uid, "conn: %s (%d, uid %ld)",
		   c[i].what, rc, uid);
	}
	a = sa4("127.0.0.2", 28100, 0);
	b = sa4("127.0.0.1", 40000, 0);
	is_int(te_ras_conn_uid(tcp, 160, (struct sockaddr *)&a,
			       (struct sockaddr *)&b, &uid),
	       0, "conn: a cut text: nothing read past its end");
	is_int(te_ras_conn_uid(tcp, sizeof(tcp) - 1, &un, (struct sockaddr *)&b,
			       &uid),
	       -1, "conn: not IPv4 or IPv6: -1");
	is_int(te_ras_conn_uid(NULL, 0, (struct sockaddr *)&a,
			       (struct sockaddr *)&b, &uid),
	       -1, "conn: no text: -1");
}

/* This host's /proc/net/tcp and tcp6 into buf (cap bytes): the length,
 * 0 when unread. */
static size_t proc_tcp(char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n = te_read_small("/proc/net/tcp", buf, cap / 2, TE_READ_WHOLE);

	if (n > 0)
		len = (size_t)n;
	n = te_read_small("/proc/net/tcp6", buf + len, cap / 2, TE_READ_WHOLE);
	return n > 0 ? len + (size_t)n : len;
}

/* A real connection, before it is accepted: its server side is this
 * process's (IPv4, and IPv4 to a dual-stack :: listener, where it is a
 * ::ffff: entry of tcp6). */
static void t_conn_live(int family)
{
	struct sockaddr_storage ls = { .ss_family = (sa_family_t)family }, srv,
				cli;
	socklen_t ll = sizeof(ls), sl = sizeof(srv), cl = sizeof(cli);
	struct sockaddr_in dst = { .sin_family = AF_INET };
	char *buf = malloc(16 << 20);
	int lfd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), fd = -1, i,
	    off = 0, rc = 0;
	long uid = -1;

	if (!buf || lfd < 0 ||
	    (family == AF_INET6 &&
	     setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off))) ||
	    bind(lfd, (struct sockaddr *)&ls, ll) || listen(lfd, 4) ||
	    getsockname(lfd, (struct sockaddr *)&ls, &ll)) {
		tap_skip("no loopback listener here (no IPv6?)");
		goto out;
	}
	dst.sin_port = ((struct sockaddr_in *)&ls)->sin_port; /* same place */
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&dst, sizeof(dst)) ||
	    getpeername(fd, (struct sockaddr *)&srv, &sl) ||
	    getsockname(fd, (struct sockaddr *)&cli, &cl)) {
		tap_skip("could not connect on loopback");
		goto out;
	}
	for (i = 0; i < 5 && rc != 1; i++) {
		if (i)
			usleep(2000);
		rc = te_ras_conn_uid(buf, proc_tcp(buf, 16 << 20),
				     (struct sockaddr *)&srv,
				     (struct sockaddr *)&cli, &uid);
	}
	ok(rc == 1 && uid == (long)getuid(),
	   "conn: a live IPv4 connection to a %s listener: its server "
	   "side is this uid's (%d, uid %ld)",
	   family == AF_INET ? "127.0.0.1" : "dual-stack ::", rc, uid);
out:
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	free(buf);
}

static int hook_calls;

static int refuse(int fd, void *arg, char *why, size_t whylen)
{
	(void)fd;
	hook_calls++;
	snprintf(why, whylen, "%s", (const char *)arg);
	return 0;
}

static int accept_all(int fd, void *arg, char *why, size_t whylen)
{
	(void)fd, (void)arg, (void)why, (void)whylen;
	hook_calls++;
	return 1;
}

/* te_ras_query_checked: a refused peer is closed unsent; an accepted one
 * asked as before. */
static void t_checked(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char addr[64], why[64] = "x", got[16];
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), fd, rc, port;
	ssize_t n = -1;
	int64_t ms;
	pid_t pid;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sl) ||
	    listen(lfd, 4) || getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
		tap_skip("no loopback listener here");
		return;
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sa.sin_port));
	hook_calls = 0;
	rc = te_ras_query_checked(addr, 2000, refuse, "is not ours", why,
				  sizeof(why), &st);
	ok(rc == 1 && hook_calls == 1 && st.outcome == TE_RAS_FAILED &&
		   st.err == EPERM && !strcmp(why, "is not ours"),
	   "checked: refused: 1, FAILED, EPERM, the hook's why (%d, %s)", rc,
	   why);
	fd = accept(lfd, NULL, NULL);
	if (fd >= 0)
		n = recv(fd, got, sizeof(got), 0);
	ok(fd >= 0 && n == 0,
	   "checked: refused: closed with nothing sent "
	   "(%zd bytes)",
	   n);
	if (fd >= 0)
		close(fd);
	close(lfd);
	if (access(TE_RAS_STANDIN, X_OK) != 0 ||
	    (pid = standin("127.0.0.1", "missing", &port)) < 0) {
		tap_skip("the stand-in is not built or did not start");
		return;
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	hook_calls = 0;
	ms = te_now_ms();
	rc = te_ras_query_checked(addr, 5000, accept_all, NULL, NULL, 0, &st);
	te_ras_format(&st, addr, 8, out, sizeof(out));
	stop(pid);
	ok(rc == 0 && hook_calls == 1 && st.outcome == TE_RAS_ANSWERED &&
		   strstr(out, "rank 4 missing"),
	   "checked: accepted: asked as before (%d, %lld ms)", rc,
	   (long long)(te_now_ms() - ms));
}

/* A hook as the hang report's: the socket that took the connection must
 * be this uid's (te_ras_conn_uid on this host's /proc/net/tcp{,6}). */
static int mine(int fd, void *arg, char *why, size_t whylen)
{
	struct sockaddr_storage srv, cli;
	socklen_t sl = sizeof(srv), cl = sizeof(cli);
	char *buf = malloc(16 << 20);
	long uid = -1;
	int rc = 0, i;

	getpeername(fd, (struct sockaddr *)&srv, &sl);
	getsockname(fd, (struct sockaddr *)&cli, &cl);
	for (i = 0; buf && i < 5 && rc != 1; i++) {
		if (i)
			usleep(2000);
		rc = te_ras_conn_uid(buf, proc_tcp(buf, 16 << 20),
				     (struct sockaddr *)&srv,
				     (struct sockaddr *)&cli, &uid);
	}
	free(buf);
	*(long *)arg = uid;
	snprintf(why, whylen, "uid %ld", uid);
	return rc == 1 && uid == (long)getuid();
}

/* Root only: another user's (nobody's) dual-stack listener takes an IPv4
 * connection: its server side (tcp6, ::ffff:) shows that uid before any
 * accept, and the query is refused with nothing sent. */
static void t_conn_other(void)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	socklen_t al = sizeof(a);
	char addr[64], why[64] = "";
	int p[2], off = 0, rc, lfd = -1;
	long uid = -1;
	pid_t pid;

	if (getuid() != 0 || pipe(p) < 0) {
		tap_skip("not root: no listener of another uid");
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* the socket's uid is its maker's: made after setuid */
		if (setgid(65534) || setuid(65534) ||
		    (lfd = socket(AF_INET6, SOCK_STREAM, 0)) < 0 ||
		    setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &off,
			       sizeof(off)) ||
		    bind(lfd, (struct sockaddr *)&a, al) || listen(lfd, 4) ||
		    getsockname(lfd, (struct sockaddr *)&a, &al))
			_exit(1);
		if (write(p[1], &a.sin6_port, 2) == 2)
			for (;;) /* until stopped */
				pause();
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &a.sin6_port, 2) != 2) {
		close(p[0]);
		if (pid > 0)
			stop(pid);
		tap_skip("no listener of uid 65534 (no IPv6?)");
		return;
	}
	close(p[0]);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(a.sin6_port));
	rc = te_ras_query_checked(addr, 2000, mine, &uid, why, sizeof(why),
				  &st);
	stop(pid);
	ok(rc == 1 && uid == 65534 && st.outcome == TE_RAS_FAILED,
	   "conn: another uid's dual-stack listener took the connection: "
	   "uid 65534 seen, not asked (%d, %s)",
	   rc, why);
}

int main(void)
{
	t_request();
	t_ok();
	t_huge_counts();
	t_missing();
	t_variants();
	t_partial();
	t_hostile();
	t_outcomes();
	t_addr();
	t_client();
	t_owner();
	t_owner_wild();
	t_conn();
	t_conn_live(AF_INET);
	t_conn_live(AF_INET6);
	t_checked();
	t_conn_other();
	return tap_done();
}
