/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the option/policy core: value syntax, policy parsing (plugstack
 * arguments and files), the precedence rule, bounds, enforce, and the
 * TRAINENV_SETTINGS encoding. No Slurm involved. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "settings/settings.h"
#include "util/strutil.h"
#include "tap.h"

static struct te_policy pol;
static struct te_config cfg;
static char err[TE_ERR_MAX];

/* A fake job environment: NAME=VALUE strings. */
static const char *fake_env[16];
static const char *fake_getenv(void *ctx, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; fake_env[i]; i++)
		if (!strncmp(fake_env[i], name, n) && fake_env[i][n] == '=')
			return fake_env[i] + n + 1;
	return NULL;
}

static int policy(const char *args)
{
	char buf[2048], *av[32], *save = NULL, *t;
	int ac = 0;

	te_policy_init(&pol);
	err[0] = '\0';
	te_strlcpy(buf, args, sizeof(buf));
	for (t = strtok_r(buf, " ", &save); t && ac < 32;
	     t = strtok_r(NULL, " ", &save))
		av[ac++] = t;
	return te_policy_args(&pol, ac, av, err, sizeof(err));
}

static const char *opts[TE_S_COUNT];
static int resolve(void)
{
	err[0] = '\0';
	return te_resolve(&pol, opts, fake_getenv, NULL, NULL, &cfg, err,
			  sizeof(err));
}

static void reset_inputs(void)
{
	memset(opts, 0, sizeof(opts));
	memset(fake_env, 0, sizeof(fake_env));
}

static void test_values(void)
{
	struct te_value v;
	char longv[TE_VALUE_MAX + 10];

	ok(te_value_parse(TE_S_SIGHUP, "shield", 0, &v, err, sizeof(err)) ==
			   0 &&
		   v.word == 0,
	   "sighup=shield parses (word 0)");
	ok(te_value_parse(TE_S_SIGHUP, "ignore", 0, &v, err, sizeof(err)) ==
			   0 &&
		   v.word == 1,
	   "sighup=ignore parses (word 1)");
	ok(te_value_parse(TE_S_SIGHUP, "default", 0, &v, err, sizeof(err)) ==
			   0 &&
		   v.word == 2,
	   "sighup=default parses (word 2)");
	ok(te_value_parse(TE_S_SIGHUP, "IGNORE", 0, &v, err, sizeof(err)) < 0,
	   "enum words are case-sensitive");
	like(err, "accepted: shield, ignore or default",
	     "enum error lists the words");
	ok(te_value_parse(TE_S_TRAIN, "yes", 0, &v, err, sizeof(err)) == 0 &&
		   !strcmp(v.text, "on"),
	   "bool 'yes' canonicalises to on");
	ok(te_value_parse(TE_S_TRAIN, "0", 0, &v, err, sizeof(err)) == 0 &&
		   !strcmp(v.text, "off"),
	   "bool '0' canonicalises to off");
	ok(te_value_parse(TE_S_TRAIN, "maybe", 0, &v, err, sizeof(err)) < 0,
	   "bool junk refused");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, "900", 0, &v, err,
			  sizeof(err)) == 0 &&
		   v.num == 900,
	   "uint 900 parses");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, "0", 0, &v, err, sizeof(err)) <
		   0,
	   "uint below the hard limit refused");
	like(err, "1 to 2678400 seconds", "uint error names the hard limits");
	ok(te_value_parse(TE_S_LAUNCH_TREE_WIDTH, "1024", 0, &v, err,
			  sizeof(err)) == 0 &&
		   v.num == 1024,
	   "launch-tree-width=1024 parses");
	ok(te_value_parse(TE_S_LAUNCH_TREE_WIDTH, "1", 0, &v, err,
			  sizeof(err)) < 0,
	   "launch-tree-width=1 refused");
	like(err, "2 to 1024 children",
	     "launch-tree-width error names 2 to 1024");
	ok(te_value_parse(TE_S_LAUNCH_TREE_WIDTH, "1025", 0, &v, err,
			  sizeof(err)) < 0,
	   "launch-tree-width=1025 refused");
	ok(!strcmp(te_settings[TE_S_LAUNCH_TREE_WIDTH].builtin, "16") &&
		   (te_settings[TE_S_LAUNCH_TREE_WIDTH].flags & TE_F_NO_OPTION),
	   "launch-tree-width: built-in 16, site policy only");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, "99999999999999999999", 0, &v,
			  err, sizeof(err)) < 0,
	   "20-digit number refused (no overflow)");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, "18446744073709551616", 0, &v,
			  err, sizeof(err)) < 0,
	   "2^64 refused");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, "-5", 0, &v, err, sizeof(err)) <
		   0,
	   "negative refused");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, " 900", 0, &v, err,
			  sizeof(err)) < 0,
	   "leading blank refused");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, "900s", 0, &v, err,
			  sizeof(err)) < 0,
	   "suffix refused");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, "0x10", 0, &v, err,
			  sizeof(err)) < 0,
	   "hex refused");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, "", 0, &v, err, sizeof(err)) < 0,
	   "empty refused");
	like(err, "empty value", "empty value says so");
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, NULL, 0, &v, err, sizeof(err)) <
		   0,
	   "missing value refused");
	ok(te_value_parse(TE_S_SIGHUP, "ignore\ndefault", 0, &v, err,
			  sizeof(err)) < 0,
	   "embedded newline refused");
	like(err, "control", "newline error names control characters");
	memset(longv, '1', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = '\0';
	ok(te_value_parse(TE_S_NCCL_HEARTBEAT, longv, 0, &v, err, sizeof(err)) <
		   0,
	   "over-long value refused");
	like(err, "longer than", "over-long error says so");
	ok(strlen(err) < TE_ERR_MAX, "error stays bounded");
}

