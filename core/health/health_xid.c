/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: the gpu check's NVLink and XID site keys, and the XIDs the
 * NVIDIA driver logged to the kernel since the node's previous check:
 * a /dev/kmsg record parsed, its XID line parsed, the XIDs counted per
 * device against the watermark, the watermark's text, the results. Pure;
 * the reading is health_xid_io.c's. */
#include "config.h"

#include <string.h>

#include "health/health.h"
#include "util/strutil.h"

#define XID_MAX 65535
#define XID_PREFIX "NVRM: Xid ("
#define MARK_MAGIC "TEXID1 "

/* A comma-separated list of XIDs into xids; their number, or -1. */
static int parse_xids(const char *val, unsigned *xids)
{
	char buf[256], *save = NULL, *tok;
	uint64_t v;
	int n = 0, i;

	if (te_strlcpy(buf, val, sizeof(buf)) >= sizeof(buf) || !buf[0])
		return -1;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n >= TE_XID_FAIL_MAX ||
		    te_parse_u64(tok, XID_MAX, &v) < 0 || !v)
			return -1;
		for (i = 0; i < n && xids[i] != v; i++)
			;
		if (i == n)
			xids[n++] = (unsigned)v;
	}
	return n;
}

static int set_xid_fail(struct te_health_policy *p, const char *val,
			const char *where, char *err, size_t errlen)
{
	unsigned xids[TE_XID_FAIL_MAX];
	int n;

	if (!strcmp(val, "default"))
		val = TE_XID_FAIL_DEFAULT;
	n = strcmp(val, "none") ? parse_xids(val, xids) : 0;
	if (n < 0)
		return te_health_bad_value(
			where, "health_xid_fail", val,
			"a comma-separated list of XIDs 1 to 65535 (at most "
			"32), none, or default (" TE_XID_FAIL_DEFAULT ")",
			err, errlen);
	memcpy(p->xid_fail, xids, sizeof(unsigned) * (size_t)n);
	p->n_xid_fail = n;
	p->given |= TE_HK_XID_FAIL;
	return 1;
}

int te_health_gpu_key_set(struct te_health_policy *p, const char *key,
			  const char *val, const char *where, char *err,
			  size_t errlen)
{
	uint64_t v;

	if (!strcmp(key, "health_nvlink")) {
		if (te_parse_u64(val, TE_HEALTH_NVLINK_MAX, &v) < 0)
			return te_health_bad_value(
				where, key, val,
				"0 (not checked) to 18 (NVLink links per GPU "
				"that must be up)",
				err, errlen);
		p->nvlink = (unsigned)v;
		p->given |= TE_HK_NVLINK;
		return 1;
	}
	if (!strcmp(key, "health_xid")) {
		if (strcmp(val, "on") && strcmp(val, "off"))
			return te_health_bad_value(where, key, val, "on, off",
						   err, errlen);
		p->xid = !strcmp(val, "on");
		p->given |= TE_HK_XID;
		return 1;
	}
	if (!strcmp(key, "health_xid_fail"))
		return set_xid_fail(p, val, where, err, errlen);
	return 0;
}

int te_health_gpu_keys_user(const struct te_health_policy *user, char *err,
			    size_t errlen)
{
	if (!(user->given & (TE_HK_NVLINK | TE_HK_XID | TE_HK_XID_FAIL)))
		return 0;
	return te_err(err, errlen, "%s: only the site's policy sets it",
		      (user->given & TE_HK_NVLINK) ? "health_nvlink"
		      : (user->given & TE_HK_XID)  ? "health_xid"
						   : "health_xid_fail");
}

int te_health_xid_fails(const struct te_health_policy *p, unsigned xid)
{
	static unsigned def[TE_XID_FAIL_MAX];
	static int n_def = -1;
	const unsigned *list = p->xid_fail;
	int n = p->n_xid_fail, i;

	if (!(p->given & TE_HK_XID_FAIL)) {
		if (n_def < 0)
			n_def = parse_xids(TE_XID_FAIL_DEFAULT, def);
		list = def;
		n = n_def;
	}
	for (i = 0; i < n && i < TE_XID_FAIL_MAX; i++)
		if (list[i] == xid)
			return 1;
	return 0;
}

