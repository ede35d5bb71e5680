/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DynamoDB Streams: StreamSpecification, ListStreams, DescribeStream,
 * GetShardIterator and GetRecords, with ScyllaDB's behaviour where it
 * has one (alternator/streams.cc, test/alternator/test_streams.py) and
 * DynamoDB's where ScyllaDB differs from it for want of pre-images.
 *
 * A table's stream is kept, as TTL's attribute is, in a hidden tag
 * (system:stream = "E|D <StreamViewType> <creation ms> <disabled ms>"), so
 * that every shard's overlay has it and a write sees it with its table. A
 * disabled stream stays listed and readable (StreamStatus DISABLED); when
 * another one replaces it, it moves to system:stream_prev and stays so for
 * 24 hours after it was disabled, as DynamoDB keeps it (its log's records
 * are past the retention by then anyway); the one before it goes.
 *
 * Records: a write to a table with a stream reads its pre-image in the
 * step that applies it on the owning shard (as an indexed table's does),
 * and alt_stream_record() appends the change to that shard's log
 * (lib/store/sm_changelog.c) right after the mutation applied, with its
 * timestamp: no extra hop, and the order of a key's records is the order
 * of its writes. A write that changes nothing (the same item put again, a
 * missing item deleted) leaves no record, as in DynamoDB (test_streams.py's
 * do_updates_1). Each store shard is one stream shard; GetRecords runs on
 * the shard whose log it reads.
 */

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alt_priv.h"
#include "sm_changelog.h"

#define STREAM_TAG "system:stream"
/* the stream a re-enable replaced, readable until 24 hours after it was disabled */
#define STREAM_PREV_TAG "system:stream_prev"
#define PREV_LIFE_MS (24ll * 3600 * 1000)
#define STREAM_ARN_INFIX "/stream/"
#define SHARD_PREFIX "shardId-"
/* DynamoDB's iterators expire after 15 minutes */
#define ITER_LIFE_MS (15ll * 60 * 1000)
#define MAX_LIST_LIMIT 100
#define MAX_RECORDS_LIMIT 1000
/* GetRecords answers at most 1 MB, as DynamoDB */
#define MAX_RECORDS_BYTES (1u << 20)
#define AWS_REGION "us-east-1"

enum { EV_INSERT, EV_MODIFY, EV_REMOVE };
#define REC_SERVICE 1u /* userIdentity: the service (TTL expiry) */

__thread bool alt_stream_service;

static const char *const view_names[] = {
	[ALT_STREAM_KEYS_ONLY] = "KEYS_ONLY",
	[ALT_STREAM_NEW_IMAGE] = "NEW_IMAGE",
	[ALT_STREAM_OLD_IMAGE] = "OLD_IMAGE",
	[ALT_STREAM_NEW_AND_OLD] = "NEW_AND_OLD_IMAGES",
};

static int
view_parse(const char *s, size_t n)
{
	unsigned i;

	for (i = ALT_STREAM_KEYS_ONLY; i <= ALT_STREAM_NEW_AND_OLD; i++)
		if (strlen(view_names[i]) == n && memcmp(view_names[i], s, n) == 0)
			return (int)i;
	return -1;
}

static bool
view_has_old(unsigned v)
{
	return v == ALT_STREAM_OLD_IMAGE || v == ALT_STREAM_NEW_AND_OLD;
}

static bool
view_has_new(unsigned v)
{
	return v == ALT_STREAM_NEW_IMAGE || v == ALT_STREAM_NEW_AND_OLD;
}

/* ---- the tag ---- */

bool
alt_stream_is_tag(const struct sm_json_doc *d, int key)
{
	return sm_json_str_eq(d, key, STREAM_TAG) || sm_json_str_eq(d, key, STREAM_PREV_TAG);
}

/* The stream of tag @key in @tags: "E|D <view> <created ms> [<disabled ms>]". */
static bool
spec_of(const char *tags, const char *key, struct alt_stream_spec *out)
{
	struct sm_json_doc d;
	char buf[64], view[32];
	struct sm_bytes s;
	long long ms, off = 0;
	char st;
	int e, v;

	memset(out, 0, sizeof(*out));
	if (strstr(tags, STREAM_TAG) == NULL)
		return false; /* the common case: no parse */
	sm_json_doc_init(&d);
	if (sm_json_parse(&d, tags, strlen(tags), 0) == 0) {
		for (e = sm_json_first(&d, 0); e >= 0; e = sm_json_next(&d, e)) {
			if (!sm_json_str_eq(&d, sm_json_get(&d, e, "Key"), key) ||
			    sm_json_str(&d, sm_json_get(&d, e, "Value"), buf, sizeof(buf) - 1, &s) <
				    0 ||
			    s.len >= sizeof(buf))
				continue;
			memmove(buf, s.p, s.len);
			buf[s.len] = '\0';
			off = 0;
			if (sscanf(buf, "%c %31s %lld %lld", &st, view, &ms, &off) < 3 || ms <= 0 ||
			    (v = view_parse(view, strlen(view))) < 0)
				continue;
			out->view = (uint8_t)v;
			out->enabled = st == 'E';
			out->created_ms = ms;
			out->disabled_ms = off > 0 ? off : 0;
		}
	}
	sm_json_doc_release(&d);
	return out->created_ms != 0;
}

bool
alt_stream_spec_of(const char *tags, struct alt_stream_spec *out)
{
	return spec_of(tags, STREAM_TAG, out);
}

static int64_t
now_ms(void);

bool
alt_stream_prev_of(const char *tags, struct alt_stream_spec *out)
{
	if (!spec_of(tags, STREAM_PREV_TAG, out))
		return false;
	out->enabled = false;
	return out->disabled_ms == 0 || now_ms() - out->disabled_ms < PREV_LIFE_MS;
}

/* The tag delta that sets the stream (a JSON array for alt_table_set_tag()'s @add). */
static void
write_tag(struct sm_json_out *o, const char *key, bool enabled, unsigned view, int64_t ms,
	  int64_t disabled_ms)
{
	char v[80];

	snprintf(v, sizeof(v), "%c %s %lld %lld", enabled ? 'E' : 'D', view_names[view],
		 (long long)ms, (long long)disabled_ms);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "Key");
	sm_json_out_str(o, key);
	sm_json_out_key(o, "Value");
	sm_json_out_str(o, v);
	sm_json_out_obj_end(o);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * StreamSpecification @spec: *enabled, and *view when enabled; fails the op
 * with ScyllaDB's and DynamoDB's messages otherwise.
 */
static int
parse_spec(struct alt_op *op, int spec, bool *enabled, unsigned *view)
{
	int en = sm_json_get(&op->doc, spec, "StreamEnabled");
	int vt = sm_json_get(&op->doc, spec, "StreamViewType");
	struct sm_bytes s;
	int v;

	if (sm_json_type(&op->doc, spec) != SM_JSON_OBJECT || en < 0 ||
	    sm_json_bool(&op->doc, en, enabled) < 0) {
		alt_fail(op, "ValidationException",
			 "StreamSpecification needs boolean StreamEnabled");
		return -EINVAL;
	}
	*view = ALT_STREAM_KEYS_ONLY;
	if (!*enabled)
		return 0;
	if (vt < 0) {
		alt_fail(op, "ValidationException",
			 "One or more parameter values were invalid: StreamSpecification: "
			 "StreamViewType is required when StreamEnabled is true");
		return -EINVAL;
	}
	if (sm_json_type(&op->doc, vt) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, vt, &s) < 0 ||
	    (v = view_parse((const char *)s.p, s.len)) < 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at "
			 "'streamSpecification.streamViewType' "
			 "failed to satisfy constraint: Member must satisfy enum value set: "
			 "[NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES, KEYS_ONLY]");
		return -EINVAL;
	}
	*view = (unsigned)v;
	return 0;
}

