/**
 * Helm's "Use --debug flag to render out invalid YAML" names helm's own
 * flag, which flotilla passes to no tool (flotilla's --debug shows a stack
 * trace): every failure of the real helm reaches the user without it, with
 * Helm's own message kept — preflight's, and the lifecycle's renders alike.
 */
import { describe, expect, it } from 'vitest';
import { helm, ToolError } from '../../src/tools/index.js';
import { tempDir, writeFiles } from '../support/app-fixture.js';

describe("helm's --debug hint", () => {
  it('is left out of the error of a template that renders invalid YAML, the rest of the message kept', async () => {
    const chart = writeFiles(tempDir(), {
      'Chart.yaml': 'apiVersion: v2\nname: broken\nversion: 0.1.0\n',
      'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b: c\n',
    });
    const error = await helm(['template', 'r', chart]).then(
      () => expect.fail('helm template should fail'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ToolError);
    const { message, stderr } = error as ToolError;
    expect(message).toMatch(/YAML parse error on broken\/templates\/cm\.yaml/);
    expect(message).not.toMatch(/--debug/);
    expect(stderr).not.toMatch(/--debug/);
  });
});