/* Decimal digits s[0..len) as a number at most max: 0, or -1. */
static int digits(const char *s, size_t len, uint64_t max, uint64_t *v)
{
	char num[24];
	size_t i;

	if (!len || len >= sizeof(num))
		return -1;
	for (i = 0; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return -1;
	memcpy(num, s, len);
	num[len] = '\0';
	return te_parse_u64(num, max, v);
}

int te_kmsg_parse(const char *rec, size_t len, struct te_kmsg_rec *out)
{
	const char *semi, *comma, *nl, *ts;
	uint64_t prio, seq, t;

	memset(out, 0, sizeof(*out));
	nl = memchr(rec, '\n', len);
	semi = memchr(rec, ';', nl ? (size_t)(nl - rec) : len);
	if (!semi || semi - rec > 128)
		return -1;
	comma = memchr(rec, ',', (size_t)(semi - rec));
	if (!comma || digits(rec, (size_t)(comma - rec), 1023, &prio) < 0)
		return -1;
	ts = memchr(comma + 1, ',', (size_t)(semi - comma - 1));
	if (!ts ||
	    digits(comma + 1, (size_t)(ts - comma - 1), 1ull << 62, &seq) < 0)
		return -1;
	comma = memchr(ts + 1, ',', (size_t)(semi - ts - 1));
	if (digits(ts + 1, (size_t)((comma ? comma : semi) - ts - 1),
		   UINT64_MAX, &t) < 0)
		return -1;
	out->prio = (unsigned)prio;
	out->seq = seq;
	out->msg = semi + 1;
	out->msg_len = (size_t)((nl ? nl : rec + len) - out->msg);
	return 0;
}

/* Hex digits at *p, at most maxd of them and at most max: 0 with *v and
 * *p past them, or -1. */
static int hex(const char **p, const char *end, int maxd, unsigned long max,
	       unsigned *v)
{
	unsigned long x = 0;
	int n = 0;

	for (; *p < end && n < maxd; (*p)++, n++) {
		char c = **p;
		int d = (c >= '0' && c <= '9')	 ? c - '0'
			: (c >= 'a' && c <= 'f') ? c - 'a' + 10
			: (c >= 'A' && c <= 'F') ? c - 'A' + 10
						 : -1;
		if (d < 0)
			break;
		x = x * 16 + (unsigned long)d;
	}
	if (!n || x > max)
		return -1;
	*v = (unsigned)x;
	return 0;
}

int te_xid_parse(const char *msg, size_t len, struct te_xid_event *ev)
{
	const char *p = msg + strlen(XID_PREFIX), *end = msg + len, *num;
	unsigned fn;
	uint64_t x;

	memset(ev, 0, sizeof(*ev));
	if (len < strlen(XID_PREFIX) || memcmp(msg, XID_PREFIX, p - msg))
		return 0;
	if (end - p >= 4 && !memcmp(p, "PCI:", 4))
		p += 4;
	if (hex(&p, end, 8, 0xffffffffUL, &ev->domain) < 0 || p >= end ||
	    *p++ != ':' || hex(&p, end, 2, 0xff, &ev->bus) < 0 || p >= end ||
	    *p++ != ':' || hex(&p, end, 2, 0x1f, &ev->dev) < 0)
		return 0;
	if (p < end && *p == '.' && (++p, hex(&p, end, 1, 7, &fn) < 0))
		return 0;
	if (end - p < 3 || memcmp(p, "): ", 3))
		return 0;
	for (p += 3, num = p; p < end && *p >= '0' && *p <= '9'; p++)
		;
	if (digits(num, (size_t)(p - num), XID_MAX, &x) < 0 || !x ||
	    (p < end && *p != ',' && *p != ' '))
		return 0;
	ev->xid = (unsigned)x;
	return 1;
}

static void tally_add(struct te_xid_tally *t, const struct te_xid_event *ev)
{
	struct te_xid_dev *d = NULL;
	int i;

	for (i = 0; i < t->n && !d; i++)
		if (t->dev[i].domain == ev->domain &&
		    t->dev[i].bus == ev->bus && t->dev[i].dev == ev->dev)
			d = &t->dev[i];
	if (!d) {
		if (t->n >= TE_XID_DEVS_MAX) {
			t->cut++;
			return;
		}
		d = &t->dev[t->n++];
		d->domain = ev->domain;
		d->bus = ev->bus;
		d->dev = ev->dev;
	}
	d->count++;
	for (i = 0; i < d->n_codes; i++)
		if (d->codes[i] == ev->xid)
			return;
	if (d->n_codes < TE_XID_CODES_MAX)
		d->codes[d->n_codes++] = ev->xid;
	else
		d->codes_cut = 1;
}

/* "TEXID1 BOOT SEQ\n" into boot and seq: 0, or -1 (junk). */
static int mark_parse(const char *text, size_t len, char *boot, size_t blen,
		      unsigned long long *seq)
{
	const char *p = text + strlen(MARK_MAGIC), *end = text + len, *sp;
	uint64_t v;

	if (len && text[len - 1] == '\n')
		end--;
	if (len < strlen(MARK_MAGIC) || memcmp(text, MARK_MAGIC, p - text))
		return -1;
	sp = memchr(p, ' ', (size_t)(end - p));
	if (!sp || sp == p || (size_t)(sp - p) >= blen ||
	    digits(sp + 1, (size_t)(end - sp - 1), 1ull << 62, &v) < 0)
		return -1;
	memcpy(boot, p, (size_t)(sp - p));
	boot[sp - p] = '\0';
	if (!te_word_valid(boot, blen, "-"))
		return -1;
	*seq = v;
	return 0;
}

void te_xid_scan_init(struct te_xid_scan *s, const char *boot, const char *mark,
		      size_t len)
{
	char mboot[TE_XID_BOOT_MAX];

	memset(s, 0, sizeof(*s));
	te_strlcpy(s->boot, boot, sizeof(s->boot));
	if (!mark) {
		te_strlcpy(s->mark_why, "no earlier check",
			   sizeof(s->mark_why));
		return;
	}
	if (mark_parse(mark, len, mboot, sizeof(mboot), &s->mark_seq) < 0) {
		s->mark_seq = 0;
		te_strlcpy(s->mark_why, "the watermark was junk",
			   sizeof(s->mark_why));
		return;
	}
	if (strcmp(mboot, s->boot)) {
		s->mark_seq = 0;
		te_strlcpy(s->mark_why, "a new boot", sizeof(s->mark_why));
		return;
	}
	s->mark = 1;
}

void te_xid_scan_record(struct te_xid_scan *s, const char *rec, size_t len)
{
	struct te_kmsg_rec r;
	struct te_xid_event ev;

	if (te_kmsg_parse(rec, len, &r) < 0) {
		s->junk++;
		return;
	}
	s->records++;
	if (!s->any)
		s->first_seq = r.seq;
	/* the log's numbers run on by one: a gap is records overwritten
	 * while it was read (/dev/kmsg's EPIPE) */
	if (s->any && r.seq > s->last_seq + 1)
		s->lost += r.seq - s->last_seq - 1;
	if (!s->any || r.seq > s->last_seq)
		s->last_seq = r.seq;
	s->any = 1;
	/* the kernel's own (facility 0): a line written to /dev/kmsg from
	 * user space is given LOG_USER by the kernel, so none can pose as
	 * the driver's */
	if ((r.prio >> 3) != 0 || !te_xid_parse(r.msg, r.msg_len, &ev))
		return;
	tally_add(&s->since_boot, &ev);
	if (!s->mark || r.seq > s->mark_seq)
		tally_add(&s->since_mark, &ev);
}

const struct te_xid_tally *te_xid_scan_tally(const struct te_xid_scan *s,
					     const char **since)
{
	if (!s->mark) {
		*since = s->mark_why;
		return &s->since_boot;
	}
	if (s->any && s->last_seq < s->mark_seq) {
		*since = "the kernel's log restarted";
		return &s->since_boot;
	}
	*since = NULL;
	return &s->since_mark;
}

void te_xid_mark_text(const struct te_xid_scan *s, char *buf, size_t len)
{
	unsigned long long seq = s->any ? s->last_seq : s->mark_seq;

	te_snprintf(buf, len, MARK_MAGIC "%s %llu\n", s->boot, seq);
}

/* The GPU of gpus at d's address: its index, or -1. */
static int gpu_at(const struct te_xid_dev *d,
		  const struct te_health_gpu_pci *gpus, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (gpus[i].domain == d->domain && gpus[i].bus == d->bus &&
		    gpus[i].dev == d->dev)
			return (int)gpus[i].index;
	return -1;
}

/* One device's result. */
static void dev_result(const struct te_xid_dev *d, const char *since,
		       const struct te_health_gpu_pci *gpus, int n,
		       const struct te_health_policy *p,
		       struct te_health_set *out)
{
	char dev[24], pci[32] = "", codes[96] = "", value[24];
	int i, idx = gpu_at(d, gpus, n), bad = -1;

	te_snprintf(dev, sizeof(dev), "PCI:%04x:%02x:%02x", d->domain, d->bus,
		    d->dev);
	if (idx >= 0) {
		te_snprintf(pci, sizeof(pci), "%s; ", dev);
		te_snprintf(dev, sizeof(dev), "gpu %d", idx);
	}
	for (i = 0; i < d->n_codes; i++) {
		te_appendf(codes, sizeof(codes), "%s%u", i ? ", " : "",
			   d->codes[i]);
		if (bad < 0 && te_health_xid_fails(p, d->codes[i]))
			bad = i;
	}
	if (d->codes_cut)
		te_appendf(codes, sizeof(codes), ", ...");
	i = bad >= 0 ? bad : 0;
	te_snprintf(value, sizeof(value), "XID %u", d->codes[i]);
	if (bad >= 0)
		te_health_add(out, "gpu", dev, value, TE_HV_FAIL,
			      "%s XID %u (%s%u logged since %s: %s)", dev,
			      d->codes[i], pci, d->count, since, codes);
	else
		te_health_add(out, "gpu", dev, value, TE_HV_PASS,
			      "%s XID %u (%s%u logged since %s: %s; none in "
			      "health_xid_fail: not failed)",
			      dev, d->codes[i], pci, d->count, since, codes);
}

void te_xid_results(const struct te_xid_scan *s,
		    const struct te_health_gpu_pci *gpus, int n,
		    const struct te_health_policy *p, struct te_health_set *out)
{
	const struct te_xid_tally *t;
	unsigned long long lost;
	const char *why;
	char since[80], note[128] = "";
	int i;

	if (s->err[0]) {
		te_health_add(out, "gpu", "xid", "", TE_HV_ERROR, "gpu xid: %s",
			      s->err);
		return;
	}
	t = te_xid_scan_tally(s, &why);
	for (i = 0; i < t->n; i++)
		dev_result(&t->dev[i], why ? "boot" : "the last check", gpus, n,
			   p, out);
	if (t->cut)
		te_health_add(out, "gpu", "xid", "", TE_HV_ERROR,
			      "gpu xid: %u more XIDs on devices past the "
			      "first %d: not told apart",
			      t->cut, TE_XID_DEVS_MAX);
	if (s->bounded)
		te_health_add(out, "gpu", "xid", "", TE_HV_ERROR,
			      "gpu xid: the kernel's log was not read to its "
			      "end (stopped at %u records or %d ms, record "
			      "%llu): later XIDs not seen",
			      s->records + s->junk, TE_XID_READ_MS,
			      s->last_seq);
	if (t->n || t->cut || s->bounded)
		return;
	lost = s->lost;
	/* the records between the mark and the oldest the log still holds
	 * were overwritten before this check */
	if (!why && s->any && s->first_seq > s->mark_seq + 1)
		lost += s->first_seq - s->mark_seq - 1;
	if (lost)
		te_appendf(note, sizeof(note),
			   "; %llu records overwritten before they were read",
			   lost);
	if (why)
		te_snprintf(since, sizeof(since), "boot (%s; ", why);
	else
		te_strlcpy(since, "the node's last check (", sizeof(since));
	if (s->any)
		te_health_add(out, "gpu", "xid", "none", TE_HV_PASS,
			      "gpu xid: none since %skernel log records %llu "
			      "to %llu%s)",
			      since, s->first_seq, s->last_seq, note);
	else
		te_health_add(out, "gpu", "xid", "none", TE_HV_PASS,
			      "gpu xid: none since %sno kernel log record)",
			      since);
}
