/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of node health's storage check (core/health/
 * health_storage*.c): sizes and fractions parsed (and junk refused), the
 * site's keys, a user's stricter keys taken and weaker ones refused, the
 * slow-node verdict (one node, two, all equal, nodes without figures, an
 * even and odd count, the line cap) and the measure against a temporary
 * directory (figures, the deadline, the test hook's delay, no file left,
 * a directory not writable). */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "health/health.h"
#include "health/health_storage.h"
#include "tap.h"
#include "util/sysutil.h"

static void test_parse(void)
{
	uint64_t b = 7;
	unsigned f = 7;
	char t[32];

	is_int(te_storage_size_parse("64M", &b), 0, "64M parses");
	is_int((long long)b, 64LL << 20, "... 64 MiB");
	is_int(te_storage_size_parse("1g", &b), 0, "1g parses");
	is_int((long long)b, 1LL << 30, "... 1 GiB");
	is_int(te_storage_size_parse("4G", &b), 0, "4G: the most");
	is_int(te_storage_size_parse("5G", &b), -1, "5G: above the bound");
	is_int(te_storage_size_parse("4194305K", &b), -1,
	       "4 GiB and 1 KiB: above the bound");
	is_int(te_storage_size_parse("1048576", &b), 0, "bytes: 1 MiB");
	is_int(te_storage_size_parse("512K", &b), -1, "512K: below a chunk");
	is_int(te_storage_size_parse("off", &b), 0, "off parses");
	is_int((long long)b, 0, "... 0");
	is_int(te_storage_size_parse("", &b), -1, "empty: junk");
	is_int(te_storage_size_parse("M", &b), -1, "a suffix alone: junk");
	is_int(te_storage_size_parse("-1M", &b), -1, "negative: junk");
	is_int(te_storage_size_parse("64MB", &b), -1, "64MB: junk");
	is_int(te_storage_size_parse("99999999999999999999G", &b), -1,
	       "huge: junk");
	is_int(te_storage_fraction_parse("0.5", &f), 0, "0.5 parses");
	is_int((int)f, 500, "... 500 thousandths");
	is_int(te_storage_fraction_parse("0.125", &f), 0, "0.125 parses");
	is_int((int)f, 125, "... 125");
	is_int(te_storage_fraction_parse("0.0", &f), -1, "0.0 refused");
	is_int(te_storage_fraction_parse("1.0", &f), -1, "1.0 refused");
	is_int(te_storage_fraction_parse("0.1234", &f), -1,
	       "four digits refused");
	is_int(te_storage_fraction_parse(".5", &f), -1, ".5 refused");
	is_int(te_storage_fraction_parse("0.5x", &f), -1, "0.5x refused");
	te_storage_size_text(64ULL << 20, t, sizeof(t));
	is_str(t, "64 MiB", "64 MiB as text");
	te_storage_size_text(1536ULL << 10, t, sizeof(t));
	is_str(t, "1536 KiB", "1536 KiB as text");
}

static int site_user(const char *site_text, const char *user_text,
		     struct te_health_policy *out, char *err, size_t len)
{
	struct te_health_policy site, user;

	te_health_policy_init(&site);
	te_health_policy_init(&user);
	if (te_health_policy_parse(&site, site_text, strlen(site_text), "site",
				   err, len) < 0 ||
	    te_health_policy_parse(&user, user_text, strlen(user_text), "user",
				   err, len) < 0)
		return -2;
	return te_health_policy_merge(&site, &user, out, err, len);
}

