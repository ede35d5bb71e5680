/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Token ring, replica placement and token-aware query plans. The replica
 * walk mirrors the java driver 3.x (ReplicationStrategy.SimpleStrategy and
 * NetworkTopologyStrategy.computeTokenToReplicaMap), so a plan names the
 * hosts the java driver would name for the same ring.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sm_core.h"
#include "sm_stress_ring.h"
#include "sm_token.h"

/* Replicas a plan can shuffle at once; more is no real replication factor. */
#define PLAN_MAX_REPLICAS 64

static int __attribute__((format(printf, 3, 4)))
ring_fail(struct sm_ring *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return err;
}

void
sm_ring_init(struct sm_ring *r)
{
	memset(r, 0, sizeof(*r));
}

void
sm_ring_free(struct sm_ring *r)
{
	sm_free(r->hosts);
	sm_free(r->tokens);
	sm_free(r->reps);
	sm_free(r->nreps);
	sm_free(r->local_hosts);
	sm_ring_init(r);
}

static int
copy_name(struct sm_ring *r, char *dst, const char *src, size_t len, const char *what)
{
	if (len >= SM_RING_NAME_MAX)
		return ring_fail(r, -ENAMETOOLONG, "%s is %zu bytes long: at most %d are supported",
				 what, len, SM_RING_NAME_MAX - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

static int
grow(void **p, unsigned *cap, unsigned need, size_t size)
{
	unsigned ncap = *cap ? *cap : 8;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	np = sm_realloc(*p, (size_t)ncap * size);
	if (np == NULL)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

/* Add a host from names given with their lengths. */
static int
add_host(struct sm_ring *r, const char *addr, size_t alen, const char *dc, size_t dlen,
	 const char *rack, size_t rlen, const int64_t *tokens, unsigned n)
{
	struct sm_ring_host h;
	unsigned i;
	int ret;

	if (r->built)
		return ring_fail(r, -EBUSY, "the ring is already built: add hosts before building");
	memset(&h, 0, sizeof(h));
	if ((ret = copy_name(r, h.addr, addr, alen, "a host address")) < 0 ||
	    (ret = copy_name(r, h.dc, dc, dlen, "a data center name")) < 0 ||
	    (ret = copy_name(r, h.rack, rack, rlen, "a rack name")) < 0)
		return ret;
	for (i = 0; i < r->nhosts; i++)
		if (strcmp(r->hosts[i].addr, h.addr) == 0)
			return ring_fail(r, -EEXIST, "host %s is listed twice", h.addr);
	if (r->nhosts >= INT_MAX || n > UINT_MAX - r->ntokens)
		return ring_fail(r, -ENOMEM, "too many hosts or tokens");
	if (grow((void **)&r->hosts, &r->hosts_cap, r->nhosts + 1, sizeof(*r->hosts)) < 0 ||
	    grow((void **)&r->tokens, &r->tokens_cap, r->ntokens + n, sizeof(*r->tokens)) < 0)
		return ring_fail(r, -ENOMEM, "out of memory adding host %s", h.addr);
	for (i = 0; i < n; i++) {
		r->tokens[r->ntokens + i].token = tokens[i];
		r->tokens[r->ntokens + i].host = r->nhosts;
	}
	r->ntokens += n;
	r->hosts[r->nhosts] = h;
	return (int)r->nhosts++;
}

int
sm_ring_add_host(struct sm_ring *r, const char *addr, const char *dc, const char *rack,
		 const int64_t *tokens, unsigned n)
{
	dc = dc ? dc : "";
	rack = rack ? rack : "";
	return add_host(r, addr, strlen(addr), dc, strlen(dc), rack, strlen(rack), tokens, n);
}

/* A token in decimal: digits with an optional '-', nothing else, in int64 range. */
static bool
parse_token(const char *s, size_t len, int64_t *out)
{
	char buf[24], *end;
	long long v;

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
		return false;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno != 0 || *end != '\0' || end == buf)
		return false;
	*out = (int64_t)v;
	return true;
}

int
sm_ring_add_host_str(struct sm_ring *r, const char *addr, const char *dc, const char *rack,
		     const char *const *tokens, unsigned n)
{
	int64_t *t = NULL;
	unsigned i;
	int ret;

	if (n > 0) {
		t = sm_malloc((size_t)n * sizeof(*t));
		if (t == NULL)
			return ring_fail(r, -ENOMEM, "out of memory adding host %s", addr);
	}
	for (i = 0; i < n; i++) {
		if (!parse_token(tokens[i], strlen(tokens[i]), &t[i])) {
			ret = ring_fail(r, -EINVAL,
					"host %s: token '%.40s' is not a signed 64-bit decimal "
					"(is the partitioner Murmur3Partitioner?)",
					addr, tokens[i]);
			goto out;
		}
	}
	ret = sm_ring_add_host(r, addr, dc, rack, t, n);
out:
	sm_free(t);
	return ret;
}

int
sm_ring_add_host_cells(struct sm_ring *r, const uint8_t *inet, size_t inet_len, const uint8_t *dc,
		       size_t dc_len, const uint8_t *rack, size_t rack_len, const uint8_t *tokens,
		       size_t tokens_len)
{
	char addr[INET6_ADDRSTRLEN];
	int64_t *t = NULL;
	size_t off = 4;
	uint32_t n = 0, i, len;
	int ret;

	if (inet == NULL || (inet_len != 4 && inet_len != 16) ||
	    inet_ntop(inet_len == 4 ? AF_INET : AF_INET6, inet, addr, sizeof(addr)) == NULL)
		return ring_fail(r, -EINVAL, "a host address cell of %zu bytes is not an inet",
				 inet == NULL ? 0 : inet_len);
	if (tokens != NULL) {
		if (tokens_len < 4 || (n = sm_get_be32(tokens)) > (tokens_len - 4) / 4)
			return ring_fail(r, -EINVAL, "host %s: the tokens cell is not a set<text>",
					 addr);
		if (n > 0 && (t = sm_malloc((size_t)n * sizeof(*t))) == NULL)
			return ring_fail(r, -ENOMEM, "out of memory adding host %s", addr);
	}
	for (i = 0; i < n; i++) {
		if (tokens_len - off < 4 || (len = sm_get_be32(tokens + off)) > tokens_len - off - 4 ||
		    !parse_token((const char *)tokens + off + 4, len, &t[i])) {
			ret = ring_fail(r, -EINVAL,
					"host %s: token %u of the tokens cell is not a signed "
					"64-bit decimal (is the partitioner Murmur3Partitioner?)",
					addr, i);
			goto out;
		}
		off += 4 + len;
	}
	ret = add_host(r, addr, strlen(addr), dc ? (const char *)dc : "", dc ? dc_len : 0,
		       rack ? (const char *)rack : "", rack ? rack_len : 0, t, n);
out:
	sm_free(t);
	return ret;
}

static int
token_cmp(const void *a, const void *b)
{
	int64_t x = ((const struct sm_ring_token *)a)->token;
	int64_t y = ((const struct sm_ring_token *)b)->token;

	return x < y ? -1 : x > y;
}

/* Build-time state of a NetworkTopologyStrategy walk. */
struct nts {
	unsigned ndc;
	unsigned *host_dc;   /* host -> DC id (UINT_MAX: no tokens) */
	unsigned *host_rack; /* host -> rack id, unique across DCs */
	unsigned nracks;
	unsigned *dc_racks; /* DC -> number of racks */
	unsigned *dc_want;  /* DC -> replicas to take: min(rf, hosts with tokens) */
	/* per walk */
	unsigned *dc_have, *dc_seen_racks;
	bool *rack_seen;
	unsigned *skipped; /* hosts skipped for a repeated rack, in order met */
	unsigned nskipped;
};

static unsigned
dc_rf(const struct sm_ring_repl *repl, const char *dc)
{
	unsigned i, any = 0;

	for (i = 0; i < repl->ndcs; i++) {
		if (repl->dcs[i].dc == NULL)
			any = repl->dcs[i].rf;
		else if (strcmp(repl->dcs[i].dc, dc) == 0)
			return repl->dcs[i].rf;
	}
	return any;
}

static void
nts_free(struct nts *s)
{
	sm_free(s->host_dc);
	sm_free(s->host_rack);
	sm_free(s->dc_racks);
	sm_free(s->dc_want);
	sm_free(s->dc_have);
	sm_free(s->dc_seen_racks);
	sm_free(s->rack_seen);
	sm_free(s->skipped);
}

/* Number DCs and racks of the hosts that own tokens; the stride is the sum of dc_want. */
static int
nts_init(struct sm_ring *r, const struct sm_ring_repl *repl, const bool *in_ring, struct nts *s)
{
	unsigned n = r->nhosts, h, g, hosts_in_dc;

	memset(s, 0, sizeof(*s));
	s->host_dc = sm_calloc(n, sizeof(unsigned));
	s->host_rack = sm_calloc(n, sizeof(unsigned));
	s->dc_racks = sm_calloc(n, sizeof(unsigned));
	s->dc_want = sm_calloc(n, sizeof(unsigned));
	s->dc_have = sm_calloc(n, sizeof(unsigned));
	s->dc_seen_racks = sm_calloc(n, sizeof(unsigned));
	s->rack_seen = sm_calloc(n, sizeof(bool));
	s->skipped = sm_calloc(n, sizeof(unsigned));
	if (s->host_dc == NULL || s->host_rack == NULL || s->dc_racks == NULL ||
	    s->dc_want == NULL || s->dc_have == NULL || s->dc_seen_racks == NULL ||
	    s->rack_seen == NULL || s->skipped == NULL)
		return -ENOMEM;
	for (h = 0; h < n; h++) {
		s->host_dc[h] = UINT_MAX;
		if (!in_ring[h])
			continue;
		/* The DC and rack of the first earlier host with the same names. */
		for (g = 0; g < h; g++)
			if (in_ring[g] && strcmp(r->hosts[g].dc, r->hosts[h].dc) == 0)
				break;
		if (g == h) {
			s->host_dc[h] = s->ndc++;
			hosts_in_dc = 0;
			for (g = h; g < n; g++)
				hosts_in_dc +=
					in_ring[g] && strcmp(r->hosts[g].dc, r->hosts[h].dc) == 0;
			s->dc_want[s->host_dc[h]] =
				SM_MIN(dc_rf(repl, r->hosts[h].dc), hosts_in_dc);
		} else {
			s->host_dc[h] = s->host_dc[g];
		}
		for (g = 0; g < h; g++)
			if (in_ring[g] && s->host_dc[g] == s->host_dc[h] &&
			    strcmp(r->hosts[g].rack, r->hosts[h].rack) == 0)
				break;
		if (g == h) {
			s->host_rack[h] = s->nracks++;
			s->dc_racks[s->host_dc[h]]++;
		} else {
			s->host_rack[h] = s->host_rack[g];
		}
	}
	r->stride = 0;
	for (g = 0; g < s->ndc; g++)
		r->stride += s->dc_want[g];
	return 0;
}

static bool
contains(const unsigned *v, unsigned n, unsigned x)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* The replicas of ring position @pos into @out (r->stride slots); returns how many. */
static unsigned
nts_walk(const struct sm_ring *r, struct nts *s, unsigned pos, unsigned *out)
{
	unsigned j, k, h, dc, left = r->stride, n = 0;

	memset(s->dc_have, 0, s->ndc * sizeof(unsigned));
	memset(s->dc_seen_racks, 0, s->ndc * sizeof(unsigned));
	memset(s->rack_seen, 0, s->nracks * sizeof(bool));
	s->nskipped = 0;
	for (j = 0; j < r->ntokens && left > 0; j++) {
		h = r->tokens[(pos + j) % r->ntokens].host;
		dc = s->host_dc[h];
		if (s->dc_have[dc] >= s->dc_want[dc] || contains(out, n, h))
			continue;
		if (s->dc_seen_racks[dc] == s->dc_racks[dc]) {
			/* Every rack of the DC seen: any host will do. */
			out[n++] = h;
			s->dc_have[dc]++;
			left--;
			continue;
		}
		if (s->rack_seen[s->host_rack[h]]) {
			if (!contains(s->skipped, s->nskipped, h))
				s->skipped[s->nskipped++] = h;
			continue;
		}
		out[n++] = h;
		s->dc_have[dc]++;
		left--;
		s->rack_seen[s->host_rack[h]] = true;
		if (++s->dc_seen_racks[dc] < s->dc_racks[dc])
			continue;
		/* The last new rack: now the skipped hosts, in the order met. */
		for (k = 0; k < s->nskipped && s->dc_have[dc] < s->dc_want[dc]; k++) {
			if (s->host_dc[s->skipped[k]] != dc || contains(out, n, s->skipped[k]))
				continue;
			out[n++] = s->skipped[k];
			s->dc_have[dc]++;
			left--;
		}
	}
	return n;
}

static unsigned
simple_walk(const struct sm_ring *r, unsigned pos, unsigned *out)
{
	unsigned j, h, n = 0;

	for (j = 0; j < r->ntokens && n < r->stride; j++) {
		h = r->tokens[(pos + j) % r->ntokens].host;
		if (!contains(out, n, h))
			out[n++] = h;
	}
	return n;
}

int
sm_ring_build(struct sm_ring *r, const struct sm_ring_repl *repl, const char *local_dc)
{
	bool *in_ring = NULL;
	unsigned i, distinct = 0;
	struct nts s;
	int ret;

	memset(&s, 0, sizeof(s));
	if (r->built)
		return ring_fail(r, -EBUSY, "the ring is already built");
	if (r->ntokens == 0)
		return ring_fail(r, -EINVAL,
				 "no host owns a token: system.local and system.peers gave no "
				 "tokens (token-aware routing needs them)");
	if (repl->strategy == SM_RING_SIMPLE && repl->rf == 0)
		return ring_fail(r, -EINVAL,
				 "SimpleStrategy needs a replication factor of 1 or more");
	if (repl->strategy != SM_RING_SIMPLE && repl->strategy != SM_RING_NETWORK_TOPOLOGY)
		return ring_fail(r, -EINVAL, "unknown replication strategy %d", repl->strategy);
	qsort(r->tokens, r->ntokens, sizeof(*r->tokens), token_cmp);
	for (i = 1; i < r->ntokens; i++)
		if (r->tokens[i].token == r->tokens[i - 1].token)
			return ring_fail(r, -EINVAL, "hosts %s and %s both own token %lld",
					 r->hosts[r->tokens[i - 1].host].addr,
					 r->hosts[r->tokens[i].host].addr,
					 (long long)r->tokens[i].token);
	in_ring = sm_calloc(r->nhosts, sizeof(bool));
	r->local_hosts = sm_calloc(r->nhosts, sizeof(unsigned));
	if (in_ring == NULL || r->local_hosts == NULL) {
		ret = ring_fail(r, -ENOMEM, "out of memory building the ring");
		goto fail;
	}
	r->nlocal = 0;
	for (i = 0; i < r->nhosts; i++) {
		r->hosts[i].local = local_dc == NULL || strcmp(r->hosts[i].dc, local_dc) == 0;
		if (r->hosts[i].local)
			r->local_hosts[r->nlocal++] = i;
	}
	if (r->nlocal == 0) {
		ret = ring_fail(r, -EINVAL,
				"no host is in the local data center '%s': check the data center "
				"name (system.local.data_center)",
				local_dc);
		goto fail;
	}
	for (i = 0; i < r->ntokens; i++) {
		distinct += !in_ring[r->tokens[i].host];
		in_ring[r->tokens[i].host] = true;
	}
	if (repl->strategy == SM_RING_SIMPLE) {
		r->stride = SM_MIN(repl->rf, distinct);
	} else if (nts_init(r, repl, in_ring, &s) < 0) {
		ret = ring_fail(r, -ENOMEM, "out of memory building the ring");
		goto fail;
	}
	r->reps = sm_calloc((size_t)r->ntokens * SM_MAX(r->stride, 1u), sizeof(unsigned));
	r->nreps = sm_calloc(r->ntokens, sizeof(uint16_t));
	if (r->reps == NULL || r->nreps == NULL) {
		ret = ring_fail(r, -ENOMEM, "out of memory building the ring");
		goto fail;
	}
	for (i = 0; i < r->ntokens; i++) {
		unsigned *out = r->reps + (size_t)i * r->stride;

		r->nreps[i] =
			(uint16_t)(repl->strategy == SM_RING_SIMPLE ? simple_walk(r, i, out)
								    : nts_walk(r, &s, i, out));
	}
	r->built = true;
	nts_free(&s);
	sm_free(in_ring);
	return 0;
fail:
	nts_free(&s);
	sm_free(in_ring);
	sm_free(r->local_hosts);
	sm_free(r->reps);
	sm_free(r->nreps);
	r->local_hosts = NULL;
	r->reps = NULL;
	r->nreps = NULL;
	r->nlocal = 0;
	return ret;
}

/* The ring position that owns @token: the first token >= it, wrapping. */
static unsigned
position_of(const struct sm_ring *r, int64_t token)
{
	unsigned lo = 0, hi = r->ntokens;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (r->tokens[mid].token < token)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == r->ntokens ? 0 : lo;
}

unsigned
sm_ring_replicas(const struct sm_ring *r, int64_t token, unsigned *out, unsigned max)
{
	unsigned pos, n;

	if (!r->built)
		return 0;
	pos = position_of(r, token);
	n = r->nreps[pos];
	memcpy(out, r->reps + (size_t)pos * r->stride, SM_MIN(n, max) * sizeof(unsigned));
	return n;
}

uint64_t
sm_ring_rand(uint64_t *state)
{
	return sm_splitmix64(state);
}

unsigned
sm_ring_rand_below(uint64_t *state, unsigned n)
{
	/* Lemire's multiply-shift: the bias is n / 2^64, nothing for small n. */
	return (unsigned)(((unsigned __int128)sm_ring_rand(state) * n) >> 64);
}

static inline bool
host_usable(const struct sm_ring *r, const bool *down, unsigned h)
{
	return r->hosts[h].local && (down == NULL || !down[h]);
}

unsigned
sm_ring_plan(const struct sm_ring *r, int64_t token, enum sm_ring_ordering ord, uint64_t *rng,
	     uint64_t *rr, const bool *down, unsigned *out, unsigned max)
{
	unsigned reps[PLAN_MAX_REPLICAS], nrep = 0, n = 0, i, k, h, rot, pos;
	const unsigned *all;

	if (!r->built || r->nlocal == 0 || max == 0)
		return 0;
	pos = position_of(r, token);
	all = r->reps + (size_t)pos * r->stride;
	for (i = 0; i < r->nreps[pos] && nrep < PLAN_MAX_REPLICAS; i++)
		if (host_usable(r, down, all[i]))
			reps[nrep++] = all[i];
	rot = (unsigned)(*rr % r->nlocal);
	(*rr)++;
	if (ord == SM_RING_NEUTRAL) {
		/* The child's order, its replicas first. */
		for (k = 0; k < r->nlocal && n < max; k++) {
			h = r->local_hosts[(rot + k) % r->nlocal];
			if ((down == NULL || !down[h]) && contains(reps, nrep, h))
				out[n++] = h;
		}
		for (k = 0; k < r->nlocal && n < max; k++) {
			h = r->local_hosts[(rot + k) % r->nlocal];
			if ((down == NULL || !down[h]) && !contains(reps, nrep, h))
				out[n++] = h;
		}
		return n;
	}
	if (ord == SM_RING_RANDOM) {
		for (i = nrep; i > 1; i--) {
			unsigned j = sm_ring_rand_below(rng, i), t = reps[i - 1];

			reps[i - 1] = reps[j];
			reps[j] = t;
		}
	}
	for (i = 0; i < nrep && n < max; i++)
		out[n++] = reps[i];
	for (k = 0; k < r->nlocal && n < max; k++) {
		h = r->local_hosts[(rot + k) % r->nlocal];
		if ((down == NULL || !down[h]) && !contains(reps, nrep, h))
			out[n++] = h;
	}
	return n;
}

int64_t
sm_ring_token_of(const void *key, size_t len)
{
	return sm_murmur3_token(key, len);
}

unsigned
sm_ring_shard_of(int64_t token, unsigned nr_shards, unsigned ignore_msb)
{
	return sm_shard_of_token(token, nr_shards ? nr_shards : 1, ignore_msb);
}
