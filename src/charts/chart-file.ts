/**
 * Chart.yaml: reading its tree with Helm's validation rules (helm pkg/chart
 * Metadata.Validate, Dependency.Validate), plus a version rewrite that
 * leaves every other byte (comments, order, quoting) untouched.
 *
 * The fields are read from the tree every reader of the app's YAML gets
 * (src/yaml), so the tree an app already parsed (App.chartYaml) serves
 * the chart loader too, and a build parses each Chart.yaml once. Only a
 * number written where text belongs needs the text as written (`2025.10`
 * is not the number's `2025.1`): that one case reads the document itself.
 */
import { isMap, isScalar } from 'yaml';
import type { SourceLocation } from '../diagnostics/index.js';
import { parseYaml, parseYamlDocument, parseYamlValue, toPlain, YamlSyntaxError, type MapNode, type ParsedText, type ParsedYaml, type ValueNode, type YamlDocument } from '../yaml/index.js';
import { ChartFileError } from './errors.js';
import { isValidVersion } from './semver.js';
import type { ChartApiVersion, ChartDependency, ChartMaintainer, ChartMetadata, ChartType } from './types.js';

const ALIAS = /^[a-zA-Z0-9_-]+$/;

/** The layer label of the trees this module parses (a tree's origins name it; the fields do not depend on it). */
const CHART_YAML_LAYER = 'chart';

/** Chart.yaml as its tree and text: what the fields are read from; its document (CST) parsed once, if ever needed. */
class Source {
  private document?: YamlDocument;

  constructor(readonly chartYaml: ParsedText) {}

  get file(): string {
    return this.chartYaml.parsed.file;
  }

  /** How a plain number is written in the file (`1.20`), which its value alone (1.2) does not say. */
  writtenNumber(path: FieldPath, value: number): string {
    this.document ??= parseYamlDocument(this.chartYaml.text, this.file);
    const node = this.document.doc.getIn(path, true);
    return isScalar(node) && typeof node.source === 'string' && node.source !== '' ? node.source : String(value);
  }
}

type FieldPath = readonly (string | number)[];

/** What `read` returns; a YAML error on the way is a ChartFileError at its place. */
function asChartFileError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof YamlSyntaxError) || !error.location) throw error;
    throw new ChartFileError(error.reason.replace(/^invalid YAML: /, 'not valid YAML: '), error.location);
  }
}

/** The tree of Chart.yaml-shaped text. */
const parseTree = (text: string, file: string): ParsedYaml => asChartFileError(() => parseYaml(text, file, { layer: CHART_YAML_LAYER }));

const where = (node: ValueNode): SourceLocation => node.origin.location;

/** Reads typed fields of one YAML map, reporting the exact place of a bad value. */
class Fields {
  constructor(
    private readonly map: MapNode,
    private readonly source: Source,
    private readonly path: FieldPath,
    private readonly context: string,
  ) {}

  node(key: string): ValueNode | undefined {
    return this.map.entries.get(key);
  }

  at(key: string): SourceLocation {
    return where(this.node(key) ?? this.map);
  }

  fail(key: string, message: string): never {
    throw new ChartFileError(`${this.context}${key}: ${message}`, this.at(key));
  }

  /** A string field. `numbersAsText` keeps a plain number's source text (appVersion: 2025.1). */
  string(key: string, options: { required?: boolean; numbersAsText?: boolean } = {}): string | undefined {
    const node = this.node(key);
    if (node === undefined || (node.kind === 'scalar' && node.value === null)) {
      if (options.required) {
        if (node) this.fail(key, 'is required and must not be empty');
        throw new ChartFileError(`${this.context}${key} is required`, where(this.map));
      }
      return undefined;
    }
    if (node.kind !== 'scalar') return this.fail(key, 'must be a string');
    const value = node.value;
    if (typeof value === 'string') {
      if (options.required && value === '') this.fail(key, 'is required and must not be empty');
      return value;
    }
    if (typeof value === 'number') {
      const written = this.source.writtenNumber([...this.path, key], value);
      if (options.numbersAsText) return written;
      const lossy = String(value) === written ? '' : ` (Helm would read it as ${JSON.stringify(String(value))})`;
      this.fail(key, `${written} is a YAML number, not a string${lossy}; quote it: "${written}"`);
    }
    return this.fail(key, `must be a string, not ${JSON.stringify(value)}`);
  }

