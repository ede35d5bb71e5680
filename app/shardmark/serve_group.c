/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shardmark serve --peers: the appliance group's links between members.
 *
 * lib/cql decides (sm_cql_exec_group.c) and this file carries: each shard
 * keeps, per peer and session keyspace, one CQL connection (lib/stress's
 * client, marked with SM_CQL_GROUP_STARTUP_KEY so the peer runs what
 * arrives and never forwards it again), opened on first use and dropped
 * when it breaks. A forwarded request goes out byte for byte and the
 * owner's response comes back byte for byte under the client's stream id;
 * an owner that answers Unprepared gets the statement prepared (the
 * coordinator knows its text, and ids are MD5 of keyspace and text on
 * every member, so the id stays the same) and the request again. An owner
 * that cannot be reached: ScyllaDB's Unavailable naming it.
 *
 * DDL: run on every peer (after it applied here) before the client hears
 * back; then each peer's system.local schema_version is read, which is what
 * system.peers shows for it (sm_cql_cluster.peer_schema_version).
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "serve_group.h"
#include "sm_core.h"
#include "sm_cql.h"
#include "sm_stress_cql.h"

/* A failed request prepared on the owner and sent again at most this often. */
#define MAX_TRIES 4

/* The members' shared view: what this process's shards learned of each peer. */
struct peer_version {
	pthread_mutex_t lock;
	bool known;
	struct sm_uuid v;
};

static const struct sm_cql_cluster *g_cl;
static const char *g_user, *g_password;
static uint32_t g_max_frame;
static struct peer_version *g_versions;

struct link;

/* Something waiting for a link to be ready. */
struct waiter {
	void (*run)(struct waiter *w, struct link *l, const char *fail);
	struct waiter *next;
	bool queued; /* on a link's list */
};

/* One connection to a peer, in one session keyspace. */
struct link {
	struct sm_cqlc *c;
	unsigned peer;
	bool ready;  /* USE done: requests go out */
	bool ending; /* in link_end(): the close's callbacks must not end it again */
	char ks[SM_CQL_KEYSPACE_MAX];
	struct waiter *wait_head, *wait_tail;
	struct link *next;
};

/* Most links a shard keeps (peers times keyspaces in use): idle ones make room. */
#define MAX_LINKS 64u

static __thread struct link *links;
static __thread unsigned nlinks;
static __thread struct sm_cql_buf relay_buf;

static const struct sm_cql_node *
peer_node(unsigned peer)
{
	return &g_cl->peers[peer];
}

/* ---- peers' schema versions ---- */

static bool
peer_version_get(void *ctx, unsigned i, struct sm_uuid *out)
{
	bool known;

	(void)ctx;
	if (g_versions == NULL || i >= g_cl->npeers)
		return false;
	pthread_mutex_lock(&g_versions[i].lock);
	known = g_versions[i].known;
	if (known)
		*out = g_versions[i].v;
	pthread_mutex_unlock(&g_versions[i].lock);
	return known;
}

static void
version_done(void *arg, const struct sm_cqlc_result *r)
{
	unsigned peer = (unsigned)(uintptr_t)arg;
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cell;

	sm_cqlc_rows_iter(&it, r);
	if (!sm_cqlc_rows_next(&it, &cell, 1) || cell.p == NULL || cell.len != 16)
		return;
	pthread_mutex_lock(&g_versions[peer].lock);
	memcpy(g_versions[peer].v.b, cell.p, 16);
	g_versions[peer].known = true;
	pthread_mutex_unlock(&g_versions[peer].lock);
}

/* Ask @l's peer for its schema version (best effort: a failure keeps the old one). */
static void
ask_version(struct link *l)
{
	sm_cqlc_query(l->c, "SELECT schema_version FROM system.local WHERE key='local'", SM_CQL_ONE,
		      NULL, 0, version_done, (void *)(uintptr_t)l->peer);
}

/* ---- links ---- */

static void
link_unlink(struct link *l)
{
	struct link **pp;

	for (pp = &links; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			nlinks--;
			return;
		}
	}
}

/* Run every waiter of @l (with @fail: the reason it will not be ready). */
static void
flush_waiters(struct link *l, const char *fail)
{
	struct waiter *w;

	while ((w = l->wait_head) != NULL) {
		l->wait_head = w->next;
		if (l->wait_head == NULL)
			l->wait_tail = NULL;
		w->queued = false;
		w->run(w, fail == NULL ? l : NULL, fail);
	}
}

