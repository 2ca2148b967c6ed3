/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the append cursor and JSON strings (core/util/textbuf.c): cut
 * and rewind, UTF-8 kept as it is, every kind of ill-formed UTF-8
 * replaced, control characters escaped, the step record's and the hang
 * report's JSON (issue 25, item 11). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "settings/settings.h"
#include "hang/stacks.h"
#include "report/steprecord.h"
#include "util/strutil.h"
#include "tap.h"
#include "util/textbuf.h"

/* s as a JSON string into a fresh buffer. */
static const char *J(const char *s)
{
	static char out[512];
	struct te_buf b;

	te_buf_init(&b, out, sizeof(out));
	if (te_buf_json_str(&b, s) < 0)
		return "(cut)";
	return out;
}

/* 1 when every byte of s is ASCII or part of a well-formed character. */
static int valid_utf8(const char *s)
{
	size_t skip;

	while (*s) {
		if (!te_utf8_char(s, &skip))
			return 0;
		s += skip;
	}
	return 1;
}

static void test_cursor(void)
{
	char small[8];
	struct te_buf b;
	size_t mark;

	te_buf_init(&b, small, sizeof(small));
	ok(te_buf_printf(&b, "abc") == 0 && b.used == 3 &&
		   !strcmp(small, "abc"),
	   "cursor: appended, used counts it");
	mark = b.used;
	ok(te_buf_printf(&b, "%s", "defghij") < 0 && b.cut &&
		   !strcmp(small, "abcdefg") && b.used == 7,
	   "cursor: what does not fit is cut, terminated, marked");
	ok(te_buf_printf(&b, "x") < 0 && !strcmp(small, "abcdefg"),
	   "cursor: after a cut, appends do nothing");
	te_buf_rewind(&b, mark);
	ok(!b.cut && !strcmp(small, "abc") && te_buf_printf(&b, "d") == 0 &&
		   !strcmp(small, "abcd"),
	   "cursor: rewound to a mark, usable again");
	ok(te_buf_json_str(&b, "toolong") < 0 && !strcmp(small, "abcd") &&
		   b.cut,
	   "cursor: a JSON string that does not fit: nothing of it");
	te_buf_init(&b, small, 0);
	ok(te_buf_printf(&b, "a") < 0 && te_buf_json_str(&b, "") < 0,
	   "cursor: a buffer of 0 bytes takes nothing");
}

static void test_utf8(void)
{
	is_str(J("caf\xc3\xa9"), "\"caf\xc3\xa9\"",
	       "UTF-8: caf\xc3\xa9 stays as it is (was caf\\u00c3\\u00a9)");
	is_str(J("/home/\xe5\xb1\xb1\xe7\x94\xb0/\xf0\x9f\x98\x80.py"),
	       "\"/home/\xe5\xb1\xb1\xe7\x94\xb0/\xf0\x9f\x98\x80.py\"",
	       "UTF-8: 3- and 4-byte characters kept");
	is_str(J("\xc2\xa0|\xdf\xbf|\xef\xbf\xbd|\xf4\x8f\xbf\xbf"),
	       "\"\xc2\xa0|\xdf\xbf|\xef\xbf\xbd|\xf4\x8f\xbf\xbf\"",
	       "UTF-8: the edges (U+00A0, U+07FF, U+FFFD, U+10FFFF) kept");
	is_str(J("a\x80z"), "\"a\\ufffdz\"",
	       "ill-formed: a stray continuation byte");
	is_str(J("caf\xc3"), "\"caf\\ufffd\"", "ill-formed: cut at the end");
	is_str(J("\xe6\x97x"), "\"\\ufffdx\"",
	       "ill-formed: a cut 3-byte character is one U+FFFD (its maximal part)");
	is_str(J("\xf0\x9f\x98x"), "\"\\ufffdx\"",
	       "ill-formed: a cut 4-byte character is one U+FFFD");
	is_str(J("\xc0\xaf"), "\"\\ufffd\\ufffd\"",
	       "ill-formed: an overlong '/' (C0 AF) is two");
	is_str(J("\xe0\x80\xaf"), "\"\\ufffd\\ufffd\\ufffd\"",
	       "ill-formed: an overlong 3-byte form");
	is_str(J("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"",
	       "ill-formed: a surrogate (U+D800)");
	is_str(J("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"",
	       "ill-formed: past U+10FFFF");
	is_str(J("\xf5\xff\xfe"), "\"\\ufffd\\ufffd\\ufffd\"",
	       "ill-formed: bytes that never appear in UTF-8");
	is_str(J("q\"b\\s\n\t\x01\x7f"),
	       "\"q\\\"b\\\\s\\n\\u0009\\u0001\\u007f\"",
	       "quote, backslash, newline, tab, C0 and DEL escaped");
	is_str(J("\xc2\x85\xc2\x9b[31m"), "\"\\u0085\\u009b[31m\"",
	       "C1 controls (NEL, CSI) escaped, not raw");
	ok(valid_utf8(J("\xff\xc3(\xe2\x82\xf0\x9f\x92\xed\xbf\xbf\xc3\xa9")),
	   "the output is valid UTF-8 whatever the input");
}

static void test_records(void)
{
	static struct te_config cfg;
	static char rec[16384];
	static struct te_proc_stack ps, back;
	struct te_step_record r = { .job = 5, .step = 0, .cfg = &cfg };
	const char *gdb = "Thread 1 (Thread 0x7f (LWP 42) \"python3\"):\n"
			  "Traceback (most recent call first):\n"
			  "  File \"/home/me/caf\xc3\xa9/train.py\", line 3, "
			  "in \xc3\xa9tape\n";
	char wire[4096], err[160];
	size_t used;

	memset(&cfg, 0, sizeof(cfg));
	cfg.v[TE_S_NCCL_DUMP_DIR].set = 1;
	te_strlcpy(cfg.v[TE_S_NCCL_DUMP_DIR].text, "/scratch/caf\xc3\xa9",
		   sizeof(cfg.v[TE_S_NCCL_DUMP_DIR].text));
	ok(te_step_record_json(rec, sizeof(rec), &r) == 0,
	   "step record written");
	like(rec, "\"nccl-dump-dir\":{\"value\":\"/scratch/caf\xc3\xa9\"",
	     "step record: the path caf\xc3\xa9 reads back caf\xc3\xa9");
	ok(valid_utf8(rec), "step record: valid UTF-8");

	te_stack_init(&ps);
	te_stack_parse_gdb(gdb, strlen(gdb), 1, &ps);
	ps.rank = 0;
	te_strlcpy(ps.node, "n1", sizeof(ps.node));
	ok(te_stack_wire_encode(wire, sizeof(wire), &ps) == 0 &&
		   te_stack_wire_decode(wire, strlen(wire), &used, &back, err,
					sizeof(err)) == 0,
	   "hang report: a frame in caf\xc3\xa9/train.py over the wire");
	ok(te_stack_report_json(rec, sizeof(rec), &back, 1) == 0,
	   "JSON report");
	like(rec,
	     "\"function\":\"\xc3\xa9tape\",\"file\":\"/home/me/caf\xc3\xa9/"
	     "train.py\"",
	     "hang report: caf\xc3\xa9 and \xc3\xa9tape read back "
	     "as they are");
	ok(!strstr(rec, "\\u00c3"), "... not byte by byte as \\u00c3\\u00a9");
}

int main(void)
{
	test_cursor();
	test_utf8();
	test_records();
	return tap_done();
}
