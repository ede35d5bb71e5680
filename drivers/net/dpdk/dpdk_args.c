/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdk_args: shell-style splitting and the driver's own options after "--". */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpdk_priv.h"
#include "sm_core.h"

int
dpdk_args_split(const char *s, char ***words, int *n, char *err, size_t errlen)
{
	size_t len = s != NULL ? strlen(s) : 0, maxw = len / 2 + 2;
	char **w, *out;
	int nw = 0;
	char quote = 0;
	bool inword = false;

	/* One block: the pointer array, then the unquoted text (never longer). */
	w = sm_malloc(maxw * sizeof(*w) + len + 1);
	if (w == NULL)
		return -ENOMEM;
	out = (char *)(w + maxw);
	for (; s != NULL && *s != '\0'; s++) {
		char ch = *s;

		if (quote == '\'') {
			if (ch == '\'')
				quote = 0;
			else
				*out++ = ch;
			continue;
		}
		if (quote == '"') {
			if (ch == '"')
				quote = 0;
			else if (ch == '\\' && s[1] != '\0' && strchr("\"\\$`", s[1]) != NULL)
				*out++ = *++s;
			else
				*out++ = ch;
			continue;
		}
		if (ch == ' ' || ch == '\t' || ch == '\n') {
			if (inword) {
				*out++ = '\0';
				inword = false;
			}
			continue;
		}
		if (!inword) {
			w[nw++] = out;
			inword = true;
		}
		if (ch == '\'' || ch == '"')
			quote = ch;
		else if (ch == '\\' && s[1] != '\0')
			*out++ = *++s;
		else
			*out++ = ch;
	}
	if (quote != 0) {
		snprintf(err, errlen, "dpdk_args: unterminated %c quote: close it", quote);
		sm_free(w);
		return -EINVAL;
	}
	if (inword)
		*out = '\0';
	w[nw] = NULL;
	*words = w;
	*n = nw;
	return 0;
}

static int
parse_ipv4(const char *s, uint32_t *ip)
{
	struct in_addr a;

	if (inet_pton(AF_INET, s, &a) != 1)
		return -EINVAL;
	*ip = ntohl(a.s_addr);
	return 0;
}

