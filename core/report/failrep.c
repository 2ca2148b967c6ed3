/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* First-failure report, the pure part: the wire line, its parser, the line
 * srun prints, and the listener's decisions about a connection. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "hang/proctab.h"
#include "report/failrep.h"
#include "util/strutil.h"

#define WIRE_MAGIC "TRAINENV-FAIL1"

/* ---------------------------------------------------------------- pure */

static int node_ok(const char *s)
{
	return te_word_valid(s, 64, "-_.");
}

/* A health line's reason: printable ASCII, at most TE_FAILREP_TEXT_MAX,
 * not empty (it is printed and recorded on the submit host). */
static int text_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > TE_FAILREP_TEXT_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return 0;
	return 1;
}

int te_failrep_format(char *buf, size_t len, const char *token,
		      const struct te_failrep *r)
{
	char launch[200];

	if (!node_ok(r->node))
		return -1;
	if (r->health || r->steptime || r->straggler) {
		if (!text_ok(r->text, strlen(r->text)))
			return -1;
		return te_snprintf(buf, len,
				   "%s %s %u %u %s %s 0 0 %lld %u %s\n",
				   WIRE_MAGIC, token, r->rank, r->local_rank,
				   r->node,
				   r->health	 ? "health"
				   : r->steptime ? "steptime"
						 : "straggler",
				   (long long)r->sec, r->usec, r->text);
	}
	if (r->launched) {
		/* "barrier" lines carry the timeline after the common
		 * fields: RANKS NODES SKEW_MS FIRST LAST */
		if (te_launch_skew_format(&r->launch, launch, sizeof(launch)) <
		    0)
			return -1;
		return te_snprintf(buf, len,
				   "%s %s %u %u %s barrier 0 0 "
				   "%lld %u %s\n",
				   WIRE_MAGIC, token, r->rank, r->local_rank,
				   r->node, (long long)r->sec, r->usec, launch);
	}
	return te_snprintf(buf, len, "%s %s %u %u %s %s %d %d %lld %u\n",
			   WIRE_MAGIC, token, r->rank, r->local_rank, r->node,
			   r->stalled	 ? "stall"
			   : r->ended	 ? "ended"
			   : r->resumed	 ? "resumed"
			   : r->signaled ? "signal"
					 : "exit",
			   r->value, r->core, (long long)r->sec, r->usec);
}

static int next_field(const char **p, char *out, size_t outlen)
{
	size_t n = 0;

	while (**p == ' ')
		(*p)++;
	while (**p && **p != ' ' && **p != '\n') {
		if (n + 1 >= outlen)
			return -1;
		out[n++] = *(*p)++;
	}
	out[n] = '\0';
	return n ? 0 : -1;
}

static int field_u64(const char **p, uint64_t max, uint64_t *v)
{
	char f[24];

	return next_field(p, f, sizeof(f)) < 0 ? -1 : te_parse_u64(f, max, v);
}

