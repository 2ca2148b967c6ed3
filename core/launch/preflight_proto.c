/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The GPU pre-flight's pipe protocol and decisions (preflight_proto.h). */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include "launch/preflight_proto.h"
#include "util/strutil.h"

#define PF_LINE_MAX 700 /* one KEY=VALUE line, newline excluded */

enum key {
	K_RESULT,
	K_GPU,
	K_LIBRARY,
	K_RUNTIME,
	K_DRIVER,
	K_FREE,
	K_TOTAL,
	K_CALL,
	K_CODE,
	K_ERROR,
	K_MS,
	K_COUNT
};
static const char *const key_names[K_COUNT] = {
	"RESULT", "GPU",  "LIBRARY", "RUNTIME", "DRIVER", "FREE",
	"TOTAL",  "CALL", "CODE",    "ERROR",	"MS",
};
static const char *const status_words[] = { "ok", "fail", "unavailable" };

/* cudaError_t values (driver_types.h, stable across CUDA 11-13) that mean
 * this node has no usable CUDA rather than a broken GPU. */
#define CUDA_ERR_STUB_LIBRARY 34	/* libcuda.so is the toolkit's stub */
#define CUDA_ERR_INSUFFICIENT_DRIVER 35 /* no driver, or one too old */
#define CUDA_ERR_NO_DEVICE 100
#define CUDA_ERR_SYSTEM_DRIVER_MISMATCH 803
#define CUDA_ERR_COMPAT_NOT_SUPPORTED 804

