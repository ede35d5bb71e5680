/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CQL executor in-process: a one-shard runtime with the store, the
 * system tables and an in-process connection (sm_cql_local_conn). A test
 * is a script of statements, each sent once the one before was answered,
 * and the answer each must get (an opcode, or an error code and the start
 * of its message). Regression tests for what tests/fuzz/fuzz_cql found.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sm_core.h"
#include "sm_cql_conn.h"
#include "sm_cql_exec.h"
#include "sm_cql_system.h"
#include "sm_store.h"

/* One statement and the answer it must get: an opcode, or an ERROR's code and message start. */
struct step {
	const char *cql;
	uint8_t opcode;
	int32_t code;
	const char *msg;
};

#define OK(q)                                                                                      \
	{                                                                                          \
		q, SM_CQL_OP_RESULT, 0, NULL                                                       \
	}
#define ERR(q, c, m)                                                                               \
	{                                                                                          \
		q, SM_CQL_OP_ERROR, c, m                                                           \
	}

static const struct step *script;
static unsigned nsteps, cur;
static char failure[512];
static struct sm_cql_cluster cluster;
static struct sm_cql_exec_config exec_cfg = { .cluster = &cluster };
static struct sm_cql_service svc = { .exec = &sm_cql_exec, .node = &cluster };
static struct sm_cql_conn *conn;
static struct sm_cql_buf req;
static struct sm_task next_task;

static void
fail_step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
fail_step(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (failure[0] != '\0')
		return;
	n = snprintf(failure, sizeof(failure), "step %u (%s): ", cur, script[cur].cql);
	va_start(ap, fmt);
	vsnprintf(failure + n, sizeof(failure) - (size_t)n, fmt, ap);
	va_end(ap);
}

static void
send_step(void *arg)
{
	struct sm_cql_params params = { .consistency = SM_CQL_ONE };

	(void)arg;
	sm_cql_buf_reset(&req);
	sm_cql_enc_query(&req, (int16_t)(cur + 1), sm_cql_str(script[cur].cql), &params);
	sm_cql_local_request(conn, (int16_t)(cur + 1), SM_CQL_OP_QUERY, req.p + SM_CQL_HEADER_LEN,
			     req.len - SM_CQL_HEADER_LEN);
}

static void
on_reply(void *ctx, const uint8_t *frame, size_t len)
{
	const struct step *s = &script[cur];
	struct sm_cql_frame_header h;
	struct sm_cql_response r;
	const char *reason = NULL;

	(void)ctx;
	if (sm_cql_frame_header_parse(frame, len, true, &h, &reason) != 0 ||
	    sm_cql_response_decode(&h, frame + SM_CQL_HEADER_LEN, len - SM_CQL_HEADER_LEN, 0, &r,
				   &reason) != 0) {
		fail_step("undecodable response: %s", reason ? reason : "?");
	} else if (r.opcode != s->opcode) {
		if (r.opcode == SM_CQL_OP_ERROR)
			fail_step("got ERROR 0x%04x %.*s", r.u.error.code,
				  (int)r.u.error.message.len, (const char *)r.u.error.message.p);
		else
			fail_step("got opcode 0x%02x, not 0x%02x", r.opcode, s->opcode);
	} else if (r.opcode == SM_CQL_OP_ERROR &&
		   (r.u.error.code != s->code || r.u.error.message.len < strlen(s->msg) ||
		    memcmp(r.u.error.message.p, s->msg, strlen(s->msg)) != 0)) {
		fail_step("got ERROR 0x%04x %.*s, not 0x%04x %s", r.u.error.code,
			  (int)r.u.error.message.len, (const char *)r.u.error.message.p, s->code,
			  s->msg);
	}
	if (++cur < nsteps)
		sm_task_schedule(&next_task);
	else
		sm_runtime_stop();
}

static int
shard_init(unsigned shard, void *arg)
{
	int ret;

	(void)shard;
	(void)arg;
	ret = sm_store_shard_init();
	if (ret == 0)
		ret = sm_cql_system_shard_init(&cluster);
	if (ret == 0)
		ret = sm_cql_exec_shard_init(&exec_cfg);
	if (ret < 0)
		return ret;
	conn = sm_cql_local_conn(&svc, on_reply, NULL);
	if (conn == NULL)
		return -ENOMEM;
	sm_cql_buf_init(&req);
	sm_task_init(&next_task, send_step, NULL);
	sm_task_schedule(&next_task);
	return 0;
}

static void
shard_fini(unsigned shard, void *arg)
{
	(void)shard;
	(void)arg;
	if (conn != NULL)
		sm_cql_local_conn_close(conn);
	conn = NULL;
	sm_cql_buf_release(&req);
	sm_cql_shard_fini();
	sm_cql_exec_shard_fini();
	sm_cql_system_shard_fini();
	sm_store_shard_fini();
}

