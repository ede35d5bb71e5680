/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sm_config.h"

/* Relative to the test's working directory, tests/app (see meson.build). */
#define SHIPPED_CONFIG "../../config/shardmark.yaml"

struct fixture {
	struct sm_config cfg;
	char path[64];
	char err[1024];
};

static int
setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (fx == NULL)
		return -1;
	sm_config_defaults(&fx->cfg);
	*state = fx;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx->path[0] != '\0')
		unlink(fx->path);
	sm_config_free(&fx->cfg);
	free(fx);
	return 0;
}

/* Write @text to a fresh file under /tmp; its name goes in fx->path. */
static const char *
write_tmp(struct fixture *fx, const char *text)
{
	size_t len = strlen(text);
	int fd;

	if (fx->path[0] != '\0')
		unlink(fx->path);
	snprintf(fx->path, sizeof(fx->path), "/tmp/test_config.XXXXXX");
	fd = mkstemp(fx->path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return fx->path;
}

/* Load @text as a file; returns the loader's result, message in fx->err. */
static int
load_text(struct fixture *fx, const char *text)
{
	fx->err[0] = '\0';
	return sm_config_load_file(&fx->cfg, write_tmp(fx, text), fx->err, sizeof(fx->err));
}

/* Expect @text to fail with a message that starts with "<path>:<where>: " and holds @part. */
static void
expect_load_error(struct fixture *fx, const char *text, const char *where, const char *part)
{
	char prefix[128];

	assert_int_equal(load_text(fx, text), -EINVAL);
	snprintf(prefix, sizeof(prefix), "%s:%s: ", fx->path, where);
	if (strncmp(fx->err, prefix, strlen(prefix)) != 0 || strstr(fx->err, part) == NULL)
		fail_msg("message '%s' lacks '%s' or '%s'", fx->err, prefix, part);
}

static void
expect_set_error(struct fixture *fx, const char *key, const char *value, const char *part)
{
	fx->err[0] = '\0';
	assert_int_equal(sm_config_set(&fx->cfg, key, value, fx->err, sizeof(fx->err)), -EINVAL);
	if (strstr(fx->err, part) == NULL)
		fail_msg("set %s=%s: message '%s' lacks '%s'", key, value ? value : "(null)",
			 fx->err, part);
}

static void
set_ok(struct fixture *fx, const char *key, const char *value)
{
	fx->err[0] = '\0';
	if (sm_config_set(&fx->cfg, key, value, fx->err, sizeof(fx->err)) != 0)
		fail_msg("set %s=%s: %s", key, value ? value : "(null)", fx->err);
}

static void
assert_str_or_null(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

static void
assert_config_equal(const struct sm_config *a, const struct sm_config *b)
{
	assert_int_equal(a->smp, b->smp);
	assert_str_or_null(a->cpuset, b->cpuset);
	assert_int_equal(a->overprovisioned, b->overprovisioned);
	assert_str_or_null(a->network_stack, b->network_stack);
	assert_str_or_null(a->dpdk_args, b->dpdk_args);
	assert_int_equal(a->task_quota_us, b->task_quota_us);
	assert_int_equal(a->idle_poll_us, b->idle_poll_us);
	assert_int_equal(a->drain_timeout_ms, b->drain_timeout_ms);
	assert_int_equal(a->rx_buffers, b->rx_buffers);
	assert_int_equal(a->rx_buffer_size, b->rx_buffer_size);
	assert_str_or_null(a->log_level, b->log_level);
	assert_str_or_null(a->listen_address, b->listen_address);
	assert_int_equal(a->native_transport_port, b->native_transport_port);
	assert_int_equal(a->native_shard_aware_transport_port,
			 b->native_shard_aware_transport_port);
	assert_int_equal(a->alternator_port, b->alternator_port);
	assert_str_or_null(a->alternator_write_isolation, b->alternator_write_isolation);
	assert_int_equal(a->prometheus_port, b->prometheus_port);
	assert_str_or_null(a->prometheus_address, b->prometheus_address);
	assert_int_equal(a->echo_port, b->echo_port);
	assert_int_equal(a->echo_max_frame, b->echo_max_frame);
}

/* Every key away from its default, strings included, some needing YAML quotes. */
static void
set_all_non_default(struct fixture *fx)
{
	set_ok(fx, "smp", "3");
	set_ok(fx, "cpuset", "0-3,8");
	set_ok(fx, "overprovisioned", "yes");
	set_ok(fx, "network_stack", "dpdk");
	set_ok(fx, "dpdk_args", "--no-huge --vdev \"net_tap0,iface=x\" \\ # not a comment: ok");
	set_ok(fx, "task_quota_us", "250");
	set_ok(fx, "idle_poll_us", "0");
	set_ok(fx, "drain_timeout_ms", "500");
	set_ok(fx, "rx_buffers", "64");
	set_ok(fx, "rx_buffer_size", "4096");
	set_ok(fx, "log_level", "debug");
	set_ok(fx, "listen_address", "::1");
	set_ok(fx, "native_transport_port", "9043");
	set_ok(fx, "native_shard_aware_transport_port", "19043");
	set_ok(fx, "alternator_port", "8001");
	set_ok(fx, "alternator_write_isolation", "a");
	set_ok(fx, "prometheus_port", "0");
	set_ok(fx, "prometheus_address", "null");
	set_ok(fx, "echo_port", "7");
	set_ok(fx, "echo_max_frame", "1024");
}

static void
test_defaults(void **state)
{
	struct fixture *fx = *state;
	const struct sm_config *c = &fx->cfg;

	assert_int_equal(c->smp, 0);
	assert_null(c->cpuset);
	assert_false(c->overprovisioned);
	assert_string_equal(c->network_stack, "uring");
	assert_null(c->dpdk_args);
	assert_int_equal(c->task_quota_us, 500);
	assert_int_equal(c->idle_poll_us, 200);
	assert_int_equal(c->drain_timeout_ms, 10000);
	assert_int_equal(c->rx_buffers, 1024);
	assert_int_equal(c->rx_buffer_size, 16384);
	assert_string_equal(c->log_level, "info");
	assert_string_equal(c->listen_address, "127.0.0.1");
	assert_int_equal(c->native_transport_port, 9042);
	assert_int_equal(c->native_shard_aware_transport_port, 19042);
	assert_int_equal(c->alternator_port, 8000);
	assert_string_equal(c->alternator_write_isolation, "only_rmw_uses_lwt");
	assert_int_equal(c->prometheus_port, 9180);
	assert_null(c->prometheus_address);
	assert_int_equal(c->echo_port, 0);
	assert_int_equal(c->echo_max_frame, 16777216);
	assert_int_equal(sm_config_validate(c, fx->err, sizeof(fx->err)), 0);
}

static void
test_free_twice(void **state)
{
	struct fixture *fx = *state;

	set_all_non_default(fx);
	sm_config_free(&fx->cfg);
	assert_null(fx->cfg.listen_address);
	sm_config_free(&fx->cfg);
	sm_config_defaults(&fx->cfg);
	assert_string_equal(fx->cfg.listen_address, "127.0.0.1");
}

/* The shipped file lists every key at its default, and loads cleanly. */
static void
test_shipped_file(void **state)
{
	struct fixture *fx = *state;
	struct sm_config defaults;
	const struct sm_config_key_info *keys;
	char *text, *line;
	size_t n, i, len;
	FILE *f;

	set_all_non_default(fx);
	if (sm_config_load_file(&fx->cfg, SHIPPED_CONFIG, fx->err, sizeof(fx->err)) != 0)
		fail_msg("%s", fx->err);
	sm_config_defaults(&defaults);
	assert_config_equal(&fx->cfg, &defaults);
	sm_config_free(&defaults);
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), 0);

	f = fopen(SHIPPED_CONFIG, "r");
	assert_non_null(f);
	text = calloc(1, 65536);
	assert_non_null(text);
	text[0] = '\n';
	len = fread(text + 1, 1, 65534, f);
	assert_true(len > 0 && len < 65534);
	fclose(f);
	keys = sm_config_keys(&n);
	for (i = 0; i < n; i++) {
		char want[128];

		/* Each key is present, with a comment line right above it. */
		snprintf(want, sizeof(want), "\n%s:", keys[i].name);
		line = strstr(text, want);
		if (line == NULL)
			fail_msg("%s lacks key %s", SHIPPED_CONFIG, keys[i].name);
		assert_true(line > text + 1);
		while (line > text && line[-1] != '\n')
			line--;
		assert_int_equal(line[0], '#');
	}
	free(text);
}

