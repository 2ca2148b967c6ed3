/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the health policy (core/health/health_policy.c): each
 * key, its errors (naming the key and what is accepted), and the merge
 * of a user's choices over the site's: stricter yes, weaker no unless
 * the site allows it, drain only by the site. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "health/health.h"
#include "tap.h"

static char err[512];

static int parse(struct te_health_policy *p, const char *text)
{
	err[0] = '\0';
	te_health_policy_init(p);
	return te_health_policy_parse(p, text, strlen(text), "policy", err,
				      sizeof(err));
}

static void test_keys(void)
{
	struct te_health_policy p;

	te_health_policy_init(&p);
	is_int(p.checks, 0, "by default no check runs");
	is_int(p.timeout_s, TE_HEALTH_TIMEOUT_DEFAULT, "... the bound is 10 s");
	is_int(p.action[TE_HC_IB], TE_HA_WARN, "... and the action warn");
	is_int(parse(&p, "health=ib,eth,gpu health_ib_rate=200\n"
			 "# a comment health=nonsense\n"
			 "health_eth=eth0:25000,eth1 health_ib_action=drain "
			 "health_gpu_action=exclude health_timeout=5 "
			 "health_user_weaker=yes"),
	       0, "a whole policy parses");
	is_int(p.checks, 7, "... ib, eth and gpu");
	is_int(p.ib_min_gbps, 200, "... the IB rate");
	is_int(p.n_eth, 2, "... two interfaces");
	is_str(p.eth[0].name, "eth0", "... eth0");
	is_int(p.eth[0].min_mbps, 25000, "... at 25000 Mb/s");
	is_int(p.eth[1].min_mbps, 0, "... eth1 at any speed");
	is_int(p.action[TE_HC_IB], TE_HA_DRAIN, "... ib drains");
	is_int(p.action[TE_HC_GPU], TE_HA_EXCLUDE, "... gpu excludes");
	is_int(p.action[TE_HC_ETH], TE_HA_WARN, "... eth warns");
	is_int(p.timeout_s, 5, "... the bound");
	is_int(p.user_may_weaken, 1, "... users may weaken");
	is_int(parse(&p, "health=none"), 0, "health=none parses");
	is_int(p.checks, 0, "... no check");

	is_int(parse(&p, "health=ib,disk"), -1, "an unknown check: refused");
	is_str(err,
	       "policy: health: invalid value 'disk'; accepted: a "
	       "comma-separated list of ib, eth, gpu, hook; or none",
	       "... naming the key, the value and what is accepted");
	is_int(parse(&p, "health="), -1, "an empty list: refused");
	is_int(parse(&p, "health=,"), -1, "a list of nothing: refused");
	is_int(parse(&p, "health_ib_rate=fast"), -1, "a rate of junk: refused");
	like(err,
	     "health_ib_rate: invalid value 'fast'; accepted: 0 (any "
	     "rate) to 100000 (Gb/s)",
	     "... saying what is accepted");
	is_int(parse(&p, "health_ib_rate=100001"), -1,
	       "a rate past the bound: refused");
	is_int(parse(&p, "health_ib_rate=-1"), -1, "a negative rate: refused");
	is_int(parse(&p, "health_eth=../../etc:1"), -1,
	       "an interface name with '/': refused");
	like(err, "health_eth: invalid value '../../etc'",
	     "... naming the interface");
	is_int(parse(&p, "health_eth=.."), -1, "interface '..': refused");
	is_int(parse(&p, "health_eth=averyveryverylongname"), -1,
	       "an interface name of 16 or more characters: refused");
	is_int(parse(&p, "health_eth=eth0:0"), -1, "speed 0: refused");
	is_int(parse(&p, "health_eth=eth0:fast"), -1, "speed junk: refused");
	is_int(parse(&p, "health_eth=eth0,eth0"), -1,
	       "an interface twice: refused");
	is_int(parse(&p, "health_eth=a,b,c,d,e,f,g,h,i"), -1,
	       "nine interfaces: refused");
	is_int(parse(&p, "health_ib_action=reboot"), -1,
	       "an unknown action: refused");
	like(err,
	     "health_ib_action: invalid value 'reboot'; accepted: drain, "
	     "exclude, warn",
	     "... listing the actions");
	is_int(parse(&p, "health_timeout=0"), -1, "timeout 0: refused");
	is_int(parse(&p, "health_timeout=301"), -1, "timeout 301: refused");
	is_int(parse(&p, "health_user_weaker=maybe"), -1,
	       "user_weaker maybe: refused");
	is_int(parse(&p, "health_nccl=1"), -1, "an unknown key: refused");
	like(err, "unknown key 'health_nccl'; accepted: health, health_ib_rate",
	     "... listing the keys");
	is_int(parse(&p, "health"), -1, "no '=': refused");
	like(err, "'health' is not key=value", "... saying so");
	{
		char big[700];

		memset(big, 'x', sizeof(big));
		memcpy(big, "health=", 7);
		big[sizeof(big) - 1] = '\0';
		is_int(parse(&p, big), -1, "an item of 700 bytes: refused");
		like(err, "an item is longer than 511 bytes", "... saying so");
	}
	te_health_policy_init(&p);
	is_int(te_health_policy_set(&p, "train-nccl-timeout", "5", "x", err,
				    sizeof(err)),
	       0, "a key that is not health's: 0, left to another parser");
}