int
alt_stream_create_tags(struct alt_op *op, int spec, char **tags)
{
	struct sm_json_out o;
	bool enabled;
	unsigned view;
	char *res;
	size_t n;

	if (spec < 0)
		return 0;
	if (parse_spec(op, spec, &enabled, &view) < 0)
		return -EINVAL;
	if (!enabled)
		return 0;
	sm_json_out_init(&o);
	write_tag(&o, STREAM_TAG, true, view, now_ms(), 0);
	n = *tags != NULL ? strlen(*tags) : 0;
	res = o.err == 0 ? sm_malloc(n + o.len + 4) : NULL;
	if (res == NULL) {
		sm_json_out_release(&o);
		alt_fail(op, "InternalServerError", "out of memory");
		return -ENOMEM;
	}
	/* the creation tags, an array, with the stream's one more element */
	if (n >= 2) {
		size_t end = n - 1;

		while (end > 0 && (*tags)[end] != ']')
			end--;
		memcpy(res, *tags, end);
		n = end;
		while (n > 0 && (res[n - 1] == ' ' || res[n - 1] == '\n' || res[n - 1] == '\t'))
			n--;
		if (n > 0 && res[n - 1] != '[')
			res[n++] = ',';
	} else {
		res[0] = '[';
		n = 1;
	}
	memcpy(res + n, o.p, o.len);
	n += o.len;
	res[n++] = ']';
	res[n] = '\0';
	sm_json_out_release(&o);
	sm_free(*tags);
	*tags = res;
	return 0;
}

int
alt_stream_update_table(struct alt_op *op, int spec, struct sm_json_out **delta)
{
	struct alt_stream_spec cur;
	struct sm_json_doc *unused;
	bool enabled;
	unsigned view;

	if (parse_spec(op, spec, &enabled, &view) < 0)
		return -EINVAL;
	alt_stream_spec_of(alt_table_tags(&op->tab), &cur);
	if (enabled && cur.enabled) {
		/* DynamoDB's words; a changed StreamViewType is refused the same way */
		alt_fail(op, "ValidationException",
			 "Table already has an enabled stream: TableName: %s", op->tab.name);
		return -EINVAL;
	}
	if (!enabled && !cur.enabled) {
		alt_fail(op, "ValidationException", "Table has no stream to disable: TableName: %s",
			 op->tab.name);
		return -EINVAL;
	}
	if (alt_tmp_doc(op, delta, &unused) < 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return -ENOMEM;
	}
	sm_json_out_arr_begin(*delta);
	if (enabled) {
		write_tag(*delta, STREAM_TAG, true, view, SM_MAX(now_ms(), cur.created_ms + 1), 0);
		/* the disabled one it replaces stays readable a day (the one before it goes) */
		if (cur.created_ms != 0)
			write_tag(*delta, STREAM_PREV_TAG, false, cur.view, cur.created_ms,
				  cur.disabled_ms);
	} else {
		write_tag(*delta, STREAM_TAG, false, cur.view, cur.created_ms, now_ms());
	}
	sm_json_out_arr_end(*delta);
	if ((*delta)->err != 0) {
		alt_fail(op, "InternalServerError", "out of memory");
		return -ENOMEM;
	}
	return 1;
}

/* ---- names: ARN, label, shard ids, sequence numbers ---- */

/* DynamoDB's stream label: the creation time, ISO 8601 with milliseconds. */
static void
format_label(int64_t ms, char *buf, size_t cap)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

static void
format_arn(const char *table, int64_t ms, char *buf, size_t cap)
{
	char label[48];

	format_label(ms, label, sizeof(label));
	snprintf(buf, cap, ALT_ARN_PREFIX "%s" STREAM_ARN_INFIX "%s", table, label);
}

#define ARN_MAX (sizeof(ALT_ARN_PREFIX) + ALT_MAX_TABLE_NAME + sizeof(STREAM_ARN_INFIX) + 48)

static uint64_t
start_seq(int64_t ms)
{
	return (uint64_t)ms * 1000 << SM_CHANGELOG_SEQ_SHIFT;
}

static void
format_shard(int64_t ms, unsigned shard, char *buf, size_t cap)
{
	snprintf(buf, cap, SHARD_PREFIX "%020lld-%08x", (long long)ms, shard);
}

/* A shard id of the stream created at @ms: its store shard, or -1. */
static int
parse_shard(struct sm_bytes s, int64_t ms)
{
	char want[64];
	unsigned sh;

	/* fixed width: every field is compared, never over-read */
	format_shard(ms, 0, want, sizeof(want));
	if (s.len != strlen(want) || memcmp(s.p, want, s.len - 8) != 0)
		return -1;
	for (sh = 0; sh < 8; sh++) {
		uint8_t c = s.p[s.len - 8 + sh];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -1;
	}
	sh = (unsigned)strtoul((const char *)s.p + s.len - 8, NULL, 16);
	return sh < sm_shard_count() ? (int)sh : -1;
}