static void test_policy_args(void)
{
	is_int(policy("sighup=ignore nccl-heartbeat=900 nccl-heartbeat.max=3600 "
		      "enforce=sighup"),
	       0, "issue example policy parses");
	ok(pol.enforced[TE_S_SIGHUP] && !pol.enforced[TE_S_NCCL_HEARTBEAT],
	   "enforce=sighup marks only sighup");
	is_int(pol.def[TE_S_NCCL_HEARTBEAT].num, 900, "admin default 900");
	ok(pol.has_max[TE_S_NCCL_HEARTBEAT] &&
		   pol.max[TE_S_NCCL_HEARTBEAT] == 3600,
	   "max bound 3600");
	like(pol.def[TE_S_NCCL_HEARTBEAT].origin, "plugstack.conf argument 2",
	     "admin value remembers its argument");

	is_int(policy("bogus=1"), -1, "unknown key refused");
	like(err, "plugstack.conf argument 1: unknown key 'bogus'",
	     "unknown key error names argument and key");
	like(err, "accepted: train, sighup, nccl-heartbeat",
	     "and lists the keys");
	is_int(policy("sighup"), -1, "item without = refused");
	like(err, "not key=value", "says key=value");
	is_int(policy("sighup=hangup"), -1, "bad admin value refused");
	like(err,
	     "sighup: invalid value 'hangup'; accepted: shield, ignore or default",
	     "bad admin value error is precise");
	is_int(policy("sighup.max=3"), -1, "bounds on an enum refused");
	like(err, "only numeric settings have bounds", "says why");
	is_int(policy("nccl-heartbeat.min=abc"), -1,
	       "non-numeric bound refused");
	like(err,
	     "plugstack.conf argument 1: nccl-heartbeat.min: invalid bound "
	     "'abc'; accepted: 1 to 2678400",
	     "plugstack.conf arguments are quoted (the file is readable)");
	is_int(policy("nccl-heartbeat.min=600 nccl-heartbeat.max=300"), -1,
	       "min > max refused");
	like(err,
	     "plugstack.conf argument 1: nccl-heartbeat.min=600 is greater "
	     "than nccl-heartbeat.max=300 (plugstack.conf argument 2)",
	     "min > max error names where both bounds were set");
	is_int(policy("nccl-heartbeat=100 nccl-heartbeat.min=300"), -1,
	       "admin default outside admin bounds refused");
	like(err, "outside the site bounds", "says outside the bounds");
	is_int(policy("enforce=nccl-heartbeat"), -1,
	       "enforce of a knob without value or built-in refused");
	like(err, "add nccl-heartbeat=VALUE", "tells how to fix");
	is_int(policy("enforce=sighup"), 0,
	       "enforce of a built-in is accepted");
	is_str(pol.def[TE_S_SIGHUP].text, "shield", "enforced built-in value");
	is_int(policy("enforce=sighup,nope"), -1,
	       "unknown name in enforce refused");
	like(err, "enforce=: unknown setting 'nope'", "names the bad entry");
	is_int(policy("enforce="), -1, "empty enforce refused");
	is_int(policy("conf=relative.conf"), -1, "relative conf path refused");
	is_int(policy("conf=/nonexistent/trainenv.conf"), -1,
	       "missing conf file refused");
	like(err, "cannot open the policy file: No such file",
	     "with errno text");
	is_int(policy("enforce=sighup sighup=default"), 0,
	       "order of enforce and value does not matter");
	is_str(pol.def[TE_S_SIGHUP].text, "default",
	       "enforced admin value kept");

	/* the fence key: admin only, auto|off|NODES */
	is_int(policy("fence-tree-min-nodes=64"), 0,
	       "fence-tree-min-nodes=64 parses");
	ok(pol.def[TE_S_FENCE_TREE_MIN_NODES].word == TE_W_VALUE &&
		   pol.def[TE_S_FENCE_TREE_MIN_NODES].num == 64,
	   "64 is a node count");
	is_int(policy("fence-tree-min-nodes=off"), 0,
	       "fence-tree-min-nodes=off parses");
	is_int(pol.def[TE_S_FENCE_TREE_MIN_NODES].word, TE_W_FENCE_TREE_OFF,
	       "off is the word off");
	is_int(policy("fence-tree-min-nodes=0"), -1,
	       "fence-tree-min-nodes=0 refused");
	like(err,
	     "fence-tree-min-nodes: invalid value '0'; accepted: 1 to 65535 nodes, or auto or off",
	     "the error names the key and the accepted values");
	is_int(policy("fence-tree-min-nodes=tree"), -1,
	       "a fence name is no value here");
	ok(te_settings[TE_S_FENCE_TREE_MIN_NODES].flags & TE_F_NO_OPTION,
	   "fence-tree-min-nodes is an admin-only key");
	is_str(te_settings[TE_S_FENCE_TREE_MIN_NODES].builtin, "auto",
	       "built-in: auto (TreeWidth)");
	ok(TE_S_FENCE_TREE_MIN_NODES == TE_S_REQUEUE_NO_PROGRESS + 1,
	   "listed after the other admin policy keys, before helper-dir");
	ok(TE_S_LAUNCH_TREE_WIDTH == TE_S_FENCE_TREE_MIN_NODES + 1 &&
		   TE_S_HELPER_DIR == TE_S_LAUNCH_TREE_WIDTH + 1,
	   "  then launch-tree-width, then helper-dir");
}

static int write_file(const char *path, const char *data, size_t len,
		      mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fwrite(data, 1, len, f);
	fclose(f);
	return chmod(path, mode);
}

static void test_policy_file(void)
{
	char dir[] = "/tmp/te-unit-XXXXXX", path[256], arg[300];
	const char good[] = "# site policy\n\n  sighup = default  \n"
			    "nccl-heartbeat=1200 # twenty minutes\n"
			    "nccl-heartbeat.min=600\r\nenforce=sighup\n";
	static char big[TE_POLICY_FILE_MAX + 10];

	if (!mkdtemp(dir)) {
		tap_skip("cannot create a temporary directory");
		return;
	}
	te_snprintf(path, sizeof(path), "%s/p.conf", dir);
	te_snprintf(arg, sizeof(arg), "conf=%s", path);

	write_file(path, good, sizeof(good) - 1, 0644);
	is_int(policy(arg), 0,
	       "policy file with comments, blanks, CRLF parses");
	is_str(pol.def[TE_S_SIGHUP].text, "default", "file value read");
	ok(pol.enforced[TE_S_SIGHUP], "file enforce read");
	is_int(pol.def[TE_S_NCCL_HEARTBEAT].num, 1200,
	       "inline comment stripped");
	like(pol.def[TE_S_NCCL_HEARTBEAT].origin, ":4", "origin is FILE:LINE");

	write_file(path, "sighup=ignore\nwhat=ever\n", 24, 0644);
	is_int(policy(arg), -1, "unknown key in file refused");
	like(err, "p.conf:2: unknown key; accepted: train, sighup",
	     "error names file and line, and the accepted keys");
	ok(!strstr(err, "what") && !strstr(err, "ever"),
	   "... and never the file's text (%s)", err);

	/* The file's text never shows in a message: the file may be one the
	 * job's user cannot read. */
	write_file(path, "nccl-heartbeat.max=s3cr3t\n", 26, 0644);
	is_int(policy(arg), -1, "bad bound in file refused");
	like(err,
	     "p.conf:1: nccl-heartbeat.max: invalid bound; accepted: 1 to "
	     "2678400",
	     "names file:line, the setting and what is wrong");
	ok(!strstr(err, "s3cr3t"), "... without the value (%s)", err);
	write_file(path, "sighup=s3cr3t\n", 14, 0644);
	is_int(policy(arg), -1, "bad value in file refused");
	is_str(strstr(err, "p.conf:1:"),
	       "p.conf:1: sighup: invalid value; "
	       "accepted: shield, ignore or default",
	       "bad value: file:line, setting, accepted values");
	write_file(path, "root:s3cr3t:19000:0:99999:7:::\n", 31, 0644);
	is_int(policy(arg), -1, "a line that is not key=value refused");
	like(err, "p.conf:1: not key=value", "says so");
	ok(!strstr(err, "s3cr3t") && !strstr(err, "root"),
	   "... without the line (%s)", err);
	write_file(path, "s3cr3t-key=1\n", 13, 0644);
	is_int(policy(arg), -1, "an unknown key refused");
	ok(!strstr(err, "s3cr3t"), "... without the key (%s)", err);
	write_file(path, "enforce=sighup,s3cr3t\n", 22, 0644);
	is_int(policy(arg), -1, "an unknown name in enforce= refused");
	like(err, "p.conf:1: enforce=: unknown setting name", "says so");
	ok(!strstr(err, "s3cr3t"), "... without the name (%s)", err);
	write_file(path, "ignore-signals=s3cr3t\n", 22, 0644);
	is_int(policy(arg), -1, "a bad signal list refused");
	ok(!strstr(err, "s3cr3t"), "... without the list (%s)", err);
	write_file(path, "sighup=s3cr3t\x01\n", 15, 0644);
	is_int(policy(arg), -1, "a control character refused");
	is_str(strstr(err, "p.conf:1:"),
	       "p.conf:1: control or non-ASCII "
	       "characters",
	       "... without the line");

	write_file(path, "conf=/etc/other\n", 16, 0644);
	is_int(policy(arg), -1, "conf= inside a policy file refused");
	like(err, "do not nest", "says files do not nest");

	write_file(path, "sighup=ignore\n", 14, 0666);
	is_int(policy(arg), -1, "world-writable policy file refused");
	like(err, "writable by group or others", "says why");

	write_file(path, "sighup=ig\0nore\n", 15, 0644);
	is_int(policy(arg), -1, "NUL byte refused");
	like(err, "p.conf:1: NUL byte", "names the line");

	write_file(path, "sighup=\x01\x02\xff\n", 11, 0644);
	is_int(policy(arg), -1, "binary junk refused");
	like(err, "control or non-ASCII", "says control characters");

	memset(big, 'a', sizeof(big));
	write_file(path, big, sizeof(big), 0644);
	is_int(policy(arg), -1, "huge policy file refused");
	like(err, "larger than", "says too large");

	memset(big, 'a', TE_POLICY_LINE_MAX + 5);
	write_file(path, big, TE_POLICY_LINE_MAX + 5, 0644);
	is_int(policy(arg), -1, "over-long line refused");
	like(err, "line longer than", "says line too long");

	write_file(path, "", 0, 0644);
	is_int(policy(arg), 0, "empty policy file is fine");

	is_int(policy("conf=/tmp"), -1, "directory as policy file refused");
	like(err, "not a regular file", "says not a regular file");

	/* A symbolic link is refused, whatever it points to. */
	{
		char link_path[300], link_arg[320];

		write_file(path, "sighup=ignore\n", 14, 0644);
		te_snprintf(link_path, sizeof(link_path), "%s/link.conf", dir);
		te_snprintf(link_arg, sizeof(link_arg), "conf=%s", link_path);
		ok(symlink(path, link_path) == 0,
		   "a link to a good policy file");
		is_int(policy(link_arg), -1,
		       "conf= naming a symbolic link refused");
		like(err, "link.conf: is a symbolic link", "says it is a link");
		is_int(policy(arg), 0,
		       "the file itself, by its own path, is read");
		unlink(link_path);
	}

	unlink(path);
	rmdir(dir);
}

