/**
 * Checks Responses API input items: each function_call has exactly one
 * function_call_output after it and no output lacks its call, worded like
 * OpenAI's 400s. Shapes are loose: stub servers feed it parsed JSON.
 */
export interface ResponsesItemInput {
  type?: string;
  role?: unknown;
  content?: unknown;
  call_id?: unknown;
}

export function validateOpenAIResponsesInput(items: readonly ResponsesItemInput[]): string[] {
  const errors: string[] = [];
  const answered = new Map<string, boolean>();
  if (items.length === 0) errors.push("Invalid 'input': empty array. Expected an array with minimum length 1.");
  items.forEach((item, i) => {
    const id = String(item.call_id);
    switch (item.type) {
      case 'function_call':
        if (answered.has(id)) errors.push(`input[${i}]: duplicate function_call call_id ${id}.`);
        else answered.set(id, false);
        break;
      case 'function_call_output':
        if (!answered.has(id)) errors.push(`No tool call found for function call output with call_id ${id}.`);
        else if (answered.get(id)) errors.push(`input[${i}]: duplicate function_call_output for call_id ${id}.`);
        else answered.set(id, true);
        break;
      case 'message':
        if (Array.isArray(item.content) && item.content.length === 0) errors.push(`input[${i}].content: empty array.`);
        break;
    }
  });
  for (const [id, done] of answered) if (!done) errors.push(`No tool output found for function call ${id}.`);
  return errors;
}
