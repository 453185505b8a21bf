/** What the auth routes are built from (assembled once in src/auth/index.ts). */
import type { PassportInstance } from '../passport-setup.js';
import type { Settings } from '../../config/settings.js';
import type { Logger } from '../../log/logger.js';
import type { AccountDirectory } from '../accounts.js';
import type { JwtIssuer } from '../jwt.js';
import type { LoginDevices } from '../login-devices.js';
import type { LoginThrottle } from '../login-throttle.js';
import type { Profiles } from '../profile.js';
import type { RefreshLedger } from '../refresh-ledger.js';

export interface AuthRouteDeps {
  settings: Settings;
  logger: Logger;
  accounts: AccountDirectory;
  passport: PassportInstance;
  jwt: JwtIssuer;
  refreshLedger: RefreshLedger;
  throttle: LoginThrottle;
  devices: LoginDevices;
  profiles: Profiles;
}
