/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the admin policy parser (a policy file's bytes, and the
 * same bytes as plugstack.conf arguments split at blanks), then resolving
 * with the input's tail as user options and environment. Beyond "no
 * crash": every error is one bounded line, and a resolved configuration
 * survives the TRAINENV_SETTINGS round trip. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "settings/settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *env_pairs[8];
static const char *fuzz_getenv(void *ctx, const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; i < 8 && env_pairs[i]; i++)
		if (!strncmp(env_pairs[i], name, n) && env_pairs[i][n] == '=')
			return env_pairs[i] + n + 1;
	return NULL;
}

static void one_line(const char *err)
{
	if (strlen(err) >= TE_ERR_MAX || strchr(err, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct te_policy pol;
	static struct te_config cfg, back;
	static char enc[256 * 1024];
	char err[TE_ERR_MAX], *copy, *av[64], *save = NULL, *t;
	const char *opts[TE_S_COUNT] = { 0 };
	int ac = 0, i;

	if (size > 65536)
		return 0;
	te_policy_init(&pol);
	err[0] = '\0';
	if (te_policy_buffer(&pol, (const char *)data, size, "fuzz.conf", err,
			     sizeof(err)) < 0)
		one_line(err);

	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (t = strtok_r(copy, " \n", &save); t && ac < 64;
	     t = strtok_r(NULL, " \n", &save))
		av[ac++] = t;
	te_policy_init(&pol);
	if (te_policy_args(&pol, ac, av, err, sizeof(err)) < 0) {
		one_line(err);
		/* keep going with what was read: resolve must cope */
	}
	/* Words after the policy: options for the first settings, then
	 * NAME=VALUE environment entries. */
	for (i = 0; i < ac && i < TE_S_COUNT; i++)
		opts[i] = av[ac - 1 - i];
	memset(env_pairs, 0, sizeof(env_pairs));
	for (i = 0; i < ac && i < 8; i++)
		env_pairs[i] = av[i];
	if (te_resolve(&pol, opts, fuzz_getenv, NULL, NULL, &cfg, err,
		       sizeof(err)) < 0) {
		one_line(err);
	} else if (te_config_encode(&cfg, enc, sizeof(enc)) == 0) {
		if (te_config_decode(&back, enc, err, sizeof(err)) < 0)
			abort();
		for (i = 0; i < TE_S_COUNT; i++)
			if (strcmp(back.v[i].text,
				   cfg.v[i].set ? cfg.v[i].text : "") ||
			    back.v[i].src != cfg.v[i].src)
				abort();
	}
	for (i = 0; i < TE_S_COUNT; i++)
		if (te_check_user_value(&pol, i, copy, err, sizeof(err)) < 0)
			one_line(err);
	free(copy);
	return 0;
}
