/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* APPTAINERENV_ and SINGULARITYENV_ copies of what trainenv set in a task
 * (core/container/apptainer_env.h). Pure: no I/O. */
#include "config.h"

#include <string.h>

#include "container/apptainer_env.h"
#include "util/strutil.h"

/* Apptainer's own variables, and those it will not take from
 * APPTAINERENV_ (HOME, PATH), maps apart (PREPEND_PATH, APPEND_PATH), or
 * that would name this node's files inside the image (LD_*). */
static int left_out(const char *name)
{
	static const char *const prefixes[] = { "APPTAINER", "SINGULARITY" };
	static const char *const names[] = {
		"HOME",		"PATH",	       "LD_PRELOAD", "LD_LIBRARY_PATH",
		"PREPEND_PATH", "APPEND_PATH",
	};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return 1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

/* A letter or '_', then letters, digits or '_'; shorter than
 * TE_APPT_NAME_MAX. */
static int name_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		char c = s[i];
		int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			    c == '_';

		if (i + 1 >= TE_APPT_NAME_MAX ||
		    (!alpha && !(i > 0 && c >= '0' && c <= '9')))
			return 0;
	}
	return i > 0;
}

static int seen(const char *const *names, size_t i)
{
	size_t k;

	for (k = 0; k < i; k++)
		if (names[k] && !strcmp(names[k], names[i]))
			return 1;
	return 0;
}

int te_appt_env(const char *const *names, const char *const *values, size_t n,
		struct te_appt_out *out)
{
	size_t i, total = 0;
	int taken = 0;

	out->n = 0;
	out->skipped = 0;
	for (i = 0; i < n; i++) {
		size_t len;

		if (i >= TE_APPT_IN_MAX) { /* bounded: never walked */
			out->skipped += (int)(n - i);
			break;
		}
		if (!names[i] || seen(names, i))
			continue;
		if (!values[i] || !name_ok(names[i]) || left_out(names[i]) ||
		    (len = te_strnlen_cap(values[i], TE_APPT_VALUE_MAX)) >
			    TE_APPT_VALUE_MAX ||
		    total + 2 * len > TE_APPT_TOTAL_MAX) {
			out->skipped++;
			continue;
		}
		total += 2 * len;
		te_snprintf(out->v[out->n].name, sizeof(out->v[0].name),
			    "APPTAINERENV_%s", names[i]);
		out->v[out->n++].value = values[i];
		te_snprintf(out->v[out->n].name, sizeof(out->v[0].name),
			    "SINGULARITYENV_%s", names[i]);
		out->v[out->n++].value = values[i];
		taken++;
	}
	return taken;
}

int te_appt_command(const char *word)
{
	const char *slash = word ? strrchr(word, '/') : NULL;
	const char *prog = slash ? slash + 1 : word;

	return prog &&
	       (!strcmp(prog, "apptainer") || !strcmp(prog, "singularity"));
}