/* @l is over: out of the list, its waiters failed, closed and freed. */
static void
link_end(struct link *l, const char *why)
{
	char msg[400];

	if (l->ending)
		return;
	l->ending = true;
	snprintf(msg, sizeof(msg), "%s", why);
	link_unlink(l);
	l->ready = false;
	flush_waiters(l, msg);
	sm_cqlc_close(l->c);
	sm_free(l);
}

static void
use_done(void *arg, const struct sm_cqlc_result *r)
{
	struct link *l = arg;
	char msg[400];

	if (r->kind == SM_CQLC_SET_KEYSPACE) {
		l->ready = true;
		flush_waiters(l, NULL);
		return;
	}
	if (r->kind == SM_CQLC_ERROR)
		snprintf(msg, sizeof(msg), "USE \"%s\" failed there: %.*s", l->ks,
			 (int)SM_MIN(r->error_message.len, 200u),
			 r->error_message.p != NULL ? (const char *)r->error_message.p : "");
	else
		snprintf(msg, sizeof(msg), "%s", sm_cqlc_error_text(l->c));
	link_end(l, msg);
}

static void
link_ready(struct sm_cqlc *c, int err, void *ctx)
{
	struct link *l = ctx;
	char q[2 * SM_CQL_KEYSPACE_MAX + 8], *p;
	const char *k;
	int ret;

	(void)c;
	if (err < 0) {
		static __thread struct sm_ratelimit rl;
		uint64_t suppressed;

		if (sm_ratelimit_ok(&rl, 10000, &suppressed))
			SM_WARN("appliance group: peer %s:%u: %s (%" PRIu64
				" more since the last message)",
				peer_node(l->peer)->address, peer_node(l->peer)->port,
				sm_cqlc_error_text(l->c), suppressed);
		link_end(l, sm_cqlc_error_text(l->c));
		return;
	}
	ask_version(l);
	if (l->ks[0] == '\0') {
		l->ready = true;
		flush_waiters(l, NULL);
		return;
	}
	/* the name quoted, its quotes doubled, as CQL writes a case-sensitive name */
	p = q + sprintf(q, "USE \"");
	for (k = l->ks; *k != '\0'; k++) {
		if (*k == '"')
			*p++ = '"';
		*p++ = *k;
	}
	strcpy(p, "\"");
	ret = sm_cqlc_query(l->c, q, SM_CQL_ONE, NULL, 0, use_done, l);
	if (ret < 0)
		link_end(l, strerror(-ret));
}

static void
link_closed(struct sm_cqlc *c, int err, void *ctx)
{
	(void)c;
	(void)err;
	link_end(ctx, sm_cqlc_error_text(((struct link *)ctx)->c));
}

/*
 * Run @w once the link to @peer in keyspace @ks is ready (at once when it
 * is), or with the reason it cannot be.
 */
static void
link_wait(unsigned peer, const char *ks, struct waiter *w)
{
	const struct sm_cql_node *n = peer_node(peer);
	struct sm_cqlc_opts o;
	struct link *l;
	char msg[200];
	int ret;

	for (l = links; l != NULL; l = l->next)
		if (l->peer == peer && strcmp(l->ks, ks) == 0)
			break;
	if (l == NULL && nlinks >= MAX_LINKS) {
		struct link *idle;

		for (idle = links; idle != NULL; idle = idle->next)
			if (idle->ready && idle->wait_head == NULL &&
			    sm_cqlc_inflight(idle->c) == 0)
				break;
		if (idle == NULL) {
			w->run(w, NULL,
			       "too many keyspaces in use at once towards the group (64 "
			       "connections per shard, all busy)");
			return;
		}
		link_end(idle, "closed to make room");
	}
	if (l == NULL) {
		l = sm_calloc(1, sizeof(*l));
		if (l == NULL) {
			w->run(w, NULL, "out of memory");
			return;
		}
		l->peer = peer;
		snprintf(l->ks, sizeof(l->ks), "%s", ks);
		memset(&o, 0, sizeof(o));
		o.addr = n->address;
		o.port = n->port;
		o.user = g_user;
		o.password = g_password;
		o.max_frame = g_max_frame;
		o.ready = link_ready;
		o.closed = link_closed;
		o.ctx = l;
		o.startup_key = SM_CQL_GROUP_STARTUP_KEY;
		o.startup_value = g_cl->ring_id;
		ret = sm_cqlc_connect(&o, &l->c);
		if (ret < 0) {
			snprintf(msg, sizeof(msg), "connecting failed: %s", strerror(-ret));
			sm_free(l);
			w->run(w, NULL, msg);
			return;
		}
		l->next = links;
		links = l;
		nlinks++;
	}
	if (l->ready) {
		w->run(w, l, NULL);
		return;
	}
	w->next = NULL;
	w->queued = true;
	if (l->wait_tail != NULL)
		l->wait_tail->next = w;
	else
		l->wait_head = w;
	l->wait_tail = w;
}

