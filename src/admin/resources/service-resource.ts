/**
 * An admin resource over a collection of the service's own that the admin reads through a
 * service (the task history, the schedules) rather than through a model: what AdminJS asks of
 * every such resource besides its records.
 */
import { BaseResource, type BaseProperty } from 'adminjs';

export abstract class ServiceResource extends BaseResource {
  constructor(
    private readonly resourceId: string,
    private readonly resourceProperties: BaseProperty[],
  ) {
    super();
  }

  override databaseName(): string {
    return 'service';
  }

  override databaseType(): string {
    return 'MongoDB';
  }

  override id(): string {
    return this.resourceId;
  }

  override properties(): BaseProperty[] {
    return this.resourceProperties;
  }

  override property(path: string): BaseProperty | null {
    return this.resourceProperties.find((p) => p.path() === path) ?? null;
  }
}
