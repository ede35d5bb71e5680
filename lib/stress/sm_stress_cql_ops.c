/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CQL protocol of the stress engine (its struct sm_stress_proto_ops):
 * the control connection's steps (the ring from system.local and
 * system.peers, the keyspace and tables, TRUNCATE), the statements every
 * connection prepares, token- and shard-aware routing of each operation
 * to a connection, the EXECUTE it sends and the check of a read's row.
 * The client connection itself is sm_stress_cql.c.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm_stress_run_priv.h"
#include "sm_tls.h"

static void
control_step(void);
static const char *
setup_statement(unsigned i);

static bool
is_write(enum sm_stress_op op)
{
	return op == SM_STRESS_OP_WRITE || op == SM_STRESS_OP_COUNTER_WRITE;
}

static void
build_statements(void)
{
	const char *ks = sx->s.schema.keyspace;
	char set[768], sel[64];
	size_t off = 0;
	unsigned c;

	if (sx->s.profile != NULL) {
		sm_stress_user_prepare();
		return;
	}
	if (sx->s.wl != NULL) {
		sx->s.wl->prepare();
		return;
	}
	for (c = 0; c < sx->ncols; c++)
		off += (size_t)snprintf(set + off, sizeof(set) - off, "%s\"C%u\" = ?",
					c ? ", " : "", c);
	snprintf(sx->stmt_text[SM_STRESS_OP_WRITE], sizeof(sx->stmt_text[0]),
		 "UPDATE %s.%s SET %s WHERE key = ?", ks, sx->s.schema.table, set);
	off = 0;
	for (c = 0; c < sx->ncols; c++)
		off += (size_t)snprintf(set + off, sizeof(set) - off, "%s\"C%u\" = \"C%u\" + ?",
					c ? ", " : "", c, c);
	snprintf(sx->stmt_text[SM_STRESS_OP_COUNTER_WRITE], sizeof(sx->stmt_text[0]),
		 "UPDATE %s.%s SET %s WHERE key = ?", ks, sx->s.schema.counter_table, set);
	snprintf(sel, sizeof(sel), "SELECT *");
	snprintf(sx->stmt_text[SM_STRESS_OP_READ], sizeof(sx->stmt_text[0]),
		 "%s FROM %s.%s WHERE key = ?", sel, ks, sx->s.schema.table);
	snprintf(sx->stmt_text[SM_STRESS_OP_COUNTER_READ], sizeof(sx->stmt_text[0]),
		 "%s FROM %s.%s WHERE key = ?", sel, ks, sx->s.schema.counter_table);
}

static void
fill_write_values(struct sm_stress_worker *w)
{
	uint8_t *p = w->buf;
	unsigned c;

	if (w->op == SM_STRESS_OP_COUNTER_WRITE) {
		for (c = 0; c < sx->ncols; c++) {
			const struct sm_stress_dist *d = &sx->s.counter_add;
			uint64_t add = d->min;
			unsigned b;

			if (d->max > d->min)
				add += sm_rand_below(&w->sh->rng, d->max - d->min + 1);
			for (b = 0; b < 8; b++)
				p[b] = (uint8_t)(add >> (56 - 8 * b));
			w->vals[c] = (struct sm_bytes){ p, 8 };
			p += 8;
		}
	} else {
		for (c = 0; c < sx->ncols; c++) {
			uint32_t len = sm_stress_cell_size(w->key_index, c);

			sm_stress_value(w->key_index, c, p, len);
			w->vals[c] = (struct sm_bytes){ p, len };
			p += len;
		}
	}
	w->vals[sx->ncols] = (struct sm_bytes){ w->key, SM_STRESS_KEY_LEN };
}

/* Check a read's row against the values the key generates: 0, or the error code. */
static int32_t
check_row(const struct sm_stress_worker *w, const struct sm_cqlc_result *r)
{
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[SM_STRESS_MAX_COLS + 1];
	uint8_t want[4096];
	unsigned c;

	if (r->nrows == 0)
		return SM_STRESS_VALIDATION_MISSING;
	if (r->nrows != 1 || r->ncols < sx->ncols + 1)
		return SM_STRESS_VALIDATION_ERROR;
	if (w->op == SM_STRESS_OP_COUNTER_READ)
		return 0; /* counters accumulate: any value is right */
	sm_cqlc_rows_iter(&it, r);
	if (!sm_cqlc_rows_next(&it, cells, SM_ARRAY_SIZE(cells)))
		return SM_STRESS_VALIDATION_ERROR;
	if (cells[0].len != SM_STRESS_KEY_LEN || memcmp(cells[0].p, w->key, SM_STRESS_KEY_LEN))
		return SM_STRESS_VALIDATION_ERROR;
	for (c = 0; c < sx->ncols; c++) {
		uint32_t len = sm_stress_cell_size(w->key_index, c);

		if (len > sizeof(want) || cells[c + 1].len != len)
			return SM_STRESS_VALIDATION_ERROR;
		sm_stress_value(w->key_index, c, want, len);
		if (memcmp(cells[c + 1].p, want, len) != 0)
			return SM_STRESS_VALIDATION_ERROR;
	}
	return 0;
}

