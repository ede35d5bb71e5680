/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_PAXOS_H
#define SM_PAXOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_uuid.h"

/*
 * Paxos for lightweight transactions (compare-and-set), one Paxos instance
 * per partition, run on the partition's owning shard, as Cassandra's
 * StorageProxy.cas() / beginAndRepairPaxos() and ScyllaDB's storage_proxy::cas()
 * do it.
 *
 * Three parts:
 *
 *  - The acceptor (replica side): per partition state (promised ballot,
 *    accepted proposal, most recent commit) in a per-shard paxos table, and
 *    three pure operations on it: sm_paxos_prepare(), sm_paxos_accept(),
 *    sm_paxos_commit().
 *
 *  - The replica endpoint (struct sm_paxos_replica): how a proposer reaches an
 *    acceptor. Today there is one, the local replica (sm_paxos_local_ops) on
 *    the owning shard; a multi-replica setup plugs in other endpoints and
 *    tests wrap endpoints to lose messages.
 *
 *  - The proposer (struct sm_paxos_round): a steppable state machine for one
 *    CAS or one serial read. sm_paxos_round_step() performs exactly one phase
 *    against all replicas, so tests can interleave proposers phase by phase;
 *    sm_paxos_round_run() steps to the end.
 *
 * Ballots are timeuuids compared in timeuuid order (sm_timeuuid_cmp); the
 * zero uuid means "none" and is below every ballot. A committed value is
 * applied with the ballot's microseconds as its write timestamp, so LWT
 * writes order with plain writes the way Cassandra's do.
 *
 * Values are opaque to Paxos: the store's mutation, handled through
 * struct sm_paxos_value_ops. Everything here is per shard and lock free; a
 * round, its replicas and the paxos tables they use belong to one shard.
 *
 * A round (Cassandra's cas() loop around beginAndRepairPaxos()):
 *
 *   PREPARE: a ballot whose microseconds are above every ballot seen so far
 *     (refused promises, accepted proposals, commits), sent to all replicas.
 *     Any refusal: contention, prepare again. Fewer than a quorum of
 *     answers: -ETIMEDOUT. Otherwise, among the promises:
 *     - an accepted proposal newer than the most recent commit (max over
 *       the promises) may have been chosen: REPAIR_PROPOSE it with our
 *       ballot, REPAIR_COMMIT it, then prepare again with a new ballot;
 *     - else promisers whose most recent commit is older than the newest
 *       one: REPAIR_MRC sends them that commit, then prepare again;
 *     - else READ.
 *   READ: read_check() reads the row and evaluates the condition. A serial
 *     read, or a false condition, ends here: nothing is proposed.
 *   PROPOSE: new_value() with our ballot to all replicas; a quorum of
 *     accepts: COMMIT. Refused by every replica: contention, start over
 *     (prepare, read, new_value again). Accepted by some but not a quorum:
 *     -ETIMEDOUT, outcome unknown (retrying could apply it twice).
 *   COMMIT: to all replicas; a quorum of answers: applied.
 *   Every prepare counts as an attempt; max_attempts of them: -ETIMEDOUT.
 *
 * Where this differs from Cassandra (3.x/4.0 Paxos v1):
 *   - Retries are bounded by a count, not cas_contention_timeout_in_ms, and
 *     there is no random sleep between them: the caller schedules rounds.
 *   - An acceptor applies a commit only when it is newer than its most
 *     recent commit, so each replica applies chosen values once each and in
 *     ballot order. Cassandra applies every commit and lets cell timestamps
 *     sort it out; a replica here that missed a commit superseded before it
 *     was repaired does not get the old one (no matter with one replica).
 *   - Accept and commit raise the promise too (ScyllaDB saves the promise
 *     with the proposal), so promised >= accepted and >= most recent commit.
 *   - A ballot in the same microsecond as one seen in the promises is not
 *     used (prepare again): write timestamps of successive commits differ.
 *   - A false condition or a serial read proposes nothing. Newer Cassandra
 *     (CASSANDRA-12126) may propose an empty update there so that a minority
 *     proposal completed later cannot contradict the read; one replica has
 *     no minority.
 *   - REPAIR_MRC does not skip commits older than the paxos TTL (states do
 *     not expire yet), and is not awaited: the next prepare checks it.
 *   - Every phase goes to all replicas and uses every answer, where
 *     Cassandra goes on at the first quorum; a lost message is a replica op
 *     returning an error.
 *
 * Cost with the local replica: one clone per CAS (the accepted copy, kept
 * as the most recent commit's value), one free of the previous one; repairs
 * clone once more.
 */