int te_failrep_parse(const char *line, const char *token, struct te_failrep *r)
{
	char f[72];
	const char *p = line;
	uint64_t v;

	memset(r, 0, sizeof(*r));
	if (te_strnlen_cap(line, TE_FAILREP_LINE_MAX) > TE_FAILREP_LINE_MAX)
		return -1;
	if (next_field(&p, f, sizeof(f)) < 0 || strcmp(f, WIRE_MAGIC))
		return -1;
	/* constant time: the token is the only thing that keeps other users
	 * of the submit host from injecting reports into srun */
	if (next_field(&p, f, sizeof(f)) < 0 ||
	    !te_token_equal(f, token, TE_FAILREP_TOKEN_LEN))
		return -1;
	if (field_u64(&p, UINT32_MAX, &v) < 0)
		return -1;
	r->rank = (uint32_t)v;
	if (field_u64(&p, UINT32_MAX, &v) < 0)
		return -1;
	r->local_rank = (uint32_t)v;
	if (next_field(&p, r->node, sizeof(r->node)) < 0 || !node_ok(r->node))
		return -1;
	if (next_field(&p, f, sizeof(f)) < 0)
		return -1;
	if (!strcmp(f, "signal"))
		r->signaled = 1;
	else if (!strcmp(f, "stall"))
		r->stalled = 1;
	else if (!strcmp(f, "ended"))
		r->ended = 1;
	else if (!strcmp(f, "resumed"))
		r->resumed = 1;
	else if (!strcmp(f, "barrier"))
		r->launched = 1;
	else if (!strcmp(f, "health"))
		r->health = 1;
	else if (!strcmp(f, "steptime"))
		r->steptime = 1;
	else if (!strcmp(f, "straggler"))
		r->straggler = 1;
	else if (strcmp(f, "exit"))
		return -1;
	if (field_u64(&p,
		      r->stalled ? TE_FAILREP_STALL_MAX
		      : r->ended || r->resumed || r->launched || r->health ||
				      r->steptime || r->straggler
			      ? 0
		      : r->signaled ? 128
				    : 255,
		      &v) < 0)
		return -1;
	r->value = (int)v;
	if (field_u64(&p,
		      r->launched || r->health || r->steptime || r->straggler
			      ? 0
			      : 1,
		      &v) < 0)
		return -1;
	r->core = (int)v;
	if (field_u64(&p, (uint64_t)INT64_MAX, &v) < 0)
		return -1;
	r->sec = (int64_t)v;
	if (field_u64(&p, 999999, &v) < 0)
		return -1;
	r->usec = (uint32_t)v;
	if (r->launched && te_launch_skew_parse(p, &r->launch) < 0)
		return -1;
	if (r->launched)
		return 0;
	if (r->health || r->steptime ||
	    r->straggler) { /* the rest, after one space */
		size_t n;

		if (*p != ' ')
			return -1;
		p++;
		n = strcspn(p, "\n");
		if ((p[n] == '\n' && p[n + 1]) || !text_ok(p, n))
			return -1;
		memcpy(r->text, p, n);
		r->text[n] = '\0';
		return 0;
	}
	while (*p == ' ')
		p++;
	if (*p == '\n')
		p++;
	return *p ? -1 : 0;
}

