/**
 * What a StarlingX platform will not compute for a flotilla bundle. The
 * platform runs Python plugin wheels only, so the layers flotilla computes at
 * apply time (values templates, catalog images, the policy set, TypeScript
 * plugin overrides with their generated passwords, common/group and service
 * values of the deployment spec) never reach Flux when the platform applies
 * the bundle: the chart runs on its defaults and static overrides. One
 * warning per enabled release that depends on such a layer says which.
 */
import { bundleFolder, PLUGINS_DIR, type OpenedBundle } from '../tarball/index.js';
import { FlotillaError } from '../diagnostics/index.js';
import type { ValueNode } from '../yaml/index.js';
import { MANIFEST_FILE, parseManifest, servesRelease, type ManifestPlugin } from '../plugins/index.js';
import { Session } from '../session/index.js';
import { buildLayers, SYSTEM_LAYER_KINDS } from '../values/index.js';

const hasValues = (node: ValueNode | undefined): boolean => node !== undefined && (node.kind !== 'map' || node.entries.size > 0);

export async function starlingxPlatformGaps(bundle: OpenedBundle): Promise<string[]> {
  let session: Session;
  try {
    session = await Session.fromBundle(bundle);
  } catch (error) {
    // The app payload does not assemble: the checks before this one say why.
    if (error instanceof FlotillaError) return [];
    throw error;
  }
  const app = session.app;
  // A plain-Flux app is never applied by the platform.
  if (app.metadata.target === 'flux') return [];
  const manifestBytes = bundleFolder(bundle.files, PLUGINS_DIR).get(MANIFEST_FILE);
  let plugins: readonly ManifestPlugin[] = [];
  try {
    if (manifestBytes) plugins = parseManifest(manifestBytes.toString('utf8'), `${PLUGINS_DIR}/${MANIFEST_FILE}`).plugins;
  } catch (error) {
    // A broken manifest is reported by the plugin check.
    if (!(error instanceof FlotillaError)) throw error;
  }
  const warnings: string[] = [];
  for (const release of app.enabled) {
    // The layers read from the app's files (no plugin runs here); the plugin layer is known from the manifest.
    const layers = await buildLayers(app, release).catch((error: unknown) => {
      // Layers that do not compute are a problem verify reports (Session.checkAll), not a gap to warn about.
      if (error instanceof FlotillaError) return undefined;
      throw error;
    });
    if (!layers) continue;
    const computed = layers.filter((l) => SYSTEM_LAYER_KINDS.has(l.kind) && hasValues(l.root)).map((l) => (l.file ? `${l.label} (${l.file})` : l.label));
    const plugin = plugins.find((p) => servesRelease(p, release));
    if (plugin) computed.push(`plugin ${plugin.name} (getOverrides, generated passwords)`);
    if (computed.length === 0) continue;
    warnings.push(
      `StarlingX platform: release ${release.name} depends on layers the platform will not compute (${computed.join('; ')}); ` +
        'applied by StarlingX it gets only its static overrides: deploy it with what flotilla starlingx export APP_DIR -d DIR writes (docs/starlingx.md)',
    );
  }
  return warnings;
}
