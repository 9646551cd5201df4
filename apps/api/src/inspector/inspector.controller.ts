import { Controller, Get, Header, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The inspector page (issue 15): static assets built by `npm run build`
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

const ASSETS: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'inspector.js': 'text/javascript; charset=utf-8',
  // Modules inspector.js imports (relative to /inspect/).
  'dom.js': 'text/javascript; charset=utf-8',
  'search.js': 'text/javascript; charset=utf-8',
  'inspector.css': 'text/css; charset=utf-8',
};

/** dist/apps/api/src/inspector → dist/apps/inspector/public (the build output). */
export const INSPECTOR_PUBLIC_DIR = join(__dirname, '..', '..', '..', 'inspector', 'public');

function loadAssets(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of Object.keys(ASSETS)) {
    try {
      files.set(name, readFileSync(join(dir, name)));
    } catch {
      // Not built (e.g. a unit test importing the module): the page answers 404.
    }
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
    const body = Object.hasOwn(ASSETS, name) ? this.files.get(name) : undefined;
    if (!body) throw new NotFoundException(`No inspector asset ${JSON.stringify(name.slice(0, 100))}`);
    res.setHeader('content-security-policy', INSPECTOR_CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('cross-origin-opener-policy', 'same-origin');
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('content-type', ASSETS[name]);
    res.status(200).end(body);
  }
}
