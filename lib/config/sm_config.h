/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SM_CONFIG_H
#define SM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Runtime configuration of the shardmark binary.
 *
 * Values come from, in order: the built-in defaults, a YAML file
 * (config/shardmark.yaml is the documented default, --config picks another),
 * then command-line overrides, one per key. Key names follow ScyllaDB's
 * scylla.yaml where ScyllaDB has the setting. Every key is a row of one table
 * in sm_config.c: adding a key is one row there plus its field here.
 *
 * Strings are heap-owned by the struct (plain malloc/free: configuration is
 * read once, at start). Enum-like strings always hold their canonical
 * spelling, so callers compare with strcmp() only.
 */
struct sm_config {
	/* runtime */
	unsigned smp;		   /* shards; 0 = one per allowed CPU */
	char *cpuset;		   /* "0-3,8"; NULL = every allowed CPU */
	bool overprovisioned;	   /* run unpinned, allow smp > CPUs */
	char *network_stack;	   /* "uring" | "dpdk" */
	char *dpdk_args;	   /* EAL arguments; NULL = none */
	unsigned task_quota_us;	   /* reactor task quota */
	unsigned idle_poll_us;	   /* spin before blocking; 0 blocks at once */
	unsigned drain_timeout_ms; /* longest graceful stop */
	unsigned blocked_reactor_notify_ms;	     /* stall report threshold; 0 = off */
	unsigned blocked_reactor_reports_per_minute; /* stall reports per shard per minute */
	char *memory;		   /* process memory ("4G"); NULL = RAM minus reserve */
	char *reserve_memory;	   /* left to the kernel; NULL = max(1536M, 7%) */
	unsigned rx_buffers;	   /* provided receive buffers per shard */
	unsigned rx_buffer_size;   /* bytes per receive buffer */
	char *log_level;	   /* "error" | "warn" | "info" | "debug" */
	/* services (ScyllaDB names) */
	char *listen_address;
	unsigned native_transport_port;		    /* CQL */
	unsigned native_shard_aware_transport_port; /* CQL, shard chosen by source port */
	unsigned native_transport_port_ssl;		/* 0: the plain ports turn TLS */
	unsigned native_shard_aware_transport_port_ssl; /* its TLS twin; 0 as above */
	/* scylla.yaml's client_encryption_options, flattened */
	bool client_encryption_options_enabled;
	char *client_encryption_options_certificate;
	char *client_encryption_options_keyfile;
	char *client_encryption_options_truststore;
	bool client_encryption_options_require_client_auth;
	char *client_encryption_options_priority_string;
	bool tls_kernel_offload; /* kTLS for sending where the kernel has it */
	unsigned native_transport_max_frame_size_in_mb;
	unsigned native_transport_frame_timeout_in_ms;
	unsigned connection_max_unsent_bytes;
	unsigned batch_size_fail_threshold_in_kb;
	char *tablets_mode_for_new_keyspaces; /* disabled|enabled|enforced */
	/* CQL request timeouts (scylla.yaml's names and defaults); 0 = none */
	unsigned request_timeout_in_ms;
	unsigned read_request_timeout_in_ms;
	unsigned range_request_timeout_in_ms;
	unsigned write_request_timeout_in_ms;
	unsigned counter_write_request_timeout_in_ms;
	unsigned cas_contention_timeout_in_ms;
	unsigned truncate_request_timeout_in_ms;
	char *cluster_name;
	char *authenticator; /* "AllowAllAuthenticator" | "PasswordAuthenticator" */
	char *auth_superuser_name;
	char *auth_superuser_password;
	char *peers;			  /* other appliances, "a,b:port"; NULL = none */
	bool shard_nodes;		  /* one CQL node per shard */
	unsigned alternator_port;	  /* DynamoDB API over HTTP */
	unsigned alternator_https_port;	  /* 0 = off */
	char *alternator_encryption_options_certificate;
	char *alternator_encryption_options_keyfile;
	char *alternator_encryption_options_priority_string;
	char *alternator_write_isolation; /* forbid_rmw|unsafe|always_use_lwt|only_rmw_uses_lwt */
	bool alternator_enforce_authorization;
	char *alternator_access_key_id;
	char *alternator_secret_access_key;
	unsigned alternator_ttl_period_in_seconds;
	unsigned http_request_timeout_in_ms; /* 0 = none */
	unsigned http_idle_timeout_in_ms;
	unsigned prometheus_port; /* 0 = stats endpoint off */
	char *prometheus_address; /* NULL = listen_address */
	unsigned api_port;  /* ScyllaDB's REST API; 0 = off */
	char *api_address;  /* NULL = listen_address */
	char *commitlog_sync; /* off|periodic|batch */
	char *commitlog_directory;
	unsigned commitlog_segment_size_in_mb;
	unsigned commitlog_total_space_in_mb; /* 0 = no limit */
	unsigned commitlog_sync_period_in_ms;
	/* ours */
	unsigned echo_port;	 /* 0 = echo service off */
	unsigned echo_max_frame; /* largest echo frame accepted, bytes */
	/* Not a key: which keys were set as --flags (bit = row of the key
	 * table, set by sm_config_set() given the "--" spelling), so messages
	 * name the flag that was typed. */
	uint64_t from_cmdline[2];
};

