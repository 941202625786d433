/**
 * What a Chromium process is started with besides its switches: its environment and whether it
 * runs sandboxed. A browser renders hostile pages; a renderer exploit gets what the browser
 * process has. So it gets the few variables Chromium itself reads (paths, fonts, locale,
 * timezone), never the worker's (DATABASE_URL, signing secrets, API keys), and the sandbox
 * whenever the kernel and the user allow it.
 */
import { childEnv } from '@wds/config/child-env';

/** What Chromium reads besides the base list of `childEnv`: fontconfig, its XDG directories, the setuid sandbox helper. */
const BROWSER_ENV = {
  pass: [
    'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_DATA_DIRS', 'XDG_CONFIG_DIRS', 'XDG_RUNTIME_DIR',
    'FONTCONFIG_FILE', 'FONTCONFIG_PATH', 'FONTCONFIG_SYSROOT',
    'CHROME_DEVEL_SANDBOX',
  ],
};

/** The browser's environment: the allow-listed variables of `source` (LC_* included), nothing else. */
export function browserEnv(source: Record<string, string | undefined>): Record<string, string> {
  return childEnv(BROWSER_ENV, source);
}

export type SandboxSetting = 'auto' | 'on' | 'off';

/**
 * How to launch Chromium: `sandbox` (try its sandbox) and `fallback` (if the sandbox cannot
 * start, launch without it rather than fail). Chromium refuses its sandbox to root ("Running as
 * root without --no-sandbox is not supported"), so `auto` tries it exactly when the process is
 * not root; as another user it needs no setuid helper where unprivileged user namespaces are
 * allowed (renderers then run in their own user and pid namespaces under seccomp-bpf), and where
 * they are not (Docker's default seccomp profile) Chromium says "No usable sandbox" and `auto`
 * falls back. `on` never falls back; as root it is a configuration error, reported at start
 * rather than as a failed launch on the first render.
 */
export function chromiumSandbox(setting: SandboxSetting, uid: number | undefined): { sandbox: boolean; fallback: boolean } {
  if (setting === 'off') return { sandbox: false, fallback: false };
  const root = uid === 0;
  if (setting === 'on') {
    if (root) throw new Error('WDS_BROWSER_SANDBOX=on: Chromium cannot run sandboxed as root; run the worker as another user, or set auto/off');
    return { sandbox: true, fallback: false };
  }
  return root ? { sandbox: false, fallback: false } : { sandbox: true, fallback: true };
}

/** A launch failure that says Chromium could not set up its sandbox. */
export function isSandboxFailure(message: string): boolean {
  return /no usable sandbox|sandbox.*(not supported|failed|unavailable)|failed to move to new namespace/i.test(message);
}
