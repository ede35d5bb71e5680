/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two lib/tcpip stacks back to back over an in-memory wire with a seeded
 * PRNG that drops, duplicates and delays (reorders) frames, in simulated
 * time. Connections move a pseudo-random byte stream both ways at once and
 * every byte is checked at its offset; both sides then close and must see
 * an orderly end. ARP runs over the same lossy wire. Stack 1 receives
 * zero-copy (sm_tcpip_input_ref), stack 0 through its receive ring, so
 * both paths are checked byte for byte.
 *
 * Size: 100 MB each way by default; 8 MB under AddressSanitizer so the
 * suite stays fast there. SM_TCPIP_B2B_BYTES overrides both.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sm_tcpip.h"

#if defined(__SANITIZE_ADDRESS__)
#define B2B_DEFAULT_BYTES (8ull << 20)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define B2B_DEFAULT_BYTES (8ull << 20)
#endif
#endif
#ifndef B2B_DEFAULT_BYTES
#define B2B_DEFAULT_BYTES (100ull << 20)
#endif

#define MS 1000000ull
#define SEC 1000000000ull
#define MAX_CONNS 8
#define SERVER_PORT 9000
#define CLIENT_PORT0 50000

static uint64_t
splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The stream's byte at @off: a function of the offset, so misplaced bytes show. */
static inline uint8_t
pattern(uint64_t stream, uint64_t off)
{
	return (uint8_t)(splitmix64(stream * 0x100000000ull + (off >> 3)) >> ((off & 7) * 8));
}

struct wire_frame {
	uint64_t t, id;
	int dst; /* 0: stack A, 1: stack B */
	size_t len;
	uint8_t b[];
};

struct endpoint {
	struct sim *sim;
	int side, idx;
	struct sm_tcp_conn *c;
	uint64_t sent, rcvd, held;
	int eof, closed, close_err, closing;
	bool established;
};

struct side {
	struct sim *sim;
	int id;
};

struct sim {
	struct sm_tcpip *st[2];
	struct side side[2];
	uint64_t now, rng, next_id;
	struct wire_frame **heap;
	size_t nheap, capheap;
	/* wire behaviour, in percent */
	unsigned loss, dup, reorder;
	uint64_t latency;
	uint64_t bytes;
	unsigned nconns;
	struct endpoint ep[2][MAX_CONNS];
	uint64_t frames, dropped, duplicated, reordered;
	uint8_t chunk[65536];
	int errors;
};

static uint64_t
rnd(struct sim *s)
{
	s->rng = splitmix64(s->rng);
	return s->rng;
}

static bool
frame_before(const struct wire_frame *a, const struct wire_frame *b)
{
	return a->t < b->t || (a->t == b->t && a->id < b->id);
}

static void
heap_push(struct sim *s, struct wire_frame *f)
{
	size_t i;

	if (s->nheap == s->capheap) {
		s->capheap = s->capheap ? 2 * s->capheap : 1024;
		s->heap = realloc(s->heap, s->capheap * sizeof(*s->heap));
		assert_non_null(s->heap);
	}
	i = s->nheap++;
	while (i > 0 && frame_before(f, s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = f;
}

static struct wire_frame *
heap_pop(struct sim *s)
{
	struct wire_frame *top = s->heap[0], *last = s->heap[--s->nheap];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l >= s->nheap)
			break;
		m = l;
		if (l + 1 < s->nheap && frame_before(s->heap[l + 1], s->heap[l]))
			m = l + 1;
		if (!frame_before(s->heap[m], last))
			break;
		s->heap[i] = s->heap[m];
		i = m;
	}
	if (s->nheap > 0)
		s->heap[i] = last;
	return top;
}

static void
wire_put(struct sim *s, int dst, const void *frame, size_t len, uint64_t t)
{
	struct wire_frame *f = malloc(sizeof(*f) + len);

	assert_non_null(f);
	f->t = t;
	f->id = s->next_id++;
	f->dst = dst;
	f->len = len;
	memcpy(f->b, frame, len);
	heap_push(s, f);
}

