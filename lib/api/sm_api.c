/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ScyllaDB's REST API: the router, query parameters, JSON answers, and the
 * endpoints nodetool calls. ScyllaDB's api/ (storage_service.cc,
 * column_family.cc, system.cc, snitch.cc, gossiper.cc) and its
 * test/nodetool/ (which request each nodetool command sends, and the
 * answers' shapes) are the reference.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_api.h"
#include "sm_core.h"
#include "sm_cql.h"
#include "sm_store.h"

#define PARAM_MAX 256

struct api_req {
	struct sm_http_req *req;
	const struct sm_api_config *cfg;
	const char *rest; /* the path after the route's prefix, NUL-terminated */
	size_t rest_len;
	struct sm_http_str query;
	struct sm_http_buf *out;
};

/* ---- answers ---- */

static void
out_raw(struct api_req *r, const char *s, size_t n)
{
	sm_http_buf_append(r->out, s, n);
}

static void
out_str(struct api_req *r, const char *s)
{
	out_raw(r, s, strlen(s));
}

static void
out_fmt(struct api_req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
out_fmt(struct api_req *r, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_raw(r, buf, SM_MIN((size_t)n, sizeof(buf) - 1));
}

/* A JSON string of @s (escaped as RFC 8259 asks). */
static void
out_json_str(struct api_req *r, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	out_raw(r, "\"", 1);
	for (; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			out_fmt(r, "\\%c", *p);
		else if (*p < 0x20)
			out_fmt(r, "\\u%04x", *p);
		else
			out_raw(r, (const char *)p, 1);
	}
	out_raw(r, "\"", 1);
}

static void
reply_json(struct api_req *r)
{
	sm_http_reply_buf(r->req, 200, "application/json");
}

/* ScyllaDB's error body: {"message": "...", "code": N}. */
static void
reply_error(struct api_req *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
reply_error(struct api_req *r, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->out->len = 0;
	out_str(r, "{\"message\": ");
	out_json_str(r, msg);
	out_fmt(r, ", \"code\": %d}", status);
	sm_http_reply_buf(r->req, status, "application/json");
}

/* An empty answer: ScyllaDB's json_void. */
static void
reply_void(struct api_req *r)
{
	r->out->len = 0;
	out_str(r, "\"\"");
	reply_json(r);
}

static void
reply_bool(struct api_req *r, bool v)
{
	out_str(r, v ? "true" : "false");
	reply_json(r);
}

static void
reply_u64(struct api_req *r, uint64_t v)
{
	out_fmt(r, "%" PRIu64, v);
	reply_json(r);
}

static void
reply_string(struct api_req *r, const char *s)
{
	out_json_str(r, s);
	reply_json(r);
}

/* ---- query parameters ---- */

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode @n bytes at @s into @out (NUL-terminated); false when too long or bad. */
static bool
url_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return false;
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return false;
			c = (char)(hi << 4 | lo);
			i += 2;
		} else if (c == '+') {
			c = ' ';
		}
		if (c == '\0' || o + 1 >= outlen)
			return false;
		out[o++] = c;
	}
	out[o] = '\0';
	return true;
}

/* The value of query parameter @key into @out; false when absent (or undecodable). */
static bool
param(const struct api_req *r, const char *key, char *out, size_t outlen)
{
	const char *p = r->query.p, *end = p + r->query.len, *amp, *eq;
	size_t klen = strlen(key);

	while (p < end) {
		amp = memchr(p, '&', (size_t)(end - p));
		if (amp == NULL)
			amp = end;
		eq = memchr(p, '=', (size_t)(amp - p));
		if (eq == NULL)
			eq = amp;
		if ((size_t)(eq - p) == klen && memcmp(p, key, klen) == 0)
			return url_decode(eq < amp ? eq + 1 : eq, (size_t)(amp - (eq < amp ? eq + 1 : eq)),
					  out, outlen);
		p = amp + 1;
	}
	return false;
}

/* ---- keyspaces and tables ---- */

static bool
keyspace_exists(const char *ks)
{
	const struct sm_catalog *c = sm_store_catalog();

	return sm_cql_system_keyspace(ks) || (c != NULL && sm_catalog_keyspace(c, ks) != NULL);
}

