/* bind: GPU/NUMA mapping of local ranks (policy documented in bind.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bind.h"
#include "cpulist.h"

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_BASE_CLASS_DISPLAY 0x03

/* ------------------------------------------------------------------ names */

int te_bind_mode_parse(const char *s, enum te_bind_mode *out)
{
	if (!s || !out)
		return -1;
	if (!strcmp(s, "none"))
		*out = TE_BIND_MODE_NONE;
	else if (!strcmp(s, "numa"))
		*out = TE_BIND_MODE_NUMA;
	else if (!strcmp(s, "cores"))
		*out = TE_BIND_MODE_CORES;
	else
		return -1;
	return 0;
}

int te_bind_smt_parse(const char *s, enum te_bind_smt *out)
{
	if (!s || !out)
		return -1;
	if (!strcmp(s, "all"))
		*out = TE_BIND_SMT_ALL;
	else if (!strcmp(s, "one"))
		*out = TE_BIND_SMT_ONE;
	else
		return -1;
	return 0;
}

const char *te_bind_mode_name(enum te_bind_mode m)
{
	switch (m) {
	case TE_BIND_MODE_NONE: return "none";
	case TE_BIND_MODE_NUMA: return "numa";
	case TE_BIND_MODE_CORES: return "cores";
	}
	return "?";
}

const char *te_bind_smt_name(enum te_bind_smt s)
{
	switch (s) {
	case TE_BIND_SMT_ALL: return "all";
	case TE_BIND_SMT_ONE: return "one";
	}
	return "?";
}

/* ------------------------------------------------------------------ notes */

/* Appends to a note, "; "-separated; a note that no longer fits ends with
 * "..." rather than being cut mid-word silently. */
__attribute__((format(printf, 3, 4)))
static void note_add(char *note, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(note, len);
	va_list ap;
	int w;

	if (len == 0 || used + 1 >= len)
		return;
	if (used) {
		w = snprintf(note + used, len - used, "; ");
		if (w < 0 || (size_t)w >= len - used)
			goto full;
		used += (size_t)w;
	}
	va_start(ap, fmt);
	w = vsnprintf(note + used, len - used, fmt, ap);
	va_end(ap);
	if (w >= 0 && (size_t)w < len - used)
		return;
full:
	if (len >= 4)
		memcpy(note + len - 4, "...", 4);
}

int te_bind_format_set(hwloc_const_bitmap_t set, char *buf, size_t buflen)
{
	int w;

	if (!buf || buflen == 0)
		return -1;
	buf[0] = '\0';
	if (!set || hwloc_bitmap_weight(set) < 0)
		return -1;
	w = hwloc_bitmap_list_snprintf(buf, buflen, set);
	if (w < 0 || (size_t)w >= buflen) {
		buf[0] = '\0';
		return -1;
	}
	return w;
}

/* For messages only: a set as text, "..." when long. */
static const char *set_str(hwloc_const_bitmap_t set, char *buf, size_t len)
{
	if (te_bind_format_set(set, buf, len) < 0 && len >= 4) {
		hwloc_bitmap_list_snprintf(buf, len, set);
		memcpy(buf + len - 4, "...", 4);
	}
	return buf;
}

/* ------------------------------------------------------------------ topology */

static int topology_load(const char *xml_path, int xml_fd, int this_system,
			 hwloc_topology_t *out, char *err, size_t errlen);

int te_bind_topology_load(const char *xml_path, hwloc_topology_t *out,
			  char *err, size_t errlen)
{
	return topology_load(xml_path, -1, 0, out, err, errlen);
}

int te_bind_topology_load_local_xml(const char *xml_path,
				    hwloc_topology_t *out, char *err,
				    size_t errlen)
{
	return topology_load(xml_path, -1, 1, out, err, errlen);
}

int te_bind_topology_load_local_fd(int fd, const char *name,
				   hwloc_topology_t *out, char *err,
				   size_t errlen)
{
	if (fd < 0) {
		snprintf(err, errlen, "internal error: no topology descriptor");
		return -1;
	}
	return topology_load(name, fd, 1, out, err, errlen);
}

/* An XML export of at most this size is read (a large machine's export
 * with every I/O device is a few MB). */
#define TE_TOPOLOGY_XML_MAX (64L * 1024 * 1024)

/* Reads the XML file into a NUL-terminated buffer. The file is opened
 * without blocking and must be a regular file: hwloc's own reader would
 * wait forever on a FIFO, and slurmstepd (root, before the tasks start)
 * with it. */
static char *read_xml(const char *path, int given_fd, size_t *len,
		      char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd = given_fd;

	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "cannot read topology file %s: %s", path,
			 strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot read topology file %s: %s", path,
			 strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "cannot read topology file %s: %s", path,
			 strerror(EISDIR));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "cannot read topology file %s: not a "
			 "regular file", path);
		goto out;
	}
	if (st.st_size > TE_TOPOLOGY_XML_MAX) {
		snprintf(err, errlen, "cannot read topology file %s: %lld "
			 "bytes, larger than %ld", path, (long long)st.st_size,
			 TE_TOPOLOGY_XML_MAX);
		goto out;
	}
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		snprintf(err, errlen, "cannot read topology file %s: out of "
			 "memory", path);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "cannot read topology file %s: "
				 "%s", path, strerror(errno));
			free(buf);
			buf = NULL;
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
out:
	if (fd != given_fd)
		close(fd);
	return buf;
}

