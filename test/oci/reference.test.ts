import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { credentialsFromConfig, InvalidReference, isLoopback, parseChallenges, parseReference, RegistryConfigError } from '../../src/oci/index.js';

const DIGEST = `sha256:${'a'.repeat(64)}`;

describe('parseReference', () => {
  it.each([
    ['nginx', 'docker.io', 'library/nginx', undefined, undefined],
    ['nginx:1.27', 'docker.io', 'library/nginx', '1.27', undefined],
    ['docker.io/openstackhelm/glance:2024.1-ubuntu_jammy', 'docker.io', 'openstackhelm/glance', '2024.1-ubuntu_jammy', undefined],
    ['index.docker.io/library/busybox', 'docker.io', 'library/busybox', undefined, undefined],
    ['quay.io/airshipit/kubernetes-entrypoint:v1.0.0', 'quay.io', 'airshipit/kubernetes-entrypoint', 'v1.0.0', undefined],
    ['localhost/app', 'localhost', 'app', undefined, undefined],
    ['127.0.0.1:5000/charts/glance:0.3.1', '127.0.0.1:5000', 'charts/glance', '0.3.1', undefined],
    ['[::1]:5000/a/b:t', '[::1]:5000', 'a/b', 't', undefined],
    [`registry.example:443/ns/img@${DIGEST}`, 'registry.example:443', 'ns/img', undefined, DIGEST],
    [`registry.example/ns/img:1.0@${DIGEST}`, 'registry.example', 'ns/img', '1.0', DIGEST],
    ['oci://127.0.0.1:5000/apps/stx-openstack:1.0-2', '127.0.0.1:5000', 'apps/stx-openstack', '1.0-2', undefined],
    ['oci://myregistry/charts/glance', 'myregistry', 'charts/glance', undefined, undefined],
    ['a__b/c.d-e/f', 'docker.io', 'a__b/c.d-e/f', undefined, undefined],
  ])('%s', (text, registry, repository, tag, digest) => {
    const ref = parseReference(text);
    expect({ registry: ref.registry, repository: ref.repository, tag: ref.tag, digest: ref.digest }).toEqual({ registry, repository, tag, digest });
  });

  it('prints the normalised form and targets the digest, the tag or latest', () => {
    expect(parseReference('nginx').toString()).toBe('docker.io/library/nginx');
    expect(parseReference('nginx').target).toBe('latest');
    expect(parseReference('x.io/a:1').target).toBe('1');
    expect(parseReference(`x.io/a:1@${DIGEST}`).target).toBe(DIGEST);
    expect(parseReference('x.io/a:1').withDigest(DIGEST).toString()).toBe(`x.io/a:1@${DIGEST}`);
  });

  it.each([
    ['', /empty/],
    ['Nginx', /repository part "Nginx" must be lowercase/],
    ['x.io/a:', /tag "" must be/],
    ['x.io/a:.bad', /tag ".bad"/],
    [`x.io/a:${'t'.repeat(129)}`, /tag/],
    ['x.io/a@sha256:abc', /digest "sha256:abc" is not sha256/],
    ['x.io/a@md5:0123', /digest/],
    ['x.io//a', /no repository after the registry/],
    ['x.io/a//b', /repository part ""/],
    ['x.io/a--/b', /repository part "a--"/],
    ['oci://x.io', /no repository after the registry/],
    ['oci://bad_host/a', /registry "bad_host" is not host\[:port\]/],
    ['x.io:port/a', /registry "x.io:port"/],
    ['x.io/a b', /white space/],
    [`x.io/${'a'.repeat(260)}`, /longer than 255/],
  ])('refuses %j', (text, message) => {
    expect(() => parseReference(text)).toThrow(InvalidReference);
    expect(() => parseReference(text)).toThrow(message);
  });

  it('knows loopback hosts', () => {
    expect(isLoopback('127.0.0.1:5000')).toBe(true);
    expect(isLoopback('127.1.2.3')).toBe(true);
    expect(isLoopback('localhost:80')).toBe(true);
    expect(isLoopback('[::1]:5000')).toBe(true);
    expect(isLoopback('registry.example:5000')).toBe(false);
    expect(isLoopback('10.0.0.1')).toBe(false);
  });
});

describe('parseChallenges', () => {
  it('reads Bearer parameters with quoted commas, and several challenges in one header', () => {
    expect(parseChallenges('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"')).toEqual([
      { scheme: 'bearer', params: { realm: 'https://auth.example/token', service: 'registry.example', scope: 'repository:a/b:pull,push' } },
    ]);
    expect(parseChallenges('Basic realm="x", Bearer realm=http://t/token, service=s')).toEqual([
      { scheme: 'basic', params: { realm: 'x' } },
      { scheme: 'bearer', params: { realm: 'http://t/token', service: 's' } },
    ]);
    expect(parseChallenges('')).toEqual([]);
  });
});

