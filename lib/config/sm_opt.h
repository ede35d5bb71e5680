/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_OPT_H
#define SM_OPT_H

/*
 * Option tables: a command's options as rows of (name, type, offset, min,
 * max, help), as sm_config.c's SM_CONFIG_TABLE holds the config keys and
 * DPDK's eal_option_list.h the EAL's, so that a typed option is one row
 * and no setter function. A row's value lands at its offset in the
 * command's context struct; the few options that need more than a typed
 * store keep a setter (SM_OPT_FN).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sm_opt_type {
	SM_OPT_FN,	/* the row's setter does the work */
	SM_OPT_BOOL,	/* bool: true/false, 1/0, yes/no, on/off; a bare flag is true */
	SM_OPT_UINT,	/* unsigned, decimal, in [min, max] */
	SM_OPT_U64,	/* uint64_t, decimal, in [min, max] */
	SM_OPT_STRING,	/* const char *, pointing into argv; "" stores NULL */
	SM_OPT_OUTPUT,	/* const char *, a file to write, as given; the command line checks it */
	SM_OPT_IGNORED, /* accepted and dropped (a ScyllaDB option with no meaning here) */
};

/* Bytes of the field each type stores into, for the tables' checks. */
#define SM_OPT_SIZE_BOOL sizeof(bool)
#define SM_OPT_SIZE_UINT sizeof(unsigned)
#define SM_OPT_SIZE_U64 sizeof(uint64_t)
#define SM_OPT_SIZE_STRING sizeof(const char *)
#define SM_OPT_SIZE_OUTPUT sizeof(const char *)

/*
 * offsetof(@st, @field), failing to compile when the field's size is not
 * the one @type stores (an unsigned field in a U64 row, say).
 */
#define SM_OPT_OFFSET(type, st, field)                                                             \
	(offsetof(st, field) +                                                                     \
	 0 * sizeof(char[sizeof(((st *)0)->field) == SM_OPT_SIZE_##type ? 1 : -1]))

/*
 * Parse @value (NULL: the bare flag, for a bool) as @type and store it at
 * @field; @name ("--partitions") and [@min, @max] make the message.
 * Returns 0, or -EINVAL with @field unchanged and, in @err, the option,
 * what it expects and what it got ("--partitions: expected an integer
 * from 1 to 100000000, got '0'"). SM_OPT_FN rows are the caller's.
 */
int
sm_opt_store(const char *name, enum sm_opt_type type, uint64_t min, uint64_t max,
	     const char *value, void *field, char *err, size_t errlen);

#endif /* SM_OPT_H */
