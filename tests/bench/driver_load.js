#!/usr/bin/node
// SPDX-License-Identifier: BSD-3-Clause
//
// The Node.js driver's side of tests/bench/stress-vs-drivers.sh: a write or a
// read load on cassandra-stress's keyspace1.standard1 (made by
// `shardmark stress write` first) through the DataStax Node.js driver (npm
// cassandra-driver, installed into tests/bench/node_modules by the script):
// C concurrent async loops, each awaiting client.execute(query, params,
// { prepare: true }) (prepared statements: EXECUTE requests), protocol v4 at
// most, the driver's default load balancing (DefaultLoadBalancingPolicy:
// token-aware, local replicas first).
//
// The keys and cell values are shardmark stress's (lib/stress/sm_stress_load.c:
// sm_stress_key() and sm_stress_value() of population index 1..N), so the
// writes store what `shardmark stress write` stored and the reads can be
// checked against it. Keys and values are made before the measured phase.
//
// Measured phase: the C loops over N operations; client CPU =
// process.cpuUsage() (the whole process's user+sys, libuv's threads too)
// around them only; connecting, preparing, the warm-up and the checks are
// outside it.
//
//   node tests/bench/driver_load.js write|read --port P [--host H] [--n N]
//       [--concurrency C] [--warmup W] [--dc DC] [--json FILE]
//       [--workload standard1|blogposts|ycsb-a|sb-timeseries]
//
// The other workloads are driver_load.py's (see there): the tables
// shardmark's tools made, the same statements, keys of the driver's own
// written and then read back, rows counted; the blog insert is
// client.batch() of 10 prepared UPDATEs, unlogged.
'use strict';

const fs = require('fs');
const path = require('path');
const cassandra = require('cassandra-driver');

const M64 = (1n << 64n) - 1n;
const GOLDEN = 0x9e3779b97f4a7c15n;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const NCOLS = 5;
const COL_SIZE = 34;
const WRITE_CQL = 'UPDATE keyspace1.standard1 SET "C0"=?,"C1"=?,"C2"=?,"C3"=?,"C4"=? WHERE key=?';
const READ_CQL = 'SELECT * FROM keyspace1.standard1 WHERE key=?';

// splitmix64: [new state, output] from state x (BigInt).
function splitmix64(x) {
  x = (x + GOLDEN) & M64;
  let z = x;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
  return [x, z ^ (z >> 31n)];
}

// sm_stress_key(): 10 bytes of [0-9A-Z] from a hash of index i.
function stressKey(i) {
  let [x, h] = splitmix64(BigInt(i));
  const out = Buffer.alloc(10);
  for (let k = 0; k < 10; k++) {
    if (k === 6) [x, h] = splitmix64(x);
    out[k] = ALPHABET.charCodeAt(Number(h % 36n));
    h /= 36n;
  }
  return out;
}

// sm_stress_value(): column col's bytes for index i.
function stressValue(i, col) {
  let x = ((BigInt(i) * GOLDEN) & M64) ^ (BigInt(col) << 56n) ^ 0x5bd1e995n;
  const words = Math.ceil(COL_SIZE / 8);
  const buf = Buffer.alloc(words * 8);
  for (let k = 0; k < words; k++) {
    let w;
    [x, w] = splitmix64(x);
    buf.writeBigUInt64LE(w, k * 8);
  }
  return buf.subarray(0, COL_SIZE);
}

function writeParams(i) {
  const p = [];
  for (let c = 0; c < NCOLS; c++) p.push(stressValue(i, c));
  p.push(stressKey(i));
  return p;
}

// A small deterministic generator (mulberry32) for the read order and the checks.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function parseArgs(argv) {
  const a = { host: '127.0.0.1', port: 0, n: 50000, concurrency: 64, warmup: -1, check: 1000,
    seed: 1, dc: 'datacenter1', json: null, load: null, workload: 'standard1' };
  for (let k = 0; k < argv.length; k++) {
    const o = argv[k];
    const v = () => {
      if (k + 1 >= argv.length) throw new Error(`${o} needs a value`);
      return argv[++k];
    };
    switch (o) {
      case 'write': case 'read': a.load = o; break;
      case '--host': a.host = v(); break;
      case '--port': a.port = parseInt(v(), 10); break;
      case '--n': a.n = parseInt(v(), 10); break;
      case '--concurrency': a.concurrency = parseInt(v(), 10); break;
      case '--warmup': a.warmup = parseInt(v(), 10); break;
      case '--check': a.check = parseInt(v(), 10); break;
      case '--seed': a.seed = parseInt(v(), 10); break;
      case '--dc': a.dc = v(); break;
      case '--json': a.json = v(); break;
      case '--workload': a.workload = v(); break;
      default: throw new Error(`unknown argument ${o}`);
    }
  }
  if (!a.load || !a.port) throw new Error('usage: driver_load.js write|read --port P [...]');
  if (a.warmup < 0) a.warmup = Math.min(50000, Math.floor(a.n / 4));
  return a;
}