static void test_keys(void)
{
	struct te_health_policy p;
	char err[512];

	te_health_policy_init(&p);
	is_int((int)p.storage_permille, 500, "the default fraction: 0.5");
	is_int((long long)p.storage_bytes, 0, "off by default");
	is_int(site_user("health_storage=64M health_storage_fraction=0.5 "
			 "health_storage_action=exclude "
			 "health_test_storage_delay=n2:50",
			 "", &p, err, sizeof(err)),
	       0, "the site's keys parse");
	is_int((long long)p.storage_bytes, 64LL << 20, "... 64 MiB");
	is_int((int)p.storage_action, TE_HA_EXCLUDE, "... exclude");
	is_str(p.storage_delay_node, "n2", "... the hook's node");
	is_int((int)p.storage_delay_ms, 50, "... its delay");
	is_int(site_user("health_storage=64K", "", &p, err, sizeof(err)), -2,
	       "a site's 64K refused");
	ok(strstr(err, "health_storage") && strstr(err, "1M to 4G"),
	   "... saying what is accepted");
	is_int(site_user("health_storage_action=drain", "", &p, err,
			 sizeof(err)),
	       -2, "drain refused: the check runs as the user");
	is_int(site_user("health_test_storage_delay=n2", "", &p, err,
			 sizeof(err)),
	       -2, "a delay without MS refused");
	is_int(site_user("", "health_storage=32M", &p, err, sizeof(err)), 0,
	       "a user turns it on");
	is_int((long long)p.storage_bytes, 32LL << 20, "... 32 MiB");
	is_int(site_user("health_storage=64M",
			 "health_storage=128M "
			 "health_storage_fraction=0.8 "
			 "health_storage_action=exclude",
			 &p, err, sizeof(err)),
	       0, "a user's stricter keys taken");
	is_int((long long)p.storage_bytes, 128LL << 20, "... 128 MiB");
	is_int((int)p.storage_permille, 800, "... 0.8");
	is_int((int)p.storage_action, TE_HA_EXCLUDE, "... exclude");
	is_int(site_user("health_storage=64M", "health_storage=off", &p, err,
			 sizeof(err)),
	       -1, "a user turning the site's check off: refused");
	ok(strstr(err, "health_storage=off: the site writes 64 MiB") != NULL,
	   "... naming the site's size");
	is_int(site_user("health_storage=64M", "health_storage=1M", &p, err,
			 sizeof(err)),
	       -1, "a user writing less: refused");
	is_int(site_user("health_storage_fraction=0.5",
			 "health_storage_fraction=0.25", &p, err, sizeof(err)),
	       -1, "a lower fraction: refused");
	ok(strstr(err, "below the site's 0.5; accepted: 0.5 to 0.999") != NULL,
	   "... naming the site's fraction");
	is_int(site_user("health_storage_action=exclude",
			 "health_storage_action=warn", &p, err, sizeof(err)),
	       -1, "warn where the site excludes: refused");
	is_int(site_user("", "health_test_storage_delay=n1:5", &p, err,
			 sizeof(err)),
	       -1, "the test hook from a user: refused");
	is_int(site_user("health_storage=64M health_user_weaker=yes",
			 "health_storage=off", &p, err, sizeof(err)),
	       0, "weaker where the site allows it");
	is_int((long long)p.storage_bytes, 0, "... off");
}

static struct te_storage_figure fig(const char *host, int have, uint64_t w,
				    uint64_t r)
{
	struct te_storage_figure f;

	memset(&f, 0, sizeof(f));
	snprintf(f.host, sizeof(f.host), "%s", host);
	f.have = have;
	f.write_mbps = w;
	f.read_mbps = r;
	return f;
}

