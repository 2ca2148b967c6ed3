/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv settings: one value text checked against its knob (type, hard
 * limits, site bounds) and turned into its canonical form. */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "settings/settings.h"
#include "settings/settings_int.h"
#include "util/strutil.h"

static int word_index(const char *const *w, const char *text)
{
	int i;

	for (i = 0; w && w[i]; i++)
		if (strcmp(w[i], text) == 0)
			return i;
	return -1;
}

static int bool_parse(const char *text)
{
	static const char *const yes[] = { "on", "yes", "true", "1", NULL };
	static const char *const no[] = { "off", "no", "false", "0", NULL };
	int i;

	for (i = 0; yes[i]; i++)
		if (strcasecmp(text, yes[i]) == 0)
			return 1;
	for (i = 0; no[i]; i++)
		if (strcasecmp(text, no[i]) == 0)
			return 0;
	return -1;
}

static void set_word(const struct te_setting *s, struct te_value *v, int w)
{
	v->set = 1;
	v->word = w;
	v->num = 0;
	te_strlcpy(v->text, s->words[w], sizeof(v->text));
}

/* "word,mod,mod": each modifier at most once; canonical order is the
 * table's. */
static int enum_mods_parse(const struct te_setting *s, const char *text,
			   struct te_value *v)
{
	char buf[128], *save = NULL, *tok;
	uint64_t mask = 0;
	int w, i;

	if (te_strlcpy(buf, text, sizeof(buf)) >= sizeof(buf))
		return -1;
	tok = strtok_r(buf, ",", &save);
	if (!tok || (w = word_index(s->words, tok)) < 0 || text[0] == ',')
		return -1;
	while ((tok = strtok_r(NULL, ",", &save))) {
		int m = word_index(s->mods, tok);

		if (m < 0 || (mask & (1ULL << m)))
			return -1;
		mask |= 1ULL << m;
	}
	if (strstr(text, ",,") || text[strlen(text) - 1] == ',')
		return -1;
	set_word(s, v, w);
	v->num = mask;
	for (i = 0; s->mods[i]; i++)
		if (mask & (1ULL << i))
			te_appendf(v->text, sizeof(v->text), ",%s", s->mods[i]);
	return 0;
}

static int range_parse(const struct te_setting *s, const char *text,
		       struct te_value *v)
{
	char lo[24], hi[24];
	const char *dash = strchr(text, '-');
	uint64_t a, b;
	size_t l;

	if (!dash || (l = (size_t)(dash - text)) >= sizeof(lo) ||
	    strlen(dash + 1) >= sizeof(hi))
		return -1;
	memcpy(lo, text, l);
	lo[l] = '\0';
	te_strlcpy(hi, dash + 1, sizeof(hi));
	if (te_parse_u64(lo, s->hi, &a) < 0 ||
	    te_parse_u64(hi, s->hi, &b) < 0 || a < s->lo || a > b)
		return -1;
	v->set = 1;
	v->num = a;
	v->num2 = b;
	te_snprintf(v->text, sizeof(v->text), "%llu-%llu",
		    (unsigned long long)a, (unsigned long long)b);
	return 0;
}

/* "USR1@100": the signals a training program can catch to save a
 * checkpoint; never KILL or STOP (nothing to catch) nor one the tasks may
 * be told to ignore. The "SIG" prefix is accepted, the text is canonical. */