describe('credentialsFromConfig', () => {
  const auth = (s: string) => Buffer.from(s).toString('base64');

  it('reads auth, username/password, identity and registry tokens, matching keys as docker does', () => {
    const store = credentialsFromConfig(
      JSON.stringify({
        auths: {
          'https://index.docker.io/v1/': { auth: auth('hub:pw:with:colons') },
          'registry.example:5000': { username: 'u', password: 'p' },
          'https://ghcr.example/': { identitytoken: 'refresh' },
          'quay.example': { registrytoken: 'tok' },
          'empty.example': {},
        },
        credsStore: 'desktop',
      }),
      'config.json',
    );
    expect(store.credentialFor('docker.io')).toEqual({ kind: 'basic', username: 'hub', password: 'pw:with:colons' });
    expect(store.credentialFor('registry.example:5000')).toEqual({ kind: 'basic', username: 'u', password: 'p' });
    expect(store.credentialFor('ghcr.example')).toEqual({ kind: 'identity-token', token: 'refresh' });
    expect(store.credentialFor('quay.example')).toEqual({ kind: 'registry-token', token: 'tok' });
    expect(store.credentialFor('empty.example')).toBeUndefined();
    expect(store.credentialFor('other.example')).toBeUndefined();
  });

  it.each([
    ['{', /config.json: not valid JSON/],
    ['[]', /config.json: expected a JSON object/],
    ['{"auths": []}', /"auths" must be an object/],
    ['{"auths": {"x.io": "s"}}', /auths\["x.io"\] must be an object/],
    ['{"auths": {"x.io": {"auth": "bm9jb2xvbg=="}}}', /auths\["x.io"\].auth is not base64 of "username:password"/],
    ['{"auths": {"x.io": {"username": "u"}}}', /username without a password/],
    ['{"auths": {"x.io": {"password": 5}}}', /auths\["x.io"\].password must be a string/],
  ])('refuses %s', (text, message) => {
    expect(() => credentialsFromConfig(text, 'config.json')).toThrow(RegistryConfigError);
    expect(() => credentialsFromConfig(text, 'config.json')).toThrow(message);
  });

  it('asks credential helpers as docker does: credHelpers per registry, else credsStore', () => {
    const bin = mkdtempSync(join(tmpdir(), 'flotilla-cred-helper-'));
    const log = join(bin, 'asked');
    // A helper speaking docker's protocol: the server on stdin, JSON on stdout, "credentials not found" when it has none.
    const helper = (name: string, answers: Record<string, string>) => {
      const cases = Object.entries(answers)
        .map(([server, json]) => `  ${JSON.stringify(server)}) echo '${json}' ;;`)
        .join('\n');
      writeFileSync(
        join(bin, `docker-credential-${name}`),
        `#!/bin/sh\nread server\necho "${name} $server" >> ${JSON.stringify(log)}\ncase "$server" in\n${cases}\n  *) echo "credentials not found in native keychain"; exit 1 ;;\nesac\n`,
      );
      chmodSync(join(bin, `docker-credential-${name}`), 0o755);
    };
    helper('store', { 'https://index.docker.io/v1/': '{"ServerURL":"x","Username":"hub","Secret":"hubpw"}' });
    helper('cloud', { 'gcr.example': '{"Username":"<token>","Secret":"refresh"}' });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const store = credentialsFromConfig(
        JSON.stringify({
          credsStore: 'store',
          credHelpers: { 'gcr.example': 'cloud', 'broken.example': 'absent' },
          auths: { 'inline.example': { auth: auth('i:p') }, 'docker.io': {} },
        }),
        'config.json',
      );
      expect(store.credentialFor('docker.io')).toEqual({ kind: 'basic', username: 'hub', password: 'hubpw' });
      expect(store.credentialFor('gcr.example')).toEqual({ kind: 'identity-token', token: 'refresh' });
      expect(store.credentialFor('inline.example')).toEqual({ kind: 'basic', username: 'i', password: 'p' });
      expect(store.credentialFor('other.example')).toBeUndefined();
      expect(store.credentialFor('docker.io')).toEqual({ kind: 'basic', username: 'hub', password: 'hubpw' });
      expect(() => store.credentialFor('broken.example')).toThrow(
        /config.json: credential helper docker-credential-absent for broken.example cannot run \(no such file or folder\)/,
      );
      // Each registry is asked once.
      expect(readFileSync(log, 'utf8')).toBe('store https://index.docker.io/v1/\ncloud gcr.example\nstore other.example\n');
    } finally {
      process.env.PATH = path;
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
