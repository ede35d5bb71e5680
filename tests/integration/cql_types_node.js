#!/usr/bin/node
// SPDX-License-Identifier: BSD-3-Clause
//
// test_cql_udt.py's Node.js side: write and read a user type and a tuple
// through the DataStax Node.js driver (npm cassandra-driver), as a simple
// statement and as a prepared one, and print what came back as one JSON line.
//
//   NODE_PATH=tests/bench/node_modules node cql_types_node.js HOST PORT KS.TABLE
// The table is (k int PRIMARY KEY, n ut, f frozen<ut>, tu tuple<int, text>)
// with ut (a int, b text, c frozen<list<int>>).
'use strict';

const cassandra = require('cassandra-driver');

const [host, port, table] = process.argv.slice(2);

// A row as plain JSON: UDTs are objects, tuples arrays, missing fields null.
function plain(row) {
	const udt = (u) => (u == null ? null : { a: u.a ?? null, b: u.b ?? null, c: u.c ?? null });
	return { k: row.k, n: udt(row.n), f: udt(row.f), tu: row.tu == null ? null : row.tu.values() };
}

async function main() {
	const client = new cassandra.Client({
		contactPoints: [`${host}:${port}`],
		localDataCenter: 'datacenter1',
		protocolOptions: { maxVersion: 4 },
	});
	await client.connect();
	try {
		await client.execute(`INSERT INTO ${table} (k, n, f, tu) VALUES (1, {a: 1, b: 'x'}, ` +
				     `{a: 2, c: [1, 2]}, (3, 'y'))`);
		const simple = await client.execute(`SELECT k, n, f, tu FROM ${table} WHERE k = 1`);
		await client.execute(`INSERT INTO ${table} (k, n, f, tu) VALUES (?, ?, ?, ?)`,
				     [2, { a: 5, b: 'p', c: [7] }, { a: 6, b: 'q' },
				      new cassandra.types.Tuple(8, 'z')], { prepare: true });
		const prepared = await client.execute(`SELECT k, n, f, tu FROM ${table} WHERE k = ?`,
						      [2], { prepare: true });
		const field = await client.execute(`SELECT n.a, n.b FROM ${table} WHERE k = ?`, [2],
						   { prepare: true });
		const fr = field.first();
		console.log(JSON.stringify({
			simple: plain(simple.first()),
			prepared: plain(prepared.first()),
			field: [fr['n.a'], fr['n.b']],
		}));
	} finally {
		await client.shutdown();
	}
}

main().catch((e) => {
	console.error(e && e.stack ? e.stack : e);
	process.exit(1);
});
