/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rows of the system tables, generated from the cluster description
 * and the calling shard's catalog into the per-shard scratch area: values
 * serialized as sm_types.h describes, cells indexed by the tables' column
 * lists in sm_cql_system.c.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_core.h"
#include "cql_system_priv.h"
#include "sm_index.h"

#define RELEASE_VERSION "3.0.8" /* Scylla's; >= 3.0 < 4 makes drivers use system_schema v3 */
/* system.versions: a ScyllaDB version (what shardmark behaves as), then what it is */
#define SCYLLA_VERSION "2025.1.0-shardmark." SM_VERSION
#define CQL_VERSION "3.3.1"
#define NATIVE_PROTOCOL_VERSION "4"
#define PARTITIONER "org.apache.cassandra.dht.Murmur3Partitioner"
#define SHARDING_ALGORITHM "biased-token-round-robin"
#define STRATEGY_PREFIX "org.apache.cassandra.locator."

/* Table options as Scylla shows them for a table created without WITH. */
#define DEF_BLOOM_FP 0.01
#define DEF_CRC_CHECK 1.0
#define DEF_GC_GRACE 864000
#define DEF_MAX_INDEX_INTERVAL 2048
#define DEF_MIN_INDEX_INTERVAL 128
#define DEF_SPECULATIVE_RETRY "99.0PERCENTILE"

/* ---- the scratch area: rows of cells, values in one growing buffer ---- */

static uint8_t *
reserve(struct sys_state *s, size_t n)
{
	size_t cap = s->bcap;
	uint8_t *b;

	if (s->blen + n <= s->bcap)
		return s->buf + s->blen;
	while (cap < s->blen + n)
		cap *= 2;
	b = sm_realloc(s->buf, cap);
	if (b == NULL) {
		s->err = -ENOMEM;
		return NULL;
	}
	s->buf = b;
	s->bcap = cap;
	return s->buf + s->blen;
}

static struct sys_cell *
cell(struct sys_state *s, unsigned col)
{
	return &s->rows[s->nrows - 1].c[col];
}

/* Start a row with every cell null; false when memory ran out. */
static bool
row_begin(struct sys_state *s)
{
	struct sys_row *r;
	unsigned i;

	if (s->err != 0)
		return false;
	if (s->nrows == s->rcap) {
		unsigned cap = s->rcap * 2;

		r = sm_realloc(s->rows, cap * sizeof(*r));
		if (r == NULL) {
			s->err = -ENOMEM;
			return false;
		}
		s->rows = r;
		s->rcap = cap;
	}
	r = &s->rows[s->nrows++];
	r->start = s->blen;
	for (i = 0; i < s->tab->def->ncols; i++)
		r->c[i].len = SYS_NULL;
	return true;
}

/* Keep the row only when it is in the partition a single-partition read names. */
static void
row_end(struct sys_state *s)
{
	const struct sm_table *t = s->tab->t;
	const struct sys_row *r = &s->rows[s->nrows - 1];
	unsigned i;

	if (s->sel->range)
		return;
	for (i = 0; i < t->npk; i++) {
		struct sm_bytes v = sys_cell_bytes(s, r, s->tab->def_of[i]);
		const struct sm_bytes *k = &s->sel->pk.part[i];

		if (s->sel->pk.n != t->npk || v.len != k->len ||
		    (v.len > 0 && memcmp(v.p, k->p, v.len) != 0)) {
			s->blen = r->start;
			s->nrows--;
			return;
		}
	}
}

static void
put_bytes(struct sys_state *s, unsigned col, const void *p, size_t n)
{
	uint8_t *d;

	if (s->err != 0 || (d = reserve(s, n)) == NULL)
		return;
	if (n > 0)
		memcpy(d, p, n);
	cell(s, col)->off = (uint32_t)s->blen;
	cell(s, col)->len = (uint32_t)n;
	s->blen += n;
}

static void
put_text(struct sys_state *s, unsigned col, const char *text)
{
	put_bytes(s, col, text, strlen(text));
}

static void
put_int(struct sys_state *s, unsigned col, int32_t v)
{
	uint8_t b[4] = { (uint8_t)((uint32_t)v >> 24), (uint8_t)((uint32_t)v >> 16),
			 (uint8_t)((uint32_t)v >> 8), (uint8_t)v };

	put_bytes(s, col, b, sizeof(b));
}

static void
put_bool(struct sys_state *s, unsigned col, bool v)
{
	uint8_t b = v;

	put_bytes(s, col, &b, 1);
}

static void
put_double(struct sys_state *s, unsigned col, double v)
{
	uint8_t b[8];
	uint64_t u;
	unsigned i;

	memcpy(&u, &v, sizeof(u));
	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(u >> (56 - 8 * i));
	put_bytes(s, col, b, sizeof(b));
}

static void
put_uuid(struct sys_state *s, unsigned col, const struct sm_uuid *u)
{
	put_bytes(s, col, u->b, sizeof(u->b));
}

