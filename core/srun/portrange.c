/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SrunPortRange: parse the value, find it in slurm.conf text (pure). */
#include "config.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "srun/portrange.h"
#include "util/strutil.h"

static int port_value(const char *s, size_t n, uint16_t *port)
{
	char num[8];
	uint64_t v;

	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	if (te_parse_u64(num, 65535, &v) < 0 || v == 0)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

int te_port_range_parse(const char *text, uint16_t *lo, uint16_t *hi, char *err,
			size_t errlen)
{
	const char *s = text, *dash, *end;
	char shown[48];

	if (!s)
		return te_err(err, errlen, "no value");
	while (*s == ' ' || *s == '\t')
		s++;
	end = s + te_strnlen_cap(s, 64);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' ||
			   end[-1] == '\r' || end[-1] == '\n'))
		end--;
	dash = memchr(s, '-', (size_t)(end - s));
	if (!dash || port_value(s, (size_t)(dash - s), lo) < 0 ||
	    port_value(dash + 1, (size_t)(end - dash - 1), hi) < 0) {
		te_quote(shown, sizeof(shown), text);
		return te_err(err, errlen,
			      "SrunPortRange=%s: expected LO-HI, "
			      "two ports from 1 to 65535",
			      shown);
	}
	if (*lo > *hi)
		return te_err(err, errlen,
			      "SrunPortRange %u-%u: the first port "
			      "is above the last",
			      *lo, *hi);
	return 0;
}

int te_slurmconf_value(const char *text, size_t len, const char *key, char *out,
		       size_t outlen)
{
	size_t klen = strlen(key), pos = 0;
	int found = 0;

	while (pos < len) {
		const char *line = text + pos, *nl, *p, *lend, *v;
		size_t n;

		nl = memchr(line, '\n', len - pos);
		lend = nl ? nl : text + len;
		pos = (size_t)(lend - text) + 1;
		p = line;
		while (p < lend && (*p == ' ' || *p == '\t'))
			p++;
		if ((size_t)(lend - p) <= klen || strncasecmp(p, key, klen) ||
		    p[klen] != '=')
			continue;
		v = p + klen + 1;
		n = 0;
		while (v + n < lend && v[n] != ' ' && v[n] != '\t' &&
		       v[n] != '#' && v[n] != '\r' && v[n] != '\0')
			n++;
		if (n >= outlen)
			return -1;
		memcpy(out, v, n);
		out[n] = '\0';
		found = 1; /* a later line wins, as in Slurm */
	}
	return found;
}
