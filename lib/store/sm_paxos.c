/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "sm_core.h"
#include "sm_paxos.h"
#include "sm_uuid.h"

/* Ballot order with the zero uuid ("none") below every real ballot. */
static bool
ballot_is_zero(const struct sm_uuid *u)
{
	static const struct sm_uuid zero;

	return memcmp(u->b, zero.b, sizeof(zero.b)) == 0;
}

static int
ballot_cmp(const struct sm_uuid *a, const struct sm_uuid *b)
{
	bool za = ballot_is_zero(a), zb = ballot_is_zero(b);

	if (za || zb)
		return (int)zb - (int)za;
	return sm_timeuuid_cmp(a, b);
}

static void
drop_accepted(struct sm_paxos_state *s, const struct sm_paxos_value_ops *ops)
{
	if (s->accepted_value)
		ops->free(s->accepted_value);
	s->accepted_value = NULL;
	memset(&s->accepted_ballot, 0, sizeof(s->accepted_ballot));
}

void
sm_paxos_prepare(struct sm_paxos_state *s, const struct sm_uuid *ballot,
		 struct sm_paxos_promise *out)
{
	memset(out, 0, sizeof(*out));
	/* Strictly above: two proposers must never both hold a promise for the same ballot. */
	if (ballot_cmp(ballot, &s->promised) > 0) {
		s->promised = *ballot;
		out->promised = true;
	}
	out->promised_ballot = s->promised;
	out->has_accepted = s->accepted_value != NULL;
	if (out->has_accepted) {
		out->accepted_ballot = s->accepted_ballot;
		out->accepted_value = s->accepted_value;
	}
	out->mrc = s->mrc;
	out->mrc_value = s->mrc_value;
}

int
sm_paxos_accept(struct sm_paxos_state *s, const struct sm_uuid *ballot, const void *value,
		const struct sm_paxos_value_ops *ops)
{
	void *copy;

	/* Equal is allowed: the promise we gave this very ballot at prepare. */
	if (ballot_cmp(ballot, &s->promised) < 0)
		return 0;
	s->promised = *ballot;
	/* A repeated message, or one for a ballot already committed here:
	 * nothing new to keep. */
	if ((s->accepted_value && ballot_cmp(ballot, &s->accepted_ballot) == 0) ||
	    ballot_cmp(ballot, &s->mrc) == 0)
		return 1;
	copy = ops->clone(value);
	if (!copy)
		return -ENOMEM;
	drop_accepted(s, ops);
	s->accepted_value = copy;
	s->accepted_ballot = *ballot;
	return 1;
}

int
sm_paxos_commit(struct sm_paxos_state *s, const struct sm_uuid *ballot, const void *value,
		const struct sm_paxos_value_ops *ops, void *store_ctx)
{
	bool is_accepted = s->accepted_value && ballot_cmp(&s->accepted_ballot, ballot) == 0;
	void *keep;
	int rc;

	/*
	 * Apply only what is newer than the most recent commit, so a replica
	 * applies each chosen value at most once and in ballot order. An older
	 * commit arriving late was superseded by a newer one that was already
	 * applied here.
	 */
	if (ballot_cmp(ballot, &s->mrc) > 0) {
		/* Reuse the accepted clone when this is the proposal we accepted:
		 * the steady state costs one clone per CAS, not two. */
		keep = is_accepted ? s->accepted_value : ops->clone(value);
		if (!keep)
			return -ENOMEM;
		rc = ops->apply(store_ctx, value, sm_uuid_micros(ballot));
		if (rc < 0) {
			if (!is_accepted)
				ops->free(keep);
			return rc;
		}
		if (is_accepted) {
			s->accepted_value = NULL;
			memset(&s->accepted_ballot, 0, sizeof(s->accepted_ballot));
		}
		if (s->mrc_value)
			ops->free(s->mrc_value);
		s->mrc_value = keep;
		s->mrc = *ballot;
	}
	/* A proposal at or below a committed ballot is finished (or lost):
	 * a later prepare must not repair it. */
	if (s->accepted_value && ballot_cmp(&s->accepted_ballot, ballot) <= 0)
		drop_accepted(s, ops);
	if (ballot_cmp(ballot, &s->promised) > 0)
		s->promised = *ballot;
	return 0;
}

void
sm_paxos_state_clear(struct sm_paxos_state *s, const struct sm_paxos_value_ops *ops)
{
	if (s->accepted_value)
		ops->free(s->accepted_value);
	if (s->mrc_value)
		ops->free(s->mrc_value);
	memset(s, 0, sizeof(*s));
}

