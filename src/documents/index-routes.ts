/**
 * The indexes of a collection, serving the routes declared in route-table.ts (indexRoutes).
 * Permissions and existence are the DocumentService's; this only reads the request and answers.
 */
import { Router, type Request } from 'express';
import { canManageContainers } from '../auth/permissions.js';
import { serve } from '../http/route-table.js';
import { indexRoutes } from './route-table.js';
import { setPageForm } from '../render/html-forms.js';
import { respond } from '../http/respond.js';
import type { DocumentArea } from './area.js';
import { DocumentService } from './document-service.js';
import { parseIndexDefinition } from './index-spec.js';
import { validateCollectionName, validateDatabaseName } from '../db/names.js';

function collectionOf(req: Request): { db: string; col: string } {
  return { db: validateDatabaseName(req.params.db), col: validateCollectionName(req.params.col) };
}

export function indexesRouter(area: DocumentArea): Router {
  const documents = new DocumentService(area);
  const routes = indexRoutes(area.name);
  const router = Router({ strict: true });
  serve(
    router,
    routes.indexes,
    {
      GET: async (req, res) => {
        const { db, col } = collectionOf(req);
        respond(req, res, 200, { indexes: await documents.listIndexes(req.principal, db, col) });
      },
      POST: async (req, res) => {
        const { db, col } = collectionOf(req);
        const name = await documents.createIndex(req.principal, db, col, parseIndexDefinition(req.body));
        respond(req, res, 201, { name });
      },
    },
    (req, res, next) => {
      // The browsable page offers its create/drop form to those who may use it.
      if (req.method === 'GET' && req.format === 'api' && canManageContainers(req.principal, area.name)) {
        setPageForm(res, { kind: 'indexes', postUrl: req.baseUrl + req.path });
      }
      next();
    },
  );
  serve(router, routes.index, {
    DELETE: async (req, res) => {
      const { db, col } = collectionOf(req);
      const name = String(req.params.name);
      await documents.dropIndex(req.principal, db, col, name);
      respond(req, res, 200, { deleted: name });
    },
  });
  return router;
}
