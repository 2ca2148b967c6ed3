/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: the network checks, read from a sysfs tree (/sys, or a
 * test's stand-in): InfiniBand/RoCE ports and the Ethernet interfaces the
 * site lists. Every file is hostile: read as a regular file, at most a
 * few bytes, and what is not the kernel's format is a failure that
 * quotes it. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "health/health.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define ATTR_MAX 64	 /* the longest attribute read (bytes) */
#define IB_DEVS_MAX 32	 /* devices looked at, sorted by name */
#define IB_PORTS_MAX 16	 /* ports per device */
#define NAME_SHOWN 24	 /* a device's name as a result shows it */
#define PROBLEMS_MAX 160 /* a port's list of what is wrong */

int te_health_parse_state(const char *text, char *word, size_t len)
{
	const char *p = text;
	size_t n = 0;

	if (!len)
		return -1;
	word[0] = '\0';
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9' && p - text < 4)
		p++;
	if (*p++ != ':' || *p++ != ' ')
		return -1;
	while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
	       (*p >= '0' && *p <= '9') || *p == '_') {
		if (n + 1 >= len)
			return -1;
		word[n++] = *p++;
	}
	word[n] = '\0';
	if (!n || (*p == '\n' && p[1]) || (*p && *p != '\n')) {
		word[0] = '\0';
		return -1;
	}
	return 0;
}

int te_health_parse_rate(const char *text, unsigned long *tenths)
{
	const char *p = text;
	unsigned long whole = 0, frac = 0;
	int digits = 0;

	while (*p >= '0' && *p <= '9') {
		if (++digits > 7)
			return -1;
		whole = whole * 10 + (unsigned long)(*p++ - '0');
	}
	if (!digits)
		return -1;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		frac = (unsigned long)(*p - '0');
		for (digits = 0; *p >= '0' && *p <= '9'; p++)
			if (++digits > 6)
				return -1;
	}
	if (strncmp(p, " Gb/sec", 7))
		return -1;
	for (p += 7; *p && *p != '\n'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			return -1;
	if (*p == '\n' && p[1])
		return -1;
	*tenths = whole * 10 + frac;
	return 0;
}

int te_health_parse_speed(const char *text, long *mbps)
{
	const char *p = text;
	long v = 0;
	int neg = 0, digits = 0;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	while (*p >= '0' && *p <= '9') {
		if (++digits > 9)
			return -1;
		v = v * 10 + (*p++ - '0');
	}
	if (!digits || (*p == '\n' && p[1]) || (*p && *p != '\n'))
		return -1;
	if (neg && v != 1)
		return -1;
	*mbps = neg ? -1 : v;
	return 0;
}

/* DIR/NAME into buf: 0, or -1 with what went wrong in why. */
static int read_attr(const char *dir, const char *name, char *buf, size_t len,
		     char *why, size_t whylen)
{
	char path[PATH_MAX];
	ssize_t got;

	if (te_snprintf(path, sizeof(path), "%s/%s", dir, name) < 0) {
		te_snprintf(why, whylen, "%s unreadable (path too long)", name);
		return -1;
	}
	/* the attribute itself never a link (sysfs's are files): a tree an
	 * admin pointed at a user's directory must not quote, as root,
	 * the first bytes of a file the user may not read; the device's
	 * directory may be one, as /sys/class's are */
	got = te_read_small(path, buf, len, TE_READ_WHOLE | TE_READ_NOFOLLOW);
	if (got < 0) {
		te_snprintf(why, whylen, "%s unreadable (%s)", name,
			    errno == EFBIG ? "longer than 63 bytes"
					   : strerror(errno));
		return -1;
	}
	if (strlen(buf) != (size_t)got) {
		te_snprintf(why, whylen, "%s unreadable (a NUL byte in it)",
			    name);
		return -1;
	}
	return 0;
}

