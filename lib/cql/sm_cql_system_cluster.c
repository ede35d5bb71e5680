/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cluster description behind system.local and system.peers: this node
 * and the peers it was given, with host ids and tokens every node of the
 * group derives identically from the same address list.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/md5.h>

#include "sm_core.h"
#include "sm_cql_system.h"

#define DEFAULT_CLUSTER_NAME "Test Cluster"
#define DEFAULT_RACK "rack1"

/* A node's address in binary, to sort the ring and find duplicates. */
struct ring_node {
	uint8_t addr[16];
	unsigned len; /* 4 or 16 */
	uint16_t port;
	struct sm_cql_node *node;
};

/* Parse a numeric address of @n bytes at @s; 4 or 16 (its length), or -EINVAL. */
static int
addr_parse(const char *s, size_t n, uint8_t out[16])
{
	char tmp[INET6_ADDRSTRLEN + 1];

	if (n == 0 || n >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (inet_pton(AF_INET, tmp, out) == 1)
		return 4;
	if (inet_pton(AF_INET6, tmp, out) == 1)
		return 16;
	return -EINVAL;
}

static bool
addr_unspecified(const uint8_t *a, unsigned len)
{
	unsigned i;

	for (i = 0; i < len; i++)
		if (a[i] != 0)
			return false;
	return true;
}

/* A decimal port 1-65535 of exactly @n characters. */
static int
port_parse(const char *s, size_t n, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > 5)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > UINT16_MAX)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* Fill @node's address in canonical text from its binary form. */
static void
node_set(struct sm_cql_node *node, struct ring_node *rn, const uint8_t *addr, unsigned len,
	 uint16_t port)
{
	memcpy(rn->addr, addr, len);
	rn->len = len;
	rn->port = port;
	rn->node = node;
	inet_ntop(len == 4 ? AF_INET : AF_INET6, addr, node->address, sizeof(node->address));
	node->port = port;
}

/*
 * One peers entry: "a.b.c.d", "a.b.c.d:port", a bare IPv6 address
 * ("fd00::2", no port: every colon belongs to the address), or
 * "[v6]:port" / "[v6]". Returns 0 or -EINVAL with a message.
 */
static int
peer_parse(const char *e, size_t n, uint16_t default_port, uint8_t addr[16], unsigned *len,
	   uint16_t *port, char *err, size_t errlen)
{
	const char *a = e, *colon = memchr(e, ':', n), *pe = NULL;
	size_t alen = n, plen = 0;
	int ret;

	if (e[0] == '[') {
		const char *close = memchr(e, ']', n);

		if (close == NULL || (close + 1 < e + n && close[1] != ':') || close + 2 == e + n) {
			snprintf(err, errlen,
				 "peers entry '%.*s' is malformed: write an IPv6 peer as [address] "
				 "or [address]:port",
				 (int)n, e);
			return -EINVAL;
		}
		a = e + 1;
		alen = (size_t)(close - a);
		if (close + 1 < e + n) {
			pe = close + 2;
			plen = (size_t)(e + n - pe);
		}
	} else if (colon != NULL && memchr(colon + 1, ':', (size_t)(e + n - colon - 1)) == NULL) {
		/* exactly one colon: address:port */
		alen = (size_t)(colon - e);
		pe = colon + 1;
		plen = (size_t)(e + n - pe);
	}
	ret = addr_parse(a, alen, addr);
	if (ret < 0) {
		snprintf(err, errlen,
			 "peers entry '%.*s': '%.*s' is not a numeric IPv4 or IPv6 address; list "
			 "peers by address (10.0.0.2, 10.0.0.3:9043, [fd00::2]:9042), not by host "
			 "name",
			 (int)n, e, (int)alen, a);
		return -EINVAL;
	}
	*len = (unsigned)ret;
	if (addr_unspecified(addr, *len)) {
		snprintf(err, errlen,
			 "peers entry '%.*s' is the unspecified address: list each peer by the "
			 "address its clients connect to",
			 (int)n, e);
		return -EINVAL;
	}
	*port = default_port;
	if (pe != NULL && port_parse(pe, plen, port) < 0) {
		snprintf(err, errlen,
			 "peers entry '%.*s': port '%.*s' is not a number from 1 to 65535; fix "
			 "the port or leave it out for %u",
			 (int)n, e, (int)plen, pe, default_port);
		return -EINVAL;
	}
	return 0;
}

