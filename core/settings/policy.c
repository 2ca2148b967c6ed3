/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv admin policy: plugstack.conf arguments and policy files read
 * into defaults, bounds and enforced knobs, then cross-checked. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "settings/settings.h"
#include "settings/settings_int.h"
#include "util/strutil.h"

void te_policy_init(struct te_policy *p)
{
	int i;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < TE_S_COUNT; i++)
		p->def[i].word = TE_W_VALUE;
}

static void known_keys(char *buf, size_t len)
{
	int i;

	buf[0] = '\0';
	for (i = 0; i < TE_S_COUNT; i++)
		te_appendf(buf, len, "%s, ", te_settings[i].name);
	te_appendf(buf, len, "NAME.min, NAME.max, enforce, conf");
}

static int enforce_list(struct te_policy *p, const char *list,
			const char *where, int echo, char *err, size_t errlen)
{
	char buf[TE_POLICY_LINE_MAX];
	char *save = NULL, *tok;

	if (te_strlcpy(buf, list, sizeof(buf)) >= sizeof(buf))
		return te_err(err, errlen, "%s: enforce= list too long", where);
	if (!buf[0])
		return te_err(err, errlen,
			      "%s: enforce= needs a list of "
			      "setting names",
			      where);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int id = te_setting_find(te_trim(tok));

		if (id < 0) {
			char q[64], keys[512];

			known_keys(keys, sizeof(keys));
			if (!echo)
				return te_err(err, errlen,
					      "%s: enforce=: unknown "
					      "setting name; accepted: %s",
					      where, keys);
			te_quote(q, sizeof(q), tok);
			return te_err(err, errlen,
				      "%s: enforce=: unknown setting "
				      "'%s'; accepted: %s",
				      where, q, keys);
		}
		p->enforced[id] = 1;
		te_strlcpy(p->enforce_where[id], where,
			   sizeof(p->enforce_where[id]));
	}
	return 0;
}

/* item's key (trimmed) into key[0..keylen) and its value, blanks skipped
 * at its start. 0, or -1 with err: no key=value, or the key too long. */
static int item_split(const char *item, const char *where, int echo, char *key,
		      size_t keylen, const char **valp, char *err,
		      size_t errlen)
{
	const char *eq = strchr(item, '=');
	const char *val;
	char q[96];
	size_t klen;

	te_quote(q, sizeof(q), item);
	if (!eq || eq == item) {
		if (!echo)
			te_snprintf(err, errlen, "%s: not key=value", where);
		else
			te_snprintf(err, errlen, "%s: '%s' is not key=value",
				    where, q);
		return -1;
	}
	klen = (size_t)(eq - item);
	if (klen >= keylen) {
		if (!echo)
			te_snprintf(err, errlen, "%s: key too long", where);
		else
			te_snprintf(err, errlen, "%s: key too long in '%s'",
				    where, q);
		return -1;
	}
	memcpy(key, item, klen);
	key[klen] = '\0';
	te_trim(key);
	val = eq + 1;
	while (*val == ' ' || *val == '\t')
		val++;
	*valp = val;
	return 0;
}

/* KEY.min=N or KEY.max=N: a bound of the numeric setting id. */
static int item_bound(struct te_policy *p, int id, const char *key, int is_min,
		      const char *val, const char *where, int echo, char *err,
		      size_t errlen)
{
	uint64_t n;

	if (te_settings[id].type != TE_T_UINT &&
	    te_settings[id].type != TE_T_SIGAT &&
	    te_settings[id].type != TE_T_CODELIST)
		return te_err(err, errlen,
			      "%s: %s.%s: only "
			      "numeric settings have bounds",
			      where, key, is_min ? "min" : "max");
	if (te_parse_u64(val, te_settings[id].hi, &n) < 0 ||
	    n < te_settings[id].lo) {
		char qv[96] = "", quoted[90];

		if (echo) {
			te_quote(quoted, sizeof(quoted), val);
			te_snprintf(qv, sizeof(qv), " '%s'", quoted);
		}
		return te_err(err, errlen,
			      "%s: %s.%s: invalid "
			      "bound%s; accepted: %llu to %llu",
			      where, key, is_min ? "min" : "max", qv,
			      (unsigned long long)te_settings[id].lo,
			      (unsigned long long)te_settings[id].hi);
	}
	if (is_min) {
		p->has_min[id] = 1;
		p->min[id] = n;
		te_strlcpy(p->min_where[id], where, sizeof(p->min_where[id]));
	} else {
		p->has_max[id] = 1;
		p->max[id] = n;
		te_strlcpy(p->max_where[id], where, sizeof(p->max_where[id]));
	}
	return 0;
}

/* KEY=VALUE, KEY.min=N or KEY.max=N for a known setting. key loses its
 * ".min" or ".max". */
