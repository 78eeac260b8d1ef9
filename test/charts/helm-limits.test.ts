/**
 * Helm's loader limits, held to the real `helm`: at each limit flotilla
 * writes what Helm loads and refuses what Helm refuses, naming the file.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeTarGzAsync } from '../../src/tarball/index.js';
import { ChartSizeError, HELM_LOADER_LIMITS, loadChart, packageChart, stageChart } from '../../src/charts/index.js';
import { helm } from '../../src/tools/index.js';
import { tempDir, writeTree } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => cleanup());

const { fileBytes, chartBytes } = HELM_LOADER_LIMITS;
const chartYaml = (name: string, deps = '') => `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n${deps}`;

/** What `helm show chart` says of an archive: its output, or its error. */
async function helmLoads(archive: Buffer, name: string): Promise<string> {
  const file = join(dir, `${name}.tgz`);
  await writeFile(file, archive);
  return helm(['show', 'chart', file]).then(
    (result) => result.stdout,
    (error: Error) => `refused: ${error.message}`,
  );
}

/** The archive of a chart's files as flotilla lays it out, written without the size checks (what Helm would be given). */
const unchecked = (name: string, files: Record<string, Buffer | string>) =>
  writeTarGzAsync(
    Object.entries(files).map(([path, data]) => ({ path: `${name}/${path}`, data })),
    { order: 'given' },
  );

describe("Helm's loader limits", () => {
  it(`a file of ${fileBytes} bytes is packaged and loads; one byte more is refused by flotilla, as by helm package and every archive reader`, async () => {
    await writeTree(dir, { 'fits/Chart.yaml': chartYaml('fits'), 'fits/files/data.bin': Buffer.alloc(fileBytes, 1) });
    const packaged = await packageChart(await loadChart(join(dir, 'fits')));
    expect(await helmLoads(packaged.bytes, 'fits')).toMatch(/^name: fits$/m);

    await writeTree(dir, { 'big/Chart.yaml': chartYaml('big'), 'big/files/data.bin': Buffer.alloc(fileBytes + 1, 1) });
    const big = await loadChart(join(dir, 'big'));
    const refusal = await packageChart(big).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ChartSizeError);
    expect(refusal).toMatchObject({ file: join(dir, 'big', 'files', 'data.bin'), bytes: fileBytes + 1, limit: fileBytes });
    expect((refusal as Error).message).toMatch(/big\/files\/data\.bin: 5\.0 MiB \(5242881 bytes\); Helm loads no chart file larger than 5\.0 MiB \(5242880 bytes\), so it would refuse chart "big"/);
    // A renderable copy is refused too (preflight's).
    await expect(stageChart(big, join(dir, 'staged'))).rejects.toThrow(ChartSizeError);
    // Helm: its packager refuses the folder, and its loader the archive.
    await expect(helm(['package', join(dir, 'big'), '-d', join(dir, 'helm-out')])).rejects.toThrow(/larger than the maximum file size 5242880/);
    expect(await helmLoads(await unchecked('big', { 'Chart.yaml': chartYaml('big'), 'files/data.bin': Buffer.alloc(fileBytes + 1, 1) }), 'big-unchecked')).toMatch(/refused: .*larger than the maximum file size 5242880/);
  });

  it(`files that come to ${chartBytes} bytes, a dependency's included, are refused as Helm's archive loader refuses them; one byte fewer loads`, async () => {
    // A library (file:// dependency) with most of the bytes: a chart's total counts what it vendors.
    const deps = 'dependencies:\n  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n';
    const library: Record<string, Buffer | string> = { 'Chart.yaml': chartYaml('lib') };
    for (let i = 0; i < 15; i++) library[`files/part${i}.bin`] = Buffer.alloc(fileBytes, i + 1);
    const libraryBytes = Object.values(library).reduce((sum, data) => sum + Buffer.byteLength(data), 0);
    /** A chart's own files, so that with the library's they come to `total` bytes. */
    const own = (name: string, total: number): Record<string, Buffer | string> => {
      const files: Record<string, Buffer | string> = { 'Chart.yaml': chartYaml(name, deps) };
      for (let i = 0; i < 4; i++) files[`files/own${i}.bin`] = Buffer.alloc(fileBytes, 20 + i);
      const sofar = libraryBytes + Object.values(files).reduce((sum, data) => sum + Buffer.byteLength(data), 0);
      files['files/last.bin'] = Buffer.alloc(total - sofar, 30);
      return files;
    };
    const under = own('under', chartBytes - 1);
    const at = own('at', chartBytes);
    const inFolder = (folder: string, files: Record<string, Buffer | string>) => Object.fromEntries(Object.entries(files).map(([path, data]) => [`${folder}/${path}`, data]));
    await writeTree(dir, { ...inFolder('lib', library), ...inFolder('under', under), ...inFolder('at', at) });
    const packaged = await packageChart(await loadChart(join(dir, 'under')));
    expect(await helmLoads(packaged.bytes, 'under')).toMatch(/^name: under$/m);

    const refusal = await packageChart(await loadChart(join(dir, 'at'))).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ChartSizeError);
    expect(refusal).toMatchObject({ file: join(dir, 'at', 'Chart.yaml'), bytes: chartBytes, limit: chartBytes });
    expect((refusal as Error).message).toMatch(/chart "at"'s files come to 100\.0 MiB \(104857600 bytes\), dependencies included; Helm loads no chart archive whose files come to 100\.0 MiB \(104857600 bytes\) or more/);
    // What Helm's loader says of that archive, written without the check.
    const files = { ...at, ...inFolder('charts/lib', library) };
    expect(await helmLoads(await unchecked('at', files), 'at-unchecked')).toMatch(/refused: .*decompressed chart is larger than the maximum size 104857600/);
  });
});
