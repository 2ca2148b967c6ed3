/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: which checks run and their thresholds, as the site's policy
 * and a user's options say (KEY=VALUE, the plugstack.conf style), and the
 * rule that a user may make the site's checks stricter, never weaker
 * unless the site allows it. Pure. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "health/health.h"
#include "health/health_storage.h"
#include "util/strutil.h"

#define ITEM_MAX 512
#define KEYS_ACCEPTED                                            \
	"health, health_ib_rate, health_eth, health_ib_action, " \
	"health_eth_action, health_gpu_action, health_timeout, " \
	"health_user_weaker, health_nvml, health_ib_ports, "     \
	"health_gpu_count, health_hook, health_hook_action, "    \
	"health_nvlink, health_xid, health_xid_fail, "           \
	"health_storage, health_storage_fraction, "              \
	"health_storage_action, health_test_storage_delay"

static const char *const check_names[TE_HC_COUNT] = { "ib", "eth", "gpu",
						      "hook" };
/* one bit per check's action from TE_HK_ACTION_IB up */
_Static_assert(TE_HC_COUNT <= 8, "the action bits hold 8 checks");
static const char *const action_names[] = { "warn", "exclude", "drain" };

const char *te_health_check_name(enum te_health_check_id id)
{
	return (unsigned)id < TE_HC_COUNT ? check_names[id] : "?";
}

const char *te_health_action_name(enum te_health_action a)
{
	return (unsigned)a <= TE_HA_DRAIN ? action_names[a] : "?";
}

void te_health_policy_init(struct te_health_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->timeout_s = TE_HEALTH_TIMEOUT_DEFAULT;
	p->storage_permille = TE_STORAGE_FRACTION_DEFAULT;
}

static int parse_checks(struct te_health_policy *p, const char *val,
			const char *where, char *err, size_t errlen)
{
	static const char acc[] = "a comma-separated list of ib, eth, gpu, "
				  "hook; or none";
	char buf[ITEM_MAX], *save = NULL, *tok;
	unsigned checks = 0, hook;
	int i;

	if (te_strlcpy(buf, val, sizeof(buf)) >= sizeof(buf) || !buf[0])
		return te_health_bad_value(where, "health", val, acc, err,
					   errlen);
	/* health_hook=PATH runs the hook whatever the list says */
	hook = p->hook[0] ? 1u << TE_HC_HOOK : 0;
	if (!strcmp(buf, "none")) {
		p->checks = hook;
		return 0;
	}
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < TE_HC_COUNT; i++)
			if (!strcmp(tok, check_names[i]))
				break;
		if (i == TE_HC_COUNT)
			return te_health_bad_value(where, "health", tok, acc,
						   err, errlen);
		checks |= 1u << i;
	}
	if (!checks)
		return te_health_bad_value(where, "health", val, acc, err,
					   errlen);
	p->checks = checks | hook;
	return 0;
}

/* An interface's name as Linux allows it (IFNAMSIZ, no '/', no blank,
 * not "." or ".."): it becomes a path under class/net. */
static int ifname_ok(const char *s)
{
	size_t l = te_strnlen_cap(s, TE_HEALTH_IFNAME_MAX);

	return l && l < TE_HEALTH_IFNAME_MAX && strcmp(s, ".") &&
	       strcmp(s, "..") &&
	       te_word_valid(s, TE_HEALTH_IFNAME_MAX, "-_.@");
}

static int parse_eth(struct te_health_policy *p, const char *val,
		     const char *where, char *err, size_t errlen)
{
	static const char acc[] = "IF[:MBPS][,IF[:MBPS]...] (at most 8 "
				  "interfaces; MBPS 1 to 10000000) or none";
	char buf[ITEM_MAX], *save = NULL, *tok, *colon;
	struct te_health_eth_if eth[TE_HEALTH_ETH_MAX];
	int n = 0, i;
	uint64_t v;

	if (te_strlcpy(buf, val, sizeof(buf)) >= sizeof(buf) || !buf[0])
		return te_health_bad_value(where, "health_eth", val, acc, err,
					   errlen);
	if (!strcmp(buf, "none")) {
		p->n_eth = 0;
		return 0;
	}
	memset(eth, 0, sizeof(eth));
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n >= TE_HEALTH_ETH_MAX)
			return te_health_bad_value(where, "health_eth", val,
						   acc, err, errlen);
		colon = strchr(tok, ':');
		v = 0;
		if (colon) {
			*colon = '\0';
			if (te_parse_u64(colon + 1, TE_HEALTH_ETH_SPEED_MAX,
					 &v) < 0 ||
			    !v)
				return te_health_bad_value(where, "health_eth",
							   val, acc, err,
							   errlen);
		}
		if (!ifname_ok(tok))
			return te_health_bad_value(where, "health_eth", tok,
						   acc, err, errlen);
		for (i = 0; i < n; i++)
			if (!strcmp(eth[i].name, tok))
				return te_health_bad_value(
					where, "health_eth", tok,
					"each interface once", err, errlen);
		te_strlcpy(eth[n].name, tok, sizeof(eth[n].name));
		eth[n++].min_mbps = (unsigned long)v;
	}
	memcpy(p->eth, eth, sizeof(eth));
	p->n_eth = n;
	return 0;
}

