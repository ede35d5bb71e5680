/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The coordinator's side of an appliance group (serve --peers): a request
 * for a partition another member owns is forwarded there whole, and a DDL
 * statement is applied here and then on every peer before it is answered,
 * so that the members never hold different data or schema for a key.
 *
 * Ownership follows the ring the members show drivers (system.peers): a
 * token-aware driver sends each request to its owner and nothing is
 * forwarded. Requests over several members' partitions (range scans, IN
 * lists and batches across members, reads through a global index or a
 * materialized view, whose rows live with their base rows) are refused with
 * a message saying so: gathering them is not done here.
 */

#include <inttypes.h>
#include <string.h>

#include "cql_exec_priv.h"
#include "cql_metrics_priv.h"
#include "sm_index.h"

bool
cql_group_active(const struct cql_op *op)
{
	return cql_cfg != NULL && cql_cfg->group != NULL && cql_cfg->cluster != NULL &&
	       cql_cfg->cluster->npeers > 0 && !sm_cql_conn_from_group(op->req->conn);
}

/* Fold the owner of @pk into *@owner (-3: none yet). */
static void
fold_owner(int *owner, const struct sm_key *pk)
{
	int o = sm_cql_cluster_owner(cql_cfg->cluster, sm_key_token(pk));

	if (*owner == -3)
		*owner = o;
	else if (*owner != o)
		*owner = SM_CQL_OWNER_SEVERAL;
}

/* Run here (0), or forward to the owner (1: the op is gone). */
static int
route(struct cql_op *op, int owner, bool write)
{
	if (owner == SM_CQL_OWNER_SELF || owner == -3)
		return 0;
	CQL_STAT_INC(forwarded[write]);
	SM_STAT_INC(requests_forwarded);
	cql_op_forward(op, (unsigned)owner);
	return 1;
}

int
cql_group_route_select(struct cql_op *op)
{
	const struct cql_prepared *ps = op->ps;
	int owner = -3;
	unsigned i;

	if (SM_LIKELY(!cql_group_active(op)) || ps->system)
		return 0;
	if ((ps->ix_view != NULL && !ps->ix_local) || sm_table_is_mv(ps->table)) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "not supported in an appliance group (--peers): reading through a "
			    "secondary index or a materialized view (its rows live on the members "
			    "owning their base rows); query the base table by its partition key");
		return -1;
	}
	if (op->range) {
		owner = sm_cql_cluster_range_owner(cql_cfg->cluster, op->tok_start, op->tok_end);
	} else {
		for (i = 0; i < op->nkeys; i++)
			fold_owner(&owner, &op->keys[i]);
	}
	if (owner == SM_CQL_OWNER_SEVERAL) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "not supported in an appliance group (--peers): this SELECT reads "
			    "partitions owned by several members (%s); restrict it to one "
			    "partition, or to one member's token range with token(), or send it "
			    "to each member of a group of one",
			    op->range ? "a range scan" : "an IN list over several partitions");
		return -1;
	}
	return route(op, owner, false);
}

int
cql_group_route_write(struct cql_op *op)
{
	int owner = -3;
	unsigned i;

	if (SM_LIKELY(!cql_group_active(op)))
		return 0;
	for (i = 0; i < op->nsreqs; i++) {
		const struct sm_store_req *r = &op->sreqs[i];

		fold_owner(&owner, r->kind == SM_REQ_CAS ? &r->cas.mut.pk : &r->mut.pk);
	}
	for (i = 0; op->wave && i < op->nmuts; i++)
		fold_owner(&owner, &op->muts[i].pk);
	if (owner == SM_CQL_OWNER_SEVERAL) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "not supported in an appliance group (--peers): this %s writes "
			    "partitions owned by several members; send one statement (or batch) "
			    "per partition",
			    op->req->msg.opcode == SM_CQL_OP_BATCH ||
					    (op->ps != NULL && op->ps->stmt->kind == SM_CQL_BATCH)
				    ? "batch"
				    : "statement");
		return -1;
	}
	return route(op, owner, true);
}

int
cql_group_ddl_begin(struct cql_op *op)
{
	enum sm_cql_stmt_kind k = op->ps->stmt->kind;

	if (SM_LIKELY(!cql_group_active(op)))
		return 0;
	if (k == SM_CQL_CREATE_INDEX || k == SM_CQL_CREATE_VIEW) {
		cql_op_fail(op, SM_CQL_ERR_INVALID,
			    "not supported in an appliance group (--peers): %s (the rows of an "
			    "index or view would live on the member of their base row, not of "
			    "their own key, and reads through them would miss rows)",
			    k == SM_CQL_CREATE_INDEX ? "CREATE INDEX" : "CREATE MATERIALIZED VIEW");
		return -1;
	}
	op->group_ddl = true;
	return 0;
}

static void
ddl_peers_done(void *arg, const char *msg)
{
	struct cql_op *op = arg;

	if (msg == NULL)
		cql_op_finish(op);
	else
		cql_op_fail(op, SM_CQL_ERR_SERVER, "%s", msg);
}

bool
cql_group_ddl_applied(struct cql_op *op)
{
	const struct cql_prepared *ps = op->ps;

	op->group_ddl = false;
	/* Failed here (the header's opcode): nothing to spread. */
	if (op->out.len < SM_CQL_HEADER_LEN || op->out.err != 0 || op->out.p[4] == SM_CQL_OP_ERROR)
		return false;
	cql_cfg->group->schema(cql_cfg->group->ctx, sm_cql_conn_keyspace(op->req->conn), ps->text,
			       ps->len, ddl_peers_done, op);
	return true;
}

bool
sm_cql_exec_prepared_text(struct sm_bytes id, const char **ks, const char **text, size_t *len)
{
	struct cql_prepared *ps = cql_exec_lookup(id);

	if (ps == NULL)
		return false;
	*ks = ps->ks;
	*text = ps->text;
	*len = ps->len;
	/* the cache keeps its own reference: the strings outlive this one */
	cql_exec_put(ps);
	return true;
}
