/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the storage check's part of the launch (core/launch/
 * launch_tree*.c, core/health/health_storage_env.c): a node's fact "ok
 * storage W R" kept as figures (junk a failure), the figures through the
 * wire ("stor" lines) and merged, bounded, hostile lines refused, rank
 * 0's verdict (exclude fails the step naming the node, warn warns, off or
 * one node compares nothing), and what the plugin tells the helper. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/health_storage.h"
#include "launch/launch_tree.h"
#include "settings/settings.h"
#include "tap.h"

static const char TOK[] = "0123456789abcdef0123456789abcdef";

static const struct te_versions V = { "1.0", "2.21.5", "12.4", "12.4", 2 };

static void add(struct te_tree_sum *s, uint32_t lead, const char *host,
		const char *ckpt)
{
	te_tree_sum_add_node(s, lead, host, 1000, &V, ckpt);
}

static void facts(void)
{
	struct te_tree_sum s;
	uint64_t w, r;

	is_int(te_ckpt_storage_parse("ok storage 240 900", &w, &r), 1,
	       "a fact with figures parses");
	ok(w == 240 && r == 900, "... 240 and 900");
	is_int(te_ckpt_storage_parse("ok storage 240", &w, &r), 0,
	       "one figure: not one");
	is_int(te_ckpt_storage_parse("ok storage 1 2 3", &w, &r), 0,
	       "three: not one");
	is_int(te_ckpt_storage_parse("ok storage -1 2", &w, &r), 0,
	       "negative: not one");
	is_int(te_ckpt_storage_parse("ok", &w, &r), 0, "ok: no figures");
	te_tree_sum_init(&s);
	add(&s, 0, "n1", "ok storage 240 900");
	add(&s, 2, "n2", "ok");
	add(&s, 4, "n3", "ok storage x y");
	is_int((int)s.nstor, 1, "figures kept for the node that sent them");
	ok(s.stor[0].rank == 0 && !strcmp(s.stor[0].host, "n1") &&
		   s.stor[0].write_mbps == 240,
	   "... its rank, host and figures");
	is_int((int)s.nck, 1, "junk after 'ok storage' is a failure");
	is_str(s.ck[0].value, "ok storage x y", "... as the node said it");
}

static int parse_all(const char *buf, struct te_tree_sum *p, uint32_t *rank)
{
	char line[TE_COORD_LINE_MAX + 1];
	const char *q = buf;
	int kind = -1;

	te_tree_sum_init(p);
	while (*q) {
		size_t l = strcspn(q, "\n");

		if (l >= sizeof(line))
			return -1;
		memcpy(line, q, l);
		line[l] = '\0';
		kind = te_tree_line_parse(line, TOK, 1000, 500, 0, p, rank);
		if (kind < 0)
			return -1;
		q += l + (q[l] == '\n');
	}
	return kind;
}

static void wire(void)
{
	static char buf[64 * 1024];
	struct te_tree_sum s, p, m;
	uint32_t rank, i;
	char host[16], fact[64];
	int j;

	te_tree_sum_init(&s);
	for (i = 0; i < 70; i++) {
		snprintf(host, sizeof(host), "node%u", i);
		snprintf(fact, sizeof(fact), "ok storage %u %u", 100 + i,
			 200 + i);
		add(&s, i * 2, host, fact);
	}
	ok(s.nstor == TE_TREE_STOR_MAX && s.stor_more == 6,
	   "70 nodes: 64 figures kept, 6 counted");
	is_int(te_tree_sum_format(buf, sizeof(buf), TOK, 0, &s, 2000), 0,
	       "the summary formats");
	ok(strstr(buf, " stor 0:node0:100:200,2:node1:101:201,") != NULL,
	   "... with stor lines");
	is_int(parse_all(buf, &p, &rank), TE_TL_SUM, "... and parses back");
	ok(p.nstor == 64 && p.stor[63].write_mbps == 163 &&
		   !strcmp(p.stor[63].host, "node63"),
	   "... every figure");
	te_tree_sum_init(&m);
	te_tree_sum_merge(&m, &p);
	te_tree_sum_merge(&m, &p);
	ok(m.nstor == 64 && m.stor_more == 64, "a merge stays bounded");
	{
		static const char *const bad[] = {
			"1000:n1:1:1",
			"1:n1:1",
			"1:n 1:1:1",
			"1:n1:1:1,",
			"",
			"1:n1:99999999999:1",
			"1:n1:1:1,2:n2:1:1,3:n3:1:1,4:n4:1:1,"
			"5:n5:1:1,6:n6:1:1,7:n7:1:1",
			"1:n1\033:1:1",
		};
		int refused = 0;

		for (j = 0; j < (int)(sizeof(bad) / sizeof(bad[0])); j++) {
			char line[256];

			te_tree_sum_init(&p);
			snprintf(line, sizeof(line), "TEBAR1 %s stor %s", TOK,
				 bad[j]);
			refused += te_tree_line_parse(line, TOK, 1000, 500, 0,
						      &p, &rank) < 0 &&
				   p.nstor == 0;
		}
		is_int(refused, (int)(sizeof(bad) / sizeof(bad[0])),
		       "hostile stor lines refused, nothing kept");
	}
}

