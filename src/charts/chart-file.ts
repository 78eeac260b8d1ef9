/**
 * Chart.yaml: parsing with positions and Helm's validation rules (helm
 * pkg/chart Metadata.Validate, Dependency.Validate), plus a version rewrite
 * that leaves every other byte (comments, order, quoting) untouched.
 */
import { isMap, isScalar, isSeq, type Document, type Node, type Pair, type Scalar, type YAMLMap } from 'yaml';
import type { SourceLocation } from '../diagnostics/index.js';
import { parseYamlDocument, parseYamlValue, YamlSyntaxError } from '../document/index.js';
import { ChartFileError } from './errors.js';
import { isValidVersion } from './semver.js';
import type { ChartApiVersion, ChartDependency, ChartMaintainer, ChartMetadata, ChartType } from './types.js';

const ALIAS = /^[a-zA-Z0-9_-]+$/;

interface Parsed {
  readonly doc: Document;
  readonly where: (node: Node | null | undefined) => SourceLocation;
}

function parseYaml(text: string, file: string): Parsed {
  try {
    const yaml = parseYamlDocument(text, file);
    return { doc: yaml.doc, where: (node) => yaml.locate(node?.range?.[0] ?? 0) };
  } catch (error) {
    if (!(error instanceof YamlSyntaxError) || !error.location) throw error;
    throw new ChartFileError(error.reason.replace(/^invalid YAML: /, 'not valid YAML: '), error.location);
  }
}

/** Reads typed fields of one YAML map, reporting the exact place of a bad value. */
class Fields {
  constructor(
    private readonly map: YAMLMap,
    private readonly parsed: Parsed,
    private readonly context: string,
  ) {}

  pair(key: string): Pair | undefined {
    return this.map.items.find((p) => isScalar(p.key) && p.key.value === key) as Pair | undefined;
  }

  node(key: string): Node | undefined {
    const value = this.pair(key)?.value;
    return value === null || value === undefined ? undefined : (value as Node);
  }

  at(key: string): SourceLocation {
    const pair = this.pair(key);
    return this.parsed.where((pair?.value as Node | undefined) ?? (pair?.key as Node | undefined) ?? this.map);
  }

  fail(key: string, message: string): never {
    throw new ChartFileError(`${this.context}${key}: ${message}`, this.at(key));
  }

  /** A string field. `numbersAsText` keeps a plain number's source text (appVersion: 2025.1). */
  string(key: string, options: { required?: boolean; numbersAsText?: boolean } = {}): string | undefined {
    const node = this.node(key);
    if (node === undefined || (isScalar(node) && node.value === null)) {
      if (options.required) {
        if (this.pair(key)) this.fail(key, 'is required and must not be empty');
        throw new ChartFileError(`${this.context}${key} is required`, this.parsed.where(this.map));
      }
      return undefined;
    }
    if (!isScalar(node)) this.fail(key, 'must be a string');
    const scalar = node as Scalar;
    if (typeof scalar.value === 'string') {
      if (options.required && scalar.value === '') this.fail(key, 'is required and must not be empty');
      return scalar.value;
    }
    if (options.numbersAsText && typeof scalar.value === 'number' && scalar.source !== undefined) return scalar.source;
    if (typeof scalar.value === 'number' && scalar.source !== undefined) {
      const lossy = String(scalar.value) === scalar.source ? '' : ` (Helm would read it as ${JSON.stringify(String(scalar.value))})`;
      this.fail(key, `${scalar.source} is a YAML number, not a string${lossy}; quote it: "${scalar.source}"`);
    }
    return this.fail(key, `must be a string, not ${JSON.stringify(scalar.value)}`);
  }

  boolean(key: string): boolean | undefined {
    const node = this.node(key);
    if (node === undefined) return undefined;
    if (!isScalar(node) || typeof node.value !== 'boolean') this.fail(key, 'must be true or false');
    return (node as Scalar<boolean>).value;
  }

  stringList(key: string): string[] | undefined {
    const node = this.node(key);
    if (node === undefined) return undefined;
    if (!isSeq(node)) this.fail(key, 'must be a list of strings');
    return node.items.map((item, index) => {
      if (!isScalar(item) || typeof item.value !== 'string') {
        throw new ChartFileError(`${this.context}${key}[${index}]: must be a string`, this.parsed.where(item as Node));
      }
      return item.value;
    });
  }