// C loops sharing one cursor over params; onResult(j, rs) for each success.
async function runLoops(client, query, params, concurrency, opts, onResult) {
  let next = 0;
  let errors = 0;
  let firstError = null;
  async function loop() {
    for (;;) {
      const j = next++;
      if (j >= params.length) return;
      try {
        onResult(j, await client.execute(query, params[j], opts));
      } catch (e) {
        errors++;
        if (firstError === null) firstError = String(e);
      }
    }
  }
  const loops = [];
  for (let k = 0; k < concurrency; k++) loops.push(loop());
  await Promise.all(loops);
  return { errors, firstError };
}

const BLOG_WRITE = 'UPDATE stresscql.blogposts SET url = ?, title = ?, author = ?, body = ?, ' +
  'tags = tags + ? WHERE domain = ? AND published_date = ?';
const BLOG_READ = 'SELECT url, title, published_date FROM stresscql.blogposts WHERE domain = ? LIMIT 10';
const YCSB_FIELDS = [...Array(10).keys()].map((f) => `field${f}`);
const YCSB_INSERT = `INSERT INTO ycsb.usertable (y_id, ${YCSB_FIELDS.join(', ')}) VALUES ` +
  `(?${', ?'.repeat(YCSB_FIELDS.length)})`;
const YCSB_READ = 'SELECT * FROM ycsb.usertable WHERE y_id = ? LIMIT 1';
const YCSB_UPDATE = 'UPDATE ycsb.usertable SET field0 = ? WHERE y_id = ?';
const SB_WRITE = 'INSERT INTO scylla_bench.test (pk, ck, v) VALUES (?, ?, ?)';
const SB_READ = 'SELECT ck, v FROM scylla_bench.test WHERE pk = ? AND ck >= ? LIMIT 1';
const SB_PARTITIONS = 100;
const SB_BASE = 2 ** 40;

const TEXT_POOL = (() => {
  const abc = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const r = rng(7);
  let s = '';
  for (let k = 0; k < 1 << 16; k++) s += abc[Math.floor(r() * abc.length)];
  return s;
})();

// n characters at a random place of a random pool (made before the measured phase).
function text(rand, n) {
  const off = Math.floor(rand() * (TEXT_POOL.length - n));
  return TEXT_POOL.slice(off, off + n);
}

// [{ q, p } or { batch }] of n operations, and the rows a read expects of each (null: any).
function otherOps(a, rand) {
  const n = a.n;
  const ops = [];
  const pick = () => Math.floor(rand() * n);
  if (a.workload === 'blogposts') {
    if (a.load === 'read') {
      for (let i = 0; i < n; i++) ops.push({ q: BLOG_READ, p: [`drv-${pick()}`] });
      return [ops, 10];
    }
    for (let i = 0; i < n; i++) {
      const batch = [];
      for (let k = 0; k < 10; k++) {
        const u = Buffer.alloc(16);
        u.writeUIntBE(i * 10 + k, 0, 6); // time_low and time_mid
        u[6] = 0x10; // version 1
        u[8] = 0x80; // the IETF variant
        batch.push({ query: BLOG_WRITE, params: [text(rand, 165), text(rand, 105), text(rand, 12),
          text(rand, 550), [text(rand, 8), text(rand, 8)], `drv-${i}`,
          new cassandra.types.TimeUuid(u)] });
      }
      ops.push({ batch });
    }
    return [ops, 0];
  }
  if (a.workload === 'ycsb-a') {
    for (let i = 0; i < n; i++) {
      if (a.load === 'write') {
        ops.push({ q: YCSB_INSERT, p: [`drv${i}`, ...YCSB_FIELDS.map(() => text(rand, 100))] });
      } else {
        const k = `drv${pick()}`;
        ops.push(rand() < 0.5 ? { q: YCSB_READ, p: [k] } : { q: YCSB_UPDATE, p: [text(rand, 100), k] });
      }
    }
    return [ops, a.load === 'write' ? 0 : null];
  }
  for (let i = 0; i < n; i++) {
    if (a.load === 'write') {
      const v = Buffer.alloc(4);
      v.writeUInt32BE(Math.floor(rand() * 2 ** 32));
      ops.push({ q: SB_WRITE, p: [cassandra.types.Long.fromNumber(SB_BASE + (i % SB_PARTITIONS)),
        cassandra.types.Long.fromNumber(SB_BASE + i), v] });
    } else {
      ops.push({ q: SB_READ, p: [cassandra.types.Long.fromNumber(SB_BASE + Math.floor(rand() * SB_PARTITIONS)),
        cassandra.types.Long.fromNumber(SB_BASE)] });
    }
  }
  return [ops, a.load === 'write' ? 0 : 1];
}