static void test_merge(void)
{
	struct te_health_policy site, user, out;

	parse(&site, "health=ib,eth health_ib_rate=200 health_eth=eth0:25000 "
		     "health_ib_action=exclude");
	parse(&user, "health=ib,eth,gpu health_ib_rate=400 "
		     "health_eth=eth0:40000,eth1 health_ib_action=exclude "
		     "health_gpu_action=exclude");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), 0,
	       "a stricter user policy merges");
	is_int(out.checks, 7, "... the user's check added");
	is_int(out.ib_min_gbps, 400, "... the rate raised");
	is_int(out.n_eth, 2, "... an interface added");
	is_int(out.eth[0].min_mbps, 40000, "... a speed raised");
	is_int(out.action[TE_HC_GPU], TE_HA_EXCLUDE, "... an action raised");

	parse(&user, "health_ib_rate=100");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a lower rate: refused");
	is_str(err,
	       "health_ib_rate=100: below the site's 200 Gb/s; accepted: "
	       "200 to 100000",
	       "... saying the site's and what is accepted");
	parse(&user, "health=ib");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "leaving a site check out: refused");
	like(err, "health=ib: the site runs ib,eth; a user may add checks",
	     "... naming the site's checks");
	parse(&user, "health=gpu");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "another list without the site's: refused");
	parse(&user, "health_eth=eth1");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "leaving the site's interface out: refused");
	like(err, "the site checks eth0", "... naming it");
	parse(&user, "health_eth=eth0:1000");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a lower speed: refused");
	like(err, "eth0:1000 is below the site's 25000 Mb/s", "... saying so");
	parse(&user, "health_ib_action=warn");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a milder action: refused");
	like(err, "health_ib_action=warn: below the site's exclude",
	     "... saying so");
	parse(&user, "health_eth_action=drain");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user's drain: refused");
	like(err, "only the site drains nodes", "... saying so");
	parse(&user, "health_timeout=1");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user's bound: refused");
	like(err, "health_timeout: only the site's policy sets it",
	     "... saying so");
	is_int(parse(&user, "health_nvml=/usr/lib/libnvidia-ml.so.1"), 0,
	       "health_nvml=PATH parses");
	is_str(user.nvml, "/usr/lib/libnvidia-ml.so.1", "... the path");
	is_int(parse(&user, "health_nvml=lib/x.so"), -1,
	       "a relative health_nvml: refused");
	is_int(parse(&user, "health_nvml=/a/../b.so"), -1,
	       "a health_nvml with '..': refused");
	is_int(parse(&user, "health_ib_ports=mlx5_0:1,mlx5_1:1"), 0,
	       "health_ib_ports parses");
	ok(user.n_ib_ports == 2 && !strcmp(user.ib_ports[1].dev, "mlx5_1") &&
		   user.ib_ports[1].port == 1,
	   "... two ports");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "... a user's health_ib_ports (a site's key): refused");
	is_int(parse(&user, "health_ib_ports=mlx5_0"), -1,
	       "a port list without a port number: refused");
	is_int(parse(&user, "health_ib_ports=../x:1"), -1,
	       "a device name with '/': refused");
	is_int(parse(&user, "health_gpu_count=8"), 0,
	       "health_gpu_count parses");
	is_int(user.gpu_count, 8, "... 8 GPUs");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "... a user's health_gpu_count (a site's key): refused");
	is_int(parse(&user, "health_gpu_count=1025"), -1,
	       "health_gpu_count past 1024: refused");
	parse(&user, "health_nvml=/tmp/x/libnvidia-ml.so.1");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user's health_nvml: refused");
	like(err, "health_nvml: only the site's policy sets it",
	     "... saying so");
	parse(&user, "health_user_weaker=yes");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user allowing themselves to weaken: refused");

	parse(&user, "");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), 0,
	       "no user keys: the site's policy");
	ok(out.checks == site.checks && out.ib_min_gbps == 200 &&
		   out.n_eth == 1,
	   "... unchanged");

	site.user_may_weaken = 1;
	parse(&user, "health=ib health_ib_rate=100 health_eth=none "
		     "health_ib_action=warn");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), 0,
	       "the site allowing it, a user may weaken");
	ok(out.checks == 1 && out.ib_min_gbps == 100 && out.n_eth == 0 &&
		   out.action[TE_HC_IB] == TE_HA_WARN,
	   "... every key as the user said");
	parse(&user, "health_ib_action=drain");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "... but still never drain");
}

