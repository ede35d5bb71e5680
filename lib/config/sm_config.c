/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <yaml.h>

#include "sm_config.h"
#include "sm_net.h"

/* The build's max_shards option tops out at 1024; the runtime checks its own bound. */
#define SM_CONFIG_MAX_SMP 1024
/* Keeps cpuset parsing free of overflow; the runtime checks CPUs against the machine. */
#define SM_CONFIG_MAX_CPU 65535
/* Longest key we compare for suggestions; longer input is simply not close to any key. */
#define SM_CONFIG_KEY_MAX 64
#define SM_CONFIG_SUGGEST_MAX 2
/* Values quoted back in messages are cut here so one bad line cannot flood the terminal. */
#define SM_CONFIG_SHOW_MAX 60

#define SM_CONFIG_SEE_HELP "see `shardmark serve --help` for the list"

enum sm_key_type {
	SM_KT_UINT,
	SM_KT_LISTEN_PORT, /* a port we listen on: validate() keeps enabled ones distinct */
	SM_KT_BOOL,
	SM_KT_STRING,	  /* required */
	SM_KT_OPT_STRING, /* empty or null means unset (NULL) */
	SM_KT_ENUM,
	SM_KT_CPUSET, /* optional, "0-3,8" */
	SM_KT_SIZE,   /* optional, "4G", "512M", "1048576" (sm_config_parse_size) */
};

/* --help type words, picked by token pasting in the table. */
#define SM_KT_TEXT_UINT "int"
#define SM_KT_TEXT_LISTEN_PORT "port"
#define SM_KT_TEXT_BOOL "bool"
#define SM_KT_TEXT_STRING "string"
#define SM_KT_TEXT_OPT_STRING "string"
#define SM_KT_TEXT_ENUM "string"
#define SM_KT_TEXT_CPUSET "list"
#define SM_KT_TEXT_SIZE "size"

/* The C type each key type stores, checked at compile time against struct sm_config. */
#define SM_FIELD(f) (((struct sm_config *)0)->f)
#define SM_FIELD_OK_UINT(f) _Generic(SM_FIELD(f), unsigned : 1, default : 0)
#define SM_FIELD_OK_LISTEN_PORT(f) SM_FIELD_OK_UINT(f)
#define SM_FIELD_OK_BOOL(f) _Generic(SM_FIELD(f), bool : 1, default : 0)
#define SM_FIELD_OK_STRING(f) _Generic(SM_FIELD(f), char * : 1, default : 0)
#define SM_FIELD_OK_OPT_STRING(f) SM_FIELD_OK_STRING(f)
#define SM_FIELD_OK_ENUM(f) SM_FIELD_OK_STRING(f)
#define SM_FIELD_OK_CPUSET(f) SM_FIELD_OK_STRING(f)
#define SM_FIELD_OK_SIZE(f) SM_FIELD_OK_STRING(f)

/* An allowed value of an enum key and the other spellings that mean it. */
struct sm_choice {
	const char *name;
	const char *aliases[3];
};

static const struct sm_choice sm_network_stacks[] = {
	{ "uring", { NULL } },
	{ "dpdk", { NULL } },
	{ NULL, { NULL } },
};

static const struct sm_choice sm_log_levels[] = {
	{ "error", { NULL } }, { "warn", { NULL } }, { "info", { NULL } },
	{ "debug", { NULL } }, { NULL, { NULL } },
};

static const struct sm_choice sm_commitlog_syncs[] = {
	{ "off", { NULL } },
	{ "periodic", { NULL } },
	{ "batch", { NULL } },
	{ NULL, { NULL } },
};

static const struct sm_choice sm_authenticators[] = {
	{ "AllowAllAuthenticator", { "org.apache.cassandra.auth.AllowAllAuthenticator", NULL } },
	{ "PasswordAuthenticator", { "org.apache.cassandra.auth.PasswordAuthenticator", NULL } },
	{ NULL, { NULL } },
};

/* db/config.cc's tablets_mode_for_new_keyspaces */
static const struct sm_choice sm_tablets_modes[] = {
	{ "disabled", { NULL } },
	{ "enabled", { NULL } },
	{ "enforced", { NULL } },
	{ NULL, { NULL } },
};

/* ScyllaDB accepts exactly these spellings (alternator/executor.cc). */
static const struct sm_choice sm_write_isolations[] = {
	{ "forbid_rmw", { "f", "forbid", NULL } },
	{ "unsafe", { "u", "unsafe_rmw", NULL } },
	{ "always_use_lwt", { "a", "always", NULL } },
	{ "only_rmw_uses_lwt", { "o", NULL } },
	{ NULL, { NULL } },
};

/*
 * The one table of keys, in config/shardmark.yaml's order. A row is: field
 * (which is also the YAML key), type, min, max (uint types), allowed values
 * (enum), default as text ("" = unset) and the --help line. Every field of
 * struct sm_config must have a row: copying and freeing walk this table.
 */
