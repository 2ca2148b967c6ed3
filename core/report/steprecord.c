/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv's record of one step as JSON (steprecord.h). */
#include "config.h"

#include <string.h>

#include "hang/stacks.h"
#include "report/steprecord.h"
#include "util/strutil.h"
#include "launch/version.h"

void te_step_record_name(char *buf, size_t len, uint32_t step, int hang)
{
	te_snprintf(buf, len, "trainenv.%u%s.json", step, hang ? ".hang" : "");
}

static int str_or_null(char *buf, size_t len, const char *s)
{
	return s ? te_json_str_append(buf, len, s)
		 : (te_appendf(buf, len, "null"), 0);
}

static const char *how(const struct te_failrep *f)
{
	return f->stalled    ? "stall"
	       : f->ended    ? "ended"
	       : f->signaled ? "signal"
			     : "exit";
}

/* For the goodput: ms too (the whole seconds stay as they were), and the
 * job's start. */
static void append_goodput_times(char *buf, size_t len,
				 const struct te_step_record *r)
{
	if (r->start_ms > 0 && r->end_ms >= r->start_ms)
		te_appendf(buf, len, "\"start_ms\":%lld,\"end_ms\":%lld,",
			   (long long)r->start_ms, (long long)r->end_ms);
	if (r->job_start_sec > 0)
		te_appendf(buf, len, "\"job_start\":%lld,",
			   (long long)r->job_start_sec);
}

/* The fields only some steps have: the step watch's and the stragglers'
 * lines, a straggler's exclusion and the checkpoint at a restart verdict. Non-zero when a string would not fit. */
static int append_later_facts(char *buf, size_t len,
			      const struct te_step_record *r)
{
	int bad = 0;

	if (r->step_time) {
		te_appendf(buf, len, ",\"step_time\":");
		bad |= te_json_str_append(buf, len, r->step_time);
	}
	if (r->straggler) {
		te_appendf(buf, len, ",\"straggler\":");
		bad |= te_json_str_append(buf, len, r->straggler);
	}
	if (r->strag_excluded) {
		te_appendf(buf, len, ",\"straggler_excluded\":{\"node\":");
		bad |= te_json_str_append(buf, len, r->strag_excluded);
		te_appendf(buf, len, ",\"dir\":");
		bad |= te_json_str_append(
			buf, len,
			r->strag_excluded_dir ? r->strag_excluded_dir : "");
		te_appendf(buf, len, "}");
	}
	if (r->checkpoint_dir) {
		te_appendf(buf, len, ",\"checkpoint\":{\"dir\":");
		bad |= te_json_str_append(buf, len, r->checkpoint_dir);
		if (r->checkpoint_ms > 0)
			te_appendf(buf, len, ",\"newest\":%lld.%03lld}",
				   (long long)(r->checkpoint_ms / 1000),
				   (long long)(r->checkpoint_ms % 1000));
		else
			te_appendf(buf, len, ",\"newest\":null}");
	}
	return bad;
}

