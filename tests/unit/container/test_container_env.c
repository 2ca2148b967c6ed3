/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of core/container/container_env.c: the variables trainenv decided (from
 * TRAINENV_SETTINGS and TRAINENV_RANK_VARS), the enroot hook's filter of a
 * container's environment file (what enroot 4.1.2's PyTorch hook and an
 * image's ENV write), hostile files and names, and the comparison with a
 * program's /proc/PID/environ. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "container/container_env.h"
#include "util/strutil.h"
#include "tap.h"

#define ENV_N 32
static char env[ENV_N][TE_SETTINGS_ENV_MAX / 8];
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

static const char *resolve_getenv(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return NULL;
}

/* A task as trainenv leaves it, under a policy of argv items. */
static void task(const char *const *items, int nitems, const char *rank_vars)
{
	static struct te_policy pol;
	static struct te_config cfg;
	static char enc[TE_SETTINGS_ENV_MAX];
	const char *opts[TE_S_COUNT] = { 0 };
	char err[TE_ERR_MAX];

	nenv = 0;
	te_policy_init(&pol);
	if (te_policy_args(&pol, nitems, (char **)items, err, sizeof(err)) <
		    0 ||
	    te_resolve(&pol, opts, resolve_getenv, NULL, NULL, &cfg, err,
		       sizeof(err)) < 0 ||
	    te_config_encode(&cfg, enc, sizeof(enc)) < 0) {
		printf("# setup: %s\n", err);
		exit(1);
	}
	setenv_fake(TE_SETTINGS_ENV, enc);
	if (rank_vars)
		setenv_fake("TRAINENV_RANK_VARS", rank_vars);
}

static const struct te_cenv_var *var(const struct te_cenv *d, const char *n)
{
	int i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].name, n))
			return &d->v[i];
	return NULL;
}

static struct te_cenv d;
static char out[8192];

static int filter(const char *in, char *err, size_t errlen)
{
	size_t len = 0;
	int rc = te_cenv_filter(in, strlen(in), &d, out, sizeof(out) - 1, &len,
				err, errlen);

	out[rc < 0 ? 0 : len] = '\0';
	return rc;
}