static int
wire_tx(void *ctx, const void *frame, size_t len)
{
	struct side *sd = ctx;
	struct sim *s = sd->sim;
	uint64_t t = s->now + s->latency;

	s->frames++;
	if (rnd(s) % 100 < s->loss) {
		s->dropped++;
		return 0;
	}
	if (rnd(s) % 100 < s->reorder) {
		/* Held back by up to four latencies: later frames overtake it. */
		t += rnd(s) % (4 * s->latency);
		s->reordered++;
	}
	wire_put(s, 1 - sd->id, frame, len, t);
	if (rnd(s) % 100 < s->dup) {
		wire_put(s, 1 - sd->id, frame, len, t + rnd(s) % (2 * s->latency));
		s->duplicated++;
	}
	return 0;
}

/* ---- the applications on both ends ---- */

static void
top_up(struct endpoint *e)
{
	struct sim *s = e->sim;

	while (e->established && !e->closing && e->sent < s->bytes) {
		size_t n = (size_t)(s->bytes - e->sent), i;
		long r;

		if (n > sizeof(s->chunk))
			n = sizeof(s->chunk);
		for (i = 0; i < n; i++)
			s->chunk[i] =
				pattern((uint64_t)(e->side * MAX_CONNS + e->idx), e->sent + i);
		/* A short write arms the writable callback, which calls back here. */
		r = sm_tcp_send(e->c, s->chunk, n, s->now);
		if (r < 0) {
			s->errors++;
			return;
		}
		e->sent += (uint64_t)r;
		if ((size_t)r < n)
			return;
	}
	if (e->established && !e->closing && e->sent == s->bytes) {
		e->closing = 1;
		if (sm_tcp_close(e->c, s->now) < 0)
			s->errors++;
	}
}

static int
on_accepted(void *ctx, struct sm_tcp_conn *c)
{
	struct side *sd = ctx;
	uint16_t rport;
	struct endpoint *e;

	sm_tcp_tuple(c, NULL, NULL, NULL, &rport);
	if (rport < CLIENT_PORT0 || rport >= CLIENT_PORT0 + sd->sim->nconns)
		return -1;
	e = &sd->sim->ep[sd->id][rport - CLIENT_PORT0];
	if (e->c != NULL) {
		sd->sim->errors++;
		return -1;
	}
	e->c = c;
	e->established = true;
	sm_tcp_set_user(c, e);
	top_up(e);
	return 0;
}

static void
on_connected(void *ctx, struct sm_tcp_conn *c, int err)
{
	struct endpoint *e = sm_tcp_user(c);

	(void)ctx;
	if (err < 0) {
		e->sim->errors++;
		e->c = NULL;
		return;
	}
	e->established = true;
	top_up(e);
}

static void
on_recv(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len)
{
	struct endpoint *e = sm_tcp_user(c);
	struct sim *s = e->sim;
	const uint8_t *d = data;
	uint64_t stream = (uint64_t)((1 - e->side) * MAX_CONNS + e->idx);

	(void)ctx;
	if (len == 0) {
		e->eof++;
		return;
	}
	for (size_t i = 0; i < len; i++) {
		if (d[i] != pattern(stream, e->rcvd + i)) {
			if (s->errors++ < 5)
				fprintf(stderr, "side %d conn %d: byte %llu wrong\n", e->side,
					e->idx, (unsigned long long)(e->rcvd + i));
			break;
		}
	}
	e->rcvd += len;
	/* Sometimes the application is slow: the bytes wait, the window closes. */
	if (rnd(s) % 100 < 10) {
		e->held += len;
	} else {
		sm_tcp_consume(c, len + e->held, s->now);
		e->held = 0;
	}
}

/* A zero-copy view: check it lies in the frame being input, then as on_recv. */
static void
on_recv_ref(void *ctx, struct sm_tcp_conn *c, const void *data, size_t len, void *ref)
{
	const struct wire_frame *f = ref;
	const uint8_t *d = data;

	assert_true(d >= f->b && d + len <= f->b + f->len);
	on_recv(ctx, c, data, len);
}

static void
on_writable(void *ctx, struct sm_tcp_conn *c)
{
	(void)ctx;
	top_up(sm_tcp_user(c));
}

static void
on_closed(void *ctx, struct sm_tcp_conn *c, int err)
{
	struct endpoint *e = sm_tcp_user(c);

	(void)ctx;
	e->closed++;
	e->close_err = err;
	e->c = NULL;
	e->established = false;
}

static const struct sm_tcpip_ops b2b_ops = {
	.tx = wire_tx,
	.accepted = on_accepted,
	.connected = on_connected,
	.recv = on_recv,
	.recv_ref = on_recv_ref,
	.writable = on_writable,
	.closed = on_closed,
};

