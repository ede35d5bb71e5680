/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK driver's dpdk_args parser (drivers/net/dpdk/dpdk_args.c).
 *
 * dpdk_args is one string from the config file or the command line, so a
 * wrong split or a silently accepted bad value shows up only as EAL refusing
 * to start or a stack on the wrong address. This checks, with exact values:
 * the shell-like word splitting (blanks, '...', "..." with its escapes,
 * backslashes, empty input, unterminated quotes), the split into EAL words
 * and driver options at a lone "--", every driver option's accepted forms and
 * its bad values (the message names the option and the value), the
 * listen-address fallback when there is no --ipv4 and its rejection when it
 * is not a usable address, dpdk_eal_has(), and that every sm_malloc() is
 * matched by an sm_free() on success and on every error path.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpdk_priv.h"
#include "sm_core.h"

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static char err[512];

/* sm_malloc()/sm_free() counts at the start of each test. */
static struct sm_sw_stats mem0;

static struct sm_sw_stats
mem_snap(void)
{
	struct sm_sw_stats s;

	sm_sw_stats_read(sm_stats_fallback_attach(), &s);
	return s;
}

static int
setup(void **state)
{
	(void)state;
	err[0] = '\0';
	mem0 = mem_snap();
	return 0;
}

/* Every test frees what it (and the code under test) allocated. */
static int
teardown(void **state)
{
	struct sm_sw_stats s = mem_snap();

	(void)state;
	assert_int_equal(s.allocs - mem0.allocs, s.frees - mem0.frees);
	assert_int_equal(s.mem_in_use, mem0.mem_in_use);
	return 0;
}

/* Split @s, expecting exactly the @n words that follow. */
static void
split_expect(const char *s, int n, ...)
{
	char **w = (char **)(uintptr_t)1;
	int nw = -1, i;
	va_list ap;

	assert_int_equal(dpdk_args_split(s, &w, &nw, err, sizeof(err)), 0);
	assert_int_equal(nw, n);
	va_start(ap, n);
	for (i = 0; i < n; i++)
		assert_string_equal(w[i], va_arg(ap, const char *));
	va_end(ap);
	assert_null(w[n]);
	sm_free(w);
}

static void
split_fails(const char *s, const char *msg)
{
	char **w = NULL;
	int nw = -1;

	err[0] = '\0';
	assert_int_equal(dpdk_args_split(s, &w, &nw, err, sizeof(err)), -EINVAL);
	assert_null(w);
	assert_int_equal(nw, -1);
	assert_non_null(strstr(err, msg));
}

static void
test_split_blanks(void **state)
{
	(void)state;
	split_expect("a", 1, "a");
	split_expect("-l 0", 2, "-l", "0");
	split_expect("  a  b\tc\nd  ", 4, "a", "b", "c", "d");
	split_expect("\t\n --vdev=net_tap0,iface=t0\t--no-pci", 2, "--vdev=net_tap0,iface=t0",
		     "--no-pci");
	/* The most words a string of this length can hold (the array's bound). */
	split_expect("a b c d e f g", 7, "a", "b", "c", "d", "e", "f", "g");
	split_expect("a b c d e f g ", 7, "a", "b", "c", "d", "e", "f", "g");
}

static void
test_split_empty(void **state)
{
	(void)state;
	split_expect("", 0);
	split_expect(NULL, 0);
	split_expect(" \t\n  ", 0);
	/* Quotes make a word even when it is empty. */
	split_expect("''", 1, "");
	split_expect("\"\"", 1, "");
	split_expect("'' \"\" ''", 3, "", "", "");
	split_expect("a '' b", 3, "a", "", "b");
}

static void
test_split_single_quotes(void **state)
{
	(void)state;
	split_expect("'a b'", 1, "a b");
	split_expect("'  a\tb  '", 1, "  a\tb  ");
	/* Nothing is special inside: not backslash, not double quote. */
	split_expect("'a\\b' 'c\\'", 2, "a\\b", "c\\");
	split_expect("'say \"hi\"'", 1, "say \"hi\"");
	split_expect("'$HOME'", 1, "$HOME");
	/* Quoted and plain parts join into one word. */
	split_expect("it'''s' x'y z'w", 2, "its", "xy zw");
}

