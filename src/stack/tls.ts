/**
 * The local stack's TLS material: a CA of its own and a certificate for 127.0.0.1 / localhost it
 * signed, made once with openssl in `<stack>/tls/` and kept. Every MariaDB server of the stack
 * offers TLS with it (plain connections are still accepted); a client that checks certificates
 * against `ca.pem` (`SHARDQL_MYSQL_TLS_CA`) connects over TLS, as it would to a managed database.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StackError } from './errors.ts';

export interface StackTlsFiles {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

export function stackTlsFiles(stackDir: string): StackTlsFiles {
  const dir = join(stackDir, 'tls');
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') };
}

/**
 * Makes the files if they are not there. Written in a folder of its own and renamed into place, so
 * instances prepared at the same time never see half of them (the loser of the rename drops its copy).
 */
export function ensureStackTls(stackDir: string): StackTlsFiles {
  const files = stackTlsFiles(stackDir);
  if (existsSync(files.ca) && existsSync(files.cert) && existsSync(files.key)) return files;
  const tmp = join(stackDir, `tls.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(tmp, { recursive: true });
  const openssl = (args: string[]): void => {
    try {
      execFileSync('openssl', args, { cwd: tmp, stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      const detail = (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
      throw new StackError(`making the stack's TLS certificates with openssl failed (is openssl installed? scripts/ensure-deps.sh installs it): ${detail}`);
    }
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '3650', '-subj', '/CN=shardql local stack CA']);
  openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
  writeFileSync(join(tmp, 'san.ext'), 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n');
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '3650', '-extfile', 'san.ext']);
  try {
    renameSync(tmp, join(stackDir, 'tls'));
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another instance made them first
  }
  return files;
}
