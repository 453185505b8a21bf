/**
 * GET on a collection: records matching `query`, or `distinct` values, or an `aggregate`
 * pipeline, always in the paged envelope. page_size=0 streams from the cursor. All database work
 * of one request shares one query time budget; heavy reads also need a slot of the caller's.
 */
import type { Request, Response } from 'express';
import type { Document } from 'mongodb';
import { canAccessCollection } from '../auth/permissions.js';
import { badRequest, forbidden } from '../errors.js';
import { requestUrl } from '../http/base-url.js';
import { fromArray, respondEnvelope } from '../http/respond.js';
import type { DocumentArea } from './area.js';
import type { BudgetedCursor } from './budgeted-cursor.js';
import { denied } from './guards.js';
import { isHeavyRead } from './heavy-reads.js';
import { lookupTargets } from './operators.js';
import { pageLinks, pageWindow, parsePaging, type PageRequest, type PageWindow } from './paging.js';
import {
  buildAggregationPipeline,
  buildDistinctPipeline,
  distinctRowToObject,
  parseAggregate,
  parseDistinct,
  parseQuery,
  type CollectionQuery,
} from './query-params.js';
import type { WhenEmpty } from './records.js';
import type { QueryBudget } from './query-budget.js';
import { COLLECTION_PARAMS, checkParams } from './request-params.js';

export interface ViewLimits {
  maxQueryBytes: number;
  defaultPageSize: number;
}

function head(req: Request, count: number, window: PageWindow) {
  return {
    count,
    meta: { page: window.page, page_size: window.pageSize, pages: window.pages },
    ...pageLinks(requestUrl(req), window),
  };
}

function pagingStages(window: PageWindow): Document[] {
  const stages: Document[] = [];
  if (window.skip > 0) stages.push({ $skip: window.skip });
  if (window.limit > 0) stages.push({ $limit: window.limit });
  return stages;
}

async function* mapRows(rows: AsyncIterable<Document>, fn: (row: Document) => unknown): AsyncIterable<unknown> {
  for await (const row of rows) yield fn(row);
}

