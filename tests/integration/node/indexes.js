// SPDX-License-Identifier: BSD-3-Clause
// Secondary indexes through the AWS SDK for JavaScript v3 (@aws-sdk/client-dynamodb):
// CreateTable with a GSI and an LSI, writes, Query on each index with
// pagination, Scan on the GSI, the SDK's own error class for a strongly
// consistent GSI read, UpdateTable adding a GSI until ACTIVE, DeleteTable.
// usage: node indexes.js ENDPOINT TABLE; prints "ok" and exits 0, or throws.
'use strict';

const assert = require('assert');
const {
	DynamoDBClient, CreateTableCommand, PutItemCommand, QueryCommand, ScanCommand,
	UpdateTableCommand, DescribeTableCommand, DeleteTableCommand,
} = require('@aws-sdk/client-dynamodb');

async function main() {
	const [endpoint, table] = process.argv.slice(2);
	const db = new DynamoDBClient({
		endpoint, region: 'us-east-1', maxAttempts: 1,
		credentials: { accessKeyId: 'alternator', secretAccessKey: 'secret_pass' },
	});
	await db.send(new CreateTableCommand({
		TableName: table, BillingMode: 'PAY_PER_REQUEST',
		KeySchema: [{ AttributeName: 'p', KeyType: 'HASH' }, { AttributeName: 'c', KeyType: 'RANGE' }],
		AttributeDefinitions: [
			{ AttributeName: 'p', AttributeType: 'S' }, { AttributeName: 'c', AttributeType: 'N' },
			{ AttributeName: 'x', AttributeType: 'S' }, { AttributeName: 'y', AttributeType: 'N' },
		],
		GlobalSecondaryIndexes: [{
			IndexName: 'byx', KeySchema: [{ AttributeName: 'x', KeyType: 'HASH' }],
			Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['y'] },
		}],
		LocalSecondaryIndexes: [{
			IndexName: 'byy',
			KeySchema: [{ AttributeName: 'p', KeyType: 'HASH' }, { AttributeName: 'y', KeyType: 'RANGE' }],
			Projection: { ProjectionType: 'ALL' },
		}],
	}));
	try {
		for (let c = 0; c < 30; c++) {
			await db.send(new PutItemCommand({
				TableName: table,
				Item: { p: { S: 'a' }, c: { N: String(c) }, x: { S: 'x' + (c % 3) },
					y: { N: String(100 - c) }, w: { S: 'w' } },
			}));
		}
		let items = [], start;
		do {
			const r = await db.send(new QueryCommand({
				TableName: table, IndexName: 'byx', Limit: 4, ExclusiveStartKey: start,
				KeyConditionExpression: 'x = :x', ExpressionAttributeValues: { ':x': { S: 'x1' } },
			}));
			assert(r.Items.length <= 4);
			items = items.concat(r.Items);
			start = r.LastEvaluatedKey;
		} while (start);
		assert.deepStrictEqual(items.map(i => Number(i.c.N)).sort((a, b) => a - b),
			[1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
		for (const i of items)
			assert.deepStrictEqual(Object.keys(i).sort(), ['c', 'p', 'x', 'y']);
		const lsi = await db.send(new QueryCommand({
			TableName: table, IndexName: 'byy', ConsistentRead: true, ScanIndexForward: false,
			KeyConditionExpression: 'p = :p AND y BETWEEN :lo AND :hi',
			ExpressionAttributeValues: { ':p': { S: 'a' }, ':lo': { N: '75' }, ':hi': { N: '77' } },
		}));
		assert.deepStrictEqual(lsi.Items.map(i => i.y.N), ['77', '76', '75']);
		assert.strictEqual(lsi.Items[0].w.S, 'w');
		await assert.rejects(db.send(new QueryCommand({
			TableName: table, IndexName: 'byx', ConsistentRead: true,
			KeyConditionExpression: 'x = :x', ExpressionAttributeValues: { ':x': { S: 'x1' } },
		})), e => e.name === 'ValidationException');
		const scan = await db.send(new ScanCommand({ TableName: table, IndexName: 'byx', Select: 'COUNT' }));
		assert.strictEqual(scan.Count, 30);
		await db.send(new UpdateTableCommand({
			TableName: table,
			AttributeDefinitions: [{ AttributeName: 'w', AttributeType: 'S' }],
			GlobalSecondaryIndexUpdates: [{ Create: {
				IndexName: 'byw', KeySchema: [{ AttributeName: 'w', KeyType: 'HASH' }],
				Projection: { ProjectionType: 'KEYS_ONLY' },
			} }],
		}));
		let status;
		for (let i = 0; i < 1000 && status !== 'ACTIVE'; i++) {
			const d = await db.send(new DescribeTableCommand({ TableName: table }));
			status = d.Table.GlobalSecondaryIndexes.find(g => g.IndexName === 'byw').IndexStatus;
		}
		assert.strictEqual(status, 'ACTIVE');
		const w = await db.send(new QueryCommand({
			TableName: table, IndexName: 'byw', KeyConditionExpression: 'w = :w',
			ExpressionAttributeValues: { ':w': { S: 'w' } },
		}));
		assert.strictEqual(w.Count, 30);
	} finally {
		await db.send(new DeleteTableCommand({ TableName: table }));
	}
	console.log('ok');
}

main().catch(e => { console.error(e); process.exit(1); });
