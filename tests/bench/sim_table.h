/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scale simulation's shared table (tests/bench/sim_pmix.c reads and
 * writes it, bench_scale.c creates it): one slot per rank holding the
 * rank's last committed blob under a sequence lock whose counter is also
 * the futex that direct-modex waiters sleep on. */
#ifndef TE_SIM_TABLE_H
#define TE_SIM_TABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SIM_MAGIC 0x74652d73696d3031ULL /* "te-sim01" */
#define SIM_SLOT_SIZE 2048
#define SIM_BLOB_MAX (SIM_SLOT_SIZE - 8)
#define SIM_KEY_MAX 127
#define SIM_VAL_MAX 1024
#define SIM_PPN_MAX 256
#define SIM_PEERS_MAX (SIM_PPN_MAX * 11 + 1)
#define SIM_HOST_FMT "n%u" /* node i is n(i+1), as Slurm names nodes */

struct sim_table {
	uint64_t magic;
	uint32_t nodes, ppn;
	unsigned char pad[SIM_SLOT_SIZE - 16];
};

struct sim_slot {
	atomic_uint seq; /* odd while the owner writes; 0: never */
	/* direct modexes this rank's data answered: one per other helper
	 * that fetched it (a PMIx server fetches a remote rank's data once
	 * and serves later keys from its copy) */
	atomic_uint served;
	uint32_t len;
	unsigned char blob[SIM_BLOB_MAX];
};

static inline size_t sim_table_size(uint64_t ranks)
{
	return sizeof(struct sim_table) +
	       (size_t)ranks * sizeof(struct sim_slot);
}

static inline struct sim_slot *sim_slot(struct sim_table *t, uint32_t rank)
{
	return (struct sim_slot *)((unsigned char *)t + sizeof(*t)) + rank;
}

/* A blob is a run of entries: u16 key length, u16 type, u32 data length,
 * the key (no NUL), the data. */
static inline size_t sim_entry_size(size_t klen, size_t dlen)
{
	return 8 + klen + dlen;
}

static inline size_t sim_entry_put(unsigned char *p, const char *key,
				   size_t klen, uint16_t type, const void *data,
				   uint32_t dlen)
{
	uint16_t kl = (uint16_t)klen;

	memcpy(p, &kl, 2);
	memcpy(p + 2, &type, 2);
	memcpy(p + 4, &dlen, 4);
	memcpy(p + 8, key, klen);
	memcpy(p + 8 + klen, data, dlen);
	return sim_entry_size(klen, dlen);
}

/* 0 and the entry of key, or -1 (absent, or a blob that does not parse) */
static inline int sim_blob_find(const unsigned char *blob, size_t len,
				const char *key, uint16_t *type,
				const void **data, uint32_t *dlen)
{
	size_t off = 0, kl = strlen(key);

	while (off + 8 <= len) {
		uint16_t k, t;
		uint32_t d;

		memcpy(&k, blob + off, 2);
		memcpy(&t, blob + off + 2, 2);
		memcpy(&d, blob + off + 4, 4);
		if (off + sim_entry_size(k, d) > len)
			return -1;
		if (k == kl && !memcmp(blob + off + 8, key, kl)) {
			*type = t;
			*data = blob + off + 8 + k;
			*dlen = d;
			return 0;
		}
		off += sim_entry_size(k, d);
	}
	return -1;
}

#endif