/* ---- polling the peers' versions (shard 0) ---- */

/*
 * DDL another member coordinated changes the peers' versions without this
 * member hearing of it: ask every peer again each second, so system.peers
 * catches up within one, and a driver's schema agreement wait ends.
 */
#define POLL_MS 1000

static __thread struct sm_timer poll_timer;
static __thread struct waiter *poll_waiters; /* one per peer */
static __thread bool poll_on;

static void
poll_send(struct waiter *w, struct link *l, const char *fail)
{
	(void)w;
	if (fail == NULL)
		ask_version(l);
}

static void
poll_fire(void *arg)
{
	unsigned i;

	(void)arg;
	for (i = 0; i < g_cl->npeers; i++)
		if (!poll_waiters[i].queued) /* still connecting since the last round */
			link_wait(i, "", &poll_waiters[i]);
	sm_timer_arm(&poll_timer, POLL_MS);
}

/* ---- forwarding ---- */

struct fwd {
	struct waiter w;
	struct sm_cql_req *req;
	unsigned peer;
	unsigned tries;
	bool preparing; /* w runs the PREPARE of the statement the owner lacked */
	char *prep_text;
	char ks[SM_CQL_KEYSPACE_MAX];
};

static void
fwd_free(struct fwd *f)
{
	sm_free(f->prep_text);
	sm_free(f);
}

/* ScyllaDB's Unavailable, naming the owner that cannot be reached and why. */
static void
fwd_unavailable(struct fwd *f, const char *why)
{
	const struct sm_cql_node *n = peer_node(f->peer);
	struct sm_cql_error e;
	const char *cl = sm_cql_consistency_name(sm_cql_req_consistency(f->req));
	char msg[700];

	snprintf(msg, sizeof(msg),
		 "Cannot achieve consistency level for cl %s. Requires 1, alive 0 (the partition "
		 "belongs to appliance group member %s:%u, which cannot be reached: %s; start it "
		 "or remove it from peers on every member)",
		 cl != NULL ? cl : "ONE", n->address, n->port, why);
	memset(&e, 0, sizeof(e));
	e.code = SM_CQL_ERR_UNAVAILABLE;
	e.message = sm_cql_str(msg);
	e.consistency = sm_cql_req_consistency(f->req);
	e.required = 1;
	e.alive = 0;
	sm_cql_buf_reset(&relay_buf);
	if (sm_cql_enc_error(&relay_buf, f->req->hdr.stream, &e) < 0)
		sm_cql_buf_reset(&relay_buf);
	sm_cql_reply(f->req, &relay_buf);
	fwd_free(f);
}

static void
fwd_reply(void *arg, const struct sm_cqlc_result *r);

/* The owner's answer to the statement's PREPARE: now the request again. */
static void
fwd_prepared(void *arg, const struct sm_cqlc_result *r)
{
	struct fwd *f = arg;

	if (r->kind == SM_CQLC_FAILED) {
		fwd_unavailable(f, "the connection to it broke");
		return;
	}
	if (r->kind == SM_CQLC_ERROR) {
		/* it does not prepare there (no such table yet...): that is the answer */
		f->tries = MAX_TRIES;
		fwd_reply(f, r);
		return;
	}
	f->preparing = false;
	link_wait(f->peer, f->ks, &f->w);
}

static void
fwd_reply(void *arg, const struct sm_cqlc_result *r)
{
	struct fwd *f = arg;
	const char *ks, *text;
	size_t len;
	size_t off;

	if (r->kind == SM_CQLC_FAILED) {
		char why[96];

		snprintf(why, sizeof(why), "the connection to it broke (%s)", strerror(-r->err));
		fwd_unavailable(f, r->err == -ESHUTDOWN ? "this member is stopping" : why);
		return;
	}
	if (r->kind == SM_CQLC_ERROR && r->error_code == SM_CQL_ERR_UNPREPARED &&
	    f->tries < MAX_TRIES &&
	    sm_cql_exec_prepared_text(r->resp->u.error.id, &ks, &text, &len)) {
		/* the owner lacks it (it restarted, or never saw it): prepare, then again */
		f->prep_text = sm_malloc(len + 1);
		if (f->prep_text != NULL) {
			memcpy(f->prep_text, text, len);
			f->prep_text[len] = '\0';
			f->preparing = true;
			f->tries++;
			link_wait(f->peer, ks, &f->w);
			return;
		}
	}
	/* The owner's frame as it came, under the client's stream. */
	sm_cql_buf_reset(&relay_buf);
	off = sm_cql_frame_begin(&relay_buf, SM_CQL_VERSION_RESPONSE,
				 r->hdr->flags & (uint8_t)~SM_CQL_FLAG_COMPRESSION,
				 f->req->hdr.stream, r->hdr->opcode);
	sm_cql_write_raw(&relay_buf, r->body.p, r->body.len);
	if (sm_cql_frame_end(&relay_buf, off) < 0) {
		struct sm_cql_req *req = f->req;

		fwd_free(f);
		sm_cql_reply_error(req, SM_CQL_ERR_SERVER, "out of memory relaying the answer");
		return;
	}
	sm_cql_reply(f->req, &relay_buf);
	fwd_free(f);
}