/* A decimal sequence number of at most 20 digits that fits 64 bits. */
static int
parse_seq(struct sm_bytes s, uint64_t *out)
{
	uint64_t v = 0;
	uint32_t i;

	if (s.len == 0 || s.len > 20)
		return -EINVAL;
	for (i = 0; i < s.len; i++) {
		unsigned d = (unsigned)(s.p[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/*
 * The stream an ARN names into op->tab and *spec: 0; -EINVAL for an ARN
 * that is not one (ValidationException), -ENOENT for a stream that is not
 * there (ResourceNotFoundException). Nothing answered.
 */
static int
stream_lookup(struct alt_op *op, struct sm_bytes arn, struct alt_stream_spec *spec)
{
	size_t plen = strlen(ALT_ARN_PREFIX), ilen = strlen(STREAM_ARN_INFIX);
	const uint8_t *inf, *label;
	char want[ARN_MAX];
	size_t tlen;

	if (arn.len <= plen || memcmp(arn.p, ALT_ARN_PREFIX, plen) != 0)
		return -EINVAL;
	inf = memmem(arn.p + plen, arn.len - plen, STREAM_ARN_INFIX, ilen);
	if (inf == NULL)
		return -EINVAL;
	tlen = (size_t)(inf - (arn.p + plen));
	label = inf + ilen;
	if (tlen == 0 || tlen > ALT_MAX_TABLE_NAME || (size_t)(arn.p + arn.len - label) != 23)
		return -EINVAL;
	if (op->have_tab) {
		alt_table_release(&op->tab);
		op->have_tab = false;
	}
	if (alt_table_lookup_read(op, (const char *)arn.p + plen, tlen, &op->tab) < 0)
		return -ENOENT;
	op->have_tab = true;
	if (!alt_stream_spec_of(alt_table_tags(&op->tab), spec))
		return -ENOENT;
	format_arn(op->tab.name, spec->created_ms, want, sizeof(want));
	if (strlen(want) == arn.len && memcmp(want, arn.p, arn.len) == 0)
		return 0;
	/* the stream a re-enable replaced */
	if (!alt_stream_prev_of(alt_table_tags(&op->tab), spec))
		return -ENOENT;
	format_arn(op->tab.name, spec->created_ms, want, sizeof(want));
	if (strlen(want) != arn.len || memcmp(want, arn.p, arn.len) != 0)
		return -ENOENT;
	return 0;
}

/* The request's StreamArn into op->tab and *spec; fails the op otherwise. */
static int
stream_from_request(struct alt_op *op, struct alt_stream_spec *spec, char *arn, size_t cap)
{
	int tok = sm_json_get(&op->doc, op->root, "StreamArn");
	struct sm_bytes s;
	int ret;

	if (sm_json_type(&op->doc, tok) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, tok, &s) < 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at 'streamArn' failed to satisfy "
			 "constraint: Member must not be null");
		return -EINVAL;
	}
	ret = stream_lookup(op, s, spec);
	if (ret == -EINVAL) {
		alt_fail(op, "ValidationException", "Invalid StreamArn: %.*s",
			 (int)SM_MIN(s.len, 300u), (const char *)s.p);
		return ret;
	}
	if (ret < 0) {
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: Stream: %.*s not found",
			 (int)SM_MIN(s.len, 300u), (const char *)s.p);
		return ret;
	}
	format_arn(op->tab.name, spec->created_ms, arn, cap);
	return 0;
}

/* An optional Limit between 1 and @max (default @def); fails the op otherwise. */
static int
parse_limit(struct alt_op *op, int def, int max, int *out)
{
	int tok = sm_json_get(&op->doc, op->root, "Limit");
	int64_t v;

	*out = def;
	if (tok < 0)
		return 0;
	if (sm_json_i64(&op->doc, tok, &v) < 0 || v < 1) {
		alt_fail(op, "ValidationException", "Limit must be 1 or more");
		return -EINVAL;
	}
	if (v > max) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value '%lld' at 'limit' failed to satisfy "
			 "constraint: Member must have value less than or equal to %d",
			 (long long)v, max);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

/* ---- DescribeTable ---- */

void
alt_stream_describe(struct sm_json_out *o, const struct alt_table *t)
{
	struct alt_stream_spec spec;
	char arn[ARN_MAX], label[48];

	/* ScyllaDB describes the stream while it is enabled (executor.cc) */
	if (!alt_stream_spec_of(alt_table_tags(t), &spec) || !spec.enabled)
		return;
	format_arn(t->name, spec.created_ms, arn, sizeof(arn));
	format_label(spec.created_ms, label, sizeof(label));
	sm_json_out_key(o, "LatestStreamArn");
	sm_json_out_str(o, arn);
	sm_json_out_key(o, "LatestStreamLabel");
	sm_json_out_str(o, label);
	sm_json_out_key(o, "StreamSpecification");
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "StreamEnabled");
	sm_json_out_bool(o, true);
	sm_json_out_key(o, "StreamViewType");
	sm_json_out_str(o, view_names[spec.view]);
	sm_json_out_obj_end(o);
}

/* ---- ListStreams ---- */

struct list_entry {
	char arn[ARN_MAX];
	char label[48];
	const char *table;
};

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct list_entry *)a)->arn, ((const struct list_entry *)b)->arn);
}