/* An inet from a validated numeric address (sm_cql_cluster_init canonicalised it). */
static void
put_inet(struct sys_state *s, unsigned col, const char *address)
{
	uint8_t a[16];

	if (inet_pton(AF_INET, address, a) == 1)
		put_bytes(s, col, a, 4);
	else if (inet_pton(AF_INET6, address, a) == 1)
		put_bytes(s, col, a, 16);
}

static void
put_type_name(struct sys_state *s, unsigned col, const struct sm_type *type)
{
	char small[2];
	size_t n = sm_type_name(type, small, sizeof(small));
	uint8_t *d;

	if (s->err != 0 || (d = reserve(s, n + 1)) == NULL)
		return;
	sm_type_name(type, (char *)d, n + 1);
	cell(s, col)->off = (uint32_t)s->blen;
	cell(s, col)->len = (uint32_t)n;
	s->blen += n;
}

/* Text order: unsigned bytes, shorter first on a common prefix. */
static int
text_cmp(struct sm_bytes a, struct sm_bytes b)
{
	size_t n = SM_MIN(a.len, b.len);
	int c = n > 0 ? memcmp(a.p, b.p, n) : 0;

	if (c != 0)
		return c;
	return a.len < b.len ? -1 : a.len > b.len;
}

/*
 * A set<text> (@n elements) or a map<text, ...> (@n pairs, key then value)
 * in canonical order, sorted by text with duplicates dropped (a map keeps
 * the last value of a key). Sorts @e in place; elements must not point into
 * the scratch buffer.
 */
static void
put_coll(struct sys_state *s, unsigned col, struct sm_bytes *e, unsigned n, bool is_map)
{
	unsigned per = is_map ? 2 : 1, i, j, k, out, w;
	struct sm_bytes *tmp, *from, *to, *swap;
	size_t size;
	uint8_t *d;

	/* Stable (the last value of a key wins): insertion sort for the few
	 * entries of most maps, merge sort for a client's thousands. */
	for (i = 1; i < n && n <= 32; i++) {
		struct sm_bytes x[2];

		memcpy(x, &e[i * per], per * sizeof(*e));
		for (j = i; j > 0 && text_cmp(e[(j - 1) * per], x[0]) > 0; j--)
			memcpy(&e[j * per], &e[(j - 1) * per], per * sizeof(*e));
		memcpy(&e[j * per], x, per * sizeof(*e));
	}
	if (n > 32) {
		tmp = sm_malloc((size_t)n * per * sizeof(*e));
		if (tmp == NULL) {
			s->err = -ENOMEM;
			return;
		}
		from = e;
		to = tmp;
		for (w = 1; w < n; w *= 2) {
			for (i = 0; i < n; i += 2 * w) {
				unsigned a = i, am = SM_MIN(i + w, n), b = am, bm = SM_MIN(i + 2 * w, n);

				for (k = i; k < bm; k++) {
					bool left = b == bm ||
						    (a < am && text_cmp(from[a * per], from[b * per]) <= 0);

					memcpy(&to[k * per], &from[(left ? a++ : b++) * per],
					       per * sizeof(*e));
				}
			}
			swap = from;
			from = to;
			to = swap;
		}
		if (from != e)
			memcpy(e, from, (size_t)n * per * sizeof(*e));
		sm_free(tmp);
	}
	for (i = 0, out = 0; i < n; i = k) {
		for (k = i + 1; k < n && text_cmp(e[k * per], e[i * per]) == 0; k++)
			;
		memmove(&e[out * per], &e[(k - 1) * per], per * sizeof(*e));
		out++;
	}
	size = sm_coll_build(NULL, 0, e, out, is_map);
	if (s->err != 0 || (d = reserve(s, size)) == NULL)
		return;
	sm_coll_build(d, size, e, out, is_map);
	cell(s, col)->off = (uint32_t)s->blen;
	cell(s, col)->len = (uint32_t)size;
	s->blen += size;
}

static struct sm_bytes
str_bytes(const char *text)
{
	struct sm_bytes b = { (const uint8_t *)text, (uint32_t)strlen(text) };

	return b;
}

static void
put_text_set1(struct sys_state *s, unsigned col, const char *text)
{
	struct sm_bytes e = str_bytes(text);

	put_coll(s, col, &e, 1, false);
}

static void
put_tokens(struct sys_state *s, unsigned col, int64_t token)
{
	char t[24];

	snprintf(t, sizeof(t), "%" PRId64, token);
	put_text_set1(s, col, t);
}

static int
tok_text_cmp(const void *a, const void *b)
{
	const struct sm_bytes *x = a, *y = b;
	int c = memcmp(x->p, y->p, SM_MIN(x->len, y->len));

	return c != 0 ? c : (int)x->len - (int)y->len;
}

/* A node's tokens: its one token, or its list (shard nodes: thousands). */
static void
put_node_tokens(struct sys_state *s, unsigned col, const struct sm_cql_node *n)
{
	struct sm_bytes *e;
	char *text;
	unsigned i;

	if (n->ntokens == 0) {
		put_tokens(s, col, n->token);
		return;
	}
	e = sm_malloc(n->ntokens * sizeof(*e));
	text = sm_malloc((size_t)n->ntokens * 24);
	if (e == NULL || text == NULL) {
		s->err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n->ntokens; i++) {
		int len = snprintf(text + (size_t)i * 24, 24, "%" PRId64, n->tokens[i]);

		e[i].p = (const uint8_t *)text + (size_t)i * 24;
		e[i].len = (uint32_t)len;
	}
	/* put_coll() sorts too, but by insertion: hand it sorted input. */
	qsort(e, n->ntokens, sizeof(*e), tok_text_cmp);
	put_coll(s, col, e, n->ntokens, false);
out:
	sm_free(e);
	sm_free(text);
}

