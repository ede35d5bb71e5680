/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Results copied out of a response, and the shell's growable string.
 *
 * A response's views live only as long as the receive buffer, and the
 * shell prints long after (between pages it waits for the user), so a
 * result is copied into one allocation: a first pass measures, a second
 * copies. The arrays come first in the block, aligned; strings after.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sm_core.h"
#include "cqlsh_priv.h"
#include "sm_cqlsh.h"

/* ---- the string ---- */

void
sm_cqlsh_str_init(struct sm_cqlsh_str *s)
{
	memset(s, 0, sizeof(*s));
}

void
sm_cqlsh_str_release(struct sm_cqlsh_str *s)
{
	sm_free(s->p);
	sm_cqlsh_str_init(s);
}

void
sm_cqlsh_str_reset(struct sm_cqlsh_str *s)
{
	s->len = 0;
	if (s->p != NULL)
		s->p[0] = '\0';
}

bool
sm_cqlsh_str_room(struct sm_cqlsh_str *s, size_t n)
{
	size_t cap;
	char *p;

	if (s->err != 0)
		return false;
	if (s->len + n + 1 <= s->cap)
		return true;
	cap = s->cap ? s->cap : 64;
	while (cap < s->len + n + 1)
		cap *= 2;
	p = sm_realloc(s->p, cap);
	if (p == NULL) {
		s->err = -ENOMEM;
		return false;
	}
	s->p = p;
	s->cap = cap;
	return true;
}

void
sm_cqlsh_str_putn(struct sm_cqlsh_str *s, const char *p, size_t n)
{
	if (!sm_cqlsh_str_room(s, n))
		return;
	memcpy(s->p + s->len, p, n);
	s->len += n;
	s->p[s->len] = '\0';
}

void
sm_cqlsh_str_puts(struct sm_cqlsh_str *s, const char *p)
{
	sm_cqlsh_str_putn(s, p, strlen(p));
}

