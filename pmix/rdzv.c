/* trainenv-rdzv: the launch rendezvous helper. The plugin's task_init runs
 * it (as the job user, with the task's environment, which holds PMIX_*)
 * just before the task's exec, and reads its results from the pipe on
 * stdout (spank/rdzv_proto.h). It is a plain PMIx client, so that no PMIx
 * client call ever runs inside slurmstepd or the task before exec
 * (DESIGN.md section 4).
 *
 * Every rank puts its address and versions; rank 0 also puts MASTER_ADDR
 * and a MASTER_PORT it verified free. Then either
 *  - barrier mode (--barrier S, or --checkpoint-dir): a fence that collects
 *    all data, with S seconds of deadline and a report of the missing ranks
 *    (pmix/barrier.c); versions are compared job-wide and reported once by
 *    rank 0; the checkpoint directory is checked from every node, with a
 *    second fence to agree on the verdict;
 *  - no barrier: each rank takes rank 0's data as soon as it is there
 *    (direct modex, at most --wait S); each node compares its versions with
 *    rank 0's.
 * Always PMIx_Finalize before exit: Slurm kills the step when a client
 * leaves without it. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "netinfo.h"
#include "rdzv_core.h"
#include "rdzv_proto.h"
#include "strutil.h"

#define CKPT_FENCE_MS 60000
#define CKPT_RETRY_MS 3000	/* NFS may cache "no such file" briefly */

struct opts {
	unsigned long job, step;
	uint16_t port_lo, port_hi, port_start;
	unsigned barrier;	/* seconds, 0: off */
	unsigned wait;		/* seconds for rank 0's data without barrier */
	int vcheck;		/* 0 warn, 1 fail, 2 off */
	const char *ckpt;
	int ifname;
	int hooks;
};

static struct te_rdzv_result res;

/* TRAINENV_RDZV_PROFILE=1: phase times on stderr (a debugging aid) */
static int profile;
static struct timespec t_start;
static void phase(const char *what)
{
	struct timespec ts;

	if (!profile)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "trainenv-rdzv %s: %s at %.1f ms\n",
		getenv("PMIX_RANK") ? getenv("PMIX_RANK") : "?", what,
		(ts.tv_sec - t_start.tv_sec) * 1e3 +
			(ts.tv_nsec - t_start.tv_nsec) / 1e6);
}

