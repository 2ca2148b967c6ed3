/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-health: the program the plugin's job prolog runs as root
 * (tool_health_prolog.c), and each task of a step with --train-health
 * as the user (--step, tool_health_step.c). */
#include "config.h"

#include <string.h>

#include "tool_health.h"

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--step"))
		return te_tool_health_step(argc, argv);
	return te_tool_health_prolog(argc, argv);
}
