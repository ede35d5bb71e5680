/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver registry and the driver-independent helpers of the transport
 * interface: send buffers, copies, addresses.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sm_core.h"
#include "sm_net.h"

#define SM_NET_MAX_DRIVERS 4
#define SM_SENDBUF_POOLED 16384 /* send buffers up to this size come from a pool */

static const struct sm_net_driver *sm_drivers[SM_NET_MAX_DRIVERS];
static unsigned sm_ndrivers;
static const struct sm_net_driver *sm_current;

/* Per-shard pool of small send buffers: a reply costs no allocation. */
static __thread struct sm_pool sendbuf_pool;
static __thread bool sendbuf_pool_ready;

int
sm_net_register(const struct sm_net_driver *d)
{
	if (sm_net_find(d->name) != NULL)
		return -EEXIST;
	if (sm_ndrivers == SM_NET_MAX_DRIVERS)
		return -ENOSPC;
	sm_drivers[sm_ndrivers++] = d;
	return 0;
}

const struct sm_net_driver *
sm_net_find(const char *name)
{
	unsigned i;

	for (i = 0; i < sm_ndrivers; i++)
		if (strcmp(sm_drivers[i]->name, name) == 0)
			return sm_drivers[i];
	return NULL;
}

int
sm_net_use(const char *name)
{
	const struct sm_net_driver *d = sm_net_find(name);

	if (d == NULL)
		return -ENOENT;
	sm_current = d;
	return 0;
}

const struct sm_net_driver *
sm_net_driver(void)
{
	return sm_current;
}

int
sm_net_shard_init(const struct sm_net_config *cfg)
{
	static const struct sm_net_config defaults;
	int ret;

	if (sm_current == NULL)
		return -ENOENT;
	if (!sendbuf_pool_ready) {
		ret = sm_pool_init(&sendbuf_pool, "sendbuf",
				   sizeof(struct sm_sendbuf) + SM_SENDBUF_POOLED, 0);
		if (ret < 0)
			return ret;
		sendbuf_pool_ready = true;
	}
	return sm_current->shard_init(cfg != NULL ? cfg : &defaults);
}

void
sm_net_shard_fini(void)
{
	if (sm_current != NULL)
		sm_current->shard_fini();
	if (sendbuf_pool_ready) {
		sm_pool_destroy(&sendbuf_pool);
		sendbuf_pool_ready = false;
	}
}

int
sm_net_listen(const struct sm_listen_opts *o, struct sm_listener **l)
{
	if (sm_current == NULL)
		return -ENOENT;
	return sm_current->listen(o, l);
}

void
sm_net_listener_close(struct sm_listener *l)
{
	sm_current->listener_close(l);
}

int
sm_net_connect(const struct sm_connect_opts *o, struct sm_conn **c)
{
	if (sm_current == NULL)
		return -ENOENT;
	return sm_current->connect(o, c);
}

static void
sendbuf_release_pooled(struct sm_bufseg *seg)
{
	sm_pool_put(&sendbuf_pool, sm_container_of(seg, struct sm_sendbuf, seg));
}

static void
sendbuf_release_heap(struct sm_bufseg *seg)
{
	sm_free(sm_container_of(seg, struct sm_sendbuf, seg));
}

struct sm_sendbuf *
sm_sendbuf_new(size_t cap)
{
	struct sm_sendbuf *b;

	if (cap <= SM_SENDBUF_POOLED && sendbuf_pool_ready) {
		b = sm_pool_get(&sendbuf_pool);
		if (b == NULL)
			return NULL;
		b->seg.release = sendbuf_release_pooled;
		b->cap = SM_SENDBUF_POOLED;
	} else {
		b = sm_malloc(sizeof(*b) + cap);
		if (b == NULL)
			return NULL;
		b->seg.release = sendbuf_release_heap;
		b->cap = cap;
	}
	b->seg.refcnt = 1;
	b->len = 0;
	return b;
}

int
sm_conn_send_copy(struct sm_conn *c, const void *data, size_t len)
{
	const char *p = data;
	int ret = 0;

	while (len > 0 && ret == 0) {
		size_t chunk = SM_MIN(len, (size_t)SM_SENDBUF_POOLED);
		struct sm_sendbuf *b = sm_sendbuf_new(chunk);
		struct sm_iov v;

		if (b == NULL)
			return -ENOMEM;
		memcpy(b->data, p, chunk);
		b->len = chunk;
		v.seg = &b->seg;
		v.base = b->data;
		v.len = chunk;
		ret = sm_conn_send(c, &v, 1);
		sm_bufseg_put(&b->seg);
		p += chunk;
		len -= chunk;
	}
	return ret;
}

const char *
sm_net_addr_str(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(in->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(in6->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
	return buf;
}

int
sm_net_addr_parse(const char *addr, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (addr == NULL || strcmp(addr, "localhost") == 0)
		addr = addr == NULL ? "0.0.0.0" : "127.0.0.1";
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		return sizeof(*in);
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return sizeof(*in6);
	}
	return -EINVAL;
}

/* snprintf into buf[pos..len), returning the new position even past @len. */
static size_t
out_printf(char *buf, size_t len, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t
out_printf(char *buf, size_t len, size_t pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(pos < len ? buf + pos : NULL, pos < len ? len - pos : 0, fmt, ap);
	va_end(ap);
	return n > 0 ? pos + (size_t)n : pos;
}

unsigned
sm_net_counters(const struct sm_net_counter **desc)
{
	*desc = NULL;
	if (sm_current == NULL || sm_current->counters == NULL)
		return 0;
	return sm_current->counters(desc);
}

void
sm_net_counters_read(unsigned shard, uint64_t *vals)
{
	sm_current->counters_read(shard, vals);
}

size_t
sm_net_format_prometheus(char *buf, size_t len, unsigned nshards)
{
	const struct sm_net_counter *desc;
	uint64_t *vals;
	size_t pos = 0;
	unsigned n, i, k;

	if (buf != NULL && len > 0)
		buf[0] = '\0';
	n = sm_net_counters(&desc);
	if (n == 0 || nshards == 0)
		return 0;
	vals = sm_calloc((size_t)n * nshards, sizeof(*vals));
	if (vals == NULL)
		return 0;
	for (i = 0; i < nshards; i++)
		sm_net_counters_read(i, vals + (size_t)i * n);
	for (k = 0; k < n; k++) {
		pos = out_printf(buf, len, pos,
				 "# HELP shardmark_net_%s %s\n# TYPE shardmark_net_%s counter\n",
				 desc[k].name, desc[k].help, desc[k].name);
		for (i = 0; i < nshards; i++)
			pos = out_printf(
				buf, len, pos,
				"shardmark_net_%s{shard=\"%u\",driver=\"%s\"} %" PRIu64 "\n",
				desc[k].name, i, sm_current->name, vals[(size_t)i * n + k]);
	}
	sm_free(vals);
	return pos;
}