static void
run_script(const struct step *steps, unsigned n)
{
	struct sm_runtime_opts o = {
		.smp = 1,
		.overprovisioned = true,
		.shard_init = shard_init,
		.shard_fini = shard_fini,
	};
	char err[256];

	script = steps;
	nsteps = n;
	cur = 0;
	failure[0] = '\0';
	assert_int_equal(
		sm_cql_cluster_init(&cluster, "test", "127.0.0.1", 9042, NULL, err, sizeof(err)),
		0);
	if (sm_runtime_run(&o, err, sizeof(err)) < 0)
		fail_msg("runtime: %s", err);
	sm_cql_cluster_free(&cluster);
	if (failure[0] != '\0')
		fail_msg("%s", failure);
	assert_int_equal(cur, n);
}

#define KS                                                                                         \
	"CREATE KEYSPACE ks WITH replication = "                                                   \
	"{'class': 'SimpleStrategy', 'replication_factor': 1}"

/*
 * A key column named twice in PRIMARY KEY is refused as ScyllaDB does; the
 * executor wrote one column definition per key name plus the others, past
 * the end of the array when a name came twice (heap overflow, fuzz_cql).
 */
static void
test_create_table_key_column_twice(void **state)
{
	static const struct step steps[] = {
		OK(KS),
		ERR("CREATE TABLE ks.t (pk int, ck text, v blob, PRIMARY KEY (pk, pk))",
		    SM_CQL_ERR_INVALID, "Unknown definition pk referenced in PRIMARY KEY"),
		ERR("CREATE TABLE ks.t (a int, b int, PRIMARY KEY ((a, a), b))", SM_CQL_ERR_INVALID,
		    "Unknown definition a referenced in PRIMARY KEY"),
		ERR("CREATE TABLE ks.t (a int, b int, c int, PRIMARY KEY (a, b, c, b))",
		    SM_CQL_ERR_INVALID, "Unknown definition b referenced in PRIMARY KEY"),
		OK("CREATE TABLE ks.t (pk int, ck text, v blob, PRIMARY KEY (pk, ck))"),
		OK("INSERT INTO ks.t (pk, ck, v) VALUES (1, 'a', 0x01)"),
		OK("SELECT * FROM ks.t WHERE pk = 1"),
	};

	(void)state;
	run_script(steps, SM_ARRAY_SIZE(steps));
}

#define NTS "{'class': 'NetworkTopologyStrategy', 'replication_factor': 1}"

/*
 * tablets_mode_for_new_keyspaces: enforced refuses {'enabled': false} with
 * ScyllaDB's message (ks_prop_defs.cc) and gives NetworkTopologyStrategy
 * keyspaces tablets by default; ALTER cannot switch the flavour.
 */
static void
test_tablets_mode_enforced(void **state)
{
	static const struct step steps[] = {
		ERR("CREATE KEYSPACE ks WITH replication = " NTS " AND tablets = {'enabled': false}",
		    SM_CQL_ERR_CONFIG,
		    "Cannot disable tablets for keyspace since tablets are enforced using the "
		    "`tablets_mode_for_new_keyspaces: enforced` config option."),
		OK("CREATE KEYSPACE ks WITH replication = " NTS),
		OK("CREATE TABLE ks.t (k int PRIMARY KEY, v int)"),
		OK("INSERT INTO ks.t (k, v) VALUES (1, 2)"),
		OK("SELECT * FROM system.tablets"),
		OK("SELECT initial_tablets FROM system_schema.scylla_keyspaces"),
		ERR("ALTER KEYSPACE ks WITH replication = " NTS " AND tablets = {'enabled': false}",
		    SM_CQL_ERR_INVALID, "Cannot alter replication strategy vnode/tablets flavor"),
		OK("ALTER KEYSPACE ks WITH replication = " NTS " AND tablets = {'initial': 16}"),
		ERR("ALTER KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
		    "'replication_factor': 1}",
		    SM_CQL_ERR_CONFIG, "SimpleStrategy doesn't support tablet replication"),
		ERR("CREATE KEYSPACE ks2 WITH replication = " NTS " AND tablets = 'yes'",
		    SM_CQL_ERR_INVALID, "Invalid value for property 'tablets'. It should be a map."),
	};

	(void)state;
	exec_cfg.tablets_mode = SM_CQL_TABLETS_ENFORCED;
	run_script(steps, SM_ARRAY_SIZE(steps));
	exec_cfg.tablets_mode = SM_CQL_TABLETS_DISABLED;
}

static void
test_tablets_mode_names(void **state)
{
	enum sm_cql_tablets_mode m;

	(void)state;
	assert_int_equal(sm_cql_tablets_mode_parse("enforced", &m), 0);
	assert_int_equal(m, SM_CQL_TABLETS_ENFORCED);
	assert_int_equal(sm_cql_tablets_mode_parse("disabled", &m), 0);
	assert_int_equal(m, SM_CQL_TABLETS_DISABLED);
	assert_int_equal(sm_cql_tablets_mode_parse("on", &m), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_table_key_column_twice),
		cmocka_unit_test(test_tablets_mode_enforced),
		cmocka_unit_test(test_tablets_mode_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
