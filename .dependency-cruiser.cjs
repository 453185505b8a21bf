/**
 * The layers of src/ (docs/architecture/layers.md), checked by `npm run lint`. Rules name folders,
 * never files, so new modules fall under the rule of the folder they are put in.
 *
 *   app, cli.ts                      composition root: assembles routes, services, processes
 *   installer, ops                   operator programs, beside app, on the installation library
 *   installation library             installation/ (and its runner/): what installer and ops share
 *   worker                           its own program, on queue, db, log (its rule lists what it may import)
 *   features                         admin, auth, documents, queue, metrics, links, client-downloads, explorer, manual
 *   helpers                          http, render: no feature imports
 *   foundations                      db, pki, runtime (API process supervision), local-services
 *   base                             config, log, lib (shared helpers), errors.ts
 * Each layer imports only layers below it (features may import each other, without cycles).
 */
const FEATURES = '^src/(admin|auth|documents|queue|metrics|links|client-downloads|explorer|manual)/';
const HELPERS = '^src/(http|render)/';
const FOUNDATIONS = '^src/(db|pki|runtime|local-services)/';
const BASE = '^src/(config/|log/|lib/|errors[.]ts$)';
const PROGRAMS = '^src/(app/|cli[.]ts$|installer/|ops/|worker/)';
const INSTALLATION_LIBRARY = '^src/installation/';
const FRONT_ENDS = '^src/(app/|cli[.]ts$|installer/|ops/(cli[.]ts$|commands/))';
const DRIVER = '^node_modules/(mongodb|bson)/';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'Modules import each other in one direction only.', from: {}, to: { circular: true } },
    {
      name: 'base-imports-nothing-above',
      severity: 'error',
      comment: 'config, log, lib and errors.ts are the bottom: they import no other layer of src/.',
      from: { path: BASE },
      to: { path: `${FOUNDATIONS}|${HELPERS}|${FEATURES}|${PROGRAMS}|${INSTALLATION_LIBRARY}` },
    },
    {
      name: 'foundations-import-only-base',
      severity: 'error',
      comment: 'db, pki and runtime know nothing of HTTP, features or programs.',
      from: { path: FOUNDATIONS },
      to: { path: `${HELPERS}|${FEATURES}|${PROGRAMS}|${INSTALLATION_LIBRARY}` },
    },
    {
      name: 'helpers-import-no-feature',
      severity: 'error',
      comment: 'http and render are libraries every feature uses; they import no feature and no program.',
      from: { path: HELPERS },
      to: { path: `${FEATURES}|${PROGRAMS}|${INSTALLATION_LIBRARY}` },
    },
    {
      name: 'features-import-no-program',
      severity: 'error',
      comment: 'Features are assembled by app/; they never import it, the worker or the operator programs.',
      from: { path: FEATURES },
      to: { path: `${PROGRAMS}|${INSTALLATION_LIBRARY}` },
    },
    {
      name: 'installation-library-imports-no-front-end',
      severity: 'error',
      comment: 'The installation library is shared by the installer and ops; it imports neither, nor app/ or the worker.',
      from: { path: INSTALLATION_LIBRARY },
      to: { path: `${FRONT_ENDS}|^src/worker/` },
    },
    {
      name: 'only-app-imports-app',
      severity: 'error',
      comment: 'The composition root is the top: only cli.ts starts it.',
      from: { pathNot: '^src/(app/|cli[.]ts$)' },
      to: { path: '^src/app/' },
    },
    {
      name: 'worker-imports-only-its-runtime',
      severity: 'error',
      comment:
        'The worker is its own program: the queue’s protocol, broker connection, publishing, results, dead-letter queue and ' +
        'remote control; db, config, log, lib and errors.ts; of auth only the pure permission rules it checks tasks by, and ' +
        'of documents only the record rules the API’s writes share. No HTTP side, no other feature, no operator program.',
      from: { path: '^src/worker/' },
      to: {
        path: '^src/',
        pathNot:
          '^src/(worker/|queue/(protocol|connection|publishing|results|dead-letter|remote-control)/|db/|config/|log/|lib/|errors[.]ts$|' +
          'auth/(permissions|principal|grant-set)[.]ts$|documents/record-rules[.]ts$)',
      },
    },
    {
      name: 'auth-imports-no-documents',
      severity: 'error',
      comment:
        'Permissions sit below the document areas: auth is handed lookups (collection names) as functions, and name rules live in db/.',
      from: { path: '^src/auth/' },
      to: { path: '^src/documents/' },
    },
    {
      name: 'admin-reads-the-queue-through-its-service',
      severity: 'error',
      comment:
        'The admin site uses the queue through QueueService’s methods (task log, failures, revokes) and ScheduleService’s ' +
        '(the Operations page’s schedules), its protocol types, its broker observation and its worker events; never the ' +
        'stores, connections or HTTP routes behind them.',
      from: { path: '^src/admin/' },
      to: {
        path: '^src/queue/',
        pathNot: '^src/queue/(api/queue-service[.]ts$|schedules/schedule-service[.]ts$|protocol/|observe/|events/|errors[.]ts$)',
      },
    },
    {
      name: 'driver-only-in-the-data-layer',
      severity: 'error',
      comment:
        'Only the data layer calls the MongoDB driver: db/, the features’ stores (documents, auth, queue/api, queue/results), ' +
        'the installation library, the local services and the worker. Everything else may at most name its types (next rule).',
      from: {
        path: '^src/',
        pathNot: '^src/(db|documents|auth|queue/api|queue/results|installation|local-services|worker)/',
      },
      to: { path: DRIVER, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'driver-types-not-in-http-helpers-or-base',
      severity: 'error',
      comment:
        'HTTP helpers, base, pki, API process supervision, admin, links, downloads and the queue protocol do not even name ' +
        'the driver’s types. (app/ wires the client, render/ formats BSON values and metrics/ pings: they may name types.)',
      from: { path: `^src/(http|config|log|pki|runtime/cluster|admin|links|client-downloads|queue/(protocol|control|dead-letter))/|^src/errors[.]ts$` },
      to: { path: DRIVER },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    exclude: { path: '^src/.*[.]d[.]ts$' },
  },
};
