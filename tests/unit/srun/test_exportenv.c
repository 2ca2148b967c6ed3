/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the export-list reader: what srun's --export gives the
 * tasks (Slurm 22.05's rules), and finding --export among srun's own
 * arguments. */
#include "config.h"

#include <string.h>

#include "srun/exportenv.h"
#include "tap.h"

static const char *fake_env[8];
static const char *fake_getenv(void *ctx, const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; fake_env[i]; i++)
		if (!strncmp(fake_env[i], name, n) && fake_env[i][n] == '=')
			return fake_env[i] + n + 1;
	return NULL;
}

static char buf[64];
static const char *get(const char *spec, const char *name)
{
	return te_export_getenv(spec, name, fake_getenv, NULL, buf,
				sizeof(buf));
}

#define HB "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"

static void test_getenv(void)
{
	fake_env[0] = HB "=700";
	fake_env[1] = "OTHER=1";
	fake_env[2] = NULL;
	is_str(get(NULL, HB), "700", "no --export: srun's environment");
	is_str(get("ALL", HB), "700", "ALL: srun's environment");
	is_str(get("all", HB), "700", "all (any case)");
	is_str(get("NONE", HB), NULL, "NONE: nothing");
	is_str(get("NIL", HB), NULL, "NIL: nothing (not ALL)");
	is_str(get(HB, HB), "700", "NAME: srun's value");
	is_str(get("OTHER", HB), NULL, "another NAME only");
	is_str(get(HB "=800", HB), "800", "NAME=VALUE without ALL: VALUE");
	is_str(get("ALL," HB "=800", HB), "700",
	       "ALL,NAME=VALUE: srun's own value wins (Slurm merges it last)");
	is_str(get("NONE," HB "=800", HB), NULL, "NONE ends the list");
	is_str(get(HB "=800,NONE", HB), "800", "items before NONE count");
	is_str(get(HB "=800," HB "=900", HB), "900",
	       "the last NAME=VALUE wins");
	is_str(get("X=1,'" HB "=8,5'", HB), "8,5",
	       "a quoted item keeps its comma");
	is_str(get(HB "x=1", HB), NULL, "a longer name is another variable");
	is_str(get("", HB), NULL, "an empty list: nothing");
	fake_env[0] = NULL;
	is_str(get("ALL," HB "=800", HB), "800",
	       "ALL,NAME=VALUE when srun has no NAME: VALUE");
	is_str(get(HB, HB), NULL, "NAME that srun does not have: nothing");
	{
		char big[200];

		memset(big, '9', sizeof(big));
		memcpy(big, HB "=", strlen(HB) + 1);
		big[sizeof(big) - 1] = '\0';
		is_int(strlen(get(big, HB)), sizeof(buf) - 1,
		       "a value longer than the buffer: over-long marker");
		ok(strspn(get(big, HB), "x") == sizeof(buf) - 1,
		   "made of 'x', not a cut number");
	}
}

static void test_args(void)
{
	char *a1[] = { "-N1", "--export=NONE", NULL };
	char *a2[] = { "--export", "ALL,X=1", "-N2", NULL };
	char *a3[] = { "--exp=NONE", "--export=ALL", NULL };
	char *a4[] = { "--ex=NONE", "--exclusive", "--export-file=x", NULL };
	char *a5[] = { "-N1", "--", "--export=NONE", NULL };
	char *a6[] = { "--export", NULL };
	char *a7[] = { "--expo=A", NULL };

	is_str(te_export_from_args(2, a1), "NONE", "--export=V");
	is_str(te_export_from_args(3, a2), "ALL,X=1", "--export V");
	is_str(te_export_from_args(2, a3), "ALL", "the last one wins");
	is_str(te_export_from_args(3, a4), NULL,
	       "--ex (ambiguous), --exclusive, --export-file are not --export");
	is_str(te_export_from_args(3, a5), NULL, "nothing after --");
	is_str(te_export_from_args(1, a6), NULL, "--export without its value");
	is_str(te_export_from_args(1, a7), "A", "--expo: an abbreviation");
	is_str(te_export_from_args(0, a1), NULL, "no arguments");
}

int main(void)
{
	test_getenv();
	test_args();
	return tap_done();
}
