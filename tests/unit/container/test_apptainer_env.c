/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of core/container/apptainer_env.c: the APPTAINERENV_ and
 * SINGULARITYENV_ copies of what trainenv set in a task (rank variables,
 * MASTER_*, the timeout knobs, trainenv's own), what is never copied
 * (the user's own variables, Apptainer's, PATH, LD_PRELOAD), names and
 * values out of bounds; and the chain the plugin runs: te_cenv_decided
 * over a task's environment, then te_appt_env. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "container/apptainer_env.h"
#include "container/container_env.h"
#include "util/strutil.h"
#include "tap.h"

static struct te_appt_out out;

static const char *get(const char *name)
{
	int i;

	for (i = 0; i < out.n; i++)
		if (!strcmp(out.v[i].name, name))
			return out.v[i].value;
	return NULL;
}

static void test_copies(void)
{
	const char *names[] = { "RANK", "MASTER_ADDR", "MASTER_PORT",
				"TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC",
				"TRAINENV_SETTINGS" };
	const char *values[] = { "3", "n1", "29500", "900", "v1;x" };
	int k;

	k = te_appt_env(names, values, 5, &out);
	is_int(k, 5, "five variables taken");
	is_int(out.n, 10, "two copies each");
	is_int(out.skipped, 0, "none left out");
	is_str(out.v[0].name, "APPTAINERENV_RANK", "Apptainer's name first");
	is_str(out.v[1].name, "SINGULARITYENV_RANK", "then Singularity's");
	ok(out.v[0].value == values[0] && out.v[1].value == values[0],
	   "both with the task's value (the caller's string)");
	is_str(get("APPTAINERENV_MASTER_ADDR"), "n1", "MASTER_ADDR");
	is_str(get("SINGULARITYENV_MASTER_PORT"), "29500", "MASTER_PORT");
	is_str(get("APPTAINERENV_TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"), "900",
	       "a timeout knob");
	is_str(get("APPTAINERENV_TRAINENV_SETTINGS"), "v1;x", "trainenv's own");
}

static void test_left_out(void)
{
	const char *names[] = { "RANK",
				"LD_PRELOAD",
				"PATH",
				"HOME",
				"LD_LIBRARY_PATH",
				"APPTAINERENV_RANK",
				"SINGULARITY_BIND",
				"APPTAINER_CACHEDIR",
				"PREPEND_PATH",
				"APPEND_PATH",
				"1BAD",
				"A-B",
				"",
				"WORLD_SIZE",
				"RANK",
				"LOCAL_RANK" };
	const char *values[] = { "0",	 "/usr/lib/trainenv-nccl.so",
				 "/bin", "/root",
				 "/x",	 "9",
				 "/a",	 "/c",
				 "/p",	 "/q",
				 "1",	 "2",
				 "3",	 NULL,
				 "7",	 "" };
	char longname[TE_APPT_NAME_MAX + 8];
	const char *ln[1] = { longname }, *lv[1] = { "1" };
	static char big[TE_APPT_VALUE_MAX + 2];
	const char *bn[1] = { "BIG" }, *bv[1] = { big };
	int k;

	k = te_appt_env(names, values, 16, &out);
	is_int(k, 2, "only RANK and LOCAL_RANK are taken");
	is_str(get("APPTAINERENV_RANK"), "0", "RANK: the first one given");
	is_str(get("APPTAINERENV_LOCAL_RANK"), "", "an empty value is a value");
	ok(!get("APPTAINERENV_LD_PRELOAD") && !get("APPTAINERENV_PATH") &&
		   !get("APPTAINERENV_HOME") &&
		   !get("APPTAINERENV_LD_LIBRARY_PATH"),
	   "never LD_PRELOAD, PATH, HOME, LD_LIBRARY_PATH (this node's files)");
	ok(!get("APPTAINERENV_APPTAINERENV_RANK") &&
		   !get("APPTAINERENV_SINGULARITY_BIND") &&
		   !get("APPTAINERENV_APPTAINER_CACHEDIR"),
	   "never Apptainer's own");
	ok(!get("APPTAINERENV_PREPEND_PATH") &&
		   !get("APPTAINERENV_APPEND_PATH"),
	   "never the names Apptainer maps apart");
	ok(!get("APPTAINERENV_WORLD_SIZE"), "a variable the task lacks: none");
	ok(!get("APPTAINERENV_1BAD") && !get("APPTAINERENV_A-B") &&
		   !get("APPTAINERENV_"),
	   "names that are no variable names: none");
	is_int(out.skipped, 13, "each left out is counted (the repeat is not)");

	memset(longname, 'N', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	is_int(te_appt_env(ln, lv, 1, &out), 0, "a name over the bound: none");
	longname[TE_APPT_NAME_MAX - 1] = '\0';
	is_int(te_appt_env(ln, lv, 1, &out), 1, "the longest name is taken");
	ok(strlen(out.v[1].name) ==
		   strlen("SINGULARITYENV_") + TE_APPT_NAME_MAX - 1,
	   "and its copies' names whole");

	memset(big, 'v', sizeof(big) - 1);
	is_int(te_appt_env(bn, bv, 1, &out), 0, "a value over the bound: none");
	big[TE_APPT_VALUE_MAX] = '\0';
	is_int(te_appt_env(bn, bv, 1, &out), 1, "the longest value is taken");
}

static void test_bounds(void)
{
	static char namebuf[TE_APPT_IN_MAX + 40][16];
	static const char *names[TE_APPT_IN_MAX + 40],
		*values[TE_APPT_IN_MAX + 40];
	static char val[TE_APPT_VALUE_MAX + 1];
	size_t i, n = TE_APPT_IN_MAX + 40;
	int k;

	for (i = 0; i < n; i++) {
		te_snprintf(namebuf[i], sizeof(namebuf[i]), "V%zu", i);
		names[i] = namebuf[i];
		values[i] = "1";
	}
	k = te_appt_env(names, values, n, &out);
	is_int(k, TE_APPT_IN_MAX, "at most TE_APPT_IN_MAX variables");
	is_int(out.skipped, 40, "the rest counted, not walked");
	ok(out.n <= (int)(sizeof(out.v) / sizeof(out.v[0])),
	   "out stays in bounds");

	memset(val, 'v', TE_APPT_VALUE_MAX);
	for (i = 0; i < 20; i++)
		values[i] = val;
	k = te_appt_env(names, values, 20, &out);
	is_int(k, TE_APPT_TOTAL_MAX / (2 * TE_APPT_VALUE_MAX),
	       "values past TE_APPT_TOTAL_MAX in all are left out");
}

/* ---------------------------------------------------------------- chain */

#define ENV_N 16
static char env[ENV_N][4096];
static int nenv;

static const char *fake_getenv(void *ctx, const char *name)
{
	size_t n = strlen(name);
	int i;

	(void)ctx;
	for (i = 0; i < nenv; i++)
		if (!strncmp(env[i], name, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static void setenv_fake(const char *name, const char *value)
{
	te_snprintf(env[nenv++], sizeof(env[0]), "%s=%s", name, value);
}

static const char *no_getenv(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return NULL;
}

static void test_chain(void)
{
	static struct te_policy pol;
	static struct te_config cfg;
	static struct te_cenv d;
	static char enc[TE_SETTINGS_ENV_MAX];
	const char *items[] = { "nccl-heartbeat=900",
				"enforce=nccl-heartbeat" };
	const char *opts[TE_S_COUNT] = { 0 };
	const char *names[TE_CENV_MAX], *values[TE_CENV_MAX];
	char err[TE_ERR_MAX];
	int i;

	te_policy_init(&pol);
	if (te_policy_args(&pol, 2, (char **)items, err, sizeof(err)) < 0 ||
	    te_resolve(&pol, opts, no_getenv, NULL, NULL, &cfg, err,
		       sizeof(err)) < 0 ||
	    te_config_encode(&cfg, enc, sizeof(enc)) < 0) {
		printf("# setup: %s\n", err);
		exit(1);
	}
	nenv = 0;
	setenv_fake(TE_SETTINGS_ENV, enc);
	setenv_fake("TRAINENV_RANK_VARS",
		    "RANK,WORLD_SIZE,MASTER_ADDR,MASTER_PORT");
	setenv_fake("RANK", "5");
	setenv_fake("WORLD_SIZE", "6");
	setenv_fake("MASTER_ADDR", "n1");
	setenv_fake("MASTER_PORT", "61004");
	setenv_fake("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "900");
	setenv_fake("MY_OWN", "mine");
	setenv_fake("LD_PRELOAD", "/usr/lib/x/trainenv-nccl.so");
	ok(te_cenv_decided(fake_getenv, NULL, &d, err, sizeof(err)) == 0,
	   "chain: the decided variables of a task");
	for (i = 0; i < d.n; i++) {
		names[i] = d.v[i].name;
		values[i] = d.v[i].has_value ? d.v[i].value : NULL;
	}
	te_appt_env(names, values, (size_t)d.n, &out);
	ok(get("APPTAINERENV_RANK") && !strcmp(get("APPTAINERENV_RANK"), "5") &&
		   get("SINGULARITYENV_WORLD_SIZE") &&
		   !strcmp(get("SINGULARITYENV_WORLD_SIZE"), "6"),
	   "chain: the rank variables, with the task's values");
	ok(get("APPTAINERENV_MASTER_ADDR") && get("APPTAINERENV_MASTER_PORT") &&
		   !strcmp(get("APPTAINERENV_MASTER_PORT"), "61004"),
	   "chain: MASTER_*");
	ok(get("APPTAINERENV_TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC") &&
		   !strcmp(get("APPTAINERENV_TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"),
			   "900"),
	   "chain: the enforced heartbeat");
	ok(!get("APPTAINERENV_MY_OWN") && !get("APPTAINERENV_LD_PRELOAD"),
	   "chain: nothing the user did not get from trainenv, no LD_PRELOAD");
}

/* te_appt_command: the commands that run Apptainer. */
static void test_command(void)
{
	ok(te_appt_command("apptainer") && te_appt_command("singularity") &&
		   te_appt_command("/usr/bin/apptainer") &&
		   te_appt_command("/opt/sing/bin/singularity"),
	   "apptainer and singularity, with a directory or not");
	ok(!te_appt_command("apptainer.sh") && !te_appt_command("python3") &&
		   !te_appt_command("/usr/bin/") && !te_appt_command("") &&
		   !te_appt_command(NULL) && !te_appt_command("apptainer/x"),
	   "anything else: a script, another program, a directory, empty, "
	   "none");
}

int main(void)
{
	test_command();
	test_copies();
	test_left_out();
	test_bounds();
	test_chain();
	return tap_done();
}