__attribute__((format(printf, 1, 2)))
static void warn(const char *fmt, ...)
{
	va_list ap;

	if (res.nwarn >= TE_RDZV_WARN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(res.warn[res.nwarn], sizeof(res.warn[0]), fmt, ap);
	va_end(ap);
	res.nwarn++;
}

__attribute__((format(printf, 2, 3)))
static void fail(int quiet, const char *fmt, ...)
{
	va_list ap;

	if (res.failed)
		return;	/* the first reason is the one */
	res.failed = 1;
	res.quiet = quiet;
	va_start(ap, fmt);
	vsnprintf(res.error, sizeof(res.error), fmt, ap);
	va_end(ap);
}

static int emit(void)
{
	static char out[TE_RDZV_OUT_MAX];
	size_t off = 0, len;

	if (te_rdzv_format(&res, out, sizeof(out)) < 0)
		return 1;
	len = strlen(out);
	while (off < len) {
		ssize_t n = write(STDOUT_FILENO, out + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 1;
		off += (size_t)n;
	}
	return 0;
}

/* ---------------------------------------------------------------- args */

static int num_arg(const char *s, uint64_t max, uint64_t *v)
{
	return s ? te_parse_u64(s, max, v) : -1;
}

static int parse_args(int argc, char **argv, struct opts *o, char *err,
		      size_t errlen)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->wait = 300;
	o->port_lo = 20000;
	o->port_hi = 29999;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;

		if (!strcmp(a, "--ifname")) {
			o->ifname = 1;
			continue;
		}
		if (!strcmp(a, "--test-hooks")) {
			o->hooks = 1;
			continue;
		}
		i++;
		if (!strcmp(a, "--job") && num_arg(v, UINT32_MAX, &n) == 0) {
			o->job = (unsigned long)n;
		} else if (!strcmp(a, "--step") &&
			   num_arg(v, UINT32_MAX, &n) == 0) {
			o->step = (unsigned long)n;
		} else if (!strcmp(a, "--port-start") &&
			   num_arg(v, 65535, &n) == 0) {
			o->port_start = (uint16_t)n;
		} else if (!strcmp(a, "--port-range") && v) {
			char lo[8], hi[8];
			const char *d = strchr(v, '-');
			uint64_t l, h;

			if (!d || (size_t)(d - v) >= sizeof(lo) ||
			    strlen(d + 1) >= sizeof(hi))
				goto bad;
			memcpy(lo, v, (size_t)(d - v));
			lo[d - v] = '\0';
			te_strlcpy(hi, d + 1, sizeof(hi));
			if (te_parse_u64(lo, 65535, &l) < 0 ||
			    te_parse_u64(hi, 65535, &h) < 0 || !l || l > h)
				goto bad;
			o->port_lo = (uint16_t)l;
			o->port_hi = (uint16_t)h;
		} else if (!strcmp(a, "--barrier") &&
			   num_arg(v, 7 * 86400, &n) == 0) {
			o->barrier = (unsigned)n;
		} else if (!strcmp(a, "--wait") &&
			   num_arg(v, 7 * 86400, &n) == 0 && n > 0) {
			o->wait = (unsigned)n;
		} else if (!strcmp(a, "--version-check") && v) {
			if (!strcmp(v, "warn"))
				o->vcheck = 0;
			else if (!strcmp(v, "fail"))
				o->vcheck = 1;
			else if (!strcmp(v, "off"))
				o->vcheck = 2;
			else
				goto bad;
		} else if (!strcmp(a, "--checkpoint-dir") && v && v[0] == '/') {
			o->ckpt = v;
		} else {
			goto bad;
		}
	}
	return 0;
bad:
	te_snprintf(err, errlen, "bad argument '%.40s'", argv[i - 1]);
	return -1;
}

/* ---------------------------------------------------------------- hooks */

static const char *node_name(void)
{
	static char host[TE_HOST_MAX];
	const char *n = getenv("SLURMD_NODENAME");

	if (n && te_host_valid(n))
		return n;
	if (gethostname(host, sizeof(host)) < 0)
		return "unknown";
	host[sizeof(host) - 1] = '\0';
	return host;
}

/* "HOST:VALUE,HOST:VALUE": the value for this node, or NULL. */
static const char *hook_value(const char *var, char *buf, size_t len)
{
	const char *s = getenv(var), *me = node_name();
	size_t ml = strlen(me);

	if (!s || te_strnlen_cap(s, 1024) > 1024)
		return NULL;
	while (*s) {
		const char *end = strchr(s, ',');
		size_t l = end ? (size_t)(end - s) : strlen(s);

		if (l > ml + 1 && !strncmp(s, me, ml) && s[ml] == ':' &&
		    l - ml - 1 < len) {
			memcpy(buf, s + ml + 1, l - ml - 1);
			buf[l - ml - 1] = '\0';
			return buf;
		}
		if (!end)
			break;
		s = end + 1;
	}
	return NULL;
}

/* Test hooks, honoured only with --test-hooks (the site policy's
 * test-hooks=on): they simulate a node that starts late, a rank that
 * never reaches the barrier, a node with another NCCL. Returns -1 when
 * this rank must fail now. */