static void
test_key_table(void **state)
{
	struct fixture *fx = *state;
	const struct sm_config_key_info *keys;
	size_t n, i, j;

	keys = sm_config_keys(&n);
	assert_int_equal(n, 68);
	for (i = 0; i < n; i++) {
		bool is_bool;

		assert_true(sm_config_is_key(keys[i].name, &is_bool));
		assert_int_equal(is_bool, strcmp(keys[i].type, "bool") == 0);
		assert_non_null(keys[i].defval);
		assert_true(strlen(keys[i].help) > 0);
		assert_true(strcmp(keys[i].type, "int") == 0 || strcmp(keys[i].type, "bool") == 0 ||
			    strcmp(keys[i].type, "string") == 0 ||
			    strcmp(keys[i].type, "port") == 0 || strcmp(keys[i].type, "list") == 0 ||
			    strcmp(keys[i].type, "size") == 0);
		for (j = i + 1; j < n; j++)
			assert_string_not_equal(keys[i].name, keys[j].name);
		/* The default shown by --help is the default in effect. */
		set_ok(fx, keys[i].name, keys[i].defval);
	}
	{
		struct sm_config defaults;

		sm_config_defaults(&defaults);
		assert_config_equal(&fx->cfg, &defaults);
		sm_config_free(&defaults);
	}
	assert_string_equal(keys[0].name, "smp");
	assert_string_equal(keys[0].type, "int");
	assert_string_equal(keys[1].type, "list");
}

