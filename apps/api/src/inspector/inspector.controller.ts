import { Controller, Get, Header, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

/**
 * The inspector page: static assets built by `npm run build`
 * into dist/apps/inspector/public, served here with a strict CSP. The page
 * holds no privilege of its own: it calls the tenant API with the API key
 * the user types, kept in sessionStorage.
 */
export const INSPECTOR_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Content types by extension: the build output holds the page, its style sheet and its ES modules. */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** dist/apps/api/src/inspector → dist/apps/inspector/public (the build output). */
export const INSPECTOR_PUBLIC_DIR = join(__dirname, '..', '..', '..', 'inspector', 'public');

/**
 * Every file of the build output with a known type, read once at start: a
 * request names one of them or gets a 404, so no path reaches the disk, and a
 * module added to the page is served with no list to keep.
 */
function loadAssets(dir: string): Map<string, { type: string; body: Buffer }> {
  const files = new Map<string, { type: string; body: Buffer }>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    // Not built (e.g. a unit test importing the module): the page answers 404.
    return files;
  }
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (type) files.set(name, { type, body: readFileSync(join(dir, name)) });
  }
  return files;
}

@ApiExcludeController()
@Controller('inspect')
export class InspectorController {
  private readonly files = loadAssets(INSPECTOR_PUBLIC_DIR);

  @Get()
  page(@Res() res: Response): void {
    this.send(res, 'index.html');
  }

  @Get(':file')
  @Header('cache-control', 'no-cache')
  asset(@Param('file') file: string, @Res() res: Response): void {
    this.send(res, file);
  }

  private send(res: Response, name: string): void {
    const asset = this.files.get(name);
    if (!asset) throw new NotFoundException(`No inspector asset ${JSON.stringify(name.slice(0, 100))}`);
    res.setHeader('content-security-policy', INSPECTOR_CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('cross-origin-opener-policy', 'same-origin');
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('content-type', asset.type);
    res.status(200).end(asset.body);
  }
}
