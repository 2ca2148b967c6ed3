/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health's storage check, the pure part (health_storage.h): its
 * keys, the user's stricter-only merge, and the verdict naming the nodes
 * below the site's fraction of the other nodes' median. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "health/health_storage.h"
#include "util/strutil.h"

int te_storage_size_parse(const char *s, uint64_t *bytes)
{
	size_t l = te_strnlen_cap(s, 32), shift = 0;
	char num[24];
	uint64_t v;

	if (!strcmp(s, "off") || !strcmp(s, "0")) {
		*bytes = 0;
		return 0;
	}
	if (!l || l >= sizeof(num))
		return -1;
	switch (s[l - 1]) {
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	}
	if (shift)
		l--;
	memcpy(num, s, l);
	num[l] = '\0';
	if (te_parse_u64(num, TE_STORAGE_SIZE_MAX >> shift, &v) < 0)
		return -1;
	v <<= shift;
	if (v < TE_STORAGE_SIZE_MIN || v > TE_STORAGE_SIZE_MAX)
		return -1;
	*bytes = v;
	return 0;
}

int te_storage_fraction_parse(const char *s, unsigned *permille)
{
	unsigned v = 0, scale = 100;
	size_t i, l = te_strnlen_cap(s, 8);

	if (l < 3 || l > 5 || s[0] != '0' || s[1] != '.')
		return -1;
	for (i = 2; i < l; i++, scale /= 10) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v += (unsigned)(s[i] - '0') * scale;
	}
	if (!v)
		return -1;
	*permille = v;
	return 0;
}

void te_storage_size_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes && !(bytes & ((1ULL << 30) - 1)))
		te_snprintf(buf, len, "%llu GiB",
			    (unsigned long long)(bytes >> 30));
	else if (bytes && !(bytes & ((1ULL << 20) - 1)))
		te_snprintf(buf, len, "%llu MiB",
			    (unsigned long long)(bytes >> 20));
	else if (bytes && !(bytes & ((1ULL << 10) - 1)))
		te_snprintf(buf, len, "%llu KiB",
			    (unsigned long long)(bytes >> 10));
	else
		te_snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
}

/* "0.5", "0.25": a fraction in thousandths for the lines. */
static void fraction_text(unsigned permille, char *buf, size_t len)
{
	char d[8];
	size_t l;

	te_snprintf(d, sizeof(d), "%03u", permille % 1000);
	for (l = strlen(d); l > 1 && d[l - 1] == '0'; l--)
		d[l - 1] = '\0';
	te_snprintf(buf, len, "0.%s", d);
}

