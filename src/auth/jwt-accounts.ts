/** The account a JWT speaks for: signature, expiry and type, then the user and its password stamp. */
import type { Account, AccountDirectory } from './accounts.js';
import { tokenNotValid, type JwtIssuer, type JwtType } from './jwt.js';

/**
 * Throws 401 `token_not_valid` for a bad token, a deleted user, or a token issued before the
 * last password change. Inactive accounts are returned: callers word that refusal themselves.
 */
export async function accountForJwt(jwt: JwtIssuer, accounts: AccountDirectory, token: string, type?: JwtType): Promise<Account> {
  const claims = jwt.verify(token, type);
  const account = await accounts.byId(claims.user_id);
  if (account === null) throw tokenNotValid('The user of this token does not exist.');
  if (account.passwordStamp !== claims.pwd) throw tokenNotValid('Token was issued before a password change.');
  return account;
}
