/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_ARENA_H
#define SM_ARENA_H

#include <stddef.h>

/*
 * A bump allocator for trees freed at once (parse trees of the CQL and
 * DynamoDB expression parsers): chunks from sm_malloc(), the arena's header
 * in its first chunk, so a small tree costs one allocation. Objects larger
 * than the current chunk get a chunk of their own. Memory comes zeroed and
 * aligned for any object.
 */

struct sm_arena;

/* A new arena whose first chunk holds about @hint bytes; NULL when out of memory. */
struct sm_arena *
sm_arena_new(size_t hint);

/* Free every chunk; NULL is fine. */
void
sm_arena_free(struct sm_arena *a);

/* @size zeroed bytes, or NULL. */
void *
sm_arena_alloc(struct sm_arena *a, size_t size);

/*
 * Append a slot of @size bytes to the arena-backed array at *@arrp (a
 * pointer to the array pointer) with *@n used of *@cap, doubling it when
 * full (the old copy stays in the arena). Returns the new slot, or NULL.
 */
void *
sm_arena_vec_add(struct sm_arena *a, void *arrp, unsigned *n, unsigned *cap, size_t size);

/* A NUL-terminated copy of @n bytes at @s, or NULL. */
char *
sm_arena_strndup(struct sm_arena *a, const char *s, size_t n);

#endif /* SM_ARENA_H */
