/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health in the job prolog: the site's health items, the prolog's
 * keys, the user's --train-health text, the prolog's decision and the
 * per-job verdict file (health_prolog.h). Pure. */
#include "config.h"

#include <string.h>

#include "health/health_prolog.h"
#include "util/strutil.h"
#include "util/textbuf.h"

#define ITEM_MAX 512
#define VERDICT_MAGIC "trainenv-health-verdict 1"
#define VERDICT_LINES_MAX 16

void te_health_prolog_init(struct te_health_prolog_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->on_fail = TE_HOF_VERDICT;
}

/* An absolute path of letters, digits, '/', '-', '_', '.' and "%n", with
 * no ".." part. */
static int test_root_ok(const char *v)
{
	const char *p;

	if (v[0] != '/' || strlen(v) >= TE_HEALTH_ROOT_MAX ||
	    strstr(v, "/../") ||
	    (strlen(v) >= 3 && !strcmp(v + strlen(v) - 3, "/..")))
		return 0;
	for (p = v; *p; p++) {
		if (*p == '%') {
			if (p[1] != 'n')
				return 0;
			p++;
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("/-_.", *p)))
			return 0;
	}
	return 1;
}

int te_health_prolog_set(struct te_health_prolog_policy *p, const char *key,
			 const char *val, const char *where, char *err,
			 size_t errlen)
{
	if (!strcmp(key, "health_on_fail")) {
		if (strcmp(val, "fail") && strcmp(val, "verdict"))
			return te_health_bad_value(
				where, key, val, "fail, verdict", err, errlen);
		p->on_fail = strcmp(val, "fail") ? TE_HOF_VERDICT : TE_HOF_FAIL;
		return 1;
	}
	if (!strcmp(key, "health_test_root")) {
		if (!test_root_ok(val))
			return te_health_bad_value(
				where, key, val,
				"an absolute directory of letters, digits, "
				"'/', '-', '_', '.' and %n (the node's name), "
				"no '..' (tests only)",
				err, errlen);
		te_strlcpy(p->test_root, val, sizeof(p->test_root));
		return 1;
	}
	return 0;
}

/* One "KEY=VALUE" item of the site's into the three policies. */
static int site_item(const char *item, struct te_health_policy *hp,
		     struct te_drain_policy *dp,
		     struct te_health_prolog_policy *pp, char *err,
		     size_t errlen)
{
	char key[64];
	const char *eq = strchr(item, '=');
	int rc;

	if (!eq || (size_t)(eq - item) >= sizeof(key))
		return te_err(err, errlen,
			      "site health item: not KEY=VALUE (a key of at "
			      "most %zu characters)",
			      sizeof(key) - 1);
	memcpy(key, item, (size_t)(eq - item));
	key[eq - item] = '\0';
	rc = te_health_policy_set(hp, key, eq + 1, "plugstack.conf", err,
				  errlen);
	if (rc == 0)
		rc = te_drain_policy_set(dp, key, eq + 1, "plugstack.conf", err,
					 errlen);
	if (rc == 0)
		rc = te_health_prolog_set(pp, key, eq + 1, "plugstack.conf",
					  err, errlen);
	if (rc == 0) {
		char q[64];

		te_quote(q, sizeof(q), key);
		return te_err(err, errlen,
			      "plugstack.conf: unknown health key '%s' (see "
			      "trainenv(8), \"Node health\")",
			      q);
	}
	return rc < 0 ? -1 : 0;
}

int te_health_site_load(const char *items, struct te_health_policy *hp,
			struct te_drain_policy *dp,
			struct te_health_prolog_policy *pp, char *err,
			size_t errlen)
{
	char item[ITEM_MAX];
	const char *p = items;

	te_health_policy_init(hp);
	te_drain_policy_init(dp);
	te_health_prolog_init(pp);
	while (*p) {
		size_t n = strcspn(p, " ");

		if (n >= sizeof(item))
			return te_err(err, errlen,
				      "site health item longer than %zu bytes",
				      sizeof(item) - 1);
		memcpy(item, p, n);
		item[n] = '\0';
		if (n && site_item(item, hp, dp, pp, err, errlen) < 0)
			return -1;
		p += n;
		while (*p == ' ')
			p++;
	}
	return 0;
}

