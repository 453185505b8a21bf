/** One place that turns MongoSettings into a connected driver client (TLS + SCRAM). */
import { MongoClient, type MongoClientOptions } from 'mongodb';
import type { MongoSettings } from '../config/connections.js';
import type { Settings } from '../config/settings.js';
import type { Logger } from '../log/logger.js';
import { watchServerMonitoring } from './monitor-watchdog.js';

export function mongoClientOptions(settings: MongoSettings): MongoClientOptions {
  const options: MongoClientOptions = {
    serverSelectionTimeoutMS: 5_000,
    connectTimeoutMS: 5_000,
    // Retry on the next request after a restart of the database instead of failing for long.
    heartbeatFrequencyMS: 2_000,
    // The driver's check that every string it reads is valid UTF-8 scans each character of each
    // string in JavaScript, a tenth of the API's CPU on a long export. The engine stores strings
    // as PostgreSQL text, which is valid UTF-8 already; should a MongoDB server ever hand out
    // invalid bytes, they read as U+FFFD rather than failing the whole read.
    enableUtf8Validation: false,
    // Every connection may be held by an operation an engine no longer answers: an operation
    // waiting for one gives up with the operation deadline instead of queueing for ever (the
    // driver's default). The operations on a request's path also abort at their own deadline,
    // which closes the connection they held (see db/deadline.ts).
    waitQueueTimeoutMS: settings.operationTimeoutMs,
  };
  if (settings.username !== undefined) {
    options.auth = { username: settings.username, password: settings.password };
    options.authSource = settings.authSource;
  }
  if (settings.tlsCaFile !== undefined || settings.tlsCertKeyFile !== undefined) {
    options.tls = true;
    if (settings.tlsCaFile !== undefined) options.tlsCAFile = settings.tlsCaFile;
    if (settings.tlsCertKeyFile !== undefined) options.tlsCertificateKeyFile = settings.tlsCertKeyFile;
  }
  return options;
}

export async function connectMongo(settings: MongoSettings): Promise<MongoClient> {
  const client = new MongoClient(settings.uri, mongoClientOptions(settings));
  await client.connect();
  return client;
}

export interface ServiceClients {
  mongo: MongoClient;
  privateMongo: MongoClient;
  /** Closes both clients, their monitoring watchdogs first. */
  close(): Promise<void>;
}

/**
 * The API's two clients: the main engine's, and the private store's (the same client when the
 * settings name no store of their own, see config/connections.ts). Each is watched for a server
 * monitor that stopped (monitor-watchdog.ts): the API runs for months across engine restarts.
 */
export async function connectServiceClients(settings: Pick<Settings, 'mongo' | 'privateMongo'>, logger: Logger): Promise<ServiceClients> {
  const mongo = await connectMongo(settings.mongo);
  let privateMongo = mongo;
  if (settings.privateMongo !== settings.mongo) {
    try {
      privateMongo = await connectMongo(settings.privateMongo);
    } catch (err) {
      await mongo.close();
      throw err;
    }
  }
  const watchdogs = [watchServerMonitoring(mongo, { name: 'main engine', logger })];
  if (privateMongo !== mongo) watchdogs.push(watchServerMonitoring(privateMongo, { name: 'private store', logger }));
  return {
    mongo,
    privateMongo,
    async close() {
      for (const watchdog of watchdogs) watchdog.close();
      await mongo.close();
      if (privateMongo !== mongo) await privateMongo.close();
    },
  };
}
