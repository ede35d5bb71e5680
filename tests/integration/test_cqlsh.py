# SPDX-License-Identifier: BSD-3-Clause
"""`shardmark cql`, the CQL shell, against the real server.

What cqlsh prints is the reference: tables, values, errors (the Python
driver's exception text, as cqlsh writes it), DESCRIBE (the driver's
export_as_string()). Non-TTY runs go through pipes; the interactive ones
through a pty, and one through tmux as a person at a terminal.
"""

import os
import pty
import re
import select
import shutil
import subprocess
import time

import pytest

from conftest import cql_create_keyspace, cql_unique_name, free_port

TIMEOUT = 60


@pytest.fixture(scope="module")
def env(cql_env):
    return cql_env


def cql(binary, srv, *args, stdin=None, env=None):
    """Run `shardmark cql 127.0.0.1:PORT ARGS` with @stdin piped in."""
    return subprocess.run([str(binary), "cql", f"127.0.0.1:{srv.cql_port}", *map(str, args)],
                          input=stdin if stdin is not None else "", capture_output=True,
                          text=True, errors="replace", timeout=TIMEOUT, env=env)


def driver_error(session, query):
    """The line cqlsh prints for @query's error: class name, ': ', message."""
    try:
        session.execute(query)
    except Exception as e:  # noqa: BLE001 - any driver error is what we want
        msg = e.message if hasattr(e, "message") else str(e)
        return f"{type(e).__name__}: {msg}"
    pytest.fail(f"{query} did not fail")


# --- command line ---------------------------------------------------------------

def test_help(run_cli):
    r = run_cli("cql", "--help")
    assert r.returncode == 0, r.stderr
    for word in ("-e, --execute", "-f, --file", "-k, --keyspace", "-u, --username",
                 "DESCRIBE", "EXPAND", "PAGING"):
        assert word in r.stdout, r.stdout
    r = run_cli("--help")
    assert re.search(r"^  cql\s", r.stdout, re.M), r.stdout


def test_bad_arguments(run_cli):
    r = run_cli("cql", "--no-such")
    assert r.returncode == 2 and "--no-such" in r.stderr, r.stderr
    r = run_cli("cql", "127.0.0.1:99999")
    assert r.returncode == 2 and "HOST[:PORT]" in r.stderr, r.stderr
    r = run_cli("cql", "no-such-host.invalid")
    assert r.returncode == 2 and "cannot resolve" in r.stderr, r.stderr


def test_connection_refused(run_cli):
    r = run_cli("cql", f"127.0.0.1:{free_port()}", "-e", "SELECT 1")
    assert r.returncode == 1, r.stderr
    assert "Connection error" in r.stderr and "Connection refused" in r.stderr, r.stderr
    assert "shardmark serve" in r.stderr, r.stderr


# --- output as cqlsh's ------------------------------------------------------------

def test_table_output(shardmark_bin, env):
    env.session.execute(f"CREATE TABLE {env.ks}.tab (k int PRIMARY KEY, name text, n bigint)")
    env.session.execute(f"INSERT INTO {env.ks}.tab (k, name, n) VALUES (1, 'one', 100)")
    env.session.execute(f"INSERT INTO {env.ks}.tab (k, name) VALUES (22, 'twenty-two')")
    r = cql(shardmark_bin, env.server, "-e", f"SELECT k, name, n FROM {env.ks}.tab WHERE k IN (1, 22)")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("\n"
                        " k  | name       | n\n"
                        "----+------------+------\n"
                        "  1 |        one |  100\n"
                        " 22 | twenty-two | null\n"
                        "\n"
                        "(2 rows)\n"), r.stdout
    # no rows: the header, then two empty lines without a TTY
    r = cql(shardmark_bin, env.server, "-e", f"SELECT k FROM {env.ks}.tab WHERE k = 5")
    assert r.stdout == "\n k\n---\n\n\n(0 rows)\n", repr(r.stdout)


