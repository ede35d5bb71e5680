/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Values as cqlsh prints them.
 *
 * cqlsh deserializes a cell with the Python driver and prints the Python
 * value through pylib/cqlshlib/formatting.py; this file goes from the wire
 * bytes to the same text directly. Types come as the result metadata's
 * raw [option], so tuples and user types (which shardmark's own store does
 * not have, a ScyllaDB cluster may) print too.
 *
 * The rules, each from formatting.py: null is "null", an empty value of a
 * type that has no empty form (an int of 0 bytes) is "", booleans are
 * Python's True/False, floats go through "%.*g" with the precision raised
 * by the exponent (format_floating_point_type), decimals read as Python's
 * Decimal str() (plain, or 1E+2 when the exponent is positive or the
 * adjusted exponent below -6), timestamps as '%Y-%m-%d %H:%M:%S.%f%z' in
 * UTC, dates and times as the driver's Date and Time str(), text with
 * backslashes doubled and control characters as Python escapes (\n,
 * \x01), quoted with '' inside collections, like inet and timestamps;
 * durations as duration_as_str() (with the integer division that cqlsh
 * meant: ScyllaDB's fork divides as floats, printing 1.1666666666666667y).
 */

#include <arpa/inet.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "sm_core.h"
#include "cqlsh_priv.h"
#include "sm_cqlsh.h"

/* Option ids (native protocol v4 §6, duration from v5, sent by ScyllaDB in v4 too). */
enum {
	OPT_CUSTOM = 0x0000,
	OPT_ASCII = 0x0001,
	OPT_BIGINT = 0x0002,
	OPT_BLOB = 0x0003,
	OPT_BOOLEAN = 0x0004,
	OPT_COUNTER = 0x0005,
	OPT_DECIMAL = 0x0006,
	OPT_DOUBLE = 0x0007,
	OPT_FLOAT = 0x0008,
	OPT_INT = 0x0009,
	OPT_TIMESTAMP = 0x000B,
	OPT_UUID = 0x000C,
	OPT_VARCHAR = 0x000D,
	OPT_VARINT = 0x000E,
	OPT_TIMEUUID = 0x000F,
	OPT_INET = 0x0010,
	OPT_DATE = 0x0011,
	OPT_TIME = 0x0012,
	OPT_SMALLINT = 0x0013,
	OPT_TINYINT = 0x0014,
	OPT_DURATION = 0x0015,
	OPT_LIST = 0x0020,
	OPT_MAP = 0x0021,
	OPT_SET = 0x0022,
	OPT_UDT = 0x0030,
	OPT_TUPLE = 0x0031,
};

/* The top level of an [option]: its id and where its parts are. */
struct opt {
	uint16_t id;
	struct sm_bytes sub[2];	 /* list/set element; map key and value */
	struct sm_bytes fields;	 /* tuple: the options; UDT: (name, option) pairs */
	uint16_t nfields;
	struct sm_bytes custom; /* the class name */
};

static bool
opt_parse(struct sm_bytes type, struct opt *o)
{
	struct sm_cql_reader r;
	const uint8_t *start;

	memset(o, 0, sizeof(*o));
	sm_cql_reader_init(&r, type.p, type.len);
	o->id = sm_cql_read_short(&r);
	switch (o->id) {
	case OPT_CUSTOM:
		o->custom = sm_cql_read_string(&r);
		break;
	case OPT_LIST:
	case OPT_SET:
		o->sub[0] = sm_cql_read_option(&r, NULL);
		break;
	case OPT_MAP:
		o->sub[0] = sm_cql_read_option(&r, NULL);
		o->sub[1] = sm_cql_read_option(&r, NULL);
		break;
	case OPT_UDT:
		(void)sm_cql_read_string(&r);
		(void)sm_cql_read_string(&r);
		/* fields follow as for a tuple */
		__attribute__((fallthrough));
	case OPT_TUPLE:
		o->nfields = sm_cql_read_short(&r);
		start = r.p;
		o->fields = (struct sm_bytes){ start, (uint32_t)sm_cql_reader_left(&r) };
		break;
	default:
		break;
	}
	return sm_cql_reader_ok(&r) && type.len >= 2;
}

/* A custom class that is a type we know ("org.apache.cassandra.db.marshal.DurationType"). */
static uint16_t
opt_effective_id(const struct opt *o)
{
	static const char dur[] = "DurationType";
	size_t n = sizeof(dur) - 1;

	if (o->id == OPT_CUSTOM && o->custom.len >= n &&
	    memcmp(o->custom.p + o->custom.len - n, dur, n) == 0)
		return OPT_DURATION;
	return o->id;
}

static uint64_t
be_uint(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Sign-extend an n-byte big-endian integer. */
static int64_t
be_int(const uint8_t *p, unsigned n)
{
	uint64_t v = be_uint(p, n);

	if (n < 8 && (p[0] & 0x80))
		v |= ~(uint64_t)0 << (8 * n);
	return (int64_t)v;
}

static size_t
put_width(struct sm_cqlsh_str *out, const char *s)
{
	size_t before = out->len;

	sm_cqlsh_str_puts(out, s);
	return sm_cqlsh_display_width(out->p ? out->p + before : "", out->len - before);
}

static size_t
fmt_hex(struct sm_cqlsh_str *out, struct sm_bytes v)
{
	static const char hex[] = "0123456789abcdef";
	char pair[2];
	uint32_t i;

	sm_cqlsh_str_puts(out, "0x");
	for (i = 0; i < v.len; i++) {
		pair[0] = hex[v.p[i] >> 4];
		pair[1] = hex[v.p[i] & 15];
		sm_cqlsh_str_putn(out, pair, 2);
	}
	return 2 + 2 * (size_t)v.len;
}

/*
 * Text as format_value_text(): backslashes doubled, ' doubled when
 * quoted, U+0000..U+001F and U+007F..U+00A0 as Python's repr escapes.
 */
static size_t
fmt_text(struct sm_cqlsh_str *out, struct sm_bytes v, bool quoted)
{
	const unsigned char *p = v.p, *end = v.p + v.len;
	size_t before = out->len;
	char esc[8];

	if (quoted)
		sm_cqlsh_str_putn(out, "'", 1);
	while (p < end) {
		uint32_t c = *p;
		unsigned n = c < 0x80 ? 0 : c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
		const unsigned char *start = p++;

		if (n > 0 && (size_t)(end - p) >= n) {
			c &= 0x3fu >> n;
			while (n-- > 0)
				c = c << 6 | (*p++ & 0x3fu);
		} else if (c >= 0x80) {
			/* Not UTF-8: the byte as an escape, as Python shows undecodable bytes. */
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			sm_cqlsh_str_puts(out, esc);
			continue;
		}
		if (c == '\\') {
			sm_cqlsh_str_puts(out, "\\\\");
		} else if (c == '\'' && quoted) {
			sm_cqlsh_str_puts(out, "''");
		} else if (c < 0x20 || (c >= 0x7f && c <= 0xa0)) {
			if (c == '\n')
				sm_cqlsh_str_puts(out, "\\n");
			else if (c == '\t')
				sm_cqlsh_str_puts(out, "\\t");
			else if (c == '\r')
				sm_cqlsh_str_puts(out, "\\r");
			else {
				snprintf(esc, sizeof(esc), "\\x%02x", c);
				sm_cqlsh_str_puts(out, esc);
			}
		} else {
			sm_cqlsh_str_putn(out, (const char *)start, (size_t)(p - start));
		}
	}
	if (quoted)
		sm_cqlsh_str_putn(out, "'", 1);
	return sm_cqlsh_display_width(out->p ? out->p + before : "", out->len - before);
}

/* The decimal digits of a varint (sign included), lib/store's rendering. */
static void
varint_digits(struct sm_cqlsh_str *out, struct sm_bytes v)
{
	const struct sm_type *t = sm_type_simple(SM_TYPE_VARINT);
	size_t n = sm_value_format(t, v, NULL, 0);

	if (out->err != 0 || !sm_cqlsh_str_room(out, n))
		return;
	sm_value_format(t, v, out->p + out->len, n + 1);
	out->len += n;
}

/* Python's Decimal.__str__ of unscaled x 10^-scale. */
static size_t
fmt_decimal(struct sm_cqlsh_str *out, struct sm_bytes v)
{
	struct sm_cqlsh_str d;
	int64_t exp, adjusted, point;
	const char *digits;
	size_t n, before = out->len;
	bool neg;

	if (v.len < 5)
		return fmt_hex(out, v);
	exp = -(int64_t)(int32_t)be_uint(v.p, 4);
	sm_cqlsh_str_init(&d);
	varint_digits(&d, (struct sm_bytes){ v.p + 4, v.len - 4 });
	digits = sm_cqlsh_str_get(&d);
	neg = digits[0] == '-';
	digits += neg;
	n = strlen(digits);
	adjusted = exp + (int64_t)n - 1;
	if (neg)
		sm_cqlsh_str_putn(out, "-", 1);
	if (exp <= 0 && adjusted >= -6) {
		point = (int64_t)n + exp;
		if (exp == 0) {
			sm_cqlsh_str_puts(out, digits);
		} else if (point > 0) {
			sm_cqlsh_str_putn(out, digits, (size_t)point);
			sm_cqlsh_str_putn(out, ".", 1);
			sm_cqlsh_str_puts(out, digits + point);
		} else {
			sm_cqlsh_str_puts(out, "0.");
			for (; point < 0; point++)
				sm_cqlsh_str_putn(out, "0", 1);
			sm_cqlsh_str_puts(out, digits);
		}
	} else {
		sm_cqlsh_str_putn(out, digits, 1);
		if (n > 1) {
			sm_cqlsh_str_putn(out, ".", 1);
			sm_cqlsh_str_puts(out, digits + 1);
		}
		sm_cqlsh_str_printf(out, "E%c%" PRId64, adjusted >= 0 ? '+' : '-',
				    adjusted >= 0 ? adjusted : -adjusted);
	}
	sm_cqlsh_str_release(&d);
	return out->len - before;
}

/* format_floating_point_type(): "%.*g", the precision raised to show the integer digits. */
static size_t
fmt_float(struct sm_cqlsh_str *out, double x, int precision)
{
	char buf[64];
	int exponent;

	if (isnan(x))
		return put_width(out, "NaN");
	if (isinf(x))
		return put_width(out, x > 0 ? "Infinity" : "-Infinity");
	/* Python's int() truncates toward zero, as the cast does. */
	exponent = fabs(x) > DBL_EPSILON ? (int)log10(fabs(x)) : INT32_MIN;
	if (exponent >= -4 && exponent < precision)
		precision += exponent + 1;
	snprintf(buf, sizeof(buf), "%.*g", precision, x);
	return put_width(out, buf);
}

/* Python's datetime range: years 1 to 9999. */
#define DAY_MIN (-719162)	    /* 0001-01-01 */
#define DAY_MAX 2932896		    /* 9999-12-31 */
#define MS_PER_DAY 86400000ll

static int64_t
floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/*
 * '%Y-%m-%d %H:%M:%S.%f%z' of the driver's datetime (milliseconds, so
 * %f ends in 000); outside datetime's years the milliseconds as a number,
 * as cqlsh's deserialize_date_fallback_int() does.
 */
static size_t
fmt_timestamp(struct sm_cqlsh_str *out, int64_t ms, bool quoted, bool local)
{
	int64_t days = floor_div(ms, MS_PER_DAY), rem = ms - days * MS_PER_DAY, y;
	unsigned mo, d, frac = (unsigned)(rem % 1000);
	long off = 0;
	char buf[96];

	if (days < DAY_MIN || days > DAY_MAX) {
		snprintf(buf, sizeof(buf), "%" PRId64, ms);
		return put_width(out, buf);
	}
	if (local) {
		time_t t = (time_t)floor_div(ms, 1000);
		struct tm tm;

		if (localtime_r(&t, &tm) != NULL) {
			off = tm.tm_gmtoff;
			days = floor_div(ms + off * 1000, MS_PER_DAY);
			rem = ms + off * 1000 - days * MS_PER_DAY;
		}
	}
	sm_civil_from_days(days, &y, &mo, &d);
	rem /= 1000;
	/* %Y as glibc writes it (no padding below 1000), the rest as strftime does. */
	snprintf(buf, sizeof(buf), "%s%" PRId64 "-%02u-%02u %02u:%02u:%02u.%03u000%c%02ld%02ld%s",
		     quoted ? "'" : "", y, mo, d, (unsigned)(rem / 3600), (unsigned)(rem / 60 % 60),
		     (unsigned)(rem % 60), frac, off < 0 ? '-' : '+', labs(off) / 3600,
		     labs(off) / 60 % 60, quoted ? "'" : "");
	return put_width(out, buf);
}

/* The driver's Date.__str__: %04d-%02d-%02d, or the day number outside datetime's years. */
static size_t
fmt_date(struct sm_cqlsh_str *out, uint32_t raw)
{
	int64_t days = (int64_t)raw - ((int64_t)1 << 31), y;
	unsigned m, d;
	char buf[48];

	if (days < DAY_MIN || days > DAY_MAX) {
		snprintf(buf, sizeof(buf), "%" PRId64, days);
		return put_width(out, buf);
	}
	sm_civil_from_days(days, &y, &m, &d);
	snprintf(buf, sizeof(buf), "%04" PRId64 "-%02u-%02u", y, m, d);
	return put_width(out, buf);
}

/* The driver's Time.__str__: %02d:%02d:%02d.%09d. */
static size_t
fmt_time(struct sm_cqlsh_str *out, int64_t ns)
{
	char buf[48];
	uint64_t s = (uint64_t)ns / 1000000000u;

	snprintf(buf, sizeof(buf), "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64 ".%09" PRIu64, s / 3600,
		 s / 60 % 60, s % 60, (uint64_t)ns % 1000000000u);
	return put_width(out, buf);
}

/* One unit of duration_as_str(): what is left below @unit. */
static uint64_t
dur_part(struct sm_cqlsh_str *out, uint64_t v, uint64_t unit, const char *name)
{
	if (v == 0 || v < unit)
		return v;
	sm_cqlsh_str_printf(out, "%" PRIu64 "%s", v / unit, name);
	return v % unit;
}

static size_t
fmt_duration(struct sm_cqlsh_str *out, struct sm_bytes v)
{
	int32_t months, days;
	int64_t nanos;
	uint64_t rest;
	size_t before = out->len;

	if (sm_duration_decode(v, &months, &days, &nanos) < 0)
		return fmt_hex(out, v);
	if (months < 0 || days < 0 || nanos < 0)
		sm_cqlsh_str_putn(out, "-", 1);
	rest = dur_part(out, (uint64_t)llabs(months), 12, "y");
	dur_part(out, rest, 1, "mo");
	dur_part(out, (uint64_t)llabs(days), 1, "d");
	if (nanos != 0) {
		rest = nanos < 0 ? (uint64_t)0 - (uint64_t)nanos : (uint64_t)nanos;
		rest = dur_part(out, rest, 3600000000000ull, "h");
		rest = dur_part(out, rest, 60000000000ull, "m");
		rest = dur_part(out, rest, 1000000000ull, "s");
		rest = dur_part(out, rest, 1000000ull, "ms");
		rest = dur_part(out, rest, 1000ull, "us");
		dur_part(out, rest, 1, "ns");
	}
	return out->len - before;
}

static size_t
fmt_uuid(struct sm_cqlsh_str *out, const uint8_t *u)
{
	char buf[40];

	snprintf(buf, sizeof(buf),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
	return put_width(out, buf);
}

static size_t
fmt_inet(struct sm_cqlsh_str *out, struct sm_bytes v, bool quoted)
{
	char addr[INET6_ADDRSTRLEN + 2], buf[INET6_ADDRSTRLEN + 4];

	if ((v.len != 4 && v.len != 16) ||
	    inet_ntop(v.len == 4 ? AF_INET : AF_INET6, v.p, addr, sizeof(addr)) == NULL)
		return fmt_hex(out, v);
	snprintf(buf, sizeof(buf), quoted ? "'%s'" : "%s", addr);
	return put_width(out, buf);
}

static size_t
format(struct sm_cqlsh_str *out, struct sm_bytes type, struct sm_bytes v, bool quoted,
       const struct sm_cqlsh_fmt *f, unsigned depth);

/* A list or set ([a, b], {a, b}) or a map ({k: v}), elements quoted. */
static size_t
fmt_collection(struct sm_cqlsh_str *out, const struct opt *o, struct sm_bytes v,
	       const struct sm_cqlsh_fmt *f, unsigned depth)
{
	bool is_map = o->id == OPT_MAP;
	struct sm_coll_iter it;
	struct sm_bytes a, b;
	size_t w = 2, before = out->len, n = 0;

	if (sm_coll_iter_init(&it, v) < 0)
		return fmt_hex(out, v);
	sm_cqlsh_str_putn(out, o->id == OPT_LIST ? "[" : "{", 1);
	while (sm_coll_next(&it, &a, is_map ? &b : NULL, is_map)) {
		if (n++ > 0) {
			sm_cqlsh_str_putn(out, ", ", 2);
			w += 2;
		}
		w += format(out, o->sub[0], a, true, f, depth + 1);
		if (is_map) {
			sm_cqlsh_str_putn(out, ": ", 2);
			w += 2 + format(out, o->sub[1], b, true, f, depth + 1);
		}
	}
	if (sm_coll_iter_error(&it)) {
		out->len = before;
		if (out->p != NULL)
			out->p[before] = '\0';
		return fmt_hex(out, v);
	}
	sm_cqlsh_str_putn(out, o->id == OPT_LIST ? "]" : "}", 1);
	return w;
}

/* A tuple (a, b) or a user type {name: value}, fields as [int length][bytes]. */
static size_t
fmt_fields(struct sm_cqlsh_str *out, const struct opt *o, struct sm_bytes v,
	   const struct sm_cqlsh_fmt *f, unsigned depth)
{
	bool udt = o->id == OPT_UDT;
	struct sm_cql_reader types, vals;
	struct sm_bytes name = { NULL, 0 }, ft, fv;
	size_t w = 2, before = out->len;
	uint16_t i;

	sm_cql_reader_init(&types, o->fields.p, o->fields.len);
	sm_cql_reader_init(&vals, v.p, v.len);
	sm_cqlsh_str_putn(out, udt ? "{" : "(", 1);
	/* A user type value may stop before its last fields (added later). */
	for (i = 0; i < o->nfields && sm_cql_reader_left(&vals) > 0; i++) {
		if (udt)
			name = sm_cql_read_string(&types);
		ft = sm_cql_read_option(&types, NULL);
		fv = sm_cql_read_bytes(&vals);
		if (!sm_cql_reader_ok(&types) || !sm_cql_reader_ok(&vals))
			break;
		if (i > 0) {
			sm_cqlsh_str_putn(out, ", ", 2);
			w += 2;
		}
		if (udt) {
			w += fmt_text(out, name, false) + 2;
			sm_cqlsh_str_putn(out, ": ", 2);
		}
		w += format(out, ft, fv, true, f, depth + 1);
	}
	if (!sm_cql_reader_ok(&types) || !sm_cql_reader_ok(&vals)) {
		out->len = before;
		if (out->p != NULL)
			out->p[before] = '\0';
		return fmt_hex(out, v);
	}
	sm_cqlsh_str_putn(out, udt ? "}" : ")", 1);
	return w;
}

static size_t
format(struct sm_cqlsh_str *out, struct sm_bytes type, struct sm_bytes v, bool quoted,
       const struct sm_cqlsh_fmt *f, unsigned depth)
{
	struct opt o;
	char buf[48];
	uint16_t id;

	if (v.p == NULL)
		return put_width(out, "null");
	if (depth > SM_CQL_MAX_OPTION_DEPTH || !opt_parse(type, &o))
		return fmt_hex(out, v);
	id = opt_effective_id(&o);
	if (v.len == 0) {
		/* cqlsh shows the driver's EMPTY as '' for every type but the byte types. */
		if (id == OPT_BLOB)
			return put_width(out, "0x");
		if ((id == OPT_ASCII || id == OPT_VARCHAR) && quoted)
			return put_width(out, "''");
		return 0;
	}
	switch (id) {
	case OPT_ASCII:
	case OPT_VARCHAR:
		return fmt_text(out, v, quoted);
	case OPT_BOOLEAN:
		if (v.len != 1)
			break;
		return put_width(out, v.p[0] ? "True" : "False");
	case OPT_TINYINT:
	case OPT_SMALLINT:
	case OPT_INT:
	case OPT_BIGINT:
	case OPT_COUNTER: {
		unsigned want = id == OPT_TINYINT ? 1 : id == OPT_SMALLINT ? 2 : id == OPT_INT ? 4 : 8;

		if (v.len != want)
			break;
		snprintf(buf, sizeof(buf), "%" PRId64, be_int(v.p, want));
		return put_width(out, buf);
	}
	case OPT_VARINT: {
		size_t before = out->len;

		varint_digits(out, v);
		return out->len - before;
	}
	case OPT_DECIMAL:
		return fmt_decimal(out, v);
	case OPT_FLOAT: {
		union {
			uint32_t u;
			float f;
		} x;

		if (v.len != 4)
			break;
		x.u = (uint32_t)be_uint(v.p, 4);
		return fmt_float(out, x.f, f->float_precision > 0 ? f->float_precision : 5);
	}
	case OPT_DOUBLE: {
		union {
			uint64_t u;
			double d;
		} x;

		if (v.len != 8)
			break;
		x.u = be_uint(v.p, 8);
		return fmt_float(out, x.d, f->double_precision > 0 ? f->double_precision : 5);
	}
	case OPT_TIMESTAMP:
		if (v.len != 8)
			break;
		return fmt_timestamp(out, be_int(v.p, 8), quoted, f->local_time);
	case OPT_DATE:
		if (v.len != 4)
			break;
		return fmt_date(out, (uint32_t)be_uint(v.p, 4));
	case OPT_TIME:
		if (v.len != 8 || be_int(v.p, 8) < 0)
			break;
		return fmt_time(out, be_int(v.p, 8));
	case OPT_UUID:
	case OPT_TIMEUUID:
		if (v.len != 16)
			break;
		return fmt_uuid(out, v.p);
	case OPT_INET:
		return fmt_inet(out, v, quoted);
	case OPT_DURATION:
		return fmt_duration(out, v);
	case OPT_LIST:
	case OPT_SET:
	case OPT_MAP:
		return fmt_collection(out, &o, v, f, depth);
	case OPT_TUPLE:
	case OPT_UDT:
		return fmt_fields(out, &o, v, f, depth);
	default:
		break; /* blob, custom types: their bytes */
	}
	return fmt_hex(out, v);
}

size_t
sm_cqlsh_format_value(struct sm_cqlsh_str *out, struct sm_bytes type, struct sm_bytes v,
		      bool quoted, const struct sm_cqlsh_fmt *f)
{
	static const struct sm_cqlsh_fmt defaults;

	return format(out, type, v, quoted, f != NULL ? f : &defaults, 0);
}