static void
test_split_double_quotes(void **state)
{
	(void)state;
	split_expect("\"a b\"", 1, "a b");
	split_expect("\"it's\"", 1, "it's");
	/* \" \\ \$ \` lose the backslash... */
	split_expect("\"q\\\"x\" \"back\\\\slash\" \"\\$HOME\" \"\\`cmd\\`\"", 4, "q\"x",
		     "back\\slash", "$HOME", "`cmd`");
	/* ...any other backslash stays. */
	split_expect("\"a\\nb\" \"c\\'d\" \"e\\ f\"", 3, "a\\nb", "c\\'d", "e\\ f");
	split_expect("--vdev=net_tap0,iface=\"tap 0\" x\"y\"'z'", 2, "--vdev=net_tap0,iface=tap 0",
		     "xyz");
}

static void
test_split_backslash(void **state)
{
	(void)state;
	split_expect("a\\ b c", 2, "a b", "c");
	split_expect("c\\\\d", 1, "c\\d");
	split_expect("\\'e \\\"f", 2, "'e", "\"f");
	split_expect("\\a\\b", 1, "ab");
	split_expect("x\\\ty", 1, "x\ty");
	/* A backslash at the very end has nothing to escape and is kept. */
	split_expect("x\\", 1, "x\\");
	split_expect("\\", 1, "\\");
}

static void
test_split_unterminated(void **state)
{
	(void)state;
	split_fails("a 'b", "unterminated ' quote");
	split_fails("'", "unterminated ' quote");
	split_fails("a \"b c", "unterminated \" quote");
	split_fails("\"a\\\"", "unterminated \" quote");
	split_fails("'a'\"", "unterminated \" quote");
	/* An escaped quote opens nothing. */
	split_expect("\\'", 1, "'");
}

/* Parse @args; on success checks the defaults of what @args does not set. */
static int
parse(const char *args, const char *default_ip, struct dpdk_opts *o)
{
	err[0] = '\0';
	memset(o, 0xa5, sizeof(*o));
	return dpdk_opts_parse(args, default_ip, o, err, sizeof(err));
}

/* Expect failure with a message containing @msg1 and @msg2 (when set). */
static void
parse_fails(const char *args, const char *default_ip, const char *msg1, const char *msg2)
{
	struct dpdk_opts o;

	assert_int_equal(parse(args, default_ip, &o), -EINVAL);
	if (strstr(err, msg1) == NULL || (msg2 != NULL && strstr(err, msg2) == NULL))
		fail_msg("dpdk_args \"%s\": message \"%s\" lacks \"%s\"%s%s", args, err, msg1,
			 msg2 != NULL ? " or " : "", msg2 != NULL ? msg2 : "");
	/* dpdk_opts_parse() freed everything; freeing again is harmless. */
	assert_null(o.words);
	assert_null(o.eal);
	assert_int_equal(o.nwords, 0);
	assert_int_equal(o.neal, 0);
	dpdk_opts_free(&o);
}

static void
assert_no_faults(const struct dpdk_opts *o)
{
	assert_true(o->rx.drop == 0 && o->rx.dup == 0 && o->rx.reorder == 0 && o->rx.delay == 0);
	assert_true(o->tx.drop == 0 && o->tx.dup == 0 && o->tx.reorder == 0 && o->tx.delay == 0);
}