static void
test_is_key(void **state)
{
	bool is_bool = false;

	(void)state;
	assert_true(sm_config_is_key("--overprovisioned", &is_bool));
	assert_true(is_bool);
	assert_true(sm_config_is_key("--smp", &is_bool));
	assert_false(is_bool);
	assert_true(sm_config_is_key("native-shard-aware-transport-port", NULL));
	assert_true(sm_config_is_key("native_shard_aware_transport_port", NULL));
	assert_true(sm_config_is_key("--alternator-write-isolation", NULL));
	assert_false(sm_config_is_key("--config", NULL));
	assert_false(sm_config_is_key("--help", NULL));
	assert_false(sm_config_is_key("-smp", NULL));
	assert_false(sm_config_is_key("", NULL));
	assert_false(sm_config_is_key("--", NULL));
}

static void
test_uint(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "smp", "0");
	set_ok(fx, "smp", "1024");
	assert_int_equal(fx->cfg.smp, 1024);
	set_ok(fx, "smp", "007");
	assert_int_equal(fx->cfg.smp, 7);
	set_ok(fx, "echo_max_frame", "1073741824");
	assert_int_equal(fx->cfg.echo_max_frame, 1073741824u);

	expect_set_error(fx, "smp", "four", "smp: expected an unsigned integer, got 'four'");
	expect_set_error(fx, "smp", "-1", "expected an unsigned integer, got '-1'");
	expect_set_error(fx, "smp", "+1", "expected an unsigned integer");
	expect_set_error(fx, "smp", " 4", "expected an unsigned integer");
	expect_set_error(fx, "smp", "4 ", "expected an unsigned integer");
	expect_set_error(fx, "smp", "0x10", "expected an unsigned integer");
	expect_set_error(fx, "smp", "4.0", "expected an unsigned integer");
	expect_set_error(fx, "smp", "", "smp: expected an unsigned integer, got nothing");
	expect_set_error(fx, "smp", NULL, "smp: needs a value (default '0')");
	expect_set_error(fx, "smp", "1025", "smp: 1025 is out of range 0..1024");
	expect_set_error(fx, "smp", "99999999999999999999999", "is out of range 0..1024");
	expect_set_error(fx, "smp", "4294967296", "is out of range 0..1024");
	expect_set_error(fx, "task_quota_us", "0", "task_quota_us: 0 is out of range 1..1000000");
	/* A failed set leaves the old value. */
	assert_int_equal(fx->cfg.smp, 7);
}