/* "NAME is not FORMAT: 'TEXT'" into why. */
static void junk(const char *name, const char *format, const char *text,
		 char *why, size_t whylen)
{
	char q[40];

	te_quote(q, sizeof(q), text);
	te_snprintf(why, whylen, "%s is not %s: '%s'", name, format, q);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir (not "." nor ".."), sorted, at most max, into a
 * malloc'ed array of malloc'ed names; *n their number, *more those left
 * out. -1 with errno when dir cannot be read. */
static char **list_dir(const char *dir, int max, int *n, int *more)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names;

	*n = *more = 0;
	if (!d)
		return NULL;
	names = calloc((size_t)max, sizeof(*names));
	while (names && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (*n >= max) {
			(*more)++;
			continue;
		}
		names[*n] = strdup(e->d_name);
		if (names[*n])
			(*n)++;
	}
	closedir(d);
	if (!names) {
		errno = ENOMEM;
		return NULL;
	}
	qsort(names, (size_t)*n, sizeof(*names), cmp_names);
	return names;
}

static void free_names(char **names, int n)
{
	while (n-- > 0)
		free(names[n]);
	free(names);
}

/* Appends ", WHAT" (or WHAT first) to a port's problems. */
static void problem(char *list, size_t len, const char *what)
{
	te_appendf(list, len, "%s%s", list[0] ? ", " : "", what);
}

/* One attribute that must read as "N: WANT". */
static void ib_state_attr(const char *dir, const char *name, const char *want,
			  char *probs, size_t plen, char *value, size_t vlen)
{
	char buf[ATTR_MAX], word[32], why[128];

	if (read_attr(dir, name, buf, sizeof(buf), why, sizeof(why)) < 0) {
		problem(probs, plen, why);
	} else if (te_health_parse_state(buf, word, sizeof(word)) < 0) {
		junk(name, "'N: STATE'", buf, why, sizeof(why));
		problem(probs, plen, why);
	} else if (strcmp(word, want)) {
		te_snprintf(why, sizeof(why), "%s %s (want %s)", name, word,
			    want);
		problem(probs, plen, why);
		if (!value[0])
			te_strlcpy(value, word, vlen);
	}
}

/* One port: its result. */
static void ib_port(const char *dev, const char *devdir, const char *port,
		    unsigned min_gbps, struct te_health_set *out)
{
	char dir[PATH_MAX], probs[PROBLEMS_MAX] = "", value[32] = "";
	char buf[ATTR_MAX], why[128], rate[24] = "", shown[NAME_SHOWN + 1];
	unsigned long tenths = 0;

	te_clean_text(shown, sizeof(shown), dev, NAME_SHOWN);
	if (te_snprintf(dir, sizeof(dir), "%s/ports/%s", devdir, port) < 0) {
		te_health_add(out, "ib", shown, "", TE_HV_FAIL,
			      "ib %s port %s: path too long", shown, port);
		return;
	}
	ib_state_attr(dir, "state", "ACTIVE", probs, sizeof(probs), value,
		      sizeof(value));
	ib_state_attr(dir, "phys_state", "LinkUp", probs, sizeof(probs), value,
		      sizeof(value));
	if (read_attr(dir, "rate", buf, sizeof(buf), why, sizeof(why)) < 0) {
		problem(probs, sizeof(probs), why);
	} else if (te_health_parse_rate(buf, &tenths) < 0) {
		junk("rate", "'R Gb/sec'", buf, why, sizeof(why));
		problem(probs, sizeof(probs), why);
	} else {
		if (tenths % 10)
			te_snprintf(rate, sizeof(rate), "%lu.%lu Gb/s",
				    tenths / 10, tenths % 10);
		else
			te_snprintf(rate, sizeof(rate), "%lu Gb/s",
				    tenths / 10);
		if (tenths < (unsigned long)min_gbps * 10) {
			te_snprintf(why, sizeof(why),
				    "rate %s (want at least %u Gb/s)", rate,
				    min_gbps);
			problem(probs, sizeof(probs), why);
			if (!value[0])
				te_strlcpy(value, rate, sizeof(value));
		}
	}
	te_snprintf(dir, sizeof(dir), "%s port %s", shown, port);
	if (probs[0])
		te_health_add(out, "ib", dir, value[0] ? value : "?",
			      TE_HV_FAIL, "ib %s %s", dir, probs);
	else
		te_health_add(out, "ib", dir, rate, TE_HV_PASS,
			      "ib %s ACTIVE LinkUp %s", dir, rate);
}

