/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-health: the program the plugin's job prolog runs
 * (tool_health_prolog.c). */
#include "config.h"

#include "tool_health.h"

int main(int argc, char **argv)
{
	return te_tool_health_prolog(argc, argv);
}