static int parse_action(struct te_health_policy *p, int check, const char *key,
			const char *val, const char *where, char *err,
			size_t errlen)
{
	int a;

	for (a = TE_HA_WARN; a <= TE_HA_DRAIN; a++)
		if (!strcmp(val, action_names[a])) {
			p->action[check] = (enum te_health_action)a;
			p->given |= (unsigned)TE_HK_ACTION_IB << check;
			return 1;
		}
	return te_health_bad_value(where, key, val, "drain, exclude, warn", err,
				   errlen);
}

/* The keys with a number or a word. 1, or -1. */
static int set_scalar(struct te_health_policy *p, const char *key,
		      const char *val, const char *where, char *err,
		      size_t errlen)
{
	uint64_t v;

	if (!strcmp(key, "health_ib_rate")) {
		if (te_parse_u64(val, TE_HEALTH_IB_RATE_MAX, &v) < 0)
			return te_health_bad_value(
				where, key, val,
				"0 (any rate) to 100000 (Gb/s)", err, errlen);
		p->ib_min_gbps = (unsigned)v;
		p->given |= TE_HK_IB_RATE;
		return 1;
	}
	if (!strcmp(key, "health_timeout")) {
		if (te_parse_u64(val, TE_HEALTH_TIMEOUT_MAX, &v) < 0 || !v)
			return te_health_bad_value(where, key, val,
						   "1 to 300 (seconds)", err,
						   errlen);
		p->timeout_s = (unsigned)v;
		p->given |= TE_HK_TIMEOUT;
		return 1;
	}
	if (strcmp(val, "yes") && strcmp(val, "no"))
		return te_health_bad_value(where, key, val, "yes, no", err,
					   errlen);
	p->user_may_weaken = !strcmp(val, "yes");
	p->given |= TE_HK_USER_WEAKER;
	return 1;
}

/* health_nvml=PATH: an absolute path of printable bytes, no "..", no
 * blank; the loader checks its owner and mode when it loads it. 1, or
 * -1. */
static int set_nvml(struct te_health_policy *p, const char *val,
		    const char *where, char *err, size_t errlen)
{
	size_t l = te_strnlen_cap(val, sizeof(p->nvml));
	size_t i;

	for (i = 0; i < l; i++)
		if (val[i] <= ' ' || val[i] > '~')
			break;
	if (val[0] != '/' || l >= sizeof(p->nvml) || i < l ||
	    strstr(val, "/../") || (l >= 3 && !strcmp(val + l - 3, "/..")))
		return te_health_bad_value(
			where, "health_nvml", val,
			"an absolute path to NVML's library (at most "
			"255 bytes, no '..')",
			err, errlen);
	te_strlcpy(p->nvml, val, sizeof(p->nvml));
	p->given |= TE_HK_NVML;
	return 1;
}

/* health_hook=PATH (te_health_hook_path_ok), or none: 1, or -1. The
 * path adds "hook" to the checks; none takes it away. Its owner and mode
 * are checked when it runs. */
static int set_hook(struct te_health_policy *p, const char *val,
		    const char *where, char *err, size_t errlen)
{
	if (!strcmp(val, "none")) {
		p->hook[0] = '\0';
		p->checks &= ~(1u << TE_HC_HOOK);
	} else if (te_health_hook_path_ok(val)) {
		te_strlcpy(p->hook, val, sizeof(p->hook));
		p->checks |= 1u << TE_HC_HOOK;
	} else {
		return te_health_bad_value(
			where, "health_hook", val,
			"an absolute path to the site's hook (at most 255 "
			"printable bytes, no blank, no '..') or none",
			err, errlen);
	}
	p->given |= TE_HK_HOOK;
	return 1;
}