struct sm_uuid_gen;

/* How Paxos handles the store's proposals (mutations). */
struct sm_paxos_value_ops {
	/* A copy that outlives the request: acceptors keep accepted and
	 * committed values, proposers keep a value they repair. NULL when out
	 * of memory. */
	void *(*clone)(const void *v);
	/* Free a value returned by clone(). */
	void (*free)(void *v);
	/* Learn: apply the mutation @v to the store with @write_ts_micros as
	 * its write timestamp. 0, or -errno when it could not be applied (the
	 * commit then fails at this replica and is retried by a later round). */
	int (*apply)(void *store_ctx, const void *v, int64_t write_ts_micros);
};

/* The partition a Paxos instance is for: table id and serialized partition key. */
struct sm_paxos_key {
	struct sm_uuid table_id;
	const void *pk;
	size_t pk_len;
};

/*
 * Acceptor state of one partition. Zero ballots mean none. The acceptor
 * keeps the value of its most recent commit as well, so a proposer can
 * re-send that commit to replicas that missed it ("repair commit").
 * Invariant kept by the operations: promised >= accepted_ballot and
 * promised >= mrc, so a ballot below a commit is never accepted.
 */
struct sm_paxos_state {
	struct sm_uuid promised;	/* highest ballot promised (or accepted, or committed) */
	struct sm_uuid accepted_ballot; /* ballot of the in-progress proposal */
	void *accepted_value;		/* its value (a clone), NULL when none */
	struct sm_uuid mrc;		/* most recent commit's ballot */
	void *mrc_value;		/* its value (a clone), NULL when none */
};

/* A replica's answer to prepare. Value pointers are the acceptor's: a
 * replica keeps them valid until the proposer's step returns, and the
 * proposer clones what it keeps longer. */
struct sm_paxos_promise {
	bool promised;
	struct sm_uuid promised_ballot; /* when refused: the higher ballot already promised */
	bool has_accepted;
	struct sm_uuid accepted_ballot;
	const void *accepted_value;
	struct sm_uuid mrc; /* zero: nothing committed yet */
	const void *mrc_value;
};

/*
 * Promise @ballot if it is strictly above every ballot promised so far
 * (Cassandra's PaxosState.prepare), and report the accepted proposal and the
 * most recent commit either way. A refusal reports the higher promised ballot
 * in promised_ballot so the proposer can pick a ballot above it.
 */
void
sm_paxos_prepare(struct sm_paxos_state *s, const struct sm_uuid *ballot,
		 struct sm_paxos_promise *out);

/*
 * Accept the proposal (@ballot, @value) if @ballot is at least the promised
 * ballot: keep a clone of @value as the accepted proposal (replacing an older
 * one) and raise the promise to @ballot. 1 when accepted, 0 when refused
 * (a higher ballot was promised), -ENOMEM when the clone failed (nothing
 * changed).
 */
int
sm_paxos_accept(struct sm_paxos_state *s, const struct sm_uuid *ballot, const void *value,
		const struct sm_paxos_value_ops *ops);

/*
 * Learn the committed proposal (@ballot, @value). If @ballot is newer than
 * the most recent commit, apply @value to @store_ctx with the ballot's
 * microseconds as write timestamp and make it the most recent commit (the
 * accepted clone is reused when it is this proposal); an older or repeated
 * commit is not applied again. Either way the accepted proposal is cleared
 * when its ballot is not newer than @ballot, and the promise is raised to
 * @ballot. 0, or -errno from clone (-ENOMEM) or apply, with nothing changed.
 */
