/**
 * The controller's options as the entry point parses them (argv → config, src/main.ts), not the schema
 * alone: a default written on a flag once overrode the schema's (--render-cache-entries 256 against 8192,
 * so a requested resync of 1,000 kustomize units ran 1,000 builds and hit the cache 0 times).
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseControllerConfig } from '../config/controller-config.ts';
import { parseControllerArgs, program } from '../main.ts';

describe('packagesync controller: parsed options', () => {
  it('every flag left out means what the config schema says', () => {
    expect(parseControllerArgs([])).toEqual(parseControllerConfig({}));
  });

  it('keeps a fleet of thousands of kustomize packages in the render cache by default', () => {
    const config = parseControllerArgs(['--concurrency', '4']);
    expect(config.renderCacheEntries).toBe(8192);
    expect(config.concurrency).toBe(4);
  });

  it('a flag given wins over the default, and an invalid one names itself', () => {
    const config = parseControllerArgs(['--render-cache-entries', '0', '--no-drift-watch', '--leader-elect']);
    expect(config).toMatchObject({ renderCacheEntries: 0, driftWatch: false, leaderElect: true });
    expect(() => parseControllerArgs(['--render-cache-entries', '-1'])).toThrow(/--render-cache-entries/);
    expect(() => parseControllerArgs(['--git-timeout', 'soon'])).toThrow(/soon/);
  });

  it('tracing is off by default; --otlp-traces-endpoint takes an http(s) URL and never echoes a bad one', () => {
    expect(parseControllerArgs([]).otlpTracesEndpoint).toBeUndefined();
    const url = 'http://jaeger.observability:4318/v1/traces';
    expect(parseControllerArgs(['--otlp-traces-endpoint', url]).otlpTracesEndpoint).toBe(url);
    expect(() => parseControllerArgs(['--otlp-traces-endpoint', 'ftp://x/y'])).toThrow(/--otlp-traces-endpoint/);
    const withPassword = () => parseControllerArgs(['--otlp-traces-endpoint', 'https://u:s3cret@x/v1/traces']);
    expect(withPassword).toThrow(/must not carry credentials/);
    expect(withPassword).not.toThrow(/s3cret/);
  });

  it('the render engine and its pool: one worker per core by default, the flags override', () => {
    const config = parseControllerArgs([]);
    expect(config.renderWorkers).toBe(availableParallelism());
    expect(config.renderWorkerPath).toMatch(/render-worker$/);
    expect(config.renderWorkerKustomizePath).toMatch(/render-worker-kustomize$/);
    expect(parseControllerArgs(['--render-worker-kustomize-path', '/opt/k']).renderWorkerKustomizePath).toBe('/opt/k');
    expect(parseControllerArgs(['--render-engine', 'subprocess', '--render-workers', '3'])).toMatchObject({
      renderEngine: 'subprocess',
      renderWorkers: 3,
    });
    expect(parseControllerArgs(['--render-engine', 'worker']).renderEngine).toBe('worker');
    expect(() => parseControllerArgs(['--render-engine', 'wasm'])).toThrow(/wasm/);
    expect(() => parseControllerArgs(['--render-workers', '0'])).toThrow(/--render-workers/);
  });

  it('serves no web UI unless told --ui-address; a bad address names the flag', () => {
    const off = parseControllerArgs([]);
    expect(off.uiAddress).toBe('0');
    expect(off.uiAuthProxyIdentity).toBeUndefined();
    const config = parseControllerArgs([
      '--ui-address',
      ':9090',
      '--ui-auth-proxy-identity',
      'system:serviceaccount:a:b',
    ]);
    expect(config).toMatchObject({ uiAddress: ':9090', uiAuthProxyIdentity: 'system:serviceaccount:a:b' });
    expect(() => parseControllerArgs(['--ui-address', 'nine'])).toThrow(/--ui-address: bind address "nine"/);
  });

  it('--help shows the default the controller runs with', () => {
    const command = program.commands.find((c) => c.name() === 'controller')!;
    const defaults = parseControllerConfig({}) as Record<string, unknown>;
    const shown = command.options
      .filter((o) => o.defaultValue !== undefined)
      .map((o) => [o.attributeName(), o.defaultValue] as const);
    expect(shown.length).toBeGreaterThan(20);
    for (const [key, value] of shown) expect(value, key).toEqual(defaults[key]);
  });
});