/* clang-format off */
#define SM_CONFIG_TABLE(K)                                                                         \
	K(smp, UINT, 0, SM_CONFIG_MAX_SMP, NULL, "0",                                              \
	  "shards to run, one pinned thread each; 0 = one per allowed CPU")                        \
	K(cpuset, CPUSET, 0, 0, NULL, "",                                                          \
	  "CPUs the shards may use, e.g. 0-3,8; empty = every CPU the process may use")            \
	K(overprovisioned, BOOL, 0, 0, NULL, "false",                                              \
	  "share the CPUs with other work: do not pin shards, allow smp above the CPU count")      \
	K(network_stack, ENUM, 0, 0, sm_network_stacks, "uring",                                   \
	  "network driver: uring (kernel sockets through io_uring) or dpdk (kernel bypass)")       \
	K(dpdk_args, OPT_STRING, 0, 0, NULL, "",                                                   \
	  "DPDK EAL arguments, e.g. '--no-huge --vdev net_tap0'; only with network_stack dpdk")    \
	K(task_quota_us, UINT, 1, 1000000, NULL, "500",                                            \
	  "microseconds a shard runs tasks before it polls for I/O")                               \
	K(idle_poll_us, UINT, 0, 1000000, NULL, "200",                                             \
	  "microseconds an idle shard spins before it sleeps; 0 = sleep at once")                  \
	K(drain_timeout_ms, UINT, 1, 3600000, NULL, "10000",                                       \
	  "longest graceful stop after SIGINT or SIGTERM, in milliseconds")                        \
	K(blocked_reactor_notify_ms, UINT, 0, 3600000, NULL, "25",                                 \
	  "log a reactor loop round longer than this, with a backtrace (Seastar's option); "      \
	  "0 = no stall detector")                                                                  \
	K(blocked_reactor_reports_per_minute, UINT, 1, 60000, NULL, "5",                           \
	  "at most this many stall reports a minute per shard; the rest are counted")              \
	K(memory, SIZE, 0, 0, NULL, "",                                                            \
	  "memory of the whole process, e.g. 4G, split evenly over the shards (Seastar's "         \
	  "--memory); near it writes are refused; empty = RAM minus reserve_memory")               \
	K(reserve_memory, SIZE, 0, 0, NULL, "",                                                    \
	  "memory left to the kernel when memory is empty; empty = 1536M or 7% of RAM, "           \
	  "whichever is more (Seastar's default)")                                                 \
	K(rx_buffers, UINT, 1, 32768, NULL, "1024",                                                \
	  "receive buffers per shard")                                                             \
	K(rx_buffer_size, UINT, 256, 1048576, NULL, "16384",                                       \
	  "bytes per receive buffer")                                                              \
	K(log_level, ENUM, 0, 0, sm_log_levels, "info",                                            \
	  "most verbose messages logged: error, warn, info or debug")                              \
	K(listen_address, STRING, 0, 0, NULL, "127.0.0.1",                                         \
	  "address the CQL, Alternator and echo services listen on")                               \
	K(native_transport_port, LISTEN_PORT, 1, 65535, NULL, "9042",                              \
	  "CQL native protocol port")                                                              \
	K(native_shard_aware_transport_port, LISTEN_PORT, 1, 65535, NULL, "19042",                 \
	  "CQL port that picks the shard from the client's source port")                           \
	K(native_transport_port_ssl, LISTEN_PORT, 0, 65535, NULL, "0",                             \
	  "CQL over TLS on this port while native_transport_port stays plain; 0 (or the same "    \
	  "port) = with client encryption on, native_transport_port itself is TLS")               \
	K(native_shard_aware_transport_port_ssl, LISTEN_PORT, 0, 65535, NULL, "0",                 \
	  "the shard-aware port's TLS twin, as native_transport_port_ssl")                         \
	K(client_encryption_options_enabled, BOOL, 0, 0, NULL, "false",                            \
	  "TLS on the CQL ports (scylla.yaml's client_encryption_options: enabled)")               \
	K(client_encryption_options_certificate, OPT_STRING, 0, 0, NULL, "",                       \
	  "the server's PEM certificate for CQL over TLS")                                         \
	K(client_encryption_options_keyfile, OPT_STRING, 0, 0, NULL, "",                           \
	  "the PEM key of that certificate")                                                       \
	K(client_encryption_options_truststore, OPT_STRING, 0, 0, NULL, "",                        \
	  "PEM CA certificates client certificates are checked against; empty = the system's")    \
	K(client_encryption_options_require_client_auth, BOOL, 0, 0, NULL, "false",                \
	  "CQL clients must present a certificate the truststore trusts")                          \
	K(client_encryption_options_priority_string, OPT_STRING, 0, 0, NULL, "",                   \
	  "GnuTLS priority string (ciphers, versions), as ScyllaDB's; empty = SECURE128 without " \
	  "TLS 1.0/1.1")                                                                            \
	K(tls_kernel_offload, BOOL, 0, 0, NULL, "true",                                            \
	  "after the TLS handshake, let the kernel (kTLS, or a NIC with TLS offload) encrypt "     \
	  "what is sent, where it can; shardmark_tls_*_tx_total says which path each took")       \
	K(native_transport_max_frame_size_in_mb, UINT, 1, 2047, NULL, "256",                       \
	  "largest CQL frame accepted, in MiB; a bigger one gets an error and a close")            \
	K(native_transport_frame_timeout_in_ms, UINT, 0, 86400000, NULL, "30000",                  \
	  "a CQL frame begun but not whole this long after gets an error and the close "           \
	  "(clients sending a byte a second); 0 = no limit")                                       \
	K(connection_max_unsent_bytes, UINT, 4096, 1073741824, NULL, "262144",                    \
	  "unsent reply bytes past which a connection is not read until half have left "           \
	  "(back-pressure on clients that do not read their replies)")                             \
	K(batch_size_fail_threshold_in_kb, UINT, 1, 2097151, NULL, "1024",                         \
	  "a CQL batch whose mutations carry more KiB of keys and values is refused "              \
	  "(\"Batch too large\")")                                                                 \
	K(tablets_mode_for_new_keyspaces, ENUM, 0, 0, sm_tablets_modes, "disabled",               \
	  "keyspaces created without tablets = {...}: disabled (vnodes), enabled (tablets for "    \
	  "NetworkTopologyStrategy) or enforced (and {'enabled': false} is refused)")             \
	K(request_timeout_in_ms, UINT, 0, 86400000, NULL, "10000",                                 \
	  "CQL requests other than the kinds below: longest wait for a reply, then a timeout "     \
	  "error; 0 = no limit")                                                                   \
	K(read_request_timeout_in_ms, UINT, 0, 86400000, NULL, "5000",                             \
	  "CQL reads: longest wait for a reply, then ReadTimeout")                                 \
	K(range_request_timeout_in_ms, UINT, 0, 86400000, NULL, "10000",                           \
	  "CQL range scans: longest wait for a reply, then ReadTimeout")                           \
	K(write_request_timeout_in_ms, UINT, 0, 86400000, NULL, "2000",                            \
	  "CQL writes: longest wait for a reply, then WriteTimeout")                               \
	K(counter_write_request_timeout_in_ms, UINT, 0, 86400000, NULL, "5000",                    \
	  "CQL counter writes: longest wait for a reply, then WriteTimeout")                       \
	K(cas_contention_timeout_in_ms, UINT, 0, 86400000, NULL, "1000",                           \
	  "CQL conditional (LWT) writes: longest wait for a reply, then WriteTimeout (CAS)")       \
	K(truncate_request_timeout_in_ms, UINT, 0, 86400000, NULL, "60000",                        \
	  "CQL TRUNCATE: longest wait for a reply")                                                \
	K(cluster_name, STRING, 0, 0, NULL, "shardmark",                                           \
	  "cluster name that system.local reports to CQL drivers")                                 \
	K(authenticator, ENUM, 0, 0, sm_authenticators, "AllowAllAuthenticator",                   \
	  "CQL authentication: AllowAllAuthenticator or PasswordAuthenticator")                   \
	K(auth_superuser_name, STRING, 0, 0, NULL, "cassandra",                                    \
	  "user that PasswordAuthenticator accepts")                                               \
	K(auth_superuser_password, STRING, 0, 0, NULL, "cassandra",                                \
	  "password that PasswordAuthenticator accepts")                                           \
	K(peers, OPT_STRING, 0, 0, NULL, "",                                                       \
	  "other appliances CQL drivers should see, e.g. 10.0.0.2,10.0.0.3:9043")                  \
	K(shard_nodes, BOOL, 0, 0, NULL, "false",                                                  \
	  "present each shard as its own CQL node at consecutive addresses from "                 \
	  "listen_address, so token-aware drivers without shard awareness reach the owner")       \
	K(alternator_port, LISTEN_PORT, 0, 65535, NULL, "8000",                                    \
	  "Alternator (DynamoDB API over HTTP) port; 0 = off")                                     \
	K(alternator_https_port, LISTEN_PORT, 0, 65535, NULL, "0",                                 \
	  "Alternator over HTTPS (TLS) port; 0 = off")                                             \
	K(alternator_encryption_options_certificate, OPT_STRING, 0, 0, NULL, "",                   \
	  "the PEM certificate of alternator_https_port (scylla.yaml's "                          \
	  "alternator_encryption_options: certificate)")                                           \
	K(alternator_encryption_options_keyfile, OPT_STRING, 0, 0, NULL, "",                       \
	  "the PEM key of that certificate")                                                       \
	K(alternator_encryption_options_priority_string, OPT_STRING, 0, 0, NULL, "",               \
	  "GnuTLS priority string for alternator_https_port; empty = as for CQL")                  \
	K(alternator_write_isolation, ENUM, 0, 0, sm_write_isolations, "only_rmw_uses_lwt",        \
	  "default Alternator write isolation: forbid_rmw, unsafe, always_use_lwt or "             \
	  "only_rmw_uses_lwt (or f, u, a, o)")                                                     \
	K(alternator_enforce_authorization, BOOL, 0, 0, NULL, "false",                             \
	  "verify Alternator requests' AWS SigV4 signatures against the key pair below")           \
	K(alternator_access_key_id, STRING, 0, 0, NULL, "alternator",                              \
	  "access key id that signed Alternator requests must use")                                \
	K(alternator_secret_access_key, STRING, 0, 0, NULL, "secret_pass",                         \
	  "secret key that Alternator signatures are verified with")                               \
	K(alternator_ttl_period_in_seconds, UINT, 0, 86400, NULL, "1",                             \
	  "Alternator TTL: pause between two passes of each shard's expiry scanner "             \
	  "(expired items are deleted within about this plus one pass); 0 = 1 s")                 \
	K(http_request_timeout_in_ms, UINT, 0, 86400000, NULL, "30000",                            \
	  "an HTTP request (Alternator, metrics) not arrived whole this long after its first "     \
	  "byte gets 408 and the close; 0 = no limit")                                             \
	K(http_idle_timeout_in_ms, UINT, 0, 86400000, NULL, "60000",                               \
	  "an HTTP connection with no request in progress that sends nothing this long is "        \
	  "closed; 0 = no limit")                                                                  \
	K(prometheus_port, LISTEN_PORT, 0, 65535, NULL, "9180",                                    \
	  "Prometheus metrics port; 0 = no metrics endpoint")                                      \
	K(prometheus_address, OPT_STRING, 0, 0, NULL, "",                                          \
	  "address of the metrics endpoint; empty = listen_address")                               \
	K(api_port, LISTEN_PORT, 0, 65535, NULL, "10000",                                          \
	  "ScyllaDB's REST API (nodetool flush, compact, status, info); 0 = off")                 \
	K(api_address, OPT_STRING, 0, 0, NULL, "",                                                 \
	  "address of the REST API; empty = listen_address")                                       \
	K(commitlog_sync, ENUM, 0, 0, sm_commitlog_syncs, "off",                                   \
	  "commitlog (also --commitlog): off (in memory only: a restart loses the data, the "      \
	  "fastest writes), periodic (written as buffers fill, synced every "                      \
	  "commitlog_sync_period_in_ms, acknowledged before the sync, as ScyllaDB) or batch "       \
	  "(acknowledged after the fdatasync that covers it); off by default because the "         \
	  "appliance benchmarks memory unless asked")                                              \
	K(commitlog_directory, STRING, 0, 0, NULL, "/var/lib/shardmark/commitlog",                 \
	  "where each shard's commitlog segments go (O_DIRECT where the filesystem allows it)")   \
	K(commitlog_segment_size_in_mb, UINT, 1, 4095, NULL, "32",                                 \
	  "size of one preallocated commitlog segment, MiB")                                       \
	K(commitlog_total_space_in_mb, UINT, 0, 4194303, NULL, "0",                                \
	  "most commitlog MiB on disk, all shards (segments are not recycled yet: a full "         \
	  "commitlog refuses writes); 0 = no limit")                                               \
	K(commitlog_sync_period_in_ms, UINT, 1, 3600000, NULL, "10000",                            \
	  "periodic commitlog: time between two syncs")                                            \
	K(echo_port, LISTEN_PORT, 0, 65535, NULL, "0",                                             \
	  "echo service port, for transport benchmarks; 0 = off")                                  \
	K(echo_max_frame, UINT, 1, 1073741824, NULL, "16777216",                                   \
	  "largest echo frame accepted, in bytes")