/*
 * Fill @c with the built-in defaults. @c is treated as uninitialised: call
 * sm_config_free() first on a struct that already holds values. If the
 * process is out of memory a default string stays NULL and
 * sm_config_validate() reports it.
 */
void
sm_config_defaults(struct sm_config *c);

/*
 * Free the strings @c owns and zero it, so a second sm_config_free() or a
 * following sm_config_defaults() is safe.
 */
void
sm_config_free(struct sm_config *c);

/*
 * Load the YAML file @path over the current values of @c: keys it does not
 * mention keep their value. The top level must be a mapping of scalar
 * values; an empty file or one with only comments is valid. Returns 0, or
 * -errno with @c left unchanged and a message in @err that names the file,
 * line and column, the key, and the fix (unknown key with a "did you mean",
 * mistyped or out-of-range value, duplicate key, nested value, YAML syntax
 * error, missing file). Cross-key rules are sm_config_validate()'s job.
 */
int
sm_config_load_file(struct sm_config *c, const char *path, char *err, size_t errlen);

/*
 * Apply one override. @key is the YAML name ("native_transport_port") or
 * its command-line spelling, with or without the dashes in front
 * ("--native-transport-port", "native-transport-port"). @value is the text
 * as typed; NULL is accepted for a bool key only and means true (the bare
 * flag "--overprovisioned"). An empty value unsets an optional string
 * (cpuset, dpdk_args, prometheus_address). Validation and messages are the
 * file's, prefixed by @key as the user spelled it instead of a line.
 * Returns 0, or -EINVAL with @c unchanged, or -ENOMEM.
 */
int
sm_config_set(struct sm_config *c, const char *key, const char *value, char *err, size_t errlen);

/*
 * Check the rules that span keys, after the file and all overrides are
 * applied: every enabled listening port distinct, dpdk_args only with
 * network_stack dpdk, required strings present. Returns 0 or -EINVAL with
 * a message naming the keys and the fix.
 */
int
sm_config_validate(const struct sm_config *c, char *err, size_t errlen);

/*
 * Parse a size: digits with an optional k, M, G or T suffix (powers of
 * 1024, case-insensitive, "GB" and "GiB" too). 0 or -EINVAL.
 */
int
sm_config_parse_size(const char *text, uint64_t *bytes);

/*
 * One row of the key table, for --help. @name is the YAML name (the
 * command-line spelling is "--" plus @name with '_' turned into '-'),
 * @type is "int", "bool", "string", "port", "list" or "size", @defval the default
 * as text ("" for a key that is unset by default), @help one line.
 */
struct sm_config_key_info {
	const char *name;
	const char *type;
	const char *defval;
	const char *help;
};

/* The key table, in the order of config/shardmark.yaml; @n gets its length. */
const struct sm_config_key_info *
sm_config_keys(size_t *n);

/*
 * True when @key, in YAML or command-line spelling, is a config key.
 * @is_bool (may be NULL) tells whether it is a bool, which may be given as a
 * bare flag without a value.
 */
bool
sm_config_is_key(const char *key, bool *is_bool);

/*
 * @key (YAML name) as the user gave it: "--listen-address" when the
 * command line set it, else "listen_address" (the file's or the default's
 * spelling). Returns @buf.
 */
const char *
sm_config_spelling(const struct sm_config *c, const char *key, char *buf, size_t len);

/*
 * Turn host names in listen_address and prometheus_address into numeric
 * addresses ("localhost" -> "127.0.0.1"), as stress -node does, so every
 * later use sees an IP. 0, or -EINVAL with a message naming the key as
 * the user spelled it and the fix, or -ENOMEM.
 */
int
sm_config_resolve(struct sm_config *c, char *err, size_t errlen);

/*
 * Write the effective configuration to @f as YAML that sm_config_load_file()
 * reads back to the same values (shardmark serve --print-config). Without
 * @secrets the passwords and secret keys (auth_superuser_password,
 * alternator_secret_access_key) print as "********" with a comment saying
 * so, and those two do not read back.
 */
void
sm_config_print(const struct sm_config *c, FILE *f, bool secrets);

#endif /* SM_CONFIG_H */
