/**
 * The service's icon, at `/favicon.ico` where browsers ask for it on every page: without it each
 * page load logs a 404 in the browser's console. A 16×16 square in the navigation bar's red with a
 * white bar, drawn here as a PNG inside an ICO container (no image file to ship or keep in sync).
 */
import { crc32, deflateSync } from 'node:zlib';
import type { RequestHandler } from 'express';

const SIZE = 16;

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

function png(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIZE, 0);
  header.writeUInt32BE(SIZE, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const rows: number[] = [];
  for (let y = 0; y < SIZE; y += 1) {
    rows.push(0); // filter: none
    for (let x = 0; x < SIZE; x += 1) {
      const bar = y >= 10 && y <= 12 && x >= 3 && x <= 12;
      rows.push(...(bar ? [255, 255, 255] : [163, 0, 0]));
    }
  }
  const signature = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.from(rows))), chunk('IEND', Buffer.alloc(0))]);
}

function ico(image: Buffer): Buffer {
  const header = Buffer.alloc(22);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2); // an icon
  header.writeUInt16LE(1, 4); // one image
  header.set([SIZE, SIZE, 0, 0], 6);
  header.writeUInt16LE(1, 10); // colour planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(22, 18); // where the image starts
  return Buffer.concat([header, image]);
}

export const FAVICON_PATH = '/favicon.ico';

const ICON = ico(png());

/** Serves the icon, cached for a day. */
export const favicon: RequestHandler = (_req, res) => {
  res.setHeader('Content-Type', 'image/x-icon');
  res.setHeader('Cache-Control', 'public, max-age=86400');
  res.status(200).end(ICON);
};