static int item_setting(struct te_policy *p, char *key, const char *val,
			const char *where, int echo, char *err, size_t errlen)
{
	char *dot = strrchr(key, '.');
	char msg[TE_ERR_MAX];
	int is_min = 0, is_max = 0;
	int id;

	if (dot && strcmp(dot, ".min") == 0)
		is_min = 1;
	else if (dot && strcmp(dot, ".max") == 0)
		is_max = 1;
	if (is_min || is_max)
		*dot = '\0';
	id = te_setting_find(key);
	if (id < 0) {
		char keys[512], qk[96];

		known_keys(keys, sizeof(keys));
		if (!echo)
			return te_err(err, errlen,
				      "%s: unknown key; "
				      "accepted: %s",
				      where, keys);
		te_quote(qk, sizeof(qk), key);
		return te_err(err, errlen,
			      "%s: unknown key '%s%s'; "
			      "accepted: %s",
			      where, qk,
			      is_min   ? ".min"
			      : is_max ? ".max"
				       : "",
			      keys);
	}
	if (is_min || is_max)
		return item_bound(p, id, key, is_min, val, where, echo, err,
				  errlen);
	if (te_value_parse(id, val, 0, &p->def[id], msg, sizeof(msg)) < 0) {
		if (!echo) {
			te_setting_accepted(id, NULL, msg, sizeof(msg));
			return te_err(err, errlen,
				      "%s: %s: invalid value; "
				      "accepted: %s",
				      where, key, msg);
		}
		return te_err(err, errlen, "%s: %s: %s", where, key, msg);
	}
	p->def[id].src = TE_SRC_ADMIN;
	te_strlcpy(p->def[id].origin, where, sizeof(p->def[id].origin));
	return 0;
}

/* A node health key (health, health_*): kept as given, for the health
 * room to check (te_health_site_load) and the job prolog to read; here
 * only bounded, printable and without blanks. From a policy file (echo
 * 0) a message names the key's start, never the value. */
static int item_health(struct te_policy *p, const char *key, const char *val,
		       const char *where, int echo, char *err, size_t errlen)
{
	struct te_policy_health *h = &p->health;
	size_t used = strlen(h->items), need = strlen(key) + strlen(val) + 2;

	if (strpbrk(val, " \t\r\n") || !te_is_printable(val, TE_VALUE_MAX))
		return te_err(err, errlen,
			      "%s: %.40s: %s; accepted: printable text "
			      "without blanks",
			      where, key,
			      echo ? "blanks or control characters in the "
				     "value"
				   : "invalid value");
	if (used + need >= sizeof(h->items))
		return te_err(err, errlen,
			      "%s: %.40s: the health keys take more than %zu "
			      "bytes in all",
			      where, key, sizeof(h->items) - 1);
	te_snprintf(h->items + used, sizeof(h->items) - used, "%s%s=%s",
		    used ? " " : "", key, val);
	h->n++;
	return 0;
}

int te_policy_item(struct te_policy *p, const char *item, const char *where,
		   int allow_conf, char *err, size_t errlen)
{
	char key[128];
	const char *val;
	/* A policy file's text is never repeated in a message: the file may
	 * be one users cannot read (messages reach the job's output). Only
	 * names of known settings and validated values are shown. */
	int echo = allow_conf;

	if (item_split(item, where, echo, key, sizeof(key), &val, err, errlen))
		return -1;
	if (strcmp(key, "enforce") == 0)
		return enforce_list(p, val, where, echo, err, errlen);
	if (strcmp(key, "conf") == 0) {
		if (!allow_conf)
			return te_err(err, errlen,
				      "%s: conf= is only accepted "
				      "in plugstack.conf (policy files do not "
				      "nest)",
				      where);
		return te_policy_file(p, val, err, errlen);
	}
	if (!strcmp(key, "health") || !strncmp(key, "health_", 7))
		return item_health(p, key, val, where, echo, err, errlen);
	return item_setting(p, key, val, where, echo, err, errlen);
}

int te_policy_args(struct te_policy *p, int ac, char **av, char *err,
		   size_t errlen)
{
	int i;

	for (i = 0; i < ac; i++) {
		char where[64];

		if (!av[i])
			continue;
		te_snprintf(where, sizeof(where), "plugstack.conf argument %d",
			    i + 1);
		if (te_strnlen_cap(av[i], TE_POLICY_LINE_MAX) >
		    TE_POLICY_LINE_MAX) {
			return te_err(err, errlen,
				      "%s: longer than %d "
				      "characters",
				      where, TE_POLICY_LINE_MAX);
		}
		if (te_policy_item(p, av[i], where, 1, err, errlen) < 0)
			return -1;
	}
	return te_policy_finish(p, err, errlen);
}