int
sm_paxos_commit(struct sm_paxos_state *s, const struct sm_uuid *ballot, const void *value,
		const struct sm_paxos_value_ops *ops, void *store_ctx);

/* Free the values a state holds and zero it. */
void
sm_paxos_state_clear(struct sm_paxos_state *s, const struct sm_paxos_value_ops *ops);

/*
 * The per-shard paxos table: acceptor states keyed by (table id, partition
 * key), Cassandra's system.paxos. States are created on first use and kept
 * until their table is dropped or the paxos table destroyed (Cassandra
 * expires them after gc_grace_seconds; we do not yet).
 */
struct sm_paxos_table;

/* An empty table whose states hold values handled by @ops; NULL when out of memory. */
struct sm_paxos_table *
sm_paxos_table_create(const struct sm_paxos_value_ops *ops);

/* Free every state, the values they hold, and the table. NULL is a no-op. */
void
sm_paxos_table_destroy(struct sm_paxos_table *t);

/*
 * The state of @key, or NULL when it has none. With @create, a missing state
 * is created (all zero) and NULL means out of memory. The pointer stays valid
 * until the state is removed (sm_paxos_table_drop, sm_paxos_table_destroy);
 * the key bytes are copied.
 */
struct sm_paxos_state *
sm_paxos_table_lookup(struct sm_paxos_table *t, const struct sm_paxos_key *key, bool create);

/* Remove every state of table @table_id (DROP TABLE, TRUNCATE); returns how many. */
size_t
sm_paxos_table_drop(struct sm_paxos_table *t, const struct sm_uuid *table_id);

/* Number of states in the table. */
size_t
sm_paxos_table_count(const struct sm_paxos_table *t);

/* The value ops the table was created with. */
const struct sm_paxos_value_ops *
sm_paxos_table_ops(const struct sm_paxos_table *t);

/*
 * A replica as a proposer sees it: the three Paxos messages. Each returns 0
 * when the replica answered, or -errno when it did not (unreachable, timed
 * out, out of memory); a proposer counts answers against its quorum. A reply
 * may be lost after the replica acted, as on a network.
 */
struct sm_paxos_replica_ops {
	/* Prepare: fills @out (promise or refusal). */
	int (*prepare)(void *ctx, const struct sm_paxos_key *key, const struct sm_uuid *ballot,
		       struct sm_paxos_promise *out);
	/* Propose: sets *@accepted. */
	int (*accept)(void *ctx, const struct sm_paxos_key *key, const struct sm_uuid *ballot,
		      const void *value, bool *accepted);
	/* Commit (learn). */
	int (*commit)(void *ctx, const struct sm_paxos_key *key, const struct sm_uuid *ballot,
		      const void *value);
};

struct sm_paxos_replica {
	const struct sm_paxos_replica_ops *ops;
	void *ctx;
};

/* Context of the local replica: the shard's paxos table and its store. */
struct sm_paxos_local {
	struct sm_paxos_table *table;
	void *store_ctx; /* passed to the table's ops->apply */
};

/* Replica ops that run the acceptor operations on a struct sm_paxos_local
 * (ctx) directly: the partition's owning shard as its own replica. */
extern const struct sm_paxos_replica_ops sm_paxos_local_ops;

/* Proposer phases, in the order a round goes through them. */
enum sm_paxos_step {
	SM_PAXOS_PREPARE,	 /* new ballot, prepare at all replicas, quorum of promises */
	SM_PAXOS_REPAIR_PROPOSE, /* an unfinished proposal was seen: re-propose it with our ballot */
	SM_PAXOS_REPAIR_COMMIT,	 /* ... commit it, then prepare again */
	SM_PAXOS_REPAIR_MRC, /* some promisers missed the most recent commit: re-send it, prepare again */
	SM_PAXOS_READ,	     /* read the current row and check the condition */
	SM_PAXOS_PROPOSE, /* propose our value; refusal: prepare again */
	SM_PAXOS_COMMIT,  /* commit our value */
	SM_PAXOS_DONE,
};

