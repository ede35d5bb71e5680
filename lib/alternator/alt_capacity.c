/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ReturnConsumedCapacity and ReturnItemCollectionMetrics, with DynamoDB's
 * unit formulas as ScyllaDB computes them (alternator/consumed_capacity.cc):
 * a read costs one unit per 4 KB of the item (whatever the projection
 * returns; a missing item counts as one block), half of that when
 * eventually consistent; a write one unit per 1 KB of the larger of the
 * new item and the old one when the old one was read, at least one. Sizes
 * are DynamoDB's item sizes (alt_item_size()). Units are counted in halves,
 * so sums stay exact.
 */

#include <errno.h>
#include <string.h>

#include "alt_priv.h"

#define RCU_BLOCK 4096u
#define WCU_BLOCK 1024u

int
alt_capacity_parse(struct alt_op *op)
{
	int rc = op->cap_tok, rm = op->icm_tok; /* found by run() */

	op->cap_mode = ALT_CAP_NONE;
	op->icm = false;
	if (SM_LIKELY(rc < 0 && rm < 0))
		return 0;
	if (rc >= 0) {
		if (sm_json_str_eq(&op->doc, rc, "TOTAL"))
			op->cap_mode = ALT_CAP_TOTAL;
		else if (sm_json_str_eq(&op->doc, rc, "INDEXES"))
			op->cap_mode = ALT_CAP_INDEXES;
		else if (!sm_json_str_eq(&op->doc, rc, "NONE")) {
			alt_fail(op, "ValidationException",
				 "1 validation error detected: Value at 'returnConsumedCapacity' "
				 "failed to satisfy constraint: Member must satisfy enum value "
				 "set: [INDEXES, TOTAL, NONE]");
			return -EINVAL;
		}
	}
	if (rm >= 0) {
		if (sm_json_str_eq(&op->doc, rm, "SIZE"))
			op->icm = true;
		else if (!sm_json_str_eq(&op->doc, rm, "NONE")) {
			alt_fail(op, "ValidationException",
				 "1 validation error detected: Value at "
				 "'returnItemCollectionMetrics' failed to satisfy constraint: "
				 "Member must satisfy enum value set: [SIZE, NONE]");
			return -EINVAL;
		}
	}
	return 0;
}

uint64_t
alt_rcu_halves(size_t bytes, bool consistent)
{
	uint64_t blocks = bytes == 0 ? 1 : (bytes + RCU_BLOCK - 1) / RCU_BLOCK;

	return consistent ? 2 * blocks : blocks;
}

uint64_t
alt_wcu_halves(size_t bytes)
{
	uint64_t blocks = bytes == 0 ? 1 : (bytes + WCU_BLOCK - 1) / WCU_BLOCK;

	return 2 * blocks;
}

/* @halves / 2 as a JSON number: "1", "0.5" (no printf: GetItem asks for it on every read) */
static void
write_units(struct sm_json_out *o, uint64_t halves)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t v = halves / 2;

	if (halves % 2 != 0) {
		*--p = '5';
		*--p = '.';
	}
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	sm_json_out_num(o, p, (size_t)(buf + sizeof(buf) - p));
}

static void
write_unit_obj(struct sm_json_out *o, uint64_t halves)
{
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "CapacityUnits");
	write_units(o, halves);
	sm_json_out_obj_end(o);
}

void
alt_capacity_write(struct alt_op *op, struct sm_json_out *o, const char *table, uint64_t halves,
		   const struct alt_index *index)
{
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "TableName");
	sm_json_out_str(o, table);
	sm_json_out_key(o, "CapacityUnits");
	write_units(o, halves);
	if (op->cap_mode == ALT_CAP_INDEXES) {
		/* the read of an index is the index's; a write is the table's */
		sm_json_out_key(o, "Table");
		write_unit_obj(o, index != NULL ? 0 : halves);
		if (index != NULL) {
			sm_json_out_key(o, index->lsi ? "LocalSecondaryIndexes"
						      : "GlobalSecondaryIndexes");
			sm_json_out_obj_begin(o);
			sm_json_out_key(o, index->name);
			write_unit_obj(o, halves);
			sm_json_out_obj_end(o);
		}
	}
	sm_json_out_obj_end(o);
}

bool
alt_table_has_lsi(const struct alt_table *t)
{
	unsigned i;

	for (i = 0; t->idx != NULL && i < t->idx->n; i++)
		if (t->idx->idx[i].lsi)
			return true;
	return false;
}

void
alt_item_collection_metrics(struct alt_op *op, struct sm_json_out *o, const struct sm_key *pk)
{
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, "ItemCollectionKey");
	sm_json_out_obj_begin(o);
	sm_json_out_key(o, op->tab.hash->name);
	alt_write_key_value(o, op->tab.hash_type, pk->part[0]);
	sm_json_out_obj_end(o);
	/* one item collection never nears DynamoDB's 10 GB: its estimate's lowest range */
	sm_json_out_key(o, "SizeEstimateRangeGB");
	sm_json_out_arr_begin(o);
	sm_json_out_num(o, "0.0", 3);
	sm_json_out_num(o, "1.0", 3);
	sm_json_out_arr_end(o);
	sm_json_out_obj_end(o);
}
