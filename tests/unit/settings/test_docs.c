/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every setting is documented: the man page names each user option
 * (--train-NAME) and each admin-only key (NAME=), and so do the examples of
 * the policy file. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings/settings.h"
#include "util/strutil.h"
#include "tap.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* groff escapes '-' as "\-": compare with those removed. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++)
		if (!(s[0] == '\\' && s[1] == '-'))
			*o++ = *s;
	*o = '\0';
}

int main(void)
{
	char *man = slurp(TE_SRCDIR "/etc/trainenv.8");
	int i;

	if (!man) {
		ok(0, "etc/trainenv.8 is readable");
		return tap_done();
	}
	unescape(man);
	for (i = 0; i < TE_S_COUNT; i++) {
		char opt[96];

		if (te_settings[i].flags & TE_F_NO_OPTION)
			te_snprintf(opt, sizeof(opt),
				    "%s=", te_settings[i].name);
		else if (i == TE_S_TRAIN)
			te_snprintf(opt, sizeof(opt), "--train=");
		else
			te_snprintf(opt, sizeof(opt),
				    "--train-%s=", te_settings[i].name);
		like(man, opt, "trainenv(8) documents %s", opt);
	}
	like(man, "--train-explain", "trainenv(8) documents --train-explain");
	free(man);
	return tap_done();
}
