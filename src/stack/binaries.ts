import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { StackError } from './errors.ts';
import { runToCompletion } from './processes.ts';

export const BINARY_NAMES = ['mariadbd', 'mariadb-install-db', 'redis-server', 'memcached', 'etcd'] as const;
export type BinaryName = (typeof BINARY_NAMES)[number];
export type BinaryPaths = Record<BinaryName, string>;

const APT_PACKAGES = ['mariadb-server', 'redis-server', 'memcached', 'etcd-server'];
export const INSTALL_COMMAND = `sudo apt-get install -y ${APT_PACKAGES.join(' ')}`;

/*
 * Fixed search list instead of $PATH: mariadbd lives in /usr/sbin, which is not
 * on a normal user's PATH, and this module deliberately does not read the env.
 */
const SEARCH_DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin', '/sbin', '/bin'];

function findBinary(name: string): string | null {
  for (const dir of SEARCH_DIRS) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

function locateAll(): { found: Partial<BinaryPaths>; missing: BinaryName[] } {
  const found: Partial<BinaryPaths> = {};
  const missing: BinaryName[] = [];
  for (const name of BINARY_NAMES) {
    const path = findBinary(name);
    if (path === null) missing.push(name);
    else found[name] = path;
  }
  return { found, missing };
}

async function apt(args: string[]): Promise<{ ok: boolean; output: string }> {
  // `env` sets a non-interactive frontend without this module touching process.env.
  const { code, output } = await runToCompletion('env', ['DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args], {
    timeoutMs: 15 * 60_000,
  });
  return { ok: code === 0, output };
}

/**
 * Absolute paths of every server binary the stack needs. When some are missing,
 * installs the Debian packages if we are root, else fails with the exact command.
 */
export async function ensureBinaries(log: (line: string) => void): Promise<BinaryPaths> {
  let { found, missing } = locateAll();
  if (missing.length === 0) return found as BinaryPaths;

  if (process.getuid?.() !== 0) {
    throw new StackError(`Missing binaries: ${missing.join(', ')}. Install them with: ${INSTALL_COMMAND}`);
  }
  log(`missing ${missing.join(', ')}: installing ${APT_PACKAGES.join(' ')} with apt-get`);
  let result = await apt(['install', '-y', ...APT_PACKAGES]);
  if (!result.ok) {
    // A fresh container usually has no package lists yet.
    log('apt-get install failed; running apt-get update and retrying');
    await apt(['update']);
    result = await apt(['install', '-y', ...APT_PACKAGES]);
  }
  ({ found, missing } = locateAll());
  if (!result.ok || missing.length > 0) {
    const tail = result.output.trimEnd().split('\n').slice(-10).join('\n');
    throw new StackError(
      `Could not install ${APT_PACKAGES.join(' ')} (still missing: ${missing.join(', ') || 'none'}). ` +
        `Run: ${INSTALL_COMMAND}\n${tail}`,
    );
  }
  return found as BinaryPaths;
}
