/**
 * One method of a route as the OpenAPI document describes it and `serve` enforces it (its query
 * parameters and request body; see route-table.ts and request-check.ts).
 */
import type { ZodType } from 'zod';

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A JSON schema written as the document carries it, or a zod schema the document is made from. */
export type Schema = Readonly<Record<string, unknown>> | ZodType;

/** A media type's body, e.g. `{'application/json': {schema}}`. */
export type Content = Readonly<Record<string, { schema?: Schema }>>;

export interface QueryParameter {
  name: string;
  in: 'query';
  required: boolean;
  description: string;
  schema: Readonly<Record<string, unknown>>;
}

export interface Answer {
  description: string;
  content?: Content;
}

/** One method of a route as the OpenAPI document describes it (path parameters are added from the path). */
export interface Operation {
  summary: string;
  description?: string;
  tags?: string[];
  parameters?: readonly QueryParameter[];
  request?: { body: { required: boolean; content: Content } };
  responses: Readonly<Record<string, Answer>>;
  /** Only where it differs from the document's (`[{}]`: no credentials needed). */
  security?: Readonly<Record<string, string[]>>[];
}
