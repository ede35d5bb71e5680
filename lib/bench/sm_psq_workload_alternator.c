/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf-simple-query's Alternator frontend (sm_psq_workload.h), as ScyllaDB's
 * tool had it until 2025: table alternator_table with hash key p (the key
 * as decimal text), the same UpdateItem/GetItem/DeleteItem JSON requests to
 * the executor (JSON parsing and the JSON answer included, no HTTP).
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "sm_alternator.h"
#include "sm_psq_workload.h"
#include "sm_store.h"

static struct {
	struct sm_psq *p;
	int status;
	char msg[512];
	struct sm_task task;
	bool ttl_asked;
	int64_t expiration; /* write_ttl's: an hour ahead, so the scanner reads and deletes none */
} ctl;

static unsigned
alt_owner_of(const struct sm_psq *p, uint64_t seq)
{
	struct sm_key k;
	char text[24];

	(void)p;
	snprintf(text, sizeof(text), "%" PRIu64, seq);
	k.n = 1;
	k.part[0].p = (const uint8_t *)text;
	k.part[0].len = (uint32_t)strlen(text);
	return sm_key_shard(&k);
}

static void
alt_reply(void *ctx, int status, const char *json, size_t len)
{
	sm_psq_op_done(ctx, status == 200, json, len);
}

static void
build_request(struct sm_psq_worker *w, enum sm_psq_mode mode, uint64_t seq, bool write)
{
	char *json = (char *)w->req;
	char v[SM_PSQ_VALUE_LEN + 1];
	int n;

	memset(v, 'x', SM_PSQ_VALUE_LEN);
	v[SM_PSQ_VALUE_LEN] = '\0';
	if (mode == SM_PSQ_WRITE_TTL) {
		w->op = "UpdateItem";
		n = snprintf(
			json, sizeof(w->req),
			"{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			"\"}},\"UpdateExpression\":\"set C0 = :C0, C1 = :C1, C2 = :C2, C3 = :C3, "
			"C4 = :C4, expiration = :e\",\"ExpressionAttributeValues\":{\":C0\":{\"S\":"
			"\"%s\"},\":C1\":{\"S\":\"%s\"},\":C2\":{\"S\":\"%s\"},\":C3\":{\"S\":"
			"\"%s\"},\":C4\":{\"S\":\"%s\"},\":e\":{\"N\":\"%lld\"}},"
			"\"ReturnValues\":\"NONE\"}",
			seq, v, v, v, v, v, (long long)ctl.expiration);
	} else if (write || mode == SM_PSQ_WRITE || mode == SM_PSQ_WRITE_GSI) {
		w->op = "UpdateItem";
		n = snprintf(
			json, sizeof(w->req),
			"{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			"\"}},\"UpdateExpression\":\"set C0 = :C0, C1 = :C1, C2 = :C2, C3 = :C3, "
			"C4 = :C4\",\"ExpressionAttributeValues\":{\":C0\":{\"S\":\"%s\"},"
			"\":C1\":{\"S\":\"%s\"},\":C2\":{\"S\":\"%s\"},\":C3\":{\"S\":\"%s\"},"
			"\":C4\":{\"S\":\"%s\"}},\"ReturnValues\":\"NONE\"}",
			seq, v, v, v, v, v);
	} else if (mode == SM_PSQ_WRITE_RMW) {
		/* perf-alternator's write_rmw: a condition makes it read-modify-write */
		w->op = "UpdateItem";
		n = snprintf(json, sizeof(w->req),
			     "{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			     "\"}},\"UpdateExpression\":\"set C0 = :C0, C1 = :C1\","
			     "\"ConditionExpression\":\"(NOT attribute_exists(C2)) OR size(C3) <= "
			     ":val1\",\"ExpressionAttributeValues\":{\":C0\":{\"S\":\"%s\"},"
			     "\":C1\":{\"S\":\"%s\"},\":val1\":{\"N\":\"100\"}},"
			     "\"ReturnValues\":\"NONE\"}",
			     seq, v, v);
	} else if (mode == SM_PSQ_DELETE) {
		w->op = "DeleteItem";
		n = snprintf(json, sizeof(w->req),
			     "{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			     "\"}},\"ReturnValues\":\"NONE\"}",
			     seq);
	} else {
		w->op = "GetItem";
		n = snprintf(json, sizeof(w->req),
			     "{\"TableName\":\"alternator_table\",\"Key\":{\"p\":{\"S\":\"%" PRIu64
			     "\"}},\"ConsistentRead\":false,\"ReturnConsumedCapacity\":\"TOTAL\"}",
			     seq);
	}
	w->req_len = (size_t)n;
}

