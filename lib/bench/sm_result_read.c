/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading results back: the JSON that stress, perf-simple-query and bench
 * write, and HDR interval logs. JSON is tokenized by Debian's jsmn
 * (libjsmn-dev, header-only; lib/bench must not depend on lib/alternator's
 * sm_json). jsmn's tokens are a flat pre-order array; one pass with a
 * stack gives each token the index after its subtree, so walking an
 * object's members skips nested values in O(1) and the whole read stays
 * linear in the input.
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include "sm_mem.h"
#include "sm_result.h"

#define MAX_FILE (64u << 20) /* no result of ours comes near; a bigger file is not one */
#define MAX_DEPTH 64

struct jdoc {
	const char *s;
	jsmntok_t *t;
	int *next; /* index of the token after t[i]'s subtree */
	int n;
};

/*
 * snprintf for names and messages, which may be cut at their buffer's
 * size: they are for display. (Through a function, -O3's inlining does
 * not turn each intended truncation into a -Wformat-truncation error.)
 */
static void __attribute__((format(printf, 3, 4)))
bprintf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int
jdoc_parse(struct jdoc *d, const char *s, size_t len, char *err, size_t errlen)
{
	jsmn_parser p;
	int n, i, sp = 0, stack[MAX_DEPTH];
	unsigned cap = 256;

	memset(d, 0, sizeof(*d));
	d->s = s;
	for (;;) {
		d->t = sm_malloc(cap * sizeof(*d->t));
		if (d->t == NULL)
			return -ENOMEM;
		jsmn_init(&p);
		n = jsmn_parse(&p, s, len, d->t, cap);
		if (n != JSMN_ERROR_NOMEM)
			break;
		/* the file's length bounds the token count: growth is bounded too */
		sm_free(d->t);
		d->t = NULL;
		if (cap > len + 2) {
			bprintf(err, errlen, "JSON too deeply nested or malformed");
			return -EINVAL;
		}
		cap *= 4;
	}
	if (n < 1 || d->t[0].type != JSMN_OBJECT) {
		bprintf(err, errlen, "not a JSON object (%s)",
			n == JSMN_ERROR_PART ? "truncated"
			: n < 0		     ? "malformed"
					     : "empty");
		goto fail;
	}
	d->n = n;
	d->next = sm_malloc((size_t)n * sizeof(int));
	if (d->next == NULL) {
		sm_free(d->t);
		return -ENOMEM;
	}
	/* a token's subtree ends where the next token starts at or after its end */
	for (i = 0; i < n; i++) {
		while (sp > 0 && d->t[i].start >= d->t[stack[sp - 1]].end)
			d->next[stack[--sp]] = i;
		if (sp == MAX_DEPTH) {
			bprintf(err, errlen, "JSON nested deeper than %d", MAX_DEPTH);
			sm_free(d->next);
			goto fail;
		}
		stack[sp++] = i;
	}
	while (sp > 0)
		d->next[stack[--sp]] = n;
	return 0;
fail:
	sm_free(d->t);
	memset(d, 0, sizeof(*d));
	return -EINVAL;
}

static void
jdoc_free(struct jdoc *d)
{
	sm_free(d->t);
	sm_free(d->next);
	memset(d, 0, sizeof(*d));
}

static bool
jeq(const struct jdoc *d, int k, const char *name)
{
	size_t l = strlen(name);

	return d->t[k].type == JSMN_STRING && (size_t)(d->t[k].end - d->t[k].start) == l &&
	       memcmp(d->s + d->t[k].start, name, l) == 0;
}

/* The value of member @name of object @obj, or -1. */
static int
jget(const struct jdoc *d, int obj, const char *name)
{
	int k, i;

	if (obj < 0 || d->t[obj].type != JSMN_OBJECT)
		return -1;
	for (k = obj + 1, i = 0; i < d->t[obj].size && k < d->n; i++) {
		if (jeq(d, k, name))
			return k + 1 < d->n ? k + 1 : -1;
		k = d->next[k + 1 < d->n ? k + 1 : k];
	}
	return -1;
}

