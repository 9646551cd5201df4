import { StartupError } from './run-process';

/** `host:port` of a connection URL, without its credentials. */
export function endpointOf(url: string, defaultPort: number): string {
  try {
    const u = new URL(url);
    return `${u.hostname || '127.0.0.1'}:${u.port || defaultPort}`;
  } catch {
    return '(unparseable URL)';
  }
}

/** The cause of a connection failure in a few words: the error code and its message. */
export function causeOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return causeOf(error.errors[0]);
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

/**
 * Runs a start-up step that needs one backing service and turns its failure
 * into the one line an operator needs: which variable, which host and port,
 * what went wrong.
 */
export async function requireService<T>(variable: string, what: string, url: string, defaultPort: number, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw new StartupError(`${variable}: cannot use ${what} at ${endpointOf(url, defaultPort)}: ${causeOf(error)}`);
  }
}