int te_step_record_json(char *buf, size_t len, const struct te_step_record *r)
{
	int bad = 0, i, first = 1;
	unsigned h;

	if (len == 0)
		return -1;
	buf[0] = '\0';
	te_appendf(buf, len, "{\"trainenv\":");
	bad |= te_json_str_append(buf, len, PACKAGE_VERSION);
	te_appendf(buf, len, ",\"protocol\":%d", TE_PROTOCOL_VERSION);
	te_appendf(buf, len,
		   ",\"job\":%u,\"step\":%u,\"start\":%lld,"
		   "\"end\":%lld,",
		   r->job, r->step, (long long)r->start_sec,
		   (long long)r->end_sec);
	append_goodput_times(buf, len, r);
	te_appendf(buf, len, "\"settings\":{");
	for (i = 0; r->cfg && i < TE_S_COUNT; i++) {
		const struct te_value *v = &r->cfg->v[i];

		if (!v->set)
			continue;
		te_appendf(buf, len, "%s", first ? "" : ",");
		first = 0;
		bad |= te_json_str_append(buf, len, te_settings[i].name);
		te_appendf(buf, len, ":{\"value\":");
		bad |= te_json_str_append(buf, len, v->text);
		te_appendf(buf, len, ",\"source\":");
		bad |= te_json_str_append(buf, len, te_source_name(v->src));
		te_appendf(buf, len, "}");
	}
	te_appendf(buf, len,
		   "},\"failed_tasks\":%u,\"first_failure\":", r->nfailed);
	if (r->first) {
		te_appendf(buf, len, "{\"rank\":%u,\"local_rank\":%u,\"node\":",
			   r->first->rank, r->first->local_rank);
		bad |= te_json_str_append(buf, len, r->first->node);
		te_appendf(buf, len,
			   ",\"how\":\"%s\",\"value\":%d,"
			   "\"time\":%lld.%06u,\"ended_by_trainenv\":%s}",
			   how(r->first), r->first->value,
			   (long long)r->first->sec, r->first->usec,
			   r->first->by_trainenv ? "true" : "false");
	} else {
		te_appendf(buf, len, "null");
	}
	te_appendf(buf, len, ",\"launch\":");
	if (r->launch) {
		te_appendf(buf, len,
			   "{\"ranks\":%u,\"nodes\":%u,\"first_node\":",
			   r->launch->nranks, r->launch->nnodes);
		bad |= str_or_null(buf, len,
				   r->launch->nnodes ? r->launch->first : NULL);
		te_appendf(buf, len, ",\"last_node\":");
		bad |= str_or_null(buf, len,
				   r->launch->nnodes ? r->launch->last : NULL);
		te_appendf(buf, len, ",\"skew_ms\":%lld",
			   (long long)r->launch->skew_ms);
		if (r->launch_passed_ms > 0)
			te_appendf(buf, len, ",\"passed\":%lld.%03lld",
				   (long long)(r->launch_passed_ms / 1000),
				   (long long)(r->launch_passed_ms % 1000));
		te_appendf(buf, len, "}");
	} else {
		te_appendf(buf, len, "null");
	}
	te_appendf(buf, len, ",\"watchdog\":");
	bad |= str_or_null(buf, len, r->watchdog);
	te_appendf(buf, len, ",\"hang_report\":");
	bad |= str_or_null(buf, len, r->hang_report);
	/* only when there is one: a record without stays as it was */
	if (r->restart) {
		te_appendf(buf, len, ",\"restart\":{\"verdict\":");
		bad |= te_json_str_append(buf, len, r->restart);
		te_appendf(buf, len, ",\"why\":");
		bad |= str_or_null(buf, len, r->restart_why);
		te_appendf(buf, len, "}");
	}
	bad |= append_later_facts(buf, len, r);
	if (r->nhealth)
		te_appendf(buf, len, ",\"node_health\":[");
	for (h = 0; h < r->nhealth; h++) {
		te_appendf(buf, len, "%s{\"node\":", h ? "," : "");
		bad |= te_json_str_append(buf, len, r->health[h].node);
		te_appendf(buf, len, ",\"verdict\":");
		bad |= te_json_str_append(buf, len, r->health[h].text);
		te_appendf(buf, len, "}");
	}
	te_appendf(buf, len, "%s}\n", r->nhealth ? "]" : "");
	/* te_appendf stops at the end: a cut record is no record */
	if (bad || strlen(buf) + 1 >= len)
		return -1;
	return 0;
}

int te_step_record_is_name(const char *name)
{
	size_t len = strlen(name), i;

	if (len <= strlen("trainenv.") + strlen(".json") ||
	    strncmp(name, "trainenv.", 9) != 0 ||
	    strcmp(name + len - 5, ".json") != 0)
		return 0;
	for (i = 9; i < len - 5; i++)
		if (name[i] < '0' || name[i] > '9')
			return 0;
	return 1;
}
