/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv precedence: policy + user options + job environment resolved into
 * each knob's effective value; the explain report; TRAINENV_SETTINGS. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "settings/settings.h"
#include "settings/settings_int.h"
#include "util/strutil.h"

static void add_warning(struct te_config *cfg, const char *msg)
{
	if (cfg->nwarn < TE_WARN_MAX)
		te_strlcpy(cfg->warn[cfg->nwarn++], msg, TE_ERR_MAX);
}

/* 1 when val is what an enclosing trainenv wrote for setting id.
 * TRAINENV_SETTINGS is in the user's hands: a value outside this site's
 * bounds was never trainenv's, whatever it claims, and stays the user's
 * (and is refused as such). */
static int set_by_trainenv(const struct te_policy *pol,
			   const struct te_config *inherited, int id,
			   const char *val)
{
	const struct te_value *iv;
	struct te_value tmp;
	char msg[TE_ERR_MAX];

	if (!inherited)
		return 0;
	iv = &inherited->v[id];
	if (!iv->set || iv->src == TE_SRC_ENV || iv->src == TE_SRC_UNSET)
		return 0;
	if (te_value_parse(id, iv->text, 0, &tmp, msg, sizeof(msg)) < 0 ||
	    te_value_check_bounds(pol, id, &tmp, msg, sizeof(msg)) < 0)
		return 0;
	return strcmp(te_value_env_text(id, &tmp), val) == 0;
}

int te_resolve(const struct te_policy *pol, const char *const *user_opt,
	       te_getenv_fn getenv_fn, void *ctx,
	       const struct te_config *inherited, struct te_config *cfg,
	       char *err, size_t errlen)
{
	int i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < TE_S_COUNT; i++) {
		const struct te_setting *s = &te_settings[i];
		struct te_value *v = &cfg->v[i];
		const char *opt = user_opt ? user_opt[i] : NULL;
		char optname[64], msg[TE_ERR_MAX];
		int e;

		te_option_name(i, optname, sizeof(optname));
		v->word = TE_W_VALUE;

		if (pol->enforced[i]) {
			*v = pol->def[i];
			v->src = TE_SRC_ENFORCED;
			if (opt) {
				struct te_value u;

				if (te_value_parse(i, opt, 0, &u, msg,
						   sizeof(msg)) < 0 ||
				    strcmp(u.text, v->text) != 0) {
					char q[96];

					te_quote(q, sizeof(q), opt);
					te_snprintf(msg, sizeof(msg),
						    "--%s=%s ignored: the site "
						    "enforces %s=%s",
						    optname, q, s->name,
						    v->text);
					add_warning(cfg, msg);
				}
			}
			continue;
		}
		if (opt) {
			if (te_value_parse_pol(i, opt, 0, pol, v, msg,
					       sizeof(msg)) < 0 ||
			    te_value_check_bounds(pol, i, v, msg, sizeof(msg)) <
				    0) {
				return te_err(err, errlen, "--%s: %s", optname,
					      msg);
			}
			v->src = TE_SRC_OPTION;
			te_snprintf(v->origin, sizeof(v->origin), "--%s",
				    optname);
			continue;
		}
		for (e = 0; s->env && s->env[e] && getenv_fn; e++) {
			const char *val = getenv_fn(ctx, s->env[e]);

			if (!val || set_by_trainenv(pol, inherited, i, val))
				continue;
			if (te_value_parse_pol(i, val, 1, pol, v, msg,
					       sizeof(msg)) < 0 ||
			    te_value_check_bounds(pol, i, v, msg, sizeof(msg)) <
				    0) {
				return te_err(err, errlen,
					      "%s in the job "
					      "environment (setting %s): %s",
					      s->env[e], s->name, msg);
			}
			v->src = TE_SRC_ENV;
			te_strlcpy(v->origin, s->env[e], sizeof(v->origin));
			break;
		}
		if (v->set)
			continue;
		if (pol->def[i].set) {
			*v = pol->def[i];
			continue;
		}
		if (s->builtin) {
			if (te_value_parse(i, s->builtin, 0, v, msg,
					   sizeof(msg)) < 0) {
				return te_err(err, errlen, "built-in %s: %s",
					      s->name, msg);
			}
			v->src = TE_SRC_BUILTIN;
			te_strlcpy(v->origin, "built-in", sizeof(v->origin));
			continue;
		}
		memset(v, 0, sizeof(*v));
		v->word = TE_W_VALUE;
		v->src = TE_SRC_UNSET;
	}
	return 0;
}

/* ---------------------------------------------------------------- report */

const char *te_source_name(enum te_source s)
{
	switch (s) {
	case TE_SRC_UNSET:
		return "not set";
	case TE_SRC_BUILTIN:
		return "built-in";
	case TE_SRC_ADMIN:
		return "admin default";
	case TE_SRC_ENV:
		return "environment";
	case TE_SRC_OPTION:
		return "option";
	case TE_SRC_ENFORCED:
		return "enforced";
	}
	return "?";
}

void te_explain_line(const struct te_config *cfg, int id, char *buf, size_t len)
{
	const struct te_value *v = &cfg->v[id];
	char q[TE_VALUE_MAX + 64], o[TE_ORIGIN_MAX + 8];

	te_quote(q, sizeof(q), v->set ? v->text : "(unset)");
	o[0] = '\0';
	if (v->src == TE_SRC_UNSET)
		te_strlcpy(o, "trainenv leaves it alone", sizeof(o));
	else if (v->src != TE_SRC_BUILTIN && v->origin[0])
		te_quote(o, sizeof(o), v->origin);
	te_snprintf(buf, len, "%-26s = %-12s (%s%s%s)", te_settings[id].name, q,
		    te_source_name(v->src), o[0] ? ": " : "", o);
}