/* First element (or member key) of @v, and the one after @k in the same container. */
static int
jfirst(const struct jdoc *d, int v)
{
	return v >= 0 && d->t[v].size > 0 && v + 1 < d->n ? v + 1 : -1;
}

static int
jnext(const struct jdoc *d, int parent, int k)
{
	int n = d->next[k];

	if (d->t[parent].type == JSMN_OBJECT && n < d->n) /* skip the member's value */
		n = d->next[n];
	return n < d->next[parent] ? n : -1;
}

static bool
jnum(const struct jdoc *d, int v, double *out)
{
	char buf[64];
	char *end;
	int l;

	if (v < 0 || d->t[v].type != JSMN_PRIMITIVE)
		return false;
	l = d->t[v].end - d->t[v].start;
	if (l <= 0 || l >= (int)sizeof(buf))
		return false;
	memcpy(buf, d->s + d->t[v].start, (size_t)l);
	buf[l] = 0;
	if (buf[0] == 'n' || buf[0] == 't' || buf[0] == 'f')
		return false;
	*out = strtod(buf, &end);
	return *end == 0 && isfinite(*out);
}

/* The text of a primitive or string (no unescaping: our files escape nothing). */
static void
jstr(const struct jdoc *d, int v, char *out, size_t cap)
{
	int l;

	if (cap == 0)
		return;
	out[0] = 0;
	if (v < 0 || d->t[v].type == JSMN_OBJECT || d->t[v].type == JSMN_ARRAY)
		return;
	l = d->t[v].end - d->t[v].start;
	snprintf(out, cap, "%.*s", l, d->s + d->t[v].start);
}