/* A map<text, text> of literal pairs: "k1", "v1", "k2", "v2", ..., NULL. */
static void
put_text_map(struct sys_state *s, unsigned col, const char *const *kv)
{
	struct sm_bytes e[2 * 8];
	unsigned n = 0;

	while (n < 8 && kv[2 * n] != NULL) {
		e[2 * n] = str_bytes(kv[2 * n]);
		e[2 * n + 1] = str_bytes(kv[2 * n + 1]);
		n++;
	}
	put_coll(s, col, e, n, true);
}

/* ---- table options ---- */

static const char *
opt(const struct sm_table *t, const char *key)
{
	return sm_option_get(t->options, t->noptions, key);
}

static void
put_opt_double(struct sys_state *s, unsigned col, const struct sm_table *t, const char *key,
	       double def)
{
	const char *v = opt(t, key);
	char *end;
	double d;

	if (v != NULL) {
		d = strtod(v, &end);
		if (end != v && *end == '\0')
			def = d;
	}
	put_double(s, col, def);
}

static void
put_opt_int(struct sys_state *s, unsigned col, const struct sm_table *t, const char *key,
	    int32_t def)
{
	const char *v = opt(t, key);
	char *end;
	long l;

	if (v != NULL) {
		l = strtol(v, &end, 10);
		if (end != v && *end == '\0' && l >= INT32_MIN && l <= INT32_MAX)
			def = (int32_t)l;
	}
	put_int(s, col, def);
}

static void
put_opt_text(struct sys_state *s, unsigned col, const struct sm_table *t, const char *key,
	     const char *def)
{
	const char *v = opt(t, key);

	put_text(s, col, v != NULL ? v : def);
}

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/*
 * One map term at *@pp: a quoted string ('' escapes a quote) or a bare
 * constant (number, true). Copies it unescaped to @out. False on a syntax
 * error or when @out is full.
 */
static bool
map_term(const char **pp, char **out, const char *out_end, struct sm_bytes *b)
{
	const char *p = skip_ws(*pp);
	char *o = *out;

	if (*p == '\'') {
		for (p++;; p++) {
			if (*p == '\0')
				return false;
			if (*p == '\'' && p[1] != '\'')
				break;
			if (*p == '\'')
				p++;
			if (o == out_end)
				return false;
			*o++ = *p;
		}
		p++;
	} else {
		while (*p != '\0' && *p != ',' && *p != ':' && *p != '}' && *p != ' ' &&
		       *p != '\t') {
			if (o == out_end)
				return false;
			*o++ = *p++;
		}
		if (o == *out)
			return false;
	}
	b->p = (const uint8_t *)*out;
	b->len = (uint32_t)(o - *out);
	*out = o;
	*pp = p;
	return true;
}

/* Parse "{'k': 'v', ...}" into pairs over @tmp; the pair count or -1. */
static int
map_parse(const char *src, char *tmp, size_t tmplen, struct sm_bytes *e, unsigned max)
{
	const char *p = skip_ws(src), *end = tmp + tmplen;
	unsigned n = 0;

	if (*p++ != '{')
		return -1;
	p = skip_ws(p);
	if (*p == '}')
		return *skip_ws(p + 1) == '\0' ? 0 : -1;
	for (;;) {
		if (n == max || !map_term(&p, &tmp, end, &e[2 * n]))
			return -1;
		p = skip_ws(p);
		if (*p++ != ':' || !map_term(&p, &tmp, end, &e[2 * n + 1]))
			return -1;
		n++;
		p = skip_ws(p);
		if (*p == '}')
			return *skip_ws(p + 1) == '\0' ? (int)n : -1;
		if (*p++ != ',')
			return -1;
	}
}

/* A map option as given in WITH when it parses, else the default. */
static void
put_opt_map(struct sys_state *s, unsigned col, const struct sm_table *t, const char *key,
	    const char *const *def)
{
	const char *v = opt(t, key);
	struct sm_bytes *e;
	size_t len;
	char *tmp;
	int n;

	if (v == NULL) {
		put_text_map(s, col, def);
		return;
	}
	/* Sized by the text: no map as given falls back to the default for
	 * being long. Each pair takes at least 3 of its bytes ("k:v"). */
	len = strlen(v);
	e = sm_malloc((len / 3 + 1) * 2 * sizeof(*e));
	tmp = sm_malloc(len + 1);
	if (e == NULL || tmp == NULL) {
		s->err = -ENOMEM;
	} else if ((n = map_parse(v, tmp, len + 1, e, (unsigned)(len / 3 + 1))) >= 0) {
		put_coll(s, col, e, (unsigned)n, true);
	} else {
		put_text_map(s, col, def);
	}
	sm_free(e);
	sm_free(tmp);
}

