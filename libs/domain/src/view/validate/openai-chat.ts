/**
 * Checks Chat Completions messages against OpenAI's tool-call rules, worded
 * like its 400s. Shapes are loose: stub servers feed it parsed JSON.
 */
export interface OpenAIChatMessageInput {
  role: string;
  content?: unknown;
  tool_call_id?: unknown;
  tool_calls?: ReadonlyArray<{ id: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } }>;
}

function isEmptyContent(content: unknown): boolean {
  return content === null || content === undefined || content === '' || (Array.isArray(content) && content.length === 0);
}

function isJson(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function validateOpenAIChatMessages(messages: readonly OpenAIChatMessageInput[]): string[] {
  const errors: string[] = [];
  if (messages.length === 0) {
    errors.push("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.");
  }
  const callIds = new Set<string>();
  let open: { index: number; ids: Set<string> } | null = null;
  const closeTurn = () => {
    if (open && open.ids.size > 0) {
      errors.push(
        `messages.[${open.index}]: An assistant message with 'tool_calls' must be followed by tool messages responding ` +
          `to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open.ids].join(', ')}`,
      );
    }
    open = null;
  };

  messages.forEach((message, i) => {
    if (message.role === 'tool') {
      const id = String(message.tool_call_id);
      if (open?.ids.delete(id)) return;
      errors.push(
        `messages.[${i}].role: Invalid parameter: messages with role 'tool' must be a response ` +
          "to a preceeding message with 'tool_calls'.",
      );
      return;
    }
    closeTurn();
    if (message.role !== 'assistant') return;
    const calls = message.tool_calls ?? [];
    if (message.tool_calls && calls.length === 0) {
      errors.push(
        `Invalid 'messages[${i}].tool_calls': empty array. ` +
          'Expected an array with minimum length 1, but got an empty array instead.',
      );
    }
    if (calls.length === 0 && isEmptyContent(message.content)) {
      errors.push(`messages.[${i}]: an assistant message must have 'content' or 'tool_calls'`);
    }
    calls.forEach((call, k) => {
      const id = String(call.id);
      if (callIds.has(id)) errors.push(`messages.[${i}].tool_calls.[${k}].id: duplicate tool_call id ${id}`);
      if (!isJson(call.function?.arguments)) {
        errors.push(`messages.[${i}].tool_calls.[${k}].function.arguments: not a JSON string`);
      }
      callIds.add(id);
    });
    open = { index: i, ids: new Set(calls.map((call) => String(call.id))) };
  });
  closeTurn();
  return errors;
}
