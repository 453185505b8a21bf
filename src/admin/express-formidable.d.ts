/** Types for express-formidable 1.x (it ships none): the middleware factory the admin router uses. */
declare module 'express-formidable' {
  import type { RequestHandler } from 'express';

  interface FormidableOptions {
    maxFieldsSize?: number;
    maxFileSize?: number;
    maxFields?: number;
    multiples?: boolean;
    uploadDir?: string;
  }

  export default function formidable(options?: FormidableOptions): RequestHandler;
}
