/** The installer's steps in the order they run: preflight (changes nothing), then apply. */
import type { Step } from '../step.js';
import { administrator } from './administrator.js';
import { certificateRenewal } from './certificate-renewal.js';
import { certificates } from './certificates.js';
import { clientWheel } from './client-wheel.js';
import { configuration } from './configuration.js';
import { databaseUsers } from './database-users.js';
import { manual } from './manual.js';
import { images } from './images.js';
import { migrateDatabase } from './migrate-database.js';
import { preflightPorts } from './preflight-ports.js';
import { preflightResources } from './preflight-resources.js';
import { preflightRuntime } from './preflight-runtime.js';
import { preflightWriteAccess } from './preflight-write-access.js';
import { prerequisites } from './prerequisites.js';
import { publicHealth } from './public-health.js';
import { serviceFiles } from './service-files.js';
import { startServices } from './start-services.js';
import { summary } from './summary.js';
import { waitHealthy } from './wait-healthy.js';

export const INSTALL_STEPS: readonly Step[] = [
  preflightRuntime,
  preflightPorts,
  preflightResources,
  preflightWriteAccess,
  prerequisites,
  clientWheel,
  manual,
  configuration,
  certificates,
  serviceFiles,
  images,
  migrateDatabase,
  startServices,
  databaseUsers,
  waitHealthy,
  administrator,
  publicHealth,
  certificateRenewal,
  summary,
];
