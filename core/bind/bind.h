/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bind.h - GPU/NUMA binding core of trainenv (no Slurm in here)
 * ===========================================================================
 * This comment is the reference text of the binding part of trainenv(8).
 *
 * SUMMARY
 *   From an hwloc topology, the CPUs the step may use, the GPUs allocated to
 *   the step on this node and the number of tasks on the node, compute for
 *   every local rank: its GPU (PCI bus id), its CPU set and its NUMA nodes.
 *   The mapping is computed for all local ranks at once, from a topology
 *   loaded once per node; applying it is a separate step done by each task.
 *
 * MODES
 *   none   no binding. The mapping is still computed (GPU of each rank, the
 *          allowed CPUs and nodes) so that a preview shows it, but nothing
 *          is applied.
 *   numa   every rank gets all allowed CPUs local to its GPU (the GPU's NUMA
 *          node on usual servers) and its memory is bound to those nodes.
 *          Ranks sharing a NUMA node share its CPUs.
 *   cores  ranks whose CPU domains (see below) overlap split the domains'
 *          allowed cores between them in blocks, in rank order, without
 *          overlap. Memory is bound to the NUMA nodes of the rank's cores.
 *   SMT policy (--smt): "all" gives every allowed hardware thread of each
 *   chosen core; "one" keeps, of each core, only its lowest-numbered allowed
 *   PU (OS index). It applies in both numa and cores modes.
 *
 * WHAT IS A GPU
 *   A PCI function of vendor NVIDIA (0x10de) whose base class is display
 *   controller (0x03): 3D controller 0x0302 (data-center GPUs), VGA 0x0300
 *   (boards with a display output), other 0x0380. Not GPUs: NVSwitches
 *   (NVIDIA, class 0x0680 "bridge"; one DGX-2 NVSwitch even reads as class
 *   0x0000 vendor 0x0000), the audio (0x0403) and USB (0x0c03) functions of
 *   NVIDIA boards, and display chips of other vendors (Matrox, ASPEED, the
 *   AMD ES1000 of server boards).
 *   The PCI identity is used rather than hwloc OS devices because OS devices
 *   depend on what the exporting machine had loaded: in the test topologies
 *   the DGX-2 names its GPUs "nvml0".."nvml15", the 2x8-core box has a "cuda0"
 *   device on one of its three GPUs only, the 2x6-core box has none, and the
 *   4-package box has a "card0" GPU OS device on an AMD ES1000 VGA chip.
 *   Numbering: node GPU i is the i-th such function in PCI order (domain,
 *   bus, device, function). That is NVML's order, hence the order of the gres
 *   devices of Slurm's AutoDetect=nvml (gres_gpu.c sorts them "in order of
 *   PCI bus ID") and CUDA's order under CUDA_DEVICE_ORDER=PCI_BUS_ID. With a
 *   hand-written gres.conf the File= lines must follow PCI order too.
 *   AMD and Intel GPUs are not counted (their Slurm order comes from other
 *   libraries); a node with only those is a node without GPU.
 *
 * WHERE THE STEP'S GPU LIST COMES FROM (te_bind_gpus_from_env)
 *   Slurm 22.05 (src/plugins/gres/common/gres_common.c, common_gres_set_env)
 *   writes two lists per step: SLURM_STEP_GPUS holds each device's node-wide
 *   gres index, always; CUDA_VISIBLE_DEVICES holds the same index unless the
 *   node runs task/cgroup with ConstrainDevices=yes
 *   (gres_use_local_device_index() in src/common/gres.c), in which case it
 *   counts 0,1,2... among the step's own GPUs, because the cgroup hides the
 *   others from CUDA; for MIG it holds the instances' "MIG-..." UUIDs. The
 *   batch step gets SLURM_JOB_GPUS (same node-wide indexes) instead of
 *   SLURM_STEP_GPUS. So node indexes are read, in this order:
 *     1. CUDA_VISIBLE_DEVICES set to anything but an index list (GPU-<uuid>,
 *        MIG-<uuid>, "NoDevFiles", junk): refused with an error, binding
 *        needs whole GPUs named by index (the gres indexes then count MIG
 *        instances, not PCI functions).
 *     2. CUDA_VISIBLE_DEVICES set and empty: no GPU (CUDA sees none).
 *     3. SLURM_STEP_GPUS set: its indexes (a note when CUDA_VISIBLE_DEVICES
 *        lists a different number of GPUs).
 *     4. SLURM_JOB_GPUS and CUDA_VISIBLE_DEVICES set: SLURM_JOB_GPUS (a
 *        launcher such as torchrun started from the batch script). Without
 *        CUDA_VISIBLE_DEVICES it is ignored: srun --gres=none inherits it
 *        from the batch script while Slurm unsets the other two.
 *     5. CUDA_VISIBLE_DEVICES alone: taken as node-wide indexes, which is
 *        right outside Slurm with CUDA_DEVICE_ORDER=PCI_BUS_ID (a note).
 *     6. Nothing set: inside a Slurm job (SLURM_JOB_ID set) no GPU; outside,
 *        every GPU of the node, as CUDA would see them (a note).
 *   Each list may hold at most TE_BIND_MAX_GPUS indexes; an index may not
 *   appear twice. An index with no GPU behind it on this node is an error of
 *   te_bind_compute(). The step's GPUs are taken in PCI order whatever the
 *   order of the list, so that rank r's GPU is CUDA device r of the step.
 *   With per-task GPU binding (srun --gpu-bind, --gpus-per-task) every task
 *   sees only its own GPUs and computes its mapping from that view: the
 *   cores mode can then not see the other ranks' GPUs and may overlap.
 *   Keeping all of the step's GPUs visible to every task avoids this.
 *
 * RANKS TO GPUS
 *   T local ranks, G step GPUs (in PCI order):
 *     T == G  rank r gets GPU r.
 *     T <  G  rank r gets GPU r; GPUs T..G-1 get no rank.
 *     T >  G  blocks: with q = T / G and m = T % G, GPUs 0..m-1 get q + 1
 *             consecutive ranks each and the others q (T=5, G=2: ranks 0-2 on
 *             GPU 0, ranks 3-4 on GPU 1). Consecutive ranks are the ones that
 *             usually talk most (tensor-parallel groups). Scripts that pick
 *             cuda:(LOCAL_RANK % G) disagree with this when T > G.
 *     G == 0  no GPU: ranks go to the NUMA nodes that hold allowed CPUs, in
 *             blocks by the same rule. With T <= N nodes, rank r gets a block
 *             of whole nodes (N=4: T=2 gives nodes 0-1 and 2-3, T=3 gives
 *             0-1, 2, 3); with T > N, nodes get blocks of ranks. A NUMA node
 *             that shares CPUs with an earlier node (a CPU-less HBM or CXL
 *             node reports its neighbours' CPUs) gets no rank of its own.
 *
 * CPU DOMAIN OF A RANK
 *   With a GPU: the CPUs of the GPU's nearest non-I/O ancestor in the hwloc
 *   tree (hwloc takes it from the device's local_cpus in sysfs): its Package
 *   or NUMA-level Group on usual servers, i.e. its NUMA node's CPUs. When the
 *   ancestor is the Machine (host bridge without locality: VMs, nodes without
 *   NUMA info) the domain is the whole machine and the note says so; when it
 *   is smaller than the NUMA node it belongs to (a package on a node without
 *   NUMA info, one NUMA node for the machine), that smaller set is used and
 *   the note says so. Without a GPU: the CPUs of the rank's NUMA node(s).
 *   The domain is intersected with the allowed CPUs. When that leaves
 *   nothing (the step's cgroup has no CPU near the GPU) the domain becomes
 *   the allowed CPUs of the nearest ancestor that has some, up to the whole
 *   machine, and the note says so.
 *
 * CORES MODE SPLIT
 *   Ranks whose domains intersect form a group (in usual cases: the ranks
 *   whose GPUs sit on one NUMA node) that shares the union of their domains,
 *   the pool. The pool's cores with at least one allowed CPU are listed in
 *   topology order; with k ranks and c cores, the rank at position i of the
 *   group (rank order) gets (i+1)*c/k - i*c/k cores (integer division: block
 *   sizes that differ by one at most). Ranks with the smallest domains choose
 *   first (ties: rank order) and take free cores inside their own domain
 *   before any other, in topology order; then the SMT policy applies. When
 *   all domains of the group are equal (the usual case) this is exactly
 *   "rank i gets cores [i*c/k, (i+1)*c/k)"; when a GPU without locality
 *   shares the pool with package-local GPUs, the package-local ranks still
 *   get cores of their own package, and a rank that had to take CPUs
 *   outside its domain gets a note.
 *   Fewer cores than ranks: the pool's allowed hardware threads (p of them)
 *   are split the same way instead, a note says so and the SMT policy
 *   cannot apply. Fewer hardware threads than ranks (the trimmed DGX-2
 *   topology: 2 PUs for 8 GPUs per node): PU j hosts the ranks i with
 *   i*p/k == j (blocks of consecutive ranks), so ranks share PUs, the only
 *   case with overlap, and a note says so. No rank ever gets an empty set or
 *   a CPU outside the allowed set.
 *
 * ALLOWED CPUS AND MEMORY
 *   Allowed CPUs: those given (--allowed, or the CPUs the calling process may
 *   run on), intersected with the topology's allowed CPUs (the cgroup);
 *   CPUs unknown to the topology are ignored. Nothing left is an error.
 *   NUMA nodes of a rank: the nodes that hold its CPUs (as hwloc reports
 *   them), limited to the topology's allowed nodes; if none is allowed, all
 *   allowed nodes (a note). Applying binds memory only when those nodes are
 *   not already every allowed node, so single-node machines and containers
 *   that forbid set_mempolicy are left alone.
 *
 * APPLYING (te_bind_apply)
 *   CPUs: hwloc_set_cpubind(HWLOC_CPUBIND_PROCESS), i.e. every thread of the
 *   calling process. Memory: hwloc_set_membind(HWLOC_MEMBIND_BIND) by
 *   nodeset, first per process; Linux has only a per-thread policy (hwloc
 *   answers ENOSYS), so then for the calling thread. Both are inherited by
 *   threads created later and kept across execve(), so binding before exec
 *   (single-threaded, as in a SPANK task callback or `trainenv bind --`)
 *   covers the whole program. A topology loaded from XML is not this
 *   machine: applying it is refused.
 *
 * NOTES
 *   Every result and every rank carries a short note ("" when nothing is
 *   unusual) that explains fallbacks: GPU without locality, no allowed CPU
 *   near the GPU, ranks sharing CPUs, GPUs left unused, where the GPU list
 *   came from. `trainenv bind --verbose` prints them.
 *
 * LIMITS
 *   At most TE_BIND_MAX_TASKS local ranks and TE_BIND_MAX_GPUS GPUs.
 * ===========================================================================
 */
#ifndef TE_BIND_H
#define TE_BIND_H

#include <stddef.h>
#include <hwloc.h>

#define TE_BIND_MAX_TASKS 4096
#define TE_BIND_MAX_GPUS 256
/* "dddd:bb:dd.f" with a 32-bit domain: 8+1+2+1+2+1+1 characters. */
#define TE_BIND_BUSID_LEN 20
#define TE_BIND_NOTE_LEN 256

enum te_bind_mode {
	TE_BIND_MODE_NONE = 0,
	TE_BIND_MODE_NUMA,
	TE_BIND_MODE_CORES,
};

enum te_bind_smt {
	TE_BIND_SMT_ALL = 0, /* every allowed hardware thread of a core */
	TE_BIND_SMT_ONE,     /* the lowest-numbered allowed PU of a core */
};

/* "none", "numa", "cores" / "all", "one"; return -1 on anything else. */
int te_bind_mode_parse(const char *s, enum te_bind_mode *out);
int te_bind_smt_parse(const char *s, enum te_bind_smt *out);
const char *te_bind_mode_name(enum te_bind_mode m);
const char *te_bind_smt_name(enum te_bind_smt s);

/*
 * Loads the topology of this machine (xml_path NULL) or of an hwloc XML
 * export, keeping the I/O devices that matter (GPUs, NICs) and the CPUs the
 * calling process is not allowed to use (so that a GPU keeps its real
 * locality inside a narrow cgroup; allowed sets are applied by
 * te_bind_compute()). Caches are dropped: the mapping never uses them.
 * On this machine hwloc's "gl" (X11 displays), "opencl" (vendor OpenCL
 * drivers) and "pci" (libpciaccess) components are not used: the Linux
 * backend reads the same PCI devices and their locality from sysfs. On
 * success *out must be released with hwloc_topology_destroy().
 */
int te_bind_topology_load(const char *xml_path, hwloc_topology_t *out,
			  char *err, size_t errlen);

/* The same for an XML export of THIS machine (tests add fake GPUs to one):
 * the topology counts as this system, so te_bind_apply() binds for real.
 * The caller vouches that the XML's CPUs and NUMA nodes are this machine's. */
int te_bind_topology_load_local_xml(const char *xml_path, hwloc_topology_t *out,
				    char *err, size_t errlen);

/* The same from a descriptor the caller opened and checked (the topology
 * cache: the file that was checked is the file that is read); name is for
 * messages. The descriptor stays open. */
int te_bind_topology_load_local_fd(int fd, const char *name,
				   hwloc_topology_t *out, char *err,
				   size_t errlen);

struct te_bind_gpu {
	char busid[TE_BIND_BUSID_LEN]; /* "0000:34:00.0" */
	unsigned vendor_id, device_id, class_id;
	hwloc_obj_t pcidev;	       /* the PCI device in the topology */
	hwloc_obj_t locality;	       /* nearest non-I/O ancestor */
	hwloc_const_cpuset_t cpuset;   /* locality->cpuset (not a copy) */
	hwloc_const_nodeset_t nodeset; /* locality->nodeset (not a copy) */
};

struct te_bind_gpus {
	size_t n;
	struct te_bind_gpu *gpu; /* PCI order; index = node GPU index */
};

/* Lists the node's GPUs (see WHAT IS A GPU) in PCI order. The entries point
 * into the topology: free with te_bind_gpus_free() before destroying it. */
int te_bind_gpus(hwloc_topology_t topo, struct te_bind_gpus *out, char *err,
		 size_t errlen);
void te_bind_gpus_free(struct te_bind_gpus *gpus);

/* Environment a task sees; NULL for an unset variable. */
struct te_bind_gpu_env {
	const char *cuda_visible_devices;
	const char *slurm_step_gpus;
	const char *slurm_job_gpus;
	int in_slurm; /* SLURM_JOB_ID is set */
};

/*
 * Node-wide indexes of the step's GPUs from the environment (see WHERE THE
 * STEP'S GPU LIST COMES FROM). node_gpus is the number of GPUs on the node,
 * used only when no variable is set outside Slurm. Writes up to cap indexes
 * to idx and their number to *n; note gets "" or what was inferred. Returns
 * 0, or -1 with the reason in err (binding must then not be done).
 */
int te_bind_gpus_from_env(const struct te_bind_gpu_env *env, size_t node_gpus,
			  unsigned *idx, size_t cap, size_t *n, char *note,
			  size_t notelen, char *err, size_t errlen);

struct te_bind_request {
	enum te_bind_mode mode;
	enum te_bind_smt smt;
	unsigned ntasks;	      /* local ranks on this node, >= 1 */
	const unsigned *gpus;	      /* node GPU indexes of the step */
	size_t ngpus;		      /* 0: no GPU */
	hwloc_const_cpuset_t allowed; /* NULL: the topology's allowed CPUs */
};

struct te_bind_rank {
	unsigned rank;		       /* local rank */
	int gpu;		       /* node GPU index, -1 for none */
	char busid[TE_BIND_BUSID_LEN]; /* "" for none */
	int bind;		       /* 0 in mode none: apply does nothing */
	hwloc_bitmap_t cpuset;	       /* PU OS indexes, never empty */
	hwloc_bitmap_t nodeset;	       /* NUMA node OS indexes, never empty */
	char note[TE_BIND_NOTE_LEN];
};

struct te_bind_result {
	unsigned nranks;
	struct te_bind_rank *ranks;  /* ranks[r].rank == r */
	char note[TE_BIND_NOTE_LEN]; /* about the whole node */
};

/*
 * Computes the mapping of every local rank. On success out must be released
 * with te_bind_result_free() (also safe on a zeroed or failed result).
 */
int te_bind_compute(hwloc_topology_t topo, const struct te_bind_request *req,
		    struct te_bind_result *out, char *err, size_t errlen);
void te_bind_result_free(struct te_bind_result *res);

/*
 * Binds the calling process to rank->cpuset and, when restrict_mem is set
 * and the rank's nodes are not already every allowed node, its memory to
 * rank->nodeset. Returns 0; 1 when CPUs were bound but memory binding
 * failed (err says why: the caller may go on); -1 when nothing was bound.
 */
int te_bind_apply(hwloc_topology_t topo, const struct te_bind_rank *rank,
		  int restrict_mem, char *err, size_t errlen);

/* "rank 3 gpu 0000:3b:00.0 numa 0 cpus 0-5,24-29" ("gpu none" without GPU).
 * Returns the length, or -1 if buf is too small. */
int te_bind_format_rank(const struct te_bind_rank *rank, char *buf,
			size_t buflen);

/* hwloc bitmap as "0-3,8" ("" for empty); -1 if buf is too small or the
 * set is infinite. */
int te_bind_format_set(hwloc_const_bitmap_t set, char *buf, size_t buflen);

#endif