/* 1 when s is 1-63 of [A-Za-z0-9._-]: a node's name. */
static int node_name_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (i >= 63 ||
		    !(strchr("._-", s[i]) || (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return 0;
	return i > 0;
}

/* health_test_storage_delay=NODE:MS. 1, or -1. */
static int set_delay(struct te_health_policy *p, const char *key,
		     const char *val, const char *where, char *err,
		     size_t errlen)
{
	const char *colon = strrchr(val, ':');
	uint64_t ms;
	size_t nl = colon ? (size_t)(colon - val) : 0;
	char node[sizeof(p->storage_delay_node)];

	if (!colon || !nl || nl >= sizeof(node) ||
	    te_parse_u64(colon + 1, TE_STORAGE_DELAY_MAX, &ms) < 0)
		return te_health_bad_value(
			where, key, val,
			"NODE:MS (the tests' delay per MiB written on NODE, "
			"0 to 10000 ms)",
			err, errlen);
	memcpy(node, val, nl);
	node[nl] = '\0';
	if (!node_name_ok(node))
		return te_health_bad_value(where, key, val,
					   "NODE:MS, NODE a host name", err,
					   errlen);
	te_strlcpy(p->storage_delay_node, node, sizeof(p->storage_delay_node));
	p->storage_delay_ms = (unsigned)ms;
	p->given |= TE_HK_STORAGE_DELAY;
	return 1;
}

int te_health_storage_key_set(struct te_health_policy *p, const char *key,
			      const char *val, const char *where, char *err,
			      size_t errlen)
{
	if (!strcmp(key, "health_storage")) {
		if (te_storage_size_parse(val, &p->storage_bytes) < 0)
			return te_health_bad_value(
				where, key, val,
				"off, or 1M to 4G (bytes each node writes, "
				"K, M or G suffixed)",
				err, errlen);
		p->given |= TE_HK_STORAGE;
		return 1;
	}
	if (!strcmp(key, "health_storage_fraction")) {
		if (te_storage_fraction_parse(val, &p->storage_permille) < 0)
			return te_health_bad_value(
				where, key, val,
				"0.001 to 0.999 (of the other nodes' median)",
				err, errlen);
		p->given |= TE_HK_STORAGE_FRACTION;
		return 1;
	}
	if (!strcmp(key, "health_storage_action")) {
		if (strcmp(val, "warn") && strcmp(val, "exclude"))
			return te_health_bad_value(
				where, key, val, "warn, exclude", err, errlen);
		p->storage_action = strcmp(val, "warn") ? TE_HA_EXCLUDE
							: TE_HA_WARN;
		p->given |= TE_HK_STORAGE_ACTION;
		return 1;
	}
	if (!strcmp(key, "health_test_storage_delay"))
		return set_delay(p, key, val, where, err, errlen);
	return 0;
}

int te_health_storage_merge(const struct te_health_policy *site,
			    const struct te_health_policy *user,
			    struct te_health_policy *out, char *err,
			    size_t errlen)
{
	int weaker = site->user_may_weaken;
	char a[32], b[32];

	if (user->given & TE_HK_STORAGE_DELAY)
		return te_err(err, errlen,
			      "health_test_storage_delay: only the site's "
			      "policy sets it");
	if (user->given & TE_HK_STORAGE) {
		te_storage_size_text(user->storage_bytes, a, sizeof(a));
		te_storage_size_text(site->storage_bytes, b, sizeof(b));
		if (user->storage_bytes < site->storage_bytes && !weaker)
			return te_err(err, errlen,
				      "health_storage=%s: the site writes %s; "
				      "accepted: %s to 4 GiB",
				      user->storage_bytes ? a : "off", b, b);
		out->storage_bytes = user->storage_bytes;
	}
	if (user->given & TE_HK_STORAGE_FRACTION) {
		fraction_text(user->storage_permille, a, sizeof(a));
		fraction_text(site->storage_permille, b, sizeof(b));
		if (user->storage_permille < site->storage_permille && !weaker)
			return te_err(err, errlen,
				      "health_storage_fraction=%s: below the "
				      "site's %s; accepted: %s to 0.999",
				      a, b, b);
		out->storage_permille = user->storage_permille;
	}
	if (user->given & TE_HK_STORAGE_ACTION) {
		if (user->storage_action < site->storage_action && !weaker)
			return te_err(err, errlen,
				      "health_storage_action=warn: the site "
				      "excludes; accepted: exclude");
		out->storage_action = user->storage_action;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The k-th (from 0) of sorted s[0..m) without its j-th. */
static uint64_t without_at(const uint64_t *s, size_t j, size_t k)
{
	return k < j ? s[k] : s[k + 1];
}

/* The median of sorted s[0..m) without one value v (m >= 2); of an even
 * count the lower middle one: with three nodes, one of them slow, the
 * mean of the other two would be half the fast one's and could name a
 * healthy node (t98 on 26.05 named n1 at 262 MB/s against the mean of n2's
 * 6 and n3's 1198). */
static uint64_t median_others(const uint64_t *s, size_t m, uint64_t v)
{
	size_t lo = 0, hi = m, r = m - 1;

	while (lo < hi) { /* the first index of v */
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return without_at(s, lo, (r - 1) / 2);
}

/* One named node's line into out at *used. */
static void slow_line(const struct te_storage_figure *f, const char *what,
		      uint64_t got, uint64_t median, unsigned permille,
		      const char *dir, char *out, size_t len, size_t *used)
{
	char frac[16], host[64];
	int w;

	if (*used >= len)
		return;
	fraction_text(permille, frac, sizeof(frac));
	te_clean_text(host, sizeof(host), f->host, (size_t)-1);
	w = te_snprintf(out + *used, len - *used,
			"node %s: checkpoint directory %s: %s %llu MB/s, below "
			"%s of the other nodes' median (%llu MB/s)\n",
			host[0] ? host : "?", dir, what,
			(unsigned long long)got, frac,
			(unsigned long long)median);
	*used = w < 0 ? len : *used + strlen(out + *used);
}

/* 1 when x is below permille/1000 of median. */
static int below(uint64_t x, uint64_t median, unsigned permille)
{
	/* figures are bounded (4 GiB in at least 1 ms), no overflow */
	return x * 1000 < median * permille;
}

long te_storage_slow_nodes(const struct te_storage_figure *f, size_t n,
			   unsigned permille, const char *dir,
			   unsigned max_lines, char *out, size_t len)
{
	uint64_t *ws, *rs;
	size_t i, m = 0, used = 0;
	long named = 0;

	if (len)
		out[0] = '\0';
	for (i = 0; i < n; i++)
		m += f[i].have != 0;
	if (m < 2)
		return 0;
	ws = malloc(m * sizeof(*ws));
	rs = malloc(m * sizeof(*rs));
	if (!ws || !rs) {
		free(ws);
		free(rs);
		te_strlcpy(out, "out of memory for the storage verdict", len);
		return -1;
	}
	for (i = 0, m = 0; i < n; i++)
		if (f[i].have) {
			ws[m] = f[i].write_mbps;
			rs[m++] = f[i].read_mbps;
		}
	qsort(ws, m, sizeof(*ws), cmp_u64);
	qsort(rs, m, sizeof(*rs), cmp_u64);
	for (i = 0; i < n; i++) {
		uint64_t wm, rm;
		int slow_w, slow_r;

		if (!f[i].have)
			continue;
		wm = median_others(ws, m, f[i].write_mbps);
		rm = median_others(rs, m, f[i].read_mbps);
		slow_w = below(f[i].write_mbps, wm, permille);
		slow_r = below(f[i].read_mbps, rm, permille);
		if (!slow_w && !slow_r)
			continue;
		if ((unsigned long)named++ >= max_lines)
			continue;
		if (slow_w)
			slow_line(&f[i], "write", f[i].write_mbps, wm, permille,
				  dir, out, len, &used);
		else
			slow_line(&f[i], "read", f[i].read_mbps, rm, permille,
				  dir, out, len, &used);
	}
	if ((unsigned long)named > max_lines && used < len)
		te_snprintf(out + used, len - used,
			    "and %lu more nodes below the fraction\n",
			    (unsigned long)named - max_lines);
	free(ws);
	free(rs);
	return named;
}
