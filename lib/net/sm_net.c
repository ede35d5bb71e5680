/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver registry and the driver-independent helpers of the transport
 * interface: send buffers, copies, addresses.
 */

#include <arpa/inet.h>
#include <netdb.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sm_core.h"
#include "sm_net.h"
#include "sm_net_driver.h"

#define SM_NET_MAX_DRIVERS 4
#define SM_SENDBUF_POOLED 16384 /* send buffers up to this size are cached */
/*
 * Free pooled send buffers a shard keeps (4 MiB): a reply costs no
 * allocation in steady state, and what a burst took beyond this goes back
 * to the allocator when the burst ends instead of staying in a pool forever.
 */
#define SM_SENDBUF_CACHE_MAX 256u

static const struct sm_net_driver *sm_drivers[SM_NET_MAX_DRIVERS];
static unsigned sm_ndrivers;
static const struct sm_net_driver *sm_current;

/* Per-shard cache of free pooled send buffers, linked through seg.release's slot. */
struct sendbuf_cache {
	struct sm_sendbuf *head;
	unsigned n;
	bool ready;
	size_t max_unsent; /* the shard's sm_net_config.max_unsent_bytes */
};
static __thread struct sendbuf_cache sbc;

/* The free list is linked through the buffers' first data bytes. */
static inline struct sm_sendbuf **
sendbuf_next(struct sm_sendbuf *b)
{
	return (struct sm_sendbuf **)(void *)b->data;
}

/* Idle: the cache keeps what a quiet shard needs; a burst's buffers go back. */
#define SM_SENDBUF_CACHE_IDLE 32u

/*
 * The shard's idle hook (sm_shard_on_idle: at most once a second, when the
 * reactor found nothing to do): a burst filled the cache up to
 * SM_SENDBUF_CACHE_MAX; a quiet shard gives all but a few back.
 */
static void
sendbuf_cache_trim(void *arg)
{
	struct sm_sendbuf *b;

	(void)arg;
	while (sbc.n > SM_SENDBUF_CACHE_IDLE && (b = sbc.head) != NULL) {
		sbc.head = *sendbuf_next(b);
		sbc.n--;
		sm_free(b);
	}
}

static __thread struct sm_idle_hook sendbuf_idle = { .fn = sendbuf_cache_trim };

/* Free the cached buffers; buffers released later are freed at once. */
static void
sm_net_shard_fini_cache(void)
{
	struct sm_sendbuf *b;

	while ((b = sbc.head) != NULL) {
		sbc.head = *sendbuf_next(b);
		sm_free(b);
	}
	sbc.n = 0;
	if (sbc.ready && sm_on_shard())
		sm_shard_remove_idle_hook(&sendbuf_idle);
	sbc.ready = false;
}


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
	if (cfg == NULL)
		cfg = &defaults;
	sbc.ready = true;
	if (sm_on_shard())
		sm_shard_on_idle(&sendbuf_idle);
	sbc.max_unsent = cfg->max_unsent_bytes ? cfg->max_unsent_bytes : SM_NET_DEFAULT_MAX_UNSENT;
	ret = sm_current->shard_init(cfg);
	if (ret < 0)
		sm_net_shard_fini_cache();
	return ret;
}

