/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_DDB_NUMBER_H
#define SM_DDB_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sm_types.h" /* struct sm_bytes */

/*
 * DynamoDB numbers (attribute type N): decimal floating point with at most
 * 38 significant digits and a magnitude of 0 or 1E-130 to
 * 9.9999999999999999999999999999999999999E+125 (either sign). Leading and
 * trailing zeros are not significant. Arithmetic is exact: a sum that needs
 * more than 38 digits is an error, never rounded.
 *
 * A number is held normalised (no trailing zeros in the coefficient, zero as
 * +0 * 10^0), so equal numbers have equal representations, equal canonical
 * text and equal CQL decimal serializations: a number key hashes and
 * compares the same whatever text the client sent ("1.50", "15e-1").
 *
 * Errors carry DynamoDB's ValidationException messages:
 *   "The parameter cannot be converted to a numeric value: <text>"   -EINVAL
 *   "Attempting to store more than 38 significant digits in a Number" -ERANGE
 *   "Number overflow. Attempting to store a number with magnitude larger than supported range"
 *   "Number underflow. Attempting to store a number with magnitude smaller than supported range"
 */

__extension__ typedef unsigned __int128 sm_ddb_u128;

#define SM_DDB_NUMBER_DIGITS 38
#define SM_DDB_NUMBER_MAX_ADJ_EXP 125	 /* exponent of the leading digit */
#define SM_DDB_NUMBER_MIN_ADJ_EXP (-130) /* exponent of the leading digit */
/* Canonical text, NUL included: "-0." + 129 zeros + 38 digits is the longest. */
#define SM_DDB_NUMBER_TEXT_MAX 176
/* CQL decimal: 4 bytes of scale and at most 16 bytes of unscaled varint. */
#define SM_DDB_NUMBER_DECIMAL_MAX 20

/* value = (neg ? -1 : 1) * coef * 10^exp */
struct sm_ddb_number {
	sm_ddb_u128 coef; /* < 10^38, no trailing zeros; 0 for zero */
	int32_t exp;	  /* 0 for zero */
	uint8_t digits;	  /* decimal digits in coef; 0 for zero */
	bool neg;	  /* never set for zero */
};

/*
 * Parse and validate the @len bytes at @text as DynamoDB does (Java
 * BigDecimal's grammar, ASCII digits only):
 *
 *   [+-]? ( digits [ "." digits? ] | "." digits ) ( [eE] [+-]? digits )?
 *
 * so "+3", ".5", "5.", "0001.23", "1e+5" and "0e1000" (zero) are numbers, and
 * "", " 1", "1 ", "NaN", "Infinity", "0x10" and "1e" are not. An exponent
 * beyond the int32 range is not a number either (BigDecimal's scale limit).
 * The range is checked before the digits, as DynamoDB does: overflow, then
 * underflow, then more than 38 significant digits. Returns 0, -EINVAL or
 * -ERANGE with DynamoDB's message in @err.
 */
int
sm_ddb_number_parse(const char *text, size_t len, struct sm_ddb_number *out, char *err,
		    size_t errlen);

/*
 * The canonical text, as DynamoDB returns numbers: plain notation without an
 * exponent and without insignificant zeros ("1.50" -> "1.5", "1e2" -> "100",
 * "-0.00" -> "0", "1E-5" -> "0.00001", "1e125" -> "1" and 125 zeros). Returns
 * the length (at most SM_DDB_NUMBER_TEXT_MAX - 1) and writes it NUL-terminated
 * when it fits in @len, like snprintf().
 */
size_t
sm_ddb_number_format(const struct sm_ddb_number *n, char *buf, size_t len);

/* Exact order of two valid numbers: <0, 0, >0. */
int
sm_ddb_number_compare(const struct sm_ddb_number *a, const struct sm_ddb_number *b);

/*
 * Exact @a + @b (or @a - @b) into *@out (which may alias either operand).
 * A result outside the range is -ERANGE with the overflow or underflow
 * message; a result that needs more than 38 significant digits (1e50 + 1)
 * is -ERANGE with the overflow message too, because that is what DynamoDB
 * answers (its ScyllaDB test suite notes the odd wording), rather than
 * rounding. Returns 0 or -ERANGE.
 */
int
sm_ddb_number_add(const struct sm_ddb_number *a, const struct sm_ddb_number *b,
		  struct sm_ddb_number *out, char *err, size_t errlen);
int
sm_ddb_number_sub(const struct sm_ddb_number *a, const struct sm_ddb_number *b,
		  struct sm_ddb_number *out, char *err, size_t errlen);

/* The number @v (always valid: 19 digits at most). */
void
sm_ddb_number_from_i64(int64_t v, struct sm_ddb_number *out);

static inline bool
sm_ddb_number_is_zero(const struct sm_ddb_number *n)
{
	return n->digits == 0;
}

/*
 * Serialize as the store's CQL decimal: int32 big-endian scale (-exp), then
 * the unscaled value (+-coef) as a minimal big-endian two's-complement
 * varint; zero is scale 0, unscaled 0x00. Normalisation makes the bytes
 * canonical, and sm_value_compare() on decimals orders them as
 * sm_ddb_number_compare() does. Returns the size (5 to
 * SM_DDB_NUMBER_DECIMAL_MAX) and writes it only when it fits in @len.
 */
size_t
sm_ddb_number_to_decimal(const struct sm_ddb_number *n, uint8_t *buf, size_t len);

/*
 * Read a CQL decimal (any scale and padding, trailing zeros in the unscaled
 * value allowed) as a DynamoDB number. Returns 0; -EINVAL when it is not a
 * well-formed non-empty decimal; -ERANGE with DynamoDB's message when the
 * value is not a valid DynamoDB number (too many digits, out of range).
 */
int
sm_ddb_number_from_decimal(struct sm_bytes v, struct sm_ddb_number *out, char *err, size_t errlen);

#endif /* SM_DDB_NUMBER_H */