/* ---- generators: every row of a table (row_end() drops other partitions) ---- */

static const struct sm_uuid *
schema_version(const struct sys_state *s)
{
	const struct sm_catalog *cat = sm_store_catalog();

	return cat != NULL ? &cat->version : &s->cat->version;
}

static void
gen_local(struct sys_state *s)
{
	const struct sm_cql_cluster *cl = s->cl;

	if (!row_begin(s))
		return;
	put_text(s, LOCAL_KEY, "local");
	put_text(s, LOCAL_BOOTSTRAPPED, "COMPLETED");
	put_inet(s, LOCAL_BROADCAST_ADDRESS, cl->self.address);
	put_text(s, LOCAL_CLUSTER_NAME, cl->cluster_name);
	put_text(s, LOCAL_CQL_VERSION, CQL_VERSION);
	put_text(s, LOCAL_DATA_CENTER, cl->data_center);
	put_int(s, LOCAL_GOSSIP_GENERATION, s->gossip_generation);
	put_uuid(s, LOCAL_HOST_ID, &cl->self.host_id);
	put_inet(s, LOCAL_LISTEN_ADDRESS, cl->self.address);
	put_text(s, LOCAL_NATIVE_PROTOCOL_VERSION, NATIVE_PROTOCOL_VERSION);
	put_text(s, LOCAL_PARTITIONER, PARTITIONER);
	put_text(s, LOCAL_RACK, cl->rack);
	put_text(s, LOCAL_RELEASE_VERSION, RELEASE_VERSION);
	put_inet(s, LOCAL_RPC_ADDRESS, cl->self.address);
	put_uuid(s, LOCAL_SCHEMA_VERSION, schema_version(s));
	put_text(s, LOCAL_SCYLLA_CPU_SHARDING_ALGORITHM, SHARDING_ALGORITHM);
	put_int(s, LOCAL_SCYLLA_MSB_IGNORE, SM_SHARDING_IGNORE_MSB);
	put_int(s, LOCAL_SCYLLA_NR_SHARDS, (int32_t)(sm_shard_count() ? sm_shard_count() : 1));
	put_node_tokens(s, LOCAL_TOKENS, &cl->self);
	row_end(s);
}

/*
 * Peers report our own schema version as theirs. Appliances do not share
 * schema: every stress client creates its keyspace and tables on every
 * node, so the nodes' versions never converge. A driver that saw differing
 * versions would wait out max_schema_agreement_wait (10 s) after every DDL
 * for an agreement that never comes.
 */
static void
gen_peers(struct sys_state *s)
{
	const struct sm_cql_cluster *cl = s->cl;
	unsigned i;

	for (i = 0; i < cl->npeers; i++) {
		const struct sm_cql_node *n = &cl->peers[i];

		if (!row_begin(s))
			return;
		put_inet(s, PEERS_PEER, n->address);
		put_text(s, PEERS_DATA_CENTER, cl->data_center);
		put_uuid(s, PEERS_HOST_ID, &n->host_id);
		put_text(s, PEERS_RACK, cl->rack);
		put_text(s, PEERS_RELEASE_VERSION, RELEASE_VERSION);
		put_inet(s, PEERS_RPC_ADDRESS, n->address);
		put_uuid(s, PEERS_SCHEMA_VERSION, schema_version(s));
		put_node_tokens(s, PEERS_TOKENS, n);
		row_end(s);
	}
}

/* peer_port is Cassandra 4's internode port; we have none, so it is the
 * native port, which keeps (peer, peer_port) unique per appliance. */
static void
gen_peers_v2(struct sys_state *s)
{
	const struct sm_cql_cluster *cl = s->cl;
	unsigned i;

	for (i = 0; i < cl->npeers; i++) {
		const struct sm_cql_node *n = &cl->peers[i];

		if (!row_begin(s))
			return;
		put_inet(s, PV2_PEER, n->address);
		put_int(s, PV2_PEER_PORT, n->port);
		put_text(s, PV2_DATA_CENTER, cl->data_center);
		put_uuid(s, PV2_HOST_ID, &n->host_id);
		put_inet(s, PV2_NATIVE_ADDRESS, n->address);
		put_int(s, PV2_NATIVE_PORT, n->port);
		put_text(s, PV2_RACK, cl->rack);
		put_text(s, PV2_RELEASE_VERSION, RELEASE_VERSION);
		put_uuid(s, PV2_SCHEMA_VERSION, schema_version(s)); /* as peers */
		put_node_tokens(s, PV2_TOKENS, n);
		row_end(s);
	}
}

/* Keyspaces of both catalogs: ours (system, system_schema), then the user's. */
static const struct sm_keyspace *
ks_at(const struct sys_state *s, unsigned i)
{
	const struct sm_catalog *user = sm_store_catalog();

	if (i < s->cat->nks)
		return s->cat->ks[i];
	i -= s->cat->nks;
	if (user == NULL || i >= user->nks)
		return NULL;
	return user->ks[i];
}

/* False for a user keyspace shadowed by ours, and for a keyspace other than
 * the one a single-partition read names (every system_schema table's
 * partition key is keyspace_name). */
