/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv's versions: the version line, a helper's --protocol-version
 * answer and the one line of a mismatch (core/launch/version.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch/version.h"
#include "launch/rdzv_core.h"
#include "util/strutil.h"

int te_protocol_version(void)
{
	return TE_PROTOCOL_VERSION;
}

int te_version_line(char *buf, size_t len)
{
	int n = snprintf(buf, len, "trainenv %s (protocol %d)", PACKAGE_VERSION,
			 TE_PROTOCOL_VERSION);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

int te_protocol_answer_format(char *buf, size_t len)
{
	int n = snprintf(buf, len, "trainenv-protocol %d %s\n",
			 TE_PROTOCOL_VERSION, PACKAGE_VERSION);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

int te_protocol_answer_parse(const char *buf, size_t n, int *proto, char *pkg,
			     size_t pkglen)
{
	char line[TE_PROTOCOL_ANSWER_MAX + 1], word[40], *end;
	const char *p;
	long v;
	size_t k;

	if (n == 0 || n > TE_PROTOCOL_ANSWER_MAX || memchr(buf, '\0', n))
		return -1;
	memcpy(line, buf, n);
	line[n] = '\0';
	/* one line, ended by its newline or by the end of the output */
	if ((end = strchr(line, '\n'))) {
		if (end[1] != '\0')
			return -1;
		*end = '\0';
	}
	if (strncmp(line, "trainenv-protocol ", 18) != 0)
		return -1;
	p = line + 18;
	if (*p < '1' || *p > '9')
		return -1;
	v = strtol(p, &end, 10);
	if (*end != ' ' || v <= 0 || v > 1000000)
		return -1;
	p = end + 1;
	k = strlen(p);
	if (k >= sizeof(word) || k >= pkglen)
		return -1;
	memcpy(word, p, k + 1);
	if (!te_version_word_valid(word))
		return -1;
	*proto = (int)v;
	memcpy(pkg, word, k + 1);
	return 0;
}

int te_protocol_refusal_line(const char *name, const char *dir,
			     const char *node, const char *caller, char *buf,
			     size_t len)
{
	int n = snprintf(
		buf, len,
		"node %s: %s in %s speaks protocol %d "
		"(trainenv %s), the plugin protocol %s: " TE_PROTOCOL_ADVICE,
		node, name, dir, TE_PROTOCOL_VERSION, PACKAGE_VERSION, caller);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* Where this helper runs, for its lines: its name (argv0's last
 * component), its own directory (/proc/self/exe's, else argv0's) and the
 * node (SLURMD_NODENAME, else the host name). */
struct helper_place {
	char dir[512], node[TE_HOST_MAX];
	const char *name;
};

static void helper_place(const char *argv0, struct helper_place *w)
{
	const char *node = getenv("SLURMD_NODENAME"), *slash;
	ssize_t k = readlink("/proc/self/exe", w->dir, sizeof(w->dir) - 1);

	w->dir[k > 0 ? k : 0] = '\0';
	if (k <= 0)
		te_strlcpy(w->dir, argv0, sizeof(w->dir));
	w->name = (slash = strrchr(argv0, '/')) ? slash + 1 : argv0;
	if ((slash = strrchr(w->dir, '/')))
		*(char *)(slash == w->dir ? slash + 1 : slash) = '\0';
	else
		te_strlcpy(w->dir, ".", sizeof(w->dir));
	if (node && te_host_valid(node)) {
		te_strlcpy(w->node, node, sizeof(w->node));
	} else {
		if (gethostname(w->node, sizeof(w->node)) < 0)
			te_strlcpy(w->node, "?", sizeof(w->node));
		w->node[sizeof(w->node) - 1] = '\0';
	}
}

/* What a helper told --protocol-say says on its stderr. */
static void say_refusal(const char *argv0, const char *caller)
{
	struct helper_place w;
	char line[1024];

	helper_place(argv0, &w);
	if (te_protocol_refusal_line(w.name, w.dir, w.node, caller, line,
				     sizeof(line)) > 0)
		fprintf(stderr, "trainenv: error: %s\n", line);
	fflush(stderr);
}

int te_protocol_none_caller_line(const char *argv0, char *buf, size_t len)
{
	struct helper_place w;
	int n;

	helper_place(argv0, &w);
	n = snprintf(buf, len, "node %s: ", w.node);
	if (n < 0 || (size_t)n >= len)
		return -1;
	if (te_versions_line(buf + n, len - (size_t)n, w.name, w.dir,
			     TE_PROTOCOL_VERSION, PACKAGE_VERSION,
			     TE_PROTOCOL_NONE, TE_PROTOCOL_NONE_RELEASE) < 0)
		return -1;
	return (int)strlen(buf);
}

int te_protocol_args(int *argc, char ***argv)
{
	char **a = *argv, buf[TE_PROTOCOL_ANSWER_MAX];
	char want[16];
	int say;

	if (*argc == 2 && !strcmp(a[1], "--protocol-version")) {
		te_protocol_answer_format(buf, sizeof(buf));
		fputs(buf, stdout);
		fflush(stdout);
		return 0;
	}
	if (*argc < 3 || (strcmp(a[1], "--protocol") != 0 &&
			  strcmp(a[1], "--protocol-say") != 0))
		return -1;
	say = a[1][10] == '-';
	snprintf(want, sizeof(want), "%d", TE_PROTOCOL_VERSION);
	if (strcmp(a[2], want) != 0 && say) {
		say_refusal(a[0], te_word_valid(a[2], 12, "") ? a[2] : "?");
		return TE_PROTOCOL_EXIT;
	}
	if (strcmp(a[2], want) != 0) {
		te_protocol_answer_format(buf, sizeof(buf));
		fputs(buf, stdout);
		fflush(stdout);
		return TE_PROTOCOL_EXIT;
	}
	a[2] = a[0];
	*argv = a + 2;
	*argc -= 2;
	return -1;
}

/* "protocol 2 (trainenv 1.0.0)", or what trainenv before the protocol
 * check speaks. */
static void side_words(char *buf, size_t len, int proto, const char *pkg)
{
	if (proto == TE_PROTOCOL_NONE)
		snprintf(buf, len,
			 "no protocol (trainenv " TE_PROTOCOL_NONE_RELEASE
			 ", before the protocol check)");
	else
		snprintf(buf, len, "protocol %d (trainenv %s)", proto, pkg);
}

int te_versions_line(char *buf, size_t len, const char *what, const char *dir,
		     int hproto, const char *hpkg, int pproto, const char *ppkg)
{
	char helper[128], plugin[128];
	int n;

	side_words(helper, sizeof(helper), hproto, hpkg);
	side_words(plugin, sizeof(plugin), pproto, ppkg);
	n = snprintf(buf, len,
		     "%s in %s speaks %s, the plugin %s: " TE_PROTOCOL_ADVICE,
		     what, dir, helper, plugin);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int te_protocol_mismatch_line(const char *what, const char *dir, int proto,
			      const char *pkg, char *buf, size_t len)
{
	if (proto == TE_PROTOCOL_VERSION)
		return 0;
	te_versions_line(buf, len, what, dir, proto, pkg, TE_PROTOCOL_VERSION,
			 PACKAGE_VERSION);
	return 1;
}

/* What the helpers of 0.1.0 answer to a first word they do not know.
 * trainenv-rdzv: its result's wire form (core/launch/rdzv_proto.h, the
 * same in 0.1.0) with the argument parser's error, exit 0.
 * trainenv-preflight: its usage on stderr, exit 2 (what asking it
 * --protocol-version with its stderr captured reads). Fixed: that release
 * does not change. */
static const struct {
	int code;
	const char *text;
} none_answers[] = {
	{ 0, "TRAINENV-RDZV 1\nERROR=trainenv-rdzv: bad argument "
	     "'--protocol'\nEND\n" },
	{ 0, "TRAINENV-RDZV 1\nERROR=trainenv-rdzv: bad argument "
	     "'--protocol-version'\nEND\n" },
	{ TE_PROTOCOL_NONE_USAGE_EXIT,
	  "usage: trainenv-preflight --gpu BUSID [--test-fail TEXT]\n"
	  "  BUSID: the GPU's PCI bus id, e.g. 0000:3b:00.0 (nvidia-smi "
	  "--query-gpu=pci.bus_id)\n" },
};

int te_protocol_none_answer(int code, const char *out, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(none_answers) / sizeof(none_answers[0]); i++)
		if (code == none_answers[i].code &&
		    n == strlen(none_answers[i].text) &&
		    !memcmp(out, none_answers[i].text, n))
			return 1;
	return 0;
}

int te_protocol_none_silent(int code, size_t n)
{
	return code == TE_PROTOCOL_NONE_USAGE_EXIT && n == 0;
}

int te_protocol_none_caller(int argc, char *const argv[])
{
	int i;

	if (argc < 2 || !argv[1] || !strncmp(argv[1], "--protocol", 10))
		return 0;
	for (i = 1; i < argc && argv[i]; i++)
		if (!strcmp(argv[i], "--port-range"))
			return 1;
	return 0;
}

int te_protocol_refused(const char *path, int code, const char *out, size_t n,
			char *line, size_t len)
{
	char pkg[40], dir[512];
	const char *slash = strrchr(path, '/');
	int proto;

	if (te_protocol_none_answer(code, out, n)) {
		proto = TE_PROTOCOL_NONE;
		te_strlcpy(pkg, TE_PROTOCOL_NONE_RELEASE, sizeof(pkg));
	} else if (code != TE_PROTOCOL_EXIT ||
		   te_protocol_answer_parse(out, n, &proto, pkg, sizeof(pkg)) <
			   0) {
		return 0;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	return te_protocol_mismatch_line(slash ? slash + 1 : path, dir, proto,
					 pkg, line, len);
}

int te_protocol_asked(const char *path, int code, const char *out, size_t n,
		      char *line, size_t len)
{
	if (te_protocol_none_answer(code, out, n))
		return te_protocol_refused(path, code, out, n, line, len);
	if (code != 0)
		return 0;
	/* --protocol-version answers with exit 0, --protocol N's refusal
	 * with TE_PROTOCOL_EXIT: the same answer otherwise */
	return te_protocol_refused(path, TE_PROTOCOL_EXIT, out, n, line, len);
}

int te_protocol_env_check(const char *val, char *buf, size_t len)
{
	char want[16];

	snprintf(want, sizeof(want), "%d", TE_PROTOCOL_VERSION);
	if (!val || !strcmp(val, want))
		return 0;
	snprintf(buf, len,
		 "libtrainenv speaks protocol %d (trainenv %s), the "
		 "plugin that started this task protocol %s (" TE_PROTOCOL_ENV
		 "): " TE_PROTOCOL_ADVICE "; trainenv's barrier may fail",
		 TE_PROTOCOL_VERSION, PACKAGE_VERSION,
		 *val && strlen(val) <= 7 && te_word_valid(val, 8, "") &&
				 strspn(val, "0123456789") == strlen(val)
			 ? val
			 : "unreadable");
	return 1;
}