/* The workers' task: the next key's request, to the executor. */
static void
alt_issue(void *arg)
{
	struct sm_psq_worker *w = arg;
	uint64_t seq;

	if (sm_psq_idle(w))
		return;
	seq = sm_psq_next_key(w);
	build_request(w, w->sh->p->prm.mode, seq, w->populating);
	if (sm_alternator_execute(w->op, (const char *)w->req, w->req_len, alt_reply, w) < 0)
		sm_psq_op_done(w, false, "out of memory", 13);
}

/*
 * write_stream's task (a workload of its own, so the others' requests are
 * built as before): write's UpdateItem, but a write that changes nothing
 * leaves no record, so every request gives C0 a new value.
 */
static void
alt_issue_stream(void *arg)
{
	static __thread uint64_t writes;
	struct sm_psq_worker *w = arg;
	char *json = (char *)w->req, *c0;
	uint64_t seq;

	if (sm_psq_idle(w))
		return;
	seq = sm_psq_next_key(w);
	build_request(w, SM_PSQ_WRITE, seq, w->populating);
	/* C0's value follows its placeholder in ExpressionAttributeValues */
	c0 = strstr(json, "\":C0\":{\"S\":\"");
	if (c0 != NULL) {
		char v[SM_PSQ_VALUE_LEN + 1];

		snprintf(v, sizeof(v), "%0*" PRIu64, SM_PSQ_VALUE_LEN, ++writes);
		memcpy(c0 + strlen("\":C0\":{\"S\":\""), v, SM_PSQ_VALUE_LEN);
	}
	if (sm_alternator_execute(w->op, (const char *)w->req, w->req_len, alt_reply, w) < 0)
		sm_psq_op_done(w, false, "out of memory", 13);
}

/* ---- setup on shard 0: the table ---- */

static void
ctl_reply(void *ctx, int status, const char *json, size_t len)
{
	(void)ctx;
	ctl.status = status == 200 ? 0 : -EIO;
	snprintf(ctl.msg, sizeof(ctl.msg), "%.*s", (int)SM_MIN(len, 400u), json);
	sm_task_schedule(&ctl.task);
}

/* The CreateTable answer (then write_ttl's UpdateTimeToLive), on shard 0. */
static void
ctl_created(void *arg)
{
	static const char ttl[] = "{\"TableName\":\"alternator_table\",\"TimeToLiveSpecification\":"
				  "{\"AttributeName\":\"expiration\",\"Enabled\":true}}";

	(void)arg;
	if (ctl.status != 0) {
		sm_psq_setup_fail(ctl.p, ctl.ttl_asked ? "UpdateTimeToLive" : "CreateTable",
				  ctl.msg);
		return;
	}
	if (ctl.p->prm.mode == SM_PSQ_WRITE_TTL && !ctl.ttl_asked) {
		ctl.ttl_asked = true;
		sm_alternator_execute("UpdateTimeToLive", ttl, sizeof(ttl) - 1, ctl_reply, NULL);
		return;
	}
	sm_psq_setup_done(ctl.p);
}

static void
alt_setup(struct sm_psq *p)
{
	static char create[768];
	bool gsi = p->prm.mode == SM_PSQ_WRITE_GSI;
	int n;

	n = snprintf(create, sizeof(create),
		     "{\"AttributeDefinitions\":[{\"AttributeName\":\"p\",\"AttributeType\":"
		     "\"S\"}%s],\"TableName\":\"alternator_table\",\"BillingMode\":"
		     "\"PAY_PER_REQUEST\",\"KeySchema\":[{\"AttributeName\":\"p\",\"KeyType\":"
		     "\"HASH\"}]%s%s}",
		     gsi ? ",{\"AttributeName\":\"C0\",\"AttributeType\":\"S\"}" : "",
		     gsi ? ",\"GlobalSecondaryIndexes\":[{\"IndexName\":\"C0_index\","
			   "\"KeySchema\":[{\"AttributeName\":\"C0\",\"KeyType\":\"HASH\"}],"
			   "\"Projection\":{\"ProjectionType\":\"ALL\"}}]"
			 : "",
		     p->prm.mode == SM_PSQ_WRITE_STREAM
			     ? ",\"StreamSpecification\":{\"StreamEnabled\":true,"
			       "\"StreamViewType\":\"NEW_AND_OLD_IMAGES\"}"
			     : "");
	ctl.p = p;
	ctl.ttl_asked = false;
	ctl.expiration = (int64_t)time(NULL) + 3600;
	sm_task_init(&ctl.task, ctl_created, NULL);
	sm_alternator_execute("CreateTable", create, (size_t)n, ctl_reply, NULL);
}

const struct sm_psq_workload sm_psq_workload_alternator = {
	.name = "alternator",
	.owner_of = alt_owner_of,
	.setup = alt_setup,
	.issue = alt_issue,
};

const struct sm_psq_workload sm_psq_workload_alternator_stream = {
	.name = "alternator",
	.owner_of = alt_owner_of,
	.setup = alt_setup,
	.issue = alt_issue_stream,
};