# Each value as scylla-cqlsh's formatting.py prints the Python driver's value
# (durations: with the integer division cqlsh means, see sm_cqlsh_format.c).
TYPES_ROW = {
    "t": ("text", "'it''s a\\ttab\\\\back'", "it's a\\\\ttab\\\\\\\\back"),
    "a": ("ascii", "'plain'", "plain"),
    "i": ("int", "-42", "-42"),
    "bi": ("bigint", "9223372036854775807", "9223372036854775807"),
    "si": ("smallint", "-32768", "-32768"),
    "ti": ("tinyint", "127", "127"),
    "vi": ("varint", "123456789012345678901234567890", "123456789012345678901234567890"),
    "de": ("decimal", "1.50", "1.50"),
    "de2": ("decimal", "1E+2", "1E+2"),
    "f": ("float", "123456.789", "1.2346e+05"),
    "d": ("double", "3.14159265358979", "3.14159"),
    "d2": ("double", "0.000012345", "1.2e-05"),
    "b": ("boolean", "true", "True"),
    "u": ("uuid", "01234567-89ab-cdef-0123-456789abcdef", "01234567-89ab-cdef-0123-456789abcdef"),
    "tu": ("timeuuid", "5a9b3b10-cf8a-11ee-8a2f-0242ac120002",
           "5a9b3b10-cf8a-11ee-8a2f-0242ac120002"),
    "ts": ("timestamp", "'2026-12-01 10:00:00+0000'", "2026-12-01 10:00:00.000000+0000"),
    "dt": ("date", "'2026-12-01'", "2026-12-01"),
    "tm": ("time", "'10:00:00.000000001'", "10:00:00.000000001"),
    "du": ("duration", "14mo3d4h5m6s7ms8us9ns", "1y2mo3d4h5m6s7ms8us9ns"),
    "bl": ("blob", "0xcafe", "0xcafe"),
    "ip": ("inet", "'127.0.0.1'", "127.0.0.1"),
    "i6": ("inet", "'::1'", "::1"),
    "l": ("list<int>", "[1, 2, 3]", "[1, 2, 3]"),
    "st": ("set<text>", "{'b', 'a''s'}", "{'a''s', 'b'}"),
    "m": ("map<text, int>", "{'b': 2, 'a': 1}", "{'a': 1, 'b': 2}"),
    "fl": ("frozen<list<text>>", "['x', 'y']", "['x', 'y']"),
    "mf": ("map<int, frozen<set<text>>>", "{1: {'q', 'p'}}", "{1: {'p', 'q'}}"),
    "mt": ("map<text, timestamp>", "{'a': '2026-12-01 10:00:00+0000'}",
           "{'a': '2026-12-01 10:00:00.000000+0000'}"),
    "nul": ("int", None, "null"),
}


def test_values_as_cqlsh_prints_them(shardmark_bin, env):
    cols = ", ".join(f"{c} {t}" for c, (t, _, _) in TYPES_ROW.items())
    env.session.execute(f"CREATE TABLE {env.ks}.types (k int PRIMARY KEY, {cols})")
    given = [c for c, (_, v, _) in TYPES_ROW.items() if v is not None]
    env.session.execute(f"INSERT INTO {env.ks}.types (k, {', '.join(given)}) VALUES "
                        f"(1, {', '.join(TYPES_ROW[c][1] for c in given)})")
    env.session.execute(f"CREATE TABLE {env.ks}.counters (k int PRIMARY KEY, c counter)")
    env.session.execute(f"UPDATE {env.ks}.counters SET c = c + 7 WHERE k = 1")
    names = list(TYPES_ROW)
    r = cql(shardmark_bin, env.server, "-k", env.ks,
            stdin=f"EXPAND ON\nSELECT {', '.join(names)} FROM types WHERE k = 1;\n"
                  "SELECT c FROM counters;\n")
    assert r.returncode == 0, r.stderr
    got = dict(re.findall(r"^ (\w+) +\| (.*)$", r.stdout, re.M))
    for c, (t, _, want) in TYPES_ROW.items():
        assert got.get(c) == want, f"{c} {t}: got {got.get(c)!r}, cqlsh prints {want!r}"
    assert got["c"] == "7"
    assert r.stdout.startswith("Now Expanded output is enabled\n\n@ Row 1\n"), r.stdout
    # the rule under "@ Row 1" is as wide as the widest name and value
    width_n = max(len(n) for n in names)
    width_v = max(len(v) for _, _, v in TYPES_ROW.values())
    assert f"-{'-' * width_n}-+-{'-' * width_v}-\n" in r.stdout, r.stdout


def test_errors_in_cqlsh_form(shardmark_bin, env):
    for query in (f"SELECT * FROM {env.ks}.nosuch",
                  "SELEC * FROM x",
                  f"CREATE KEYSPACE {env.ks} WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}",
                  f"INSERT INTO {env.ks}.tab (k, name) VALUES ('x', 'y')"):
        want = driver_error(env.session, query)
        r = cql(shardmark_bin, env.server, "-e", query)
        assert r.returncode == 1, (query, r.stderr)
        assert r.stderr == f"<stdin>:1:{want}\n", (query, r.stderr, want)
        assert r.stdout == "", r.stdout