static uint64_t
env_bytes(uint64_t dflt)
{
	const char *v = getenv("SM_TCPIP_B2B_BYTES");

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

static bool
all_done(const struct sim *s)
{
	for (int side = 0; side < 2; side++)
		for (unsigned i = 0; i < s->nconns; i++) {
			const struct endpoint *e = &s->ep[side][i];

			if (e->rcvd != s->bytes || e->eof != 1 || e->closed != 1)
				return false;
		}
	return true;
}

static void
dump(const struct sim *s)
{
	for (int side = 0; side < 2; side++)
		for (unsigned i = 0; i < s->nconns; i++) {
			const struct endpoint *e = &s->ep[side][i];

			fprintf(stderr,
				"side %d conn %u: sent %llu rcvd %llu held %llu eof %d closed %d "
				"err %d %s\n",
				side, i, (unsigned long long)e->sent, (unsigned long long)e->rcvd,
				(unsigned long long)e->held, e->eof, e->closed, e->close_err,
				e->c ? sm_tcp_state_name(e->c) : "-");
		}
}

/* Run @nconns connections each moving @bytes both ways; returns the stacks' stats. */
static void
run_sim(struct sim *s, unsigned nconns, uint64_t bytes, struct sm_tcpip_stats out[2])
{
	struct sm_tcpip_config cfg[2];
	uint64_t deadline, tick = 0;

	s->nconns = nconns;
	s->bytes = bytes;
	s->latency = 1 * MS;
	for (int i = 0; i < 2; i++) {
		memset(&cfg[i], 0, sizeof(cfg[i]));
		cfg[i].mac[0] = 0x02;
		cfg[i].mac[5] = (uint8_t)(i + 1);
		cfg[i].ip = 0x0a000001u + (uint32_t)i;
		cfg[i].netmask = 0xffffff00u;
		cfg[i].ops = &b2b_ops;
		s->side[i].sim = s;
		s->side[i].id = i;
		cfg[i].ctx = &s->side[i];
		cfg[i].snd_buf = 256 * 1024;
		cfg[i].rcv_buf = 256 * 1024;
		cfg[i].rto_min_ns = 200 * MS;
		cfg[i].time_wait_ns = 30 * SEC;
		for (int k = 0; k < 16; k++)
			cfg[i].secret[k] = (uint8_t)(k * 31 + i);
		assert_int_equal(sm_tcpip_create(&cfg[i], &s->st[i]), 0);
		for (unsigned k = 0; k < nconns; k++) {
			s->ep[i][k].sim = s;
			s->ep[i][k].side = i;
			s->ep[i][k].idx = (int)k;
		}
	}
	assert_int_equal(sm_tcp_listen(s->st[1], SERVER_PORT), 0);
	for (unsigned k = 0; k < nconns; k++)
		assert_int_equal(sm_tcp_connect(s->st[0], 0x0a000002u, SERVER_PORT,
						(uint16_t)(CLIENT_PORT0 + k), &s->ep[0][k], s->now,
						&s->ep[0][k].c),
				 0);

	/* Simulated time; the deadline only catches a stall, it is not a timing assertion. */
	deadline = 3600 * SEC;
	while (!all_done(s) && s->errors == 0) {
		uint64_t t = UINT64_MAX;

		for (int i = 0; i < 2; i++)
			for (unsigned k = 0; k < nconns; k++)
				if (s->ep[i][k].held)
					t = tick;

		for (int i = 0; i < 2; i++) {
			uint64_t n = sm_tcpip_next_timer(s->st[i]);

			if (n < t)
				t = n;
		}
		if (s->nheap > 0 && s->heap[0]->t < t)
			t = s->heap[0]->t;
		if (t > s->now)
			s->now = t;
		if (s->now >= deadline) {
			dump(s);
			fail_msg("stalled");
		}
		while (s->nheap > 0 && s->heap[0]->t <= s->now) {
			struct wire_frame *f = heap_pop(s);

			if (f->dst == 1)
				sm_tcpip_input_ref(s->st[1], f->b, f->len, s->now, f);
			else
				sm_tcpip_input(s->st[0], f->b, f->len, s->now);
			free(f);
		}
		for (int i = 0; i < 2; i++)
			sm_tcpip_poll(s->st[i], s->now);
		if (s->now >= tick) {
			/* The slow applications get round to their held bytes every millisecond. */
			for (int i = 0; i < 2; i++)
				for (unsigned k = 0; k < nconns; k++) {
					struct endpoint *e = &s->ep[i][k];

					if (e->c != NULL && e->held) {
						sm_tcp_consume(e->c, e->held, s->now);
						e->held = 0;
					}
				}
			tick = s->now + MS;
		}
	}
	if (s->errors)
		fprintf(stderr, "b2b: %d errors at %.3f s\n", s->errors, (double)s->now / SEC);
	assert_int_equal(s->errors, 0);
	for (int i = 0; i < 2; i++)
		for (unsigned k = 0; k < nconns; k++)
			assert_int_equal(s->ep[i][k].close_err, 0);

	/* TIME_WAIT expires and nothing is left. */
	s->now += 61 * SEC;
	while (s->nheap > 0)
		free(heap_pop(s));
	for (int i = 0; i < 2; i++) {
		sm_tcpip_poll(s->st[i], s->now);
		sm_tcpip_stats(s->st[i], &out[i]);
		assert_int_equal(out[i].tcp_conns, 0);
	}
	for (int i = 0; i < 2; i++)
		sm_tcpip_destroy(s->st[i]);
	free(s->heap);
}

static void
test_b2b_clean_wire(void **state)
{
	struct sim *s = calloc(1, sizeof(*s));
	struct sm_tcpip_stats st[2];

	(void)state;
	s->rng = 1;
	run_sim(s, 2, env_bytes(B2B_DEFAULT_BYTES) / 25, st);
	/* A perfect wire: nothing is ever retransmitted. */
	assert_int_equal(st[0].tcp_retransmits + st[1].tcp_retransmits, 0);
	assert_int_equal(st[0].rx_bad_csum + st[1].rx_bad_csum, 0);
	free(s);
}

static void
test_b2b_lossy_wire(void **state)
{
	struct sim *s = calloc(1, sizeof(*s));
	struct sm_tcpip_stats st[2];
	uint64_t bytes = env_bytes(B2B_DEFAULT_BYTES);

	(void)state;
	s->rng = 42;
	s->loss = 5;
	s->dup = 5;
	s->reorder = 5;
	run_sim(s, 1, bytes, st);
	fprintf(stderr,
		"b2b: %llu bytes each way in %.1f simulated s; frames %llu, dropped %llu, "
		"duplicated %llu, reordered %llu; retransmits %llu+%llu (fast %llu+%llu, "
		"timeouts %llu+%llu), probes %llu+%llu\n",
		(unsigned long long)bytes, (double)s->now / SEC, (unsigned long long)s->frames,
		(unsigned long long)s->dropped, (unsigned long long)s->duplicated,
		(unsigned long long)s->reordered, (unsigned long long)st[0].tcp_retransmits,
		(unsigned long long)st[1].tcp_retransmits,
		(unsigned long long)st[0].tcp_fast_retransmits,
		(unsigned long long)st[1].tcp_fast_retransmits,
		(unsigned long long)st[0].tcp_timeouts, (unsigned long long)st[1].tcp_timeouts,
		(unsigned long long)st[0].tcp_window_probes,
		(unsigned long long)st[1].tcp_window_probes);
	/* The wire did its worst and the stacks repaired it. */
	assert_true(s->dropped > 0 && s->duplicated > 0 && s->reordered > 0);
	assert_true(st[0].tcp_fast_retransmits > 0 && st[1].tcp_fast_retransmits > 0);
	/* Stack 1 took most bytes uncopied, stack 0 none. */
	assert_true(st[1].tcp_rx_zerocopy_bytes > bytes / 2);
	assert_int_equal(st[0].tcp_rx_zerocopy_bytes, 0);
	free(s);
}

static void
test_b2b_many_conns_lossy(void **state)
{
	struct sim *s = calloc(1, sizeof(*s));
	struct sm_tcpip_stats st[2];

	(void)state;
	s->rng = 7;
	s->loss = 5;
	s->dup = 5;
	s->reorder = 5;
	run_sim(s, MAX_CONNS, env_bytes(B2B_DEFAULT_BYTES) / 50, st);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_b2b_clean_wire),
		cmocka_unit_test(test_b2b_lossy_wire),
		cmocka_unit_test(test_b2b_many_conns_lossy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
