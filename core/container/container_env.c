/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv's decisions as environment variables, the enroot hook's filter
 * of a container's environment file, and the comparison with what a
 * program sees (core/container/container_env.h). Pure: no I/O. */
#include "config.h"

#include <string.h>

#include "container/container_env.h"
#include "launch/rankenv.h"
#include "util/strutil.h"

#define OURS_PREFIX "TRAINENV_"

int te_cenv_name_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len >= TE_CENV_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];
		int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			    c == '_';

		if (!alpha && !(i > 0 && c >= '0' && c <= '9'))
			return 0;
	}
	return 1;
}

static int find(const struct te_cenv *d, const char *name, size_t len)
{
	int i;

	for (i = 0; i < d->n; i++)
		if (strlen(d->v[i].name) == len &&
		    !memcmp(d->v[i].name, name, len))
			return i;
	return -1;
}

int te_cenv_ours(const struct te_cenv *d, const char *name, size_t len)
{
	return find(d, name, len) >= 0 ||
	       (len > strlen(OURS_PREFIX) &&
		!memcmp(name, OURS_PREFIX, strlen(OURS_PREFIX)));
}

/* Adds name (once) with the task's value; -1 when d is full. */
static int add(struct te_cenv *d, const char *name, size_t len,
	       te_getenv_fn getenv_fn, void *ctx, int enforced)
{
	struct te_cenv_var *v;
	char nm[TE_CENV_NAME_MAX];
	const char *val;
	int i;

	if (!te_cenv_name_valid(name, len))
		return 0; /* not a name trainenv would set */
	if ((i = find(d, name, len)) >= 0) {
		d->v[i].enforced |= enforced;
		return 0;
	}
	if (d->n >= TE_CENV_MAX)
		return -1;
	memcpy(nm, name, len);
	nm[len] = '\0';
	v = &d->v[d->n++];
	memset(v, 0, sizeof(*v));
	memcpy(v->name, nm, len + 1);
	v->enforced = enforced;
	val = getenv_fn(ctx, nm);
	if (val &&
	    te_strlcpy(v->value, val, sizeof(v->value)) < sizeof(v->value))
		v->has_value = 1;
	return 0;
}