static bool
table_exists(const char *ks, const char *cf)
{
	const struct sm_catalog *c = sm_store_catalog();

	if (sm_cql_system_keyspace(ks))
		return sm_cql_system_table(ks, cf) != NULL;
	return c != NULL && sm_catalog_table(c, ks, cf) != NULL;
}

/* The keyspace in the path ("/storage_service/keyspace_flush/{ks}"), checked. */
static bool
path_keyspace(struct api_req *r, char *ks, size_t len)
{
	if (r->rest_len == 0 || !url_decode(r->rest, r->rest_len, ks, len)) {
		reply_error(r, 400, "missing or bad keyspace name in the path");
		return false;
	}
	if (!keyspace_exists(ks)) {
		reply_error(r, 400, "Can't find a keyspace %s", ks);
		return false;
	}
	return true;
}

/*
 * The comma-separated tables of ?cf= in keyspace @ks, each checked as
 * ScyllaDB's parse_table_infos does. True when all exist (or none given).
 */
static bool
check_tables(struct api_req *r, const char *ks)
{
	char cfs[PARAM_MAX], *save = NULL, *t;

	if (!param(r, "cf", cfs, sizeof(cfs)) || cfs[0] == '\0')
		return true;
	for (t = strtok_r(cfs, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
		if (!table_exists(ks, t)) {
			reply_error(r, 400, "Can't find a column family %s in keyspace %s", t, ks);
			return false;
		}
	}
	return true;
}

/* "ks:cf" in the path (/column_family/autocompaction/{ks}:{cf}), checked. */
static bool
path_table(struct api_req *r, char *ks, size_t kslen, char **cf)
{
	char *colon;

	if (!url_decode(r->rest, r->rest_len, ks, kslen) || (colon = strchr(ks, ':')) == NULL) {
		reply_error(r, 400, "Column family name should be in keyspace:column_family format");
		return false;
	}
	*colon = '\0';
	*cf = colon + 1;
	if (!keyspace_exists(ks)) {
		reply_error(r, 400, "Can't find a keyspace %s", ks);
		return false;
	}
	if (!table_exists(ks, *cf)) {
		reply_error(r, 400, "Column family '%s:%s' not found", ks, *cf);
		return false;
	}
	return true;
}

/* GET /storage_service/keyspaces[?type=all|user|non_local_strategy] */
static void
get_keyspaces(struct api_req *r)
{
	const struct sm_catalog *c = sm_store_catalog();
	char type[32] = "all";
	unsigned i, n = 0;

	param(r, "type", type, sizeof(type));
	out_str(r, "[");
	if (strcmp(type, "user") != 0 && strcmp(type, "non_local_strategy") != 0) {
		out_str(r, "\"system\", \"system_schema\"");
		n = 2;
	}
	for (i = 0; c != NULL && i < c->nks; i++) {
		out_str(r, n++ ? ", " : "");
		out_json_str(r, c->ks[i]->name);
	}
	out_str(r, "]");
	reply_json(r);
}

/* GET /column_family/name/keyspace: the keyspaces that have tables. */
static void
get_cf_keyspaces(struct api_req *r)
{
	const struct sm_catalog *c = sm_store_catalog();
	unsigned i, n = 0;

	out_str(r, "[\"system\", \"system_schema\"");
	n = 2;
	for (i = 0; c != NULL && i < c->nks; i++) {
		out_str(r, n++ ? ", " : "");
		out_json_str(r, c->ks[i]->name);
	}
	out_str(r, "]");
	reply_json(r);
}

/* GET /column_family/name ("ks:cf" each) or /column_family/ ({ks, cf, type} each). */
static void
list_tables(struct api_req *r, bool objects)
{
	const struct sm_catalog *c = sm_store_catalog();
	unsigned i, j, n = 0;

	out_str(r, "[");
	for (i = 0; c != NULL && i < c->nks; i++) {
		const struct sm_keyspace *ks = c->ks[i];

		for (j = 0; j < ks->ntables; j++) {
			out_str(r, n++ ? ", " : "");
			if (objects) {
				out_str(r, "{\"ks\": ");
				out_json_str(r, ks->name);
				out_str(r, ", \"cf\": ");
				out_json_str(r, ks->tables[j]->name);
				out_str(r, ", \"type\": \"ColumnFamilies\"}");
			} else {
				char name[512];

				snprintf(name, sizeof(name), "%s:%s", ks->name, ks->tables[j]->name);
				out_json_str(r, name);
			}
		}
	}
	out_str(r, "]");
	reply_json(r);
}

static void
get_cf_names(struct api_req *r)
{
	list_tables(r, false);
}

static void
get_cf_all(struct api_req *r)
{
	list_tables(r, true);
}

/* ---- flush, compaction, snapshots: nothing to write in memory ---- */

static void
post_flush_all(struct api_req *r)
{
	SM_INFO("REST API: flush: the store is in memory, nothing to write");
	reply_void(r);
}

/* POST /storage_service/keyspace_flush/{ks}[?cf=a,b] */
static void
post_keyspace_flush(struct api_req *r)
{
	char ks[PARAM_MAX];

	if (!path_keyspace(r, ks, sizeof(ks)) || !check_tables(r, ks))
		return;
	SM_INFO("REST API: flush of keyspace %s: the store is in memory, nothing to write", ks);
	reply_void(r);
}

/* POST /storage_service/keyspace_compaction/{ks}[?cf=a,b&flush_memtables=] */
static void
post_keyspace_compaction(struct api_req *r)
{
	char ks[PARAM_MAX];

	if (!path_keyspace(r, ks, sizeof(ks)) || !check_tables(r, ks))
		return;
	SM_INFO("REST API: compaction of keyspace %s: the store is in memory, nothing to compact",
		ks);
	reply_void(r);
}

/* POST /storage_service/compact: every keyspace. */
static void
post_compact_all(struct api_req *r)
{
	SM_INFO("REST API: compaction: the store is in memory, nothing to compact");
	reply_void(r);
}

/*
 * Snapshots: the tags taken, so that listing and clearing answer as ScyllaDB
 * (a snapshot of an in-memory store holds no files). Shared by the shards
 * under a lock: a control path.
 */
#define SNAP_MAX 256
static struct {
	pthread_mutex_t lock;
	unsigned n;
	struct {
		char tag[128];
		char ks[128];
	} s[SNAP_MAX];
} snaps = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* POST /storage_service/snapshots?tag=&kn=a,b&cf=&sf= */
static void
post_snapshot(struct api_req *r)
{
	char tag[128], kn[PARAM_MAX] = "", *save = NULL, *ks;
	bool dup = false;
	unsigned i;

	if (!param(r, "tag", tag, sizeof(tag)) || tag[0] == '\0')
		snprintf(tag, sizeof(tag), "%" PRIu64, sm_now_ms());
	param(r, "kn", kn, sizeof(kn));
	for (ks = strtok_r(kn, ",", &save); ks != NULL; ks = strtok_r(NULL, ",", &save)) {
		if (!keyspace_exists(ks)) {
			reply_error(r, 400, "Can't find a keyspace %s", ks);
			return;
		}
		if (!check_tables(r, ks))
			return;
	}
	pthread_mutex_lock(&snaps.lock);
	for (i = 0; i < snaps.n; i++)
		dup = dup || strcmp(snaps.s[i].tag, tag) == 0;
	if (!dup && snaps.n < SNAP_MAX) {
		snprintf(snaps.s[snaps.n].tag, sizeof(snaps.s[0].tag), "%s", tag);
		param(r, "kn", snaps.s[snaps.n].ks, sizeof(snaps.s[0].ks));
		snaps.n++;
	}
	pthread_mutex_unlock(&snaps.lock);
	if (dup) {
		reply_error(r, 500, "Snapshot %s already exists.", tag);
		return;
	}
	SM_INFO("REST API: snapshot %s: the store is in memory, no files to link", tag);
	reply_void(r);
}

/* DELETE /storage_service/snapshots?tag=&kn= */
static void
delete_snapshot(struct api_req *r)
{
	char tag[128] = "";
	unsigned i, o = 0;

	param(r, "tag", tag, sizeof(tag));
	pthread_mutex_lock(&snaps.lock);
	for (i = 0; i < snaps.n; i++)
		if (tag[0] != '\0' && strcmp(snaps.s[i].tag, tag) != 0)
			snaps.s[o++] = snaps.s[i];
	snaps.n = o;
	pthread_mutex_unlock(&snaps.lock);
	reply_void(r);
}

/* GET /storage_service/snapshots: [{"key": tag, "value": [{"ks", "cf", "total", "live"}]}] */
static void
get_snapshots(struct api_req *r)
{
	unsigned i;

	out_str(r, "[");
	pthread_mutex_lock(&snaps.lock);
	for (i = 0; i < snaps.n; i++) {
		out_str(r, i ? ", {\"key\": " : "{\"key\": ");
		out_json_str(r, snaps.s[i].tag);
		out_str(r, ", \"value\": []}");
	}
	pthread_mutex_unlock(&snaps.lock);
	out_str(r, "]");
	reply_json(r);
}

/* Auto-compaction switches: accepted and remembered as on (nothing compacts). */
static void
post_auto_compaction(struct api_req *r)
{
	char ks[PARAM_MAX];

	if (!path_keyspace(r, ks, sizeof(ks)) || !check_tables(r, ks))
		return;
	reply_void(r);
}

static void
cf_autocompaction(struct api_req *r)
{
	char ks[PARAM_MAX], *cf;

	if (!path_table(r, ks, sizeof(ks), &cf))
		return;
	if (r->req->head.method == SM_HTTP_GET)
		reply_bool(r, true);
	else
		reply_void(r);
}

/* ---- the node: status and info ---- */

static void
each_node(const struct sm_cql_cluster *cl, void (*fn)(struct api_req *, const struct sm_cql_node *,
						     unsigned), struct api_req *r)
{
	unsigned i;

	fn(r, &cl->self, 0);
	for (i = 0; i < cl->npeers; i++)
		fn(r, &cl->peers[i], i + 1);
}

static void
node_host_id(struct api_req *r, const struct sm_cql_node *n, unsigned i)
{
	char id[40];

	sm_uuid_format(&n->host_id, id, sizeof(id));
	out_str(r, i ? ", {\"key\": " : "{\"key\": ");
	out_json_str(r, n->address);
	out_str(r, ", \"value\": ");
	out_json_str(r, id);
	out_str(r, "}");
}

static void
node_address(struct api_req *r, const struct sm_cql_node *n, unsigned i)
{
	out_str(r, i ? ", " : "");
	out_json_str(r, n->address);
}

static uint64_t
local_load(void)
{
	struct sm_shard_snapshot snap;
	int64_t total = 0;
	unsigned i;

	for (i = 0; i < sm_shard_count(); i++) {
		sm_shard_snapshot(i, &snap);
		total += snap.sw.mem_in_use;
	}
	return total > 0 ? (uint64_t)total : 0;
}

static void
node_load(struct api_req *r, const struct sm_cql_node *n, unsigned i)
{
	/* Only this node's is known here; the others are other processes. */
	if (i != 0)
		return;
	out_str(r, "{\"key\": ");
	out_json_str(r, n->address);
	out_fmt(r, ", \"value\": %" PRIu64 "}", local_load());
}

static void
get_host_id(struct api_req *r)
{
	out_str(r, "[");
	each_node(r->cfg->cluster, node_host_id, r);
	out_str(r, "]");
	reply_json(r);
}

static void
get_local_host_id(struct api_req *r)
{
	char id[40];

	sm_uuid_format(&r->cfg->cluster->self.host_id, id, sizeof(id));
	reply_string(r, id);
}

static void
get_live(struct api_req *r)
{
	out_str(r, "[");
	each_node(r->cfg->cluster, node_address, r);
	out_str(r, "]");
	reply_json(r);
}

static void
get_empty_list(struct api_req *r)
{
	out_str(r, "[]");
	reply_json(r);
}

static void
get_load_map(struct api_req *r)
{
	out_str(r, "[");
	each_node(r->cfg->cluster, node_load, r);
	out_str(r, "]");
	reply_json(r);
}

static unsigned
node_tokens(const struct sm_cql_node *n, const int64_t **t)
{
	if (n->ntokens > 0) {
		*t = n->tokens;
		return n->ntokens;
	}
	*t = &n->token;
	return 1;
}

/* Tokens in ring order with their endpoints: [{"key": "token", "value": "address"}]. */
static void
get_tokens_endpoint(struct api_req *r)
{
	const struct sm_cql_cluster *cl = r->cfg->cluster;
	int64_t last = INT64_MIN;
	bool first = true, any = true, started = false;

	out_str(r, "[");
	/* Repeatedly the smallest token above the last: nodes are few. */
	while (any) {
		const struct sm_cql_node *best = NULL;
		int64_t bt = INT64_MAX;
		unsigned i, k, m;

		any = false;
		for (i = 0; i <= cl->npeers; i++) {
			const struct sm_cql_node *n = i == 0 ? &cl->self : &cl->peers[i - 1];
			const int64_t *t;

			m = node_tokens(n, &t);
			for (k = 0; k < m; k++)
				if ((!started || t[k] > last) && (best == NULL || t[k] < bt)) {
					best = n;
					bt = t[k];
				}
		}
		if (best == NULL)
			break;
		any = true;
		started = true;
		last = bt;
		out_fmt(r, "%s{\"key\": \"%" PRId64 "\", \"value\": ", first ? "" : ", ", bt);
		out_json_str(r, best->address);
		out_str(r, "}");
		first = false;
		if (bt == INT64_MAX)
			break;
	}
	out_str(r, "]");
	reply_json(r);
}

/* GET /storage_service/tokens[/{endpoint}] */
static void
get_tokens(struct api_req *r)
{
	const struct sm_cql_cluster *cl = r->cfg->cluster;
	const struct sm_cql_node *n = &cl->self;
	char ep[128];
	const int64_t *t;
	unsigned i, m;

	if (r->rest_len > 0) {
		if (!url_decode(r->rest, r->rest_len, ep, sizeof(ep))) {
			reply_error(r, 400, "bad endpoint");
			return;
		}
		n = NULL;
		for (i = 0; i <= cl->npeers && n == NULL; i++) {
			const struct sm_cql_node *c = i == 0 ? &cl->self : &cl->peers[i - 1];

			if (strcmp(c->address, ep) == 0)
				n = c;
		}
		if (n == NULL) {
			get_empty_list(r);
			return;
		}
	}
	m = node_tokens(n, &t);
	out_str(r, "[");
	for (i = 0; i < m; i++)
		out_fmt(r, "%s\"%" PRId64 "\"", i ? ", " : "", t[i]);
	out_str(r, "]");
	reply_json(r);
}

/* GET /storage_service/ownership[/{ks}]: each node's share of the ring. */
static void
get_ownership(struct api_req *r)
{
	const struct sm_cql_cluster *cl = r->cfg->cluster;
	unsigned i, n = cl->npeers + 1;
	char ks[PARAM_MAX];

	if (r->rest_len > 0) {
		if (!url_decode(r->rest, r->rest_len, ks, sizeof(ks))) {
			reply_error(r, 400, "bad keyspace");
			return;
		}
		if (strcmp(ks, "null") == 0) {
			reply_error(r, 500,
				    "std::runtime_error(Non-system keyspaces don't have the same "
				    "replication settings, effective ownership information is "
				    "meaningless)");
			return;
		}
		if (!keyspace_exists(ks)) {
			reply_error(r, 400, "Can't find a keyspace %s", ks);
			return;
		}
	}
	/* Nodes split the ring evenly (sm_cql_cluster_init's tokens). */
	out_str(r, "[");
	for (i = 0; i < n; i++) {
		const struct sm_cql_node *node = i == 0 ? &cl->self : &cl->peers[i - 1];

		out_str(r, i ? ", {\"key\": " : "{\"key\": ");
		out_json_str(r, node->address);
		out_fmt(r, ", \"value\": \"%.6g\"}", 1.0 / n);
	}
	out_str(r, "]");
	reply_json(r);
}

static void
get_datacenter(struct api_req *r)
{
	reply_string(r, r->cfg->cluster->data_center);
}

static void
get_rack(struct api_req *r)
{
	reply_string(r, r->cfg->cluster->rack);
}

static void
get_true(struct api_req *r)
{
	reply_bool(r, true);
}

static void
get_false(struct api_req *r)
{
	reply_bool(r, false);
}

static void
get_zero(struct api_req *r)
{
	reply_u64(r, 0);
}

static void
get_load(struct api_req *r)
{
	reply_u64(r, local_load());
}

static void
get_generation(struct api_req *r)
{
	reply_u64(r, r->cfg->generation);
}

static void
get_uptime(struct api_req *r)
{
	reply_u64(r, sm_now_ms() - r->cfg->started_ms);
}

static void
get_release_version(struct api_req *r)
{
	reply_string(r, "3.0.8"); /* the Cassandra version ScyllaDB reports, as system.local */
}

static void
get_scylla_release_version(struct api_req *r)
{
	reply_string(r, r->cfg->version);
}

static void
get_cluster_name(struct api_req *r)
{
	reply_string(r, r->cfg->cluster->cluster_name);
}

static void
get_schema_version(struct api_req *r)
{
	const struct sm_catalog *c = sm_store_catalog();
	struct sm_uuid d;
	char v[40] = "";

	/* the version system.local shows (the catalog's content digest) */
	if (c != NULL) {
		sm_cql_schema_digest(c, &d);
		sm_uuid_format(&d, v, sizeof(v));
	}
	reply_string(r, v);
}

static void
get_operation_mode(struct api_req *r)
{
	reply_string(r, "NORMAL");
}

/* ---- the native transport ---- */

struct nt_switch {
	struct sm_http_req *req;
	int err;
	unsigned shard; /* where the request is answered */
};

static void
nt_answer(void *arg)
{
	struct nt_switch *s = arg;
	struct sm_http_buf *b = sm_http_req_body_buf(s->req);

	if (s->err < 0) {
		char msg[160];
		int n = snprintf(msg, sizeof(msg), "{\"message\": \"%s\", \"code\": 500}",
				 strerror(-s->err));

		sm_http_reply(s->req, 500, "application/json", msg, (size_t)n);
	} else {
		b->len = 0;
		sm_http_buf_append(b, "\"\"", 2);
		sm_http_reply_buf(s->req, 200, "application/json");
	}
	sm_free(s);
}

static void
nt_done(void *arg, int err)
{
	struct nt_switch *s = arg;

	s->err = err;
	if (sm_shard_id() == s->shard)
		nt_answer(s);
	else if (sm_submit_to(s->shard, nt_answer, s, NULL) < 0)
		SM_WARN("REST API: native transport switched, but its answer could not be sent");
}

static void
native_transport(struct api_req *r)
{
	const struct sm_api_config *c = r->cfg;
	struct nt_switch *s;

	if (r->req->head.method == SM_HTTP_GET) {
		reply_bool(r, c->native_transport_running == NULL ||
				      c->native_transport_running(c->ctx));
		return;
	}
	if (c->native_transport == NULL) {
		reply_error(r, 400, "the native transport cannot be switched here");
		return;
	}
	s = sm_malloc(sizeof(*s));
	if (s == NULL) {
		reply_error(r, 500, "out of memory");
		return;
	}
	*s = (struct nt_switch){ .req = r->req, .shard = sm_shard_id() };
	c->native_transport(c->ctx, r->req->head.method == SM_HTTP_POST, nt_done, s);
}

/* ---- logging ---- */

/* GET|POST /system/logger/{name}[?level=]: loggers share one level here. */
static void
system_logger(struct api_req *r)
{
	char level[32];
	enum sm_log_level l;

	if (r->req->head.method == SM_HTTP_GET) {
		if (r->rest_len == 0) {
			out_str(r, "[\"shardmark\"]");
			reply_json(r);
			return;
		}
		reply_string(r, sm_log_level_name(sm_log_get_level()));
		return;
	}
	if (!param(r, "level", level, sizeof(level))) {
		reply_error(r, 400, "Missing mandatory parameter 'level'");
		return;
	}
	if (strcmp(level, "trace") == 0)
		snprintf(level, sizeof(level), "debug");
	if (sm_log_parse_level(level, &l) < 0) {
		reply_error(r, 400, "Unknown log level '%s'", level);
		return;
	}
	sm_log_set_level(l);
	reply_void(r);
}

/* POST /system/log?message=&level= : a line in the server's log. */
static void
system_log(struct api_req *r)
{
	char msg[PARAM_MAX * 2], level[32] = "info";
	enum sm_log_level l = SM_LOG_INFO;

	if (!param(r, "message", msg, sizeof(msg))) {
		reply_error(r, 400, "Missing mandatory parameter 'message'");
		return;
	}
	param(r, "level", level, sizeof(level));
	if (sm_log_parse_level(strcmp(level, "trace") == 0 ? "debug" : level, &l) < 0)
		l = SM_LOG_INFO;
	sm_log(l, "%s", msg);
	reply_void(r);
}

/* ---- a stall on purpose: to see the stall detector and what a stall does to latencies ---- */

struct stall_req {
	uint64_t ms;
};

/* On the chosen shard: hog it, as a slow request would. */
static void
stall_run(void *arg)
{
	struct stall_req *q = arg;
	uint64_t until = sm_now_ns() + q->ms * 1000000ull;

	while (sm_now_ns() < until)
		__builtin_ia32_pause();
	sm_free(q);
}

/* POST /debug/stall?ms=N&shard=S : shard S spins N ms (at most 10 s), answered at once. */
static void
post_debug_stall(struct api_req *r)
{
	char v[32];
	unsigned long long ms = 50, shard = 0;
	struct stall_req *q;
	char *end;

	if (param(r, "ms", v, sizeof(v))) {
		ms = strtoull(v, &end, 10);
		if (*end != '\0' || ms == 0 || ms > 10000) {
			reply_error(r, 400, "ms must be 1 to 10000 milliseconds, got '%s'", v);
			return;
		}
	}
	if (param(r, "shard", v, sizeof(v))) {
		shard = strtoull(v, &end, 10);
		if (*end != '\0' || shard >= sm_shard_count()) {
			reply_error(r, 400, "shard must be 0 to %u, got '%s'", sm_shard_count() - 1, v);
			return;
		}
	}
	q = sm_malloc(sizeof(*q));
	if (q == NULL) {
		reply_error(r, 500, "out of memory");
		return;
	}
	q->ms = ms;
	if (sm_submit_to((unsigned)shard, stall_run, q, NULL) < 0) {
		sm_free(q);
		reply_error(r, 500, "could not reach shard %llu", shard);
		return;
	}
	SM_INFO("REST API: shard %llu stalls for %llu ms on request", shard, ms);
	reply_void(r);
}

/* ---- the router ---- */

enum {
	M_GET = 1 << SM_HTTP_GET,
	M_POST = 1 << SM_HTTP_POST,
	M_DELETE = 1 << SM_HTTP_DELETE,
};

struct route {
	unsigned methods;
	const char *path; /* exact, or a prefix ending in '/' when tail is set */
	bool tail;	  /* the rest of the path is an argument */
	void (*fn)(struct api_req *r);
};

static const struct route routes[] = {
	{ M_GET, "/storage_service/keyspaces", false, get_keyspaces },
	{ M_POST, "/storage_service/flush", false, post_flush_all },
	{ M_POST, "/storage_service/keyspace_flush/", true, post_keyspace_flush },
	{ M_POST, "/storage_service/keyspace_compaction/", true, post_keyspace_compaction },
	{ M_POST, "/storage_service/compact", false, post_compact_all },
	{ M_POST, "/storage_service/snapshots", false, post_snapshot },
	{ M_DELETE, "/storage_service/snapshots", false, delete_snapshot },
	{ M_GET, "/storage_service/snapshots", false, get_snapshots },
	{ M_POST | M_DELETE, "/storage_service/auto_compaction/", true, post_auto_compaction },
	{ M_GET | M_POST | M_DELETE, "/storage_service/native_transport", false,
	  native_transport },
	{ M_GET, "/storage_service/host_id", false, get_host_id },
	{ M_GET, "/storage_service/hostid/local", false, get_local_host_id },
	{ M_GET, "/storage_service/nodes/joining", false, get_empty_list },
	{ M_GET, "/storage_service/nodes/leaving", false, get_empty_list },
	{ M_GET, "/storage_service/nodes/moving", false, get_empty_list },
	{ M_GET, "/storage_service/load_map", false, get_load_map },
	{ M_GET, "/storage_service/load", false, get_load },
	{ M_GET, "/storage_service/tokens_endpoint", false, get_tokens_endpoint },
	{ M_GET, "/storage_service/tokens", false, get_tokens },
	{ M_GET, "/storage_service/tokens/", true, get_tokens },
	{ M_GET, "/storage_service/ownership", false, get_ownership },
	{ M_GET, "/storage_service/ownership/", true, get_ownership },
	{ M_GET, "/storage_service/gossiping", false, get_true },
	{ M_GET, "/storage_service/join_ring", false, get_true },
	{ M_GET, "/storage_service/rpc_server", false, get_false },
	{ M_GET, "/storage_service/generation_number", false, get_generation },
	{ M_GET, "/storage_service/release_version", false, get_release_version },
	{ M_GET, "/storage_service/scylla_release_version", false, get_scylla_release_version },
	{ M_GET, "/storage_service/cluster_name", false, get_cluster_name },
	{ M_GET, "/storage_service/schema_version", false, get_schema_version },
	{ M_GET, "/storage_service/operation_mode", false, get_operation_mode },
	{ M_GET, "/storage_service/metrics/exceptions", false, get_zero },
	{ M_GET, "/gossiper/endpoint/live", false, get_live },
	{ M_GET, "/gossiper/endpoint/live/", false, get_live },
	{ M_GET, "/gossiper/endpoint/down", false, get_empty_list },
	{ M_GET, "/gossiper/endpoint/down/", false, get_empty_list },
	{ M_GET, "/snitch/datacenter", false, get_datacenter },
	{ M_GET, "/snitch/rack", false, get_rack },
	{ M_GET, "/column_family/name/keyspace", false, get_cf_keyspaces },
	{ M_GET, "/column_family/name", false, get_cf_names },
	{ M_GET, "/column_family/", false, get_cf_all },
	{ M_GET, "/column_family", false, get_cf_all },
	{ M_GET | M_POST | M_DELETE, "/column_family/autocompaction/", true, cf_autocompaction },
	{ M_GET, "/system/uptime_ms", false, get_uptime },
	{ M_GET, "/system/logger", false, system_logger },
	{ M_GET | M_POST, "/system/logger/", true, system_logger },
	{ M_POST, "/system/log", false, system_log },
	{ M_POST, "/debug/stall", false, post_debug_stall },
};

static void
api_request(void *ctx, struct sm_http_req *req)
{
	const struct sm_http_str *path = &req->head.path;
	struct api_req r = {
		.req = req,
		.cfg = ctx,
		.query = req->head.query,
		.out = sm_http_req_body_buf(req),
	};
	bool path_known = false;
	char rest[PARAM_MAX * 2];
	size_t i, plen = path->len;

	/* "/x/" and "/x" are one path, as Seastar's router takes them */
	if (plen > 1 && path->p[plen - 1] == '/')
		plen--;
	for (i = 0; i < SM_ARRAY_SIZE(routes); i++) {
		const struct route *rt = &routes[i];
		size_t n = strlen(rt->path);
		bool match;

		if (rt->tail) {
			match = plen > n && memcmp(path->p, rt->path, n) == 0;
		} else {
			if (n > 1 && rt->path[n - 1] == '/')
				n--;
			match = plen == n && memcmp(path->p, rt->path, n) == 0;
		}
		if (!match)
			continue;
		path_known = true;
		if (!(rt->methods & (1u << req->head.method)))
			continue;
		r.rest_len = rt->tail ? plen - n : 0;
		if (r.rest_len >= sizeof(rest)) {
			reply_error(&r, 400, "path too long");
			return;
		}
		memcpy(rest, path->p + (rt->tail ? n : 0), r.rest_len);
		rest[r.rest_len] = '\0';
		r.rest = rest;
		rt->fn(&r);
		return;
	}
	if (path_known)
		reply_error(&r, 405, "Method %.*s not allowed here", (int)req->head.method_text.len,
			    req->head.method_text.p);
	else
		reply_error(&r, 404, "Not found");
}

void
sm_api_handler_init(struct sm_http_handler *h, const struct sm_api_config *cfg)
{
	h->request = api_request;
	h->ctx = (void *)(uintptr_t)cfg;
}