static int topology_load(const char *xml_path, int xml_fd, int this_system,
			 hwloc_topology_t *out, char *err, size_t errlen)
{
	hwloc_topology_t topo;
	char *xml = NULL;
	size_t xml_len = 0;
	unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;

	if (!out) {
		snprintf(err, errlen, "internal error: no output topology");
		return -1;
	}
	*out = NULL;
	if (xml_path && (!*xml_path || strnlen(xml_path, PATH_MAX) >= PATH_MAX)) {
		snprintf(err, errlen, "topology file name is empty or longer "
			 "than %d characters", PATH_MAX - 1);
		return -1;
	}
	if (hwloc_topology_init(&topo)) {
		snprintf(err, errlen, "cannot initialise hwloc: %s",
			 strerror(errno));
		return -1;
	}
	/* Disallowed CPUs stay in the tree so that a step confined by its
	 * cgroup still sees where its GPUs really are; te_bind_compute()
	 * applies the allowed set itself. */
	/* An export of this very machine (tests add fake GPUs to one) may be
	 * applied: hwloc then binds for real. */
	if (xml_path && this_system)
		flags |= HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM;
	if (hwloc_topology_set_flags(topo, flags) ||
	    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) ||
	    hwloc_topology_set_cache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE) ||
	    hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE)) {
		snprintf(err, errlen, "cannot configure hwloc: %s",
			 strerror(errno));
		goto fail;
	}
	if (!xml_path) {
		/* Inside slurmstepd (root), hwloc's "gl" component would try
		 * to open X11 displays and "opencl" would load every vendor's
		 * OpenCL driver; their OS devices are not needed. "pci" reads
		 * config space through libpciaccess (which leaks in
		 * pci_get_strings): the Linux backend finds the same devices,
		 * ids, classes and locality in sysfs. A component this hwloc
		 * was built without answers EINVAL: nothing to do then. */
		static const char *const unwanted[] = { "gl", "opencl", "pci" };
		size_t i;

		for (i = 0; i < sizeof(unwanted) / sizeof(unwanted[0]); i++)
			(void)hwloc_topology_set_components(topo,
				HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
				unwanted[i]);
	}
	if (xml_path &&
	    !(xml = read_xml(xml_path, xml_fd, &xml_len, err, errlen)))
		goto fail;
	/* the size hwloc wants counts the final NUL */
	if (xml && (xml_len >= INT_MAX ||
		    hwloc_topology_set_xmlbuffer(topo, xml, (int)xml_len + 1))) {
		snprintf(err, errlen, "cannot read topology file %s: %s",
			 xml_path, strerror(errno));
		goto fail;
	}
	if (hwloc_topology_load(topo)) {
		if (xml_path)
			snprintf(err, errlen, "cannot load topology file %s "
				 "(not an hwloc XML export?): %s", xml_path,
				 strerror(errno));
		else
			snprintf(err, errlen, "cannot discover this machine's "
				 "topology with hwloc: %s", strerror(errno));
		goto fail;
	}
	free(xml);
	*out = topo;
	return 0;
fail:
	free(xml);
	hwloc_topology_destroy(topo);
	return -1;
}

/* ------------------------------------------------------------------ GPUs */

static int is_compute_gpu(const struct hwloc_obj *o)
{
	const struct hwloc_pcidev_attr_s *p = &o->attr->pcidev;

	return p->vendor_id == PCI_VENDOR_NVIDIA &&
	       (p->class_id >> 8) == PCI_BASE_CLASS_DISPLAY;
}

static int pci_cmp(const void *a, const void *b)
{
	const struct hwloc_pcidev_attr_s *x = &((const struct te_bind_gpu *)a)->pcidev->attr->pcidev;
	const struct hwloc_pcidev_attr_s *y = &((const struct te_bind_gpu *)b)->pcidev->attr->pcidev;

	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->bus != y->bus)
		return x->bus < y->bus ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return 0;
}

int te_bind_gpus(hwloc_topology_t topo, struct te_bind_gpus *out,
		 char *err, size_t errlen)
{
	hwloc_obj_t o = NULL;
	size_t n = 0, i;

	if (!topo || !out) {
		snprintf(err, errlen, "internal error: no topology");
		return -1;
	}
	out->n = 0;
	out->gpu = NULL;
	while ((o = hwloc_get_next_pcidev(topo, o)))
		if (is_compute_gpu(o))
			n++;
	if (n > TE_BIND_MAX_GPUS) {
		snprintf(err, errlen, "this node has %zu GPUs, more than the "
			 "%d trainenv handles", n, TE_BIND_MAX_GPUS);
		return -1;
	}
	if (n == 0)
		return 0;
	out->gpu = calloc(n, sizeof(*out->gpu));
	if (!out->gpu) {
		snprintf(err, errlen, "out of memory listing %zu GPUs", n);
		return -1;
	}
	i = 0;
	while ((o = hwloc_get_next_pcidev(topo, o)) && i < n) {
		struct te_bind_gpu *g;

		if (!is_compute_gpu(o))
			continue;
		g = &out->gpu[i++];
		g->pcidev = o;
		g->vendor_id = o->attr->pcidev.vendor_id;
		g->device_id = o->attr->pcidev.device_id;
		g->class_id = o->attr->pcidev.class_id;
		g->locality = hwloc_get_non_io_ancestor_obj(topo, o);
		if (!g->locality)
			g->locality = hwloc_get_root_obj(topo);
		g->cpuset = g->locality->cpuset;
		g->nodeset = g->locality->nodeset;
		snprintf(g->busid, sizeof(g->busid), "%04x:%02x:%02x.%x",
			 (unsigned)o->attr->pcidev.domain,
			 (unsigned)o->attr->pcidev.bus,
			 (unsigned)o->attr->pcidev.dev,
			 (unsigned)o->attr->pcidev.func);
	}
	out->n = i;
	qsort(out->gpu, out->n, sizeof(*out->gpu), pci_cmp);
	return 0;
}