static void test_decided(void)
{
	static const char *const items[] = { "nccl-heartbeat=900",
					     "enforce=nccl-heartbeat" };
	char err[TE_ERR_MAX] = "";
	const struct te_cenv_var *v;

	task(items, 2, "RANK,WORLD_SIZE,MASTER_ADDR,MASTER_PORT");
	setenv_fake("RANK", "3");
	setenv_fake("MASTER_ADDR", "10.0.0.11");
	setenv_fake("MASTER_PORT", "23456");
	setenv_fake("WORLD_SIZE", "6");
	setenv_fake("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "900");
	is_int(te_cenv_decided(fake_getenv, NULL, &d, err, sizeof(err)), 0,
	       "decided: read %s", err);
	v = var(&d, "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC");
	ok(v && v->has_value && !strcmp(v->value, "900") && v->enforced,
	   "the enforced heartbeat is decided, enforced, with its value");
	v = var(&d, "MASTER_PORT");
	ok(v && v->has_value && !strcmp(v->value, "23456") && !v->enforced,
	   "MASTER_PORT from TRAINENV_RANK_VARS, with its value");
	ok(var(&d, "RANK") && var(&d, "WORLD_SIZE") && var(&d, "MASTER_ADDR"),
	   "every rank variable is decided");
	ok(!var(&d, "PATH") && !var(&d, "NCCL_DEBUG"),
	   "nothing trainenv did not set");
	ok(te_cenv_ours(&d, "TRAINENV_LAUNCHER", 17) &&
		   !te_cenv_ours(&d, "TRAINENV_", 9) &&
		   !te_cenv_ours(&d, "MASTER_PORTX", 12),
	   "TRAINENV_* is trainenv's; a longer name is not a decided one");

	/* no trainenv, --train=off, hostile lists */
	nenv = 0;
	is_int(te_cenv_decided(fake_getenv, NULL, &d, err, sizeof(err)), 0,
	       "no TRAINENV_SETTINGS: nothing to keep");
	is_int(d.n, 0, "  none");
	{
		static const char *const off[] = { "train=off" };

		task(off, 1, "RANK");
		te_cenv_decided(fake_getenv, NULL, &d, err, sizeof(err));
		is_int(d.n, 0, "--train=off: nothing decided");
	}
	task(items, 2, "RANK,BAD NAME");
	is_int(te_cenv_decided(fake_getenv, NULL, &d, err, sizeof(err)), -1,
	       "a rank variable list with a bad name is refused");
	like(err, "TRAINENV_RANK_VARS: not a variable name at byte 5",
	     "  naming the list and where");
	task(items, 2, "RANK,,LOCAL_RANK,");
	is_int(te_cenv_decided(fake_getenv, NULL, &d, err, sizeof(err)), 0,
	       "empty entries are skipped");
	ok(var(&d, "LOCAL_RANK") != NULL, "  the others read");
	nenv = 0;
	setenv_fake(TE_SETTINGS_ENV, "garbage");
	is_int(te_cenv_decided(fake_getenv, NULL, &d, err, sizeof(err)), -1,
	       "unreadable TRAINENV_SETTINGS is an error");
	like(err, "TRAINENV_SETTINGS: ", "  naming it");
}

static void test_filter(void)
{
	static const char *const items[] = { "nccl-heartbeat=900",
					     "enforce=nccl-heartbeat" };
	char err[TE_ERR_MAX] = "", big[8192];
	int i;

	task(items, 2, "RANK,LOCAL_RANK,WORLD_SIZE,MASTER_ADDR,MASTER_PORT");
	setenv_fake("MASTER_PORT", "23456");
	te_cenv_decided(fake_getenv, NULL, &d, err, sizeof(err));
	/* what enroot 4.1.2 wrote for an NGC-like image and its PyTorch and
	 * PMIx hooks */
	is_int(filter("PYTORCH_VERSION=2.3.0\n"
		      "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=60\n"
		      "NCCL_DEBUG=WARN\n"
		      "SLURM_JOB_ID=7\n"
		      "MASTER_ADDR=n1\n"
		      "MASTER_PORT=61007\n"
		      "WORLD_SIZE=6\n"
		      "RANK=0\n"
		      "LOCAL_RANK=0\n"
		      "OMP_NUM_THREADS=1\n",
		      err, sizeof(err)),
	       6, "the hook's file: six of trainenv's variables removed");
	is_str(out,
	       "PYTORCH_VERSION=2.3.0\nNCCL_DEBUG=WARN\nSLURM_JOB_ID=7\n"
	       "OMP_NUM_THREADS=1\n"
	       "TRAINENV_CONTAINER=enroot:TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=60;"
	       "MASTER_ADDR=n1;MASTER_PORT=61007;WORLD_SIZE=6;RANK=0;"
	       "LOCAL_RANK=0\n",
	       "  the others kept in order, the record last");

	is_int(filter("TRAINENV_SETTINGS=forged\nTRAINENV_CONTAINER=x\n"
		      "  RANK=\"7\"  \nX=1",
		      err, sizeof(err)),
	       1,
	       "an image's TRAINENV_* lines go unrecorded; indented, quoted");
	is_str(out, "X=1\nTRAINENV_CONTAINER=enroot:RANK=7\n",
	       "  quotes off in the record, a last line without newline kept");

	is_int(filter("", err, sizeof(err)), 0, "an empty file");
	is_str(out, "TRAINENV_CONTAINER=enroot:\n", "  still gets the record");

	is_int(filter("MASTER_ADDR=a;b\x01\xff\n# RANK=1\nRANK\n=RANK\n"
		      "1RANK=2\nRANK-X=3\n",
		      err, sizeof(err)),
	       1, "comments and what is no NAME= line are kept as they are");
	is_str(out,
	       "# RANK=1\nRANK\n=RANK\n1RANK=2\nRANK-X=3\n"
	       "TRAINENV_CONTAINER=enroot:MASTER_ADDR=a?b??\n",
	       "  the record's value is cleaned (';' and bytes outside ASCII)");

	{
		char nul[] = "RANK=1\nX=\0y\n";

		is_int(te_cenv_filter(nul, sizeof(nul) - 1, &d, out, 100,
				      &(size_t){ 0 }, err, sizeof(err)),
		       -1, "a NUL byte in the file is refused");
		like(err, "NUL", "  saying so");
	}
	/* long values are cut in the record; too many fill it */
	memset(big, 'v', 300);
	memcpy(big, "MASTER_ADDR=", 12);
	big[300] = '\n';
	big[301] = '\0';
	is_int(filter(big, err, sizeof(err)), 1, "a long value");
	ok(strlen(strstr(out, "TRAINENV_CONTAINER=")) <
		   strlen("TRAINENV_CONTAINER=enroot:MASTER_ADDR=") +
			   TE_CENV_SHOW_MAX + 5,
	   "  is cut in the record");
	like(out, "vvv...\n", "  marked cut");
	big[0] = '\0';
	for (i = 0; i < 60; i++)
		te_appendf(big, sizeof(big), "RANK=%064d\n", i);
	is_int(filter(big, err, sizeof(err)), 60, "sixty lines of RANK");
	ok(strlen(strstr(out, "TRAINENV_CONTAINER=")) <=
		   strlen("TRAINENV_CONTAINER=") + TE_CENV_REPORT_MAX + 1,
	   "  the record stays within its size");
	like(out, ";...\n", "  and says it was cut");
	is_int(te_cenv_filter("X=1\nY=2\n", 8, &d, out, 10, &(size_t){ 0 }, err,
			      sizeof(err)),
	       -1, "an output buffer too small");
	like(err, "larger than 10 bytes", "  is an error");
}

static void test_compare(void)
{
	static const char *const items[] = { "nccl-heartbeat=900",
					     "enforce=nccl-heartbeat" };
	static const char same[] = "PATH=/bin\0RANK=3\0MASTER_PORT=23456\0"
				   "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=900\0";
	static const char changed[] = "RANK=3\0MASTER_PORT=61007\0"
				      "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=60\0";
	char err[TE_ERR_MAX], rep[1024];
	int enf = -1;

	task(items, 2, "RANK,MASTER_PORT");
	setenv_fake("RANK", "3");
	setenv_fake("MASTER_PORT", "23456");
	setenv_fake("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "900");
	te_cenv_decided(fake_getenv, NULL, &d, err, sizeof(err));
	is_int(te_cenv_compare(&d, same, sizeof(same) - 1, 0, rep, sizeof(rep),
			       &enf),
	       0, "the program sees what was decided");
	is_int(enf, 0, "  no enforced value changed");
	is_int(te_cenv_compare(&d, changed, sizeof(changed) - 1, 0, rep,
			       sizeof(rep), &enf),
	       2, "two values replaced");
	is_int(enf, 1, "  one of them enforced");
	is_str(rep,
	       "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=60 (trainenv: 900, "
	       "enforced); MASTER_PORT=61007 (trainenv: 23456)",
	       "  named");
	is_int(te_cenv_compare(&d, "RANK=3", 7, 0, rep, sizeof(rep), &enf), 2,
	       "variables missing from the program's environment");
	like(rep, "MASTER_PORT unset (trainenv: 23456)", "  said unset");
	is_int(te_cenv_compare(&d, "RANK=3\0MASTER_PO", 16, 1, rep, sizeof(rep),
			       &enf),
	       0, "past a cut environment nothing is judged");
	is_str(te_cenv_block_get("A=1\0AB=2\0B=\0", 12, "B"), "",
	       "block_get: an empty value");
	is_str(te_cenv_block_get("A=1\0AB=2\0", 9, "AB"), "2",
	       "block_get: a name that ends another is not it");
	ok(te_cenv_block_get("A=1\0AB=2", 8, "AB") == NULL,
	   "block_get: an unterminated last entry is unknown");
	te_cenv_record_text("enroot:A=1;B=x\ty", rep, sizeof(rep));
	is_str(rep,
	       "the container's environment set A=1, B=x?y; trainenv's "
	       "enroot hook kept trainenv's values",
	       "the record as a sentence");
	te_cenv_record_text("enroot:", rep, sizeof(rep));
	is_str(rep,
	       "the container's environment set none of trainenv's "
	       "variables",
	       "an empty record as a sentence");
}

int main(void)
{
	ok(te_cenv_name_valid("RANK", 4) && te_cenv_name_valid("_a1", 3) &&
		   !te_cenv_name_valid("1A", 2) &&
		   !te_cenv_name_valid("A-B", 3) && !te_cenv_name_valid("", 0),
	   "names: letters, digits, '_'");
	{
		char n[TE_CENV_NAME_MAX + 1];

		memset(n, 'A', sizeof(n));
		ok(te_cenv_name_valid(n, TE_CENV_NAME_MAX - 1) &&
			   !te_cenv_name_valid(n, TE_CENV_NAME_MAX),
		   "names: at most %d characters", TE_CENV_NAME_MAX - 1);
	}
	test_decided();
	test_filter();
	test_compare();
	return tap_done();
}
