import { describe, expect, it } from 'vitest';
import { parseAggregate } from '../../../src/documents/query-params.js';
import { ALLOWED_STAGES } from '../../../src/documents/pipeline-stages.js';
import { DOCUMENTED_STAGES, INTERNAL_STAGES } from '../../support/aggregation-stages.js';
import { apiError } from './api-error.js';

const parse = (pipeline: unknown) => parseAggregate(JSON.stringify(pipeline), 64 * 1024);

/** Stages that report on the server, write elsewhere or need a search service: never run. */
const REFUSED = [
  '$changeStream',
  '$changeStreamSplitLargeEvent',
  '$collStats',
  '$currentOp',
  '$indexStats',
  '$listClusterCatalog',
  '$listLocalSessions',
  '$listSampledQueries',
  '$listSearchIndexes',
  '$listSessions',
  '$planCacheStats',
  '$querySettings',
  '$queryStats',
  '$shardedDataDistribution',
  '$search',
  '$searchMeta',
  '$vectorSearch',
  '$rankFusion',
  '$scoreFusion',
  '$score',
];

describe('aggregation stages', () => {
  it('allows only documented stages that read records', () => {
    for (const stage of ALLOWED_STAGES) expect(DOCUMENTED_STAGES, stage).toContain(stage);
    for (const stage of REFUSED) expect(ALLOWED_STAGES.has(stage), stage).toBe(false);
  });

  it.each([...REFUSED, ...INTERNAL_STAGES.filter((s) => s.startsWith('$') && s.length > 1)])(
    'refuses %s as a request error, at the top and in every sub-pipeline',
    (stage) => {
      const placements = [
        [{ [stage]: {} }],
        [{ $match: {} }, { [stage]: {} }],
        [{ $facet: { one: [{ [stage]: {} }] } }],
        [{ $lookup: { from: 'other', as: 'j', pipeline: [{ [stage]: {} }] } }],
        [{ $unionWith: { coll: 'other', pipeline: [{ [stage]: {} }] } }],
      ];
      for (const pipeline of placements) {
        const error = apiError(() => parse(pipeline));
        expect(error.status, JSON.stringify(pipeline)).toBe(400);
        expect(error.code).toBe('forbidden_stage');
      }
    },
  );

  it('keeps $out and $merge refused as operators, as before', () => {
    expect(apiError(() => parse([{ $out: 'x' }])).code).toBe('forbidden_operator');
    expect(apiError(() => parse([{ $merge: { into: 'x' } }])).code).toBe('forbidden_operator');
  });

  it('allows $documents only inside a $unionWith or $lookup pipeline', () => {
    expect(apiError(() => parse([{ $documents: [{ x: 1 }] }])).code).toBe('forbidden_stage');
    expect(parse([{ $unionWith: { pipeline: [{ $documents: [{ x: 1 }] }] } }])).toHaveLength(1);
    expect(parse([{ $lookup: { as: 'd', pipeline: [{ $documents: [{ x: 1 }] }] } }])).toHaveLength(1);
  });

  it('passes every allowed stage through', () => {
    for (const stage of ALLOWED_STAGES) {
      if (stage === '$documents') continue;
      const spec = stage === '$lookup' || stage === '$graphLookup' ? { from: 'b', as: 'x' } : {};
      expect(parse([{ [stage]: spec }]), stage).toHaveLength(1);
    }
  });
});
