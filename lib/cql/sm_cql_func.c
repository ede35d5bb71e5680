/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQL's native scalar functions and CAST, on serialized values: the time
 * and uuid functions (ScyllaDB's cql3/functions/time_uuid_fcts.hh), the
 * blob conversions (bytes_conversion_fcts.hh) and the casts
 * (castas_fcts.cc get_castas_fctn()).
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cql_func_priv.h"
#include "sm_cql_proto.h"
#include "sm_cql_value.h"
#include "sm_mem.h"

#define MS_PER_DAY 86400000LL
#define DATE_EPOCH (1LL << 31)

static int64_t
floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static uint64_t
get_be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

static void
put_be(uint8_t *p, uint64_t v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static int
fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---- lookup ---- */

/* The simple type a type name in a function name stands for; Cassandra has no counterasblob. */
static bool
simple_kind(const char *name, size_t n, enum sm_type_kind *k)
{
	return sm_type_simple_by_name(name, n, k) && *k != SM_TYPE_COUNTER;
}

bool
cql_fn_lookup(const char *ks, const char *s, struct cql_fn *f)
{
	static const struct {
		const char *name;
		struct cql_fn f;
	} fns[] = {
		{ "now", { CQL_FN_NOW, SM_TYPE_TIMEUUID, SM_TYPE_BLOB, { 0 }, 0, 0 } },
		{ "currenttimeuuid", { CQL_FN_NOW, SM_TYPE_TIMEUUID, SM_TYPE_BLOB, { 0 }, 0, 0 } },
		{ "uuid", { CQL_FN_UUID, SM_TYPE_UUID, SM_TYPE_BLOB, { 0 }, 0, 0 } },
		{ "currenttimestamp",
		  { CQL_FN_CURRENT_TIMESTAMP, SM_TYPE_TIMESTAMP, SM_TYPE_BLOB, { 0 }, 0, 0 } },
		{ "currentdate", { CQL_FN_CURRENT_DATE, SM_TYPE_DATE, SM_TYPE_BLOB, { 0 }, 0, 0 } },
		{ "currenttime", { CQL_FN_CURRENT_TIME, SM_TYPE_TIME, SM_TYPE_BLOB, { 0 }, 0, 0 } },
		{ "totimestamp",
		  { CQL_FN_TO_TIMESTAMP,
		    SM_TYPE_TIMESTAMP,
		    SM_TYPE_BLOB,
		    { SM_TYPE_TIMEUUID, SM_TYPE_DATE },
		    2,
		    1 } },
		{ "todate",
		  { CQL_FN_TO_DATE,
		    SM_TYPE_DATE,
		    SM_TYPE_BLOB,
		    { SM_TYPE_TIMEUUID, SM_TYPE_TIMESTAMP },
		    2,
		    1 } },
		{ "tounixtimestamp",
		  { CQL_FN_TO_UNIX_TIMESTAMP,
		    SM_TYPE_BIGINT,
		    SM_TYPE_BLOB,
		    { SM_TYPE_TIMEUUID, SM_TYPE_TIMESTAMP, SM_TYPE_DATE },
		    3,
		    1 } },
		{ "dateof", { CQL_FN_DATE_OF, SM_TYPE_TIMESTAMP, SM_TYPE_TIMEUUID, { 0 }, 0, 1 } },
		{ "unixtimestampof",
		  { CQL_FN_UNIX_TIMESTAMP_OF, SM_TYPE_BIGINT, SM_TYPE_TIMEUUID, { 0 }, 0, 1 } },
		{ "mintimeuuid",
		  { CQL_FN_MIN_TIMEUUID, SM_TYPE_TIMEUUID, SM_TYPE_TIMESTAMP, { 0 }, 0, 1 } },
		{ "maxtimeuuid",
		  { CQL_FN_MAX_TIMEUUID, SM_TYPE_TIMEUUID, SM_TYPE_TIMESTAMP, { 0 }, 0, 1 } },
	};
	size_t n = strlen(s), i;

	memset(f, 0, sizeof(*f));
	if (ks != NULL && strcmp(ks, "system") != 0)
		return false;
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		if (strcmp(s, fns[i].name) == 0) {
			*f = fns[i].f;
			return true;
		}
	}
	if (n > 6 && memcmp(s, "blobas", 6) == 0 && simple_kind(s + 6, n - 6, &f->result)) {
		f->id = CQL_FN_BLOB_AS;
		f->arg = SM_TYPE_BLOB;
		f->nargs = 1;
		return true;
	}
	if (n > 6 && memcmp(s + n - 6, "asblob", 6) == 0 && simple_kind(s, n - 6, &f->arg)) {
		f->id = CQL_FN_AS_BLOB;
		f->result = SM_TYPE_BLOB;
		f->nargs = 1;
		return true;
	}
	return false;
}

bool
cql_fn_value_compatible(const struct sm_type *rt, enum sm_type_kind res)
{
	if (rt->kind == res)
		return true;
	switch (rt->kind) {
	case SM_TYPE_BLOB:
		return true;
	case SM_TYPE_UUID:
		return res == SM_TYPE_TIMEUUID;
	case SM_TYPE_TEXT:
		return res == SM_TYPE_ASCII;
	case SM_TYPE_VARINT:
		return res == SM_TYPE_TINYINT || res == SM_TYPE_SMALLINT || res == SM_TYPE_INT ||
		       res == SM_TYPE_BIGINT;
	case SM_TYPE_BIGINT:
		return res == SM_TYPE_TIMESTAMP;
	case SM_TYPE_TIMESTAMP:
		return res == SM_TYPE_BIGINT;
	default:
		return false;
	}
}

/* ---- evaluation ---- */

/* UUID_gen::min_time_UUID / max_time_UUID: the first and last timeuuid of a millisecond. */
static void
bound_timeuuid(int64_t ms, bool max, uint8_t out[16])
{
	uint64_t ticks = (uint64_t)(ms * 10000) + SM_UUID_UNIX_EPOCH_TICKS + (max ? 9999 : 0);
	uint64_t msb = (ticks << 32) | ((ticks >> 16) & 0xffff0000ull) | 0x1000 |
		       ((ticks >> 48) & 0x0fff);

	put_be(out, msb, 8);
	put_be(out + 8, max ? 0x7f7f7f7f7f7f7f7full : 0x8080808080808080ull, 8);
}

int
cql_fn_eval(const struct cql_fn *f, enum sm_type_kind ak, struct sm_bytes a, struct sm_uuid_gen *gen,
	    int64_t now_us, const char *fname, uint8_t *out, uint32_t *len, char *err,
	    size_t errlen)
{
	struct sm_uuid u;
	char msg[160], tn[64];
	int64_t ms, us;

	*len = 0;
	switch (f->id) {
	case CQL_FN_NOW:
		if (gen == NULL)
			return fail(err, errlen, "system.%s() needs the shard's timeuuid generator",
				    fname);
		sm_uuid_gen_next(gen, &u);
		memcpy(out, u.b, 16);
		*len = 16;
		return 0;
	case CQL_FN_UUID:
		sm_uuid_random(&u);
		memcpy(out, u.b, 16);
		*len = 16;
		return 0;
	case CQL_FN_CURRENT_TIMESTAMP:
		put_be(out, (uint64_t)floor_div(now_us, 1000), 8);
		*len = 8;
		return 0;
	case CQL_FN_CURRENT_DATE:
		put_be(out, (uint64_t)(floor_div(now_us, MS_PER_DAY * 1000) + DATE_EPOCH), 4);
		*len = 4;
		return 0;
	case CQL_FN_CURRENT_TIME:
		us = now_us - floor_div(now_us, MS_PER_DAY * 1000) * MS_PER_DAY * 1000;
		put_be(out, (uint64_t)us * 1000, 8);
		*len = 8;
		return 0;
	case CQL_FN_AS_BLOB:
		*len = a.len;
		return 0;
	case CQL_FN_BLOB_AS:
		*len = a.len;
		if (sm_value_validate(sm_type_simple(f->result), a, NULL, 0) == 0)
			return 0;
		sm_value_format(sm_type_simple(SM_TYPE_BLOB), a, msg, sizeof(msg));
		sm_type_name(sm_type_simple(f->result), tn, sizeof(tn));
		return fail(err, errlen,
			    "In call to function system.%s, value %s is not a valid binary "
			    "representation for type %s",
			    fname, msg, tn);
	default:
		break;
	}
	if (a.len == 0)
		return 0; /* empty in, empty out */
	switch (ak) {
	case SM_TYPE_TIMEUUID:
		if (a.len != 16)
			return fail(err, errlen, "Invalid timeuuid");
		memcpy(u.b, a.p, sizeof(u.b));
		ms = floor_div(sm_uuid_micros(&u), 1000);
		break;
	case SM_TYPE_DATE:
		ms = ((int64_t)get_be(a.p, 4) - DATE_EPOCH) * MS_PER_DAY;
		break;
	default:
		ms = (int64_t)get_be(a.p, 8);
		break;
	}
	switch (f->id) {
	case CQL_FN_TO_DATE:
		put_be(out, (uint64_t)(floor_div(ms, MS_PER_DAY) + DATE_EPOCH), 4);
		*len = 4;
		return 0;
	case CQL_FN_MIN_TIMEUUID:
	case CQL_FN_MAX_TIMEUUID:
		bound_timeuuid(ms, f->id == CQL_FN_MAX_TIMEUUID, out);
		*len = 16;
		return 0;
	default:
		/* timestamps and unix timestamps: milliseconds */
		put_be(out, (uint64_t)ms, 8);
		*len = 8;
		return 0;
	}
}

/* ---- CAST ---- */

const char *
cql_type_class(enum sm_type_kind k)
{
	static const char *const classes[SM_TYPE__COUNT] = {
		[SM_TYPE_ASCII] = "AsciiType",	       [SM_TYPE_BIGINT] = "LongType",
		[SM_TYPE_BLOB] = "BytesType",	       [SM_TYPE_BOOLEAN] = "BooleanType",
		[SM_TYPE_COUNTER] = "CounterColumnType", [SM_TYPE_DATE] = "SimpleDateType",
		[SM_TYPE_DECIMAL] = "DecimalType",     [SM_TYPE_DOUBLE] = "DoubleType",
		[SM_TYPE_DURATION] = "DurationType",   [SM_TYPE_FLOAT] = "FloatType",
		[SM_TYPE_INET] = "InetAddressType",    [SM_TYPE_INT] = "Int32Type",
		[SM_TYPE_SMALLINT] = "ShortType",      [SM_TYPE_TEXT] = "UTF8Type",
		[SM_TYPE_TIME] = "TimeType",	       [SM_TYPE_TIMESTAMP] = "TimestampType",
		[SM_TYPE_TIMEUUID] = "TimeUUIDType",   [SM_TYPE_TINYINT] = "ByteType",
		[SM_TYPE_UUID] = "UUIDType",	       [SM_TYPE_VARINT] = "IntegerType",
		[SM_TYPE_LIST] = "ListType",	       [SM_TYPE_SET] = "SetType",
		[SM_TYPE_MAP] = "MapType",	       [SM_TYPE_TUPLE] = "TupleType",
		[SM_TYPE_UDT] = "UserType",
	};

	return (unsigned)k < SM_TYPE__COUNT && classes[k] ? classes[k] : "?";
}

static bool
is_int_kind(enum sm_type_kind k)
{
	return k == SM_TYPE_TINYINT || k == SM_TYPE_SMALLINT || k == SM_TYPE_INT ||
	       k == SM_TYPE_BIGINT || k == SM_TYPE_COUNTER;
}

static bool
is_number_kind(enum sm_type_kind k)
{
	return is_int_kind(k) || k == SM_TYPE_FLOAT || k == SM_TYPE_DOUBLE ||
	       k == SM_TYPE_VARINT || k == SM_TYPE_DECIMAL;
}

bool
cql_cast_allowed(const struct sm_type *from, const struct sm_type *to)
{
	enum sm_type_kind f = from->kind, t = to->kind;

	if (sm_type_equal(from, to))
		return true;
	if (t == SM_TYPE_COUNTER || f >= SM_TYPE_LIST || t >= SM_TYPE_LIST)
		return false;
	if (is_number_kind(t) && is_number_kind(f))
		return true;
	if (t == SM_TYPE_TEXT || t == SM_TYPE_ASCII)
		return is_number_kind(f) || f == SM_TYPE_TIMESTAMP || f == SM_TYPE_DATE ||
		       f == SM_TYPE_TIME || f == SM_TYPE_TIMEUUID || f == SM_TYPE_UUID ||
		       f == SM_TYPE_BOOLEAN || f == SM_TYPE_INET ||
		       (t == SM_TYPE_TEXT && f == SM_TYPE_ASCII);
	if (t == SM_TYPE_DATE)
		return f == SM_TYPE_TIMESTAMP || f == SM_TYPE_TIMEUUID;
	if (t == SM_TYPE_TIMESTAMP)
		return f == SM_TYPE_DATE || f == SM_TYPE_TIMEUUID;
	return false;
}

/*
 * A value's text as to_string() writes it: sm_value_format()'s literal
 * without the quotes (and with '' as '), timestamps with a 'T'.
 */
static int
text_of(const struct sm_type *t, struct sm_bytes a, struct sm_cql_buf *out)
{
	char small[64], *buf = small;
	size_t n = sm_value_format(t, a, small, sizeof(small)), i, o;
	uint8_t *d;

	if (n >= sizeof(small)) {
		buf = sm_malloc(n + 1);
		if (buf == NULL)
			return -ENOMEM;
		sm_value_format(t, a, buf, n + 1);
	}
	i = 0;
	if (n >= 2 && buf[0] == '\'' && buf[n - 1] == '\'') {
		i = 1;
		n--;
	}
	d = sm_cql_buf_append(out, n - i);
	if (d == NULL) {
		if (buf != small)
			sm_free(buf);
		return -ENOMEM;
	}
	for (o = 0; i < n; i++) {
		if (buf[i] == '\'' && i + 1 < n && buf[i + 1] == '\'')
			i++;
		d[o++] = (uint8_t)(t->kind == SM_TYPE_TIMESTAMP && buf[i] == ' ' ? 'T' : buf[i]);
	}
	out->len = (size_t)(d - out->p) + o; /* the escapes dropped */
	if (buf != small)
		sm_free(buf);
	return 0;
}

/* Decimal digits of a varint or decimal, the integer part only (truncated toward zero). */
static int
integer_digits(const struct sm_type *t, struct sm_bytes a, char **digits)
{
	size_t n = sm_value_format(t, a, NULL, 0), i;
	char *s = sm_malloc(n + 1);

	if (s == NULL)
		return -ENOMEM;
	sm_value_format(t, a, s, n + 1);
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == '.' || s[i] == 'E') {
			if (s[i] == 'E') {
				/* 1.5E+100: far too large for any cast but varint; plain digits */
				double x = strtod(s, NULL);

				snprintf(s, n + 1, "%.0f", trunc(x));
				return *digits = s, 0;
			}
			s[i] = '\0';
			break;
		}
	}
	if (s[0] == '\0' || (s[0] == '-' && s[1] == '\0'))
		strcpy(s, "0");
	*digits = s;
	return 0;
}