static int hooks_before_init(const struct opts *o)
{
	char buf[64];
	const char *v;
	uint64_t n;

	if (!o->hooks)
		return 0;
	if ((v = hook_value("TRAINENV_TEST_DELAY", buf, sizeof(buf))) &&
	    te_parse_u64(v, 600, &n) == 0) {
		struct timespec ts = { .tv_sec = (time_t)n };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	if ((v = getenv("TRAINENV_TEST_FAIL_RANK")) && getenv("PMIX_RANK") &&
	    !strcmp(v, getenv("PMIX_RANK"))) {
		fail(0, "test hook TRAINENV_TEST_FAIL_RANK: rank %s fails "
		     "before the barrier", v);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- versions */

static void probe_versions(const struct opts *o, struct te_versions *v)
{
	char buf[TE_VER_MAX];
	const char *fake;
	void *h;
	int code;

	te_strlcpy(v->trainenv, PACKAGE_VERSION, sizeof(v->trainenv));
	te_strlcpy(v->nccl, "none", sizeof(v->nccl));
	te_strlcpy(v->cuda, "none", sizeof(v->cuda));
	/* NCCL and the CUDA driver are loaded, never linked: nodes without
	 * them keep working. Their version functions only read constants. */
	if ((h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL))) {
		int (*get)(int *) = (int (*)(int *))dlsym(h, "ncclGetVersion");

		code = 0;
		if (get && get(&code) == 0)
			te_nccl_version_text(code, v->nccl, sizeof(v->nccl));
		dlclose(h);
	}
	if ((h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))) {
		int (*get)(int *) = (int (*)(int *))dlsym(h,
							  "cuDriverGetVersion");

		code = 0;
		if (get && get(&code) == 0)
			te_cuda_version_text(code, v->cuda, sizeof(v->cuda));
		dlclose(h);
	}
	if (o->hooks && (fake = hook_value("TRAINENV_TEST_FAKE_NCCL_VERSION",
					   buf, sizeof(buf))) &&
	    te_version_word_valid(fake))
		te_strlcpy(v->nccl, fake, sizeof(v->nccl));
}

struct version_table {
	uint32_t n;
	char (*host)[TE_HOST_MAX];
	struct te_versions *ver;
};

static int component_summary(const struct version_table *t, int which,
			     const char *what, char *out, size_t outlen)
{
	struct te_nodever *nv = calloc(t->n, sizeof(*nv));
	int d;
	uint32_t i;

	if (!nv)
		return 0;
	for (i = 0; i < t->n; i++) {
		nv[i].host = t->host[i];
		nv[i].ver = which == 0 ? t->ver[i].trainenv :
			    which == 1 ? t->ver[i].nccl : t->ver[i].cuda;
	}
	d = te_version_summary(what, nv, t->n, out, outlen);
	free(nv);
	return d;
}

/* Barrier mode: every rank's versions are here; every rank reaches the
 * same verdict, rank 0 reports it. */
static void check_versions_all(struct te_pmix *p, const struct opts *o)
{
	static const char *const what[3] = { "trainenv", "NCCL",
					     "CUDA driver" };
	struct version_table t = { .n = p->size };
	char text[TE_RDZV_TEXT_MAX], part[TE_RDZV_TEXT_MAX];
	uint32_t r;
	int c, bad = 0;

	t.host = calloc(p->size, sizeof(*t.host));
	t.ver = calloc(p->size, sizeof(*t.ver));
	if (!t.host || !t.ver) {
		warn("version check skipped: out of memory");
		goto out;
	}
	for (r = 0; r < p->size; r++) {
		char s[256];

		if (te_pmix_get(p, r, "te.ver", 1, s, sizeof(s)) < 0 ||
		    te_versions_parse(s, &t.ver[r]) < 0) {
			te_strlcpy(t.ver[r].trainenv, "unknown", TE_VER_MAX);
			te_strlcpy(t.ver[r].nccl, "unknown", TE_VER_MAX);
			te_strlcpy(t.ver[r].cuda, "unknown", TE_VER_MAX);
		}
		if (te_pmix_host_of(p, r, t.host[r], sizeof(t.host[r])) < 0)
			te_strlcpy(t.host[r], "?", sizeof(t.host[r]));
	}
	text[0] = '\0';
	for (c = 0; c < 3; c++)
		if (component_summary(&t, c, what[c], part, sizeof(part)) > 1) {
			te_appendf(text, sizeof(text), "%s%s", bad ? "; " : "",
				   part);
			bad = 1;
		}
	if (!bad)
		goto out;
	if (o->vcheck == 1) {
		if (p->me.rank == 0)
			fail(0, "version mismatch (version-check=fail): %s",
			     text);
		else
			fail(1, "version mismatch across nodes (rank 0 "
			     "reports it)");
	} else if (p->me.rank == 0) {
		warn("version mismatch: %s", text);
	}
out:
	free(t.host);
	free(t.ver);
}

/* Without a barrier: this node against rank 0's node, reported by this
 * node's first task. */
static void check_versions_rank0(struct te_pmix *p, const struct opts *o,
				 int local_leader, const struct te_versions *mine)
{
	struct te_versions v0;
	char s[256], host0[TE_HOST_MAX], text[TE_RDZV_TEXT_MAX];
	int timed_out;

	if (p->me.rank == 0 ||
	    te_pmix_get_wait(p, 0, "te.ver", 10000, s, sizeof(s), &timed_out,
			     text, sizeof(text)) < 0 ||
	    te_versions_parse(s, &v0) < 0)
		return;
	if (!strcmp(v0.trainenv, mine->trainenv) && !strcmp(v0.nccl, mine->nccl) &&
	    !strcmp(v0.cuda, mine->cuda))
		return;
	if (te_pmix_host_of(p, 0, host0, sizeof(host0)) < 0)
		te_strlcpy(host0, "?", sizeof(host0));
	te_snprintf(text, sizeof(text), "version mismatch: node %s has "
		    "trainenv %s, NCCL %s, CUDA driver %s; rank 0's node %s has "
		    "trainenv %s, NCCL %s, CUDA driver %s (without "
		    "--train-barrier each node is only compared with rank 0's)",
		    p->host, mine->trainenv, mine->nccl, mine->cuda, host0,
		    v0.trainenv, v0.nccl, v0.cuda);
	if (o->vcheck == 1)
		fail(!local_leader, "%s", text);
	else if (local_leader)
		warn("%s", text);
}

/* ---------------------------------------------------------------- checkpoint */

static char ckpt_file[TE_RDZV_PATH_MAX + 96];

/* Rank 0, before the fence: a file with a random token in DIR. Puts
 * "NAME TOKEN", or "error REASON". */
static void ckpt_write(struct te_pmix *p, const struct opts *o)
{
	char token[TE_TOKEN_LEN + 1], name[96], val[TE_RDZV_TEXT_MAX], err[256];
	int fd;

	if (te_random_token(token, sizeof(token)) < 0) {
		te_snprintf(val, sizeof(val), "error cannot make a token");
		goto put;
	}
	te_snprintf(name, sizeof(name), ".trainenv-ckpt-%lu.%lu-%.16s", o->job,
		    o->step, token);
	if (te_snprintf(ckpt_file, sizeof(ckpt_file), "%s/%s", o->ckpt, name) < 0) {
		te_snprintf(val, sizeof(val), "error the path is too long");
		ckpt_file[0] = '\0';
		goto put;
	}
	fd = open(ckpt_file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		te_snprintf(val, sizeof(val), "error %s", strerror(errno));
		ckpt_file[0] = '\0';
		goto put;
	}
	{
		char line[TE_TOKEN_LEN + 2];
		ssize_t n;

		te_snprintf(line, sizeof(line), "%s\n", token);
		n = write(fd, line, strlen(line));
		if (close(fd) < 0 || n != (ssize_t)strlen(line)) {
			te_snprintf(val, sizeof(val), "error writing: %s",
				    strerror(errno));
			unlink(ckpt_file);
			ckpt_file[0] = '\0';
			goto put;
		}
	}
	te_snprintf(val, sizeof(val), "%s %s", name, token);
put:
	if (te_pmix_put(p, "te.ckpt", val, err, sizeof(err)) < 0)
		fail(0, "checkpoint check: %s", err);
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* One task per node, after the first fence: "ok" or what is wrong. */
static void ckpt_node_check(struct te_pmix *p, const struct opts *o,
			    char *out, size_t len)
{
	char info[512], name[128], token[TE_TOKEN_LEN + 2], probe[TE_RDZV_PATH_MAX + 128];
	char path[TE_RDZV_PATH_MAX + 160], buf[64];
	int fd, tries;

	if (te_pmix_get(p, 0, "te.ckpt", 1, info, sizeof(info)) < 0) {
		te_snprintf(out, len, "rank 0 published no checkpoint file");
		return;
	}
	if (!strncmp(info, "error ", 6)) {
		te_snprintf(out, len, "rank0 %s", info + 6);
		return;
	}
	if (sscanf(info, "%127s %33s", name, token) != 2 ||
	    strncmp(name, ".trainenv-ckpt-", 15) || strchr(name, '/') ||
	    !te_token_valid(token)) {
		te_snprintf(out, len, "rank 0's checkpoint file name is "
			    "unreadable");
		return;
	}
	/* writable from here */
	te_snprintf(probe, sizeof(probe), "%s/.trainenv-probe-%lu.%lu-%s-%ld",
		    o->ckpt, o->job, o->step, p->host, (long)getpid());
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			te_snprintf(out, len, "no such directory");
		else
			te_snprintf(out, len, "cannot write there: %s",
				    strerror(e));
		return;
	}
	close(fd);
	unlink(probe);
	/* the same directory as rank 0's: its file, with its token */
	te_snprintf(path, sizeof(path), "%s/%s", o->ckpt, name);
	for (tries = 0;; tries++) {
		if (read_small(path, buf, sizeof(buf)) == 0) {
			size_t l = strlen(buf);

			if (l && buf[l - 1] == '\n')
				buf[--l] = '\0';
			if (!strcmp(buf, token)) {
				te_strlcpy(out, "ok", len);
				return;
			}
			te_snprintf(out, len, "rank 0's probe file has other "
				    "content there (another directory?)");
			return;
		}
		if (tries * 500 >= CKPT_RETRY_MS)
			break;
		usleep(500000);	/* network file systems cache lookups */
	}
	te_snprintf(out, len, "rank 0's probe file is not there (another "
		    "directory with the same path: node-local storage?)");
}

static void ckpt_check(struct te_pmix *p, const struct opts *o,
		       int local_leader)
{
	char mine[TE_RDZV_TEXT_MAX], err[TE_RDZV_TEXT_MAX], text[TE_RDZV_TEXT_MAX];
	char host0[TE_HOST_MAX], rank0_err[TE_RDZV_TEXT_MAX] = "";
	struct te_nodever *bad = NULL;
	char (*hosts)[TE_HOST_MAX] = NULL, (*why)[160] = NULL;
	uint32_t r, nbad = 0;

	if (local_leader) {
		ckpt_node_check(p, o, mine, sizeof(mine));
		if (te_pmix_put(p, "te.ckres", mine, err, sizeof(err)) < 0) {
			fail(0, "checkpoint check: %s", err);
			goto cleanup;
		}
	}
	if (te_pmix_commit(p, err, sizeof(err)) < 0 ||
	    te_pmix_fence(p, 1, CKPT_FENCE_MS, err, sizeof(err)) < 0) {
		fail(0, "checkpoint check: %s", err);
		goto cleanup;
	}
	if (te_pmix_host_of(p, 0, host0, sizeof(host0)) < 0)
		te_strlcpy(host0, "?", sizeof(host0));
	bad = calloc(p->size, sizeof(*bad));
	hosts = calloc(p->size, sizeof(*hosts));
	why = calloc(p->size, sizeof(*why));
	if (!bad || !hosts || !why) {
		fail(0, "checkpoint check: out of memory");
		goto cleanup;
	}
	/* only one task per node put a verdict */
	for (r = 0; r < p->size; r++) {
		char v[TE_RDZV_TEXT_MAX];

		if (te_pmix_get(p, r, "te.ckres", 1, v, sizeof(v)) < 0 ||
		    !strcmp(v, "ok"))
			continue;
		if (!strncmp(v, "rank0 ", 6)) {
			te_strlcpy(rank0_err, v + 6, sizeof(rank0_err));
			continue;
		}
		if (te_pmix_host_of(p, r, hosts[nbad], sizeof(hosts[0])) < 0)
			te_strlcpy(hosts[nbad], "?", sizeof(hosts[0]));
		te_strlcpy(why[nbad], v, sizeof(why[0]));
		bad[nbad].host = hosts[nbad];
		bad[nbad].ver = why[nbad];
		nbad++;
	}
	if (rank0_err[0]) {
		if (p->me.rank == 0)
			fail(0, "checkpoint dir %s: rank 0 (node %s) cannot "
			     "write there: %s", o->ckpt, host0, rank0_err);
		else
			fail(1, "checkpoint dir check failed (rank 0 reports "
			     "it)");
	} else if (nbad) {
		te_group_by_value(bad, nbad, 1, text, sizeof(text));
		if (p->me.rank == 0)
			fail(0, "checkpoint dir %s is not one shared directory "
			     "writable from every node (rank 0 is on %s): %s",
			     o->ckpt, host0, text);
		else
			fail(1, "checkpoint dir check failed (rank 0 reports "
			     "it)");
	} else if (te_strlcpy(res.checkpoint_dir, o->ckpt,
			      sizeof(res.checkpoint_dir)) >=
		   sizeof(res.checkpoint_dir)) {
		res.checkpoint_dir[0] = '\0';
	}
cleanup:
	free(bad);
	free(hosts);
	free(why);
	if (p->me.rank == 0 && ckpt_file[0])
		unlink(ckpt_file);
}

/* ---------------------------------------------------------------- main */

static int local_rank(struct te_pmix *p)
{
	pmix_value_t *val = NULL;
	int lr = -1;

	if (PMIx_Get(&p->me, PMIX_LOCAL_RANK, NULL, 0, &val) == PMIX_SUCCESS &&
	    val && val->type == PMIX_UINT16)
		lr = val->data.uint16;
	if (val)
		PMIX_VALUE_RELEASE(val);
	return lr;
}

static int port_free_cb(void *ctx, uint16_t port)
{
	return te_port_is_free(port);
}

static void parse_master(const char *s)
{
	char addr[TE_ADDR_MAX];
	unsigned port;

	if (sscanf(s, "%63s %u", addr, &port) == 2 && port > 0 && port < 65536) {
		te_strlcpy(res.master_addr, addr, sizeof(res.master_addr));
		res.master_port = (uint16_t)port;
	}
}

static void run(struct te_pmix *p, const struct opts *o)
{
	struct te_versions ver;
	struct te_barrier *b = NULL;
	char addr[TE_ADDR_MAX], ifname[TE_IFNAME_MAX], err[TE_RDZV_TEXT_MAX];
	char text[TE_RDZV_TEXT_MAX], msg[TE_MSG_MAX];
	const char *pattern = getenv("NCCL_SOCKET_IFNAME");
	char master[TE_ADDR_MAX + 8] = "";
	int barrier = o->barrier > 0 || o->ckpt, leader;
	unsigned timeout = o->barrier ? o->barrier : o->wait;

	leader = local_rank(p) == 0;
	if (!pattern || !*pattern)
		pattern = getenv("GLOO_SOCKET_IFNAME");
	if (te_node_address(pattern, addr, sizeof(addr), ifname, sizeof(ifname),
			    err, sizeof(err)) < 0) {
		fail(0, "node %s: no address for the rendezvous: %s", p->host,
		     err);
		return;
	}
	phase("address");
	probe_versions(o, &ver);
	phase("versions");
	if (te_versions_format(text, sizeof(text), &ver) < 0 ||
	    te_pmix_put(p, "te.ver", text, err, sizeof(err)) < 0 ||
	    te_pmix_put(p, "te.addr", addr, err, sizeof(err)) < 0) {
		fail(0, "rendezvous: %s", err[0] ? err : "bad version text");
		return;
	}
	if (p->me.rank == 0) {
		uint16_t port = te_port_pick(o->port_start, o->port_lo,
					     o->port_hi, 1000, port_free_cb,
					     NULL);

		if (!port) {
			fail(0, "no free port for MASTER_PORT in %u-%u on %s",
			     o->port_lo, o->port_hi, p->host);
			/* still commit and fence: the others must hear it */
		}
		te_snprintf(master, sizeof(master), "%s %u", addr,
			    (unsigned)port);
		if (te_pmix_put(p, "te.master", master, err, sizeof(err)) < 0)
			fail(0, "rendezvous: %s", err);
		if (o->ckpt)
			ckpt_write(p, o);
	}
	if (barrier) {
		struct te_barrier_opts bo = {
			.timeout_s = timeout, .collect = 1, .seq = 0,
			.tmpdir = getenv("PMIX_SERVER_TMPDIR"), .addr = addr,
		};

		b = te_barrier_prepare(p, &bo, err, sizeof(err));
		if (!b) {
			fail(0, "barrier: %s", err);
			/* without it the others wait for us until their
			 * deadline: fence anyway so they do not */
			if (te_pmix_commit(p, err, sizeof(err)) == 0)
				te_pmix_fence(p, 0, (int)timeout * 1000, err,
					      sizeof(err));
			return;
		}
		phase("barrier prepared");
		if (te_barrier_wait(b, msg, sizeof(msg)) < 0) {
			fail(0, "%s", msg);
			return;
		}
		phase("fence done");
		if (p->me.rank == 0)
			parse_master(master);
		else if (te_pmix_get(p, 0, "te.master", 1, text,
				     sizeof(text)) == 0)
			parse_master(text);
		if (o->vcheck != 2)
			check_versions_all(p, o);
		phase("versions compared");
		if (o->ckpt)
			ckpt_check(p, o, leader);
	} else {
		int timed_out;

		if (te_pmix_commit(p, err, sizeof(err)) < 0) {
			fail(0, "rendezvous: %s", err);
			return;
		}
		if (p->me.rank == 0) {
			parse_master(master);
		} else if (te_pmix_get_wait(p, 0, "te.master",
					    (int)timeout * 1000, text,
					    sizeof(text), &timed_out, err,
					    sizeof(err)) < 0) {
			char host0[TE_HOST_MAX];

			if (te_pmix_host_of(p, 0, host0, sizeof(host0)) < 0)
				te_strlcpy(host0, "?", sizeof(host0));
			fail(0, "rank 0 (node %s) did not publish "
			     "MASTER_ADDR/MASTER_PORT: %s", host0, err);
			return;
		} else {
			parse_master(text);
		}
		if (o->vcheck != 2)
			check_versions_rank0(p, o, leader, &ver);
	}
	if (!res.failed && (!res.master_addr[0] || !res.master_port))
		fail(0, "rank 0 published no usable MASTER_ADDR/MASTER_PORT");
	if (o->ifname && res.master_addr[0] &&
	    te_route_ifname(res.master_addr, res.ifname, sizeof(res.ifname),
			    err, sizeof(err)) < 0) {
		res.ifname[0] = '\0';
		if (leader)
			warn("socket-ifname: %s", err);
	}
	if (res.ifname[0] && !te_ifname_valid(res.ifname))
		res.ifname[0] = '\0';
}

int main(int argc, char **argv)
{
	struct te_pmix p;
	struct opts o;
	char err[TE_RDZV_TEXT_MAX];

	signal(SIGPIPE, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	profile = getenv("TRAINENV_RDZV_PROFILE") != NULL;
	if (parse_args(argc, argv, &o, err, sizeof(err)) < 0) {
		fail(0, "trainenv-rdzv: %s", err);
		return emit();
	}
	if (hooks_before_init(&o) < 0)
		return emit();
	phase("start");
	if (te_pmix_open(&p, err, sizeof(err)) < 0) {
		fail(0, "rendezvous: %s", err);
		return emit();
	}
	phase("PMIx_Init done");
	run(&p, &o);
	phase("run done");
	te_pmix_close(&p);
	phase("PMIx_Finalize done");
	/* the application's first fence must not meet a helper of this node
	 * still closing (see te_local_quiesce) */
	if (!res.failed && (o.barrier > 0 || o.ckpt))
		te_local_quiesce(&p, getenv("PMIX_SERVER_TMPDIR"), 0, 3000);
	phase("quiesced");
	return emit();
}
