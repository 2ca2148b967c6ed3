/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv env: the --train-explain report from inside a task. The plugin
 * records the effective settings in TRAINENV_SETTINGS just before exec;
 * in a pyxis container, trainenv's enroot hook records what the
 * container's environment set (TRAINENV_CONTAINER). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container/container_env.h"
#include "settings/settings.h"
#include "tool.h"
#include "launch/version.h"

int te_tool_env(int argc, char **argv)
{
	char err[TE_ERR_MAX], line[TE_VALUE_MAX + 2 * TE_ORIGIN_MAX];
	static struct te_config cfg;
	const char *s;
	int i;

	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			printf("usage: trainenv env\n\nPrints every trainenv "
			       "setting of this task: its effective value and "
			       "where it came from\n(enforced, option, "
			       "environment, admin default, built-in).\n");
			return 0;
		}
		fprintf(stderr, "trainenv env: unexpected argument '%.64s'\n",
			argv[1]);
		return 2;
	}
	s = getenv(TE_SETTINGS_ENV);
	if (!s) {
		fprintf(stderr,
			"trainenv env: %s is not set: this process "
			"was not started by a Slurm step with the trainenv "
			"plugin\n",
			TE_SETTINGS_ENV);
		return 1;
	}
	if (te_config_decode(&cfg, s, err, sizeof(err)) < 0) {
		fprintf(stderr, "trainenv env: %s\n", err);
		return 1;
	}
	for (i = 0; i < TE_S_COUNT; i++) {
		te_explain_line(&cfg, i, line, sizeof(line));
		printf("%s\n", line);
	}
	/* set by trainenv's enroot hook in a pyxis container */
	if ((s = getenv(TE_CENV_ENV))) {
		te_cenv_record_text(s, line, sizeof(line));
		printf("container: %s\n", line);
	}
	return 0;
}

int te_tool_version(int argc, char **argv)
{
	char line[128];

	te_version_line(line, sizeof(line));
	printf("%s\n", line);
	return 0;
}
