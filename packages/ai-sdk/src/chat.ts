import type { Instructions, LanguageModelUsage, ModelMessage, StepResult, ToolSet } from 'ai';
import type { AiSdkStep, SessionStoreClient } from '@session-store/client';

export interface SessionStoreChatOptions {
  client: SessionStoreClient;
  /** The session holding the chat (create it with `client.createSession`). */
  sessionId: string;
}

/** What `generateText`/`streamText` take as their prompt: the session's system prompt and the compacted view. */
export interface ChatPrompt {
  instructions?: Instructions;
  messages: ModelMessage[];
}

/** The fields of a step the service reads; a `StepResult` and a `generateText` result both have them. */
type Step = Pick<StepResult<ToolSet>, 'response' | 'usage' | 'finishReason'>;

/**
 * Chat persistence for the Vercel AI SDK in the session store. The store
 * holds the chat; each model call is sent the store's context (compacted
 * when the session grew past its threshold) in the SDK's own `ModelMessage`
 * shapes, and each step goes back whole (its response messages, usage and
 * finish reason) as the SDK returned it.
 *
 * ```ts
 * const chat = new SessionStoreChat({ client, sessionId });
 * await chat.addMessages([{ role: 'user', content: 'Run the tests' }]);
 * const result = await generateText({ model, tools, stopWhen: stepCountIs(5), ...(await chat.load()), prepareStep: chat.prepareStep });
 * await chat.saveSteps(result.steps);
 * ```
 */
export class SessionStoreChat {
  private readonly client: SessionStoreClient;
  readonly sessionId: string;
  /** Steps already in the store: `prepareStep` saves the steps before it, `saveSteps` the rest. */
  private readonly saved = new WeakSet<Step>();
  /** The head of the context last sent to the model: what the next saved step's usage measured. */
  private contextSeq: number | undefined;
  /** Saves run one after the other, in the order the steps happened. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: SessionStoreChatOptions) {
    this.client = options.client;
    this.sessionId = options.sessionId;
  }

  /** The chat as the model is sent it: the system prompt as `instructions`, then the compacted view. */
  async load(): Promise<ChatPrompt> {
    const context = await this.client.context(this.sessionId, { format: 'ai-sdk' });
    this.contextSeq = context.headSeq;
    return { ...(context.system === undefined ? {} : { instructions: context.system }), messages: context.messages };
  }

  /** Appends messages the model did not write (the user's turn, tool results run outside the SDK), in the SDK's shapes. */
  async addMessages(messages: ModelMessage[]): Promise<void> {
    await this.serial(() => this.client.appendNative(this.sessionId, { format: 'ai-sdk', messages }));
  }

  /**
   * Appends one step whole: its response messages (the assistant's message,
   * and the results of the tools the SDK ran) and its usage, which the
   * service keeps as `step.finished` (a step whose provider reported no
   * token counts is saved without it). A step already saved is skipped, so
   * this is also safe as `onStepFinish`.
   */
  saveStep = async (step: Step): Promise<void> => {
    await this.serial(async () => {
      if (this.saved.has(step)) return;
      const contextSeq = this.contextSeq;
      this.contextSeq = undefined;
      // Without token counts the service refuses a usage (a zero would be taken as the context's size): the messages alone then.
      const counted = step.usage.inputTokens !== undefined && step.usage.outputTokens !== undefined;
      await this.client.appendNative(
        this.sessionId,
        counted
          ? { format: 'ai-sdk', response: aiSdkStep(step), ...(contextSeq === undefined ? {} : { contextSeq }) }
          : { format: 'ai-sdk', messages: step.response.messages },
      );
      this.saved.add(step);
    });
  };

  /** Appends the steps not saved yet: after `generateText`, `result.steps`; after `streamText`, `await result.steps`. */
  async saveSteps(steps: readonly Step[]): Promise<void> {
    for (const step of steps) await this.saveStep(step);
  }

  /**
   * `prepareStep` for `generateText`/`streamText`: saves the steps before
   * this one, then sends the model the store's context instead of the SDK's
   * own running list, so a compaction that landed between two steps is what
   * the next step sees. Typed by what it reads and returns, so it fits
   * `PrepareStepFunction` for any tool set.
   */
  prepareStep = async ({ steps }: { steps: readonly Step[] }): Promise<ChatPrompt> => {
    await this.saveSteps(steps);
    return this.load();
  };

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** The three fields the service reads, copied off the SDK's object (whose fields may be getters). */
function aiSdkStep(step: Step): AiSdkStep {
  const usage: LanguageModelUsage = step.usage;
  return { response: { messages: step.response.messages }, usage, finishReason: step.finishReason };
}
