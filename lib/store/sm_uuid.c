/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "sm_byteorder.h"
#include "sm_random.h"
#include "sm_uuid.h"

#define TICKS_PER_MICRO 10

/* Microseconds of the last tick, and of the first (1582-10-15), in Unix time. */
#define MICROS_MAX ((int64_t)((SM_UUID_TICKS_MAX - SM_UUID_UNIX_EPOCH_TICKS) / TICKS_PER_MICRO))
#define MICROS_MIN (-(int64_t)(SM_UUID_UNIX_EPOCH_TICKS / TICKS_PER_MICRO))

static pthread_once_t proc_once = PTHREAD_ONCE_INIT;
static uint8_t proc_node[4];
static uint16_t proc_clock_seq;

/*
 * Last resort when getrandom and /dev/urandom both fail (seccomp, no /dev):
 * mix the clocks, the pid and a counter. Unique enough per process for node
 * ids; v4 UUIDs from here are not unpredictable, which nothing relies on.
 */
static void
fallback_random(uint8_t *p, size_t len)
{
	static uint64_t counter;
	struct timespec ts_real, ts_mono;
	uint64_t x, z;
	int i;

	clock_gettime(CLOCK_REALTIME, &ts_real);
	clock_gettime(CLOCK_MONOTONIC, &ts_mono);
	x = (uint64_t)ts_real.tv_nsec ^ ((uint64_t)ts_real.tv_sec << 30) ^
	    ((uint64_t)ts_mono.tv_nsec << 13) ^ ((uint64_t)getpid() << 40) ^
	    (uint64_t)(uintptr_t)&counter;
	x ^= __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull;
	while (len > 0) {
		z = sm_splitmix64(&x);
		for (i = 0; i < 8 && len > 0; i++, len--)
			*p++ = (uint8_t)(z >> (8 * i));
	}
}

