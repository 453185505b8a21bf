/**
 * The auth data as mongoose models, on a connection bound to the service database. The
 * collection names are Django's, so data migrated from the Python service keeps its place.
 * Models are created per connection (never with the global `mongoose.model()`): several service
 * instances with different databases can live in one process, and the admin site registers the
 * very same model objects (AuthModule.models).
 */
import mongoose, { Schema, type Connection, type Model, type Types } from 'mongoose';
import { MongoServerError, type MongoClient } from 'mongodb';
import { retryOnDeadlock } from '../db/deadlock-retry.js';

const NAMESPACE_EXISTS = 48;
import { PERMISSION_AREAS, type PermissionArea } from './codenames.js';

export interface UserRecord {
  _id: Types.ObjectId;
  username: string;
  /**
   * The username in lower case, unique: two accounts never have names that differ only in case.
   * Set from `username` by this schema on every create and update through the model; users stored
   * before it existed get it at start-up (username-migration.ts).
   */
  username_key?: string;
  email: string;
  first_name: string;
  last_name: string;
  /** scrypt hash (see passwords.ts), or an unusable marker. Not selected unless asked for. */
  password: string;
  is_active: boolean;
  is_staff: boolean;
  is_superuser: boolean;
  groups: Types.ObjectId[];
  permissions: string[];
  date_joined: Date;
  last_login: Date | null;
  /**
   * Renewed whenever credentials are revoked without the password changing (API token rotated or
   * revoked, account deactivated); see credentials-stamp.ts. Absent on users stored before it
   * existed, which counts as a generation like any other.
   */
  credentials_generation?: string;
}

export interface GroupRecord {
  _id: Types.ObjectId;
  name: string;
  permissions: string[];
}

export interface PermissionRecord {
  _id: Types.ObjectId;
  codename: string;
  name: string;
  area: PermissionArea;
}

export interface TokenRecord {
  _id: Types.ObjectId;
  /** SHA-256 of the key, hex (see api-tokens.ts): the key itself is never stored. */
  key_hash: string;
  /** The key's first characters, for telling tokens apart. */
  key_prefix: string;
  user: Types.ObjectId;
  created: Date;
}

export interface AuthModels {
  User: Model<UserRecord>;
  Group: Model<GroupRecord>;
  Permission: Model<PermissionRecord>;
  Token: Model<TokenRecord>;
}

/** Django's username rule: letters, digits and @ . + - _ only, at most 150 characters. */
export const USERNAME_PATTERN = /^[\w.@+-]{1,150}$/;

/** The key usernames are unique by: the name without case. */
export function usernameKey(username: string): string {
  return username.toLowerCase();
}

const userSchema = new Schema<UserRecord>(
  {
    username: { type: String, required: true, unique: true, match: USERNAME_PATTERN },
    // Sparse: a user written around the model (an earlier version, a restore) has none until the
    // start-up migration gives it one, and must not collide with every other such user.
    username_key: { type: String, unique: true, sparse: true },
    email: { type: String, default: '', maxlength: 254 },
    first_name: { type: String, default: '', maxlength: 150 },
    last_name: { type: String, default: '', maxlength: 150 },
    password: { type: String, required: true, select: false },
    is_active: { type: Boolean, default: true },
    is_staff: { type: Boolean, default: false },
    is_superuser: { type: Boolean, default: false },
    groups: { type: [{ type: Schema.Types.ObjectId, ref: 'Group' }], default: [] },
    permissions: { type: [String], default: [] },
    date_joined: { type: Date, default: () => new Date() },
    last_login: { type: Date, default: null },
    credentials_generation: { type: String },
  },
  { collection: 'auth_user', versionKey: false },
);

userSchema.pre('validate', function () {
  if (typeof this.username === 'string') this.username_key = usernameKey(this.username);
});

