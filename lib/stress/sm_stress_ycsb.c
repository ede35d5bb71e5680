/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * YCSB's core workloads on the stress engine (sm_stress_ycsb.h): the
 * command line and properties, YCSB's generators, the CQL requests of
 * YCSB's cassandra-cql binding (CassandraCQLClient.java) and YCSB's report.
 *
 * The operations are the engine's user op slots: READ, UPDATE, INSERT,
 * SCAN and READ-MODIFY-WRITE, named as YCSB names them. Field values are a
 * function of the key and the field (as YCSB's dataintegrity=true makes
 * them), so every read and scan checks the fields it gets; an update
 * writes the same values again.
 */

#include "sm_stress_ycsb.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sm_mem.h"
#include "sm_stress_run_priv.h"

/* ---- YCSB's generators ---- */

int64_t
sm_ycsb_fnvhash64(int64_t v)
{
	uint64_t h = 0xCBF29CE484222325ull, val = (uint64_t)v;
	int64_t s;
	int i;

	for (i = 0; i < 8; i++) {
		h ^= val & 0xff;
		/* Java's >> on a long is arithmetic: the sign comes in from the top */
		val = (uint64_t)((int64_t)val >> 8);
		h *= 1099511628211ull;
	}
	s = (int64_t)h;
	return s < 0 && s != INT64_MIN ? -s : s; /* Math.abs(Long.MIN_VALUE) stays negative */
}

double
sm_ycsb_zeta(int64_t st, int64_t n, double theta, double initial)
{
	double sum = initial;
	int64_t i;

	for (i = st; i < n; i++)
		sum += 1 / pow((double)(i + 1), theta);
	return sum;
}

void
sm_ycsb_zipf_init(struct sm_ycsb_zipf *z, int64_t min, int64_t max, double theta, double zetan)
{
	z->items = max - min + 1;
	z->base = min;
	z->theta = theta;
	z->zeta2theta = sm_ycsb_zeta(0, 2, theta, 0);
	z->alpha = 1.0 / (1.0 - theta);
	z->zetan = zetan > 0 ? zetan : sm_ycsb_zeta(0, z->items, theta, 0);
	z->countforzeta = z->items;
	z->eta = (1 - pow(2.0 / (double)z->items, 1 - theta)) / (1 - z->zeta2theta / z->zetan);
}

int64_t
sm_ycsb_zipf_next(struct sm_ycsb_zipf *z, struct sm_rand *r, int64_t itemcount)
{
	double u, uz;

	if (itemcount > z->countforzeta) {
		/* more items: zeta grows by the new terms; eta keeps YCSB's items */
		z->zetan = sm_ycsb_zeta(z->countforzeta, itemcount, z->theta, z->zetan);
		z->countforzeta = itemcount;
		z->eta = (1 - pow(2.0 / (double)z->items, 1 - z->theta)) /
			 (1 - z->zeta2theta / z->zetan);
	}
	u = sm_rand_double(r);
	uz = u * z->zetan;
	if (uz < 1.0)
		return z->base;
	if (uz < 1.0 + pow(0.5, z->theta))
		return z->base + 1;
	return z->base + (int64_t)((double)itemcount * pow(z->eta * u - z->eta + 1, z->alpha));
}

void
sm_ycsb_scrambled_init(struct sm_ycsb_zipf *z)
{
	sm_ycsb_zipf_init(z, 0, SM_YCSB_SCRAMBLED_ITEM_COUNT, SM_YCSB_ZIPFIAN_CONSTANT,
			  SM_YCSB_SCRAMBLED_ZETAN);
}

int64_t
sm_ycsb_scrambled_next(struct sm_ycsb_zipf *z, struct sm_rand *r, int64_t min, int64_t max)
{
	int64_t v = sm_ycsb_zipf_next(z, r, z->items);

	return min + sm_ycsb_fnvhash64(v) % (max - min + 1);
}

size_t
sm_ycsb_key_name(int64_t keynum, bool ordered, unsigned zeropadding, char *out, size_t cap)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRId64,
			 ordered ? keynum : sm_ycsb_fnvhash64(keynum));
	int fill = (int)zeropadding - n;

	return (size_t)snprintf(out, cap, "user%.*s%s", fill > 0 ? fill : 0,
				"0000000000000000000000000000000", digits);
}

/* ---- properties ---- */

enum ycsb_op { Y_READ, Y_UPDATE, Y_INSERT, Y_SCAN, Y_RMW, Y_NR };

static const char *const y_names[Y_NR] = { "READ", "UPDATE", "INSERT", "SCAN",
					    "READ-MODIFY-WRITE" };

enum ycsb_dist { YD_UNIFORM, YD_ZIPFIAN, YD_LATEST, YD_HOTSPOT, YD_SEQUENTIAL };

/* Inserts in flight a shard can acknowledge out of order. */
#define ACK_WINDOW 65536

struct ycsb_shard {
	int64_t next_insert;	/* this shard's next run-phase insert key */
	/*
	 * The highest key reads may choose: the load's last, then this
	 * shard's inserts as they are acknowledged in order (YCSB's
	 * AcknowledgedCounterGenerator): a read never asks for a key whose
	 * insert is still in flight.
	 */
	int64_t inserted_max;
	uint64_t acked;		/* this shard's inserts acknowledged in order */
	uint8_t *done;		/* [ACK_WINDOW]: completed, not yet in order */
	struct sm_ycsb_zipf zipf_latest, zipf_scan;
	uint64_t seq;		/* sequential chooser */
	uint64_t not_found[Y_NR];
};

struct sm_stress_ycsb {
	bool load, status;
	int64_t recordcount, operationcount, insertstart, insertcount;
	unsigned fieldcount, fieldlength, zeropadding, maxscanlength;
	bool fieldlen_uniform, readallfields, writeallfields, ordered, scan_zipfian;
	double prop[Y_NR];
	enum ycsb_dist dist;
	double hotset, hotopn;
	char table[64], keyspace[64];
	int read_cl, write_cl;
	bool dynamodb;		/* the dynamodb binding: Alternator */
	bool consistent_reads;	/* dynamodb.consistentReads */
	char primary_key[64];	/* dynamodb.primaryKey */
	struct sm_ycsb_zipf scrambled; /* read-only after setup */
	struct ycsb_shard *shards;
	unsigned nshards;
	char setup[3][512];
};

struct ycsb_worker {
	char key[48];
	size_t keylen;
	uint64_t kh; /* key_hash() of key */
	int64_t keynum;
	bool rmw_update; /* READ-MODIFY-WRITE: its read is done, the update in flight */
	struct sm_cql_value vals[SM_STRESS_PROFILE_MAX_BINDS];
	uint8_t *arena;
	size_t arena_len;
	char *json; /* an Alternator request */
	size_t json_cap;
};

struct prop {
	char *key, *value;
};

struct props {
	struct prop *p;
	unsigned n, cap;
};

static int
props_set(struct props *ps, const char *k, size_t kl, const char *v, size_t vl)
{
	unsigned i;
	char *key, *val;

	while (kl > 0 && isspace((unsigned char)k[kl - 1]))
		kl--;
	while (vl > 0 && isspace((unsigned char)*v))
		v++, vl--;
	while (vl > 0 && isspace((unsigned char)v[vl - 1]))
		vl--;
	key = sm_malloc(kl + 1);
	val = sm_malloc(vl + 1);
	if (key == NULL || val == NULL)
		goto nomem;
	memcpy(key, k, kl);
	key[kl] = '\0';
	memcpy(val, v, vl);
	val[vl] = '\0';
	for (i = 0; i < ps->n; i++)
		if (strcmp(ps->p[i].key, key) == 0) {
			sm_free(key);
			sm_free(ps->p[i].value);
			ps->p[i].value = val;
			return 0;
		}
	if (ps->n == ps->cap) {
		struct prop *np = sm_realloc(ps->p, (ps->cap ? ps->cap * 2 : 32) * sizeof(*np));

		if (np == NULL)
			goto nomem;
		ps->p = np;
		ps->cap = ps->cap ? ps->cap * 2 : 32;
	}
	ps->p[ps->n++] = (struct prop){ key, val };
	return 0;
nomem:
	sm_free(key);
	sm_free(val);
	return -ENOMEM;
}