static void verdict(void)
{
	struct te_launch_checks c = { .vcheck = TE_W_VCHECK_WARN,
				      .ckpt = "/ck",
				      .rank0_host = "n1",
				      .storage_permille = 500,
				      .storage_exclude = 1 };
	struct te_tree_sum s;
	char text[TE_COORD_TEXT_MAX + 1];

	te_tree_sum_init(&s);
	add(&s, 0, "n1", "ok storage 240 900");
	is_int(te_tree_verdict(&c, &s, text, sizeof(text)), TE_VERDICT_OK,
	       "one node: nothing compared");
	add(&s, 2, "n2", "ok storage 9 900");
	add(&s, 4, "n3", "ok storage 250 900");
	add(&s, 6, "n5", "ok storage 10 900");
	is_int(te_tree_verdict(&c, &s, text, sizeof(text)), TE_VERDICT_REJECT,
	       "exclude: slow nodes fail the step");
	is_str(text,
	       "node n2: checkpoint directory /ck: write 9 MB/s, below 0.5 "
	       "of the other nodes' median (240 MB/s); node n5: checkpoint "
	       "directory /ck: write 10 MB/s, below 0.5 of the other nodes' "
	       "median (240 MB/s)",
	       "... naming each, '; ' between them");
	c.storage_exclude = 0;
	is_int(te_tree_verdict(&c, &s, text, sizeof(text)), TE_VERDICT_WARN,
	       "warn: a warning");
	c.storage_permille = 0;
	is_int(te_tree_verdict(&c, &s, text, sizeof(text)), TE_VERDICT_OK,
	       "no storage check: nothing compared");
	c.storage_permille = 500;
	add(&s, 6, "n4", "no such directory");
	is_int(te_tree_verdict(&c, &s, text, sizeof(text)), TE_VERDICT_REJECT,
	       "a checkpoint failure beside: rejected");
	ok(strstr(text, "n4: no such directory") != NULL,
	   "... the directory's failure said first");
	te_tree_sum_init(&s);
	add(&s, 0, "n1", "ok storage 240 900");
	add(&s, 2, "n2", "storage: did not finish 8 MiB in 1 s (wrote 3 MiB)");
	is_int(te_tree_verdict(&c, &s, text, sizeof(text)), TE_VERDICT_REJECT,
	       "a node past the bound: rejected");
	is_str(text,
	       "checkpoint dir /ck: the storage check failed (rank 0 is on "
	       "n1): n2: storage: did not finish 8 MiB in 1 s (wrote 3 MiB)",
	       "... saying the storage check failed, not that the directory "
	       "is not shared");
}

static void helper_env(void)
{
	struct te_storage_opts o, back;
	char buf[128];

	te_storage_opts_for("health_storage=64M health_storage_action=exclude "
			    "health_test_storage_delay=n2:50 health_timeout=7",
			    "storage_fraction=0.75", "n2", &o);
	ok(o.bytes == 64ULL << 20 && o.permille == 750 && o.exclude &&
		   o.bound_s == 7 && o.delay_ms_mib == 50,
	   "the site's and the user's keys merged for n2");
	te_storage_opts_for(
		"health_storage=64M health_test_storage_delay=n2:50", NULL,
		"n1", &o);
	is_int((int)o.delay_ms_mib, 0, "the hook's delay on n2 only");
	te_storage_opts_for("health_storage=64M", "storage=off", "n1", &o);
	is_int((long long)o.bytes, 64LL << 20,
	       "a user's weaker text (srun refuses it; a modified srun "
	       "may not): the site's check stays");
	te_storage_opts_for("health_storage=64M", "bogus", "n1", &o);
	is_int((long long)o.bytes, 64LL << 20,
	       "a user's text that does not parse: the site's check stays");
	te_storage_opts_for("health_storage=64M", NULL, "n1", &o);
	is_int(te_storage_env_format(&o, buf, sizeof(buf)), 0,
	       "the environment formats");
	is_str(buf, "TRAINENV_HEALTH_STORAGE=67108864 500 0 10 0",
	       "... as BYTES PERMILLE ACTION BOUND DELAY");
	is_int(te_storage_env_parse(strchr(buf, '=') + 1, &back), 0,
	       "... and parses back");
	ok(back.bytes == o.bytes && back.bound_s == 10, "... the same");
	is_int(te_storage_env_parse(NULL, &back), 0, "unset: no check");
	is_int((long long)back.bytes, 0, "... 0 bytes");
	is_int(te_storage_env_parse("67108864 500 0 10 0 9", &back), -1,
	       "junk after: refused");
	is_int(te_storage_env_parse("67108864 500 2 10 0", &back), -1,
	       "action 2: refused");
	is_int(te_storage_env_parse("99999999999 500 0 10 0", &back), -1,
	       "above 4 GiB: refused");
	is_int(te_storage_env_parse("67108864 500 0 10 99999", &back), -1,
	       "a delay above the bound: refused");
}

int main(void)
{
	facts();
	wire();
	verdict();
	helper_env();
	return tap_done();
}
