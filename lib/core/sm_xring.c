/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm_xring.h"

/*
 * The ring and its slots come from libc, not sm_malloc: the struct needs
 * cache-line alignment (the producer and consumer indexes must not share a
 * line), which sm_malloc does not promise, and rings are set up once by the
 * runtime rather than per request, so they do not belong in allocs/op.
 */
int
sm_xring_create(struct sm_xring **r, uint32_t capacity)
{
	struct sm_xring *ring;
	void *mem;
	int ret;

	if (r == NULL || capacity < 2 || (capacity & (capacity - 1)) != 0)
		return -EINVAL;

	ret = posix_memalign(&mem, SM_CACHE_LINE, sizeof(*ring));
	if (ret != 0)
		return -ret;
	ring = mem;
	memset(ring, 0, sizeof(*ring));

	ret = posix_memalign(&mem, SM_CACHE_LINE, (size_t)capacity * sizeof(struct sm_xmsg));
	if (ret != 0)
		goto free_ring;
	memset(mem, 0, (size_t)capacity * sizeof(struct sm_xmsg));
	ring->slots = mem;
	ring->mask = capacity - 1;
	*r = ring;
	return 0;

free_ring:
	free(ring);
	return -ret;
}

void
sm_xring_destroy(struct sm_xring *r)
{
	if (r == NULL)
		return;
	free(r->slots);
	free(r);
}