int te_health_root_for(const char *tmpl, const char *node, char *out,
		       size_t len)
{
	size_t o = 0;
	const char *p;

	if (!len)
		return -1;
	for (p = tmpl; *p; p++) {
		const char *add = p;
		size_t n = 1;

		if (p[0] == '%' && p[1] == 'n') {
			add = node;
			n = strlen(node);
			p++;
		}
		if (o + n >= len) {
			out[0] = '\0';
			return -1;
		}
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = '\0';
	return 0;
}

/* One user item: a check list, or KEY=VALUE with or without "health_". */
static int user_item(struct te_health_policy *user, const char *item, char *err,
		     size_t errlen)
{
	char key[64];
	const char *eq = strchr(item, '='), *val;
	int rc;

	if (!eq) {
		te_strlcpy(key, "health", sizeof(key));
		val = item;
	} else {
		size_t kl = (size_t)(eq - item);

		if (kl + 8 >= sizeof(key) || kl == 0)
			return te_health_bad_value(
				TE_HEALTH_OPTION, "item", item,
				"a list of checks (ib,eth,gpu) or KEY=VALUE",
				err, errlen);
		key[0] = '\0';
		if (strncmp(item, "health", 6))
			te_strlcpy(key, "health_", sizeof(key));
		te_appendf(key, sizeof(key), "%.*s", (int)kl, item);
		val = eq + 1;
	}
	rc = te_health_policy_set(user, key, val, TE_HEALTH_OPTION, err,
				  errlen);
	if (rc == 0) {
		char q[64];

		te_quote(q, sizeof(q), key);
		return te_err(err, errlen,
			      "%s: unknown key '%s'; accepted: a list of "
			      "checks (ib, eth, gpu), ib_rate=GBPS, "
			      "eth=IF[:MBPS], ib_action=, eth_action=, "
			      "gpu_action= (exclude, warn)",
			      TE_HEALTH_OPTION, q);
	}
	return rc < 0 ? -1 : 0;
}

int te_health_user_parse(struct te_health_policy *user, const char *text,
			 char *err, size_t errlen)
{
	char item[ITEM_MAX];
	const char *p = text;

	if (strlen(text) > TE_HEALTH_ITEMS_MAX)
		return te_err(err, errlen, "%s: longer than %d characters",
			      TE_HEALTH_OPTION, TE_HEALTH_ITEMS_MAX);
	if (!te_is_printable(text, TE_HEALTH_ITEMS_MAX))
		return te_err(err, errlen,
			      "%s: control or non-ASCII characters",
			      TE_HEALTH_OPTION);
	while (*p) {
		size_t n = strcspn(p, "; ");

		if (n >= sizeof(item))
			return te_err(err, errlen,
				      "%s: an item is longer than %zu bytes",
				      TE_HEALTH_OPTION, sizeof(item) - 1);
		memcpy(item, p, n);
		item[n] = '\0';
		if (n && user_item(user, item, err, errlen) < 0)
			return -1;
		p += n;
		while (*p == ';' || *p == ' ')
			p++;
	}
	return 0;
}

void te_health_prolog_decide(const struct te_health_set *set,
			     const struct te_health_policy *site,
			     const struct te_health_policy *merged,
			     struct te_health_prolog_outcome *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < set->n; i++) {
		const struct te_health_result *r = &set->r[i];

		if (r->verdict != TE_HV_FAIL && r->verdict != TE_HV_ERROR)
			continue;
		switch (te_health_action_for(r, site, merged)) {
		case TE_HA_DRAIN:
			if (!o->n_drain++)
				te_strlcpy(o->drain_line, r->text,
					   sizeof(o->drain_line));
			/* a drained node is out of the job too */
			__attribute__((fallthrough));
		case TE_HA_EXCLUDE:
			if (!o->n_exclude++)
				te_strlcpy(o->exclude_line, r->text,
					   sizeof(o->exclude_line));
			break;
		default:
			o->n_warn++;
		}
	}
	/* results past the listed ones: no line to act on, so they keep
	 * the node out of the job but never drain it */
	if (!o->n_exclude && (set->cut_fail || set->cut_error) &&
	    (site->checks || merged->checks)) {
		o->n_exclude++;
		te_snprintf(o->exclude_line, sizeof(o->exclude_line),
			    "%d failed results past the %d listed",
			    set->cut_fail + set->cut_error,
			    TE_HEALTH_RESULTS_MAX);
	}
}

