/**
 * Several request steps as one express handler. Express walks a layer per step for every
 * request (a match of its path, a closure for `next`, the error bookkeeping between them); steps
 * that always run one after the other at the same place cost one layer instead.
 *
 * Within the chain a step goes on to the next one by calling `next()`, as between layers; an
 * error (passed to `next` or thrown while the step runs) leaves the chain at once for express's
 * error handling, and so does `next('route')` or `next('router')`, which express then treats as
 * it would from the step's own layer. After the last step the chain calls express's `next()`.
 * Only ordinary steps belong in a chain: error handlers (four parameters) and routers stay layers
 * of their own.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function chain(steps: readonly RequestHandler[]): RequestHandler {
  for (const step of steps) {
    if (step.length > 3) throw new Error('An error handler cannot be a step of a chain.');
    if ('stack' in step) throw new Error('A router cannot be a step of a chain.');
  }
  if (steps.length === 1) return steps[0] as RequestHandler;
  return (req, res, done) => runFrom(steps, 0, req, res, done);
}

/** Runs `steps[index]` with a `next` that goes on to the step after it. */
function runFrom(steps: readonly RequestHandler[], index: number, req: Request, res: Response, done: NextFunction): void {
  const step = steps[index];
  if (step === undefined) return done();
  try {
    // Any truthy value is an error to express (and 'route', 'router' its own signals).
    step(req, res, (err?: unknown) => (err ? done(err) : runFrom(steps, index + 1, req, res, done)));
  } catch (thrown) {
    done(thrown);
  }
}
