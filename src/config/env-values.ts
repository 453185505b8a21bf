/** Parsers for environment values shared by every settings schema (API, worker, installer). */
import { z } from 'zod';

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

/** true/false, 1/0, yes/no, on/off (any case, surrounding blanks ignored); undefined for anything else. */
export function parseBoolean(text: string): boolean | undefined {
  const v = text.trim().toLowerCase();
  if (TRUE.includes(v)) return true;
  if (FALSE.includes(v)) return false;
  return undefined;
}

/** A setting parsed by parseBoolean. */
export const booleanFlag = z
  .string()
  .refine((v) => parseBoolean(v) !== undefined, 'must be true or false')
  .transform((v) => parseBoolean(v) === true);

/**
 * The variables that are set. Empty ones count as unset, so a `KEY=` line that operators leave
 * in an env file or a compose file falls back to the default.
 */
export function setVariables(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
}

/** One line per problem of a schema check, naming the variable. */
export function envProblems(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`);
}

/** A comma-separated list; blanks dropped. */
export const commaList = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0),
);