/* ---- CQL path ---- */

static const enum sm_ring_ordering ring_ord[] = {
	[SM_STRESS_ORDER_RANDOM] = SM_RING_RANDOM,
	[SM_STRESS_ORDER_TOPOLOGICAL] = SM_RING_TOPOLOGICAL,
	[SM_STRESS_ORDER_NEUTRAL] = SM_RING_NEUTRAL,
};

/* The tablet of @w's table holding @token, or NULL (the map does not know it). */
static const struct sm_tablet *
tablet_of(struct sm_stress_worker *w, int64_t token)
{
	struct sm_stress_shard *sh = w->sh;

	if (!sx->tablets_offered || sh->op_table[w->op] < 0)
		return NULL;
	return sm_tablets_find(&sh->tablets, (unsigned)sh->op_table[w->op], token);
}

/* The shard of @tab's replica on @host, or -1 when @host holds no replica. */
static int
tablet_shard_on(const struct sm_tablet *tab, unsigned host)
{
	unsigned i;

	for (i = 0; i < tab->nreps; i++)
		if (tab->reps[i].host == host)
			return (int)tab->reps[i].shard;
	return -1;
}

static struct sm_stress_conn *
route(struct sm_stress_worker *w, int64_t token)
{
	struct sm_stress_shard *sh = w->sh;
	unsigned host = 0, slot, plan[SM_STRESS_MAX_HOSTS], n, i, owner;
	const struct sm_tablet *tab = tablet_of(w, token);
	struct sm_stress_conn *c;
	bool rr_slot = false;
	int rep = -1, s;

	if (sx->s.route.token_aware && sx->ring_ok) {
		/* A known tablet names the replicas; a token without one goes by the ring. */
		if (tab != NULL && sx->tablets)
			rep = sm_tablets_pick(tab, ring_ord[sx->s.route.ordering], sx->plan_pos,
					      sx->nhosts, sx->nplan, &sh->ring_rng, &sh->rr);
		if (rep >= 0) {
			host = tab->reps[rep].host;
			sh->by_tablets++;
		} else {
			n = sm_ring_plan(&sx->ring, token, ring_ord[sx->s.route.ordering],
					 &sh->ring_rng, &sh->rr, NULL, plan, SM_ARRAY_SIZE(plan));
			host = n > 0 ? plan[0] : 0;
			sh->by_ring++;
		}
	} else {
		/* One draw for both: every connection of every host in turn (two
		 * draws of one counter gave the host even values, the slot odd ones) */
		uint64_t r = sh->rr++;

		host = (unsigned)(r % sx->nhosts);
		slot = (unsigned)(r / sx->nhosts % sh->conns_per_host);
		rr_slot = true;
	}
	/* The shard that holds the key on that host: its tablet's when known. */
	if (rep >= 0)
		owner = tab->reps[rep].shard;
	else if (tab != NULL && (s = tablet_shard_on(tab, host)) >= 0)
		owner = (unsigned)s;
	else
		owner = sm_ring_shard_of(token, sx->nr_shards, sx->ignore_msb);
	if (sx->use_shard_port && sx->s.route.token_aware)
		slot = owner;
	else if (!rr_slot)
		slot = (unsigned)(sh->rr++ % sh->conns_per_host);
	c = &sh->conns[host * sh->conns_per_host + slot % sh->conns_per_host];
	/* A connection that failed: any ready one of the same host, then any. */
	for (i = 0; !c->ready && i < sh->conns_per_host * sx->nhosts; i++)
		c = &sh->conns[(host * sh->conns_per_host + slot + i) %
			       (sh->conns_per_host * sx->nhosts)];
	w->routed_ok = false;
	if (sx->scylla && c->server_shard != UINT32_MAX) {
		sh->routed++;
		if (c->server_shard != owner)
			sh->misrouted++;
		else
			w->routed_ok = true;
	}
	return c;
}

