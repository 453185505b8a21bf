/** Parsers for environment values shared by every settings schema (API, worker, installer). */
import { z } from 'zod';

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

/** true/false, 1/0, yes/no, on/off (any case). */
export const booleanFlag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => TRUE.includes(v) || FALSE.includes(v), 'must be true or false')
  .transform((v) => TRUE.includes(v));

/** A comma-separated list; blanks dropped. */
export const commaList = z.string().transform((v) => v.split(',').map((s) => s.trim()).filter((s) => s.length > 0));
