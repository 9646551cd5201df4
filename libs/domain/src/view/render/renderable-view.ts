import { Message } from '../../events';

/** What a renderer needs from a model view: the system prompt and the normalized messages. */
export interface RenderableView {
  system?: string;
  messages: readonly Message[];
}
