/** Validation of the user fields people type: username, e-mail, names (Django's limits). */
import { badRequest } from '../errors.js';
import { USERNAME_PATTERN } from './models.js';

export const MAX_NAME_LENGTH = 150;
export const MAX_EMAIL_LENGTH = 254;

/**
 * Deliberately simple: one @, a non-empty local part, a dotted domain, no spaces. Deliverability
 * is the mail server's business; this only catches typing mistakes.
 */
const EMAIL_PATTERN = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

export function isValidEmail(email: string): boolean {
  return email.length <= MAX_EMAIL_LENGTH && EMAIL_PATTERN.test(email);
}

/** An empty string clears the address; anything else must look like one. */
export function assertValidEmail(email: string): void {
  if (email !== '' && !isValidEmail(email)) throw badRequest('invalid_email', `"${email}" is not a valid e-mail address.`);
}

export function assertValidUsername(username: string): void {
  if (!USERNAME_PATTERN.test(username)) {
    throw badRequest('invalid_username', 'A username has 1 to 150 characters: letters, digits and @ . + - _ only.');
  }
}