void te_bind_gpus_free(struct te_bind_gpus *gpus)
{
	if (!gpus)
		return;
	free(gpus->gpu);
	gpus->gpu = NULL;
	gpus->n = 0;
}

/* ------------------------------------------------------------------ env */

/* Copies an env value for a message: bounded, printable ASCII only. */
static const char *safe_str(const char *s, char *buf, size_t len)
{
	size_t i, o = 0;

	if (len == 0)
		return "";
	for (i = 0; s[i] && o + 1 < len; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	if (s[i] && len >= 4) {
		o = o > len - 4 ? len - 4 : o;
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

/* Env values are parsed with this bound: a list of 256 indexes below 10000
 * fits with room to spare; longer is hostile. */
#define ENV_LIST_MAXLEN 4096

static int parse_env_list(const char *name, const char *val, unsigned *idx,
			  size_t cap, size_t *n, char *err, size_t errlen)
{
	char why[160];

	if (te_cpulist_parse(val, ENV_LIST_MAXLEN, TE_CPULIST_INDEX_LIMIT, idx,
			     cap, n, why, sizeof(why))) {
		snprintf(err, errlen, "%s is not a list of GPU indexes: %s",
			 name, why);
		return -1;
	}
	return 0;
}

int te_bind_gpus_from_env(const struct te_bind_gpu_env *env, size_t node_gpus,
			  unsigned *idx, size_t cap, size_t *n,
			  char *note, size_t notelen, char *err, size_t errlen)
{
	const char *cvd, *ssg, *sjg;
	size_t ncvd = 0, i;
	unsigned *tmp = NULL;
	char sbuf[48];

	if (!env || !n || !note || notelen == 0 || (!idx && cap)) {
		snprintf(err, errlen, "internal error: bad arguments");
		return -1;
	}
	*n = 0;
	note[0] = '\0';
	cvd = env->cuda_visible_devices;
	ssg = env->slurm_step_gpus;
	sjg = env->slurm_job_gpus;

	if (cvd) {
		char why[160];

		/* The parser is run for the count and to refuse UUIDs and MIG
		 * instances even when a Slurm list will give the indexes:
		 * those indexes then count MIG slices, not PCI functions. */
		tmp = calloc(TE_BIND_MAX_GPUS, sizeof(*tmp));
		if (!tmp) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (te_cpulist_parse(cvd, ENV_LIST_MAXLEN, TE_CPULIST_INDEX_LIMIT,
				     tmp, TE_BIND_MAX_GPUS, &ncvd, why,
				     sizeof(why))) {
			if (strstr(cvd, "MIG-") || strstr(cvd, "GPU-"))
				snprintf(err, errlen, "CUDA_VISIBLE_DEVICES "
					 "names GPUs by UUID or MIG instance "
					 "(%s): binding needs whole GPUs "
					 "named by index",
					 safe_str(cvd, sbuf, sizeof(sbuf)));
			else
				snprintf(err, errlen, "CUDA_VISIBLE_DEVICES=%s "
					 "is not a list of GPU indexes: %s",
					 safe_str(cvd, sbuf, sizeof(sbuf)), why);
			free(tmp);
			return -1;
		}
		if (ncvd == 0) {
			snprintf(note, notelen, "CUDA_VISIBLE_DEVICES is empty: "
				 "no GPU");
			free(tmp);
			return 0;
		}
	}

	if (ssg || (sjg && cvd)) {
		const char *name = ssg ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS";

		if (parse_env_list(name, ssg ? ssg : sjg, idx, cap, n, err,
				   errlen)) {
			free(tmp);
			return -1;
		}
		if (!ssg)
			note_add(note, notelen, "GPUs from SLURM_JOB_GPUS "
				 "(batch step)");
		if (cvd && ncvd != *n)
			note_add(note, notelen, "CUDA_VISIBLE_DEVICES lists %zu "
				 "GPU%s, %s %zu: using %s", ncvd,
				 ncvd == 1 ? "" : "s", name, *n, name);
		free(tmp);
		return 0;
	}

	if (cvd) {
		if (ncvd > cap) {
			snprintf(err, errlen, "CUDA_VISIBLE_DEVICES lists more "
				 "than %zu GPUs", cap);
			free(tmp);
			return -1;
		}
		memcpy(idx, tmp, ncvd * sizeof(*idx));
		*n = ncvd;
		snprintf(note, notelen, "no SLURM_STEP_GPUS: "
			 "CUDA_VISIBLE_DEVICES taken as node-wide PCI-order "
			 "GPU indexes");
		free(tmp);
		return 0;
	}

	if (env->in_slurm) {
		snprintf(note, notelen, "no GPU allocated to this step");
		return 0;
	}
	if (node_gpus > cap) {
		snprintf(err, errlen, "this node has %zu GPUs, more than %zu",
			 node_gpus, cap);
		return -1;
	}
	for (i = 0; i < node_gpus; i++)
		idx[i] = (unsigned)i;
	*n = node_gpus;
	if (node_gpus)
		snprintf(note, notelen, "no GPU variable set outside Slurm: "
			 "all %zu GPU%s of the node", node_gpus,
			 node_gpus == 1 ? "" : "s");
	return 0;
}

/* ------------------------------------------------------------------ compute */

/* A set of CPUs that one or more ranks are placed in, before any split. */
struct domain {
	hwloc_bitmap_t cpus;	/* already intersected with the allowed CPUs */
	char note[TE_BIND_NOTE_LEN];
	size_t group;		/* union-find parent, then group id */
};

static size_t find_root(struct domain *d, size_t i)
{
	while (d[i].group != i) {
		d[i].group = d[d[i].group].group;
		i = d[i].group;
	}
	return i;
}

/* Blocked distribution of `items` things over `bins` bins (items >= bins):
 * the first items % bins bins get one more. Returns the bin of item i. */
static size_t block_of(size_t i, size_t items, size_t bins)
{
	size_t q = items / bins, m = items % bins;

	if (i < m * (q + 1))
		return i / (q + 1);
	return m + (i - m * (q + 1)) / q;
}

static void obj_name(const struct hwloc_obj *o, char *buf, size_t len)
{
	if (o->os_index != HWLOC_UNKNOWN_INDEX && o->type != HWLOC_OBJ_GROUP)
		snprintf(buf, len, "%s P#%u", hwloc_obj_type_string(o->type),
			 o->os_index);
	else
		snprintf(buf, len, "%s L#%u", hwloc_obj_type_string(o->type),
			 o->logical_index);
}

/* Domain of a GPU: its locality intersected with the allowed CPUs, or of
 * the nearest ancestor with allowed CPUs (see CPU DOMAIN in bind.h). */
static int gpu_domain(hwloc_topology_t topo, const struct te_bind_gpu *g,
		      hwloc_const_cpuset_t allowed, struct domain *d)
{
	hwloc_obj_t o = g->locality;
	hwloc_bitmap_t numa_cpus = hwloc_bitmap_alloc();
	char name[64];
	unsigned i;

	if (!numa_cpus)
		return -1;
	if (o == hwloc_get_root_obj(topo)) {
		note_add(d->note, sizeof(d->note), "GPU %s has no NUMA "
			 "locality: using the whole machine", g->busid);
	} else {
		/* Is the locality smaller than its NUMA node(s)? Then the
		 * topology has no NUMA node for it (no NUMA info). */
		hwloc_bitmap_foreach_begin(i, o->nodeset) {
			hwloc_obj_t nn = hwloc_get_numanode_obj_by_os_index(topo, i);
			if (nn)
				hwloc_bitmap_or(numa_cpus, numa_cpus, nn->cpuset);
		} hwloc_bitmap_foreach_end();
		if (!hwloc_bitmap_isequal(numa_cpus, o->cpuset) &&
		    hwloc_bitmap_isincluded(o->cpuset, numa_cpus)) {
			obj_name(o, name, sizeof(name));
			note_add(d->note, sizeof(d->note), "GPU %s has no NUMA "
				 "node of its own: using its %s", g->busid, name);
		}
	}
	hwloc_bitmap_free(numa_cpus);

	hwloc_bitmap_and(d->cpus, o->cpuset, allowed);
	if (hwloc_bitmap_iszero(d->cpus)) {
		hwloc_obj_t first = o;
		char name2[64];

		while (o->parent && hwloc_bitmap_iszero(d->cpus)) {
			o = o->parent;
			hwloc_bitmap_and(d->cpus, o->cpuset, allowed);
		}
		obj_name(first, name, sizeof(name));
		obj_name(o, name2, sizeof(name2));
		note_add(d->note, sizeof(d->note), "no allowed CPU near GPU %s "
			 "(%s): using the allowed CPUs of %s", g->busid, name,
			 name2);
	}
	return 0;
}

/* Keeps, of every core that set touches, its lowest-numbered PU in set. */
static void smt_one(hwloc_topology_t topo, hwloc_bitmap_t set)
{
	hwloc_obj_t core = NULL;

	while ((core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core))) {
		int pu = -1;

		if (!hwloc_bitmap_intersects(core->cpuset, set))
			continue;
		while ((pu = hwloc_bitmap_next(core->cpuset, pu)) >= 0)
			if (hwloc_bitmap_isset(set, (unsigned)pu))
				break;
		hwloc_bitmap_andnot(set, set, core->cpuset);
		if (pu >= 0)
			hwloc_bitmap_set(set, (unsigned)pu);
	}
}

/* Objects that group PUs into cores, or the PUs when cores are unknown. */
static hwloc_obj_type_t core_type(hwloc_topology_t topo)
{
	return hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ?
		HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

void te_bind_result_free(struct te_bind_result *res)
{
	unsigned r;

	if (!res)
		return;
	if (res->ranks) {
		for (r = 0; r < res->nranks; r++) {
			hwloc_bitmap_free(res->ranks[r].cpuset);
			hwloc_bitmap_free(res->ranks[r].nodeset);
		}
		free(res->ranks);
	}
	res->ranks = NULL;
	res->nranks = 0;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* Checks and sorts the step's GPU indexes (node indexes, PCI order). */
static int step_gpus(const struct te_bind_request *req, size_t node_gpus,
		     unsigned *step, char *err, size_t errlen)
{
	size_t i;

	memcpy(step, req->gpus, req->ngpus * sizeof(*step));
	qsort(step, req->ngpus, sizeof(*step), cmp_unsigned);
	for (i = 0; i < req->ngpus; i++) {
		if (step[i] >= node_gpus) {
			if (node_gpus)
				snprintf(err, errlen, "GPU index %u is out of "
					 "range: this node has %zu GPUs "
					 "(0-%zu)", step[i], node_gpus,
					 node_gpus - 1);
			else
				snprintf(err, errlen, "GPU index %u is out of "
					 "range: this node has no NVIDIA GPU",
					 step[i]);
			return -1;
		}
		if (i && step[i] == step[i - 1]) {
			snprintf(err, errlen, "GPU index %u is listed twice",
				 step[i]);
			return -1;
		}
	}
	return 0;
}

/* No GPU: one domain per rank (blocks of whole NUMA nodes) or per NUMA
 * node (blocks of ranks). */
static int numa_domains(hwloc_topology_t topo, unsigned ntasks,
			hwloc_const_cpuset_t allowed, struct domain **domp,
			size_t *ndomp, size_t *rank_dom, char *note,
			size_t notelen)
{
	int nnodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	hwloc_bitmap_t *node_cpus = NULL, seen = hwloc_bitmap_alloc();
	struct domain *dom = NULL;
	size_t n = 0, ndom, r, i;
	int k, rc = -1;

	if (!seen || nnodes <= 0)
		goto out;
	node_cpus = calloc((size_t)nnodes, sizeof(*node_cpus));
	if (!node_cpus)
		goto out;
	for (k = 0; k < nnodes; k++) {
		hwloc_obj_t nn = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE,
						       (unsigned)k);
		hwloc_bitmap_t c;

		if (!nn)
			continue;
		c = hwloc_bitmap_alloc();
		if (!c)
			goto out;
		hwloc_bitmap_and(c, nn->cpuset, allowed);
		/* CPU-less memory (HBM, CXL) reports its neighbours' CPUs: it
		 * must not take ranks away from them. */
		if (hwloc_bitmap_iszero(c) || hwloc_bitmap_intersects(c, seen)) {
			hwloc_bitmap_free(c);
			continue;
		}
		hwloc_bitmap_or(seen, seen, c);
		node_cpus[n++] = c;
	}
	if (n == 0) {
		/* hwloc puts every PU under a NUMA node, so this means an
		 * inconsistent topology rather than a policy case. */
		rc = -2;
		goto out;
	}
	ndom = ntasks <= n ? ntasks : n;
	dom = calloc(ndom, sizeof(*dom));
	if (!dom)
		goto out;
	for (i = 0; i < ndom; i++) {
		dom[i].cpus = hwloc_bitmap_alloc();
		if (!dom[i].cpus)
			goto out;
	}
	if (ntasks <= n) {
		for (i = 0; i < n; i++) {
			r = block_of(i, n, ntasks);
			hwloc_bitmap_or(dom[r].cpus, dom[r].cpus, node_cpus[i]);
		}
		for (r = 0; r < ntasks; r++)
			rank_dom[r] = r;
	} else {
		for (i = 0; i < n; i++)
			hwloc_bitmap_copy(dom[i].cpus, node_cpus[i]);
		for (r = 0; r < ntasks; r++)
			rank_dom[r] = block_of(r, ntasks, n);
	}
	note_add(note, notelen, "no GPU: %u rank%s over %zu NUMA node%s",
		 ntasks, ntasks > 1 ? "s" : "", n, n > 1 ? "s" : "");
	*domp = dom;
	*ndomp = ndom;
	dom = NULL;
	rc = 0;
out:
	if (dom) {
		for (i = 0; i < ndom; i++)
			hwloc_bitmap_free(dom[i].cpus);
		free(dom);
	}
	if (node_cpus) {
		for (i = 0; i < n; i++)
			hwloc_bitmap_free(node_cpus[i]);
		free(node_cpus);
	}
	hwloc_bitmap_free(seen);
	return rc;
}

struct split_order {
	int weight;		/* CPUs in the rank's own domain */
	size_t pos;		/* position of the rank in the group */
};

static int split_order_cmp(const void *a, const void *b)
{
	const struct split_order *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/*
 * Cores mode for one group of k ranks sharing pool (see CORES MODE SPLIT).
 * Units (cores, or PUs when cores are too few) get a capacity and ranks a
 * demand: blocks by position in the group. Ranks with the smallest domains
 * choose first and take free units inside their own domain before any
 * other, in topology order. When all domains are equal (the usual case:
 * GPUs of one NUMA node) this is exactly the block split in rank order;
 * when a machine-wide GPU shares the pool with package-local ones, the
 * package-local ranks still get their own package's cores.
 */
static int split_group(hwloc_topology_t topo, const struct te_bind_request *req,
		       hwloc_const_cpuset_t pool, const unsigned *members,
		       size_t k, struct te_bind_rank *ranks,
		       const struct domain *dom, const size_t *rank_dom)
{
	hwloc_obj_type_t ut = core_type(topo);
	int ncores = hwloc_get_nbobjs_by_type(topo, ut);
	int npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	size_t cap_units, c = 0, i, j, first_free = 0;
	hwloc_obj_t *units = NULL, o = NULL;
	size_t *cap = NULL, *demand = NULL;
	struct split_order *order = NULL;
	int by_pu = 0, overlap = 0, rc = -1;

	if (ncores <= 0 || npus <= 0)
		return -1;
	cap_units = (size_t)(ncores > npus ? ncores : npus);
	units = calloc(cap_units, sizeof(*units));
	cap = calloc(cap_units, sizeof(*cap));
	demand = calloc(k, sizeof(*demand));
	order = calloc(k, sizeof(*order));
	if (!units || !cap || !demand || !order)
		goto out;

	while ((o = hwloc_get_next_obj_by_type(topo, ut, o)) && c < cap_units)
		if (hwloc_bitmap_intersects(o->cpuset, pool))
			units[c++] = o;
	if (c < k) {
		/* Fewer cores than ranks: hardware threads, in topology order
		 * so that the threads of one core go to neighbouring ranks. */
		by_pu = 1;
		c = 0;
		o = NULL;
		while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, o)) &&
		       c < cap_units)
			if (hwloc_bitmap_isset(pool, o->os_index))
				units[c++] = o;
		if (c == 0)
			goto out;
		overlap = c < k;
	}
	if (!overlap) {
		for (j = 0; j < c; j++)
			cap[j] = 1;
		for (i = 0; i < k; i++)
			demand[i] = (i + 1) * c / k - i * c / k;
	} else {
		for (i = 0; i < k; i++) {
			cap[i * c / k]++;
			demand[i] = 1;
		}
	}
	for (i = 0; i < k; i++) {
		order[i].weight = hwloc_bitmap_weight(dom[rank_dom[members[i]]].cpus);
		order[i].pos = i;
	}
	qsort(order, k, sizeof(*order), split_order_cmp);

	for (i = 0; i < k; i++) {
		size_t pos = order[i].pos, need = demand[pos];
		struct te_bind_rank *rk = &ranks[members[pos]];
		hwloc_const_cpuset_t own = dom[rank_dom[members[pos]]].cpus;
		int pass, outside = 0;

		hwloc_bitmap_zero(rk->cpuset);
		while (first_free < c && cap[first_free] == 0)
			first_free++;
		for (pass = 0; pass < 2 && need; pass++) {
			for (j = first_free; j < c && need; j++) {
				if (!cap[j] || (pass == 0 &&
				    !hwloc_bitmap_intersects(units[j]->cpuset, own)))
					continue;
				hwloc_bitmap_or(rk->cpuset, rk->cpuset,
						units[j]->cpuset);
				cap[j]--;
				need--;
				outside |= pass;
			}
		}
		hwloc_bitmap_and(rk->cpuset, rk->cpuset, pool);
		if (!by_pu && req->smt == TE_BIND_SMT_ONE)
			smt_one(topo, rk->cpuset);
		if (overlap)
			note_add(rk->note, sizeof(rk->note), "%zu ranks share "
				 "%zu CPU%s: CPUs overlap", k, c,
				 c > 1 ? "s" : "");
		else if (by_pu)
			note_add(rk->note, sizeof(rk->note), "%zu ranks share "
				 "fewer cores: split by hardware thread", k);
		if (outside)
			note_add(rk->note, sizeof(rk->note), "some CPUs are "
				 "outside the GPU's locality");
	}
	rc = 0;
out:
	free(units);
	free(cap);
	free(demand);
	free(order);
	return rc;
}

static int cores_mode(hwloc_topology_t topo, const struct te_bind_request *req,
		      struct domain *dom, size_t ndom, const size_t *rank_dom,
		      struct te_bind_rank *ranks)
{
	hwloc_bitmap_t pool = hwloc_bitmap_alloc();
	unsigned *members = calloc(req->ntasks, sizeof(*members));
	size_t i, j, g;
	int rc = -1;

	if (!pool || !members)
		goto out;
	for (i = 0; i < ndom; i++)
		dom[i].group = i;
	for (i = 0; i < ndom; i++)
		for (j = i + 1; j < ndom; j++)
			if (hwloc_bitmap_intersects(dom[i].cpus, dom[j].cpus)) {
				size_t a = find_root(dom, i), b = find_root(dom, j);
				/* the smaller index stays the root */
				if (a < b)
					dom[b].group = a;
				else if (b < a)
					dom[a].group = b;
			}
	for (g = 0; g < ndom; g++) {
		size_t k = 0;
		unsigned r;

		if (find_root(dom, g) != g)
			continue;
		hwloc_bitmap_zero(pool);
		for (i = 0; i < ndom; i++)
			if (find_root(dom, i) == g)
				hwloc_bitmap_or(pool, pool, dom[i].cpus);
		for (r = 0; r < req->ntasks; r++)
			if (find_root(dom, rank_dom[r]) == g)
				members[k++] = r;
		if (k && split_group(topo, req, pool, members, k, ranks,
					 dom, rank_dom))
			goto out;
	}
	rc = 0;
out:
	hwloc_bitmap_free(pool);
	free(members);
	return rc;
}

int te_bind_compute(hwloc_topology_t topo, const struct te_bind_request *req,
		    struct te_bind_result *out, char *err, size_t errlen)
{
	struct te_bind_gpus gpus = { 0, NULL };
	struct domain *dom = NULL;
	size_t ndom = 0, *rank_dom = NULL, i;
	unsigned *step = NULL, r;
	hwloc_bitmap_t allowed = NULL;
	hwloc_const_nodeset_t allowed_nodes;
	char buf[256];
	int rc = -1;

	if (!out) {
		snprintf(err, errlen, "internal error: no result");
		return -1;
	}
	memset(out, 0, sizeof(*out));
	if (!topo || !req) {
		snprintf(err, errlen, "internal error: no topology or request");
		return -1;
	}
	if (req->ntasks < 1 || req->ntasks > TE_BIND_MAX_TASKS) {
		snprintf(err, errlen, "number of tasks on the node must be "
			 "1 to %d, not %u", TE_BIND_MAX_TASKS, req->ntasks);
		return -1;
	}
	if (req->ngpus > TE_BIND_MAX_GPUS || (req->ngpus && !req->gpus)) {
		snprintf(err, errlen, "step GPU list must hold 0 to %d "
			 "indexes, not %zu", TE_BIND_MAX_GPUS, req->ngpus);
		return -1;
	}
	if (req->mode != TE_BIND_MODE_NONE && req->mode != TE_BIND_MODE_NUMA &&
	    req->mode != TE_BIND_MODE_CORES) {
		snprintf(err, errlen, "unknown binding mode %d", (int)req->mode);
		return -1;
	}
	if (req->smt != TE_BIND_SMT_ALL && req->smt != TE_BIND_SMT_ONE) {
		snprintf(err, errlen, "unknown SMT policy %d", (int)req->smt);
		return -1;
	}

	allowed = hwloc_bitmap_dup(req->allowed ? req->allowed :
				   hwloc_topology_get_allowed_cpuset(topo));
	if (!allowed)
		goto oom;
	hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_allowed_cpuset(topo));
	hwloc_bitmap_and(allowed, allowed, hwloc_get_root_obj(topo)->cpuset);
	if (hwloc_bitmap_iszero(allowed)) {
		char b2[128];
		snprintf(err, errlen, "no allowed CPU is in this topology "
			 "(allowed %s, topology %s)",
			 req->allowed ? set_str(req->allowed, buf, 128) : "-",
			 set_str(hwloc_topology_get_allowed_cpuset(topo), b2,
				 sizeof(b2)));
		goto fail;
	}
	allowed_nodes = hwloc_topology_get_allowed_nodeset(topo);

	if (te_bind_gpus(topo, &gpus, err, errlen))
		goto fail;
	if (req->ngpus) {
		step = calloc(req->ngpus, sizeof(*step));
		if (!step)
			goto oom;
		if (step_gpus(req, gpus.n, step, err, errlen))
			goto fail;
	}

	out->ranks = calloc(req->ntasks, sizeof(*out->ranks));
	rank_dom = calloc(req->ntasks, sizeof(*rank_dom));
	if (!out->ranks || !rank_dom)
		goto oom;
	out->nranks = req->ntasks;
	for (r = 0; r < req->ntasks; r++) {
		out->ranks[r].rank = r;
		out->ranks[r].gpu = -1;
		out->ranks[r].cpuset = hwloc_bitmap_alloc();
		out->ranks[r].nodeset = hwloc_bitmap_alloc();
		if (!out->ranks[r].cpuset || !out->ranks[r].nodeset)
			goto oom;
	}

	if (req->ngpus) {
		ndom = req->ngpus;
		dom = calloc(ndom, sizeof(*dom));
		if (!dom)
			goto oom;
		for (i = 0; i < ndom; i++) {
			dom[i].cpus = hwloc_bitmap_alloc();
			if (!dom[i].cpus ||
			    gpu_domain(topo, &gpus.gpu[step[i]], allowed, &dom[i]))
				goto oom;
		}
		for (r = 0; r < req->ntasks; r++) {
			size_t j = req->ntasks <= ndom ? r :
				block_of(r, req->ntasks, ndom);
			rank_dom[r] = j;
			out->ranks[r].gpu = (int)step[j];
			memcpy(out->ranks[r].busid, gpus.gpu[step[j]].busid,
			       sizeof(out->ranks[r].busid));
		}
		if (req->ntasks < ndom) {
			te_cpulist_format(step + req->ntasks,
					  ndom - req->ntasks, buf, sizeof(buf));
			note_add(out->note, sizeof(out->note), "%u rank%s for "
				 "%zu GPUs: GPU%s %s unused", req->ntasks,
				 req->ntasks > 1 ? "s" : "", ndom,
				 ndom - req->ntasks > 1 ? "s" : "", buf);
		} else if (req->ntasks > ndom) {
			note_add(out->note, sizeof(out->note), "%u ranks for "
				 "%zu GPU%s: consecutive ranks share a GPU",
				 req->ntasks, ndom, ndom > 1 ? "s" : "");
		}
	} else {
		int nd = numa_domains(topo, req->ntasks, allowed, &dom, &ndom,
				      rank_dom, out->note, sizeof(out->note));
		if (nd == -2) {
			snprintf(err, errlen, "no NUMA node of the topology holds "
				 "an allowed CPU (%s)", set_str(allowed, buf, 128));
			goto fail;
		}
		if (nd)
			goto oom;
	}

	for (r = 0; r < req->ntasks; r++) {
		struct te_bind_rank *rk = &out->ranks[r];

		if (dom[rank_dom[r]].note[0])
			note_add(rk->note, sizeof(rk->note), "%s",
				 dom[rank_dom[r]].note);
		rk->bind = req->mode != TE_BIND_MODE_NONE;
		if (req->mode == TE_BIND_MODE_NONE) {
			hwloc_bitmap_copy(rk->cpuset, allowed);
		} else if (req->mode == TE_BIND_MODE_NUMA) {
			hwloc_bitmap_copy(rk->cpuset, dom[rank_dom[r]].cpus);
			if (req->smt == TE_BIND_SMT_ONE)
				smt_one(topo, rk->cpuset);
		}
	}
	if (req->mode == TE_BIND_MODE_CORES &&
	    cores_mode(topo, req, dom, ndom, rank_dom, out->ranks))
		goto oom;

	for (r = 0; r < req->ntasks; r++) {
		struct te_bind_rank *rk = &out->ranks[r];

		/* Defensive: the policy never yields these, and a rank must
		 * never leave the allowed set or end up unbound. */
		hwloc_bitmap_and(rk->cpuset, rk->cpuset, allowed);
		if (hwloc_bitmap_iszero(rk->cpuset)) {
			snprintf(err, errlen, "internal error: rank %u got no "
				 "CPU", r);
			goto fail;
		}
		hwloc_cpuset_to_nodeset(topo, rk->cpuset, rk->nodeset);
		hwloc_bitmap_and(rk->nodeset, rk->nodeset, allowed_nodes);
		if (hwloc_bitmap_iszero(rk->nodeset)) {
			hwloc_bitmap_copy(rk->nodeset, allowed_nodes);
			note_add(rk->note, sizeof(rk->note), "memory of the "
				 "rank's NUMA node is not allowed: using "
				 "allowed nodes %s",
				 set_str(allowed_nodes, buf, 64));
		}
	}
	rc = 0;
	goto done;
oom:
	snprintf(err, errlen, "out of memory computing the binding of %u "
		 "tasks", req->ntasks);
fail:
	te_bind_result_free(out);
done:
	if (dom) {
		for (i = 0; i < ndom; i++)
			hwloc_bitmap_free(dom[i].cpus);
		free(dom);
	}
	free(rank_dom);
	free(step);
	te_bind_gpus_free(&gpus);
	hwloc_bitmap_free(allowed);
	return rc;
}