/* clang-format on */

struct sm_key {
	const char *name;
	enum sm_key_type type;
	size_t offset;
	unsigned min;
	unsigned max;
	const struct sm_choice *choices;
	const char *defval;
};

#define SM_KEY_ROW(f, t, lo, hi, ch, def, h)                                                       \
	{ .name = #f,                                                                              \
	  .type = SM_KT_##t,                                                                       \
	  .offset = offsetof(struct sm_config, f),                                                 \
	  .min = (lo),                                                                             \
	  .max = (hi),                                                                             \
	  .choices = (ch),                                                                         \
	  .defval = (def) },
#define SM_KEY_INFO_ROW(f, t, lo, hi, ch, def, h)                                                  \
	{ .name = #f, .type = SM_KT_TEXT_##t, .defval = (def), .help = (h) },
#define SM_KEY_CHECK(f, t, lo, hi, ch, def, h)                                                     \
	_Static_assert(SM_FIELD_OK_##t(f),                                                         \
		       "field " #f " does not have the C type of a " #t " key");                   \
	_Static_assert(sizeof(#f) <= SM_CONFIG_KEY_MAX + 1, "key " #f " is too long");

SM_CONFIG_TABLE(SM_KEY_CHECK)

static const struct sm_key sm_keys[] = { SM_CONFIG_TABLE(SM_KEY_ROW) };
static const struct sm_config_key_info sm_key_infos[] = { SM_CONFIG_TABLE(SM_KEY_INFO_ROW) };

#define SM_NKEYS (sizeof(sm_keys) / sizeof(sm_keys[0]))
_Static_assert(SM_NKEYS <= 8 * sizeof(((struct sm_config *)0)->from_cmdline),
	       "struct sm_config.from_cmdline has a bit per key");

union sm_value {
	unsigned u;
	bool b;
	char *s;
};

static void
sm_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
sm_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* A value as quoted back in a message: cut short, control characters made visible. */
static const char *
sm_show(const char *v, char *buf, size_t len)
{
	size_t i, n = strlen(v);
	bool cut = n > SM_CONFIG_SHOW_MAX;

	if (cut)
		n = SM_CONFIG_SHOW_MAX;
	if (n > len - 4)
		n = len - 4;
	for (i = 0; i < n; i++)
		buf[i] = iscntrl((unsigned char)v[i]) ? '?' : v[i];
	strcpy(buf + i, cut ? "..." : "");
	return buf;
}

static void *
sm_field(struct sm_config *c, const struct sm_key *k)
{
	return (char *)c + k->offset;
}

static const void *
sm_cfield(const struct sm_config *c, const struct sm_key *k)
{
	return (const char *)c + k->offset;
}

static bool
sm_key_is_string(const struct sm_key *k)
{
	return k->type == SM_KT_STRING || k->type == SM_KT_OPT_STRING || k->type == SM_KT_ENUM ||
	       k->type == SM_KT_CPUSET || k->type == SM_KT_SIZE;
}

static bool
sm_key_is_uint(const struct sm_key *k)
{
	return k->type == SM_KT_UINT || k->type == SM_KT_LISTEN_PORT;
}

static bool
sm_key_optional(const struct sm_key *k)
{
	return k->type == SM_KT_OPT_STRING || k->type == SM_KT_CPUSET || k->type == SM_KT_SIZE;
}

static const struct sm_key *
sm_key_find(const char *name)
{
	size_t i;

	for (i = 0; i < SM_NKEYS; i++)
		if (strcmp(sm_keys[i].name, name) == 0)
			return &sm_keys[i];
	return NULL;
}

/*
 * Command-line spellings to the YAML name: "--native-transport-port" and
 * "native-transport-port" both become "native_transport_port". Returns false
 * when @key is too long to be any key.
 */
static bool
sm_key_canon(const char *key, char *out, size_t outlen)
{
	size_t i;

	if (strncmp(key, "--", 2) == 0)
		key += 2;
	if (strlen(key) >= outlen)
		return false;
	for (i = 0; key[i] != '\0'; i++)
		out[i] = key[i] == '-' ? '_' : key[i];
	out[i] = '\0';
	return true;
}

/* Optimal string alignment distance: a swapped pair of letters is one typo, not two. */
static unsigned
sm_edit_distance(const char *a, const char *b)
{
	unsigned d[SM_CONFIG_KEY_MAX + 1][SM_CONFIG_KEY_MAX + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > SM_CONFIG_KEY_MAX || lb > SM_CONFIG_KEY_MAX)
		return UINT_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
			unsigned best = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/* The known key closest to @key (any spelling), or NULL when none is within reach. */
static const struct sm_key *
sm_key_suggest(const char *key)
{
	char canon[SM_CONFIG_KEY_MAX + 1];
	const struct sm_key *best = NULL;
	unsigned best_d = SM_CONFIG_SUGGEST_MAX + 1;
	size_t i;

	if (!sm_key_canon(key, canon, sizeof(canon)))
		return NULL;
	/* Keys are lower case; "SMP" is plainly "smp". */
	for (i = 0; canon[i] != '\0'; i++)
		canon[i] = (char)tolower((unsigned char)canon[i]);
	for (i = 0; i < SM_NKEYS; i++) {
		unsigned d = sm_edit_distance(canon, sm_keys[i].name);

		if (d < best_d) {
			best_d = d;
			best = &sm_keys[i];
		}
	}
	return best;
}

/* "unknown key 'x' (did you mean 'y'?); see ...", the suggestion spelled the way @key was. */
static void
sm_unknown_key_msg(const char *key, bool cmdline, char *msg, size_t msglen)
{
	const struct sm_key *k = sm_key_suggest(key);
	char shown[SM_CONFIG_SHOW_MAX + 4];
	char sugg[SM_CONFIG_KEY_MAX + 3];
	size_t i;

	sm_show(key, shown, sizeof(shown));
	if (k == NULL) {
		sm_errf(msg, msglen, "unknown key '%s'; %s", shown, SM_CONFIG_SEE_HELP);
		return;
	}
	if (cmdline && strncmp(key, "--", 2) == 0)
		snprintf(sugg, sizeof(sugg), "--%s", k->name);
	else
		snprintf(sugg, sizeof(sugg), "%s", k->name);
	if (cmdline && strchr(key, '-') != NULL)
		for (i = 0; sugg[i] != '\0'; i++)
			if (sugg[i] == '_')
				sugg[i] = '-';
	sm_errf(msg, msglen, "unknown key '%s' (did you mean '%s'?); %s", shown, sugg,
		SM_CONFIG_SEE_HELP);
}

static int
sm_parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *
sm_parse_enum(const struct sm_choice *ch, const char *v)
{
	size_t i;

	for (; ch->name != NULL; ch++) {
		if (strcasecmp(v, ch->name) == 0)
			return ch->name;
		for (i = 0; ch->aliases[i] != NULL; i++)
			if (strcasecmp(v, ch->aliases[i]) == 0)
				return ch->name;
	}
	return NULL;
}

/* "a|b|c", then " (or x|y)" when there are other spellings. */
static void
sm_enum_list(const struct sm_choice *choices, char *buf, size_t len)
{
	const struct sm_choice *ch;
	size_t off = 0, i;
	bool any = false;

	buf[0] = '\0';
	for (ch = choices; ch->name != NULL && off < len; ch++)
		off += snprintf(buf + off, len - off, "%s%s", ch == choices ? "" : "|", ch->name);
	for (ch = choices; ch->name != NULL && off < len; ch++) {
		for (i = 0; ch->aliases[i] != NULL && off < len; i++) {
			off += snprintf(buf + off, len - off, "%s%s", any ? "|" : " (or ",
					ch->aliases[i]);
			any = true;
		}
	}
	if (any && off < len)
		snprintf(buf + off, len - off, ")");
}

/*
 * Check "0-3,8": CPU numbers, ranges a-b with a <= b, separated by commas.
 * Whether the CPUs exist is the runtime's question.
 */
static int
sm_check_cpuset(const char *shown_key, const char *v, char *msg, size_t msglen)
{
	char shown[SM_CONFIG_SHOW_MAX + 4];
	const char *p = v;

	sm_show(v, shown, sizeof(shown));
	for (;;) {
		unsigned long lo, hi;
		const char *start = p;
		char *end;

		if (!isdigit((unsigned char)*p))
			goto bad_syntax;
		lo = strtoul(p, &end, 10);
		p = end;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				goto bad_syntax;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (lo > SM_CONFIG_MAX_CPU || hi > SM_CONFIG_MAX_CPU) {
			sm_errf(msg, msglen, "%s: CPU number in '%s' is above %u", shown_key, shown,
				SM_CONFIG_MAX_CPU);
			return -EINVAL;
		}
		if (lo > hi) {
			sm_errf(msg, msglen,
				"%s: range '%.*s' in '%s' runs backwards; write '%lu-%lu'",
				shown_key, (int)(p - start), start, shown, hi, lo);
			return -EINVAL;
		}
		if (*p == '\0')
			return 0;
		if (*p != ',')
			goto bad_syntax;
		p++;
	}
bad_syntax:
	sm_errf(msg, msglen, "%s: expected a CPU list like '0-3,8', got '%s'", shown_key, shown);
	return -EINVAL;
}

/* What a key wants, for "expected ..., got ..." messages. */
static void
sm_expected(const struct sm_key *k, char *buf, size_t len)
{
	char list[256];

	switch (k->type) {
	case SM_KT_UINT:
	case SM_KT_LISTEN_PORT:
		snprintf(buf, len, "an unsigned integer");
		break;
	case SM_KT_BOOL:
		snprintf(buf, len, "true or false");
		break;
	case SM_KT_ENUM:
		sm_enum_list(k->choices, list, sizeof(list));
		snprintf(buf, len, "one of %s", list);
		break;
	case SM_KT_CPUSET:
		snprintf(buf, len, "a CPU list like '0-3,8'");
		break;
	case SM_KT_SIZE:
		snprintf(buf, len, "a size like 4G, 512M, 64k or a number of bytes");
		break;
	default:
		snprintf(buf, len, "a value");
		break;
	}
}

/*
 * Parse @text for key @k into @out (a fresh string for string keys). @is_null
 * is YAML's null (an empty plain scalar, ~, null). Messages start with
 * @shown_key, the key as the user spelled it.
 */
static int
sm_parse_value(const struct sm_key *k, const char *shown_key, const char *text, bool is_null,
	       union sm_value *out, char *msg, size_t msglen)
{
	char shown[SM_CONFIG_SHOW_MAX + 4];
	char want[320];
	const char *canon, *p;
	unsigned long long u;
	int rc;

	if (is_null || text[0] == '\0') {
		if (sm_key_optional(k)) {
			out->s = NULL;
			return 0;
		}
		sm_expected(k, want, sizeof(want));
		sm_errf(msg, msglen, "%s: expected %s, got nothing", shown_key, want);
		return -EINVAL;
	}
	sm_show(text, shown, sizeof(shown));

	switch (k->type) {
	case SM_KT_UINT:
	case SM_KT_LISTEN_PORT:
		/* strtoull alone would take "-1", " 4" and "0x10". */
		for (p = text; *p != '\0'; p++)
			if (!isdigit((unsigned char)*p))
				goto bad_value;
		errno = 0;
		u = strtoull(text, NULL, 10);
		if (errno == ERANGE || u < k->min || u > k->max) {
			sm_errf(msg, msglen, "%s: %s is out of range %u..%u%s", shown_key, shown,
				k->min, k->max,
				k->type == SM_KT_LISTEN_PORT && k->min == 0 ? " (0 turns it off)"
									    : "");
			return -EINVAL;
		}
		out->u = (unsigned)u;
		return 0;
	case SM_KT_BOOL:
		if (sm_parse_bool(text, &out->b) < 0)
			goto bad_value;
		return 0;
	case SM_KT_ENUM:
		canon = sm_parse_enum(k->choices, text);
		if (canon == NULL)
			goto bad_value;
		text = canon;
		break;
	case SM_KT_CPUSET:
		rc = sm_check_cpuset(shown_key, text, msg, msglen);
		if (rc < 0)
			return rc;
		break;
	case SM_KT_SIZE: {
		uint64_t bytes;

		if (sm_config_parse_size(text, &bytes) < 0)
			goto bad_value;
		break;
	}
	case SM_KT_STRING:
	case SM_KT_OPT_STRING:
		break;
	}
	out->s = strdup(text);
	if (out->s == NULL) {
		sm_errf(msg, msglen, "%s: out of memory", shown_key);
		return -ENOMEM;
	}
	return 0;

bad_value:
	sm_expected(k, want, sizeof(want));
	sm_errf(msg, msglen, "%s: expected %s, got '%s'", shown_key, want, shown);
	return -EINVAL;
}

/* Take ownership of @v, freeing the string it replaces. */
static void
sm_store_value(struct sm_config *c, const struct sm_key *k, union sm_value v)
{
	void *f = sm_field(c, k);

	if (sm_key_is_uint(k)) {
		*(unsigned *)f = v.u;
	} else if (k->type == SM_KT_BOOL) {
		*(bool *)f = v.b;
	} else {
		free(*(char **)f);
		*(char **)f = v.s;
	}
}

void
sm_config_defaults(struct sm_config *c)
{
	union sm_value v;
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < SM_NKEYS; i++) {
		/* Only running out of memory can fail here; the string then stays NULL. */
		if (sm_parse_value(&sm_keys[i], sm_keys[i].name, sm_keys[i].defval, false, &v, NULL,
				   0) == 0)
			sm_store_value(c, &sm_keys[i], v);
	}
}

void
sm_config_free(struct sm_config *c)
{
	size_t i;

	for (i = 0; i < SM_NKEYS; i++)
		if (sm_key_is_string(&sm_keys[i]))
			free(*(char **)sm_field(c, &sm_keys[i]));
	memset(c, 0, sizeof(*c));
}

/* Deep copy, so a failed load can be thrown away and leave the caller's config as it was. */
static int
sm_config_copy(struct sm_config *dst, const struct sm_config *src)
{
	size_t i;

	*dst = *src;
	for (i = 0; i < SM_NKEYS; i++)
		if (sm_key_is_string(&sm_keys[i]))
			*(char **)sm_field(dst, &sm_keys[i]) = NULL;
	for (i = 0; i < SM_NKEYS; i++) {
		const char *s;

		if (!sm_key_is_string(&sm_keys[i]))
			continue;
		s = *(char *const *)sm_cfield(src, &sm_keys[i]);
		if (s == NULL)
			continue;
		*(char **)sm_field(dst, &sm_keys[i]) = strdup(s);
		if (*(char **)sm_field(dst, &sm_keys[i]) == NULL)
			goto free_dst;
	}
	return 0;

free_dst:
	sm_config_free(dst);
	return -ENOMEM;
}

int
sm_config_set(struct sm_config *c, const char *key, const char *value, char *err, size_t errlen)
{
	char canon[SM_CONFIG_KEY_MAX + 1];
	const struct sm_key *k = NULL;
	union sm_value v;
	int rc;

	if (sm_key_canon(key, canon, sizeof(canon)))
		k = sm_key_find(canon);
	if (k == NULL) {
		sm_unknown_key_msg(key, true, err, errlen);
		return -EINVAL;
	}
	if (value == NULL) {
		if (k->type != SM_KT_BOOL) {
			sm_errf(err, errlen, "%s: needs a value (default %s%s%s)", key,
				k->defval[0] ? "'" : "", k->defval[0] ? k->defval : "unset",
				k->defval[0] ? "'" : "");
			return -EINVAL;
		}
		value = "true";
	}
	rc = sm_parse_value(k, key, value, false, &v, err, errlen);
	if (rc < 0)
		return rc;
	sm_store_value(c, k, v);
	/* "--listen-address": typed on the command line, so messages say it so */
	if (strncmp(key, "--", 2) == 0)
		c->from_cmdline[(k - sm_keys) / 64] |= 1ull << ((k - sm_keys) % 64);
	return 0;
}

const char *
sm_config_spelling(const struct sm_config *c, const char *key, char *buf, size_t len)
{
	const struct sm_key *k = sm_key_find(key);
	size_t i;

	if (k == NULL || !(c->from_cmdline[(k - sm_keys) / 64] & (1ull << ((k - sm_keys) % 64)))) {
		snprintf(buf, len, "%s", key);
		return buf;
	}
	snprintf(buf, len, "--%s", key);
	for (i = 2; buf[i] != '\0'; i++)
		if (buf[i] == '_')
			buf[i] = '-';
	return buf;
}

int
sm_config_resolve(struct sm_config *c, char *err, size_t errlen)
{
	char **fields[] = { &c->listen_address, &c->prometheus_address };
	const char *names[] = { "listen_address", "prometheus_address" };
	char addr[64], why[256], shown[64];
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char *copy;

		if (*fields[i] == NULL)
			continue;
		if (sm_net_addr_resolve(*fields[i], addr, sizeof(addr), why, sizeof(why)) < 0) {
			sm_errf(err, errlen,
				"%s '%s' does not resolve (%s): give an IP address of this machine "
				"or a name that resolves to one",
				sm_config_spelling(c, names[i], shown, sizeof(shown)), *fields[i], why);
			return -EINVAL;
		}
		if (strcmp(addr, *fields[i]) == 0)
			continue;
		copy = strdup(addr);
		if (copy == NULL) {
			sm_errf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		free(*fields[i]);
		*fields[i] = copy;
	}
	return 0;
}

struct sm_loader {
	yaml_parser_t parser;
	yaml_document_t doc;
	const char *path;
	struct sm_config *cfg;
	char *err;
	size_t errlen;
	size_t seen_line[SM_NKEYS]; /* where each key was set; 0 = not yet */
};

/* libyaml marks count from 0; editors count from 1. */
static void
sm_loader_errf(struct sm_loader *l, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
sm_loader_errf(struct sm_loader *l, yaml_mark_t mark, const char *fmt, ...)
{
	char body[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	sm_errf(l->err, l->errlen, "%s:%zu:%zu: %s", l->path, mark.line + 1, mark.column + 1, body);
}

static int
sm_loader_syntax_error(struct sm_loader *l)
{
	yaml_parser_t *p = &l->parser;
	const char *problem = p->problem ? p->problem : "syntax error";

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		sm_errf(l->err, l->errlen, "%s: out of memory while reading it", l->path);
		return -ENOMEM;
	case YAML_READER_ERROR:
		/* Bad encoding: libyaml knows the byte offset, not the line. */
		sm_errf(l->err, l->errlen, "%s: byte %zu: invalid YAML: %s; save the file as UTF-8",
			l->path, p->problem_offset, problem);
		return -EINVAL;
	default:
		break;
	}
	if (p->context != NULL)
		sm_loader_errf(l, p->problem_mark, "invalid YAML: %s (%s at line %zu column %zu)",
			       problem, p->context, p->context_mark.line + 1,
			       p->context_mark.column + 1);
	else
		sm_loader_errf(l, p->problem_mark, "invalid YAML: %s", problem);
	return -EINVAL;
}

/* YAML's null, only when written plain: "null" in quotes is a string. */
static bool
sm_scalar_is_null(const yaml_node_t *n)
{
	const char *v = (const char *)n->data.scalar.value;

	if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
	       strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

static const char *
sm_node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "a nested mapping";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_SCALAR_NODE:
		return "a single value";
	default:
		return "nothing";
	}
}

static int
sm_loader_pair(struct sm_loader *l, const yaml_node_t *key, const yaml_node_t *val,
	       const char *parent);

/*
 * scylla.yaml's groups (client_encryption_options: {enabled: true, ...}):
 * each member is the key "<group>_<member>", one level deep.
 */
static int
sm_loader_group(struct sm_loader *l, const char *group, const yaml_node_t *val)
{
	yaml_node_pair_t *pair;
	int rc;

	for (pair = val->data.mapping.pairs.start; pair < val->data.mapping.pairs.top; pair++) {
		rc = sm_loader_pair(l, yaml_document_get_node(&l->doc, pair->key),
				    yaml_document_get_node(&l->doc, pair->value), group);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* True when some key is named "<group>_...": @group may hold a nested mapping. */
static bool
sm_is_group(const char *group)
{
	size_t i, n = strlen(group);

	for (i = 0; i < SM_NKEYS; i++)
		if (strncmp(sm_keys[i].name, group, n) == 0 && sm_keys[i].name[n] == '_')
			return true;
	return false;
}

/* One "key: value" pair of the top-level mapping, or of a group's (@parent). */
static int
sm_loader_pair(struct sm_loader *l, const yaml_node_t *key, const yaml_node_t *val,
	       const char *parent)
{
	const struct sm_key *k;
	const char *name;
	union sm_value v;
	char body[640], full[160];
	size_t idx;
	int rc;

	if (key->type != YAML_SCALAR_NODE) {
		sm_loader_errf(l, key->start_mark,
			       "expected a key, got %s; write one 'key: value' per line",
			       sm_node_kind(key));
		return -EINVAL;
	}
	name = (const char *)key->data.scalar.value;
	if (parent != NULL) {
		snprintf(full, sizeof(full), "%s_%s", parent, name);
		name = full;
	} else if (val->type == YAML_MAPPING_NODE && sm_is_group(name)) {
		return sm_loader_group(l, name, val);
	}
	k = sm_key_find(name);
	if (k == NULL) {
		sm_unknown_key_msg(name, false, body, sizeof(body));
		sm_loader_errf(l, key->start_mark, "%s", body);
		return -EINVAL;
	}
	idx = (size_t)(k - sm_keys);
	if (l->seen_line[idx] != 0) {
		sm_loader_errf(l, key->start_mark,
			       "duplicate key '%s', already set on line %zu; keep one of them",
			       name, l->seen_line[idx]);
		return -EINVAL;
	}
	l->seen_line[idx] = key->start_mark.line + 1;

	if (val->type != YAML_SCALAR_NODE) {
		sm_loader_errf(
			l, val->start_mark,
			"%s: expected a single value, got %s; write '%s: <value>' on one line",
			name, sm_node_kind(val), name);
		return -EINVAL;
	}
	if (strlen((const char *)val->data.scalar.value) != val->data.scalar.length) {
		sm_loader_errf(l, val->start_mark, "%s: value contains a NUL character", name);
		return -EINVAL;
	}
	rc = sm_parse_value(k, name, (const char *)val->data.scalar.value, sm_scalar_is_null(val),
			    &v, body, sizeof(body));
	if (rc < 0) {
		sm_loader_errf(l, val->start_mark, "%s", body);
		return rc;
	}
	sm_store_value(l->cfg, k, v);
	return 0;
}

/* The document's root: a mapping, or nothing at all (a file of only "---" or "~"). */
static int
sm_loader_root(struct sm_loader *l, yaml_node_t *root)
{
	yaml_node_pair_t *pair;
	int rc;

	if (root->type == YAML_SCALAR_NODE && sm_scalar_is_null(root))
		return 0;
	if (root->type != YAML_MAPPING_NODE) {
		sm_loader_errf(l, root->start_mark,
			       "expected 'key: value' lines at the top level, got %s",
			       sm_node_kind(root));
		return -EINVAL;
	}
	for (pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; pair++) {
		rc = sm_loader_pair(l, yaml_document_get_node(&l->doc, pair->key),
				    yaml_document_get_node(&l->doc, pair->value), NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * Parse the whole stream before applying anything, so a syntax error is
 * reported as such rather than as a strange value just before it.
 */
static int
sm_loader_run(struct sm_loader *l)
{
	yaml_document_t next;
	yaml_node_t *root;
	int rc;

	if (!yaml_parser_load(&l->parser, &l->doc))
		return sm_loader_syntax_error(l);
	root = yaml_document_get_root_node(&l->doc);
	if (root == NULL) {
		/* An empty stream: no document at all. */
		rc = 0;
		goto delete_doc;
	}
	if (!yaml_parser_load(&l->parser, &next)) {
		rc = sm_loader_syntax_error(l);
		goto delete_doc;
	}
	if (yaml_document_get_root_node(&next) != NULL) {
		sm_loader_errf(l, next.start_mark,
			       "a second YAML document; keep one (remove this '---' and what "
			       "follows)");
		rc = -EINVAL;
		goto delete_next;
	}
	rc = sm_loader_root(l, root);
delete_next:
	yaml_document_delete(&next);
delete_doc:
	yaml_document_delete(&l->doc);
	return rc;
}

int
sm_config_load_file(struct sm_config *c, const char *path, char *err, size_t errlen)
{
	struct sm_loader *l;
	struct sm_config tmp;
	struct stat st;
	FILE *f;
	int rc;

	f = fopen(path, "r");
	if (f == NULL) {
		rc = -errno;
		sm_errf(err, errlen, "cannot open %s: %s; %s", path, strerror(-rc),
			rc == -ENOENT ? "pass an existing file to --config"
				      : "check the path and its permissions, or pass another file "
					"to --config");
		return rc;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		sm_errf(err, errlen, "cannot open %s: %s; pass a file to --config", path,
			strerror(EISDIR));
		rc = -EISDIR;
		goto close_file;
	}

	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		sm_errf(err, errlen, "%s: out of memory while reading it", path);
		rc = -ENOMEM;
		goto close_file;
	}
	rc = sm_config_copy(&tmp, c);
	if (rc < 0) {
		sm_errf(err, errlen, "%s: out of memory while reading it", path);
		goto free_loader;
	}
	if (!yaml_parser_initialize(&l->parser)) {
		sm_errf(err, errlen, "%s: out of memory while reading it", path);
		rc = -ENOMEM;
		goto free_tmp;
	}
	yaml_parser_set_input_file(&l->parser, f);
	l->path = path;
	l->cfg = &tmp;
	l->err = err;
	l->errlen = errlen;

	rc = sm_loader_run(l);
	yaml_parser_delete(&l->parser);
	if (rc == 0) {
		/* Commit only a fully applied file. */
		sm_config_free(c);
		*c = tmp;
		goto free_loader;
	}
free_tmp:
	sm_config_free(&tmp);
free_loader:
	free(l);
close_file:
	fclose(f);
	return rc;
}

int
sm_config_validate(const struct sm_config *c, char *err, size_t errlen)
{
	char text[32];
	union sm_value v;
	size_t i, j;
	int rc;

	/* Fields may have been set by code rather than parsed: check each as if typed. */
	for (i = 0; i < SM_NKEYS; i++) {
		const struct sm_key *k = &sm_keys[i];
		const char *s;

		if (sm_key_is_uint(k)) {
			snprintf(text, sizeof(text), "%u", *(const unsigned *)sm_cfield(c, k));
			s = text;
		} else if (sm_key_is_string(k)) {
			s = *(char *const *)sm_cfield(c, k);
		} else {
			continue;
		}
		if (s == NULL && !sm_key_optional(k)) {
			sm_errf(err, errlen, "%s is not set: give it a value", k->name);
			return -EINVAL;
		}
		if (s == NULL)
			continue;
		rc = sm_parse_value(k, k->name, s, false, &v, err, errlen);
		if (rc < 0)
			return rc;
		if (sm_key_is_string(k))
			free(v.s);
	}

	for (i = 0; i < SM_NKEYS; i++) {
		unsigned pi;

		if (sm_keys[i].type != SM_KT_LISTEN_PORT)
			continue;
		pi = *(const unsigned *)sm_cfield(c, &sm_keys[i]);
		if (pi == 0)
			continue;
		for (j = i + 1; j < SM_NKEYS; j++) {
			if (sm_keys[j].type != SM_KT_LISTEN_PORT ||
			    *(const unsigned *)sm_cfield(c, &sm_keys[j]) != pi)
				continue;
			char a[SM_CONFIG_KEY_MAX + 3], b[SM_CONFIG_KEY_MAX + 3];

			sm_errf(err, errlen,
				"%s and %s are both %u: give each service its own port",
				sm_config_spelling(c, sm_keys[i].name, a, sizeof(a)),
				sm_config_spelling(c, sm_keys[j].name, b, sizeof(b)), pi);
			return -EINVAL;
		}
	}

	if (c->dpdk_args != NULL && strcmp(c->network_stack, "dpdk") != 0) {
		char a[SM_CONFIG_KEY_MAX + 3], b[SM_CONFIG_KEY_MAX + 3];

		sm_errf(err, errlen,
			"%s is set but %s is '%s': set %s to dpdk, or remove %s",
			sm_config_spelling(c, "dpdk_args", a, sizeof(a)),
			sm_config_spelling(c, "network_stack", b, sizeof(b)), c->network_stack, b, a);
		return -EINVAL;
	}
	return 0;
}

int
sm_config_parse_size(const char *text, uint64_t *bytes)
{
	unsigned long long v, mult = 1;
	const char *p = text;
	char *end;

	/* strtoull alone would take "-1" and " 4". */
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno == ERANGE)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		mult = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1ull << 30;
		end++;
		break;
	case 't':
	case 'T':
		mult = 1ull << 40;
		end++;
		break;
	default:
		return -EINVAL;
	}
	/* Seastar and scylla.yaml also write "4GB", "512MiB". */
	if ((*end == 'i' || *end == 'I') && mult > 1)
		end++;
	if ((*end == 'b' || *end == 'B') && mult > 1)
		end++;
	if (*end != '\0' || (v != 0 && mult > ULLONG_MAX / v))
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}

const struct sm_config_key_info *
sm_config_keys(size_t *n)
{
	*n = SM_NKEYS;
	return sm_key_infos;
}

bool
sm_config_is_key(const char *key, bool *is_bool)
{
	char canon[SM_CONFIG_KEY_MAX + 1];
	const struct sm_key *k;

	if (!sm_key_canon(key, canon, sizeof(canon)))
		return false;
	k = sm_key_find(canon);
	if (k == NULL)
		return false;
	if (is_bool != NULL)
		*is_bool = k->type == SM_KT_BOOL;
	return true;
}

/*
 * Plain YAML when that reads back as the same string; double quotes when the
 * text could parse as something else (null, a list, a comment, "a: b").
 */
static void
sm_print_string(const char *s, FILE *f)
{
	bool plain = isalnum((unsigned char)s[0]) && strcmp(s, "null") != 0 &&
		     strcmp(s, "Null") != 0 && strcmp(s, "NULL") != 0;
	const char *p;

	for (p = s; plain && *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && strchr("_.,-/", *p) == NULL)
			plain = false;
	if (plain) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (p = s; *p != '\0'; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* Keys whose values are credentials: --print-config does not show them. */
static bool
sm_key_secret(const struct sm_key *k)
{
	return strcmp(k->name, "auth_superuser_password") == 0 ||
	       strcmp(k->name, "alternator_secret_access_key") == 0;
}

void
sm_config_print(const struct sm_config *c, FILE *f, bool secrets)
{
	size_t i;

	fputs("# shardmark effective configuration\n", f);
	for (i = 0; i < SM_NKEYS; i++) {
		const struct sm_key *k = &sm_keys[i];
		const char *s;

		fprintf(f, "%s: ", k->name);
		if (!secrets && sm_key_secret(k) && *(char *const *)sm_cfield(c, k) != NULL) {
			fputs("\"********\"  # masked: a credential; the file or --flag that set it "
			      "has the value\n",
			      f);
			continue;
		}
		if (sm_key_is_uint(k)) {
			fprintf(f, "%u", *(const unsigned *)sm_cfield(c, k));
		} else if (k->type == SM_KT_BOOL) {
			fputs(*(const bool *)sm_cfield(c, k) ? "true" : "false", f);
		} else {
			s = *(char *const *)sm_cfield(c, k);
			if (s == NULL)
				fputs("null", f);
			else
				sm_print_string(s, f);
		}
		fputc('\n', f);
	}
}