static void test_verdict(void)
{
	struct te_storage_figure f[40];
	char out[4096];
	int i;

	f[0] = fig("n1", 1, 9, 9);
	is_int(te_storage_slow_nodes(f, 1, 500, "/x", 8, out, sizeof(out)), 0,
	       "one node: no comparison");
	is_str(out, "", "... no line");
	f[1] = fig("n2", 1, 240, 900);
	is_int(te_storage_slow_nodes(f, 2, 500, "/x", 8, out, sizeof(out)), 1,
	       "two nodes, one at 9 MB/s, one at 240: the slow one named");
	is_str(out,
	       "node n1: checkpoint directory /x: write 9 MB/s, below 0.5 "
	       "of the other nodes' median (240 MB/s)\n",
	       "... in one line naming the node, the figure and the median");
	f[0] = fig("n1", 1, 240, 100);
	is_int(te_storage_slow_nodes(f, 2, 500, "/x", 8, out, sizeof(out)), 1,
	       "a slow read named too");
	ok(strstr(out,
		  "node n1: checkpoint directory /x: read 100 MB/s, "
		  "below 0.5 of the other nodes' median (900 MB/s)") != NULL,
	   "... as read");
	for (i = 0; i < 5; i++)
		f[i] = fig("n", 1, 300, 300);
	is_int(te_storage_slow_nodes(f, 5, 999, "/x", 8, out, sizeof(out)), 0,
	       "all equal: nobody named, whatever the fraction");
	f[2] = fig("n3", 1, 149, 300);
	is_int(te_storage_slow_nodes(f, 5, 500, "/x", 8, out, sizeof(out)), 1,
	       "149 of a median of 300 at 0.5: named");
	f[2] = fig("n3", 1, 150, 300);
	is_int(te_storage_slow_nodes(f, 5, 500, "/x", 8, out, sizeof(out)), 0,
	       "150 of 300 at 0.5: not below");
	f[0] = fig("n1", 0, 0, 0);
	f[1] = fig("n2", 0, 0, 0);
	f[2] = fig("n3", 1, 10, 10);
	f[3] = fig("n4", 1, 0, 0);
	is_int(te_storage_slow_nodes(f, 4, 500, "/x", 8, out, sizeof(out)), 1,
	       "nodes without figures (older helpers) left out; a node "
	       "at 0 MB/s (below 1) against 10: named");
	ok(strstr(out, "node n4: checkpoint directory /x: write 0 MB/s") &&
		   !strstr(out, "node n1") && !strstr(out, "node n2"),
	   "... n4 alone");
	f[3] = fig("n4", 0, 0, 0);
	is_int(te_storage_slow_nodes(f, 4, 500, "/x", 8, out, sizeof(out)), 0,
	       "one node with figures among older ones: no comparison");
	f[0] = fig("a", 1, 150, 500);
	f[1] = fig("b", 1, 200, 500);
	f[2] = fig("c", 1, 300, 500);
	f[3] = fig("d", 1, 40, 500);
	/* d's others: 150 200 300, median 200: 40 < 100 named; a's others:
	 * 40 200 300, median 200: 150 is not below 100 */
	is_int(te_storage_slow_nodes(f, 4, 500, "/x", 8, out, sizeof(out)), 1,
	       "four nodes: the median of the other three");
	ok(strstr(out, "node d:") && strstr(out, "(200 MB/s)"),
	   "... d named against 200");
	f[3] = fig("d", 1, 400, 500);
	f[4] = fig("e", 1, 10, 500);
	/* e's others 150 200 300 400: the lower middle one, 200 */
	is_int(te_storage_slow_nodes(f, 5, 500, "/x", 8, out, sizeof(out)), 1,
	       "an even count of others: the lower middle one");
	ok(strstr(out, "node e:") && strstr(out, "(200 MB/s)"),
	   "... e named against 200");
	f[0] = fig("n1", 1, 262, 900);
	f[1] = fig("n2", 1, 6, 900);
	f[2] = fig("n3", 1, 1198, 900);
	/* t98 on 26.05: n1's others 6 and 1198, their mean 602 named n1 */
	is_int(te_storage_slow_nodes(f, 3, 500, "/x", 8, out, sizeof(out)), 1,
	       "three nodes, one slow: only the slow one named");
	ok(strstr(out, "node n2:") && strstr(out, "(262 MB/s)") &&
		   !strstr(out, "node n1"),
	   "... n2 against n1's 262, n1 not against the mean of 6 and 1198");
	for (i = 0; i < 40; i++)
		f[i] = fig("m", 1, i < 30 ? 1000 : 1, 1000);
	is_int(te_storage_slow_nodes(f, 40, 500, "/x", 4, out, sizeof(out)), 10,
	       "ten slow of forty: all counted");
	ok(strstr(out, "and 6 more nodes below the fraction\n") != NULL,
	   "... four lines and the rest counted");
	f[0] = fig("n1\033[2J", 1, 1, 1000);
	te_storage_slow_nodes(f, 40, 500, "/x", 4, out, sizeof(out));
	ok(strchr(out, '\033') == NULL, "a host name's escape cleaned");
	is_int(te_storage_slow_nodes(f, 40, 500, "/x", 4, out, 10), 11,
	       "a small buffer: still counted, cut");
	ok(strlen(out) < 10, "... cut to the buffer");
}