static void
test_size(void **state)
{
	struct fixture *fx = *state;
	uint64_t v;

	assert_int_equal(sm_config_parse_size("1048576", &v), 0);
	assert_int_equal(v, 1048576u);
	assert_int_equal(sm_config_parse_size("4G", &v), 0);
	assert_int_equal(v, 4ull << 30);
	assert_int_equal(sm_config_parse_size("512m", &v), 0);
	assert_int_equal(v, 512ull << 20);
	assert_int_equal(sm_config_parse_size("64KiB", &v), 0);
	assert_int_equal(v, 64ull << 10);
	assert_int_equal(sm_config_parse_size("2GB", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(sm_config_parse_size("1T", &v), 0);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(sm_config_parse_size("", &v), -EINVAL);
	assert_int_equal(sm_config_parse_size("-1G", &v), -EINVAL);
	assert_int_equal(sm_config_parse_size(" 1G", &v), -EINVAL);
	assert_int_equal(sm_config_parse_size("1.5G", &v), -EINVAL);
	assert_int_equal(sm_config_parse_size("1X", &v), -EINVAL);
	assert_int_equal(sm_config_parse_size("1Gx", &v), -EINVAL);
	assert_int_equal(sm_config_parse_size("1B", &v), -EINVAL);
	assert_int_equal(sm_config_parse_size("99999999999999999999", &v), -EINVAL);
	assert_int_equal(sm_config_parse_size("17179869184G", &v), -EINVAL);

	set_ok(fx, "memory", "1G");
	assert_string_equal(fx->cfg.memory, "1G");
	set_ok(fx, "memory", "");
	assert_null(fx->cfg.memory);
	expect_set_error(fx, "--memory", "lots",
			 "--memory: expected a size like 4G, 512M, 64k or a number of bytes, got "
			 "'lots'");
}

static void
test_port(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "native_transport_port", "1");
	set_ok(fx, "native_transport_port", "65535");
	assert_int_equal(fx->cfg.native_transport_port, 65535);
	set_ok(fx, "echo_port", "0");
	set_ok(fx, "prometheus_port", "0");
	assert_int_equal(fx->cfg.prometheus_port, 0);
	expect_set_error(fx, "native_transport_port", "0",
			 "native_transport_port: 0 is out of range 1..65535");
	expect_set_error(fx, "native_shard_aware_transport_port", "0", "out of range 1..65535");
	expect_set_error(fx, "alternator_port", "65536",
			 "alternator_port: 65536 is out of range 0..65535 (0 turns it off)");
	set_ok(fx, "alternator_port", "0");
	assert_int_equal(fx->cfg.alternator_port, 0);
	expect_set_error(fx, "echo_port", "65536",
			 "echo_port: 65536 is out of range 0..65535 (0 turns it off)");
	expect_set_error(fx, "prometheus_port", "http", "expected an unsigned integer, got 'http'");
}

static void
test_bool(void **state)
{
	static const char *const yes[] = { "true", "TRUE", "True", "yes", "YES", "on", "On", "1" };
	static const char *const no[] = { "false", "FALSE", "no", "No", "off", "OFF", "0" };
	struct fixture *fx = *state;
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		fx->cfg.overprovisioned = false;
		set_ok(fx, "overprovisioned", yes[i]);
		assert_true(fx->cfg.overprovisioned);
	}
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		fx->cfg.overprovisioned = true;
		set_ok(fx, "overprovisioned", no[i]);
		assert_false(fx->cfg.overprovisioned);
	}
	/* A bare flag means true. */
	set_ok(fx, "--overprovisioned", NULL);
	assert_true(fx->cfg.overprovisioned);
	expect_set_error(fx, "overprovisioned", "maybe",
			 "overprovisioned: expected true or false, got 'maybe'");
	expect_set_error(fx, "overprovisioned", "2", "expected true or false, got '2'");
	expect_set_error(fx, "overprovisioned", "y", "expected true or false, got 'y'");
	expect_set_error(fx, "overprovisioned", "", "expected true or false, got nothing");
	assert_true(fx->cfg.overprovisioned);
}

static void
test_string(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "listen_address", "::1");
	assert_string_equal(fx->cfg.listen_address, "::1");
	expect_set_error(fx, "listen_address", "", "listen_address: expected a value, got nothing");
	assert_string_equal(fx->cfg.listen_address, "::1");

	set_ok(fx, "dpdk_args", "--no-huge --vdev net_tap0");
	assert_string_equal(fx->cfg.dpdk_args, "--no-huge --vdev net_tap0");
	/* Empty unsets an optional string. */
	set_ok(fx, "dpdk_args", "");
	assert_null(fx->cfg.dpdk_args);
	set_ok(fx, "prometheus_address", "0.0.0.0");
	assert_string_equal(fx->cfg.prometheus_address, "0.0.0.0");
	set_ok(fx, "prometheus_address", "");
	assert_null(fx->cfg.prometheus_address);
}