/* Ring order: IPv4 before IPv6, then address bytes, then port. */
static int
ring_cmp(const void *x, const void *y)
{
	const struct ring_node *a = x, *b = y;
	int c;

	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	c = memcmp(a->addr, b->addr, a->len);
	if (c != 0)
		return c;
	return (int)a->port - (int)b->port;
}

/*
 * Java's UUID.nameUUIDFromBytes of "address:port" ("[address]:port" for
 * IPv6), so that every node names every other the same way.
 */
static void
host_id(struct sm_cql_node *node, unsigned len)
{
	uint8_t digest[MD5_DIGEST_SIZE];
	struct md5_ctx md5;
	char name[96];
	int n;

	n = snprintf(name, sizeof(name), len == 16 ? "[%s]:%u" : "%s:%u", node->address,
		     node->port);
	md5_init(&md5);
	md5_update(&md5, (size_t)n, (const uint8_t *)name);
	md5_digest(&md5, sizeof(digest), digest);
	sm_uuid_from_md5(digest, 3, &node->host_id);
}

int
sm_cql_cluster_init(struct sm_cql_cluster *cl, const char *cluster_name, const char *listen_address,
		    uint16_t native_port, const char *peers, char *err, size_t errlen)
{
	struct ring_node *ring = NULL;
	uint8_t digest[MD5_DIGEST_SIZE];
	struct md5_ctx md5;
	unsigned max_peers = 0, nring, i, j;
	const char *p;
	uint8_t addr[16];
	int ret;

	memset(cl, 0, sizeof(*cl));
	if (cluster_name == NULL || cluster_name[0] == '\0')
		cluster_name = DEFAULT_CLUSTER_NAME;
	if (strlen(cluster_name) >= sizeof(cl->cluster_name)) {
		snprintf(err, errlen, "cluster_name is longer than %zu bytes: shorten it",
			 sizeof(cl->cluster_name) - 1);
		return -EINVAL;
	}
	strcpy(cl->cluster_name, cluster_name);
	snprintf(cl->data_center, sizeof(cl->data_center), "%s", SM_DATACENTER);
	snprintf(cl->rack, sizeof(cl->rack), "%s", DEFAULT_RACK);
	if (native_port == 0) {
		snprintf(err, errlen,
			 "native_transport_port 0 is not a port: set it from 1 to 65535");
		return -EINVAL;
	}

	if (peers != NULL)
		for (max_peers = 1, p = peers; *p != '\0'; p++)
			max_peers += *p == ',';
	ring = sm_calloc(max_peers + 1, sizeof(*ring));
	if (max_peers > 0)
		cl->peers = sm_calloc(max_peers, sizeof(*cl->peers));
	if (ring == NULL || (max_peers > 0 && cl->peers == NULL)) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}

	ret = listen_address != NULL ? addr_parse(listen_address, strlen(listen_address), addr)
				     : -EINVAL;
	if (ret < 0) {
		snprintf(err, errlen,
			 "listen_address '%s' is not a numeric IPv4 or IPv6 address: set "
			 "listen_address to this node's IP address",
			 listen_address != NULL ? listen_address : "");
		ret = -EINVAL;
		goto fail;
	}
	node_set(&cl->self, &ring[0], addr, (unsigned)ret, native_port);
	nring = 1;

	for (p = peers; p != NULL && *p != '\0';) {
		const char *end = strchr(p, ',');
		const char *s = p, *e = end != NULL ? end : p + strlen(p);
		struct ring_node *rn = &ring[nring];
		unsigned len;
		uint16_t port;

		p = end != NULL ? end + 1 : e;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (s == e)
			continue; /* "a,,b" or a trailing comma */
		ret = peer_parse(s, (size_t)(e - s), native_port, addr, &len, &port, err, errlen);
		if (ret < 0)
			goto fail;
		node_set(&cl->peers[cl->npeers], rn, addr, len, port);
		for (j = 0; j < nring; j++) {
			if (ring_cmp(&ring[j], rn) != 0)
				continue;
			if (j == 0)
				snprintf(err, errlen,
					 "peers entry '%.*s' is this node (listen_address %s, port "
					 "%u): remove it from peers",
					 (int)(e - s), s, cl->self.address, native_port);
			else
				snprintf(err, errlen,
					 "peers entry '%.*s' is listed twice: remove the duplicate",
					 (int)(e - s), s);
			ret = -EINVAL;
			goto fail;
		}
		cl->npeers++;
		nring++;
	}
	if (cl->npeers > 0 && addr_unspecified(ring[0].addr, ring[0].len)) {
		snprintf(err, errlen,
			 "listen_address %s cannot name this node to its peers: set listen_address "
			 "to the address the other nodes list in their peers",
			 cl->self.address);
		ret = -EINVAL;
		goto fail;
	}

	if (cl->npeers == 0) {
		sm_free(cl->peers);
		cl->peers = NULL;
	}
	/* Node i of n, in ring order, ends the i-th of n equal token ranges. */
	qsort(ring, nring, sizeof(*ring), ring_cmp);
	md5_init(&md5);
	for (i = 0; i < nring; i++) {
		uint64_t t = (uint64_t)INT64_MIN + (uint64_t)(i + 1) * (UINT64_MAX / nring);
		char name[96];
		int n;

		ring[i].node->token = (int64_t)t;
		host_id(ring[i].node, ring[i].len);
		n = snprintf(name, sizeof(name), "%s:%u,", ring[i].node->address, ring[i].port);
		md5_update(&md5, (size_t)n, (const uint8_t *)name);
	}
	md5_digest(&md5, sizeof(digest), digest);
	for (i = 0; i < sizeof(digest); i++)
		snprintf(cl->ring_id + 2 * i, 3, "%02x", digest[i]);
	sm_free(ring);
	return 0;