/* Encoded form: space separated "name:source:value:origin" items with the
 * value and origin percent-encoded. */
int te_config_encode(const struct te_config *cfg, char *buf, size_t len)
{
	int i;

	if (!len)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < TE_S_COUNT; i++) {
		const struct te_value *v = &cfg->v[i];
		char val[3 * TE_VALUE_MAX + 1], org[3 * TE_ORIGIN_MAX + 1];

		if (te_pct_encode(val, sizeof(val), v->set ? v->text : "") <
			    0 ||
		    te_pct_encode(org, sizeof(org), v->origin) < 0)
			return -1;
		if (te_appendf(buf, len, "%s%s:%d:%s:%s", i ? " " : "",
			       te_settings[i].name, (int)v->src, val, org) < 0)
			return -1;
	}
	return 0;
}

/* Splits [s, end) at its first three ':' into four fields. */
static int split4(const char *s, const char *end, const char *f[4],
		  size_t flen[4])
{
	int nf = 0;

	f[0] = s;
	for (const char *c = s; c < end; c++) {
		if (*c != ':')
			continue;
		if (nf == 3)
			return -1;
		flen[nf] = (size_t)(c - f[nf]);
		f[++nf] = c + 1;
	}
	if (nf != 3)
		return -1;
	flen[3] = (size_t)(end - f[3]);
	return 0;
}

/* A decoded value against its row: the same parse as for the user's
 * text, so that num, num2 and word hold what the plugin had (the
 * environment's forms too, "1" for "on": the plugin writes the canonical
 * text, but a reader must not refuse what resolve itself accepts). */
static int check_decoded(int id, struct te_value *v, char *err, size_t errlen)
{
	struct te_value p;
	char why[TE_ERR_MAX];

	if (te_value_parse(id, v->text, 1, &p, why, sizeof(why)) < 0)
		return te_err(err, errlen, "%s: item '%s': %s", TE_SETTINGS_ENV,
			      te_settings[id].name, why);
	te_strlcpy(v->text, p.text, sizeof(v->text));
	v->num = p.num;
	v->num2 = p.num2;
	v->word = p.word;
	return 0;
}

int te_config_decode(struct te_config *cfg, const char *s, char *err,
		     size_t errlen)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int i = 0; i < TE_S_COUNT; i++)
		cfg->v[i].word = TE_W_VALUE;
	if (te_strnlen_cap(s, TE_SETTINGS_ENV_MAX) > TE_SETTINGS_ENV_MAX)
		return te_err(err, errlen, "%s is too long", TE_SETTINGS_ENV);
	while (*s) {
		const char *end = strchr(s, ' '), *f[4];
		size_t flen[4];
		char name[64], num[8];
		uint64_t src;
		int id;

		if (!end)
			end = s + strlen(s);
		if (split4(s, end, f, flen) < 0 || flen[0] == 0 ||
		    flen[0] >= sizeof(name) || flen[1] == 0 ||
		    flen[1] >= sizeof(num)) {
			return te_err(err, errlen, "%s: malformed item",
				      TE_SETTINGS_ENV);
		}
		memcpy(name, f[0], flen[0]);
		name[flen[0]] = '\0';
		memcpy(num, f[1], flen[1]);
		num[flen[1]] = '\0';
		if (te_parse_u64(num, TE_SRC_ENFORCED, &src) < 0)
			return te_err(err, errlen,
				      "%s: bad source in item '%s'",
				      TE_SETTINGS_ENV, name);
		id = te_setting_find(name);
		if (id >= 0) { /* unknown names: from a newer trainenv */
			struct te_value *v = &cfg->v[id];

			if (te_pct_decode(v->text, sizeof(v->text), f[2],
					  flen[2]) < 0 ||
			    te_pct_decode(v->origin, sizeof(v->origin), f[3],
					  flen[3]) < 0) {
				return te_err(err, errlen,
					      "%s: bad encoding in "
					      "item '%s'",
					      TE_SETTINGS_ENV, name);
			}
			v->src = (enum te_source)src;
			v->set = v->src != TE_SRC_UNSET;
			if (v->set && check_decoded(id, v, err, errlen) < 0)
				return -1;
		}
		s = *end ? end + 1 : end;
	}
	return 0;
}

int te_inherited_config(te_getenv_fn getenv_fn, void *ctx,
			struct te_config *out)
{
	const char *s = getenv_fn(ctx, TE_SETTINGS_ENV);
	char err[TE_ERR_MAX];

	if (!s || te_config_decode(out, s, err, sizeof(err)) < 0)
		return -1;
	return 0;
}

unsigned long te_setting_barrier_s(const struct te_config *cfg,
				   const struct te_policy *site)
{
	const struct te_value *v = &cfg->v[TE_S_BARRIER];

	if (v->set && v->word == TE_W_VALUE && v->num > 0)
		return (unsigned long)v->num;
	if (site && site->def[TE_S_BARRIER].set &&
	    site->def[TE_S_BARRIER].word == TE_W_VALUE &&
	    site->def[TE_S_BARRIER].num > 0)
		return (unsigned long)site->def[TE_S_BARRIER].num;
	return (unsigned long)te_setting_builtin_num(TE_S_BARRIER);
}

const char *te_record_dir(const struct te_config *cfg)
{
	const struct te_value *d = &cfg->v[TE_S_NCCL_DUMP_DIR];
	const struct te_value *r = &cfg->v[TE_S_RECORD_DIR];

	if (d->set)
		return d->text;
	return r->set && r->word == TE_W_VALUE ? r->text : NULL;
}

const char *te_record_dir_option(const struct te_config *cfg)
{
	return cfg->v[TE_S_NCCL_DUMP_DIR].set ? "--train-nccl-dump-dir"
					      : "record-dir";
}
