/**
 * `cybercom_task_info`: the remote-control command that answers each task's documentation and
 * call signature. Python workers answer it once their app loads the `cybercom.celery` extension
 * (clients/python/src/cybercom/celery.py); the TypeScript worker always does. Stock `registered`
 * cannot stand in: Celery 5.3 and later refuse to send `__doc__`, and no version sends parameters.
 *
 * The reply value, per node (plain JSON):
 *
 *   {"version": 1, "tasks": {"proj.add": {"doc": "Add two numbers." | null,
 *     "signature": null | {"text": "(x, y=1, *, scale: float = 1.0)", "parameters": [
 *       {"name": "x", "kind": "positional_or_keyword", "default"?: <JSON>,
 *        "default_repr"?: "<Python repr() of a default JSON cannot carry>", "annotation"?: "float"}]}}}}
 *
 * Kinds are Python's `inspect.Parameter` kind names in lower case. A worker without the command
 * answers `{"error": "KeyError('cybercom_task_info')"}` (kombu's reply to an unknown command).
 */
import { z } from 'zod';
import type { JsonObject, JsonValue } from './json.js';

export const TASK_INFO_COMMAND = 'cybercom_task_info';
export const TASK_INFO_VERSION = 1;

export const PARAMETER_KINDS = ['positional_only', 'positional_or_keyword', 'var_positional', 'keyword_only', 'var_keyword'] as const;
export type ParameterKind = (typeof PARAMETER_KINDS)[number];

export interface TaskParameter {
  name: string;
  kind: ParameterKind;
  /** The default as JSON, or, with `defaultIsRepr`, the repr() text of a default JSON cannot carry. */
  default?: JsonValue;
  defaultIsRepr?: boolean;
  /** The annotation as source text, e.g. `float` or `list[int]`. */
  annotation?: string;
}

export interface TaskSignature {
  /** As Python prints a signature, e.g. `(x, y=1, *, scale: float = 1.0)`. */
  text: string;
  parameters: TaskParameter[];
}

export interface TaskInfo {
  doc: string | null;
  signature: TaskSignature | null;
}

/**
 * What one node answered: its tasks' info, a refusal (the command is unknown there: a worker
 * without the extension), or something this version cannot read (another reply version).
 */
export type TaskInfoReply = { kind: 'tasks'; tasks: Map<string, TaskInfo> } | { kind: 'refused' } | { kind: 'unreadable' };

// Generous bounds: they only keep one odd worker from filling every catalog response.
const wireParameter = z.object({
  name: z.string().min(1).max(200),
  kind: z.enum(PARAMETER_KINDS),
  default: z.json().optional(),
  default_repr: z.string().max(2_000).optional(),
  annotation: z.string().max(500).optional(),
});

const wireTaskInfo = z.object({
  doc: z.string().max(20_000).nullable(),
  signature: z.object({ text: z.string().max(10_000), parameters: z.array(wireParameter).max(200) }).nullable(),
});

function fromWireParameter(p: z.infer<typeof wireParameter>): TaskParameter {
  const parameter: TaskParameter = { name: p.name, kind: p.kind };
  if (p.default !== undefined) parameter.default = p.default as JsonValue;
  else if (p.default_repr !== undefined) {
    parameter.default = p.default_repr;
    parameter.defaultIsRepr = true;
  }
  if (p.annotation !== undefined) parameter.annotation = p.annotation;
  return parameter;
}

/** Reads one node's reply; a task whose entry is malformed is left out, the others kept. */
export function parseTaskInfoReply(value: unknown): TaskInfoReply {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'unreadable' };
  const reply = value as Record<string, unknown>;
  if (typeof reply.error === 'string') return { kind: 'refused' };
  if (reply.version !== TASK_INFO_VERSION || typeof reply.tasks !== 'object' || reply.tasks === null || Array.isArray(reply.tasks)) {
    return { kind: 'unreadable' };
  }
  const tasks = new Map<string, TaskInfo>();
  for (const [name, entry] of Object.entries(reply.tasks as Record<string, unknown>)) {
    const parsed = wireTaskInfo.safeParse(entry);
    if (!parsed.success) continue;
    const { doc, signature } = parsed.data;
    tasks.set(name, {
      doc: doc !== null && doc.trim() !== '' ? doc.trim() : null,
      signature: signature === null ? null : { text: signature.text, parameters: signature.parameters.map(fromWireParameter) },
    });
  }
  return { kind: 'tasks', tasks };
}

/** Worker side: the reply value for the given tasks (JSON defaults only: a TypeScript task has no other kind). */
export function formatTaskInfoReply(tasks: Iterable<{ name: string } & TaskInfo>): JsonObject {
  const out: JsonObject = {};
  for (const task of tasks) {
    out[task.name] = {
      doc: task.doc,
      signature:
        task.signature === null
          ? null
          : {
              text: task.signature.text,
              parameters: task.signature.parameters.map((p) => {
                const wire: JsonObject = { name: p.name, kind: p.kind };
                if (p.default !== undefined) wire[p.defaultIsRepr ? 'default_repr' : 'default'] = p.default;
                if (p.annotation !== undefined) wire.annotation = p.annotation;
                return wire;
              }),
            },
    };
  }
  return { version: TASK_INFO_VERSION, tasks: out };
}

/** One parameter as Python prints it (`*rest`, `scale: float = 1.0`, `y=1`); defaults as JSON text. */
function parameterText(p: TaskParameter): string {
  const prefix = p.kind === 'var_positional' ? '*' : p.kind === 'var_keyword' ? '**' : '';
  const annotated = p.annotation === undefined ? `${prefix}${p.name}` : `${prefix}${p.name}: ${p.annotation}`;
  if (p.default === undefined) return annotated;
  const value = p.defaultIsRepr ? String(p.default) : JSON.stringify(p.default);
  return p.annotation === undefined ? `${annotated}=${value}` : `${annotated} = ${value}`;
}

/**
 * The signature text in Python's notation: `/` after the positional-only parameters, a bare `*`
 * before keyword-only ones when there is no `*rest`. Parameters must be in Python's order.
 */
export function signatureText(parameters: readonly TaskParameter[]): string {
  const parts: string[] = [];
  parameters.forEach((p, i) => {
    if (p.kind === 'keyword_only' && !parameters.slice(0, i).some((q) => q.kind === 'keyword_only' || q.kind === 'var_positional')) {
      parts.push('*');
    }
    parts.push(parameterText(p));
    if (p.kind === 'positional_only' && parameters[i + 1]?.kind !== 'positional_only') parts.push('/');
  });
  return `(${parts.join(', ')})`;
}
