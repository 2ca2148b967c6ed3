/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of trainenv's versions (core/launch/version.c): the version line
 * every part prints, a helper's --protocol-version answer read from a
 * bounded buffer, the one line of a mismatch, and libtrainenv's
 * trainenv_version() (issue 26, items 2 and 3). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "trainenv/trainenv.h"
#include "launch/version.h"

static void test_line(void)
{
	char buf[128], want[128];

	snprintf(want, sizeof(want), "trainenv %s (protocol %d)",
		 PACKAGE_VERSION, TE_PROTOCOL_VERSION);
	is_int(te_version_line(buf, sizeof(buf)), (int)strlen(want),
	       "the version line's length");
	is_str(buf, want,
	       "the version line names the configured version and protocol");
	is_int(te_version_line(buf, 10), -1,
	       "a version line that does not fit: -1");
	is_str(trainenv_version(), PACKAGE_VERSION,
	       "libtrainenv's trainenv_version() is the configured version");
	ok(TE_PROTOCOL_VERSION >= 1,
	   "the protocol version is a positive integer");
}

static void test_answer(void)
{
	char buf[TE_PROTOCOL_ANSWER_MAX + 8], pkg[40], want[64];
	int proto = -1, n;

	n = te_protocol_answer_format(buf, sizeof(buf));
	snprintf(want, sizeof(want), "trainenv-protocol %d %s\n",
		 TE_PROTOCOL_VERSION, PACKAGE_VERSION);
	is_str(buf, want,
	       "a helper's answer: protocol and version on one line");
	is_int(te_protocol_answer_parse(buf, (size_t)n, &proto, pkg,
					sizeof(pkg)),
	       0, "the answer reads back");
	is_int(proto, TE_PROTOCOL_VERSION, "  its protocol");
	is_str(pkg, PACKAGE_VERSION, "  its package version");

#define P(s) te_protocol_answer_parse(s, strlen(s), &proto, pkg, sizeof(pkg))
	is_int(P("trainenv-protocol 7 1.0.0-3-gabcdef12-dirty"), 0,
	       "an answer without its newline (the output's end)");
	is_int(proto, 7, "  protocol 7");
	is_str(pkg, "1.0.0-3-gabcdef12-dirty", "  a git version");
	is_int(P(""), -1, "nothing: refused");
	is_int(P("usage: trainenv-rdzv ...\n"), -1,
	       "an older helper's usage text: refused");
	is_int(P("trainenv-protocol 0 0.9.0\n"), -1, "protocol 0: refused");
	is_int(P("trainenv-protocol -1 0.9.0\n"), -1,
	       "a negative protocol: refused");
	is_int(P("trainenv-protocol 1x 0.9.0\n"), -1,
	       "a protocol that is not a number: refused");
	is_int(P("trainenv-protocol 1 0.9.0\nmore\n"), -1,
	       "a second line: refused");
	is_int(P("trainenv-protocol 1 0.9 0\n"), -1,
	       "a version with a blank: refused");
	is_int(P("trainenv-protocol 1 0.9;0\n"), -1,
	       "a version with ';': refused");
	is_int(P("trainenv-protocol 1 \n"), -1, "no version: refused");
	is_int(P("trainenv-protocol 1 0123456789012345678901234567890123\n"),
	       -1, "a version over 31 characters: refused");
	is_int(P("trainenv-protocol 99999999999 0.9.0\n"), -1,
	       "a protocol out of range: refused");
	is_int(te_protocol_answer_parse("trainenv-protocol 1 0.9.0\0x", 27,
					&proto, pkg, sizeof(pkg)),
	       -1, "a NUL byte: refused");
	memset(buf, 'a', sizeof(buf));
	is_int(te_protocol_answer_parse(buf, TE_PROTOCOL_ANSWER_MAX + 1, &proto,
					pkg, sizeof(pkg)),
	       -1, "an answer over TE_PROTOCOL_ANSWER_MAX bytes: refused");
	is_int(te_protocol_answer_parse("trainenv-protocol 1 0.9.0", 25, &proto,
					pkg, 3),
	       -1, "a version longer than the caller's buffer: refused");
#undef P
}

static void test_mismatch(void)
{
	char buf[512] = "untouched", want[512];

	is_int(te_protocol_mismatch_line(
		       "trainenv-rdzv", "/usr/libexec/trainenv",
		       TE_PROTOCOL_VERSION, "0.8.0", buf, sizeof(buf)),
	       0, "the same protocol, another package version: no mismatch");
	is_str(buf, "untouched", "  and no line");
	is_int(te_protocol_mismatch_line("trainenv-rdzv", "/opt/te2",
					 TE_PROTOCOL_VERSION + 1, "1.0.0", buf,
					 sizeof(buf)),
	       1, "another protocol: a mismatch");
	snprintf(
		want, sizeof(want),
		"trainenv-rdzv in /opt/te2 speaks protocol %d "
		"(trainenv 1.0.0), the plugin protocol %d (trainenv %s): install "
		"the same trainenv on every node (plugin, helpers and libtrainenv)",
		TE_PROTOCOL_VERSION + 1, TE_PROTOCOL_VERSION, PACKAGE_VERSION);
	is_str(buf, want, "  one line naming both versions and what to do");
	te_protocol_mismatch_line("x", "/d", TE_PROTOCOL_VERSION + 1, "1", buf,
				  16);
	is_int((int)strlen(buf), 15, "  cut to the caller's buffer");
}