static const char *
props_get(const struct props *ps, const char *key)
{
	unsigned i;

	for (i = 0; i < ps->n; i++)
		if (strcmp(ps->p[i].key, key) == 0)
			return ps->p[i].value;
	return NULL;
}

static void
props_free(struct props *ps)
{
	unsigned i;

	for (i = 0; i < ps->n; i++) {
		sm_free(ps->p[i].key);
		sm_free(ps->p[i].value);
	}
	sm_free(ps->p);
}

/* A Java properties file: key=value, key: value or key value; # and ! comments. */
static int
props_load(struct props *ps, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int ret = 0;

	if (f == NULL) {
		ret = -errno;
		snprintf(err, errlen, "-P %s: cannot read it: %s", path, strerror(-ret));
		return ret;
	}
	while (ret == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *k = line, *sep;
		size_t n = strlen(line);

		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		while (isspace((unsigned char)*k))
			k++;
		if (*k == '\0' || *k == '#' || *k == '!')
			continue;
		sep = k + strcspn(k, "=: \t");
		if (*sep == '\0') {
			ret = props_set(ps, k, strlen(k), "", 0);
			continue;
		}
		{
			char *v = sep;

			while (*v == ' ' || *v == '\t')
				v++;
			if (*v == '=' || *v == ':')
				v++;
			ret = props_set(ps, k, (size_t)(sep - k), v, strlen(v));
		}
	}
	fclose(f);
	return ret;
}

static int __attribute__((format(printf, 3, 4)))
yfail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int
prop_long(const struct props *ps, const char *key, int64_t def, int64_t min, int64_t *out,
	  char *err, size_t errlen)
{
	const char *v = props_get(ps, key);
	char *end;
	long long x;

	if (v == NULL || *v == '\0') {
		*out = def;
		return 0;
	}
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0' || x < min)
		return yfail(err, errlen, "property %s=%s: expected a whole number of at least %" PRId64,
			     key, v, min);
	*out = x;
	return 0;
}

static int
prop_double(const struct props *ps, const char *key, double def, double *out, char *err,
	    size_t errlen)
{
	const char *v = props_get(ps, key);
	char *end;

	if (v == NULL || *v == '\0') {
		*out = def;
		return 0;
	}
	*out = strtod(v, &end);
	if (*end != '\0' || !(*out >= 0) || !isfinite(*out))
		return yfail(err, errlen, "property %s=%s: expected a non-negative number", key, v);
	return 0;
}

static int
prop_bool(const struct props *ps, const char *key, bool def, bool *out, char *err, size_t errlen)
{
	const char *v = props_get(ps, key);

	if (v == NULL || *v == '\0')
		*out = def;
	else if (strcasecmp(v, "true") == 0)
		*out = true;
	else if (strcasecmp(v, "false") == 0)
		*out = false;
	else
		return yfail(err, errlen, "property %s=%s: expected true or false", key, v);
	return 0;
}

