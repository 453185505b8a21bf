/**
 * Changing or removing every record a filter matches (docs/api-behaviour.md, "Updates and
 * deletes by filter"): PATCH /<db>/<col>/?query={"filter": ...} applies one update to each,
 * DELETE /<db>/<col>/?query={"filter": ...} removes each. The filter is read as a query's filter
 * (parseQuery: the same operators refused, the same `_id` rules); the update follows the rules of
 * a one-record PATCH (mergeUpdate). The route has checked the method's permission (update,
 * delete) on the collection; everything here is refused before anything is written.
 */
import type { Document } from 'mongodb';
import type { Request, Response } from 'express';
import { badRequest } from '../errors.js';
import { respond } from '../http/respond.js';
import type { CollectionTarget, DocumentService } from './document-service.js';
import { parseQuery } from './query-params.js';
import { mergeUpdate } from './record-writes.js';
import { requireBody } from './records.js';

/**
 * The filter of a write by filter. It must be given, as the `filter` of `query`: a request that
 * names no filter is refused rather than read as "every record", which `{"filter": {}}` says.
 */
export function parseWriteFilter(raw: string | undefined, maxBytes: number): Document {
  const query = raw === undefined || raw.trim() === '' ? undefined : parseQuery(raw, maxBytes);
  if (query === undefined || !Object.hasOwn(JSON.parse(raw as string) as object, 'filter')) {
    throw badRequest(
      'missing_filter',
      'Updates and deletes by filter need a "query" parameter with a "filter" ({"filter": {}} for every record).',
    );
  }
  if (query.projection !== undefined || query.sort !== undefined) {
    throw badRequest('invalid_combination', 'Updates and deletes by filter take only the "filter" of "query".');
  }
  return query.filter;
}

export function bulkWriteHandlers(documents: DocumentService, maxQueryBytes: number) {
  const { store } = documents.area;
  return {
    /** Answers `{matched_count, modified_count}`. */
    async updateMatching(req: Request, res: Response, target: CollectionTarget, rawQuery: string | undefined): Promise<void> {
      const filter = parseWriteFilter(rawQuery, maxQueryBytes);
      const update = mergeUpdate(requireBody(req));
      await documents.requireExisting(target.db, target.col);
      const { matched, modified } = await store.updateMatching(target.db, target.col, filter, update);
      respond(req, res, 200, { matched_count: matched, modified_count: modified });
    },

    /** Answers `{deleted_count}`. */
    async deleteMatching(req: Request, res: Response, target: CollectionTarget, rawQuery: string | undefined): Promise<void> {
      const filter = parseWriteFilter(rawQuery, maxQueryBytes);
      await documents.requireExisting(target.db, target.col);
      respond(req, res, 200, { deleted_count: await store.deleteMatching(target.db, target.col, filter) });
    },
  };
}
