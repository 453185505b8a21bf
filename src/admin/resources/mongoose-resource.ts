/**
 * @adminjs/mongoose's resource, adjusted for this service:
 * - mongoose 9 no longer has `SchemaArray.caster`, which the adapter's property typing reads for
 *   every array path (it would crash on `groups` and `permissions`); the element type comes from
 *   `embeddedSchemaType` instead;
 * - updates and deletes go through updateOne/deleteOne by _id, never findOneAndUpdate/
 *   findOneAndDelete, whose projection mongoose would add for the hidden password field (same
 *   rule as src/auth/user-service.ts);
 * - `_id` is never part of an update, and each resource decides which stored fields may leave
 *   the server (`toParams`), which may be written (`writableParams`), and whether a write is
 *   allowed at all (`checkWrite`, which sees every create and update whichever action makes it).
 */
import { BaseRecord, ValidationError, flat, type ActionContext, type ParamsType } from 'adminjs';
import { Resource as AdapterResource } from '@adminjs/mongoose';
import type { Model, UpdateQuery } from 'mongoose';

/** The adapter's Property class (not exported by the package), reached through a property. */
type AdapterProperty = ReturnType<AdapterResource['properties']>[number];

interface MongoosePath {
  path: string;
  instance: string;
  options?: { ref?: unknown };
  embeddedSchemaType?: { instance?: string; options?: { ref?: unknown }; schema?: unknown };
  caster?: { instance?: string; options?: { ref?: unknown }; schema?: unknown };
}

function refName(ref: unknown): string | undefined {
  if (typeof ref === 'function') return (ref as { modelName?: string }).modelName;
  return typeof ref === 'string' ? ref : undefined;
}

/** Patches one adapter property so arrays are typed from their element schema type. */
function fixArrayProperty(property: AdapterProperty): AdapterProperty {
  const path = (property as unknown as { mongoosePath: MongoosePath }).mongoosePath;
  if (path.instance !== 'Array') return property;
  const element = path.embeddedSchemaType ?? path.caster;
  const ref = refName(element?.options?.ref);
  const instance = element?.instance;
  const target = property as unknown as { reference(): string | undefined; type(): string; subProperties(): unknown[] };
  target.reference = () => ref;
  target.subProperties = () => [];
  target.type = () => {
    if ((instance === 'ObjectId' || instance === 'ObjectID') && ref !== undefined) return 'reference';
    switch (instance) {
      case 'Boolean':
        return 'boolean';
      case 'Number':
        return 'number';
      case 'Date':
        return 'datetime';
      case 'ObjectId':
      case 'ObjectID':
        return 'id';
      default:
        return 'string';
    }
  };
  return property;
}

/**
 * The fields of a duplicate-key error: from `keyValue` where the engine sends it, else from
 * `keyPattern` or the index name in the message (`index: username_1`), which not every engine
 * sends alike; `_id` when none can be told.
 */
function duplicateFields(e: {
  keyValue?: Record<string, unknown>;
  keyPattern?: Record<string, unknown>;
  errmsg?: string;
  message?: string;
}): string[] {
  const named = Object.keys(e.keyValue ?? e.keyPattern ?? {});
  if (named.length > 0) return named;
  const index = /index: (\S+)/.exec(e.errmsg ?? e.message ?? '')?.[1];
  const fromIndex = index?.split(/_-?1(?:_|$)/).filter((f) => f !== '') ?? [];
  return fromIndex.length > 0 ? fromIndex : ['_id'];
}

/**
 * Mongoose's validation, cast and duplicate-key errors as AdminJS form errors (shown under the
 * fields), the way the adapter does it for creates; anything else is passed on unchanged.
 */
export function formError(err: unknown): unknown {
  const e = err as {
    name?: string;
    code?: number;
    errors?: Record<string, { message: string; kind?: string }>;
    path?: string;
    keyValue?: Record<string, unknown>;
    keyPattern?: Record<string, unknown>;
    errmsg?: string;
    message?: string;
  };
  if (e.name === 'ValidationError' && e.errors !== undefined) {
    const fields = Object.fromEntries(
      Object.entries(e.errors).map(([path, error]) => [path, { message: error.message, type: error.kind ?? 'invalid' }]),
    );
    return new ValidationError(fields);
  }
  if (e.name === 'CastError' && typeof e.path === 'string') {
    return new ValidationError({ [e.path]: { message: 'This value has the wrong type.', type: 'cast' } });
  }
  if (e.code === 11000) {
    // AdminJS counts a form as saved unless a field has an error, so the refusal must name one.
    const fields = duplicateFields(e);
    const errors = Object.fromEntries(fields.map((f) => [f, { message: 'This value is already taken.', type: 'duplicate' }]));
    return new ValidationError(errors, { message: 'This value is already taken by another record.', type: 'duplicate' });
  }
  return err;
}

export class ServiceResource<T = unknown> extends AdapterResource {
  constructor(readonly model: Model<T>) {
    super(model);
  }