fail:
	sm_free(ring);
	sm_cql_cluster_free(cl);
	return ret;
}

void
sm_cql_cluster_free(struct sm_cql_cluster *cl)
{
	sm_free(cl->peers);
	cl->peers = NULL;
	cl->npeers = 0;
}

/*
 * The node with the smallest token at or above @token, as drivers' token
 * maps find the replica (the last node's token is INT64_MAX, so one always
 * is). Linear in the group's size, which the peers list bounds.
 */
int
sm_cql_cluster_owner(const struct sm_cql_cluster *cl, int64_t token)
{
	int best = -3; /* none yet */
	int64_t best_token = 0;
	unsigned i;

	if (cl->self.token >= token) {
		best = SM_CQL_OWNER_SELF;
		best_token = cl->self.token;
	}
	for (i = 0; i < cl->npeers; i++) {
		int64_t t = cl->peers[i].token;

		if (t >= token && (best == -3 || t < best_token)) {
			best = (int)i;
			best_token = t;
		}
	}
	return best == -3 ? SM_CQL_OWNER_SELF : best;
}

int
sm_cql_cluster_range_owner(const struct sm_cql_cluster *cl, int64_t start, int64_t end)
{
	int a;

	if (start >= end)
		return SM_CQL_OWNER_SELF;
	a = sm_cql_cluster_owner(cl, start + 1);
	return a == sm_cql_cluster_owner(cl, end) ? a : SM_CQL_OWNER_SEVERAL;
}
