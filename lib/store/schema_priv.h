/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SCHEMA_PRIV_H
#define SCHEMA_PRIV_H

/*
 * Private to lib/store: the catalog helpers that sm_schema.c (keyspaces,
 * tables) shares with sm_schema_alter.c (user types, ALTER TABLE, ALTER
 * KEYSPACE). Every function that builds a snapshot leaves @cur untouched.
 */

#include "sm_schema.h"

void
schema_options_free(struct sm_option *o, unsigned n);
/* Append a copy of @key and @value; 0 or -ENOMEM. */
int
schema_options_add(struct sm_option **o, unsigned *n, const char *key, const char *value);

void
schema_table_free(struct sm_table *t);
void
schema_keyspace_put(struct sm_keyspace *k);

/* Index of keyspace @ks in @c / of table @name in @k, or -1. */
int
schema_keyspace_index(const struct sm_catalog *c, const char *ks);
int
schema_table_index(const struct sm_keyspace *k, const char *name);

/* CQL's rule for names (SM_NAME_MAX characters, letters, digits, '_'), or DynamoDB's with @wide. */
bool
schema_valid_name(const char *s, bool wide);

/* A new snapshot sharing every keyspace of @cur, with a new version; NULL when out of memory. */
struct sm_catalog *
schema_catalog_copy(const struct sm_catalog *cur);

/*
 * A copy of @old that shares its tables (a reference each) and copies its
 * replication and user types, with room for @extra_tables more tables;
 * NULL when out of memory.
 */
struct sm_keyspace *
schema_keyspace_clone(const struct sm_keyspace *old, unsigned extra_tables);

/*
 * Publish a copy of @cur whose keyspace @ki is @k (taking @k's reference,
 * even on failure) and whose next table slot is @extra_slots further: 0
 * and *@next, or -ENOMEM.
 */
int
schema_publish_keyspace(const struct sm_catalog *cur, int ki, struct sm_keyspace *k,
			uint32_t extra_slots, struct sm_catalog **next, char *err, size_t errlen);

/*
 * Into @k: @def's replication, checked and expanded (the class qualified,
 * NetworkTopologyStrategy's replication_factor per data center). 0, or
 * -EINVAL / -ENOMEM with the message.
 */
int
schema_expand_replication(const struct sm_keyspace_def *def, struct sm_keyspace *k, char *err,
			  size_t errlen);

/*
 * A tablets keyspace (@k->tablets) must use NetworkTopologyStrategy: 0, or
 * -EINVAL with ScyllaDB's "SimpleStrategy doesn't support tablet replication".
 */
int
schema_tablets_check(const struct sm_keyspace *k, char *err, size_t errlen);

/* The resolver that finds @k's user types (sm_type_parse_in()). */
void
schema_type_resolver(const struct sm_keyspace *k, struct sm_type_resolver *r);

/*
 * Sort @t's columns into the schema order, give them their ids and cell
 * positions (key columns keep theirs), rebuild the name index and the
 * counts. 0, -EINVAL for a name given twice, -ENOMEM.
 */
int
schema_table_layout(struct sm_table *t, char *err, size_t errlen);

/* The checks of one column's type against its kind (key columns, non-frozen user types). */
int
schema_check_column(const struct sm_column *col, char *err, size_t errlen);

#endif /* SCHEMA_PRIV_H */