static void
test_eal_driver_split(void **state)
{
	struct dpdk_opts o;

	(void)state;
	assert_int_equal(parse("-l 0-3 --vdev=net_tap0,iface=t0 --no-pci -- --ipv4 10.0.0.2/24",
			       "192.168.1.1", &o),
			 0);
	assert_int_equal(o.nwords, 7);
	assert_ptr_equal(o.eal, o.words);
	assert_int_equal(o.neal, 4);
	assert_string_equal(o.eal[0], "-l");
	assert_string_equal(o.eal[1], "0-3");
	assert_string_equal(o.eal[2], "--vdev=net_tap0,iface=t0");
	assert_string_equal(o.eal[3], "--no-pci");
	assert_string_equal(o.words[4], "--");
	assert_string_equal(o.words[5], "--ipv4");
	assert_string_equal(o.words[6], "10.0.0.2/24");
	assert_null(o.words[7]);
	assert_int_equal(o.ip, IP4(10, 0, 0, 2));
	assert_int_equal(o.netmask, 0xffffff00u);
	assert_int_equal(o.gateway, 0);
	assert_int_equal(o.port_id, 0);
	assert_int_equal(o.delay_ns, 1000000);
	assert_no_faults(&o);
	dpdk_opts_free(&o);
	assert_null(o.words);
	assert_null(o.eal);
	assert_int_equal(o.nwords, 0);
	assert_int_equal(o.neal, 0);
	dpdk_opts_free(&o);

	/* No "--": everything is EAL, the address is the default one. */
	assert_int_equal(parse("-l 0 --in-memory", "10.1.2.3", &o), 0);
	assert_int_equal(o.nwords, 3);
	assert_int_equal(o.neal, 3);
	assert_string_equal(o.eal[0], "-l");
	assert_string_equal(o.eal[1], "0");
	assert_string_equal(o.eal[2], "--in-memory");
	assert_int_equal(o.ip, IP4(10, 1, 2, 3));
	assert_int_equal(o.netmask, 0xffffff00u);
	dpdk_opts_free(&o);

	/* "--" first: no EAL words. */
	assert_int_equal(parse("-- --port-id 1", "10.1.2.3", &o), 0);
	assert_int_equal(o.nwords, 3);
	assert_int_equal(o.neal, 0);
	assert_int_equal(o.port_id, 1);
	dpdk_opts_free(&o);

	/* Nothing at all, and a lone "--". */
	assert_int_equal(parse("", "10.1.2.3", &o), 0);
	assert_int_equal(o.nwords, 0);
	assert_int_equal(o.neal, 0);
	assert_null(o.words[0]);
	assert_int_equal(o.ip, IP4(10, 1, 2, 3));
	assert_int_equal(o.netmask, 0xffffff00u);
	assert_no_faults(&o);
	dpdk_opts_free(&o);
	assert_int_equal(parse(NULL, "10.1.2.3", &o), 0);
	assert_int_equal(o.nwords, 0);
	dpdk_opts_free(&o);
	assert_int_equal(parse("--", "10.1.2.3", &o), 0);
	assert_int_equal(o.nwords, 1);
	assert_int_equal(o.neal, 0);
	dpdk_opts_free(&o);

	/* Quoting works in both parts; only a lone "--" splits. */
	assert_int_equal(
		parse("'--vdev=net_tap0,iface=a b' --x-- '--' --ipv4='10.0.0.9/8'", NULL, &o), 0);
	assert_int_equal(o.neal, 2);
	assert_string_equal(o.eal[0], "--vdev=net_tap0,iface=a b");
	assert_string_equal(o.eal[1], "--x--");
	assert_int_equal(o.ip, IP4(10, 0, 0, 9));
	assert_int_equal(o.netmask, 0xff000000u);
	dpdk_opts_free(&o);

	/* A split error comes through as is. */
	parse_fails("-l 0 -- --ipv4 '10.0.0.2", "10.1.2.3", "unterminated ' quote", NULL);
}

