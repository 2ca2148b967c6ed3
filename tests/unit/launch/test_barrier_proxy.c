/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the barrier proxy's messages (core/launch/barrier_proxy.c): the
 * descriptor in TRAINENV_BARRIER_FD, the request, the answer, and hostile
 * bytes either way (issue 24, item 4). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/barrier_proxy.h"
#include "tap.h"

static void test_fd(void)
{
	char v[TE_BPROXY_FD_VALUE_MAX + 8], bad[64];
	struct stat st;
	int sv[2], fd, null;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0 ||
	    fstat(sv[0], &st) < 0) {
		tap_skip("no socket pair here");
		return;
	}
	/* a descriptor of 3 or more */
	fd = sv[0] >= 3 ? sv[0] : dup(sv[0]);
	fstat(fd, &st);
	te_bproxy_fd_value(fd, v, sizeof(v));
	snprintf(bad, sizeof(bad), "%d:%llu", fd,
		 (unsigned long long)st.st_ino);
	is_str(v, bad, "the value: FD:INODE of the socket");
	is_int(te_bproxy_fd(v), fd, "it names the descriptor back");
	snprintf(bad, sizeof(bad), "%d:%llu", fd,
		 (unsigned long long)st.st_ino + 1);
	is_int(te_bproxy_fd(bad), -1,
	       "another inode: no proxy (the descriptor is another socket now)");
	snprintf(bad, sizeof(bad), "%d", fd);
	is_int(te_bproxy_fd(bad), -1, "no inode: no proxy");
	null = open("/dev/null", O_RDONLY);
	te_bproxy_fd_value(null, v, sizeof(v));
	is_str(v, "", "a descriptor that is no socket has no value");
	fstat(null, &st);
	snprintf(bad, sizeof(bad), "%d:%llu", null,
		 (unsigned long long)st.st_ino);
	is_int(te_bproxy_fd(bad), -1,
	       "a file that is no socket, its inode right: no proxy");
	close(null);
	snprintf(bad, sizeof(bad), "%d:%llu", null,
		 (unsigned long long)st.st_ino);
	is_int(te_bproxy_fd(bad), -1, "a closed descriptor: no proxy");
	is_int(te_bproxy_fd(NULL), -1, "unset: no proxy");
	is_int(te_bproxy_fd(""), -1, "empty: no proxy");
	is_int(te_bproxy_fd("2:5"), -1, "stderr is never the proxy");
	is_int(te_bproxy_fd("65536:5"), -1, "over 65535: refused");
	is_int(te_bproxy_fd("123456:5"), -1, "six digits: refused");
	is_int(te_bproxy_fd("-5:5"), -1, "a sign: refused");
	is_int(te_bproxy_fd(" 5:5"), -1, "a space: refused");
	is_int(te_bproxy_fd("5:5x"), -1, "junk after: refused");
	is_int(te_bproxy_fd("5:0"), -1, "inode 0: refused");
	is_int(te_bproxy_fd("5:99999999999999999999999"), -1,
	       "an inode past 64 bits: refused");
	close(sv[0]);
	close(sv[1]);
	if (fd != sv[0])
		close(fd);
}

