/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv stacks JOB[.STEP]: runs trainenv-stacks, the hang report's
 * program (the one srun's exit watchdog runs), found next to this tool
 * (a build tree) or in the package's libexec directory. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/strutil.h"
#include "tool.h"

#define STACKS_HELPER "trainenv-stacks"

int te_tool_stacks(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 32], *slash;
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)argc;
	path[0] = '\0';
	if (l > 0) {
		self[l] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			te_snprintf(path, sizeof(path), "%s/%s", self,
				    STACKS_HELPER);
		}
	}
	if (!path[0] || access(path, X_OK) < 0)
		te_snprintf(path, sizeof(path), "%s/%s", TE_PKGLIBEXECDIR,
			    STACKS_HELPER);
	argv[0] = (char *)STACKS_HELPER;
	execv(path, argv);
	fprintf(stderr, "trainenv stacks: cannot run %s: %s\n", path,
		strerror(errno));
	return 127;
}