static void
test_opt_ipv4(void **state)
{
	static const struct {
		const char *args;
		uint32_t ip, mask;
	} ok[] = {
		{ "-- --ipv4 10.0.0.2", IP4(10, 0, 0, 2), 0xffffff00u },
		{ "-- --ipv4 10.0.0.2/24", IP4(10, 0, 0, 2), 0xffffff00u },
		{ "-- --ipv4 172.16.5.4/16", IP4(172, 16, 5, 4), 0xffff0000u },
		{ "-- --ipv4=192.168.1.10/28", IP4(192, 168, 1, 10), 0xfffffff0u },
		{ "-- --ipv4 10.0.0.2/1", IP4(10, 0, 0, 2), 0x80000000u },
		{ "-- --ipv4 10.0.0.2/30", IP4(10, 0, 0, 2), 0xfffffffcu },
		{ "-- --ipv4 1.2.3.4/8", IP4(1, 2, 3, 4), 0xff000000u },
		{ "-- --ipv4 223.255.255.254/24", IP4(223, 255, 255, 254), 0xffffff00u },
		/* the last one wins */
		{ "-- --ipv4 10.0.0.2/16 --ipv4 10.9.9.9/24", IP4(10, 9, 9, 9), 0xffffff00u },
	};
	static const char *const bad[] = {
		"10.0.0.2/0",  "10.0.0.2/31",  "10.0.0.2/32", "10.0.0.2/",  "10.0.0.2/24x",
		"10.0.0.2/-1", "10.0.0",       "10.0.0.256",  "10.0.0.2.1", "abc",
		"::1",	       "10.0.0.2//24", "/24",	      "10.0.0.2 ",
	};
	struct dpdk_opts o;
	char args[128], got[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		/* --ipv4 wins over the default address, usable or not. */
		assert_int_equal(parse(ok[i].args, "0.0.0.0", &o), 0);
		assert_int_equal(o.ip, ok[i].ip);
		assert_int_equal(o.netmask, ok[i].mask);
		assert_int_equal(o.gateway, 0);
		dpdk_opts_free(&o);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "-- --ipv4 '%s'", bad[i]);
		snprintf(got, sizeof(got), "got '%s'", bad[i]);
		parse_fails(args, "10.1.2.3", "--ipv4 needs ADDR or ADDR/PREFIX", got);
	}
	parse_fails("-- --ipv4=", "10.1.2.3", "--ipv4 needs ADDR or ADDR/PREFIX", "got ''");

	/* Not unicast, or loopback. */
	parse_fails("-- --ipv4 127.0.0.1", "10.1.2.3", "--ipv4 must be a unicast address", NULL);
	parse_fails("-- --ipv4 127.255.0.9/16", NULL, "--ipv4 must be a unicast address", NULL);
	parse_fails("-- --ipv4 224.0.0.1", "10.1.2.3", "--ipv4 must be a unicast address", NULL);
	parse_fails("-- --ipv4 239.255.255.255/8", "10.1.2.3", "--ipv4 must be a unicast address",
		    NULL);
	parse_fails("-- --ipv4 240.0.0.1", "10.1.2.3", "--ipv4 must be a unicast address", NULL);
	parse_fails("-- --ipv4 255.255.255.255", "10.1.2.3", "--ipv4 must be a unicast address",
		    NULL);
}

/* "--ipv4 0.0.0.0" is refused, not taken for "no --ipv4" (the default). */
static void
test_opt_ipv4_zero(void **state)
{
	(void)state;
	parse_fails("-- --ipv4 0.0.0.0/16", "10.1.2.3", "--ipv4 must be a unicast address", NULL);
}

static void
test_opt_gateway(void **state)
{
	struct dpdk_opts o;

	(void)state;
	assert_int_equal(parse("-- --ipv4 10.0.0.2/24 --gateway 10.0.0.1", NULL, &o), 0);
	assert_int_equal(o.gateway, IP4(10, 0, 0, 1));
	dpdk_opts_free(&o);
	/* either order, "=" form, wider subnet */
	assert_int_equal(parse("-- --gateway=10.0.200.1 --ipv4 10.0.0.2/16", NULL, &o), 0);
	assert_int_equal(o.gateway, IP4(10, 0, 200, 1));
	assert_int_equal(o.ip, IP4(10, 0, 0, 2));
	assert_int_equal(o.netmask, 0xffff0000u);
	dpdk_opts_free(&o);
	/* with the default address, its /24 */
	assert_int_equal(parse("-- --gateway 192.168.5.254", "192.168.5.7", &o), 0);
	assert_int_equal(o.ip, IP4(192, 168, 5, 7));
	assert_int_equal(o.netmask, 0xffffff00u);
	assert_int_equal(o.gateway, IP4(192, 168, 5, 254));
	dpdk_opts_free(&o);

	parse_fails("-- --ipv4 10.0.0.2 --gateway 10.0.0", NULL, "--gateway needs an IPv4 address",
		    "got '10.0.0'");
	parse_fails("-- --ipv4 10.0.0.2 --gateway=router", NULL, "--gateway needs an IPv4 address",
		    "got 'router'");
	parse_fails("-- --ipv4 10.0.0.2 --gateway=", NULL, "--gateway needs an IPv4 address",
		    "got ''");
	parse_fails("-- --ipv4 10.0.0.2 --gateway 10.0.0.1/24", NULL,
		    "--gateway needs an IPv4 address", "got '10.0.0.1/24'");
	parse_fails("-- --ipv4 10.0.0.2/24 --gateway 10.0.1.1", NULL,
		    "--gateway is not on the --ipv4 subnet", NULL);
	parse_fails("-- --gateway 192.168.6.1", "192.168.5.7",
		    "--gateway is not on the --ipv4 subnet", NULL);
}

