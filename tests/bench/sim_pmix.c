/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A stand-in for libpmix.so.2 for the scale simulation (bench_scale.sh):
 * the few PMIx client calls trainenv's helpers make, over a table in
 * shared memory that the simulation's driver (bench_scale.c) creates.
 * Built as tests/bench/simpmix/.libs/libpmix.so.2 and picked up through
 * LD_LIBRARY_PATH (which the loader looks at before the helper's
 * RUNPATH), so the real trainenv-rdzv runs unchanged.
 *
 * Semantics kept: Put and Commit (one blob per rank, replaced whole at
 * each commit), direct modex (a Get of another rank's key waits until
 * that rank has committed it, within the caller's PMIX_TIMEOUT, else
 * TE_SIM_PMIX_WAIT_S), PMIX_IMMEDIATE, the job's facts Slurm gives
 * (sizes, local peers, host names n1..nN, node ids, local and node
 * ranks; block distribution: node i holds ranks i*P .. i*P+P-1), and the
 * non-blocking Get's callback from another thread. Not simulated: fences
 * (PMIx_Fence and PMIx_Fence_nb answer PMIX_ERR_NOT_SUPPORTED: in the
 * simulation only one process per node is a PMIx client, so no job-wide
 * fence could be honest), events, publish/lookup, spawn. Every call or key
 * it does not simulate is written to TE_SIM_LOG, so the benchmark can say
 * so instead of measuring something else.
 *
 * What it costs the helpers: a commit is a copy into shared memory and a
 * futex wake; a remote Get a copy out and a key search (microseconds),
 * where Slurm sends a direct-modex request over the network: that cost is
 * the model's (bench_scale_model.c), not the simulation's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

#include "sim_table.h"

static struct sim_table *tab;
static size_t tab_len;
static int inits;
static uint32_t my_rank, my_node;
static char my_nspace[PMIX_MAX_NSLEN + 1];
static int log_fd = -1;
static unsigned wait_s = 600;

/* this process's own puts (a rank's data before and after commit) */
#define OWN_MAX 64
static struct {
	char key[SIM_KEY_MAX + 1];
	uint16_t type;
	uint32_t len;
	unsigned char data[SIM_VAL_MAX];
} own[OWN_MAX];
static int nown;
static pthread_mutex_t own_mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((format(printf, 1, 2))) static void sim_log(const char *fmt, ...)
{
	char line[512];
	int n;
	va_list ap;

	if (log_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "rank %u: ", my_rank);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(log_fd, line, (size_t)n) < 0) {
		/* nothing to do: the log is an aid */
	}
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- values */

static size_t type_size(pmix_data_type_t t)
{
	switch (t) {
	case PMIX_BOOL:
		return sizeof(bool);
	case PMIX_INT:
		return sizeof(int);
	case PMIX_UINT16:
		return sizeof(uint16_t);
	case PMIX_UINT32:
		return sizeof(uint32_t);
	case PMIX_UINT64:
		return sizeof(uint64_t);
	case PMIX_INT32:
		return sizeof(int32_t);
	case PMIX_SIZE:
		return sizeof(size_t);
	default:
		return 0;
	}
}

/* data of type t into v (a string is copied) */
static pmix_status_t value_load(pmix_value_t *v, const void *data,
				pmix_data_type_t t, size_t len)
{
	memset(v, 0, sizeof(*v));
	v->type = t;
	if (t == PMIX_STRING) {
		v->data.string = malloc(len + 1);
		if (!v->data.string)
			return PMIX_ERR_NOMEM;
		memcpy(v->data.string, data, len);
		v->data.string[len] = '\0';
		return PMIX_SUCCESS;
	}
	if (!type_size(t) || len != type_size(t))
		return PMIX_ERR_NOT_SUPPORTED;
	memcpy(&v->data, data, len);
	return PMIX_SUCCESS;
}

static pmix_value_t *value_new(const void *data, pmix_data_type_t t, size_t len)
{
	pmix_value_t *v = malloc(sizeof(*v));

	if (v && value_load(v, data, t, len) != PMIX_SUCCESS) {
		free(v);
		return NULL;
	}
	return v;
}

void PMIx_Value_destruct(pmix_value_t *val)
{
	if (val && val->type == PMIX_STRING)
		free(val->data.string);
	if (val)
		memset(val, 0, sizeof(*val));
}

pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data,
			      pmix_data_type_t type)
{
	return value_load(val, data, type,
			  type == PMIX_STRING ? strlen(data) : type_size(type));
}

pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key,
			     const void *data, pmix_data_type_t type)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->key, sizeof(info->key), "%s", key);
	return PMIx_Value_load(&info->value, data, type);
}

#if PMIX_VERSION_MAJOR >= 5
/* OpenPMIx 5 made these functions (PMIX_LOAD_PROCID, PMIX_VALUE_RELEASE,
 * PMIX_VALUE_FREE and PMIX_INFO_DESTRUCT call them): a helper built
 * against it imports them; 4.x's macros did the work inline. */
void PMIx_Load_procid(pmix_proc_t *p, const char *ns, pmix_rank_t rk)
{
	memset(p, 0, sizeof(*p));
	if (ns)
		snprintf(p->nspace, sizeof(p->nspace), "%s", ns);
	p->rank = rk;
}

void PMIx_Value_free(pmix_value_t *v, size_t n)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		PMIx_Value_destruct(&v[i]);
	free(v);
}

void PMIx_Info_destruct(pmix_info_t *p)
{
	if (p)
		PMIx_Value_destruct(&p->value);
}
#endif

const char *PMIx_Error_string(pmix_status_t st)
{
	switch (st) {
	case PMIX_SUCCESS:
		return "SUCCESS";
	case PMIX_ERR_NOT_FOUND:
		return "NOT-FOUND";
	case PMIX_ERR_TIMEOUT:
		return "TIMEOUT";
	case PMIX_ERR_INIT:
		return "INIT";
	case PMIX_ERR_NOMEM:
		return "OUT-OF-MEMORY";
	case PMIX_ERR_BAD_PARAM:
		return "BAD-PARAM";
	case PMIX_ERR_NOT_SUPPORTED:
		return "NOT-SUPPORTED (simulated PMIx)";
	case PMIX_ERR_OUT_OF_RESOURCE:
		return "OUT-OF-RESOURCE";
	default:
		return "ERROR (simulated PMIx)";
	}
}

/* ---------------------------------------------------------------- session */

pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
	const char *path = getenv("TE_SIM_PMIX"), *r = getenv("PMIX_RANK");
	const char *ns = getenv("PMIX_NAMESPACE"), *lg = getenv("TE_SIM_LOG");
	const char *w = getenv("TE_SIM_PMIX_WAIT_S");
	struct stat st;
	char *end;
	unsigned long rank;
	int fd;

	(void)info;
	(void)ninfo;
	if (inits++ > 0)
		goto out;
	if (lg && log_fd < 0)
		log_fd = open(lg, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			      0600);
	if (w)
		wait_s = (unsigned)strtoul(w, NULL, 10);
	if (!path || !r || !ns || strlen(ns) > PMIX_MAX_NSLEN)
		goto bad;
	errno = 0;
	rank = strtoul(r, &end, 10);
	if (errno || *end || end == r)
		goto bad;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 ||
	    (size_t)st.st_size < sizeof(struct sim_table)) {
		if (fd >= 0)
			close(fd);
		goto bad;
	}
	tab_len = (size_t)st.st_size;
	tab = mmap(NULL, tab_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (tab == MAP_FAILED || tab->magic != SIM_MAGIC ||
	    rank >= (unsigned long)tab->nodes * tab->ppn ||
	    tab_len < sim_table_size(tab->nodes * tab->ppn)) {
		tab = NULL;
		goto bad;
	}
	my_rank = (uint32_t)rank;
	my_node = my_rank / tab->ppn;
	snprintf(my_nspace, sizeof(my_nspace), "%s", ns);
out:
	if (proc) {
		PMIX_LOAD_PROCID(proc, my_nspace, my_rank);
	}
	return PMIX_SUCCESS;
bad:
	inits = 0;
	sim_log("PMIx_Init: no simulation table (TE_SIM_PMIX, PMIX_RANK, "
		"PMIX_NAMESPACE)");
	return PMIX_ERR_INIT;
}

int PMIx_Initialized(void)
{
	return inits > 0;
}

pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo)
{
	(void)info;
	(void)ninfo;
	if (inits > 0)
		inits--;
	/* the table stays mapped: a Get_nb thread may still read it */
	return PMIX_SUCCESS;
}

pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[],
			 size_t nprocs)
{
	(void)procs;
	(void)nprocs;
	sim_log("PMIx_Abort(%d): %s", status, msg ? msg : "");
	_exit(status ? status : 1);
}

/* ---------------------------------------------------------------- put */

pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val)
{
	const void *data;
	size_t len, klen = strlen(key);
	int i;

	(void)scope;
	if (!tab)
		return PMIX_ERR_INIT;
	if (val->type == PMIX_STRING) {
		data = val->data.string ? val->data.string : "";
		len = strlen(data);
	} else {
		data = &val->data;
		len = type_size(val->type);
		if (!len) {
			sim_log("PMIx_Put(%s): type %u not simulated", key,
				(unsigned)val->type);
			return PMIX_ERR_NOT_SUPPORTED;
		}
	}
	if (klen > SIM_KEY_MAX || len > SIM_VAL_MAX) {
		sim_log("PMIx_Put(%s): too long for the simulation", key);
		return PMIX_ERR_BAD_PARAM;
	}
	pthread_mutex_lock(&own_mu);
	for (i = 0; i < nown && strcmp(own[i].key, key); i++)
		;
	if (i == OWN_MAX) {
		pthread_mutex_unlock(&own_mu);
		sim_log("PMIx_Put(%s): more than %d keys", key, OWN_MAX);
		return PMIX_ERR_OUT_OF_RESOURCE;
	}
	memcpy(own[i].key, key, klen + 1);
	own[i].type = (uint16_t)val->type;
	own[i].len = (uint32_t)len;
	memcpy(own[i].data, data, len);
	if (i == nown)
		nown++;
	pthread_mutex_unlock(&own_mu);
	return PMIX_SUCCESS;
}

