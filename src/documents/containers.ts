/** Databases and collections: list (envelope), create and delete (POST with `action`). */
import type { Request, Response } from 'express';
import { badRequest } from '../errors.js';
import { absoluteUrl } from '../http/base-url.js';
import { paginate } from '../http/paginate.js';
import { parsePaging } from '../http/paging.js';
import { queryOf } from '../http/params.js';
import { respond } from '../http/respond.js';
import { pathOf } from '../http/route-table.js';
import type { DocumentRoutes } from './route-table.js';
import type { DocumentService } from './document-service.js';
import { validateCollectionName, validateDatabaseName } from '../db/names.js';

type Action = 'create' | 'delete';

function parseAction(body: Record<string, unknown>): Action {
  const action = body.action;
  if (action === undefined) return 'create';
  if (action === 'delete') return 'delete';
  throw badRequest('invalid_action', 'The "action" field must be "delete" (or absent to create).');
}

/** Pages an in-memory list into the standard envelope. */
async function respondList<T>(req: Request, res: Response, items: readonly T[], defaultPageSize: number): Promise<void> {
  await paginate(req, res, items, parsePaging(queryOf(req), defaultPageSize));
}

/** `mountPath` is where the app mounted the area's routes (its route table). */
export function containerHandlers(documents: DocumentService, mountPath: string, routes: DocumentRoutes, defaultPageSize: number) {
  const dbUrl = (req: Request, db: string): string => absoluteUrl(req, mountPath + pathOf(routes.database, { db }));
  const colUrl = (req: Request, db: string, col: string): string => absoluteUrl(req, mountPath + pathOf(routes.collection, { db, col }));

  return {
    async listDatabases(req: Request, res: Response): Promise<void> {
      const names = await documents.databaseNames(req.principal);
      await respondList(
        req,
        res,
        names.map((db) => ({ database: db, url: dbUrl(req, db) })),
        defaultPageSize,
      );
    },

    async postDatabases(req: Request, res: Response): Promise<void> {
      const containers = documents.containers(req.principal);
      const body = req.body as Record<string, unknown>;
      const action = parseAction(body);
      if (body.database === undefined) throw badRequest('missing_field', 'The "database" field is required.');
      const db = validateDatabaseName(body.database);
      if (action === 'create') {
        await containers.createDatabase(db);
        res.setHeader('Location', dbUrl(req, db));
        respond(req, res, 201, { database: db, url: dbUrl(req, db) });
      } else {
        await containers.dropDatabase(db);
        respond(req, res, 200, { deleted: db });
      }
    },

    async listCollections(req: Request, res: Response): Promise<void> {
      const db = validateDatabaseName(req.params.db);
      const names = await documents.collectionNames(req.principal, db);
      await respondList(
        req,
        res,
        names.map((col) => ({ database: db, collection: col, url: colUrl(req, db, col) })),
        defaultPageSize,
      );
    },

    async postCollections(req: Request, res: Response): Promise<void> {
      const db = validateDatabaseName(req.params.db);
      const containers = documents.containers(req.principal);
      const body = req.body as Record<string, unknown>;
      const action = parseAction(body);
      if (body.collection === undefined) throw badRequest('missing_field', 'The "collection" field is required.');
      const col = validateCollectionName(body.collection);
      if (action === 'create') {
        await containers.createCollection(db, col);
        res.setHeader('Location', colUrl(req, db, col));
        respond(req, res, 201, { database: db, collection: col, url: colUrl(req, db, col) });
      } else {
        await containers.dropCollection(db, col);
        respond(req, res, 200, { deleted: col });
      }
    },
  };
}