void
alt_list_streams(struct alt_op *op)
{
	const struct sm_catalog *cat = sm_store_catalog();
	int tn = op->table_tok, start = sm_json_get(&op->doc, op->root, "ExclusiveStartStreamArn");
	size_t plen = strlen(ALT_KS_PREFIX);
	struct list_entry *e = NULL;
	struct alt_stream_spec spec;
	struct sm_bytes name = { 0 }, sarn = { 0 };
	unsigned i, j, k, n = 0, cap = 0, first = 0, shown;
	int limit;

	if (parse_limit(op, MAX_LIST_LIMIT, MAX_LIST_LIMIT, &limit) < 0)
		return;
	if (tn >= 0) {
		if (alt_table_from_request_read(op) < 0)
			return;
		/* a copy: the start ARN's lookup below replaces op->tab */
		name.p = (const uint8_t *)alt_keep_str(op, op->tab.name, strlen(op->tab.name));
		if (name.p == NULL)
			goto nomem;
		name.len = (uint32_t)strlen(op->tab.name);
	}
	if (start >= 0) {
		struct alt_stream_spec unused;

		if (sm_json_type(&op->doc, start) != SM_JSON_STRING ||
		    alt_payload_str(op, &op->doc, start, &sarn) < 0 ||
		    stream_lookup(op, sarn, &unused) == -EINVAL) {
			alt_fail(op, "ValidationException", "Invalid ExclusiveStartStreamArn");
			return;
		}
		sarn.p = (const uint8_t *)alt_keep_str(op, sarn.p, sarn.len);
		if (sarn.p == NULL)
			goto nomem;
	}
	for (i = 0; i < cat->nks; i++) {
		const struct sm_keyspace *ks = cat->ks[i];

		if (strncmp(ks->name, ALT_KS_PREFIX, plen) != 0)
			continue;
		for (j = 0; j < ks->ntables; j++) {
			const struct sm_table *t = ks->tables[j];

			/* the base table only (an index's view has none of its own) */
			if (strcmp(t->name, ks->name + plen) != 0 ||
			    (name.p != NULL && strcmp(t->name, (const char *)name.p) != 0) ||
			    !alt_stream_spec_of(alt_table_tags_of(t), &spec))
				continue;
			/* the stream, and the one it replaced while that is readable */
			for (k = 0; k < 2; k++) {
				if (k == 1 && !alt_stream_prev_of(alt_table_tags_of(t), &spec))
					break;
				if (n == cap) {
					struct list_entry *ne;

					cap = cap ? cap * 2 : 16;
					ne = sm_realloc(e, cap * sizeof(*e));
					if (ne == NULL)
						goto nomem;
					e = ne;
				}
				format_arn(t->name, spec.created_ms, e[n].arn, sizeof(e[n].arn));
				format_label(spec.created_ms, e[n].label, sizeof(e[n].label));
				e[n].table = t->name;
				n++;
			}
		}
	}
	/* in ARN order, so that paging neither repeats nor skips a stream */
	if (n > 1)
		qsort(e, n, sizeof(*e), entry_cmp);
	if (sarn.p != NULL)
		while (first < n && strcmp(e[first].arn, (const char *)sarn.p) <= 0)
			first++;
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "Streams");
	sm_json_out_arr_begin(&op->out);
	for (i = first, shown = 0; i < n && shown < (unsigned)limit; i++, shown++) {
		sm_json_out_obj_begin(&op->out);
		sm_json_out_key(&op->out, "StreamArn");
		sm_json_out_str(&op->out, e[i].arn);
		sm_json_out_key(&op->out, "StreamLabel");
		sm_json_out_str(&op->out, e[i].label);
		sm_json_out_key(&op->out, "TableName");
		sm_json_out_str(&op->out, e[i].table);
		sm_json_out_obj_end(&op->out);
	}
	sm_json_out_arr_end(&op->out);
	if (i < n) {
		sm_json_out_key(&op->out, "LastEvaluatedStreamArn");
		sm_json_out_str(&op->out, e[i - 1].arn);
	}
	sm_json_out_obj_end(&op->out);
	sm_free(e);
	alt_finish(op);
	return;
nomem:
	sm_free(e);
	alt_fail(op, "InternalServerError", "out of memory");
}

/* ---- DescribeStream ---- */

static void
write_key_schema(struct sm_json_out *o, const struct alt_table *t)
{
	sm_json_out_key(o, "KeySchema");
	sm_json_out_arr_begin(o);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "AttributeName");
	sm_json_out_str(o, t->hash->name);
	sm_json_out_key(o, "KeyType");
	sm_json_out_str(o, "HASH");
	sm_json_out_obj_end(o);
	if (t->range != NULL) {
		sm_json_out_obj_begin(o);
		sm_json_out_key(o, "AttributeName");
		sm_json_out_str(o, t->range->name);
		sm_json_out_key(o, "KeyType");
		sm_json_out_str(o, "RANGE");
		sm_json_out_obj_end(o);
	}
	sm_json_out_arr_end(o);
}

static int
skip_record(void *ctx, const struct sm_changelog_rec *r);

/* DescribeStream's answer; @ends: each shard's last sequence number (a disabled stream), or NULL. */
struct describe {
	struct alt_op *op;
	struct alt_stream_spec spec;
	unsigned from, limit, pending;
	struct sm_uuid table;
	char arn[ARN_MAX];
	uint64_t ends[]; /* by shard */
};

static void
describe_write(struct describe *d)
{
	struct alt_op *op = d->op;
	struct sm_json_out *o = &op->out;
	char label[48], id[64], num[24];
	unsigned i, nsh = sm_shard_count(), shown;

	format_label(d->spec.created_ms, label, sizeof(label));
	sm_json_out_reset(o);
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "StreamDescription");
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "StreamArn");
	sm_json_out_str(o, d->arn);
	sm_json_out_key(o, "StreamLabel");
	sm_json_out_str(o, label);
	sm_json_out_key(o, "StreamStatus");
	sm_json_out_str(o, d->spec.enabled ? "ENABLED" : "DISABLED");
	sm_json_out_key(o, "StreamViewType");
	sm_json_out_str(o, view_names[d->spec.view]);
	sm_json_out_key(o, "CreationRequestDateTime");
	snprintf(num, sizeof(num), "%lld.%03lld", (long long)(d->spec.created_ms / 1000),
		 (long long)(d->spec.created_ms % 1000));
	sm_json_out_num(o, num, strlen(num));
	sm_json_out_key(o, "TableName");
	sm_json_out_str(o, op->tab.name);
	write_key_schema(o, &op->tab);
	/*
	 * One stream shard per store shard, in id order (zero-padded: the
	 * lexical order DynamoDB's clients expect). The shard count is fixed
	 * for the server's life, so no shard is ever split or closed and none
	 * has a ParentShardId. A disabled stream's shards are closed: each one
	 * ends at its last record (DynamoDB's EndingSequenceNumber), or where
	 * it started when it has none.
	 */
	sm_json_out_key(o, "Shards");
	sm_json_out_arr_begin(o);
	for (i = d->from, shown = 0; i < nsh && shown < d->limit; i++, shown++) {
		uint64_t first = start_seq(d->spec.created_ms);

		format_shard(d->spec.created_ms, i, id, sizeof(id));
		sm_json_out_obj_begin(o);
		sm_json_out_key(o, "ShardId");
		sm_json_out_str(o, id);
		sm_json_out_key(o, "SequenceNumberRange");
		sm_json_out_obj_begin(o);
		sm_json_out_key(o, "StartingSequenceNumber");
		snprintf(num, sizeof(num), "%" PRIu64, first);
		sm_json_out_str(o, num);
		if (!d->spec.enabled) {
			sm_json_out_key(o, "EndingSequenceNumber");
			snprintf(num, sizeof(num), "%" PRIu64, SM_MAX(d->ends[i], first));
			sm_json_out_str(o, num);
		}
		sm_json_out_obj_end(o);
		sm_json_out_obj_end(o);
	}
	sm_json_out_arr_end(o);
	if (i < nsh) {
		format_shard(d->spec.created_ms, i - 1, id, sizeof(id));
		sm_json_out_key(o, "LastEvaluatedShardId");
		sm_json_out_str(o, id);
	}
	sm_json_out_obj_end(o);
	sm_json_out_obj_end(o);
	sm_free(d);
	alt_finish(op);
}