  override properties(): AdapterProperty[] {
    return super.properties().map(fixArrayProperty);
  }

  override property(name: string): AdapterProperty {
    // The adapter's typing says non-null, AdminJS's BaseResource says "or null" (unknown path).
    return this.properties().find((p) => p.path() === name) ?? (null as unknown as AdapterProperty);
  }

  /** The record as the admin site may see it (plain JSON). Subclasses drop or mask fields. */
  protected toParams(document: Record<string, unknown>): Record<string, unknown> {
    return document;
  }

  /** The fields an admin form may write; subclasses drop the rest. */
  protected writableParams(params: Record<string, unknown>): Record<string, unknown> {
    const { _id: _ignored, ...rest } = params;
    return rest;
  }

  /**
   * Fields the server itself adds to a create or update, from state a before-hook left for this
   * request's context (e.g. a password hash) or as a consequence of the checked `fields` the
   * write makes: never from the submitted form itself.
   */
  protected serverFields(_context: ActionContext | undefined, _fields: Record<string, unknown>): Record<string, unknown> {
    return {};
  }

  /**
   * Runs before a create (`id` null) or an update is written, with the fields it would write
   * (unflattened); throws to refuse it, an AdminJS ValidationError to show why on the form.
   */
  protected async checkWrite(_id: string | null, _fields: Record<string, unknown>, _context: ActionContext | undefined): Promise<void> {
    // Nothing to check by default.
  }

  private record(document: unknown): BaseRecord {
    return new BaseRecord(this.toParams(JSON.parse(JSON.stringify(document)) as Record<string, unknown>), this);
  }

  /** Whether the list may be filtered by this stored field; subclasses keep hidden fields out. */
  protected filterable(_path: string): boolean {
    return true;
  }

  /**
   * The filter without conditions on fields the resource does not have (a list URL may name
   * any) or may not be searched by: the adapter would fail on the first and the second would
   * let a list probe what is never shown.
   */
  private searchable<F>(filter: F): F {
    const conditions = (filter as { filters?: Record<string, { property: unknown }> } | null | undefined)?.filters;
    if (conditions === undefined) return filter;
    (filter as { filters: Record<string, { property: unknown }> }).filters = Object.fromEntries(
      Object.entries(conditions).filter(
        ([path, condition]) => condition.property !== null && condition.property !== undefined && this.filterable(path),
      ),
    );
    return filter;
  }

  override async count(filter: Parameters<AdapterResource['count']>[0]): Promise<number> {
    return super.count(this.searchable(filter));
  }

  override async find(
    filter: Parameters<AdapterResource['find']>[0],
    options: Parameters<AdapterResource['find']>[1],
  ): Promise<BaseRecord[]> {
    const records = (await super.find(this.searchable(filter), options)) as BaseRecord[];
    return records.map((r) => this.record(flat.unflatten(r.params)));
  }

  override async findOne(id: string): Promise<BaseRecord> {
    let document: unknown;
    try {
      document = await this.model.findById(id).lean().exec();
    } catch (err) {
      // A malformed id in the URL is "no such record", not a server error.
      if ((err as { name?: string }).name === 'CastError') document = null;
      else throw err;
    }
    // AdminJS treats a null record as "not found" (the adapter's typing forgets that case).
    return document === null ? (null as unknown as BaseRecord) : this.record(document);
  }

  override async findMany(ids: (string | number)[]): Promise<BaseRecord[]> {
    const documents = await this.model
      .find({ _id: { $in: ids } })
      .lean()
      .exec();
    return documents.map((d) => this.record(d));
  }

  override build(params: Record<string, unknown>): BaseRecord {
    return new BaseRecord(params, this);
  }

  override async create(params: Record<string, unknown>, context?: ActionContext): Promise<ParamsType> {
    const fields = this.writableParams(params);
    const checked = flat.unflatten(this.parseParams(fields)) as Record<string, unknown>;
    await this.checkWrite(null, checked, context);
    const created = await super.create({ ...fields, ...this.serverFields(context, checked) });
    return this.toParams(created as Record<string, unknown>);
  }

  override async update(id: string, params: Record<string, unknown>, context?: ActionContext): Promise<ParamsType> {
    const parsed = this.parseParams(this.writableParams(params)) as Record<string, unknown>;
    const fields = flat.unflatten(parsed) as Record<string, unknown>;
    await this.checkWrite(id, fields, context);
    const changes = { ...fields, ...this.serverFields(context, fields) };
    try {
      await this.model.updateOne({ _id: id }, { $set: changes } as UpdateQuery<T>, { runValidators: true }).exec();
    } catch (err) {
      throw formError(err);
    }
    const document = await this.model.findById(id).lean().exec();
    return document === null ? {} : this.toParams(JSON.parse(JSON.stringify(document)) as Record<string, unknown>);
  }

  override async delete(id: string): Promise<void> {
    await this.model.deleteOne({ _id: id }).exec();
  }
}