static int
cl_of(const char *key, const char *v, int *out, char *err, size_t errlen)
{
	static const char *const names[] = { "ANY",	     "ONE",	     "TWO",	"THREE",
					     "QUORUM",	     "ALL",	     "LOCAL_QUORUM",
					     "EACH_QUORUM",  "SERIAL",	     "LOCAL_SERIAL",
					     "LOCAL_ONE" };
	unsigned i;

	for (i = 0; i < SM_ARRAY_SIZE(names); i++)
		if (strcasecmp(v, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	return yfail(err, errlen, "property %s=%s: not a consistency level (ONE, QUORUM, ...)", key,
		     v);
}

/* The workload's properties (CoreWorkload's names and defaults). */
static int
apply_props(struct sm_stress_ycsb *y, const struct props *ps, char *err, size_t errlen)
{
	static const char *const pk[Y_NR] = { "readproportion", "updateproportion",
					      "insertproportion", "scanproportion",
					      "readmodifywriteproportion" };
	static const double pd[Y_NR] = { 0.95, 0.05, 0, 0, 0 };
	const char *v;
	int64_t x;
	unsigned i;
	int ret;

	if ((ret = prop_long(ps, "recordcount", 0, 0, &y->recordcount, err, errlen)) < 0 ||
	    (ret = prop_long(ps, "operationcount", 0, 0, &y->operationcount, err, errlen)) < 0 ||
	    (ret = prop_long(ps, "insertstart", 0, 0, &y->insertstart, err, errlen)) < 0)
		return ret;
	if (y->recordcount == 0 && props_get(ps, "recordcount") == NULL)
		y->recordcount = 1000; /* YCSB's Client default when no file gives one */
	if ((ret = prop_long(ps, "insertcount", y->recordcount - y->insertstart, 0, &y->insertcount,
			     err, errlen)) < 0)
		return ret;
	if ((ret = prop_long(ps, "fieldcount", 10, 1, &x, err, errlen)) < 0)
		return ret;
	if (x > SM_STRESS_PROFILE_MAX_BINDS - 2)
		return yfail(err, errlen, "fieldcount=%" PRId64 ": at most %d fields", x,
			     SM_STRESS_PROFILE_MAX_BINDS - 2);
	y->fieldcount = (unsigned)x;
	if ((ret = prop_long(ps, "fieldlength", 100, 1, &x, err, errlen)) < 0)
		return ret;
	if (x > 65536)
		return yfail(err, errlen, "fieldlength=%" PRId64 ": at most 65536 bytes", x);
	y->fieldlength = (unsigned)x;
	v = props_get(ps, "fieldlengthdistribution");
	if (v != NULL && strcasecmp(v, "uniform") == 0)
		y->fieldlen_uniform = true;
	else if (v != NULL && strcasecmp(v, "constant") != 0)
		return yfail(err, errlen,
			     "fieldlengthdistribution=%s: shardmark ycsb has constant and uniform "
			     "(zipfian and histogram are not supported)",
			     v);
	if ((ret = prop_bool(ps, "readallfields", true, &y->readallfields, err, errlen)) < 0 ||
	    (ret = prop_bool(ps, "writeallfields", false, &y->writeallfields, err, errlen)) < 0)
		return ret;
	if (!y->readallfields)
		return yfail(err, errlen,
			     "readallfields=false is not supported by shardmark ycsb yet: every "
			     "read reads all fields (readallfields=true)");
	for (i = 0; i < Y_NR; i++)
		if ((ret = prop_double(ps, pk[i], pd[i], &y->prop[i], err, errlen)) < 0)
			return ret;
	v = props_get(ps, "requestdistribution");
	if (v == NULL || strcasecmp(v, "uniform") == 0)
		y->dist = YD_UNIFORM;
	else if (strcasecmp(v, "zipfian") == 0)
		y->dist = YD_ZIPFIAN;
	else if (strcasecmp(v, "latest") == 0)
		y->dist = YD_LATEST;
	else if (strcasecmp(v, "hotspot") == 0)
		y->dist = YD_HOTSPOT;
	else if (strcasecmp(v, "sequential") == 0)
		y->dist = YD_SEQUENTIAL;
	else
		return yfail(err, errlen,
			     "requestdistribution=%s: use uniform, zipfian, latest, hotspot or "
			     "sequential",
			     v);
	if ((ret = prop_long(ps, "maxscanlength", 1000, 1, &x, err, errlen)) < 0)
		return ret;
	y->maxscanlength = (unsigned)SM_MIN(x, (int64_t)100000);
	v = props_get(ps, "scanlengthdistribution");
	if (v != NULL && strcasecmp(v, "zipfian") == 0)
		y->scan_zipfian = true;
	else if (v != NULL && strcasecmp(v, "uniform") != 0)
		return yfail(err, errlen, "scanlengthdistribution=%s: use uniform or zipfian", v);
	v = props_get(ps, "insertorder");
	if (v != NULL && strcasecmp(v, "ordered") == 0)
		y->ordered = true;
	else if (v != NULL && strcasecmp(v, "hashed") != 0)
		return yfail(err, errlen, "insertorder=%s: use hashed or ordered", v);
	if ((ret = prop_long(ps, "zeropadding", 1, 1, &x, err, errlen)) < 0)
		return ret;
	y->zeropadding = (unsigned)SM_MIN(x, (int64_t)30);
	if ((ret = prop_double(ps, "hotspotdatafraction", 0.2, &y->hotset, err, errlen)) < 0 ||
	    (ret = prop_double(ps, "hotspotopnfraction", 0.8, &y->hotopn, err, errlen)) < 0)
		return ret;
	if (y->hotset > 1 || y->hotopn > 1)
		return yfail(err, errlen, "hotspotdatafraction and hotspotopnfraction are fractions "
					  "from 0 to 1");
	snprintf(y->table, sizeof(y->table), "%s",
		 props_get(ps, "table") ? props_get(ps, "table") : "usertable");
	snprintf(y->keyspace, sizeof(y->keyspace), "%s",
		 props_get(ps, "cassandra.keyspace") ? props_get(ps, "cassandra.keyspace") : "ycsb");
	for (i = 0; y->table[i]; i++)
		if (!isalnum((unsigned char)y->table[i]) && y->table[i] != '_')
			return yfail(err, errlen, "table=%s: a CQL name of letters, digits and _",
				     y->table);
	for (i = 0; y->keyspace[i]; i++)
		if (!isalnum((unsigned char)y->keyspace[i]) && y->keyspace[i] != '_')
			return yfail(err, errlen,
				     "cassandra.keyspace=%s: a CQL name of letters, digits and _",
				     y->keyspace);
	y->read_cl = y->write_cl = 1; /* the binding's default: ONE */
	if ((v = props_get(ps, "cassandra.readconsistencylevel")) != NULL &&
	    (ret = cl_of("cassandra.readconsistencylevel", v, &y->read_cl, err, errlen)) < 0)
		return ret;
	if ((v = props_get(ps, "cassandra.writeconsistencylevel")) != NULL &&
	    (ret = cl_of("cassandra.writeconsistencylevel", v, &y->write_cl, err, errlen)) < 0)
		return ret;
	if (y->insertcount <= 0 && y->load)
		return yfail(err, errlen, "load: recordcount - insertstart (or insertcount) is 0: "
					  "nothing to insert");
	return 0;
}

void
sm_stress_ycsb_usage(FILE *f)
{
	fputs("Usage: shardmark [shardmark options] ycsb load|run [cassandra-cql] -P FILE "
	      "[-P FILE...]\n"
	      "         [-p key=value...] [-threads N] [-target OPS] [-s] [-shards N]\n\n"
	      "YCSB's core workloads (config/ycsb/workloada .. workloadf) against CQL, with\n"
	      "YCSB's command line, properties and output. -p overrides the files. Connection\n"
	      "properties: hosts (default 127.0.0.1), port (9042), cassandra.keyspace (ycsb),\n"
	      "cassandra.readconsistencylevel and cassandra.writeconsistencylevel (ONE).\n"
	      "shardmark.json=FILE writes the stress engine's JSON report too.\n"
	      "The keyspace and the table (y_id varchar PRIMARY KEY, field0.. varchar) are\n"
	      "created when missing.\n",
	      f);
}

/*
 * The dynamodb binding's properties (DynamoDBClient.java):
 * dynamodb.endpoint (http://host:port), dynamodb.primaryKey (the hash key
 * attribute), dynamodb.consistentReads. Requests are not signed
 * (dynamodb.awsCredentialsFile is read by nobody): Alternator's default.
 */
static int
dynamodb_props(struct sm_stress_ycsb *y, struct sm_stress_settings *s, const struct props *ps,
	       char *err, size_t errlen)
{
	const char *v = props_get(ps, "dynamodb.endpoint"), *host, *colon;
	char hostbuf[128];
	size_t n;
	int ret;

	s->mode.api = SM_STRESS_API_ALTERNATOR;
	snprintf(y->primary_key, sizeof(y->primary_key), "%s",
		 props_get(ps, "dynamodb.primaryKey") ? props_get(ps, "dynamodb.primaryKey")
						      : "firstname");
	for (n = 0; y->primary_key[n]; n++)
		if (!isalnum((unsigned char)y->primary_key[n]) && y->primary_key[n] != '_')
			return yfail(err, errlen, "dynamodb.primaryKey=%s: letters, digits and _",
				     y->primary_key);
	if ((ret = prop_bool(ps, "dynamodb.consistentReads", false, &y->consistent_reads, err,
			     errlen)) < 0)
		return ret;
	if (v == NULL)
		return 0; /* -node's default host, -port alternator='s default port */
	host = strncmp(v, "http://", 7) == 0 ? v + 7 : v;
	if (strncmp(v, "https://", 8) == 0)
		return yfail(err, errlen, "dynamodb.endpoint=%s: https is not supported: use http://",
			     v);
	colon = strrchr(host, ':');
	n = colon ? (size_t)(colon - host) : strcspn(host, "/");
	if (n == 0 || n >= sizeof(hostbuf))
		return yfail(err, errlen, "dynamodb.endpoint=%s: write http://host:port", v);
	memcpy(hostbuf, host, n);
	hostbuf[n] = '\0';
	if (colon != NULL) {
		long p = strtol(colon + 1, NULL, 10);

		if (p < 1 || p > 65535)
			return yfail(err, errlen, "dynamodb.endpoint=%s: a TCP port after the host", v);
		s->alternator_port = (uint16_t)p;
	}
	if ((ret = sm_stress_settings_nodes(s, hostbuf, err, errlen)) < 0)
		return ret;
	return 0;
}

int
sm_stress_ycsb_parse(int argc, char **argv, struct sm_stress_settings *s, char *err,
		     size_t errlen)
{
	static char *base_argv[] = { (char *)(uintptr_t) "write", (char *)(uintptr_t) "n=1",
				     (char *)(uintptr_t) "no-warmup" };
	struct props files = { 0 }, cmd = { 0 };
	struct sm_stress_ycsb *y = NULL;
	int64_t threads = 1, target = 0, shards = 0;
	const char *v;
	unsigned i;
	int a = 1, ret;

	if (argc < 1 || (strcmp(argv[0], "load") != 0 && strcmp(argv[0], "run") != 0))
		return yfail(err, errlen,
			     "give the phase first: shardmark ycsb load|run [cassandra-cql] -P "
			     "config/ycsb/workloada (see shardmark ycsb --help)");
	ret = sm_stress_settings_parse(3, base_argv, s, err, errlen);
	if (ret < 0)
		return ret;
	y = sm_calloc(1, sizeof(*y));
	if (y == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	s->ycsb = y;
	y->load = strcmp(argv[0], "load") == 0;
	if (a < argc && argv[a][0] != '-') {
		if (strcmp(argv[a], "dynamodb") == 0) {
			y->dynamodb = true;
		} else if (strcmp(argv[a], "cassandra-cql") != 0 &&
			   strcmp(argv[a], "cassandra2-cql") != 0 &&
			   strcmp(argv[a], "scylla") != 0 && strcmp(argv[a], "cassandra") != 0) {
			ret = yfail(err, errlen,
				    "database '%s': shardmark ycsb speaks CQL (cassandra-cql, "
				    "scylla) and DynamoDB's API to Alternator (dynamodb)",
				    argv[a]);
			goto fail;
		}
		a++;
	}
	for (; a < argc; a++) {
		const char *o = argv[a], *next = a + 1 < argc ? argv[a + 1] : NULL;
		char *end;

		if (strcmp(o, "-s") == 0) {
			y->status = true;
		} else if (strcmp(o, "-t") == 0 || strcmp(o, "-load") == 0) {
			y->load = strcmp(o, "-load") == 0;
		} else if (next == NULL && (strcmp(o, "-P") == 0 || strcmp(o, "-p") == 0 ||
					    strcmp(o, "-threads") == 0 ||
					    strcmp(o, "-target") == 0 ||
					    strcmp(o, "-shards") == 0)) {
			ret = yfail(err, errlen, "%s needs a value", o);
			goto fail;
		} else if (strcmp(o, "-P") == 0) {
			if ((ret = props_load(&files, next, err, errlen)) < 0)
				goto fail;
			a++;
		} else if (strcmp(o, "-p") == 0) {
			const char *eq = strchr(next, '=');

			if (eq == NULL || eq == next) {
				ret = yfail(err, errlen, "-p %s: write -p key=value", next);
				goto fail;
			}
			if ((ret = props_set(&cmd, next, (size_t)(eq - next), eq + 1,
					     strlen(eq + 1))) < 0)
				goto fail;
			a++;
		} else if (strcmp(o, "-threads") == 0 || strcmp(o, "-target") == 0 ||
			   strcmp(o, "-shards") == 0) {
			long long x = strtoll(next, &end, 10);

			if (*end != '\0' || x < (strcmp(o, "-target") == 0 ? 0 : 1) ||
			    x > 1000000) {
				ret = yfail(err, errlen, "%s %s: expected a positive number", o, next);
				goto fail;
			}
			*(strcmp(o, "-threads") == 0	? &threads
			  : strcmp(o, "-target") == 0 ? &target
						      : &shards) = x;
			a++;
		} else {
			ret = yfail(err, errlen,
				    "unknown option '%s' (YCSB's: -P FILE, -p key=value, -threads N, "
				    "-target OPS, -s, -load, -t; and -shards N)",
				    o);
			goto fail;
		}
	}
	/* -p overrides the files, whatever the order (YCSB's Client) */
	for (i = 0; i < cmd.n; i++)
		if ((ret = props_set(&files, cmd.p[i].key, strlen(cmd.p[i].key), cmd.p[i].value,
				     strlen(cmd.p[i].value))) < 0)
			goto fail;
	if ((ret = apply_props(y, &files, err, errlen)) < 0)
		goto fail;
	if ((v = props_get(&files, "threadcount")) != NULL && threads == 1)
		threads = atoll(v) > 0 ? atoll(v) : 1;
	if ((v = props_get(&files, "target")) != NULL && target == 0)
		target = atoll(v) > 0 ? atoll(v) : 0;
	/* what the engine runs */
	memset(s->ratio, 0, sizeof(s->ratio));
	for (i = 0; i < Y_NR; i++) {
		sm_stress_user_op_name_set(i, y_names[i]);
		s->ratio[SM_STRESS_OP_USER0 + i] = y->load ? (i == Y_INSERT) : y->prop[i];
	}
	for (i = 0; i < Y_NR && s->ratio[SM_STRESS_OP_USER0 + i] <= 0; i++)
		;
	if (i == Y_NR) {
		ret = yfail(err, errlen, "run: every proportion is 0: give readproportion, "
					 "updateproportion, ... (or -P config/ycsb/workloada)");
		goto fail;
	}
	s->cmd = SM_STRESS_CMD_YCSB;
	s->wl = &sm_stress_ycsb_ops;
	s->n_ops = (uint64_t)(y->load ? y->insertcount : y->operationcount);
	s->duration_ns = 0;
	if (s->n_ops == 0) {
		int64_t secs;

		if ((ret = prop_long(&files, "maxexecutiontime", 0, 0, &secs, err, errlen)) < 0)
			goto fail;
		if (secs == 0) {
			ret = yfail(err, errlen,
				    "operationcount=0 runs until maxexecutiontime=SECONDS: give one "
				    "of them");
			goto fail;
		}
		s->duration_ns = (uint64_t)secs * 1000000000ull;
	}
	s->warmup_ops = 0;
	s->no_warmup = true;
	s->rate.threads = (unsigned)threads;
	s->warmup_threads = (unsigned)threads;
	s->rate.ops_per_s = (uint64_t)target;
	s->rate.kind = target > 0 ? SM_STRESS_RATE_THROTTLE : SM_STRESS_RATE_NONE;
	s->shards = (unsigned)shards;
	s->errors.ignore = true; /* YCSB counts failures (Return=ERROR) and goes on */
	s->errors.retries = 0;
	s->log.no_settings = true;
	s->log.no_summary = true;
	if ((ret = prop_long(&files, "status.interval", 10, 1, &shards, err, errlen)) < 0)
		goto fail;
	s->log.interval_ms = (unsigned)shards * 1000u;
	s->pop.dist = (struct sm_stress_dist){ .kind = SM_STRESS_DIST_SEQ,
					       .min = (uint64_t)y->insertstart,
					       .max = (uint64_t)(y->insertstart +
								 SM_MAX(y->insertcount, (int64_t)2) -
								 1) };
	s->pop.wrap = !y->load;
	s->pop.set_by_user = true;
	sm_free(s->schema.keyspace);
	s->schema.keyspace = sm_strdup(y->keyspace);
	if (s->schema.keyspace == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	if ((v = props_get(&files, "port")) != NULL) {
		long long p = atoll(v);

		if (p < 1 || p > 65535) {
			ret = yfail(err, errlen, "port=%s: a TCP port", v);
			goto fail;
		}
		s->native_port = (uint16_t)p;
	}
	if ((v = props_get(&files, "hosts")) != NULL &&
	    (ret = sm_stress_settings_nodes(s, v, err, errlen)) < 0)
		goto fail;
	if (y->dynamodb && (ret = dynamodb_props(y, s, &files, err, errlen)) < 0)
		goto fail;
	if ((v = props_get(&files, "shardmark.json")) != NULL &&
	    (s->log.json = sm_strdup(v)) == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	sm_ycsb_scrambled_init(&y->scrambled);
	props_free(&files);
	props_free(&cmd);
	return 0;
fail:
	props_free(&files);
	props_free(&cmd);
	sm_stress_settings_free(s);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return ret;
}

void
sm_stress_ycsb_free(struct sm_stress_settings *s)
{
	if (s->ycsb == NULL)
		return;
	/* the shards' state is set up by the run, which knows their count */
	for (unsigned i = 0; s->ycsb->shards != NULL && i < s->ycsb->nshards; i++)
		sm_free(s->ycsb->shards[i].done);
	sm_free(s->ycsb->shards);
	sm_free(s->ycsb);
	s->ycsb = NULL;
}

/* ---- on the engine ---- */

static struct sm_stress_ycsb *
Y(void)
{
	return sx->s.ycsb;
}

static enum ycsb_op
yop(enum sm_stress_op op)
{
	return (enum ycsb_op)(op - SM_STRESS_OP_USER0);
}

static void
ycsb_prepare(void)
{
	struct sm_stress_ycsb *y = Y();
	char *t;
	size_t off;
	unsigned f, k, s;
	bool have_read = false, have_update = false;

	y->shards = sm_calloc(sx->nshards, sizeof(*y->shards));
	y->nshards = y->shards != NULL ? sx->nshards : 0;
	for (s = 0; y->shards != NULL && s < sx->nshards; s++) {
		struct ycsb_shard *ys = &y->shards[s];

		/* inserts of the run phase continue after the loaded keys, interleaved */
		ys->next_insert = y->insertstart + y->insertcount + s;
		ys->inserted_max = y->insertstart + y->insertcount - 1;
		ys->done = sm_calloc(ACK_WINDOW, 1);
		sm_ycsb_zipf_init(&ys->zipf_latest, 0, SM_MAX(y->insertcount, (int64_t)1) - 1,
				  SM_YCSB_ZIPFIAN_CONSTANT,
				  y->dist == YD_LATEST ? 0 : 1); /* zeta only when used */
		sm_ycsb_zipf_init(&ys->zipf_scan, 1, y->maxscanlength, SM_YCSB_ZIPFIAN_CONSTANT,
				  y->scan_zipfian ? 0 : 1);
	}
	/* CassandraCQLClient's statements */
	t = sx->stmt_text[SM_STRESS_OP_USER0 + Y_READ];
	snprintf(t, 1024, "SELECT * FROM %s WHERE y_id = ? LIMIT 1", y->table);
	t = sx->stmt_text[SM_STRESS_OP_USER0 + Y_SCAN];
	/*
	 * The binding's scan is token(y_id) >= token(?); the same range with
	 * the key's token computed here (Murmur3) is token(y_id) >= ?, which
	 * servers without token() of a bind marker (shardmark serve) take too.
	 */
	snprintf(t, 1024, "SELECT * FROM %s WHERE token(y_id) >= ? LIMIT ?", y->table);
	t = sx->stmt_text[SM_STRESS_OP_USER0 + Y_INSERT];
	off = (size_t)snprintf(t, 1024, "INSERT INTO %s (y_id", y->table);
	for (f = 0; f < y->fieldcount; f++)
		off += (size_t)snprintf(t + off, 1024 - off, ", field%u", f);
	off += (size_t)snprintf(t + off, 1024 - off, ") VALUES (?");
	for (f = 0; f < y->fieldcount; f++)
		off += (size_t)snprintf(t + off, 1024 - off, ", ?");
	snprintf(t + off, 1024 - off, ")");
	/* one UPDATE for any set of fields: the others are bound unset (protocol v4) */
	t = sx->stmt_text[SM_STRESS_OP_USER0 + Y_UPDATE];
	off = (size_t)snprintf(t, 1024, "UPDATE %s SET ", y->table);
	for (f = 0; f < y->fieldcount; f++)
		off += (size_t)snprintf(t + off, 1024 - off, "%sfield%u = ?", f ? ", " : "", f);
	snprintf(t + off, 1024 - off, " WHERE y_id = ?");
	/* READ-MODIFY-WRITE runs the read and the update: both prepared */
	snprintf(sx->stmt_text[SM_STRESS_OP_USER0 + Y_RMW], 1024, "%s",
		 sx->stmt_text[SM_STRESS_OP_USER0 + Y_READ]);
	for (k = 0; k < sx->nprep; k++) {
		have_read |= sx->prep[k] == SM_STRESS_OP_USER0 + Y_READ;
		have_update |= sx->prep[k] == SM_STRESS_OP_USER0 + Y_UPDATE;
	}
	for (k = 0; k < sx->nops; k++)
		if (sx->ops[k] == SM_STRESS_OP_USER0 + Y_RMW) {
			if (!have_read)
				sx->prep[sx->nprep++] = SM_STRESS_OP_USER0 + Y_READ;
			if (!have_update)
				sx->prep[sx->nprep++] = SM_STRESS_OP_USER0 + Y_UPDATE;
		}
	snprintf(y->setup[0], sizeof(y->setup[0]),
		 "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': "
		 "'SimpleStrategy', 'replication_factor': 1}",
		 y->keyspace);
	snprintf(y->setup[1], sizeof(y->setup[1]), "USE %s", y->keyspace);
	off = (size_t)snprintf(y->setup[2], sizeof(y->setup[2]),
			       "CREATE TABLE IF NOT EXISTS %s (y_id varchar PRIMARY KEY", y->table);
	for (f = 0; f < y->fieldcount; f++)
		off += (size_t)snprintf(y->setup[2] + off, sizeof(y->setup[2]) - off,
					", field%u varchar", f);
	snprintf(y->setup[2] + off, sizeof(y->setup[2]) - off, ")");
}

static const char *
ycsb_setup_statement(unsigned i)
{
	return i < 3 ? Y()->setup[i] : NULL;
}

static int
ycsb_worker_init(struct sm_stress_worker *w)
{
	struct ycsb_worker *u;

	if (Y()->shards == NULL)
		return -ENOMEM; /* ycsb_prepare() could not set up the shards */
	u = sm_calloc(1, sizeof(*u));
	if (u == NULL)
		return -ENOMEM;
	w->user = u;
	u->arena_len = (size_t)Y()->fieldcount * Y()->fieldlength + 64;
	u->arena = sm_malloc(u->arena_len);
	/* a field's characters escape to at most 6 bytes in JSON (\u00XX) */
	u->json_cap = Y()->dynamodb ? (size_t)Y()->fieldcount * (Y()->fieldlength * 6 + 64) + 512
				    : 0;
	u->json = u->json_cap ? sm_malloc(u->json_cap) : NULL;
	return u->arena != NULL && (u->json_cap == 0 || u->json != NULL) ? 0 : -ENOMEM;
}

static void
ycsb_worker_fini(struct sm_stress_worker *w)
{
	struct ycsb_worker *u = w->user;

	if (u == NULL)
		return;
	sm_free(u->arena);
	sm_free(u->json);
	sm_free(u);
	w->user = NULL;
}

/* CoreWorkload.nextKeynum(): the chooser's key, never past the last one inserted. */
static int64_t
choose_key(struct sm_stress_shard *sh, struct ycsb_shard *ys)
{
	struct sm_stress_ycsb *y = Y();
	int64_t lo = y->insertstart, hi = ys->inserted_max, k;

	if (hi < lo)
		return lo;
	switch (y->dist) {
	case YD_ZIPFIAN:
		/* ScrambledZipfianGenerator over the keys, with room for the run's inserts */
		do
			k = sm_ycsb_scrambled_next(&y->scrambled, &sh->rng, lo,
						   lo + y->insertcount - 1 +
							   (int64_t)((double)y->operationcount *
								     y->prop[Y_INSERT] * 2.0));
		while (k > hi);
		return k;
	case YD_LATEST: {
		/* SkewedLatestGenerator: the last key less a zipfian draw */
		int64_t n = hi - lo + 1;

		k = hi - sm_ycsb_zipf_next(&ys->zipf_latest, &sh->rng, n);
		return k < lo ? lo : k;
	}
	case YD_HOTSPOT: {
		int64_t interval = hi - lo + 1, hot = (int64_t)((double)interval * y->hotset);

		if (hot > 0 && sm_rand_double(&sh->rng) < y->hotopn)
			return lo + (int64_t)sm_rand_below(&sh->rng, (uint64_t)hot);
		if (interval - hot <= 0)
			return lo;
		return lo + hot + (int64_t)sm_rand_below(&sh->rng, (uint64_t)(interval - hot));
	}
	case YD_SEQUENTIAL:
		return lo + (int64_t)(ys->seq++ % (uint64_t)(hi - lo + 1));
	case YD_UNIFORM:
	default:
		return lo + (int64_t)sm_rand_below(&sh->rng, (uint64_t)(hi - lo + 1));
	}
}

static void
ycsb_pick(struct sm_stress_shard *sh, struct sm_stress_worker *w)
{
	struct sm_stress_ycsb *y = Y();
	struct ycsb_shard *ys = &y->shards[sh->id];

	if (y->load)
		return; /* the engine's SEQ cursor: each key once */
	if (yop(w->op) == Y_INSERT) {
		w->key_index = (uint64_t)ys->next_insert;
		ys->next_insert += sx->nshards;
		return;
	}
	w->key_index = (uint64_t)choose_key(sh, ys);
	if ((int64_t)w->key_index > y->insertstart + y->insertcount - 1) {
		/* past the load: one of this shard's own inserts (the others' may be in flight) */
		int64_t first = y->insertstart + y->insertcount + sh->id;

		w->key_index -= (w->key_index - (uint64_t)first) % sx->nshards;
	}
}

/* A run-phase insert of @key is acknowledged: move inserted_max over those done in order. */
static void
ack_insert(struct ycsb_shard *ys, unsigned shard, int64_t key)
{
	struct sm_stress_ycsb *y = Y();
	uint64_t idx = (uint64_t)(key - (y->insertstart + y->insertcount + shard)) / sx->nshards;

	if (ys->done == NULL || idx < ys->acked || idx - ys->acked >= ACK_WINDOW)
		return; /* beyond the window: it waits for a read of a later key */
	ys->done[idx % ACK_WINDOW] = 1;
	while (ys->done[ys->acked % ACK_WINDOW]) {
		ys->done[ys->acked % ACK_WINDOW] = 0;
		ys->inserted_max = y->insertstart + y->insertcount + shard +
				   (int64_t)(ys->acked * sx->nshards);
		ys->acked++;
	}
}

/* The hash of a key that its fields' values derive from (once per row, not per field). */
static uint64_t
key_hash(const char *key, size_t keylen)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t k;

	for (k = 0; k < keylen; k++)
		h = (h ^ (uint8_t)key[k]) * 0x100000001b3ull;
	return h;
}

/* Field @f's value for the key of hash @h: printable ASCII, as YCSB's generated values are. */
static uint32_t
field_value(uint64_t h, unsigned f, uint8_t *out)
{
	struct sm_stress_ycsb *y = Y();
	uint64_t x, wd = 0;
	uint32_t len = y->fieldlength, i;

	x = h ^ ((uint64_t)(f + 1) * 0x9e3779b97f4a7c15ull);
	if (y->fieldlen_uniform)
		len = 1 + (uint32_t)(sm_splitmix64(&x) % y->fieldlength);
	/* eight characters a word, no division: every read regenerates what it checks */
	for (i = 0; i < len; i += 8) {
		unsigned k, n = len - i < 8 ? len - i : 8;

		wd = sm_splitmix64(&x);
		for (k = 0; k < n; k++)
			out[i + k] = (uint8_t)(' ' + ((((wd >> (8 * k)) & 0xff) * 95) >> 8));
	}
	return len;
}

/* An UPDATE's values: one random field (or all with writeallfields), the others unset. */
static void
fill_update(struct sm_stress_worker *w, struct ycsb_worker *u)
{
	struct sm_stress_ycsb *y = Y();
	unsigned f, pick = (unsigned)sm_rand_below(&w->sh->rng, y->fieldcount);
	uint64_t kh = u->kh;
	size_t off = 0;

	for (f = 0; f < y->fieldcount; f++) {
		if (!y->writeallfields && f != pick) {
			u->vals[f] = (struct sm_cql_value){ .state = SM_CQL_VALUE_UNSET };
			continue;
		}
		u->vals[f] = (struct sm_cql_value){
			.v = { u->arena + off, field_value(kh, f, u->arena + off) }
		};
		off += u->vals[f].v.len;
	}
	u->vals[y->fieldcount] = (struct sm_cql_value){ .v = { (const uint8_t *)u->key, u->keylen } };
}

static int64_t
ycsb_fill(struct sm_stress_worker *w)
{
	struct sm_stress_ycsb *y = Y();
	struct ycsb_worker *u = w->user;
	enum ycsb_op op = yop(w->op);
	size_t off = 0;
	unsigned f;

	u->keynum = (int64_t)w->key_index;
	u->keylen = sm_ycsb_key_name(u->keynum, y->ordered, y->zeropadding, u->key, sizeof(u->key));
	u->kh = key_hash(u->key, u->keylen);
	u->rmw_update = false;
	switch (op) {
	case Y_READ:
	case Y_RMW:
		u->vals[0] = (struct sm_cql_value){ .v = { (const uint8_t *)u->key, u->keylen } };
		break;
	case Y_SCAN: {
		int64_t n = y->scan_zipfian
				    ? sm_ycsb_zipf_next(&y->shards[w->sh->id].zipf_scan,
						       &w->sh->rng, y->maxscanlength)
				    : 1 + (int64_t)sm_rand_below(&w->sh->rng, y->maxscanlength);
		uint32_t be = (uint32_t)n;

		uint64_t tok = (uint64_t)sm_ring_token_of(u->key, u->keylen);
		unsigned b;

		u->arena[0] = (uint8_t)(be >> 24);
		u->arena[1] = (uint8_t)(be >> 16);
		u->arena[2] = (uint8_t)(be >> 8);
		u->arena[3] = (uint8_t)be;
		for (b = 0; b < 8; b++)
			u->arena[4 + b] = (uint8_t)(tok >> (56 - 8 * b));
		u->vals[0] = (struct sm_cql_value){ .v = { u->arena + 4, 8 } };
		u->vals[1] = (struct sm_cql_value){ .v = { u->arena, 4 } };
		break;
	}
	case Y_INSERT:
		u->vals[0] = (struct sm_cql_value){ .v = { (const uint8_t *)u->key, u->keylen } };
		for (f = 0; f < y->fieldcount; f++) {
			uint32_t n = field_value(u->kh, f, u->arena + off);

			u->vals[1 + f] = (struct sm_cql_value){ .v = { u->arena + off, n } };
			off += n;
		}
		break;
	case Y_UPDATE:
	default:
		fill_update(w, u);
		break;
	}
	w->nparts = 1;
	return sm_ring_token_of(u->key, u->keylen);
}

static int
issue(struct sm_stress_worker *w, struct sm_stress_conn *c, enum ycsb_op as, sm_cqlc_cb cb)
{
	struct sm_stress_ycsb *y = Y();
	struct ycsb_worker *u = w->user;
	bool write = as == Y_UPDATE || as == Y_INSERT;
	unsigned n = as == Y_INSERT ? y->fieldcount + 1 : as == Y_UPDATE ? y->fieldcount + 1
						       : as == Y_SCAN	? 2
									: 1;
	struct sm_cql_params params = {
		.consistency = (uint16_t)(write ? y->write_cl : y->read_cl),
		.flags = write ? 0 : SM_CQL_QF_SKIP_METADATA,
		.values = { .v = u->vals, .n = (uint16_t)n },
		.page_size = -1,
		.timestamp = INT64_MIN,
	};

	return sm_cqlc_execute_params(c->cql,
				      sm_cqlc_prepared_id(&c->stmt[SM_STRESS_OP_USER0 + as]),
				      &params, cb, w);
}

static int
ycsb_issue(struct sm_stress_worker *w, struct sm_stress_conn *c, sm_cqlc_cb cb)
{
	enum ycsb_op op = yop(w->op);

	return issue(w, c, op == Y_RMW ? Y_READ : op, cb);
}

static void
ycsb_prepared(struct sm_stress_conn *c, enum sm_stress_op op,
			const struct sm_cqlc_result *r)
{
	struct sm_bytes names[SM_STRESS_PROFILE_MAX_COLS];
	unsigned i, n = sm_stress_result_names(r, names, SM_ARRAY_SIZE(names));

	/* colmap: field number of each result column, 0xfe for y_id, 0xff other */
	memset(c->colmap[op], 0xff, sizeof(c->colmap[op]));
	for (i = 0; i < n; i++) {
		const struct sm_bytes *cs = &names[i];

		if (cs->len == 4 && memcmp(cs->p, "y_id", 4) == 0)
			c->colmap[op][i] = 0xfe;
		else if (cs->len > 5 && memcmp(cs->p, "field", 5) == 0) {
			unsigned f = 0;
			size_t k;

			for (k = 5; k < cs->len && isdigit(cs->p[k]); k++)
				f = f * 10 + (unsigned)(cs->p[k] - '0');
			if (k == cs->len && f < Y()->fieldcount)
				c->colmap[op][i] = (uint8_t)f;
		}
	}
}

/* A row's fields against the values of its key (its y_id, or @key for a read). */
static int32_t
check_rows(struct sm_stress_worker *w, struct sm_stress_conn *c, const struct sm_cqlc_result *r,
	   enum sm_stress_op stmt, bool scan)
{
	struct ycsb_worker *u = w->user;
	struct sm_cqlc_rows_iter it;
	struct sm_bytes cells[SM_STRESS_PROFILE_MAX_COLS];
	uint8_t want[65536 + 8];
	unsigned i;

	sm_cqlc_rows_iter(&it, r);
	while (sm_cqlc_rows_next(&it, cells, SM_ARRAY_SIZE(cells))) {
		const char *key = u->key;
		size_t keylen = u->keylen;

		for (i = 0; i < r->ncols && i < SM_STRESS_PROFILE_MAX_COLS; i++)
			if (c->colmap[stmt][i] == 0xfe && cells[i].p != NULL) {
				if (!scan && (cells[i].len != keylen ||
					      memcmp(cells[i].p, key, keylen) != 0))
					return SM_STRESS_VALIDATION_ERROR;
				key = (const char *)cells[i].p;
				keylen = cells[i].len;
			}
		uint64_t kh = key_hash(key, keylen);

		for (i = 0; i < r->ncols && i < SM_STRESS_PROFILE_MAX_COLS; i++) {
			uint8_t f = c->colmap[stmt][i];
			uint32_t n;

			if (f >= 0xfe || cells[i].p == NULL)
				continue; /* a field never written is null */
			n = field_value(kh, f, want);
			if (n != cells[i].len || memcmp(want, cells[i].p, n) != 0)
				return SM_STRESS_VALIDATION_ERROR;
		}
	}
	return 0;
}

static int32_t
ycsb_check(struct sm_stress_worker *w, struct sm_stress_conn *c,
		     const struct sm_cqlc_result *r, uint64_t *rows, sm_cqlc_cb cb)
{
	struct sm_stress_ycsb *y = Y();
	struct ycsb_worker *u = w->user;
	enum ycsb_op op = yop(w->op);
	int32_t bad = 0;
	int ret;

	*rows = r->kind == SM_CQLC_ROWS ? r->nrows : 1;
	if (op == Y_INSERT && !y->load)
		ack_insert(&y->shards[w->sh->id], w->sh->id, u->keynum);
	if ((op == Y_READ || op == Y_SCAN || (op == Y_RMW && !u->rmw_update)) &&
	    r->kind == SM_CQLC_ROWS) {
		if (r->nrows == 0 && w->sh->recording && op != Y_SCAN)
			y->shards[w->sh->id].not_found[op]++;
		if (!sx->s.errors.skip_read_validation)
			bad = check_rows(w, c, r, SM_STRESS_OP_USER0 + (op == Y_RMW ? Y_READ : op),
					 op == Y_SCAN);
	}
	if (bad != 0 || op != Y_RMW || u->rmw_update)
		return bad;
	/* the read of a READ-MODIFY-WRITE is back: now its update (one latency for both) */
	fill_update(w, u);
	u->rmw_update = true;
	ret = issue(w, c, Y_UPDATE, cb);
	return ret < 0 ? ret : SM_STRESS_YCSB_AGAIN;
}

/* ---- YCSB's output ---- */

static double
us(int64_t ns)
{
	return (double)ns / 1000.0;
}

static void
ycsb_status(double elapsed, uint64_t ops, uint64_t d_ops, double dt)
{
	char when[64];
	struct timespec ts;
	time_t now = time(NULL);
	struct tm tm;
	unsigned k;

	if (!Y()->status)
		return;
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	clock_gettime(CLOCK_REALTIME, &ts);
	/* Java's "yyyy-MM-dd HH:mm:ss:SSS", then StatusThread's line */
	fprintf(stderr, "%s:%03ld %.0f sec: %" PRIu64 " operations; %.1f current ops/sec;", when,
		ts.tv_nsec / 1000000,
		floor(elapsed), ops, dt > 0 ? (double)d_ops / dt : 0);
	for (k = 0; k < sx->nops; k++) {
		const struct sm_hdr *h = &sx->merged[sx->ops[k]].st[0];

		if (h->total_count == 0)
			continue;
		fprintf(stderr,
			" [%s: Count=%" PRId64 ", Max=%.0f, Min=%.0f, Avg=%.2f, 90=%.0f, 99=%.0f, "
			"99.9=%.0f, 99.99=%.0f]",
			sm_stress_op_name(sx->ops[k]), h->total_count, us(sm_hdr_max(h)),
			us(sm_hdr_min(h)), sm_hdr_mean(h) / 1000.0,
			us(sm_hdr_value_at_percentile(h, 90)), us(sm_hdr_value_at_percentile(h, 99)),
			us(sm_hdr_value_at_percentile(h, 99.9)),
			us(sm_hdr_value_at_percentile(h, 99.99)));
	}
	fputc('\n', stderr);
}

static void
ycsb_report(const struct sm_stress_op_stats *tot, double secs)
{
	uint64_t all = 0;
	unsigned k, s, i;

	for (k = 0; k < sx->nops; k++)
		all += tot[k].ops + tot[k].errors;
	sm_stress_out("[OVERALL], RunTime(ms), %.0f\n", secs * 1000);
	sm_stress_out("[OVERALL], Throughput(ops/sec), %.15g\n", secs > 0 ? (double)all / secs : 0);
	/* YCSB's operation order, not the engine's */
	for (i = 0; i < Y_NR; i++) {
		for (k = 0; k < sx->nops && sx->ops[k] != SM_STRESS_OP_USER0 + i; k++)
			;
		if (k == sx->nops)
			continue;
		{
			const struct sm_hdr *h = &tot[k].st_total;
			const char *n = y_names[i];
			uint64_t nf = 0;

			for (s = 0; s < sx->nshards; s++)
				nf += Y()->shards[s].not_found[i];
			sm_stress_out("[%s], Operations, %" PRIu64 "\n", n, tot[k].ops + tot[k].errors);
			sm_stress_out("[%s], AverageLatency(us), %.15g\n", n,
				      h->total_count ? sm_hdr_mean(h) / 1000.0 : 0);
			sm_stress_out("[%s], MinLatency(us), %.0f\n", n, us(sm_hdr_min(h)));
			sm_stress_out("[%s], MaxLatency(us), %.0f\n", n, us(sm_hdr_max(h)));
			sm_stress_out("[%s], 95thPercentileLatency(us), %.0f\n", n,
				      us(sm_hdr_value_at_percentile(h, 95)));
			sm_stress_out("[%s], 99thPercentileLatency(us), %.0f\n", n,
				      us(sm_hdr_value_at_percentile(h, 99)));
			sm_stress_out("[%s], Return=OK, %" PRIu64 "\n", n, tot[k].ops - nf);
			if (nf > 0)
				sm_stress_out("[%s], Return=NOT_FOUND, %" PRIu64 "\n", n, nf);
			if (tot[k].errors > 0)
				sm_stress_out("[%s], Return=ERROR, %" PRIu64 "\n", n, tot[k].errors);
		}
	}
}

/* ---- the dynamodb binding, over Alternator ---- */

static size_t
ycsb_alt_create(char *buf, size_t cap)
{
	struct sm_stress_ycsb *y = Y();

	return (size_t)snprintf(buf, cap,
				"{\"TableName\":\"%s\",\"BillingMode\":\"PAY_PER_REQUEST\","
				"\"AttributeDefinitions\":[{\"AttributeName\":\"%s\","
				"\"AttributeType\":\"S\"}],\"KeySchema\":[{\"AttributeName\":"
				"\"%s\",\"KeyType\":\"HASH\"}]}",
				y->table, y->primary_key, y->primary_key);
}

/* @n bytes of @s as a JSON string's contents (the values are printable ASCII). */
static char *
json_escape(char *p, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			*p++ = '\\';
		*p++ = (char)s[i];
	}
	return p;
}

static char *
key_json(char *p, const struct sm_stress_ycsb *y, const struct ycsb_worker *u)
{
	p += sprintf(p, "\"%s\":{\"S\":\"", y->primary_key);
	memcpy(p, u->key, u->keylen);
	p += u->keylen;
	return p + sprintf(p, "\"}");
}

static int
alt_post(struct sm_stress_worker *w, struct sm_stress_conn *c, enum ycsb_op as, sm_httpc_cb cb)
{
	struct sm_stress_ycsb *y = Y();
	struct ycsb_worker *u = w->user;
	char *p = u->json;
	const char *op;
	unsigned f;

	p += sprintf(p, "{\"TableName\":\"%s\",", y->table);
	switch (as) {
	case Y_INSERT:
		op = "PutItem";
		p = key_json(p + sprintf(p, "\"Item\":{"), y, u);
		for (f = 0; f < y->fieldcount; f++) {
			p += sprintf(p, ",\"field%u\":{\"S\":\"", f);
			p = json_escape(p, u->vals[1 + f].v.p, u->vals[1 + f].v.len);
			p += sprintf(p, "\"}");
		}
		p += sprintf(p, "}}");
		break;
	case Y_UPDATE: {
		unsigned k = 0;

		op = "UpdateItem";
		p = key_json(p + sprintf(p, "\"Key\":{"), y, u);
		p += sprintf(p, "},\"UpdateExpression\":\"SET ");
		for (f = 0; f < y->fieldcount; f++)
			if (u->vals[f].state != SM_CQL_VALUE_UNSET)
				p += sprintf(p, "%sfield%u = :v%u", k++ ? ", " : "", f, f);
		p += sprintf(p, "\",\"ExpressionAttributeValues\":{");
		for (f = 0, k = 0; f < y->fieldcount; f++) {
			if (u->vals[f].state == SM_CQL_VALUE_UNSET)
				continue;
			p += sprintf(p, "%s\":v%u\":{\"S\":\"", k++ ? "," : "", f);
			p = json_escape(p, u->vals[f].v.p, u->vals[f].v.len);
			p += sprintf(p, "\"}");
		}
		p += sprintf(p, "}}");
		break;
	}
	case Y_SCAN:
		op = "Scan";
		p = key_json(p + sprintf(p, "\"ExclusiveStartKey\":{"), y, u);
		p += sprintf(p, "},\"Limit\":%u}",
			     (unsigned)u->arena[0] << 24 | (unsigned)u->arena[1] << 16 |
				     (unsigned)u->arena[2] << 8 | u->arena[3]);
		break;
	case Y_READ:
	case Y_RMW:
	default:
		op = "GetItem";
		p = key_json(p + sprintf(p, "\"Key\":{"), y, u);
		p += sprintf(p, "},\"ConsistentRead\":%s}", y->consistent_reads ? "true" : "false");
		break;
	}
	return sm_httpc_post(c->http, op, u->json, (size_t)(p - u->json), cb, w);
}

static int
ycsb_alt_send(struct sm_stress_worker *w, struct sm_stress_conn *c, sm_httpc_cb cb)
{
	ycsb_fill(w);
	w->conn = c;
	return alt_post(w, c, yop(w->op) == Y_RMW ? Y_READ : yop(w->op), cb);
}

/* An item's fields against its key's values; the key from the item for a scan. */
static int32_t
alt_check_item(struct sm_json_doc *d, int item, const char *key, size_t keylen, bool scan)
{
	struct sm_stress_ycsb *y = Y();
	uint8_t want[65536 + 8];
	char got[65536 + 8], kbuf[64], name[16];
	struct sm_bytes s;
	uint64_t kh;
	unsigned f;
	int a, v;

	if (scan) {
		a = sm_json_get(d, item, y->primary_key);
		v = a >= 0 ? sm_json_get(d, a, "S") : -1;
		if (v < 0 || sm_json_str(d, v, kbuf, sizeof(kbuf), &s) < 0)
			return SM_STRESS_VALIDATION_ERROR;
		key = (const char *)s.p;
		keylen = s.len;
	}
	kh = key_hash(key, keylen);
	for (f = 0; f < y->fieldcount; f++) {
		uint32_t n;

		snprintf(name, sizeof(name), "field%u", f);
		a = sm_json_get(d, item, name);
		if (a < 0)
			continue; /* never written */
		v = sm_json_get(d, a, "S");
		if (v < 0 || sm_json_str(d, v, got, sizeof(got), &s) < 0)
			return SM_STRESS_VALIDATION_ERROR;
		n = field_value(kh, f, want);
		if (n != s.len || memcmp(want, s.p, n) != 0)
			return SM_STRESS_VALIDATION_ERROR;
	}
	return 0;
}

static int32_t
ycsb_alt_done(struct sm_stress_worker *w, int status, const char *body, size_t len,
			uint64_t *rows, sm_httpc_cb cb)
{
	struct sm_stress_ycsb *y = Y();
	struct ycsb_worker *u = w->user;
	struct sm_json_doc *d = &w->sh->json_doc;
	enum ycsb_op op = yop(w->op);
	int32_t bad = 0;
	int ret;

	if (status != 200)
		return status;
	*rows = 1;
	if (op == Y_INSERT && !y->load)
		ack_insert(&y->shards[w->sh->id], w->sh->id, u->keynum);
	if (op == Y_READ || op == Y_SCAN || (op == Y_RMW && !u->rmw_update)) {
		int item;

		if (sm_json_parse(d, body, len, 0) < 0)
			return SM_STRESS_VALIDATION_ERROR;
		if (op == Y_SCAN) {
			int items = sm_json_get(d, sm_json_root(d), "Items"), it;

			*rows = 0;
			for (it = items >= 0 ? sm_json_first(d, items) : -1; it >= 0 && bad == 0;
			     it = sm_json_next(d, it)) {
				(*rows)++;
				if (!sx->s.errors.skip_read_validation)
					bad = alt_check_item(d, it, NULL, 0, true);
			}
		} else if ((item = sm_json_get(d, sm_json_root(d), "Item")) < 0) {
			*rows = 0;
			if (w->sh->recording)
				y->shards[w->sh->id].not_found[op]++;
		} else if (!sx->s.errors.skip_read_validation) {
			bad = alt_check_item(d, item, u->key, u->keylen, false);
		}
	}
	if (bad != 0 || op != Y_RMW || u->rmw_update)
		return bad;
	fill_update(w, u);
	u->rmw_update = true;
	ret = alt_post(w, w->conn, Y_UPDATE, cb);
	return ret < 0 ? ret : SM_STRESS_YCSB_AGAIN;
}

const struct sm_stress_workload_ops sm_stress_ycsb_ops = {
	.prepare = ycsb_prepare,
	.setup_statement = ycsb_setup_statement,
	.worker_init = ycsb_worker_init,
	.worker_fini = ycsb_worker_fini,
	.pick = ycsb_pick,
	.fill = ycsb_fill,
	.issue = ycsb_issue,
	.prepared = ycsb_prepared,
	.check = ycsb_check,
	.status = ycsb_status,
	.report = ycsb_report,
	.alt_create = ycsb_alt_create,
	.alt_send = ycsb_alt_send,
	.alt_done = ycsb_alt_done,
};