static void test_precedence(void)
{
	/* Each level of the rule, one below the other, for a numeric knob. */
	policy("nccl-heartbeat=900 nccl-heartbeat.max=3600");
	reset_inputs();
	is_int(resolve(), 0, "resolve with admin default only");
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].num, 900, "admin default used");
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].src, TE_SRC_ADMIN,
	       "source admin default");

	fake_env[0] = "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=1000";
	resolve();
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].num, 1000,
	       "environment beats admin default");
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].src, TE_SRC_ENV,
	       "source environment");
	is_str(cfg.v[TE_S_NCCL_HEARTBEAT].origin,
	       "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "origin names the variable");

	opts[TE_S_NCCL_HEARTBEAT] = "1200";
	resolve();
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].num, 1200,
	       "option beats environment");
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].src, TE_SRC_OPTION, "source option");

	policy("nccl-heartbeat=900 nccl-heartbeat.max=3600 enforce=nccl-heartbeat");
	is_int(resolve(), 0, "enforced resolve succeeds despite option");
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].num, 900, "enforced beats option");
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].src, TE_SRC_ENFORCED,
	       "source enforced");
	is_int(cfg.nwarn, 1, "one warning for the overridden option");
	like(cfg.warn[0],
	     "--train-nccl-heartbeat=1200 ignored: the site enforces "
	     "nccl-heartbeat=900",
	     "warning names option and enforced value");

	opts[TE_S_NCCL_HEARTBEAT] = "900";
	resolve();
	is_int(cfg.nwarn, 0,
	       "no warning when the option equals the enforced value");

	policy("");
	reset_inputs();
	resolve();
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].src, TE_SRC_UNSET,
	       "no built-in heartbeat: left alone");
	ok(!cfg.v[TE_S_NCCL_HEARTBEAT].set, "unset value");
	is_int(cfg.v[TE_S_SIGHUP].src, TE_SRC_BUILTIN, "sighup from built-in");
	is_str(cfg.v[TE_S_SIGHUP].text, "shield", "built-in sighup is shield");
	is_int(cfg.v[TE_S_SIGHUP].word, 0, "built-in sighup: word 0 (shield)");
	is_str(cfg.v[TE_S_TRAIN].text, "on", "built-in train is on");

	/* Bounds: refused, not clamped, for options and environment. */
	policy("nccl-heartbeat.min=300 nccl-heartbeat.max=3600");
	reset_inputs();
	opts[TE_S_NCCL_HEARTBEAT] = "100";
	is_int(resolve(), -1, "option below site minimum refused");
	like(err,
	     "--train-nccl-heartbeat: 100 is below the site minimum; "
	     "accepted: 300 to 3600 seconds (site bounds)",
	     "names option and bounds");
	opts[TE_S_NCCL_HEARTBEAT] = "7200";
	is_int(resolve(), -1, "option above site maximum refused");
	like(err, "above the site maximum", "says above the maximum");
	opts[TE_S_NCCL_HEARTBEAT] = "3600";
	is_int(resolve(), 0, "option at the maximum accepted");
	opts[TE_S_NCCL_HEARTBEAT] = "300";
	is_int(resolve(), 0, "option at the minimum accepted");
	reset_inputs();
	fake_env[0] = "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=10";
	is_int(resolve(), -1, "environment value outside bounds refused");
	like(err,
	     "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC in the job environment "
	     "(setting nccl-heartbeat): 10 is below the site minimum",
	     "names the variable and the bounds");
	fake_env[0] = "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=soon";
	is_int(resolve(), -1, "junk environment value refused");
	like(err, "accepted: 300 to 3600 seconds (site bounds)",
	     "junk environment value: accepted names the site bounds");
	reset_inputs();
	opts[TE_S_NCCL_HEARTBEAT] = "0";
	is_int(resolve(), -1, "option below the hard limit refused");
	like(err,
	     "--train-nccl-heartbeat: invalid value '0'; accepted: 300 to "
	     "3600 seconds (site bounds)",
	     "invalid option: accepted names the site bounds, not the hard limits");
	{
		char e2[TE_ERR_MAX];

		is_int(te_check_user_value(&pol, TE_S_NCCL_HEARTBEAT, "soon",
					   e2, sizeof(e2)),
		       -1, "early check refuses junk");
		like(e2, "accepted: 300 to 3600 seconds (site bounds)",
		     "early check: accepted names the site bounds");
	}

	/* Enum knob and the whole-plugin switch. */
	policy("sighup=default");
	reset_inputs();
	resolve();
	is_str(cfg.v[TE_S_SIGHUP].text, "default", "admin default for sighup");
	policy("sighup=ignore");
	resolve();
	is_str(cfg.v[TE_S_SIGHUP].text, "ignore",
	       "admin default sighup=ignore (the old built-in)");
	is_int(cfg.v[TE_S_SIGHUP].src, TE_SRC_ADMIN, "from the admin");
	policy("sighup=ignore enforce=sighup");
	opts[TE_S_SIGHUP] = "shield";
	resolve();
	is_str(cfg.v[TE_S_SIGHUP].text, "ignore",
	       "enforced sighup=ignore beats --train-sighup=shield");
	policy("sighup=default");
	reset_inputs();
	resolve();
	opts[TE_S_SIGHUP] = "ignore";
	opts[TE_S_TRAIN] = "off";
	resolve();
	is_str(cfg.v[TE_S_SIGHUP].text, "ignore",
	       "option beats admin default (enum)");
	is_str(cfg.v[TE_S_TRAIN].text, "off", "--train=off");
	policy("train=on enforce=train");
	resolve();
	is_str(cfg.v[TE_S_TRAIN].text, "on",
	       "enforce=train keeps the plugin on");
	is_int(cfg.nwarn, 1, "and warns the user");
	opts[TE_S_SIGHUP] = "sometimes";
	is_int(resolve(), -1, "bad enum option refused");
	like(err,
	     "--train-sighup: invalid value 'sometimes'; accepted: shield, ignore or default",
	     "names option and accepted values");
}