static bool
ks_wanted(const struct sys_state *s, unsigned i, const struct sm_keyspace *k)
{
	const struct sm_bytes *pk = &s->sel->pk.part[0];

	if (i >= s->cat->nks && sm_cql_system_keyspace(k->name))
		return false;
	return s->sel->range || (s->sel->pk.n == 1 && pk->len == strlen(k->name) &&
				 (pk->len == 0 || memcmp(pk->p, k->name, pk->len) == 0));
}

static void
gen_keyspaces(struct sys_state *s)
{
	const struct sm_keyspace *k;
	unsigned i, j, n;

	for (i = 0; (k = ks_at(s, i)) != NULL; i++) {
		struct sm_bytes *e;
		char cls[160];

		if (!ks_wanted(s, i, k) || !row_begin(s))
			continue;
		put_text(s, KS_KEYSPACE_NAME, k->name);
		put_bool(s, KS_DURABLE_WRITES, k->durable_writes);
		/* every option the keyspace keeps, however many */
		e = sm_malloc(2 * (k->nreplication ? k->nreplication : 1) * sizeof(*e));
		if (e == NULL) {
			s->err = -ENOMEM;
			return;
		}
		for (j = 0, n = 0; j < k->nreplication; j++, n++) {
			const struct sm_option *o = &k->replication[j];

			e[2 * n] = str_bytes(o->key);
			e[2 * n + 1] = str_bytes(o->value);
			/* The catalog keeps LocalStrategy and EverywhereStrategy as
			 * given; drivers want the class qualified. */
			if (strcmp(o->key, "class") == 0 && strchr(o->value, '.') == NULL) {
				snprintf(cls, sizeof(cls), STRATEGY_PREFIX "%s", o->value);
				e[2 * n + 1] = str_bytes(cls);
			}
		}
		put_coll(s, KS_REPLICATION, e, n, true);
		sm_free(e);
		row_end(s);
	}
}

static const char *const caching_default[] = { "keys", "ALL", "rows_per_partition", "ALL", NULL };
static const char *const compaction_default[] = { "class", "SizeTieredCompactionStrategy", NULL };
static const char *const compression_default[] = { "sstable_compression",
						   "org.apache.cassandra.io.compress.LZ4Compressor",
						   NULL };
static const char *const no_pairs[] = { NULL };

static void
gen_table_row(struct sys_state *s, const struct sm_table *t)
{
	struct sm_bytes flags[2] = { str_bytes("compound"), str_bytes("counter") };

	put_text(s, TB_KEYSPACE_NAME, t->ks);
	put_text(s, TB_TABLE_NAME, t->name);
	put_opt_double(s, TB_BLOOM_FILTER_FP_CHANCE, t, "bloom_filter_fp_chance", DEF_BLOOM_FP);
	put_opt_map(s, TB_CACHING, t, "caching", caching_default);
	put_opt_text(s, TB_COMMENT, t, "comment", "");
	put_opt_map(s, TB_COMPACTION, t, "compaction", compaction_default);
	put_opt_map(s, TB_COMPRESSION, t, "compression", compression_default);
	put_opt_double(s, TB_CRC_CHECK_CHANCE, t, "crc_check_chance", DEF_CRC_CHECK);
	put_opt_double(s, TB_DCLOCAL_READ_REPAIR_CHANCE, t, "dclocal_read_repair_chance", 0.0);
	put_int(s, TB_DEFAULT_TIME_TO_LIVE, t->default_ttl);
	put_text_map(s, TB_EXTENSIONS, no_pairs);
	/* 'compound' is what marks a table as not COMPACT STORAGE to drivers. */
	put_coll(s, TB_FLAGS, flags, t->counter ? 2 : 1, false);
	put_opt_int(s, TB_GC_GRACE_SECONDS, t, "gc_grace_seconds", DEF_GC_GRACE);
	put_uuid(s, TB_ID, &t->id);
	put_opt_int(s, TB_MAX_INDEX_INTERVAL, t, "max_index_interval", DEF_MAX_INDEX_INTERVAL);
	put_opt_int(s, TB_MEMTABLE_FLUSH_PERIOD_IN_MS, t, "memtable_flush_period_in_ms", 0);
	put_opt_int(s, TB_MIN_INDEX_INTERVAL, t, "min_index_interval", DEF_MIN_INDEX_INTERVAL);
	put_opt_double(s, TB_READ_REPAIR_CHANCE, t, "read_repair_chance", 0.0);
	put_opt_text(s, TB_SPECULATIVE_RETRY, t, "speculative_retry", DEF_SPECULATIVE_RETRY);
}

static void
gen_tables(struct sys_state *s)
{
	const struct sm_keyspace *k;
	unsigned i, j;

	for (i = 0; (k = ks_at(s, i)) != NULL; i++) {
		if (!ks_wanted(s, i, k))
			continue;
		for (j = 0; j < k->ntables; j++) {
			if (sm_table_is_index(k->tables[j]) || sm_table_is_mv(k->tables[j]))
				continue; /* system_schema.indexes or .views lists it */
			if (!row_begin(s))
				return;
			gen_table_row(s, k->tables[j]);
			row_end(s);
		}
	}
}