int te_policy_buffer(struct te_policy *p, const char *buf, size_t len,
		     const char *name, char *err, size_t errlen)
{
	char line[TE_POLICY_LINE_MAX + 1];
	size_t pos = 0;
	unsigned lineno = 0;

	while (pos < len) {
		size_t end = pos, ll;
		char where[TE_ORIGIN_MAX], *l, *hash;

		while (end < len && buf[end] != '\n')
			end++;
		ll = end - pos;
		lineno++;
		te_snprintf(where, sizeof(where), "%.*s:%u", 120, name, lineno);
		if (ll > TE_POLICY_LINE_MAX)
			return te_err(err, errlen,
				      "%s: line longer than %d "
				      "characters",
				      where, TE_POLICY_LINE_MAX);
		memcpy(line, buf + pos, ll);
		line[ll] = '\0';
		pos = end + 1;
		if (memchr(buf + (pos - ll - 1), '\0', ll))
			return te_err(err, errlen,
				      "%s: NUL byte: not a text "
				      "file",
				      where);
		/* '#' starts a comment at the start of a line or after a
		 * blank, so values may still contain '#'. */
		for (hash = line; (hash = strchr(hash, '#')); hash++)
			if (hash == line || hash[-1] == ' ' ||
			    hash[-1] == '\t') {
				*hash = '\0';
				break;
			}
		l = te_trim(line);
		if (!*l)
			continue;
		if (!te_is_printable(l, TE_POLICY_LINE_MAX))
			return te_err(err, errlen,
				      "%s: control or non-ASCII "
				      "characters",
				      where);
		if (te_policy_item(p, l, where, 0, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int te_policy_file(struct te_policy *p, const char *path, char *err,
		   size_t errlen)
{
	struct stat st;
	char *buf = NULL, q[128];
	size_t got = 0;
	int fd, rc = -1;

	te_quote(q, sizeof(q), path);
	if (path[0] != '/')
		return te_err(err, errlen,
			      "conf=%s: the policy file must be an "
			      "absolute path",
			      q);
	/* Not through a link: whoever may change the link would choose
	 * what root reads as the site policy. */
	fd = open(path,
		  O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0 && errno == ELOOP)
		return te_err(err, errlen,
			      "conf=%s: is a symbolic link; the "
			      "policy file must be named by its own path",
			      q);
	if (fd < 0)
		return te_err(err, errlen,
			      "conf=%s: cannot open the policy "
			      "file: %s",
			      q, strerror(errno));
	if (fstat(fd, &st) < 0) {
		te_snprintf(err, errlen, "conf=%s: %s", q, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		te_snprintf(err, errlen, "conf=%s: not a regular file", q);
		goto out;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		te_snprintf(err, errlen,
			    "conf=%s: owned by uid %u; the policy "
			    "file must be owned by root",
			    q, (unsigned)st.st_uid);
		goto out;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		te_snprintf(err, errlen,
			    "conf=%s: writable by group or "
			    "others (mode %04o); users could change the site "
			    "policy: chmod go-w",
			    q, (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (st.st_size > TE_POLICY_FILE_MAX) {
		te_snprintf(err, errlen,
			    "conf=%s: %lld bytes, larger than "
			    "the %d byte limit for a policy file",
			    q, (long long)st.st_size, TE_POLICY_FILE_MAX);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		te_snprintf(err, errlen, "conf=%s: out of memory", q);
		goto out;
	}
	while (got <= (size_t)st.st_size) { /* read one byte past: growth */
		ssize_t n = read(fd, buf + got, (size_t)st.st_size + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			te_snprintf(err, errlen, "conf=%s: read: %s", q,
				    strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > (size_t)st.st_size) {
		te_snprintf(err, errlen,
			    "conf=%s: the file grew while being "
			    "read",
			    q);
		goto out;
	}
	p->nfiles++;
	rc = te_policy_buffer(p, buf, got, path, err, errlen);
out:
	free(buf);
	close(fd);
	return rc;
}

int te_policy_finish(struct te_policy *p, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < TE_S_COUNT; i++) {
		const char *name = te_settings[i].name;
		char msg[TE_ERR_MAX];

		if (p->has_min[i] && p->has_max[i] && p->min[i] > p->max[i])
			return te_err(err, errlen,
				      "%s: %s.min=%llu is greater "
				      "than %s.max=%llu (%s)",
				      p->min_where[i], name,
				      (unsigned long long)p->min[i], name,
				      (unsigned long long)p->max[i],
				      p->max_where[i]);
		if (p->def[i].set &&
		    te_value_check_bounds(p, i, &p->def[i], msg, sizeof(msg)) <
			    0) {
			return te_err(err, errlen,
				      "%s: %s=%s: the site default "
				      "is outside the site bounds (%s)",
				      p->def[i].origin, name, p->def[i].text,
				      msg);
		}
		if (p->enforced[i] && !p->def[i].set &&
		    !te_settings[i].builtin) {
			return te_err(err, errlen,
				      "%s: enforce=%s needs a value: "
				      "add %s=VALUE",
				      p->enforce_where[i], name, name);
		}
		if (p->enforced[i] && !p->def[i].set) {
			struct te_value *v = &p->def[i];

			if (te_value_parse(i, te_settings[i].builtin, 0, v, msg,
					   sizeof(msg)) < 0) {
				return te_err(err, errlen,
					      "%s: built-in %s: %s",
					      p->enforce_where[i], name, msg);
			}
			v->src = TE_SRC_BUILTIN;
			te_strlcpy(v->origin, "built-in", sizeof(v->origin));
		}
	}
	return 0;
}