static void
kv_add(struct sm_result_kv *kv, unsigned *n, const char *key, const char *val)
{
	unsigned i;

	if (val[0] == 0)
		return;
	for (i = 0; i < *n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return;
	if (*n >= SM_RESULT_MAX_KV)
		return;
	snprintf(kv[*n].key, sizeof(kv[*n].key), "%s", key);
	snprintf(kv[*n].val, sizeof(kv[*n].val), "%s", val);
	(*n)++;
}

/*
 * Every primitive member of @obj as a setting "@prefix.key", one level of
 * nested objects as "@prefix.outer.inner" (@depth 0 at the top).
 */
static void
kv_members(const struct jdoc *d, int obj, const char *prefix, struct sm_result_kv *kv, unsigned *n,
	   int depth)
{
	char key[64], val[160];
	int k;

	for (k = jfirst(d, obj); k >= 0; k = jnext(d, obj, k)) {
		int v = k + 1;

		if (v >= d->n)
			break;
		bprintf(key, sizeof(key), "%s%s%.*s", prefix, prefix[0] ? "." : "",
			d->t[k].end - d->t[k].start, d->s + d->t[k].start);
		if (d->t[v].type == JSMN_OBJECT && depth == 0)
			kv_members(d, v, key, kv, n, depth + 1);
		else if (d->t[v].type == JSMN_PRIMITIVE || d->t[v].type == JSMN_STRING) {
			jstr(d, v, val, sizeof(val));
			kv_add(kv, n, key, val);
		}
	}
}

static struct sm_result_metric *
metric_add(struct sm_result *r, const char *name, const char *unit, bool higher_better,
	   double value)
{
	struct sm_result_metric *m;
	unsigned i;

	for (i = 0; i < r->nmetric; i++)
		if (strcmp(r->metric[i].name, name) == 0)
			return &r->metric[i];
	if (r->nmetric >= SM_RESULT_MAX_METRICS)
		return NULL;
	m = &r->metric[r->nmetric++];
	memset(m, 0, sizeof(*m));
	bprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	m->higher_better = higher_better;
	m->value = value;
	m->sd = -1;
	m->series = -1;
	return m;
}

static void
metric_num(struct sm_result *r, const struct jdoc *d, int obj, const char *key, const char *name,
	   const char *unit, bool higher_better)
{
	double v;

	if (jnum(d, jget(d, obj, key), &v))
		metric_add(r, name, unit, higher_better, v);
}

static struct sm_result_bars *
bars_get(struct sm_result *r, const char *name)
{
	unsigned i;

	for (i = 0; i < r->nbars; i++)
		if (strcmp(r->bars[i].name, name) == 0)
			return &r->bars[i];
	if (r->nbars >= SM_RESULT_MAX_BARS)
		return NULL;
	bprintf(r->bars[r->nbars].name, sizeof(r->bars[0].name), "%s", name);
	r->bars[r->nbars].n = 0;
	return &r->bars[r->nbars++];
}

/* One element of a per-shard array: bar @name's value for shard @i (bounded). */
static void
bar_set(struct sm_result *r, const char *name, unsigned i, double v)
{
	struct sm_result_bars *b = bars_get(r, name);
	unsigned k;

	if (b == NULL || i >= SM_RESULT_MAX_SHARDS)
		return;
	for (k = b->n; k <= i; k++)
		b->v[k] = 0;
	if (i >= b->n)
		b->n = i + 1;
	b->v[i] = v;
}

static const char *const psq_shard_keys[] = { "ops", "allocs_per_op", "tasks_per_op", "hops_per_op",
					      "instructions_per_op" };
static const char *const bench_shard_keys[] = { "requests", "hops",	    "tasks",
						"allocs",   "instructions", "cycles" };

/* Each element of per-shard array @arr: its @keys as bars "@pre server KEY". */
static void
shard_bars(struct sm_result *r, const struct jdoc *d, int arr, const char *pre,
	   const char *const *keys, unsigned nkeys)
{
	char name[80];
	double sh, v;
	unsigned k;
	int e;

	for (e = jfirst(d, arr); e >= 0; e = jnext(d, arr, e)) {
		/* bounded before the conversion: a double out of range is no unsigned */
		if (!jnum(d, jget(d, e, "shard"), &sh) || !(sh >= 0 && sh < SM_RESULT_MAX_SHARDS))
			continue;
		for (k = 0; k < nkeys; k++)
			if (jnum(d, jget(d, e, keys[k]), &v)) {
				bprintf(name, sizeof(name), "%sserver %s", pre, keys[k]);
				bar_set(r, name, (unsigned)sh, v);
			}
	}
}

/* perf-simple-query's result, or one psq load of bench's (names prefixed by @pre). */
static void
read_psq(struct sm_result *r, const struct jdoc *d, int root, const char *pre, const char *kvpre)
{
	int stats = jget(d, root, "stats"), shards = jget(d, root, "per_shard");
	double med, mad, n = 0;
	char name[80];
	struct sm_result_metric *m;

	kv_members(d, jget(d, root, "parameters"), kvpre, r->settings, &r->nsettings, 1);
	kv_members(d, jget(d, root, "test_properties"), kvpre, r->settings, &r->nsettings, 1);
	kv_members(d, jget(d, root, "machine"), "", r->machine, &r->nmachine, 1);
	if (r->version[0] == 0)
		jstr(d, jget(d, jget(d, jget(d, root, "versions"), "shardmark"), "version"),
		     r->version, sizeof(r->version));
	jnum(d, jget(d, jget(d, root, "parameters"), "duration"), &n);
	if (jnum(d, jget(d, stats, "median tps"), &med)) {
		bprintf(name, sizeof(name), "%stps", pre);
		m = metric_add(r, name, "op/s", true, med);
		/* the median and its MAD stand for a mean and sd: 1.4826 MAD is sd for a normal */
		if (m != NULL && jnum(d, jget(d, stats, "mad tps"), &mad) && n > 1) {
			m->sd = 1.4826 * mad;
			m->n = n;
		}
	}
	bprintf(name, sizeof(name), "%sallocs/op", pre);
	metric_num(r, d, stats, "allocs_per_op", name, "", false);
	bprintf(name, sizeof(name), "%stasks/op", pre);
	metric_num(r, d, stats, "tasks_per_op", name, "", false);
	bprintf(name, sizeof(name), "%sinsns/op", pre);
	metric_num(r, d, stats, "instructions_per_op", name, "", false);
	bprintf(name, sizeof(name), "%scycles/op", pre);
	metric_num(r, d, stats, "cpu_cycles_per_op", name, "", false);
	shard_bars(r, d, shards, pre, psq_shard_keys, SM_ARRAY_SIZE(psq_shard_keys));
}

static void
hist_metrics(struct sm_result *r, const struct jdoc *d, int h, const char *pre)
{
	static const char *const keys[] = { "mean_ms", "p50_ms",  "p95_ms",
					    "p99_ms",  "p999_ms", "max_ms" };
	static const char *const names[] = { "mean", "p50", "p95", "p99", "p99.9", "max" };
	char name[80];
	unsigned k;

	for (k = 0; k < SM_ARRAY_SIZE(keys); k++) {
		bprintf(name, sizeof(name), "%s%s", pre, names[k]);
		metric_num(r, d, h, keys[k], name, "ms", false);
	}
}

/* stress's JSON, or one stress load of bench's. */
static void
read_stress(struct sm_result *r, const struct jdoc *d, int root, const char *pre, const char *kvpre)
{
	int ops = jget(d, root, "ops_by_type"), k;
	char name[80], val[160];

	jstr(d, jget(d, root, "command"), val, sizeof(val));
	if (kvpre[0] == 0) /* first in the table: what ran */
		kv_add(r->settings, &r->nsettings, "command", val);
	kv_members(d, root, kvpre, r->settings, &r->nsettings, 0);
	if (r->version[0] == 0)
		jstr(d, jget(d, root, "version"), r->version, sizeof(r->version));
	bprintf(name, sizeof(name), "%sop/s", pre);
	metric_num(r, d, root, "ops_per_s", name, "op/s", true);
	bprintf(name, sizeof(name), "%sclient us/op", pre);
	metric_num(r, d, root, "client_busy_us_per_op", name, "us", false);
	bprintf(name, sizeof(name), "%serrors", pre);
	metric_num(r, d, root, "errors", name, "", false);
	for (k = jfirst(d, ops); k >= 0; k = jnext(d, ops, k)) {
		char op[48];
		int v = k + 1;

		jstr(d, k, op, sizeof(op));
		bprintf(name, sizeof(name), "%s%s op/s", pre, op);
		metric_num(r, d, v, "ops_per_s", name, "op/s", true);
		bprintf(name, sizeof(name), "%s%s ", pre, op);
		hist_metrics(r, d, jget(d, v, "service_time"), name);
	}
}

static void
read_bench(struct sm_result *r, const struct jdoc *d, int root)
{
	int loads = jget(d, root, "loads"), e;
	char pre[80], name[160];
	double dur;

	kv_members(d, jget(d, root, "machine"), "", r->machine, &r->nmachine, 1);
	if (jnum(d, jget(d, root, "duration"), &dur)) {
		bprintf(name, sizeof(name), "%g", dur);
		kv_add(r->settings, &r->nsettings, "duration", name);
	}
	jstr(d, jget(d, root, "version"), r->version, sizeof(r->version));
	for (e = jfirst(d, loads); e >= 0; e = jnext(d, loads, e)) {
		int res = jget(d, e, "result"), srv = jget(d, e, "server_per_shard");
		char load[64];

		jstr(d, jget(d, e, "name"), load, sizeof(load));
		bprintf(pre, sizeof(pre), "%s: ", load);
		if (res < 0 || d->t[res].type != JSMN_OBJECT)
			continue;
		if (jget(d, res, "stats") >= 0)
			read_psq(r, d, res, pre, load);
		else if (jget(d, res, "ops_by_type") >= 0)
			read_stress(r, d, res, pre, load);
		else {
			bprintf(name, sizeof(name), "%srequests/s", pre);
			metric_num(r, d, jget(d, res, "total"), "requests_per_s", name, "req/s",
				   true);
		}
		shard_bars(r, d, srv, pre, bench_shard_keys, SM_ARRAY_SIZE(bench_shard_keys));
	}
}

int
sm_result_read_json(struct sm_result *r, const char *name, const char *text, size_t len, char *err,
		    size_t errlen)
{
	struct jdoc d;
	enum sm_result_kind kind;
	int ret;

	ret = jdoc_parse(&d, text, len, err, errlen);
	if (ret < 0)
		return ret;
	if (jget(&d, 0, "loads") >= 0)
		kind = SM_RESULT_BENCH;
	else if (jget(&d, 0, "stats") >= 0 && jget(&d, 0, "parameters") >= 0)
		kind = SM_RESULT_PSQ;
	else if (jget(&d, 0, "ops_by_type") >= 0)
		kind = SM_RESULT_STRESS;
	else {
		bprintf(err, errlen,
			"not a shardmark result: expected stress's -log json=, "
			"perf-simple-query's --json-result or bench's --json");
		jdoc_free(&d);
		return -EINVAL;
	}
	if (r->kind != SM_RESULT_NONE && r->kind != kind) {
		bprintf(err, errlen, "a second result of another kind in one run");
		jdoc_free(&d);
		return -EINVAL;
	}
	if (r->label[0] == 0)
		snprintf(r->label, sizeof(r->label), "%s", name);
	r->kind = kind;
	if (kind == SM_RESULT_BENCH)
		read_bench(r, &d, 0);
	else if (kind == SM_RESULT_PSQ)
		read_psq(r, &d, 0, "", "");
	else
		read_stress(r, &d, 0, "", "");
	jdoc_free(&d);
	return 0;
}

/* ---- HDR interval logs ---- */

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = sm_realloc(*p, c * size);
	if (n == NULL)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

static double
ms(int64_t ns)
{
	return (double)ns / 1e6;
}

int
sm_result_add_interval(struct sm_result *r, const char *name, bool response_time, double start_s,
		       double length_s, const struct sm_hdr *h)
{
	struct sm_result_series *s = NULL;
	unsigned i;
	size_t cap;
	int32_t b;

	for (i = 0; i < r->nseries; i++)
		if (strcmp(r->series[i].name, name) == 0 &&
		    r->series[i].response_time == response_time)
			s = &r->series[i];
	if (s == NULL) {
		if (r->nseries >= SM_RESULT_MAX_SERIES)
			return -ENOSPC;
		s = &r->series[r->nseries];
		memset(s, 0, sizeof(*s));
		if (sm_hdr_init(&s->total, h->lowest, h->highest, h->sig_figs) < 0)
			return -ENOMEM;
		r->nseries++;
		snprintf(s->name, sizeof(s->name), "%s", name);
		s->response_time = response_time;
	}
	if (s->n + 1 >= s->cap) {
		double **arr[] = { &s->t,      &s->len,	   &s->ops_s,	&s->mean_ms,
				   &s->p50_ms, &s->p99_ms, &s->p999_ms, &s->max_ms };
		unsigned nc = s->cap ? s->cap * 2 : 64;

		for (i = 0; i < SM_ARRAY_SIZE(arr); i++) {
			double *p = sm_realloc(*arr[i], nc * sizeof(double));

			if (p == NULL)
				return -ENOMEM;
			*arr[i] = p;
		}
		{
			uint32_t *o = sm_realloc(s->off, (nc + 1) * sizeof(uint32_t));

			if (o == NULL)
				return -ENOMEM;
			s->off = o;
		}
		s->cap = nc;
	}
	if (s->n == 0)
		s->off[0] = 0;
	s->t[s->n] = start_s;
	s->len[s->n] = length_s;
	s->ops_s[s->n] = length_s > 0 ? (double)h->total_count / length_s : 0;
	s->mean_ms[s->n] = sm_hdr_mean(h) / 1e6;
	s->p50_ms[s->n] = ms(sm_hdr_value_at_percentile(h, 50));
	s->p99_ms[s->n] = ms(sm_hdr_value_at_percentile(h, 99));
	s->p999_ms[s->n] = ms(sm_hdr_value_at_percentile(h, 99.9));
	s->max_ms[s->n] = ms(sm_hdr_max(h));
	for (b = 0; b < h->counts_len; b++) {
		if (h->counts[b] == 0)
			continue;
		cap = s->nb_cap;
		if (grow((void **)&s->val, &cap, s->nb + 1, sizeof(int64_t)) < 0)
			return -ENOMEM;
		cap = s->nb_cap;
		if (grow((void **)&s->cnt, &cap, s->nb + 1, sizeof(int64_t)) < 0)
			return -ENOMEM;
		s->nb_cap = cap;
		s->val[s->nb] = sm_hdr_value_at_index(h, b);
		s->cnt[s->nb++] = h->counts[b];
	}
	s->off[++s->n] = (uint32_t)s->nb;
	sm_hdr_add(&s->total, h);
	return 0;
}

/* Remove the metrics derived from series @series, keeping the others' order. */
static void
drop_metrics_of(struct sm_result *r, int series)
{
	unsigned i, k = 0;

	for (i = 0; i < r->nmetric; i++) {
		if (r->metric[i].series == series ||
		    (r->metric[i].nsamples > 0 && strstr(r->metric[i].name, " (response time) "))) {
			sm_free(r->metric[i].samples);
			continue;
		}
		r->metric[k++] = r->metric[i];
	}
	r->nmetric = k;
}

int
sm_result_derive(struct sm_result *r)
{
	unsigned i, k;
	static const char *const names[] = { "op/s", "mean", "p50", "p99", "p99.9", "max" };

	for (i = 0; i < r->nseries; i++) {
		struct sm_result_series *s = &r->series[i];
		double *src[] = {
			s->ops_s, s->mean_ms, s->p50_ms, s->p99_ms, s->p999_ms, s->max_ms
		};
		static const double pct[] = { -1, -1, 50, 99, 99.9, 100 };
		char name[80];

		if (s->n == 0)
			continue;
		/* service time always; response time only when a rate makes it differ */
		if (s->response_time && !sm_result_rated(r)) {
			drop_metrics_of(r, (int)i); /* derived before the JSON said so */
			continue;
		}
		for (k = 0; k < SM_ARRAY_SIZE(names); k++) {
			struct sm_result_metric *m;
			double sum = 0;
			unsigned j;

			bprintf(name, sizeof(name), "%s%s %s", s->name,
				s->response_time ? " (response time)" : "", names[k]);
			m = metric_add(r, name, k == 0 ? "op/s" : "ms", k == 0, 0);
			if (m == NULL)
				return 0;
			sm_free(m->samples);
			m->samples = sm_malloc(s->n * sizeof(double));
			if (m->samples == NULL)
				return -ENOMEM;
			for (j = 0; j < s->n; j++)
				sum += (m->samples[j] = src[k][j]);
			m->nsamples = s->n;
			m->series = pct[k] >= 0 ? (int)i : -1;
			m->pct = pct[k];
			/* a percentile's figure is the whole run's, not a mean of intervals' */
			m->value = m->series >= 0
					   ? ms(sm_hdr_value_at_percentile(&s->total, pct[k]))
				   : k == 1 ? sm_hdr_mean(&s->total) / 1e6
					    : sum / s->n;
		}
	}
	return 0;
}

struct log_ctx {
	struct sm_result *r;
	double first;
	bool have_first;
	int ret;
};

static int
log_cb(const char *tag, double start_s, double length_s, const struct sm_hdr *h, void *arg)
{
	struct log_ctx *c = arg;
	char name[48];
	bool rt = false;
	size_t l;

	if (!c->have_first) {
		c->first = start_s;
		c->have_first = true;
	}
	bprintf(name, sizeof(name), "%s", tag != NULL && tag[0] ? tag : "all");
	l = strlen(name);
	if (l > 3 && (strcmp(name + l - 3, "-st") == 0 || strcmp(name + l - 3, "-rt") == 0)) {
		rt = name[l - 2] == 'r';
		name[l - 3] = 0;
	}
	return sm_result_add_interval(c->r, name, rt, start_s - c->first, length_s, h);
}

static void
stem_of(const char *path, char *out, size_t cap);

static void
label_of(struct sm_result *r, const char *path)
{
	if (r->label[0] == 0)
		stem_of(path, r->label, sizeof(r->label));
}

/* Keep @text as source @name of @r, for a report that adds revisions later. */
static int
keep_source(struct sm_result *r, const char *name, const char *text, size_t len)
{
	struct sm_result_source *src;

	if (r->nsrc >= SM_RESULT_MAX_SOURCES)
		return 0; /* the report still works; only re-reading it would miss a file */
	src = &r->src[r->nsrc];
	src->text = sm_malloc(len + 1);
	if (src->text == NULL)
		return -ENOMEM;
	memcpy(src->text, text, len);
	src->text[len] = 0;
	src->len = len;
	snprintf(src->name, sizeof(src->name), "%s", name);
	r->nsrc++;
	return 0;
}

int
sm_result_read_text(struct sm_result *r, const char *name, const char *text, size_t len, char *err,
		    size_t errlen)
{
	char e2[200];
	size_t i = 0;
	int ret;

	/* text ends at a NUL, for jsmn as for the report that carries it (no NUL in HTML) */
	len = strnlen(text, len);
	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
		i++;
	if (i < len && (text[i] == '#' || text[i] == 'T' || (text[i] >= '0' && text[i] <= '9'))) {
		struct log_ctx lc = { .r = r };
		FILE *f;

		if (r->kind == SM_RESULT_NONE)
			r->kind = SM_RESULT_STRESS;
		else if (r->kind != SM_RESULT_STRESS) {
			bprintf(err, errlen, "%s: an HDR log belongs with a stress result", name);
			return -EINVAL;
		}
		label_of(r, name);
		f = fmemopen((void *)(uintptr_t)text, len, "r");
		if (f == NULL)
			return -ENOMEM;
		ret = sm_hdr_log_read(f, log_cb, &lc, e2, sizeof(e2));
		fclose(f);
		if (ret < 0) {
			bprintf(err, errlen, "%s: %s", name,
				ret == -ENOTSUP ? "a pre-V2 HdrHistogram encoding" : e2);
			return ret;
		}
		if (r->nseries == 0) {
			bprintf(err, errlen, "%s: an HDR log without intervals", name);
			return -EINVAL;
		}
		ret = sm_result_derive(r);
		return ret < 0 ? ret : keep_source(r, name, text, len);
	}
	if (i == len || text[i] != '{') {
		bprintf(err, errlen, "%s: neither a JSON result nor an HDR interval log", name);
		return -EINVAL;
	}
	label_of(r, name);
	ret = sm_result_read_json(r, r->label, text, len, e2, sizeof(e2));
	if (ret < 0) {
		bprintf(err, errlen, "%s: %s", name, e2);
		return ret;
	}
	if (r->nseries > 0)
		ret = sm_result_derive(r); /* the log came first: its rt metrics need the rate */
	return ret < 0 ? ret : keep_source(r, name, text, len);
}

int
sm_result_read(struct sm_result *r, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, got;
	int ret;

	if (f == NULL) {
		ret = -errno;
		bprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret == -ENOENT ? -ENOENT : -EIO;
	}
	for (;;) {
		if (grow((void **)&text, &cap, len + 65536, 1) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
		if (len > MAX_FILE) {
			bprintf(err, errlen, "%s: over %u MiB, not a result of ours", path,
				MAX_FILE >> 20);
			ret = -EINVAL;
			goto out;
		}
	}
	if (ferror(f)) {
		bprintf(err, errlen, "%s: read error", path);
		ret = -EIO;
		goto out;
	}
	ret = sm_result_read_text(r, path, text, len, err, errlen);
out:
	sm_free(text);
	fclose(f);
	return ret;
}

/* @path's name less directory and extension into @out. */
static void
stem_of(const char *path, char *out, size_t cap)
{
	const char *b = strrchr(path, '/'), *dot;

	b = b != NULL ? b + 1 : path;
	dot = strrchr(b, '.');
	snprintf(out, cap, "%.*s", (int)(dot && dot != b ? dot - b : (long)strlen(b)), b);
}

int
sm_result_load_args(struct sm_result *runs, unsigned max, char *const *args, unsigned nargs,
		    char *err, size_t errlen)
{
	char prev[96] = "", stem[96], path[4096];
	unsigned i, n = 0;
	int ret;

	for (i = 0; i < max; i++)
		sm_result_init(&runs[i]);
	for (i = 0; i < nargs; i++) {
		const char *a = args[i], *comma;
		bool joined = strchr(a, ',') != NULL;

		stem_of(a, stem, sizeof(stem));
		if (n == 0 || joined || prev[0] == 0 || strcmp(stem, prev) != 0) {
			if (n == max) {
				bprintf(err, errlen, "more than %u runs", max);
				return -E2BIG;
			}
			n++;
		}
		snprintf(prev, sizeof(prev), "%s", joined ? "" : stem);
		do {
			comma = strchr(a, ',');
			snprintf(path, sizeof(path), "%.*s",
				 (int)(comma ? comma - a : (long)strlen(a)), a);
			ret = sm_result_read(&runs[n - 1], path, err, errlen);
			if (ret < 0)
				return ret;
			a = comma ? comma + 1 : NULL;
		} while (a != NULL && *a);
	}
	/*
	 * A stress JSON alone has totals only: take the HDR log of the same
	 * name beside it (-log json=a.json hdrfile=a.hdr), so that "compare
	 * a.json b.json" has its per-interval samples.
	 */
	for (i = 0; i < n; i++) {
		struct sm_result *r = &runs[i];
		size_t l = r->nsrc ? strlen(r->src[0].name) : 0;

		if (r->kind != SM_RESULT_STRESS || r->nseries > 0 || l < 5 ||
		    strcmp(r->src[0].name + l - 5, ".json") != 0)
			continue;
		bprintf(path, sizeof(path), "%.*s.hdr", (int)(l - 5), r->src[0].name);
		if (access(path, R_OK) == 0 && (ret = sm_result_read(r, path, err, errlen)) < 0)
			return ret;
	}
	return (int)n;
}

bool
sm_result_rated(const struct sm_result *r)
{
	unsigned k;

	for (k = 0; k < r->nsettings; k++)
		if (strcmp(r->settings[k].key, "rate.kind") == 0)
			return strcmp(r->settings[k].val, "none") != 0;
	return true;
}

const struct sm_result_metric *
sm_result_metric_find(const struct sm_result *r, const char *name)
{
	unsigned i;

	for (i = 0; i < r->nmetric; i++)
		if (strcmp(r->metric[i].name, name) == 0)
			return &r->metric[i];
	return NULL;
}

void
sm_result_init(struct sm_result *r)
{
	memset(r, 0, sizeof(*r));
}

void
sm_result_fini(struct sm_result *r)
{
	unsigned i;

	for (i = 0; i < r->nmetric; i++)
		sm_free(r->metric[i].samples);
	for (i = 0; i < r->nsrc; i++)
		sm_free(r->src[i].text);
	for (i = 0; i < r->nseries; i++) {
		struct sm_result_series *s = &r->series[i];

		sm_free(s->t);
		sm_free(s->len);
		sm_free(s->ops_s);
		sm_free(s->mean_ms);
		sm_free(s->p50_ms);
		sm_free(s->p99_ms);
		sm_free(s->p999_ms);
		sm_free(s->max_ms);
		sm_free(s->off);
		sm_free(s->val);
		sm_free(s->cnt);
		sm_hdr_fini(&s->total);
	}
	memset(r, 0, sizeof(*r));
}
