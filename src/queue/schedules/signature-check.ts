/**
 * Whether arguments fit a task's signature, by Python's own binding rules, where a worker sent
 * the signature (task-info.ts): a schedule whose arguments could never bind is refused when it is
 * saved, not discovered at 02:00 as a TypeError in the worker. Pure, tested as a table.
 */
import type { TaskParameter, TaskSignature } from '../protocol/task-info.js';

const isPositional = (p: TaskParameter) => p.kind === 'positional_only' || p.kind === 'positional_or_keyword';
const isRequired = (p: TaskParameter) =>
  (isPositional(p) || p.kind === 'keyword_only') && p.default === undefined && p.defaultIsRepr !== true;

/** Why `args` and keyword arguments named `kwargs` cannot call a function of this signature, or null when they can. */
export function bindProblem(signature: TaskSignature, argCount: number, kwargs: readonly string[]): string | null {
  const params = signature.parameters;
  const positional = params.filter(isPositional);
  const varPositional = params.some((p) => p.kind === 'var_positional');
  const varKeyword = params.some((p) => p.kind === 'var_keyword');
  if (argCount > positional.length && !varPositional) {
    return `takes ${positional.length} positional argument${positional.length === 1 ? '' : 's'} but ${argCount} were given`;
  }
  const bound = new Set(positional.slice(0, argCount).map((p) => p.name));
  for (const name of kwargs) {
    const param = params.find((p) => p.name === name);
    if (param === undefined || param.kind === 'positional_only' || param.kind === 'var_positional' || param.kind === 'var_keyword') {
      if (varKeyword) continue;
      return param?.kind === 'positional_only'
        ? `got a positional-only argument passed as keyword argument: '${name}'`
        : `got an unexpected keyword argument '${name}'`;
    }
    if (bound.has(name)) return `got multiple values for argument '${name}'`;
    bound.add(name);
  }
  const missing = params.filter((p) => isRequired(p) && !bound.has(p.name)).map((p) => `'${p.name}'`);
  return missing.length === 0 ? null : `missing required argument${missing.length === 1 ? '' : 's'}: ${missing.join(', ')}`;
}
