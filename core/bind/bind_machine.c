/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bind: the machine, as the mapping sees it: the hwloc topology (this
 * system, or stored XML), its compute GPUs in PCI order, and the GPUs
 * Slurm gave the step (its environment). */
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

#include "bind/bind.h"
#include "bind/bind_int.h"
#include "bind/cpulist.h"

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_BASE_CLASS_DISPLAY 0x03

/* ------------------------------------------------------------------ topology */

static int topology_load(const char *xml_path, int xml_fd, int this_system,
			 hwloc_topology_t *out, char *err, size_t errlen);

int te_bind_topology_load(const char *xml_path, hwloc_topology_t *out,
			  char *err, size_t errlen)
{
	return topology_load(xml_path, -1, 0, out, err, errlen);
}

int te_bind_topology_load_local_xml(const char *xml_path, hwloc_topology_t *out,
				    char *err, size_t errlen)
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
static char *read_xml(const char *path, int given_fd, size_t *len, char *err,
		      size_t errlen)
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
		snprintf(err, errlen,
			 "cannot read topology file %s: not a "
			 "regular file",
			 path);
		goto out;
	}
	if (st.st_size > TE_TOPOLOGY_XML_MAX) {
		snprintf(err, errlen,
			 "cannot read topology file %s: %lld "
			 "bytes, larger than %ld",
			 path, (long long)st.st_size, TE_TOPOLOGY_XML_MAX);
		goto out;
	}
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		snprintf(err, errlen,
			 "cannot read topology file %s: out of "
			 "memory",
			 path);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen,
				 "cannot read topology file %s: "
				 "%s",
				 path, strerror(errno));
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
	if (xml_path &&
	    (!*xml_path || strnlen(xml_path, PATH_MAX) >= PATH_MAX)) {
		snprintf(err, errlen,
			 "topology file name is empty or longer "
			 "than %d characters",
			 PATH_MAX - 1);
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
	    hwloc_topology_set_io_types_filter(
		    topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) ||
	    hwloc_topology_set_cache_types_filter(
		    topo, HWLOC_TYPE_FILTER_KEEP_NONE) ||
	    hwloc_topology_set_icache_types_filter(
		    topo, HWLOC_TYPE_FILTER_KEEP_NONE)) {
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
			(void)hwloc_topology_set_components(
				topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
				unwanted[i]);
	}
	if (xml_path &&
	    !(xml = read_xml(xml_path, xml_fd, &xml_len, err, errlen)))
		goto fail;
	/* the size hwloc wants counts the final NUL */
	if (xml &&
	    (xml_len >= INT_MAX ||
	     hwloc_topology_set_xmlbuffer(topo, xml, (int)xml_len + 1))) {
		snprintf(err, errlen, "cannot read topology file %s: %s",
			 xml_path, strerror(errno));
		goto fail;
	}
	if (hwloc_topology_load(topo)) {
		if (xml_path)
			snprintf(err, errlen,
				 "cannot load topology file %s "
				 "(not an hwloc XML export?): %s",
				 xml_path, strerror(errno));
		else
			snprintf(err, errlen,
				 "cannot discover this machine's "
				 "topology with hwloc: %s",
				 strerror(errno));
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
	const struct hwloc_pcidev_attr_s *x =
		&((const struct te_bind_gpu *)a)->pcidev->attr->pcidev;
	const struct hwloc_pcidev_attr_s *y =
		&((const struct te_bind_gpu *)b)->pcidev->attr->pcidev;

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

int te_bind_gpus(hwloc_topology_t topo, struct te_bind_gpus *out, char *err,
		 size_t errlen)
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
		snprintf(err, errlen,
			 "this node has %zu GPUs, more than the "
			 "%d trainenv handles",
			 n, TE_BIND_MAX_GPUS);
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

/* CUDA_VISIBLE_DEVICES as indexes into tmp[0..TE_BIND_MAX_GPUS), their
 * count in *ncvd. 0, or -1 with err: not a list of indexes. */
static int parse_cvd(const char *cvd, unsigned *tmp, size_t *ncvd, char *err,
		     size_t errlen)
{
	char why[160], sbuf[48];

	if (!te_cpulist_parse(cvd, ENV_LIST_MAXLEN, TE_CPULIST_INDEX_LIMIT, tmp,
			      TE_BIND_MAX_GPUS, ncvd, why, sizeof(why)))
		return 0;
	if (strstr(cvd, "MIG-") || strstr(cvd, "GPU-"))
		snprintf(err, errlen,
			 "CUDA_VISIBLE_DEVICES "
			 "names GPUs by UUID or MIG instance "
			 "(%s): binding needs whole GPUs "
			 "named by index",
			 safe_str(cvd, sbuf, sizeof(sbuf)));
	else
		snprintf(err, errlen,
			 "CUDA_VISIBLE_DEVICES=%s "
			 "is not a list of GPU indexes: %s",
			 safe_str(cvd, sbuf, sizeof(sbuf)), why);
	return -1;
}

/* The indexes from SLURM_STEP_GPUS (ssg), or SLURM_JOB_GPUS (sjg) in a
 * batch step; cvd, when set, listed ncvd GPUs. */
static int gpus_from_slurm(const char *ssg, const char *sjg, const char *cvd,
			   size_t ncvd, unsigned *idx, size_t cap, size_t *n,
			   char *note, size_t notelen, char *err, size_t errlen)
{
	const char *name = ssg ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS";

	if (parse_env_list(name, ssg ? ssg : sjg, idx, cap, n, err, errlen))
		return -1;
	if (!ssg)
		te_bind_note_add(note, notelen,
				 "GPUs from SLURM_JOB_GPUS "
				 "(batch step)");
	if (cvd && ncvd != *n)
		te_bind_note_add(note, notelen,
				 "CUDA_VISIBLE_DEVICES lists %zu "
				 "GPU%s, %s %zu: using %s",
				 ncvd, ncvd == 1 ? "" : "s", name, *n, name);
	return 0;
}

/* No Slurm list: CUDA_VISIBLE_DEVICES's ncvd indexes in tmp. */
static int gpus_from_cvd(const unsigned *tmp, size_t ncvd, unsigned *idx,
			 size_t cap, size_t *n, char *note, size_t notelen,
			 char *err, size_t errlen)
{
	if (ncvd > cap) {
		snprintf(err, errlen,
			 "CUDA_VISIBLE_DEVICES lists more "
			 "than %zu GPUs",
			 cap);
		return -1;
	}
	memcpy(idx, tmp, ncvd * sizeof(*idx));
	*n = ncvd;
	snprintf(note, notelen,
		 "no SLURM_STEP_GPUS: "
		 "CUDA_VISIBLE_DEVICES taken as node-wide PCI-order "
		 "GPU indexes");
	return 0;
}

/* No GPU variable: none in a Slurm step, else every GPU of the node. */
static int gpus_unset(int in_slurm, size_t node_gpus, unsigned *idx, size_t cap,
		      size_t *n, char *note, size_t notelen, char *err,
		      size_t errlen)
{
	size_t i;

	if (in_slurm) {
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
		snprintf(note, notelen,
			 "no GPU variable set outside Slurm: "
			 "all %zu GPU%s of the node",
			 node_gpus, node_gpus == 1 ? "" : "s");
	return 0;
}

int te_bind_gpus_from_env(const struct te_bind_gpu_env *env, size_t node_gpus,
			  unsigned *idx, size_t cap, size_t *n, char *note,
			  size_t notelen, char *err, size_t errlen)
{
	const char *cvd, *ssg, *sjg;
	size_t ncvd = 0;
	unsigned *tmp = NULL;
	int rc;

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
		/* The parser is run for the count and to refuse UUIDs and MIG
		 * instances even when a Slurm list will give the indexes:
		 * those indexes then count MIG slices, not PCI functions. */
		tmp = calloc(TE_BIND_MAX_GPUS, sizeof(*tmp));
		if (!tmp) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (parse_cvd(cvd, tmp, &ncvd, err, errlen)) {
			free(tmp);
			return -1;
		}
		if (ncvd == 0) {
			snprintf(note, notelen,
				 "CUDA_VISIBLE_DEVICES is empty: "
				 "no GPU");
			free(tmp);
			return 0;
		}
	}

	if (ssg || (sjg && cvd))
		rc = gpus_from_slurm(ssg, sjg, cvd, ncvd, idx, cap, n, note,
				     notelen, err, errlen);
	else if (cvd)
		rc = gpus_from_cvd(tmp, ncvd, idx, cap, n, note, notelen, err,
				   errlen);
	else
		rc = gpus_unset(env->in_slurm, node_gpus, idx, cap, n, note,
				notelen, err, errlen);
	free(tmp);
	return rc;
}