/* On each shard of a disabled stream: where its log ends. */
static void
describe_remote(void *arg)
{
	struct describe *d = arg;
	struct sm_changelog_info info;

	sm_changelog_read(&d->table, (uint64_t)d->spec.created_ms, 0, true, 0, sm_store_now_us(),
			  skip_record, NULL, &info);
	d->ends[sm_shard_id() % sm_shard_count()] = info.last;
}

static void
describe_done(void *arg)
{
	struct describe *d = arg;

	if (--d->pending == 0)
		describe_write(d);
}

void
alt_describe_stream(struct alt_op *op)
{
	int st = sm_json_get(&op->doc, op->root, "ExclusiveStartShardId");
	unsigned i, nsh = sm_shard_count();
	struct describe *d;
	int limit;

	d = sm_calloc(1, sizeof(*d) + nsh * sizeof(d->ends[0]));
	if (d == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	if (stream_from_request(op, &d->spec, d->arn, sizeof(d->arn)) < 0 ||
	    parse_limit(op, MAX_LIST_LIMIT, MAX_LIST_LIMIT, &limit) < 0) {
		sm_free(d);
		return;
	}
	d->op = op;
	d->limit = (unsigned)limit;
	d->table = op->tab.t->id;
	if (st >= 0) {
		struct sm_bytes s;
		int sh;

		/* a shard id that is not one starts past every shard, as DynamoDB has it */
		if (sm_json_type(&op->doc, st) != SM_JSON_STRING ||
		    alt_payload_str(op, &op->doc, st, &s) < 0 ||
		    (sh = parse_shard(s, d->spec.created_ms)) < 0)
			d->from = nsh;
		else
			d->from = (unsigned)sh + 1;
	}
	if (d->spec.enabled) {
		describe_write(d);
		return;
	}
	/* the shards' logs are theirs: ask each where it ends (the stream writes no more) */
	d->pending = 1;
	for (i = 0; i < nsh; i++) {
		d->pending++;
		if (sm_submit_to(i, describe_remote, d, describe_done) < 0)
			d->pending--;
	}
	describe_done(d);
}

/* ---- iterators ---- */

/*
 * An iterator: kind ('H' from the oldest record, 'I' from @seq on, 'i'
 * after @seq), when it was issued, the stream, its shard, and the table
 * (id and name). Opaque to clients; parsed strictly.
 */
struct iter {
	char kind;
	int64_t issued_ms;
	int64_t stream_ms;
	unsigned shard;
	uint64_t seq;
	struct sm_uuid table;
	char name[ALT_MAX_TABLE_NAME + 1];
};

static void
format_iter(const struct iter *it, struct sm_json_out *o)
{
	char buf[64 + 40 + ALT_MAX_TABLE_NAME + 1], id[40];

	sm_uuid_format(&it->table, id, sizeof(id));
	snprintf(buf, sizeof(buf), "%c%lld:%lld:%u:%" PRIu64 ":%s:%s", it->kind,
		 (long long)it->issued_ms, (long long)it->stream_ms, it->shard, it->seq, id,
		 it->name);
	sm_json_out_str(o, buf);
}

static int
parse_iter(struct sm_bytes s, struct iter *it)
{
	char buf[64 + 40 + ALT_MAX_TABLE_NAME + 1], id[40], *p, *end;
	unsigned long long v[4];
	unsigned i;

	if (s.len < 2 || s.len >= sizeof(buf) || memchr(s.p, '\0', s.len) != NULL)
		return -EINVAL;
	memcpy(buf, s.p, s.len);
	buf[s.len] = '\0';
	it->kind = buf[0];
	if (it->kind != 'H' && it->kind != 'I' && it->kind != 'i')
		return -EINVAL;
	p = buf + 1;
	for (i = 0; i < 4; i++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (errno != 0 || *end != ':')
			return -EINVAL;
		p = end + 1;
	}
	end = strchr(p, ':');
	if (end == NULL || (size_t)(end - p) >= sizeof(id))
		return -EINVAL;
	memcpy(id, p, (size_t)(end - p));
	id[end - p] = '\0';
	if (sm_uuid_parse(id, &it->table) < 0 || strlen(end + 1) == 0 ||
	    strlen(end + 1) > ALT_MAX_TABLE_NAME || v[2] >= sm_shard_count() || v[0] > INT64_MAX ||
	    v[1] > INT64_MAX)
		return -EINVAL;
	snprintf(it->name, sizeof(it->name), "%s", end + 1);
	it->issued_ms = (int64_t)v[0];
	it->stream_ms = (int64_t)v[1];
	it->shard = (unsigned)v[2];
	it->seq = v[3];
	return 0;
}

void
alt_get_shard_iterator(struct alt_op *op)
{
	int tt = sm_json_get(&op->doc, op->root, "ShardIteratorType");
	int sq = sm_json_get(&op->doc, op->root, "SequenceNumber");
	int si = sm_json_get(&op->doc, op->root, "ShardId");
	struct alt_stream_spec spec;
	struct sm_bytes s;
	char arn[ARN_MAX];
	struct iter it;
	uint64_t seq = 0;
	int sh;

	memset(&it, 0, sizeof(it));
	if (sm_json_str_eq(&op->doc, tt, "TRIM_HORIZON"))
		it.kind = 'H';
	else if (sm_json_str_eq(&op->doc, tt, "LATEST"))
		it.kind = 'L';
	else if (sm_json_str_eq(&op->doc, tt, "AT_SEQUENCE_NUMBER"))
		it.kind = 'I';
	else if (sm_json_str_eq(&op->doc, tt, "AFTER_SEQUENCE_NUMBER"))
		it.kind = 'i';
	else {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value at 'shardIteratorType' failed to "
			 "satisfy constraint: Member must satisfy enum value set: "
			 "[AFTER_SEQUENCE_NUMBER, LATEST, AT_SEQUENCE_NUMBER, TRIM_HORIZON]");
		return;
	}
	if ((it.kind == 'I' || it.kind == 'i') && sq < 0) {
		alt_fail(op, "ValidationException",
			 "Missing required parameter \"SequenceNumber\"");
		return;
	}
	if ((it.kind == 'H' || it.kind == 'L') && sq >= 0) {
		alt_fail(op, "ValidationException",
			 "Iterator of this type should not have sequence number");
		return;
	}
	if (sq >= 0 && (sm_json_type(&op->doc, sq) != SM_JSON_STRING ||
			alt_payload_str(op, &op->doc, sq, &s) < 0 || parse_seq(s, &seq) < 0)) {
		alt_fail(op, "ValidationException", "Invalid SequenceNumber");
		return;
	}
	if (stream_from_request(op, &spec, arn, sizeof(arn)) < 0)
		return;
	if (sm_json_type(&op->doc, si) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, si, &s) < 0 ||
	    (sh = parse_shard(s, spec.created_ms)) < 0) {
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: Shard does not exist: Invalid ShardId");
		return;
	}
	it.issued_ms = now_ms();
	it.stream_ms = spec.created_ms;
	it.shard = (unsigned)sh;
	it.table = op->tab.t->id;
	snprintf(it.name, sizeof(it.name), "%s", op->tab.name);
	if (it.kind == 'L') {
		/* numbers start from the write's clock: what comes after now */
		it.kind = 'I';
		seq = (uint64_t)sm_store_now_us() << SM_CHANGELOG_SEQ_SHIFT;
	}
	it.seq = seq;
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "ShardIterator");
	format_iter(&it, &op->out);
	sm_json_out_obj_end(&op->out);
	alt_finish(op);
}