/* health_ib_ports=DEV:PORT[,DEV:PORT...]: 1, or -1. */
static int set_ib_ports(struct te_health_policy *p, const char *val,
			const char *where, char *err, size_t errlen)
{
	static const char acc[] = "DEV:PORT[,DEV:PORT...] (at most 16; PORT "
				  "1 to 65535)";
	struct te_health_ib_port ports[TE_HEALTH_IB_PORTS_MAX];
	char buf[ITEM_MAX], *save = NULL, *tok, *colon;
	int n = 0;
	uint64_t v;

	if (te_strlcpy(buf, val, sizeof(buf)) >= sizeof(buf) || !buf[0])
		return te_health_bad_value(where, "health_ib_ports", val, acc,
					   err, errlen);
	memset(ports, 0, sizeof(ports));
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		colon = strchr(tok, ':');
		if (n >= TE_HEALTH_IB_PORTS_MAX || !colon)
			return te_health_bad_value(where, "health_ib_ports",
						   val, acc, err, errlen);
		*colon = '\0';
		if (te_parse_u64(colon + 1, 65535, &v) < 0 || !v ||
		    !te_word_valid(tok, sizeof(ports[n].dev), "-_.") ||
		    !strcmp(tok, ".") || !strcmp(tok, ".."))
			return te_health_bad_value(where, "health_ib_ports",
						   val, acc, err, errlen);
		te_strlcpy(ports[n].dev, tok, sizeof(ports[n].dev));
		ports[n++].port = (unsigned)v;
	}
	memcpy(p->ib_ports, ports, sizeof(ports));
	p->n_ib_ports = n;
	p->given |= TE_HK_IB_PORTS;
	return 1;
}

int te_health_policy_set(struct te_health_policy *p, const char *key,
			 const char *val, const char *where, char *err,
			 size_t errlen)
{
	int i;

	if (!strcmp(key, "health")) {
		if (parse_checks(p, val, where, err, errlen) < 0)
			return -1;
		p->given |= TE_HK_CHECKS;
		return 1;
	}
	if (!strcmp(key, "health_eth")) {
		if (parse_eth(p, val, where, err, errlen) < 0)
			return -1;
		p->given |= TE_HK_ETH;
		return 1;
	}
	for (i = 0; i < TE_HC_COUNT; i++) {
		char name[32];

		te_snprintf(name, sizeof(name), "health_%s_action",
			    check_names[i]);
		if (!strcmp(key, name))
			return parse_action(p, i, key, val, where, err, errlen);
	}
	if (!strcmp(key, "health_gpu_count")) {
		uint64_t v;

		if (te_parse_u64(val, 1024, &v) < 0)
			return te_health_bad_value(
				where, key, val, "0 (not said) to 1024 (GPUs)",
				err, errlen);
		p->gpu_count = (unsigned)v;
		p->given |= TE_HK_GPU_COUNT;
		return 1;
	}
	if (!strcmp(key, "health_ib_ports"))
		return set_ib_ports(p, val, where, err, errlen);
	if (!strcmp(key, "health_nvml"))
		return set_nvml(p, val, where, err, errlen);
	if (!strcmp(key, "health_hook"))
		return set_hook(p, val, where, err, errlen);
	if (!strcmp(key, "health_ib_rate") || !strcmp(key, "health_timeout") ||
	    !strcmp(key, "health_user_weaker"))
		return set_scalar(p, key, val, where, err, errlen);
	i = te_health_storage_key_set(p, key, val, where, err, errlen);
	return i ? i : te_health_gpu_key_set(p, key, val, where, err, errlen);
}

/* One item of te_health_policy_parse. */
static int parse_item(struct te_health_policy *p, char *item, const char *where,
		      char *err, size_t errlen)
{
	char *eq = strchr(item, '='), q[64];
	int rc;

	te_quote(q, sizeof(q), item);
	if (!eq || eq == item)
		return te_err(err, errlen, "%s: '%s' is not key=value", where,
			      q);
	*eq = '\0';
	rc = te_health_policy_set(p, item, eq + 1, where, err, errlen);
	if (rc == 0) {
		te_quote(q, sizeof(q), item);
		return te_err(err, errlen, "%s: unknown key '%s'; accepted: %s",
			      where, q, KEYS_ACCEPTED);
	}
	return rc < 0 ? -1 : 0;
}