  boolean(key: string): boolean | undefined {
    const node = this.node(key);
    if (node === undefined) return undefined;
    if (node.kind !== 'scalar' || typeof node.value !== 'boolean') return this.fail(key, 'must be true or false');
    return node.value;
  }

  stringList(key: string): string[] | undefined {
    const node = this.node(key);
    if (node === undefined) return undefined;
    if (node.kind !== 'seq') return this.fail(key, 'must be a list of strings');
    return node.items.map((item, index) => {
      if (item.kind !== 'scalar' || typeof item.value !== 'string') throw new ChartFileError(`${this.context}${key}[${index}]: must be a string`, where(item));
      return item.value;
    });
  }

  stringMap(key: string): Record<string, string> | undefined {
    const node = this.node(key);
    if (node === undefined) return undefined;
    if (node.kind !== 'map') return this.fail(key, 'must be a map of strings');
    const out: Record<string, string> = {};
    for (const [k, v] of node.entries) {
      if (v.kind !== 'scalar' || typeof v.value !== 'string') throw new ChartFileError(`${this.context}${key}.${k}: must be a string (quote it)`, where(v));
      out[k] = v.value;
    }
    return out;
  }

  /** The map at `key`'s list item `index`, read as fields of their own. */
  item(key: string, index: number, map: MapNode, context: string): Fields {
    return new Fields(map, this.source, [...this.path, key, index], context);
  }
}

function rootFields(source: Source): Fields {
  const root = source.chartYaml.parsed.root;
  if (root?.kind !== 'map') throw new ChartFileError('must be a YAML map', { file: source.file, line: root ? where(root).line : 1, column: 1 });
  return new Fields(root, source, [], '');
}

function readDependencies(fields: Fields, key: string): ChartDependency[] {
  const node = fields.node(key);
  if (node === undefined || (node.kind === 'scalar' && node.value === null)) return [];
  if (node.kind !== 'seq') throw new ChartFileError(`${key}: must be a list`, where(node));
  const seen = new Map<string, ChartDependency>();
  return node.items.map((item, index) => {
    const context = `${key}[${index}].`;
    if (item.kind !== 'map') throw new ChartFileError(`${key}[${index}]: must be a map with at least "name"`, where(item));
    const entry: Fields = fields.item(key, index, item, context);
    const name = entry.string('name', { required: true })!;
    const alias = entry.string('alias');
    if (alias !== undefined && alias !== '' && !ALIAS.test(alias)) entry.fail('alias', `${JSON.stringify(alias)} has characters Helm does not allow (letters, digits, "_" and "-" only)`);
    const importNode = entry.node('import-values');
    if (importNode !== undefined && importNode.kind !== 'seq') entry.fail('import-values', 'must be a list');
    const dependency: ChartDependency = {
      name,
      version: entry.string('version', { numbersAsText: true }),
      repository: entry.string('repository'),
      alias: alias || undefined,
      condition: entry.string('condition'),
      tags: entry.stringList('tags'),
      importValues: importNode === undefined ? undefined : (toPlain(importNode) as unknown[]),
      location: where(item),
    };
    const shown = dependency.alias ?? name;
    const clash = seen.get(shown);
    if (clash) {
      throw new ChartFileError(
        `${key}[${index}]: more than one dependency with name or alias ${JSON.stringify(shown)} (first at line ${clash.location.line}); give them distinct aliases`,
        dependency.location,
      );
    }
    seen.set(shown, dependency);
    return dependency;
  });
}

/** Parses and validates Chart.yaml text. `file` is used in every error. */
export function parseChartYaml(text: string, file: string): ChartMetadata {
  return chartMetadata({ text, parsed: parseTree(text, file) });
}