static int
parse_pct(const char *name, const char *v, double *out, char *err, size_t errlen)
{
	char *end;
	double d = strtod(v, &end);

	/* Written so that NaN fails it too. */
	if (end == v || *end != '\0' || !(d >= 0 && d <= 100)) {
		snprintf(err, errlen, "dpdk_args: %s needs a percentage from 0 to 100, got '%s'",
			 name, v);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

static int
parse_driver_opt(struct dpdk_opts *o, const char *name, const char *v, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		size_t off;
	} pcts[] = {
		{ "--rx-drop", offsetof(struct dpdk_opts, rx.drop) },
		{ "--rx-dup", offsetof(struct dpdk_opts, rx.dup) },
		{ "--rx-reorder", offsetof(struct dpdk_opts, rx.reorder) },
		{ "--rx-delay", offsetof(struct dpdk_opts, rx.delay) },
		{ "--tx-drop", offsetof(struct dpdk_opts, tx.drop) },
		{ "--tx-dup", offsetof(struct dpdk_opts, tx.dup) },
		{ "--tx-reorder", offsetof(struct dpdk_opts, tx.reorder) },
		{ "--tx-delay", offsetof(struct dpdk_opts, tx.delay) },
	};
	unsigned long ul;
	char *end, ip[64], *slash;
	size_t i;

	for (i = 0; i < SM_ARRAY_SIZE(pcts); i++)
		if (strcmp(name, pcts[i].name) == 0)
			return parse_pct(name, v, (double *)(void *)((char *)o + pcts[i].off), err,
					 errlen);
	if (strcmp(name, "--ipv4") == 0) {
		unsigned prefix = 24;

		snprintf(ip, sizeof(ip), "%s", v);
		slash = strchr(ip, '/');
		if (slash != NULL) {
			*slash++ = '\0';
			ul = strtoul(slash, &end, 10);
			if (end == slash || *end != '\0' || ul < 1 || ul > 30)
				goto bad_ip;
			prefix = (unsigned)ul;
		}
		if (parse_ipv4(ip, &o->ip) < 0)
			goto bad_ip;
		o->netmask = prefix == 32 ? UINT32_MAX : ~(UINT32_MAX >> prefix);
		o->ip_given = true;
		return 0;
	}
	if (strcmp(name, "--gateway") == 0) {
		if (parse_ipv4(v, &o->gateway) < 0) {
			snprintf(err, errlen,
				 "dpdk_args: --gateway needs an IPv4 address, got '%s'", v);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(name, "--port-id") == 0 || strcmp(name, "--delay-us") == 0) {
		ul = strtoul(v, &end, 10);
		if (end == v || *end != '\0' ||
		    ul > (strcmp(name, "--port-id") == 0 ? 1023ul : 10000000ul)) {
			snprintf(err, errlen, "dpdk_args: %s needs a number, got '%s'", name, v);
			return -EINVAL;
		}
		if (strcmp(name, "--port-id") == 0)
			o->port_id = (uint16_t)ul;
		else
			o->delay_ns = (uint64_t)ul * 1000;
		return 0;
	}
	snprintf(err, errlen,
		 "dpdk_args: unknown driver option '%s' after '--' (known: --ipv4 ADDR[/PREFIX], "
		 "--gateway ADDR, --port-id N, --rx-drop/--rx-dup/--rx-reorder/--rx-delay PCT, "
		 "the same for --tx-*, --delay-us N)",
		 name);
	return -EINVAL;
bad_ip:
	snprintf(err, errlen,
		 "dpdk_args: --ipv4 needs ADDR or ADDR/PREFIX (prefix 1-30), e.g. 10.0.0.2/24, "
		 "got '%s'",
		 v);
	return -EINVAL;
}

static bool
usable_ip(uint32_t ip)
{
	return ip != 0 && (ip >> 24) != 127 && (ip >> 28) < 14;
}

int
dpdk_opts_parse(const char *args, const char *default_ip, struct dpdk_opts *o, char *err,
		size_t errlen)
{
	int i, ret;

	memset(o, 0, sizeof(*o));
	o->delay_ns = 1000000; /* 1 ms */
	ret = dpdk_args_split(args, &o->words, &o->nwords, err, errlen);
	if (ret < 0)
		return ret;
	o->eal = o->words;
	for (i = 0; i < o->nwords && strcmp(o->words[i], "--") != 0; i++)
		;
	o->neal = i;
	for (i++; i < o->nwords; i++) {
		const char *name = o->words[i], *eq = strchr(name, '='), *v;
		char key[64];

		if (eq != NULL) {
			snprintf(key, sizeof(key), "%.*s", (int)(eq - name), name);
			name = key;
			v = eq + 1;
		} else if (i + 1 < o->nwords) {
			v = o->words[++i];
		} else {
			snprintf(err, errlen, "dpdk_args: driver option %s needs a value", name);
			ret = -EINVAL;
			goto fail;
		}
		ret = parse_driver_opt(o, name, v, err, errlen);
		if (ret < 0)
			goto fail;
	}
	if (!o->ip_given) {
		if (default_ip == NULL || parse_ipv4(default_ip, &o->ip) < 0 || !usable_ip(o->ip)) {
			snprintf(err, errlen,
				 "the DPDK stack needs an IPv4 address of its own, and "
				 "listen_address '%s' is not one: set listen_address to it (e.g. "
				 "--listen-address 10.0.0.2), or add '-- --ipv4 10.0.0.2/24' to "
				 "dpdk_args",
				 default_ip != NULL ? default_ip : "");
			o->ip = 0;
			ret = -EINVAL;
			goto fail;
		}
		o->netmask = 0xffffff00u;
	}
	if (!usable_ip(o->ip)) {
		snprintf(err, errlen,
			 "dpdk_args: --ipv4 must be a unicast address outside 127.0.0.0/8");
		ret = -EINVAL;
		goto fail;
	}
	if (o->gateway != 0 && (o->gateway & o->netmask) != (o->ip & o->netmask)) {
		snprintf(err, errlen,
			 "dpdk_args: --gateway is not on the --ipv4 subnet: fix either");
		ret = -EINVAL;
		goto fail;
	}
	return 0;
fail:
	dpdk_opts_free(o);
	return ret;
}

void
dpdk_opts_free(struct dpdk_opts *o)
{
	sm_free(o->words);
	o->words = NULL;
	o->eal = NULL;
	o->nwords = o->neal = 0;
}

bool
dpdk_eal_has(const struct dpdk_opts *o, const char *name)
{
	size_t len = strlen(name);
	int i;

	for (i = 0; i < o->neal; i++)
		if (strncmp(o->eal[i], name, len) == 0 &&
		    (o->eal[i][len] == '\0' || o->eal[i][len] == '='))
			return true;
	return false;
}
