/**
 * Refresh tokens are single use. Each refresh spends the token (its `jti` recorded until it
 * would have expired) and hands out a new one of the same family. A token spent twice means two
 * parties hold it — the user and a thief, in some order — so the whole family is revoked: every
 * refresh token descending from that login stops working, and the user logs in again. Kept in
 * the service database (shared by every API process), expired entries removed by TTL indexes.
 */
import { MongoServerError, type Db } from 'mongodb';
import { ensureExpiryIndex } from '../db/expiry-index.js';
import type { JwtClaims } from './jwt.js';
import { tokenNotValid } from './jwt.js';

const SPENT = 'auth_refresh_spent';
const REVOKED = 'auth_refresh_revoked';

interface SpentToken {
  _id: string;
  family: string;
  user: string;
  expires: Date;
}

interface RevokedFamily {
  _id: string;
  user: string;
  expires: Date;
}

export class RefreshLedger {
  constructor(private readonly db: Db) {}

  /** TTL indexes: an entry is needed only while its token could still be presented. */
  async init(): Promise<void> {
    for (const name of [SPENT, REVOKED]) await ensureExpiryIndex(this.db.collection(name));
  }

  private family(claims: JwtClaims): string {
    return claims.fam ?? claims.jti;
  }

  /** Throws 401 when the token was spent already or its family revoked. */
  async assertUsable(claims: JwtClaims): Promise<void> {
    const [spent, revoked] = await Promise.all([
      this.db.collection<SpentToken>(SPENT).findOne({ _id: claims.jti }, { projection: { _id: 1 } }),
      this.db.collection<RevokedFamily>(REVOKED).findOne({ _id: this.family(claims) }, { projection: { _id: 1 } }),
    ]);
    if (revoked !== null) throw tokenNotValid('This refresh token was revoked: one of its family was used twice. Log in again.');
    if (spent !== null) throw tokenNotValid('This refresh token was used already.');
  }

  /** Spends the token; a second spend revokes its family and throws 401. */
  async spend(claims: JwtClaims): Promise<void> {
    const family = this.family(claims);
    const expires = new Date(claims.exp * 1000);
    const revoked = await this.db.collection<RevokedFamily>(REVOKED).findOne({ _id: family }, { projection: { _id: 1 } });
    if (revoked !== null) throw tokenNotValid('This refresh token was revoked: one of its family was used twice. Log in again.');
    try {
      await this.db.collection<SpentToken>(SPENT).insertOne({ _id: claims.jti, family, user: claims.user_id, expires });
    } catch (err) {
      if (!(err instanceof MongoServerError && err.code === 11000)) throw err;
      // The family lives as long as its newest token could: the refresh lifetime from now.
      const familyExpires = new Date(Date.now() + Math.max(claims.exp * 1000 - claims.iat * 1000, 0));
      await this.db
        .collection<RevokedFamily>(REVOKED)
        .updateOne({ _id: family }, { $set: { user: claims.user_id, expires: familyExpires } }, { upsert: true });
      throw tokenNotValid('This refresh token was used already; every token of its login is revoked now. Log in again.');
    }
  }
}