static void test_request(void)
{
	char buf[128];
	double t = -1;
	int proto = -1, n, once = -1;

	n = te_bproxy_request(buf, sizeof(buf), 1, 0, 1);
	is_str(buf, "trainenv-barrier 1 0.000 once\n",
	       "the shim's request: the step's deadline, the task's one barrier");
	is_int(n, (int)strlen(buf), "its length");
	is_int(te_bproxy_parse_request(buf, (size_t)n, &proto, &t, &once), 0,
	       "it reads back");
	is_int(proto, 1, "  protocol 1");
	ok(t == 0, "  timeout 0: the step's value");
	is_int(once, 1, "  once");

	n = te_bproxy_request(buf, sizeof(buf), 7, 42.5, 0);
	is_str(buf, "trainenv-barrier 7 42.500 each\n",
	       "the module's request: a new barrier each time");
	is_int(te_bproxy_parse_request(buf, (size_t)n, &proto, &t, &once), 0,
	       "42.5 s reads back");
	ok(proto == 7 && t > 42.49 && t < 42.51 && once == 0,
	   "  protocol 7, 42.5 s, each (got %d, %g, %d)", proto, t, once);
	n = te_bproxy_request(buf, sizeof(buf), 1, -3, 1);
	te_bproxy_parse_request(buf, (size_t)n, &proto, &t, &once);
	ok(t == 0, "a negative timeout is asked as 0");
	n = te_bproxy_request(buf, sizeof(buf), 1, 1e12, 1);
	te_bproxy_parse_request(buf, (size_t)n, &proto, &t, &once);
	ok(t == 0, "a timeout over a week is asked as 0");
	n = te_bproxy_request(buf, sizeof(buf), 1, 0.0 / 0.0, 1);
	te_bproxy_parse_request(buf, (size_t)n, &proto, &t, &once);
	ok(t == 0, "NaN is asked as 0");
	is_int(te_bproxy_request(buf, 10, 1, 0, 1), -1,
	       "a buffer too small: -1");

	/* hostile requests */
	{
		static const char *const bad[] = {
			"",
			"\n",
			"trainenv-barrier 1 5 once",
			"trainenv-barrier 1 5 once\n\n",
			"trainenv-barrier\n",
			"trainenv-barrier 1\n",
			"trainenv-barrier 1 5\n",
			"trainenv-barrier x 5 once\n",
			"trainenv-barrier 1 -5 once\n",
			"trainenv-barrier 1 5 6\n",
			"trainenv-barrier  1 5 once\n",
			"trainenv-barrier 1234567 5 once\n",
			"trainenv-barrier 1 5. once\n",
			"trainenv-barrier 1 .5 once\n",
			"trainenv-barrier 1 1e3 once\n",
			"trainenv-barrier 1 5 twice\n",
			"trainenv-barrier 1 5 once \n",
			"trainenv-barrier 1 5  once\n",
			"trainenv-barrier 1 5 ONCE\n",
			"TRAINENV-BARRIER 1 5 once\n",
			"ok\n",
		};
		size_t i;
		int refused = 0;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			refused += te_bproxy_parse_request(bad[i],
							   strlen(bad[i]),
							   &proto, &t,
							   &once) == -1;
		is_int(refused, (int)(sizeof(bad) / sizeof(bad[0])),
		       "every malformed request is refused");
	}
	{
		char nul[] = "trainenv-barrier 1\0 5 once\n";

		is_int(te_bproxy_parse_request(nul, sizeof(nul) - 1, &proto, &t,
					       &once),
		       -1, "a NUL inside: refused");
	}
	n = snprintf(buf, sizeof(buf), "trainenv-barrier 1 9999999999 once\n");
	is_int(te_bproxy_parse_request(buf, (size_t)n, &proto, &t, &once), -1,
	       "ten digits of seconds: refused");
	n = snprintf(buf, sizeof(buf), "trainenv-barrier 1 999999999 each\n");
	is_int(te_bproxy_parse_request(buf, (size_t)n, &proto, &t, &once), 0,
	       "nine digits of seconds read");
	ok(t == 0, "  over a week: 0, the step's value");
}