/* ---- recording ---- */

/* Per-shard scratch of the recorder (the owning shard's). */
struct rec_scratch {
	struct alt_bytes canon[2];
	struct sm_json_out keys;
	struct alt_bytes rec;
	struct sm_bytes *members; /* key span, value span pairs */
	unsigned cap;
	bool inited;
	uint64_t lost; /* records that could not be kept */
};

static __thread struct rec_scratch rs;

static int
member_cmp(const void *a, const void *b)
{
	const struct sm_bytes *x = a, *y = b;
	uint32_t n = SM_MIN(x->len, y->len);
	int c = memcmp(x->p, y->p, n);

	return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/*
 * @v without the blanks between its tokens: an item's values are canonical
 * but for them (a key copied from a request keeps the client's spacing).
 */
static void
put_minified(struct alt_bytes *o, struct sm_bytes v)
{
	bool in_str = false, esc = false;
	uint32_t i;

	/* the common case: no blank at all (canonical already) */
	if (memchr(v.p, ' ', v.len) == NULL && memchr(v.p, '\n', v.len) == NULL &&
	    memchr(v.p, '\t', v.len) == NULL && memchr(v.p, '\r', v.len) == NULL) {
		memcpy(o->p + o->len, v.p, v.len);
		o->len += v.len;
		return;
	}
	for (i = 0; i < v.len; i++) {
		uint8_t c = v.p[i];

		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			continue;
		} else if (c == '"') {
			in_str = true;
		}
		o->p[o->len++] = c;
	}
}

/* The end of the string that starts at @i (its opening quote) in @p, or @len. */
static size_t
skip_string(const char *p, size_t len, size_t i)
{
	const char *q;
	size_t bs;

	for (i++; i < len; i = (size_t)(q - p) + 1) {
		q = memchr(p + i, '"', len - i);
		if (q == NULL)
			return len;
		/* a quote after an odd number of backslashes is escaped */
		for (bs = 0; q - bs > p + i && q[-1 - (ptrdiff_t)bs] == '\\'; bs++)
			;
		if (bs % 2 == 0)
			return (size_t)(q - p) + 1;
	}
	return len;
}

static size_t
skip_blanks(const char *p, size_t len, size_t i)
{
	while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	return i;
}

/* One member more in rs.members (key span, value span). */
static int
add_member(const char *p, size_t k0, size_t k1, size_t v0, size_t v1, unsigned n)
{
	if (2 * (n + 1) > rs.cap) {
		unsigned cap = rs.cap ? rs.cap * 2 : 64;
		struct sm_bytes *m = sm_realloc(rs.members, cap * sizeof(*m));

		if (m == NULL)
			return -ENOMEM;
		rs.members = m;
		rs.cap = cap;
	}
	rs.members[2 * n] = (struct sm_bytes){ (const uint8_t *)p + k0, (uint32_t)(k1 - k0) };
	rs.members[2 * n + 1] = (struct sm_bytes){ (const uint8_t *)p + v0, (uint32_t)(v1 - v0) };
	return 0;
}

/*
 * Item JSON @p as a canonical object (members sorted by name, no blanks)
 * into @o, so that two images compare bytewise. The text is the server's
 * own (a stored item as a read writes it, or an update's new item), so a
 * scan for the top-level members does, linear and without a validating
 * parse (which cost the write half the stream's price); anything it does
 * not expect is -EINVAL, never a read past @len.
 */
static int
canonical(const char *p, size_t len, struct alt_bytes *o)
{
	size_t i = skip_blanks(p, len, 0), need = 2, k0, k1, v0;
	unsigned n = 0, depth;
	int ret;

	o->len = 0;
	if (i >= len || p[i] != '{')
		return -EINVAL;
	i = skip_blanks(p, len, i + 1);
	while (i < len && p[i] != '}') {
		if (p[i] != '"')
			return -EINVAL;
		k0 = i;
		k1 = i = skip_string(p, len, i);
		i = skip_blanks(p, len, i);
		if (i >= len || p[i] != ':')
			return -EINVAL;
		v0 = i = skip_blanks(p, len, i + 1);
		for (depth = 0; i < len; i++) {
			char c = p[i];

			if (c == '"') {
				i = skip_string(p, len, i) - 1;
			} else if (c == '{' || c == '[') {
				depth++;
			} else if (c == '}' || c == ']') {
				if (depth == 0)
					break;
				depth--;
			} else if (c == ',' && depth == 0) {
				break;
			}
		}
		if (i >= len || i == v0)
			return -EINVAL;
		ret = add_member(p, k0, k1, v0, i, n);
		if (ret < 0)
			return ret;
		need += (k1 - k0) + (i - v0) + 2;
		n++;
		if (p[i] == ',')
			i = skip_blanks(p, len, i + 1);
	}
	if (i >= len)
		return -EINVAL;
	qsort(rs.members, n, 2 * sizeof(*rs.members), member_cmp);
	if (alt_bytes_reserve(o, need) < 0)
		return -ENOMEM;
	alt_bytes_put(o, "{", 1);
	for (i = 0; i < n; i++) {
		if (i > 0)
			alt_bytes_put(o, ",", 1);
		alt_bytes_put(o, rs.members[2 * i].p, rs.members[2 * i].len);
		alt_bytes_put(o, ":", 1);
		put_minified(o, rs.members[2 * i + 1]);
	}
	alt_bytes_put(o, "}", 1);
	return 0;
}

