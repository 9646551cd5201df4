import { Message } from '../../events';
import { RenderableView } from './renderable-view';

/** Our own shapes: the system prompt as a leading system message, then the view's messages. */
export function renderNeutral(view: RenderableView): Message[] {
  const system: Message[] = view.system ? [{ id: 'system', role: 'system', parts: [{ type: 'text', text: view.system }] }] : [];
  return [...system, ...view.messages];
}