/* The ring host whose host_id is @id, or SM_TABLETS_HOST_UNKNOWN. */
static uint16_t
host_of_id(const uint8_t id[16])
{
	unsigned i;

	for (i = 0; i < sx->nhosts && i < sx->ring.nhosts; i++)
		if (sx->host_id_known[i] && memcmp(sx->host_id[i], id, 16) == 0)
			return (uint16_t)i;
	return SM_TABLETS_HOST_UNKNOWN;
}

/*
 * An answer with a tablets-routing-v1 payload: the request went to a node
 * or shard that does not hold its tablet (ScyllaDB's protocol-extensions.md).
 * Count it, and learn the tablet unless the payload is malformed.
 */
static void
learn_tablet(struct sm_stress_worker *w, const struct sm_cqlc_result *r)
{
	struct sm_stress_shard *sh = w->sh;
	struct sm_tablet tab;
	struct sm_bytes v;
	const char *why;
	unsigned i;

	if (r->resp == NULL || !sm_tablets_payload(&r->resp->custom_payload, &v))
		return;
	sh->tablet_payloads++;
	sh->tablets.st.payloads++;
	/* The ring's owner was not the tablet's: the server's word corrects our count. */
	if (w->routed_ok) {
		w->routed_ok = false;
		sh->misrouted++;
	}
	if (sm_tablets_decode(v.p, v.len, &tab, &why) < 0) {
		sh->tablets.st.malformed++;
		if (sh->tablet_why == NULL)
			sh->tablet_why = why;
		return;
	}
	if (sh->op_table[w->op] < 0) {
		sh->tablets.st.no_table++;
		return;
	}
	for (i = 0; i < tab.nreps; i++)
		tab.reps[i].host = host_of_id(tab.reps[i].host_id);
	/* at the cap it is refused and counted: its tokens keep going by the ring */
	sm_tablets_insert(&sh->tablets, (unsigned)sh->op_table[w->op], &tab);
}

static void
cql_done(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_stress_worker *w = arg;

	if (r->kind == SM_CQLC_FAILED) {
		sm_stress_worker_finish(w, r->err, 0);
		return;
	}
	if (r->resp != NULL && r->resp->custom_payload.n > 0)
		learn_tablet(w, r);
	if (r->kind == SM_CQLC_ERROR) {
		sm_stress_worker_finish(w, r->error_code, 0);
		return;
	}
	if (w->op >= SM_STRESS_OP_USER0) {
		uint64_t rows = 0;
		int32_t bad = sx->s.wl != NULL
				      ? sx->s.wl->check(w, w->conn, r, &rows, cql_done)
				      : sm_stress_user_check(w, w->conn, r, &rows);

		if (bad == SM_STRESS_YCSB_AGAIN)
			return;
		sm_stress_worker_finish(w, bad, bad ? 0 : rows);
		return;
	}
	if (is_write(w->op)) {
		sm_stress_worker_finish(w, 0, 1);
		return;
	}
	if (!sx->s.errors.skip_read_validation) {
		int32_t bad = check_row(w, r);

		if (bad != 0) {
			sm_stress_worker_finish(w, bad, 0);
			return;
		}
	}
	sm_stress_worker_finish(w, 0, r->nrows);
}

/* A user profile's operation: its own values, key and token (sm_stress_user.c). */
static void
cql_send_user(struct sm_stress_worker *w)
{
	const struct sm_stress_workload_ops *wl = sx->s.wl;
	struct sm_stress_conn *c;
	int ret;

	if (wl == NULL && sm_stress_user_exhausted(w)) {
		sm_stress_worker_park(w);
		return;
	}
	c = route(w, wl != NULL ? wl->fill(w) : sm_stress_user_fill(w));

	if (!c->ready) {
		sm_stress_worker_finish(w, -ENOTCONN, 0);
		return;
	}
	w->conn = c;
	ret = wl != NULL ? wl->issue(w, c, cql_done) : sm_stress_user_issue(w, c, cql_done);
	if (ret < 0)
		sm_stress_worker_finish(w, ret, 0);
}

