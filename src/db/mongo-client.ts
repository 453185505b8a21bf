/** One place that turns MongoSettings into a connected driver client (TLS + SCRAM). */
import { MongoClient, type MongoClientOptions } from 'mongodb';
import type { MongoSettings } from '../config/connections.js';

export function mongoClientOptions(settings: MongoSettings): MongoClientOptions {
  const options: MongoClientOptions = {
    serverSelectionTimeoutMS: 5_000,
    connectTimeoutMS: 5_000,
    // Retry on the next request after a restart of the database instead of failing for long.
    heartbeatFrequencyMS: 2_000,
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