int te_cenv_decided(te_getenv_fn getenv_fn, void *ctx, struct te_cenv *out,
		    char *err, size_t errlen)
{
	static struct te_config cfg;
	char derr[TE_ERR_MAX];
	const char *s, *p;
	int id, e;

	out->n = 0;
	s = getenv_fn(ctx, TE_SETTINGS_ENV);
	if (!s)
		return 0;
	if (te_config_decode(&cfg, s, derr, sizeof(derr)) < 0)
		return te_err(err, errlen, "%s: %s", TE_SETTINGS_ENV, derr);
	/* decoded values carry their text, not their word */
	if (cfg.v[TE_S_TRAIN].set && !strcmp(cfg.v[TE_S_TRAIN].text, "off"))
		return 0;
	for (id = 0; id < TE_S_COUNT; id++) {
		const struct te_setting *st = &te_settings[id];

		if (!st->env || !cfg.v[id].set)
			continue;
		for (e = 0; st->env[e]; e++)
			if (add(out, st->env[e], strlen(st->env[e]), getenv_fn,
				ctx, cfg.v[id].src == TE_SRC_ENFORCED) < 0)
				goto full;
	}
	if (cfg.v[TE_S_NCCL_DUMP_DIR].set &&
	    add(out, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE", 31, getenv_fn, ctx,
		cfg.v[TE_S_NCCL_DUMP_DIR].src == TE_SRC_ENFORCED) < 0)
		goto full;
	if (getenv_fn(ctx, "TRAINENV_BIND") &&
	    add(out, "CUDA_DEVICE_ORDER", 17, getenv_fn, ctx, 0) < 0)
		goto full;
	s = getenv_fn(ctx, TE_RANK_VARS_ENV);
	if (!s)
		return 0;
	if (te_strnlen_cap(s, TE_VALUE_MAX) > TE_VALUE_MAX)
		return te_err(err, errlen, "%s is too long", TE_RANK_VARS_ENV);
	for (p = s; *p;) {
		size_t n = strcspn(p, ",");

		if (n && !te_cenv_name_valid(p, n))
			return te_err(err, errlen,
				      "%s: not a variable name "
				      "at byte %zu",
				      TE_RANK_VARS_ENV, (size_t)(p - s));
		if (n && add(out, p, n, getenv_fn, ctx, 0) < 0)
			goto full;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
full:
	return te_err(err, errlen, "more than %d variables to keep",
		      TE_CENV_MAX);
}

/* A value as a report shows it: surrounding quotes off (enroot takes
 * them off too), cleaned, ';' (the report's separator) made '?', cut. */
static void show(char *dst, size_t size, const char *v, size_t len)
{
	char tmp[TE_CENV_SHOW_MAX + 1];
	size_t n = len, i;

	while (n > 0 &&
	       (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
		n--;
	if (n >= 2 && (v[0] == '"' || v[0] == '\'') &&
	    (v[n - 1] == '"' || v[n - 1] == '\'')) {
		v++;
		n -= 2;
	}
	if (n > TE_CENV_SHOW_MAX)
		n = TE_CENV_SHOW_MAX;
	memcpy(tmp, v, n);
	tmp[n] = '\0';
	te_clean_text(dst, size, tmp, n);
	for (i = 0; dst[i]; i++)
		if (dst[i] == ';')
			dst[i] = '?';
	if (len > TE_CENV_SHOW_MAX)
		te_appendf(dst, size, "...");
}

static int put(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
	if (n > cap - *at)
		return -1;
	memcpy(out + *at, s, n);
	*at += n;
	return 0;
}

int te_cenv_filter(const char *in, size_t len, const struct te_cenv *d,
		   char *out, size_t outcap, size_t *outlen, char *err,
		   size_t errlen)
{
	char report[TE_CENV_REPORT_MAX] = "enroot:",
	     val[3 * TE_CENV_SHOW_MAX + 8];
	size_t at = 0, i = 0;
	int removed = 0, full = 0;

	*outlen = 0;
	if (memchr(in, '\0', len))
		return te_err(err, errlen,
			      "the environment file holds a NUL "
			      "byte");
	while (i < len) {
		const char *line = in + i, *nl = memchr(line, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - line) : len - i, k = 0, n = 0;

		i += ll + (nl ? 1 : 0);
		while (k < ll && (line[k] == ' ' || line[k] == '\t'))
			k++;
		while (k + n < ll && line[k + n] != '=')
			n++;
		if (k + n < ll && te_cenv_name_valid(line + k, n) &&
		    te_cenv_ours(d, line + k, n)) {
			int j = find(d, line + k, n);

			if (j < 0)
				continue; /* a TRAINENV_* of the image */
			size_t before = strlen(report);

			removed++;
			show(val, sizeof(val), line + k + n + 1,
			     ll - k - n - 1);
			/* room kept for ";..." */
			if (!full &&
			    te_appendf(report, sizeof(report) - 8, "%s%s=%s",
				       before > 7 ? ";" : "", d->v[j].name,
				       val) < 0) {
				report[before] = '\0'; /* not half of it */
				full = 1;
			}
			continue;
		}
		if (put(out, outcap, &at, line, ll) < 0 ||
		    put(out, outcap, &at, "\n", 1) < 0)
			goto small;
	}
	if (full)
		te_appendf(report, sizeof(report), "%s...",
			   strlen(report) > 7 ? ";" : "");
	if (put(out, outcap, &at, TE_CENV_ENV "=", strlen(TE_CENV_ENV) + 1) <
		    0 ||
	    put(out, outcap, &at, report, strlen(report)) < 0 ||
	    put(out, outcap, &at, "\n", 1) < 0)
		goto small;
	*outlen = at;
	return removed;
small:
	return te_err(err, errlen,
		      "the environment file is larger than %zu "
		      "bytes",
		      outcap);
}

const char *te_cenv_block_get(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name), i = 0;

	while (i < len) {
		const char *e = env + i;
		const char *z = memchr(e, '\0', len - i);
		size_t el = z ? (size_t)(z - e) : len - i;

		if (el > nl && e[nl] == '=' && !memcmp(e, name, nl))
			return z ? e + nl + 1 : NULL; /* cut: unknown */
		i += el + 1;
	}
	return NULL;
}

int te_cenv_compare(const struct te_cenv *d, const char *env, size_t len,
		    int cut, char *report, size_t replen, int *enforced_changed)
{
	char got[3 * TE_CENV_SHOW_MAX + 8], want[3 * TE_CENV_SHOW_MAX + 8];
	int i, diff = 0;

	report[0] = '\0';
	*enforced_changed = 0;
	for (i = 0; i < d->n; i++) {
		const struct te_cenv_var *v = &d->v[i];
		const char *g;

		if (!v->has_value)
			continue;
		g = te_cenv_block_get(env, len, v->name);
		if (g && !strcmp(g, v->value))
			continue;
		if (!g && cut)
			continue;
		diff++;
		*enforced_changed += v->enforced;
		show(want, sizeof(want), v->value, strlen(v->value));
		if (g)
			show(got, sizeof(got), g, strlen(g));
		te_appendf(report, replen, "%s%s%s%s (trainenv: %s%s)",
			   diff > 1 ? "; " : "", v->name, g ? "=" : " unset",
			   g ? got : "", want, v->enforced ? ", enforced" : "");
	}
	return diff;
}

void te_cenv_record_text(const char *rec, char *out, size_t len)
{
	char clean[TE_CENV_REPORT_MAX];
	const char *p;

	te_clean_text(clean, sizeof(clean), rec, sizeof(clean) - 1);
	p = clean;
	if (!strncmp(p, "enroot:", 7))
		p += 7;
	if (!*p) {
		te_snprintf(out, len,
			    "the container's environment set none "
			    "of trainenv's variables");
		return;
	}
	te_snprintf(out, len, "the container's environment set ");
	for (; *p; p++)
		te_appendf(out, len, *p == ';' ? ", " : "%c", *p);
	te_appendf(out, len,
		   "; trainenv's enroot hook kept trainenv's "
		   "values");
}
