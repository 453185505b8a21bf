/**
 * The auth endpoints, declared once with their query parameters and the bodies they take (serve
 * parses each body with its schema before the handler): session-routes.ts, profile-routes.ts and
 * jwt-routes.ts serve them, and the app's route table mounts them at /api.
 */
import { z } from 'zod';
import { JSON_OR_FORM } from '../../http/body.js';
import { COMMON, ERRORS, jsonBody, ok, param } from '../../http/openapi-parts.js';
import { route } from '../../http/route-table.js';
import { CSRF_FORM_FIELD } from '../csrf.js';
import { MAX_PASSWORD_LENGTH } from '../password-strength.js';
import { MAX_EMAIL_LENGTH, MAX_NAME_LENGTH } from '../user-fields.js';

const credentials = { username: z.string().min(1).max(150), password: z.string().min(1).max(MAX_PASSWORD_LENGTH) };

export const jsonLoginBody = z.strictObject(credentials).describe('an object {"username": string, "password": string}');

/** Browsers and password managers may add fields to a form: only the known ones are read. */
export const formLoginBody = z
  .object({
    username: z.string().max(150).optional(),
    password: z.string().max(MAX_PASSWORD_LENGTH).optional(),
    [CSRF_FORM_FIELD]: z.string().optional(),
    next: z.string().optional(),
  })
  .describe('form fields username, password, csrfmiddlewaretoken and next');

export const formLogoutBody = z.object({ [CSRF_FORM_FIELD]: z.string().optional() }).describe('the form field csrfmiddlewaretoken');
export const jsonLogoutBody = z.strictObject({}).describe('an empty object or no body');

export const obtainBody = z.strictObject(credentials).describe('an object {"username": string, "password": string}');
export const refreshBody = z.strictObject({ refresh: z.string().min(1) }).describe('an object {"refresh": string}');
export const verifyBody = z.strictObject({ token: z.string().min(1) }).describe('an object {"token": string}');

export const PROFILE_SHAPE =
  'an object with any of "auth-token": "update", "password" with "current_password", "first_name", "last_name", "email"';

export const profileBody = z
  .strictObject({
    'auth-token': z.literal('update', { error: 'The only accepted value is "update" (rotates the token).' }).optional(),
    password: z.string().max(MAX_PASSWORD_LENGTH).optional(),
    current_password: z.string().max(MAX_PASSWORD_LENGTH).optional(),
    first_name: z.string().max(MAX_NAME_LENGTH).optional(),
    last_name: z.string().max(MAX_NAME_LENGTH).optional(),
    email: z.string().max(MAX_EMAIL_LENGTH).optional(),
  })
  .describe(PROFILE_SHAPE);

const FORM = 'application/x-www-form-urlencoded';

export const AUTH_ROUTES = {
  login: route(
    '/auth/login/',
    {
      GET: {
        summary: 'Login page',
        parameters: [...COMMON, param('next', 'Where the page leads once logged in (a path of this site)')],
        responses: { 200: { description: 'HTML form' } },
      },
      POST: {
        summary: 'Session login (form or JSON)',
        parameters: COMMON,
        request: {
          body: { required: true, content: { 'application/json': { schema: jsonLoginBody }, [FORM]: { schema: formLoginBody } } },
        },
        responses: { 200: ok('Logged in'), 302: { description: 'Redirect after form login' }, ...ERRORS },
      },
    },
    undefined,
    JSON_OR_FORM,
  ),
  logout: route(
    '/auth/logout/',
    {
      GET: {
        summary: 'Logout page: a confirmation form that posts to this URL (a GET never logs out)',
        parameters: COMMON,
        responses: { 200: { description: 'HTML form, or JSON naming the user' }, 302: { description: 'Not logged in: to the login page' } },
      },
      POST: {
        summary: 'End the session',
        parameters: COMMON,
        request: {
          body: { required: false, content: { 'application/json': { schema: jsonLogoutBody }, [FORM]: { schema: formLogoutBody } } },
        },
        responses: { 200: ok('Logged out'), 302: { description: 'Redirect after form logout' }, ...ERRORS },
      },
    },
    undefined,
    JSON_OR_FORM,
  ),
  profile: route('/user/', {
    GET: {
      summary: 'Profile of the caller, with the API token (its prefix; the whole key only when this request created it) and JWT URLs',
      parameters: COMMON,
      responses: { 200: ok('Profile'), ...ERRORS },
    },
    POST: {
      summary: 'Rotate the token ({"auth-token":"update"}; the answer shows the new key once), change the password or update the profile',
      parameters: COMMON,
      request: jsonBody(profileBody),
      responses: { 200: ok('Updated'), ...ERRORS },
    },
  }),
  token: route('/token/', {
    POST: {
      summary: 'Obtain a JWT pair',
      parameters: COMMON,
      request: jsonBody(obtainBody),
      responses: { 200: ok('{access, refresh}'), ...ERRORS },
    },
  }),
  refresh: route('/token/refresh/', {
    POST: {
      summary: 'Trade a refresh token (single use) for a new access and refresh token',
      parameters: COMMON,
      request: jsonBody(refreshBody),
      responses: { 200: ok('{access, refresh}'), ...ERRORS },
    },
  }),
  verify: route('/token/verify/', {
    POST: { summary: 'Verify a token', parameters: COMMON, request: jsonBody(verifyBody), responses: { 200: ok('{}'), ...ERRORS } },
  }),
};
