/**
 * The aggregation stages a user's pipeline may use: those that read and reshape the records of
 * the collection (and, through `$lookup`, `$graphLookup` and `$unionWith`, of other collections
 * of the same database, whose read permission is checked separately). Everything else is refused
 * before the pipeline reaches the engine, as a request error:
 * - stages that write (`$out`, `$merge`);
 * - stages that report on the server rather than on records (`$currentOp`, `$changeStream`,
 *   `$listSessions`, `$collStats`, `$indexStats`, `$planCacheStats`, `$queryStats`, ...): they
 *   need other privileges or other namespaces, and the engine answers them with errors that say
 *   nothing about the request;
 * - stages of a search service this deployment does not have (`$search`, `$vectorSearch`, ...);
 * - any name not in the list, including the engine's internal `$_...` stages.
 * A list of what is allowed, rather than of what is not, keeps a stage added by a later engine
 * version out until it has been looked at.
 */
import { badRequest } from '../errors.js';

export const ALLOWED_STAGES: ReadonlySet<string> = new Set([
  '$addFields',
  '$bucket',
  '$bucketAuto',
  '$count',
  '$densify',
  '$documents',
  '$facet',
  '$fill',
  '$geoNear',
  '$graphLookup',
  '$group',
  '$limit',
  '$lookup',
  '$match',
  '$project',
  '$redact',
  '$replaceRoot',
  '$replaceWith',
  '$sample',
  '$set',
  '$setWindowFields',
  '$skip',
  '$sort',
  '$sortByCount',
  '$unionWith',
  '$unset',
  '$unwind',
]);

/**
 * `$documents` makes records out of nothing: it is the way into a `$unionWith` or `$lookup`
 * sub-pipeline without a collection, and the engine refuses it in a collection's own pipeline.
 */
const SUB_PIPELINE_ONLY: ReadonlySet<string> = new Set(['$documents']);

/**
 * Throws the request error for a stage this service does not run. `where` names the pipeline
 * ("pipeline", "$lookup pipeline", ...) and `nested` says whether it is a sub-pipeline.
 */
export function assertAllowedStage(name: string, where: string, nested: boolean): void {
  if (!ALLOWED_STAGES.has(name)) {
    throw badRequest(
      'forbidden_stage',
      `The aggregation stage ${JSON.stringify(name)} is not allowed in the ${where}; allowed stages: ${[...ALLOWED_STAGES].join(', ')}.`,
      { stage: name },
    );
  }
  if (!nested && SUB_PIPELINE_ONLY.has(name)) {
    throw badRequest(
      'forbidden_stage',
      `The aggregation stage ${JSON.stringify(name)} is allowed only inside a $unionWith or $lookup pipeline.`,
      {
        stage: name,
      },
    );
  }
}