static void
test_enum(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "network_stack", "dpdk");
	assert_string_equal(fx->cfg.network_stack, "dpdk");
	set_ok(fx, "network_stack", "URING");
	assert_string_equal(fx->cfg.network_stack, "uring");
	expect_set_error(fx, "network_stack", "xdp",
			 "network_stack: expected one of uring|dpdk, got 'xdp'");
	expect_set_error(fx, "network_stack", "", "expected one of uring|dpdk, got nothing");

	set_ok(fx, "log_level", "Debug");
	assert_string_equal(fx->cfg.log_level, "debug");
	set_ok(fx, "log_level", "warn");
	expect_set_error(fx, "log_level", "verbose",
			 "log_level: expected one of error|warn|info|debug, got 'verbose'");
	assert_string_equal(fx->cfg.log_level, "warn");
}

static void
test_write_isolation(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "f", "forbid_rmw" },
		{ "forbid", "forbid_rmw" },
		{ "forbid_rmw", "forbid_rmw" },
		{ "u", "unsafe" },
		{ "unsafe", "unsafe" },
		{ "unsafe_rmw", "unsafe" },
		{ "a", "always_use_lwt" },
		{ "always", "always_use_lwt" },
		{ "always_use_lwt", "always_use_lwt" },
		{ "o", "only_rmw_uses_lwt" },
		{ "only_rmw_uses_lwt", "only_rmw_uses_lwt" },
		{ "F", "forbid_rmw" },
	};
	struct fixture *fx = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set_ok(fx, "--alternator-write-isolation", cases[i].in);
		assert_string_equal(fx->cfg.alternator_write_isolation, cases[i].out);
	}
	expect_set_error(fx, "alternator_write_isolation", "x",
			 "alternator_write_isolation: expected one of "
			 "forbid_rmw|unsafe|always_use_lwt|only_rmw_uses_lwt (or ");
	expect_set_error(fx, "alternator_write_isolation", "forbidden", "got 'forbidden'");
	expect_set_error(fx, "alternator_write_isolation", "only", "got 'only'");

	/* The same from a file. */
	assert_int_equal(load_text(fx, "alternator_write_isolation: u\n"), 0);
	assert_string_equal(fx->cfg.alternator_write_isolation, "unsafe");
}

static void
test_cpuset(void **state)
{
	static const char *const good[] = { "0", "0-3,8", "10-11,0,2-2", "0-65535", "007" };
	struct fixture *fx = *state;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		set_ok(fx, "cpuset", good[i]);
		assert_string_equal(fx->cfg.cpuset, good[i]);
	}
	expect_set_error(fx, "cpuset", "a", "cpuset: expected a CPU list like '0-3,8', got 'a'");
	expect_set_error(fx, "cpuset", "0-", "got '0-'");
	expect_set_error(fx, "cpuset", "-1", "got '-1'");
	expect_set_error(fx, "cpuset", "0,,1", "got '0,,1'");
	expect_set_error(fx, "cpuset", "0,", "got '0,'");
	expect_set_error(fx, "cpuset", ",0", "got ',0'");
	expect_set_error(fx, "cpuset", "0 - 3", "got '0 - 3'");
	expect_set_error(fx, "cpuset", "0-3-5", "got '0-3-5'");
	expect_set_error(fx, "cpuset", "0;1", "got '0;1'");
	expect_set_error(fx, "cpuset", "8,5-3",
			 "cpuset: range '5-3' in '8,5-3' runs backwards; write '3-5'");
	expect_set_error(fx, "cpuset", "65536", "CPU number in '65536' is above 65535");
	expect_set_error(fx, "cpuset", "99999999999999999999999", "is above 65535");
	assert_string_equal(fx->cfg.cpuset, "007");
	/* Empty means every allowed CPU. */
	set_ok(fx, "cpuset", "");
	assert_null(fx->cfg.cpuset);
}

static void
test_override_spellings(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "--native-transport-port", "9043");
	assert_int_equal(fx->cfg.native_transport_port, 9043);
	set_ok(fx, "native-transport-port", "9044");
	assert_int_equal(fx->cfg.native_transport_port, 9044);
	set_ok(fx, "native_transport_port", "9045");
	assert_int_equal(fx->cfg.native_transport_port, 9045);
	set_ok(fx, "--native_transport_port", "9046");
	assert_int_equal(fx->cfg.native_transport_port, 9046);
	set_ok(fx, "--smp", "2");
	assert_int_equal(fx->cfg.smp, 2);
	/* Messages name the key the way it was typed. */
	expect_set_error(fx, "--native-transport-port", "x",
			 "--native-transport-port: expected an unsigned integer, got 'x'");
}