static void
put_u32(struct alt_bytes *b, uint32_t v)
{
	alt_bytes_put(b, &v, sizeof(v));
}

void
alt_stream_record(struct alt_op *op, int64_t ts, const struct sm_key *pk, const struct sm_key *ck,
		  const char *old, size_t olen, const char *nw, size_t nlen)
{
	const struct alt_table *t = &op->tab;
	struct alt_bytes *co = &rs.canon[0], *cn = &rs.canon[1];
	unsigned view = t->stream;
	bool keep_old, keep_new;
	uint8_t ev, flags = op->stream_service ? REC_SERVICE : 0;
	uint64_t seq;
	size_t need;

	if (!rs.inited) {
		sm_json_out_init(&rs.keys);
		rs.inited = true;
	}
	if (old == NULL && nw == NULL)
		return; /* a missing item stays missing */
	if ((old != NULL && canonical(old, olen, co) < 0) ||
	    (nw != NULL && canonical(nw, nlen, cn) < 0))
		goto fail;
	if (old != NULL && nw != NULL && co->len == cn->len && memcmp(co->p, cn->p, co->len) == 0)
		return; /* nothing changed: DynamoDB records nothing */
	ev = old == NULL ? EV_INSERT : nw == NULL ? EV_REMOVE : EV_MODIFY;
	keep_old = old != NULL && view_has_old(view);
	keep_new = nw != NULL && view_has_new(view);
	sm_json_out_reset(&rs.keys);
	sm_json_out_obj_begin(&rs.keys);
	sm_json_out_key(&rs.keys, t->hash->name);
	alt_write_key_value(&rs.keys, t->hash_type, pk->part[0]);
	if (t->range != NULL && ck != NULL && ck->n > 0) {
		sm_json_out_key(&rs.keys, t->range->name);
		alt_write_key_value(&rs.keys, t->range_type, ck->part[0]);
	}
	sm_json_out_obj_end(&rs.keys);
	if (rs.keys.err != 0)
		goto fail;
	/* [event][flags][keys][old][new], each a u32 length and its JSON (0: none) */
	need = 2 + 12 + rs.keys.len + (keep_old ? co->len : 0) + (keep_new ? cn->len : 0);
	rs.rec.len = 0;
	if (alt_bytes_reserve(&rs.rec, need) < 0)
		goto fail;
	alt_bytes_put(&rs.rec, &ev, 1);
	alt_bytes_put(&rs.rec, &flags, 1);
	put_u32(&rs.rec, (uint32_t)rs.keys.len);
	alt_bytes_put(&rs.rec, rs.keys.p, rs.keys.len);
	put_u32(&rs.rec, keep_old ? (uint32_t)co->len : 0);
	if (keep_old)
		alt_bytes_put(&rs.rec, co->p, co->len);
	put_u32(&rs.rec, keep_new ? (uint32_t)cn->len : 0);
	if (keep_new)
		alt_bytes_put(&rs.rec, cn->p, cn->len);
	if (sm_changelog_append(&t->t->id, (uint64_t)t->stream_ms, ts, rs.rec.p,
				(uint32_t)rs.rec.len, &seq) < 0)
		goto fail;
	/* a large buffer goes back once the burst is over */
	if (rs.rec.cap > (1u << 20) && need < 4096) {
		sm_free(rs.rec.p);
		memset(&rs.rec, 0, sizeof(rs.rec));
	}
	return;
fail:
	/* the write stands (it was applied); its record could not be kept */
	if (rs.lost++ == 0)
		SM_WARN("alternator: streams: out of memory: a change record of table %s was not "
			"kept (more are counted, not logged)",
			t->name);
}

void
alt_stream_shard_fini(void)
{
	if (rs.inited) {
		sm_json_out_release(&rs.keys);
	}
	sm_free(rs.canon[0].p);
	sm_free(rs.canon[1].p);
	sm_free(rs.members);
	sm_free(rs.rec.p);
	memset(&rs, 0, sizeof(rs));
}

/* ---- GetRecords ---- */

struct get_records {
	struct alt_op *op;
	struct iter it;
	unsigned view;
	int limit;
	bool trimmed, closed;
	unsigned n;
	uint64_t last;
};

static uint32_t
get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* One record as DynamoDB Streams writes it (runs on the log's shard, into op->out). */
static int
write_record(void *ctx, const struct sm_changelog_rec *r)
{
	static const char *const names[] = { "INSERT", "MODIFY", "REMOVE" };
	struct get_records *g = ctx;
	struct sm_json_out *o = &g->op->out;
	const uint8_t *p = r->data;
	uint32_t klen, olen, nlen;
	char num[48];

	if (o->len > MAX_RECORDS_BYTES)
		return 1;
	if (r->len < 14 || p[0] > EV_REMOVE)
		return 0; /* not one of ours: never written */
	klen = get_u32(p + 2);
	if ((uint64_t)14 + klen > r->len)
		return 0;
	olen = get_u32(p + 6 + klen);
	if ((uint64_t)14 + klen + olen > r->len)
		return 0;
	nlen = get_u32(p + 10 + klen + olen);
	if ((uint64_t)14 + klen + olen + nlen != r->len)
		return 0;
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "awsRegion");
	sm_json_out_str(o, AWS_REGION);
	sm_json_out_key(o, "dynamodb");
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "ApproximateCreationDateTime");
	sm_json_out_i64(o, r->ts_us / 1000000);
	sm_json_out_key(o, "Keys");
	sm_json_out_raw(o, (const char *)p + 6, klen);
	if (nlen > 0) {
		sm_json_out_key(o, "NewImage");
		sm_json_out_raw(o, (const char *)p + 14 + klen + olen, nlen);
	}
	if (olen > 0) {
		sm_json_out_key(o, "OldImage");
		sm_json_out_raw(o, (const char *)p + 10 + klen, olen);
	}
	sm_json_out_key(o, "SequenceNumber");
	snprintf(num, sizeof(num), "%" PRIu64, r->seq);
	sm_json_out_str(o, num);
	sm_json_out_key(o, "SizeBytes");
	sm_json_out_u64(o, (uint64_t)klen + olen + nlen);
	sm_json_out_key(o, "StreamViewType");
	sm_json_out_str(o, view_names[g->view]);
	sm_json_out_obj_end(o);
	sm_json_out_key(o, "eventID");
	snprintf(num, sizeof(num), "%016" PRIx64 "%08x%08x", r->seq, g->it.shard,
		 (unsigned)(g->it.stream_ms & 0xffffffffu));
	sm_json_out_str(o, num);
	sm_json_out_key(o, "eventName");
	sm_json_out_str(o, names[p[0]]);
	sm_json_out_key(o, "eventSource");
	sm_json_out_str(o, "aws:dynamodb");
	sm_json_out_key(o, "eventVersion");
	sm_json_out_str(o, "1.1");
	if (p[1] & REC_SERVICE) {
		/* DynamoDB's mark on a TTL deletion (the API's Identity shape: boto3
		 * reads PrincipalId and Type; Lambda's events spell them in lower case) */
		sm_json_out_key(o, "userIdentity");
		sm_json_out_obj_begin(o);
		sm_json_out_key(o, "PrincipalId");
		sm_json_out_str(o, "dynamodb.amazonaws.com");
		sm_json_out_key(o, "Type");
		sm_json_out_str(o, "Service");
		sm_json_out_obj_end(o);
	}
	sm_json_out_obj_end(o);
	g->last = r->seq;
	g->n++;
	return 0;
}