static void test_inherited(void)
{
	struct te_config inh;

	/* An enclosing step set the heartbeat from the admin default: the
	 * variable it left behind is not a user value. */
	policy("nccl-heartbeat=900");
	reset_inputs();
	resolve();
	inh = cfg;
	policy("nccl-heartbeat=600");
	fake_env[0] = "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=900";
	te_resolve(&pol, opts, fake_getenv, NULL, &inh, &cfg, err, sizeof(err));
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].src, TE_SRC_ADMIN,
	       "value trainenv set in the enclosing job is not a user value");
	fake_env[0] = "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=1000";
	te_resolve(&pol, opts, fake_getenv, NULL, &inh, &cfg, err, sizeof(err));
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].src, TE_SRC_ENV,
	       "a changed value is the user's");

	/* TRAINENV_SETTINGS forged by the user, claiming an out-of-bounds
	 * value as trainenv's own: the value is the user's and refused
	 * (seen on the cluster: without this the task got 5000 with a site
	 * maximum of 3600 and no site default). */
	policy("nccl-heartbeat.max=3600");
	is_int(te_config_decode(&inh, "nccl-heartbeat:2:5000:x", err,
				sizeof(err)),
	       0, "a forged TRAINENV_SETTINGS decodes");
	fake_env[0] = "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=5000";
	is_int(te_resolve(&pol, opts, fake_getenv, NULL, &inh, &cfg, err,
			  sizeof(err)),
	       -1,
	       "forged TRAINENV_SETTINGS: an out-of-bounds value is still refused");
	like(err, "5000 is above the site maximum",
	     "forged TRAINENV_SETTINGS: the error names the bound");
	fake_env[0] = "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=3000";
	te_config_decode(&inh, "nccl-heartbeat:2:3000:x", err, sizeof(err));
	te_resolve(&pol, opts, fake_getenv, NULL, &inh, &cfg, err, sizeof(err));
	is_int(cfg.v[TE_S_NCCL_HEARTBEAT].src, TE_SRC_UNSET,
	       "an in-bounds value an enclosing trainenv set is still not the user's");
	fake_env[0] = NULL;
}

static void test_encoding(void)
{
	static struct te_config back;
	static char enc[64 * 1024];
	char line[2048];
	int i, same = 1;

	policy("nccl-heartbeat=900");
	reset_inputs();
	opts[TE_S_SIGHUP] = "default";
	resolve();
	te_strlcpy(cfg.v[TE_S_NCCL_HEARTBEAT].origin, "odd origin: % ; \"x\"",
		   TE_ORIGIN_MAX);
	is_int(te_config_encode(&cfg, enc, sizeof(enc)), 0, "encode");
	ok(!strchr(enc, '\n') && !strchr(enc, '='),
	   "encoding has no newline or '='");
	is_int(te_config_decode(&back, enc, err, sizeof(err)), 0, "decode");
	for (i = 0; i < TE_S_COUNT; i++)
		if (strcmp(back.v[i].text, cfg.v[i].text) ||
		    strcmp(back.v[i].origin, cfg.v[i].origin) ||
		    back.v[i].src != cfg.v[i].src)
			same = 0;
	ok(same, "round trip keeps value, source and origin");
	te_explain_line(&back, TE_S_SIGHUP, line, sizeof(line));
	like(line, "sighup", "explain line names the setting");
	like(line, "= default", "explain line shows the value");
	like(line, "(option: --train-sighup)", "explain line shows the source");
	te_explain_line(&back, TE_S_NCCL_HEARTBEAT, line, sizeof(line));
	like(line, "(admin default", "admin default source shown");
	is_int(te_config_encode(&cfg, enc, 10), -1, "small buffer refused");

	ok(te_config_decode(&back, "sighup:1", err, sizeof(err)) < 0,
	   "truncated item refused");
	ok(te_config_decode(&back, "sighup:9:x:", err, sizeof(err)) < 0,
	   "bad source refused");
	ok(te_config_decode(&back, "sighup:1:%zz:", err, sizeof(err)) < 0,
	   "bad escape refused");
	ok(te_config_decode(&back, "sighup:1:%00:", err, sizeof(err)) < 0,
	   "encoded NUL refused");
	ok(te_config_decode(&back, "future-knob:1:x: sighup:4:default:o", err,
			    sizeof(err)) == 0 &&
		   !strcmp(back.v[TE_S_SIGHUP].text, "default"),
	   "unknown names from a newer trainenv are skipped");
	ok(te_config_decode(&back, "sighup:1:a:b:c", err, sizeof(err)) < 0,
	   "extra field refused");
}

static void test_strutil(void)
{
	char b[8], q[16];
	uint64_t n;

	is_int(te_strlcpy(b, "abcdefghij", sizeof(b)), 10,
	       "strlcpy returns source length");
	is_str(b, "abcdefg", "strlcpy truncates and terminates");
	is_int(te_snprintf(b, sizeof(b), "%s", "toolongtext"), -1,
	       "snprintf reports truncation");
	is_int(te_parse_u64("18446744073709551615", UINT64_MAX, &n), -1,
	       "20 digits refused even when representable");
	is_int(te_parse_u64("1844674407370955161", UINT64_MAX, &n), 0,
	       "19 digits accepted");
	te_quote(q, sizeof(q), "a\nb\x01");
	is_str(q, "a\\x0ab\\x01", "quote escapes control bytes");
	te_quote(q, sizeof(q), "0123456789abcdefghij");
	ok(strlen(q) < sizeof(q) && strstr(q, "..."), "quote cuts long text");
}

static void test_node_name(void)
{
	char n[64], small[4];

	te_node_name_from("n3", n, sizeof(n));
	is_str(n, "n3", "node name: a plain host name");
	te_node_name_from("gpu-001.cluster.example", n, sizeof(n));
	is_str(n, "gpu-001", "node name: the short name of a full one");
	te_node_name_from("evil\x1b[2Jhost", n, sizeof(n));
	is_str(n, "unknown", "node name: control characters refused");
	te_node_name_from("a b", n, sizeof(n));
	is_str(n, "unknown", "node name: a blank refused");
	te_node_name_from("", n, sizeof(n));
	is_str(n, "unknown", "node name: empty");
	te_node_name_from(".x", n, sizeof(n));
	is_str(n, "unknown", "node name: nothing before the first dot");
	te_node_name_from(NULL, n, sizeof(n));
	is_str(n, "unknown", "node name: none");
	te_node_name_from("toolongname", small, sizeof(small));
	is_str(small, "unk", "node name: too long for the buffer, cut marker");
	te_node_name(n, sizeof(n));
	ok(n[0] && !strchr(n, '.'), "node name of this host: '%s'", n);
}