static int sigat_parse(const struct te_setting *s, const char *text,
		       struct te_value *v)
{
	static const struct {
		const char *name;
		int num;
	} sigs[] = {
		{ "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 },
		{ "TERM", SIGTERM },
		{ "INT", SIGINT },
	};
	const char *at = strchr(text, '@');
	char name[8];
	size_t n, i;
	uint64_t secs;

	if (!at)
		return -1;
	n = (size_t)(at - text);
	if (n >= 3 && strncmp(text, "SIG", 3) == 0) {
		text += 3;
		n -= 3;
	}
	if (n == 0 || n >= sizeof(name))
		return -1;
	memcpy(name, text, n);
	name[n] = 0;
	if (te_parse_u64(at + 1, UINT64_MAX, &secs) < 0 || secs < s->lo ||
	    secs > s->hi)
		return -1;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (strcmp(name, sigs[i].name) == 0) {
			v->set = 1;
			v->num = secs;
			v->num2 = (uint64_t)sigs[i].num;
			v->word = TE_W_VALUE;
			te_snprintf(v->text, sizeof(v->text), "%s@%llu",
				    sigs[i].name, (unsigned long long)secs);
			return 0;
		}
	return -1;
}

/* Signals a task may be told to start with ignored. SIGUSR1/SIGUSR2 are
 * refused on purpose: PyTorch Lightning and submitit install their requeue
 * and checkpoint handlers only when the signal is not already ignored. */
static const struct {
	const char *name;
	int num;
} ignorable[] = {
	{ "PIPE", SIGPIPE }, { "TTIN", SIGTTIN },   { "TTOU", SIGTTOU },
	{ "XFSZ", SIGXFSZ }, { "WINCH", SIGWINCH }, { "URG", SIGURG },
};

/* Signals that --train-requeue may take for a node's fault (requeue-signals):
 * the kernel kills with SIGBUS on an uncorrectable memory error; the others
 * a site may list when its hardware shows that way. */
static const struct {
	const char *name;
	int num;
} fault_sigs[] = {
	{ "BUS", SIGBUS },   { "SEGV", SIGSEGV }, { "ILL", SIGILL },
	{ "FPE", SIGFPE },   { "ABRT", SIGABRT }, { "SYS", SIGSYS },
	{ "KILL", SIGKILL },
};

static int siglist_parse(int id, const char *text, struct te_value *v,
			 char *err, size_t errlen)
{
	int faults = id == TE_S_REQUEUE_SIGNALS;
	size_t ntab = faults ? sizeof(fault_sigs) / sizeof(fault_sigs[0])
			     : sizeof(ignorable) / sizeof(ignorable[0]);
	char buf[256], *save = NULL, *tok, q[64];
	uint64_t mask = 0;

	if (te_strlcpy(buf, text, sizeof(buf)) >= sizeof(buf))
		return te_err(err, errlen, "signal list too long");
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const char *n = tok;
		size_t i;
		int found = 0;

		if (strncasecmp(n, "SIG", 3) == 0)
			n += 3;
		for (i = 0; i < ntab; i++) {
			const char *name = faults ? fault_sigs[i].name
						  : ignorable[i].name;
			int num = faults ? fault_sigs[i].num : ignorable[i].num;

			if (strcasecmp(n, name) == 0) {
				mask |= 1ULL << num;
				found = 1;
			}
		}
		if (found)
			continue;
		te_quote(q, sizeof(q), tok);
		if (faults)
			te_snprintf(err, errlen,
				    "'%s' is not a signal that "
				    "names a node's fault; accepted: none, or "
				    "a comma-separated list of %s",
				    q, te_siglist_names(id));
		else if (!strcasecmp(n, "USR1") || !strcasecmp(n, "USR2"))
			te_snprintf(err, errlen,
				    "'%s' may not be ignored: "
				    "PyTorch Lightning and submitit skip their "
				    "requeue and checkpoint handlers when "
				    "SIGUSR1/SIGUSR2 start ignored",
				    q);
		else if (!strcasecmp(n, "HUP"))
			te_snprintf(err, errlen, "'%s': use sighup=ignore", q);
		else
			te_snprintf(err, errlen,
				    "'%s' is not a signal tasks "
				    "may ignore; accepted: none, or a "
				    "comma-separated list of PIPE, TTIN, TTOU, "
				    "XFSZ, WINCH, URG",
				    q);
		return -1;
	}
	if (!mask)
		return te_err(err, errlen,
			      "empty signal list; accepted: none, "
			      "or a comma-separated list of %s",
			      te_siglist_names(id));
	v->set = 1;
	v->word = TE_W_VALUE;
	v->num = mask;
	v->text[0] = '\0';
	for (size_t i = 0; i < ntab; i++) {
		const char *name = faults ? fault_sigs[i].name
					  : ignorable[i].name;
		int num = faults ? fault_sigs[i].num : ignorable[i].num;

		if (mask & (1ULL << num))
			te_appendf(v->text, sizeof(v->text), "%s%s",
				   v->text[0] ? "," : "", name);
	}
	return 0;
}

