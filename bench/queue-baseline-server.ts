/**
 * The baseline for the submission benchmark: the same work as `POST /api/queue/run/<task>/` in a
 * plain node:http server, with none of the API's layers (no auth, permission, validation, task
 * catalog, request log or rendering): parse the JSON body, publish the same Celery message with a
 * publisher confirm, insert the same task_log document, answer 202 with the task id.
 * POST /run/<task> with {"queue", "args", "kwargs", "tags"} → 202 {"task_id"}.
 * Prints LISTENING when ready.
 */
import { createServer } from 'node:http';
import { loadSettings } from '../src/config/settings.js';
import { connectMongo } from '../src/db/mongo-client.js';
import { connectBroker } from '../src/queue/connection/broker-connection.js';
import type { JsonObject, JsonValue } from '../src/queue/protocol/json.js';
import { buildTaskMessage, encodeTaskBody, taskPublishOptions } from '../src/queue/protocol/task-message.js';

const settings = loadSettings(process.env);
if (settings.broker === undefined) throw new Error('BROKER_URL is required');
const mongo = await connectMongo(settings.mongo);
const broker = await connectBroker(settings.broker);
const channel = await broker.createConfirmChannel();
const taskLog = mongo.db(process.env.BENCH_DB ?? 'bench_queue').collection(process.env.BENCH_COLLECTION ?? 'baseline_task_log');

interface Body {
  queue: string;
  args?: JsonValue[];
  kwargs?: JsonObject;
  tags?: string[];
}

function publish(taskName: string, body: Body): Promise<string> {
  const message = buildTaskMessage({ taskName, args: body.args, kwargs: body.kwargs, authenticatedUser: 'bench' });
  return new Promise((resolve, reject) => {
    channel.publish('', body.queue, encodeTaskBody(message), taskPublishOptions(message), (err: unknown) =>
      err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(message.headers.id),
    );
  });
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      try {
        const match = /^\/run\/([\w.]+)$/.exec(req.url ?? '');
        if (req.method !== 'POST' || match === null) {
          res.writeHead(404).end();
          return;
        }
        const taskName = match[1] as string;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
        const taskId = await publish(taskName, body);
        await taskLog.insertOne({
          _id: taskId as never,
          task_id: taskId,
          user: 'bench',
          task_name: taskName,
          args: body.args ?? [],
          kwargs: body.kwargs ?? {},
          queue: body.queue,
          tags: body.tags ?? [],
          timestamp: new Date(),
        });
        res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ task_id: taskId }));
      } catch (err) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
      }
    })();
  });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write('LISTENING\n');
});

const shutdown = (): void => {
  server.close();
  void channel
    .close()
    .catch(() => undefined)
    .then(() => broker.close().catch(() => undefined))
    .then(() => mongo.close())
    .finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