static void
cql_send(struct sm_stress_worker *w)
{
	int64_t token;
	struct sm_stress_conn *c;
	const struct sm_bytes *vals = w->vals;
	unsigned n;
	int ret;

	if (w->op >= SM_STRESS_OP_USER0) {
		cql_send_user(w);
		return;
	}
	token = sm_ring_token_of(w->key, SM_STRESS_KEY_LEN);
	c = route(w, token);

	if (is_write(w->op)) {
		fill_write_values(w);
		n = sx->ncols + 1;
	} else {
		w->vals[sx->ncols] = (struct sm_bytes){ w->key, SM_STRESS_KEY_LEN };
		vals = &w->vals[sx->ncols];
		n = 1;
	}
	if (!c->ready) {
		sm_stress_worker_finish(w, -ENOTCONN, 0);
		return;
	}
	ret = sm_cqlc_execute(c->cql, sm_cqlc_prepared_id(&c->stmt[w->op]), (uint16_t)sx->s.cl,
			      vals, n, SM_CQLC_SKIP_METADATA, cql_done, w);
	if (ret < 0)
		sm_stress_worker_finish(w, ret, 0);
}

static void
conn_prepare_next(struct sm_stress_conn *c);

unsigned
sm_stress_result_names(const struct sm_cqlc_result *r, struct sm_bytes *names, unsigned cap)
{
	struct sm_cql_iter it;
	struct sm_cql_colspec cs;
	unsigned n = 0;

	if (r->resp == NULL)
		return 0;
	sm_cql_colspec_iter(&it, &r->resp->u.result.u.prepared.result);
	while (n < cap && sm_cql_colspec_next(&it, &cs))
		names[n++] = cs.name;
	return n;
}

/*
 * The table of a prepared statement, from its bind markers' column specs
 * (the table the drivers route a statement's tablets by), else its result
 * columns'; -1 when neither names one.
 */
static int
statement_table(struct sm_stress_shard *sh, const struct sm_cqlc_result *r)
{
	const struct sm_cql_prepared *p = &r->resp->u.result.u.prepared;
	struct sm_cql_colspec cs;
	struct sm_cql_iter it;
	int t;

	sm_cql_colspec_iter(&it, &p->bind);
	if (!sm_cql_colspec_next(&it, &cs)) {
		sm_cql_colspec_iter(&it, &p->result);
		if (!sm_cql_colspec_next(&it, &cs))
			return -1;
	}
	t = sm_tablets_table(&sh->tablets, (const char *)cs.ks.p, cs.ks.len,
			     (const char *)cs.table.p, cs.table.len);
	return t >= 0 ? t : -1;
}

static void
prepared_cb(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_stress_conn *c = arg;

	if (r->kind != SM_CQLC_PREPARED) {
		char why[400];

		snprintf(why, sizeof(why), "PREPARE %s: %.*s", sx->stmt_text[sx->prep[c->prepared]],
			 r->kind == SM_CQLC_ERROR ? (int)r->error_message.len : 20,
			 r->kind == SM_CQLC_ERROR ? (const char *)r->error_message.p
						  : "no response");
		sm_stress_conn_failed(c, -EINVAL, why);
		return;
	}
	c->stmt[sx->prep[c->prepared]] = r->prepared;
	c->sh->op_table[sx->prep[c->prepared]] = (int16_t)statement_table(c->sh, r);
	if (sx->s.profile != NULL)
		sm_stress_user_prepared(c, sx->prep[c->prepared], r);
	else if (sx->s.wl != NULL)
		sx->s.wl->prepared(c, sx->prep[c->prepared], r);
	c->prepared++;
	conn_prepare_next(c);
}

static void
conn_prepare_next(struct sm_stress_conn *c)
{
	int ret;

	if (c->prepared == sx->nprep) {
		sm_stress_conn_ready(c);
		return;
	}
	ret = sm_cqlc_prepare(c->cql, sx->stmt_text[sx->prep[c->prepared]], prepared_cb, c);
	if (ret < 0)
		sm_stress_conn_failed(c, ret, "cannot send PREPARE");
}

static void
use_cb(void *arg, const struct sm_cqlc_result *r)
{
	struct sm_stress_conn *c = arg;

	if (r->kind != SM_CQLC_SET_KEYSPACE) {
		char why[400];

		snprintf(why, sizeof(why), "%s: %.*s", setup_statement(1),
			 r->kind == SM_CQLC_ERROR ? (int)r->error_message.len : 40,
			 r->kind == SM_CQLC_ERROR ? (const char *)r->error_message.p
						  : sm_cqlc_error_text(c->cql));
		sm_stress_conn_failed(c, -EINVAL, why);
		return;
	}
	conn_prepare_next(c);
}