  stringMap(key: string): Record<string, string> | undefined {
    const node = this.node(key);
    if (node === undefined) return undefined;
    if (!isMap(node)) this.fail(key, 'must be a map of strings');
    const out: Record<string, string> = {};
    for (const pair of node.items) {
      const k = isScalar(pair.key) ? String(pair.key.value) : undefined;
      const v = pair.value;
      if (k === undefined || !isScalar(v) || typeof v.value !== 'string') {
        throw new ChartFileError(`${this.context}${key}.${k ?? '?'}: must be a string (quote it)`, this.parsed.where((v as Node) ?? (pair.key as Node)));
      }
      out[k] = v.value;
    }
    return out;
  }
}

function rootMap(parsed: Parsed, file: string): YAMLMap {
  const contents = parsed.doc.contents;
  if (!isMap(contents)) throw new ChartFileError('must be a YAML map', { file, line: contents ? parsed.where(contents).line : 1, column: 1 });
  return contents;
}

function readDependencies(node: Node | undefined, parsed: Parsed, key: string): ChartDependency[] {
  if (node === undefined || (isScalar(node) && node.value === null)) return [];
  if (!isSeq(node)) throw new ChartFileError(`${key}: must be a list`, parsed.where(node));
  const seen = new Map<string, ChartDependency>();
  return node.items.map((item, index) => {
    const context = `${key}[${index}].`;
    if (!isMap(item)) throw new ChartFileError(`${key}[${index}]: must be a map with at least "name"`, parsed.where(item as Node));
    const fields: Fields = new Fields(item, parsed, context);
    const name = fields.string('name', { required: true })!;
    const alias = fields.string('alias');
    if (alias !== undefined && alias !== '' && !ALIAS.test(alias)) fields.fail('alias', `${JSON.stringify(alias)} has characters Helm does not allow (letters, digits, "_" and "-" only)`);
    const importNode = fields.node('import-values');
    if (importNode !== undefined && !isSeq(importNode)) fields.fail('import-values', 'must be a list');
    const dependency: ChartDependency = {
      name,
      version: fields.string('version', { numbersAsText: true }),
      repository: fields.string('repository'),
      alias: alias || undefined,
      condition: fields.string('condition'),
      tags: fields.stringList('tags'),
      importValues: importNode === undefined ? undefined : (importNode.toJSON() as unknown[]),
      location: parsed.where(item),
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
  const parsed = parseYaml(text, file);
  const map = rootMap(parsed, file);
  const fields: Fields = new Fields(map, parsed, '');

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
    if (!isSeq(maintainersNode)) fields.fail('maintainers', 'must be a list');
    maintainers = maintainersNode.items.map((item, index) => {
      if (!isMap(item)) throw new ChartFileError(`maintainers[${index}]: must be a map (name, email, url)`, parsed.where(item as Node));
      const m = new Fields(item, parsed, `maintainers[${index}].`);
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
    dependencies: readDependencies(fields.node('dependencies'), parsed, 'dependencies'),
  };
}

/** A v1 chart's requirements.yaml: `dependencies:` as in a v2 Chart.yaml. */
export function parseRequirementsYaml(text: string, file: string): ChartDependency[] {
  const parsed = parseYaml(text, file);
  if (parsed.doc.contents === null) return [];
  const map = rootMap(parsed, file);
  return readDependencies(new Fields(map, parsed, '').node('dependencies'), parsed, 'dependencies');
}

/**
 * Chart.yaml text with `version` replaced. Only the value's bytes change, so
 * comments and layout survive (Helm itself re-serialises Chart.yaml and loses
 * them; keeping the author's file is friendlier and equally valid).
 */
export function rewriteChartVersion(text: string, version: string, file: string): string {
  if (!isValidVersion(version)) throw new ChartFileError(`cannot set version: ${JSON.stringify(version)} is not a valid semantic version`, { file, line: 0, column: 0 });
  const parsed = parseYaml(text, file);
  const map = rootMap(parsed, file);
  const node = new Fields(map, parsed, '').node('version');
  if (!node || !isScalar(node) || !node.range) throw new ChartFileError('version is required', parsed.where(map));
  // Plain when YAML would read it back as the same string, else double-quoted.
  const plain = /^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(version) && typeof (parseYamlValue(`v: ${version}`, file) as { v?: unknown } | undefined)?.v === 'string';
  const replacement = plain ? version : JSON.stringify(version);
  const [start, valueEnd] = node.range;
  return text.slice(0, start) + replacement + text.slice(valueEnd);
}