static void
fill_random(void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t r;
	int fd;

	while (len > 0) {
		r = getrandom(p, len, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		p += r;
		len -= (size_t)r;
	}
	if (len == 0)
		return;

	/* Kernels before 3.17 lack getrandom; /dev/urandom says the same. */
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (len > 0) {
			r = read(fd, p, len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			p += r;
			len -= (size_t)r;
		}
		close(fd);
	}
	if (len > 0)
		fallback_random(p, len);
}

static void
proc_random_init(void)
{
	uint8_t r[6];

	fill_random(r, sizeof(r));
	memcpy(proc_node, r, sizeof(proc_node));
	proc_node[0] |= 0x01; /* RFC 4122 §4.5: multicast bit marks a non-MAC node id */
	proc_clock_seq = (uint16_t)(((unsigned)r[4] << 8 | r[5]) & 0x3fff);
}

void
sm_uuid_gen_init(struct sm_uuid_gen *g, unsigned shard)
{
	pthread_once(&proc_once, proc_random_init);
	memset(g, 0, sizeof(*g));
	memcpy(g->node, proc_node, sizeof(proc_node));
	/* Bits above 16 only matter past SM_MAX_SHARDS; fold them in anyway. */
	g->node[3] ^= (uint8_t)(shard >> 16);
	g->node[4] = (uint8_t)(shard >> 8);
	g->node[5] = (uint8_t)shard;
	g->clock_seq = proc_clock_seq;
}

static uint64_t
now_ticks(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	/* A clock set before 1970 would need a negative tv_sec; clamp, the generator bumps. */
	if (ts.tv_sec < 0)
		return SM_UUID_UNIX_EPOCH_TICKS;
	return (uint64_t)ts.tv_sec * 10000000ull + (uint64_t)ts.tv_nsec / 100 +
	       SM_UUID_UNIX_EPOCH_TICKS;
}

static void
make_v1(const struct sm_uuid_gen *g, uint64_t ticks, struct sm_uuid *out)
{
	uint32_t time_low = (uint32_t)ticks;
	uint16_t time_mid = (uint16_t)(ticks >> 32);
	uint16_t time_hi = (uint16_t)((ticks >> 48) & 0x0fff);

	out->b[0] = (uint8_t)(time_low >> 24);
	out->b[1] = (uint8_t)(time_low >> 16);
	out->b[2] = (uint8_t)(time_low >> 8);
	out->b[3] = (uint8_t)time_low;
	out->b[4] = (uint8_t)(time_mid >> 8);
	out->b[5] = (uint8_t)time_mid;
	out->b[6] = (uint8_t)(0x10 | (time_hi >> 8));
	out->b[7] = (uint8_t)time_hi;
	out->b[8] = (uint8_t)(0x80 | ((g->clock_seq >> 8) & 0x3f));
	out->b[9] = (uint8_t)g->clock_seq;
	memcpy(&out->b[10], g->node, sizeof(g->node));
}

/* The next timestamp: at least @floor, after the last one, capped at 60 bits. */
static uint64_t
next_ticks(struct sm_uuid_gen *g, uint64_t floor)
{
	uint64_t t = now_ticks();

	if (t < floor)
		t = floor;
	if (t <= g->last_ticks)
		t = g->last_ticks + 1;
	if (t > SM_UUID_TICKS_MAX)
		t = SM_UUID_TICKS_MAX;
	g->last_ticks = t;
	return t;
}

void
sm_uuid_gen_next(struct sm_uuid_gen *g, struct sm_uuid *out)
{
	make_v1(g, next_ticks(g, 0), out);
}

void
sm_uuid_gen_next_after(struct sm_uuid_gen *g, int64_t min_micros, struct sm_uuid *out)
{
	uint64_t floor;

	/* The first tick of microsecond min_micros + 1, bounds checked to avoid overflow. */
	if (min_micros >= MICROS_MAX)
		floor = SM_UUID_TICKS_MAX;
	else if (min_micros < MICROS_MIN)
		floor = 0;
	else
		floor = (uint64_t)(min_micros + 1 - MICROS_MIN) * TICKS_PER_MICRO;
	make_v1(g, next_ticks(g, floor), out);
}

uint64_t
sm_uuid_ticks(const struct sm_uuid *u)
{
	const uint8_t *b = u->b;

	return ((uint64_t)(b[6] & 0x0f) << 56) | ((uint64_t)b[7] << 48) | ((uint64_t)b[4] << 40) |
	       ((uint64_t)b[5] << 32) | ((uint64_t)b[0] << 24) | ((uint64_t)b[1] << 16) |
	       ((uint64_t)b[2] << 8) | (uint64_t)b[3];
}

int64_t
sm_uuid_micros(const struct sm_uuid *u)
{
	/* The epoch offset is a whole number of microseconds, so this is a floor. */
	return (int64_t)(sm_uuid_ticks(u) / TICKS_PER_MICRO) + MICROS_MIN;
}

int
sm_timeuuid_cmp(const struct sm_uuid *a, const struct sm_uuid *b)
{
	uint64_t ma = sm_get_be64(a->b), mb = sm_get_be64(b->b);
	uint64_t la = sm_get_be64(a->b + 8), lb = sm_get_be64(b->b + 8);
	int64_t ta, tb;

	/*
	 * Cassandra's reorderTimestampBytes: time_hi_and_version, time_mid,
	 * time_low, compared as a signed long (the version nibble is on top).
	 */
	ta = (int64_t)((ma << 48) | ((ma << 16) & 0xffff00000000ull) | (ma >> 32));
	tb = (int64_t)((mb << 48) | ((mb << 16) & 0xffff00000000ull) | (mb >> 32));
	if (ta != tb)
		return ta < tb ? -1 : 1;

	/* Signed bytes compared lexicographically == flipped sign bits compared unsigned. */
	la ^= 0x8080808080808080ull;
	lb ^= 0x8080808080808080ull;
	if (la != lb)
		return la < lb ? -1 : 1;
	return 0;
}

void
sm_uuid_random(struct sm_uuid *out)
{
	fill_random(out->b, sizeof(out->b));
	out->b[6] = (uint8_t)((out->b[6] & 0x0f) | 0x40);
	out->b[8] = (uint8_t)((out->b[8] & 0x3f) | 0x80);
}

int
sm_uuid_from_md5(const uint8_t md5[16], unsigned version, struct sm_uuid *out)
{
	if (version < 1 || version > 15)
		return -EINVAL;
	memcpy(out->b, md5, sizeof(out->b));
	out->b[6] = (uint8_t)((out->b[6] & 0x0f) | (version << 4));
	out->b[8] = (uint8_t)((out->b[8] & 0x3f) | 0x80);
	return 0;
}

size_t
sm_uuid_format(const struct sm_uuid *u, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[SM_UUID_STRLEN + 1];
	size_t i, o = 0;

	for (i = 0; i < sizeof(u->b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			tmp[o++] = '-';
		tmp[o++] = hex[u->b[i] >> 4];
		tmp[o++] = hex[u->b[i] & 0x0f];
	}
	tmp[o] = '\0';
	if (len > 0) {
		size_t n = len - 1 < SM_UUID_STRLEN ? len - 1 : SM_UUID_STRLEN;

		memcpy(buf, tmp, n);
		buf[n] = '\0';
	}
	return SM_UUID_STRLEN;
}

static int
hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
sm_uuid_parse(const char *s, struct sm_uuid *out)
{
	struct sm_uuid u;
	size_t i, o = 0;
	int hi, lo;

	for (i = 0; i < SM_UUID_STRLEN; i += 2) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -EINVAL;
			i++;
		}
		/* hex_val('\0') fails, so a short string stops here, before reading past it. */
		hi = hex_val(s[i]);
		if (hi < 0)
			return -EINVAL;
		lo = hex_val(s[i + 1]);
		if (lo < 0)
			return -EINVAL;
		u.b[o++] = (uint8_t)(hi << 4 | lo);
	}
	if (s[SM_UUID_STRLEN] != '\0')
		return -EINVAL;
	*out = u;
	return 0;
}
