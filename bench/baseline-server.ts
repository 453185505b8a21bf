/**
 * The baseline for the document benchmark: the same queries made directly with the mongodb
 * driver in a plain node:http server, with no auth, validation or rendering layers.
 * GET /page?site=X → {count, results} (50 records) · GET /by-id?id=<ObjectId> → the same for an
 * _id filter · GET /range?gt=N → the same for {n: {$gt: N}} sorted by n · GET /record?id=<ObjectId>
 * → that one record · GET /all → {count, results} with every record, streamed ·
 * POST /insert (JSON array) → {inserted}
 * POST /insert-one (one JSON record) → {_id}
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { ObjectId, type Document, type Filter } from 'mongodb';
import { connectMongo } from '../src/db/mongo-client.js';
import { mongoEnvSchema, toMongoSettings } from '../src/config/connections.js';

const settings = toMongoSettings(mongoEnvSchema.parse(process.env));
const client = await connectMongo(settings);
const collection = client.db(process.env.BENCH_DB ?? 'bench').collection(process.env.BENCH_COLLECTION ?? 'records');

// A request handler whose rejection would go unnoticed: every path ends in its own catch below.
const server = createServer((req, res) => void handle(req, res));

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/record') {
      const doc = await collection.findOne({ _id: new ObjectId(url.searchParams.get('id') ?? '') });
      res.statusCode = doc ? 200 : 404;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(doc));
      return;
    }
    if (req.method === 'GET' && (url.pathname === '/page' || url.pathname === '/by-id' || url.pathname === '/range')) {
      const filter: Filter<Document> =
        url.pathname === '/page'
          ? { site: url.searchParams.get('site') }
          : url.pathname === '/range'
            ? { n: { $gt: Number(url.searchParams.get('gt')) } }
            : { _id: new ObjectId(url.searchParams.get('id') ?? '') };
      const sort: Document | undefined = url.pathname === '/range' ? { n: 1 } : undefined;
      const [count, results] = await Promise.all([
        collection.countDocuments(filter),
        (sort ? collection.find(filter).sort(sort) : collection.find(filter)).limit(50).toArray(),
      ]);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ count, results }));
      return;
    }
    if (req.method === 'GET' && url.pathname === '/all') {
      // Counted too, as the API's envelope is: the same work, without the API's layers.
      const cursor = collection.find({});
      const [count] = await Promise.all([collection.countDocuments({}), cursor.hasNext()]);
      res.setHeader('content-type', 'application/json');
      res.write(`{"count":${count},"results":[`);
      let first = true;
      for await (const doc of cursor) {
        const ok = res.write((first ? '' : ',') + JSON.stringify(doc));
        first = false;
        if (!ok) await new Promise((r) => res.once('drain', r));
      }
      res.end(']}');
      return;
    }
    if (req.method === 'POST' && url.pathname === '/insert-one') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const result = await collection.insertOne(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      res.statusCode = 201;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ _id: result.insertedId }));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/insert') {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const docs = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>[];
      const result = await collection.insertMany(docs);
      res.statusCode = 201;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ inserted: result.insertedCount }));
      return;
    }
    res.statusCode = 404;
    res.end();
  } catch (err) {
    res.statusCode = 500;
    res.end(String(err));
  }
}

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : ''}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  void client.close().then(() => process.exit(0));
});