static void
cql_ready(struct sm_cqlc *cql, int err, void *ctx)
{
	struct sm_stress_conn *c = ctx;

	if (err < 0) {
		sm_stress_conn_failed(c, err, sm_cqlc_error_text(cql));
		return;
	}
	c->server_shard = sm_cqlc_info(cql)->scylla ? sm_cqlc_info(cql)->shard : UINT32_MAX;
	if (sx->s.profile != NULL || sx->s.wl != NULL) {
		/* a profile's (and YCSB's) queries name their table without its keyspace */
		if (sm_cqlc_query(cql, setup_statement(1), SM_STRESS_CL_ONE, NULL,
				  0, use_cb, c) < 0)
			sm_stress_conn_failed(c, -EINVAL, "cannot send USE");
		return;
	}
	conn_prepare_next(c);
}

static void
cql_closed(struct sm_cqlc *cql, int err, void *ctx)
{
	struct sm_stress_conn *c = ctx;

	c->ready = false;
	if (!c->sh->stopping)
		sm_stress_conn_failed(c, err, sm_cqlc_error_text(cql));
}

static void
rows_to_ring(const struct sm_cqlc_result *r, bool local)
{
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[5];
	char addr[64];

	sm_cqlc_rows_iter(&it, r);
	while (sm_cqlc_rows_next(&it, cells, 5)) {
		int ret;

		if (cells[0].p == NULL || (cells[0].len != 4 && cells[0].len != 16))
			continue;
		inet_ntop(cells[0].len == 4 ? AF_INET : AF_INET6, cells[0].p, addr, sizeof(addr));
		if (local && (strcmp(addr, "0.0.0.0") == 0 || strcmp(addr, "::") == 0))
			snprintf(addr, sizeof(addr), "%s", sx->s.nodes.hosts[0]);
		ret = sm_ring_add_host_cells(&sx->ring, cells[0].p, cells[0].len, cells[1].p,
					     cells[1].p ? cells[1].len : 0, cells[2].p,
					     cells[2].p ? cells[2].len : 0, cells[3].p,
					     cells[3].p ? cells[3].len : 0);
		if (ret >= 0 && local && strcmp(sx->ring.hosts[ret].addr, addr) != 0)
			snprintf(sx->ring.hosts[ret].addr, sizeof(sx->ring.hosts[ret].addr), "%s",
				 addr);
		/* the host_id a tablet's replica names this host by */
		if (ret >= 0 && ret < SM_STRESS_MAX_HOSTS && r->ncols >= 5 && cells[4].p != NULL &&
		    cells[4].len == 16) {
			memcpy(sx->host_id[ret], cells[4].p, 16);
			sx->host_id_known[ret] = true;
		}
	}
}

static void
ctl_cb(void *arg, const struct sm_cqlc_result *r)
{
	(void)arg;
	if (r->kind == SM_CQLC_FAILED) {
		sm_stress_control_fail("control connection to %s:%u: %s", sx->s.nodes.hosts[0],
				       sx->s.native_port, sm_cqlc_error_text(sx->ctl));
		return;
	}
	if (r->kind == SM_CQLC_ERROR &&
	    !(sx->s.profile != NULL && r->error_code == SM_CQL_ERR_ALREADY_EXISTS)) {
		sm_stress_control_fail("step %u of the setup failed: %.*s (error 0x%04x)",
				       sx->ctl_step, (int)r->error_message.len,
				       (const char *)r->error_message.p, (unsigned)r->error_code);
		return;
	}
	if (sx->ctl_step == 1)
		rows_to_ring(r, true);
	else if (sx->ctl_step == 2)
		rows_to_ring(r, false);
	sx->ctl_step++;
	control_step();
}

static void
ctl_ready(struct sm_cqlc *c, int err, void *ctx)
{
	const struct sm_cqlc_info *in = sm_cqlc_info(c);

	(void)ctx;
	if (err < 0 && sx->tls != NULL && err == -ECONNABORTED) {
		sm_stress_control_fail("cannot connect to %s:%u: the TLS handshake failed: %s "
				       "(check -transport truststore= and that the port speaks TLS)",
				       sx->s.nodes.hosts[0], sx->s.native_port, sm_tls_last_error());
		return;
	}
	if (err < 0) {
		sm_stress_control_fail("cannot connect to %s:%u: %s (%s)", sx->s.nodes.hosts[0],
				       sx->s.native_port, sm_cqlc_error_text(c),
				       err == -EACCES ? "check -mode user= password="
						      : "check -node and -port native=");
		return;
	}
	sx->scylla = in->scylla;
	sx->tablets_offered = in->tablets;
	sx->nr_shards = in->nr_shards;
	sx->ignore_msb = in->ignore_msb;
	/* A TLS client uses the TLS twin of the shard-aware port (Scylla's drivers do). */
	sx->shard_port = sx->tls != NULL ? in->shard_aware_port_ssl : in->shard_aware_port;
	sx->ctl_step = 1;
	control_step();
}

