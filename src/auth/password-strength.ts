/**
 * Rules for new passwords (Django's default validators, simplified): long enough, not only
 * digits, not the username, not a well-known password. Existing hashes are never re-checked.
 */
import { badRequest, type ApiError } from '../errors.js';
import { COMMON_PASSWORDS } from './common-passwords.js';

export const MIN_PASSWORD_LENGTH = 8;
/** scrypt pre-hashes long inputs, but a cap keeps request bodies and form posts sane. */
export const MAX_PASSWORD_LENGTH = 1024;

export type WeakPasswordReason = 'too_short' | 'too_long' | 'entirely_numeric' | 'same_as_username' | 'too_common';

const MESSAGES: Record<WeakPasswordReason, string> = {
  too_short: `The password must contain at least ${MIN_PASSWORD_LENGTH} characters.`,
  too_long: `The password must contain at most ${MAX_PASSWORD_LENGTH} characters.`,
  entirely_numeric: 'The password must not consist of digits only.',
  same_as_username: 'The password must not be the username.',
  too_common: 'The password is too common.',
};

export function passwordWeaknesses(password: string, username?: string): WeakPasswordReason[] {
  const reasons: WeakPasswordReason[] = [];
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) reasons.push('too_short');
  if (length > MAX_PASSWORD_LENGTH) reasons.push('too_long');
  if (/^\d+$/.test(password)) reasons.push('entirely_numeric');
  if (username !== undefined && username.length > 0 && password.toLowerCase() === username.toLowerCase()) {
    reasons.push('same_as_username');
  }
  if (COMMON_PASSWORDS.has(password.toLowerCase())) reasons.push('too_common');
  return reasons;
}

/** The 400 `weak_password` error, or null when the password is acceptable. */
export function weakPasswordError(password: string, username?: string): ApiError | null {
  const reasons = passwordWeaknesses(password, username);
  if (reasons.length === 0) return null;
  return badRequest('weak_password', `The password is too weak: ${reasons.map((r) => MESSAGES[r]).join(' ')}`, {
    reasons: reasons.map((code) => ({ code, message: MESSAGES[code] })),
  });
}

export function assertStrongPassword(password: string, username?: string): void {
  const error = weakPasswordError(password, username);
  if (error !== null) throw error;
}
