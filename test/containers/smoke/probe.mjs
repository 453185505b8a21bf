// Runs inside the smoke network: reaches both servers by service name with TLS and a client
// certificate, and does one real round trip on each (and a few engine features on the database).
// Exit status 0 only when all of it works.
import { readFileSync } from 'node:fs';
import amqp from 'amqplib';
import { MongoClient } from 'mongodb';

const certs = '/probe/certs';
const password = readFileSync(`${certs}/password`, 'utf8').trim();
const tls = {
  ca: [readFileSync(`${certs}/ca.pem`)],
  cert: readFileSync(`${certs}/client.pem`),
  key: readFileSync(`${certs}/client.key`),
};

const conn = await amqp.connect(`amqps://smoke:${encodeURIComponent(password)}@rabbitmq:5671/%2F`, tls);
const ch = await conn.createChannel();
const { queue } = await ch.assertQueue('', { exclusive: true });
ch.sendToQueue(queue, Buffer.from('hello'));
let msg = false;
for (let i = 0; i < 50 && !msg; i++) {
  msg = await ch.get(queue, { noAck: true });
  if (!msg) await new Promise((r) => setTimeout(r, 100));
}
if (!msg || msg.content.toString() !== 'hello') throw new Error('broker round trip failed');
await conn.close();
console.log('probe: broker round trip by service name over TLS: ok');

const client = new MongoClient('mongodb://mongo:27017/?authSource=admin', {
  tls: true,
  tlsCAFile: `${certs}/ca.pem`,
  tlsCertificateKeyFile: `${certs}/client-combined.pem`,
  auth: { username: 'smoke', password },
  directConnection: true,
  serverSelectionTimeoutMS: 10000,
});
await client.connect();
const coll = client.db('smoke').collection('probe');
await coll.insertOne({ _id: 'p', v: 1 });
const doc = await coll.findOne({ _id: 'p' });
if (doc?.v !== 1) throw new Error('database round trip failed');
console.log('probe: database round trip by service name over TLS: ok');

// What the stand-in's engine (FerretDB v2 on PostgreSQL + DocumentDB) must do as the local
// runtime's does: several accumulators in one $group, an index, and dropDatabase (which
// DocumentDB runs through a connection back to its own cluster).
await coll.insertMany([
  { _id: 'q', v: 2 },
  { _id: 'r', v: 3 },
]);
await coll.createIndex({ v: 1 });
const [stats] = await coll.aggregate([{ $group: { _id: null, n: { $sum: 1 }, avg: { $avg: '$v' }, max: { $max: '$v' } } }]).toArray();
if (stats?.n !== 3 || stats.avg !== 2 || stats.max !== 3) throw new Error(`$group answered ${JSON.stringify(stats)}`);
const indexes = (await coll.indexes()).map((i) => i.name);
if (!indexes.includes('v_1')) throw new Error(`indexes: ${indexes.join(', ')}`);
await client.db('smoke').dropDatabase();
const left = (await client.db('admin').admin().listDatabases()).databases.map((d) => d.name);
if (left.includes('smoke')) throw new Error(`after dropDatabase: ${left.join(', ')}`);
await client.close();
console.log('probe: database engine (aggregation, index, dropDatabase): ok');
