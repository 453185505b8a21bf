/**
 * The HTTP side of records: inserting into a collection, and reading, replacing, merging or
 * deleting one record by its id. Each handler reads the request, asks the DocumentService and
 * answers; what may be stored and how a record is found are the service's.
 */
import type { Request, Response } from 'express';
import { badRequest } from '../errors.js';
import { bodyTextLength } from '../http/body.js';
import { queryOf } from '../http/params.js';
import { respond } from '../http/respond.js';
import type { CollectionTarget, DocumentService } from './document-service.js';
import { parseJsonBody } from './extended-json.js';

/** The request's JSON body with its Extended JSON revived; a 400 when there is none. */
export function requireBody(req: Request): unknown {
  if (req.body === undefined) throw badRequest('missing_body', 'A JSON body is required.');
  return parseJsonBody(req.body);
}

/** What an insert answers (the `answer` parameter): the ids (the default) or only their count. */
function insertAnswer(value: string | undefined): 'ids' | 'count' {
  if (value === undefined || value === 'ids' || value === 'count') return value ?? 'ids';
  throw badRequest('invalid_answer', `Unknown answer "${value}". Use ids or count.`);
}

/** A request about one record: the collection it is in (permission checked) and the record id of the URL. */
export interface RecordRequest {
  target: CollectionTarget;
  id: string;
}

export function recordHandlers(documents: DocumentService) {
  return {
    /**
     * One record (a JSON object) or an array of records; in a collection that exists
     * (DocumentService.requireExisting). `answer=count` answers an array's insert with its count
     * alone: a client that gave every record its `_id` (the Python client does) already has the
     * ids, and a large array's would be rendered, sent and parsed only to be dropped.
     */
    async insert(req: Request, res: Response, target: CollectionTarget): Promise<void> {
      const countOnly = insertAnswer(queryOf(req).answer) === 'count';
      const body = requireBody(req);
      if (Array.isArray(body)) {
        const ids = await documents.insertMany(target, body, bodyTextLength(req));
        respond(req, res, 201, countOnly ? { inserted_count: ids.length } : { inserted_ids: ids });
        return;
      }
      const id = await documents.insert(target, body);
      respond(req, res, 201, countOnly ? { inserted_count: 1 } : { _id: id });
    },

    async read(req: Request, res: Response, { target, id }: RecordRequest): Promise<void> {
      respond(req, res, 200, await documents.get(target, id));
    },

    async replace(req: Request, res: Response, { target, id }: RecordRequest): Promise<void> {
      const body = requireBody(req);
      respond(req, res, 200, await documents.replace(target, id, body));
    },

    async merge(req: Request, res: Response, { target, id }: RecordRequest): Promise<void> {
      const body = requireBody(req);
      respond(req, res, 200, await documents.merge(target, id, body));
    },

    async remove(req: Request, res: Response, { target, id }: RecordRequest): Promise<void> {
      respond(req, res, 200, { deleted: await documents.remove(target, id) });
    },
  };
}