void te_failrep_describe(const struct te_failrep *r, int first,
			 const char *ended_by, char *buf, size_t len)
{
	char when[64], how[96];
	struct tm tm;
	time_t t = (time_t)r->sec;

	if (r->launched) {
		te_launch_skew_line(&r->launch, buf, len);
		return;
	}
	if (r->health) {
		te_snprintf(buf, len,
			    "node %s: left out of this job by the job "
			    "prolog's health checks: %s",
			    r->node, r->text);
		return;
	}
	if (r->steptime || r->straggler) {
		te_strlcpy(buf, r->text, len);
		return;
	}
	if (localtime_r(&t, &tm) &&
	    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
		te_appendf(when, sizeof(when), ".%03u", r->usec / 1000);
	else
		te_snprintf(when, sizeof(when), "%lld", (long long)r->sec);
	if (r->stalled) {
		te_snprintf(how, sizeof(how), "sent no heartbeat for %d s",
			    r->value);
	} else if (r->ended) {
		te_strlcpy(how, "ended (a torchrun worker)", sizeof(how));
	} else if (r->resumed) {
		te_strlcpy(how, "has workers again (a torchrun restart)",
			   sizeof(how));
	} else if (r->signaled) {
		const char *name = sigabbrev_np(r->value);

		te_snprintf(how, sizeof(how), "was killed by signal %d%s%s%s%s",
			    r->value, name ? " (SIG" : "", name ? name : "",
			    name ? ")" : "", r->core ? ", core dumped" : "");
	} else {
		te_snprintf(how, sizeof(how), "exited with code %d", r->value);
	}
	te_snprintf(buf, len, "rank %u (node %s, local rank %u) %s at %s",
		    r->rank, r->node, r->local_rank, how, when);
	/* a rank trainenv's own signal ended is never "the first failure":
	 * what made trainenv end the step is */
	if (r->by_trainenv)
		te_appendf(buf, len, ": trainenv ended the step%s%s",
			   ended_by ? ": " : "", ended_by ? ended_by : "");
	else if (first)
		te_appendf(buf, len, ": the first failure of this step");
}

int te_failrep_env_parse(const char *env, uint16_t *port, char *token,
			 size_t toklen)
{
	const char *colon;
	char num[8];
	uint64_t v;
	size_t l, i;

	if (!env || !(colon = strchr(env, ':')))
		return -1;
	l = (size_t)(colon - env);
	if (l == 0 || l >= sizeof(num))
		return -1;
	memcpy(num, env, l);
	num[l] = '\0';
	if (te_parse_u64(num, 65535, &v) < 0 || v == 0)
		return -1;
	if (strlen(colon + 1) != TE_FAILREP_TOKEN_LEN ||
	    toklen <= TE_FAILREP_TOKEN_LEN)
		return -1;
	for (i = 0; i < TE_FAILREP_TOKEN_LEN; i++)
		if (!isxdigit((unsigned char)colon[1 + i]))
			return -1;
	*port = (uint16_t)v;
	te_strlcpy(token, colon + 1, toklen);
	return 0;
}

int te_failrep_kind_wanted(const char *env, const char *kind)
{
	size_t k = strlen(kind);
	const char *p = env;

	if (!env || !k || te_strnlen_cap(env, 256) > 256)
		return 0;
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == k && !memcmp(p, kind, k))
			return 1;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* ------------------------------------------------- listener decisions */

int te_failrep_conn_take(struct te_failrep_conn *c, const char *token,
			 te_failrep_report_fn fn, void *ctx)
{
	size_t start = 0;
	char *nl;

	if (c->got > TE_FAILREP_LINE_MAX || memchr(c->buf, '\0', c->got))
		return -1;
	while ((nl = memchr(c->buf + start, '\n', c->got - start))) {
		struct te_failrep r;
		char save = nl[1];

		nl[1] = '\0';
		if (te_failrep_parse(c->buf + start, token, &r) < 0)
			return -1; /* not ours, or garbage */
		nl[1] = save;
		c->authed = 1;
		fn(&r, ctx);
		start = (size_t)(nl - c->buf) + 1;
	}
	memmove(c->buf, c->buf + start, c->got - start);
	c->got -= start;
	/* a line with no end in sight: no report is that long */
	return c->got >= TE_FAILREP_LINE_MAX ? -1 : 0;
}

int te_failrep_conn_expired(const struct te_failrep_conn *c, int64_t now)
{
	return now - c->since >=
	       (c->authed ? TE_FAILREP_AUTHED_MS : TE_FAILREP_CONN_MS);
}

int te_failrep_conn_slot(const struct te_failrep_conn *t, int n)
{
	int i, oldest = -1;

	for (i = 0; i < n; i++) {
		if (t[i].fd < 0)
			return i;
		if (!t[i].authed &&
		    (oldest < 0 || t[i].since < t[oldest].since))
			oldest = i;
	}
	return oldest;
}

int te_failrep_owner_of(struct te_failrep_owner *o, long pid, int fd)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->pid = pid;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
		o->dev = (uint64_t)st.st_dev;
		o->ino = (uint64_t)st.st_ino;
	}
	if (pid <= 0 || pid > INT32_MAX ||
	    te_proc_start_time((int)pid, &o->start) < 0) {
		o->start = 0;
		return -1;
	}
	return 0;
}

int te_failrep_owner_same(const struct te_failrep_owner *was,
			  const struct te_failrep_owner *now)
{
	return was->pid == now->pid && was->start && was->start == now->start &&
	       was->dev == now->dev && was->ino == now->ino;
}