void
sm_net_shard_fini(void)
{
	if (sm_current != NULL)
		sm_current->shard_fini();
	sm_net_shard_fini_cache();
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

/*
 * The last reference to a pooled buffer went (the driver sent it, the
 * protocol dropped it): back on the shard's free list for the next reply,
 * unless the cache is full or the shard's net state is gone (then freed).
 */
static void
sendbuf_release_pooled(struct sm_bufseg *seg)
{
	struct sm_sendbuf *b = sm_container_of(seg, struct sm_sendbuf, seg);

	if (!sbc.ready || sbc.n >= SM_SENDBUF_CACHE_MAX) {
		sm_free(b);
		return;
	}
	*sendbuf_next(b) = sbc.head;
	sbc.head = b;
	sbc.n++;
}

/* The last reference to a buffer above the pooled size: it was made to measure. */
static void
sendbuf_release_heap(struct sm_bufseg *seg)
{
	sm_free(sm_container_of(seg, struct sm_sendbuf, seg));
}

struct sm_sendbuf *
sm_sendbuf_new(size_t cap)
{
	struct sm_sendbuf *b;

	if (cap <= SM_SENDBUF_POOLED && sbc.ready) {
		b = sbc.head;
		if (b != NULL) {
			sbc.head = *sendbuf_next(b);
			sbc.n--;
		} else {
			b = sm_malloc(sizeof(*b) + SM_SENDBUF_POOLED);
			if (b == NULL)
				return NULL;
		}
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

struct sm_sendbuf *
sm_sendbuf_dup(const void *p, size_t len)
{
	struct sm_sendbuf *b = sm_sendbuf_new(len);

	if (b != NULL) {
		memcpy(b->data, p, len);
		b->len = len;
	}
	return b;
}

int
sm_conn_send_copy(struct sm_conn *c, const void *data, size_t len)
{
	const char *p = data;
	struct sm_sendbuf *b;
	struct sm_iov v;
	size_t chunk;
	int ret = 0;

	while (len > 0 && ret == 0) {
		b = c->tx_tail;
		if (b == NULL || b->len == b->cap) {
			if (b != NULL)
				sm_bufseg_put(&b->seg);
			c->tx_tail = b = sm_sendbuf_new(SM_MIN(len, (size_t)SM_SENDBUF_POOLED));
			if (b == NULL)
				return -ENOMEM;
		}
		chunk = SM_MIN(len, b->cap - b->len);
		memcpy(b->data + b->len, p, chunk);
		v.seg = &b->seg;
		v.base = b->data + b->len;
		v.len = chunk;
		b->len += chunk;
		/* The driver merges a view that continues its last one. */
		ret = sm_conn_send(c, &v, 1);
		p += chunk;
		len -= chunk;
	}
	return ret;
}

void
sm_conn_pause_rx(struct sm_conn *c, unsigned why)
{
	unsigned was = c->rx_paused;

	c->rx_paused |= why;
	if (was == 0 && c->rx_paused != 0 && c->drv->set_rx_paused != NULL)
		c->drv->set_rx_paused(c, true);
}

void
sm_conn_resume_rx(struct sm_conn *c, unsigned why)
{
	unsigned was = c->rx_paused;

	c->rx_paused &= ~why;
	if (was != 0 && c->rx_paused == 0 && c->drv->set_rx_paused != NULL)
		c->drv->set_rx_paused(c, false);
}

void
sm_conn_unsent_changed(struct sm_conn *c)
{
	size_t max = sbc.max_unsent ? sbc.max_unsent : SM_NET_DEFAULT_MAX_UNSENT;

	if (!(c->rx_paused & SM_RX_PAUSE_UNSENT)) {
		if (c->send_queued > max && !c->closing) {
			SM_STAT_INC(rx_pauses);
			sm_conn_pause_rx(c, SM_RX_PAUSE_UNSENT);
		}
	} else if (c->send_queued <= max / 2) {
		sm_conn_resume_rx(c, SM_RX_PAUSE_UNSENT);
	}
}

void
sm_conn_tx_idle(struct sm_conn *c)
{
	if (c->tx_tail != NULL) {
		sm_bufseg_put(&c->tx_tail->seg);
		c->tx_tail = NULL;
	}
}

void
sm_conn_net_fini(struct sm_conn *c)
{
	sm_conn_tx_idle(c);
}

/*
 * Make room for @need views: the ring doubles and its live views are copied
 * to the front of the new one in order, so head goes back to 0. Runs on a
 * send that finds the queue full (a connection whose peer reads slowly).
 */
static int
iovq_grow(struct sm_iovq *q, uint32_t need)
{
	uint32_t cap = q->cap ? q->cap : 16, i;
	struct sm_iov *v;

	while (cap < q->len + need) {
		if (cap > UINT32_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	if (cap == q->cap)
		return 0;
	v = sm_malloc((size_t)cap * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	for (i = 0; i < q->len; i++)
		v[i] = *sm_iovq_at(q, i);
	sm_free(q->v);
	q->v = v;
	q->cap = cap;
	q->head = 0;
	return 0;
}

int
sm_iovq_push(struct sm_iovq *q, const struct sm_iov *iov, unsigned n)
{
	struct sm_iov *last;
	unsigned i;
	int ret;

	if (q->len + n > q->cap) {
		ret = iovq_grow(q, n);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < n; i++) {
		if (iov[i].len == 0)
			continue;
		q->bytes += iov[i].len;
		last = q->len > 0 ? sm_iovq_at(q, q->len - 1) : NULL;
		if (last != NULL && last->seg != NULL && last->seg == iov[i].seg &&
		    last->base + last->len == iov[i].base) {
			last->len += iov[i].len; /* continues the last view: one reference */
			continue;
		}
		if (iov[i].seg != NULL)
			sm_bufseg_get(iov[i].seg);
		*sm_iovq_at(q, q->len) = iov[i];
		q->len++;
	}
	return 0;
}

void
sm_iovq_consume(struct sm_iovq *q, size_t bytes)
{
	struct sm_iov *v;

	while (bytes > 0 && q->len > 0) {
		v = sm_iovq_at(q, 0);
		if (v->len > bytes) {
			v->base += bytes;
			v->len -= bytes;
			q->bytes -= bytes;
			return;
		}
		bytes -= v->len;
		q->bytes -= v->len;
		if (v->seg != NULL)
			sm_bufseg_put(v->seg);
		q->head = (q->head + 1) & (q->cap - 1);
		q->len--;
	}
}

void
sm_iovq_fini(struct sm_iovq *q)
{
	sm_iovq_consume(q, q->bytes);
	sm_free(q->v);
	memset(q, 0, sizeof(*q));
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

int
sm_net_addr_resolve(const char *host, char *out, size_t len, char *err, size_t errlen)
{
	struct addrinfo hints, *res = NULL, *ai, *pick = NULL;
	struct sockaddr_storage ss;
	int ret;

	if (host != NULL && strcmp(host, "localhost") != 0 && sm_net_addr_parse(host, 0, &ss) >= 0) {
		if (strlen(host) >= len)
			return -ENOSPC;
		snprintf(out, len, "%s", host);
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	ret = getaddrinfo(host != NULL ? host : "", NULL, &hints, &res);
	if (ret != 0) {
		snprintf(err, errlen, "%s", ret == EAI_SYSTEM ? strerror(errno) : gai_strerror(ret));
		return -ENOENT;
	}
	for (ai = res; ai != NULL && pick == NULL; ai = ai->ai_next)
		if (ai->ai_family == AF_INET)
			pick = ai;
	for (ai = res; ai != NULL && pick == NULL; ai = ai->ai_next)
		if (ai->ai_family == AF_INET6)
			pick = ai;
	ret = -ENOENT;
	if (pick == NULL)
		snprintf(err, errlen, "no IPv4 or IPv6 address");
	else if (getnameinfo(pick->ai_addr, pick->ai_addrlen, out, (socklen_t)len, NULL, 0,
			     NI_NUMERICHOST) != 0)
		ret = -ENOSPC;
	else
		ret = 0;
	freeaddrinfo(res);
	return ret;
}

const char *
sm_net_hostport(const char *addr, unsigned port, char *buf, size_t len)
{
	snprintf(buf, len, strchr(addr, ':') != NULL ? "[%s]:%u" : "%s:%u", addr, port);
	return buf;
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

void
sm_net_port_report(FILE *f, bool prometheus)
{
	if (sm_current != NULL && sm_current->port_report != NULL)
		sm_current->port_report(f, prometheus);
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
