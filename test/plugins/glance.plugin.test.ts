import { describe, expect, it } from 'vitest';
import { testChartContext } from 'flotilla/plugin';
import GlancePlugin, { apiMode } from '../../plugins/040_glance.js';

const ctx = (serviceDefaults: Record<string, unknown>, features: Record<string, unknown> = {}) =>
  testChartContext('glance', { version: { release: '2025.1', serviceDefaults }, spec: { main: { domain: 'cloud.example.com' }, features } });

describe('plugin 040_glance', () => {
  it('serves glance-api through uWSGI when the release says glanceWsgi, through the nginx proxy otherwise', async () => {
    expect(await new GlancePlugin().getOverrides(ctx({ glanceWsgi: true }))).toMatchObject({ api: { mode: 'wsgi' } });
    expect(await new GlancePlugin().getOverrides(ctx({ glanceWsgi: false }))).toMatchObject({ api: { mode: 'proxy' } });
    expect(apiMode({})).toBe('proxy');
  });

  it('sets its accounts from the password store, the admin ones shared', async () => {
    const values = await new GlancePlugin().getOverrides(ctx({}));
    expect(values).toMatchObject({
      endpoints: {
        identity: { auth: { admin: { password: 'test-password-keystone-admin' }, glance: { password: 'test-password-glance-keystone' } } },
        oslo_db: { auth: { admin: { password: 'test-password-mariadb-root' }, glance: { password: 'test-password-glance-db' } } },
        oslo_messaging: { auth: { admin: { password: 'test-password-rabbitmq-admin' }, glance: { password: 'test-password-glance-rabbitmq' } } },
      },
    });
  });

  it('puts the public endpoints under main.domain, over HTTPS when features.tls is on', async () => {
    expect(await new GlancePlugin().getOverrides(ctx({}))).toMatchObject({
      endpoints: {
        image: { internal: { host: 'glance-api', port: 9292, scheme: 'http' }, public: { host: 'glance.cloud.example.com', port: 80, scheme: 'http' } },
        identity: { public: { host: 'keystone.cloud.example.com', path: '/v3' } },
      },
    });
    expect(await new GlancePlugin().getOverrides(ctx({}, { tls: { enabled: true } }))).toMatchObject({
      endpoints: { image: { public: { host: 'glance.cloud.example.com', port: 443, scheme: 'https' } } },
    });
  });
});
