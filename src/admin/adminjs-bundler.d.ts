/**
 * Types for the part of AdminJS's `adminjs/bundler` entry point the admin site uses (the package
 * exports it without declarations): the components bundler's Rollup configuration and the class
 * that runs it.
 */
declare module 'adminjs/bundler' {
  export class AssetBundler {
    constructor(input: Record<string, unknown>, output: Record<string, unknown>);
    inputOptions: Record<string, unknown>;
    outputOptions: Record<string, unknown>;
    build(): Promise<void>;
  }
  export const componentsBundler: AssetBundler;
}
