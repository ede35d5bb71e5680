/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdint.h>
#include <string.h>

#include "sm_arena.h"
#include "sm_mem.h"

#define ARENA_ALIGN 16u

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	size_t size;
	/* the chunk's bytes follow, ARENA_ALIGN aligned */
};

struct sm_arena {
	struct arena_chunk *head;
};

static struct arena_chunk *
chunk_new(size_t size)
{
	struct arena_chunk *c;

	if (size > SIZE_MAX - sizeof(*c) - ARENA_ALIGN)
		return NULL;
	c = sm_malloc(sizeof(*c) + ARENA_ALIGN + size);
	if (c == NULL)
		return NULL;
	c->next = NULL;
	c->used = 0;
	c->size = size;
	return c;
}

static unsigned char *
chunk_base(struct arena_chunk *c)
{
	uintptr_t b = (uintptr_t)(c + 1);

	return (unsigned char *)((b + ARENA_ALIGN - 1) & ~(uintptr_t)(ARENA_ALIGN - 1));
}

struct sm_arena *
sm_arena_new(size_t hint)
{
	struct arena_chunk *c;
	struct sm_arena *a;

	if (hint < 1024)
		hint = 1024;
	c = chunk_new(hint);
	if (c == NULL)
		return NULL;
	a = (struct sm_arena *)chunk_base(c);
	c->used = (sizeof(*a) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	a->head = c;
	return a;
}

void
sm_arena_free(struct sm_arena *a)
{
	struct arena_chunk *c, *next;

	if (a == NULL)
		return;
	for (c = a->head; c != NULL; c = next) {
		next = c->next;
		sm_free(c);
	}
}

void *
sm_arena_alloc(struct sm_arena *a, size_t size)
{
	struct arena_chunk *c = a->head, *n;
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *r;

	if (size == 0)
		need = ARENA_ALIGN;
	if (need < size)
		return NULL;
	if (c->size - c->used < need) {
		/* Big objects get a chunk of their own behind the current one. */
		n = chunk_new(need > c->size ? need : c->size * 2);
		if (n == NULL)
			return NULL;
		if (need > c->size) {
			n->next = c->next;
			c->next = n;
			n->used = need;
			r = chunk_base(n);
			memset(r, 0, need);
			return r;
		}
		n->next = c;
		a->head = n;
		c = n;
	}
	r = chunk_base(c) + c->used;
	c->used += need;
	memset(r, 0, need);
	return r;
}

void *
sm_arena_vec_add(struct sm_arena *a, void *arrp, unsigned *n, unsigned *cap, size_t size)
{
	void *arr, *na;
	unsigned ncap;

	memcpy(&arr, arrp, sizeof(arr));
	if (*n == *cap) {
		ncap = *cap ? *cap * 2 : 4;
		na = sm_arena_alloc(a, (size_t)ncap * size);
		if (na == NULL)
			return NULL;
		if (*n)
			memcpy(na, arr, (size_t)*n * size);
		arr = na;
		memcpy(arrp, &arr, sizeof(arr));
		*cap = ncap;
	}
	return (char *)arr + (size_t)(*n)++ * size;
}

char *
sm_arena_strndup(struct sm_arena *a, const char *s, size_t n)
{
	char *d = sm_arena_alloc(a, n + 1);

	if (d == NULL)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}