/* ------------------------------------------------------------------ apply */

int te_bind_apply(hwloc_topology_t topo, const struct te_bind_rank *rank,
		  int restrict_mem, char *err, size_t errlen)
{
	char buf[128];

	if (!topo || !rank) {
		snprintf(err, errlen, "internal error: nothing to apply");
		return -1;
	}
	if (!rank->bind)
		return 0;
	if (!hwloc_topology_is_thissystem(topo)) {
		snprintf(err, errlen, "the topology was not discovered on this "
			 "machine (loaded from XML?): refusing to bind");
		return -1;
	}
	if (!rank->cpuset || hwloc_bitmap_iszero(rank->cpuset)) {
		snprintf(err, errlen, "rank %u has no CPU to bind to",
			 rank->rank);
		return -1;
	}
	if (hwloc_set_cpubind(topo, rank->cpuset, HWLOC_CPUBIND_PROCESS)) {
		snprintf(err, errlen, "cannot bind rank %u to CPUs %s: %s",
			 rank->rank, set_str(rank->cpuset, buf, sizeof(buf)),
			 strerror(errno));
		return -1;
	}
	if (!restrict_mem || !rank->nodeset ||
	    hwloc_bitmap_iszero(rank->nodeset) ||
	    hwloc_bitmap_isincluded(hwloc_topology_get_allowed_nodeset(topo),
				    rank->nodeset))
		return 0;
	if (hwloc_set_membind(topo, rank->nodeset, HWLOC_MEMBIND_BIND,
			      HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET) == 0)
		return 0;
	/* Linux only has a per-thread policy; it is inherited by later
	 * threads and kept across execve, which is what is needed here. */
	if (errno == ENOSYS &&
	    hwloc_set_membind(topo, rank->nodeset, HWLOC_MEMBIND_BIND,
			      HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) == 0)
		return 0;
	snprintf(err, errlen, "CPUs bound, but cannot bind the memory of "
		 "rank %u to NUMA node(s) %s: %s", rank->rank,
		 set_str(rank->nodeset, buf, sizeof(buf)), strerror(errno));
	return 1;
}

/* ------------------------------------------------------------------ format */

int te_bind_format_rank(const struct te_bind_rank *rank, char *buf,
			size_t buflen)
{
	size_t used;
	int w;

	if (!buf || buflen == 0)
		return -1;
	buf[0] = '\0';
	if (!rank)
		return -1;
	w = snprintf(buf, buflen, "rank %u gpu %s numa ", rank->rank,
		     rank->gpu >= 0 ? rank->busid : "none");
	if (w < 0 || (size_t)w >= buflen)
		goto fail;
	used = (size_t)w;
	w = te_bind_format_set(rank->nodeset, buf + used, buflen - used);
	if (w < 0)
		goto fail;
	used += (size_t)w;
	w = snprintf(buf + used, buflen - used, " cpus ");
	if (w < 0 || (size_t)w >= buflen - used)
		goto fail;
	used += (size_t)w;
	w = te_bind_format_set(rank->cpuset, buf + used, buflen - used);
	if (w < 0)
		goto fail;
	used += (size_t)w;
	if (used > INT_MAX)
		goto fail;
	return (int)used;
fail:
	buf[0] = '\0';
	return -1;
}