static void
test_unknown_key_set(void **state)
{
	struct fixture *fx = *state;

	expect_set_error(fx, "--smpp", "4",
			 "unknown key '--smpp' (did you mean '--smp'?); see `shardmark serve "
			 "--help` for the list");
	expect_set_error(fx, "native-transprot-port", "1", "did you mean 'native-transport-port'?");
	expect_set_error(fx, "native_transprot_port", "1", "did you mean 'native_transport_port'?");
	expect_set_error(fx, "--frobnicate", "1", "unknown key '--frobnicate'; see `shardmark");
	fx->err[0] = '\0';
	assert_int_equal(sm_config_set(&fx->cfg, "--frobnicate", "1", fx->err, sizeof(fx->err)),
			 -EINVAL);
	assert_null(strstr(fx->err, "did you mean"));
}

static void
test_load_over_current(void **state)
{
	struct fixture *fx = *state;

	set_ok(fx, "listen_address", "10.0.0.1");
	set_ok(fx, "echo_port", "7000");
	assert_int_equal(load_text(fx, "# only smp\nsmp: 4\n"), 0);
	assert_int_equal(fx->cfg.smp, 4);
	assert_string_equal(fx->cfg.listen_address, "10.0.0.1");
	assert_int_equal(fx->cfg.echo_port, 7000);
}

static void
test_load_types(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(load_text(fx, "smp: 4\n"
				       "overprovisioned: Yes\n"
				       "cpuset: 0-3,8\n"
				       "listen_address: '::1'\n"
				       "dpdk_args: \"--no-huge --vdev net_tap0\"\n"
				       "network_stack: dpdk\n"
				       "log_level: debug # trailing comment\n"
				       "prometheus_address: \"null\"\n"),
			 0);
	assert_int_equal(fx->cfg.smp, 4);
	assert_true(fx->cfg.overprovisioned);
	assert_string_equal(fx->cfg.cpuset, "0-3,8");
	assert_string_equal(fx->cfg.listen_address, "::1");
	assert_string_equal(fx->cfg.dpdk_args, "--no-huge --vdev net_tap0");
	assert_string_equal(fx->cfg.log_level, "debug");
	/* Quoted, "null" is a string; plain, it is YAML's null. */
	assert_string_equal(fx->cfg.prometheus_address, "null");
	assert_int_equal(load_text(fx, "cpuset: ~\ndpdk_args: null\nprometheus_address:\n"), 0);
	assert_null(fx->cfg.cpuset);
	assert_null(fx->cfg.dpdk_args);
	assert_null(fx->cfg.prometheus_address);
	/* Anchors and aliases are plain YAML. */
	assert_int_equal(load_text(fx, "smp: &n 4\nrx_buffers: *n\n"), 0);
	assert_int_equal(fx->cfg.rx_buffers, 4);
}

static void
test_load_errors(void **state)
{
	struct fixture *fx = *state;

	expect_load_error(fx, "smp: 4\n\nsmpp: 4\n", "3:1",
			  "unknown key 'smpp' (did you mean 'smp'?); see `shardmark serve --help` "
			  "for the list");
	expect_load_error(fx, "native_transport_prot: 9042\n", "1:1",
			  "did you mean 'native_transport_port'?");
	/* The file wants YAML names; a command-line spelling gets the YAML one suggested. */
	expect_load_error(fx, "native-shard-aware-transport-port: 1\n", "1:1",
			  "did you mean 'native_shard_aware_transport_port'?");
	expect_load_error(fx, "SMP: 1\n", "1:1", "unknown key 'SMP' (did you mean 'smp'?)");
	expect_load_error(fx, "zzz: 1\n", "1:1", "unknown key 'zzz'; see `shardmark serve --help`");
	expect_load_error(fx, "# x\nsmp: four\n", "2:6",
			  "smp: expected an unsigned integer, got 'four'");
	expect_load_error(fx, "  native_transport_port: 70000\n", "1:26",
			  "native_transport_port: 70000 is out of range 1..65535");
	expect_load_error(fx, "overprovisioned: maybe\n", "1:18", "expected true or false");
	expect_load_error(fx, "log_level: loud\n", "1:12", "expected one of error|warn|info|debug");
	expect_load_error(fx, "cpuset: 3-1\n", "1:9", "runs backwards");
	expect_load_error(fx, "smp:\n", "1:5", "smp: expected an unsigned integer, got nothing");
	expect_load_error(fx, "listen_address: ''\n", "1:17", "listen_address: expected a value");
	expect_load_error(fx, "dpdk_args: \"a\\0b\"\n", "1:12", "NUL");
	/* Nothing of a failed file is applied. */
	assert_int_not_equal(load_text(fx, "smp: 5\necho_port: 7\nsmp: 6\n"), 0);
	assert_int_equal(fx->cfg.smp, 0);
	assert_int_equal(fx->cfg.echo_port, 0);
}

