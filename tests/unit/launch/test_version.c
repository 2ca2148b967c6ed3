/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of trainenv's versions (core/launch/version.c): the version line
 * every part prints, a helper's --protocol-version answer read from a
 * bounded buffer, the one line of a mismatch, and libtrainenv's
 * trainenv_version() (issue 26, items 2 and 3). */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Mixed versions with trainenv before the protocol check (issue 33,
 * item 2): the 0.1.0 release, main at 6d8a4cc. Its trainenv-rdzv's
 * answers and its plugin's command line are written here as that
 * release's code writes them (its helper's emit(), its plugin's
 * te_rdzv_helper_argv at 6d8a4cc). */
static const char old_refusal[] =
	"TRAINENV-RDZV 1\nERROR=trainenv-rdzv: bad argument '--protocol'\n"
	"END\n";

static void test_none_lines(void)
{
	char line[1024], want[1024];

	ok(te_versions_line(line, sizeof(line), "trainenv-rdzv", "/opt/old",
			    TE_PROTOCOL_NONE, "x", 2, "1.0.0") > 0,
	   "versions line: a helper before the protocol check");
	is_str(line,
	       "trainenv-rdzv in /opt/old speaks no protocol (trainenv 0.1.0, "
	       "before the protocol check), the plugin protocol 2 (trainenv "
	       "1.0.0): install the same trainenv on every node (plugin, "
	       "helpers and libtrainenv)",
	       "  names 0.1.0 as the helper's release, whatever it is given");
	te_versions_line(line, sizeof(line), "trainenv-rdzv", "/opt/new", 2,
			 "1.0.0", TE_PROTOCOL_NONE, NULL);
	is_str(line,
	       "trainenv-rdzv in /opt/new speaks protocol 2 (trainenv 1.0.0), "
	       "the plugin no protocol (trainenv 0.1.0, before the protocol "
	       "check): install the same trainenv on every node (plugin, "
	       "helpers and libtrainenv)",
	       "  and the other way round");
	te_versions_line(line, sizeof(line), "h", "/d", 1, "0.9.0", 2, "1.0.0");
	is_str(line,
	       "h in /d speaks protocol 1 (trainenv 0.9.0), the plugin "
	       "protocol 2 (trainenv 1.0.0): install the same trainenv on "
	       "every node (plugin, helpers and libtrainenv)",
	       "  protocol 1 against 2");
	is_int(te_versions_line(line, 20, "h", "/d", 1, "0.9.0", 2, "1.0.0"),
	       -1, "  -1 when cut");
	is_int((int)strlen(line), 19, "  cut to the buffer");

	is_int(te_protocol_refused("/opt/old/trainenv-rdzv", 0, old_refusal,
				   strlen(old_refusal), line, sizeof(line)),
	       1, "0.1.0's helper refusing --protocol (exit 0): refused");
	snprintf(want, sizeof(want),
		 "trainenv-rdzv in /opt/old speaks no protocol (trainenv "
		 "0.1.0, before the protocol check), the plugin protocol %d "
		 "(trainenv %s): install the same trainenv on every node "
		 "(plugin, helpers and libtrainenv)",
		 TE_PROTOCOL_VERSION, PACKAGE_VERSION);
	is_str(line, want, "  the line names both versions and what to do");
}

static void test_none_answers(void)
{
	const char *v010 = "TRAINENV-RDZV 1\nERROR=trainenv-rdzv: bad "
			   "argument '--protocol-version'\nEND\n";
	const char *job = "TRAINENV-RDZV 1\nERROR=trainenv-rdzv: bad argument "
			  "'--job'\nEND\n";
	char line[1024] = "untouched", ans[64];

	is_int(te_protocol_none_answer(0, old_refusal, strlen(old_refusal)), 1,
	       "0.1.0's refusal of --protocol");
	is_int(te_protocol_none_answer(0, v010, strlen(v010)), 1,
	       "0.1.0's refusal of --protocol-version");
	is_int(te_protocol_none_answer(1, old_refusal, strlen(old_refusal)), 0,
	       "  not with another exit code");
	is_int(te_protocol_none_answer(0, old_refusal, strlen(old_refusal) - 1),
	       0, "  not cut short");
	is_int(te_protocol_none_answer(0, job, strlen(job)), 0,
	       "  not another word refused (a plugin's own mistake)");
	is_int(te_protocol_refused("/x/trainenv-rdzv", 0,
				   "TRAINENV-RDZV 1\nEND\n", 20, line,
				   sizeof(line)),
	       0, "a helper's result: no refusal");
	is_str(line, "untouched", "  and no line");

	snprintf(ans, sizeof(ans), "trainenv-protocol %d 0.9.0\n",
		 TE_PROTOCOL_VERSION + 1);
	is_int(te_protocol_asked("/opt/p/trainenv-rdzv", 0, ans, strlen(ans),
				 line, sizeof(line)),
	       1, "asked again: --protocol-version names another protocol");
	like(line, "trainenv-rdzv in /opt/p speaks protocol ",
	     "  the versions line");
	is_int(te_protocol_asked("/opt/p/trainenv-rdzv", 2, ans, strlen(ans),
				 line, sizeof(line)),
	       0, "  not when it failed (exit 2)");
	is_int(te_protocol_asked("/opt/o/trainenv-rdzv", 0, v010, strlen(v010),
				 line, sizeof(line)),
	       1, "asked again: 0.1.0's helper refuses the question");
	like(line, "speaks no protocol (trainenv 0.1.0", "  named as such");
	snprintf(ans, sizeof(ans), "trainenv-protocol %d 0.9.0\n",
		 TE_PROTOCOL_VERSION);
	strcpy(line, "untouched");
	is_int(te_protocol_asked("/opt/p/trainenv-rdzv", 0, ans, strlen(ans),
				 line, sizeof(line)),
	       0, "asked again: its own protocol, no line");
	is_str(line, "untouched", "  untouched");
}

