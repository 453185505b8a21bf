import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { requestUrl } from '../../../src/http/base-url.js';

const request = (originalUrl: string, host = 'api.example.org'): Request =>
  ({ protocol: 'https', originalUrl, get: (name: string) => (name.toLowerCase() === 'host' ? host : undefined) }) as unknown as Request;

describe('requestUrl', () => {
  it.each([
    ['/api/data_store/data/?page=2', 'https://api.example.org/api/data_store/data/?page=2'],
    ['//', 'https://api.example.org//'],
    ['///', 'https://api.example.org///'],
    ['//a%2f', 'https://api.example.org//a%2f'],
    ['//evil.example/api/?page=2', 'https://api.example.org//evil.example/api/?page=2'],
    ['/\\evil.example', 'https://api.example.org//evil.example'],
    ['*', 'https://api.example.org/*'],
  ])('reads %s as a path on this site', (target, expected) => {
    expect(requestUrl(request(target)).href).toBe(expected);
  });
});
