/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small, strict string helpers shared by the plugin, the helper and the tool.
 * Everything here is pure (no I/O, no globals) and treats its input as hostile:
 * lengths are always bounded by the caller's buffer sizes. */
#ifndef TE_STRUTIL_H
#define TE_STRUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Copies at most size-1 bytes and always terminates. Returns strlen(src), so
 * a result >= size means the copy was truncated (like BSD strlcpy). */
size_t te_strlcpy(char *dst, const char *src, size_t size);

/* snprintf that never reports a negative or oversized length: returns 0 when
 * the whole text fit and -1 when it was truncated (dst still terminated). */
__attribute__((format(printf, 3, 4))) int te_snprintf(char *dst, size_t size,
						      const char *fmt, ...);

/* Writes the message into err (as te_snprintf does) and returns -1, so that
 * an error path is one statement: return te_err(err, errlen, "...", ...); */
__attribute__((format(printf, 3, 4))) int te_err(char *err, size_t errlen,
						 const char *fmt, ...);

/* Copies at most max bytes of s (NULL reads as "") into dst: printable
 * ASCII is kept, every other byte becomes '?'; always terminated. The one
 * cleaner for text that crosses a trust boundary into a message. */
void te_clean_text(char *dst, size_t size, const char *s, size_t max);

/* 1 when a and b are both exactly len bytes long and equal, else 0; the
 * time taken does not depend on where they differ (tokens). */
int te_token_equal(const char *a, const char *b, size_t len);

/* Appends to a terminated buffer; same return convention as te_snprintf. */
__attribute__((format(printf, 3, 4))) int te_appendf(char *dst, size_t size,
						     const char *fmt, ...);

/* Strict unsigned decimal: digits only (no sign, space, prefix or suffix), at
 * most 19 digits, value <= max. Returns 0 or -1. */
int te_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* The buffers of getenv-style callbacks that copy a value (spank_getenv,
 * an --export list): each call returns the next of TE_VALUE_SLOTS buffers
 * of TE_VALUE_SLOT_SIZE bytes, so that a caller may hold that many values
 * at once. One ring for the process (the plugin's callbacks run in one
 * thread). The size is the longest value (TE_VALUE_MAX) plus one byte to
 * see that a value is longer, plus the terminator. */
#define TE_VALUE_SLOTS 4
#define TE_VALUE_SLOT_SIZE (1024 + 2)
char *te_value_slot(void);

/* Length of s, but at most max+1: lets callers refuse over-long input without
 * walking an attacker-sized string. */
size_t te_strnlen_cap(const char *s, size_t max);

/* Comma lists ("n1,n2,n7"): 1 when word is one of list's items. */
int te_list_has(const char *list, const char *word);
/* The item at p into item (len bytes; an item that does not fit is
 * given as ""), and where the next begins; NULL at the list's end. */
const char *te_list_next(const char *p, char *item, size_t len);

/* 1 when every byte is printable ASCII (0x20..0x7e) and the length is <= max. */
int te_is_printable(const char *s, size_t max);

/* Writes s into dst as a quoted, escaped form fit for one log line: control
 * bytes and non-ASCII become \xNN, and long input is cut with "...". */
void te_quote(char *dst, size_t size, const char *s);

/* Percent-encoding of every byte outside [A-Za-z0-9._/-,+@]. Returns 0, or -1
 * when dst is too small. */
int te_pct_encode(char *dst, size_t size, const char *src);
/* The length te_pct_encode gives src (without its NUL). */
size_t te_pct_encoded_len(const char *src);
/* Returns 0, or -1 for bad escapes, NUL bytes or a too small dst. */
int te_pct_decode(char *dst, size_t size, const char *src, size_t srclen);

/* Removes leading and trailing blanks (space, tab, CR) in place; returns s. */
char *te_trim(char *s);

/* 1 if s is a word of 1 to max-1 characters, each an ASCII letter or digit
 * or one of the characters in extra; else 0. */
int te_word_valid(const char *s, size_t max, const char *extra);

/* The next word of a line of our own protocols: the bytes up to a space, a
 * '\n' or the end, at most outlen-1 of them, into out; *p moves past it and
 * past one space. Only single spaces separate words. 0, or -1 when there is
 * no word or it is too long. */
int te_next_word(const char **p, char *out, size_t outlen);

/* The name a report gives this node: host's short name (up to its first
 * '.') when that is a word of letters, digits, '-' and '_' that fits out,
 * else "unknown". te_node_name() does it for this host (gethostname): never
 * the job's SLURMD_NODENAME, which for a step of a batch job is still the
 * batch host's until slurmstepd sets the task's, and which a user may set
 * to anything. */
void te_node_name_from(const char *host, char *out, size_t len);
void te_node_name(char *out, size_t len);

/* Writes all len bytes to fd (retrying short writes and EINTR); 0 or -1. */
int te_write_all(int fd, const char *buf, size_t len);

/* Replaces path with text as a whole: writes a new file tmp.XXXXXX (a
 * random suffix, created 0600 with O_EXCL: never through a link, never
 * another's file), then renames it to path; on any failure it is
 * removed and path left as it was. Readers never see half of the text.
 * Returns 0 or -1 (errno set). */
int te_replace_file(const char *path, const char *tmp, const char *text);

/* The framing that the plugin's helper programs print on their pipe: a
 * header line, KEY=VALUE lines, a line "END"; every line ends with '\n'.
 * Refuses more than max_len bytes, NUL bytes, lines over line_max characters
 * (at most TE_FRAMED_LINE_MAX), a bad header, text after END and output
 * without END (who names the writer: "the helper stopped half-way").
 * Calls line_fn for each line between header and END; its -1 stops. Returns
 * 0, or -1 with a message in err. */
#define TE_FRAMED_LINE_MAX 2048
typedef int (*te_framed_line_fn)(char *line, void *ctx, char *err,
				 size_t errlen);
int te_framed_parse(const char *buf, size_t len, size_t max_len,
		    size_t line_max, const char *header, const char *who,
		    te_framed_line_fn line_fn, void *ctx, char *err,
		    size_t errlen);

/* A block of NUL-separated entries (a /proc/PID/environ: thousands of
 * them, megabytes) read in pieces of any size. The entry being read is
 * kept in the caller's cur[cap] (its bound); st says how far it is. Each
 * entry of at most cap bytes is given to fn (without its NUL); a longer one
 * is skipped whole. st starts zeroed. */
struct te_nul_entries {
	size_t len;   /* bytes of the current entry in cur */
	int too_long; /* the current entry is past cap: skipped */
};
typedef void (*te_nul_entry_fn)(void *ctx, const char *entry, size_t len);
void te_nul_entries_feed(struct te_nul_entries *st, char *cur, size_t cap,
			 const char *buf, size_t n, te_nul_entry_fn fn,
			 void *ctx);
/* The last entry, when the block did not end with its NUL; st is zeroed. */
void te_nul_entries_end(struct te_nul_entries *st, const char *cur,
			te_nul_entry_fn fn, void *ctx);

#endif