/* 0.1.0's trainenv-preflight refuses --protocol with its usage on stderr
 * and exit 2, nothing on stdout: the plugin asks it --protocol-version
 * with stderr captured and names it from that usage. */
static void test_none_preflight(void)
{
	const char *usage =
		"usage: trainenv-preflight --gpu BUSID [--test-fail TEXT]\n"
		"  BUSID: the GPU's PCI bus id, e.g. 0000:3b:00.0 (nvidia-smi "
		"--query-gpu=pci.bus_id)\n";
	char line[1024] = "untouched", want[512];

	is_int(te_protocol_none_silent(2, 0), 1,
	       "preflight: exit 2 with nothing on stdout is worth asking");
	is_int(te_protocol_none_silent(2, 10), 0, "  not with a result");
	is_int(te_protocol_none_silent(0, 0), 0, "  not exit 0");
	is_int(te_protocol_none_silent(TE_PROTOCOL_EXIT, 0), 0,
	       "  not exit 3 (a helper of a protocol answers on stdout)");
	is_int(te_protocol_none_answer(2, usage, strlen(usage)), 1,
	       "0.1.0's preflight usage, exit 2: before the protocol check");
	is_int(te_protocol_none_answer(0, usage, strlen(usage)), 0,
	       "  not with exit 0");
	is_int(te_protocol_none_answer(2, usage, strlen(usage) - 1), 0,
	       "  not cut short");
	is_int(te_protocol_asked("/opt/o/trainenv-preflight", 2, usage,
				 strlen(usage), line, sizeof(line)),
	       1, "asked: 0.1.0's preflight named");
	snprintf(want, sizeof(want),
		 "trainenv-preflight in /opt/o speaks no protocol (trainenv "
		 "0.1.0, before the protocol check), the plugin protocol %d "
		 "(trainenv %s): install the same trainenv on every node "
		 "(plugin, helpers and libtrainenv)",
		 TE_PROTOCOL_VERSION, PACKAGE_VERSION);
	is_str(line, want, "  the versions line names it and both versions");
	strcpy(line, "untouched");
	is_int(te_protocol_asked("/opt/o/trainenv-preflight", 2,
				 "usage: trainenv-preflight --other\n", 34,
				 line, sizeof(line)),
	       0, "  another usage text, exit 2: no line");
	is_str(line, "untouched", "  untouched");
}

static void test_none_caller(void)
{
	char *v010[] = { "trainenv-rdzv",
			 "--job",
			 "7",
			 "--step",
			 "0",
			 "--port-range",
			 "20000-29999",
			 "--port-start",
			 "21234",
			 "--barrier",
			 "300",
			 "--version-check",
			 "warn",
			 "--lead",
			 NULL };
	char *p1[] = { "trainenv-rdzv", "--protocol",  "1", "--job", "7",
		       "--port-range",	"20000-29999", NULL };
	char *now[] = { "trainenv-rdzv", "--protocol", "2",	 "--job", "7",
			"--step",	 "0",	       "--lead", NULL };
	char line[1024], want[PATH_MAX + 1024], exe[PATH_MAX], *slash;
	ssize_t k;

	is_int(te_protocol_none_caller(14, v010), 1,
	       "0.1.0's plugin's command line: a plugin before the check");
	is_int(te_protocol_none_caller(7, p1), 0,
	       "protocol 1's (--protocol first): not");
	is_int(te_protocol_none_caller(8, now), 0, "today's: not");
	is_int(te_protocol_none_caller(3, now + 3), 0,
	       "--job alone (no --port-range): not");
	is_int(te_protocol_none_caller(1, v010), 0, "no argument: not");

	setenv("SLURMD_NODENAME", "n7", 1);
	k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[k > 0 ? k : 0] = '\0';
	if ((slash = strrchr(exe, '/')))
		*slash = '\0';
	ok(te_protocol_none_caller_line("/usr/lib/x/trainenv-rdzv", line,
					sizeof(line)) > 0,
	   "the line today's helper says to 0.1.0's plugin");
	snprintf(want, sizeof(want),
		 "node n7: trainenv-rdzv in %s speaks protocol %d (trainenv "
		 "%s), the plugin no protocol (trainenv 0.1.0, before the "
		 "protocol check): install the same trainenv on every node "
		 "(plugin, helpers and libtrainenv)",
		 exe, TE_PROTOCOL_VERSION, PACKAGE_VERSION);
	is_str(line, want, "  names the node, its directory, both versions");
	is_int(te_protocol_none_caller_line("h", line, 30), -1,
	       "  -1 when it does not fit");
}

int main(void)
{
	test_line();
	test_refusals();
	test_answer();
	test_mismatch();
	test_args();
	test_none_lines();
	test_none_answers();
	test_none_preflight();
	test_none_caller();
	return tap_done();
}