static void
test_opt_port_id(void **state)
{
	static const char *const bad[] = { "1024", "x", "3x", "-1", "", "1.5", "99999999999" };
	struct dpdk_opts o;
	char args[128], got[128];
	size_t i;

	(void)state;
	assert_int_equal(parse("-- --port-id 3", "10.1.2.3", &o), 0);
	assert_int_equal(o.port_id, 3);
	dpdk_opts_free(&o);
	assert_int_equal(parse("-- --port-id=1023", "10.1.2.3", &o), 0);
	assert_int_equal(o.port_id, 1023);
	dpdk_opts_free(&o);
	assert_int_equal(parse("-- --port-id 0", "10.1.2.3", &o), 0);
	assert_int_equal(o.port_id, 0);
	dpdk_opts_free(&o);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "-- --port-id '%s'", bad[i]);
		snprintf(got, sizeof(got), "got '%s'", bad[i]);
		parse_fails(args, "10.1.2.3", "--port-id needs a number", got);
	}
}

static void
test_opt_delay_us(void **state)
{
	static const char *const bad[] = { "10000001", "x", "5ms", "-1", "" };
	struct dpdk_opts o;
	char args[128], got[128];
	size_t i;

	(void)state;
	assert_int_equal(parse("-- --delay-us 250", "10.1.2.3", &o), 0);
	assert_int_equal(o.delay_ns, 250000);
	assert_no_faults(&o);
	dpdk_opts_free(&o);
	assert_int_equal(parse("-- --delay-us=0", "10.1.2.3", &o), 0);
	assert_int_equal(o.delay_ns, 0);
	dpdk_opts_free(&o);
	assert_int_equal(parse("-- --delay-us 10000000", "10.1.2.3", &o), 0);
	assert_int_equal(o.delay_ns, 10000000000ull);
	dpdk_opts_free(&o);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "-- --delay-us '%s'", bad[i]);
		snprintf(got, sizeof(got), "got '%s'", bad[i]);
		parse_fails(args, "10.1.2.3", "--delay-us needs a number", got);
	}
}