/* What a round asks of the statement it runs for. */
struct sm_paxos_request_ops {
	/* Read the current row (the pre-image) and evaluate the condition into
	 * *@condition_ok. Called only after a quorum promised (and anything
	 * unfinished was repaired), possibly several times when the round has
	 * to start over. 0 or -errno (ends the round with that error). */
	int (*read_check)(void *ctx, bool *condition_ok);
	/* The proposal to make when the condition holds, owned by the caller
	 * and valid until the round ends; NULL fails the round with -ENOMEM.
	 * Not used for a serial read. */
	const void *(*new_value)(void *ctx);
};

/* Parameters of a round (Cassandra: the paxos plan, cas_contention_timeout_in_ms). */
struct sm_paxos_round_conf {
	struct sm_paxos_key key;		 /* pk bytes valid for the round's life */
	const struct sm_paxos_replica *replicas; /* valid for the round's life */
	unsigned nreplicas;			 /* 1..SM_PAXOS_MAX_REPLICAS */
	struct sm_uuid_gen *gen;		 /* the shard's ballot generator */
	const struct sm_paxos_value_ops *ops;
	const struct sm_paxos_request_ops *req;
	void *req_ctx;
	bool serial_read;      /* SELECT at SERIAL: prepare (+repair) and read, no proposal */
	unsigned max_attempts; /* prepares before -ETIMEDOUT; 0: SM_PAXOS_DEFAULT_ATTEMPTS */
};

#define SM_PAXOS_MAX_REPLICAS 32
#define SM_PAXOS_DEFAULT_ATTEMPTS 16

struct sm_paxos_round {
	struct sm_paxos_round_conf conf;
	unsigned quorum; /* nreplicas / 2 + 1 */
	enum sm_paxos_step step;
	struct sm_uuid ballot; /* of the current attempt; when applied, the commit's */
	struct sm_uuid seen;   /* highest ballot seen: the next one goes above it */
	unsigned attempts;     /* prepares started */
	unsigned contention;   /* restarts because a higher ballot was seen */
	unsigned repairs;      /* unfinished proposals re-proposed (Cassandra's unfinishedCommit) */
	/* Repair in progress: a clone of the proposal (REPAIR_PROPOSE,
	 * REPAIR_COMMIT) or of the most recent commit and its ballot
	 * (REPAIR_MRC, sent to the replicas in missing_mrc). */
	void *repair_value;
	struct sm_uuid repair_ballot;
	uint32_t missing_mrc;
	const void *proposal; /* from new_value, during PROPOSE and COMMIT */
	bool condition_ok;    /* result of the last read_check */
	bool applied;	      /* DONE: our proposal was committed */
	int error;	      /* DONE: 0 or the -errno the round ended with */
};

/*
 * Prepare @r to run @conf (copied). -EINVAL when the replica count is out of
 * range or a required op is missing. No allocation.
 */
int
sm_paxos_round_init(struct sm_paxos_round *r, const struct sm_paxos_round_conf *conf);

/*
 * Perform the current phase against all replicas and move on: returns the
 * next step (SM_PAXOS_DONE at the end) or -errno, after which the round is
 * DONE with r->error set. Errors: -ETIMEDOUT when max_attempts prepares were
 * made without getting through (contention: Cassandra's "CAS operation timed
 * out") or when fewer than a quorum of replicas answered a phase; for a
 * failed PROPOSE or COMMIT of our own value the outcome is then unknown (it
 * may be completed by a later round), as with Cassandra's CAS write timeout.
 * -ENOMEM, or the error of read_check. Stepping a DONE round returns
 * SM_PAXOS_DONE.
 */
int
sm_paxos_round_step(struct sm_paxos_round *r);

/*
 * Step @r until DONE. 0 when it completed (r->applied says whether our value
 * was committed; false for a failed condition and for a serial read), or the
 * -errno of sm_paxos_round_step().
 */
int
sm_paxos_round_run(struct sm_paxos_round *r);

/* Release what an unfinished round holds (a repair value). Safe on a DONE
 * round and needed for one abandoned mid-way. */
void
sm_paxos_round_fini(struct sm_paxos_round *r);

#endif /* SM_PAXOS_H */