int te_health_policy_parse(struct te_health_policy *p, const char *text,
			   size_t len, const char *where, char *err,
			   size_t errlen)
{
	char item[ITEM_MAX];
	size_t i = 0, n;

	while (i < len && text[i]) {
		char c = text[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			i++;
			continue;
		}
		if (c == '#') {
			while (i < len && text[i] && text[i] != '\n')
				i++;
			continue;
		}
		for (n = 0; i < len && text[i] && !strchr(" \t\r\n", text[i]);
		     i++, n++)
			if (n + 1 < sizeof(item))
				item[n] = text[i];
		if (n + 1 > sizeof(item))
			return te_err(err, errlen,
				      "%s: an item is longer than %zu bytes",
				      where, sizeof(item) - 1);
		item[n] = '\0';
		if (parse_item(p, item, where, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* The site's checks as a list, "ib,eth" or "none". */
static void checks_text(unsigned checks, char *buf, size_t len)
{
	int i;

	buf[0] = '\0';
	for (i = 0; i < TE_HC_COUNT; i++)
		if (checks & (1u << i))
			te_appendf(buf, len, "%s%s", buf[0] ? "," : "",
				   check_names[i]);
	if (!buf[0])
		te_strlcpy(buf, "none", len);
}

static const struct te_health_eth_if *eth_find(const struct te_health_policy *p,
					       const char *name)
{
	int i;

	for (i = 0; i < p->n_eth; i++)
		if (!strcmp(p->eth[i].name, name))
			return &p->eth[i];
	return NULL;
}

/* The user's interfaces over the site's: each of the site's kept, at
 * least at its speed. */
static int merge_eth(const struct te_health_policy *site,
		     const struct te_health_policy *user,
		     struct te_health_policy *out, char *err, size_t errlen)
{
	const struct te_health_eth_if *u;
	int i;

	if (!(user->given & TE_HK_ETH))
		return 0;
	if (site->user_may_weaken) {
		memcpy(out->eth, user->eth, sizeof(out->eth));
		out->n_eth = user->n_eth;
		return 0;
	}
	for (i = 0; i < site->n_eth; i++) {
		u = eth_find(user, site->eth[i].name);
		if (!u)
			return te_err(err, errlen,
				      "health_eth: the site checks %s: a user "
				      "may add interfaces or raise their "
				      "speed, not leave one out",
				      site->eth[i].name);
		if (u->min_mbps < site->eth[i].min_mbps)
			return te_err(err, errlen,
				      "health_eth: %s:%lu is below the site's "
				      "%lu Mb/s; accepted: %lu or more",
				      u->name, u->min_mbps,
				      site->eth[i].min_mbps,
				      site->eth[i].min_mbps);
	}
	memcpy(out->eth, user->eth, sizeof(out->eth));
	out->n_eth = user->n_eth;
	return 0;
}

/* The user's actions over the site's: raised, never to drain. */
static int merge_actions(const struct te_health_policy *site,
			 const struct te_health_policy *user,
			 struct te_health_policy *out, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < TE_HC_COUNT; i++) {
		enum te_health_action s = site->action[i], u = user->action[i];

		if (!(user->given & ((unsigned)TE_HK_ACTION_IB << i)))
			continue;
		if (u == TE_HA_DRAIN && s != TE_HA_DRAIN)
			return te_err(err, errlen,
				      "health_%s_action=drain: only the site "
				      "drains nodes; accepted for a user: "
				      "exclude, warn",
				      check_names[i]);
		if (u < s && !site->user_may_weaken)
			return te_err(err, errlen,
				      "health_%s_action=%s: below the site's "
				      "%s; accepted: %s%s",
				      check_names[i], action_names[u],
				      action_names[s], action_names[s],
				      s == TE_HA_WARN ? ", exclude" : "");
		out->action[i] = u;
	}
	return 0;
}

int te_health_policy_merge(const struct te_health_policy *site,
			   const struct te_health_policy *user,
			   struct te_health_policy *out, char *err,
			   size_t errlen)
{
	struct te_health_policy m; /* out only when all of it merged */
	char had[32], got[32];

	m = *site;
	if (user->given & (TE_HK_IB_PORTS | TE_HK_GPU_COUNT | TE_HK_HOOK))
		return te_err(err, errlen, "%s: only the site's policy sets it",
			      (user->given & TE_HK_IB_PORTS) ? "health_ib_ports"
			      : (user->given & TE_HK_HOOK)
				      ? "health_hook"
				      : "health_gpu_count");
	if (user->given & (TE_HK_TIMEOUT | TE_HK_USER_WEAKER | TE_HK_NVML))
		return te_err(err, errlen, "%s: only the site's policy sets it",
			      (user->given & TE_HK_TIMEOUT) ? "health_timeout"
			      : (user->given & TE_HK_NVML)
				      ? "health_nvml"
				      : "health_user_weaker");
	if (te_health_gpu_keys_user(user, err, errlen) < 0)
		return -1;
	if (user->given & TE_HK_CHECKS) {
		if ((site->checks & ~user->checks) && !site->user_may_weaken) {
			checks_text(site->checks, had, sizeof(had));
			checks_text(user->checks, got, sizeof(got));
			return te_err(err, errlen,
				      "health=%s: the site runs %s; a user may "
				      "add checks, not leave one out "
				      "(accepted: a list holding %s)",
				      got, had, had);
		}
		m.checks = site->user_may_weaken
				   ? user->checks
				   : (site->checks | user->checks);
	}
	if (user->given & TE_HK_IB_RATE) {
		if (user->ib_min_gbps < site->ib_min_gbps &&
		    !site->user_may_weaken)
			return te_err(err, errlen,
				      "health_ib_rate=%u: below the site's %u "
				      "Gb/s; accepted: %u to %u",
				      user->ib_min_gbps, site->ib_min_gbps,
				      site->ib_min_gbps, TE_HEALTH_IB_RATE_MAX);
		m.ib_min_gbps = user->ib_min_gbps;
	}
	if (merge_eth(site, user, &m, err, errlen) < 0 ||
	    merge_actions(site, user, &m, err, errlen) < 0 ||
	    te_health_storage_merge(site, user, &m, err, errlen) < 0)
		return -1;
	m.given = site->given | user->given;
	*out = m;
	return 0;
}

/* A result's value as a measure in tenths ("200 Gb/s", "25.5 Gb/s",
 * "10000 Mb/s" with unit the word after the number): 0 with *v, or -1
 * (a state, junk: not a threshold's failure). */
static int measured(const char *value, const char *unit, unsigned long *v)
{
	char num[24];
	const char *sp = strchr(value, ' ');
	uint64_t whole = 0, frac = 0;
	const char *dot;
	size_t l;

	/* "R Gb/s" or "R.F Gb/s" as the checks write it */

	if (!sp || strcmp(sp + 1, unit) || (size_t)(sp - value) >= sizeof(num))
		return -1;
	l = (size_t)(sp - value);
	memcpy(num, value, l);
	num[l] = '\0';
	dot = strchr(num, '.');
	if (dot) {
		num[dot - num] = '\0';
		if (te_parse_u64(dot + 1, 9, &frac) < 0)
			return -1;
	}
	if (te_parse_u64(num, 100000000, &whole) < 0)
		return -1;
	*v = (unsigned long)(whole * 10 + frac);
	return 0;
}

/* 1 when r, which failed, also fails under the site's own checks and
 * thresholds; 0 when only the user's stricter ones (or a check or an
 * interface only the user added) fail it. The ib and eth checks give a
 * failure's value as the measure only when the threshold alone failed
 * it (a state comes first). */
static int fails_for_site(const struct te_health_result *r,
			  const struct te_health_policy *site, int check)
{
	const struct te_health_eth_if *e;
	unsigned long v;

	if (!(site->checks & (1u << check)))
		return 0;
	if (check == TE_HC_IB)
		return measured(r->value, "Gb/s", &v) < 0 ||
		       v < (unsigned long)site->ib_min_gbps * 10;
	if (check == TE_HC_ETH) {
		e = eth_find(site, r->device);
		if (!e)
			return 0;
		if (!e->min_mbps && !strcmp(r->value, "speed unknown"))
			return 0;
		return measured(r->value, "Mb/s", &v) < 0 ||
		       v < e->min_mbps * 10;
	}
	return 1;
}

enum te_health_action
te_health_action_for(const struct te_health_result *r,
		     const struct te_health_policy *site,
		     const struct te_health_policy *merged)
{
	enum te_health_action a;
	int i;

	if (r->verdict != TE_HV_FAIL && r->verdict != TE_HV_ERROR)
		return TE_HA_WARN;
	for (i = 0; i < TE_HC_COUNT; i++)
		if (!strcmp(r->check, check_names[i]))
			break;
	if (i == TE_HC_COUNT)
		return TE_HA_WARN;
	a = merged->action[i];
	if (a == TE_HA_DRAIN && r->verdict == TE_HV_ERROR)
		return TE_HA_EXCLUDE; /* could not decide: never drains */
	if (a == TE_HA_DRAIN &&
	    (site->action[i] != TE_HA_DRAIN || !fails_for_site(r, site, i)))
		a = TE_HA_EXCLUDE;
	return a;
}