/* Review finding 13: a refused merge leaves out as it was. */
static void test_merge_refused(void)
{
	struct te_health_policy site, user, out, before;

	parse(&site, "health=ib,eth health_ib_rate=100 health_eth=eth0");
	parse(&user, "health_ib_rate=400 health_eth=eth1");
	memset(&out, 0x5a, sizeof(out));
	before = out;
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a merge refused half-way (eth0 left out)");
	ok(!memcmp(&out, &before, sizeof(out)),
	   "... leaves out untouched, not half-merged");
}

/* A failed result of check on device with value. */
static struct te_health_result failed(const char *check, const char *device,
				      const char *value)
{
	struct te_health_result r;

	memset(&r, 0, sizeof(r));
	snprintf(r.check, sizeof(r.check), "%s", check);
	snprintf(r.device, sizeof(r.device), "%s", device);
	snprintf(r.value, sizeof(r.value), "%s", value);
	r.verdict = TE_HV_FAIL;
	return r;
}

/* Review finding 1: a user's stricter threshold never drains a node. */
static void test_action_for(void)
{
	struct te_health_policy site, user, out;
	struct te_health_result r;

	parse(&site, "health=ib health_ib_rate=100 health_ib_action=drain");
	parse(&user, "health_ib_rate=400");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), 0,
	       "site rate 100 drain, user rate 400: merged");
	r = failed("ib", "mlx5_0 port 1", "200 Gb/s");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_EXCLUDE,
	       "a 200 Gb/s port failing only the user's 400: exclude");
	r = failed("ib", "mlx5_0 port 1", "25.5 Gb/s");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_DRAIN,
	       "a 25.5 Gb/s port failing the site's 100 too: drain");
	r = failed("ib", "mlx5_0 port 1", "DOWN");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_DRAIN,
	       "a port DOWN: drain");
	r = failed("ib", "mlx5_0 port 1", "100 Gb/sx");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_DRAIN,
	       "a value that is not a measure: the site's action");
	/* review finding 9: a check that could not decide never drains */
	r = failed("ib", "", "");
	r.verdict = TE_HV_ERROR;
	is_int(te_health_action_for(&r, &site, &out), TE_HA_EXCLUDE,
	       "an error (could not decide) under a drain action: exclude");
	r.verdict = TE_HV_PASS;
	is_int(te_health_action_for(&r, &site, &out), TE_HA_WARN,
	       "a pass: nothing to do");

	parse(&site, "health=ib,eth health_eth=eth0:10000 "
		     "health_eth_action=drain health_gpu_action=drain");
	parse(&user, "health_eth=eth0:25000,nosuch0:10000000 "
		     "health=ib,eth,gpu");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), 0,
	       "user adds an interface, raises a speed, adds gpu: merged");
	r = failed("eth", "nosuch0", "?");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_EXCLUDE,
	       "an interface only the user added: exclude");
	r = failed("eth", "eth0", "10000 Mb/s");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_EXCLUDE,
	       "eth0 at the site's speed, below the user's: exclude");
	r = failed("eth", "eth0", "1000 Mb/s");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_DRAIN,
	       "eth0 below the site's speed: drain");
	r = failed("eth", "eth0", "down");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_DRAIN,
	       "eth0 down: drain");
	r = failed("gpu", "gpu 0", "remap pending");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_EXCLUDE,
	       "a gpu check only the user added: exclude, whatever the site's "
	       "gpu action");
}

int main(void)
{
	test_keys();
	test_merge();
	test_action_for();
	test_merge_refused();
	is_str(te_health_check_name(TE_HC_GPU), "gpu", "check names");
	is_str(te_health_action_name(TE_HA_EXCLUDE), "exclude", "action names");
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
