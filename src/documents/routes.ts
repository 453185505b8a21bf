/**
 * The document API of one area, serving the routes declared in route-table.ts (serve has checked
 * the query and the body's outline against them).
 * Each handler: validate names → check permission → check existence → act → respond.
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { AsyncHandler } from '../http/methods.js';
import { serve } from '../http/route-table.js';
import { paginate } from '../http/paginate.js';
import { setCsvFields } from '../http/respond.js';
import { isRecordFormat } from '../render/index.js';
import { parseCsvFields } from './csv-fields.js';
import { parsePaging, parseSkip } from '../http/paging.js';
import { queryOf } from '../http/params.js';
import { actionForMethod, canAccessCollection, canManageContainers, type DocumentAction } from '../auth/permissions.js';
import { setPageForm, type PageFormKind } from '../render/html-forms.js';
import type { Settings } from '../config/settings.js';
import type { DocumentArea } from './area.js';
import { bulkWriteHandlers } from './bulk-writes.js';
import { containerHandlers } from './containers.js';
import { DocumentService, type CollectionTarget } from './document-service.js';
import { validateCollectionName, validateDatabaseName } from '../db/names.js';
import { parseAggregate, parseDistinct, parseQuery } from './query-params.js';
import { recordHandlers, type RecordRequest } from './records.js';
import { isStreamedRead } from './streamed-reads.js';
import { documentRoutes } from './route-table.js';

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

/** Whose share of heavy and streamed reads a request uses: the user's, or for anonymous callers the client address's. */
function callerKey(req: Request): string {
  const userId = req.principal?.userId;
  return userId ? `user:${userId}` : `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
}

/** `mountPath` is where the app mounts the router (its route table), for the links the listings carry. */
export function documentsRouter(
  ctx: { settings: Pick<Settings, 'maxQueryBytes' | 'defaultPageSize'> },
  area: DocumentArea,
  mountPath: string,
): Router {
  const { maxQueryBytes, defaultPageSize } = ctx.settings;
  const routes = documentRoutes(area);
  const documents = new DocumentService(area);
  const containers = containerHandlers(documents, mountPath, routes, defaultPageSize);
  const records = recordHandlers(documents);
  const bulkWrites = bulkWriteHandlers(documents, maxQueryBytes);
  const router = Router({ strict: true });

  /**
   * The collection of the path, permitted for the request's method; for reads and changes of one
   * existing record its existence is checked only when nothing is found (see DocumentService.target).
   */
  function lazyTarget(req: Request): CollectionTarget {
    const db = validateDatabaseName(req.params.db);
    const col = validateCollectionName(req.params.col);
    return documents.target(req.principal, db, col, actionForMethod(req.method));
  }

  /** For inserts: the collection must exist before the body is read (an insert would create it). */
  async function existingTarget(req: Request): Promise<CollectionTarget> {
    const target = lazyTarget(req);
    await documents.requireExisting(target.db, target.col);
    return target;
  }

  const mayManage = (req: Request) => canManageContainers(req.principal, area.name);
  const mayWriteRecords =
    (...actions: DocumentAction[]) =>
    (req: Request) =>
      actions.some((a) => canAccessCollection(req.principal, area.name, String(req.params.db), String(req.params.col), a, area.policy));

  serve(
    router,
    routes.databases,
    { GET: containers.listDatabases, ...(area.canCreateDatabases ? { POST: containers.postDatabases } : {}) },
    pageForm('databases', (req) => area.canCreateDatabases && mayManage(req)),
  );
  serve(router, routes.database, { GET: containers.listCollections, POST: containers.postCollections }, pageForm('collections', mayManage));
  serve(
    router,
    routes.collection,
    {
      // Records matching `query`, `distinct` values or an `aggregate` pipeline, always in the paged envelope.
      GET: async (req, res) => {
        const target = lazyTarget(req);
        const params = queryOf(req);
        // An export (CSV, NDJSON) is the whole result unless a page is asked for.
        const wholeExport = isRecordFormat(req.format) && params.page === undefined && params.page_size === undefined;
        const paging = { ...parsePaging(params, wholeExport ? 0 : defaultPageSize), skip: parseSkip(params) };
        const fields = parseCsvFields(params.fields, req.format);
        if (fields !== undefined) setCsvFields(res, fields);
        const read = {
          query: params.query === undefined ? undefined : parseQuery(params.query, maxQueryBytes),
          pipeline: parseAggregate(params.aggregate, maxQueryBytes),
          distinctFields: parseDistinct(params.distinct),
        };
        const caller = { key: callerKey(req), streamed: isStreamedRead(paging.pageSize) };
        await documents.readCollection(req.principal, caller, target, read, (rows) =>
          'values' in rows
            ? paginate(req, res, rows.values, paging, { whenEmpty: target.whenEmpty })
            : paginate(req, res, rows, paging, { whenEmpty: target.whenEmpty, map: rows.mapRow }),
        );
      },
      POST: async (req, res) => {
        await records.insert(req, res, await existingTarget(req));
      },
      PATCH: async (req, res) => {
        const target = lazyTarget(req);
        await bulkWrites.updateMatching(req, res, target, queryOf(req).query);
      },
      DELETE: async (req, res) => {
        const target = lazyTarget(req);
        await bulkWrites.deleteMatching(req, res, target, queryOf(req).query);
      },
    },
    pageForm('collection', mayWriteRecords('add')),
  );
  /** One record by id: each handler looks the record up first, so existence is checked only when it is not found. */
  const onRecord =
    (fn: (req: Request, res: Response, record: RecordRequest) => Promise<void>): AsyncHandler =>
    async (req, res) => {
      await fn(req, res, { target: lazyTarget(req), id: req.params.id as string });
    };
  serve(
    router,
    routes.record,
    { GET: onRecord(records.read), PUT: onRecord(records.replace), PATCH: onRecord(records.merge), DELETE: onRecord(records.remove) },
    pageForm('record', mayWriteRecords('update', 'delete')),
  );
  return router;
}
