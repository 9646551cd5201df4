import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/**
 * Checks messages with the AI SDK's own runtime schema (`modelMessageSchema`
 * of the `ai` package) and returns one line per invalid message, none when
 * the SDK accepts them all. `ai` is ESM-only and Jest here runs CommonJS, so
 * the check runs in a plain Node child process, which imports ESM natively.
 */
export function aiSdkSchemaErrors(messages: unknown[]): string[] {
  const ai = pathToFileURL(require.resolve('ai')).href;
  const script = `
    const { modelMessageSchema } = await import(${JSON.stringify(ai)});
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const errors = JSON.parse(input).flatMap((message, i) => {
      const result = modelMessageSchema.safeParse(message);
      return result.success ? [] : [\`messages[\${i}]: \${JSON.stringify(result.error.issues)}\`];
    });
    process.stdout.write(JSON.stringify(errors));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { input: JSON.stringify(messages) });
  return JSON.parse(out.toString()) as string[];
}
