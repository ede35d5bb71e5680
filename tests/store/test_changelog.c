/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sm_changelog.h"

#define T0 1700000000000000ll /* a write time, microseconds */

static const struct sm_uuid tab_a = { .b = { 1 } }, tab_b = { .b = { 2 } };

struct got {
	uint64_t seq[64];
	char first[64][8];
	unsigned n;
	unsigned stop_at; /* 0: never */
};

static int
collect(void *ctx, const struct sm_changelog_rec *r)
{
	struct got *g = ctx;

	if (g->stop_at != 0 && g->n == g->stop_at)
		return 1;
	g->seq[g->n] = r->seq;
	memcpy(g->first[g->n], r->data, r->len < 7 ? r->len : 7);
	g->first[g->n][r->len < 7 ? r->len : 7] = '\0';
	g->n++;
	return 0;
}

static void
test_order_and_from(void **state)
{
	struct sm_changelog_info info;
	struct got g = { .n = 0 };
	uint64_t s[4];
	int i;

	(void)state;
	/* two writes in one microsecond still get growing numbers */
	assert_int_equal(sm_changelog_append(&tab_a, 7, T0, "r0", 2, &s[0]), 0);
	assert_int_equal(sm_changelog_append(&tab_a, 7, T0, "r1", 2, &s[1]), 0);
	assert_int_equal(sm_changelog_append(&tab_a, 7, T0 + 5, "r2", 2, &s[2]), 0);
	assert_int_equal(sm_changelog_append(&tab_b, 7, T0 + 6, "b0", 2, &s[3]), 0);
	assert_true(s[0] < s[1] && s[1] < s[2]);
	assert_true(s[0] >= (uint64_t)T0 << SM_CHANGELOG_SEQ_SHIFT);

	assert_int_equal(sm_changelog_read(&tab_a, 7, 0, true, 100, T0, collect, &g, &info), 3);
	assert_string_equal(g.first[0], "r0");
	assert_string_equal(g.first[2], "r2");
	assert_int_equal(info.last, s[2]);
	assert_int_equal(info.trimmed, 0);

	/* at a number, after it; a limit; a stop from the callback */
	memset(&g, 0, sizeof(g));
	assert_int_equal(sm_changelog_read(&tab_a, 7, s[1], true, 100, T0, collect, &g, &info), 2);
	assert_int_equal(g.seq[0], s[1]);
	memset(&g, 0, sizeof(g));
	assert_int_equal(sm_changelog_read(&tab_a, 7, s[1], false, 100, T0, collect, &g, &info), 1);
	assert_int_equal(g.seq[0], s[2]);
	memset(&g, 0, sizeof(g));
	assert_int_equal(sm_changelog_read(&tab_a, 7, 0, true, 1, T0, collect, &g, &info), 1);
	memset(&g, 0, sizeof(g));
	g.stop_at = 2;
	assert_int_equal(sm_changelog_read(&tab_a, 7, 0, true, 100, T0, collect, &g, &info), 2);

	/* another stream of the same table is another log */
	memset(&g, 0, sizeof(g));
	assert_int_equal(sm_changelog_read(&tab_a, 8, 0, true, 100, T0, collect, &g, &info), 0);
	assert_int_equal(info.last, 0);

	/* many records: the ring grows and keeps its order */
	for (i = 0; i < 200; i++)
		assert_int_equal(sm_changelog_append(&tab_a, 9, T0 + i, "x", 1, &s[0]), 0);
	memset(&g, 0, sizeof(g));
	assert_int_equal(sm_changelog_read(&tab_a, 9, 0, true, 64, T0, collect, &g, &info), 64);
	for (i = 1; i < 64; i++)
		assert_true(g.seq[i] > g.seq[i - 1]);
	sm_changelog_shard_fini();
	assert_int_equal(sm_changelog_bytes(), 0);
}

static void
test_retention(void **state)
{
	struct sm_changelog_info info;
	struct got g = { .n = 0 };
	uint64_t s0, s1;

	(void)state;
	assert_int_equal(sm_changelog_append(&tab_a, 1, T0, "old", 3, &s0), 0);
	assert_int_equal(
		sm_changelog_append(&tab_a, 1, T0 + SM_CHANGELOG_RETENTION_US / 2, "mid", 3, &s1),
		0);
	/* a day after the first write, it is gone and says so */
	assert_int_equal(sm_changelog_read(&tab_a, 1, 0, true, 10,
					   T0 + SM_CHANGELOG_RETENTION_US + 1, collect, &g, &info),
			 1);
	assert_string_equal(g.first[0], "mid");
	assert_int_equal(info.trimmed, s0);
	assert_int_equal(info.first, s1);
	sm_changelog_shard_fini();
}

static void
test_byte_bound(void **state)
{
	struct sm_changelog_info info;
	struct got g = { .n = 0 };
	char big[1000];
	uint64_t s, first = 0;
	int i;

	(void)state;
	memset(big, 'z', sizeof(big));
	sm_changelog_set_limit(10 * 1024);
	assert_int_equal(sm_changelog_limit(), 10 * 1024);
	for (i = 0; i < 40; i++) {
		/* two tables share the shard's bound: the oldest record goes, whichever log */
		assert_int_equal(sm_changelog_append(i % 2 ? &tab_b : &tab_a, 1, T0 + i, big,
						     sizeof(big), &s),
				 0);
		if (i == 0)
			first = s;
		assert_true(sm_changelog_bytes() <= 10 * 1024);
	}
	assert_int_equal(sm_changelog_read(&tab_a, 1, 0, true, 100, T0, collect, &g, &info), 5);
	assert_true(info.trimmed >= first);
	/* a record over the whole bound is refused, nothing lost */
	{
		static char huge[20 * 1024];

		assert_int_equal(sm_changelog_append(&tab_a, 1, T0 + 99, huge, sizeof(huge), &s),
				 -ENOMEM);
	}
	memset(&g, 0, sizeof(g));
	assert_int_equal(sm_changelog_read(&tab_a, 1, 0, true, 100, T0, collect, &g, &info), 5);
	sm_changelog_drop(&tab_a, 0, 0);
	memset(&g, 0, sizeof(g));
	assert_int_equal(sm_changelog_read(&tab_a, 1, 0, true, 100, T0, collect, &g, &info), 0);
	assert_int_equal(sm_changelog_read(&tab_b, 1, 0, true, 100, T0, collect, &g, &info), 5);
	sm_changelog_set_limit(0);
	sm_changelog_shard_fini();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_from),
		cmocka_unit_test(test_retention),
		cmocka_unit_test(test_byte_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