def test_script_from_stdin(shardmark_bin, env):
    script = (f"USE {env.ks};\n"
              "-- a comment; not a statement\n"
              "CREATE TABLE script (k int PRIMARY KEY,\n"
              "   v text); /* a block\n"
              "comment */ INSERT INTO script (k, v) VALUES (1, 'a;b');\n"
              "SELECT * FROM script;\n"
              "SELECT * FROM nosuch;\n"
              "INSERT INTO script (k, v) VALUES (2, 'never');\n")
    r = cql(shardmark_bin, env.server, stdin=script)
    assert r.returncode == 1, r.stderr
    assert r.stdout == "\n k | v\n---+-----\n 1 | a;b\n\n(1 rows)\n", r.stdout
    # cqlsh's numbering: the line after the one read, so line 7 reads 8
    assert r.stderr == ("<stdin>:8:InvalidRequest: Error from server: code=2200 "
                        "[Invalid query] message=\"unconfigured table nosuch\"\n"), r.stderr
    # the first error ended the script: the last INSERT did not run
    assert env.session.execute(f"SELECT * FROM {env.ks}.script WHERE k = 2").one() is None
    # no prompt and no banner without a TTY
    assert "cqlsh>" not in r.stdout and "Connected" not in r.stdout


def test_file_and_source(shardmark_bin, env, tmp_path):
    inner = tmp_path / "inner.cql"
    inner.write_text(f"SELECT k FROM {env.ks}.tab WHERE k = 1;\nSELECT * FROM nosuch_in_source;\n"
                     f"SELECT k FROM {env.ks}.tab WHERE k = 22;\n")
    outer = tmp_path / "outer.cql"
    outer.write_text(f"SOURCE '{inner}'\nSELECT nope FROM {env.ks}.tab;\n")
    r = cql(shardmark_bin, env.server, "-f", outer)
    assert r.returncode == 1, r.stderr
    # errors in a sourced file do not stop it; its lines are its own
    assert r.stdout.count("(1 rows)") == 2, r.stdout
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"{inner}:3:InvalidRequest:"), r.stderr
    # ... but they fail the SOURCE statement, which ends -f
    assert len(lines) == 1, r.stderr
    r = cql(shardmark_bin, env.server, "-e", "SOURCE '/no/such.cql'")
    assert r.returncode == 1
    assert r.stderr == ("<stdin>:1:Could not open '/no/such.cql': [Errno 2] No such file or "
                        "directory: '/no/such.cql'\n"), r.stderr
    r = cql(shardmark_bin, env.server, "-f", tmp_path / "absent.cql")
    assert r.returncode == 1 and "absent.cql" in r.stderr, r.stderr


def test_paging_without_tty(shardmark_bin, env):
    env.session.execute(f"CREATE TABLE {env.ks}.pages (p int, c int, PRIMARY KEY (p, c))")
    for c in range(5):
        env.session.execute(f"INSERT INTO {env.ks}.pages (p, c) VALUES (0, {c})")
    r = cql(shardmark_bin, env.server, stdin=f"PAGING 2\nSELECT * FROM {env.ks}.pages;\n")
    assert r.returncode == 0, r.stderr
    # every page, one header, no ---MORE---
    assert r.stdout == ("Page size: 2\n\n p | c\n---+---\n" +
                        "".join(f" 0 | {c}\n" for c in range(5)) + "\n(5 rows)\n"), r.stdout
    r = cql(shardmark_bin, env.server, stdin="PAGING OFF\nPAGING\nPAGING ON\n")
    assert r.stdout == ("Disabled Query paging.\n"
                        "Query paging is currently disabled. Use PAGING ON to enable.\n"
                        "Now Query paging is enabled\nPage size: 100\n"), r.stdout


def test_consistency_and_use(shardmark_bin, env):
    r = cql(shardmark_bin, env.server,
            stdin="CONSISTENCY\nCONSISTENCY quorum\nCONSISTENCY\nSERIAL CONSISTENCY\n"
                  f"USE {env.ks};\nSELECT k FROM tab WHERE k = 1;\nexit\nSELECT 1;\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("Current consistency level is ONE.\n"
                        "Consistency level set to QUORUM.\n"
                        "Current consistency level is QUORUM.\n"
                        "Current serial consistency level is SERIAL.\n"
                        "\n k\n---\n 1\n\n(1 rows)\n"), r.stdout


