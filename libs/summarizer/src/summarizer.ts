import type { Message, SummarizerKind, SummarizerRequest } from '@app/domain';
import type { ProviderEndpoint } from '@app/config';

/** What one summary is made from: the prompt LLM summarizers send, and the head the built-in one reads instead. */
export interface SummaryRequest {
  /** Provider-neutral prompt: system, alternating turns ending with the instruction, no tools. */
  prompt: SummarizerRequest;
  head: readonly Message[];
  previousSummary: string | null;
  /** The marker's additive instructions. */
  instructions: string | null;
  /** Whether to answer with a `<retain>` block too. */
  retain: boolean;
  /** Size bound of the reply in estimated tokens. */
  maxTokens: number;
}

export interface SummarizeOptions {
  /** The compaction model (LLM summarizers). */
  model: string;
  /** Aborts the call: its timeout, or the worker shutting down. */
  signal: AbortSignal;
}

/** The port every summarizer implements: the reply's text, parsed by the domain. */
export interface Summarizer {
  readonly name: string;
  summarize(request: SummaryRequest, options: SummarizeOptions): Promise<string>;
}

export type SummarizerErrorKind =
  /** The provider refused the prompt as longer than its window (context_length_exceeded): trim the head and retry. */
  | 'input_overflow'
  /** The call was aborted (its signal fired). */
  | 'aborted'
  | 'error';

/** A provider failure, classified so the domain can pick the fallback. */
export class SummarizerError extends Error {
  constructor(
    readonly kind: SummarizerErrorKind,
    message: string,
    /** Worth another try with the same provider (5xx, 429, connection errors). */
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'SummarizerError';
  }
}

/** Provider messages that mean "the prompt is longer than the window" (OpenAI, vLLM, LiteLLM, Ollama, Anthropic). */
const OVERFLOW_MESSAGE =
  /context[_ ]length[_ ]exceeded|maximum context length|context window|prompt is too long|too many tokens|reduce the length of the (?:messages|prompt)|input is too long/i;

/** Classifies an SDK error by its HTTP status, code and message. */
export function classifyProviderError(error: unknown, signal: AbortSignal): SummarizerError {
  if (signal.aborted) return new SummarizerError('aborted', 'the summarizer call was aborted', false);
  const status = typeof (error as { status?: unknown })?.status === 'number' ? (error as { status: number }).status : undefined;
  const code = (error as { code?: unknown; errorCode?: unknown })?.code ?? (error as { errorCode?: unknown })?.errorCode;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'context_length_exceeded' || status === 413 || ((status === 400 || status === 422) && OVERFLOW_MESSAGE.test(message))) {
    return new SummarizerError('input_overflow', message, false);
  }
  // No status: a connection error or timeout inside the SDK.
  const retryable = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
  return new SummarizerError('error', status === undefined ? message : `HTTP ${status}: ${message}`, retryable);
}

/** Where the fallback chain finds its summarizers (Summarizers, or a test's own). */
export interface SummarizerLookup {
  readonly heuristic: Summarizer;
  /** A session's configured summarizer, or null when its provider is not configured here. */
  get(kind: SummarizerKind): Summarizer | null;
}

/**
 * A summarizer on a provider's official SDK. The client is made on the first
 * call, not at boot (the SDKs weigh 10-15 MB in every process that never
 * summarizes), and whatever the call throws is classified for the fallback
 * chain, which alone decides about retries.
 */
export abstract class SdkSummarizer<C> implements Summarizer {
  abstract readonly name: string;
  private client: Promise<C> | undefined;

  constructor(
    protected readonly endpoint: ProviderEndpoint,
    protected readonly timeoutMs: number,
  ) {}

  protected abstract createClient(): Promise<C>;

  /** One completion of the prompt: the summary's text. */
  protected abstract complete(client: C, prompt: SummaryRequest['prompt'], options: SummarizeOptions): Promise<string>;

  async summarize(request: SummaryRequest, options: SummarizeOptions): Promise<string> {
    try {
      return await this.complete(await (this.client ??= this.createClient()), request.prompt, options);
    } catch (error) {
      throw classifyProviderError(error, options.signal);
    }
  }
}