/* Each fault option sets its own field and no other. */
static void
test_opt_faults(void **state)
{
	static const struct {
		const char *name;
		size_t off;
	} opts[] = {
		{ "--rx-drop", offsetof(struct dpdk_opts, rx.drop) },
		{ "--rx-dup", offsetof(struct dpdk_opts, rx.dup) },
		{ "--rx-reorder", offsetof(struct dpdk_opts, rx.reorder) },
		{ "--rx-delay", offsetof(struct dpdk_opts, rx.delay) },
		{ "--tx-drop", offsetof(struct dpdk_opts, tx.drop) },
		{ "--tx-dup", offsetof(struct dpdk_opts, tx.dup) },
		{ "--tx-reorder", offsetof(struct dpdk_opts, tx.reorder) },
		{ "--tx-delay", offsetof(struct dpdk_opts, tx.delay) },
	};
	static const struct {
		const char *v;
		double d;
	} ok[] = { { "12.5", 12.5 }, { "0", 0 }, { "100", 100 }, { "0.01", 0.01 }, { "1e1", 10 } };
	static const char *const bad[] = { "-1", "100.5", "abc", "", "5%", "inf", "-0.5", "1e3" };
	struct dpdk_opts o;
	char args[160], got[128];
	size_t i, j, k;

	(void)state;
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		for (j = 0; j < sizeof(ok) / sizeof(ok[0]); j++) {
			snprintf(args, sizeof(args), "-l 0 -- --ipv4 10.0.0.2 %s%s%s", opts[i].name,
				 j % 2 ? "=" : " ", ok[j].v);
			assert_int_equal(parse(args, NULL, &o), 0);
			for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
				double d;

				memcpy(&d, (const char *)&o + opts[k].off, sizeof(d));
				if (k == i && d != ok[j].d)
					fail_msg("%s: got %g, want %g", args, d, ok[j].d);
				if (k != i && d != 0)
					fail_msg("%s: %s is %g", args, opts[k].name, d);
			}
			assert_int_equal(o.delay_ns, 1000000);
			assert_int_equal(o.neal, 2);
			dpdk_opts_free(&o);
		}
		for (j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			snprintf(args, sizeof(args), "-- %s '%s'", opts[i].name, bad[j]);
			snprintf(got, sizeof(got), "%s needs a percentage from 0 to 100, got '%s'",
				 opts[i].name, bad[j]);
			parse_fails(args, "10.1.2.3", got, NULL);
		}
	}

	/* All of them at once. */
	assert_int_equal(parse("-- --rx-drop 1 --rx-dup 2 --rx-reorder 3 --rx-delay 4 --tx-drop 5 "
			       "--tx-dup 6 --tx-reorder 7 --tx-delay 8 --delay-us 50",
			       "10.1.2.3", &o),
			 0);
	assert_true(o.rx.drop == 1 && o.rx.dup == 2 && o.rx.reorder == 3 && o.rx.delay == 4);
	assert_true(o.tx.drop == 5 && o.tx.dup == 6 && o.tx.reorder == 7 && o.tx.delay == 8);
	assert_int_equal(o.delay_ns, 50000);
	dpdk_opts_free(&o);
}

/* strtod() reads "nan", which fails both "< 0" and "> 100": refused all the same. */
static void
test_opt_faults_nan(void **state)
{
	(void)state;
	parse_fails("-- --rx-drop nan", "10.1.2.3", "--rx-drop needs a percentage", NULL);
	parse_fails("-- --tx-delay=NAN", "10.1.2.3", "--tx-delay needs a percentage", NULL);
}

static void
test_opt_unknown_and_missing_value(void **state)
{
	(void)state;
	parse_fails("-- --ipv6 ::1", "10.1.2.3", "unknown driver option '--ipv6' after '--'",
		    "known: --ipv4");
	parse_fails("-- --foo=bar", "10.1.2.3", "unknown driver option '--foo'", NULL);
	parse_fails("-- --ipv4 10.0.0.2 -- x", NULL, "unknown driver option '--'", NULL);
	/* EAL words are not checked here, driver words are. */
	parse_fails("--ipv4 10.0.0.2 -- --no-pci x", "10.1.2.3", "unknown driver option '--no-pci'",
		    NULL);
	parse_fails("-- --ipv4", "10.1.2.3", "driver option --ipv4 needs a value", NULL);
	parse_fails("-- --port-id 1 --gateway", "10.1.2.3", "driver option --gateway needs a value",
		    NULL);
	parse_fails("-- --rx-drop", "10.1.2.3", "driver option --rx-drop needs a value", NULL);
	/* The next word is the value even when it looks like an option. */
	parse_fails("-- --ipv4 --gateway 10.0.0.1", "10.1.2.3", "--ipv4 needs ADDR",
		    "got '--gateway'");
}