/* Every named word (settings.h) spells the word at that position, and
 * every word of every setting has a name: code that compares
 * cfg.v[X].word with a name reads what it says. */
static void test_word_names(void)
{
	static const struct {
		int id, word;
		const char *text;
	} names[] = {
		{ TE_S_TRAIN, TE_W_ON, "on" },
		{ TE_S_TRAIN, TE_W_OFF, "off" },
		{ TE_S_SIGHUP, TE_W_SIGHUP_SHIELD, "shield" },
		{ TE_S_SIGHUP, TE_W_SIGHUP_IGNORE, "ignore" },
		{ TE_S_SIGHUP, TE_W_SIGHUP_DEFAULT, "default" },
		{ TE_S_NCCL_MONITORING, TE_W_ON, "on" },
		{ TE_S_NCCL_MONITORING, TE_W_OFF, "off" },
		{ TE_S_NCCL_ASYNC_ERRORS, TE_W_ASYNC_OFF, "off" },
		{ TE_S_NCCL_ASYNC_ERRORS, TE_W_ASYNC_TEAR_DOWN, "tear-down" },
		{ TE_S_NCCL_ASYNC_ERRORS, TE_W_ASYNC_CLEANUP_ONLY,
		  "cleanup-only" },
		{ TE_S_NCCL_ASYNC_ERRORS, TE_W_ASYNC_SKIP_CLEANUP,
		  "skip-cleanup" },
		{ TE_S_NCCL_BLOCKING_WAIT, TE_W_ON, "on" },
		{ TE_S_NCCL_BLOCKING_WAIT, TE_W_OFF, "off" },
		{ TE_S_NCCL_DESYNC_DEBUG, TE_W_ON, "on" },
		{ TE_S_NCCL_DESYNC_DEBUG, TE_W_OFF, "off" },
		{ TE_S_NCCL_DUMP, TE_W_ON, "on" },
		{ TE_S_NCCL_DUMP, TE_W_OFF, "off" },
		{ TE_S_NCCL_DIAGNOSTICS, TE_W_ON, "on" },
		{ TE_S_NCCL_DIAGNOSTICS, TE_W_OFF, "off" },
		{ TE_S_LAUNCHER, TE_W_LAUNCHER_AUTO, "auto" },
		{ TE_S_LAUNCHER, TE_W_LAUNCHER_TASK, "task" },
		{ TE_S_LAUNCHER, TE_W_LAUNCHER_TORCHRUN, "torchrun" },
		{ TE_S_RANK_ENV, TE_W_YES, "yes" },
		{ TE_S_RANK_ENV, TE_W_NO, "no" },
		{ TE_S_IGNORE_SIGNALS, TE_W_SIGLIST_NONE, "none" },
		{ TE_S_FAILURE_REPORT, TE_W_ON, "on" },
		{ TE_S_FAILURE_REPORT, TE_W_OFF, "off" },
		{ TE_S_BIND, TE_W_BIND_NONE, "none" },
		{ TE_S_BIND, TE_W_BIND_NUMA, "numa" },
		{ TE_S_BIND, TE_W_BIND_CORES, "cores" },
		{ TE_S_BIND_SMT, TE_W_BIND_SMT_ALL, "all" },
		{ TE_S_BIND_SMT, TE_W_BIND_SMT_ONE, "one" },
		{ TE_S_BIND_GPUS, TE_W_BIND_GPUS_ALL, "all" },
		{ TE_S_BIND_GPUS, TE_W_BIND_GPUS_OWN, "own" },
		{ TE_S_BIND_FAILURE, TE_W_BIND_FAILURE_WARN, "warn" },
		{ TE_S_BIND_FAILURE, TE_W_BIND_FAILURE_FAIL, "fail" },
		{ TE_S_RDZV, TE_W_RDZV_AUTO, "auto" },
		{ TE_S_RDZV, TE_W_RDZV_PMIX, "pmix" },
		{ TE_S_RDZV, TE_W_RDZV_COMPUTED, "computed" },
		{ TE_S_BARRIER, TE_W_BARRIER_OFF, "off" },
		{ TE_S_BARRIER, TE_W_BARRIER_FIRST_COLLECTIVE,
		  "first-collective" },
		{ TE_S_VERSION_CHECK, TE_W_VCHECK_WARN, "warn" },
		{ TE_S_VERSION_CHECK, TE_W_VCHECK_FAIL, "fail" },
		{ TE_S_VERSION_CHECK, TE_W_VCHECK_OFF, "off" },
		{ TE_S_SOCKET_IFNAME, TE_W_YES, "yes" },
		{ TE_S_SOCKET_IFNAME, TE_W_NO, "no" },
		{ TE_S_SHRINK, TE_W_YES, "yes" },
		{ TE_S_SHRINK, TE_W_NO, "no" },
		{ TE_S_TRANSIENT, TE_W_TRANSIENT_OFF, "off" },
		{ TE_S_STEP_WATCH, TE_W_STEP_WATCH_OFF, "off" },
		{ TE_S_STRAGGLER, TE_W_STRAGGLER_OFF, "off" },
		{ TE_S_STRAGGLER_EXCLUDE, TE_W_STRAG_EXCLUDE_OFF, "off" },
		{ TE_S_STRAGGLER_EXCLUDE, TE_W_STRAG_EXCLUDE_CHECKPOINT,
		  "checkpoint" },
		{ TE_S_EXIT_GRACE, TE_W_EXIT_GRACE_OFF, "off" },
		{ TE_S_EXIT_ACTION, TE_W_EXIT_ACTION_REPORT, "report" },
		{ TE_S_EXIT_ACTION, TE_W_EXIT_ACTION_TERM, "term" },
		{ TE_S_EXIT_ACTION, TE_W_EXIT_ACTION_KILL, "kill" },
		{ TE_S_STALL, TE_W_STALL_OFF, "off" },
		{ TE_S_REQUEUE, TE_W_REQUEUE_OFF, "off" },
		{ TE_S_SPARES, TE_W_REQUEUE_OFF, "off" },
		{ TE_S_TIME_SIGNAL, TE_W_TIME_SIGNAL_OFF, "off" },
		{ TE_S_REQUEUE_ON, TE_W_REQUEUE_ON_NODE, "node" },
		{ TE_S_REQUEUE_ON, TE_W_REQUEUE_ON_ANY, "any" },
		{ TE_S_REQUEUE_SIGNALS, TE_W_SIGLIST_NONE, "none" },
		{ TE_S_REQUEUE_NO_PROGRESS, TE_W_NO_PROGRESS_OFF, "off" },
		{ TE_S_PREFLIGHT, TE_W_PREFLIGHT_OFF, "off" },
		{ TE_S_PREFLIGHT, TE_W_PREFLIGHT_ON, "on" },
		{ TE_S_PREFLIGHT, TE_W_PREFLIGHT_VERBOSE, "verbose" },
		{ TE_S_TOPOLOGY_CACHE, TE_W_PATH_OFF, "off" },
		{ TE_S_RECORD_DIR, TE_W_PATH_OFF, "off" },
		{ TE_S_BARRIER_SKEW_WARN, TE_W_SKEW_WARN_OFF, "off" },
		{ TE_S_FENCE_TREE_MIN_NODES, TE_W_FENCE_TREE_AUTO, "auto" },
		{ TE_S_FENCE_TREE_MIN_NODES, TE_W_FENCE_TREE_OFF, "off" },
		{ TE_S_TEST_HOOKS, TE_W_ON, "on" },
		{ TE_S_TEST_HOOKS, TE_W_OFF, "off" },
	};
	const size_t nn = sizeof(names) / sizeof(names[0]);
	struct te_value v;
	size_t i, k;
	int id, w, bad = 0, unnamed = 0;

	for (i = 0; i < nn; i++) {
		const struct te_setting *s = &te_settings[names[i].id];

		if (!s->words || !s->words[names[i].word] ||
		    strcmp(s->words[names[i].word], names[i].text) ||
		    te_value_parse(names[i].id, names[i].text, 0, &v, err,
				   sizeof(err)) < 0 ||
		    v.word != names[i].word) {
			printf("# %s: name %d is not '%s'\n", s->name,
			       names[i].word, names[i].text);
			bad++;
		}
	}
	is_int(bad, 0,
	       "every named word (%zu) is its setting's word at "
	       "that name and parses to it",
	       nn);
	for (id = 0; id < TE_S_COUNT; id++)
		for (w = 0; te_settings[id].words && te_settings[id].words[w];
		     w++) {
			for (k = 0; k < nn; k++)
				if (names[k].id == id && names[k].word == w)
					break;
			if (k == nn) {
				printf("# %s: word '%s' has no name\n",
				       te_settings[id].name,
				       te_settings[id].words[w]);
				unnamed++;
			}
		}
	is_int(unnamed, 0, "every word of every setting has a name");
	ok(te_value_parse(TE_S_TRAIN, "true", 0, &v, err, sizeof(err)) == 0 &&
		   v.word == TE_W_TRUE &&
		   te_value_parse(TE_S_RANK_ENV, "0", 0, &v, err,
				  sizeof(err)) == 0 &&
		   v.word == TE_W_FALSE,
	   "a boolean's true is TE_W_TRUE, its false TE_W_FALSE");
	ok(te_value_parse(TE_S_NCCL_DUMP, "on", 0, &v, err, sizeof(err)) == 0 &&
		   !strcmp(te_value_env_text(TE_S_NCCL_DUMP, &v), "1"),
	   "a boolean's true is written as 1 in the job environment");
	ok(te_value_parse(TE_S_NCCL_ASYNC_ERRORS, "cleanup-only", 0, &v, err,
			  sizeof(err)) == 0 &&
		   !strcmp(te_value_env_text(TE_S_NCCL_ASYNC_ERRORS, &v), "2"),
	   "async errors: cleanup-only is written as 2");
	ok(te_value_parse(TE_S_BIND, "numa,verbose", 0, &v, err, sizeof(err)) ==
			   0 &&
		   v.word == TE_W_BIND_NUMA &&
		   (v.num & (1u << TE_M_BIND_VERBOSE)) &&
		   !strcmp(te_settings[TE_S_BIND].mods[TE_M_BIND_VERBOSE],
			   "verbose"),
	   "bind=numa,verbose: TE_W_BIND_NUMA with the TE_M_BIND_VERBOSE bit");
	ok(te_value_parse(TE_S_BARRIER, "120", 0, &v, err, sizeof(err)) == 0 &&
		   v.word == TE_W_VALUE && v.num == 120,
	   "barrier=120: a number is TE_W_VALUE, not a word");
	ok(te_value_parse(TE_S_TOPOLOGY_CACHE, "/var/cache/x", 0, &v, err,
			  sizeof(err)) == 0 &&
		   v.word == TE_W_VALUE,
	   "topology-cache=DIR: a path is TE_W_VALUE");
}