int te_health_verdict_encode(const char *node, const struct te_health_set *set,
			     const struct te_health_policy *site,
			     const struct te_health_policy *merged, char *buf,
			     size_t len)
{
	struct te_buf b;
	char clean[TE_HEALTH_TEXT_MAX];
	int i, lines = 0;

	te_buf_init(&b, buf, len);
	te_clean_text(clean, sizeof(clean), node, TE_HEALTH_NODE_MAX);
	te_buf_printf(&b, "%s\nnode %s\n", VERDICT_MAGIC, clean);
	for (i = 0; i < set->n && lines < VERDICT_LINES_MAX; i++) {
		const struct te_health_result *r = &set->r[i];
		enum te_health_action a;

		if (r->verdict != TE_HV_FAIL && r->verdict != TE_HV_ERROR)
			continue;
		a = te_health_action_for(r, site, merged);
		if (a == TE_HA_WARN)
			continue;
		te_clean_text(clean, sizeof(clean), r->text, sizeof(clean));
		te_buf_printf(&b, "%s %s\n", te_health_action_name(a), clean);
		lines++;
	}
	return b.cut ? -1 : 0;
}

int te_health_verdict_path(unsigned long job, const char *node, char *path,
			   size_t len)
{
	return te_snprintf(path, len, "%s/job.%lu.%s", TE_HEALTH_VERDICT_DIR,
			   job, node) < 0
		       ? -1
		       : 0;
}

/* The next line of buf[*pos..len) into line (cut to size): 0, or -1 at
 * the end. */
static int next_line(const char *buf, size_t len, size_t *pos, char *line,
		     size_t size)
{
	size_t n = 0;

	if (*pos >= len)
		return -1;
	while (*pos < len && buf[*pos] != '\n') {
		if (n + 1 < size)
			line[n++] = buf[*pos];
		(*pos)++;
	}
	(*pos)++;
	line[n] = '\0';
	return 0;
}

int te_health_verdict_decode(const char *buf, size_t len, char *node,
			     size_t nodelen, char *line, size_t linelen,
			     char *err, size_t errlen)
{
	char l[TE_HEALTH_TEXT_MAX + 32];
	size_t pos = 0;

	if (next_line(buf, len, &pos, l, sizeof(l)) < 0 ||
	    strcmp(l, VERDICT_MAGIC))
		return te_err(err, errlen, "not a trainenv health verdict");
	if (next_line(buf, len, &pos, l, sizeof(l)) < 0 ||
	    strncmp(l, "node ", 5))
		return te_err(err, errlen, "health verdict: no node line");
	te_clean_text(node, nodelen, l + 5, TE_HEALTH_NODE_MAX);
	while (next_line(buf, len, &pos, l, sizeof(l)) == 0) {
		if (strncmp(l, "drain ", 6) && strncmp(l, "exclude ", 8))
			continue;
		te_clean_text(line, linelen, l, sizeof(l));
		return 1;
	}
	return 0;
}