static void
build_ring(void)
{
	struct sm_ring_dc_rf dcs[SM_STRESS_MAX_KV];
	struct sm_ring_repl repl = { .strategy = SM_RING_SIMPLE, .rf = sx->s.schema.factor };
	unsigned i, n = 0;

	if (sx->ring.nhosts == 0)
		return;
	if (strstr(sx->s.schema.strategy, "NetworkTopology") != NULL) {
		repl.strategy = SM_RING_NETWORK_TOPOLOGY;
		for (i = 0; i < sx->s.schema.n_repl; i++) {
			unsigned rf = (unsigned)strtoul(sx->s.schema.repl[i].value, NULL, 10);

			dcs[n].dc = strcmp(sx->s.schema.repl[i].key, "replication_factor") == 0
					    ? NULL
					    : sx->s.schema.repl[i].key;
			dcs[n++].rf = rf;
		}
		if (n == 0) {
			dcs[n].dc = NULL;
			dcs[n++].rf = sx->s.schema.factor ? sx->s.schema.factor : 1;
		}
		repl.dcs = dcs;
		repl.ndcs = n;
	} else if (strstr(sx->s.schema.strategy, "Everywhere") != NULL) {
		repl.rf = sx->ring.nhosts;
	}
	if (repl.rf == 0)
		repl.rf = 1;
	sx->ring_ok = sm_ring_build(&sx->ring, &repl, sx->s.nodes.datacenter) == 0;
	if (!sx->ring_ok)
		sm_stress_out("warning: token-aware routing is off: %s\n", sx->ring.err);
	/* The round-robin plan a tablet's replica is picked by: the local hosts, in order added. */
	for (i = 0; i < SM_STRESS_MAX_HOSTS; i++)
		sx->plan_pos[i] = -1;
	sx->nplan = 0;
	for (i = 0; sx->ring_ok && i < sx->ring.nlocal; i++)
		if (sx->ring.local_hosts[i] < SM_STRESS_MAX_HOSTS)
			sx->plan_pos[sx->ring.local_hosts[i]] = (int)sx->nplan++;
	sx->tablets = sx->tablets_offered && sx->ring_ok && sx->s.route.token_aware;
}

/* The hosts and routing the shards' connections will use. */
static void
cql_plan(void)
{
	unsigned i;

	sx->use_shard_port =
		sx->scylla && sx->s.route.shard_aware && sx->shard_port != 0 && sx->nr_shards > 0;
	for (i = 0; i < sx->nhosts; i++) {
		if (sx->ring_ok && i < sx->ring.nhosts)
			sm_stress_out("Datacenter: %s; Host: /%s; Rack: %s\n", sx->ring.hosts[i].dc,
				      sx->addrs[i], sx->ring.hosts[i].rack);
		else
			sm_stress_out("Host: /%s\n", sx->addrs[i]);
	}
	if (sx->use_shard_port)
		sm_stress_out("Routing: %s, shard-aware: %u %s per host through port %u "
			      "(source port %% %u picks the shard)\n",
			      sx->s.route.token_aware ? "token-aware" : "round-robin",
			      sx->nr_shards, sx->nr_shards == 1 ? "shard" : "shards",
			      sx->shard_port, sx->nr_shards);
	else if (!sx->scylla)
		sm_stress_out("Routing: %s; the server does not advertise ScyllaDB's sharding "
			      "(SCYLLA_NR_SHARDS): not shard-aware\n",
			      sx->s.route.token_aware ? "token-aware only" : "round-robin");
	else
		sm_stress_out("Routing: %s, not shard-aware (%s)\n",
			      sx->s.route.token_aware ? "token-aware" : "round-robin",
			      !sx->s.route.shard_aware ? "-route no-shard-aware"
						       : "no shard-aware port advertised");
}

static unsigned
cql_conns_per_host(const struct sm_stress_shard *sh)
{
	(void)sh;
	return sx->use_shard_port ? sx->nr_shards
				  : SM_MAX(1u, (sx->s.mode.connections_per_host + sx->nshards - 1) /
						       sx->nshards);
}

/*
 * User mode's setup after the ring (steps 1 and 2): the profile's
 * definitions, then TRUNCATE when asked, then connect.
 */
static const char *
setup_statement(unsigned i)
{
	return sx->s.wl != NULL ? sx->s.wl->setup_statement(i)
				  : sm_stress_user_setup_statement(i);
}