/* --train-time-signal=SIG@SECONDS and the site's requeue-signals list */
/* --train-transient: exit codes, sorted, each once; the reserved ones
 * refused with why; the site's bounds apply to every code. */
static void test_transient_values(void)
{
	static const char *const bad[] = { "0",	  "256", "3,,4", ",3",
					   "3,",  "x",	 "-3",	 "3 4",
					   "1e2", "3;4", "0x10", "" };
	struct te_value v;
	struct te_policy tpol;
	char *argv[2];
	size_t i;
	int refused = 0;

	ok(te_value_parse(TE_S_TRANSIENT, "42,3,42,255", 0, &v, err,
			  sizeof(err)) == 0 &&
		   v.word == TE_W_VALUE && !strcmp(v.text, "3,42,255") &&
		   v.num == 3 && v.num2 == 255,
	   "transient=42,3,42,255: 3,42,255 (lowest 3, highest 255)");
	ok(te_value_parse(TE_S_TRANSIENT, "off", 0, &v, err, sizeof(err)) ==
			   0 &&
		   v.word == TE_W_TRANSIENT_OFF,
	   "transient=off");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused += te_value_parse(TE_S_TRANSIENT, bad[i], 0, &v, err,
					  sizeof(err)) < 0;
	is_int(refused, (int)(sizeof(bad) / sizeof(bad[0])),
	       "malformed lists refused");
	like(err, "list of exit codes 1 to 255 but 75, 93, 126 and 127",
	     "  the error says what is accepted");
	ok(te_value_parse(TE_S_TRANSIENT, "3,75", 0, &v, err, sizeof(err)) < 0,
	   "75 (a node's failed pre-flight) refused");
	like(err, "'75' is an exit code trainenv reserves (a node failed",
	     "  with why");
	like(err, "; accepted: a comma-separated list of exit codes",
	     "  and what is accepted");
	ok(te_value_parse(TE_S_TRANSIENT, "93", 0, &v, err, sizeof(err)) < 0 &&
		   te_value_parse(TE_S_TRANSIENT, "126", 0, &v, err,
				  sizeof(err)) < 0 &&
		   te_value_parse(TE_S_TRANSIENT, "127", 0, &v, err,
				  sizeof(err)) < 0,
	   "93, 126 and 127 refused");
	te_policy_init(&tpol);
	argv[0] = "transient.min=10";
	argv[1] = "transient.max=20";
	ok(te_policy_args(&tpol, 2, argv, err, sizeof(err)) == 0,
	   "transient takes site bounds");
	ok(te_check_user_value(&tpol, TE_S_TRANSIENT, "12,20", err,
			       sizeof(err)) == 0,
	   "codes inside the bounds taken");
	ok(te_check_user_value(&tpol, TE_S_TRANSIENT, "12,21", err,
			       sizeof(err)) < 0,
	   "one code above the site maximum: refused");
	like(err,
	     "12,21 is above the site maximum; accepted: a "
	     "comma-separated list of exit codes 10 to 20 but",
	     "  said, with the site's bounds");
	ok(te_check_user_value(&tpol, TE_S_TRANSIENT, "9,12", err,
			       sizeof(err)) < 0,
	   "one below the site minimum: refused");
}

