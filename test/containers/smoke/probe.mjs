// Runs inside the smoke network: reaches both servers by service name with TLS and a client
// certificate, and does one real round trip on each. Exit status 0 only when both work.
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
await client.close();
console.log('probe: database round trip by service name over TLS: ok');
