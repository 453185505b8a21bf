/**
 * Dumping and loading every application database (the service's own: users, sessions, task
 * results and history; the catalog; the data store) through the driver, as Extended JSON in
 * canonical mode (types survive: ObjectId, dates, decimals, binary), one document per line, plus
 * each collection's index definitions. No mongodump needed, and it works with FerretDB too.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { BSON, type Document, type MongoClient } from 'mongodb';
import { isSystemDatabase } from '../db/names.js';

const BATCH = 1000;

export type DatabaseInventory = Record<string, Record<string, number>>;

const fileName = (name: string): string => encodeURIComponent(name);
const originalName = (file: string): string => decodeURIComponent(file);

/** Which collections a dump or load takes (default all): the local runtime splits them over two engines. */
export type CollectionFilter = (db: string, col: string) => boolean;

export async function dumpDatabases(
  client: MongoClient,
  dir: string,
  onCollection?: (db: string, col: string, count: number) => void,
  include: CollectionFilter = () => true,
): Promise<DatabaseInventory> {
  const inventory: DatabaseInventory = {};
  const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
  for (const { name: dbName } of databases.sort((a, b) => a.name.localeCompare(b.name))) {
    if (isSystemDatabase(dbName)) continue;
    const db = client.db(dbName);
    const dbDir = join(dir, fileName(dbName));
    const all = (await db.listCollections({}, { nameOnly: true }).toArray()).filter(
      (c) => !c.name.startsWith('system.') && (c.type ?? 'collection') === 'collection',
    );
    const collections = all.filter((c) => include(dbName, c.name));
    // A database whose every collection another engine's dump takes is that dump's alone.
    if (collections.length === 0 && all.length > 0) continue;
    await mkdir(dbDir, { recursive: true, mode: 0o700 });
    inventory[dbName] = {};
    for (const { name: colName } of collections.sort((a, b) => a.name.localeCompare(b.name))) {
      const collection = db.collection(colName);
      const out = createWriteStream(join(dbDir, `${fileName(colName)}.jsonl`), { mode: 0o600 });
      let count = 0;
      for await (const doc of collection.find({}, { sort: { _id: 1 } })) {
        if (!out.write(`${BSON.EJSON.stringify(doc, { relaxed: false })}\n`)) await once(out, 'drain');
        count++;
      }
      out.end();
      await once(out, 'finish');
      const indexes = (await collection.listIndexes().toArray()).filter((i) => i.name !== '_id_');
      await writeFile(join(dbDir, `${fileName(colName)}.indexes.json`), `${JSON.stringify(indexes, null, 2)}\n`, { mode: 0o600 });
      inventory[dbName][colName] = count;
      onCollection?.(dbName, colName, count);
    }
  }
  return inventory;
}

async function insertBatches(client: MongoClient, dbName: string, colName: string, file: string): Promise<number> {
  const collection = client.db(dbName).collection(colName);
  let batch: Document[] = [];
  let count = 0;
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    batch.push(BSON.EJSON.parse(line, { relaxed: false }) as Document);
    if (batch.length >= BATCH) {
      await collection.insertMany(batch, { ordered: true });
      count += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) {
    await collection.insertMany(batch, { ordered: true });
    count += batch.length;
  }
  return count;
}

/**
 * Replaces each dumped collection by its dumped content (collections not in the dump are left
 * alone). Indexes the server cannot create (an index type the engine lacks) are reported, not fatal.
 */
export async function loadDatabases(
  client: MongoClient,
  dir: string,
  warn: (text: string) => void,
  include: CollectionFilter = () => true,
): Promise<DatabaseInventory> {
  const inventory: DatabaseInventory = {};
  for (const dbFile of (await readdir(dir)).sort()) {
    const dbName = originalName(dbFile);
    if (isSystemDatabase(dbName)) continue;
    inventory[dbName] = {};
    const db = client.db(dbName);
    const files = (await readdir(join(dir, dbFile)))
      .filter((f) => f.endsWith('.jsonl') && include(dbName, originalName(f.slice(0, -'.jsonl'.length))))
      .sort();
    for (const file of files) {
      const colName = originalName(file.slice(0, -'.jsonl'.length));
      await db
        .collection(colName)
        .drop()
        .catch(() => undefined);
      await db.createCollection(colName).catch(() => undefined);
      inventory[dbName][colName] = await insertBatches(client, dbName, colName, join(dir, dbFile, file));
      const indexFile = join(dir, dbFile, `${file.slice(0, -'.jsonl'.length)}.indexes.json`);
      const indexes = JSON.parse(await readFile(indexFile, 'utf8').catch(() => '[]')) as Array<Document & { key: Document; name: string }>;
      for (const { key, v: _v, ns: _ns, ...options } of indexes) {
        try {
          await db.collection(colName).createIndex(key, options);
        } catch (err) {
          warn(`index ${options.name as string} on ${dbName}.${colName} not restored: ${(err as Error).message}`);
        }
      }
    }
  }
  return inventory;
}