static void test_recovery_values(void)
{
	struct te_value v;
	struct te_policy tpol;
	char *argv[4];

	ok(te_value_parse(TE_S_TIME_SIGNAL, "USR1@100", 0, &v, err,
			  sizeof(err)) == 0 &&
		   v.num == 100 && v.num2 == SIGUSR1 && v.word == TE_W_VALUE &&
		   !strcmp(v.text, "USR1@100"),
	   "time-signal=USR1@100: 100 s, SIGUSR1");
	ok(te_value_parse(TE_S_TIME_SIGNAL, "SIGTERM@60", 0, &v, err,
			  sizeof(err)) == 0 &&
		   v.num2 == SIGTERM && !strcmp(v.text, "TERM@60"),
	   "the SIG prefix is taken, the text is canonical");
	ok(te_value_parse(TE_S_TIME_SIGNAL, "off", 0, &v, err, sizeof(err)) ==
			   0 &&
		   v.word == TE_W_TIME_SIGNAL_OFF,
	   "time-signal=off");
	ok(te_value_parse(TE_S_TIME_SIGNAL, "KILL@100", 0, &v, err,
			  sizeof(err)) < 0,
	   "KILL is refused (nothing to catch)");
	like(err, "SIG one of USR1, USR2, TERM, INT",
	     "the error lists the signals");
	ok(te_value_parse(TE_S_TIME_SIGNAL, "USR1@0", 0, &v, err, sizeof(err)) <
			   0 &&
		   te_value_parse(TE_S_TIME_SIGNAL, "USR1@", 0, &v, err,
				  sizeof(err)) < 0 &&
		   te_value_parse(TE_S_TIME_SIGNAL, "@100", 0, &v, err,
				  sizeof(err)) < 0 &&
		   te_value_parse(TE_S_TIME_SIGNAL, "USR1", 0, &v, err,
				  sizeof(err)) < 0 &&
		   te_value_parse(TE_S_TIME_SIGNAL, "USR1@1e3", 0, &v, err,
				  sizeof(err)) < 0 &&
		   te_value_parse(TE_S_TIME_SIGNAL, "usr1@100", 0, &v, err,
				  sizeof(err)) < 0 &&
		   te_value_parse(TE_S_TIME_SIGNAL, "USR1@100@3", 0, &v, err,
				  sizeof(err)) < 0 &&
		   te_value_parse(TE_S_TIME_SIGNAL, "USR1@99999999999999999999",
				  0, &v, err, sizeof(err)) < 0 &&
		   te_value_parse(TE_S_TIME_SIGNAL, "SIGSIGUSR1@5", 0, &v, err,
				  sizeof(err)) < 0,
	   "malformed SIG@SECONDS refused");
	te_policy_init(&tpol);
	argv[0] = "time-signal.min=60";
	argv[1] = "time-signal.max=600";
	argv[2] = "requeue.max=3";
	ok(te_policy_args(&tpol, 3, argv, err, sizeof(err)) == 0,
	   "time-signal and requeue take site bounds");
	ok(te_check_user_value(&tpol, TE_S_TIME_SIGNAL, "USR2@30", err,
			       sizeof(err)) < 0,
	   "below the site minimum refused");
	like(err, "below the site minimum", "and says so");
	ok(te_check_user_value(&tpol, TE_S_TIME_SIGNAL, "USR2@300", err,
			       sizeof(err)) == 0,
	   "inside the bounds taken");
	ok(te_check_user_value(&tpol, TE_S_REQUEUE, "4", err, sizeof(err)) < 0,
	   "requeue above the site maximum refused");
	ok(te_value_parse(TE_S_REQUEUE_SIGNALS, "BUS,sigsegv", 0, &v, err,
			  sizeof(err)) == 0 &&
		   v.num == ((1ULL << SIGBUS) | (1ULL << SIGSEGV)) &&
		   !strcmp(v.text, "BUS,SEGV"),
	   "requeue-signals=BUS,sigsegv");
	ok(te_value_parse(TE_S_REQUEUE_SIGNALS, "PIPE", 0, &v, err,
			  sizeof(err)) < 0,
	   "requeue-signals refuses PIPE");
	like(err, "BUS, SEGV, ILL", "its error lists the fault signals");
	ok(te_value_parse(TE_S_IGNORE_SIGNALS, "BUS", 0, &v, err, sizeof(err)) <
		   0,
	   "ignore-signals still refuses BUS");
	like(err, "PIPE, TTIN", "its error lists the ignorable signals");
	test_transient_values();
}

/* The table's names against the checked-in list (tests/data/settings.list):
 * a setting added, removed or moved is a change made on purpose, in both. */
static void test_settings_list(void)
{
	char names[TE_S_COUNT + 16][64], line[128];
	int n = 0, i, j, same = 1;
	FILE *f = fopen(TE_SETTINGS_LIST, "r");

	ok(f != NULL, "the list of settings %s is there", TE_SETTINGS_LIST);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n < TE_S_COUNT + 16) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] && line[0] != '#')
			te_strlcpy(names[n++], line, sizeof(names[0]));
	}
	fclose(f);
	for (i = 0; i < TE_S_COUNT; i++) {
		for (j = 0; j < n && strcmp(names[j], te_settings[i].name); j++)
			;
		if (j == n) {
			same = 0;
			printf("# added: '%s' is in the table, not in %s\n",
			       te_settings[i].name, TE_SETTINGS_LIST);
		}
	}
	for (j = 0; j < n; j++)
		if (te_setting_find(names[j]) < 0) {
			same = 0;
			printf("# removed: '%s' is in %s, not in the table\n",
			       names[j], TE_SETTINGS_LIST);
		}
	for (i = 0; same && i < TE_S_COUNT && i < n; i++)
		if (strcmp(names[i], te_settings[i].name)) {
			same = 0;
			printf("# moved: entry %d is '%s' in the table, '%s' in %s\n",
			       i + 1, te_settings[i].name, names[i],
			       TE_SETTINGS_LIST);
		}
	ok(same && n == TE_S_COUNT,
	   "the table's %d names are the list's %d, "
	   "in its order",
	   TE_S_COUNT, n);
}

/* The accessors that give the rest of the tree a row's bound and default,
 * and the barrier's deadline from the effective settings. */