int te_code_reserved(uint64_t code)
{
	return code == 75 || code == 93 || code == 126 || code == 127;
}

/* "3,42,3": exit codes in [lo, hi], none reserved; the text sorted, each
 * once. 0, -1 with why for a reserved code (the caller adds what is
 * accepted), 1 when it is no such list (the caller says what is). */
static int codelist_parse(const struct te_setting *s, const char *text,
			  struct te_value *v, char *err, size_t errlen)
{
	unsigned char seen[256] = { 0 };
	const char *p = text;
	char item[8], q[16];
	uint64_t n;
	int c;

	if (!text[0] || text[0] == ',' || text[strlen(text) - 1] == ',')
		return 1;
	while ((p = te_list_next(p, item, sizeof(item)))) {
		if (te_parse_u64(item, 255, &n) < 0 || n < s->lo || n > s->hi)
			return 1;
		if (te_code_reserved(n)) {
			te_quote(q, sizeof(q), item);
			return te_err(err, errlen,
				      "'%s' is an exit code trainenv "
				      "reserves (%s), never a transient "
				      "fault",
				      q,
				      n == 75	? "a node failed its check "
						  "before training"
				      : n == 93 ? "do not restart"
						: "the shell's: the command "
						  "cannot run");
		}
		seen[n] = 1;
	}
	v->set = 1;
	v->word = TE_W_VALUE;
	v->text[0] = '\0';
	v->num = v->num2 = 0;
	for (c = 1; c < 256; c++) {
		if (!seen[c])
			continue;
		if (!v->num)
			v->num = (uint64_t)c;
		v->num2 = (uint64_t)c;
		te_appendf(v->text, sizeof(v->text), "%s%d",
			   v->text[0] ? "," : "", c);
	}
	return 0;
}

/* pol (may be NULL) only shapes the "accepted:" text of an error, so that a
 * user is told the site's bounds, not the hard limits. */
/* The text itself, whatever the setting: present, not empty, not too
 * long, printable ASCII. 0, or -1 with why (and what is accepted). */
static int text_checked(const char *text, const char *acc, char *err,
			size_t errlen)
{
	size_t len;

	if (!text)
		return te_err(err, errlen, "a value is required; accepted: %s",
			      acc);
	len = te_strnlen_cap(text, TE_VALUE_MAX - 1);
	if (len == 0)
		return te_err(err, errlen, "empty value; accepted: %s", acc);
	if (len > TE_VALUE_MAX - 1)
		return te_err(err, errlen,
			      "value longer than %d characters; "
			      "accepted: %s",
			      TE_VALUE_MAX - 1, acc);
	if (!te_is_printable(text, TE_VALUE_MAX))
		return te_err(err, errlen,
			      "value contains control or non-ASCII "
			      "characters; accepted: %s",
			      acc);
	return 0;
}

/* The text as the setting's type reads it: 0 when it is a value of the
 * type, 1 when it is not (the caller says what is accepted), -1 when the
 * type's own parser said why (a signal list). */
static int typed_parse(int id, const struct te_setting *s, const char *text,
		       struct te_value *v, char *err, size_t errlen)
{
	uint64_t n;
	int w;