static void
test_duplicate_key(void **state)
{
	struct fixture *fx = *state;

	expect_load_error(fx, "smp: 1\necho_port: 7\nsmp: 2\n", "3:1",
			  "duplicate key 'smp', already set on line 1; keep one of them");
}

static void
test_nested_rejected(void **state)
{
	struct fixture *fx = *state;

	expect_load_error(fx, "listen_address:\n  host: 1.2.3.4\n", "2:3",
			  "listen_address: expected a single value, got a nested mapping");
	expect_load_error(fx, "cpuset: [0, 1]\n", "1:9",
			  "cpuset: expected a single value, got a list");
	expect_load_error(fx, "cpuset:\n  - 0\n  - 1\n", "2:3", "got a list");
	expect_load_error(fx, "base: &b {a: 1}\n", "1:1", "unknown key 'base'");
	expect_load_error(fx, "smp: &b {a: 1}\necho_port: *b\n", "1:6", "got a nested mapping");
	expect_load_error(fx, "? [a, b]\n: 1\n", "1:3", "expected a key, got a list");
	expect_load_error(fx, "- smp\n- 4\n", "1:1",
			  "expected 'key: value' lines at the top level");
	expect_load_error(fx, "just a sentence\n", "1:1", "got a single value");
	expect_load_error(fx, "smp: 1\n---\nsmp: 2\n", "2:1", "a second YAML document");
}

static void
test_yaml_syntax_error(void **state)
{
	struct fixture *fx = *state;

	expect_load_error(fx, "smp: 4\necho_port: [1\n", "3:1",
			  "invalid YAML: did not find expected ',' or ']' (while parsing a flow "
			  "sequence at line 2 column 12)");
	/* The whole file is parsed first: not "smp: expected an unsigned integer, got '4 echo_port'". */
	expect_load_error(fx, "smp: 4\n  echo_port: 7\n", "2:12",
			  "invalid YAML: mapping values are not allowed in this context");
	expect_load_error(fx, "smp: 4\necho_port: \"7\n", "3:1", "invalid YAML: ");
	expect_load_error(fx, "smp: 4\n\tsmp: 5\n", "2:1", "invalid YAML: ");
	expect_load_error(fx, "smp: *x\n", "1:6", "invalid YAML: found undefined alias");
	/* A syntax error anywhere wins over a bad key before it. */
	expect_load_error(fx, "smpp: 4\n}\n", "2:1", "invalid YAML: did not find expected key");
}

static void
test_empty_files(void **state)
{
	static const char *const texts[] = {
		"",    "\n\n", "# nothing but a comment\n# and another\n", "---\n", "---\n...\n",
		"~\n", "{}\n"
	};
	struct fixture *fx = *state;
	struct sm_config defaults;
	size_t i;

	sm_config_defaults(&defaults);
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		if (load_text(fx, texts[i]) != 0)
			fail_msg("'%s': %s", texts[i], fx->err);
		assert_config_equal(&fx->cfg, &defaults);
	}
	sm_config_free(&defaults);
}

static void
test_missing_file(void **state)
{
	struct fixture *fx = *state;
	const char *path = "/tmp/test_config-does-not-exist.yaml";

	assert_int_equal(sm_config_load_file(&fx->cfg, path, fx->err, sizeof(fx->err)), -ENOENT);
	assert_string_equal(fx->err, "cannot open /tmp/test_config-does-not-exist.yaml: No such "
				     "file or directory; pass an existing file to --config");
	assert_int_equal(sm_config_load_file(&fx->cfg, "/tmp", fx->err, sizeof(fx->err)), -EISDIR);
	assert_non_null(strstr(fx->err, "cannot open /tmp: Is a directory"));
	/* No room for a message is fine too. */
	assert_int_equal(sm_config_load_file(&fx->cfg, path, NULL, 0), -ENOENT);
}