/** A `$set` (or a plain replacement field) of `username` through the model sets its key too. */
function keepUsernameKey(update: unknown): void {
  if (update === null || typeof update !== 'object' || Array.isArray(update)) return;
  const fields = update as Record<string, unknown>;
  if (typeof fields.username === 'string') fields.username_key = usernameKey(fields.username);
  const set = fields.$set as Record<string, unknown> | undefined;
  if (set !== undefined && typeof set.username === 'string') set.username_key = usernameKey(set.username);
}

for (const operation of ['updateOne', 'updateMany', 'findOneAndUpdate', 'replaceOne'] as const) {
  userSchema.pre(operation, function () {
    keepUsernameKey(this.getUpdate());
  });
}

const groupSchema = new Schema<GroupRecord>(
  {
    name: { type: String, required: true, unique: true, maxlength: 150 },
    permissions: { type: [String], default: [] },
  },
  { collection: 'auth_group', versionKey: false },
);

const permissionSchema = new Schema<PermissionRecord>(
  {
    codename: { type: String, required: true, unique: true },
    name: { type: String, required: true },
    area: { type: String, required: true, enum: PERMISSION_AREAS },
  },
  { collection: 'auth_permission', versionKey: false },
);

const tokenSchema = new Schema<TokenRecord>(
  {
    key_hash: { type: String, required: true, unique: true },
    key_prefix: { type: String, required: true },
    // One token per user, as in DRF's authtoken: rotating replaces the key.
    user: { type: Schema.Types.ObjectId, ref: 'User', required: true, unique: true },
    created: { type: Date, default: () => new Date() },
  },
  { collection: 'authtoken_token', versionKey: false },
);

/** Registers the four models on `connection` (idempotent per connection). */
export function createAuthModels(connection: Connection): AuthModels {
  const model = <T>(name: string, schema: Schema<T>): Model<T> =>
    (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema);
  return {
    User: model('User', userSchema),
    Group: model('Group', groupSchema),
    Permission: model('Permission', permissionSchema),
    Token: model('Token', tokenSchema),
  };
}

export interface AuthConnection {
  connection: Connection;
  /** Detaches mongoose without closing the shared driver client (the service owns it). */
  detach(): Promise<void>;
}

/** A mongoose connection that shares the service's driver client and uses its service database. */
export function openAuthConnection(client: MongoClient, databaseName: string): AuthConnection {
  const base = mongoose.createConnection();
  // Nothing is created when a model is registered: mongoose would otherwise start building the
  // unique indexes at once, racing the start-up migrations that must run first.
  base.set('autoIndex', false);
  base.set('autoCreate', false);
  base.setClient(client);
  const connection = base.useDb(databaseName, { useCache: true });
  connection.set('autoIndex', false);
  connection.set('autoCreate', false);
  return {
    connection,
    async detach() {
      // `skipCloseClient` is honoured by mongoose's driver layer but missing from its typings.
      await base.destroy({ skipCloseClient: true } as unknown as boolean);
    },
  };
}

/**
 * Creates collections and unique indexes now, so uniqueness holds from the first request. Runs
 * after the start-up migrations (the connection builds nothing by itself, see
 * openAuthConnection): tokens stored in plain text by earlier versions have no `key_hash` until
 * token-key-migration.ts has hashed them, and several of them would break the unique index on it.
 * One model after another, and again after PostgreSQL's "deadlock detected": index builds started
 * together can deadlock on PostgreSQL-based engines.
 */
export async function initAuthModels(models: AuthModels): Promise<void> {
  const all: Pick<Model<unknown>, 'createCollection' | 'createIndexes'>[] = [models.User, models.Group, models.Permission, models.Token];
  for (const model of all) {
    await retryOnDeadlock(async () => {
      await model.createCollection().catch((e: unknown) => {
        if (!(e instanceof MongoServerError && e.code === NAMESPACE_EXISTS)) throw e;
      });
      await model.createIndexes();
    });
  }
}
