/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: the site hook's pure parts. Which paths may name a hook,
 * the reason a hook gives (its first line of output, which is hostile:
 * any bytes, any length), and its verdict from its exit status. The
 * run itself is health_hook_run.c. */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include "health/health.h"
#include "util/strutil.h"

int te_health_hook_path_ok(const char *path)
{
	size_t l = te_strnlen_cap(path, TE_HEALTH_HOOK_PATH_MAX);
	size_t i;

	if (!l || l >= TE_HEALTH_HOOK_PATH_MAX || path[0] != '/')
		return 0;
	for (i = 0; i < l; i++)
		if (path[i] <= ' ' || path[i] > '~')
			return 0;
	/* a ".." component, wherever it is */
	for (i = 0; i + 2 <= l; i++)
		if (path[i] == '/' && path[i + 1] == '.' &&
		    path[i + 2] == '.' && (path[i + 3] == '/' || !path[i + 3]))
			return 0;
	return 1;
}

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

size_t te_health_hook_first_line(const char *out, size_t len, char *line,
				 size_t size)
{
	size_t start = 0, end, n = 0, i;

	if (!size)
		return 0;
	line[0] = '\0';
	while (start < len) {
		/* this line: [start, end) */
		for (end = start; end < len && out[end] != '\n'; end++)
			;
		while (start < end && blank(out[start]))
			start++;
		i = end;
		while (i > start && blank(out[i - 1]))
			i--;
		if (i > start) {
			for (; start < i && n + 1 < size; start++) {
				unsigned char c = (unsigned char)out[start];

				line[n++] = c >= 0x20 && c < 0x7f ? (char)c
								  : '?';
			}
			line[n] = '\0';
			return n;
		}
		start = end + 1;
	}
	return 0;
}

void te_health_hook_result(const char *path, int exec_err, int status,
			   const char *output, size_t len,
			   struct te_health_set *out)
{
	char line[TE_HEALTH_TEXT_MAX], value[24];
	int code;

	if (exec_err) {
		te_health_add(out, "hook", path, "", TE_HV_ERROR,
			      "hook: %s cannot be run: %s", path,
			      strerror(exec_err));
		return;
	}
	if (!WIFEXITED(status)) {
		code = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		te_snprintf(value, sizeof(value), "signal %d", code);
		te_health_add(out, "hook", path, value, TE_HV_ERROR,
			      "hook: %s was killed by signal %d", path, code);
		return;
	}
	code = WEXITSTATUS(status);
	te_snprintf(value, sizeof(value), "exit %d", code);
	te_health_hook_first_line(output, len, line, sizeof(line));
	if (code == 0 && line[0])
		te_health_add(out, "hook", path, value, TE_HV_PASS,
			      "hook: %s: %s", path, line);
	else if (code == 0)
		te_health_add(out, "hook", path, value, TE_HV_PASS,
			      "hook: %s passed", path);
	else if (line[0])
		te_health_add(out, "hook", path, value, TE_HV_FAIL,
			      "hook: %s: %s", path, line);
	else
		te_health_add(out, "hook", path, value, TE_HV_FAIL,
			      "hook: %s exited with status %d", path, code);
}