static void
control_step_user(void)
{
	const char *stmt = setup_statement(sx->ctl_step - 3);
	char q[512];
	int ret;

	while (stmt != NULL && stmt[0] == '\0')
		stmt = setup_statement(++sx->ctl_step - 3);
	if (stmt == NULL && sx->s.profile != NULL && sx->s.truncate != SM_STRESS_TRUNCATE_NEVER && sx->ctl_step < 1000) {
		snprintf(q, sizeof(q), "TRUNCATE %s.%s", sx->s.profile->keyspace,
			 sx->s.profile->table);
		sx->ctl_step = 1000;
		stmt = q;
	} else if (stmt == NULL) {
		sm_cqlc_close(sx->ctl);
		sx->ctl = NULL;
		build_ring();
		sm_stress_start_connect();
		return;
	}
	ret = sm_cqlc_query(sx->ctl, stmt, SM_STRESS_CL_ONE, NULL, 0, ctl_cb, NULL);
	if (ret < 0)
		sm_stress_control_fail("control connection: cannot send a request: %s",
				       strerror(-ret));
}

static void
control_step(void)
{
	char q[2048];
	int ret = 0;

	if ((sx->s.profile != NULL || sx->s.wl != NULL) && sx->ctl_step >= 3) {
		control_step_user();
		return;
	}
	switch (sx->ctl_step) {
	case 1:
		ret = sm_cqlc_query(sx->ctl,
				    "SELECT rpc_address, data_center, rack, tokens, host_id "
				    "FROM system.local",
				    SM_STRESS_CL_ONE, NULL, 0, ctl_cb, NULL);
		break;
	case 2:
		ret = sm_cqlc_query(sx->ctl,
				    "SELECT rpc_address, data_center, rack, tokens, host_id "
				    "FROM system.peers",
				    SM_STRESS_CL_ONE, NULL, 0, ctl_cb, NULL);
		break;
	case 3: {
		size_t off;
		unsigned i;

		off = (size_t)snprintf(q, sizeof(q),
				       "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "
				       "{'class': '%s'",
				       sx->s.schema.keyspace, sx->s.schema.strategy);
		for (i = 0; i < sx->s.schema.n_repl; i++)
			off += (size_t)snprintf(q + off, sizeof(q) - off, ", '%s': '%s'",
						sx->s.schema.repl[i].key,
						sx->s.schema.repl[i].value);
		off += (size_t)snprintf(q + off, sizeof(q) - off, "} AND durable_writes = true");
		/* ScyllaDB's keyspace tablets map (-schema tablets=, an extension) */
		if (sx->s.schema.tablets == 0)
			snprintf(q + off, sizeof(q) - off, " AND tablets = {'enabled': false}");
		else if (sx->s.schema.tablets > 0 && sx->s.schema.tablets_initial > 0)
			snprintf(q + off, sizeof(q) - off,
				 " AND tablets = {'enabled': true, 'initial': %u}",
				 sx->s.schema.tablets_initial);
		else if (sx->s.schema.tablets > 0)
			snprintf(q + off, sizeof(q) - off, " AND tablets = {'enabled': true}");
		ret = sm_cqlc_query(sx->ctl, q, SM_STRESS_CL_ONE, NULL, 0, ctl_cb, NULL);
		break;
	}
	case 4:
	case 5: {
		bool counter = sx->ctl_step == 5;
		size_t off;
		unsigned c;

		off = (size_t)snprintf(q, sizeof(q),
				       "CREATE TABLE IF NOT EXISTS %s.%s (key blob PRIMARY KEY",
				       sx->s.schema.keyspace,
				       counter ? sx->s.schema.counter_table : sx->s.schema.table);
		for (c = 0; c < sx->ncols; c++)
			off += (size_t)snprintf(q + off, sizeof(q) - off, ", \"C%u\" %s", c,
						counter ? "counter" : "blob");
		snprintf(q + off, sizeof(q) - off, ")");
		ret = sm_cqlc_query(sx->ctl, q, SM_STRESS_CL_ONE, NULL, 0, ctl_cb, NULL);
		break;
	}
	case 6:
	case 7:
		if (sx->s.truncate == SM_STRESS_TRUNCATE_NEVER) {
			sx->ctl_step = 8;
			control_step();
			return;
		}
		snprintf(q, sizeof(q), "TRUNCATE %s.%s", sx->s.schema.keyspace,
			 sx->ctl_step == 6 ? sx->s.schema.table : sx->s.schema.counter_table);
		ret = sm_cqlc_query(sx->ctl, q, SM_STRESS_CL_ALL, NULL, 0, ctl_cb, NULL);
		break;
	default:
		sm_cqlc_close(sx->ctl);
		sx->ctl = NULL;
		build_ring();
		sm_stress_start_connect();
		return;
	}
	if (ret < 0)
		sm_stress_control_fail("control connection: cannot send a request: %s",
				       strerror(-ret));
}