/* A port's name is its number. */
static int port_name_ok(const char *s)
{
	uint64_t n;

	return te_parse_u64(s, 65535, &n) == 0;
}

static void ib_device(const char *ibdir, const char *dev, unsigned min_gbps,
		      struct te_health_set *out)
{
	char devdir[PATH_MAX], ports[PATH_MAX], shown[NAME_SHOWN + 1];
	char **names;
	int n, more, i, checked = 0;

	te_clean_text(shown, sizeof(shown), dev, NAME_SHOWN);
	if (te_snprintf(devdir, sizeof(devdir), "%s/%s", ibdir, dev) < 0 ||
	    te_snprintf(ports, sizeof(ports), "%s/ports", devdir) < 0) {
		te_health_add(out, "ib", shown, "", TE_HV_FAIL,
			      "ib %s: path too long", shown);
		return;
	}
	names = list_dir(ports, IB_PORTS_MAX, &n, &more);
	if (!names) {
		te_health_add(out, "ib", shown, "", TE_HV_FAIL,
			      "ib %s: cannot read its ports (%s)", shown,
			      strerror(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		if (!port_name_ok(names[i]))
			continue;
		ib_port(dev, devdir, names[i], min_gbps, out);
		checked++;
	}
	if (!checked)
		te_health_add(out, "ib", shown, "", TE_HV_FAIL,
			      "ib %s: no port", shown);
	if (more)
		te_health_add(out, "ib", shown, "", TE_HV_FAIL,
			      "ib %s: %d more ports than the %d checked", shown,
			      more, IB_PORTS_MAX);
	free_names(names, n);
}

void te_health_check_ib(const char *root, unsigned min_gbps,
			struct te_health_set *out)
{
	char ibdir[PATH_MAX];
	char **names;
	int n, more, i;

	if (te_snprintf(ibdir, sizeof(ibdir), "%s/class/infiniband", root) <
	    0) {
		te_health_add(out, "ib", "", "", TE_HV_FAIL,
			      "ib: the sysfs root's path is too long");
		return;
	}
	names = list_dir(ibdir, IB_DEVS_MAX, &n, &more);
	if (!names && errno != ENOENT) {
		te_health_add(out, "ib", "", "", TE_HV_FAIL,
			      "ib: cannot read %.80s (%s)", ibdir,
			      strerror(errno));
		return;
	}
	if (!names || !n) {
		te_health_add(out, "ib", "", "", TE_HV_NA,
			      "ib: not applicable: no InfiniBand device");
		if (names)
			free_names(names, n);
		return;
	}
	for (i = 0; i < n; i++)
		ib_device(ibdir, names[i], min_gbps, out);
	if (more)
		te_health_add(out, "ib", "", "", TE_HV_FAIL,
			      "ib: %d more devices than the %d checked", more,
			      IB_DEVS_MAX);
	free_names(names, n);
}

void te_health_check_ib_ports(const char *root, unsigned min_gbps,
			      const struct te_health_ib_port *ports, int n,
			      struct te_health_set *out)
{
	char devdir[PATH_MAX], dir[PATH_MAX], port[16];
	struct stat st;
	int i;

	if (n <= 0) {
		te_health_check_ib(root, min_gbps, out);
		return;
	}
	for (i = 0; i < n && i < TE_HEALTH_IB_PORTS_MAX; i++) {
		te_snprintf(port, sizeof(port), "%u", ports[i].port);
		if (te_snprintf(devdir, sizeof(devdir),
				"%s/class/infiniband/%s", root,
				ports[i].dev) < 0 ||
		    te_snprintf(dir, sizeof(dir), "%s/ports/%s", devdir, port) <
			    0 ||
		    stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
			te_health_add(out, "ib", ports[i].dev, "missing",
				      TE_HV_FAIL,
				      "ib %s port %s: no such port "
				      "(health_ib_ports)",
				      ports[i].dev, port);
			continue;
		}
		ib_port(ports[i].dev, devdir, port, min_gbps, out);
	}
}

/* An interface's speed, for its result: the text and its problem. */
static void eth_speed(const char *dir, const struct te_health_eth_if *e,
		      char *speed, size_t slen, char *probs, size_t plen)
{
	char buf[ATTR_MAX], why[128];
	long mbps;

	if (read_attr(dir, "speed", buf, sizeof(buf), why, sizeof(why)) < 0) {
		te_strlcpy(speed, "speed unknown", slen);
		if (e->min_mbps)
			problem(probs, plen, why);
		return;
	}
	if (te_health_parse_speed(buf, &mbps) < 0) {
		junk("speed", "a number of Mb/s", buf, why, sizeof(why));
		problem(probs, plen, why);
		return;
	}
	if (mbps < 0) {
		te_strlcpy(speed, "speed unknown", slen);
		if (e->min_mbps) {
			te_snprintf(why, sizeof(why),
				    "speed unknown (want at least %lu Mb/s)",
				    e->min_mbps);
			problem(probs, plen, why);
		}
		return;
	}
	te_snprintf(speed, slen, "%ld Mb/s", mbps);
	if ((unsigned long)mbps < e->min_mbps) {
		te_snprintf(why, sizeof(why),
			    "speed %ld Mb/s (want at least %lu)", mbps,
			    e->min_mbps);
		problem(probs, plen, why);
	}
}

static void eth_one(const char *root, const struct te_health_eth_if *e,
		    struct te_health_set *out)
{
	char dir[PATH_MAX], buf[ATTR_MAX], why[128], probs[PROBLEMS_MAX] = "";
	char state[ATTR_MAX] = "", speed[32] = "";
	size_t l;

	if (te_snprintf(dir, sizeof(dir), "%s/class/net/%s", root, e->name) <
	    0) {
		te_health_add(out, "eth", e->name, "", TE_HV_FAIL,
			      "eth %s: path too long", e->name);
		return;
	}
	if (read_attr(dir, "operstate", buf, sizeof(buf), why, sizeof(why)) <
	    0) {
		if (errno == ENOENT)
			te_strlcpy(why, "no such interface", sizeof(why));
		te_health_add(out, "eth", e->name, "", TE_HV_FAIL, "eth %s %s",
			      e->name, why);
		return;
	}
	l = strlen(buf);
	if (l && buf[l - 1] == '\n')
		buf[--l] = '\0';
	if (!l || !te_word_valid(buf, sizeof(state), "-_")) {
		junk("operstate", "a state", buf, why, sizeof(why));
		problem(probs, sizeof(probs), why);
	} else {
		te_strlcpy(state, buf, sizeof(state));
		if (strcmp(state, "up")) {
			te_snprintf(why, sizeof(why), "operstate %s (want up)",
				    state);
			problem(probs, sizeof(probs), why);
		}
	}
	if (!probs[0])
		eth_speed(dir, e, speed, sizeof(speed), probs, sizeof(probs));
	if (probs[0])
		te_health_add(out, "eth", e->name,
			      strcmp(state, "up") ? (state[0] ? state : "?")
			      : speed[0]	  ? speed
						  : "?",
			      TE_HV_FAIL, "eth %s %s", e->name, probs);
	else
		te_health_add(out, "eth", e->name, speed, TE_HV_PASS,
			      "eth %s up %s", e->name, speed);
}

void te_health_check_eth(const char *root, const struct te_health_eth_if *ifs,
			 int n, struct te_health_set *out)
{
	int i;

	if (n <= 0) {
		te_health_add(out, "eth", "", "", TE_HV_NA,
			      "eth: not applicable: no Ethernet interface "
			      "listed (health_eth=)");
		return;
	}
	for (i = 0; i < n; i++)
		eth_one(root, &ifs[i], out);
}
