/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL's view in the hang report (issue 36 item 3): the RAS client's pure
 * part (the request, a bounded reader of RAS's reply, the report's lines,
 * the per-step address) and, in core/hang/ras_client.c, the one query
 * over a loopback socket within a deadline.
 *
 * RAS's client protocol, as NCCL's source has it (NVIDIA/nccl at v2.30.7
 * and the tags named; read, not copied):
 * - Listening: every NCCL process binds NCCL_RAS_ADDR (default
 *   "localhost:28028", NCCL_RAS_CLIENT_PORT in src/ras/ras_internal.h:11)
 *   at its first communicator (src/ras/ras.cc:105, rasClientInitSocket in
 *   src/ras/client_support.cc:165-195), with SO_REUSEADDR and SO_REUSEPORT:
 *   the processes of one user share the port and the kernel hands each
 *   connection to one of them; another user's bind fails (EADDRINUSE) and
 *   NCCL only logs it (INFO) and runs without a client socket. The value
 *   is "host:port" or "[ipv6]:port" (ncclSocketGetAddrFromString,
 *   src/misc/socket.cc:234): IPv4/IPv6 only, no unix socket path (bind
 *   takes sockaddr_in/in6's size).
 * - Commands: lines ended by '\n' (a '\r' before it is dropped), any case,
 *   read in order from one buffer, so all may be sent at once
 *   (rasClientEventLoop, client_support.cc:310-450): "CLIENT PROTOCOL N"
 *   -> "SERVER PROTOCOL 2\n" (NCCL_RAS_CLIENT_PROTOCOL, ras_internal.h:12,
 *   2 since 2.24.3; the client's N is ignored); "TIMEOUT S" -> "OK\n" or
 *   "ERROR: Invalid timeout value ...\n" (S seconds for RAS's own
 *   collective legs, default 5, RAS_COLLECTIVE_LEG_TIMEOUT_SEC; 0 means
 *   none); "SET FORMAT text|json" -> "OK\n" (2.28.7 and later; earlier
 *   "ERROR: Unknown command ...\n"); "STATUS" or "VERBOSE STATUS" -> the
 *   report; "MONITOR [groups]" (2.29+, an event stream that never ends).
 * - The end: after the report RAS's client state is FINISHED and it closes
 *   the connection once its send queue is empty (client_support.cc:502-504):
 *   no terminator, EOF ends the reply. The report may take RAS's timeout
 *   twice over (leg + extra, 10 s by default) when a process is stuck.
 * - Text (every release since 2.24; client_support.cc:575-1655):
 *   "NCCL version 2.30.7 compiled with CUDA 12.9", a job summary, then
 *   "\nCommunicators..." and, once gathered, " (0.00s)\n=============" and
 *   a table "Group Comms Nodes Ranks Ranks Ranks Status Errors" (per group
 *   of alike communicators: comms in group, nodes per comm, ranks per node
 *   ("7-8" when they differ), ranks per comm, ranks in group, status
 *   NOCOMM|INIT|RUNNING|FINALIZE|ABORT, errors OK|MISMATCH|ERROR|INCOMPLETE
 *   comma-joined) or "No communicator data collected!", then "Errors" and
 *   "Warnings" sections (their headers always printed). Errors: "INCOMPLETE"
 *   ("  Missing communicator data from N job process[es]" and "  Process P
 *   on node H managing GPU[s] G" lines), "DEAD" ("  N job process[es]
 *   is/are considered dead (unreachable via the RAS network)" and Process
 *   lines), "#g-c (16-hex hash) INCOMPLETE" ("  Missing communicator data
 *   from N rank[s]", then "  Rank R -- GPU G managed by process P on node
 *   H" or "  Rank R -- [process information not found]"; 2.24/2.25 print
 *   "  The missing rank[s]: 3,5" instead), "#g-c (hash) ERROR"
 *   ("  Initialization/Asynchronous error[s] on N rank[s]", "  N ranks
 *   reported E" + Rank lines or "  Rank R reported E -- GPU ..."). Warnings:
 *   "TIMEOUT" ("  Encountered N communication timeout[s] while gathering
 *   communicator data") and "#g-c (hash) MISMATCH" ("  Communicator ranks
 *   have different status|X operation counts", "  N ranks have status S",
 *   "  N ranks have launched up to operation K", Rank lines, "  Rank R has
 *   status S -- GPU ..."). Ranks and processes are named only for a group
 *   RAS deems an outlier: 1 always; else at most 10 and a quarter of all,
 *   or with VERBOSE under half (rasCountIsOutlier, client_support.cc:2169).
 * - JSON (2.28.7+): every rank of every communicator with its status and
 *   collective counts, "missing_ranks" after them with "unresponsive" and
 *   "considered_dead" (jsonWrite*, client_support.cc:1919-2015): hundreds
 *   of bytes a rank. trainenv asks for text: every release has it, it is
 *   problem-first and small, where JSON of a large job would pass the
 *   reply's bound before its missing ranks.
 */
#ifndef TE_RAS_H
#define TE_RAS_H

#include <stddef.h>
#include <stdint.h>

#define TE_RAS_REPLY_MAX (256 * 1024) /* bytes of a reply read, at most */
#define TE_RAS_BLOCKS 32	      /* problem blocks kept */
#define TE_RAS_NAMED 16		      /* ranks/processes kept per block */
#define TE_RAS_GROUPS 16	      /* rows of the communicators' table */
#define TE_RAS_TEXT 64		      /* a node, a "what", a note (NUL incl.) */
#define TE_RAS_LINE 512		      /* a reply line read, longer cut */

/* The default port range for per-step addresses (te_ras_addr_pick): above
 * NCCL's own 28028, below Slurm's and the usual ephemeral ranges. */
#define TE_RAS_PORT_LO 28100
#define TE_RAS_PORT_HI 28355

enum te_ras_kind {
	TE_RAS_PROC_MISSING, /* Errors: INCOMPLETE, processes that sent nothing */
	TE_RAS_PROC_DEAD,    /* Errors: DEAD */
	TE_RAS_COMM_MISSING, /* #g-c (hash) INCOMPLETE: ranks missing */
	TE_RAS_COMM_ERROR,   /* #g-c (hash) ERROR: ranks that reported errors */
	TE_RAS_COMM_MISMATCH, /* Warnings: #g-c (hash) MISMATCH */
	TE_RAS_TIMEOUTS,      /* Warnings: TIMEOUT */
};

/* How the query went (te_ras_query); the formatter's first word. */
enum te_ras_outcome {
	TE_RAS_ANSWERED,     /* RAS closed after its reply: all of it */
	TE_RAS_DEADLINE,     /* some reply, then the deadline */
	TE_RAS_SILENT,	     /* connected, not a byte before the deadline */
	TE_RAS_ABSENT,	     /* nothing listens there (connection refused) */
	TE_RAS_CAPPED,	     /* more than TE_RAS_REPLY_MAX: the rest unread */
	TE_RAS_NOT_LOOPBACK, /* the address is not a loopback one: not asked
				(err EINVAL: a host name, not a number) */
	TE_RAS_FAILED,	     /* another error (err says which) */
};

/* One rank (or process) RAS names. Text is printable ASCII (others '?'). */
struct te_ras_who {
	long rank; /* its rank in the communicator; -1: a process */
	long pid;  /* -1: not known */
	char node[TE_RAS_TEXT]; /* as RAS prints it (an address), "" unknown */
	char gpu[24];		/* "5", "5 (NVML 3)", "0,1"; "" unknown */
	char what[TE_RAS_TEXT]; /* "missing", "reported unhandled cuda
				   error", "launched up to operation 6649" */
};

struct te_ras_block {
	enum te_ras_kind kind;
	char comm[16];		/* "#0-1" (group-index), "" for processes */
	char hash[24];		/* the communicator's hash as printed */
	long nranks;		/* its size (the table's ranks per comm), -1 */
	long count;		/* RAS's N (ranks, processes, timeouts), -1 */
	char note[TE_RAS_TEXT]; /* MISMATCH: "different status", ... */
	size_t nwho;
	struct te_ras_who who[TE_RAS_NAMED];
	int who_cut; /* RAS named more than TE_RAS_NAMED */
};

struct te_ras_group { /* one row of the communicators' table */
	long index, comms, nodes, ranks_per_comm, ranks_in_group;
	char status[16], errors[32];
};

struct te_ras_status {
	enum te_ras_outcome outcome; /* set by te_ras_query */
	int err;		     /* FAILED: the errno */
	int answered;		     /* "SERVER PROTOCOL N" seen */
	int protocol;		     /* its N */
	char version[24];	     /* "2.30.7", "" unknown */
	char refused[TE_RAS_TEXT];   /* RAS's first "ERROR: ..." line */
	int table;		     /* the table or "No communicator data" */
	int no_comms;		     /* "No communicator data collected!" */
	int finished;		     /* the Warnings section seen */
	int json;		     /* the reply was JSON: not read */
	int capped;		     /* parsed only TE_RAS_REPLY_MAX bytes */
	size_t ngroups;
	struct te_ras_group groups[TE_RAS_GROUPS];
	int groups_cut;
	size_t nblocks;
	struct te_ras_block blocks[TE_RAS_BLOCKS];
	int blocks_cut;
};

/* The bytes trainenv sends (a terminated text): the handshake, TIMEOUT
 * (RAS's own wait for its peers: timeout_s, at least 1, at most 3600; RAS
 * may take twice that), VERBOSE STATUS (text: every release has it). 0,
 * or -1 when out is too small. */
int te_ras_request(char *out, size_t outlen, int timeout_s);

/* Reads RAS's reply buf[0..len) (any bytes; NULs allowed; only the first
 * TE_RAS_REPLY_MAX read) into st, whose outcome and err are kept. Never
 * reads past len. */
void te_ras_parse(const char *buf, size_t len, struct te_ras_status *st);

/* The hang report's lines for st, each "NCCL RAS: ...\n" and at most
 * max_lines of them (the last says how many were left out), into out:
 * one line when all is well, when RAS did not answer (addr names where it
 * was asked) or did not finish; else a line per rank or process RAS
 * names (a count when it named none). The number of lines; out always
 * terminated (cut at a line's end when too small). */
int te_ras_format(const struct te_ras_status *st, const char *addr,
		  size_t max_lines, char *out, size_t outlen);

/* The step's own NCCL_RAS_ADDR, "127.A.B.C:PORT", for job and step and
 * ports [port_lo, port_hi] (0, 0: TE_RAS_PORT_LO..HI). Deterministic, so
 * that the node side and the hang report compute the same one:
 *   A.B.C = 2 + job % (2^24 - 3), one address of 127/8 per job (never
 *           127.0.0.0, 127.0.0.1, which everything else on the node uses,
 *           nor 127.255.255.255); Linux answers for all of 127/8 on lo.
 *   PORT  = port_lo + step % (port_hi - port_lo + 1).
 * Two steps on a node share one only when their jobs are 16,777,213
 * apart or their step ids differ by a multiple of the range (256 by
 * default). Every rank of the step binds it with SO_REUSEPORT (the same
 * user: allowed), so any of them answers. When another user's process
 * holds it (that port on that address, or the wildcard), RAS's bind fails
 * (NCCL logs it and goes on), and the query either gets "connection
 * refused" (the report says RAS did not answer at ADDR) or reaches that
 * process, which is no RAS: its reply has no "SERVER PROTOCOL" and the
 * report says so; a reply is never more than text read with bounds.
 * 0, or -1 (an empty or inverted range, a port above 65535, out too
 * small). */
int te_ras_addr_pick(uint32_t job, uint32_t step, unsigned port_lo,
		     unsigned port_hi, char *out, size_t outlen);

/* Splits "127.A.B.C:PORT", "localhost:PORT" or "[::1]:PORT" into a
 * numeric host (or "localhost") and a port; 0 when it is a loopback
 * address, -2 when the host is neither a number nor "localhost" (a name
 * is never looked up: NSS and DNS have no deadline), else -1 (not
 * loopback, no port). */
int te_ras_addr_split(const char *addr, char *host, size_t hostlen,
		      uint16_t *port);

/* Asks RAS at addr (a loopback address, te_ras_addr_split; "localhost"
 * is 127.0.0.1, then ::1, without a lookup) within
 * timeout_ms: connects, sends te_ras_request, reads until RAS closes, the
 * deadline or TE_RAS_REPLY_MAX bytes, and parses what came (st->outcome
 * says how it ended). Never waits past the deadline. 0, or -1 when out of
 * memory (st->outcome FAILED). (core/hang/ras_client.c) */
int te_ras_query(const char *addr, int timeout_ms, struct te_ras_status *st);

/* te_ras_query with a look at the connection before anything is sent:
 * peer_ok(fd, arg, why, whylen), called once a connection is made (fd
 * connected, nothing sent yet), returns 1 to ask, else 0 with why filled
 * (a terminated text for whylen bytes). Refused: the connection closed
 * unsent and no other address tried, st->outcome FAILED, st->err EPERM,
 * why (whylen bytes; NULL or 0: not kept) has peer_ok's text, and the
 * return is 1 (why is "" on every other return).
 * peer_ok NULL: te_ras_query. Else as te_ras_query: 0, or -1 when out of
 * memory. */
int te_ras_query_checked(const char *addr, int timeout_ms,
			 int (*peer_ok)(int fd, void *arg, char *why,
					size_t whylen),
			 void *arg, char *why, size_t whylen,
			 struct te_ras_status *st);

/* core/hang/ras_owner.c: in the text of /proc/net/tcp and/or
 * /proc/net/tcp6, tcp[0..len), the uid of the socket listening where a
 * connection to addr ("A.B.C.D:PORT", "localhost:PORT", "[::1]:PORT")
 * goes: its very address, else a wildcard one (0.0.0.0, then ::, which
 * take the loopback addresses too), else ::1 for localhost. 1 (uid set),
 * 0 when none listens there, -1 when addr is not such an address. */
int te_ras_listener_uid(const char *tcp, size_t len, const char *addr,
			long *uid);

struct sockaddr;

/* core/hang/ras_owner.c: in the text of /proc/net/tcp and/or
 * /proc/net/tcp6, tcp[0..len), the uid of the server's side of the
 * connection from client to server (getsockname's and getpeername's of
 * the connected socket, AF_INET or AF_INET6): the entry whose local
 * address and port are server's and whose remote ones are client's, in
 * state ESTABLISHED (01) or SYN_RECV (03, the listener's request until
 * the client's ACK reaches it); any other state (LISTEN, TIME_WAIT, ...)
 * is not it. A request, and a socket accepted but not yet taken, carry
 * the uid of the listener that took the connection; once accept(2) has
 * taken it, the accepting process's (Linux 6.18, measured): either way a
 * process of that uid holds our connection, so this says whose process
 * answers, with no window between the look and the connect. (Kernels
 * before 4.10 show 0 for a request: refused for a user's job.) An IPv4 connection
 * to an IPv6 wildcard listener is on the server's side in tcp6 with
 * ::ffff:A addresses: IPv4 and ::ffff:A are the same address here. 1
 * (uid set), 0 when no entry is found (or two with different uids: Linux
 * never shows two), -1 on a NULL argument or another family. */
int te_ras_conn_uid(const char *tcp, size_t len, const struct sockaddr *server,
		    const struct sockaddr *client, long *uid);

#endif