int te_health_job_policy(const char *site_items, const char *user_text,
			 struct te_health_job_policy *jp, char *err,
			 size_t errlen)
{
	te_health_policy_init(&jp->user);
	if (te_health_site_load(site_items ? site_items : "", &jp->site,
				&jp->drain, &jp->prolog, err, errlen) < 0)
		return -1;
	jp->merged = jp->site;
	if (!user_text || !user_text[0])
		return 0;
	if (te_health_user_parse(&jp->user, user_text, err, errlen) < 0 ||
	    te_health_policy_merge(&jp->site, &jp->user, &jp->merged, err,
				   errlen) < 0) {
		te_health_policy_init(&jp->user);
		jp->merged = jp->site;
		return -2;
	}
	return 0;
}

int te_health_step_policy(const struct te_health_policy *site,
			  const struct te_health_policy *user,
			  const struct te_health_policy *merged,
			  struct te_health_policy *out)
{
	/* a check the site runs already, as the user named it, is the
	 * prolog's: the user's list must hold the site's */
	unsigned touched = user->checks & ~site->checks;
	int c;

	if (user->given & TE_HK_IB_RATE)
		touched |= 1u << TE_HC_IB;
	if (user->given & TE_HK_ETH)
		touched |= 1u << TE_HC_ETH;
	for (c = 0; c < TE_HC_COUNT; c++)
		if (user->given & ((unsigned)TE_HK_ACTION_IB << c))
			touched |= 1u << c;
	*out = *merged;
	out->checks =
		merged->checks & touched &
		((1u << TE_HC_IB) | (1u << TE_HC_ETH) | (1u << TE_HC_GPU));
	out->hook[0] = '\0';
	out->xid = 0;
	out->gpu_count = 0;
	out->storage_bytes = 0;
	return out->checks != 0;
}

/* 1 when comment holds an entry "trainenv: NODE: " (at its start or after
 * "; "); counts trainenv's entries into *n. */
static int comment_has(const char *comment, const char *node, unsigned *n)
{
	static const char tag[] = "trainenv: ";
	size_t tl = sizeof(tag) - 1, nl = strlen(node);
	const char *p = comment;
	int found = 0;

	*n = 0;
	while (p) {
		if (!strncmp(p, tag, tl)) {
			(*n)++;
			if (!strncmp(p + tl, node, nl) && p[tl + nl] == ':')
				found = 1;
		}
		p = strstr(p, "; ");
		if (p)
			p += 2;
	}
	return found;
}

int te_health_comment_compose(const char *current, const char *node,
			      const char *line, char *out, size_t len)
{
	char cur[TE_HEALTH_COMMENT_READ + 1], raw[256], entry[256];
	size_t n = te_strnlen_cap(current, TE_HEALTH_COMMENT_READ + 1);
	unsigned entries;

	if (n > TE_HEALTH_COMMENT_READ)
		n = TE_HEALTH_COMMENT_READ;
	memcpy(cur, current, n);
	cur[n] = '\0';
	/* squeue pads the field to its width */
	while (n && (cur[n - 1] == ' ' || cur[n - 1] == '\n'))
		cur[--n] = '\0';
	/* filled the width: cut; more than one line (two jobs' rows, a
	 * message) or odd bytes: not a comment to write back */
	if (n >= TE_HEALTH_COMMENT_READ - 1 || !te_is_printable(cur, n))
		return -1;
	if (!strcmp(cur, "(null)"))
		cur[0] = '\0';
	if (comment_has(cur, node, &entries))
		return 0;
	if (entries >= TE_HEALTH_COMMENT_NODES)
		return -1;
	te_snprintf(raw, sizeof(raw), "trainenv: %s: %s", node, line);
	te_clean_text(entry, sizeof(entry), raw, sizeof(raw));
	if (strlen(cur) + 2 + strlen(entry) > TE_HEALTH_COMMENT_MAX ||
	    te_snprintf(out, len, "%s%s%s", cur, cur[0] ? "; " : "", entry) < 0)
		return -1;
	return 1;
}