static void test_args(void)
{
	char *a1[] = { "h", "--protocol", "1", "--job", "7", NULL };
	char *a2[] = { "h", "--job", "7", NULL };
	char *a3[] = { "h", "--protocol", "999999", "--job", "7", NULL };
	char own[16], **av;
	int argc;

	snprintf(own, sizeof(own), "%d", TE_PROTOCOL_VERSION);
	a1[2] = own;
	av = a1;
	argc = 5;
	is_int(te_protocol_args(&argc, &av), -1, "its own protocol: go on");
	ok(argc == 3 && !strcmp(av[0], "h") && !strcmp(av[1], "--job") &&
		   !strcmp(av[2], "7") && av[3] == NULL,
	   "  --protocol N taken off, argv[0] kept");
	av = a2;
	argc = 3;
	ok(te_protocol_args(&argc, &av) == -1 && argc == 3 && av == a2,
	   "no --protocol (an older plugin): unchanged");
	av = a3;
	argc = 5;
	fflush(stdout);
	printf("# "); /* the answer goes to stdout: a TAP comment here */
	is_int(te_protocol_args(&argc, &av), TE_PROTOCOL_EXIT,
	       "another protocol: answer and exit %d", TE_PROTOCOL_EXIT);
}

/* The helpers started beside the plugin (issue 26, item 3): a refusal
 * read from a captured answer, the line one told --protocol-say writes,
 * libtrainenv's comparison with TRAINENV_PROTOCOL. */
static void test_refusals(void)
{
	char line[1024] = "untouched", want[1024], ans[64];

	snprintf(ans, sizeof(ans), "trainenv-protocol %d 1.0.0\n",
		 TE_PROTOCOL_VERSION + 1);
	is_int(te_protocol_refused("/opt/te2/trainenv-preflight",
				   TE_PROTOCOL_EXIT, ans, strlen(ans), line,
				   sizeof(line)),
	       1,
	       "a check that answered another protocol with exit 3: refused");
	snprintf(want, sizeof(want),
		 "trainenv-preflight in /opt/te2 speaks "
		 "protocol %d (trainenv 1.0.0), the plugin protocol %d "
		 "(trainenv %s): install the same trainenv on every node "
		 "(plugin, helpers and libtrainenv)",
		 TE_PROTOCOL_VERSION + 1, TE_PROTOCOL_VERSION, PACKAGE_VERSION);
	is_str(line, want, "  the line names it, its directory, both versions");
	is_int(te_protocol_refused("/trainenv-rdzv", TE_PROTOCOL_EXIT, ans,
				   strlen(ans), line, sizeof(line)),
	       1, "a helper in /");
	like(line, "trainenv-rdzv in / speaks", "  its directory is /");
	strcpy(line, "untouched");
	is_int(te_protocol_refused("/opt/te2/trainenv-preflight", 1, ans,
				   strlen(ans), line, sizeof(line)),
	       0, "the same text with exit 1: no refusal");
	is_int(te_protocol_refused("/opt/te2/trainenv-preflight",
				   TE_PROTOCOL_EXIT, "gpu ok\n", 7, line,
				   sizeof(line)),
	       0,
	       "exit 3 without an answer: no refusal (the caller's own error)");
	snprintf(ans, sizeof(ans), "trainenv-protocol %d 0.8.0\n",
		 TE_PROTOCOL_VERSION);
	is_int(te_protocol_refused("/x/h", TE_PROTOCOL_EXIT, ans, strlen(ans),
				   line, sizeof(line)),
	       0, "an answer of this protocol: no refusal");
	is_str(line, "untouched", "  and no line");

	ok(te_protocol_refusal_line("trainenv-stacks", "/opt/te2", "n2", "7",
				    line, sizeof(line)) > 0,
	   "the line a helper told --protocol-say writes");
	snprintf(want, sizeof(want),
		 "node n2: trainenv-stacks in /opt/te2 "
		 "speaks protocol %d (trainenv %s), the plugin protocol 7: "
		 "install the same trainenv on every node (plugin, helpers and "
		 "libtrainenv)",
		 TE_PROTOCOL_VERSION, PACKAGE_VERSION);
	is_str(line, want, "  names the node, the helper, both protocols");
	is_int(te_protocol_refusal_line("h", "/d", "n", "7", line, 20), -1,
	       "  -1 when it does not fit");

	snprintf(ans, sizeof(ans), "%d", TE_PROTOCOL_VERSION);
	strcpy(line, "untouched");
	is_int(te_protocol_env_check(NULL, line, sizeof(line)), 0,
	       "TRAINENV_PROTOCOL unset (no plugin): nothing said");
	is_int(te_protocol_env_check(ans, line, sizeof(line)), 0,
	       "the same protocol: nothing said");
	is_str(line, "untouched", "  no line");
	is_int(te_protocol_env_check("999", line, sizeof(line)), 1,
	       "another protocol: a warning");
	snprintf(
		want, sizeof(want),
		"libtrainenv speaks protocol %d (trainenv "
		"%s), the plugin that started this task protocol 999 "
		"(TRAINENV_PROTOCOL): install the same trainenv on every node "
		"(plugin, helpers and libtrainenv); trainenv's barrier may fail",
		TE_PROTOCOL_VERSION, PACKAGE_VERSION);
	is_str(line, want, "  one line naming both");
	static const char *const odd[] = { "",	       "x",  "1 2",
					   "12345678", "-1", "1\n" };
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		te_protocol_env_check(odd[i], line, sizeof(line));
		like(line, "protocol unreadable (TRAINENV_PROTOCOL)",
		     "  '%s' is shown as unreadable", odd[i]);
	}
}

int main(void)
{
	test_line();
	test_refusals();
	test_answer();
	test_mismatch();
	test_args();
	return tap_done();
}
