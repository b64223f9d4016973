/**
 * A gateway and a worker refuse to start on a topology whose type numbers are not the model's:
 * real `shardql serve` and `shardql worker` processes against documents written straight into etcd
 * (publishing would refuse them), each exiting 1 with a message naming the type, both numbers and
 * where the model declares it. The same document with the model's numbers serves: the refusal is the
 * numbers', not the stack's.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { DECLARED } from '../../src/core/model/declared.ts';
import { freshEnv, testStackDir, type TestEnv } from '../helpers/env.ts';
import { TEST_JWT_SECRET } from '../helpers/gateway.ts';
import { killGatewayProcesses, startGatewayProcess } from '../helpers/gatewayProcess.ts';
import { cliArgv } from '../helpers/cli.ts';

const KEY = (name: string): string => `/shardql-test/modelTypeNumbers-${name}/topology`;
const pin = DECLARED.objects.find((o) => o.key === 'pin')!;

let env: TestEnv;

before(async () => {
  env = await freshEnv({ shards: 16, modShards: 8 });
});
after(async () => {
  await killGatewayProcesses();
  await env?.close();
});

/** Writes `doc` at the key of `name` as it is: no validation, as a hand edit or an older tool would. */
async function put(name: string, types: Record<string, number>): Promise<string> {
  const doc = { ...env.doc, idLayout: { ...env.doc.idLayout, types } };
  await env.etcd.put(KEY(name)).value(JSON.stringify(doc)).exec();
  return KEY(name);
}

/** `shardql worker` on the topology at `key`, until it ends (or 60 s): its exit code and stderr. */
function runWorker(key: string): Promise<{ code: number | null; stderr: string }> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('SHARDQL_')) delete env[k];
  Object.assign(env, { SHARDQL_STACK_DIR: testStackDir(), SHARDQL_ENV: 'development', SHARDQL_TOPOLOGY_KEY: key, SHARDQL_JWT_SECRET: TEST_JWT_SECRET });
  const child = spawn(process.execPath, cliArgv('worker'), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the worker did not end within 60 s; stderr: ${stderr}`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** The message `startGatewayProcess` rejects with when the process ends before it listens. */
async function gatewayRefusal(key: string): Promise<string> {
  try {
    const gw = await startGatewayProcess(env, { topologyKey: key, timeoutMs: 60_000 });
    await gw.stop();
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail('the gateway started');
}

describe('Type numbers are checked against the topology when a process starts', () => {
  test("a gateway refuses a topology numbering the model's pin otherwise: exit 1, the type, both numbers, the model's file:line", async () => {
    const key = await put('changed', { ...env.doc.idLayout.types, pin: 7 });
    const message = await gatewayRefusal(key);
    assert.match(message, /ended before it listened \(exit 1\)/);
    assert.ok(
      message.includes(`idLayout.types.pin is 7, the model declares pin as ${pin.typeNumber} (${pin.declaredAt}), expected the same number: a type number never changes`),
      message,
    );
    assert.match(pin.declaredAt, /^schema\/schema\.graphql:\d+$/);
  });

  test("a gateway and a worker refuse a topology listing a type the model dropped: its number stays reserved", async () => {
    const key = await put('dropped', { ...env.doc.idLayout.types, idea: 9 });
    const expected = "idLayout.types.idea is 9, the model declares no idea, expected it declared with number 9: a removed type's number stays reserved";
    const message = await gatewayRefusal(key);
    assert.match(message, /ended before it listened \(exit 1\)/);
    assert.ok(message.includes(expected), message);
    const worker = await runWorker(key);
    assert.equal(worker.code, 1, worker.stderr);
    assert.ok(worker.stderr.includes(expected), worker.stderr);
  });

  test("a topology giving one of the model's numbers to another type is refused: one number, one type", async () => {
    const board = DECLARED.objects.find((o) => o.key === 'board')!;
    const { board: _renamed, ...rest } = env.doc.idLayout.types as Record<string, number>;
    const key = await put('reused', { ...rest, collection: board.typeNumber });
    const message = await gatewayRefusal(key);
    assert.match(message, /ended before it listened \(exit 1\)/);
    assert.ok(
      message.includes(`idLayout.types gives ${board.typeNumber} to collection, the model gives it to board (${board.declaredAt}), expected a number the topology has not given: a type number is never reused`),
      message,
    );
  });

  test("the same topology with the model's numbers serves", async () => {
    const key = await put('agrees', { ...env.doc.idLayout.types });
    const gw = await startGatewayProcess(env, { topologyKey: key, timeoutMs: 120_000 });
    try {
      const res = await gw.gql('{ __typename }');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data, { __typename: 'Query' });
      assert.equal(res.body.errors, undefined);
    } finally {
      const exit = await gw.stop();
      assert.deepEqual(exit, { code: 0, signal: null }, `stdout:\n${gw.stdout().slice(-3000)}\nstderr:\n${gw.stderr()}`);
    }
  });
});