static int
skip_record(void *ctx, const struct sm_changelog_rec *r)
{
	(void)ctx;
	(void)r;
	return 1;
}

/* On the log's shard: the records, into op->out's Records array. */
static void
records_remote(void *arg)
{
	struct get_records *g = arg;
	struct sm_changelog_info info;
	int64_t now = sm_store_now_us();
	bool incl = g->it.kind != 'i';
	int ret;

	/* what was trimmed first: an iterator into lost records says so */
	sm_changelog_read(&g->it.table, (uint64_t)g->it.stream_ms, 0, true, 0, now, skip_record,
			  NULL, &info);
	/* (a shard's StartingSequenceNumber reads what is left, as TRIM_HORIZON: test_streams.py) */
	if (g->it.kind != 'H' && info.trimmed != 0 && g->it.seq > start_seq(g->it.stream_ms) &&
	    (incl ? g->it.seq <= info.trimmed : g->it.seq < info.trimmed)) {
		g->trimmed = true;
		return;
	}
	ret = sm_changelog_read(&g->it.table, (uint64_t)g->it.stream_ms, g->it.seq, incl,
				(unsigned)g->limit, now, write_record, g, &info);
	if (ret < 0)
		g->op->out.err = ret;
}

static void
records_done(void *arg)
{
	struct get_records *g = arg;
	struct alt_op *op = g->op;
	struct iter next = g->it;

	if (g->trimmed) {
		sm_free(g);
		alt_fail(op, "TrimmedDataAccessException",
			 "The operation attempted to read past the oldest stream record in a "
			 "shard: the records it names were trimmed (24 hours, or the log's memory "
			 "bound)");
		return;
	}
	sm_json_out_arr_end(&op->out);
	if (g->n > 0) {
		next.kind = 'i';
		next.seq = g->last;
	}
	next.issued_ms = now_ms();
	/* a disabled stream's shards are closed: at their end, no next iterator */
	if (!(g->closed && g->n == 0)) {
		sm_json_out_key(&op->out, "NextShardIterator");
		format_iter(&next, &op->out);
	}
	sm_json_out_obj_end(&op->out);
	sm_free(g);
	if (op->out.err != 0) {
		alt_fail(op, "InternalServerError", "out of memory reading the stream");
		return;
	}
	alt_finish(op);
}

void
alt_get_records(struct alt_op *op)
{
	int tok = sm_json_get(&op->doc, op->root, "ShardIterator");
	struct alt_stream_spec spec;
	struct get_records *g;
	struct sm_bytes s;
	struct iter it;
	int64_t now;
	int limit;

	if (sm_json_type(&op->doc, tok) != SM_JSON_STRING ||
	    alt_payload_str(op, &op->doc, tok, &s) < 0) {
		alt_fail(op, "ValidationException",
			 "1 validation error detected: Value null at 'shardIterator' failed to "
			 "satisfy constraint: Member must not be null");
		return;
	}
	if (parse_iter(s, &it) < 0) {
		alt_fail(op, "ValidationException", "Invalid ShardIterator");
		return;
	}
	if (parse_limit(op, MAX_RECORDS_LIMIT, MAX_RECORDS_LIMIT, &limit) < 0)
		return;
	if (alt_table_lookup_read(op, it.name, strlen(it.name), &op->tab) < 0 ||
	    (op->have_tab = true, memcmp(&op->tab.t->id, &it.table, sizeof(it.table)) != 0) ||
	    !alt_stream_spec_of(alt_table_tags(&op->tab), &spec) ||
	    (spec.created_ms != it.stream_ms &&
	     (!alt_stream_prev_of(alt_table_tags(&op->tab), &spec) ||
	      spec.created_ms != it.stream_ms))) {
		alt_fail(op, "ResourceNotFoundException",
			 "Requested resource not found: the stream of this iterator no longer "
			 "exists");
		return;
	}
	now = now_ms();
	if (now - it.issued_ms > ITER_LIFE_MS) {
		alt_fail(op, "ExpiredIteratorException",
			 "Iterator expired: it was issued %lld ms ago, iterators live %lld ms",
			 (long long)(now - it.issued_ms), (long long)ITER_LIFE_MS);
		return;
	}
	g = sm_calloc(1, sizeof(*g));
	if (g == NULL) {
		alt_fail(op, "InternalServerError", "out of memory");
		return;
	}
	g->op = op;
	g->it = it;
	g->view = spec.view;
	g->limit = limit;
	g->closed = !spec.enabled;
	sm_json_out_reset(&op->out);
	sm_json_out_obj_begin(&op->out);
	sm_json_out_key(&op->out, "Records");
	sm_json_out_arr_begin(&op->out);
	if (sm_submit_to(it.shard, records_remote, g, records_done) < 0) {
		sm_free(g);
		alt_fail(op, "InternalServerError", "out of memory reaching the stream's shard");
	}
}