	switch (s->type) {
	case TE_T_ENUM:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		if (s->mods && enum_mods_parse(s, text, v) == 0)
			return 0;
		break;
	case TE_T_BOOL:
		if ((w = bool_parse(text)) >= 0) {
			set_word(s, v, w ? TE_W_TRUE : TE_W_FALSE);
			return 0;
		}
		break;
	case TE_T_UINT:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		if (te_parse_u64(text, UINT64_MAX, &n) == 0 && n >= s->lo &&
		    n <= s->hi) {
			v->set = 1;
			v->num = n;
			te_snprintf(v->text, sizeof(v->text), "%llu",
				    (unsigned long long)n);
			return 0;
		}
		break;
	case TE_T_PATH:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		if (text[0] == '/') {
			v->set = 1;
			te_strlcpy(v->text, text, sizeof(v->text));
			return 0;
		}
		break;
	case TE_T_RANGE:
		if (range_parse(s, text, v) == 0)
			return 0;
		break;
	case TE_T_SIGAT:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		if (sigat_parse(s, text, v) == 0)
			return 0;
		break;
	case TE_T_SIGLIST:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		return siglist_parse(id, text, v, err, errlen);
	case TE_T_CODELIST:
		if ((w = word_index(s->words, text)) >= 0) {
			set_word(s, v, w);
			return 0;
		}
		return codelist_parse(s, text, v, err, errlen);
	}
	return 1;
}

int te_value_parse_pol(int id, const char *text, int from_env,
		       const struct te_policy *pol, struct te_value *v,
		       char *err, size_t errlen)
{
	const struct te_setting *s = &te_settings[id];
	char acc[256], q[96];
	int w, rc;

	memset(v, 0, sizeof(*v));
	v->word = TE_W_VALUE;
	te_setting_accepted(id, pol, acc, sizeof(acc));
	if (text_checked(text, acc, err, errlen) < 0)
		return -1;
	if (from_env && s->env_words &&
	    (w = word_index(s->env_words, text)) >= 0) {
		set_word(s, v, w);
		return 0;
	}
	rc = typed_parse(id, s, text, v, err, errlen);
	if (rc < 0 && s->type == TE_T_CODELIST)
		te_appendf(err, errlen, "; accepted: %s", acc);
	if (rc <= 0)
		return rc;
	te_quote(q, sizeof(q), text);
	te_snprintf(err, errlen, "invalid value '%s'; accepted: %s", q, acc);
	return -1;
}

int te_value_parse(int id, const char *text, int from_env, struct te_value *v,
		   char *err, size_t errlen)
{
	return te_value_parse_pol(id, text, from_env, NULL, v, err, errlen);
}

const char *te_value_env_text(int id, const struct te_value *v)
{
	const struct te_setting *s = &te_settings[id];

	if (v->word != TE_W_VALUE && s->env_words)
		return s->env_words[v->word];
	return v->text;
}

/* Bounds apply to numbers only: a special word ("off") is not a number. */
int te_value_check_bounds(const struct te_policy *pol, int id,
			  const struct te_value *v, char *err, size_t errlen)
{
	char acc[256];

	/* a list's lowest (num) and highest (num2 for a list) */
	uint64_t top = te_settings[id].type == TE_T_CODELIST ? v->num2 : v->num;

	if (!pol ||
	    (te_settings[id].type != TE_T_UINT &&
	     te_settings[id].type != TE_T_SIGAT &&
	     te_settings[id].type != TE_T_CODELIST) ||
	    v->word != TE_W_VALUE)
		return 0;
	if ((pol->has_min[id] && v->num < pol->min[id]) ||
	    (pol->has_max[id] && top > pol->max[id])) {
		te_setting_accepted(id, pol, acc, sizeof(acc));
		return te_err(
			err, errlen, "%s is %s the site %s; accepted: %s",
			v->text,
			pol->has_min[id] && v->num < pol->min[id] ? "below"
								  : "above",
			pol->has_min[id] && v->num < pol->min[id] ? "minimum"
								  : "maximum",
			acc);
	}
	return 0;
}

int te_check_user_value(const struct te_policy *pol, int id, const char *text,
			char *err, size_t errlen)
{
	struct te_value v;

	if (te_value_parse_pol(id, text, 0, pol, &v, err, errlen) < 0)
		return -1;
	return te_value_check_bounds(pol, id, &v, err, errlen);
}

/* ---------------------------------------------------------------- policy */