def test_describe_matches_the_driver(shardmark_bin, env, cql_connect):
    ks = cql_create_keyspace(env.session, cql_unique_name("desc"))
    env.session.execute(f"CREATE TABLE {ks}.t (k int, c int, v text, s int static, "
                        "\"Mixed\" map<text, int>, PRIMARY KEY (k, c)) "
                        "WITH CLUSTERING ORDER BY (c DESC)")
    env.session.execute(f"CREATE TABLE {ks}.u (a int, b int, v int, PRIMARY KEY ((a, b)))")
    cluster, _ = cql_connect(env.server)
    meta = cluster.metadata.keyspaces[ks]
    r = cql(shardmark_bin, env.server, "-e", f"DESCRIBE KEYSPACE {ks}")
    assert r.returncode == 0, r.stderr
    want = "".join(f"\n{s}\n" for s in
                   [meta.as_cql_query() + ";"] + [t.export_as_string() for t in meta.tables.values()])
    assert r.stdout == want, r.stdout
    r = cql(shardmark_bin, env.server, "-k", ks, "-e", "DESC TABLE t")
    assert r.stdout == f"\n{meta.tables['t'].export_as_string()}\n", r.stdout
    r = cql(shardmark_bin, env.server, "-k", ks, "-e", "DESCRIBE TABLES")
    assert r.stdout == "\nt  u\n\n", repr(r.stdout)
    r = cql(shardmark_bin, env.server, "-e", "DESCRIBE KEYSPACES")
    assert r.returncode == 0
    names = r.stdout.split()
    assert ks in names and "system_schema" in names and names == sorted(names), r.stdout
    r = cql(shardmark_bin, env.server, "-e", "DESCRIBE TABLES")
    assert f"\nKeyspace {ks}\n---------{'-' * len(ks)}\nt  u\n" in r.stdout, r.stdout
    r = cql(shardmark_bin, env.server, "-k", ks, "-e", "DESCRIBE TABLE nosuch")
    assert r.returncode == 1
    assert r.stderr == f"<stdin>:1:Table 'nosuch' not found in keyspace '{ks}'\n", r.stderr


def test_password_authenticator(shardmark_bin, cql_server):
    srv = cql_server("--authenticator", "PasswordAuthenticator", "--auth-superuser-name", "admin",
                     "--auth-superuser-password", "s3cret", smp=1)
    r = cql(shardmark_bin, srv, "-u", "admin", "-p", "s3cret", "-e",
            "SELECT release_version FROM system.local")
    assert r.returncode == 0, r.stderr
    assert "(1 rows)" in r.stdout
    r = cql(shardmark_bin, srv, "-e", "SELECT release_version FROM system.local")
    assert r.returncode == 1
    assert "requires authentication" in r.stderr and "-u USER -p PASSWORD" in r.stderr, r.stderr
    r = cql(shardmark_bin, srv, "-u", "admin", "-p", "wrong", "-e", "SELECT 1")
    assert r.returncode == 1 and "-u USER -p PASSWORD" in r.stderr, r.stderr


# --- at a terminal ---------------------------------------------------------------

class Pty:
    """The shell on a pty, read and typed into as a person would."""

    def __init__(self, binary, srv, *args, env=None):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(str(binary), [str(binary), "cql", f"127.0.0.1:{srv.cql_port}", *args],
                      env or os.environ)
        self.out = ""

    def read_until(self, text, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while text not in self.out:
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} in the output:\n{self.out}"
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    data = b""
                assert data, f"the shell exited before {text!r}:\n{self.out}"
                self.out += data.decode(errors="replace").replace("\r\n", "\n")
        at = self.out.index(text) + len(text)
        seen, self.out = self.out[:at], self.out[at:]
        return seen

    def type(self, keys):
        os.write(self.fd, keys.encode())

    def wait(self):
        for _ in range(TIMEOUT * 10):
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.1)
        os.kill(self.pid, 9)
        pytest.fail(f"the shell did not exit:\n{self.out}")