static void
cql_ctl_close(void)
{
	if (sx->ctl != NULL) {
		sm_cqlc_close(sx->ctl);
		sx->ctl = NULL;
	}
}

static int
cql_ctl_open(void)
{
	struct sm_cqlc_opts o = {
		.addr = sx->s.nodes.hosts[0],
		.port = sx->s.native_port,
		.user = sx->s.mode.user,
		.password = sx->s.mode.password,
		.max_inflight = 8,
		.tls = sx->tls,
		.ready = ctl_ready,
		.ctx = sx,
	};

	return sm_cqlc_connect(&o, &sx->ctl);
}

static uint16_t
cql_ctl_port(void)
{
	return sx->s.native_port;
}

static uint16_t
cql_conn_port(void)
{
	return sx->use_shard_port ? sx->shard_port : sx->s.native_port;
}

static int
cql_connect(struct sm_stress_conn *c, unsigned slot)
{
	struct sm_cqlc_opts o = {
		.addr = sx->addrs[c->host],
		.port = sx->use_shard_port ? sx->shard_port : sx->s.native_port,
		.src_port_mod = sx->use_shard_port ? (uint16_t)sx->nr_shards : 0,
		.src_port_rem = (uint16_t)slot,
		.user = sx->s.mode.user,
		.password = sx->s.mode.password,
		.lz4 = sx->s.mode.compression == SM_STRESS_COMPRESSION_LZ4,
		.max_inflight = SM_MAX(c->sh->nworkers + 8, 128u),
		.tls = sx->tls,
		.ready = cql_ready,
		.closed = cql_closed,
		.ctx = c,
	};

	return sm_cqlc_connect(&o, &c->cql);
}

static void
cql_close(struct sm_stress_conn *c)
{
	if (c->cql != NULL)
		sm_cqlc_close(c->cql);
	c->cql = NULL;
}

static void
cql_report_routing(const struct sm_stress_routing *rt)
{
	if (sx->scylla)
		sm_stress_out("Routing: %" PRIu64 " of %" PRIu64
			      " requests went to a connection whose server shard does not own the "
			      "key (cross-shard hops on the server)\n",
			      rt->misrouted, rt->routed);
	else
		sm_stress_out("Routing: shard of each request unknown (not a ScyllaDB-extended "
			      "server)\n");
	if (sx->tablets) {
		sm_stress_out("Tablets: %" PRIu64 " requests routed by tablets, %" PRIu64
			      " by the ring, %" PRIu64 " misrouted (answered with a "
			      "tablets-routing-v1 payload); %" PRIu64 " tablets learned, %" PRIu64
			      " held\n",
			      rt->by_tablets, rt->by_ring, rt->tablet_payloads, rt->learned,
			      rt->tablets);
		if (rt->malformed > 0)
			sm_stress_out("Tablets: %" PRIu64 " malformed tablets-routing-v1 payloads "
				      "ignored (%s)\n",
				      rt->malformed, rt->why != NULL ? rt->why : "?");
		if (rt->refused > 0)
			sm_stress_out("Tablets: %" PRIu64 " tablets not kept: the map holds at most "
				      "%u per client shard; their tokens went by the ring\n",
				      rt->refused, SM_STRESS_MAX_TABLETS);
	} else if (sx->scylla && sx->tablets_offered) {
		sm_stress_out("Tablets: not used (%s): every request went by the ring\n",
			      !sx->s.route.token_aware ? "routing is not token-aware"
						       : "the ring is not known");
	} else if (sx->scylla) {
		sm_stress_out("Tablets: the server did not offer TABLETS_ROUTING_V1: every request "
			      "went by the ring\n");
	}
}

const struct sm_stress_proto_ops sm_stress_cql_ops = {
	.name = "cql",
	.prepare = build_statements,
	.ctl_open = cql_ctl_open,
	.ctl_step = control_step,
	.ctl_close = cql_ctl_close,
	.ctl_port = cql_ctl_port,
	.plan = cql_plan,
	.conns_per_host = cql_conns_per_host,
	.conn_port = cql_conn_port,
	.connect = cql_connect,
	.send = cql_send,
	.close = cql_close,
	.report_routing = cql_report_routing,
};