static int hexn(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

int te_pf_busid_valid(const char *s)
{
	const char *c = s ? strchr(s, ':') : NULL;
	size_t dl;

	if (!c)
		return 0;
	dl = (size_t)(c - s);
	return dl >= 1 && dl <= 8 && hexn(s, dl) && hexn(c + 1, 2) &&
	       c[3] == ':' && hexn(c + 4, 2) && c[6] == '.' && c[7] >= '0' &&
	       c[7] <= '7' && c[8] == '\0';
}

static int call_valid(const char *s)
{
	return te_word_valid(s, TE_PF_CALL_MAX, "_");
}

/* A signed decimal >= -1 that fits an int ("-1" only as itself). */
static int parse_int(const char *v, int *out)
{
	uint64_t n;

	if (!strcmp(v, "-1")) {
		*out = -1;
		return 0;
	}
	if (te_parse_u64(v, 0x7fffffff, &n) < 0)
		return -1;
	*out = (int)n;
	return 0;
}

static int one_line(char *line, struct te_pf_result *r, int seen[K_COUNT],
		    char *err, size_t errlen)
{
	char *eq = strchr(line, '='), q[64];
	const char *v;
	uint64_t n;
	int k, i;

	if (!eq) {
		te_quote(q, sizeof(q), line);
		return te_err(err, errlen, "not KEY=VALUE: '%s'", q);
	}
	*eq = '\0';
	v = eq + 1;
	for (k = 0; k < K_COUNT; k++)
		if (!strcmp(line, key_names[k]))
			break;
	if (k == K_COUNT) {
		te_quote(q, sizeof(q), line);
		return te_err(err, errlen, "unknown key '%s'", q);
	}
	if (seen[k]++)
		return te_err(err, errlen, "%s given twice", key_names[k]);
	if (!te_is_printable(v, PF_LINE_MAX))
		return te_err(err, errlen, "%s: not printable text",
			      key_names[k]);
	switch (k) {
	case K_RESULT:
		for (i = 0; i < 3; i++)
			if (!strcmp(v, status_words[i]))
				break;
		if (i == 3)
			goto bad;
		r->status = (enum te_pf_status)i;
		return 0;
	case K_GPU:
		if (!te_pf_busid_valid(v))
			goto bad;
		te_strlcpy(r->gpu, v, sizeof(r->gpu));
		return 0;
	case K_LIBRARY:
		if (v[0] != '/' || strlen(v) >= sizeof(r->library))
			goto bad;
		te_strlcpy(r->library, v, sizeof(r->library));
		return 0;
	case K_RUNTIME:
	case K_DRIVER:
		if (te_parse_u64(v, 1000000, &n) < 0)
			goto bad;
		*(k == K_RUNTIME ? &r->runtime : &r->driver) = (int)n;
		return 0;
	case K_FREE:
	case K_TOTAL:
		/* 1 PiB: no GPU has more */
		if (te_parse_u64(v, 1ULL << 50, &n) < 0)
			goto bad;
		*(k == K_FREE ? &r->free : &r->total) = n;
		return 0;
	case K_CALL:
		if (!call_valid(v))
			goto bad;
		te_strlcpy(r->call, v, sizeof(r->call));
		return 0;
	case K_CODE:
		if (parse_int(v, &r->code) < 0)
			goto bad;
		return 0;
	case K_ERROR:
		if (!v[0] || strlen(v) > TE_PF_ERROR_MAX)
			goto bad;
		te_strlcpy(r->error, v, sizeof(r->error));
		return 0;
	case K_MS:
		if (te_parse_u64(v, 24 * 3600 * 1000ULL, &n) < 0)
			goto bad;
		r->ms = (unsigned)n;
		return 0;
	}
bad:
	te_quote(q, sizeof(q), v);
	return te_err(err, errlen, "bad %s '%s'", key_names[k], q);
}

struct te_pf_parse_ctx {
	struct te_pf_result *r;
	int seen[K_COUNT];
};

static int te_pf_parse_line(char *line, void *ctx, char *err, size_t errlen)
{
	struct te_pf_parse_ctx *c = ctx;

	return one_line(line, c->r, c->seen, err, errlen);
}

int te_pf_parse(const char *buf, size_t len, struct te_pf_result *r, char *err,
		size_t errlen)
{
	struct te_pf_parse_ctx c = { r, { 0 } };

	memset(r, 0, sizeof(*r));
	r->code = -1;
	if (te_framed_parse(buf, len, TE_PF_OUT_MAX, PF_LINE_MAX, TE_PF_HEADER,
			    "the program", te_pf_parse_line, &c, err,
			    errlen) < 0)
		return -1;
	if (!c.seen[K_RESULT])
		return te_err(err, errlen, "no RESULT");
	if (r->status == TE_PF_OK && (!c.seen[K_FREE] || !c.seen[K_TOTAL] ||
				      !c.seen[K_GPU] || r->free > r->total)) {
		return te_err(err, errlen,
			      "RESULT=ok without GPU, FREE <= TOTAL");
	}
	if (r->status != TE_PF_OK && (!c.seen[K_CALL] || !c.seen[K_ERROR]))
		return te_err(err, errlen, "RESULT=%s without CALL and ERROR",
			      status_words[r->status]);
	r->have_mem = c.seen[K_FREE] && c.seen[K_TOTAL];
	return 0;
}

int te_pf_format(const struct te_pf_result *r, char *buf, size_t len)
{
	char t[TE_PF_ERROR_MAX + 1];
	int rc = 0;

	if (!len || (unsigned)r->status > TE_PF_UNAVAILABLE)
		return -1;
	buf[0] = '\0';
	rc |= te_appendf(buf, len, "%s\nRESULT=%s\n", TE_PF_HEADER,
			 status_words[r->status]);
	if (te_pf_busid_valid(r->gpu))
		rc |= te_appendf(buf, len, "GPU=%s\n", r->gpu);
	if (r->library[0] == '/' && te_is_printable(r->library, PF_LINE_MAX))
		rc |= te_appendf(buf, len, "LIBRARY=%s\n", r->library);
	rc |= te_appendf(buf, len, "RUNTIME=%d\nDRIVER=%d\n",
			 r->runtime > 0 && r->runtime <= 1000000 ? r->runtime
								 : 0,
			 r->driver > 0 && r->driver <= 1000000 ? r->driver : 0);
	if (r->have_mem)
		rc |= te_appendf(buf, len, "FREE=%llu\nTOTAL=%llu\n",
				 (unsigned long long)r->free,
				 (unsigned long long)r->total);
	if (r->call[0]) {
		if (!call_valid(r->call))
			return -1;
		rc |= te_appendf(buf, len, "CALL=%s\nCODE=%d\n", r->call,
				 r->code >= -1 ? r->code : -1);
	}
	te_clean_text(t, sizeof(t), r->error, TE_PF_ERROR_MAX);
	if (t[0])
		rc |= te_appendf(buf, len, "ERROR=%s\n", t);
	rc |= te_appendf(buf, len, "MS=%u\nEND\n", r->ms);
	return rc ? -1 : 0;
}

enum te_pf_status te_pf_classify(const char *call, int code)
{
	if (call && (!strcmp(call, "dlopen") || !strcmp(call, "dlsym")))
		return TE_PF_UNAVAILABLE;
	switch (code) {
	case CUDA_ERR_STUB_LIBRARY:
	case CUDA_ERR_INSUFFICIENT_DRIVER:
	case CUDA_ERR_NO_DEVICE:
	case CUDA_ERR_SYSTEM_DRIVER_MISMATCH:
	case CUDA_ERR_COMPAT_NOT_SUPPORTED:
		return TE_PF_UNAVAILABLE;
	default:
		return TE_PF_FAILED;
	}
}

void te_pf_version_text(int code, char *buf, size_t len)
{
	if (code <= 0) {
		te_strlcpy(buf, "none", len);
		return;
	}
	te_snprintf(buf, len, "%d.%d", code / 1000, (code % 1000) / 10);
}

/* ---------------------------------------------------------------- decisions */

static const char *node_of(const struct te_pf_input *in)
{
	return in->node && in->node[0] ? in->node : "?";
}

int te_pf_need_run(const struct te_pf_input *in, struct te_pf_outcome *out)
{
	char e[TE_PF_ERROR_MAX + 1];

	memset(out, 0, sizeof(*out));
	out->action = TE_PF_NOTHING;
	if (in->has_gpu > 0 && te_pf_busid_valid(in->busid))
		return 1;
	if (in->has_gpu < 0) {
		/* this node's problem, said once per node */
		te_clean_text(e, sizeof(e),
			      in->map_err ? in->map_err : "unknown",
			      TE_PF_ERROR_MAX);
		te_snprintf(out->line, sizeof(out->line),
			    "warning: preflight: "
			    "nothing checked for rank %u (node %s): its GPU "
			    "is not known: %s",
			    in->rank, node_of(in), e);
		out->print = in->local_id == 0;
		return 0;
	}
	/* said once for the step, by rank 0; the others in the node log */
	te_snprintf(out->line, sizeof(out->line),
		    "preflight: nothing to check "
		    "on node %s: the step has no GPU there; the tasks run "
		    "unchecked",
		    node_of(in));
	out->print = in->rank == 0;
	return 0;
}

static void gib(uint64_t bytes, char *buf, size_t len)
{
	te_snprintf(buf, len, "%.1f GiB",
		    (double)bytes / (1024.0 * 1024 * 1024));
}

void te_pf_decide(const struct te_pf_input *in, struct te_pf_outcome *out)
{
	const struct te_pf_result *r = in->result;
	char e[TE_PF_ERROR_MAX + 1], busid[TE_PF_BUSID_MAX];
	char rt[16], dv[16], fr[32], to[32];

	memset(out, 0, sizeof(*out));
	te_clean_text(busid, sizeof(busid),
		      te_pf_busid_valid(in->busid) ? in->busid : "?",
		      sizeof(busid) - 1);
	if (in->spawn_err || !r) {
		te_clean_text(e, sizeof(e),
			      in->spawn_err ? in->spawn_err : "no result",
			      TE_PF_ERROR_MAX);
		out->action = TE_PF_FAIL;
		out->print = 1;
		te_snprintf(out->line, sizeof(out->line),
			    "preflight: rank %u "
			    "(node %s) GPU %s: %s",
			    in->rank, node_of(in), busid, e);
		te_snprintf(out->why, sizeof(out->why), "preflight: GPU %s: %s",
			    busid, e);
		return;
	}
	te_pf_version_text(r->runtime, rt, sizeof(rt));
	te_pf_version_text(r->driver, dv, sizeof(dv));
	te_clean_text(e, sizeof(e), r->error, TE_PF_ERROR_MAX);
	switch (r->status) {
	case TE_PF_OK:
		out->action = TE_PF_PASS;
		gib(r->free, fr, sizeof(fr));
		gib(r->total, to, sizeof(to));
		te_snprintf(out->env, sizeof(out->env),
			    "gpu=%s free=%llu "
			    "total=%llu runtime=%d driver=%d",
			    busid, (unsigned long long)r->free,
			    (unsigned long long)r->total, r->runtime,
			    r->driver);
		te_snprintf(out->line, sizeof(out->line),
			    "preflight: rank %u "
			    "(node %s) GPU %s: ok, %s free of %s, CUDA runtime "
			    "%s, driver %s (%u ms)",
			    in->rank, node_of(in), busid, fr, to, rt, dv,
			    r->ms);
		out->print = in->verbose;
		return;
	case TE_PF_UNAVAILABLE:
		out->action = TE_PF_NOTHING;
		te_snprintf(
			out->line, sizeof(out->line),
			"preflight: nothing to "
			"check on node %s: no usable CUDA runtime or driver "
			"(%s: %s; runtime %s, driver %s); the tasks run "
			"unchecked",
			node_of(in), r->call, e, rt, dv);
		out->print = in->rank == 0;
		return;
	case TE_PF_FAILED:
	default:
		out->action = TE_PF_FAIL;
		out->print = 1;
		te_snprintf(out->line, sizeof(out->line),
			    "preflight: rank %u "
			    "(node %s) GPU %s: %s: %s",
			    in->rank, node_of(in), busid, r->call, e);
		te_snprintf(out->why, sizeof(out->why),
			    "preflight: GPU %s: "
			    "%s: %s",
			    busid, r->call, e);
		return;
	}
}
