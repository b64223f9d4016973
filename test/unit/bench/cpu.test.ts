/**
 * bench/cpu.ts: CPU per request from the processes' own accounting. The /proc parsing is checked on
 * a line whose command name holds spaces and parentheses, and the meter once against a real child
 * process that burns a known amount of CPU (no fake: the same /proc file the benchmark reads).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { CpuMeter, coresPer10k, cpuMsOfStat, mergeCpu, processCpuMs, tierOf } from '../../../bench/cpu.ts';

test('cpuMsOfStat reads utime + stime after the last parenthesis', () => {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
  const line = '4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 4 0 12345 0 0';
  assert.equal(cpuMsOfStat(line, 100), 3000);
  assert.equal(cpuMsOfStat(line, 250), 1200);
  assert.throws(() => cpuMsOfStat('4242 (x) S 1', 100), /not a \/proc stat line/);
});

test('a process that is gone reads null', () => {
  assert.equal(processCpuMs(2 ** 22 + 12345), null);
});

test('the meter charges a busy child process, per request, and this process apart', async () => {
  // A child that, when told, burns 400 ms of its own CPU (by its own accounting, so a busy machine
  // only makes it take longer), then says so.
  const burn = "process.stdin.once('data', () => { const u = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; }; const t = u(); while (u() - t < 400); process.stdout.write('done'); }); process.stdout.write('ready');";
  const child = spawn(process.execPath, ['-e', burn], { stdio: ['pipe', 'pipe', 'ignore'] });
  try {
    await once(child.stdout, 'data'); // 'ready': started, idle until told
    const meter = new CpuMeter([{ name: 'mysql001-primary', pid: child.pid! }]);
    const window = meter.open();
    child.stdin.write('go');
    await once(child.stdout, 'data');
    const cpu = window.close(100);
    const childMs = cpu.byProcess['mysql001-primary']!;
    // 400 ms over 100 requests = 4 ms each, within the clock tick (10 ms) and reading stdin.
    assert.ok(childMs >= 3.8 && childMs <= 4.6, `child ms/req ${childMs}`);
    assert.ok(cpu.byProcess.server! >= 0 && cpu.byProcess.server! < 1, `this process ms/req ${cpu.byProcess.server}`);
    assert.equal(cpu.total, Math.round((childMs + cpu.byProcess.server!) * 10_000) / 10_000);
    assert.equal(cpu.loadGenerator, null);
  } finally {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
});

test('cores per 10k req/s sum MariaDB hosts into one tier', () => {
  assert.equal(tierOf('server'), 'gateway');
  assert.equal(tierOf('mysql002-replica'), 'mysql');
  assert.equal(tierOf('redis'), 'redis');
  assert.deepEqual(coresPer10k({ total: 1.1, byProcess: { server: 0.5, 'mysql001-primary': 0.3, 'mysql002-primary': 0.2, redis: 0.1 }, loadGenerator: 0.2 }), {
    gateway: 5,
    mysql: 5,
    redis: 1,
  });
});

test("mergeCpu: one system's windows in turns as one, milliseconds summed over all their requests", () => {
  const one = { total: 0.6, byProcess: { server: 0.5, redis: 0.1 }, loadGenerator: 0.2 };
  assert.equal(mergeCpu([{ cpu: one, requests: 10 }]), one);
  const merged = mergeCpu([
    { cpu: one, requests: 1000 },
    { cpu: { total: 1.2, byProcess: { server: 0.9, redis: 0.1, etcd: 0.2 }, loadGenerator: 0.4 }, requests: 3000 },
  ]);
  // server (0.5 × 1000 + 0.9 × 3000) ÷ 4000 = 0.8; redis 0.1; etcd (absent from the first) 0.6 ÷ 4 = 0.15.
  assert.deepEqual(merged, { total: 1.05, byProcess: { server: 0.8, redis: 0.1, etcd: 0.15 }, loadGenerator: 0.35 });
  assert.equal(mergeCpu([{ cpu: one, requests: 5 }, { cpu: { ...one, loadGenerator: null }, requests: 5 }]).loadGenerator, null);
  assert.throws(() => mergeCpu([]), /no window/);
});