def test_interactive_session(shardmark_bin, env, tmp_path):
    envv = dict(os.environ, SHARDMARK_CQL_HISTORY=str(tmp_path / "history"), TERM="xterm")
    sh = Pty(shardmark_bin, env.server, env=envv)
    banner = sh.read_until("cqlsh> ")
    assert re.search(r"^Connected to \S+ at 127\.0\.0\.1:\d+$", banner, re.M), banner
    assert "Use HELP for help." in banner
    sh.type(f"USE {env.ks};\r")
    sh.read_until(f"cqlsh:{env.ks}> ")
    # a statement over two lines: the continuation prompt lines up under the keyspace
    sh.type("SELECT k, name FROM tab\r")
    sh.read_until(" " * len(env.ks) + "    ... ")
    sh.type("WHERE k = 1;\r")
    out = sh.read_until(f"cqlsh:{env.ks}> ")
    assert "\n k | name\n---+------\n 1 |  one\n\n(1 rows)\n" in out, out
    # errors without the <stdin>:N: prefix, and the session goes on
    sh.type("SELECT * FROM nosuch;\r")
    out = sh.read_until(f"cqlsh:{env.ks}> ")
    assert "\nInvalidRequest: Error from server: code=2200 [Invalid query] " \
           "message=\"unconfigured table nosuch\"\n" in out, out
    # Ctrl-C forgets a half-typed statement
    sh.type("SELECT * FROM\r")
    sh.read_until("    ... ")
    sh.type("\x03")
    sh.read_until(f"cqlsh:{env.ks}> ")
    # paging: ---MORE--- between pages, a header on each
    sh.type("PAGING 2\r")
    sh.read_until("Page size: 2")
    sh.type("SELECT c FROM pages;\r")
    out = sh.read_until("---MORE---")
    assert "\n c\n---\n 0\n 1\n\n" in out, out
    sh.type("\r")
    out = sh.read_until("---MORE---")
    assert "\n c\n---\n 2\n 3\n\n" in out, out
    sh.type("\r")
    out = sh.read_until(f"cqlsh:{env.ks}> ")
    assert out.endswith(" 4\n\n(5 rows)\ncqlsh:" + env.ks + "> "), out
    # history: the up arrow brings back the last line
    sh.type("\x1b[A")
    sh.read_until("SELECT c FROM pages;")
    sh.type("\x15exit\r")  # Ctrl-U clears the recalled line
    assert sh.wait() == 0
    # libedit's file: its header, then the lines, blanks as \\040
    assert "SELECT\\040c\\040FROM\\040pages;" in (tmp_path / "history").read_text()


def test_sigterm_at_the_prompt(shardmark_bin, env):
    sh = Pty(shardmark_bin, env.server)
    sh.read_until("cqlsh> ")
    os.kill(sh.pid, 15)
    assert sh.wait() == 0


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_in_tmux(shardmark_bin, env):
    """As a person at a terminal: tmux types and reads the screen."""
    name = f"smcql{os.getpid()}"
    cmd = f"{shardmark_bin} cql 127.0.0.1:{env.server.cql_port} -k {env.ks}"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40", cmd],
                   check=True, env=dict(os.environ, TERM="xterm"))
    try:
        def screen():
            return subprocess.run(["tmux", "capture-pane", "-p", "-t", name],
                                  capture_output=True, text=True).stdout

        def wait_for(text):
            for _ in range(TIMEOUT * 10):
                s = screen()
                if text in s:
                    return s
                time.sleep(0.1)
            pytest.fail(f"no {text!r} on the screen:\n{screen()}")

        def send(line):
            # tmux reads an argument's trailing ';' as its own separator: "\\;" is the key
            if line.endswith(";"):
                line = line[:-1] + "\\;"
            subprocess.run(["tmux", "send-keys", "-t", name, "-l", line], check=True)
            subprocess.run(["tmux", "send-keys", "-t", name, "Enter"], check=True)

        wait_for(f"cqlsh:{env.ks}>")
        send("SELECT k, name FROM tab WHERE k = 22;")
        s = wait_for("(1 rows)")
        assert " 22 | twenty-two" in s, s
        send("EXPAND ON")
        wait_for("Now Expanded output is enabled")
        send("SELECT k FROM tab WHERE k = 1;")
        s = wait_for("@ Row 1")
        assert re.search(r"^ k \| 1$", s, re.M), s
        send("quit")
        for _ in range(TIMEOUT * 10):
            if subprocess.run(["tmux", "has-session", "-t", name],
                              capture_output=True).returncode != 0:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"the shell did not exit:\n{screen()}")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