/* system_schema.views: the table options, then what the view is of */
static void
gen_views(struct sys_state *s)
{
	const struct sm_keyspace *k;
	unsigned i, j;

	for (i = 0; (k = ks_at(s, i)) != NULL; i++) {
		if (!ks_wanted(s, i, k))
			continue;
		for (j = 0; j < k->ntables; j++) {
			const struct sm_table *v = k->tables[j], *base = NULL;
			const char *bn = sm_view_base(v);
			const char *all = sm_option_get(v->options, v->noptions, SM_VIEW_OPT_ALL);
			const char *where = sm_option_get(v->options, v->noptions, SM_VIEW_OPT_WHERE);

			if (bn != NULL)
				base = sm_catalog_table(sm_store_catalog(), k->name, bn);
			if (base == NULL || !row_begin(s))
				continue;
			gen_table_row(s, v);
			put_uuid(s, VW_BASE_TABLE_ID, &base->id);
			put_text(s, VW_BASE_TABLE_NAME, base->name);
			put_bool(s, VW_INCLUDE_ALL_COLUMNS, all != NULL && strcmp(all, "1") == 0);
			put_text(s, VW_WHERE_CLAUSE, where != NULL ? where : "");
			row_end(s);
		}
	}
}

static const char *const kind_names[] = {
	[SM_COL_PARTITION] = "partition_key",
	[SM_COL_CLUSTERING] = "clustering",
	[SM_COL_STATIC] = "static",
	[SM_COL_REGULAR] = "regular",
};

static void
gen_columns(struct sys_state *s)
{
	const struct sm_keyspace *k;
	unsigned i, j, c;

	for (i = 0; (k = ks_at(s, i)) != NULL; i++) {
		if (!ks_wanted(s, i, k))
			continue;
		for (j = 0; j < k->ntables; j++) {
			const struct sm_table *t = k->tables[j];

			for (c = 0; c < t->ncols && !sm_table_is_index(t); c++) {
				const struct sm_column *col = &t->cols[c];
				bool key = col->kind == SM_COL_PARTITION ||
					   col->kind == SM_COL_CLUSTERING;

				if (!row_begin(s))
					return;
				put_text(s, COL_KEYSPACE_NAME, t->ks);
				put_text(s, COL_TABLE_NAME, t->name);
				put_text(s, COL_COLUMN_NAME, col->name);
				put_text(s, COL_CLUSTERING_ORDER,
					 col->kind != SM_COL_CLUSTERING ? "none"
					 : col->desc			? "desc"
									: "asc");
				put_text(s, COL_COLUMN_NAME_BYTES, col->name);
				put_text(s, COL_KIND, kind_names[col->kind]);
				put_int(s, COL_POSITION, key ? (int32_t)col->pos : -1);
				put_type_name(s, COL_TYPE, col->type);
				row_end(s);
			}
		}
	}
}

/* A frozen<list<text>> of user type @t's field names, or with @types their types' names. */
static void
put_text_list(struct sys_state *s, unsigned col, const struct sm_type *t, bool types)
{
	size_t need = 4, at;
	char small[2];
	unsigned i;
	uint8_t *d;

	for (i = 0; i < t->nfields; i++)
		need += 4 + (types ? sm_type_name(t->fields[i], small, sizeof(small))
				   : strlen(t->field_names[i]));
	if (s->err != 0 || (d = reserve(s, need + 1)) == NULL)
		return;
	d[0] = (uint8_t)(t->nfields >> 24);
	d[1] = (uint8_t)(t->nfields >> 16);
	d[2] = (uint8_t)(t->nfields >> 8);
	d[3] = (uint8_t)t->nfields;
	for (i = 0, at = 4; i < t->nfields; i++) {
		size_t n = types ? sm_type_name(t->fields[i], (char *)d + at + 4, need + 1 - at - 4)
				 : strlen(t->field_names[i]);

		if (!types)
			memcpy(d + at + 4, t->field_names[i], n);
		d[at] = (uint8_t)(n >> 24);
		d[at + 1] = (uint8_t)(n >> 16);
		d[at + 2] = (uint8_t)(n >> 8);
		d[at + 3] = (uint8_t)n;
		at += 4 + n;
	}
	cell(s, col)->off = (uint32_t)s->blen;
	cell(s, col)->len = (uint32_t)need;
	s->blen += need;
}

/* system_schema.types: one row per user type, its fields in order. */
static void
gen_types(struct sys_state *s)
{
	const struct sm_keyspace *k;
	unsigned i, j;

	for (i = 0; (k = ks_at(s, i)) != NULL; i++) {
		if (!ks_wanted(s, i, k))
			continue;
		for (j = 0; j < k->ntypes; j++) {
			if (!row_begin(s))
				return;
			put_text(s, TY_KEYSPACE_NAME, k->name);
			put_text(s, TY_TYPE_NAME, k->types[j]->name);
			put_text_list(s, TY_FIELD_NAMES, k->types[j], false);
			put_text_list(s, TY_FIELD_TYPES, k->types[j], true);
			row_end(s);
		}
	}
}

