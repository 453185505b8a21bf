/**
 * chain(): steps run in order as one express layer, and errors, thrown or passed, and express's
 * own signals ('route') leave it as they would leave a layer: through a real express app.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { chain } from '../../../src/http/chain.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** An app with `handlers` on GET /x, then a fallback route on /x and an error handler; answers the text of one GET /x. */
async function get(...handlers: RequestHandler[]): Promise<{ status: number; text: string }> {
  const app = express();
  app.get('/x', ...handlers);
  app.get('/x', (_req, res) => {
    res.send('next route');
  });
  const onError: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
    res.status(500).send(`error: ${err instanceof Error ? err.message : String(err)}`);
  };
  app.use(onError);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`);
  return { status: res.status, text: await res.text() };
}

const mark =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.trail = [...((res.locals.trail as string[] | undefined) ?? []), name];
    next();
  };
const answerTrail: RequestHandler = (_req, res) => {
  res.send((res.locals.trail as string[]).join(','));
};

describe('chain', () => {
  it('runs its steps in order, also when a step goes on later (asynchronously)', async () => {
    const later: RequestHandler = (_req, res, next) => {
      setImmediate(() => mark('later')(_req, res, next));
    };
    expect(await get(chain([mark('a'), later, mark('b'), answerTrail]))).toEqual({ status: 200, text: 'a,later,b' });
  });

  it('goes on to the next layer after its last step', async () => {
    expect(await get(chain([mark('a'), mark('b')]), answerTrail)).toEqual({ status: 200, text: 'a,b' });
  });

  it('leaves at an error passed to next, without running the steps after it', async () => {
    const fails: RequestHandler = (_req, _res, next) => next(new Error('passed'));
    expect(await get(chain([mark('a'), fails, answerTrail]))).toEqual({ status: 500, text: 'error: passed' });
  });

  it('leaves at an error thrown by a step, as express does for a layer', async () => {
    const throws: RequestHandler = () => {
      throw new Error('thrown');
    };
    expect(await get(chain([mark('a'), throws, answerTrail]))).toEqual({ status: 500, text: 'error: thrown' });
  });

  it("hands next('route') to express, which goes on to the next route", async () => {
    const skip: RequestHandler = (_req, _res, next) => next('route');
    expect(await get(chain([skip, answerTrail]))).toEqual({ status: 200, text: 'next route' });
  });

  it('refuses an error handler or a router as a step', () => {
    const onError: ErrorRequestHandler = (_err, _req, _res, next) => next();
    expect(() => chain([onError as unknown as RequestHandler])).toThrow('error handler');
    expect(() => chain([express.Router()])).toThrow('router');
  });
});