// A connected client: protocol v4 at most, the driver's default policies.
async function connectClient(a) {
  const client = new cassandra.Client({
    contactPoints: [a.host],
    localDataCenter: a.dc,
    protocolOptions: { port: a.port, maxVersion: 4 },
  });
  await client.connect();
  return client;
}

function driverPackage() {
  return JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve('cassandra-driver')),
    'package.json'), 'utf8'));
}

async function runOther(a) {
  const rand = rng(a.seed);
  const [ops, want] = otherOps(a, rand);
  const client = await connectClient(a);
  const opts = { prepare: true };
  const batchOpts = { prepare: true, logged: false };
  let next = 0;
  let errors = 0;
  let firstError = null;
  let rows = 0;
  const run = (list) => async () => {
    for (;;) {
      const j = next++;
      if (j >= list.length) return;
      const o = list[j];
      try {
        const rs = o.batch ? await client.batch(o.batch, batchOpts) : await client.execute(o.q, o.p, opts);
        if (a.load === 'read') rows += rs.rowLength || 0;
      } catch (e) {
        errors++;
        if (firstError === null) firstError = String(e);
      }
    }
  };
  const all = async (list) => {
    next = 0;
    const loops = [];
    for (let k = 0; k < a.concurrency; k++) loops.push(run(list)());
    await Promise.all(loops);
  };
  if (a.warmup > 0) await all(ops.slice(0, a.warmup));
  else await all(ops.slice(0, 1)); // prepares the statement
  rows = 0;
  errors = 0;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await all(ops);
  const t1 = process.hrtime.bigint();
  const cu = process.cpuUsage(c0);
  await client.shutdown();
  const cpu = (cu.user + cu.system) / 1e6;
  const wall = Number(t1 - t0) / 1e9;
  const pkg = driverPackage();
  const out = {
    client: 'node', driver: `cassandra-driver (node) ${pkg.version}`, node: process.version,
    workload: a.workload, load: a.load, concurrency: a.concurrency, ops: a.n, errors,
    first_error: firstError, rows, wall_s: wall, ops_per_s: wall > 0 ? a.n / wall : 0,
    client_cpu_s: cpu, ops_per_client_cpu_s: cpu > 0 ? a.n / cpu : 0,
  };
  console.log(`node ${a.workload} ${a.load}: ${a.n} ops in ${wall.toFixed(3)} s; client CPU ` +
    `${cpu.toFixed(3)} s = ${out.ops_per_client_cpu_s.toFixed(0)} ops per client CPU-second; ` +
    `${errors} errors; ${rows} rows`);
  if (a.json) fs.writeFileSync(a.json, JSON.stringify(out, null, 1));
  if (errors || (want && rows !== want * a.n) || (want === null && rows === 0)) {
    console.error(`driver_load.js: ${errors} errors (first: ${firstError}), ${rows} rows`);
    process.exit(1);
  }
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  if (a.workload !== 'standard1') {
    await runOther(a);
    return;
  }
  const rand = rng(a.seed);
  const isRead = a.load === 'read';

  // Population indexes 1..n, as `shardmark stress write n=N` (seq=1..N):
  // writes in order, reads each key once in a random order.
  const idx = [];
  for (let i = 1; i <= a.n; i++) idx.push(i);
  if (isRead) {
    for (let k = idx.length - 1; k > 0; k--) {
      const r = Math.floor(rand() * (k + 1));
      [idx[k], idx[r]] = [idx[r], idx[k]];
    }
  }
  const params = idx.map((i) => (isRead ? [stressKey(i)] : writeParams(i)));
  const query = isRead ? READ_CQL : WRITE_CQL;

  const client = await connectClient(a);
  const opts = { prepare: true };
  // Prepare (and check the statement works) before the measured phase.
  await client.execute(query, params[0], opts);
  const info = client.metadata.getPreparedInfo(null, query);
  if (!info || !info.queryId) throw new Error('the statement was not prepared');
  if (a.warmup > 0) {
    const w = await runLoops(client, query, params.slice(0, a.warmup), a.concurrency, opts, () => {});
    if (w.errors) throw new Error(`warm-up: ${w.errors} errors, first: ${w.firstError}`);
  }

  // Positions whose rows are kept for the check after the run.
  const check = new Set();
  const nCheck = Math.min(a.check, a.n);
  while (check.size < nCheck) check.add(Math.floor(rand() * a.n));
  const keep = new Uint8Array(a.n);
  for (const j of check) keep[j] = 1;
  const kept = new Map();
  let rows = 0;
  const onResult = isRead
    ? (j, rs) => {
      rows += rs.rowLength;
      if (keep[j]) kept.set(j, rs.rows);
    }
    : () => {};

  // ---- measured phase ----
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const r = await runLoops(client, query, params, a.concurrency, opts, onResult);
  const t1 = process.hrtime.bigint();
  const cu = process.cpuUsage(c0);
  // ---- end of the measured phase ----

  // Check rows against sm_stress_value(): for reads the rows the measured
  // phase returned, for writes a read-back (not measured).
  let bad = 0;
  for (const j of check) {
    const i = idx[j];
    let got = kept.get(j);
    if (!isRead) got = (await client.execute(READ_CQL, [stressKey(i)], opts)).rows;
    if (!got || got.length !== 1) {
      bad++;
      continue;
    }
    const row = got[0];
    let ok = Buffer.isBuffer(row.key) && row.key.equals(stressKey(i));
    for (let c = 0; ok && c < NCOLS; c++) {
      const v = row[`C${c}`];
      ok = Buffer.isBuffer(v) && v.equals(stressValue(i, c));
    }
    if (!ok) bad++;
  }
  const protocol = client.controlConnection.protocolVersion;
  const lbp = client.options.policies.loadBalancing.constructor.name;
  const prepared = client.metadata.getAllPrepared().some((p) => p.query === query && p.queryId);
  await client.shutdown();

  const cpu = (cu.user + cu.system) / 1e6;
  const wall = Number(t1 - t0) / 1e9;
  const pkg = driverPackage();
  const out = {
    client: 'node',
    driver: `cassandra-driver (node) ${pkg.version}`,
    node: process.version,
    load_balancing: lbp,
    protocol_version: protocol,
    prepared,
    load: a.load,
    concurrency: a.concurrency,
    warmup: a.warmup,
    ops: a.n,
    errors: r.errors,
    first_error: r.firstError,
    rows,
    checked: check.size,
    check_failures: bad,
    wall_s: wall,
    ops_per_s: wall > 0 ? a.n / wall : 0,
    client_cpu_s: cpu,
    client_cpu_user_s: cu.user / 1e6,
    client_cpu_sys_s: cu.system / 1e6,
    ops_per_client_cpu_s: cpu > 0 ? a.n / cpu : 0,
  };
  console.log(`node ${a.load}: ${a.n} ops in ${wall.toFixed(3)} s = ${out.ops_per_s.toFixed(0)} ops/s; ` +
    `client CPU ${cpu.toFixed(3)} s = ${out.ops_per_client_cpu_s.toFixed(0)} ops per client CPU-second; ` +
    `${r.errors} errors; ${rows} rows; ${bad}/${check.size} checked rows wrong; ` +
    `prepared ${prepared}, ${lbp}, protocol v${protocol}`);
  if (a.json) fs.writeFileSync(a.json, JSON.stringify(out, null, 1));
  if (r.errors || bad || !prepared || (isRead && rows !== a.n)) {
    console.error(`driver_load.js: ${r.errors} errors (first: ${r.firstError}), ` +
      `${rows} rows of ${isRead ? a.n : 0} reads, ${bad} bad rows, prepared ${prepared}`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(`driver_load.js: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
