/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier proxy's messages: how a rank inside a container asks the
 * job-wide barrier of a helper outside it, over a socket it inherited.
 *
 * In a container (pyxis/enroot) neither libtrainenv nor libpmix is in
 * the image, and the step's PMIx directory is a path of the node. So the
 * plugin, before the container is entered, starts one helper per task on
 * the node (trainenv-container barrier-proxy) joined to the task by a
 * socket pair; the task's end stays open across the container's entry
 * and the program's exec, its number in TRAINENV_BARRIER_FD. The NCCL
 * shim and the Python module send one request and read one answer; the
 * helper runs the barrier as the task's rank, with the node's libpmix.
 *
 *   request: "trainenv-barrier PROTOCOL TIMEOUT MODE\n"  (TIMEOUT in
 *            seconds, 0: the step's --train-barrier value; MODE "once":
 *            the barrier before the first communicator, run once for the
 *            task and its answer kept for every later "once" (the
 *            program's children ask again), or "each": a new barrier,
 *            as each trainenv.barrier() call is)
 *   answer:  "ok\n", or "error TEXT\n" (TEXT one line, no control
 *            characters)
 *
 * One message per datagram (SOCK_SEQPACKET). Every process of the task
 * shares the one socket, so a request carries its own reply channel (one
 * end of a fresh socket pair, SCM_RIGHTS) and the answer goes there only:
 * an answer on the shared socket could be read by another process waiting
 * for its own (trainenv.barrier() returning on another's "once" answer).
 * A request without one (an older client) is answered on the shared
 * socket. */
#ifndef TE_BARRIER_PROXY_H
#define TE_BARRIER_PROXY_H

#include <stddef.h>
#include <sys/types.h>

#define TE_BPROXY_FD_ENV "TRAINENV_BARRIER_FD"
/* the longest message either way, its newline included */
#define TE_BPROXY_MSG_MAX 1400

/* TRAINENV_BARRIER_FD is "FD:INODE": the descriptor's number and its
 * socket's inode, so that a process that inherited the variable but not
 * the descriptor (closed, or its number since reused for another file)
 * never writes a request into something else. te_bproxy_fd: the
 * descriptor val names, FD a decimal number 3..65535 and INODE one of
 * 1..20 digits (no sign, no spaces), when fd is open as a socket of that
 * inode (fstat), else -1 (unset, empty, junk, another file: no proxy).
 * te_bproxy_fd_value: the variable's value for fd ("" when fd is no
 * socket). */
#define TE_BPROXY_FD_VALUE_MAX 32
int te_bproxy_fd(const char *val);
void te_bproxy_fd_value(int fd, char *buf, size_t len);

/* The request for timeout_s (0: the step's value; negative, NaN or over
 * a week: 0), once (1) or each (0). Its length, or -1 when buf is too
 * small. */
int te_bproxy_request(char *buf, size_t len, int protocol, double timeout_s,
		      int once);

/* buf[0..n) as a request: 0 with *protocol, *timeout_s (0 when it was
 * not a number in 0..TE_WEEK_S, the barrier row's bound) and *once, -1
 * when it is no request. */
int te_bproxy_parse_request(const char *buf, size_t n, int *protocol,
			    double *timeout_s, int *once);

/* The answer: "ok" when err is NULL, else "error " and err with every
 * control character made a space, cut to fit. Its length, or -1 when buf
 * cannot hold even "error \n". */
int te_bproxy_answer(char *buf, size_t len, const char *err);

/* buf[0..n) as an answer: 0 for ok, 1 for an error (its text in err),
 * -1 when it is neither (err says so). */
int te_bproxy_parse_answer(const char *buf, size_t n, char *err, size_t errlen);

/* The asking side: sends the request msg[0..n) on the shared socket fd
 * with a fresh reply channel; the descriptor to read the answer from (the
 * caller closes it), or -1 (errno set). */
int te_bproxy_ask(int fd, const char *msg, size_t n);

/* The proxy's side: one datagram of fd into buf (at most len bytes), the
 * asker's reply channel in *reply (-1 when it sent none; any other
 * descriptor that came with it is closed). Its length (0: an empty
 * datagram, or the end), or -1 (errno set). */
ssize_t te_bproxy_recv_request(int fd, char *buf, size_t len, int *reply);

#endif