static void
test_default_ip(void **state)
{
	static const char *const unusable[] = {
		"0.0.0.0",
		"127.0.0.1",
		"127.1.2.3",
		"224.0.0.251",
		"239.255.255.250",
		"240.0.0.1",
		"255.255.255.255",
		"::",
		"::1",
		"localhost",
		"10.0.0",
		"",
	};
	struct dpdk_opts o;
	char got[128];
	size_t i;

	(void)state;
	assert_int_equal(parse("-l 0", "192.168.5.7", &o), 0);
	assert_int_equal(o.ip, IP4(192, 168, 5, 7));
	assert_int_equal(o.netmask, 0xffffff00u);
	dpdk_opts_free(&o);
	assert_int_equal(parse("-l 0 -- --port-id 2", "1.0.0.1", &o), 0);
	assert_int_equal(o.ip, IP4(1, 0, 0, 1));
	assert_int_equal(o.netmask, 0xffffff00u);
	assert_int_equal(o.port_id, 2);
	dpdk_opts_free(&o);
	assert_int_equal(parse("", "223.1.1.1", &o), 0);
	assert_int_equal(o.ip, IP4(223, 1, 1, 1));
	dpdk_opts_free(&o);

	for (i = 0; i < sizeof(unusable) / sizeof(unusable[0]); i++) {
		snprintf(got, sizeof(got), "listen_address '%s' is not one", unusable[i]);
		parse_fails("-l 0 -- --port-id 1", unusable[i], got, "'-- --ipv4 10.0.0.2/24'");
	}
	parse_fails("-l 0", NULL, "listen_address '' is not one", "--listen-address");
}

static void
test_eal_has(void **state)
{
	struct dpdk_opts o;

	(void)state;
	assert_int_equal(parse("-l 0 --vdev=net_tap0,iface=t0 --no-pci --file-prefix sm -- "
			       "--ipv4 10.0.0.2 --rx-drop=1",
			       NULL, &o),
			 0);
	assert_true(dpdk_eal_has(&o, "--vdev"));
	assert_true(dpdk_eal_has(&o, "--no-pci"));
	assert_true(dpdk_eal_has(&o, "-l"));
	assert_true(dpdk_eal_has(&o, "--file-prefix"));
	assert_true(dpdk_eal_has(&o, "--vdev=net_tap0,iface=t0"));
	assert_false(dpdk_eal_has(&o, "--vde"));
	assert_false(dpdk_eal_has(&o, "--vdev=net"));
	assert_false(dpdk_eal_has(&o, "--no"));
	assert_false(dpdk_eal_has(&o, "--in-memory"));
	/* the driver part is not EAL */
	assert_false(dpdk_eal_has(&o, "--ipv4"));
	assert_false(dpdk_eal_has(&o, "--rx-drop"));
	assert_false(dpdk_eal_has(&o, "--"));
	dpdk_opts_free(&o);

	assert_int_equal(parse("--vdev net_tap0 --vdevs=x", "10.1.2.3", &o), 0);
	assert_true(dpdk_eal_has(&o, "--vdev"));
	assert_true(dpdk_eal_has(&o, "--vdevs"));
	assert_false(dpdk_eal_has(&o, "--vdevs=x="));
	dpdk_opts_free(&o);
	assert_int_equal(parse("--vdevs=x -- --port-id 0", "10.1.2.3", &o), 0);
	assert_false(dpdk_eal_has(&o, "--vdev"));
	dpdk_opts_free(&o);

	assert_int_equal(parse("-- --port-id 0", "10.1.2.3", &o), 0);
	assert_false(dpdk_eal_has(&o, "--vdev"));
	assert_false(dpdk_eal_has(&o, "--port-id"));
	dpdk_opts_free(&o);
	assert_int_equal(parse("", "10.1.2.3", &o), 0);
	assert_false(dpdk_eal_has(&o, "--vdev"));
	dpdk_opts_free(&o);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_split_blanks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_single_quotes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_double_quotes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_backslash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_split_unterminated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eal_driver_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opt_ipv4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opt_ipv4_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opt_gateway, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opt_port_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opt_delay_us, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opt_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opt_faults_nan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opt_unknown_and_missing_value, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_default_ip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eal_has, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
