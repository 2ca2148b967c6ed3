/* trainenv's versions: the version line, a helper's --protocol-version
 * answer and the one line of a mismatch (core/version.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"
#include "rdzv_core.h"
#include "strutil.h"

int te_protocol_version(void)
{
	return TE_PROTOCOL_VERSION;
}

int te_version_line(char *buf, size_t len)
{
	int n = snprintf(buf, len, "trainenv %s (protocol %d)",
			 PACKAGE_VERSION, TE_PROTOCOL_VERSION);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

int te_protocol_answer_format(char *buf, size_t len)
{
	int n = snprintf(buf, len, "trainenv-protocol %d %s\n",
			 TE_PROTOCOL_VERSION, PACKAGE_VERSION);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

int te_protocol_answer_parse(const char *buf, size_t n, int *proto,
			     char *pkg, size_t pkglen)
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

int te_protocol_args(int *argc, char ***argv)
{
	char **a = *argv, buf[TE_PROTOCOL_ANSWER_MAX];
	char want[16];

	if (*argc == 2 && !strcmp(a[1], "--protocol-version")) {
		te_protocol_answer_format(buf, sizeof(buf));
		fputs(buf, stdout);
		fflush(stdout);
		return 0;
	}
	if (*argc < 3 || strcmp(a[1], "--protocol") != 0)
		return -1;
	snprintf(want, sizeof(want), "%d", TE_PROTOCOL_VERSION);
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

int te_protocol_mismatch_line(const char *what, const char *dir, int proto,
			      const char *pkg, char *buf, size_t len)
{
	if (proto == TE_PROTOCOL_VERSION)
		return 0;
	snprintf(buf, len, "%s in %s speaks protocol %d (trainenv %s), the "
		 "plugin protocol %d (trainenv %s): " TE_PROTOCOL_ADVICE, what, dir,
		 proto, pkg, TE_PROTOCOL_VERSION, PACKAGE_VERSION);
	return 1;
}
