/**
 * The Indexes page's data and actions, under the admin site (so behind its access gate and, for
 * the writes, its CSRF check). The same DocumentService as the API's indexes endpoints decides
 * who may see and change what, so an admin page never shows or does more than the API would:
 *   GET    /api/admin/indexes/<area>/                    databases the admin may see
 *   GET    /api/admin/indexes/<area>/<db>/               their collections
 *   GET    /api/admin/indexes/<area>/<db>/<col>/         the collection's indexes, and can_manage
 *   POST   /api/admin/indexes/<area>/<db>/<col>/         create one (the API's index definition)
 *   DELETE /api/admin/indexes/<area>/<db>/<col>/<name>/  drop one
 * <area> is data_store or catalog.
 */
import { Router, type Request } from 'express';
import { jsonBody } from '../../http/body.js';
import { methods } from '../../http/methods.js';
import { checkParams } from '../../http/params.js';
import { notFound } from '../../errors.js';
import type { DocumentArea } from '../../documents/area.js';
import { DocumentService } from '../../documents/document-service.js';
import { parseIndexDefinition } from '../../documents/index-spec.js';
import { validateCollectionName, validateDatabaseName } from '../../db/names.js';

const MAX_BODY_BYTES = 16 * 1024;

export function indexesAdminRouter(areas: { dataStore: DocumentArea; catalog: DocumentArea }): Router {
  const services = { data_store: new DocumentService(areas.dataStore), catalog: new DocumentService(areas.catalog) };
  const serviceOf = (req: Request): DocumentService => {
    checkParams(req, ['_']);
    const area = String(req.params.area);
    if (area !== 'data_store' && area !== 'catalog') throw notFound(`No area "${area}": use data_store or catalog.`, 'no_such_area');
    return services[area];
  };
  const collectionOf = (req: Request) => ({
    db: validateDatabaseName(req.params.db),
    col: validateCollectionName(req.params.col),
  });

  const router = Router({ strict: true });
  router.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  router.all(
    '/:area/',
    methods({
      GET: async (req, res) => {
        res.json({ databases: await serviceOf(req).databaseNames(req.principal) });
      },
    }),
  );
  router.all(
    '/:area/:db/',
    methods({
      GET: async (req, res) => {
        const service = serviceOf(req);
        res.json({ collections: await service.collectionNames(req.principal, validateDatabaseName(req.params.db)) });
      },
    }),
  );
  router.all(
    '/:area/:db/:col/',
    ...jsonBody({ maxBytes: MAX_BODY_BYTES }),
    methods({
      GET: async (req, res) => {
        const service = serviceOf(req);
        const { db, col } = collectionOf(req);
        res.json({ indexes: await service.listIndexes(req.principal, db, col), can_manage: service.mayManageIndexes(req.principal) });
      },
      POST: async (req, res) => {
        const service = serviceOf(req);
        const { db, col } = collectionOf(req);
        res.status(201).json({ name: await service.createIndex(req.principal, db, col, parseIndexDefinition(req.body)) });
      },
    }),
  );
  router.all(
    '/:area/:db/:col/:name/',
    methods({
      DELETE: async (req, res) => {
        const service = serviceOf(req);
        const { db, col } = collectionOf(req);
        const name = String(req.params.name);
        await service.dropIndex(req.principal, db, col, name);
        res.json({ deleted: name });
      },
    }),
  );
  return router;
}
