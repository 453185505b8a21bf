/**
 * What tasks get to read and write application data: collections of the MongoDB server the
 * worker is connected to. Off limits: the server's own databases and the service's database,
 * where the results live beside the users, tokens and sessions (the installer keeps both in one
 * database). A task that could write there could, for one, add a superuser. Names are compared
 * without regard to case, as MongoDB itself refuses two databases differing only in case.
 */
import type { Collection, Document, MongoClient } from 'mongodb';
import { isReservedDatabase } from '../documents/names.js';

export class DataStore {
  constructor(
    private readonly client: MongoClient,
    /** The service's database(s): the result database at least. */
    private readonly protectedDatabases: readonly string[],
  ) {}

  collection<T extends Document = Document>(database: string, collection: string): Collection<T> {
    if (typeof database !== 'string' || database.trim() === '') throw new TypeError('database name is required');
    if (typeof collection !== 'string' || collection.trim() === '') throw new TypeError('collection name is required');
    if (isReservedDatabase(database, this.protectedDatabases)) throw new TypeError(`database "${database}" is reserved for the server and the service`);
    return this.client.db(database).collection<T>(collection);
  }
}
