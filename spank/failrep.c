#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "failrep.h"
#include "strutil.h"

#define WIRE_MAGIC "TRAINENV-FAIL1"

/* ---------------------------------------------------------------- pure */

static int node_ok(const char *s)
{
	return te_word_valid(s, 64, "-_.");
}

int te_failrep_format(char *buf, size_t len, const char *token,
		      const struct te_failrep *r)
{
	if (!node_ok(r->node))
		return -1;
	return te_snprintf(buf, len, "%s %s %u %u %s %s %d %d %lld %u\n",
			   WIRE_MAGIC, token, r->rank, r->local_rank, r->node,
			   r->signaled ? "signal" : "exit", r->value, r->core,
			   (long long)r->sec, r->usec);
}

static int next_field(const char **p, char *out, size_t outlen)
{
	size_t n = 0;

	while (**p == ' ')
		(*p)++;
	while (**p && **p != ' ' && **p != '\n') {
		if (n + 1 >= outlen)
			return -1;
		out[n++] = *(*p)++;
	}
	out[n] = '\0';
	return n ? 0 : -1;
}

static int field_u64(const char **p, uint64_t max, uint64_t *v)
{
	char f[24];

	return next_field(p, f, sizeof(f)) < 0 ? -1 : te_parse_u64(f, max, v);
}

/* Constant time: the token is the only thing that keeps other users of the
 * submit host from injecting reports into this srun. */