static int dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n == 0;
}

static void test_measure(void)
{
	char dir[] = "/tmp/te-storage-XXXXXX", why[256], cmd[64];
	struct te_storage_run run = { 8ULL << 20, 0, 0 };
	struct te_storage_result res;
	int64_t t0;

	if (!mkdtemp(dir)) {
		ok(0, "a temporary directory");
		return;
	}
	run.deadline_ms = te_now_ms() + 20000;
	is_int(te_storage_measure(dir, "t1", &run, &res, why, sizeof(why)), 0,
	       "8 MiB written, synced and read back");
	ok(res.write_mbps > 0 && res.read_mbps > 0,
	   "... with both figures (write %llu MB/s, read %llu MB/s)",
	   (unsigned long long)res.write_mbps,
	   (unsigned long long)res.read_mbps);
	is_int((long long)res.done, 8LL << 20, "... all of it");
	ok(dir_empty(dir), "... and no file left");
	run.delay_ms_mib = 100;
	run.deadline_ms = te_now_ms() + 20000;
	t0 = te_now_ms();
	is_int(te_storage_measure(dir, "t2", &run, &res, why, sizeof(why)), 0,
	       "with the hook's 100 ms per MiB: passes");
	ok(te_now_ms() - t0 >= 800 && res.write_mbps <= 11,
	   "... slowed: %lld ms, write %llu MB/s",
	   (long long)(te_now_ms() - t0), (unsigned long long)res.write_mbps);
	run.delay_ms_mib = 300;
	run.deadline_ms = te_now_ms() + 1000;
	t0 = te_now_ms();
	is_int(te_storage_measure(dir, "t3", &run, &res, why, sizeof(why)), -1,
	       "past its deadline: fails");
	ok(te_now_ms() - t0 < 1500, "... stopped at the bound (%lld ms)",
	   (long long)(te_now_ms() - t0));
	ok(strstr(why, "did not finish 8 MiB in 1 s (wrote ") != NULL,
	   "... saying so: %s", why);
	ok(dir_empty(dir), "... and no file left");
	{ /* killed mid-measure (its bound, scancel): nothing left behind */
		pid_t pid;

		run.delay_ms_mib = 200;
		run.deadline_ms = te_now_ms() + 20000;
		pid = fork();
		if (pid == 0) {
			te_storage_measure(dir, "t5", &run, &res, why,
					   sizeof(why));
			_exit(0);
		}
		usleep(300000);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		ok(pid > 0 && dir_empty(dir),
		   "a measure killed while it writes leaves no file");
	}
	run.delay_ms_mib = 0;
	run.deadline_ms = te_now_ms() + 20000;
	is_int(te_storage_measure("/nonexistent-te", "t4", &run, &res, why,
				  sizeof(why)),
	       -1, "no such directory: fails");
	ok(strstr(why, "cannot write there") != NULL, "... saying so");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

int main(void)
{
	test_parse();
	test_keys();
	test_verdict();
	test_measure();
	return tap_done();
}
