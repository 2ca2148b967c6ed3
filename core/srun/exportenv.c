/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tasks' environment as srun's --export decides (see exportenv.h). */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "srun/exportenv.h"
#include "util/strutil.h"

/* Slurm's find_quote_token: the next comma-separated token, a token wholly
 * in single or double quotes losing them, commas inside quotes kept. */
static const char *next_token(const char *p, char *tok, size_t toklen,
			      int *truncated)
{
	char quote = 0;
	size_t n = 0;

	*truncated = 0;
	for (; *p; p++) {
		if (!quote && *p == ',')
			break;
		if (!quote && (*p == '\'' || *p == '"'))
			quote = *p;
		else if (quote && *p == quote)
			quote = 0;
		if (n + 1 < toklen)
			tok[n++] = *p;
		else
			*truncated = 1;
	}
	tok[n] = '\0';
	if (n >= 2 && (tok[0] == '\'' || tok[0] == '"') &&
	    tok[n - 1] == tok[0]) {
		memmove(tok, tok + 1, n - 2);
		tok[n - 2] = '\0';
	}
	return *p == ',' ? p + 1 : p;
}

const char *te_export_getenv(const char *spec, const char *name,
			     te_getenv_fn env_fn, void *ctx, char *buf,
			     size_t len)
{
	const char *p = spec, *own, *found = NULL;
	char tok[TE_VALUE_MAX + 128];
	size_t nlen = strlen(name);
	int all = 0, truncated;

	own = env_fn(ctx, name);
	if (!spec)
		return own;
	while (*p) {
		p = next_token(p, tok, sizeof(tok), &truncated);
		if (!strcasecmp(tok, "ALL"))
			all = 1;
		if (!strcasecmp(tok, "NONE"))
			break;
		if (strncmp(tok, name, nlen) == 0 && tok[nlen] == '=') {
			/* A value too long to hold is kept as an over-long
			 * marker, refused later like any over-long value. */
			if (truncated ||
			    te_strlcpy(buf, tok + nlen + 1, len) >= len) {
				if (len > 1) {
					memset(buf, 'x', len - 1);
					buf[len - 1] = '\0';
				}
			}
			found = buf;
		} else if (!strcmp(tok, name) && own) {
			found = own;
		}
	}
	if (all && own)
		return own;
	return found;
}

const char *te_export_from_args(int nargs, char *const *args)
{
	static const char full[] = "export";
	const char *spec = NULL;
	int i;

	for (i = 0; i < nargs && args[i]; i++) {
		const char *a = args[i], *eq;
		size_t n;

		if (!strcmp(a, "--"))
			break;
		if (strncmp(a, "--", 2) != 0)
			continue;
		a += 2;
		eq = strchr(a, '=');
		n = eq ? (size_t)(eq - a) : strlen(a);
		/* "--ex" is ambiguous for srun (--exact, --exclude, ...) */
		if (n < 3 || n > sizeof(full) - 1 || strncmp(a, full, n) != 0)
			continue;
		if (eq)
			spec = eq + 1;
		else if (i + 1 < nargs && args[i + 1])
			spec = args[++i];
	}
	return spec;
}
