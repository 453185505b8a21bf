/**
 * What users and groups have in common in the admin site: their records hold grants. A write may
 * add only the grants the acting administrator may give (src/auth/delegation.ts), and a change
 * that can take rights away runs under the rights watch, so that the queued tasks of whoever
 * loses rights are revoked.
 */
import type { ActionContext, ParamsType } from 'adminjs';
import type { Model, QueryFilter } from 'mongoose';
import type { DelegationGuard } from '../../auth/delegation-guard.js';
import type { UserRecord } from '../../auth/models.js';
import type { RightsWatch } from '../../auth/rights-watch.js';
import { actingAdminId, added, refusedOnForm } from './granted.js';
import { ServiceResource } from './mongoose-resource.js';

/** A list field that grants something, with the check that what a write adds to it must pass. */
export type GrantChecks = Record<string, (actor: string, added: string[]) => Promise<void>>;

export abstract class GrantHolderResource<T> extends ServiceResource<T> {
  constructor(
    model: Model<T>,
    protected readonly delegation: DelegationGuard,
    private readonly watchRights: RightsWatch,
  ) {
    super(model);
  }

  /** The fields that grant, in the order their checks run; removing from them is always allowed. */
  protected abstract readonly grantChecks: GrantChecks;

  /** The users whose rights a change to the record `id` can affect. */
  protected abstract holders(id: string): QueryFilter<UserRecord>;

  /** What goes with the deleted record `id` (references to it elsewhere). */
  protected abstract deleteDependents(id: string): Promise<void>;

  protected override async checkWrite(
    id: string | null,
    fields: Record<string, unknown>,
    context: ActionContext | undefined,
  ): Promise<void> {
    const granting = Object.keys(this.grantChecks);
    const written = granting.filter((field) => field in fields);
    if (written.length === 0) return;
    const actor = actingAdminId(context);
    const projection = Object.fromEntries(granting.map((field) => [field, 1]));
    const current = id === null ? null : await this.model.findById(id, projection).lean<Partial<Record<string, unknown[]>>>().exec();
    for (const field of written) {
      const entries = added(fields[field], current?.[field]);
      await refusedOnForm(field, () => this.grantChecks[field]!(actor, entries));
    }
  }

  override update(id: string, params: Record<string, unknown>, context?: ActionContext): Promise<ParamsType> {
    return this.watchRights(this.holders(id), () => super.update(id, params, context));
  }

  override async delete(id: string): Promise<void> {
    await this.watchRights(this.holders(id), async () => {
      await super.delete(id);
      await this.deleteDependents(id);
    });
  }
}
