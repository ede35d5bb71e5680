/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The schema version system.local and system.peers show: a digest of the
 * catalog's content, so that the members of an appliance group that applied
 * the same DDL show the same version (ScyllaDB digests its schema mutations
 * the same way, schema_tables.cc calculate_schema_digest()). Table ids and
 * drop times are left out: every member draws its own.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/md5.h>

#include "sm_core.h"
#include "sm_cql_system.h"

static void
put_u32(struct md5_ctx *m, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	md5_update(m, sizeof(b), b);
}

/* Length first, so that ("ab", "c") and ("a", "bc") differ. */
static void
put_str(struct md5_ctx *m, const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	put_u32(m, (uint32_t)n);
	md5_update(m, n, (const uint8_t *)s);
}

static void
put_type(struct md5_ctx *m, const struct sm_type *t)
{
	char buf[256];
	size_t n = sm_type_name(t, buf, sizeof(buf));

	/* a longer name is hashed as far as it fits, with its whole length */
	put_u32(m, (uint32_t)n);
	md5_update(m, SM_MIN(n, sizeof(buf) - 1), (const uint8_t *)buf);
}

static void
put_options(struct md5_ctx *m, const struct sm_option *o, unsigned n)
{
	unsigned i;

	put_u32(m, n);
	for (i = 0; i < n; i++) {
		put_str(m, o[i].key);
		put_str(m, o[i].value);
	}
}

static int
ks_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct sm_keyspace *const *)a)->name,
		      (*(const struct sm_keyspace *const *)b)->name);
}

static int
table_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct sm_table *const *)a)->name,
		      (*(const struct sm_table *const *)b)->name);
}

static void
put_table(struct md5_ctx *m, const struct sm_table *t)
{
	unsigned i;

	put_str(m, t->name);
	put_u32(m, t->ncols);
	for (i = 0; i < t->ncols; i++) {
		const struct sm_column *c = &t->cols[i];

		put_str(m, c->name);
		put_type(m, c->type);
		put_u32(m, (uint32_t)c->kind << 1 | c->desc);
	}
	put_u32(m, (uint32_t)t->default_ttl);
	put_u32(m, t->counter);
	put_options(m, t->options, t->noptions);
	put_u32(m, t->ndropped);
	for (i = 0; i < t->ndropped; i++) {
		put_str(m, t->dropped[i].name);
		put_type(m, t->dropped[i].type);
	}
}

/* 0, or -ENOMEM for the sorting arrays (the caller then falls back to the catalog's own). */
static int
digest(const struct sm_catalog *cat, uint8_t out[MD5_DIGEST_SIZE])
{
	const struct sm_keyspace **ks;
	const struct sm_table **tb = NULL;
	struct md5_ctx m;
	unsigned i, j, k, maxt = 0;

	ks = sm_calloc(cat->nks + 1, sizeof(*ks));
	for (i = 0; i < cat->nks; i++)
		maxt = SM_MAX(maxt, cat->ks[i]->ntables);
	tb = sm_calloc(maxt + 1, sizeof(*tb));
	if (ks == NULL || tb == NULL) {
		sm_free(ks);
		sm_free(tb);
		return -ENOMEM;
	}
	if (cat->nks > 0) /* an empty catalog may have no array */
		memcpy(ks, cat->ks, cat->nks * sizeof(*ks));
	qsort(ks, cat->nks, sizeof(*ks), ks_cmp);
	md5_init(&m);
	put_u32(&m, cat->nks);
	for (i = 0; i < cat->nks; i++) {
		const struct sm_keyspace *k0 = ks[i];

		put_str(&m, k0->name);
		put_options(&m, k0->replication, k0->nreplication);
		put_u32(&m, k0->durable_writes);
		put_u32(&m, k0->ntypes);
		for (j = 0; j < k0->ntypes; j++) {
			const struct sm_type *t = k0->types[j];

			put_str(&m, t->name);
			put_u32(&m, t->nfields);
			for (k = 0; k < t->nfields; k++) {
				put_str(&m, t->field_names[k]);
				put_type(&m, t->fields[k]);
			}
		}
		if (k0->ntables > 0)
			memcpy(tb, k0->tables, k0->ntables * sizeof(*tb));
		qsort(tb, k0->ntables, sizeof(*tb), table_cmp);
		put_u32(&m, k0->ntables);
		for (j = 0; j < k0->ntables; j++)
			put_table(&m, tb[j]);
	}
	md5_digest(&m, MD5_DIGEST_SIZE, out);
	sm_free(ks);
	sm_free(tb);
	return 0;
}

/* The last catalog version digested on this shard, and its digest. */
static __thread struct {
	bool valid;
	struct sm_uuid version;
	struct sm_uuid digest;
} last;

void
sm_cql_schema_digest(const struct sm_catalog *cat, struct sm_uuid *out)
{
	uint8_t d[MD5_DIGEST_SIZE];

	if (last.valid && memcmp(&last.version, &cat->version, sizeof(cat->version)) == 0) {
		*out = last.digest;
		return;
	}
	if (digest(cat, d) < 0) {
		*out = cat->version;
		return;
	}
	sm_uuid_from_md5(d, 3, out);
	last.valid = true;
	last.version = cat->version;
	last.digest = *out;
}
