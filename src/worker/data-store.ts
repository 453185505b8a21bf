/**
 * What tasks get to read and write application data: collections of the MongoDB server the
 * worker is connected to. The server's own databases are off limits.
 */
import type { Collection, Document, MongoClient } from 'mongodb';

const RESERVED_DATABASES = new Set(['admin', 'local', 'config']);

export class DataStore {
  constructor(private readonly client: MongoClient) {}

  collection<T extends Document = Document>(database: string, collection: string): Collection<T> {
    if (typeof database !== 'string' || database.trim() === '') throw new TypeError('database name is required');
    if (typeof collection !== 'string' || collection.trim() === '') throw new TypeError('collection name is required');
    if (RESERVED_DATABASES.has(database)) throw new TypeError(`database "${database}" is reserved for the server`);
    return this.client.db(database).collection<T>(collection);
  }
}