static int token_equal(const char *a, const char *b)
{
	unsigned char d = 0;
	size_t i;

	if (strlen(a) != TE_FAILREP_TOKEN_LEN || strlen(b) != TE_FAILREP_TOKEN_LEN)
		return 0;
	for (i = 0; i < TE_FAILREP_TOKEN_LEN; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

int te_failrep_parse(const char *line, const char *token,
		     struct te_failrep *r)
{
	char f[72];
	const char *p = line;
	uint64_t v;

	memset(r, 0, sizeof(*r));
	if (te_strnlen_cap(line, TE_FAILREP_LINE_MAX) > TE_FAILREP_LINE_MAX)
		return -1;
	if (next_field(&p, f, sizeof(f)) < 0 || strcmp(f, WIRE_MAGIC))
		return -1;
	if (next_field(&p, f, sizeof(f)) < 0 || !token_equal(f, token))
		return -1;
	if (field_u64(&p, UINT32_MAX, &v) < 0)
		return -1;
	r->rank = (uint32_t)v;
	if (field_u64(&p, UINT32_MAX, &v) < 0)
		return -1;
	r->local_rank = (uint32_t)v;
	if (next_field(&p, r->node, sizeof(r->node)) < 0 || !node_ok(r->node))
		return -1;
	if (next_field(&p, f, sizeof(f)) < 0)
		return -1;
	if (!strcmp(f, "signal"))
		r->signaled = 1;
	else if (strcmp(f, "exit"))
		return -1;
	if (field_u64(&p, r->signaled ? 128 : 255, &v) < 0)
		return -1;
	r->value = (int)v;
	if (field_u64(&p, 1, &v) < 0)
		return -1;
	r->core = (int)v;
	if (field_u64(&p, (uint64_t)INT64_MAX, &v) < 0)
		return -1;
	r->sec = (int64_t)v;
	if (field_u64(&p, 999999, &v) < 0)
		return -1;
	r->usec = (uint32_t)v;
	while (*p == ' ')
		p++;
	if (*p == '\n')
		p++;
	return *p ? -1 : 0;
}

void te_failrep_describe(const struct te_failrep *r, int first, char *buf,
			 size_t len)
{
	char when[64], how[96];
	struct tm tm;
	time_t t = (time_t)r->sec;

	if (localtime_r(&t, &tm) && strftime(when, sizeof(when),
					     "%Y-%m-%d %H:%M:%S", &tm))
		te_appendf(when, sizeof(when), ".%03u", r->usec / 1000);
	else
		te_snprintf(when, sizeof(when), "%lld", (long long)r->sec);
	if (r->signaled) {
		const char *name = sigabbrev_np(r->value);

		te_snprintf(how, sizeof(how), "was killed by signal %d%s%s%s%s",
			    r->value, name ? " (SIG" : "", name ? name : "",
			    name ? ")" : "", r->core ? ", core dumped" : "");
	} else {
		te_snprintf(how, sizeof(how), "exited with code %d", r->value);
	}
	te_snprintf(buf, len, "rank %u (node %s, local rank %u) %s at %s%s",
		    r->rank, r->node, r->local_rank, how, when,
		    first ? ": the first failure of this step" : "");
}

int te_failrep_env_parse(const char *env, uint16_t *port, char *token,
			 size_t toklen)
{
	const char *colon;
	char num[8];
	uint64_t v;
	size_t l, i;

	if (!env || !(colon = strchr(env, ':')))
		return -1;
	l = (size_t)(colon - env);
	if (l == 0 || l >= sizeof(num))
		return -1;
	memcpy(num, env, l);
	num[l] = '\0';
	if (te_parse_u64(num, 65535, &v) < 0 || v == 0)
		return -1;
	if (strlen(colon + 1) != TE_FAILREP_TOKEN_LEN ||
	    toklen <= TE_FAILREP_TOKEN_LEN)
		return -1;
	for (i = 0; i < TE_FAILREP_TOKEN_LEN; i++)
		if (!isxdigit((unsigned char)colon[1 + i]))
			return -1;
	*port = (uint16_t)v;
	te_strlcpy(token, colon + 1, toklen);
	return 0;
}

/* ---------------------------------------------------------------- srun */

#define MAX_HELD 4096
#define HOLD_MS 300

static struct {
	int lfd, wake[2];
	pthread_t thread;
	int running;
	char token[TE_FAILREP_TOKEN_LEN + 1];
	struct te_failrep held[MAX_HELD];
	int nheld, printed, dropped, first_done;
	int64_t first_at;
} fr = { .lfd = -1, .wake = { -1, -1 } };

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void print_line(const char *s)
{
	char line[TE_FAILREP_LINE_MAX + 32];
	size_t n;

	te_snprintf(line, sizeof(line), "trainenv: %s\n", s);
	n = strlen(line);
	/* one write per line: srun writes to the same stderr */
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

static void print_report(const struct te_failrep *r, int first)
{
	char line[TE_FAILREP_LINE_MAX];

	if (fr.printed >= TE_FAILREP_PRINT_MAX) {
		fr.dropped++;
		return;
	}
	te_failrep_describe(r, first, line, sizeof(line));
	print_line(line);
	fr.printed++;
}

static int by_time(const void *a, const void *b)
{
	const struct te_failrep *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	if (x->usec != y->usec)
		return x->usec < y->usec ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The first reports are held briefly and sorted by their nodes' clocks, so
 * that "first" means first to fail, not first to arrive. */
static void flush_held(void)
{
	int i;

	if (!fr.nheld)
		return;
	qsort(fr.held, (size_t)fr.nheld, sizeof(fr.held[0]), by_time);
	for (i = 0; i < fr.nheld; i++)
		print_report(&fr.held[i], !fr.first_done && i == 0);
	fr.first_done = 1;
	fr.nheld = 0;
}

static void take_connection(int fd)
{
	char line[TE_FAILREP_LINE_MAX + 1];
	size_t got = 0;
	int64_t deadline = mono_ms() + 1000;
	struct te_failrep r;

	while (got < TE_FAILREP_LINE_MAX && !memchr(line, '\n', got)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - mono_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		n = read(fd, line + got, TE_FAILREP_LINE_MAX - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	line[got] = '\0';
	if (memchr(line, '\0', got) || te_failrep_parse(line, fr.token, &r) < 0)
		return;	/* not ours, or garbage */
	if (fr.first_done) {
		print_report(&r, 0);
		return;
	}
	if (!fr.nheld)
		fr.first_at = mono_ms();
	if (fr.nheld < MAX_HELD)
		fr.held[fr.nheld++] = r;
}

static void accept_all(void)
{
	int fd;

	while ((fd = accept4(fr.lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		take_connection(fd);
}

static void *listener(void *arg)
{
	sigset_t all;

	/* srun's signal thread must receive every signal, not us */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = fr.lfd, .events = POLLIN },
			{ .fd = fr.wake[0], .events = POLLIN },
		};
		int timeout = -1;

		if (fr.nheld && !fr.first_done) {
			int64_t left = fr.first_at + HOLD_MS - mono_ms();

			if (left <= 0) {
				flush_held();
				continue;
			}
			timeout = (int)left;
		}
		if (poll(p, 2, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN)
			accept_all();
		if (p[1].revents & POLLIN)
			break;
	}
	return NULL;
}

int te_failrep_listen(char *envval, size_t envlen, char *err, size_t errlen)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	socklen_t alen;
	unsigned char rnd[TE_FAILREP_TOKEN_LEN / 2];
	uint16_t port;
	int zero = 0, i;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		te_snprintf(err, errlen, "getrandom: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < (int)sizeof(rnd); i++)
		snprintf(fr.token + 2 * i, 3, "%02x", rnd[i]);
	/* Dual-stack when possible: SLURM_SRUN_COMM_HOST may be either. */
	fr.lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fr.lfd >= 0) {
		setsockopt(fr.lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fr.lfd, (struct sockaddr *)&a6, sizeof(a6)) < 0) {
			close(fr.lfd);
			fr.lfd = -1;
		}
	}
	if (fr.lfd < 0) {
		fr.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fr.lfd < 0 ||
		    bind(fr.lfd, (struct sockaddr *)&a4, sizeof(a4)) < 0) {
			te_snprintf(err, errlen, "socket: %s", strerror(errno));
			goto fail;
		}
	}
	if (listen(fr.lfd, 512) < 0) {
		te_snprintf(err, errlen, "listen: %s", strerror(errno));
		goto fail;
	}
	alen = sizeof(a6);
	if (getsockname(fr.lfd, (struct sockaddr *)&a6, &alen) < 0) {
		te_snprintf(err, errlen, "getsockname: %s", strerror(errno));
		goto fail;
	}
	port = ntohs(a6.sin6_family == AF_INET6 ? a6.sin6_port :
			     ((struct sockaddr_in *)&a6)->sin_port);
	if (pipe2(fr.wake, O_CLOEXEC) < 0) {
		te_snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (pthread_create(&fr.thread, NULL, listener, NULL) != 0) {
		te_snprintf(err, errlen, "cannot start the report thread");
		goto fail;
	}
	fr.running = 1;
	te_snprintf(envval, envlen, "%u:%s", port, fr.token);
	return 0;
fail:
	if (fr.lfd >= 0)
		close(fr.lfd);
	fr.lfd = -1;
	for (i = 0; i < 2; i++)
		if (fr.wake[i] >= 0)
			close(fr.wake[i]);
	fr.wake[0] = fr.wake[1] = -1;
	return -1;
}

void te_failrep_finish(int grace_ms)
{
	char c = 'x';
	int64_t until = mono_ms() + grace_ms;

	if (!fr.running)
		return;
	if (write(fr.wake[1], &c, 1) < 0)
		return;
	pthread_join(fr.thread, NULL);
	fr.running = 0;
	/* Reports sent just before the step ended may still be queued. */
	do {
		struct pollfd p = { .fd = fr.lfd, .events = POLLIN };
		int64_t left = until - mono_ms();

		accept_all();
		if (left <= 0 || poll(&p, 1, (int)(left < 50 ? left : 50)) <= 0)
			break;
	} while (1);
	flush_held();
	if (fr.dropped) {
		char line[128];

		te_snprintf(line, sizeof(line), "... and %d more failed tasks",
			    fr.dropped);
		print_line(line);
	}
	close(fr.lfd);
	close(fr.wake[0]);
	close(fr.wake[1]);
	fr.lfd = fr.wake[0] = fr.wake[1] = -1;
}

/* ---------------------------------------------------------------- slurmstepd */

/* In the forked child: only async-signal-safe calls (slurmstepd has
 * threads). Exit codes: 0 sent, 1 connect failed, 2 no answer in time,
 * 3 could not become the job's user. */
static void __attribute__((noreturn))
send_as_user(const struct sockaddr_storage *sa, socklen_t salen,
	     const char *line, size_t len, int64_t deadline, uid_t uid,
	     gid_t gid)
{
	size_t off = 0;
	int fd;

	if (geteuid() == 0 && uid != 0 && uid != (uid_t)-1 &&
	    (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	     setresuid(uid, uid, uid) < 0))
		_exit(3);
	fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || (connect(fd, (const struct sockaddr *)sa, salen) < 0 &&
		       errno != EINPROGRESS))
		_exit(1);
	while (off < len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int64_t left = deadline - mono_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			_exit(2);
		if (p.revents & (POLLERR | POLLHUP))
			_exit(1);
		n = send(fd, line + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			_exit(1);
		off += (size_t)n;
	}
	_exit(0);
}

int te_failrep_send(const char *host, uint16_t port, const char *token,
		    const struct te_failrep *r, int timeout_ms, uid_t uid,
		    gid_t gid, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	struct sockaddr_storage sa;
	socklen_t salen;
	char line[TE_FAILREP_LINE_MAX], sport[8];
	int64_t deadline = mono_ms() + timeout_ms;
	int e, status = 0;
	pid_t pid;

	if (te_failrep_format(line, sizeof(line), token, r) < 0) {
		te_snprintf(err, errlen, "cannot format the report");
		return -1;
	}
	te_snprintf(sport, sizeof(sport), "%u", port);
	if ((e = getaddrinfo(host, sport, &hints, &ai)) != 0) {
		te_snprintf(err, errlen, "srun address '%.64s': %s", host,
			    gai_strerror(e));
		return -1;
	}
	if (ai->ai_addrlen > sizeof(sa)) {
		freeaddrinfo(ai);
		te_snprintf(err, errlen, "srun address too long");
		return -1;
	}
	memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
	salen = ai->ai_addrlen;
	freeaddrinfo(ai);

	/* The port comes from the job's environment: connect as the job's
	 * user, never as root. */
	pid = fork();
	if (pid < 0) {
		te_snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		send_as_user(&sa, salen, line, strlen(line), deadline, uid, gid);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			te_snprintf(err, errlen, "waitpid: %s", strerror(errno));
			return -1;
		}
		if (mono_ms() > deadline + 500) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			te_snprintf(err, errlen, "srun did not answer within "
				    "%d ms", timeout_ms);
			return -1;
		}
		usleep(2000);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	switch (WIFEXITED(status) ? WEXITSTATUS(status) : -1) {
	case 1:
		te_snprintf(err, errlen, "cannot connect to srun at %.64s:%u",
			    host, port);
		break;
	case 2:
		te_snprintf(err, errlen, "srun did not answer within %d ms",
			    timeout_ms);
		break;
	case 3:
		te_snprintf(err, errlen, "cannot switch to uid %u",
			    (unsigned)uid);
		break;
	default:
		te_snprintf(err, errlen, "the sender died");
	}
	return -1;
}