void
sm_cqlsh_str_printf(struct sm_cqlsh_str *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !sm_cqlsh_str_room(s, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(s->p + s->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	s->len += (size_t)n;
}

const char *
sm_cqlsh_str_get(const struct sm_cqlsh_str *s)
{
	return s->p != NULL ? s->p : "";
}

/* Zero-width: combining marks, zero-width spaces and joiners. */
static bool
zero_width(uint32_t c)
{
	return (c >= 0x0300 && c <= 0x036f) || (c >= 0x0483 && c <= 0x0489) ||
	       (c >= 0x0591 && c <= 0x05bd) || (c >= 0x1ab0 && c <= 0x1aff) ||
	       (c >= 0x1dc0 && c <= 0x1dff) || (c >= 0x200b && c <= 0x200f) ||
	       (c >= 0x20d0 && c <= 0x20ff) || (c >= 0xfe00 && c <= 0xfe0f) ||
	       (c >= 0xfe20 && c <= 0xfe2f);
}

/* East Asian Wide and Fullwidth, the ranges Markus Kuhn's wcwidth gives 2. */
static bool
wide(uint32_t c)
{
	return (c >= 0x1100 && c <= 0x115f) || c == 0x2329 || c == 0x232a ||
	       (c >= 0x2e80 && c <= 0xa4cf && c != 0x303f) || (c >= 0xac00 && c <= 0xd7a3) ||
	       (c >= 0xf900 && c <= 0xfaff) || (c >= 0xfe30 && c <= 0xfe6f) ||
	       (c >= 0xff00 && c <= 0xff60) || (c >= 0xffe0 && c <= 0xffe6) ||
	       (c >= 0x1f300 && c <= 0x1f64f) || (c >= 0x1f900 && c <= 0x1f9ff) ||
	       (c >= 0x20000 && c <= 0x2fffd) || (c >= 0x30000 && c <= 0x3fffd);
}

size_t
sm_cqlsh_display_width(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t w = 0;

	while (p < end) {
		uint32_t c = *p;
		unsigned n = c < 0x80 ? 0 : c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;

		p++;
		/* Trailing bytes missing or stray: one column per byte, as a terminal shows them. */
		if (n > 0 && (size_t)(end - p) >= n) {
			c &= 0x3fu >> n;
			while (n-- > 0)
				c = c << 6 | (*p++ & 0x3fu);
		}
		w += zero_width(c) ? 0 : wide(c) ? 2 : 1;
	}
	return w;
}

/* ---- results ---- */

/* Lay out, then fill, one block: with base NULL only off grows. */
struct pack {
	uint8_t *base;
	size_t off;
};

static void *
pack_take(struct pack *pk, size_t n, size_t align)
{
	void *p;

	pk->off = (pk->off + align - 1) & ~(align - 1);
	p = pk->base != NULL ? pk->base + pk->off : NULL;
	pk->off += n;
	return p;
}

static const char *
pack_str(struct pack *pk, struct sm_bytes b)
{
	char *p = pack_take(pk, (size_t)b.len + 1, 1);

	if (p != NULL) {
		if (b.len > 0)
			memcpy(p, b.p, b.len);
		p[b.len] = '\0';
	}
	return p;
}

static struct sm_bytes
pack_bytes(struct pack *pk, struct sm_bytes b)
{
	uint8_t *p;

	if (b.p == NULL)
		return b;
	/* A non-null empty value keeps a non-NULL pointer. */
	p = pack_take(pk, b.len ? b.len : 1, 1);
	if (p != NULL && b.len > 0)
		memcpy(p, b.p, b.len);
	return (struct sm_bytes){ p, b.len };
}

/* Everything of @resp into @r (with pk->base NULL: only the size). */
static void
pack_response(struct pack *pk, struct sm_cqlsh_result *r, const struct sm_cql_response *resp)
{
	struct sm_cql_iter it;
	struct sm_bytes b;
	uint16_t i;

	if (resp->warnings.n > 0) {
		const char **w = pack_take(pk, resp->warnings.n * sizeof(char *), sizeof(void *));

		sm_cql_strlist_iter(&it, &resp->warnings);
		for (i = 0; i < resp->warnings.n && sm_cql_strlist_next(&it, &b); i++) {
			const char *s = pack_str(pk, b);

			if (w != NULL)
				w[i] = s;
		}
		r->warnings = w;
		r->nwarnings = i;
	}
	if (resp->opcode == SM_CQL_OP_ERROR) {
		const struct sm_cql_error *e = &resp->u.error;
		const char *wt = sm_cql_write_type_name(e->write_type);

		r->kind = SM_CQLSH_ERROR;
		r->code = e->code;
		r->message = pack_str(pk, e->message);
		r->consistency = e->consistency;
		r->required = e->required;
		r->alive = e->alive;
		r->received = e->received;
		r->blockfor = e->blockfor;
		r->numfailures = e->numfailures;
		r->data_present = e->data_present;
		r->write_type = wt != NULL ? pack_str(pk, sm_cql_str(wt)) : NULL;
		r->err_keyspace = pack_str(pk, e->keyspace);
		r->err_table = pack_str(pk, e->name);
		return;
	}
	switch (resp->u.result.kind) {
	case SM_CQL_RESULT_VOID:
		r->kind = SM_CQLSH_VOID;
		return;
	case SM_CQL_RESULT_SET_KEYSPACE:
		r->kind = SM_CQLSH_SET_KEYSPACE;
		r->keyspace = pack_str(pk, resp->u.result.u.keyspace);
		return;
	case SM_CQL_RESULT_SCHEMA_CHANGE:
		r->kind = SM_CQLSH_SCHEMA_CHANGE;
		return;
	case SM_CQL_RESULT_ROWS:
		break;
	default:
		r->kind = SM_CQLSH_OTHER;
		return;
	}
	{
		const struct sm_cql_rows *rows = &resp->u.result.u.rows;
		struct sm_cqlsh_col *cols;
		struct sm_bytes *cells;
		struct sm_cql_colspec spec;
		uint64_t n = (uint64_t)rows->nrows * rows->meta.ncols, k;
		uint32_t c;

		r->kind = SM_CQLSH_ROWS;
		r->ncols = rows->meta.ncols;
		r->nrows = rows->nrows;
		r->has_more = (rows->meta.flags & SM_CQL_META_HAS_MORE_PAGES) != 0;
		cols = pack_take(pk, r->ncols * sizeof(*cols), sizeof(void *));
		cells = pack_take(pk, n * sizeof(*cells), sizeof(void *));
		sm_cql_colspec_iter(&it, &rows->meta);
		for (c = 0; c < r->ncols; c++) {
			struct sm_cqlsh_col col = { "", "", "?", { NULL, 0 } };

			/* Without metadata (not asked for here) the names stay "?". */
			if (sm_cql_colspec_next(&it, &spec)) {
				col.ks = pack_str(pk, spec.ks);
				col.table = pack_str(pk, spec.table);
				col.name = pack_str(pk, spec.name);
				col.type = pack_bytes(pk, spec.type_raw);
			}
			if (cols != NULL)
				cols[c] = col;
		}
		sm_cql_cells_iter(&it, rows);
		for (k = 0; k < n && sm_cql_cells_next(&it, &b); k++) {
			struct sm_bytes v = pack_bytes(pk, b);

			if (cells != NULL)
				cells[k] = v;
		}
		r->cols = cols;
		r->cells = cells;
		r->paging_state = pack_bytes(pk, rows->meta.paging_state);
	}
}

int
sm_cqlsh_result_from_response(const struct sm_cql_response *resp, struct sm_cqlsh_result **out)
{
	struct pack pk = { NULL, sizeof(struct sm_cqlsh_result) };
	struct sm_cqlsh_result tmp, *r;

	if (resp->opcode != SM_CQL_OP_ERROR && resp->opcode != SM_CQL_OP_RESULT)
		return -EPROTO;
	memset(&tmp, 0, sizeof(tmp));
	pack_response(&pk, &tmp, resp);
	r = sm_calloc(1, pk.off);
	if (r == NULL)
		return -ENOMEM;
	pk.base = (uint8_t *)r;
	pk.off = sizeof(*r);
	pack_response(&pk, r, resp);
	*out = r;
	return 0;
}

struct sm_cqlsh_result *
sm_cqlsh_result_failed(int err, const char *why)
{
	size_t len = strlen(why);
	struct sm_cqlsh_result *r = sm_calloc(1, sizeof(*r) + len + 1);
	char *msg;

	if (r == NULL)
		return NULL;
	msg = (char *)(r + 1);
	memcpy(msg, why, len + 1);
	r->kind = SM_CQLSH_FAILED;
	r->err = err;
	r->message = msg;
	return r;
}

int
sm_cqlsh_result_from_cqlc(const struct sm_cqlc_result *r, const char *why,
			  struct sm_cqlsh_result **out)
{
	if (r->kind == SM_CQLC_FAILED || r->resp == NULL) {
		*out = sm_cqlsh_result_failed(r->err < 0 ? r->err : -EIO,
					      why != NULL && why[0] ? why : strerror(-r->err));
		return *out != NULL ? 0 : -ENOMEM;
	}
	return sm_cqlsh_result_from_response(r->resp, out);
}

void
sm_cqlsh_result_free(struct sm_cqlsh_result *r)
{
	sm_free(r);
}

int
sm_cqlsh_result_col(const struct sm_cqlsh_result *r, const char *name)
{
	uint32_t c;

	for (c = 0; r->kind == SM_CQLSH_ROWS && c < r->ncols; c++)
		if (strcmp(r->cols[c].name, name) == 0)
			return (int)c;
	return -1;
}
