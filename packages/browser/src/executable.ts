/** Finding a Chromium binary (Debian's packages first; `npx playwright install` is not assumed). */
import { chromium } from 'playwright-core';
import { isExecutable, onPath } from '@wds/config/executables';
import { WdsError } from '@wds/errors';

/**
 * The Chromium binary to launch. Order: the explicit path (the worker's `CHROMIUM_PATH`); Debian's
 * `chromium-headless-shell` (the old headless shell: no GPU/UI stack, ~3× cheaper per page);
 * `chromium-headless-shell` on PATH; full Chromium (`/usr/bin/chromium`, `chromium` on PATH);
 * a browser installed by `playwright install`. An explicit path that does not exist is an error
 * rather than a silent fallback.
 */
export function resolveChromiumExecutable(explicit?: string): string {
  const notFound = (message: string) =>
    new WdsError('SERVICE_UNAVAILABLE', { code: 'BROWSER_NOT_FOUND', retryable: false, message });
  if (explicit) {
    if (isExecutable(explicit)) return explicit;
    throw notFound(
      `Chromium executable not found or not executable: ${explicit} (CHROMIUM_PATH). Install Debian's chromium-headless-shell ` +
        '(apt-get install chromium-headless-shell) or point CHROMIUM_PATH at a Chromium binary.',
    );
  }
  const candidates = [
    '/usr/lib/chromium/chromium-headless-shell',
    onPath('chromium-headless-shell'),
    '/usr/bin/chromium',
    onPath('chromium'),
    onPath('chromium-browser'),
  ];
  try {
    candidates.push(chromium.executablePath());
  } catch {
    // playwright-core throws when it has no idea where its own browser would be.
  }
  for (const c of candidates) if (c && isExecutable(c)) return c;
  throw notFound(
    'No Chromium executable found. Install Debian\'s chromium-headless-shell (apt-get install chromium-headless-shell) ' +
      'or set CHROMIUM_PATH to a Chromium binary.',
  );
}