static void
test_validate(void **state)
{
	struct fixture *fx = *state;

	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), 0);
	set_ok(fx, "echo_port", "9042");
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), -EINVAL);
	assert_string_equal(fx->err, "native_transport_port and echo_port are both 9042: give "
				     "each service its own port");
	set_ok(fx, "echo_port", "0");
	set_ok(fx, "prometheus_port", "8000");
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), -EINVAL);
	assert_non_null(strstr(fx->err, "alternator_port and prometheus_port are both 8000"));
	/* Ports that are off never collide. */
	set_ok(fx, "prometheus_port", "0");
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), 0);

	set_ok(fx, "dpdk_args", "--no-huge");
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), -EINVAL);
	assert_non_null(strstr(fx->err, "dpdk_args is set but network_stack is 'uring'"));
	set_ok(fx, "network_stack", "dpdk");
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), 0);
	/* A key given as a --flag is named as the flag. */
	set_ok(fx, "network_stack", "uring");
	set_ok(fx, "--dpdk-args", "--no-huge");
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), -EINVAL);
	assert_non_null(strstr(fx->err, "--dpdk-args is set but network_stack is 'uring'"));
	set_ok(fx, "--echo-port", "9042");
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), -EINVAL);
	assert_non_null(strstr(fx->err, "native_transport_port and --echo-port are both 9042"));
	set_ok(fx, "echo_port", "0");
	set_ok(fx, "network_stack", "dpdk");

	/* Values set by code, not parsed, are checked too. */
	fx->cfg.smp = 5000;
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), -EINVAL);
	assert_non_null(strstr(fx->err, "smp: 5000 is out of range 0..1024"));
	fx->cfg.smp = 0;
	free(fx->cfg.listen_address);
	fx->cfg.listen_address = NULL;
	assert_int_equal(sm_config_validate(&fx->cfg, fx->err, sizeof(fx->err)), -EINVAL);
	assert_non_null(strstr(fx->err, "listen_address is not set"));
}

static void
print_then_load(struct fixture *fx)
{
	struct sm_config back;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&text, &len);
	assert_non_null(f);
	sm_config_print(&fx->cfg, f, true);
	fclose(f);
	write_tmp(fx, text);
	sm_config_defaults(&back);
	if (sm_config_load_file(&back, fx->path, fx->err, sizeof(fx->err)) != 0)
		fail_msg("%s\n--- printed:\n%s", fx->err, text);
	assert_config_equal(&back, &fx->cfg);
	sm_config_free(&back);
	free(text);
}

static void
test_print_round_trip(void **state)
{
	struct fixture *fx = *state;

	print_then_load(fx);
	set_all_non_default(fx);
	print_then_load(fx);
	/* Strings YAML would read as something else unless quoted. */
	set_ok(fx, "listen_address", "null");
	set_ok(fx, "dpdk_args", "- a: b\t'c'\x01");
	set_ok(fx, "prometheus_address", "~");
	print_then_load(fx);
	set_ok(fx, "listen_address", "#x");
	set_ok(fx, "dpdk_args", "true");
	set_ok(fx, "prometheus_address", "[::1]");
	print_then_load(fx);
}

static void
test_print_masks_secrets(void **state)
{
	struct fixture *fx = *state;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	set_ok(fx, "auth_superuser_password", "hunter2");
	set_ok(fx, "alternator_secret_access_key", "s3cr3t");
	f = open_memstream(&text, &len);
	assert_non_null(f);
	sm_config_print(&fx->cfg, f, false);
	fclose(f);
	assert_null(strstr(text, "hunter2"));
	assert_null(strstr(text, "s3cr3t"));
	assert_non_null(strstr(text, "\nauth_superuser_password: \"********\"  # masked"));
	assert_non_null(strstr(text, "\nalternator_secret_access_key: \"********\"  # masked"));
	/* the rest as before */
	assert_non_null(strstr(text, "\nauth_superuser_name: cassandra\n"));
	free(text);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_print_masks_secrets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shipped_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_is_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size, setup, teardown),
		cmocka_unit_test_setup_teardown(test_uint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_string, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_isolation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpuset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_override_spellings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_key_set, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_over_current, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_load_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicate_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_yaml_syntax_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_validate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_print_round_trip, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