static void
fwd_send(struct waiter *w, struct link *l, const char *fail)
{
	struct fwd *f = (struct fwd *)w;
	int ret;

	if (fail != NULL) {
		fwd_unavailable(f, fail);
		return;
	}
	if (f->preparing) {
		ret = sm_cqlc_prepare(l->c, f->prep_text, fwd_prepared, f);
		sm_free(f->prep_text);
		f->prep_text = NULL;
	} else {
		ret = sm_cqlc_raw(l->c, f->req->hdr.opcode, f->req->hdr.flags, f->req->body,
				  fwd_reply, f);
	}
	if (ret == -EBUSY) {
		struct sm_cql_req *req = f->req;

		fwd_free(f);
		sm_cql_reply_error(req, SM_CQL_ERR_OVERLOADED,
				   "Too many requests in flight to the owning group member");
		return;
	}
	if (ret < 0)
		fwd_unavailable(f, strerror(-ret));
}

static void
group_forward(void *ctx, struct sm_cql_req *req, unsigned peer, const char *ks)
{
	struct fwd *f;

	(void)ctx;
	f = sm_calloc(1, sizeof(*f));
	if (f == NULL) {
		sm_cql_reply_error(req, SM_CQL_ERR_OVERLOADED, "out of memory");
		return;
	}
	f->w.run = fwd_send;
	f->req = req;
	f->peer = peer;
	snprintf(f->ks, sizeof(f->ks), "%s", ks);
	link_wait(peer, f->ks, &f->w);
}

/* ---- DDL on every peer ---- */

struct ddl;

struct ddl_peer {
	struct waiter w;
	struct ddl *d;
	unsigned peer;
};

struct ddl {
	void (*done)(void *arg, const char *msg);
	void *arg;
	char *text;
	char ks[SM_CQL_KEYSPACE_MAX];
	unsigned pending;
	unsigned nfailed;
	char failed[1024]; /* "a:port: why; b:port: why" */
	struct ddl_peer *peers;
};

static void
ddl_finish(struct ddl *d)
{
	char msg[1600];

	if (--d->pending > 0)
		return;
	if (d->nfailed == 0) {
		d->done(d->arg, NULL);
	} else {
		snprintf(msg, sizeof(msg),
			 "Schema change applied on this member (%s:%u) but not on %u of its %u "
			 "peers: %s. Start the members named and run the statement again through "
			 "any member (IF NOT EXISTS / IF EXISTS keeps it safe where it applied): "
			 "until every member has it, their schema_version in system.peers differs",
			 g_cl->self.address, g_cl->self.port, d->nfailed, g_cl->npeers, d->failed);
		d->done(d->arg, msg);
	}
	sm_free(d->text);
	sm_free(d->peers);
	sm_free(d);
}

static void
ddl_fail(struct ddl_peer *p, const char *why, size_t whylen)
{
	struct ddl *d = p->d;
	const struct sm_cql_node *n = peer_node(p->peer);
	size_t used = strlen(d->failed);

	snprintf(d->failed + used, sizeof(d->failed) - used, "%s%s:%u: %.*s", used ? "; " : "",
		 n->address, n->port, (int)SM_MIN(whylen, 300u), why);
	d->nfailed++;
}

static void
ddl_version_done(void *arg, const struct sm_cqlc_result *r)
{
	struct ddl_peer *p = arg;

	version_done((void *)(uintptr_t)p->peer, r);
	ddl_finish(p->d);
}

