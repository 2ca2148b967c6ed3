/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The helper-to-plugin pipe protocol of the rendezvous (rdzv_proto.h). */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/rdzv_proto.h"
#include "util/strutil.h"

void te_rdzv_clean_text(char *dst, size_t size, const char *text)
{
	te_clean_text(dst, size, text, TE_RDZV_TEXT_MAX);
}

int te_private_dir_ok(const char *dir)
{
	struct stat st;

	return dir && dir[0] == '/' && stat(dir, &st) == 0 &&
	       S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

const char *te_hook_value(const char *spec, const char *node, char *buf,
			  size_t len)
{
	size_t ml;

	if (!spec || !node || !*node || te_strnlen_cap(spec, 1024) > 1024)
		return NULL;
	ml = strlen(node);
	while (*spec) {
		const char *end = strchr(spec, ',');
		size_t l = end ? (size_t)(end - spec) : strlen(spec);

		if (l > ml + 1 && !strncmp(spec, node, ml) && spec[ml] == ':' &&
		    l - ml - 1 < len) {
			memcpy(buf, spec + ml + 1, l - ml - 1);
			buf[l - ml - 1] = '\0';
			return buf;
		}
		if (!end)
			break;
		spec = end + 1;
	}
	return NULL;
}

int te_ifname_valid(const char *s)
{
	return te_word_valid(s, TE_RDZV_IFNAME_MAX, "_.-@");
}

static int addr_valid(const char *s)
{
	unsigned char buf[16];

	if (strlen(s) >= TE_RDZV_ADDR_MAX)
		return 0;
	return inet_pton(AF_INET, s, buf) == 1 ||
	       inet_pton(AF_INET6, s, buf) == 1;
}

enum key {
	K_ADDR,
	K_PORT,
	K_IFNAME,
	K_CKPT,
	K_WARN,
	K_ERROR,
	K_QUIET,
	K_LAUNCH,
	K_COUNT
};
static const char *const keys[K_COUNT] = {
	"MASTER_ADDR", "MASTER_PORT", "IFNAME",	    "CHECKPOINT_DIR",
	"WARN",	       "ERROR",	      "FAIL_QUIET", "LAUNCH",
};

static int one_line(const char *line, struct te_rdzv_result *r, int seen[],
		    char *err, size_t errlen)
{
	const char *eq = strchr(line, '=');
	const char *val;
	char key[32], q[96];
	size_t klen;
	int k;
	uint64_t port;

	te_quote(q, sizeof(q), line);
	if (!eq || (klen = (size_t)(eq - line)) == 0 || klen >= sizeof(key))
		return te_err(err, errlen, "not KEY=VALUE: '%s'", q);
	memcpy(key, line, klen);
	key[klen] = '\0';
	val = eq + 1;
	for (k = 0; k < K_COUNT; k++)
		if (!strcmp(key, keys[k]))
			break;
	if (k == K_COUNT)
		return te_err(err, errlen, "unknown key in '%s'", q);
	if (k != K_WARN && seen[k]++)
		return te_err(err, errlen, "%s given twice", keys[k]);
	if (!te_is_printable(val, TE_RDZV_LINE_MAX))
		return te_err(err, errlen,
			      "%s: control or non-ASCII characters", keys[k]);
	switch (k) {
	case K_ADDR:
		if (!addr_valid(val))
			return te_err(err, errlen,
				      "MASTER_ADDR: not an IP "
				      "address: '%s'",
				      q);
		te_strlcpy(r->master_addr, val, sizeof(r->master_addr));
		return 0;
	case K_PORT:
		if (te_parse_u64(val, 65535, &port) < 0 || port == 0)
			return te_err(err, errlen,
				      "MASTER_PORT: not a port "
				      "number: '%s'",
				      q);
		r->master_port = (uint16_t)port;
		return 0;
	case K_IFNAME:
		if (!te_ifname_valid(val))
			return te_err(err, errlen,
				      "IFNAME: not an interface "
				      "name: '%s'",
				      q);
		te_strlcpy(r->ifname, val, sizeof(r->ifname));
		return 0;
	case K_CKPT:
		if (val[0] != '/' || te_strlcpy(r->checkpoint_dir, val,
						sizeof(r->checkpoint_dir)) >=
					     sizeof(r->checkpoint_dir)) {
			r->checkpoint_dir[0] = '\0';
			return te_err(err, errlen,
				      "CHECKPOINT_DIR: not an "
				      "absolute path: '%s'",
				      q);
		}
		return 0;
	case K_LAUNCH:
		if (te_launch_skew_parse(val, &r->launch) < 0)
			return te_err(err, errlen,
				      "LAUNCH: not RANKS NODES "
				      "SKEW_MS FIRST LAST: '%s'",
				      q);
		r->has_launch = 1;
		return 0;
	case K_WARN:
		if (r->nwarn >= TE_RDZV_WARN_MAX)
			return te_err(err, errlen, "more than %d WARN lines",
				      TE_RDZV_WARN_MAX);
		te_rdzv_clean_text(r->warn[r->nwarn++], sizeof(r->warn[0]),
				   val);
		return 0;
	default: /* ERROR, FAIL_QUIET */
		if (r->failed)
			return te_err(err, errlen,
				      "ERROR and FAIL_QUIET both "
				      "given");
		r->failed = 1;
		r->quiet = k == K_QUIET;
		te_rdzv_clean_text(r->error, sizeof(r->error), val);
		if (!r->error[0])
			te_strlcpy(r->error, "(no reason given)",
				   sizeof(r->error));
		return 0;
	}
}

struct te_rdzv_parse_ctx {
	struct te_rdzv_result *r;
	int seen[K_COUNT];
};

static int te_rdzv_parse_line(char *line, void *ctx, char *err, size_t errlen)
{
	struct te_rdzv_parse_ctx *c = ctx;

	return one_line(line, c->r, c->seen, err, errlen);
}

int te_rdzv_parse(const char *buf, size_t len, struct te_rdzv_result *r,
		  char *err, size_t errlen)
{
	struct te_rdzv_parse_ctx c = { r, { 0 } };

	memset(r, 0, sizeof(*r));
	return te_framed_parse(buf, len, TE_RDZV_OUT_MAX, TE_RDZV_LINE_MAX,
			       TE_RDZV_HEADER, "the helper", te_rdzv_parse_line,
			       &c, err, errlen);
}

int te_rdzv_format(const struct te_rdzv_result *r, char *buf, size_t len)
{
	char t[TE_RDZV_TEXT_MAX + 1];
	int rc = 0, i;

	if (!len)
		return -1;
	buf[0] = '\0';
	rc |= te_appendf(buf, len, "%s\n", TE_RDZV_HEADER);
	if (r->master_addr[0])
		rc |= te_appendf(buf, len, "MASTER_ADDR=%s\n", r->master_addr);
	if (r->master_port)
		rc |= te_appendf(buf, len, "MASTER_PORT=%u\n",
				 (unsigned)r->master_port);
	if (r->ifname[0])
		rc |= te_appendf(buf, len, "IFNAME=%s\n", r->ifname);
	if (r->checkpoint_dir[0]) {
		if (!te_is_printable(r->checkpoint_dir, TE_RDZV_PATH_MAX - 1))
			return -1;
		rc |= te_appendf(buf, len, "CHECKPOINT_DIR=%s\n",
				 r->checkpoint_dir);
	}
	for (i = 0; i < r->nwarn && i < TE_RDZV_WARN_MAX; i++) {
		te_rdzv_clean_text(t, sizeof(t), r->warn[i]);
		rc |= te_appendf(buf, len, "WARN=%s\n", t);
	}
	if (r->has_launch) {
		if (te_launch_skew_format(&r->launch, t, sizeof(t)) < 0)
			return -1;
		rc |= te_appendf(buf, len, "LAUNCH=%s\n", t);
	}
	if (r->failed) {
		te_rdzv_clean_text(t, sizeof(t), r->error);
		rc |= te_appendf(buf, len, "%s=%s\n",
				 r->quiet ? "FAIL_QUIET" : "ERROR", t);
	}
	rc |= te_appendf(buf, len, "END\n");
	return rc ? -1 : 0;
}

int te_rdzv_write_node_result(const char *dir, const struct te_rdzv_result *r)
{
	static char out[TE_RDZV_OUT_MAX];
	char path[600], tmp[640];

	if (te_rdzv_format(r, out, sizeof(out)) < 0 ||
	    te_snprintf(path, sizeof(path), "%s/%s", dir, TE_NODE_RESULT) < 0 ||
	    te_snprintf(tmp, sizeof(tmp), "%s.tmp", path) < 0)
		return -1;
	return te_replace_file(path, tmp, out);
}