/* The low 128 bits of an integer written in decimal (a cast wraps, as static_cast does). */
static __int128
digits_i128(const char *s)
{
	unsigned __int128 v = 0;
	bool neg = *s == '-';

	for (s += neg; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (unsigned)(*s - '0');
	return neg ? (__int128)(0 - v) : (__int128)v;
}

static int64_t
be_signed(struct sm_bytes a)
{
	uint64_t v = (a.p[0] & 0x80) ? UINT64_MAX : 0;
	uint32_t i;

	for (i = 0; i < a.len; i++)
		v = v << 8 | a.p[i];
	return (int64_t)v;
}

static double
as_double(const struct sm_type *t, struct sm_bytes a, int *rc)
{
	uint32_t u32;
	uint64_t u64;
	float f;
	double d;
	char *s;

	*rc = 0;
	if (is_int_kind(t->kind))
		return (double)be_signed(a);
	if (t->kind == SM_TYPE_FLOAT) {
		u32 = (uint32_t)get_be(a.p, 4);
		memcpy(&f, &u32, 4);
		return f;
	}
	if (t->kind == SM_TYPE_DOUBLE) {
		u64 = get_be(a.p, 8);
		memcpy(&d, &u64, 8);
		return d;
	}
	/* varint, decimal: through their digits */
	s = sm_malloc(sm_value_format(t, a, NULL, 0) + 1);
	if (s == NULL) {
		*rc = -ENOMEM;
		return 0;
	}
	sm_value_format(t, a, s, sm_value_format(t, a, NULL, 0) + 1);
	d = strtod(s, NULL);
	sm_free(s);
	return d;
}

/* A number as the integer its truncation gives (low 128 bits). */
static __int128
as_i128(const struct sm_type *t, struct sm_bytes a, int *rc)
{
	char *s;
	double d;
	__int128 v;

	*rc = 0;
	if (is_int_kind(t->kind))
		return be_signed(a);
	if (t->kind == SM_TYPE_FLOAT || t->kind == SM_TYPE_DOUBLE) {
		d = as_double(t, a, rc);
		/* x86's conversion of what does not fit: the minimum */
		if (!(d > -9.2233720368547758e18 && d < 9.2233720368547758e18))
			return INT64_MIN;
		return (int64_t)d;
	}
	if (t->kind == SM_TYPE_VARINT && a.len <= 16) {
		v = (a.p[0] & 0x80) ? -1 : 0;
		for (uint32_t i = 0; i < a.len; i++)
			v = (__int128)((unsigned __int128)v << 8) | a.p[i];
		return v;
	}
	*rc = integer_digits(t, a, &s);
	if (*rc < 0)
		return 0;
	v = digits_i128(s);
	sm_free(s);
	return v;
}

/* A minimal big-endian two's complement varint of @v. */
static int
put_varint_i128(__int128 v, struct sm_cql_buf *out)
{
	uint8_t b[16];
	unsigned n = 16, i;
	uint8_t *d;

	for (i = 0; i < 16; i++)
		b[15 - i] = (uint8_t)((unsigned __int128)v >> (8 * i));
	i = 0;
	while (n - i > 1 && ((b[i] == 0 && !(b[i + 1] & 0x80)) || (b[i] == 0xff && (b[i + 1] & 0x80))))
		i++;
	d = sm_cql_buf_append(out, n - i);
	if (d == NULL)
		return -ENOMEM;
	memcpy(d, b + i, n - i);
	return 0;
}

static int
put_fixed(struct sm_cql_buf *out, uint64_t v, unsigned n)
{
	uint8_t *d = sm_cql_buf_append(out, n);

	if (d == NULL)
		return -ENOMEM;
	put_be(d, v, n);
	return 0;
}

/* A decimal from its text (sm_cql_value_from_text() does the parsing). */
static int
decimal_from_text(const char *s, struct sm_cql_buf *out, char *err, size_t errlen)
{
	struct sm_cql_value_span sp;

	return sm_cql_value_from_text(sm_type_simple(SM_TYPE_DECIMAL), s, strlen(s), out, &sp, err,
				      errlen);
}

int
cql_cast(const struct sm_type *from, const struct sm_type *to, struct sm_bytes a,
	 struct sm_cql_buf *out, char *err, size_t errlen)
{
	enum sm_type_kind f = from->kind, t = to->kind;
	struct sm_cql_value_span sp;
	char buf[64], *s;
	uint8_t *d;
	__int128 iv;
	double dv;
	float fv;
	int rc = 0;

	if (!cql_cast_allowed(from, to))
		return fail(err, errlen, "org.apache.cassandra.db.marshal.%s cannot be cast to "
					 "org.apache.cassandra.db.marshal.%s",
			    cql_type_class(f), cql_type_class(t));
	if (sm_type_equal(from, to) || (f == SM_TYPE_ASCII && t == SM_TYPE_TEXT) || a.len == 0) {
		d = sm_cql_buf_append(out, a.len);
		if (d == NULL)
			return -ENOMEM;
		if (a.len)
			memcpy(d, a.p, a.len);
		return 0;
	}
	switch (t) {
	case SM_TYPE_TINYINT:
	case SM_TYPE_SMALLINT:
	case SM_TYPE_INT:
	case SM_TYPE_BIGINT:
		iv = as_i128(from, a, &rc);
		if (rc < 0)
			return rc;
		return put_fixed(out, (uint64_t)iv, sm_type_fixed_len(to));
	case SM_TYPE_VARINT:
		if (f == SM_TYPE_DECIMAL || f == SM_TYPE_FLOAT || f == SM_TYPE_DOUBLE) {
			if (f == SM_TYPE_DECIMAL) {
				rc = integer_digits(from, a, &s);
			} else {
				dv = as_double(from, a, &rc);
				s = sm_malloc(400);
				if (s != NULL)
					snprintf(s, 400, "%.0f", isfinite(dv) ? trunc(dv) : 0.0);
				else
					rc = -ENOMEM;
			}
			if (rc < 0)
				return rc;
			rc = sm_cql_value_from_text(to, s, strlen(s), out, &sp, err, errlen);
			sm_free(s);
			return rc;
		}
		iv = as_i128(from, a, &rc);
		return rc < 0 ? rc : put_varint_i128(iv, out);
	case SM_TYPE_FLOAT:
	case SM_TYPE_DOUBLE:
		dv = as_double(from, a, &rc);
		if (rc < 0)
			return rc;
		if (t == SM_TYPE_FLOAT) {
			uint32_t u;

			fv = (float)dv;
			memcpy(&u, &fv, 4);
			return put_fixed(out, u, 4);
		} else {
			uint64_t u;

			memcpy(&u, &dv, 8);
			return put_fixed(out, u, 8);
		}
	case SM_TYPE_DECIMAL:
		if (f == SM_TYPE_FLOAT || f == SM_TYPE_DOUBLE) {
			/* big_decimal(fmt::to_string(x)): the shortest digits that read back */
			sm_value_format(from, a, buf, sizeof(buf));
			if (strcmp(buf, "NaN") == 0 || strstr(buf, "Infinity") != NULL)
				return fail(err, errlen, "Cannot cast %s to decimal", buf);
			return decimal_from_text(buf, out, err, errlen);
		}
		/* an integer n becomes the decimal 10n with scale 1 (castas_fcts.cc) */
		d = sm_cql_buf_append(out, 4);
		if (d == NULL)
			return -ENOMEM;
		put_be(d, 1, 4);
		if (f == SM_TYPE_VARINT && a.len > 15) {
			/* too large for 128 bits: append a zero digit in text */
			out->len -= 4;
			rc = integer_digits(from, a, &s);
			if (rc < 0)
				return rc;
			{
				size_t n = strlen(s);
				char *t2 = sm_malloc(n + 3);

				if (t2 == NULL) {
					sm_free(s);
					return -ENOMEM;
				}
				snprintf(t2, n + 3, "%s.0", s);
				rc = decimal_from_text(t2, out, err, errlen);
				sm_free(t2);
			}
			sm_free(s);
			return rc;
		}
		iv = as_i128(from, a, &rc);
		if (rc < 0)
			return rc;
		return put_varint_i128(iv * 10, out);
	case SM_TYPE_TEXT:
	case SM_TYPE_ASCII:
		return text_of(from, a, out);
	case SM_TYPE_DATE:
	case SM_TYPE_TIMESTAMP: {
		struct cql_fn fn = { t == SM_TYPE_DATE ? CQL_FN_TO_DATE : CQL_FN_TO_TIMESTAMP,
				     t, f, { 0 }, 0, 1 };
		uint8_t res[CQL_FN_RESULT_MAX];
		uint32_t len;

		rc = cql_fn_eval(&fn, f, a, NULL, 0, "cast", res, &len, err, errlen);
		if (rc < 0)
			return rc;
		d = sm_cql_buf_append(out, len);
		if (d == NULL)
			return -ENOMEM;
		memcpy(d, res, len);
		return 0;
	}
	default:
		return fail(err, errlen, "%s cannot be cast to %s", cql_type_class(f),
			    cql_type_class(t));
	}
}