static void
ddl_applied(void *arg, const struct sm_cqlc_result *r)
{
	struct ddl_peer *p = arg;
	struct link *l;

	if (r->kind == SM_CQLC_ERROR) {
		ddl_fail(p, r->error_message.p != NULL ? (const char *)r->error_message.p : "",
			 r->error_message.len);
	} else if (r->kind == SM_CQLC_FAILED) {
		ddl_fail(p, "the connection broke", strlen("the connection broke"));
	} else {
		/* its new version, before the client hears back (drivers compare them next) */
		for (l = links; l != NULL; l = l->next)
			if (l->peer == p->peer && l->ready &&
			    sm_cqlc_query(
				    l->c,
				    "SELECT schema_version FROM system.local WHERE key='local'",
				    SM_CQL_ONE, NULL, 0, ddl_version_done, p) == 0)
				return;
	}
	ddl_finish(p->d);
}

static void
ddl_send(struct waiter *w, struct link *l, const char *fail)
{
	struct ddl_peer *p = (struct ddl_peer *)w;
	int ret;

	if (fail != NULL) {
		ddl_fail(p, fail, strlen(fail));
		ddl_finish(p->d);
		return;
	}
	ret = sm_cqlc_query(l->c, p->d->text, SM_CQL_ONE, NULL, 0, ddl_applied, p);
	if (ret < 0) {
		ddl_fail(p, strerror(-ret), strlen(strerror(-ret)));
		ddl_finish(p->d);
	}
}

static void
group_schema(void *ctx, const char *ks, const char *text, size_t len,
	     void (*done)(void *arg, const char *msg), void *arg)
{
	struct ddl *d;
	unsigned i;

	(void)ctx;
	d = sm_calloc(1, sizeof(*d));
	if (d != NULL) {
		d->text = sm_malloc(len + 1);
		d->peers = sm_calloc(g_cl->npeers, sizeof(*d->peers));
	}
	if (d == NULL || d->text == NULL || d->peers == NULL) {
		if (d != NULL) {
			sm_free(d->text);
			sm_free(d->peers);
			sm_free(d);
		}
		done(arg, "Schema change applied on this member but not sent to its peers: out of "
			  "memory; run the statement again (with IF NOT EXISTS / IF EXISTS)");
		return;
	}
	memcpy(d->text, text, len);
	d->text[len] = '\0';
	snprintf(d->ks, sizeof(d->ks), "%s", ks);
	d->done = done;
	d->arg = arg;
	d->pending = g_cl->npeers + 1;
	for (i = 0; i < g_cl->npeers; i++) {
		d->peers[i].w.run = ddl_send;
		d->peers[i].d = d;
		d->peers[i].peer = i;
		link_wait(i, d->ks, &d->peers[i].w);
	}
	ddl_finish(d);
}

static const struct sm_cql_group group_ops = {
	.forward = group_forward,
	.schema = group_schema,
};

int
sm_serve_group_init(struct sm_cql_cluster *cl, const char *user, const char *password,
		    uint32_t max_frame, const struct sm_cql_group **out)
{
	unsigned i;

	*out = NULL;
	if (cl->npeers == 0)
		return 0;
	g_versions = sm_calloc(cl->npeers, sizeof(*g_versions));
	if (g_versions == NULL)
		return -ENOMEM;
	for (i = 0; i < cl->npeers; i++)
		pthread_mutex_init(&g_versions[i].lock, NULL);
	g_cl = cl;
	g_user = user;
	g_password = password;
	g_max_frame = max_frame;
	cl->peer_schema_version = peer_version_get;
	cl->peer_schema_ctx = NULL;
	*out = &group_ops;
	return 0;
}

int
sm_serve_group_shard_init(void)
{
	unsigned i;

	if (g_cl == NULL || sm_shard_id() != 0)
		return 0;
	poll_waiters = sm_calloc(g_cl->npeers, sizeof(*poll_waiters));
	if (poll_waiters == NULL)
		return -ENOMEM;
	for (i = 0; i < g_cl->npeers; i++)
		poll_waiters[i].run = poll_send;
	sm_timer_init(&poll_timer, poll_fire, NULL);
	sm_timer_arm(&poll_timer, POLL_MS);
	poll_on = true;
	return 0;
}

void
sm_serve_group_shard_fini(void)
{
	if (poll_on) {
		sm_timer_cancel(&poll_timer);
		poll_on = false;
	}
	while (links != NULL)
		link_end(links, "this member is stopping");
	sm_cql_buf_release(&relay_buf);
	sm_free(poll_waiters);
	poll_waiters = NULL;
}

void
sm_serve_group_fini(void)
{
	unsigned i;

	if (g_versions == NULL)
		return;
	for (i = 0; i < g_cl->npeers; i++)
		pthread_mutex_destroy(&g_versions[i].lock);
	sm_free(g_versions);
	g_versions = NULL;
	g_cl = NULL;
}
