/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CQLSH_PRIV_H
#define CQLSH_PRIV_H

/* lib/cqlsh's own helpers, shared by its files. */

#include <stdbool.h>
#include <stddef.h>

#include "sm_cqlsh.h"

/*
 * Room in @s for @n more bytes and the NUL (s->len unchanged); false, with
 * s->err set, when memory ran out.
 */
bool
sm_cqlsh_str_room(struct sm_cqlsh_str *s, size_t n);

#endif /* CQLSH_PRIV_H */