static long futex(atomic_uint *addr, int op, unsigned val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

/* The rank's blob, replaced whole (a sequence lock: odd while writing). */
pmix_status_t PMIx_Commit(void)
{
	struct sim_slot *s;
	unsigned char blob[SIM_BLOB_MAX];
	size_t off = 0;
	int i;

	if (!tab)
		return PMIX_ERR_INIT;
	pthread_mutex_lock(&own_mu);
	for (i = 0; i < nown; i++) {
		size_t kl = strlen(own[i].key);

		if (off + sim_entry_size(kl, own[i].len) > sizeof(blob)) {
			pthread_mutex_unlock(&own_mu);
			sim_log("PMIx_Commit: over %d bytes", SIM_BLOB_MAX);
			return PMIX_ERR_OUT_OF_RESOURCE;
		}
		off += sim_entry_put(blob + off, own[i].key, kl, own[i].type,
				     own[i].data, own[i].len);
	}
	pthread_mutex_unlock(&own_mu);
	s = sim_slot(tab, my_rank);
	atomic_fetch_add_explicit(&s->seq, 1, memory_order_acq_rel);
	memcpy(s->blob, blob, off);
	s->len = (uint32_t)off;
	atomic_fetch_add_explicit(&s->seq, 1, memory_order_acq_rel);
	futex(&s->seq, FUTEX_WAKE, INT_MAX, NULL);
	return PMIX_SUCCESS;
}

/* ---------------------------------------------------------------- get */

/* A rank's committed key: the value, NULL when absent. *seq: the blob's
 * version looked at (even). */
static pmix_value_t *committed_get(uint32_t rank, const char *key,
				   unsigned *seq)
{
	struct sim_slot *s = sim_slot(tab, rank);
	unsigned char blob[SIM_BLOB_MAX];
	unsigned a, b;
	uint32_t len;

	for (;;) {
		a = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (a & 1) {
			sched_yield();
			continue;
		}
		len = s->len;
		if (len > SIM_BLOB_MAX)
			len = 0;
		memcpy(blob, s->blob, len);
		atomic_thread_fence(memory_order_acquire);
		b = atomic_load_explicit(&s->seq, memory_order_relaxed);
		if (a == b)
			break;
	}
	*seq = a;
	{
		const void *data;
		uint16_t type;
		uint32_t dl;

		if (sim_blob_find(blob, len, key, &type, &data, &dl) < 0)
			return NULL;
		return value_new(data, type, dl);
	}
}

static pmix_value_t *own_get(const char *key)
{
	pmix_value_t *v = NULL;
	int i;

	pthread_mutex_lock(&own_mu);
	for (i = 0; i < nown; i++)
		if (!strcmp(own[i].key, key)) {
			v = value_new(own[i].data, own[i].type, own[i].len);
			break;
		}
	pthread_mutex_unlock(&own_mu);
	return v;
}

static pmix_value_t *u32(uint32_t x)
{
	return value_new(&x, PMIX_UINT32, 4);
}
static pmix_value_t *u16(uint16_t x)
{
	return value_new(&x, PMIX_UINT16, 2);
}
static pmix_value_t *str(const char *s)
{
	return value_new(s, PMIX_STRING, strlen(s));
}

/* The job's facts, as Slurm's mpi/pmix gives them (pmixp_client.c). 1:
 * a job key (*v set, NULL for out of memory), 0: not one. */
static int job_get(uint32_t rank, int wild, const char *key, pmix_value_t **v)
{
	uint32_t P = tab->ppn, node = wild ? my_node : rank / P;
	char buf[32];

	if (!strcmp(key, PMIX_JOB_SIZE) || !strcmp(key, PMIX_UNIV_SIZE) ||
	    !strcmp(key, PMIX_MAX_PROCS))
		*v = u32(tab->nodes * P);
	else if (!strcmp(key, PMIX_LOCAL_SIZE) || !strcmp(key, PMIX_NODE_SIZE))
		*v = u32(P);
	else if (!strcmp(key, PMIX_NUM_NODES))
		*v = u32(tab->nodes);
	else if (!strcmp(key, PMIX_LOCALLDR))
		*v = u32(node * P);
	else if (!strcmp(key, PMIX_JOBID))
		*v = str(my_nspace);
	else if (!strcmp(key, PMIX_APPNUM)) {
		int zero = 0;

		*v = value_new(&zero, PMIX_INT, sizeof(zero));
	} else if (!strcmp(key, PMIX_LOCAL_PEERS)) {
		char list[SIM_PEERS_MAX];
		size_t off = 0;
		uint32_t i;

		list[0] = '\0';
		for (i = 0; i < P && off < sizeof(list) - 12; i++)
			off += (size_t)snprintf(list + off, sizeof(list) - off,
						"%s%u", i ? "," : "",
						node * P + i);
		*v = str(list);
	} else if (!strcmp(key, PMIX_HOSTNAME)) {
		snprintf(buf, sizeof(buf), SIM_HOST_FMT, node + 1);
		*v = str(buf);
	} else if (!strcmp(key, PMIX_ANL_MAP) && wild) {
		/* Slurm's process map of a block layout (pmixp_info.c) */
		char map[64];

		snprintf(map, sizeof(map), "(vector,(0,%u,%u))", tab->nodes, P);
		*v = str(map);
	} else if (!strcmp(key, PMIX_NODEID)) {
		*v = u32(node);
	} else if (!strcmp(key, PMIX_LOCAL_RANK) ||
		   !strcmp(key, PMIX_NODE_RANK)) {
		*v = u16((uint16_t)((wild ? my_rank : rank) % P));
	} else if (!strcmp(key, PMIX_RANK) || !strcmp(key, PMIX_GLOBAL_RANK) ||
		   !strcmp(key, PMIX_APP_RANK)) {
		*v = u32(wild ? my_rank : rank);
	} else {
		return 0;
	}
	return 1;
}

struct get_req {
	uint32_t rank;
	int wild, immediate;
	unsigned timeout_s;
	char key[PMIX_MAX_KEYLEN + 1];
};

static pmix_status_t get_req_init(struct get_req *g, const pmix_proc_t *proc,
				  const char *key, const pmix_info_t info[],
				  size_t ninfo)
{
	size_t i;

	if (!tab)
		return PMIX_ERR_INIT;
	if (!proc || !key || strlen(key) > PMIX_MAX_KEYLEN)
		return PMIX_ERR_BAD_PARAM;
	if (strcmp(proc->nspace, my_nspace)) {
		sim_log("PMIx_Get(%s): another namespace, not simulated", key);
		return PMIX_ERR_NOT_FOUND;
	}
	memset(g, 0, sizeof(*g));
	g->wild = proc->rank == PMIX_RANK_WILDCARD;
	g->rank = g->wild ? my_rank : proc->rank;
	g->timeout_s = wait_s;
	snprintf(g->key, sizeof(g->key), "%s", key);
	if (!g->wild && g->rank >= tab->nodes * tab->ppn)
		return PMIX_ERR_BAD_PARAM;
	for (i = 0; info && i < ninfo; i++) {
		if (!strcmp(info[i].key, PMIX_IMMEDIATE))
			g->immediate = info[i].value.type != PMIX_BOOL ||
				       info[i].value.data.flag;
		else if (!strcmp(info[i].key, PMIX_TIMEOUT) &&
			 info[i].value.type == PMIX_INT &&
			 info[i].value.data.integer > 0)
			g->timeout_s = (unsigned)info[i].value.data.integer;
		else if (strcmp(info[i].key, PMIX_GET_REFRESH_CACHE) &&
			 strcmp(info[i].key, PMIX_OPTIONAL))
			sim_log("PMIx_Get(%s): info %s ignored", key,
				info[i].key);
	}
	return PMIX_SUCCESS;
}

/* The first successful fetch of a remote rank's data by this helper is a
 * direct modex its node serves (counted in its slot); later ones read this
 * node's copy. A helper fetches a few ranks: the first 16 are counted. */
static void count_fetch(struct sim_slot *s, uint32_t rank)
{
	static uint32_t seen[16];
	static unsigned nseen;
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	unsigned i;

	pthread_mutex_lock(&mu);
	for (i = 0; i < nseen && seen[i] != rank; i++)
		;
	if (i == nseen && nseen < 16) { /* more is not a helper's way */
		seen[nseen++] = rank;
		atomic_fetch_add(&s->served, 1);
	}
	pthread_mutex_unlock(&mu);
}

/* What a Get answers, waiting for a remote rank's commit (direct modex)
 * until the request's deadline. */
static pmix_status_t get_run(const struct get_req *g, pmix_value_t **val)
{
	int64_t deadline = now_ms() + (int64_t)g->timeout_s * 1000;
	struct sim_slot *s;
	unsigned seq;

	*val = NULL;
	if (job_get(g->rank, g->wild, g->key, val))
		return *val ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
	if (!strncmp(g->key, "pmix.", 5)) {
		sim_log("PMIx_Get(%s): a PMIx key not simulated", g->key);
		return PMIX_ERR_NOT_FOUND;
	}
	if (g->rank == my_rank) {
		*val = own_get(g->key);
		return *val ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
	}
	s = sim_slot(tab, g->rank);
	for (;;) {
		struct timespec ts;
		int64_t left;

		*val = committed_get(g->rank, g->key, &seq);
		if (*val) {
			count_fetch(s, g->rank);
			return PMIX_SUCCESS;
		}
		if (g->immediate)
			return PMIX_ERR_NOT_FOUND;
		left = deadline - now_ms();
		if (left <= 0)
			return PMIX_ERR_TIMEOUT;
		if (left > 1000)
			left = 1000; /* look again now and then */
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (long)(left % 1000) * 1000000L;
		futex(&s->seq, FUTEX_WAIT, seq, &ts);
	}
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[],
		       const pmix_info_t info[], size_t ninfo,
		       pmix_value_t **val)
{
	struct get_req g;
	pmix_status_t rc = get_req_init(&g, proc, key, info, ninfo);

	*val = NULL;
	return rc == PMIX_SUCCESS ? get_run(&g, val) : rc;
}

struct get_nb {
	struct get_req g;
	pmix_value_cbfunc_t cb;
	void *cbdata;
};

static void *get_thread(void *arg)
{
	struct get_nb *n = arg;
	pmix_value_t *v = NULL;
	pmix_status_t rc = get_run(&n->g, &v);

	n->cb(rc, v, n->cbdata); /* the callback owns v */
	free(n);
	return NULL;
}

/* The answer always comes from another thread, as from PMIx's progress
 * thread: a short-lived one per call (a thread per process for the whole
 * run would double the tasks of a 16,384-node simulation). */
pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[],
			  const pmix_info_t info[], size_t ninfo,
			  pmix_value_cbfunc_t cbfunc, void *cbdata)
{
	struct get_nb *n = malloc(sizeof(*n));
	pthread_attr_t attr;
	pthread_t th;
	pmix_status_t rc;
	int e;

	if (!n)
		return PMIX_ERR_NOMEM;
	rc = get_req_init(&n->g, proc, key, info, ninfo);
	if (rc != PMIX_SUCCESS || !cbfunc) {
		free(n);
		return rc != PMIX_SUCCESS ? rc : PMIX_ERR_BAD_PARAM;
	}
	n->cb = cbfunc;
	n->cbdata = cbdata;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&th, &attr, get_thread, n);
	pthread_attr_destroy(&attr);
	if (e) {
		sim_log("PMIx_Get_nb(%s): no thread: %s", key, strerror(e));
		free(n);
		return PMIX_ERR_OUT_OF_RESOURCE;
	}
	return PMIX_SUCCESS;
}

/* ---------------------------------------------------------------- fence */

pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
			 const pmix_info_t info[], size_t ninfo)
{
	(void)procs;
	(void)nprocs;
	(void)info;
	(void)ninfo;
	sim_log("PMIx_Fence: not simulated");
	return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
			    const pmix_info_t info[], size_t ninfo,
			    pmix_op_cbfunc_t cbfunc, void *cbdata)
{
	(void)procs;
	(void)nprocs;
	(void)info;
	(void)ninfo;
	(void)cbfunc;
	(void)cbdata;
	sim_log("PMIx_Fence_nb: not simulated");
	return PMIX_ERR_NOT_SUPPORTED;
}