static void test_accessors(void)
{
	static struct te_policy pl;
	static struct te_config cf, dec;
	char e[TE_ERR_MAX];
	static char enc[TE_SETTINGS_ENV_MAX];
	const char *user[TE_S_COUNT] = { 0 };

	is_int((int)te_setting_max(TE_S_BARRIER), 604800,
	       "te_setting_max(barrier): a week");
	ok(te_setting_max(TE_S_EXIT_GRACE) == TE_WEEK_S &&
		   te_setting_max(TE_S_STALL) == TE_WEEK_S &&
		   te_setting_max(TE_S_TIME_SIGNAL) == TE_WEEK_S &&
		   te_setting_max(TE_S_BARRIER_SKEW_WARN) == TE_WEEK_S &&
		   TE_WEEK_S == 604800,
	   "the other seconds settings: TE_WEEK_S, 604800");
	is_int((int)te_setting_max(TE_S_LAUNCH_TREE_WIDTH), 1024,
	       "te_setting_max(launch-tree-width): 1024");
	is_int((int)te_setting_max(-1), 0, "no such setting: 0");
	is_int((int)te_setting_builtin_num(TE_S_BARRIER), 300,
	       "te_setting_builtin_num(barrier): 300");
	is_int(TE_BARRIER_BUILTIN_S, 300,
	       "  TE_BARRIER_BUILTIN_S is the row's");
	is_str(te_settings[TE_S_BARRIER].builtin, "300", "  its text \"300\"");
	is_int((int)te_setting_builtin_num(TE_S_LAUNCH_TREE_WIDTH), 16,
	       "te_setting_builtin_num(launch-tree-width): 16");
	is_int((int)te_setting_builtin_num(TE_S_SIGHUP), 0,
	       "a word's built-in: 0");

	te_policy_init(&pl);
	te_policy_finish(&pl, e, sizeof(e));
	te_resolve(&pl, user, fake_getenv, NULL, NULL, &cf, e, sizeof(e));
	is_int((int)te_setting_barrier_s(&cf, &pl), 300,
	       "barrier deadline, built-in settings: 300");
	user[TE_S_BARRIER] = "45";
	te_resolve(&pl, user, fake_getenv, NULL, NULL, &cf, e, sizeof(e));
	is_int((int)te_setting_barrier_s(&cf, NULL), 45, "barrier=45: 45");
	user[TE_S_BARRIER] = "first-collective";
	te_resolve(&pl, user, fake_getenv, NULL, NULL, &cf, e, sizeof(e));
	is_int((int)te_setting_barrier_s(&cf, &pl), 300,
	       "first-collective, no site number: the row's 300");
	te_policy_init(&pl);
	te_policy_item(&pl, "barrier=900", "test", 1, e, sizeof(e));
	te_policy_finish(&pl, e, sizeof(e));
	te_resolve(&pl, user, fake_getenv, NULL, NULL, &cf, e, sizeof(e));
	is_int((int)te_setting_barrier_s(&cf, &pl), 900,
	       "first-collective under a site's barrier=900: 900");
	is_int((int)te_setting_barrier_s(&cf, NULL), 300,
	       "  the same without the policy (a task's view): 300");

	/* decoded settings hold the numbers, as the plugin had them */
	user[TE_S_BARRIER] = "604800";
	user[TE_S_PORT_RANGE] = "31000-31010";
	te_resolve(&pl, user, fake_getenv, NULL, NULL, &cf, e, sizeof(e));
	ok(te_config_encode(&cf, enc, sizeof(enc)) == 0 &&
		   te_config_decode(&dec, enc, e, sizeof(e)) == 0,
	   "encode, decode");
	ok(dec.v[TE_S_BARRIER].num == 604800 &&
		   dec.v[TE_S_BARRIER].word == TE_W_VALUE &&
		   dec.v[TE_S_PORT_RANGE].num == 31000 &&
		   dec.v[TE_S_PORT_RANGE].num2 == 31010 &&
		   dec.v[TE_S_SIGHUP].word == cf.v[TE_S_SIGHUP].word,
	   "  numbers and words decoded, not only the text");
	is_int((int)te_setting_barrier_s(&dec, NULL), 604800,
	       "  the decoded barrier's deadline: 604800");
	{
		int ndiff = 0;

		for (int i = 0; i < TE_S_COUNT; i++)
			if (cf.v[i].set &&
			    (cf.v[i].word != dec.v[i].word ||
			     cf.v[i].num != dec.v[i].num ||
			     cf.v[i].num2 != dec.v[i].num2 ||
			     strcmp(cf.v[i].text, dec.v[i].text))) {
				printf("# %s decodes differently\n",
				       te_settings[i].name);
				ndiff++;
			}
		is_int(ndiff, 0,
		       "  every set value decodes as the plugin had it");
	}
	ok(te_config_decode(&dec, "barrier:4:604801:x", e, sizeof(e)) < 0,
	   "a barrier past the row's bound: refused");
	is_str(e,
	       "TRAINENV_SETTINGS: item 'barrier': invalid value "
	       "'604801'; accepted: 1 to 604800 seconds, or off or "
	       "first-collective",
	       "  naming the item and the row's "
	       "accepted values");
}

/* nccl-diagnostics (issue 34 item 5): NCCL_RUN_DIAGNOSTICS through the same
 * rule as the timeouts; nothing set unless someone asks (no built-in). */
static void test_nccl_diagnostics(void)
{
	const struct te_value *v = &cfg.v[TE_S_NCCL_DIAGNOSTICS];

	policy("");
	reset_inputs();
	is_int(resolve(), 0, "nccl-diagnostics: resolve with nothing set");
	ok(!v->set && v->src == TE_SRC_UNSET,
	   "nccl-diagnostics: no built-in, NCCL_RUN_DIAGNOSTICS left alone");
	is_int(policy("nccl-diagnostics=on"), 0,
	       "plugstack.conf nccl-diagnostics=on is a site default");
	resolve();
	ok(v->set && v->src == TE_SRC_ADMIN && v->word == TE_W_ON,
	   "nccl-diagnostics: the site default on");
	is_str(te_value_env_text(TE_S_NCCL_DIAGNOSTICS, v), "1",
	       "  written as NCCL_RUN_DIAGNOSTICS=1");
	fake_env[0] = "NCCL_RUN_DIAGNOSTICS=0";
	resolve();
	ok(v->src == TE_SRC_ENV && v->word == TE_W_OFF &&
		   !strcmp(v->origin, "NCCL_RUN_DIAGNOSTICS"),
	   "NCCL_RUN_DIAGNOSTICS=0 in the job environment beats the site "
	   "default");
	opts[TE_S_NCCL_DIAGNOSTICS] = "on";
	resolve();
	ok(v->src == TE_SRC_OPTION && v->word == TE_W_ON,
	   "--train-nccl-diagnostics=on beats the job environment");
	opts[TE_S_NCCL_DIAGNOSTICS] = "off";
	resolve();
	is_str(te_value_env_text(TE_S_NCCL_DIAGNOSTICS, v), "0",
	       "--train-nccl-diagnostics=off: NCCL_RUN_DIAGNOSTICS=0");
	policy("nccl-diagnostics=on enforce=nccl-diagnostics");
	resolve();
	ok(v->src == TE_SRC_ENFORCED && v->word == TE_W_ON && cfg.nwarn == 1,
	   "enforced nccl-diagnostics=on beats --train-nccl-diagnostics=off, "
	   "with a warning");
	opts[TE_S_NCCL_DIAGNOSTICS] = NULL;
	resolve();
	ok(v->src == TE_SRC_ENFORCED && v->word == TE_W_ON,
	   "  and the job environment's NCCL_RUN_DIAGNOSTICS=0");
	policy("");
	fake_env[0] = "NCCL_RUN_DIAGNOSTICS=2";
	is_int(resolve(), -1,
	       "NCCL_RUN_DIAGNOSTICS=2 in the job environment is refused");
	like(err,
	     "NCCL_RUN_DIAGNOSTICS in the job environment "
	     "(setting nccl-diagnostics): invalid value '2'; accepted: "
	     "on or off",
	     "  naming the variable and what is accepted");
	is_int(policy("nccl-diagnostics.max=1"), -1,
	       "a bound on nccl-diagnostics (a word setting) is refused");
	reset_inputs();
}

int main(void)
{
	test_settings_list();
	test_accessors();
	test_values();
	test_word_names();
	test_recovery_values();
	test_policy_args();
	test_policy_file();
	test_precedence();
	test_nccl_diagnostics();
	test_inherited();
	test_encoding();
	test_strutil();
	test_node_name();
	return tap_done();
}