/* system.scylla_local: what ScyllaDB's tools look up there */
static void
gen_scylla_local(struct sys_state *s)
{
	if (!row_begin(s))
		return;
	put_text(s, 0, "enabled_features");
	put_text(s, 1, "LWT");
	row_end(s);
}

/* system.versions (ScyllaDB's versions_table) */
static void
gen_versions(struct sys_state *s)
{
	if (!row_begin(s))
		return;
	put_text(s, 0, "local");
	put_text(s, 1, "shardmark-" SM_VERSION);
	put_text(s, 2, "release");
	put_text(s, 3, RELEASE_VERSION);
	put_text(s, 4, SCYLLA_VERSION);
	row_end(s);
}

/* system_schema.indexes (its columns as sm_cql_system.c defines them) */
enum { IX_KEYSPACE_NAME, IX_TABLE_NAME, IX_INDEX_NAME, IX_KIND, IX_OPTIONS };

/* A column name as CQL text: quoted unless it is a plain lowercase identifier. */
static void
cql_name(const char *name, char *out, size_t n)
{
	bool plain = name[0] >= 'a' && name[0] <= 'z';
	size_t i, j = 0;

	for (i = 0; name[i] != '\0' && plain; i++)
		plain = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
			name[i] == '_';
	if (plain) {
		snprintf(out, n, "%s", name);
		return;
	}
	if (n < 3)
		return;
	out[j++] = '"';
	for (i = 0; name[i] != '\0' && j + 3 < n; i++) {
		if (name[i] == '"')
			out[j++] = '"';
		out[j++] = name[i];
	}
	out[j++] = '"';
	out[j] = '\0';
}

static void
gen_indexes(struct sys_state *s)
{
	const struct sm_keyspace *k;
	unsigned i, j, c;

	for (i = 0; (k = ks_at(s, i)) != NULL; i++) {
		if (!ks_wanted(s, i, k))
			continue;
		for (j = 0; j < k->ntables; j++) {
			const struct sm_table *v = k->tables[j], *base;
			const char *fn = sm_option_get(v->options, v->noptions, SM_INDEX_OPT_FN);
			struct sm_index_info info;
			char col[2 * SM_NAME_MAX + 8], target[4 * SM_NAME_MAX + 64];
			struct sm_bytes e[2];
			size_t at;

			const char *bn = sm_option_get(v->options, v->noptions, SM_INDEX_OPT_BASE);

			base = NULL;
			for (c = 0; bn != NULL && sm_table_is_index(v) && c < k->ntables; c++)
				if (strcmp(k->tables[c]->name, bn) == 0)
					base = k->tables[c];
			if (base == NULL || sm_index_info(v, base, &info) < 0)
				continue;
			cql_name(info.target->name, col, sizeof(col));
			if (info.local) {
				/* ScyllaDB's target_parser: {"pk":["p"],"ck":["v"]} */
				at = (size_t)snprintf(target, sizeof(target), "{\"pk\":[");
				for (c = 0; c < base->npk && at < sizeof(target); c++)
					at += (size_t)snprintf(target + at, sizeof(target) - at,
							       "%s\"%s\"", c ? "," : "",
							       base->cols[c].name);
				if (at < sizeof(target))
					snprintf(target + at, sizeof(target) - at, "],\"ck\":[\"%s\"]}",
						 info.target->name);
			} else if (fn != NULL && fn[0] != '\0') {
				snprintf(target, sizeof(target), "%s(%s)", fn, col);
			} else {
				snprintf(target, sizeof(target), "%s", col);
			}
			if (!row_begin(s))
				return;
			put_text(s, IX_KEYSPACE_NAME, k->name);
			put_text(s, IX_TABLE_NAME, base->name);
			put_text(s, IX_INDEX_NAME, info.name);
			put_text(s, IX_KIND, "COMPOSITES");
			e[0] = str_bytes("target");
			e[1] = str_bytes(target);
			put_coll(s, IX_OPTIONS, e, 1, true);
			row_end(s);
		}
	}
}

/* system_schema.dropped_columns (its columns as sm_cql_system.c defines them) */
enum { DC_KEYSPACE_NAME, DC_TABLE_NAME, DC_COLUMN_NAME, DC_DROPPED_TIME, DC_TYPE };

static void
gen_dropped_columns(struct sys_state *s)
{
	const struct sm_keyspace *k;
	unsigned i, j, c;
	uint8_t be[8];

	for (i = 0; (k = ks_at(s, i)) != NULL; i++) {
		if (!ks_wanted(s, i, k))
			continue;
		for (j = 0; j < k->ntables; j++) {
			const struct sm_table *t = k->tables[j];

			for (c = 0; c < t->ndropped; c++) {
				const struct sm_dropped_column *d = &t->dropped[c];
				int64_t ms = d->time_us / 1000;
				unsigned b;

				if (!row_begin(s))
					return;
				for (b = 0; b < 8; b++)
					be[b] = (uint8_t)((uint64_t)ms >> (56 - 8 * b));
				put_text(s, DC_KEYSPACE_NAME, t->ks);
				put_text(s, DC_TABLE_NAME, t->name);
				put_text(s, DC_COLUMN_NAME, d->name);
				put_bytes(s, DC_DROPPED_TIME, be, sizeof(be));
				put_type_name(s, DC_TYPE, d->type);
				row_end(s);
			}
		}
	}
}