/** Whose share of heavy reads a request uses: the user's, or for anonymous callers the client address's. */
function callerKey(req: Request): string {
  const userId = req.principal?.userId;
  return userId ? `user:${userId}` : `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
}

/**
 * `whenEmpty` throws the 404 of a missing collection (or database): it runs only when the result
 * is empty, since any result proves the collection exists.
 */
export async function collectionView(
  req: Request,
  res: Response,
  area: DocumentArea,
  db: string,
  col: string,
  limits: ViewLimits,
  whenEmpty: WhenEmpty,
): Promise<void> {
  // Everything that can be refused as bad input is refused before a slot is taken.
  const read = planRead(req, res, area, db, col, limits, whenEmpty);
  const release = read.heavy ? area.heavyQueries.acquire(callerKey(req)) : undefined;
  try {
    await read.respond(area.store.budget());
  } finally {
    // Also after an error or a client that went away: the handler ends within the time limit
    // (or, while streaming, as soon as the closed connection is noticed).
    release?.();
  }
}

interface PlannedRead {
  heavy: boolean;
  respond(budget: QueryBudget): Promise<void>;
}

/** Parses and checks the request (throwing its 4xx), and returns the database work to do. */
function planRead(
  req: Request,
  res: Response,
  area: DocumentArea,
  db: string,
  col: string,
  limits: ViewLimits,
  whenEmpty: WhenEmpty,
): PlannedRead {
  const params = checkParams(req, COLLECTION_PARAMS);
  const paging = parsePaging(params, limits.defaultPageSize);
  const query: CollectionQuery | undefined = params.query === undefined ? undefined : parseQuery(params.query, limits.maxQueryBytes);
  const pipeline = parseAggregate(params.aggregate, limits.maxQueryBytes);
  const fields = parseDistinct(params.distinct);
  const filter = query?.filter ?? {};
  const { store } = area;
  const heavy = isHeavyRead({ pipeline, distinctFields: fields, filter });

  if (pipeline !== undefined && fields !== undefined) {
    throw badRequest('invalid_combination', 'Use either "distinct" or "aggregate", not both.');
  }
  if ((pipeline !== undefined || fields !== undefined) && (query?.projection !== undefined || query?.sort !== undefined)) {
    throw badRequest(
      'invalid_combination',
      'With "distinct" or "aggregate" only the "filter" of "query" applies; put projections and sorting into the pipeline.',
    );
  }

  if (pipeline !== undefined) {
    const full = buildAggregationPipeline(query, pipeline);
    for (const target of lookupTargets(full)) {
      if (!canAccessCollection(req.principal, area.name, db, target, 'safe', area.policy)) {
        const err = denied(req.principal);
        throw err.status === 403
          ? forbidden(`The pipeline reads collection "${target}", which you may not read.`, 'forbidden_lookup')
          : err;
      }
    }
    return {
      heavy,
      respond: async (budget) => {
        const open = (window: PageWindow) => store.aggregate(db, col, [...full, ...pagingStages(window)], budget, window.limit);
        await respondPage(req, res, store.aggregateCount(db, col, full, budget), paging, open, whenEmpty);
      },
    };
  }

  if (fields !== undefined && fields.length === 1) {
    return {
      heavy,
      respond: async (budget) => {
        // The distinct command unwinds arrays like MongoDB users expect; its result is bounded (16 MB).
        const values = await store.distinct(db, col, fields[0] as string, filter, budget);
        if (values.length === 0) await whenEmpty();
        const window = pageWindow(values.length, paging);
        const slice = window.limit === 0 ? values : values.slice(window.skip, window.skip + window.limit);
        await respondEnvelope(req, res, head(req, values.length, window), fromArray(slice));
      },
    };
  }

  if (fields !== undefined) {
    const distinctPipeline = buildDistinctPipeline(filter, fields);
    return {
      heavy,
      respond: async (budget) => {
        const open = (window: PageWindow) =>
          store.aggregate(db, col, [...distinctPipeline, ...pagingStages(window)], budget, window.limit);
        const counting = store.aggregateCount(db, col, distinctPipeline, budget);
        await respondPage(req, res, counting, paging, open, whenEmpty, (row) => distinctRowToObject(row, fields));
      },
    };
  }

  return {
    heavy,
    respond: async (budget) => {
      const open = (window: PageWindow) =>
        store.find(db, col, { filter, projection: query?.projection, sort: query?.sort, skip: window.skip, limit: window.limit }, budget);
      await respondPage(req, res, store.count(db, col, filter, budget), paging, open, whenEmpty);
    },
  };
}

/** One page in the envelope, from a count and a cursor opened on the page's window. */
async function respondPage(
  req: Request,
  res: Response,
  counting: Promise<number>,
  paging: PageRequest,
  open: (window: PageWindow) => BudgetedCursor,
  whenEmpty: WhenEmpty,
  mapRow?: (row: Document) => unknown,
): Promise<void> {
  const { total, window, cursor } = await countAndOpen(counting, paging, open);
  try {
    if (total === 0) await whenEmpty();
    await respondEnvelope(req, res, head(req, total, window), mapRow === undefined ? cursor : mapRows(cursor, mapRow));
  } finally {
    await cursor.close();
  }
}

/**
 * Counts and fetches the first batch at the same time: the page the caller asked for is almost
 * always the page served, so waiting for the count before querying would double the latency.
 * Only a page beyond the last (served as the last page) needs a second query.
 */
async function countAndOpen(
  counting: Promise<number>,
  paging: PageRequest,
  open: (window: PageWindow) => BudgetedCursor,
): Promise<{ total: number; window: PageWindow; cursor: BudgetedCursor }> {
  const guess = pageWindow(Number.MAX_SAFE_INTEGER, paging);
  const cursor = open(guess);
  let total: number;
  try {
    [total] = await Promise.all([counting, cursor.hasNext()]);
  } catch (err) {
    await cursor.close().catch(() => undefined);
    throw err;
  }
  const window = pageWindow(total, paging);
  if (window.skip === guess.skip && window.limit === guess.limit) return { total, window, cursor };
  await cursor.close();
  return { total, window, cursor: open(window) };
}