/* ---- the per-shard paxos table ---- */

struct paxos_entry {
	struct paxos_entry *next;
	uint64_t hash;
	struct sm_paxos_state state;
	struct sm_uuid table_id;
	size_t pk_len;
	uint8_t pk[];
};

struct sm_paxos_table {
	const struct sm_paxos_value_ops *ops;
	struct paxos_entry **buckets;
	size_t mask; /* bucket count - 1, a power of two */
	size_t count;
};

#define PAXOS_TABLE_MIN_BUCKETS 64

/* FNV-1a over the key with a murmur3 finaliser so the low bits used for the
 * bucket depend on every byte. */
static uint64_t
key_hash(const struct sm_paxos_key *k)
{
	const uint8_t *p = k->pk;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < sizeof(k->table_id.b); i++)
		h = (h ^ k->table_id.b[i]) * 0x100000001b3ULL;
	for (i = 0; i < k->pk_len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static bool
entry_matches(const struct paxos_entry *e, uint64_t h, const struct sm_paxos_key *k)
{
	return e->hash == h && e->pk_len == k->pk_len &&
	       memcmp(e->table_id.b, k->table_id.b, sizeof(e->table_id.b)) == 0 &&
	       (k->pk_len == 0 || memcmp(e->pk, k->pk, k->pk_len) == 0);
}

struct sm_paxos_table *
sm_paxos_table_create(const struct sm_paxos_value_ops *ops)
{
	struct sm_paxos_table *t;

	if (!ops || !ops->clone || !ops->free || !ops->apply)
		return NULL;
	t = sm_calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->buckets = sm_calloc(PAXOS_TABLE_MIN_BUCKETS, sizeof(*t->buckets));
	if (!t->buckets)
		goto free_table;
	t->ops = ops;
	t->mask = PAXOS_TABLE_MIN_BUCKETS - 1;
	return t;

free_table:
	sm_free(t);
	return NULL;
}

void
sm_paxos_table_destroy(struct sm_paxos_table *t)
{
	struct paxos_entry *e, *next;
	size_t i;

	if (!t)
		return;
	for (i = 0; i <= t->mask; i++) {
		for (e = t->buckets[i]; e; e = next) {
			next = e->next;
			sm_paxos_state_clear(&e->state, t->ops);
			sm_free(e);
		}
	}
	sm_free(t->buckets);
	sm_free(t);
}

/* Double the buckets; on allocation failure keep the old ones (still correct, only slower). */
static void
table_grow(struct sm_paxos_table *t)
{
	size_t n = (t->mask + 1) * 2, i;
	struct paxos_entry **b, *e, *next;

	b = sm_calloc(n, sizeof(*b));
	if (!b)
		return;
	for (i = 0; i <= t->mask; i++) {
		for (e = t->buckets[i]; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	sm_free(t->buckets);
	t->buckets = b;
	t->mask = n - 1;
}

struct sm_paxos_state *
sm_paxos_table_lookup(struct sm_paxos_table *t, const struct sm_paxos_key *key, bool create)
{
	uint64_t h = key_hash(key);
	struct paxos_entry *e;

	for (e = t->buckets[h & t->mask]; e; e = e->next)
		if (entry_matches(e, h, key))
			return &e->state;
	if (!create)
		return NULL;
	e = sm_calloc(1, sizeof(*e) + key->pk_len);
	if (!e)
		return NULL;
	e->hash = h;
	e->table_id = key->table_id;
	e->pk_len = key->pk_len;
	if (key->pk_len)
		memcpy(e->pk, key->pk, key->pk_len);
	if (t->count >= t->mask + 1)
		table_grow(t);
	e->next = t->buckets[h & t->mask];
	t->buckets[h & t->mask] = e;
	t->count++;
	return &e->state;
}

size_t
sm_paxos_table_drop(struct sm_paxos_table *t, const struct sm_uuid *table_id)
{
	struct paxos_entry **pp, *e;
	size_t i, n = 0;

	for (i = 0; i <= t->mask; i++) {
		pp = &t->buckets[i];
		while ((e = *pp) != NULL) {
			if (memcmp(e->table_id.b, table_id->b, sizeof(e->table_id.b)) != 0) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			sm_paxos_state_clear(&e->state, t->ops);
			sm_free(e);
			n++;
		}
	}
	t->count -= n;
	return n;
}

size_t
sm_paxos_table_count(const struct sm_paxos_table *t)
{
	return t->count;
}

const struct sm_paxos_value_ops *
sm_paxos_table_ops(const struct sm_paxos_table *t)
{
	return t->ops;
}

/* ---- the local replica ---- */

static int
local_prepare(void *ctx, const struct sm_paxos_key *key, const struct sm_uuid *ballot,
	      struct sm_paxos_promise *out)
{
	struct sm_paxos_local *l = ctx;
	struct sm_paxos_state *s = sm_paxos_table_lookup(l->table, key, true);

	if (!s)
		return -ENOMEM;
	sm_paxos_prepare(s, ballot, out);
	return 0;
}

static int
local_accept(void *ctx, const struct sm_paxos_key *key, const struct sm_uuid *ballot,
	     const void *value, bool *accepted)
{
	struct sm_paxos_local *l = ctx;
	struct sm_paxos_state *s = sm_paxos_table_lookup(l->table, key, true);
	int rc;

	if (!s)
		return -ENOMEM;
	rc = sm_paxos_accept(s, ballot, value, l->table->ops);
	if (rc < 0)
		return rc;
	*accepted = rc == 1;
	return 0;
}

static int
local_commit(void *ctx, const struct sm_paxos_key *key, const struct sm_uuid *ballot,
	     const void *value)
{
	struct sm_paxos_local *l = ctx;
	struct sm_paxos_state *s = sm_paxos_table_lookup(l->table, key, true);

	if (!s)
		return -ENOMEM;
	return sm_paxos_commit(s, ballot, value, l->table->ops, l->store_ctx);
}

const struct sm_paxos_replica_ops sm_paxos_local_ops = {
	.prepare = local_prepare,
	.accept = local_accept,
	.commit = local_commit,
};

/* ---- the proposer ---- */

int
sm_paxos_round_init(struct sm_paxos_round *r, const struct sm_paxos_round_conf *conf)
{
	const struct sm_paxos_request_ops *req = conf->req;
	unsigned i;

	if (conf->nreplicas < 1 || conf->nreplicas > SM_PAXOS_MAX_REPLICAS || !conf->replicas ||
	    !conf->gen || !conf->ops || !conf->ops->clone || !conf->ops->free || !req ||
	    !req->read_check || (!conf->serial_read && !req->new_value))
		return -EINVAL;
	for (i = 0; i < conf->nreplicas; i++) {
		const struct sm_paxos_replica_ops *o = conf->replicas[i].ops;

		if (!o || !o->prepare || !o->accept || !o->commit)
			return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	r->conf = *conf;
	if (!r->conf.max_attempts)
		r->conf.max_attempts = SM_PAXOS_DEFAULT_ATTEMPTS;
	r->quorum = conf->nreplicas / 2 + 1;
	r->step = SM_PAXOS_PREPARE;
	return 0;
}

static void
note_seen(struct sm_paxos_round *r, const struct sm_uuid *b)
{
	if (ballot_cmp(b, &r->seen) > 0)
		r->seen = *b;
}

static void
release_repair(struct sm_paxos_round *r)
{
	if (r->repair_value)
		r->conf.ops->free(r->repair_value);
	r->repair_value = NULL;
	r->missing_mrc = 0;
}

/*
 * A ballot whose microseconds are above everything seen, not merely a
 * timeuuid above it: the ballot's microseconds become the write timestamp,
 * and two commits in a row must not tie on it.
 */
static int
next_ballot(struct sm_paxos_round *r)
{
	int64_t min_micros = ballot_is_zero(&r->seen) ? INT64_MIN : sm_uuid_micros(&r->seen);

	sm_uuid_gen_next_after(r->conf.gen, min_micros, &r->ballot);
	/* Only past the generator's saturation (the year 5236). */
	if (ballot_cmp(&r->ballot, &r->seen) <= 0 || sm_uuid_micros(&r->ballot) <= min_micros)
		return -EOVERFLOW;
	return 0;
}

static int
do_prepare(struct sm_paxos_round *r)
{
	const struct sm_paxos_promise *best_acc = NULL, *best_mrc = NULL;
	struct sm_paxos_promise p[SM_PAXOS_MAX_REPLICAS];
	unsigned i, answers = 0;
	uint32_t promised = 0, missing = 0;
	bool refused = false, tie;
	int rc;

	/* Cassandra bounds the retries by cas_contention_timeout_in_ms; a
	 * shard-local state machine bounds them by count. */
	if (r->attempts >= r->conf.max_attempts)
		return -ETIMEDOUT;
	rc = next_ballot(r);
	if (rc < 0)
		return rc;
	r->attempts++;

	for (i = 0; i < r->conf.nreplicas; i++) {
		const struct sm_paxos_replica *rep = &r->conf.replicas[i];

		if (rep->ops->prepare(rep->ctx, &r->conf.key, &r->ballot, &p[i]) < 0)
			continue;
		answers++;
		note_seen(r, &p[i].mrc);
		if (!p[i].promised) {
			refused = true;
			note_seen(r, &p[i].promised_ballot);
			continue;
		}
		promised |= 1u << i;
		if (p[i].has_accepted && p[i].accepted_value) {
			note_seen(r, &p[i].accepted_ballot);
			if (!best_acc ||
			    ballot_cmp(&p[i].accepted_ballot, &best_acc->accepted_ballot) > 0)
				best_acc = &p[i];
		}
		if (!best_mrc || ballot_cmp(&p[i].mrc, &best_mrc->mrc) > 0)
			best_mrc = &p[i];
	}
	/* Above every ballot seen in timeuuid order (the promises saw to that)
	 * but maybe in the same microsecond as one: what we commit would then
	 * tie on write timestamp with a commit or a proposal we repair. */
	tie = !ballot_is_zero(&r->seen) && sm_uuid_micros(&r->ballot) <= sm_uuid_micros(&r->seen);
	note_seen(r, &r->ballot);

	/* One refusal is enough: a higher ballot is in play and ours cannot
	 * win; start over above it (Cassandra's !summary.promised). */
	if (refused) {
		r->contention++;
		return SM_PAXOS_PREPARE;
	}
	if (answers < r->quorum)
		return -ETIMEDOUT;
	/* Go again with a ballot in a later microsecond. */
	if (tie)
		return SM_PAXOS_PREPARE;

	/* A proposal accepted after the most recent commit may have been
	 * chosen: finish it with our ballot before anything of ours. */
	if (best_acc && ballot_cmp(&best_acc->accepted_ballot, &best_mrc->mrc) > 0) {
		r->repair_value = r->conf.ops->clone(best_acc->accepted_value);
		if (!r->repair_value)
			return -ENOMEM;
		r->repairs++;
		return SM_PAXOS_REPAIR_PROPOSE;
	}

	/* Promisers that missed the most recent commit: a new value may only
	 * be proposed once a quorum has learnt the previous one
	 * (CASSANDRA-5062), so send it to them and prepare again. */
	for (i = 0; i < r->conf.nreplicas; i++)
		if ((promised & (1u << i)) && ballot_cmp(&p[i].mrc, &best_mrc->mrc) != 0)
			missing |= 1u << i;
	if (missing && best_mrc->mrc_value) {
		r->repair_value = r->conf.ops->clone(best_mrc->mrc_value);
		if (!r->repair_value)
			return -ENOMEM;
		r->repair_ballot = best_mrc->mrc;
		r->missing_mrc = missing;
		return SM_PAXOS_REPAIR_MRC;
	}
	return SM_PAXOS_READ;
}

/* Propose @value with our ballot; counts accepts and refusals. */
static void
propose_all(struct sm_paxos_round *r, const void *value, unsigned *accepts, unsigned *refusals)
{
	unsigned i;

	*accepts = 0;
	*refusals = 0;
	for (i = 0; i < r->conf.nreplicas; i++) {
		const struct sm_paxos_replica *rep = &r->conf.replicas[i];
		bool ok = false;

		if (rep->ops->accept(rep->ctx, &r->conf.key, &r->ballot, value, &ok) < 0)
			continue;
		if (ok)
			(*accepts)++;
		else
			(*refusals)++;
	}
}

/* Commit (@ballot, @value) to the replicas in @mask; returns how many answered. */
static unsigned
commit_some(struct sm_paxos_round *r, const struct sm_uuid *ballot, const void *value,
	    uint32_t mask)
{
	unsigned i, answers = 0;

	for (i = 0; i < r->conf.nreplicas; i++) {
		const struct sm_paxos_replica *rep = &r->conf.replicas[i];

		if (!(mask & (1u << i)))
			continue;
		if (rep->ops->commit(rep->ctx, &r->conf.key, ballot, value) == 0)
			answers++;
	}
	return answers;
}

static uint32_t
all_replicas(const struct sm_paxos_round *r)
{
	return r->conf.nreplicas == 32 ? UINT32_MAX : (1u << r->conf.nreplicas) - 1;
}

static int
do_repair_propose(struct sm_paxos_round *r)
{
	unsigned accepts, refusals;

	propose_all(r, r->repair_value, &accepts, &refusals);
	if (accepts >= r->quorum)
		return SM_PAXOS_REPAIR_COMMIT;
	/* Refused by enough replicas that a quorum is out of reach: a newer
	 * ballot took over, which finishes the proposal itself. */
	if (r->conf.nreplicas - refusals < r->quorum) {
		release_repair(r);
		r->contention++;
		return SM_PAXOS_PREPARE;
	}
	return -ETIMEDOUT;
}

static int
do_repair_commit(struct sm_paxos_round *r)
{
	unsigned answers = commit_some(r, &r->ballot, r->repair_value, all_replicas(r));

	release_repair(r);
	if (answers < r->quorum)
		return -ETIMEDOUT;
	/* Our ballot is spent on the repaired value: prepare again with a new one. */
	return SM_PAXOS_PREPARE;
}

static int
do_repair_mrc(struct sm_paxos_round *r)
{
	/* Fire and forget, as Cassandra's sendCommit: the next prepare shows
	 * whether they learnt it. */
	commit_some(r, &r->repair_ballot, r->repair_value, r->missing_mrc);
	release_repair(r);
	return SM_PAXOS_PREPARE;
}

static int
do_read(struct sm_paxos_round *r)
{
	bool ok = false;
	int rc;

	rc = r->conf.req->read_check(r->conf.req_ctx, &ok);
	if (rc < 0)
		return rc;
	r->condition_ok = ok;
	/* A failed condition proposes nothing: the acceptors are left as the
	 * prepare left them. */
	if (r->conf.serial_read || !ok)
		return SM_PAXOS_DONE;
	r->proposal = r->conf.req->new_value(r->conf.req_ctx);
	if (!r->proposal)
		return -ENOMEM;
	return SM_PAXOS_PROPOSE;
}

static int
do_propose(struct sm_paxos_round *r)
{
	unsigned accepts, refusals;

	propose_all(r, r->proposal, &accepts, &refusals);
	if (accepts >= r->quorum)
		return SM_PAXOS_COMMIT;
	/* Refused everywhere: nothing of ours survives, so it is safe to read
	 * again and re-propose. Accepted somewhere: the value may still be
	 * chosen by a later repair, so retrying could apply it twice; report
	 * the outcome as unknown (Cassandra's timeoutIfPartial). */
	if (accepts == 0 && refusals == r->conf.nreplicas) {
		r->contention++;
		return SM_PAXOS_PREPARE;
	}
	return -ETIMEDOUT;
}

static int
do_commit(struct sm_paxos_round *r)
{
	if (commit_some(r, &r->ballot, r->proposal, all_replicas(r)) < r->quorum)
		return -ETIMEDOUT;
	r->applied = true;
	return SM_PAXOS_DONE;
}

int
sm_paxos_round_step(struct sm_paxos_round *r)
{
	int rc;

	switch (r->step) {
	case SM_PAXOS_PREPARE:
		rc = do_prepare(r);
		break;
	case SM_PAXOS_REPAIR_PROPOSE:
		rc = do_repair_propose(r);
		break;
	case SM_PAXOS_REPAIR_COMMIT:
		rc = do_repair_commit(r);
		break;
	case SM_PAXOS_REPAIR_MRC:
		rc = do_repair_mrc(r);
		break;
	case SM_PAXOS_READ:
		rc = do_read(r);
		break;
	case SM_PAXOS_PROPOSE:
		rc = do_propose(r);
		break;
	case SM_PAXOS_COMMIT:
		rc = do_commit(r);
		break;
	case SM_PAXOS_DONE:
	default:
		return SM_PAXOS_DONE;
	}
	if (rc < 0 || rc == SM_PAXOS_DONE) {
		release_repair(r);
		r->error = rc < 0 ? rc : 0;
		r->step = SM_PAXOS_DONE;
		return rc;
	}
	r->step = (enum sm_paxos_step)rc;
	return rc;
}

int
sm_paxos_round_run(struct sm_paxos_round *r)
{
	int rc;

	while (r->step != SM_PAXOS_DONE) {
		rc = sm_paxos_round_step(r);
		if (rc < 0)
			return rc;
	}
	return r->error;
}

void
sm_paxos_round_fini(struct sm_paxos_round *r)
{
	release_repair(r);
}