/* system.tablets (its columns as sm_cql_system.c defines them) */
enum {
	TL_TABLE_ID,
	TL_TABLET_COUNT,
	TL_KEYSPACE_NAME,
	TL_TABLE_NAME,
	TL_LAST_TOKEN,
	TL_REPLICAS,
	TL_NEW_REPLICAS,
	TL_STAGE,
	TL_TRANSITION,
	TL_SESSION,
	TL_RESIZE_TYPE,
	TL_RESIZE_SEQ_NUMBER,
};

static void
put_bigint(struct sys_state *s, unsigned col, int64_t v)
{
	uint8_t b[8];
	unsigned i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)((uint64_t)v >> (56 - 8 * i));
	put_bytes(s, col, b, sizeof(b));
}

/* [int 1][int 28]([int 16] host id, [int 4] shard): the one replica of a tablet */
static void
put_replica(struct sys_state *s, unsigned col, const struct sm_uuid *host, unsigned shard)
{
	uint8_t b[36] = { 0, 0, 0, 1, 0, 0, 0, 28, 0, 0, 0, 16 };

	memcpy(b + 12, host->b, 16);
	b[31] = 4;
	b[32] = (uint8_t)(shard >> 24);
	b[33] = (uint8_t)(shard >> 16);
	b[34] = (uint8_t)(shard >> 8);
	b[35] = (uint8_t)shard;
	put_bytes(s, col, b, sizeof(b));
}

/* One partition per table of a tablets keyspace, one row per tablet (sm_tablets.h). */
static void
gen_tablets(struct sys_state *s)
{
	unsigned nshards = sm_shard_count() ? sm_shard_count() : 1;
	const struct sm_bytes *pk = &s->sel->pk.part[0];
	const struct sm_keyspace *k;
	unsigned i, j;
	uint32_t tl;

	for (i = 0; (k = ks_at(s, i)) != NULL; i++) {
		if (!k->tablets)
			continue;
		for (j = 0; j < k->ntables; j++) {
			const struct sm_table *t = k->tables[j];

			if (t->tablet_count == 0)
				continue;
			/* a read of one table's partition generates only that table's rows */
			if (!s->sel->range &&
			    (s->sel->pk.n != 1 || pk->len != 16 || memcmp(pk->p, t->id.b, 16) != 0))
				continue;
			for (tl = 0; tl < t->tablet_count; tl++) {
				if (!row_begin(s))
					return;
				put_uuid(s, TL_TABLE_ID, &t->id);
				put_int(s, TL_TABLET_COUNT, (int32_t)t->tablet_count);
				put_text(s, TL_KEYSPACE_NAME, t->ks);
				put_text(s, TL_TABLE_NAME, t->name);
				put_bigint(s, TL_LAST_TOKEN, sm_tablet_last_token(t, tl));
				put_replica(s, TL_REPLICAS, &s->cl->self.host_id,
					    sm_tablet_shard(tl, nshards));
				put_text(s, TL_RESIZE_TYPE, "none");
				put_bigint(s, TL_RESIZE_SEQ_NUMBER, 0);
				row_end(s);
			}
		}
	}
}

/* system_schema.scylla_keyspaces: initial_tablets of each tablets keyspace */
static void
gen_scylla_keyspaces(struct sys_state *s)
{
	const struct sm_keyspace *k;
	unsigned i;

	for (i = 0; (k = ks_at(s, i)) != NULL; i++) {
		if (!k->tablets || !ks_wanted(s, i, k) || !row_begin(s))
			continue;
		put_text(s, 0, k->name);
		put_int(s, 3, (int32_t)k->initial_tablets);
		row_end(s);
	}
}

void
cql_system_generate(struct sys_state *s, enum sys_table_index index)
{
	switch (index) {
	case SYS_LOCAL:
		gen_local(s);
		break;
	case SYS_PEERS:
		gen_peers(s);
		break;
	case SYS_PEERS_V2:
		gen_peers_v2(s);
		break;
	case SYS_KEYSPACES:
		gen_keyspaces(s);
		break;
	case SYS_TABLES:
		gen_tables(s);
		break;
	case SYS_COLUMNS:
		gen_columns(s);
		break;
	case SYS_TYPES:
		gen_types(s);
		break;
	case SYS_DROPPED_COLUMNS:
		gen_dropped_columns(s);
		break;
	case SYS_INDEXES:
		gen_indexes(s);
		break;
	case SYS_VIEWS:
		gen_views(s);
		break;
	case SYS_SCYLLA_LOCAL:
		gen_scylla_local(s);
		break;
	case SYS_VERSIONS:
		gen_versions(s);
		break;
	case SYS_TABLETS:
		gen_tablets(s);
		break;
	case SYS_SCYLLA_KEYSPACES:
		gen_scylla_keyspaces(s);
		break;
	default: /* functions, views...: always empty */
		break;
	}
}
