/**
 * The document API of one area (mounted at /api/data_store/data and /api/catalog/data):
 *   /                 GET databases · POST create/delete database (data store only)
 *   /:db/             GET collections · POST create/delete collection
 *   /:db/:col/        GET query/distinct/aggregate · POST insert
 *   /:db/:col/:id/    GET · PUT · PATCH · DELETE
 * Each handler: validate names → check permission → check existence → act → respond.
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { methods, type AsyncHandler } from '../http/methods.js';
import { actionForMethod, canAccessCollection, canManageContainers, type DocumentAction } from '../auth/permissions.js';
import { setPageForm, type PageFormKind } from '../render/html-forms.js';
import { notFound } from '../errors.js';
import type { ServiceContext } from '../service.js';
import type { DocumentArea } from './area.js';
import { collectionView } from './collection-view.js';
import { containerHandlers } from './containers.js';
import { requireCollection } from './guards.js';
import { validateCollectionName, validateDatabaseName } from './names.js';
import { recordHandlers, type WhenEmpty } from './records.js';
import { RECORD_PARAMS, checkParams } from './request-params.js';


/**
 * Asks the browsable page for a form (src/render/html-forms.ts) on GET pages whose write the
 * caller may actually do; the form posts to the page's own URL.
 */
function pageForm(kind: PageFormKind, allowed: (req: Request) => boolean): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET' && req.format === 'api' && allowed(req)) setPageForm(res, { kind, postUrl: req.baseUrl + req.path });
    next();
  };
}

const noDatabase = (db: string) => notFound(`Database "${db}" does not exist.`, 'no_such_database');

export function documentsRouter(ctx: ServiceContext, area: DocumentArea): Router {
  const mountPath = area.name === 'data_store' ? '/api/data_store/data' : '/api/catalog/data';
  const limits = { maxQueryBytes: ctx.settings.maxQueryBytes, defaultPageSize: ctx.settings.defaultPageSize };
  const containers = containerHandlers(area, mountPath, limits.defaultPageSize);
  const records = recordHandlers(area);
  const router = Router({ strict: true });

  /** Names from the path, checked and permitted, in a database this area owns; existence not yet checked. */
  function permittedTarget(req: Request): { db: string; col: string } {
    const db = validateDatabaseName(req.params.db);
    const col = validateCollectionName(req.params.col);
    requireCollection(req.principal, area, db, col, actionForMethod(req.method));
    if (!area.ownsDatabase(db)) throw noDatabase(db);
    return { db, col };
  }

  /** 404 unless the collection exists. A collection implies its database: one round trip, two only for a 404. */
  async function requireExisting(db: string, col: string): Promise<void> {
    if (await area.store.collectionExists(db, col)) return;
    if (!(await area.databaseExists(db))) throw noDatabase(db);
    throw notFound(`Collection "${col}" does not exist in "${db}".`, 'no_such_collection');
  }

  /** For inserts: the collection must exist before anything is written (an insert would create it). */
  async function target(req: Request): Promise<{ db: string; col: string }> {
    const { db, col } = permittedTarget(req);
    await requireExisting(db, col);
    return { db, col };
  }

  /**
   * For reads and for changes of one existing record: querying a collection that does not exist
   * finds nothing and creates nothing, and any record found proves it exists. So the existence
   * query runs only when nothing was found, to tell "empty" (or "no such record") from "no such
   * collection": one round trip less per request.
   */
  function lazyTarget(req: Request): { db: string; col: string; whenEmpty: WhenEmpty } {
    const { db, col } = permittedTarget(req);
    return { db, col, whenEmpty: () => requireExisting(db, col) };
  }

  const mayManage = (req: Request) => canManageContainers(req.principal, area.name);
  const mayWriteRecords = (...actions: DocumentAction[]) => (req: Request) =>
    actions.some((a) => canAccessCollection(req.principal, area.name, String(req.params.db), String(req.params.col), a, area.policy));

  router.all(
    '/',
    pageForm('databases', (req) => area.canCreateDatabases && mayManage(req)),
    methods({
      GET: containers.listDatabases,
      ...(area.canCreateDatabases ? { POST: containers.postDatabases } : {}),
    }),
  );
  router.all('/:db/', pageForm('collections', mayManage), methods({ GET: containers.listCollections, POST: containers.postCollections }));
  router.all(
    '/:db/:col/',
    pageForm('collection', mayWriteRecords('add')),
    methods({
      GET: async (req, res) => {
        const { db, col, whenEmpty } = lazyTarget(req);
        await collectionView(req, res, area, db, col, limits, whenEmpty);
      },
      POST: async (req, res) => {
        checkParams(req, RECORD_PARAMS);
        const { db, col } = await target(req);
        await records.insert(req, res, db, col);
      },
    }),
  );
  /** One record by id: each handler looks the record up first, so existence is checked only when it is not found. */
  const onRecord = (fn: (req: Request, res: Response, db: string, col: string, id: string, whenEmpty: WhenEmpty) => Promise<void>): AsyncHandler =>
    async (req, res) => {
      checkParams(req, RECORD_PARAMS);
      const { db, col, whenEmpty } = lazyTarget(req);
      await fn(req, res, db, col, req.params.id as string, whenEmpty);
    };
  router.all(
    '/:db/:col/:id/',
    pageForm('record', mayWriteRecords('update', 'delete')),
    methods({
      GET: onRecord(records.read),
      PUT: onRecord(records.replace),
      PATCH: onRecord(records.merge),
      DELETE: onRecord(records.remove),
    }),
  );
  return router;
}