/** Validates Chart.yaml already parsed (its tree, and the text it was parsed from). */
export function chartMetadata(chartYaml: ParsedText): ChartMetadata {
  const fields: Fields = rootFields(new Source(chartYaml));

  const apiVersion = fields.string('apiVersion', { required: true })!;
  if (apiVersion !== 'v1' && apiVersion !== 'v2') fields.fail('apiVersion', `must be "v1" or "v2", not ${JSON.stringify(apiVersion)}`);
  const name = fields.string('name', { required: true })!;
  if (name === '.' || name === '..' || /[/\\]/.test(name)) fields.fail('name', `${JSON.stringify(name)} is not a valid chart name (no path separators)`);
  const version = fields.string('version', { required: true })!;
  if (!isValidVersion(version)) fields.fail('version', `${JSON.stringify(version)} is not a valid semantic version`);
  const type = fields.string('type') ?? 'application';
  if (type !== 'application' && type !== 'library') fields.fail('type', `must be "application" or "library", not ${JSON.stringify(type)}`);

  const maintainersNode = fields.node('maintainers');
  let maintainers: ChartMaintainer[] | undefined;
  if (maintainersNode !== undefined) {
    if (maintainersNode.kind !== 'seq') fields.fail('maintainers', 'must be a list');
    maintainers = maintainersNode.items.map((item, index) => {
      if (item.kind !== 'map') throw new ChartFileError(`maintainers[${index}]: must be a map (name, email, url)`, where(item));
      const m = fields.item('maintainers', index, item, `maintainers[${index}].`);
      return { name: m.string('name'), email: m.string('email'), url: m.string('url') };
    });
  }

  return {
    apiVersion: apiVersion as ChartApiVersion,
    name,
    version,
    type: type as ChartType,
    // A number here fails `helm lint` ("appVersion should be of type string"), so it is refused like version.
    appVersion: fields.string('appVersion'),
    description: fields.string('description'),
    kubeVersion: fields.string('kubeVersion', { numbersAsText: true }),
    home: fields.string('home'),
    icon: fields.string('icon'),
    sources: fields.stringList('sources'),
    keywords: fields.stringList('keywords'),
    maintainers,
    annotations: fields.stringMap('annotations'),
    deprecated: fields.boolean('deprecated'),
    dependencies: readDependencies(fields, 'dependencies'),
  };
}

/** A v1 chart's requirements.yaml: `dependencies:` as in a v2 Chart.yaml. */
export function parseRequirementsYaml(text: string, file: string): ChartDependency[] {
  const parsed = parseTree(text, file);
  if (parsed.root === undefined) return [];
  return readDependencies(rootFields(new Source({ text, parsed })), 'dependencies');
}

/**
 * Chart.yaml text with `version` replaced. Only the value's bytes change, so
 * comments and layout survive (Helm itself re-serialises Chart.yaml and loses
 * them; keeping the author's file is friendlier and equally valid).
 */
export function rewriteChartVersion(text: string, version: string, file: string): string {
  if (!isValidVersion(version)) throw new ChartFileError(`cannot set version: ${JSON.stringify(version)} is not a valid semantic version`, { file, line: 0, column: 0 });
  const document = asChartFileError(() => parseYamlDocument(text, file));
  const contents = document.doc.contents;
  if (!isMap(contents)) throw new ChartFileError('must be a YAML map', document.locate(contents?.range?.[0] ?? 0));
  const node = contents.items.find((pair) => isScalar(pair.key) && pair.key.value === 'version')?.value;
  if (!isScalar(node) || !node.range) throw new ChartFileError('version is required', document.locate(contents.range?.[0] ?? 0));
  // Plain when YAML would read it back as the same string, else double-quoted.
  const plain = /^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(version) && typeof (parseYamlValue(`v: ${version}`, file) as { v?: unknown } | undefined)?.v === 'string';
  const replacement = plain ? version : JSON.stringify(version);
  const [start, valueEnd] = node.range;
  return text.slice(0, start) + replacement + text.slice(valueEnd);
}
