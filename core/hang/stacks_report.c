/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The hang report's grouping of identical stacks, its rank and node lists,
 * and the text and JSON reports (core/hang/stacks.h). */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hang/stacks.h"
#include "util/strutil.h"
#include "util/textbuf.h"

/* ---------------------------------------------------------------- groups */

struct hashed {
	uint64_t h;
	size_t i;
};

struct gstat {
	size_t count, rep;
	long long minkey;
};

struct placed {
	size_t pos;    /* the group's place in the report */
	long long key; /* the member's rank key */
	int pid;
	size_t i;
};

static long long rank_key(const struct te_proc_stack *ps)
{
	return ps->rank >= 0 ? ps->rank : (long long)INT_MAX + 1;
}

static int cmp_hashed(const void *a, const void *b)
{
	const struct hashed *x = a, *y = b;

	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static const struct gstat *gsort_base;

static int cmp_gstat(const void *a, const void *b)
{
	const struct gstat *x = &gsort_base[*(const size_t *)a];
	const struct gstat *y = &gsort_base[*(const size_t *)b];

	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	if (x->minkey != y->minkey)
		return x->minkey < y->minkey ? -1 : 1;
	return x->rep < y->rep ? -1 : x->rep > y->rep;
}

static int cmp_placed(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

long te_stack_group(const struct te_proc_stack *procs, size_t n, size_t *order,
		    struct te_stack_group *groups, size_t gmax)
{
	struct hashed *hs = calloc(n ? n : 1, sizeof(*hs));
	struct gstat *gs = calloc(n ? n : 1, sizeof(*gs));
	struct placed *pl = calloc(n ? n : 1, sizeof(*pl));
	size_t *gid = calloc(n ? n : 1, sizeof(*gid));
	size_t *pos = calloc(n ? n : 1, sizeof(*pos));
	size_t i, ng = 0, a, k, g, o = 0;

	if (!hs || !gs || !pl || !gid || !pos) {
		free(hs);
		free(gs);
		free(pl);
		free(gid);
		free(pos);
		return -1;
	}
	for (i = 0; i < n; i++) {
		hs[i].h = te_stack_hash(&procs[i]);
		hs[i].i = i;
	}
	qsort(hs, n, sizeof(*hs), cmp_hashed);
	/* Within a run of equal hashes, compare in full (collisions split). */
	for (a = 0; a < n; a = k) {
		size_t run_groups = ng;

		for (k = a; k < n && hs[k].h == hs[a].h; k++) {
			const struct te_proc_stack *p = &procs[hs[k].i];

			for (g = run_groups; g < ng; g++)
				if (te_stack_same(&procs[gs[g].rep], p))
					break;
			if (g == ng) {
				gs[ng].rep = hs[k].i;
				gs[ng].count = 0;
				gs[ng].minkey = LLONG_MAX;
				ng++;
			}
			gs[g].count++;
			if (rank_key(p) < gs[g].minkey)
				gs[g].minkey = rank_key(p);
			gid[hs[k].i] = g;
		}
	}
	for (g = 0; g < ng; g++)
		pos[g] = g;
	gsort_base = gs;
	qsort(pos, ng, sizeof(*pos), cmp_gstat);
	for (g = 0; g < ng; g++)    /* pos: place -> group; gid: via inverse */
		gs[pos[g]].rep = g; /* rep now holds the place */
	for (i = 0; i < n; i++) {
		pl[i].pos = gs[gid[i]].rep;
		pl[i].key = rank_key(&procs[i]);
		pl[i].pid = procs[i].pid;
		pl[i].i = i;
	}
	qsort(pl, n, sizeof(*pl), cmp_placed);
	for (g = 0; g < ng && g < gmax; g++) {
		groups[g].first = o;
		groups[g].count = gs[pos[g]].count;
		for (k = 0; k < groups[g].count; k++, o++)
			order[o] = pl[o].i;
	}
	free(hs);
	free(gs);
	free(pl);
	free(gid);
	free(pos);
	return (long)ng;
}

/* ---------------------------------------------------------------- lists */

/* Appends one list item (with its comma); when it or the ",..." that more
 * items would need does not fit, appends the ",..." alone and returns -1. */
static int list_item(char *buf, size_t len, size_t *used, const char *item,
		     int more)
{
	size_t k = strlen(item) + (*used ? 1 : 0);

	if (*used + k + (more ? 4 : 0) < len) {
		te_snprintf(buf + *used, len - *used, "%s%s", *used ? "," : "",
			    item);
		*used += k;
		return 0;
	}
	te_snprintf(buf + *used, len - *used, "%s...", *used ? "," : "");
	return -1;
}

int te_ranks_format(char *buf, size_t len, const int *ranks, size_t n)
{
	size_t i = 0, j, used = 0;
	char item[32];

	if (!len)
		return -1;
	buf[0] = '\0';
	while (i < n && ranks[i] < 0)
		i++;
	for (; i < n; i = j + 1) {
		for (j = i; j + 1 < n && (ranks[j + 1] == ranks[j] ||
					  ranks[j + 1] == ranks[j] + 1);
		     j++)
			;
		if (ranks[j] == ranks[i])
			te_snprintf(item, sizeof(item), "%d", ranks[i]);
		else
			te_snprintf(item, sizeof(item), "%d-%d", ranks[i],
				    ranks[j]);
		if (list_item(buf, len, &used, item, j + 1 < n) < 0)
			return -1;
	}
	return 0;
}

struct hname {
	const char *s;
	size_t plen; /* the prefix before the number */
	uint64_t v;
	int nd;	    /* digits of the number, 0: none */
	int padded; /* starts with a 0 and has more digits */
};

static int cmp_hname(const void *a, const void *b)
{
	const struct hname *x = a, *y = b;
	size_t m = x->plen < y->plen ? x->plen : y->plen;
	int c = memcmp(x->s, y->s, m);

	if (c || x->plen != y->plen)
		return c ? c : (x->plen < y->plen ? -1 : 1);
	if (!x->nd != !y->nd) /* names without a number first */
		return x->nd ? 1 : -1;
	if (!x->nd)
		return 0;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->nd < y->nd ? -1 : x->nd > y->nd;
}

int te_nodes_format(char *buf, size_t len, const char *const *names, size_t n)
{
	struct hname *h;
	size_t i, j, k = 0, used = 0;
	char item[2 * TE_STACK_NODE_MAX + 4], a[TE_STACK_NODE_MAX],
		b[TE_STACK_NODE_MAX];

	if (!len)
		return -1;
	buf[0] = '\0';
	h = calloc(n ? n : 1, sizeof(*h));
	if (!h)
		return te_strlcpy(buf, "?", len), -1;
	for (i = 0; i < n; i++) {
		const char *s = names[i] ? names[i] : "";
		size_t l = strnlen(s, TE_STACK_NODE_MAX), d = l;

		while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
			d--;
		h[i].s = s;
		h[i].plen = l;
		if (l - d > 0 && l - d <= 9) {
			h[i].plen = d;
			h[i].nd = (int)(l - d);
			h[i].padded = s[d] == '0' && l - d > 1;
			for (; d < l; d++)
				h[i].v = h[i].v * 10 + (uint64_t)(s[d] - '0');
		}
	}
	qsort(h, n, sizeof(*h), cmp_hname);
	for (i = 0; i < n; i++) /* distinct names only */
		if (!k || cmp_hname(&h[k - 1], &h[i]))
			h[k++] = h[i];
	for (i = 0; i < k; i = j + 1) {
		for (j = i; j + 1 < k && h[j].nd && h[j + 1].nd &&
			    h[j + 1].plen == h[i].plen &&
			    !memcmp(h[j + 1].s, h[i].s, h[i].plen) &&
			    h[j + 1].v == h[j].v + 1 &&
			    (h[j + 1].nd == h[j].nd ||
			     (!h[j + 1].padded && !h[j].padded));
		     j++)
			;
		te_clean_text(a, sizeof(a), h[i].s, TE_STACK_NODE_MAX);
		te_clean_text(b, sizeof(b), h[j].s, TE_STACK_NODE_MAX);
		te_snprintf(item, sizeof(item), j > i ? "%s-%s" : "%s", a, b);
		if (list_item(buf, len, &used, item, j + 1 < k) < 0) {
			free(h);
			return -1;
		}
	}
	free(h);
	return 0;
}

/* ---------------------------------------------------------------- text */

static void secs(char *out, size_t len, int64_t lo, int64_t hi)
{
	if (lo / 100 == hi / 100)
		te_snprintf(out, len, "%lld.%lld", (long long)(lo / 1000),
			    (long long)(lo % 1000 / 100));
	else
		te_snprintf(out, len, "%lld.%lld-%lld.%lld",
			    (long long)(lo / 1000),
			    (long long)(lo % 1000 / 100),
			    (long long)(hi / 1000),
			    (long long)(hi % 1000 / 100));
}

/* The ranks and nodes of a group ("rank 4 on n3", "ranks 0,2-5 on n1-n3"). */
static int group_where(char *out, size_t len, const struct te_proc_stack *procs,
		       const size_t *m, size_t count)
{
	int *ranks = calloc(count, sizeof(*ranks));
	const char **names = calloc(count, sizeof(*names));
	size_t i, known = 0;
	char r[512], nodes[512];

	if (!ranks || !names) {
		free(ranks);
		free(names);
		return -1;
	}
	for (i = 0; i < count; i++) {
		if (procs[m[i]].rank >= 0)
			ranks[known++] = procs[m[i]].rank;
		names[i] = procs[m[i]].node;
	}
	(void)te_ranks_format(r, sizeof(r), ranks, known);
	(void)te_nodes_format(nodes, sizeof(nodes), names, count);
	te_snprintf(out, len, "%s%s%s",
		    known == 1 ? "rank "
		    : known    ? "ranks "
			       : "",
		    known ? r : "", known ? "" : "rank ?");
	if (known && known < count)
		te_appendf(out, len, " and %zu of unknown rank", count - known);
	te_appendf(out, len, " on %s", nodes[0] ? nodes : "?");
	free(ranks);
	free(names);
	return 0;
}

static void frame_text(char *out, size_t len, const struct te_proc_stack *ps,
		       const struct te_frame *f, size_t num)
{
	char fn[TE_STACK_NAME_MAX + 1], fi[TE_STACK_NAME_MAX + 1],
		li[TE_STACK_NAME_MAX + 1];

	te_clean_text(fn, sizeof(fn), te_frame_str(ps, f->func), SIZE_MAX);
	te_clean_text(fi, sizeof(fi), te_frame_str(ps, f->file), SIZE_MAX);
	te_clean_text(li, sizeof(li), te_frame_str(ps, f->lib), SIZE_MAX);
	if (f->kind == TE_FRAME_PY) {
		if (fi[0])
			te_snprintf(out, len, "File \"%s\", line %u, in %s", fi,
				    (unsigned)f->line, fn);
		else
			te_snprintf(out, len, "<%s>", fn);
		return;
	}
	te_snprintf(out, len, "#%zu %s ()", num, fn);
	if (fi[0] && f->line)
		te_appendf(out, len, " at %s:%u", fi, (unsigned)f->line);
	else if (fi[0])
		te_appendf(out, len, " at %s", fi);
	if (li[0])
		te_appendf(out, len, " from %s", li);
}

static int group_text(struct te_buf *b, const struct te_proc_stack *procs,
		      const size_t *m, size_t count)
{
	const struct te_proc_stack *rep = &procs[m[0]];
	size_t nstate[128] = { 0 }, i, j, c;
	int64_t slo = INT64_MAX, shi = -1, clo = INT64_MAX, chi = -1;
	int same_wchan = 1, bad = 0;
	char where[1100], t[64], line[4 * TE_STACK_NAME_MAX + 32],
		w[TE_STACK_WCHAN_MAX], note[TE_STACK_NOTE_MAX];

	if (group_where(where, sizeof(where), procs, m, count) < 0)
		return -1;
	for (i = 0; i < count; i++) {
		const struct te_proc_stack *p = &procs[m[i]];

		nstate[p->state > 0x20 && p->state < 0x7f ? p->state : '?']++;
		same_wchan &= !strcmp(p->wchan, rep->wchan);
		if (p->since_ms >= 0) {
			slo = p->since_ms < slo ? p->since_ms : slo;
			shi = p->since_ms > shi ? p->since_ms : shi;
		}
		if (p->cpu_ms >= 0) {
			clo = p->cpu_ms < clo ? p->cpu_ms : clo;
			chi = p->cpu_ms > chi ? p->cpu_ms : chi;
		}
	}
	te_clean_text(w, sizeof(w), rep->wchan, SIZE_MAX);
	bad |= te_buf_printf(b, "trainenv: hang: %s (%zu rank%s", where, count,
			     count == 1 ? "" : "s");
	if (count == 1)
		bad |= te_buf_printf(b, ", pid %d): state %c (%s%s%s)",
				     rep->pid,
				     rep->state > 0x20 && rep->state < 0x7f
					     ? rep->state
					     : '?',
				     te_stack_state_word(rep->state),
				     w[0] ? ", wchan " : "", w);
	else {
		bad |= te_buf_printf(b, "): states");
		for (j = 0;; j++) { /* the commonest state first */
			size_t best = 0;

			for (c = 1; c < 128; c++)
				if (nstate[c] > nstate[best])
					best = c;
			if (!best)
				break;
			bad |= te_buf_printf(
				b, "%s %zu %c (%s)", j ? "," : "", nstate[best],
				best > 0x20 && best < 0x7f ? (char)best : '?',
				te_stack_state_word((char)best));
			nstate[best] = 0;
		}
		if (same_wchan && w[0])
			bad |= te_buf_printf(b, ", wchan %s", w);
	}
	if (shi >= 0)
		secs(t, sizeof(t), slo, shi),
			bad |=
			te_buf_printf(b, ", %s s since the first exit", t);
	if (chi >= 0)
		secs(t, sizeof(t), clo, chi),
			bad |= te_buf_printf(b, ", cpu %s s", t);
	bad |= te_buf_printf(b, "\n");
	te_clean_text(note, sizeof(note), rep->note, SIZE_MAX);
	if (note[0])
		bad |= te_buf_printf(b, "  note: %s\n", note);
	for (i = 0; i < rep->nthreads; i++) {
		const struct te_thread_stack *th = &rep->threads[i];

		bad |= te_buf_printf(b,
				     "  thread %zu of %u, most recent "
				     "call first:\n",
				     i + 1, (unsigned)rep->nthreads);
		for (j = 0; j < th->count; j++) {
			frame_text(line, sizeof(line), rep,
				   &rep->frames[th->first + j], j);
			bad |= te_buf_printf(b, "    %s\n", line);
		}
		if (th->cut)
			bad |= te_buf_printf(b, "    ... more frames not "
						"shown\n");
	}
	if (rep->threads_nopy)
		bad |= te_buf_printf(b,
				     "  (%u more thread%s without "
				     "Python frames)\n",
				     (unsigned)rep->threads_nopy,
				     rep->threads_nopy == 1 ? "" : "s");
	if (rep->threads_cut)
		bad |= te_buf_printf(b, "  (%u more thread%s not shown)\n",
				     (unsigned)rep->threads_cut,
				     rep->threads_cut == 1 ? "" : "s");
	return bad ? -1 : 0;
}

/* Groups procs; *order and *groups are the caller's to free. */
static long grouped(const struct te_proc_stack *procs, size_t n, size_t **order,
		    struct te_stack_group **groups)
{
	long ng;

	*order = calloc(n ? n : 1, sizeof(**order));
	*groups = calloc(n ? n : 1, sizeof(**groups));
	ng = *order && *groups ? te_stack_group(procs, n, *order, *groups, n)
			       : -1;
	if (ng < 0) {
		free(*order);
		free(*groups);
		*order = NULL;
		*groups = NULL;
	}
	return ng;
}

#define REPORT_RESERVE 64 /* the "... N more groups" line */

int te_stack_report_text(char *buf, size_t len,
			 const struct te_proc_stack *procs, size_t n)
{
	struct te_stack_group *groups;
	struct te_buf b;
	size_t *order, g,
		room = len > 2 * REPORT_RESERVE ? len - REPORT_RESERVE : len;
	long ng;

	if (!len)
		return -1;
	te_buf_init(&b, buf, room);
	ng = grouped(procs, n, &order, &groups);
	if (ng < 0)
		return te_err(buf, len,
			      "trainenv: hang: no memory for the "
			      "report\n");
	for (g = 0; g < (size_t)ng; g++) {
		size_t mark = b.used;

		if (group_text(&b, procs, order + groups[g].first,
			       groups[g].count) < 0) {
			te_buf_rewind(&b, mark);
			break;
		}
	}
	free(order);
	free(groups);
	if (g == (size_t)ng)
		return 0;
	b.len = len;
	te_buf_printf(&b, "trainenv: hang: ... %zu more group%s\n",
		      (size_t)ng - g, (size_t)ng - g == 1 ? "" : "s");
	return -1;
}

/* ---------------------------------------------------------------- JSON */

int te_json_str_append(char *buf, size_t len, const char *s)
{
	struct te_buf b;

	if (!len)
		return -1;
	b.p = buf;
	b.len = len;
	b.used = strnlen(buf, len);
	b.cut = b.used >= len;
	return te_buf_json_str(&b, s);
}

static int json_frame(struct te_buf *b, const struct te_proc_stack *ps,
		      const struct te_frame *f)
{
	int bad = te_buf_printf(b, "{\"kind\":\"%s\",\"function\":",
				f->kind == TE_FRAME_PY ? "py" : "native");

	bad |= te_buf_json_str(b, te_frame_str(ps, f->func));
	bad |= te_buf_printf(b, ",\"file\":");
	bad |= te_buf_json_str(b, te_frame_str(ps, f->file));
	bad |= te_buf_printf(b, ",\"line\":%u", (unsigned)f->line);
	if (f->kind == TE_FRAME_NATIVE) {
		bad |= te_buf_printf(b, ",\"library\":");
		bad |= te_buf_json_str(b, te_frame_str(ps, f->lib));
	}
	return bad | te_buf_printf(b, ",\"cut\":%s}",
				   f->flags & TE_FRAME_CUT ? "true" : "false");
}

static int json_group(struct te_buf *b, const struct te_proc_stack *procs,
		      const size_t *m, size_t count)
{
	const struct te_proc_stack *rep = &procs[m[0]];
	const char **names = calloc(count, sizeof(*names));
	char nodes[512], st[2] = "?";
	size_t i, j;
	int bad = 0;

	if (!names)
		return -1;
	for (i = 0; i < count; i++)
		names[i] = procs[m[i]].node;
	(void)te_nodes_format(nodes, sizeof(nodes), names, count);
	free(names);
	bad |= te_buf_printf(b, "{\"count\":%zu,\"ranks\":[", count);
	for (i = 0; i < count; i++)
		bad |= te_buf_printf(b, "%s%d", i ? "," : "", procs[m[i]].rank);
	bad |= te_buf_printf(b, "],\"nodes\":");
	bad |= te_buf_json_str(b, nodes);
	bad |= te_buf_printf(b, ",\"note\":");
	bad |= te_buf_json_str(b, rep->note);
	bad |= te_buf_printf(b, ",\"procs\":[");
	for (i = 0; i < count && !bad; i++) {
		const struct te_proc_stack *p = &procs[m[i]];

		st[0] = p->state;
		bad |= te_buf_printf(b, "%s{\"rank\":%d,\"pid\":%d,\"node\":",
				     i ? "," : "", p->rank, p->pid);
		bad |= te_buf_json_str(b, p->node);
		bad |= te_buf_printf(b, ",\"state\":");
		bad |= te_buf_json_str(b, st);
		bad |= te_buf_printf(b, ",\"state_word\":\"%s\",\"wchan\":",
				     te_stack_state_word(p->state));
		bad |= te_buf_json_str(b, p->wchan);
		bad |= te_buf_printf(b, ",\"cpu_ms\":%lld,\"since_ms\":%lld}",
				     (long long)p->cpu_ms,
				     (long long)p->since_ms);
	}
	bad |= te_buf_printf(b, "],\"threads\":[");
	for (i = 0; i < rep->nthreads && !bad; i++) {
		const struct te_thread_stack *th = &rep->threads[i];

		bad |= te_buf_printf(b, "%s{\"frames\":[", i ? "," : "");
		for (j = 0; j < th->count && !bad; j++)
			bad |= te_buf_printf(b, "%s", j ? "," : "") |
			       json_frame(b, rep, &rep->frames[th->first + j]);
		bad |= te_buf_printf(b, "],\"cut\":%s}",
				     th->cut ? "true" : "false");
	}
	bad |= te_buf_printf(b, "],\"threads_nopy\":%u,\"threads_cut\":%u}",
			     (unsigned)rep->threads_nopy,
			     (unsigned)rep->threads_cut);
	return bad ? -1 : 0;
}

int te_stack_report_json(char *buf, size_t len,
			 const struct te_proc_stack *procs, size_t n)
{
	struct te_stack_group *groups;
	struct te_buf b;
	size_t *order, g,
		room = len > REPORT_RESERVE ? len - REPORT_RESERVE : 0;
	long ng;

	if (!len)
		return -1;
	te_buf_init(&b, buf, room);
	ng = grouped(procs, n, &order, &groups);
	if (ng < 0 || te_buf_printf(&b, "{\"groups\":[") < 0) {
		free(order);
		free(groups);
		return te_snprintf(buf, len, "{\"error\":\"%s\"}",
				   ng < 0 ? "no memory" : "no room"),
		       -1;
	}
	for (g = 0; g < (size_t)ng; g++) {
		size_t mark = b.used;

		if ((g && te_buf_printf(&b, ",") < 0) ||
		    json_group(&b, procs, order + groups[g].first,
			       groups[g].count) < 0) {
			te_buf_rewind(&b, mark);
			break;
		}
	}
	free(order);
	free(groups);
	b.len = len;
	te_buf_printf(&b, "],\"more_groups\":%zu}\n", (size_t)ng - g);
	return g == (size_t)ng ? 0 : -1;
}