static void test_answer(void)
{
	char buf[TE_BPROXY_MSG_MAX + 1], err[256], big[4000];
	int n;

	n = te_bproxy_answer(buf, sizeof(buf), NULL);
	is_str(buf, "ok\n", "ok");
	is_int(te_bproxy_parse_answer(buf, (size_t)n, err, sizeof(err)), 0,
	       "ok reads back");
	is_str(err, "", "  with no text");
	n = te_bproxy_answer(buf, sizeof(buf),
			     "barrier timed out after 20 s:\n4 of 6\x1b[31m");
	is_str(buf, "error barrier timed out after 20 s: 4 of 6 [31m\n",
	       "an error: one line, control characters made spaces");
	is_int(te_bproxy_parse_answer(buf, (size_t)n, err, sizeof(err)), 1,
	       "an error reads back");
	is_str(err, "barrier timed out after 20 s: 4 of 6 [31m", "  its text");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = te_bproxy_answer(buf, sizeof(buf), big);
	ok(n > 0 && n <= TE_BPROXY_MSG_MAX && buf[n - 1] == '\n',
	   "a long error is cut to one message (%d bytes)", n);
	is_int(te_bproxy_parse_answer(buf, (size_t)n, err, sizeof(err)), 1,
	       "  and reads back");
	is_int((int)strlen(err), (int)sizeof(err) - 1,
	       "  cut again to the reader's buffer");
	is_int(te_bproxy_answer(buf, 6, "x"), -1,
	       "a buffer too small for an error: -1");
	is_int(te_bproxy_answer(buf, 3, NULL), -1,
	       "a buffer too small for ok: -1");

	is_int(te_bproxy_parse_answer("ok", 2, err, sizeof(err)), -1,
	       "no newline: unreadable");
	like(err, "unreadable answer", "  said");
	is_int(te_bproxy_parse_answer("error \n", 7, err, sizeof(err)), -1,
	       "an error without text: unreadable");
	is_int(te_bproxy_parse_answer("fine\n", 5, err, sizeof(err)), -1,
	       "another word: unreadable");
	is_int(te_bproxy_parse_answer("ok\nok\n", 6, err, sizeof(err)), -1,
	       "two lines: unreadable");
	is_int(te_bproxy_parse_answer("", 0, err, sizeof(err)), -1,
	       "nothing: unreadable");
	{
		char nul[] = "error a\0b\n";

		is_int(te_bproxy_parse_answer(nul, sizeof(nul) - 1, err,
					      sizeof(err)),
		       -1, "a NUL inside: unreadable");
	}
	is_int(te_bproxy_parse_answer("error \x07 bell\n", 13, err,
				      sizeof(err)),
	       1, "a control character from the proxy's side");
	is_str(err, "  bell", "  is made a space on reading too");
	n = (int)sizeof(big) - 1;
	big[n - 1] = '\n';
	is_int(te_bproxy_parse_answer(big, (size_t)n, err, sizeof(err)), -1,
	       "an answer longer than a message: unreadable");
}

/* Random bytes never crash either parser, and what they accept is
 * well-formed. */
static void test_random(void)
{
	char buf[96], err[64];
	unsigned seed = 24;
	int i, bad = 0;

	for (i = 0; i < 200000; i++) {
		size_t n = (size_t)(rand_r(&seed) % sizeof(buf)), k;
		double t;
		int proto, r, once;

		for (k = 0; k < n; k++) {
			int c = rand_r(&seed) % 6;

			buf[k] = c == 0	  ? '\n'
				 : c == 1 ? ' '
				 : c == 2 ? (char)('0' + rand_r(&seed) % 10)
				 : c == 3 ? '.'
					  : (char)(rand_r(&seed) % 256);
		}
		if (n > 17 && rand_r(&seed) % 2)
			memcpy(buf, "trainenv-barrier ", 17);
		r = te_bproxy_parse_request(buf, n, &proto, &t, &once);
		if (r == 0 && (proto < 0 || !(t >= 0 && t <= 604800) ||
			       (once != 0 && once != 1)))
			bad++;
		r = te_bproxy_parse_answer(buf, n, err, sizeof(err));
		if (r == 1 && strpbrk(err, "\n\r\t"))
			bad++;
	}
	is_int(bad, 0,
	       "200000 random messages: no crash, nothing ill-formed accepted");
}

int main(void)
{
	test_fd();
	test_request();
	test_answer();
	test_random();
	return tap_done();
}
