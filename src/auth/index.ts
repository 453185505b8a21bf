/**
 * The auth module: users, groups, permissions and tokens in the service database (mongoose
 * models sharing the service's driver client), password/JWT/API-token/session authentication,
 * CSRF protection and the auth endpoints. See module.ts for the contract it fulfils.
 */
import type { AuthDeps, AuthModule } from './module.js';
import { AccountDirectory, toPrincipal } from './accounts.js';
import { CacheLeases, CACHE_LEASES_COLLECTION } from '../db/cache-leases.js';
import { ApiTokens } from './api-tokens.js';
import { authenticationMiddleware } from './authenticate.js';
import { csrfProtection } from './csrf.js';
import { DelegationGuard } from './delegation-guard.js';
import { JwtIssuer } from './jwt.js';
import { LoginDevices } from './login-devices.js';
import { loginThrottleFor } from './login-throttle.js';
import { createAuthModels, initAuthModels, openAuthConnection } from './models.js';
import { createPassport } from './passport-setup.js';
import { PermissionCatalog } from './permission-catalog.js';
import { migrateLegacyGrants } from './grants-migration.js';
import { Profiles } from './profile.js';
import { authRouter } from './routes/index.js';
import { createSessionParts } from './session.js';
import { RefreshLedger } from './refresh-ledger.js';
import { MongoUserService } from './user-service.js';
import { hashPlaintextTokenKeys } from './token-key-migration.js';
import { migrateUsernameKeys } from './username-migration.js';

export type { AuthDeps, AuthModule } from './module.js';

export async function createAuthModule(deps: AuthDeps): Promise<AuthModule> {
  const { settings, logger, mongo, db } = deps;
  const { connection, detach } = openAuthConnection(mongo, db.databaseName);
  const models = createAuthModels(connection);
  const upgraded = await hashPlaintextTokenKeys(db.collection(models.Token.collection.collectionName));
  if (upgraded > 0) logger.info({ tokens: upgraded }, 'API token keys stored in plain text by an earlier version are now stored hashed');
  // Before the unique index on username_key can be built: no two users may share a key then.
  await migrateUsernameKeys(db.collection(models.User.collection.collectionName), logger);
  await initAuthModels(models);
  const catalog = new PermissionCatalog(models, deps.grantTargets);
  await catalog.seedBuiltins();
  if (deps.grantTargets !== undefined) await migrateLegacyGrants(models, catalog, deps.grantTargets, logger);

  const leases = new CacheLeases(db.collection(CACHE_LEASES_COLLECTION), settings.sharedCacheMs);
  const accounts = new AccountDirectory(
    models,
    settings.secretKey,
    settings.privateMongo.operationTimeoutMs,
    leases,
    settings.sharedCacheMs,
  );
  const tokens = new ApiTokens(models, accounts);
  const jwt = new JwtIssuer({
    secretKey: settings.secretKey,
    accessTtlSeconds: settings.jwtAccessTtlSeconds,
    refreshTtlSeconds: settings.jwtRefreshTtlSeconds,
  });
  const refreshLedger = new RefreshLedger(mongo.db(db.databaseName));
  await refreshLedger.init();
  const throttle = loginThrottleFor(mongo.db(db.databaseName), settings);
  await throttle.init();
  const passport = createPassport(accounts);
  const session = await createSessionParts(settings, mongo, db.databaseName, settings.privateMongo.operationTimeoutMs);
  const profiles = new Profiles(models, accounts, tokens);

  return {
    session: session.handler,
    authenticate: authenticationMiddleware({ accounts, jwt, passport }),
    csrf: csrfProtection(),
    router: authRouter({
      settings,
      logger,
      accounts,
      passport,
      jwt,
      refreshLedger,
      throttle,
      devices: new LoginDevices(settings.secretKey),
      profiles,
    }),
    users: new MongoUserService(models, accounts, tokens, catalog),
    async linkHolder(userId) {
      const account = await accounts.byId(userId);
      if (account?.isActive !== true) return null;
      return { principal: toPrincipal(account, 'link'), credentials: account.credentialsStamp };
    },
    async scheduleOwner(userId) {
      const account = await accounts.byId(userId);
      return account?.isActive === true ? toPrincipal(account, 'schedule') : null;
    },
    models,
    permissionCatalog: catalog,
    delegation: new DelegationGuard(models, accounts),
    loginFailures: throttle,
    sessionOptions: session.options,
    async close() {
      await session.stop();
      accounts.forgetAll();
      await detach();
    },
  };
}
